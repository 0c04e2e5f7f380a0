"""The public API: trajcheck.score / connect / runs / steps, as a notebook calls them."""

from __future__ import annotations

import pytest

import trajcheck

from conftest import SAMPLES


def test_score_then_read_the_tables(tmp_path):
    out = tmp_path / "ledger"
    result = trajcheck.score([SAMPLES / "consent-overlay-off", SAMPLES / "captcha-blocked"], out=out, jobs=1)
    assert (result.scored, result.generation, result.ok, result.invalid) == (2, 1, True, [])
    assert sorted(s["run_id"] for s in result.summaries) == ["captcha-blocked", "consent-overlay-off"]
    runs = trajcheck.runs(out)
    assert list(runs["run_id"]) == ["captcha-blocked", "consent-overlay-off"]
    assert list(runs["evidence_verdict"]) == ["fail", "fail"]
    steps = trajcheck.steps(out)
    assert len(steps) == int(runs["n_steps"].sum())
    con = trajcheck.connect(out)
    assert con.execute("select count(*) from runs where false_claim").fetchone() == (1,)
    con.close()

    again = trajcheck.score([SAMPLES / "consent-overlay-off", SAMPLES / "captcha-blocked"], out=out, jobs=1)
    assert (again.scored, again.generation, sorted(again.skipped)) == (0, None, ["captcha-blocked",
                                                                               "consent-overlay-off"])


def test_errors_are_exceptions_not_exits(tmp_path):
    with pytest.raises(trajcheck.NoRunsFound) as info:
        trajcheck.score([tmp_path / "nothing-here"], out=tmp_path / "L")
    assert [p.slug for p in info.value.problems] == ["path_not_found"]
    with pytest.raises(trajcheck.errors.UsageError, match="unknown engine"):
        trajcheck.score([SAMPLES], out=tmp_path / "L", engine="spark")
    assert not (tmp_path / "L").exists()
