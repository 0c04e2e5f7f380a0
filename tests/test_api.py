"""The public API: trajcheck.score / connect / runs / steps, as a notebook calls them."""

from __future__ import annotations

import pytest

import trajcheck

from conftest import SAMPLES


@pytest.mark.slow
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
    with pytest.raises(trajcheck.base.errors.UsageError, match="unknown engine"):
        trajcheck.score([SAMPLES], out=tmp_path / "L", engine="spark")
    assert not (tmp_path / "L").exists()


@pytest.mark.slow
def test_the_score_command_skips_pandas_in_its_own_process_only(tmp_path):
    """`trajcheck score` (the console entry) tells pyarrow there is no pandas, a fifth of scoring one run;
    the same command invoked in a caller's process (a test runner, a notebook) leaves pandas alone."""
    import subprocess
    import sys

    from typer.testing import CliRunner

    from trajcheck.cli.main import app
    from conftest import SAMPLES

    code = ("import sys\nfrom trajcheck.cli.main import main\n"
            f"sys.argv = ['trajcheck', 'score', {str(SAMPLES / 'consent-overlay-on')!r}, "
            f"{str(SAMPLES / 'captcha-blocked')!r}, '--out', {str(tmp_path / 'a')!r}, '-q', '--jobs', '2']\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "print('pandas' in sys.modules, code)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split()[-2:] == ["False", "0"], out.stdout + out.stderr
    assert len(trajcheck.runs(tmp_path / "a")) == 2  # the ledger it wrote reads as usual (with pandas)
    res = CliRunner().invoke(app, ["score", str(SAMPLES / "captcha-blocked"), "--out", str(tmp_path / "b"), "-q"])
    assert res.exit_code == 0, res.output
    import pandas  # noqa: F401  (still importable here)
    assert trajcheck.runs(tmp_path / "b")["run_id"].tolist() == ["captcha-blocked"]


@pytest.mark.slow
def test_scoring_the_sample_runs_loads_no_library_it_does_not_need(tmp_path):
    """Issue 16: the `score` command's process loads neither scipy, jsonschema, pandas nor numpy.ma to
    score every sample run (0.02-0.5 s each, in every worker process)."""
    import subprocess
    import sys

    from conftest import SAMPLES

    code = ("import sys\nfrom trajcheck.cli.main import main\n"
            f"sys.argv = ['trajcheck', 'score', {str(SAMPLES)!r}, '--out', {str(tmp_path / 'L')!r}, '-q', "
            "'--jobs', '1']\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "print(code, sorted(m for m in ('numpy.ma', 'scipy', 'jsonschema', 'pandas') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.splitlines()[-1] == "0 []", out.stdout + out.stderr
