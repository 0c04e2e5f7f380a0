"""`trajcheck compare`: exact output on the sample runs and on small ledgers written row by row.

Every expected count below was read off the runs (which run is in which arm, which passed) and every
interval is computed here from its closed form (Wilson's score interval; Newcombe's method 10 where the
pairs' correlation term is 0), not copied from the command's output.
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
from trajcheck.base.stats import newcombe_table

from conftest import run_json

#: The 97.5% quantile of the standard normal: the z of every 95% interval.
Z = 1.959963984540054
PV = "config.perceptual_verifier"


#: z_0.975 + z_0.8: the noise floor's multiplier (alpha 0.05, power 0.8).
Z_NOISE = Z + 0.8416212335729143


def noise(only_a: int, only_b: int, n: int) -> dict[str, Any]:
    """The noise floor of n pairs, one per task (no ICC, design effect 1), only_a of them passing in the baseline
    only and only_b in the arm only: psi = (only_a + only_b) / n the discordant share, SE = sqrt(psi / n), MDD =
    Z_NOISE * SE; inconclusive below it, with m' = Z_NOISE^2 psi / (n d^2) repeats per task needed."""
    d, psi = (only_b - only_a) / n, (only_a + only_b) / n
    se = math.sqrt(psi / n)
    out = {"method": "paired", "difference": round(d, 6), "se": round(se, 6), "mdd": round(Z_NOISE * se, 6),
           "verdict": "significant", "repeats_per_task": None, "more_repeats_per_task": None, "reason": None,
           "icc": [None], "design_effect": [1.0]}
    if abs(d) < Z_NOISE * se:
        need = math.ceil(Z_NOISE ** 2 * psi / (n * d * d))
        out.update(verdict="inconclusive", repeats_per_task=need, more_repeats_per_task=need - 1)
    return out


def wilson_bounds(k: int, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval of k successes in n, from its closed form."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def rate(k: int, n: int) -> dict[str, Any]:
    """A rate as the JSON output writes it: k, n, the rate and its Wilson bounds, rounded to 6 places."""
    low, high = wilson_bounds(k, n)
    return {"k": k, "n": n, "rate": round(k / n, 6), "low": round(low, 6), "high": round(high, 6)}


def lines(text: str) -> list[str]:
    """Output lines without the padding rich adds on their right."""
    return [line.rstrip() for line in text.splitlines()]


def write_ledger(path: Path, runs: list[dict[str, Any]]) -> Path:
    """A ledger of run rows only (no steps): the columns compare reads, with defaults, every other one null."""
    defaults = {"status": "ok", "verdict_source": "contract", "claimed_success": True, "false_claim": False,
                "n_steps": 2, "effect_no_effect": 0, "loops": 0, "reward_total": 0.0}
    ledger.write(path, [{**defaults, **r} for r in runs], [])
    return path


def paired_ledger(path: Path, outcomes: list[tuple[bool, bool]]) -> Path:
    """One task per pair of outcomes (baseline arm a, arm b), split by config.arm."""
    runs = []
    for i, pair in enumerate(outcomes):
        for arm, ok in zip("ab", pair):
            runs.append({"run_id": f"{arm}-{i:02d}", "task_id": f"t{i:02d}", "config": json.dumps({"arm": arm}),
                         "eval_final_verdict": "pass" if ok else "fail"})
    return write_ledger(path, runs)


# The sample runs recorded with config.perceptual_verifier (the 8 nc-* runs and menu-toggle-aimless do not set it):
#   false: consent-overlay-off, drift-loop-off, offscreen-modal-off, terms-checkbox-off, validation-flash-off,
#          all verdict fail; all but drift-loop-off claim success (4 false claims); each 2 steps when it
#          claims; no-effect steps 1 + 5 + 1 + 1 + 1 = 9; drift-loop-off has the one loop; rewards
#          -1.5, -4.05, -1.8, -1.5, -1.5.
#   true:  14 runs of 13 tasks (sequencer-kick twice). pass: auth-redirect-hidpi, consent-overlay-on,
#          dark-faint-and-toast, drift-loop-on, offscreen-modal-on, paged-results-progress, sequencer-correct,
#          shop-checkout-1080p-jpeg, stale-element-recovery, terms-checkbox-on, validation-flash-on (11); fail:
#          captcha-blocked, ticker-dead-send; uncertain: sequencer-near-miss. False claims: sequencer-near-miss
#          and ticker-dead-send. Every run but captcha-blocked claims success: 7+4+4+4+4+7+6+6+6+5+4+6+6 = 69
#          steps over 13 runs. One no-effect step each in consent-overlay-on, drift-loop-on, offscreen-modal-on,
#          terms-checkbox-on, ticker-dead-send and validation-flash-on (6). Rewards sum to 17.9 + 3.95.
def warnings(followups: dict[str, int], shown: int, not_shown: int, recovered: tuple[int, int],
             false: tuple[int, int]) -> dict[str, Any]:
    """An arm's warnings as the JSON output writes them: the follow-ups not named are 0."""
    kinds = ("recovered", "repeated", "moved_on", "declared_done", "run_ended", "unknown")
    count = sum(followups.values())
    return {"count": count, "followups": {k: followups.get(k, 0) for k in kinds},
            "shown": {"shown": shown, "not_shown": not_shown, "unknown": count - shown - not_shown},
            "recovered": rate(*recovered), "false": rate(*false)}


# The warnings (steps where trajcheck's rule fired, action_effect_observed false), read off the runs' steps:
#   false: consent-overlay-off 1, offscreen-modal-off 1, terms-checkbox-off 1 and validation-flash-off 1 are
#          followed by DONE (declared_done); drift-loop-off clicks the same dead Send at 938,429 five times: steps
#          1-4 are followed by the same click (repeated), step 5 is the run's last (run_ended). None was shown: the
#          runs record no feedback and config.perceptual_verifier is false. offscreen-modal-off's click mounted
#          the confirmation dialog out of view (its DOM snapshots gain "Confirm delete"): the one false warning.
#   true:  consent-overlay-on 1 (Subscribe under the cookie box; step 3 clicks #subscribe again and the
#          message appears), drift-loop-on 1 (the next high-risk click, step 2, focuses the field), offscreen-modal-on
#          1 (after a scroll, step 3's confirm navigates), terms-checkbox-on 1 (step 2 ticks the box) and
#          validation-flash-on 1 (step 2 focuses the email field) are recovered; ticker-dead-send 3 is followed by
#          two WAITs on an unchanged screen and DONE (declared_done). All six carry the WARNING line in their
#          recorded feedback; offscreen-modal-on's is again the false one (the dialog in the DOM).
FALSE_ARM = {"arm": "false", "runs": 5, "invalid": 0, "tasks": 5, "success": rate(0, 5), "uncertain": rate(0, 5),
             "unknown": rate(0, 5), "false_claim": rate(4, 5), "mean_steps_to_done": 2.0, "no_effect_per_run": 1.8,
             "loops_per_run": 0.2, "mean_reward": -2.07, "success_from_score": 0, "verdict_from_evidence": 0,
             "steps_returning": 0.0, "mean_stalled_from_step": None, "no_net_progress": rate(0, 5),
             "verdicts": {"runs": 5, "with_verdict": 5, "by_source": {"contract": 5}, "unknown": 0},
             "warnings": warnings({"repeated": 4, "declared_done": 4, "run_ended": 1}, 0, 9, (0, 9), (1, 9)),
             "spend": None}  # the sample runs record no tokens, cost or time
TRUE_ARM = {"arm": "true", "runs": 14, "invalid": 0, "tasks": 13, "success": rate(11, 14), "uncertain": rate(1, 14),
            "unknown": rate(0, 14), "false_claim": rate(2, 14), "mean_steps_to_done": round(69 / 13, 6),
            "no_effect_per_run": round(6 / 14, 6), "loops_per_run": 0.0, "mean_reward": round(21.85 / 14, 6),
            "success_from_score": 0, "verdict_from_evidence": 0,
            "steps_returning": 0.0, "mean_stalled_from_step": None, "no_net_progress": rate(0, 14),
            # every run but captcha-blocked (its evaluator alone) has a contract
            "verdicts": {"runs": 14, "with_verdict": 14, "by_source": {"contract": 13, "evaluator": 1},
                         "unknown": 0},
            "warnings": warnings({"recovered": 5, "declared_done": 1}, 6, 0, (5, 6), (1, 6)),
            "spend": None}
# The five tasks recorded both ways all went fail -> pass. Newcombe: the baseline's rate is 0/5 and the arm's
# 5/5, the correlation term is 0 (no pair succeeded or failed in both), so
# low = 1 - sqrt((1 - wilson(5,5).low)^2 + wilson(0,5).high^2). Exact McNemar: 2 * 0.5^5.
PAIR_FALSE_TRUE = {"baseline": "false", "arm": "true", "pairs": 5, "difference": 1.0,
                   "low": round(1 - math.hypot(1 - wilson_bounds(5, 5)[0], wilson_bounds(0, 5)[1]), 6),
                   "high": 1.0, "ci_method": "newcombe", "baseline_only": 0, "arm_only": 5, "mcnemar_p": 0.0625,
                   "task_wins": 5, "task_losses": 0, "task_ties": 0,
                   # 5 pairs cannot detect even 100 points: MDD = Z_NOISE * sqrt(1 / 5) = 125.3 pp; 2 repeats would
                   "noise_floor": noise(0, 5, 5)}
# Failure modes (trajcheck failures): four verifier-off runs ended on a dead click (dead_action) and one on a
# click the cookie banner took (blocked: overlay); their five partners passed. The intervals are Newcombe's
# paired ones over the 5 pairs' table (both, only false, only true, neither); McNemar 2 * 0.5^4 and 1.
def _newcombe(both: int, only_a: int, only_b: int, neither: int) -> tuple[float, float]:
    _, low, high = newcombe_table(both, only_a, only_b, neither)
    return round(low, 6), round(high, 6)


MODES_FALSE_TRUE = [{"mode": m, "baseline": "false", "arm": "true", "baseline_rate": rate(k, 5),
                     "arm_rate": rate(k_true, 14), "difference": -k / 5, "low": _newcombe(0, k, 0, 5 - k)[0],
                     "high": _newcombe(0, k, 0, 5 - k)[1], "method": "newcombe_paired", "pairs": 5,
                     "only_baseline": k, "only_arm": 0, "mcnemar_p": p}
                    # the verifier-on arm's one blocked run is captcha-blocked, whose task has no verifier-off run
                    for m, k, k_true, p in (("blocked", 1, 1, 1.0), ("dead_action", 4, 0, 0.125))]
COUNTERFACTUAL_FALSE = {"arm": "false", "runs_recorded_verifier_off": 5, "unwarned_no_effect_steps": 9,
                        "runs_with_unwarned_steps": 5, "their_verdicts": {"fail": 5}}


#: Each arm's controllable failures and process score (issue 51): checked against figures computed from the ledger
#: itself in tests/test_process.py (test_compare_reports_each_arms_controllable_failures_as_failures_does); the
#: exact outputs here leave them out.
CONTROL_KEYS = ("controllable_failures", "uncontrollable_failures", "controllable_vs_baseline", "process_score",
                "process_vs_baseline")


def without_control(got: dict[str, Any]) -> dict[str, Any]:
    for arm in got["arms"]:
        assert all(k in arm for k in CONTROL_KEYS)
        for k in CONTROL_KEYS:
            del arm[k]
    return got


def test_compare_json_of_the_sample_runs_by_verifier(sample_ledger: Path) -> None:
    got = without_control(run_json("compare", str(sample_ledger), "--by", PV))
    assert got == {"by": PV, "success_score": 1.0, "where": None, "runs_without_value": 9,
                   "arms": [FALSE_ARM, TRUE_ARM], "paired": [PAIR_FALSE_TRUE],
                   "counterfactual": [COUNTERFACTUAL_FALSE], "failure_modes": MODES_FALSE_TRUE}


def test_compare_table_of_the_sample_runs_at_100_columns(sample_ledger: Path, width100: None) -> None:
    res = CliRunner().invoke(app, ["compare", str(sample_ledger), "--by", PV])
    assert res.exit_code == 0, res.output
    # the same figures as the JSON above, as percentages with one decimal
    assert lines(res.stdout) == EXPECTED_TABLE
    assert res.stderr == (f"9 runs have no value of {PV} and are not compared (--include-missing makes them "
                          "an arm)\n")


EXPECTED_TABLE = [
    # the arms' rates are unpaired, over all their runs; the paired difference below is over the pairs only
    'arms, unpaired: rates over all runs (success: verdict pass, else score >= 1)',
    '',
    ' config.perceptual_verifier   false                        true',
    " " + "─" * 89,
    ' runs                         5                            14',
    ' tasks                        5                            13',
    ' success                      0.0% [0.0, 43.4] (0/5)       78.6% [52.4, 92.4] (11/14)',
    ' uncertain                    0.0% [0.0, 43.4] (0/5)       7.1% [1.3, 31.5] (1/14)',
    ' unknown                      0.0% [0.0, 43.4] (0/5)       0.0% [0.0, 21.5] (0/14)',
    ' false_claim                  80.0% [37.6, 96.4] (4/5)     14.3% [4.0, 39.9] (2/14)',
    ' by_evidence                  0                            0',
    ' steps_to_done                2.0                          5.3',
    ' no_effect/run                1.80                         0.43',
    ' loops/run                    0.20                         0.00',
    ' mean_reward                  -2.07                        1.56',
    ' steps_returning              0.0%                         0.0%',
    ' stalled_from                 -                            -',
    ' no_net_progress              0.0% [0.0, 43.4] (0/5)       0.0% [0.0, 21.5] (0/14)',
    ' verdicts                     5/5: contract 5              14/14: contract 13, evaluator 1',
    ' warnings                     9                            6',
    ' recovered_after_warning      0.0% [0.0, 29.9] (0/9)       83.3% [43.6, 97.0] (5/6)',
    ' false_warnings               11.1% [2.0, 43.5] (1/9)      16.7% [3.0, 56.4] (1/6)',
    # the controllable failures (docs/failures.md): every verifier-off failure was the agent's (5/5); of the
    # verifier-on arm's 3 failures, captcha-blocked's CAPTCHA is out of both sides (2 of 14 - 1); Newcombe's
    # unpaired interval on the difference. The process score: its mean over the runs that have one
    # (captcha-blocked's every step was on the wall: none)
    ' controllable_failures        100.0% [56.6, 100.0] (5/5)   15.4% [4.3, 42.2] (2/13)',
    ' uncontrollable_failures      0                            1',
    ' controllable_vs_baseline     -                            -84.6 pp [-95.7, -33.5]',
    ' process_score                0.03 [0.00, 0.13] (n=5)      0.87 [0.78, 0.96] (n=13)',
    ' process_vs_baseline          -                            +0.84',
    '',
    "after a warning (trajcheck's rule): what the agent did next",
    '',
    '                            not                            moved    declared    run',
    ' arm     warnings   shown   shown   recovered   repeated   on       done        ended   unknown',
    " " + "─" * 94,
    ' false   9          0       9       0           4          0        4           1       0',
    ' true    6          6       0       5           0          0        1           0       0',
    '',
    'paired by task_id and trial: the difference over the pairs only',
    '',
    'baseline          false',
    'arm               true',
    'pairs             5',
    'difference        +100.0 pp',
    '95% CI            [+38.6, +100.0] pp',
    'ci_method         newcombe',
    'only_baseline     0',
    'only_arm          5',
    'mcnemar_p         0.0625',
    'wins/losses/ties  5/0/0',
    'noise floor       inconclusive (MDD 125.3 pp; 1 more repeat per task)',
    '',
    'failure modes whose rate changed: rates over all runs, difference over pairs',
    '',
    'mode           blocked',
    'baseline       false',
    'arm            true',
    'baseline_rate  20.0% (1/5)',
    'arm_rate       7.1% (1/14)',
    'difference     -20.0 pp',
    '95% CI         [-62.4, +26.4] pp',
    'pairs          5',
    'mcnemar_p      1.0000',
    '',
    'mode           dead_action',
    'baseline       false',
    'arm            true',
    'baseline_rate  80.0% (4/5)',
    'arm_rate       0.0% (0/14)',
    'difference     -80.0 pp',
    '95% CI         [-96.4, -19.3] pp',
    'pairs          5',
    'mcnemar_p      0.1250',
    '',
    'counterfactual: what the verifier would have flagged',
    '',
    ' arm     runs recorded verifier-off   unwarned no-effect steps   runs with them   their verdicts',
    " " + "─" * 95,
    ' false   5                            9                          5                {"fail": 5}',
    '',
]


def test_no_header_is_broken_inside_a_word(sample_ledger: Path, width: Callable[[int], None]) -> None:
    width(120)  # the paired table fits 120 columns (at 100 it is one block per pair)
    res = CliRunner().invoke(app, ["compare", str(sample_ledger), "--by", PV])
    assert res.exit_code == 0, res.output
    # the header breaks after its slashes, between words: wins/ | losses/ | ties, one under the other
    head = res.stdout.split("the difference over the pairs only")[1].split("─")[0].splitlines()
    last = [line.replace("noise floor", "").split()[-1] for line in head if line.strip()]  # the column before it
    assert last == ["wins/", "losses/", "ties"], head


def test_include_missing_makes_the_runs_without_a_value_the_first_arm(sample_ledger: Path) -> None:
    got = without_control(run_json("compare", str(sample_ledger), "--by", PV, "--include-missing"))
    # The 8 nc-* runs and menu-toggle-aimless, 9 runs of 8 tasks (forge-register twice). pass:
    # nc-consent-recovered, nc-profile-toast, nc-register-navigation; unknown (no verdict, no evaluator score):
    # nc-inbox-read; the other 5 fail. All but nc-inbox-read have their verdict from the evidence referee alone.
    # False claims: menu-toggle-aimless, nc-pay-loop, nc-server-validation, nc-swallowed-send. All but
    # nc-signin-gave-up claim: 5+2+5+5+8+8+2+12 = 47 steps over 8. No-effect steps 2 + 4 + 1 = 7, loops in
    # nc-consent-recovered and nc-pay-loop, rewards sum to -2.1 - 1.5.
    null_arm = {"arm": "(null)", "runs": 9, "invalid": 0, "tasks": 8, "success": rate(3, 9),
                "uncertain": rate(0, 9), "unknown": rate(1, 9), "false_claim": rate(4, 9),
                "mean_steps_to_done": round(47 / 8, 6), "no_effect_per_run": round(7 / 9, 6),
                "loops_per_run": round(2 / 9, 6), "mean_reward": -0.4, "success_from_score": 0,
                "verdict_from_evidence": 8,
                # menu-toggle-aimless: 5 of 12 steps go back (stored as 0.4167), stalled from step 2, no progress
                "steps_returning": round(0.4167 / 9, 6), "mean_stalled_from_step": 2.0,
                "no_net_progress": rate(1, 9),
                # the evidence referee decided all but nc-inbox-read
                "verdicts": {"runs": 9, "with_verdict": 8, "by_source": {"evidence": 8}, "unknown": 1},
                # nc-consent-recovered: step 1 followed by the same eaten click (repeated), step 2 by the cookie
                # box accepted and the click at step 4 that works (recovered); nc-pay-loop: steps 1-3 followed by
                # the same dead 'Pay now' (repeated), step 4 by DONE; nc-swallowed-send: DONE. No config, no
                # recorded feedback: whether they were shown is unknown. None of the seven changed the URL or the
                # page's skeleton, and no later frame came before the next action.
                "warnings": warnings({"recovered": 1, "repeated": 4, "declared_done": 2}, 0, 0, (1, 7), (0, 7)),
                "spend": None}
    # "(null)" sorts before "false": it is the baseline. Against false it shares one task, newsletter-subscribe
    # (nc-consent-recovered passed, consent-overlay-off failed): rates 1/1 and 0/1, so low = -1 and
    # high = -1 + sqrt(wilson(0,1).high^2 + (1 - wilson(1,1).low)^2).
    vs_false = {"baseline": "(null)", "arm": "false", "pairs": 1, "difference": -1.0, "low": -1.0,
                "high": round(-1 + math.hypot(wilson_bounds(0, 1)[1], 1 - wilson_bounds(1, 1)[0]), 6),
                "ci_method": "newcombe", "baseline_only": 1, "arm_only": 0, "mcnemar_p": 1.0,
                "task_wins": 0, "task_losses": 1, "task_ties": 0, "noise_floor": noise(1, 0, 1)}
    # Against true: newsletter-subscribe (both passed) and portal-orders (nc-signin-gave-up failed,
    # auth-redirect-hidpi passed): baseline 1/2, arm 2/2; no pair failed in both, so the correlation term is 0.
    vs_true = {"baseline": "(null)", "arm": "true", "pairs": 2, "difference": 0.5,
               "low": round(0.5 - math.hypot(1 - wilson_bounds(2, 2)[0], wilson_bounds(1, 2)[1] - 0.5), 6),
               "high": round(1 - wilson_bounds(1, 2)[0], 6), "ci_method": "newcombe", "baseline_only": 0,
               "arm_only": 1, "mcnemar_p": 1.0, "task_wins": 1, "task_losses": 0, "task_ties": 1,
               "noise_floor": noise(0, 1, 2)}
    # failure modes, on the same pairs: consent-overlay-off's click under the cookie banner (blocked) against
    # nc-consent-recovered's pass, and nc-signin-gave-up's sign-in wall (blocked) against auth-redirect-hidpi's
    # pass: the success intervals mirrored
    modes = [{"mode": "blocked", "baseline": "(null)", "arm": "false", "baseline_rate": rate(1, 9),
              "arm_rate": rate(1, 5), "difference": 1.0, "low": -vs_false["high"], "high": 1.0,
              "method": "newcombe_paired", "pairs": 1, "only_baseline": 0, "only_arm": 1, "mcnemar_p": 1.0},
             {"mode": "blocked", "baseline": "(null)", "arm": "true", "baseline_rate": rate(1, 9),
              "arm_rate": rate(1, 14), "difference": -0.5, "low": -vs_true["high"], "high": -vs_true["low"],
              "method": "newcombe_paired", "pairs": 2, "only_baseline": 1, "only_arm": 0, "mcnemar_p": 1.0}]
    assert got == {"by": PV, "success_score": 1.0, "where": None, "runs_without_value": 0,
                   "arms": [null_arm, FALSE_ARM, TRUE_ARM], "paired": [vs_false, vs_true],
                   "counterfactual": [COUNTERFACTUAL_FALSE], "failure_modes": modes}


def test_baseline_and_where(sample_ledger: Path) -> None:
    where = "task_id in ('signup', 'support-message')"
    got = run_json("compare", str(sample_ledger), "--by", PV, "--where", where, "--baseline", "true")
    # validation-flash-on/off and drift-loop-on/off: the named baseline comes first, and both pairs went
    # pass -> fail seen from it. Rates 2/2 and 0/2: low = -1, high = -1 + sqrt(2) * wilson(0,2).high.
    assert [(a["arm"], a["runs"], a["success"]["k"], a["false_claim"]["k"]) for a in got["arms"]] == [
        ("true", 2, 2, 0), ("false", 2, 0, 1)]
    assert got["paired"] == [{
        "baseline": "true", "arm": "false", "pairs": 2, "difference": -1.0, "low": -1.0,
        "high": round(-1 + math.sqrt(2) * wilson_bounds(0, 2)[1], 6), "ci_method": "newcombe",
        "baseline_only": 2, "arm_only": 0, "mcnemar_p": 0.5, "task_wins": 0, "task_losses": 2, "task_ties": 0,
        "noise_floor": noise(2, 0, 2)}]
    # the nc-* runs are not selected, so none is counted as missing a value
    assert (got["where"], got["runs_without_value"]) == (where, 0)
    # drift-loop-off's 5 no-effect steps and validation-flash-off's 1
    assert got["counterfactual"] == [{"arm": "false", "runs_recorded_verifier_off": 2, "unwarned_no_effect_steps": 6,
                                      "runs_with_unwarned_steps": 2, "their_verdicts": {"fail": 2}}]


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--by", PV, "--baseline", "maybe"], 2, "error: --baseline 'maybe' is not an arm; the arms are: false, true"),
    (["--by", PV, "--where", "no such"], 2, "error: --where: "),
    (["--by", "nope"], 2, "error: --by: "),
    (["--by", "config.not-a-key"], 2, "error: --by config.not-a-key: config keys are letters, digits and underscores"),
    ([], 2, "error: one ledger needs --by COLUMN"),
])
def test_bad_arguments_are_one_line_and_exit_2(sample_ledger: Path, args: list[str], code: int, message: str) -> None:
    res = CliRunner().invoke(app, ["compare", str(sample_ledger), *args])
    assert res.exit_code == code, res.output
    assert res.stderr.startswith(message), res.stderr
    assert res.stdout == "" and "Traceback" not in res.output


def test_three_ledgers_or_a_missing_one(sample_ledger: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["compare", *[str(sample_ledger)] * 3])
    assert (res.exit_code, res.stderr) == (2, "error: give one ledger with --by, or two ledgers\n")
    res = CliRunner().invoke(app, ["compare", str(tmp_path / "nowhere"), "--by", PV])
    assert res.exit_code == 3 and res.stderr.startswith(f"error: {tmp_path / 'nowhere'}: no such ledger"), res.stderr


@pytest.mark.slow
def test_two_ledgers_are_two_arms_named_by_their_folders(tmp_path: Path) -> None:
    def one(path: Path, verdicts: list[str]) -> Path:
        return write_ledger(path, [{"run_id": f"r{i}", "task_id": f"t{i}", "eval_final_verdict": v}
                                   for i, v in enumerate(verdicts)])

    before = one(tmp_path / "before", ["fail", "fail", "pass"])
    after = one(tmp_path / "after", ["pass", "fail", "pass"])
    got = run_json("compare", str(before), str(after), "--baseline", "before")
    assert got["by"] == "ledger"
    assert [(a["arm"], a["success"]) for a in got["arms"]] == [("before", rate(1, 3)), ("after", rate(2, 3))]
    # t0 fail -> pass, t1 failed in both, t2 passed in both: rates 1/3 and 2/3 and, with one pair of each kind
    # and none pass -> fail, the correlation phi = (1 * 1 - 0 * 1) / sqrt(1 * 2 * 2 * 1) = 0.5, which narrows
    # Newcombe's interval: d_low = p_b - wilson_b.low, d_high = wilson_a.high - p_a enter as
    # sqrt(d_low^2 - 2 phi d_low d_high + d_high^2), and the mirror image for the upper bound
    a_low, a_high = wilson_bounds(1, 3)
    b_low, b_high = wilson_bounds(2, 3)
    lo_b, hi_a, hi_b, lo_a = 2 / 3 - b_low, a_high - 1 / 3, b_high - 2 / 3, 1 / 3 - a_low
    [pair] = got["paired"]
    assert pair == {"baseline": "before", "arm": "after", "pairs": 3, "difference": round(1 / 3, 6),
                    "low": round(1 / 3 - math.sqrt(lo_b ** 2 - 2 * 0.5 * lo_b * hi_a + hi_a ** 2), 6),
                    "high": round(1 / 3 + math.sqrt(hi_b ** 2 - 2 * 0.5 * hi_b * lo_a + lo_a ** 2), 6),
                    "ci_method": "newcombe", "baseline_only": 0, "arm_only": 1, "mcnemar_p": 1.0,
                    "task_wins": 1, "task_losses": 0, "task_ties": 2, "noise_floor": noise(0, 1, 3)}
    # two folders of one name are arms A and B
    same_a = one(tmp_path / "x" / "L", ["fail"])
    same_b = one(tmp_path / "y" / "L", ["pass"])
    assert [a["arm"] for a in run_json("compare", str(same_a), str(same_b))["arms"]] == ["A", "B"]


def test_29_pairs_get_newcombes_interval(tmp_path: Path) -> None:
    # 15 tasks went fail -> pass, 14 passed in both: rates 14/29 and 29/29; nothing failed in both arms, so the
    # correlation term is 0 and the interval is the two Wilson intervals' distances combined
    got = run_json("compare", str(paired_ledger(tmp_path / "L", [(False, True)] * 15 + [(True, True)] * 14)),
                   "--by", "config.arm")
    [pair] = got["paired"]
    p_a = 14 / 29
    a_low, a_high = wilson_bounds(14, 29)
    b_low, _ = wilson_bounds(29, 29)
    assert pair == {"baseline": "a", "arm": "b", "pairs": 29, "difference": round(15 / 29, 6),
                    "low": round(15 / 29 - math.hypot(1 - b_low, a_high - p_a), 6),
                    "high": round(15 / 29 + (p_a - a_low), 6), "ci_method": "newcombe",
                    "baseline_only": 0, "arm_only": 15, "mcnemar_p": round(2 * 0.5 ** 15, 6),
                    "task_wins": 15, "task_losses": 0, "task_ties": 14,
                    # 15 of 29 discordant, all one way: 51.7 pp against an MDD of Z_NOISE * sqrt(15 / 29 / 29)
                    "noise_floor": noise(0, 15, 29)}


def test_30_pairs_get_the_seeded_bootstrap(tmp_path: Path) -> None:
    # 15 of 30 pairs went fail -> pass: the differences are 15 ones and 15 zeros, mean 0.5. A percentile
    # bootstrap of that mean lies close to the normal interval 0.5 +- 1.96 * sqrt(0.25 / 30) = [0.321, 0.679].
    path = paired_ledger(tmp_path / "L", [(False, True)] * 15 + [(True, True)] * 15)
    [pair] = run_json("compare", str(path), "--by", "config.arm")["paired"]
    assert (pair["ci_method"], pair["pairs"], pair["difference"], pair["arm_only"]) == ("bootstrap", 30, 0.5, 15)
    half = Z * math.sqrt(0.25 / 30)
    assert pair["low"] == pytest.approx(0.5 - half, abs=0.04) and pair["high"] == pytest.approx(0.5 + half, abs=0.04)
    # seeded: the same ledger gives the same interval
    [again] = run_json("compare", str(path), "--by", "config.arm")["paired"]
    assert again == pair


def test_30_pairs_that_all_moved_one_way_do_not_get_a_zero_width_interval(tmp_path: Path) -> None:
    path = paired_ledger(tmp_path / "L", [(False, True)] * 30)
    [pair] = run_json("compare", str(path), "--by", "config.arm")["paired"]
    assert (pair["ci_method"], pair["difference"], pair["high"]) == ("newcombe", 1.0, 1.0)
    assert pair["low"] < 0.95


def test_csv_is_the_arms_figures_as_plain_values(tmp_path: Path) -> None:
    path = paired_ledger(tmp_path / "L", [(False, True), (True, True)])
    res = CliRunner().invoke(app, ["compare", str(path), "--by", "config.arm", "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(res.stdout.splitlines()))
    arms = run_json("compare", str(path), "--by", "config.arm")["arms"]
    assert [r["arm"] for r in rows] == ["a", "b"]
    # each rate a column per figure: a succeeded 1 of 2 (Wilson [9.5, 90.5]%), b 2 of 2
    assert {k: rows[0][k] for k in ("success_k", "success_n", "success_rate", "success_low", "success_high")} == \
        {"success_k": "1", "success_n": "2", "success_rate": "0.5", "success_low": "0.094531",
         "success_high": "0.905469"}
    assert (rows[1]["success_rate"], rows[1]["success_low"], rows[1]["runs"], rows[1]["tasks"]) == \
        ("1.0", "0.34238", "2", "2")
    # the same values as the JSON, nested keys joined by "_"; nothing formatted for display
    for row, arm in zip(rows, arms):
        assert row["false_claim_rate"] == str(arm["false_claim"]["rate"])
        assert row["mean_reward"] == str(arm["mean_reward"])
    assert not any(("%" in v or "[" in v or "/" in v) for r in rows for v in r.values() if v), rows


def test_by_a_config_key_no_run_has_is_a_usage_error_naming_the_keys(sample_ledger: Path) -> None:
    """A typo in --by config.KEY compared nothing and printed an empty table, exit 0 (issue 46)."""
    res = CliRunner().invoke(app, ["compare", str(sample_ledger), "--by", "config.nosuchkey"])
    assert res.exit_code == 2, res.output
    assert "config.nosuchkey" in res.stderr and "'nosuchkey'" in res.stderr
    assert "config.perceptual_verifier" in res.stderr  # the keys that exist
    assert res.stdout == ""
