"""`trajcheck agree`: every verdict source against sample_runs/labels.json, with exact figures.

The confusion counts were counted by hand from labels.json and the sample runs' verdicts (listed in the
comments); precision, recall, NPV and TNR are their Wilson intervals from the closed form, and F1 is
2tp / (2tp + fp + fn); none of it is copied from the command's output.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any, Callable

import pytest
from typer.testing import CliRunner

from trajcheck.store import ledger
from trajcheck.cli.main import app

from conftest import SAMPLES, run_json

LABELS = SAMPLES / "labels.json"
#: The 97.5% quantile of the standard normal: the z of every 95% interval.
Z = 1.959963984540054


def rate(k: int, n: int) -> dict[str, Any]:
    """k of n with Wilson's 95% score interval from its closed form, rounded as the JSON output rounds."""
    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "low": None, "high": None}
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return {"k": k, "n": n, "rate": round(p, 6), "low": round(centre - half, 6), "high": round(centre + half, 6)}


def scores(source: str, level: str, labelled: int, covered: int, tp: int, fp: int, tn: int, fn: int
           ) -> dict[str, Any]:
    """The expected JSON of one verdict source from its confusion counts."""
    return {"source": source, "level": level, "labelled": labelled, "covered": covered,
            "tp": tp, "fp": fp, "tn": tn, "fn": fn, "precision": rate(tp, tp + fp), "recall": rate(tp, tp + fn),
            "f1": round(2 * tp / (2 * tp + fp + fn), 6) if tp else None,
            "npv": rate(tn, tn + fn), "tnr": rate(tn, tn + fp)}


# labels.json labels all 28 sample runs: 15 pass, 13 fail. Per source, over the runs it gives a verdict on:
#   contract: pass on the 10 *-on/auth/dark/sequencer-correct/shop/stale runs and paged-results-progress, all
#     labelled pass; fail on the 5 *-off runs, sequencer-near-miss and ticker-dead-send, all labelled fail;
#     not_applicable (no verdict) on captcha-blocked, menu-toggle-aimless and the 8 nc-* runs.
#   judge: only the sequencer runs have one; it says pass on both, and sequencer-near-miss is labelled fail.
#   evaluator: the contract's 18 plus captcha-blocked (fail, labelled fail).
#   evidence: pass on 14 runs, one of them sequencer-near-miss (labelled fail); fail on 11 (menu-toggle-aimless:
#     no net progress), all labelled fail; unknown on drift-loop-on, nc-inbox-read and ticker-dead-send.
#   final_verdict: pass on 14, all labelled pass; fail or uncertain on 13, all labelled fail; nc-inbox-read
#     (labelled pass) has no verdict.
#   self_reported: captcha-blocked, drift-loop-off and nc-signin-gave-up do not claim success (all labelled
#     fail); the other 25 do, 15 of them labelled pass.
# Steps: 102 steps carry an effect label (the menu and paged runs' 17 clicks are not high-risk, so no rule gives
# them a verdict); trajcheck's rule gives a verdict on the 42 high-risk ones and agrees
# with every label (20 with an effect, 22 without). The seed's literal rule differs on four: it sees an effect
# in offscreen-modal-off 1, offscreen-modal-on 1 and ticker-dead-send 3 (labelled none) and none in
# validation-flash-on 2 (labelled an effect).
SAMPLE_SOURCES = [
    scores("contract", "run", 28, 18, 11, 0, 7, 0),
    scores("judge", "run", 28, 2, 1, 1, 0, 0),
    scores("evaluator", "run", 28, 19, 11, 0, 8, 0),
    scores("evidence", "run", 28, 25, 13, 1, 11, 0),
    scores("final_verdict", "run", 28, 27, 14, 0, 13, 0),
    scores("self_reported", "run", 28, 28, 15, 10, 3, 0),
    scores("perceptual_verifier", "step", 102, 42, 20, 0, 22, 0),
    scores("perceptual_verifier_seed", "step", 102, 42, 19, 3, 19, 1),
]

# Over every scored run, labelled or not: contract verdict -> judge verdict (only the sequencer runs have one).
CONTRACT_VS_JUDGE = {"fail": {"none": 6, "pass": 1}, "not_applicable": {"none": 10}, "pass": {"none": 10, "pass": 1}}

# Cohen's kappa of each pair of run sources over the runs both give a verdict on. Two worked by hand:
#   contract vs evidence: 16 runs (drift-loop-on and ticker-dead-send have no evidence verdict); they differ
#     on sequencer-near-miss only: p_o = 15/16, contract 10 pass 6 fail, evidence 11 pass 5 fail,
#     p_e = (10*11 + 6*5)/256 = 140/256, kappa = (15/16 - 140/256)/(1 - 140/256) = 100/116 = 0.862069.
#   final_verdict vs self_reported: 27 runs; agree on 14 passes and 3 non-claims: p_o = 17/27,
#     p_e = (14*24 + 13*3)/729 = 375/729, kappa = 84/354 = 0.237288.
# The others were computed the same way, by a separate script over the ledger's verdict columns.
KAPPA = [
    {"a": "contract", "b": "judge", "items": 2, "kappa": 0.0},
    {"a": "contract", "b": "evaluator", "items": 18, "kappa": 1.0},
    {"a": "contract", "b": "evidence", "items": 16, "kappa": 0.862069},
    {"a": "contract", "b": "final_verdict", "items": 18, "kappa": 1.0},
    {"a": "contract", "b": "self_reported", "items": 18, "kappa": 0.169231},
    {"a": "judge", "b": "evaluator", "items": 2, "kappa": 0.0},
    {"a": "judge", "b": "evidence", "items": 2, "kappa": 1.0},
    {"a": "judge", "b": "final_verdict", "items": 2, "kappa": 0.0},
    {"a": "judge", "b": "self_reported", "items": 2, "kappa": 1.0},
    {"a": "evaluator", "b": "evidence", "items": 17, "kappa": 0.875912},
    {"a": "evaluator", "b": "final_verdict", "items": 19, "kappa": 1.0},
    {"a": "evaluator", "b": "self_reported", "items": 19, "kappa": 0.278481},
    {"a": "evidence", "b": "final_verdict", "items": 25, "kappa": 0.919614},
    {"a": "evidence", "b": "self_reported", "items": 25, "kappa": 0.295775},
    {"a": "final_verdict", "b": "self_reported", "items": 27, "kappa": 0.237288},
]


def trial(task: str, n: int, c: int) -> dict[str, Any]:
    """A task's row when every task has at least one trial (k = 1): pass@1 = 1 - C(n-c, 1)/C(n, 1) and
    pass^1 = C(c, 1)/C(n, 1), both c/n, computed the two ways the formulas compute them."""
    return {"task_id": task, "trials": n, "passed": c, "pass@1": 1.0 if n - c < 1 else 1 - (n - c) / n,
            "pass^1": c / n, "flaky": 0 < c < n}


# Per task (verdict pass = passed; nc-inbox-read has no verdict and no evaluator score, so it did not pass).
SAMPLE_TRIALS = {"k": 1, "tasks": [
    trial("create-workspace", 2, 1), trial("deals-search", 1, 0), trial("delete-account", 2, 1),
    trial("editor-settings", 1, 1), trial("find-order-status", 1, 1), trial("forge-register", 2, 1), trial("inbox-senders", 1, 0),
    trial("incident-report", 1, 0), trial("newsletter-subscribe", 3, 2), trial("open-invoice", 1, 1),
    trial("pay-invoice", 1, 0), trial("portal-orders", 2, 1), trial("profile-name", 1, 1),
    trial("quillpad-dark-mode", 1, 0),
    trial("send-feedback", 1, 0), trial("sequencer-kick", 2, 1), trial("shop-checkout", 1, 1),
    trial("signup", 2, 1), trial("support-message", 2, 1)],
    "flaky": ["create-workspace", "delete-account", "forge-register", "newsletter-subscribe", "portal-orders",
              "sequencer-kick", "signup", "support-message"]}


def test_labels_file_counts() -> None:
    """The premise of the figures above, read from labels.json itself."""
    labels = json.loads(LABELS.read_text())
    outcomes = [v["outcome"] for v in labels.values()]
    effects = [s["effect"] for v in labels.values() for s in v["steps"].values()]
    assert (len(labels), outcomes.count("pass"), outcomes.count("fail")) == (28, 15, 13)
    assert (len(effects) - effects.count(None), effects.count(True), effects.count(False)) == (102, 78, 24)


# Over every scored run, labelled or not: the 18 runs with a contract (11 pass, 7 fail), captcha-blocked by
# its evaluator alone, the 7 nc-* runs but nc-inbox-read and menu-toggle-aimless by the evidence referee;
# nc-inbox-read answered, and nothing could check the answer.
VERDICTS = {"runs": 28, "with_verdict": 27, "by_source": {"contract": 18, "evaluator": 1, "evidence": 8},
            "unknown": 1}


def test_agree_json_against_the_sample_labels(sample_ledger: Path) -> None:
    got = run_json("agree", str(sample_ledger), "--labels", str(LABELS))
    assert list(got)[0] == "verdicts"  # coverage first
    assert got == {"verdicts": VERDICTS, "labels": 28, "matched_runs": 28, "unmatched_labels": [], "sources": SAMPLE_SOURCES,
                   "contract_vs_judge": CONTRACT_VS_JUDGE, "kappa": KAPPA, "trials": SAMPLE_TRIALS,
                   "judges": []}  # no score --judgments: no judge of its own to score


def test_agree_table_at_120_columns(sample_ledger: Path, width: Callable[[int], None]) -> None:
    width(120)
    res = CliRunner().invoke(app, ["agree", str(sample_ledger), "--labels", str(LABELS)])
    assert res.exit_code == 0, res.output
    assert [line.rstrip() for line in res.stdout.splitlines()] == EXPECTED_TABLE
    assert res.stderr == ""  # every label matched a run


# The figures above as percentages with one decimal; each row's string is split where its last column starts.
EXPECTED_TABLE = [
    'verdict for 27 of 28 runs: contract 18, evaluator 1, evidence 8; unknown 1',
    'agreement with 28 labelled runs',
    '',
    ' source                     level   covered   precision        recall           f1      npv              '
    'tnr',
    " " + "─" * 118,
    ' contract                   run     18/28     100.0% [74.1,    100.0% [74.1,    1.000   100.0% [64.6,    '
    '100.0% [64.6,',
    '                                              100.0] (11/11)   100.0] (11/11)           100.0] (7/7)     '
    '100.0] (7/7)',
    ' judge                      run     2/28      50.0% [9.5,      100.0% [20.7,    0.667   -                '
    '0.0% [0.0,',
    '                                              90.5] (1/2)      100.0] (1/1)                              '
    '79.3] (0/1)',
    ' evaluator                  run     19/28     100.0% [74.1,    100.0% [74.1,    1.000   100.0% [67.6,    '
    '100.0% [67.6,',
    '                                              100.0] (11/11)   100.0] (11/11)           100.0] (8/8)     '
    '100.0] (8/8)',
    ' evidence                   run     25/28     92.9% [68.5,     100.0% [77.2,    0.963   100.0% [74.1,    '
    '91.7% [64.6,',
    '                                              98.7] (13/14)    100.0] (13/13)           100.0] (11/11)   '
    '98.5] (11/12)',
    ' final_verdict              run     27/28     100.0% [78.5,    100.0% [78.5,    1.000   100.0% [77.2,    '
    '100.0% [77.2,',
    '                                              100.0] (14/14)   100.0] (14/14)           100.0] (13/13)   '
    '100.0] (13/13)',
    ' self_reported              run     28/28     60.0% [40.7,     100.0% [79.6,    0.750   100.0% [43.9,    '
    '23.1% [8.2,',
    '                                              76.6] (15/25)    100.0] (15/15)           100.0] (3/3)     '
    '50.3] (3/13)',
    ' perceptual_verifier        step    42/102    100.0% [83.9,    100.0% [83.9,    1.000   100.0% [85.1,    '
    '100.0% [85.1,',
    '                                              100.0] (20/20)   100.0] (20/20)           100.0] (22/22)   '
    '100.0] (22/22)',
    ' perceptual_verifier_seed   step    42/102    86.4% [66.7,     95.0% [76.4,     0.905   95.0% [76.4,     '
    '86.4% [66.7,',
    '                                              95.3] (19/22)    99.1] (19/20)            99.1] (19/20)    '
    '95.3] (19/22)',
    '',
    'contract vs judge',
    '',
    ' contract \\ judge   none   pass',
    " " + "─" * 30,
    ' fail               6      1',
    ' not_applicable     10     0',
    ' pass               10     1',
    '',
    "Cohen's kappa",
    '',
    ' a               b               items   kappa',
    " " + "─" * 46,
    ' contract        judge           2       0',
    ' contract        evaluator       18      1',
    ' contract        evidence        16      0.8621',
    ' contract        final_verdict   18      1',
    ' contract        self_reported   18      0.1692',
    ' judge           evaluator       2       0',
    ' judge           evidence        2       1',
    ' judge           final_verdict   2       0',
    ' judge           self_reported   2       1',
    ' evaluator       evidence        17      0.8759',
    ' evaluator       final_verdict   19      1',
    ' evaluator       self_reported   19      0.2785',
    ' evidence        final_verdict   25      0.9196',
    ' evidence        self_reported   25      0.2958',
    ' final_verdict   self_reported   27      0.2373',
    '',
]


@pytest.mark.parametrize("columns", [80, 100, 200])
def test_every_source_is_whole_at_any_width(sample_ledger: Path, width: Callable[[int], None], columns: int) -> None:
    width(columns)
    res = CliRunner().invoke(app, ["agree", str(sample_ledger), "--labels", str(LABELS)])
    assert res.exit_code == 0, res.output
    words = res.stdout.split()
    for s in SAMPLE_SOURCES:  # each source's name is printed whole, never cut nor folded
        assert s["source"] in words, (columns, s["source"])
    assert "…" not in res.stdout
    assert max(len(line) for line in res.stdout.splitlines()) <= columns


# Four sample runs' labels, one without an outcome, and two runs the ledger does not have.
PARTIAL = {
    "consent-overlay-on": {"outcome": "pass", "steps": {"1": {"effect": False}, "2": {"effect": True},
                                                        "3": {"effect": True}, "4": {"effect": None}}},
    "consent-overlay-off": {"outcome": "fail", "steps": {"1": {"effect": False}, "2": {"effect": None}}},
    "sequencer-near-miss": {"outcome": "fail"},
    "nc-inbox-read": {"task_id": "inbox-senders", "claims_success": True},
    "ghost-run": {"outcome": "pass"},
    "another-ghost": {"outcome": "fail", "steps": {"1": {"effect": True}}},
}
# Three matched runs with an outcome: consent-overlay-on pass (every source says pass), consent-overlay-off
# fail (every source says fail, but the agent claimed success), sequencer-near-miss fail (contract and
# evaluator fail, final verdict uncertain, judge and evidence pass, the agent claimed success).
# Steps: consent-overlay-on 1 (no effect, both rules agree), 2 (effect, not a high-risk step: no verdict),
# 3 (effect, seen); consent-overlay-off 1 (no effect, seen as none). Steps labelled null are not labelled.
PARTIAL_SOURCES = [
    scores("contract", "run", 3, 3, 1, 0, 2, 0),
    scores("judge", "run", 3, 1, 0, 1, 0, 0),
    scores("evaluator", "run", 3, 3, 1, 0, 2, 0),
    scores("evidence", "run", 3, 3, 1, 1, 1, 0),
    scores("final_verdict", "run", 3, 3, 1, 0, 2, 0),
    scores("self_reported", "run", 3, 3, 1, 2, 0, 0),
    scores("perceptual_verifier", "step", 4, 3, 1, 0, 2, 0),
    scores("perceptual_verifier_seed", "step", 4, 3, 1, 0, 2, 0),
]


def test_labels_that_miss_runs_or_name_unknown_ones(sample_ledger: Path, tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(PARTIAL))
    got = run_json("agree", str(sample_ledger), "--labels", str(path))
    # the confusion, the kappas and the trials are over every scored run, labelled or not
    assert got == {"verdicts": VERDICTS, "labels": 6, "matched_runs": 4, "unmatched_labels": ["another-ghost", "ghost-run"],
                   "sources": PARTIAL_SOURCES, "contract_vs_judge": CONTRACT_VS_JUDGE, "kappa": KAPPA,
                   "trials": SAMPLE_TRIALS, "judges": []}
    res = CliRunner().invoke(app, ["agree", str(sample_ledger), "--labels", str(path)])
    assert res.exit_code == 0, res.output
    assert res.stderr == "2 labelled runs are not in the ledger\n"
    assert "agreement with 4 labelled runs" in res.stdout


def test_csv_output_of_the_partial_labels(sample_ledger: Path, tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(PARTIAL))
    res = CliRunner().invoke(app, ["agree", str(sample_ledger), "--labels", str(path), "--format", "csv"])
    assert res.exit_code == 0, res.output
    # PARTIAL_SOURCES as percentages: 1/1 is [20.7, 100.0], 2/2 [34.2, 100.0], 0/1 [0.0, 79.3], 1/2 [9.5, 90.5],
    # 1/3 [6.1, 79.2], 0/2 [0.0, 65.8]; "-" where there is nothing to divide by (the judge's recall: no run it
    # judged was labelled pass) or no F1 (no true positive)
    # PARTIAL_SOURCES as plain values: each rate as its fraction, interval and counts (rate() above), blank where
    # there is nothing to divide by (the judge's recall: no run it judged was labelled pass) or no F1
    from trajcheck.cli.agree import CSV_COLUMNS

    rows = list(csv.reader(res.stdout.splitlines()))
    assert rows[0] == CSV_COLUMNS
    want = []
    for src in PARTIAL_SOURCES:
        row = [src[k] for k in ("source", "level", "labelled", "covered", "tp", "fp", "tn", "fn", "f1")]
        for r in ("precision", "recall", "npv", "tnr"):
            row += [src[r][part] for part in ("rate", "low", "high", "k", "n")]
        want.append(["" if v is None else str(v) for v in row])
    assert rows[1:] == want
    assert rows[1][:9] == ["contract", "run", "3", "3", "1", "0", "2", "0", "1.0"]
    assert rows[2][9:19] == ["0.0", "0.0", "0.793451", "0", "1", "", "", "", "0", "0"]  # judge: 0/1, then 0/0
    assert not any("%" in cell or "[" in cell for row in rows for cell in row)  # no display strings
    assert res.stderr == "2 labelled runs are not in the ledger\n"  # stdout stays the CSV


def test_csv_labels_say_the_same(sample_ledger: Path, tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run_id", "task_id", "outcome", "claims_success", "step_index", "effect", "kind"])
        for rid, lab in PARTIAL.items():
            # run-level fields on a row of their own (empty step_index), then one row per step
            w.writerow([rid, lab.get("task_id", ""), lab.get("outcome", ""), lab.get("claims_success", ""), "", "",
                        ""])
            for idx, step in lab.get("steps", {}).items():
                w.writerow([rid, "", "", "", idx, "" if step["effect"] is None else str(step["effect"]).lower(), ""])
    got = run_json("agree", str(sample_ledger), "--labels", str(path))
    assert (got["labels"], got["matched_runs"], got["unmatched_labels"], got["sources"]) == (
        6, 4, ["another-ghost", "ghost-run"], PARTIAL_SOURCES)


def test_repeated_trials_pass_at_k(tmp_path: Path, width: Callable[[int], None]) -> None:
    # t1: pass, pass, fail; t2: fail, fail; t3: pass, and a run without a verdict whose evaluator score (1.0)
    # counts as a pass. Every task has two trials or more: k = 2.
    rows = [("t1", "pass", None), ("t1", "pass", None), ("t1", "fail", None), ("t2", "fail", None),
            ("t2", "fail", None), ("t3", "pass", None), ("t3", "unknown", 1.0)]
    ledger.write(tmp_path / "L", [{"run_id": f"r{i}", "task_id": t, "status": "ok", "eval_final_verdict": v,
                                   "outcome_score": score} for i, (t, v, score) in enumerate(rows)], [])
    labels = tmp_path / "labels.json"
    labels.write_text("{}")
    got = run_json("agree", str(tmp_path / "L"), "--labels", str(labels))
    # t1 (n=3, c=2): pass@1 = 1 - 1/3, pass@2 = 1 (n - c < 2), pass^2 = C(2,2)/C(3,2) = 1/3.
    # t2 (n=2, c=0): 0 each. t3 (n=2, c=2): 1 each.
    assert got["trials"] == {"k": 2, "flaky": ["t1"], "tasks": [
        {"task_id": "t1", "trials": 3, "passed": 2, "pass@1": 1 - 1 / 3, "pass@2": 1.0, "pass^2": 1 / 3,
         "flaky": True},
        {"task_id": "t2", "trials": 2, "passed": 0, "pass@1": 0.0, "pass@2": 0.0, "pass^2": 0.0, "flaky": False},
        {"task_id": "t3", "trials": 2, "passed": 2, "pass@1": 1.0, "pass@2": 1.0, "pass^2": 1.0, "flaky": False}]}
    assert got["matched_runs"] == 0 and all(s["labelled"] == 0 for s in got["sources"])
    width(100)
    res = CliRunner().invoke(app, ["agree", str(tmp_path / "L"), "--labels", str(labels)])
    assert res.exit_code == 0, res.output
    text = res.stdout[res.stdout.index("repeated trials"):]
    assert [line.rstrip() for line in text.splitlines()] == [
        "repeated trials",
        "",
        " task   trials   passed   pass@1   pass@2   pass^2   flaky",
        " " + "─" * 57,
        " t1     3        2        0.6667   1        0.3333   True",
        " t2     2        0        0        0        0        False",
        " t3     2        2        1        1        1        False",
        "",
    ]


@pytest.mark.parametrize(("content", "suffix", "message"), [
    (None, ".json", "cannot read labels"),
    ("[1, 2]", ".json", "expected an object {run_id: label}"),
    ('{"a": {"outcome": "maybe"}}', ".json", "a: outcome must be one of pass/fail, success/failure, true/false, 1/0, "
                                             "not 'maybe'"),
    ('{"a": 2}', ".json", "a: outcome must be one of"),
    ("run_id,outcome\nx,pass\ny,perhaps\n", ".csv", "labels.csv:3: outcome must be one of"),
    ('{"a": {"steps": {"one": {"effect": true}}}}', ".json", "a: bad steps"),
    ("{not json", ".json", "not valid JSON"),
    ("run_id,outcome\nx,pass\n,fail\n", ".csv", "labels.csv:3: run_id is empty"),
    ("run_id,step_index,effect\nx,1,perhaps\n", ".csv", "labels.csv:2: not a boolean: 'perhaps'"),
])
def test_unreadable_labels_are_exit_2(sample_ledger: Path, tmp_path: Path, content: str | None, suffix: str,
                                      message: str) -> None:
    path = tmp_path / f"labels{suffix}"
    if content is not None:
        path.write_text(content)
    res = CliRunner().invoke(app, ["agree", str(sample_ledger), "--labels", str(path)])
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and message in res.stderr and res.stderr.count("\n") == 1, res.stderr
    assert res.stdout == ""


def _run_level(got: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in got["sources"] if s["level"] == "run"]


@pytest.mark.parametrize("form", ["bool", "word", "object", "csv-success", "csv-10", "csv-truefalse", "csv-label"])
def test_labels_as_people_write_them_say_the_same(sample_ledger: Path, tmp_path: Path, form: str) -> None:
    """{run_id: true|false}, {run_id: "pass"|"fail"}, {run_id: {"outcome": "success"}} and CSV outcomes written
    success/failure, 1/0 or true/false (or in a `label` column) give the run-level agreement labels.json gives."""
    outcomes = {rid: lab["outcome"] for rid, lab in json.loads(LABELS.read_text()).items() if lab.get("outcome")}
    assert len(outcomes) >= 20 and set(outcomes.values()) == {"pass", "fail"}
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({rid: {"outcome": o} for rid, o in outcomes.items()}))
    want = run_json("agree", str(sample_ledger), "--labels", str(plain))
    passed = {rid: o == "pass" for rid, o in outcomes.items()}
    if form.startswith("csv"):
        words = {"csv-success": ("Success", "failure"), "csv-10": ("1", "0"), "csv-truefalse": ("TRUE", "false"),
                 "csv-label": ("pass", "fail")}[form]
        path = tmp_path / "labels.csv"
        column = "label" if form == "csv-label" else "outcome"
        path.write_text(f"run_id,{column}\n" + "".join(f"{rid},{words[0] if ok else words[1]}\n"
                                                        for rid, ok in passed.items()))
    else:
        value = {"bool": lambda ok: ok, "word": lambda ok: "pass" if ok else "fail",
                 "object": lambda ok: {"outcome": "success" if ok else "failure"}}[form]
        path = tmp_path / "labels.json"
        path.write_text(json.dumps({rid: value(ok) for rid, ok in passed.items()}))
    got = run_json("agree", str(sample_ledger), "--labels", str(path))
    assert got["matched_runs"] == want["matched_runs"] == len(outcomes)
    assert _run_level(got) == _run_level(want) and any(s["labelled"] > 0 for s in _run_level(got))
