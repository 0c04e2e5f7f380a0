"""Execution: score many runs, in discovery order, with a bounded number in flight.

One loop (:func:`in_order`) serves every engine: it submits runs, keeps at most ``window`` of them in flight,
and yields the results in the order the runs were found, whatever the order they finish in, so the same
input gives the same ledger. An engine only says how a run is submitted and how its result is collected:
the local engine (:func:`local_results`) with a process pool, the Dask engine (:mod:`trajcheck.scoring.engine_dask`)
with a dask.distributed client. A task that fails costs its run, never the batch.

Process tuning (glibc's malloc thresholds, see :func:`keep_freed_memory`) happens only in the worker
processes trajcheck starts, never in a caller's process.
"""

from __future__ import annotations

import itertools
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterator

from ..readers.discovery import RunRef
from ..base.errors import Problem
from ..base.problems import Slug
from .options import ScoreOptions
from .rows import RunResult, invalid_result
from .scorerun import score_run

#: Runs in flight per worker: enough to keep workers busy, few enough to bound memory.
IN_FLIGHT_PER_WORKER = 4


def crashed(ref: RunRef, exc: BaseException) -> RunResult:
    """The result of a run whose scoring raised (a bug, or a worker that died)."""
    return invalid_result(ref.display, ref.url or str(ref.path), [Problem(
        Slug.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}", run=ref.display,
        hint="please report this with the run attached")], ref.reader)


def in_order(refs: list[RunRef], submit: Callable[[RunRef], Any], collect: Callable[[Any], RunResult],
             window: int) -> Iterator[RunResult]:
    """Submit each run, at most ``window`` in flight, and yield the results in the order of ``refs``."""

    def start(ref: RunRef) -> tuple[RunRef, Any, Exception | None]:
        try:
            return ref, submit(ref), None
        except Exception as exc:  # noqa: BLE001  (a pool whose worker died refuses new work: this run is lost)
            return ref, None, exc

    todo = iter(refs)
    flight: deque[tuple[RunRef, Any, Exception | None]] = deque(start(r) for r in itertools.islice(todo, window))
    while flight:
        ref, task, refused = flight.popleft()
        try:
            res = crashed(ref, refused) if refused is not None else collect(task)
        except Exception as exc:  # noqa: BLE001  (a crashed task costs one run, never the batch)
            res = crashed(ref, exc)
        nxt = next(todo, None)
        if nxt is not None:
            flight.append(start(nxt))
        yield res


#: glibc malloc settings for a scoring worker: buffers up to this size come from the heap, not mmap,
#: and up to TRIM of free heap stays mapped. A frame's buffers (a 2560x1600 RGBA frame is 16 MiB) are then
#: reused from one frame to the next instead of being returned to the kernel and faulted in again page
#: by page: with Wuffs' decoder that was 4 ms of a 6 ms decode on this machine. Peak memory stays that of
#: the largest frames, so it is still flat in the number of runs.
MMAP_THRESHOLD = 64 << 20
TRIM_THRESHOLD = 128 << 20


def keep_freed_memory() -> None:
    """Apply MMAP_THRESHOLD and TRIM_THRESHOLD through glibc's mallopt; a no-op on any other C library.
    Process-wide: called only in worker processes trajcheck starts."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library already loaded into this process
    except (OSError, AttributeError, TypeError):  # no mallopt (macOS, Windows): leave the allocator alone
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    mallopt(m_mmap_threshold, MMAP_THRESHOLD)
    mallopt(m_trim_threshold, TRIM_THRESHOLD)


def _worker(args: tuple[RunRef, ScoreOptions, str]) -> RunResult:
    return score_run(*args)


#: A worker process is started only for at least this many runs: starting one (and its first run's lazy
#: set-up) costs about what scoring a short run does. Measured with 2 cores: 3 sample runs took 0.49-0.54 s
#: in one process and 0.60-0.70 s with 2 workers; 8 took 1.00-1.26 s and 0.88-1.08 s.
MIN_RUNS_PER_WORKER = 2


def workers_for(runs: int, jobs: int) -> int:
    """How many worker processes score ``runs`` runs with ``jobs`` allowed; 0 or 1: none, this process does."""
    return min(jobs, runs // MIN_RUNS_PER_WORKER)


def local_results(refs: list[RunRef], opts: ScoreOptions, fingerprint: str, jobs: int) -> Iterator[RunResult]:
    """Score ``refs`` over up to ``jobs`` worker processes, or in this process when the work is too small to
    pay for starting them (:func:`workers_for`)."""
    workers = workers_for(len(refs), jobs)
    if workers <= 1:
        yield from in_order(refs, lambda ref: ref, lambda ref: score_run(ref, opts, fingerprint), 1)
        return
    with ProcessPoolExecutor(max_workers=workers, initializer=keep_freed_memory) as pool:
        yield from in_order(refs, lambda ref: pool.submit(_worker, (ref, opts, fingerprint)),
                            lambda fut: fut.result(), workers * IN_FLIGHT_PER_WORKER)
