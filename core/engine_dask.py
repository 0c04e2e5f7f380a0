"""Scoring on a dask.distributed cluster (``trajcheck score --engine dask``).

Dask schedules whole runs on its workers; each worker runs the same
:func:`trajcheck.pipeline.score_run` as the local engine, so the ledger rows are
the same. Results are collected in discovery order with a bounded number of runs
in flight, as the local engine does, and written by the client. Workers need
trajcheck installed and must see the run paths: a shared filesystem, or fsspec
URLs (``s3://...``) that every worker can read.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import Any, Iterator

from .discovery import RunRef
from .errors import Problem

#: Runs in flight per worker.
IN_FLIGHT_PER_WORKER = 4


def _score(ref: RunRef, opts: Any, fingerprint: str) -> Any:
    from trajcheck.pipeline import score_run

    return score_run(ref, opts, fingerprint)


def dask_ordered(refs: list[RunRef], opts: Any, fingerprint: str, workers: int,
                 scheduler: str | None) -> Iterator[Any]:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise RuntimeError("--engine dask needs dask.distributed: pip install 'trajcheck[dask]'") from exc
    from .pipeline import invalid_result

    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    try:
        n = max(1, len(client.scheduler_info().get("workers", {})) or workers)
        todo = iter(refs)
        window: deque[tuple[RunRef, Any]] = deque()
        for ref in itertools.islice(todo, n * IN_FLIGHT_PER_WORKER):
            window.append((ref, client.submit(_score, ref, opts, fingerprint, pure=False)))
        while window:
            ref, fut = window.popleft()
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001  (a failed task costs one run, never the batch)
                res = invalid_result(ref.display, ref.url or str(ref.path), [Problem(
                    "internal_error", f"{type(exc).__name__}: {exc}", run=ref.display,
                    hint="please report this with the run attached")], ref.reader)
            fut.release()
            nxt = next(todo, None)
            if nxt is not None:
                window.append((nxt, client.submit(_score, nxt, opts, fingerprint, pure=False)))
            yield res
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
