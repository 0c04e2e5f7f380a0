"""Exact output of the analysis commands (best-of, compare, agree, timeline) on four sample runs: the
consent-overlay and drift-loop tasks, each recorded with the verifier on and off. Every expected value
below was checked by hand against the runs (see the comments), not copied from a run of the code."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console
from typer.testing import CliRunner

from trajcheck.cli.main import app

from conftest import SAMPLES

RUNS = ("consent-overlay-on", "consent-overlay-off", "drift-loop-on", "drift-loop-off")


@pytest.fixture(scope="module")
def four(tmp_path_factory):
    out = tmp_path_factory.mktemp("four") / "ledger"
    res = CliRunner().invoke(app, ["score", *(str(SAMPLES / r) for r in RUNS), "--out", str(out), "--quiet",
                                   "--jobs", "1"])
    assert res.exit_code == 0, res.output
    return out


def run_json(*args: str):
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_best_of_picks_the_passing_rollout_and_says_why(four):
    got = run_json("best-of", str(four), "--by", "task_id")
    # Both tasks: the verifier-on run passes its contract (and its recorded score is 1.0), the verifier-off
    # run fails it (score 0.0).
    assert [(r["task_id"], r["best_run"], r["verdict"], r["source"], r["rollouts"], r["why"]) for r in got] == [
        ("newsletter-subscribe", "consent-overlay-on", "pass", "contract+evaluator", 2,
         "verdict pass beats fail (consent-overlay-off)"),
        ("support-message", "drift-loop-on", "pass", "contract+evaluator", 2,
         "verdict pass beats fail (drift-loop-off)"),
    ]


def test_compare_arms_and_pairs(four):
    got = run_json("compare", str(four), "--by", "config.perceptual_verifier")
    arms = {a["arm"]: a for a in got["arms"]}
    # off: 0/2 succeed; Wilson 95% upper bound for 0/2 is z^2/(n+z^2) = 3.8415/5.8415 = 0.65762.
    assert arms["false"]["success"] == {"k": 0, "n": 2, "rate": 0.0, "low": 0.0, "high": 0.65762}
    # on: 2/2; lower bound 2/(2+3.8415) = 0.34238.
    assert arms["true"]["success"] == {"k": 2, "n": 2, "rate": 1.0, "low": 0.34238, "high": 1.0}
    # the off arm's consent run claims success (DONE) and fails its contract; drift-loop-off hits max_steps.
    assert (arms["false"]["false_claim"]["k"], arms["true"]["false_claim"]["k"]) == (1, 0)
    assert (arms["false"]["verdict_from_evidence"], arms["true"]["verdict_from_evidence"]) == (0, 0)
    [pair] = got["paired"]
    # two tasks x one trial: both pairs moved fail -> pass; exact McNemar two-sided p = 2 * 0.5^2 = 0.5.
    assert (pair["baseline"], pair["arm"], pair["pairs"], pair["baseline_only"], pair["arm_only"],
            pair["difference"], pair["mcnemar_p"], pair["task_wins"]) == ("false", "true", 2, 0, 2, 1.0, 0.5, 2)
    # 2 pairs are too few for a bootstrap: Newcombe's score interval. Both pairs discordant one way, so the
    # correlation term is 0 and low = 1 - sqrt((1 - 0.34238)^2 + (0.65762 - 0)^2) = 1 - 0.65762 * sqrt(2).
    assert pair["ci_method"] == "newcombe"
    assert (pair["low"], pair["high"]) == (pytest.approx(1 - 0.65762 * 2 ** 0.5, abs=2e-5), 1.0)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """The four runs plus two recorded without config.perceptual_verifier (no part in the ablation)."""
    out = tmp_path_factory.mktemp("mixed") / "ledger"
    names = (*RUNS, "nc-swallowed-send", "nc-consent-recovered")
    res = CliRunner().invoke(app, ["score", *(str(SAMPLES / r) for r in names), "--out", str(out), "--quiet",
                                   "--jobs", "1"])
    assert res.exit_code == 0, res.output
    return out


@pytest.mark.slow
def test_compare_leaves_runs_without_the_key_out_of_the_arms(mixed):
    got = run_json("compare", str(mixed), "--by", "config.perceptual_verifier")
    assert [a["arm"] for a in got["arms"]] == ["false", "true"] and got["runs_without_value"] == 2
    [pair] = got["paired"]
    assert (pair["baseline"], pair["arm"], pair["pairs"], pair["arm_only"]) == ("false", "true", 2, 2)
    res = CliRunner().invoke(app, ["compare", str(mixed), "--by", "config.perceptual_verifier"])
    assert "2 runs have no value of config.perceptual_verifier" in res.output
    got = run_json("compare", str(mixed), "--by", "config.perceptual_verifier", "--include-missing")
    assert [(a["arm"], a["runs"]) for a in got["arms"]] == [("(null)", 2), ("false", 2), ("true", 2)]
    assert got["runs_without_value"] == 0


@pytest.mark.slow
def test_compare_baseline_and_where(mixed):
    got = run_json("compare", str(mixed), "--by", "config.perceptual_verifier", "--baseline", "true")
    [pair] = got["paired"]
    assert (pair["baseline"], pair["arm"], pair["difference"], pair["baseline_only"]) == ("true", "false", -1.0, 2)
    got = run_json("compare", str(mixed), "--by", "config.perceptual_verifier", "--where",
                   "task_id = 'newsletter-subscribe'")
    # consent-overlay on and off; nc-consent-recovered has the same task but no value of the key
    assert [(a["arm"], a["runs"]) for a in got["arms"]] == [("false", 1), ("true", 1)]
    assert got["runs_without_value"] == 1 and got["where"] == "task_id = 'newsletter-subscribe'"
    for args, word in ((["--baseline", "maybe"], "is not an arm"), (["--where", "no such"], "--where")):
        res = CliRunner().invoke(app, ["compare", str(mixed), "--by", "config.perceptual_verifier", *args])
        assert res.exit_code == 2 and word in res.output, res.output


def test_agree_scores_each_source_on_its_own(four):
    got = run_json("agree", str(four), "--labels", str(SAMPLES / "labels.json"))
    src = {(s["source"], s["level"]): s for s in got["sources"]}
    assert got["matched_runs"] == 4
    # labels: on runs pass, off runs fail. Contract: right on all four.
    assert [src["contract", "run"][k] for k in ("tp", "fp", "tn", "fn", "covered")] == [2, 0, 2, 0, 4]
    # No run has a judge.
    assert src["judge", "run"]["covered"] == 0
    # Evidence: consent-on pass (a success message), both off runs fail (no effect, and a loop);
    # drift-loop-on is unknown (the chat shows the message, which is neither success nor error text).
    assert [src["evidence", "run"][k] for k in ("tp", "fp", "tn", "fn", "covered")] == [1, 0, 2, 0, 3]
    # The agents' own word: three DONEs (one of them false), drift-loop-off ended at max_steps.
    assert [src["self_reported", "run"][k] for k in ("tp", "fp", "tn", "fn")] == [2, 1, 1, 0]
    assert src["self_reported", "run"]["precision"]["rate"] == pytest.approx(2 / 3, abs=1e-6)


def test_timeline_referee_block(four):
    from trajcheck.cli.timeline import render
    from trajcheck.queries.views import timeline

    data = timeline(four, "consent-overlay-off")
    console = Console(width=100, file=io.StringIO(), color_system=None)
    console.print(render(data))
    text = console.file.getvalue()
    lines = [l.rstrip() for l in text[text.index("referee"):].splitlines()]
    assert lines == [
        "referee",
        # the evidence said in words, the selector as the contract wrote it (issue 40: it was taken for Rich
        # markup and printed as '')
        "contract  fail  newsletter subscribed  element_text#1: no line matched `Subscribed` in",
        "          `[role=alert]`",
        "judge     none",
        "evidence  fail  confidence 0.6  last_high_risk_no_effect@1: CLICK changed nothing, nor did any later",
        "          step",
        "final     FAIL  agreement  (from contract+evaluator)  FALSE CLAIM: the agent declared success",
        "          (referee)",
        # the process score (docs/failures.md): its one click did nothing and the agent declared done after it
        "process   0.00: effective actions 0/1; recovery 0/1 (declared done 1)",
        # the failure mode (docs/failures.md): the consent overlay that ate the click
        "failure   blocked (overlay) at step 1 [controllable]: overlay 'We use cookies' open: CLICK changed",
        "          nothing, nor did any later step",
        # where the run was lost (its first decisive error), with the frames that show it
        "decisive  dead_action at step 1 [controllable]: CLICK changed nothing (before frames/001.png, after",
        "          frames/002.png); no later action had an effect or reached a new screen",
    ]
    assert "NO EFFECT (no_pixel_change; pHash global 0, region 0)" in text
