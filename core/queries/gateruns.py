"""The runs a check judges (:mod:`trajcheck.queries.gate`): read from a ledger, grouped, paired with the baseline's, and
the figures of one scope against the baseline (a success drop, a cost increase) with their intervals.

Success is :func:`trajcheck.queries.comparison.outcome_of`'s, false claims the runs column ``false_claim``, cost the
runs
column ``cost_usd``; only scored runs (status ``ok``) are kept, the invalid ones counted.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Callable, Iterable, NamedTuple

from ..store import ledger
from ..base import stats
from .comparison import MISSING, outcome_of
from ..base.errors import UsageError
from .views import group_expr

#: Every interval of the gate: 95%.
CONFIDENCE = 0.95
#: Figures that equal a limit but for the last bits of a subtraction are at the limit, not beyond it.
EPS = 1e-9


def rounded(v: float | None) -> float | None:
    return None if v is None or v != v else round(v, 6)


class RunRow(NamedTuple):  # a tuple, not a dataclass: a check makes 20,000 of these, 3x faster
    task: str  # task_id, or the run_id of a run without one (its own task, as compare pairs it)
    trial: int | None
    group: str
    success: bool
    false_claim: bool
    cost: float | None
    mode: str | None = None  # runs.failure_mode (--max-mode-rate)
    run_id: str = ""  # (--max-judge-false-success: a judge's verdicts are by run)


def load(path: str | os.PathLike[str], by: str, success_score: float, where: str | None,
          cost: bool) -> tuple[list[RunRow], int]:
    """The scored runs of a ledger (and how many are invalid); UsageError for a bad ``by`` or ``where``, or for
    a ledger without ``runs.cost_usd`` when ``cost`` is asked."""
    con = ledger.connect(path)
    try:
        if cost and "cost_usd" not in {d[0] for d in con.execute("select * from runs limit 0").description}:
            raise UsageError(no_cost(path))
        expr = "coalesce(task_id, run_id)" if by == "task_id" else group_expr(by)
        if where:
            ledger.check_where(con, where)
        sql = (f"select coalesce(task_id, run_id), trial, status, eval_final_verdict, verdict_source, "
               f"outcome_score, false_claim, CAST({expr} AS VARCHAR), {'cost_usd' if cost else 'NULL'}, "
               "failure_mode, run_id from runs"
               + (f" where {where}" if where else ""))
        try:
            rows = con.execute(sql).fetchall()
        except Exception as exc:  # noqa: BLE001  (binder error: unknown column)
            raise UsageError(f"--by: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    runs = []
    success: dict[tuple[Any, Any, Any], bool] = {}  # compare's outcome_of, once per distinct verdict and score
    for task, trial, status, verdict, source, score, false_claim, group, usd, mode, rid in rows:
        if status != "ok":
            continue
        ok = success.get((verdict, source, score))
        if ok is None:
            ok = success[verdict, source, score] = outcome_of(
                {"eval_final_verdict": verdict, "verdict_source": source, "outcome_score": score}, success_score)[0]
        runs.append(RunRow(task, trial, MISSING if group is None else group, ok, bool(false_claim),
                         None if usd is None else float(usd), mode, rid))
    return runs, len(rows) - len(runs)


def no_cost(path: str | os.PathLike[str]) -> str:
    return (f"{path}: no cost data in the ledger (runs.cost_usd is missing or empty); --max-cost-increase needs "
            "both ledgers scored from logs that record cost")


def by_group(runs: Iterable[RunRow]) -> dict[str, list[RunRow]]:
    out: dict[str, list[RunRow]] = {}
    for r in runs:
        out.setdefault(r.group, []).append(r)
    return dict(sorted(out.items()))


# The figures of a task's row depend on a few counts only, and most tasks share them (one run each side, passed
# or not): each is computed once per distinct counts, not once per task.
@functools.cache
def wilson(k: int, n: int) -> stats.Rate:
    return stats.wilson(k, n, CONFIDENCE)


@functools.cache
def _newcombe_table(both: int, only_b: int, only_c: int, neither: int) -> tuple[float, float | None, float | None]:
    return stats.newcombe_table(both, only_b, only_c, neither, CONFIDENCE)


@functools.cache
def _newcombe_unpaired(kb: int, nb: int, kc: int, nc: int) -> tuple[float, float | None, float | None]:
    return stats.newcombe_unpaired(kb, nb, kc, nc, CONFIDENCE)


@functools.cache
def _mcnemar(b: int, c: int) -> float | None:
    return rounded(stats.mcnemar_exact(b, c))


def count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


def pct(v: float) -> str:
    return f"{100 * v:.1f}%"


#: A comparison of one scope: (figure, low, high, n, method, detail, phrase) from the baseline's and the ledger's
#: runs; the phrase says what happened ("success fell 20.0 pp (80.0% to 60.0%, 10 pairs)").
Measure = Callable[[list[RunRow], list[RunRow]], tuple[float | None, float | None, float | None, int, str,
                                                    dict[str, Any], str]]


def pair_up(base: list[RunRow], cur: list[RunRow]) -> list[tuple[RunRow, RunRow]] | None:
    """The pairs when every run has exactly one partner of the same task and trial; else None (unpaired)."""
    if len(base) != len(cur):
        return None
    if len(base) == 1:  # a task run once on each side, the usual case of a task's row: no dictionaries
        b, c = base[0], cur[0]
        return [(b, c)] if (b.task, b.trial) == (c.task, c.trial) else None
    keyed: list[dict[tuple[str, int | None], RunRow]] = [{}, {}]
    for side, runs in zip(keyed, (base, cur)):
        for r in runs:
            if side.setdefault((r.task, r.trial), r) is not r:
                return None  # two runs of one task and trial: which is whose partner is anyone's guess
    if keyed[0].keys() != keyed[1].keys():
        return None
    return [(keyed[0][k], keyed[1][k]) for k in keyed[0]]


def success_drop(base: list[RunRow], cur: list[RunRow]) -> tuple[float | None, float | None, float | None, int, str,
                                                        dict[str, Any], str]:
    """Success of the baseline minus the ledger's, with Newcombe's interval: paired (and McNemar's exact test)
    when the runs pair up, else of two independent samples."""
    pairs = pair_up(base, cur)
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
        method, n, how = "paired newcombe", len(pairs), count(len(pairs), "pair")
    else:
        diff, low, high = _newcombe_unpaired(kb, nb, kc, nc)
        method, n, how = "unpaired newcombe", nb + nc, f"unpaired: {nb} and {nc} runs"
    drop = -diff
    verb = "fell" if drop > EPS else "rose" if drop < -EPS else "did not change"
    text = f"success {verb}" + (f" {100 * abs(drop):.1f} pp" if abs(drop) > EPS else "") + \
        f" ({pct(kb / nb)} to {pct(kc / nc)}, {how})"
    # the drop's interval is the difference's, turned round
    return drop, None if high is None else -high, None if low is None else -low, n, method, detail, text


def cost_increase(base: list[RunRow], cur: list[RunRow]) -> tuple[float | None, float | None, float | None, int, str,
                                                        dict[str, Any], str]:
    """The ledger's mean cost per run over the baseline's, less 1, with a delta-method interval (paired when
    the runs with a cost pair up)."""
    base = [r for r in base if r.cost is not None]
    cur = [r for r in cur if r.cost is not None]
    pairs = pair_up(base, cur)
    if pairs is not None:
        a, b = _costs(p[0] for p in pairs), _costs(p[1] for p in pairs)
        method, n, how = "paired delta (log ratio)", len(pairs), count(len(pairs), "pair")
    else:
        a, b = _costs(base), _costs(cur)
        method, n, how = "unpaired delta (log ratio)", len(a) + len(b), f"unpaired: {len(a)} and {len(b)} runs"
    ma = sum(a) / len(a) if a else None
    mb = sum(b) / len(b) if b else None
    detail = {"baseline_mean_usd": rounded(ma), "ledger_mean_usd": rounded(mb), "baseline_runs": len(a),
              "ledger_runs": len(b)}
    if ma is None or mb is None or ma <= 0:
        return None, None, None, n, method, detail, f"no cost to compare ({how})"
    ratio, low, high = stats.ratio_of_means(a, b, pairs is not None, CONFIDENCE)
    inc = ratio - 1
    text = f"cost per run {'rose' if inc > EPS else 'fell' if inc < -EPS else 'did not change'}" + \
        (f" {100 * abs(inc):.1f}%" if abs(inc) > EPS else "") + f" (${ma:.4f} to ${mb:.4f}, {how})"
    return inc, None if low is None else low - 1, None if high is None else high - 1, n, method, detail, text


def _costs(runs: Iterable[RunRow]) -> list[float]:
    return [r.cost for r in runs if r.cost is not None]
