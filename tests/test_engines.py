"""The Dask engine and runs behind fsspec URLs give the same ledger rows as the local engine.

A LocalCluster of 2 worker processes scores the sample runs; an S3 store is moto's
server on 127.0.0.1 (started here, stopped at the end)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time

import pytest

from trajcheck.store import ledger
from trajcheck.scoring.pipeline import score_paths

from conftest import SAMPLES

SUBSET = ["consent-overlay-on", "drift-loop-off", "sequencer-near-miss", "auth-redirect-hidpi"]
PLACE = ("run_path", "inputs")  # where a run was read from: the only columns allowed to differ


def _ledger(tmp_path, name, paths, **kw):
    report = score_paths(paths, jobs=2, **kw)
    out = tmp_path / name
    ledger.write(out, [r.run for r in report.results], [s for r in report.results for s in r.steps])
    return out


def _rows(out, table, drop=()):
    con = ledger.connect(out)
    try:
        cols = [c for c in (d[0] for d in con.execute(f"select * from {table} limit 0").description) if c not in drop]
        key = "run_id" if table == "runs" else "run_id, step_index"
        return con.execute(f"select {', '.join(cols)} from {table} order by {key}").fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def subset(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for name in SUBSET:
        shutil.copytree(SAMPLES / name, root / name)
    return root


@pytest.mark.dask
def test_dask_local_cluster_gives_the_local_engines_rows(tmp_path, subset):
    local = _ledger(tmp_path, "local", [subset])
    dask = _ledger(tmp_path, "dask", [subset], engine="dask")
    for table in ("runs", "steps"):
        a, b = _rows(local, table), _rows(dask, table)
        assert len(a) > 0 and a == b, table


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_store(subset):
    import boto3  # the test extra installs boto3, moto[server] and s3fs

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    env = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1",
           "FSSPEC_S3_ENDPOINT_URL": endpoint}
    mp = pytest.MonkeyPatch()
    for k, v in env.items():
        mp.setenv(k, v)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("moto server did not start")
                time.sleep(0.2)
        s3 = boto3.client("s3", endpoint_url=endpoint)
        s3.create_bucket(Bucket="agent-runs")
        for f in sorted(subset.rglob("*")):
            if f.is_file():
                s3.upload_file(str(f), "agent-runs", "sweep-1/" + f.relative_to(subset).as_posix())
        import fsspec.config

        fsspec.config.set_conf_env(fsspec.config.conf)  # pick up FSSPEC_S3_ENDPOINT_URL in this process
        yield "s3://agent-runs/sweep-1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        mp.undo()


@pytest.mark.parametrize("engine", ["local", pytest.param("dask", marks=pytest.mark.dask)])
def test_s3_runs_give_the_same_rows_as_local_copies(tmp_path, subset, s3_store, engine):
    local = _ledger(tmp_path, "local", [subset])
    remote = _ledger(tmp_path, "remote", [s3_store], engine=engine)
    for table in ("runs", "steps"):
        drop = PLACE if table == "runs" else ()
        a, b = _rows(local, table, drop), _rows(remote, table, drop)
        assert len(a) > 0 and a == b, table
    paths = [r[0] for r in ledger.query(remote, "select run_path from runs order by 1").rows]
    assert paths == sorted(f"{s3_store}/{n}" for n in SUBSET)


def test_a_missing_bucket_prefix_is_a_located_problem(s3_store):
    report = score_paths([s3_store + "-nope"], jobs=1)
    assert report.scored == 0
    assert [p.slug for p in report.problems] == ["path_not_found"]
    assert "sweep-1-nope" in str(report.problems[0])


def test_small_work_starts_no_worker_processes(monkeypatch, tmp_path):
    """Fewer than 2 runs per worker are scored in this process: no pool is started (issue 16)."""
    from trajcheck.scoring import engines

    assert [engines.workers_for(n, 2) for n in (0, 1, 2, 3, 4, 5, 200)] == [0, 0, 1, 1, 2, 2, 2]
    assert engines.workers_for(200, 1) == 1 and engines.workers_for(9, 4) == 4

    def no_pool(*a, **k):
        raise AssertionError("a process pool was started for small work")

    monkeypatch.setattr(engines, "ProcessPoolExecutor", no_pool)
    runs = [SAMPLES / "consent-overlay-on", SAMPLES / "drift-loop-off", SAMPLES / "terms-checkbox-on"]
    report = score_paths(runs, jobs=2)
    assert [r.run["status"] for r in report.results] == ["ok", "ok", "ok"]


def test_a_pool_that_refuses_work_costs_its_runs_not_the_batch():
    """When submitting raises (a process pool whose worker died refuses new work), the runs it refused come
    back as internal_error rows in order, and the runs already in flight keep their results."""
    from pathlib import Path

    from trajcheck.scoring import engines
    from trajcheck.readers.discovery import RunRef

    refs = [RunRef(Path(f"/runs/r{i}"), f"r{i}", "trajcheck.run/1") for i in range(5)]
    submitted = []

    def submit(ref):
        if len(submitted) >= 2:
            raise RuntimeError("A process in the process pool was terminated abruptly")
        submitted.append(ref)
        return ref

    def collect(ref):
        return engines.invalid_result(ref.display, str(ref.path), [], "trajcheck.run/1")

    got = list(engines.in_order(refs, submit, collect, window=2))
    assert [r.run["run_id"] for r in got] == ["r0", "r1", "r2", "r3", "r4"]
    assert [r.problems[0].slug if r.problems else None for r in got] == \
        [None, None, "internal_error", "internal_error", "internal_error"]
    assert "terminated abruptly" in got[2].run["error"]
