"""A judge where it shows (issue 49, item 3): ``check --max-judge-false-success JUDGE=R`` gates a judge's
false-success rate against labels in CI, and ``compare --outcome judge:NAME`` takes one judge's verdicts as the
outcome, leaving out (and counting) the runs it did not judge. On the sample runs scored with made-up judges
(``score --judgments``): ``lenient`` gives the labels' outcome but passes three failed runs, ``partial`` gives the
labels' outcome on every run but two."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.cli.main import app

from conftest import SAMPLES

pytestmark = pytest.mark.slow  # the sample runs scored again, with the judges: a few seconds

runner = CliRunner()
LABELS = str(SAMPLES / "labels.json")
FALSE_SUCCESSES = ("consent-overlay-off", "nc-signin-gave-up", "terms-checkbox-off")
NOT_JUDGED = ("drift-loop-off", "validation-flash-on")  # partial's gaps: a labelled failure, a labelled success


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample runs scored with the two judges."""
    tmp = tmp_path_factory.mktemp("judged")
    labels = json.loads((SAMPLES / "labels.json").read_text())
    lenient = tmp / "lenient.csv"
    lenient.write_text("run_id,verdict,judge\n" + "".join(
        f"{rid},{'pass' if rid in FALSE_SUCCESSES else lab['outcome']},lenient\n"
        for rid, lab in sorted(labels.items())))
    partial = tmp / "partial.csv"
    partial.write_text("run_id,verdict,judge\n" + "".join(
        f"{rid},{lab['outcome']},partial\n" for rid, lab in sorted(labels.items()) if rid not in NOT_JUDGED))
    out = tmp / "ledger"
    trajcheck.score([SAMPLES], out, jobs=1, judgments=[lenient, partial])
    return out


def _check(ledger: Path, *args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, ["check", str(ledger), *args])
    return res.exit_code, res.stdout, res.stderr


def test_a_judge_over_its_limit_fails_the_gate(judged: Path) -> None:
    code, out, err = _check(judged, "--max-judge-false-success", "lenient=0.1", "--labels", LABELS, "-f", "json")
    assert code == 1, err
    data = json.loads(out)
    assert data["labels"] == LABELS and not data["passed"]
    (rule,) = data["rules"]
    assert (rule["rule"], rule["judge"], rule["limit"], rule["judged_by"]) == (
        "max-judge-false-success", "lenient", 0.1, "observed")
    row = rule["overall"]
    # 13 runs the labels fail, all judged by lenient; it passes 3
    assert (row["reason"], row["n"], row["detail"], row["value"]) == (
        "over_limit", 13, {"k": 3, "not_judged": 0}, round(3 / 13, 6))
    assert row["why"].startswith("lenient's false-success rate 23.1% (3 of 13 runs the labels fail) above the limit")
    failing = sorted(g["scope"] for g in rule["groups"] if not g["passed"])
    assert failing == ["create-workspace", "newsletter-subscribe", "portal-orders"]  # the three runs' tasks
    assert "check: 1 of 1 rule fails: max-judge-false-success lenient" in " ".join(err.split())
    code, out, _ = _check(judged, "--max-judge-false-success", "lenient=0.1", "--labels", LABELS, "-f", "junit")
    suite = ET.fromstring(out)
    failed = [(c.get("classname"), c.get("name")) for c in suite.iter("testcase") if c.find("failure") is not None]
    assert ("max-judge-false-success lenient", "(all)") in failed and len(failed) == 4
    code, out, _ = _check(judged, "--max-judge-false-success", "lenient=0.1", "--labels", LABELS, "-f", "md")
    assert "| `max-judge-false-success lenient` | 10.0% | 23.1% |" in out and "**FAIL**" in out


def test_a_judge_within_its_limit_passes_and_its_gaps_are_counted(judged: Path) -> None:
    code, out, err = _check(judged, "--max-judge-false-success", "lenient=0.25", "--max-judge-false-success",
                            "partial=0", "--labels", LABELS, "-f", "json")
    assert code == 0, err
    rules = {r["judge"]: r for r in json.loads(out)["rules"]}
    assert rules["lenient"]["overall"]["reason"] == "within_limit"
    # partial left out drift-loop-off, which the labels fail: 12 judged, 1 not
    assert (rules["partial"]["overall"]["n"], rules["partial"]["overall"]["detail"]) == (12, {"k": 0,
                                                                                              "not_judged": 1})
    code, out, _ = _check(judged, "--max-judge-false-success", "lenient=0.25", "--labels", LABELS)
    assert code == 0 and "max-judge-false-success lenient: pass: lenient's false-success rate 23.1%" in out


def test_judge_rules_need_labels_and_a_judge_the_ledger_holds(judged: Path, sample_ledger: Path) -> None:
    code, _, err = _check(judged, "--max-judge-false-success", "lenient=0.1")
    assert code == 2 and "--max-judge-false-success needs --labels FILE" in " ".join(err.split())
    code, _, err = _check(judged, "--max-judge-false-success", "careful=0.1", "--labels", LABELS)
    assert code == 2 and "no such judge" in err and "its judges: lenient, partial" in " ".join(err.split())
    code, _, err = _check(judged, "--max-judge-false-success", "lenient", "--labels", LABELS)
    assert code == 2 and "give JUDGE=R" in err
    code, _, err = _check(judged, "--max-judge-false-success", "lenient=1.5", "--labels", LABELS)
    assert code == 2 and "give a fraction from 0 to 1" in err
    code, _, err = _check(sample_ledger, "--max-judge-false-success", "lenient=0.1", "--labels", LABELS)
    assert code == 2 and "its judges: none" in " ".join(err.split())


def _compare(ledger: Path, *args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, ["compare", str(ledger), "--by", "config.perceptual_verifier", *args])
    return res.exit_code, res.stdout, res.stderr


def test_compare_takes_a_judges_verdicts_as_the_outcome(judged: Path) -> None:
    labels = json.loads((SAMPLES / "labels.json").read_text())
    arms: dict[str, list[str]] = {}
    for run in sorted(SAMPLES.iterdir()):
        if (run / "run.json").is_file():
            v = (json.loads((run / "run.json").read_text()).get("config") or {}).get("perceptual_verifier")
            if v is not None:
                arms.setdefault(str(v).lower(), []).append(run.name)
    code, out, err = _compare(judged, "--outcome", "judge:lenient", "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["outcome"] == "judge:lenient" and data["runs_not_judged"] == {}
    for a in data["arms"]:
        passes = [r for r in arms[a["arm"]] if labels[r]["outcome"] == "pass" or r in FALSE_SUCCESSES]
        assert (a["success"]["k"], a["success"]["n"]) == (len(passes), len(arms[a["arm"]]))
    code, out, err = _compare(judged, "--outcome", "judge:partial", "-f", "json")
    data = json.loads(out)
    assert data["runs_not_judged"] == {"false": 1, "true": 1}
    for a in data["arms"]:
        judged_runs = [r for r in arms[a["arm"]] if r not in NOT_JUDGED]
        passes = [r for r in judged_runs if labels[r]["outcome"] == "pass"]
        assert (a["success"]["k"], a["success"]["n"]) == (len(passes), len(judged_runs))
    code, out, err = _compare(judged, "--outcome", "judge:partial")
    assert code == 0 and "rates over the runs partial judged (success: its verdict pass)" in " ".join(out.split())
    assert "false: 1 run not judged by partial, left out" in err and "true: 1 run not judged by partial" in err
    # the default outcome is the final verdict, and its JSON is as it was
    code, out, _ = _compare(judged, "-f", "json")
    assert code == 0 and "outcome" not in json.loads(out) and "runs_not_judged" not in json.loads(out)


def test_compare_outcome_errors(judged: Path) -> None:
    code, _, err = _compare(judged, "--outcome", "judge:careful")
    assert code == 2 and "no run has a judgment by 'careful'" in err and "lenient, partial" in err
    code, _, err = _compare(judged, "--outcome", "score")
    assert code == 2 and "give verdict" in err
    code, _, err = _compare(judged, "--outcome", "judge:lenient", "--missing", "fail")
    assert code == 2 and "--missing and --damaged" in err
