"""Ablation comparison: arms of a ledger (or two ledgers), success with intervals,
paired differences with an interval that holds at their number (Newcombe's score
interval below 30 pairs, a seeded bootstrap above) and an exact McNemar test.

Success is the referee's ``eval_final_verdict = 'pass'``; where a run has no
verdict at all (``unknown``), an external evaluator's ``outcome_score`` at or
above ``success_score`` counts. The agent's own "done" never does. Uncertain and
unknown runs are not successes and are reported in their own columns.

Beyond the final success rate, each arm's warnings say whether the verifier helps: how often the agent
recovered after a warning, and how many warnings were false (the step had an effect after all).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..store import ledger
from ..base import stats
from ..base.reasons import WarningFollowup
from ..base.verdicts import Coverage, coverage
from ..base.errors import UsageError
from .armcontrol import ArmControl, arm_control, versus
from .armspend import Spend, spend_of
from .judgeverdicts import judged_rows, outcome_judge
from .failuremodes import ModeChange, mode_changes
from .views import arm_rows, group_expr

RUN_COLUMNS = ("run_id", "task_id", "trial", "status", "eval_final_verdict", "verdict_source", "outcome_score",
               "claimed_success", "false_claim", "n_steps", "effect_no_effect", "loops", "reward_total",
               "config_perceptual_verifier", "states_returning", "stalled_from_step", "no_net_progress", "cost_usd",
               "wall_seconds", "failure_mode", "judgments", "failure_control", "process_score")


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    task_id: str | None
    trial: int | None
    arm: str
    verdict: str
    success: bool
    scored_by: str  # verdict (contract/judge) | evidence (the evidence referee alone) | score | none | judge
    row: dict[str, Any]


def outcome_of(row: dict[str, Any], success_score: float) -> tuple[bool, str]:
    v = row.get("eval_final_verdict") or "unknown"
    if v in ("pass", "fail", "uncertain"):
        return v == "pass", "evidence" if row.get("verdict_source") == "evidence" else "verdict"
    if row.get("outcome_score") is not None:
        return float(row["outcome_score"]) >= success_score, "score"
    return False, "none"


def _load(ledger_dir: str | os.PathLike[str], arm_expr: str | None, label: str | None,
          where: str | None = None) -> list[dict[str, Any]]:
    con = ledger.connect(ledger_dir)
    try:
        rows = arm_rows(con, RUN_COLUMNS, arm_expr, where)
        unwarned = {rid: (n, cost) for rid, n, cost in con.execute(
            "select run_id, count(*), sum(cost_usd) from steps where action_effect_observed = false "
            "group by run_id").fetchall()}
        warned: dict[str, list[tuple[Any, ...]]] = {}
        for run_id, *rest in con.execute(
                "select run_id, warning_followup, warning_shown, effect_in_fact, count(*) from steps "
                "where action_effect_observed = false group by all order by all").fetchall():
            warned.setdefault(run_id, []).append(tuple(rest))
    finally:
        con.close()
    for r in rows:
        if label is not None:
            r["arm"] = label
        r["arm"] = MISSING if r["arm"] is None else str(r["arm"])
        r["no_effect_steps"], r["no_effect_cost"] = unwarned.get(r["run_id"], (0, None))
        r["warned"] = warned.get(r["run_id"], [])
    return rows


@dataclass(frozen=True)
class Warnings:
    """An arm's warnings of the verifier (steps where trajcheck's rule fired) and what followed them.

    ``recovered``: warnings followed by a recovery, of those whose follow-up is known (docs/perceptual.md,
    "After a warning"); ``false``: warnings on steps that in fact had an effect, of those with evidence to tell
    (``effect_in_fact`` not null). The intervals are Wilson's over warnings, which are not independent when a
    run has several (a loop of dead clicks): read them with ``followups`` and the runs' count."""

    count: int
    followups: dict[str, int]  # each follow-up's count; "unknown" for a follow-up the evidence cannot decide
    shown: dict[str, int]  # shown / not_shown / unknown: was the WARNING line in the agent's feedback
    recovered: stats.Rate
    false: stats.Rate

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "followups": self.followups, "shown": self.shown,
                "recovered": self.recovered.to_json(), "false": self.false.to_json()}


def _warnings(runs: list["RunOutcome"]) -> Warnings:
    """The warnings of an arm's runs, from their steps (rows as :func:`_load` reads them)."""
    followups = {str(v): 0 for v in WarningFollowup}
    followups["unknown"] = 0
    shown = {"shown": 0, "not_shown": 0, "unknown": 0}
    in_fact = [0, 0]  # true, known
    for o in runs:
        for followup, was_shown, effect, n in o.row["warned"]:
            followups["unknown" if followup is None else str(followup)] += n
            shown["unknown" if was_shown is None else "shown" if was_shown else "not_shown"] += n
            in_fact[0] += n if effect is True else 0
            in_fact[1] += n if effect is not None else 0
    count = sum(followups.values())
    return Warnings(count, followups, shown,
                    stats.wilson(followups[WarningFollowup.RECOVERED], count - followups["unknown"]),
                    stats.wilson(*in_fact))


@dataclass
class Arm:
    name: str
    runs: int
    invalid: int
    tasks: int
    success: stats.Rate
    uncertain: stats.Rate
    unknown: stats.Rate
    false_claim: stats.Rate
    mean_steps_to_done: float | None
    no_effect_per_run: float | None
    loops_per_run: float | None
    mean_reward: float | None
    scored_by_score: int
    scored_by_evidence: int = 0  # runs whose verdict came from the evidence referee alone
    returning: float | None = None  # mean share of a run's steps that went back to a screen seen before
    stalled_from: float | None = None  # mean stalled_from_step of the runs that stalled
    no_net_progress: stats.Rate | None = None  # runs that ended where they already were early on
    verdicts: Coverage | None = None  # how many runs have a verdict, by their strongest source
    warnings: Warnings | None = None  # the verifier's warnings (trajcheck's rule) and what followed them
    spend: Spend | None = None  # cost and time; None when the ledger holds neither
    control: ArmControl | None = None  # controllable failures, uncontrollable ones apart, and the process score

    def to_json(self) -> dict[str, Any]:
        return {"arm": self.name, "runs": self.runs, "invalid": self.invalid, "tasks": self.tasks,
                "success": self.success.to_json(), "uncertain": self.uncertain.to_json(),
                "unknown": self.unknown.to_json(), "false_claim": self.false_claim.to_json(),
                "mean_steps_to_done": _r(self.mean_steps_to_done), "no_effect_per_run": _r(self.no_effect_per_run),
                "loops_per_run": _r(self.loops_per_run), "mean_reward": _r(self.mean_reward),
                "success_from_score": self.scored_by_score, "verdict_from_evidence": self.scored_by_evidence,
                "steps_returning": _r(self.returning), "mean_stalled_from_step": _r(self.stalled_from),
                "no_net_progress": self.no_net_progress.to_json() if self.no_net_progress else None,
                "verdicts": self.verdicts.to_json() if self.verdicts else None,
                "warnings": self.warnings.to_json() if self.warnings else None,
                "spend": self.spend.to_json() if self.spend else None,
                **(self.control.to_json() if self.control else {})}


def _r(v: float | None) -> float | None:
    return None if v is None or v != v else round(v, 6)


def _mean(vals: list[Any]) -> float | None:
    xs = [float(v) for v in vals if v is not None]
    return sum(xs) / len(xs) if xs else None


@dataclass
class Pairing:
    baseline: str
    arm: str
    pairs: int
    difference: float | None  # success(arm) - success(baseline), mean over pairs
    low: float | None
    high: float | None
    b: int  # baseline succeeded, arm failed
    c: int  # arm succeeded, baseline failed
    mcnemar_p: float | None
    wins: int  # tasks where the arm succeeded more often
    losses: int
    ties: int
    ci_method: str | None = None  # newcombe (few pairs, or all differ alike) | bootstrap: stats.paired_interval
    # does the difference clear the noise floor (stats.noise_floor): paired over the pairs, else the arms' runs
    noise: stats.NoiseFloor | None = None

    def to_json(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "arm": self.arm, "pairs": self.pairs,
                "difference": _r(self.difference), "low": _r(self.low), "high": _r(self.high),
                "ci_method": self.ci_method,
                "baseline_only": self.b, "arm_only": self.c, "mcnemar_p": _r(self.mcnemar_p),
                "task_wins": self.wins, "task_losses": self.losses, "task_ties": self.ties,
                "noise_floor": self.noise.to_json() if self.noise else None}


@dataclass
class Counterfactual:
    arm: str
    runs_recorded_off: int
    unwarned_no_effect_steps: int
    runs_with_unwarned: int
    outcomes: dict[str, int] = field(default_factory=dict)  # final verdicts of the runs with unwarned steps

    def to_json(self) -> dict[str, Any]:
        return {"arm": self.arm, "runs_recorded_verifier_off": self.runs_recorded_off,
                "unwarned_no_effect_steps": self.unwarned_no_effect_steps,
                "runs_with_unwarned_steps": self.runs_with_unwarned,
                "their_verdicts": dict(sorted(self.outcomes.items()))}


@dataclass
class Comparison:
    by: str
    success_score: float
    arms: list[Arm]
    pairings: list[Pairing]
    counterfactuals: list[Counterfactual]
    missing: int = 0  # runs without a value of --by, left out of the arms (include_missing=False)
    where: str | None = None
    mode_changes: list[ModeChange] = field(default_factory=list)  # failure modes whose rate moved from the baseline
    # the runs expected (score --expect), each arm's denominator (queries.expected), and what success is over
    expected: list[dict[str, Any]] | None = None
    rates_over: str | None = None
    runs_without_log: int = 0  # runs without a log (no value of --by): in no arm's expected runs (queries.expected)
    # --outcome judge:NAME: {"outcome": "judge:NAME", "runs_not_judged": {arm: runs it did not judge, left out}}
    judged: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "success_score": self.success_score, "where": self.where,
                "runs_without_value": self.missing, **(self.judged or {}),
                **({"expected": self.expected, "rates_over": self.rates_over,
                    "runs_without_log": self.runs_without_log} if self.expected is not None else {}),
                "arms": [a.to_json() for a in self.arms],
                "paired": [p.to_json() for p in self.pairings],
                "counterfactual": [c.to_json() for c in self.counterfactuals],
                "failure_modes": [m.to_json() for m in self.mode_changes]}


#: The arm of runs that have no value of --by (a config key they do not set).
MISSING = "(null)"


def compare(ledgers: list[str | os.PathLike[str]], by: str | None = None, success_score: float = 1.0, *,
            baseline: str | None = None, where: str | None = None, include_missing: bool = False,
            outcome: str | None = None) -> Comparison:
    """Compare arms: the values of ``by`` in one ledger, or two ledgers as two arms (``outcome`` judge:NAME: success
    is that judge's verdict, runs.judgments, and the runs it did not judge are left out and counted).

    ``where``: SQL on ``runs`` selecting the runs compared. Runs without a value of ``by`` are counted
    apart (``missing``) and are no arm unless ``include_missing``. ``baseline``: the arm the others are
    paired against (default: the first arm by name)."""
    if len(ledgers) == 1:
        if not by:
            raise UsageError("one ledger needs --by COLUMN (e.g. --by config.perceptual_verifier)")
        expr = group_expr(by)
        _config_key_exists(ledgers[0], by)
        rows = _load(ledgers[0], expr, None, where)
    elif len(ledgers) == 2:
        names = [Path(p).name or str(p) for p in ledgers]
        if names[0] == names[1]:
            names = ["A", "B"]
        rows = _load(ledgers[0], None, names[0], where) + _load(ledgers[1], None, names[1], where)
        by = by or "ledger"
    else:
        raise UsageError("give one ledger with --by, or two ledgers")
    missing = 0
    if not include_missing:
        missing = sum(r["arm"] == MISSING for r in rows)
        rows = [r for r in rows if r["arm"] != MISSING]
    judge = outcome_judge(outcome)
    rows, not_judged = judged_rows(rows, judge) if judge else (rows, {})
    outcomes: list[RunOutcome] = []
    for r in rows:
        if r["status"] != "ok":
            continue
        ok, how = (r["judge_success"], "judge") if judge else outcome_of(r, success_score)
        outcomes.append(RunOutcome(r["run_id"], r["task_id"], r["trial"], r["arm"],
                                   r["eval_final_verdict"] or "unknown", ok, how, r))
    arm_names = sorted({r["arm"] for r in rows})
    if baseline is not None:
        if baseline not in arm_names:
            raise UsageError(f"--baseline {baseline!r} is not an arm; the arms are: "
                             f"{', '.join(arm_names) or '(none)'}")
        arm_names = [baseline] + [a for a in arm_names if a != baseline]
    has = (any(r["cost_usd"] is not None for r in rows), any(r["wall_seconds"] is not None for r in rows))
    arms = [_arm(name, [o for o in outcomes if o.arm == name], sum(1 for r in rows if r["arm"] == name and
                                                                     r["status"] != "ok"), has) for name in arm_names]
    for arm in arms[1:]:  # each arm's controllable failures and process score against the baseline's
        arm.control = versus(arms[0].control, arm.control)
    pairings = [_pair(arm_names[0], other, outcomes) for other in arm_names[1:]]
    cfs = [_counterfactual(name, [o for o in outcomes if o.arm == name]) for name in arm_names]
    keyed = [(o.arm, _key(o), o.row["failure_mode"]) for o in sorted(outcomes, key=lambda o: o.run_id)]
    shifts = [m for other in arm_names[1:] for m in mode_changes(arm_names[0], other, keyed)]
    return Comparison(by, success_score, arms, pairings, [c for c in cfs if c.runs_recorded_off], missing, where,
                      shifts, judged={"outcome": f"judge:{judge}", "runs_not_judged": not_judged} if judge else None)


def _config_key_exists(ledger_dir: str | os.PathLike[str], by: str) -> None:
    """UsageError when ``by`` is ``config.KEY`` and no run's config has KEY (a typo would compare nothing and
    print an empty table): it names the key and the keys the runs' configs have."""
    if not by.startswith("config."):
        return
    key = by[len("config."):]
    con = ledger.connect(ledger_dir)
    try:
        keys = sorted(k for (k,) in con.execute("select distinct unnest(json_keys(config)) from runs "
                                                "where config is not null").fetchall())
    finally:
        con.close()
    if key not in keys:
        have = ", ".join(f"config.{k}" for k in keys) or "none (no run records a config)"
        raise UsageError(f"--by {by}: no run's config has the key {key!r}; the keys the runs have: {have}")


def _arm(name: str, runs: list[RunOutcome], invalid: int, has: tuple[bool, bool] = (False, False)) -> Arm:
    n = len(runs)
    spend = spend_of([{**o.row, "success": o.success} for o in runs], sum(o.success for o in runs), *has)
    return Arm(
        name=name, runs=n, invalid=invalid, tasks=len({o.task_id for o in runs}),
        success=stats.wilson(sum(o.success for o in runs), n),
        uncertain=stats.wilson(sum(o.verdict == "uncertain" for o in runs), n),
        unknown=stats.wilson(sum(o.scored_by == "none" for o in runs), n),
        false_claim=stats.wilson(sum(bool(o.row["false_claim"]) for o in runs), n),
        mean_steps_to_done=_mean([o.row["n_steps"] for o in runs if o.row["claimed_success"]]),
        no_effect_per_run=_mean([o.row["effect_no_effect"] for o in runs]),
        loops_per_run=_mean([o.row["loops"] for o in runs]),
        mean_reward=_mean([o.row["reward_total"] for o in runs]),
        scored_by_score=sum(o.scored_by == "score" for o in runs),
        scored_by_evidence=sum(o.scored_by == "evidence" for o in runs),
        returning=_mean([o.row["states_returning"] for o in runs]),
        stalled_from=_mean([o.row["stalled_from_step"] for o in runs]),
        no_net_progress=stats.wilson(sum(o.row["no_net_progress"] is True for o in runs), n),
        verdicts=coverage(o.row for o in runs),
        warnings=_warnings(runs), spend=spend, control=arm_control([o.row for o in runs]))


def _key(o: RunOutcome) -> tuple[str, int | None]:
    return (o.task_id or o.run_id, o.trial)


def _pair(base: str, other: str, outcomes: list[RunOutcome]) -> Pairing:
    a: dict[tuple[str, int | None], RunOutcome] = {}
    b: dict[tuple[str, int | None], RunOutcome] = {}
    for o in sorted(outcomes, key=lambda o: o.run_id):
        if o.arm == base:
            a.setdefault(_key(o), o)
        elif o.arm == other:
            b.setdefault(_key(o), o)
    keys = sorted(set(a) & set(b), key=lambda k: (k[0], -1 if k[1] is None else k[1]))
    xa = np.array([a[k].success for k in keys], dtype=np.float64)
    xb = np.array([b[k].success for k in keys], dtype=np.float64)
    diff, low, high, method = stats.paired_interval(xa, xb) if keys else (None, None, None, None)
    only_a = int(((xa == 1) & (xb == 0)).sum())
    only_b = int(((xb == 1) & (xa == 0)).sum())
    per_task: dict[str, list[float]] = {}
    for k, va, vb in zip(keys, xa, xb):
        per_task.setdefault(k[0], []).append(vb - va)
    wins = sum(1 for d in per_task.values() if sum(d) > 0)
    losses = sum(1 for d in per_task.values() if sum(d) < 0)
    ties = len(per_task) - wins - losses
    if keys:
        noise = stats.paired_noise([(k[0], bool(va), bool(vb)) for k, va, vb in zip(keys, xa, xb)])
    else:  # no run pairs: the two arms as independent samples, clustered by task
        side_a, side_b = ([(_key(o)[0], o.success) for o in outcomes if o.arm == arm] for arm in (base, other))
        noise = stats.unpaired_noise(side_a, side_b)
    return Pairing(base, other, len(keys), diff, low, high, only_a, only_b, stats.mcnemar_exact(only_a, only_b),
                   wins, losses, ties, method, noise)


def _counterfactual(name: str, runs: list[RunOutcome]) -> Counterfactual:
    off = [o for o in runs if o.row.get("config_perceptual_verifier") is False]
    hit = [o for o in off if o.row["no_effect_steps"]]
    outcomes: dict[str, int] = {}
    for o in hit:
        outcomes[o.verdict] = outcomes.get(o.verdict, 0) + 1
    return Counterfactual(name, len(off), sum(o.row["no_effect_steps"] for o in off), len(hit), outcomes)
