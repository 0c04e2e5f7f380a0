"""A mapping travels with the score options as data (issue 46, item 2): `score --mapping M --engine dask` reads the
mapped runs on Dask workers, which never saw the caller's process, and gives the local engine's ledger.

The runs are two real ScreenAgent sessions and two real Mobile-Agent results (tests/fixtures/real/*/PROVENANCE.md),
read through their hand-written mappings (docs/mappings/). A LocalCluster of 2 worker processes scores them, as
tests/test_engines.py does for native runs."""

from __future__ import annotations

from pathlib import Path

import pytest

import trajcheck
from trajcheck.store import ledger

from conftest import ROOT

REAL = ROOT / "tests" / "fixtures" / "real"
MAPS = ROOT / "docs" / "mappings"
CASES = [("screenagent", "screenagent.toml"), ("mobile-agent", "phone-agent.toml")]


def _rows(out: Path, table: str) -> list[tuple[object, ...]]:
    """Every column of ``table``, in a fixed order: nothing may differ between engines for local runs."""
    con = ledger.connect(out)
    try:
        key = "run_id" if table == "runs" else "run_id, step_index"
        return con.execute(f"select * from {table} order by {key}").fetchall()
    finally:
        con.close()


@pytest.mark.dask
@pytest.mark.parametrize("folder,mapping", CASES)
def test_mapped_runs_on_a_local_dask_cluster_give_the_local_engines_ledger(tmp_path, folder, mapping):
    runs, m = REAL / folder, MAPS / mapping
    local = trajcheck.score([runs], out=tmp_path / "local", mapping=m, jobs=2)
    dask = trajcheck.score([runs], out=tmp_path / "dask", mapping=m, jobs=2, engine="dask")
    assert local.scored == dask.scored == 2 and not local.invalid and not dask.invalid
    for table in ("runs", "steps"):
        a, b = _rows(tmp_path / "local", table), _rows(tmp_path / "dask", table)
        assert len(a) > 0 and a == b, table
    formats = {r["source_format"] for r in dask.summaries}
    assert len(formats) == 1 and formats.pop().startswith(f"mapping:{Path(mapping).stem}@")


@pytest.mark.slow
def test_a_local_pool_of_spawned_workers_gets_the_mapping_from_the_options(tmp_path, monkeypatch):
    """The local engine's workers read mapped runs when they start fresh (spawn, as forkserver, Python 3.14's
    default on Linux, does): they inherit nothing from the caller, so the mapping can only come with the options."""
    import multiprocessing
    import shutil
    from concurrent.futures import ProcessPoolExecutor

    from trajcheck.scoring import engines

    for copy in ("a", "b"):  # 4 runs: 2 workers for jobs=2 (engines.workers_for), run_ids told apart by folder
        shutil.copytree(REAL / "mobile-agent" / "results", tmp_path / "runs" / copy / "results")
    started = []

    def spawned_pool(*args, **kw):
        started.append(kw["max_workers"])
        return ProcessPoolExecutor(*args, mp_context=multiprocessing.get_context("spawn"), **kw)

    monkeypatch.setattr(engines, "ProcessPoolExecutor", spawned_pool)
    m = MAPS / "phone-agent.toml"
    pooled = trajcheck.score([tmp_path / "runs"], out=tmp_path / "pool", mapping=m, jobs=2)
    assert started == [2]
    monkeypatch.undo()
    alone = trajcheck.score([tmp_path / "runs"], out=tmp_path / "alone", mapping=m, jobs=1)
    assert pooled.scored == alone.scored == 4 and not pooled.invalid and not alone.invalid
    for table in ("runs", "steps"):
        a, b = _rows(tmp_path / "alone", table), _rows(tmp_path / "pool", table)
        assert len(a) > 0 and a == b, table
