"""One bad value costs its run, never the batch (issue 17): the run-format schemas bound numbers to what
the ledger stores, every run's rows are checked against the ledger's Arrow schema before they are
buffered, and a commit that still fails aborts cleanly with the previous generation intact."""

from __future__ import annotations

import json
import math
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.store import ledger
from trajcheck.cli.main import app
from trajcheck.base.errors import LedgerError
from trajcheck.scoring.rowcheck import _kinds, _why, find_bad_value

from conftest import SAMPLES, read_steps, write_steps

SMALL = ["terms-checkbox-on", "captcha-blocked", "consent-overlay-on"]


def _runs(tmp_path, names=SMALL):
    root = tmp_path / "runs"
    for n in names:
        shutil.copytree(SAMPLES / n, root / n)
    return root


def _status(out):
    return {r[0]: (r[1], r[2]) for r in ledger.query(out, "select run_id, status, error from runs").rows}


@pytest.mark.parametrize("where,value,field,line", [
    ("step", "1e+308", "index", 2),  # an integral float: the JSON Schema's integer takes it
    ("step", "2147483648", "index", 2),  # one past the int32 step_index
    ("run", "9223372036854775808", "trial", None),  # one past the int64 trial
    ("step", "1" + "0" * 400, "action.x", 2),  # a Python int no float64 column takes
    ("run", "-1e+309", "outcome.score", None),  # overflows to -inf
])
@pytest.mark.slow
def test_an_out_of_range_value_makes_that_run_invalid_and_the_batch_commits(tmp_path, where, value, field, line):
    root = _runs(tmp_path)
    bad = root / "captcha-blocked"
    if where == "step":
        lines = (bad / "steps.jsonl").read_text().splitlines()
        s = json.loads(lines[line - 1])
        key = field.split(".")
        target = s
        for k in key[:-1]:
            target = target.setdefault(k, {})
        target[key[-1]] = "__X__"
        lines[line - 1] = json.dumps(s).replace('"__X__"', value)
        (bad / "steps.jsonl").write_text("\n".join(lines) + "\n")
    else:
        meta = json.loads((bad / "run.json").read_text())
        target = meta
        key = field.split(".")
        for k in key[:-1]:
            target = target.setdefault(k, {})
        target[key[-1]] = "__X__"
        (bad / "run.json").write_text(json.dumps(meta).replace('"__X__"', value))
    res = CliRunner().invoke(app, ["score", str(root), "--out", str(tmp_path / "L"), "-q", "-j", "1"])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    got = _status(tmp_path / "L")
    assert {k: v[0] for k, v in got.items()} == {"terms-checkbox-on": "ok", "captcha-blocked": "invalid",
                                                  "consent-overlay-on": "ok"}
    error = got["captcha-blocked"][1]
    assert "[value_out_of_range]" in error and f"field {field}" in error
    assert (f"steps.jsonl:{line}" if line else "run.json") in error


def test_validate_reports_the_same_problem_first(tmp_path):
    root = _runs(tmp_path, ["captcha-blocked"])
    steps = read_steps(root / "captcha-blocked")
    steps[0]["index"] = 2 ** 31
    write_steps(root / "captcha-blocked", steps)
    res = CliRunner().invoke(app, ["validate", str(root), "--format", "json"])
    assert res.exit_code == 1
    [p] = [p for p in json.loads(res.stdout)["problems"] if p["severity"] == "error"]
    assert (p["slug"], p["file"], p["line"], p["field"]) == ("value_out_of_range", "steps.jsonl", 1, "index")


@pytest.mark.slow
def test_a_value_past_the_reader_is_caught_by_the_row_check_with_its_location(tmp_path, monkeypatch):
    """A reader that lets a value through (here: a step index made 2**40 after the schema check, as an
    adapter could) still costs only its run: the rows are checked before they are buffered."""
    from trajcheck.schemas import records

    real = records.Step.from_json.__func__

    def odd(cls, d, source, line):
        step = real(cls, d, source, line)
        if d.get("odd"):
            object.__setattr__(step, "index", 2 ** 40)
        return step

    monkeypatch.setattr(records.Step, "from_json", classmethod(odd))
    root = _runs(tmp_path)
    steps = read_steps(root / "captcha-blocked")
    steps[1]["odd"] = True
    write_steps(root / "captcha-blocked", steps)
    result = trajcheck.score([root], out=tmp_path / "L", jobs=1)
    [row] = result.invalid
    assert row["run_id"] == "captcha-blocked"
    assert "[value_out_of_range]" in row["error"] and "steps.jsonl:2" in row["error"] and "field index" in row["error"]
    assert {k: v[0] for k, v in _status(tmp_path / "L").items()} == {
        "terms-checkbox-on": "ok", "captcha-blocked": "invalid", "consent-overlay-on": "ok"}


@pytest.mark.slow
def test_the_writer_refuses_rows_arrow_cannot_store_one_run_at_a_time(tmp_path, sample_ledger):
    """Rows handed straight to the writer (ledger.write) are checked too: each run with a value the
    ledger cannot store gets its invalid row; the others are committed."""
    runs = ledger.query(sample_ledger, "select * from runs order by run_id limit 4").records()
    steps = ledger.query(sample_ledger, "select * from steps where run_id in (select run_id from runs order by "
                                        "run_id limit 4)").records()
    ids = [r["run_id"] for r in runs]
    next(s for s in steps if s["run_id"] == ids[0])["step_index"] = 2 ** 40
    next(s for s in steps if s["run_id"] == ids[1])["reasoning"] = "lone \ud800 surrogate"
    runs[2]["outcome_score"] = math.inf
    ledger.write(tmp_path / "L", runs, steps)
    got = _status(tmp_path / "L")
    assert [got[i][0] for i in ids] == ["invalid", "invalid", "invalid", "ok"]
    assert "field index" in got[ids[0]][1] and "32-bit integer" in got[ids[0]][1]
    assert "field reasoning" in got[ids[1]][1] and "surrogate" in got[ids[1]][1]
    assert "field outcome.score" in got[ids[2]][1] and "finite" in got[ids[2]][1]
    assert ledger.query(tmp_path / "L", f"select count(*) from steps where run_id = '{ids[3]}'").rows[0][0] > 0


VALUES = [None, True, False, 0, 1, -1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 63 - 1, 2 ** 63,
          -(2 ** 63), 10 ** 30, 1.0, 1.5, 1e308, -1e308, math.inf, -math.inf, math.nan, "", "x", "é", "\ud800",
          "a\udcff", [], [1, 2], [2 ** 40], ["a"], ["\ud800"], [None], {"a": 1}, b"bytes"]


def test_the_row_check_passes_exactly_what_arrow_stores_except_non_finite_floats():
    for table in ("runs", "steps"):
        for name, (kind, t) in _kinds(table).items():
            for v in VALUES:
                try:
                    pa.array([v], type=t)
                    arrow = True
                except Exception:  # noqa: BLE001
                    arrow = False
                non_finite = isinstance(v, float) and not math.isfinite(v)
                truncated = kind in ("i32", "i64") and isinstance(v, float) and math.isfinite(v) and v != int(v)
                expect = arrow and not non_finite and not truncated
                assert (_why(kind, t, v) is None) == expect, (table, name, v)


def test_the_sample_rows_pass_the_check(sample_ledger):
    for r in ledger.query(sample_ledger, "select * from runs").records():
        assert find_bad_value(r, []) is None, r["run_id"]


@pytest.mark.slow
def test_a_commit_that_fails_aborts_cleanly_and_keeps_the_previous_generation(tmp_path, monkeypatch):
    root = _runs(tmp_path, ["terms-checkbox-on"])
    out = tmp_path / "L"
    trajcheck.score([root], out=out, jobs=1)
    manifest = (out / "manifest.json").read_text()
    shutil.copytree(SAMPLES / "captcha-blocked", root / "captcha-blocked")

    def broken(self, table, *a, **kw):
        raise pa.ArrowInvalid("simulated: a value Arrow refuses")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", broken)
    with pytest.raises(LedgerError) as exc:
        trajcheck.score([root], out=out, jobs=1)
    assert "ArrowInvalid" in str(exc.value) and "previous generation is intact" in str(exc.value)
    res = CliRunner().invoke(app, ["score", str(root), "--out", str(out), "-q", "-j", "1"])
    assert res.exit_code == 3 and "cannot write the ledger" in res.output and "Traceback" not in res.output
    assert (out / "manifest.json").read_text() == manifest
    assert not list(out.glob("**/*.tmp"))
    assert [r[0] for r in ledger.query(out, "select run_id from runs").rows] == ["terms-checkbox-on"]
