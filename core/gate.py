"""A gate for CI (``trajcheck check``): rules on a ledger, alone or against a baseline ledger, each judged over
all runs and shown per task.

Success and false claims mean what they mean in :mod:`trajcheck.comparison`: success is the final verdict
``pass`` (or, for a run without any verdict, an outcome score at or above ``success_score``); a false claim is
the runs column ``false_claim``. Invalid runs are counted, never judged.

How each rule is judged (docs/ci.md):

* ``max-false-claim-rate R`` and ``min-success S`` are limits on the ledger itself: the rule fails when the
  observed rate is above R (below S). The Wilson interval is shown beside it, not used: a CI user who writes
  "at most 10% false claims" means the runs measured, and a rule that waits for an interval to clear the
  limit would let 1 false claim in 3 runs through any limit above 9%.
* ``max-success-drop D`` and ``max-cost-increase C`` compare with the baseline, on the tasks both ledgers ran,
  and fail only when the interval confirms it: when its lower bound is above D (above C). A drop within
  noise passes. The runs are paired when every one has exactly one partner (same task, same trial; compare's
  pairing), else compared as two independent samples.
* The rows per task (``by``) carry the same figures. A task whose observed figure is beyond the limit fails
  when its rule fails (it is where the failure comes from), and only then: its exit code is the rule's, so a
  CI report of one test case per task agrees with the exit code. When the rule holds, such a task passes with
  the reason ``over_limit_alone``.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Callable, Iterable, NamedTuple

from . import ledger, stats
from .comparison import MISSING, outcome_of
from .errors import UsageError
from .views import group_expr

#: Every interval of the gate: 95%.
CONFIDENCE = 0.95
#: Figures that equal a limit but for the last bits of a subtraction are at the limit, not beyond it.
EPS = 1e-9
#: The scope of a rule's row over all the runs (the other rows' scopes are the values of ``by``).
OVERALL = "(all)"


class Rule(StrEnum):
    """The rules, named as their options (and as JUnit's ``classname``)."""

    MAX_FALSE_CLAIM_RATE = "max-false-claim-rate"
    MIN_SUCCESS = "min-success"
    MAX_SUCCESS_DROP = "max-success-drop"
    MAX_COST_INCREASE = "max-cost-increase"


class Finding(StrEnum):
    """Why a row passes or fails (its ``reason``)."""

    WITHIN_LIMIT = "within_limit"  # the observed figure keeps the limit
    OVER_LIMIT = "over_limit"  # beyond the limit, and the rule fails (for a task: it is where the failure is)
    OVER_LIMIT_ALONE = "over_limit_alone"  # a task beyond the limit on its own; its rule holds over all runs
    CONFIRMED = "confirmed"  # against the baseline: the interval lies wholly beyond the limit
    WITHIN_NOISE = "within_noise"  # against the baseline: beyond the limit, but the interval reaches it
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

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "passed": self.passed, "reason": str(self.reason), "why": self.why,
                "value": _r(self.value), "low": _r(self.low), "high": _r(self.high), "n": self.n,
                "method": self.method, "detail": self.detail}


@dataclass(frozen=True)
class RuleResult:
    """A rule, its limit, how it is judged, its row over all runs (its verdict) and one row per group."""

    rule: Rule
    limit: float
    judged_by: str  # "observed" (the figure itself) | "interval" (its lower bound)
    overall: Row
    groups: list[Row]

    @property
    def passed(self) -> bool:
        return self.overall.passed

    def to_json(self) -> dict[str, Any]:
        return {"rule": str(self.rule), "limit": self.limit, "judged_by": self.judged_by, "passed": self.passed,
                "overall": self.overall.to_json(), "groups": [g.to_json() for g in self.groups]}


@dataclass(frozen=True)
class CheckResult:
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

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rules)

    @property
    def failed(self) -> list[str]:
        """The names of the rules that fail."""
        return [str(r.rule) for r in self.rules if not r.passed]

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "ledger": self.ledger, "baseline": self.baseline, "by": self.by,
                "success_score": self.success_score, "where": self.where, "confidence": CONFIDENCE,
                "runs": self.runs, "invalid": self.invalid, "baseline_runs": self.baseline_runs,
                "shared_tasks": self.shared_tasks, "rules": [r.to_json() for r in self.rules]}


def _r(v: float | None) -> float | None:
    return None if v is None or v != v else round(v, 6)


class _Run(NamedTuple):  # a tuple, not a dataclass: a check makes 20,000 of these, 3x faster
    task: str  # task_id, or the run_id of a run without one (its own task, as compare pairs it)
    trial: int | None
    group: str
    success: bool
    false_claim: bool
    cost: float | None


def _load(path: str | os.PathLike[str], by: str, success_score: float, where: str | None,
          cost: bool) -> tuple[list[_Run], int]:
    """The scored runs of a ledger (and how many are invalid); UsageError for a bad ``by`` or ``where``, or for
    a ledger without ``runs.cost_usd`` when ``cost`` is asked."""
    con = ledger.connect(path)
    try:
        if cost and "cost_usd" not in {d[0] for d in con.execute("select * from runs limit 0").description}:
            raise UsageError(_no_cost(path))
        expr = "coalesce(task_id, run_id)" if by == "task_id" else group_expr(by)
        if where:
            try:
                con.execute(f"select count(*) from runs where {where}").fetchall()
            except Exception as exc:  # noqa: BLE001  (parser or binder error)
                raise UsageError(f"--where: {str(exc).splitlines()[0]}") from None
        sql = (f"select coalesce(task_id, run_id), trial, status, eval_final_verdict, verdict_source, "
               f"outcome_score, false_claim, CAST({expr} AS VARCHAR), {'cost_usd' if cost else 'NULL'} from runs"
               + (f" where {where}" if where else ""))
        try:
            rows = con.execute(sql).fetchall()
        except Exception as exc:  # noqa: BLE001  (binder error: unknown column)
            raise UsageError(f"--by: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    runs = []
    success: dict[tuple[Any, Any, Any], bool] = {}  # compare's outcome_of, once per distinct verdict and score
    for task, trial, status, verdict, source, score, false_claim, group, usd in rows:
        if status != "ok":
            continue
        ok = success.get((verdict, source, score))
        if ok is None:
            ok = success[verdict, source, score] = outcome_of(
                {"eval_final_verdict": verdict, "verdict_source": source, "outcome_score": score}, success_score)[0]
        runs.append(_Run(task, trial, MISSING if group is None else group, ok, bool(false_claim),
                         None if usd is None else float(usd)))
    return runs, len(rows) - len(runs)


def _no_cost(path: str | os.PathLike[str]) -> str:
    return (f"{path}: no cost data in the ledger (runs.cost_usd is missing or empty); --max-cost-increase needs "
            "both ledgers scored from logs that record cost")


def check(ledger_dir: str | os.PathLike[str], baseline: str | os.PathLike[str] | None = None, *,
          max_false_claim_rate: float | None = None, min_success: float | None = None,
          max_success_drop: float | None = None, max_cost_increase: float | None = None, by: str = "task_id",
          success_score: float = 1.0, where: str | None = None) -> CheckResult:
    """Judge the rules given (see the module docstring); UsageError without a rule, for a limit out of range,
    for a baseline rule without a baseline (or a baseline without one), for a baseline that shares no task,
    and for no cost data."""
    limits = {Rule.MAX_FALSE_CLAIM_RATE: max_false_claim_rate, Rule.MIN_SUCCESS: min_success,
              Rule.MAX_SUCCESS_DROP: max_success_drop, Rule.MAX_COST_INCREASE: max_cost_increase}
    given = {rule: float(v) for rule, v in limits.items() if v is not None}
    _validate(given, baseline)
    cost = Rule.MAX_COST_INCREASE in given
    runs, invalid = _load(ledger_dir, by, success_score, where, cost)
    results = []
    groups = _groups(runs)
    if Rule.MAX_FALSE_CLAIM_RATE in given:
        results.append(_rate_rule(Rule.MAX_FALSE_CLAIM_RATE, given[Rule.MAX_FALSE_CLAIM_RATE], runs, groups,
                                  lambda r: r.false_claim))
    if Rule.MIN_SUCCESS in given:
        results.append(_rate_rule(Rule.MIN_SUCCESS, given[Rule.MIN_SUCCESS], runs, groups, lambda r: r.success))
    base_runs = n_shared = None
    if baseline is not None:
        base, _ = _load(baseline, by, success_score, where, cost)
        tasks = {r.task for r in runs} & {r.task for r in base}
        if not tasks:
            raise UsageError(f"{baseline} and {ledger_dir} share no task (task_id): the baseline rules compare the "
                             "tasks both ledgers ran; is --baseline the right ledger?")
        base_runs, n_shared = len(base), len(tasks)
        base_shared, cur_shared = ([r for r in rs if r.task in tasks] for rs in (base, runs))
        both = _Both(base_shared, cur_shared, _groups(base_shared), _groups(cur_shared))
        if Rule.MAX_SUCCESS_DROP in given:
            results.append(_compared(Rule.MAX_SUCCESS_DROP, given[Rule.MAX_SUCCESS_DROP], both, _drop))
        if cost:
            if not any(r.cost is not None for r in cur_shared):
                raise UsageError(_no_cost(ledger_dir))
            if not any(r.cost is not None for r in base_shared):
                raise UsageError(_no_cost(baseline))
            results.append(_compared(Rule.MAX_COST_INCREASE, given[Rule.MAX_COST_INCREASE], both, _cost))
    return CheckResult(str(ledger_dir), None if baseline is None else str(baseline), by, success_score, where,
                       len(runs), invalid, base_runs, n_shared, results)


def _validate(given: dict[Rule, float], baseline: object) -> None:
    if not given:
        raise UsageError("give at least one rule: --max-false-claim-rate R, --min-success S, or with --baseline "
                         "LEDGER --max-success-drop D or --max-cost-increase C")
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


def _groups(runs: Iterable[_Run]) -> dict[str, list[_Run]]:
    out: dict[str, list[_Run]] = {}
    for r in runs:
        out.setdefault(r.group, []).append(r)
    return dict(sorted(out.items()))


# The figures of a task's row depend on a few counts only, and most tasks share them (one run each side, passed
# or not): each is computed once per distinct counts, not once per task.
@functools.cache
def _wilson(k: int, n: int) -> stats.Rate:
    return stats.wilson(k, n, CONFIDENCE)


@functools.cache
def _newcombe_table(both: int, only_b: int, only_c: int, neither: int) -> tuple[float, float | None, float | None]:
    return stats.newcombe_table(both, only_b, only_c, neither, CONFIDENCE)


@functools.cache
def _newcombe_unpaired(kb: int, nb: int, kc: int, nc: int) -> tuple[float, float | None, float | None]:
    return stats.newcombe_unpaired(kb, nb, kc, nc, CONFIDENCE)


@functools.cache
def _mcnemar(b: int, c: int) -> float | None:
    return _r(stats.mcnemar_exact(b, c))


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def _rate_rule(rule: Rule, limit: float, runs: list[_Run], groups: dict[str, list[_Run]],
               pick: Callable[[_Run], bool]) -> RuleResult:
    """An absolute rule on a rate: the false-claim rate at most ``limit``, or success at least ``limit``."""
    upper = rule is Rule.MAX_FALSE_CLAIM_RATE
    what = "false-claim rate" if upper else "success"

    def row(scope: str, rs: list[_Run], rule_fails: bool | None) -> Row:
        k, n = sum(1 for r in rs if pick(r)), len(rs)
        rate = _wilson(k, n)
        if not n:
            return Row(scope, False, Finding.NO_DATA, f"no scored runs: the {what} cannot be judged", None, None,
                       None, 0, "wilson", {"k": 0})
        value = k / n
        beyond = value > limit + EPS if upper else value < limit - EPS
        bound = "the limit" if upper else "the minimum"
        text = f"{what} {_pct(value)} ({k} of {_count(n, 'run')}) "
        if not beyond:
            reason, passed = Finding.WITHIN_LIMIT, True
            text += f"{'within' if upper else 'meets'} {bound} {_pct(limit)}"
        else:
            text += f"{'above' if upper else 'below'} {bound} {_pct(limit)}"
            reason, passed = (Finding.OVER_LIMIT, False) if rule_fails in (None, True) else \
                (Finding.OVER_LIMIT_ALONE, True)
            if reason is Finding.OVER_LIMIT_ALONE:
                text += " here alone; the rule holds over all runs"
        return Row(scope, passed, reason, text, value, rate.low, rate.high, n, "wilson", {"k": k})

    overall = row(OVERALL, runs, None)
    return RuleResult(rule, limit, "observed", overall,
                      [row(g, rs, not overall.passed) for g, rs in groups.items()])


#: A comparison of one scope: (figure, low, high, n, method, detail, phrase) from the baseline's and the ledger's
#: runs; the phrase says what happened ("success fell 20.0 pp (80.0% to 60.0%, 10 pairs)").
Measure = Callable[[list[_Run], list[_Run]], tuple[float | None, float | None, float | None, int, str,
                                                    dict[str, Any], str]]


class _Both(NamedTuple):
    """The runs of the tasks both ledgers ran, each side's and by group."""

    base: list[_Run]
    cur: list[_Run]
    base_groups: dict[str, list[_Run]]
    cur_groups: dict[str, list[_Run]]


def _compared(rule: Rule, limit: float, both: _Both, measure: Measure) -> RuleResult:
    """A rule against the baseline: fails when the interval of ``measure`` lies wholly above ``limit``."""
    unit = " pp" if rule is Rule.MAX_SUCCESS_DROP else "%"
    allowed = f"the allowed {100 * limit:.1f}{unit}"

    def row(scope: str, b: list[_Run], c: list[_Run], rule_fails: bool | None) -> Row:
        value, low, high, n, method, detail, text = measure(b, c)
        interval = "" if low is None or high is None else f"its interval [{100 * low:.1f}, {100 * high:.1f}]{unit}"
        if value is None:  # nothing to compare in this group (no run with a cost): nothing against it
            return Row(scope, True, Finding.NO_DATA, text, None, None, None, n, method, detail)
        if value <= limit + EPS:
            reason, passed = Finding.WITHIN_LIMIT, True
            text += f"; within {allowed}"
        elif rule_fails is None:  # the rule's own row: the interval decides
            confirmed = low is not None and low > limit + EPS
            reason, passed = (Finding.CONFIRMED, False) if confirmed else (Finding.WITHIN_NOISE, True)
            text += (f"; {interval} lies wholly above {allowed}" if confirmed else
                     f"; {interval} reaches {allowed}: within noise" if interval else
                     f"; above {allowed}, with too few runs for an interval: within noise")
        else:
            reason, passed = (Finding.OVER_LIMIT, False) if rule_fails else (Finding.OVER_LIMIT_ALONE, True)
            text += f"; above {allowed}" + ("" if rule_fails else " here alone; the rule holds over all tasks")
        return Row(scope, passed, reason, text, value, low, high, n, method, detail)

    overall = row(OVERALL, both.base, both.cur, None)
    bg, cg = both.base_groups, both.cur_groups
    return RuleResult(rule, limit, "interval", overall,
                      [row(g, bg[g], rs, not overall.passed) for g, rs in cg.items() if g in bg])


def _pairs(base: list[_Run], cur: list[_Run]) -> list[tuple[_Run, _Run]] | None:
    """The pairs when every run has exactly one partner of the same task and trial; else None (unpaired)."""
    if len(base) != len(cur):
        return None
    if len(base) == 1:  # a task run once on each side, the usual case of a task's row: no dictionaries
        b, c = base[0], cur[0]
        return [(b, c)] if (b.task, b.trial) == (c.task, c.trial) else None
    keyed: list[dict[tuple[str, int | None], _Run]] = [{}, {}]
    for side, runs in zip(keyed, (base, cur)):
        for r in runs:
            if side.setdefault((r.task, r.trial), r) is not r:
                return None  # two runs of one task and trial: which is whose partner is anyone's guess
    if keyed[0].keys() != keyed[1].keys():
        return None
    return [(keyed[0][k], keyed[1][k]) for k in keyed[0]]


def _drop(base: list[_Run], cur: list[_Run]) -> tuple[float | None, float | None, float | None, int, str,
                                                        dict[str, Any], str]:
    """Success of the baseline minus the ledger's, with Newcombe's interval: paired (and McNemar's exact test)
    when the runs pair up, else of two independent samples."""
    pairs = _pairs(base, cur)
    kb, nb = sum(r.success for r in base), len(base)
    kc, nc = sum(r.success for r in cur), len(cur)
    detail: dict[str, Any] = {"baseline": {"k": kb, "n": nb}, "ledger": {"k": kc, "n": nc}}
    if pairs is not None:
        table = [0, 0, 0, 0]  # pairs that succeeded: on both sides, the baseline's only, the ledger's only, neither
        for b, c in pairs:
            table[(0 if c.success else 1) if b.success else (2 if c.success else 3)] += 1
        both, only_b, only_c, neither = table
        diff, low, high = _newcombe_table(both, only_b, only_c, neither)
        detail.update(pairs=len(pairs), baseline_only=only_b, ledger_only=only_c,
                      mcnemar_p=_mcnemar(only_b, only_c))
        method, n, how = "paired newcombe", len(pairs), _count(len(pairs), "pair")
    else:
        diff, low, high = _newcombe_unpaired(kb, nb, kc, nc)
        method, n, how = "unpaired newcombe", nb + nc, f"unpaired: {nb} and {nc} runs"
    drop = -diff
    verb = "fell" if drop > EPS else "rose" if drop < -EPS else "did not change"
    text = f"success {verb}" + (f" {100 * abs(drop):.1f} pp" if abs(drop) > EPS else "") + \
        f" ({_pct(kb / nb)} to {_pct(kc / nc)}, {how})"
    # the drop's interval is the difference's, turned round
    return drop, None if high is None else -high, None if low is None else -low, n, method, detail, text


def _cost(base: list[_Run], cur: list[_Run]) -> tuple[float | None, float | None, float | None, int, str,
                                                        dict[str, Any], str]:
    """The ledger's mean cost per run over the baseline's, less 1, with a delta-method interval (paired when
    the runs with a cost pair up)."""
    base = [r for r in base if r.cost is not None]
    cur = [r for r in cur if r.cost is not None]
    pairs = _pairs(base, cur)
    if pairs is not None:
        a, b = _costs(p[0] for p in pairs), _costs(p[1] for p in pairs)
        method, n, how = "paired delta (log ratio)", len(pairs), _count(len(pairs), "pair")
    else:
        a, b = _costs(base), _costs(cur)
        method, n, how = "unpaired delta (log ratio)", len(a) + len(b), f"unpaired: {len(a)} and {len(b)} runs"
    ma = sum(a) / len(a) if a else None
    mb = sum(b) / len(b) if b else None
    detail = {"baseline_mean_usd": _r(ma), "ledger_mean_usd": _r(mb), "baseline_runs": len(a), "ledger_runs": len(b)}
    if ma is None or mb is None or ma <= 0:
        return None, None, None, n, method, detail, f"no cost to compare ({how})"
    ratio, low, high = stats.ratio_of_means(a, b, pairs is not None, CONFIDENCE)
    inc = ratio - 1
    text = f"cost per run {'rose' if inc > EPS else 'fell' if inc < -EPS else 'did not change'}" + \
        (f" {100 * abs(inc):.1f}%" if abs(inc) > EPS else "") + f" (${ma:.4f} to ${mb:.4f}, {how})"
    return inc, None if low is None else low - 1, None if high is None else high - 1, n, method, detail, text


def _costs(runs: Iterable[_Run]) -> list[float]:
    return [r.cost for r in runs if r.cost is not None]
