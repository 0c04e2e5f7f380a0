"""A gate for CI (``trajcheck check``): rules on a ledger, alone or against a baseline ledger, each judged over
all runs and shown per task.

Success and false claims mean what they mean in :mod:`trajcheck.queries.comparison`: success is the final verdict
``pass`` (or, for a run without any verdict, an outcome score at or above ``success_score``); a false claim is
the runs column ``false_claim``. Invalid runs are counted, never judged.

How each rule is judged (docs/ci.md):

* ``max-false-claim-rate R``, ``min-success S``, ``max-mode-rate MODE=R`` and ``max-judge-false-success JUDGE=R``
  are limits on the ledger itself: the rule fails when the
  observed rate is above R (below S). The Wilson interval is shown beside it, not used: a CI user who writes
  "at most 10% false claims" means the runs measured, and a rule that waits for an interval to clear the
  limit would let 1 false claim in 3 runs through any limit above 9%.
  A judge's false-success rate is counted as ``trajcheck judges`` counts it: of the labelled runs the labels fail
  (``labels``) that the judge decided (the majority of its samples in ``runs.judgments``), the share it passes.
* ``max-success-drop D`` and ``max-cost-increase C`` compare with the baseline, on the tasks both ledgers ran,
  and fail only when the interval confirms it: when its lower bound is above D (above C). A drop within
  noise passes. A success drop must also clear the noise floor of the repeats (``stats.noise_floor``: at least the
  minimum detectable difference at these runs); one that does not passes as ``below_noise_floor``, and says so.
  The runs are paired when every one has exactly one partner (same task, same trial; compare's
  pairing), else compared as two independent samples.
* The rows per task (``by``) carry the same figures. A task whose observed figure is beyond the limit fails
  when its rule fails (it is where the failure comes from), and only then: its exit code is the rule's, so a
  CI report of one test case per task agrees with the exit code. When the rule holds, such a task passes with
  the reason ``over_limit_alone``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Callable, NamedTuple

from ..base.errors import UsageError
from ..base import stats
from .gateruns import (CONFIDENCE, EPS, Measure, RunRow, by_group, cost_increase, load, no_cost, pair_up, pct,
                       success_drop, wilson)

#: The scope of a rule's row over all the runs (the other rows' scopes are the values of ``by``).
OVERALL = "(all)"


class Rule(StrEnum):
    """The rules, named as their options (and as JUnit's ``classname``)."""

    MAX_FALSE_CLAIM_RATE = "max-false-claim-rate"
    MIN_SUCCESS = "min-success"
    MAX_SUCCESS_DROP = "max-success-drop"
    MAX_COST_INCREASE = "max-cost-increase"
    MAX_MODE_RATE = "max-mode-rate"  # one result per failure mode given (RuleResult.mode)
    MAX_JUDGE_FALSE_SUCCESS = "max-judge-false-success"  # one result per judge given (RuleResult.judge)


class Finding(StrEnum):
    """Why a row passes or fails (its ``reason``)."""

    WITHIN_LIMIT = "within_limit"  # the observed figure keeps the limit
    OVER_LIMIT = "over_limit"  # beyond the limit, and the rule fails (for a task: it is where the failure is)
    OVER_LIMIT_ALONE = "over_limit_alone"  # a task beyond the limit on its own; its rule holds over all runs
    CONFIRMED = "confirmed"  # against the baseline: the interval lies wholly beyond the limit
    WITHIN_NOISE = "within_noise"  # against the baseline: beyond the limit, but the interval reaches it
    # against the baseline: the interval lies beyond the limit, but the drop is inside the repeats' noise floor
    # (stats.noise_floor: smaller than the minimum detectable difference at these runs), so it is not gated
    BELOW_NOISE_FLOOR = "below_noise_floor"
    NO_DATA = "no_data"  # nothing to judge: a rule with no scored run fails; a task with no cost passes


# slots, not frozen: a frozen dataclass sets each field through object.__setattr__, and a check of 10,000 tasks
# makes 27,000 rows
@dataclass(slots=True)
class Row:
    """One rule over one scope (all runs, or one task): the observed figure, its interval, the verdict and why."""

    scope: str
    passed: bool
    reason: Finding
    why: str
    value: float | None
    low: float | None
    high: float | None
    n: int  # runs (pairs, when paired) behind the figure
    method: str  # how the interval was made
    detail: dict[str, Any]
    noise: dict[str, Any] | None = None  # a success drop's rule row: stats.NoiseFloor.to_json()

    def to_json(self) -> dict[str, Any]:
        value, low, high = self.figures()
        return {"scope": self.scope, "passed": self.passed, "reason": self.reason.value, "why": self.why,
                "value": value, "low": low, "high": high, "n": self.n, "method": self.method, "detail": self.detail,
                **({"noise_floor": self.noise} if self.noise is not None else {})}

    def figures(self) -> tuple[float | None, float | None, float | None]:
        """The value and its interval as the JSON and the CSV give them: rounded to 6 places (NaN as None)."""
        v, lo, hi = self.value, self.low, self.high  # inline rounded(): 27,000 rows, three figures each
        return (None if v is None or v != v else round(v, 6), None if lo is None or lo != lo else round(lo, 6),
                None if hi is None or hi != hi else round(hi, 6))


@dataclass(frozen=True)
class RuleResult:
    """A rule, its limit, how it is judged, its row over all runs (its verdict) and one row per group."""

    rule: Rule
    limit: float
    judged_by: str  # "observed" (the figure itself) | "interval" (its lower bound)
    overall: Row
    groups: list[Row]
    mode: str | None = None  # the failure mode of a max-mode-rate rule
    judge: str | None = None  # the judge of a max-judge-false-success rule

    @property
    def passed(self) -> bool:
        return self.overall.passed

    @property
    def name(self) -> str:
        """The rule as its option gives it: ``max-mode-rate blocked`` for a mode's, ``max-judge-false-success
        lenient`` for a judge's."""
        subject = self.mode or self.judge
        return f"{self.rule} {subject}" if subject else str(self.rule)

    def to_json(self) -> dict[str, Any]:
        return {"rule": str(self.rule), "limit": self.limit, "judged_by": self.judged_by, "passed": self.passed,
                "overall": self.overall.to_json(), "groups": [g.to_json() for g in self.groups],
                **({"mode": self.mode} if self.mode else {}), **({"judge": self.judge} if self.judge else {})}


@dataclass(frozen=True)
class GateResult:
    """What :func:`check` found: every rule's result; it passes when every rule holds."""

    ledger: str
    baseline: str | None
    by: str
    success_score: float
    where: str | None
    runs: int  # scored runs of the ledger (the absolute rules judge these)
    invalid: int
    baseline_runs: int | None
    shared_tasks: int | None  # tasks both ledgers ran (the baseline rules judge these)
    rules: list[RuleResult]
    labels: str | None = None  # the labels file the judge rules count against

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rules)

    @property
    def failed(self) -> list[str]:
        """The names of the rules that fail."""
        return [r.name for r in self.rules if not r.passed]

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "ledger": self.ledger, "baseline": self.baseline, "by": self.by,
                "success_score": self.success_score, "where": self.where, "confidence": CONFIDENCE,
                "runs": self.runs, "invalid": self.invalid, "baseline_runs": self.baseline_runs,
                "shared_tasks": self.shared_tasks, **({"labels": self.labels} if self.labels else {}),
                "rules": [r.to_json() for r in self.rules]}


def check(ledger_dir: str | os.PathLike[str], baseline: str | os.PathLike[str] | None = None, *,
          max_false_claim_rate: float | None = None, min_success: float | None = None,
          max_success_drop: float | None = None, max_cost_increase: float | None = None, by: str = "task_id",
          success_score: float = 1.0, where: str | None = None,
          max_mode_rate: dict[str, float] | None = None, max_judge_false_success: dict[str, float] | None = None,
          labels: str | os.PathLike[str] | None = None) -> GateResult:
    """Judge the rules given (see the module docstring); UsageError without a rule, for a limit out of range,
    for a baseline rule without a baseline (or a baseline without one), for a baseline that shares no task,
    for no cost data, and for a judge rule without ``labels`` or of a judge the ledger does not hold."""
    limits = {Rule.MAX_FALSE_CLAIM_RATE: max_false_claim_rate, Rule.MIN_SUCCESS: min_success,
              Rule.MAX_SUCCESS_DROP: max_success_drop, Rule.MAX_COST_INCREASE: max_cost_increase}
    given = {rule: float(v) for rule, v in limits.items() if v is not None}
    modes = _modes(max_mode_rate)
    judge_limits = _judge_limits(max_judge_false_success, labels)
    _validate(given, baseline, bool(modes or judge_limits))
    cost = Rule.MAX_COST_INCREASE in given
    runs, invalid = load(ledger_dir, by, success_score, where, cost)
    if modes:
        _modes_scored(ledger_dir, where)
    results = []
    groups = by_group(runs)
    if Rule.MAX_FALSE_CLAIM_RATE in given:
        results.append(_rate_rule(Rule.MAX_FALSE_CLAIM_RATE, given[Rule.MAX_FALSE_CLAIM_RATE], runs, groups,
                                  lambda r: r.false_claim))
    if Rule.MIN_SUCCESS in given:
        results.append(_rate_rule(Rule.MIN_SUCCESS, given[Rule.MIN_SUCCESS], runs, groups, lambda r: r.success))
    for mode, lim in modes:
        results.append(_rate_rule(Rule.MAX_MODE_RATE, lim, runs, groups, _in_mode(mode), mode))
    if judge_limits:
        results += _judge_rules(ledger_dir, judge_limits, labels, runs)
    base_runs = n_shared = None
    if baseline is not None:
        base, _ = load(baseline, by, success_score, where, cost)
        tasks = {r.task for r in runs} & {r.task for r in base}
        if not tasks:
            raise UsageError(f"{baseline} and {ledger_dir} share no task (task_id): the baseline rules compare the "
                             "tasks both ledgers ran; is --baseline the right ledger?")
        base_runs, n_shared = len(base), len(tasks)
        base_shared, cur_shared = ([r for r in rs if r.task in tasks] for rs in (base, runs))
        both = _Both(base_shared, cur_shared, by_group(base_shared), by_group(cur_shared))
        if Rule.MAX_SUCCESS_DROP in given:
            results.append(_compared(Rule.MAX_SUCCESS_DROP, given[Rule.MAX_SUCCESS_DROP], both, success_drop))
        if cost:
            if not any(r.cost is not None for r in cur_shared):
                raise UsageError(no_cost(ledger_dir))
            if not any(r.cost is not None for r in base_shared):
                raise UsageError(no_cost(baseline))
            results.append(_compared(Rule.MAX_COST_INCREASE, given[Rule.MAX_COST_INCREASE], both, cost_increase))
    return GateResult(str(ledger_dir), None if baseline is None else str(baseline), by, success_score, where,
                      len(runs), invalid, base_runs, n_shared, results, None if labels is None else str(labels))


def _in_mode(mode: str) -> Callable[[RunRow], bool]:
    return lambda r: r.mode == mode


def _modes(limits: dict[str, float] | None) -> list[tuple[str, float]]:
    """The ``max-mode-rate`` limits, by mode name; UsageError for a mode that does not exist or a limit out of
    range."""
    from ..base.reasons import FailureMode

    out = []
    for mode, v in sorted((limits or {}).items()):
        if mode not in set(FailureMode):
            raise UsageError(f"--max-mode-rate {mode}: no such failure mode; one of " + ", ".join(FailureMode))
        if not 0.0 <= float(v) <= 1.0:
            raise UsageError(f"--max-mode-rate {mode}={v:g}: give a fraction from 0 to 1 (0.1 is 10%)")
        out.append((mode, float(v)))
    return out


def _judge_limits(limits: dict[str, float] | None, labels: object) -> list[tuple[str, float]]:
    """The ``max-judge-false-success`` limits, by judge; UsageError for a limit out of range, and for any without
    labels (a false success is a success the labels fail)."""
    out = []
    for judge, v in sorted((limits or {}).items()):
        if not 0.0 <= float(v) <= 1.0:
            raise UsageError(f"--max-judge-false-success {judge}={v:g}: give a fraction from 0 to 1 (0.1 is 10%)")
        out.append((judge, float(v)))
    if out and labels is None:
        raise UsageError("--max-judge-false-success needs --labels FILE: a false success is a success the labels "
                         "fail")
    return out


def _judge_rules(ledger_dir: str | os.PathLike[str], limits: list[tuple[str, float]],
                 labels: str | os.PathLike[str] | None, runs: list[RunRow]) -> list[RuleResult]:
    """One rule per judge: of the runs judged (``runs``) that the labels fail and the judge decided, the share it
    passes, at most the limit. The rule's row also counts the labelled failures the judge did not decide
    (``not_judged``): a judge that skips the hard runs looks better than it is."""
    from .agreement import read_labels
    from .judgeverdicts import ledger_verdicts

    assert labels is not None  # _judge_limits refused judge rules without labels
    said = ledger_verdicts(ledger_dir)
    for judge, _ in limits:
        if judge not in said:
            raise UsageError(f"--max-judge-false-success {judge}: no such judge in {ledger_dir} (runs.judgments, "
                             "`score --judgments`); its judges: " + (", ".join(said) or "none"))
    failed = {rid for rid, lab in read_labels(labels).items() if lab.outcome and lab.outcome != "pass"}
    labelled = [r for r in runs if r.run_id in failed]
    out = []
    for judge, lim in limits:
        decided = [r for r in labelled if said[judge].get(r.run_id) is not None]
        result = _rate_rule(Rule.MAX_JUDGE_FALSE_SUCCESS, lim, decided, by_group(decided),
                            _passed_by(said[judge]), judge=judge)
        result.overall.detail["not_judged"] = len(labelled) - len(decided)
        out.append(result)
    return out


def _passed_by(said: dict[str, bool | None]) -> Callable[[RunRow], bool]:
    return lambda r: said.get(r.run_id) is True


def _modes_scored(ledger_dir: str | os.PathLike[str], where: str | None) -> None:
    """UsageError when runs that did not pass have no failure mode because they were scored before failure modes
    existed: a mode's rate over them would be too low."""
    from .failuremodes import failures

    unscored = failures(ledger_dir, None, where).unscored
    if unscored:
        raise UsageError(f"{ledger_dir}: {unscored} runs that did not pass were scored before failure modes "
                         "existed (runs.failure_mode is null): `trajcheck score` them again to judge --max-mode-rate")


def _validate(given: dict[Rule, float], baseline: object, modes: bool = False) -> None:
    if not given and not modes:
        raise UsageError("give at least one rule: --max-false-claim-rate R, --min-success S, --max-mode-rate "
                         "MODE=R, --max-judge-false-success JUDGE=R, or with --baseline LEDGER --max-success-drop D "
                         "or --max-cost-increase C")
    for rule, v in given.items():
        top = float("inf") if rule is Rule.MAX_COST_INCREASE else 1.0
        if not 0.0 <= v <= top:  # also refuses nan
            raise UsageError(f"--{rule} {v:g}: give a fraction " + ("of at least 0 (0.2 is +20%)" if top > 1
                                                                   else "from 0 to 1 (0.05 is 5%)"))
    compared = [f"--{r}" for r in (Rule.MAX_SUCCESS_DROP, Rule.MAX_COST_INCREASE) if r in given]
    if compared and baseline is None:
        raise UsageError(f"{' and '.join(compared)} compare{'s' if len(compared) == 1 else ''} with a baseline: "
                         "give --baseline OTHER_LEDGER")
    if baseline is not None and not compared:
        raise UsageError("--baseline is used by --max-success-drop and --max-cost-increase: give one of them")


def _rate_rule(rule: Rule, limit: float, runs: list[RunRow], groups: dict[str, list[RunRow]],
               pick: Callable[[RunRow], bool], mode: str | None = None, judge: str | None = None) -> RuleResult:
    """An absolute rule on a rate: the false-claim rate (or a failure mode's rate, or a judge's false-success
    rate) at most ``limit``, or success at least ``limit``."""
    upper = rule is not Rule.MIN_SUCCESS
    what = f"{mode} rate" if mode else f"{judge}'s false-success rate" if judge else \
        "false-claim rate" if upper else "success"
    runs_of = "run the labels fail" if judge else "run"

    def row(scope: str, rs: list[RunRow], rule_fails: bool | None) -> Row:
        k, n = sum(1 for r in rs if pick(r)), len(rs)
        rate = wilson(k, n)
        if not n:
            nothing = "no run the labels fail that the judge decided" if judge else "no scored runs"
            return Row(scope, False, Finding.NO_DATA, f"{nothing}: the {what} cannot be judged", None, None,
                       None, 0, "wilson", {"k": 0})
        value = k / n
        beyond = value > limit + EPS if upper else value < limit - EPS
        bound = "the limit" if upper else "the minimum"
        text = f"{what} {pct(value)} ({k} of {n} {runs_of if n == 1 else runs_of.replace('run', 'runs', 1)}) "
        if not beyond:
            reason, passed = Finding.WITHIN_LIMIT, True
            text += f"{'within' if upper else 'meets'} {bound} {pct(limit)}"
        else:
            text += f"{'above' if upper else 'below'} {bound} {pct(limit)}"
            reason, passed = (Finding.OVER_LIMIT, False) if rule_fails in (None, True) else \
                (Finding.OVER_LIMIT_ALONE, True)
            if reason is Finding.OVER_LIMIT_ALONE:
                text += " here alone; the rule holds over all runs"
        return Row(scope, passed, reason, text, value, rate.low, rate.high, n, "wilson", {"k": k})

    overall = row(OVERALL, runs, None)
    return RuleResult(rule, limit, "observed", overall,
                      [row(g, rs, not overall.passed) for g, rs in groups.items()], mode, judge)


class _Both(NamedTuple):
    """The runs of the tasks both ledgers ran, each side's and by group."""

    base: list[RunRow]
    cur: list[RunRow]
    base_groups: dict[str, list[RunRow]]
    cur_groups: dict[str, list[RunRow]]


def _compared(rule: Rule, limit: float, both: _Both, measure: Measure) -> RuleResult:
    """A rule against the baseline: fails when the interval of ``measure`` lies wholly above ``limit``."""
    unit = " pp" if rule is Rule.MAX_SUCCESS_DROP else "%"
    allowed = f"the allowed {100 * limit:.1f}{unit}"

    def row(scope: str, b: list[RunRow], c: list[RunRow], rule_fails: bool | None) -> Row:
        value, low, high, n, method, detail, text = measure(b, c)
        interval = "" if low is None or high is None else f"its interval [{100 * low:.1f}, {100 * high:.1f}]{unit}"
        if value is None:  # nothing to compare in this group (no run with a cost): nothing against it
            return Row(scope, True, Finding.NO_DATA, text, None, None, None, n, method, detail)
        if value <= limit + EPS:
            reason, passed = Finding.WITHIN_LIMIT, True
            text += f"; within {allowed}"
        elif rule_fails is None:  # the rule's own row: the interval decides, and a drop must clear the noise floor
            confirmed = low is not None and low > limit + EPS
            reason, passed = (Finding.CONFIRMED, False) if confirmed else (Finding.WITHIN_NOISE, True)
            text += (f"; {interval} lies wholly above {allowed}" if confirmed else
                     f"; {interval} reaches {allowed}: within noise" if interval else
                     f"; above {allowed}, with too few runs for an interval: within noise")
            noise = _success_noise(b, c) if rule is Rule.MAX_SUCCESS_DROP else None
            if noise is not None and confirmed and noise.verdict != "significant":
                reason, passed = Finding.BELOW_NOISE_FLOOR, True
                text += f", but {_below_floor(noise)}: not gated"
            return Row(scope, passed, reason, text, value, low, high, n, method, detail,
                       None if noise is None else noise.to_json())
        else:
            reason, passed = (Finding.OVER_LIMIT, False) if rule_fails else (Finding.OVER_LIMIT_ALONE, True)
            text += f"; above {allowed}" + ("" if rule_fails else " here alone; the rule holds over all tasks")
        return Row(scope, passed, reason, text, value, low, high, n, method, detail)

    overall = row(OVERALL, both.base, both.cur, None)
    bg, cg = both.base_groups, both.cur_groups
    return RuleResult(rule, limit, "interval", overall,
                      [row(g, bg[g], rs, not overall.passed) for g, rs in cg.items() if g in bg])


def _success_noise(base: list[RunRow], cur: list[RunRow]) -> stats.NoiseFloor | None:
    """Does the ledger's success differ from the baseline's by more than the noise floor of these runs: paired when
    the runs pair up (as :func:`gateruns.success_drop` pairs them), else the two ledgers' runs, clustered by task."""
    pairs = pair_up(base, cur)
    if pairs is not None:
        return stats.paired_noise([(b.task, b.success, c.success) for b, c in pairs])
    return stats.unpaired_noise([(r.task, r.success) for r in base], [(r.task, r.success) for r in cur])


def _below_floor(noise: stats.NoiseFloor) -> str:
    """Why a drop is not gated: 'the drop is inside the noise floor (MDD 125.3 pp at these runs; 3 more repeats
    per task would detect it)'."""
    floor = "no variation to measure it by" if noise.mdd is None else f"MDD {100 * noise.mdd:.1f} pp at these runs"
    k = noise.more_repeats_per_task
    more = {"no_variation": "", "needs_more_tasks": "; repeats alone cannot detect it: add tasks"}.get(
        noise.reason or "", f"; {k} more repeat{'' if k == 1 else 's'} per task would detect it")
    return f"the drop is inside the noise floor ({floor}{more})"
