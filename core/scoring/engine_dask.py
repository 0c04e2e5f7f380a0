"""Scoring on a dask.distributed cluster (``trajcheck score --engine dask``).

Dask schedules whole runs on its workers; each worker runs the same
:func:`trajcheck.scoring.scorerun.score_run` as the local engine, so the ledger rows are
the same. Results are collected in discovery order with a bounded number of runs
in flight, as the local engine does, and written by the client. Workers need
trajcheck installed and must see the run paths: a shared filesystem, or fsspec
URLs (``s3://...``) that every worker can read.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..readers.discovery import RunRef
from .engines import IN_FLIGHT_PER_WORKER, in_order, keep_freed_memory
from .options import ScoreOptions
from .rows import RunResult


def _score(ref: RunRef, opts: ScoreOptions, fingerprint: str) -> RunResult:
    from .scorerun import score_run

    return score_run(ref, opts, fingerprint)


def _collect(fut: Any) -> RunResult:
    try:
        return fut.result()
    finally:
        fut.release()


def dask_ordered(refs: list[RunRef], opts: ScoreOptions, fingerprint: str, workers: int,
                 scheduler: str | None) -> Iterator[RunResult]:
    """Score ``refs`` on a dask.distributed cluster: the one at ``scheduler``, else a local cluster of
    ``workers`` processes that trajcheck starts (and tunes, as the local engine tunes its workers)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise RuntimeError("--engine dask needs dask.distributed: pip install 'trajcheck[dask]'") from exc
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    try:
        if cluster is not None:
            client.run(keep_freed_memory)  # our own workers only: a shared cluster's are not ours to tune
        n = max(1, len(client.scheduler_info().get("workers", {})) or workers)
        yield from in_order(refs, lambda ref: client.submit(_score, ref, opts, fingerprint, pure=False), _collect,
                            n * IN_FLIGHT_PER_WORKER)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
