"""The ledger: round trip through DuckDB, replacement of rescored runs, atomic writes."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest

from trajcheck.store import ledger
from trajcheck.base.errors import LedgerError, QueryError
from trajcheck.scoring.pipeline import score_paths
from trajcheck.schemas.ledger import RUNS, SCHEMA_VERSION, STEPS

from conftest import sample_run_dirs


def _count_step_lines() -> int:
    return sum(sum(1 for l in (d / "steps.jsonl").read_text().splitlines() if l.strip()) for d in sample_run_dirs())


def test_duckdb_sees_every_run_and_step(sample_ledger):
    assert ledger.query(sample_ledger, "select count(*) from runs").rows == [(len(sample_run_dirs()),)]
    assert ledger.query(sample_ledger, "select count(*) from steps").rows == [(_count_step_lines(),)]
    assert ledger.query(sample_ledger, "select count(*) from runs where status <> 'ok'").rows == [(0,)]
    # steps are keyed by (run_id, step_index)
    assert ledger.query(sample_ledger, "select count(*) from (select run_id, step_index from steps "
                                       "group by all having count(*) > 1)").rows == [(0,)]


def test_columns_are_the_declared_ones(sample_ledger):
    con = ledger.connect(sample_ledger)
    for table, cols in (("runs", RUNS), ("steps", STEPS)):
        names = [r[0] for r in con.execute(f"describe {table}").fetchall()]
        assert names == [c.name for c in cols]
    assert con.execute("select distinct schema_version from runs").fetchall() == [(SCHEMA_VERSION,)]


def test_config_is_queryable_as_json(sample_ledger):
    rows = ledger.query(sample_ledger, "select json_extract(config, '$.perceptual_verifier')::bool as v, "
                                       "count(*) from runs group by v order by v").rows
    # the runs recorded without contracts take no part in the ablation: they set no perceptual_verifier
    assert {r[0]: r[1] for r in rows} == {False: 5, True: 14, None: 9}


@pytest.mark.slow
def test_rescoring_replaces_rows_exactly_once(tmp_path, samples):
    one = sample_run_dirs()[0]
    report = score_paths([samples], jobs=1)
    ledger.write(tmp_path, [r.run for r in report.results], [s for r in report.results for s in r.steps])
    before = ledger.query(tmp_path, "select count(*) from steps").rows
    again = score_paths([one], jobs=1)
    m = ledger.write(tmp_path, [r.run for r in again.results], [s for r in again.results for s in r.steps])
    assert m.generation == 2
    assert ledger.query(tmp_path, "select count(*) from steps").rows == before
    assert ledger.query(tmp_path, "select count(*) from runs").rows == [(len(sample_run_dirs()),)]
    parts = sorted(p.name for p in (tmp_path / "steps").iterdir())
    # part 1 is rewritten without the rescored run (as part 2-0000); the new rows are part 2
    assert parts == ["part-000002-0000.parquet", "part-000002.parquet"]


@pytest.mark.slow
def test_interrupted_write_leaves_the_previous_ledger_whole(tmp_path, samples, monkeypatch):
    report = score_paths([sample_run_dirs()[0]], jobs=1)
    ledger.write(tmp_path, [r.run for r in report.results], [s for r in report.results for s in r.steps])
    manifest = (tmp_path / "manifest.json").read_text()
    real = pq.ParquetWriter.write_table
    calls = {"n": 0}

    def flaky(self, table, *a, **kw):
        calls["n"] += 1
        if calls["n"] == 2:  # the runs part is written, the steps part fails
            raise OSError("disk full")
        return real(self, table, *a, **kw)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", flaky)
    big = score_paths([samples], jobs=1)
    with pytest.raises(OSError):
        ledger.write(tmp_path, [r.run for r in big.results], [s for r in big.results for s in r.steps])
    assert (tmp_path / "manifest.json").read_text() == manifest
    assert not list(tmp_path.glob("**/*.tmp"))
    assert ledger.query(tmp_path, "select count(*) from runs").rows == [(1,)]


def test_query_errors_and_missing_ledgers(tmp_path, sample_ledger):
    with pytest.raises(QueryError):
        ledger.query(sample_ledger, "select nope from runs")
    with pytest.raises(LedgerError):
        ledger.query(tmp_path / "absent", "select 1")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "manifest.json").write_text("{broken")
    with pytest.raises(LedgerError):
        ledger.connect(tmp_path / "x")


def test_refuses_to_write_into_a_directory_that_is_not_a_ledger(tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(LedgerError):
        ledger.write(tmp_path, [], [])
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def _score_cli(runs, out, *extra) -> None:
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    res = CliRunner().invoke(app, ["score", str(runs), "--out", str(out), "-q", *extra])
    assert res.exit_code == 0, res.output


def _scored_ledger(tmp_path, samples, names=("terms-checkbox-on", "captcha-blocked")):
    runs = tmp_path / "runs"
    for n in names:
        shutil.copytree(samples / n, runs / n)
    out = tmp_path / "L"
    _score_cli(runs, out)
    return runs, out


def test_digest_index_matches_the_runs_table(tmp_path, samples):
    from trajcheck.store.manifest import previous_from_index

    runs, out = _scored_ledger(tmp_path, samples)
    index = json.loads((out / "digests.json").read_text())
    assert index["generation"] == ledger.read_manifest(out).generation
    rows = ledger.query(out, "SELECT run_id, input_digest FROM runs ORDER BY run_id").rows
    assert sorted((r[0], r[2]) for r in index["runs"]) == [tuple(r) for r in rows]
    fast = previous_from_index(out)
    assert fast is not None and sorted((p.run_id, p.input_digest) for p in fast) == [tuple(r) for r in rows]
    from trajcheck.store.manifest import verdicts_from_index

    verdicts = ledger.query(out, "SELECT run_id, status, eval_final_verdict, verdict_source, false_claim, "
                                 "verdict_reason FROM runs ORDER BY run_id").rows
    assert sorted(tuple(r.values()) for r in verdicts_from_index(out) or []) == [tuple(r) for r in verdicts]
    # an index written before it held the verdicts still serves skipping, not the verdicts
    (out / "digests.json").write_text(json.dumps({**index, "runs": [r[:4] for r in index["runs"]]}))
    assert previous_from_index(out) is not None and verdicts_from_index(out) is None


def _index_from_parts(out):
    return sorted(ledger.query(out, f"SELECT {', '.join(ledger.DIGEST_COLUMNS)} FROM runs").rows)


@pytest.mark.slow
def test_digest_index_is_carried_forward_without_reading_the_runs_parts(tmp_path, samples, monkeypatch):
    """Each commit derives digests.json from the previous index (minus dropped and rescored runs, plus the
    new ones) instead of reading every runs part: after new runs, a rescore, a removed run and a compaction
    it still equals the runs table, every column of it."""
    reads = []
    real = ledger._read_part

    def spy(root, rel, table, columns=None):
        if table == "runs" and columns == ledger.DIGEST_COLUMNS:
            reads.append(rel)
        return real(root, rel, table, columns)

    monkeypatch.setattr(ledger, "_read_part", spy)
    runs, out = _scored_ledger(tmp_path, samples)
    for name in ("consent-overlay-on", "drift-loop-on"):  # new runs: a second and a third part
        shutil.copytree(samples / name, runs / name)
        _score_cli(runs, out)
        assert sorted(map(tuple, json.loads((out / "digests.json").read_text())["runs"])) == _index_from_parts(out)
    _score_cli(runs, out, "--force")  # every run rescored: old rows dropped, new ones added
    shutil.rmtree(runs / "captcha-blocked")  # a removed run
    _score_cli(runs, out)
    index = json.loads((out / "digests.json").read_text())
    assert index["generation"] == ledger.read_manifest(out).generation
    assert sorted(map(tuple, index["runs"])) == _index_from_parts(out)
    assert "captcha-blocked" not in {r[0] for r in index["runs"]}
    ledger.compact(out)
    index = json.loads((out / "digests.json").read_text())
    assert index["generation"] == ledger.read_manifest(out).generation
    assert sorted(map(tuple, index["runs"])) == _index_from_parts(out)
    assert reads == []


def test_a_stale_digest_index_is_not_trusted(tmp_path, samples):
    """An index of another generation (a write interrupted between the index and the manifest) is
    ignored: the runs parts are read instead, and the next commit replaces it."""
    from trajcheck.store.manifest import previous_from_index

    runs, out = _scored_ledger(tmp_path, samples)
    good = sorted((p.run_id, p.input_digest) for p in ledger.previous(out))
    index = json.loads((out / "digests.json").read_text())
    index["generation"] += 7
    index["runs"] = [["ghost", "ok", "0" * 64, "{}"]]
    (out / "digests.json").write_text(json.dumps(index))
    (out / "digests.json.deadbeef.tmp").write_text("half written")
    assert previous_from_index(out) is None
    assert sorted((p.run_id, p.input_digest) for p in ledger.previous(out)) == good
    (out / "digests.json").write_text("{not json")
    assert previous_from_index(out) is None
    shutil.rmtree(runs / "captcha-blocked")  # next write: the run is dropped and the index rewritten
    _score_cli(runs, out)
    assert [p.run_id for p in previous_from_index(out)] == ["terms-checkbox-on"]
    assert not (out / "digests.json.deadbeef.tmp").exists()


@pytest.mark.slow
def test_warm_rescore_of_an_unchanged_corpus_loads_no_pyarrow(tmp_path, samples):
    import subprocess
    import sys

    runs, out = _scored_ledger(tmp_path, samples)
    code = ("import sys\nfrom trajcheck.cli.main import app\n"
            f"try:\n    app(['score', {str(runs)!r}, '--out', {str(out)!r}, '-q'], standalone_mode=False)\n"
            "except SystemExit:\n    pass\n"
            "print('LOADED', sorted(m for m in ('pyarrow', 'duckdb', 'numpy', 'PIL', 'scipy') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "2 unchanged runs skipped" in res.stderr
    assert "LOADED []" in res.stdout
