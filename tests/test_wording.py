"""Wording a person reads (issue 46): counts that say what they count, the singular for one, labels on what
the report shows, and true/false as every other table writes them."""

from __future__ import annotations

import pytest

import re
import shutil
from pathlib import Path
from typing import Callable

from typer.testing import CliRunner

from trajcheck.base.words import count
from trajcheck.cli.main import app
from trajcheck.store import ledger

from conftest import SAMPLES


def test_count_is_singular_for_one() -> None:
    assert [count(0, "run"), count(1, "run"), count(2, "check"), count(1, "body", "bodies"),
            count(3, "body", "bodies")] == ["0 runs", "1 run", "2 checks", "1 body", "3 bodies"]


def test_failures_says_not_passed_and_counts_each_kind(sample_ledger: Path, width: Callable[[int], None]) -> None:
    con = ledger.connect(sample_ledger)
    try:
        runs, fail, uncertain, unknown = con.execute(
            "select count(*), count(*) filter (eval_final_verdict = 'fail'), count(*) filter (eval_final_verdict = "
            "'uncertain'), count(*) filter (eval_final_verdict = 'unknown' and claimed_success) from runs").fetchone()
    finally:
        con.close()
    width(80)  # one block per mode: each value wraps under itself
    res = CliRunner().invoke(app, ["failures", str(sample_ledger)])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.stdout.split())
    assert (f"not passed {fail + uncertain + unknown}/{runs} (failed {fail}, uncertain {uncertain}, "
            f"unknown-while-claiming {unknown})") in flat
    assert uncertain and unknown  # the sample runs have each kind, so the parts are not all the one figure
    assert flat.startswith("failure modes over all runs") and "by all runs" not in flat
    assert not re.search(r"\bfailed \d+/\d+", flat)
    md = CliRunner().invoke(app, ["failures", str(sample_ledger), "--format", "md"]).stdout
    assert md.startswith("## Failure modes over all runs\n")


def test_one_run_is_one_run(tmp_path: Path) -> None:
    shutil.copytree(SAMPLES / "consent-overlay-on", tmp_path / "runs" / "r")
    res = CliRunner().invoke(app, ["validate", str(tmp_path / "runs")])
    assert "checked 1 run: 0 errors, 0 warnings" in res.stderr, res.stderr


@pytest.mark.slow
def test_the_report_writes_arms_in_lower_case_and_labels_the_states_strip(sample_ledger: Path,
                                                                          tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["report", str(sample_ledger), "--out", str(tmp_path / "r"), "--max-runs", "0"])
    assert res.exit_code == 0, res.output
    index = (tmp_path / "r" / "index.html").read_text()
    cells = re.findall(r"<td>(true|false|True|False)</td>", index)
    assert cells and set(cells) == {"true", "false"}, set(cells)
    page = next((tmp_path / "r" / "runs").glob("drift-loop-off*.html")).read_text()
    strip = page.index("<div class=states>")
    assert "The screen each step ends on" in page[page.rindex("<p", 0, strip):strip]


def test_score_says_one_run_in_the_singular(tmp_path):
    """`scored 1 runs` (issue 46): the closing line counts with the noun's number."""
    import shutil

    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    from conftest import SAMPLES

    shutil.copytree(SAMPLES / "terms-checkbox-off", tmp_path / "runs" / "one")
    res = CliRunner().invoke(app, ["score", str(tmp_path / "runs"), "--out", str(tmp_path / "L"), "-q"])
    assert res.exit_code == 0, res.output
    assert "scored 1 run (0 invalid)" in res.stderr and "1 runs" not in res.stderr
    again = CliRunner().invoke(app, ["score", str(tmp_path / "runs"), "--out", str(tmp_path / "L"), "-q"])
    assert "1 unchanged run skipped" in again.stderr and "the ledger holds 1 run\n" in again.stderr
