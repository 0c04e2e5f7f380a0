"""`trajcheck best-of`: the rollout chosen per task, and why, on the sample runs and on small ledgers whose
rows are written one by one so that each tie-break decides one group."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trajcheck.store import ledger
from trajcheck.cli.main import app

from conftest import run_json


def row(task: str, best: str, verdict: str, source: str, reward: float, steps: int, rollouts: int,
        why: str) -> dict[str, Any]:
    """One output row of best-of --by task_id, as --format json prints it."""
    return {"task_id": task, "best_run": best, "verdict": verdict, "source": source, "reward_total": reward,
            "steps": steps, "rollouts": rollouts, "why": why}


# From the sample runs' verdicts, verdict sources, total rewards and step counts (see tests/golden/): a task
# recorded once is its own best; a task recorded twice has one passing rollout, which wins on its verdict;
# newsletter-subscribe has two passing rollouts (consent-overlay-on, reward 1.65, and nc-consent-recovered,
# -0.55) and a failing one, so the reward decides. find-order-status (paged-results-progress) and
# quillpad-dark-mode (menu-toggle-aimless, which made no net progress) are recorded once.
SAMPLE_BEST = [
    row("create-workspace", "terms-checkbox-on", "pass", "contract+evaluator", 1.65, 4, 2,
        "verdict pass beats fail (terms-checkbox-off)"),
    row("deals-search", "captcha-blocked", "fail", "evaluator", -2.55, 3, 1, "only rollout"),
    row("delete-account", "offscreen-modal-on", "pass", "contract+evaluator", 1.05, 4, 2,
        "verdict pass beats fail (offscreen-modal-off)"),
    row("editor-settings", "dark-faint-and-toast", "pass", "contract+evaluator", 2.2, 4, 1, "only rollout"),
    row("find-order-status", "paged-results-progress", "pass", "contract+evaluator", 3.95, 7, 1, "only rollout"),
    row("forge-register", "nc-register-navigation", "pass", "evidence", 0.7, 8, 2,
        "verdict pass beats fail (nc-server-validation)"),
    row("inbox-senders", "nc-inbox-read", "unknown", "none", 0.1, 2, 1, "only rollout"),
    row("incident-report", "ticker-dead-send", "fail", "contract+evaluator", -0.9, 6, 1, "only rollout"),
    row("newsletter-subscribe", "consent-overlay-on", "pass", "contract+evaluator", 1.65, 4, 3,
        "same verdict pass; reward 1.65 > -0.55 (nc-consent-recovered)"),
    row("open-invoice", "stale-element-recovery", "pass", "contract+evaluator", 2.05, 5, 1, "only rollout"),
    row("pay-invoice", "nc-pay-loop", "fail", "evidence", -3.25, 5, 1, "only rollout"),
    row("portal-orders", "auth-redirect-hidpi", "pass", "contract+evaluator", 3.25, 7, 2,
        "verdict pass beats fail (nc-signin-gave-up)"),
    row("profile-name", "nc-profile-toast", "pass", "evidence", 0.9, 5, 1, "only rollout"),
    row("quillpad-dark-mode", "menu-toggle-aimless", "fail", "evidence", -1.5, 12, 1, "only rollout"),
    row("send-feedback", "nc-swallowed-send", "fail", "evidence", -0.4, 2, 1, "only rollout"),
    row("sequencer-kick", "sequencer-correct", "pass", "contract+evaluator+judge", 1.4, 6, 2,
        "verdict pass beats uncertain (sequencer-near-miss)"),
    row("shop-checkout", "shop-checkout-1080p-jpeg", "pass", "contract+evaluator", 4.1, 6, 1, "only rollout"),
    row("signup", "validation-flash-on", "pass", "contract+evaluator", 2.45, 6, 2,
        "verdict pass beats fail (validation-flash-off)"),
    row("support-message", "drift-loop-on", "pass", "contract+evaluator", 1.95, 4, 2,
        "verdict pass beats fail (drift-loop-off)"),
]


def test_best_of_the_sample_runs_by_task(sample_ledger: Path) -> None:
    assert run_json("best-of", str(sample_ledger)) == SAMPLE_BEST
    # --by task_id is the default
    assert run_json("best-of", str(sample_ledger), "--by", "task_id") == SAMPLE_BEST


def write_ledger(path: Path, runs: list[tuple[str, str, str, str | None, float | None, int]]) -> Path:
    """A ledger of (run_id, group, status, verdict, reward_total, n_steps) rows; config.g holds the group."""
    ledger.write(path, [{"run_id": rid, "task_id": f"task-{g}", "config": json.dumps({"g": g}), "status": status,
                         "eval_final_verdict": verdict, "verdict_source": "contract", "reward_total": reward,
                         "n_steps": steps} for rid, g, status, verdict, reward, steps in runs], [])
    return path


#: One group per rule, each listed worst first so that the order of the rows decides nothing.
TIE_BREAKS = [
    ("r1", "reward", "ok", "pass", 1.0, 3), ("r2", "reward", "ok", "pass", 2.0, 9),
    ("s1", "steps", "ok", "fail", 1.0, 5), ("s2", "steps", "ok", "fail", 1.0, 3),
    ("t2", "tie", "ok", "pass", 1.0, 3), ("t1", "tie", "ok", "pass", 1.0, 3),
    # no verdict (unknown) is better than a disputed one (uncertain), which is better than a failure
    ("u1", "unknown", "ok", "fail", 9.0, 1), ("u2", "unknown", "ok", "uncertain", 5.0, 1),
    ("u3", "unknown", "ok", "unknown", 0.0, 1),
    # an invalid run is no rollout, however good its row looks
    ("v1", "valid", "invalid", "pass", 9.0, 1), ("v2", "valid", "ok", "fail", -1.0, 4),
]


def test_each_tie_break_and_its_reason(tmp_path: Path) -> None:
    got = run_json("best-of", str(write_ledger(tmp_path / "L", TIE_BREAKS)), "--by", "config.g")
    assert [(r["config.g"], r["best_run"], r["verdict"], r["reward_total"], r["steps"], r["rollouts"], r["why"])
            for r in got] == [
        ("reward", "r2", "pass", 2.0, 9, 2, "same verdict pass; reward 2.00 > 1.00 (r1)"),
        ("steps", "s2", "fail", 1.0, 3, 2, "same verdict and reward; 3 steps < 5 (s1)"),
        ("tie", "t1", "pass", 1.0, 3, 2, "tied with t2; first by run_id"),
        ("unknown", "u3", "unknown", 0.0, 1, 3, "verdict unknown beats uncertain (u2)"),
        ("valid", "v2", "fail", -1.0, 4, 1, "only rollout"),
    ]


def test_best_of_table_at_100_columns(tmp_path: Path, width100: None) -> None:
    path = write_ledger(tmp_path / "L", TIE_BREAKS[:6])
    res = CliRunner().invoke(app, ["best-of", str(path), "--by", "config.g"])
    assert res.exit_code == 0, res.output
    # a float cell prints with 4 significant digits (2.0 -> 2); the reason folds in what is left of 100
    assert [line.rstrip() for line in res.stdout.splitlines()] == [
        "best of N",
        "",
        "                                            reward_",
        " config.g   best_run   verdict   source     total     steps   rollouts   why",
        " " + "─" * 98,
        " reward     r2         pass      contract   2         9       2          same verdict pass; reward",
        "                                                                         2.00 > 1.00 (r1)",
        " steps      s2         fail      contract   1         3       2          same verdict and reward; 3",
        "                                                                         steps < 5 (s1)",
        " tie        t1         pass      contract   1         3       2          tied with t2; first by",
        "                                                                         run_id",
        "",
    ]


def test_csv(tmp_path: Path) -> None:
    path = write_ledger(tmp_path / "L", TIE_BREAKS[:2])
    res = CliRunner().invoke(app, ["best-of", str(path), "--by", "config.g", "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == ["config.g,best_run,verdict,source,reward_total,steps,rollouts,why",
                                       "reward,r2,pass,contract,2.0,9,2,same verdict pass; reward 2.00 > 1.00 (r1)"]


def test_a_rollout_without_a_reward_loses_to_one_with_a_reward(tmp_path: Path) -> None:
    path = write_ledger(tmp_path / "L", [("a", "g", "ok", "pass", None, 3), ("b", "g", "ok", "pass", -1.0, 3)])
    res = CliRunner().invoke(app, ["best-of", str(path), "--by", "config.g", "--format", "json"])
    assert res.exit_code == 0, res.output
    [got] = json.loads(res.stdout)
    assert (got["best_run"], got["reward_total"], got["why"]) == ("b", -1.0, "same verdict pass; reward -1.00 > none (a)")


@pytest.mark.parametrize(("by", "code", "message"), [
    ("nope", 2, 'error: --by nope: Binder Error: Referenced column "nope" not found'),
    ("config.a-b", 2, "error: --by config.a-b: config keys are letters, digits and underscores"),
    ("task_id; drop table runs", 2, "error: --by task_id; drop table runs: not a column name"),
])
def test_a_bad_by_is_exit_2(sample_ledger: Path, by: str, code: int, message: str) -> None:
    res = CliRunner().invoke(app, ["best-of", str(sample_ledger), "--by", by])
    assert res.exit_code == code and res.stderr.startswith(message), res.stderr
    assert res.stdout == ""


def test_a_missing_ledger_is_exit_3(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["best-of", str(tmp_path / "nowhere")])
    assert res.exit_code == 3 and res.stderr.startswith(f"error: {tmp_path / 'nowhere'}: no such ledger"), res.stderr
