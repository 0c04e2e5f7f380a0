"""`trajcheck check`, the gate for CI (issue 30, part 4): exit codes, figures, formats, and docs/ci.md's examples.

The expected figures are read off the runs (which runs are false claims, which pass) and every interval is
computed here from its closed form (Wilson's score interval; Newcombe's method 10; the delta method on a log
ratio), not copied from the command's output.
"""

from __future__ import annotations

import json
import math
from statistics import NormalDist
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.store import ledger
from trajcheck.cli.main import app

from conftest import ROOT, SAMPLES

runner = CliRunner()
Z = 1.959963984540054  # the 97.5% quantile of the standard normal
ON = ["consent-overlay-on", "drift-loop-on", "offscreen-modal-on", "terms-checkbox-on", "validation-flash-on"]
OFF = [r.replace("-on", "-off") for r in ON]
#: One of the five tasks failed: consent-overlay-off in place of consent-overlay-on (task newsletter-subscribe).
MIXED = [OFF[0], *ON[1:]]
#: Jenkins' junit-10.xsd (MIT, jenkinsci/xunit-plugin), read from ../shared; see test_junit_validates_against_the_xsd.
JUNIT_XSD = Path(os.environ.get("TRAJCHECK_JUNIT_XSD", ROOT.parent / "shared" / "schemas" / "junit-10.xsd"))


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval of k in n, from its closed form."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def check(*args: str) -> tuple[int, Any, str]:
    """Exit code, parsed JSON and stderr of `trajcheck check ARGS --format json`."""
    res = runner.invoke(app, ["check", *args, "--format", "json"])
    return res.exit_code, json.loads(res.stdout) if res.stdout else None, res.stderr


def score(runs: list[str], out: Path) -> Path:
    from trajcheck.scoring.pipeline import score_paths

    report = score_paths([SAMPLES / r for r in runs], jobs=1)
    ledger.write(out, [r.run for r in report.results], [s for r in report.results for s in r.steps])
    return out


@pytest.fixture(scope="module")
def arms(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sample runs of both arms scored apart: the five tasks with the verifier on (all pass), off (all
    fail), and on but for one task (newsletter-subscribe fails)."""
    root = tmp_path_factory.mktemp("arms")
    return {name: score(runs, root / name) for name, runs in (("on", ON), ("off", OFF), ("mixed", MIXED))}


def write_ledger(path: Path, runs: list[dict[str, Any]], cost: list[float] | None = None) -> Path:
    """A ledger of run rows only; with ``cost``, each run's runs.cost_usd (one value a run, in order), as a
    ledger scored from logs that record cost has it."""
    defaults = {"status": "ok", "verdict_source": "contract", "claimed_success": True, "false_claim": False,
                "n_steps": 2}
    rows = [{**defaults, **r} for r in runs]
    for r, c in zip(rows, cost or []):
        r["cost_usd"], r["cost_source"] = float(c), "log"
    ledger.write(path, rows, [])
    return path


def outcomes(prefix: str, passes: list[bool], trial: int | None = None) -> list[dict[str, Any]]:
    """One run per task t00, t01...: pass or fail."""
    return [{"run_id": f"{prefix}-{i:02d}", "task_id": f"t{i:02d}", "trial": trial,
             "eval_final_verdict": "pass" if ok else "fail", "false_claim": not ok} for i, ok in enumerate(passes)]


# The sample runs' false claims, read off them: 10 of 28 runs, in ten tasks. newsletter-subscribe has 3 runs
# (consent-overlay-off is the false claim); delete-account, create-workspace, signup, forge-register and
# sequencer-kick 2 (one false claim each); incident-report, pay-invoice, quillpad-dark-mode and send-feedback 1.
FALSE_CLAIM_TASKS = {"newsletter-subscribe": (1, 3), "delete-account": (1, 2), "create-workspace": (1, 2),
                     "signup": (1, 2), "forge-register": (1, 2), "sequencer-kick": (1, 2), "incident-report": (1, 1),
                     "pay-invoice": (1, 1), "quillpad-dark-mode": (1, 1), "send-feedback": (1, 1)}


def test_a_false_claim_rate_above_the_limit_exits_1_and_names_the_tasks(sample_ledger: Path) -> None:
    code, data, err = check(str(sample_ledger), "--max-false-claim-rate", "0.3")
    assert code == 1 and err.splitlines()[-1] == "check: 1 of 1 rule fails: max-false-claim-rate"
    [rule] = data["rules"]
    low, high = wilson(10, 28)
    assert (rule["rule"], rule["limit"], rule["judged_by"], rule["passed"]) == ("max-false-claim-rate", 0.3,
                                                                                 "observed", False)
    assert rule["overall"] == {"scope": "(all)", "passed": False, "reason": "over_limit", "value": round(10 / 28, 6),
                               "low": round(low, 6), "high": round(high, 6), "n": 28, "method": "wilson",
                               "detail": {"k": 10},
                               "why": "false-claim rate 35.7% (10 of 28 runs) above the limit 30.0%"}
    failing = {g["scope"]: (g["detail"]["k"], g["n"]) for g in rule["groups"] if not g["passed"]}
    assert failing == FALSE_CLAIM_TASKS  # every task with a false claim is above 30%, newsletter's 1 in 3 too
    assert {g["reason"] for g in rule["groups"] if g["passed"]} == {"within_limit"}


def test_a_rate_within_the_limit_exits_0_and_marks_the_tasks_over_it_alone(sample_ledger: Path) -> None:
    code, data, _ = check(str(sample_ledger), "--max-false-claim-rate", "0.4")
    [rule] = data["rules"]
    assert code == 0 and rule["passed"] and rule["overall"]["reason"] == "within_limit"
    alone = {g["scope"] for g in rule["groups"] if g["reason"] == "over_limit_alone"}
    assert alone == set(FALSE_CLAIM_TASKS) - {"newsletter-subscribe"}  # 1 in 3 is within 40%
    assert all(g["passed"] for g in rule["groups"])


def test_min_success_holds_at_the_limit_and_fails_below_it(sample_ledger: Path) -> None:
    code, data, _ = check(str(sample_ledger), "--min-success", "0.5")  # 14 of 28 runs pass
    assert code == 0 and data["rules"][0]["overall"]["value"] == 0.5
    code, data, _ = check(str(sample_ledger), "--min-success", "0.55")
    assert code == 1 and data["rules"][0]["overall"]["why"] == \
        "success 50.0% (14 of 28 runs) below the minimum 55.0%"
    assert data["runs"] == 28 and data["invalid"] == 0


def _paired_drop_low(k_base: int, k_cur: int, n: int) -> float:
    """The lower bound of a paired drop whose pairs are uncorrelated in the Newcombe sense (phi = 0), from the
    two Wilson intervals: baseline k_base of n, ledger k_cur of n."""
    p_a, p_b = k_base / n, k_cur / n
    a_low, _ = wilson(k_base, n)
    _, b_high = wilson(k_cur, n)
    return -((p_b - p_a) + math.hypot(b_high - p_b, p_a - a_low))


def test_a_drop_its_interval_confirms_is_not_gated_below_the_noise_floor(arms: dict[str, Path]) -> None:
    code, data, _ = check(str(arms["off"]), "--baseline", str(arms["on"]), "--max-success-drop", "0.05")
    assert code == 0 and data["shared_tasks"] == 5 and data["baseline_runs"] == 5
    [rule] = data["rules"]
    overall = rule["overall"]
    # 5 pairs, every one pass -> fail: the pairs' 2x2 table has an empty row, so Newcombe's phi is 0. The interval
    # lies above the limit, but 5 pairs cannot detect even 100 points at alpha 0.05 and power 0.8 (McNemar's exact
    # p is 0.0625): the noise floor is MDD = (z_0.975 + z_0.8) * sqrt(psi / n), psi = 1 (every pair discordant), n
    # = 5, one pair per task (no ICC). 2 repeats per task would do: z^2 * psi / (5 m) <= 1 from m = 1.57.
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    assert (overall["reason"], overall["passed"], overall["value"], overall["n"], overall["method"]) == (
        "below_noise_floor", True, 1.0, 5, "paired newcombe")
    assert overall["low"] == round(_paired_drop_low(5, 0, 5), 6) and overall["high"] == 1.0 and overall["low"] > 0.05
    assert overall["detail"] == {"baseline": {"k": 5, "n": 5}, "ledger": {"k": 0, "n": 5}, "pairs": 5,
                                 "baseline_only": 5, "ledger_only": 0, "mcnemar_p": 0.0625}
    assert overall["noise_floor"] == {
        "method": "paired", "difference": -1.0, "se": round(math.sqrt(1 / 5), 6),
        "mdd": round(z * math.sqrt(1 / 5), 6), "verdict": "inconclusive", "repeats_per_task": 2,
        "more_repeats_per_task": 1, "reason": None, "icc": [None], "design_effect": [1.0]}
    assert overall["why"].endswith(f", but the drop is inside the noise floor (MDD {100 * z * math.sqrt(0.2):.1f} pp "
                                   "at these runs; 1 more repeat per task would detect it): not gated")
    # the rule holds, so each task's 100-point fall is beyond the limit alone
    assert [(g["passed"], g["reason"], g["value"]) for g in rule["groups"]] == [(True, "over_limit_alone", 1.0)] * 5
    assert all(g["low"] < 0 for g in rule["groups"])


def test_a_drop_within_noise_exits_0(arms: dict[str, Path]) -> None:
    code, data, err = check(str(arms["mixed"]), "--baseline", str(arms["on"]), "--max-success-drop", "0.05")
    assert code == 0 and err.splitlines()[-1] == "check: every rule holds (1 rule)"
    overall = data["rules"][0]["overall"]
    assert (overall["passed"], overall["reason"], overall["value"]) == (True, "within_noise", 0.2)
    assert overall["low"] < 0.05 < overall["value"]
    assert overall["why"].startswith("success fell 20.0 pp (100.0% to 80.0%, 5 pairs); its interval [")
    [alone] = [g for g in data["rules"][0]["groups"] if g["reason"] != "within_limit"]
    assert (alone["scope"], alone["passed"], alone["reason"]) == ("newsletter-subscribe", True, "over_limit_alone")
    # the reverse is a rise: within any limit
    code, data, _ = check(str(arms["on"]), "--baseline", str(arms["off"]), "--max-success-drop", "0")
    assert code == 0 and data["rules"][0]["overall"]["value"] == -1.0


def test_the_same_drop_is_confirmed_or_within_noise_by_its_interval(tmp_path: Path) -> None:
    # 40 tasks: the baseline passed all, the ledger 28 (12 fell). A drop of 30 points, interval about [16, 46].
    base = write_ledger(tmp_path / "base", outcomes("b", [True] * 40))
    cur = write_ledger(tmp_path / "cur", outcomes("c", [True] * 28 + [False] * 12))
    low = _paired_drop_low(40, 28, 40)
    code, data, _ = check(str(cur), "--baseline", str(base), "--max-success-drop", "0.1")
    assert code == 1 and data["rules"][0]["overall"]["low"] == round(low, 6) and 0.1 < low < 0.2
    code, data, _ = check(str(cur), "--baseline", str(base), "--max-success-drop", "0.2")
    assert code == 0 and data["rules"][0]["overall"]["reason"] == "within_noise"  # 30 > 20, but not beyond doubt


@pytest.mark.slow
def test_runs_without_one_partner_each_are_compared_unpaired(tmp_path: Path) -> None:
    # the baseline ran each of 10 tasks twice (no trial numbers), the ledger once: no run-to-run pairing
    base = write_ledger(tmp_path / "base", outcomes("a", [True] * 10) + outcomes("b", [True] * 8 + [False] * 2))
    cur = write_ledger(tmp_path / "cur", outcomes("c", [True] * 6 + [False] * 4))
    code, data, _ = check(str(cur), "--baseline", str(base), "--max-success-drop", "0.05")
    overall = data["rules"][0]["overall"]
    assert (overall["method"], overall["n"], overall["detail"]) == \
        ("unpaired newcombe", 30, {"baseline": {"k": 18, "n": 20}, "ledger": {"k": 6, "n": 10}})
    # Newcombe's interval of two independent proportions: the drop 0.9 - 0.6, bounds from the Wilson intervals
    (a_low, a_high), (b_low, b_high) = wilson(18, 20), wilson(6, 10)
    assert overall["value"] == 0.3
    assert overall["low"] == round(0.3 - math.hypot(0.9 - a_low, b_high - 0.6), 6)
    assert overall["high"] == round(0.3 + math.hypot(a_high - 0.9, 0.6 - b_low), 6)
    assert code == (1 if overall["low"] > 0.05 else 0)
    assert "unpaired: 20 and 10 runs" in overall["why"]
    # the same trials on both sides pair again
    base = write_ledger(tmp_path / "b2", outcomes("a", [True] * 10, trial=1) + outcomes("b", [True] * 10, trial=2))
    cur = write_ledger(tmp_path / "c2", outcomes("c", [True] * 10, trial=1) + outcomes("d", [False] * 10, trial=2))
    _, data, _ = check(str(cur), "--baseline", str(base), "--max-success-drop", "0.05")
    assert (data["rules"][0]["overall"]["method"], data["rules"][0]["overall"]["n"]) == ("paired newcombe", 20)


def test_a_cost_increase_needs_cost_data(sample_ledger: Path, arms: dict[str, Path]) -> None:
    res = runner.invoke(app, ["check", str(arms["on"]), "--baseline", str(sample_ledger), "--max-cost-increase",
                              "0.2"])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.startswith(f"error: {arms['on']}: no cost data in the ledger (runs.cost_usd is missing")


@pytest.mark.slow
def test_a_cost_increase_its_interval_confirms_exits_1(tmp_path: Path) -> None:
    base_cost = [0.10, 0.12, 0.08, 0.11, 0.09, 0.10, 0.13, 0.07]
    cur_cost = [0.16, 0.17, 0.13, 0.18, 0.12, 0.15, 0.20, 0.11]
    base = write_ledger(tmp_path / "base", outcomes("b", [True] * 8), base_cost)
    cur = write_ledger(tmp_path / "cur", outcomes("c", [True] * 8), cur_cost)
    code, data, _ = check(str(cur), "--baseline", str(base), "--max-cost-increase", "0.2")
    overall = data["rules"][0]["overall"]
    # the delta method on log(mean(cur) / mean(base)), with the covariance of the pairs
    a, b = np.array(base_cost), np.array(cur_cost)
    ratio = b.mean() / a.mean()
    var = a.var(ddof=1) / (8 * a.mean() ** 2) + b.var(ddof=1) / (8 * b.mean() ** 2) \
        - 2 * np.cov(a, b)[0, 1] / (8 * a.mean() * b.mean())
    low, high = ratio * math.exp(-Z * math.sqrt(var)) - 1, ratio * math.exp(Z * math.sqrt(var)) - 1
    assert (overall["method"], overall["n"]) == ("paired delta (log ratio)", 8)
    assert overall["value"] == round(ratio - 1, 6)
    assert overall["low"] == pytest.approx(low, abs=1e-6) and overall["high"] == pytest.approx(high, abs=1e-6)
    assert code == 1 and overall["reason"] == "confirmed" and low > 0.2
    assert overall["detail"]["baseline_mean_usd"] == round(a.mean(), 6)
    code, data, _ = check(str(cur), "--baseline", str(base), "--max-cost-increase", "0.6")  # +51%: within
    assert code == 0 and data["rules"][0]["overall"]["reason"] == "within_limit"


@pytest.mark.parametrize("args,message", [
    ([], "give at least one rule: --max-false-claim-rate R"),
    (["--max-success-drop", "0.1"], "--max-success-drop compares with a baseline: give --baseline OTHER_LEDGER"),
    (["--baseline", "{ledger}", "--min-success", "0.5"], "--baseline is used by --max-success-drop and"),
    (["--min-success", "0.5", "--by", "no_such_column"], "--by: Binder Error"),
    (["--min-success", "0.5", "--by", "config.a-b"], "--by config.a-b: config keys are letters"),
    (["--min-success", "0.5", "--where", "nonsense ="], "--where: Parser Error"),
    (["--min-success", "0.5", "--out", "x.txt"], "--out writes --format json, csv, md or junit"),
])
def test_usage_errors_exit_2_with_one_line(sample_ledger: Path, args: list[str], message: str) -> None:
    args = [a.replace("{ledger}", str(sample_ledger)) for a in args]
    res = runner.invoke(app, ["check", str(sample_ledger), *args])
    assert (res.exit_code, res.stdout) == (2, ""), res.output
    assert res.stderr.startswith(f"error: {message}"), res.stderr


def test_a_limit_out_of_range_is_refused_by_the_command_and_the_library(sample_ledger: Path) -> None:
    res = runner.invoke(app, ["check", str(sample_ledger), "--max-false-claim-rate", "1.5"])
    assert res.exit_code == 2 and "1.5 is not in the range 0<=x<=1" in " ".join(res.stderr.replace("│", " ").split())
    with pytest.raises(trajcheck.base.errors.UsageError, match=r"--min-success nan: give a fraction from 0 to 1"):
        trajcheck.check(sample_ledger, min_success=float("nan"))


def test_a_ledger_without_a_scored_run_fails_every_absolute_rule(tmp_path: Path) -> None:
    path = write_ledger(tmp_path / "L", [{"run_id": "r1", "task_id": "t", "status": "invalid"}])
    code, data, _ = check(str(path), "--min-success", "0", "--max-false-claim-rate", "1")
    assert code == 1 and (data["runs"], data["invalid"]) == (0, 1)
    assert [(r["overall"]["reason"], r["overall"]["passed"], r["groups"]) for r in data["rules"]] == \
        [("no_data", False, [])] * 2


def test_a_baseline_sharing_no_task_is_a_usage_error(tmp_path: Path, sample_ledger: Path) -> None:
    other = write_ledger(tmp_path / "other", outcomes("x", [True, False]))  # tasks t00, t01
    res = runner.invoke(app, ["check", str(sample_ledger), "--baseline", str(other), "--max-success-drop", "0.1"])
    assert res.exit_code == 2 and res.stderr.startswith(f"error: {other} and {sample_ledger} share no task")


def test_an_unreadable_ledger_exits_3(tmp_path: Path, sample_ledger: Path) -> None:
    res = runner.invoke(app, ["check", str(tmp_path / "nowhere"), "--min-success", "0.5"])
    assert res.exit_code == 3 and "no such ledger directory" in res.stderr
    res = runner.invoke(app, ["check", str(sample_ledger), "--baseline", str(tmp_path / "nowhere"),
                              "--max-success-drop", "0.1"])
    assert res.exit_code == 3 and res.stderr.startswith(f"error: {tmp_path / 'nowhere'}: no such ledger")


def _junit(args: list[str]) -> tuple[int, str]:
    res = runner.invoke(app, ["check", *args, "--format", "junit"])
    return res.exit_code, res.stdout


def test_junit_has_one_test_case_per_task_and_rule_and_the_counts(sample_ledger: Path) -> None:
    args = [str(sample_ledger), "--max-false-claim-rate", "0.3", "--min-success", "0.4"]
    code, text = _junit(args)
    result = trajcheck.check(sample_ledger, max_false_claim_rate=0.3, min_success=0.4)
    root = ET.fromstring(text)
    [suite] = root.findall("testsuite")
    cases = suite.findall("testcase")
    want = [(str(r.rule), row.scope, row.passed) for r in result.rules for row in [r.overall, *r.groups]]
    assert [(c.get("classname"), c.get("name"), c.find("failure") is None) for c in cases] == want
    failures = [c.find("failure") for c in cases if c.find("failure") is not None]
    assert code == 1 and len(failures) == 1 + len(FALSE_CLAIM_TASKS)  # the rule's row and its ten tasks
    for el in (root, suite):
        assert (el.get("tests"), el.get("failures"), el.get("errors")) == (str(len(want)), str(len(failures)), "0")
    assert failures[0].get("message") == "false-claim rate 35.7% (10 of 28 runs) above the limit 30.0%"
    assert failures[0].get("type") == "over_limit"
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props == {"ledger": str(sample_ledger), "baseline": "", "by": "task_id", "max-false-claim-rate": "0.3",
                     "min-success": "0.4"}


def test_junit_names_survive_characters_xml_cannot_hold(tmp_path: Path) -> None:
    runs = [{"run_id": "r1", "task_id": "bad\x01<&>\"task", "eval_final_verdict": "fail", "false_claim": True}]
    path = write_ledger(tmp_path / "L", runs)
    code, text = _junit([str(path), "--max-false-claim-rate", "0.5"])
    names = [c.get("name") for c in ET.fromstring(text).iter("testcase")]
    assert code == 1 and names == ["(all)", "bad\ufffd<&>\"task"]


def _validator() -> Any:
    if not JUNIT_XSD.is_file():
        pytest.skip(f"{JUNIT_XSD} is absent: put Jenkins' junit-10.xsd (jenkinsci/xunit-plugin, MIT) there, or "
                    "name it with TRAJCHECK_JUNIT_XSD (.ci/run takes it from pytest's source distribution)")
    etree = pytest.importorskip("lxml.etree", reason="the test extra installs lxml")
    return etree, etree.XMLSchema(etree.parse(str(JUNIT_XSD)))


def test_junit_validates_against_the_xsd_ci_systems_read(sample_ledger: Path, arms: dict[str, Path],
                                                         tmp_path: Path) -> None:
    etree, schema = _validator()
    weird = write_ledger(tmp_path / "weird", [{"run_id": "r1", "task_id": "t\x02|&", "eval_final_verdict": "fail",
                                               "false_claim": True}])
    cases = [[str(sample_ledger), "--max-false-claim-rate", "0.3", "--min-success", "0.9"],
             [str(arms["off"]), "--baseline", str(arms["on"]), "--max-success-drop", "0.05"],
             [str(arms["mixed"]), "--baseline", str(arms["on"]), "--max-success-drop", "0.05"],
             [str(weird), "--max-false-claim-rate", "0"]]
    for args in cases:
        _, text = _junit(args)
        doc = etree.fromstring(text.encode("utf-8"))
        assert schema.validate(doc), (args, schema.error_log)


def test_md_is_a_pull_request_comment(arms: dict[str, Path]) -> None:
    res = runner.invoke(app, ["check", str(arms["off"]), "--baseline", str(arms["on"]), "--max-success-drop",
                              "0.05", "--max-false-claim-rate", "0.5", "--format", "md"])
    lines = res.stdout.splitlines()
    assert res.exit_code == 1
    assert lines[:6] == [
        "### trajcheck check: FAILED: 1 of 2 rules fails: max-false-claim-rate", "",
        f"{arms['off']}: 5 scored runs (0 invalid, not judged); against {arms['on']}: 5 tasks both ran", "",
        "| rule | limit | observed | 95% interval | verdict | why |", "|---|---|---|---|---|---|"]
    low, high = wilson(4, 5)  # OFF: four of the five runs claim success (drift-loop-off does not)
    assert lines[6] == (f"| `max-false-claim-rate` | 50.0% | 80.0% | [{100 * low:.1f}, {100 * high:.1f}]% | "
                        "**FAIL** | false-claim rate 80.0% (4 of 5 runs) above the limit 50.0% |")
    # the drop's interval lies above the limit, but 5 pairs cannot tell it from noise: not gated
    assert lines[7].startswith("| `max-success-drop` | 5.0 pp | +100.0 pp | [+38.6, +100.0] pp | pass | ")
    assert "inside the noise floor" in lines[7]
    assert lines[-1] == "</details>"


def test_csv_lists_every_row_with_raw_figures(sample_ledger: Path) -> None:
    import csv
    import io

    res = runner.invoke(app, ["check", str(sample_ledger), "--min-success", "0.6", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    result = trajcheck.check(sample_ledger, min_success=0.6)
    assert res.exit_code == 1 and len(rows) == 1 + len(result.rules[0].groups)
    assert {k: rows[0][k] for k in ("rule", "scope", "passed", "reason", "value", "limit", "n")} == \
        {"rule": "min-success", "scope": "(all)", "passed": "False", "reason": "over_limit", "value": "0.5",
         "limit": "0.6", "n": "28"}


def test_the_table_shows_each_rule_and_the_tasks_beyond_a_limit(sample_ledger: Path, width100: None) -> None:
    res = runner.invoke(app, ["check", str(sample_ledger), "--min-success", "0.4"])
    lines = [line.rstrip() for line in res.stdout.splitlines()]
    assert res.exit_code == 0
    rows = [line.split() for line in lines if line.startswith(" min-success")]
    # the rule's row, then the six tasks whose only run failed (0%), each marked as beyond the limit alone
    assert rows[0] == ["min-success", "(all)", "pass", "50.0%", "[32.6,", "67.4]%", "40.0%", "28"]
    assert [r[1] for r in rows[1:]] == ["deals-search", "inbox-senders", "incident-report", "pay-invoice",
                                        "quillpad-dark-mode", "send-feedback"]
    assert all(r[2] == "pass*" and r[3] == "0.0%" for r in rows[1:])
    assert "min-success: pass: success 50.0% (14 of 28 runs) meets the minimum 40.0%" in lines
    assert "* beyond the limit on its own; the rule holds over all runs" in lines
    tasks = len(trajcheck.check(sample_ledger, min_success=0.4).rules[0].groups)
    assert res.stderr.splitlines()[0].startswith(f"{1 + tasks - len(rows)} task_id rows not shown (within their")


def test_out_writes_the_file_and_prints_nothing(sample_ledger: Path, tmp_path: Path) -> None:
    out = tmp_path / "check.json"
    res = runner.invoke(app, ["check", str(sample_ledger), "--min-success", "0.4", "--format", "json", "--out",
                              str(out)])
    assert (res.exit_code, res.stdout) == (0, "")
    assert json.loads(out.read_text("utf-8")) == trajcheck.check(sample_ledger, min_success=0.4).to_json()
    assert [p.name for p in tmp_path.iterdir()] == ["check.json"]


# docs/ci.md: the GitHub Actions and GitLab CI examples' trajcheck commands, run in order.

def _doc_commands() -> list[str]:
    text = (ROOT / "docs" / "ci.md").read_text("utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    assert len(blocks) == 2, "docs/ci.md has a GitHub Actions and a GitLab CI example"
    commands = []
    for block in blocks:
        found = [re.sub(r"^\s*(?:- )?(?:run: )?", "", line) for line in block.splitlines()
                 if re.match(r"^\s*(?:- )?(?:run: )?trajcheck ", line)]
        assert any(" check " in c and "--format junit" in c for c in found), block
        commands += [c for c in found if c not in commands]  # the two examples score the same way
    return commands


@pytest.mark.slow
def test_the_ci_examples_run(tmp_path: Path) -> None:
    commands = _doc_commands()
    for name, runs in (("runs", ON), ("baseline-runs", OFF)):
        for r in runs:
            shutil.copytree(SAMPLES / r, tmp_path / name / r)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def run(command: str) -> int:
        return subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300).returncode

    # this build is the verifier-on agent, the baseline the verifier-off one: success rose, no false claims
    assert [run(c) for c in commands] == [0] * len(commands), commands
    xml = (tmp_path / "trajcheck-check.xml").read_text("utf-8")
    assert ET.fromstring(xml).get("failures") == "0"
    assert (tmp_path / "trajcheck-check.md").read_text("utf-8").startswith("### trajcheck check: passed")
    # the other way round, the gate fails (and the `|| true` summary still succeeds)
    (tmp_path / "ledger").rename(tmp_path / "tmp")
    (tmp_path / "baseline-ledger").rename(tmp_path / "ledger")
    (tmp_path / "tmp").rename(tmp_path / "baseline-ledger")
    gates = [c for c in commands if c.startswith("trajcheck check")]
    assert [run(c) for c in gates] == [1 if c.endswith(".xml") else 0 for c in gates]
    assert ET.fromstring((tmp_path / "trajcheck-check.xml").read_text("utf-8")).get("failures") != "0"
