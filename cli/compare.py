"""trajcheck compare: did the verifier help, by how much, with what confidence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from ..base.errors import LedgerError

from .common import emit, err, print_json
from .exits import exit_on_error
from .options import ByOpt, Format, FormatOpt, SuccessScoreOpt
from ..base.words import count


def pct(rate: dict[str, Any]) -> str:
    """A rate as a percentage with its interval: '66.7% [35.4, 87.9] (4/6)'."""
    if not rate["n"]:
        return "-"
    return f"{100 * rate['rate']:.1f}% [{100 * rate['low']:.1f}, {100 * rate['high']:.1f}] ({rate['k']}/{rate['n']})"


def num(v: float | None, fmt: str = ".2f") -> str:
    return "-" if v is None else format(v, fmt)


def arm_rows(c: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    cols = ["arm", "runs", "tasks", "success", "uncertain", "unknown", "false_claim", "by_evidence",
            "steps_to_done", "no_effect/run", "loops/run", "mean_reward", "steps_returning", "stalled_from",
            "no_net_progress", "verdicts", "warnings", "recovered_after_warning", "false_warnings",
            "controllable_failures", "uncontrollable_failures", "controllable_vs_baseline", "process_score",
            "process_vs_baseline"]
    rows = [[a["arm"], a["runs"], a["tasks"], pct(a["success"]), pct(a["uncertain"]), pct(a["unknown"]),
             pct(a["false_claim"]), a["verdict_from_evidence"], num(a["mean_steps_to_done"], ".1f"),
             num(a["no_effect_per_run"]), num(a["loops_per_run"]), num(a["mean_reward"]),
             "-" if a["steps_returning"] is None else f"{100 * a['steps_returning']:.1f}%",
             num(a["mean_stalled_from_step"], ".1f"), pct(a["no_net_progress"]) if a["no_net_progress"] else "-",
             _verdicts(a["verdicts"]), *_warnings(a["warnings"]), *_control(a)]
            for a in c["arms"]]
    spend_cols = _spend_columns(c["arms"])
    cols += [name for name, _ in spend_cols]
    for row, a in zip(rows, c["arms"]):
        row += [text(a["spend"]) if a["spend"] else "-" for _, text in spend_cols]
    return cols, rows


def _warnings(w: dict[str, Any] | None) -> list[Any]:
    """An arm's warnings in three cells: how many, the recovery rate after one, the share of false ones."""
    if not w:
        return ["-", "-", "-"]
    return [w["count"], pct(w["recovered"]), pct(w["false"])]


def _control(a: dict[str, Any]) -> list[Any]:
    """An arm's controllable failures (the uncontrollable ones out of both sides), how many were uncontrollable,
    the difference from the baseline arm, and its mean process score and its difference (docs/failures.md)."""
    if "controllable_failures" not in a:
        return ["-"] * 5
    d = a["controllable_vs_baseline"]
    diff = "-" if d is None or d["difference"] is None else f"{100 * d['difference']:+.1f} pp" + (
        "" if d["low"] is None else f" [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}]")
    proc = a["process_score"]
    mean = "-" if not proc else f"{proc['mean']:.2f}" + (
        "" if proc["low"] is None else f" [{proc['low']:.2f}, {proc['high']:.2f}]") + f" (n={proc['n']})"
    return [pct(a["controllable_failures"]), a["uncontrollable_failures"], diff, mean,
            "-" if a["process_vs_baseline"] is None else f"{a['process_vs_baseline']:+.2f}"]


def warning_rows(c: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """What followed the warnings, per arm: one column per follow-up, and whether the agent was shown them."""
    arms = [a for a in c["arms"] if a["warnings"] and a["warnings"]["count"]]
    if not arms:
        return [], []
    kinds = list(arms[0]["warnings"]["followups"])
    cols = ["arm", "warnings", "shown", "not shown", *[k.replace("_", " ") for k in kinds]]
    rows = [[a["arm"], a["warnings"]["count"], a["warnings"]["shown"]["shown"], a["warnings"]["shown"]["not_shown"],
             *[a["warnings"]["followups"][k] for k in kinds]] for a in arms]
    return cols, rows


def _mean(m: dict[str, Any] | None, fmt: Callable[[float], str]) -> str:
    """A mean with its t interval: '$0.0320 [0.0210, 0.0430] (n=6)'."""
    if not m:
        return "-"
    ci = f" [{fmt(m['low']).lstrip('$')}, {fmt(m['high']).lstrip('$')}]" if m["low"] is not None else ""
    return f"{fmt(m['mean'])}{ci} (n={m['n']})"


def _share(part: float | None, total: float | None) -> str:
    from ..queries.tables import money

    return "-" if part is None else money(part) + (f" ({100 * part / total:.0f}%)" if total else "")


def _spend_columns(arms: list[dict[str, Any]]) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    """The spend rows of the arms table: those whose figures the ledger has (none without cost or time)."""
    from ..queries.tables import money  # with the comparison's modules, which the command has loaded

    cost = any(a["spend"] and a["spend"]["runs_with_cost"] for a in arms)
    seconds = any(a["spend"] and a["spend"]["runs_with_seconds"] for a in arms)
    if not (cost or seconds):
        return []
    out: list[tuple[str, Callable[[dict[str, Any]], str]]] = []
    if cost:
        out += [("cost/run", lambda s: _mean(s["cost_per_run"], money)),
                ("cost/success", lambda s: money(s["cost_per_success"]))]
    out.append(("steps/success", lambda s: num(s["steps_per_success"], ".1f")))
    if seconds:
        out.append(("seconds/run", lambda s: _mean(s["seconds_per_run"], lambda v: f"{v:.1f}")))
    if cost:
        out += [("cost_no_effect_steps", lambda s: _share(s["cost_no_effect_steps"], s["cost_total"])),
                ("cost_false_claims", lambda s: _share(s["cost_false_claims"], s["cost_total"]))]
    return out


def _verdicts(v: dict[str, Any] | None) -> str:
    """An arm's verdict coverage in a cell: '12/14: contract 11, evidence 1'."""
    if not v:
        return "-"
    sources = ", ".join(f"{s.replace('_', ' ')} {n}" for s, n in v["by_source"].items())
    return f"{v['with_verdict']}/{v['runs']}" + (f": {sources}" if sources else "")


def pair_rows(c: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    cols = ["baseline", "arm", "pairs", "difference", "95% CI", "ci_method", "only_baseline", "only_arm",
            "mcnemar_p", "wins/losses/ties", "noise floor"]
    rows = []
    for p in c["paired"]:
        ci = "-" if p["low"] is None else f"[{100 * p['low']:+.1f}, {100 * p['high']:+.1f}] pp"
        rows.append([p["baseline"], p["arm"], p["pairs"],
                     "-" if p["difference"] is None else f"{100 * p['difference']:+.1f} pp", ci, p["ci_method"] or "-",
                     p["baseline_only"], p["arm_only"], num(p["mcnemar_p"], ".4f"),
                     f"{p['task_wins']}/{p['task_losses']}/{p['task_ties']}", noise_text(p["noise_floor"])])
    return cols, rows


def csv_records(data: dict[str, Any]) -> list[dict[str, Any]]:
    """compare's CSV records: each arm's figures, then its paired difference against the baseline with the noise
    floor (``paired_noise_floor_mdd``, ``_verdict``, ``_repeats_per_task``...; empty for the baseline and an arm
    that does not pair). The ICC and design effect of each variance component are a column each (``_icc_1``...),
    so every cell is a plain value."""
    paired = {p["arm"]: p for p in data["paired"]}
    out = []
    for a in data["arms"]:
        p = dict(paired.get(a["arm"]) or {})
        if p.get("noise_floor"):
            p["noise_floor"] = {k: ({str(i): x for i, x in enumerate(v, 1)} if isinstance(v, list) else v)
                                for k, v in p["noise_floor"].items()}
        out.append({**a, "paired": p or {"baseline": None}})
    return out


def noise_text(n: dict[str, Any] | None) -> str:
    """Whether a difference clears the noise floor: 'significant (MDD 12.3 pp)', 'inconclusive (MDD 30.1 pp;
    4 more repeats per task)'."""
    if not n:
        return "-"
    mdd = "no variation" if n["mdd"] is None else f"MDD {100 * n['mdd']:.1f} pp"
    if n["verdict"] == "significant":
        return f"significant ({mdd})"
    more = {"no_difference": "no difference to detect", "no_variation": "no variation to measure noise by",
            "needs_more_tasks": "repeats alone cannot: more tasks"}.get(n["reason"] or "",
                                                                        _more(n['more_repeats_per_task']))
    return f"inconclusive ({mdd}; {more})"


def _not_judged(data: dict[str, Any], judge: str) -> None:
    """--outcome judge:NAME: the runs the judge did not judge, left out, said per arm (on stderr)."""
    left = data["runs_not_judged"]
    for arm in sorted({a["arm"] for a in data["arms"]} | set(left)):
        err.print(f"{arm}: {count(left.get(arm, 0), 'run')} not judged by {judge}, left out", highlight=False,
                  markup=False)


def _more(k: int) -> str:
    return f"{k} more repeat{'' if k == 1 else 's'} per task"


def _denominators(data: dict[str, Any]) -> None:
    """score --expect: each arm's denominator, the runs without a log that are in no arm (once), and what success is
    over; and the runs no arm holds. On stderr."""
    for d in data.get("expected") or []:
        err.print(f"{d['group']}: {d['text']}", highlight=False, markup=False)
    n = data.get("runs_without_log") or 0
    if n:
        err.print(f"{count(n, 'run')} without a log (task unknown, no value of {data['by']}): in no arm's "
                  "expected runs", highlight=False, markup=False)
    if data.get("rates_over"):
        err.print(f"success: {data['rates_over']}", highlight=False, markup=False)
    if data["runs_without_value"]:
        n = data["runs_without_value"]
        err.print(f"{count(n, 'run')} {'has' if n == 1 else 'have'} no value of {data['by']} and "
                  f"{'is' if n == 1 else 'are'} not compared "
                  "(--include-missing makes them an arm)", highlight=False)


@exit_on_error(raises=(LedgerError,))
def compare(
    ledgers: Annotated[list[Path], typer.Argument(metavar="LEDGER [LEDGER_B]", help="One ledger (with --by) or "
                                                  "two ledgers to compare as two arms.")],
    by: ByOpt = None,
    success_score: SuccessScoreOpt = 1.0,
    baseline: Annotated[Optional[str], typer.Option(help="The arm the others are paired against, as shown in the "
                                                    "arms table (e.g. false); default: the first by name.")] = None,
    where: Annotated[Optional[str], typer.Option(help="SQL condition on `runs` selecting the runs to compare, "
                                                 "e.g. \"source_format = 'trajcheck.run/1'\".")] = None,
    include_missing: Annotated[bool, typer.Option("--include-missing", help="Make the runs without a value of --by "
                                                  "an arm of their own, (null); by default they are only "
                                                  "counted.")] = False,
    missing: Annotated[Optional[str], typer.Option(
        metavar="fail|skip", help="With the expected runs (score --expect): fail (the default) counts each missing "
        "or unreadable run as a failure, so success is over the expected runs; skip leaves them out.")] = None,
    damaged: Annotated[str, typer.Option(help="With the expected runs: keep counts the damaged runs, exclude "
                                         "leaves them out of success.")] = "keep",
    outcome: Annotated[str, typer.Option(metavar="verdict|judge:NAME", help="What success is: the final verdict "
                                         "(default), or one judge's verdicts (runs.judgments, `score --judgments`): "
                                         "the runs it did not judge are left out and counted.")] = "verdict",
    fmt: FormatOpt = Format.table,
) -> None:
    """Compare ablation arms: success, the paired difference and what the verifier-off arm missed.

    Success with 95% Wilson intervals, the paired difference with an interval that holds for its
    number of pairs (Newcombe's score interval below 30 pairs, a seeded percentile bootstrap from
    30), the exact McNemar test, per-task wins, and what the verifier-off arm missed. Per arm, the
    verifier's warnings: what followed them, the recovery rate after a warning and the share of
    false warnings (Wilson intervals over warnings). Per arm, the controllable failure rate (failures
    the agent could not have avoided out of both sides, as `failures` counts them) with its
    difference from the baseline, and the mean process score. Runs without a value of --by are
    counted apart, not an arm.

    Example: trajcheck compare ledger/ --by config.perceptual_verifier --baseline false
    """
    from ..commands import compare as run_compare  # scipy.stats: imported only when used

    # a new list typed as compare() takes it (a list[Path] is not a list[str | PathLike]: lists are invariant)
    data = run_compare(list(ledgers), by, success_score, baseline=baseline, where=where,
                       include_missing=include_missing, missing=missing, damaged=damaged, outcome=outcome).to_json()
    if fmt is Format.json:
        print_json(data)
        return
    if fmt is Format.csv:  # numbers, not what the table shows: each nested figure a column of its own
        from ..queries.tables import flat_rows

        emit(*flat_rows(csv_records(data)), fmt)
        return
    cols, rows = arm_rows(data)
    judge = data["outcome"][len("judge:"):] if data.get("outcome") else None
    over = f"the runs {judge} judged (success: its verdict pass)" if judge else \
        f"all runs (success: verdict pass, else score >= {success_score:g})"
    # metrics down, arms across: readable in 80 columns for the usual two arms
    emit([data["by"], *[str(r[0]) for r in rows]], [[c, *[r[i] for r in rows]] for i, c in enumerate(cols) if i],
         fmt, title=f"arms, unpaired: {data['rates_over'] if data.get('rates_over') else 'rates over ' + over}")
    if judge is not None:
        _not_judged(data, judge)
    _denominators(data)
    wc, wr = warning_rows(data)
    if wr:
        emit(wc, wr, fmt, title="after a warning (trajcheck's rule): what the agent did next")
    if data["paired"]:
        pc, pr = pair_rows(data)
        emit(pc, pr, fmt, title="paired by task_id and trial: the difference over the pairs only")
    if data["failure_modes"]:
        from .failures import mode_change_rows

        emit(*mode_change_rows(data["failure_modes"]), fmt,
             title="failure modes whose rate changed: rates over all runs, difference over pairs")
    if data["counterfactual"]:
        emit(["arm", "runs recorded verifier-off", "unwarned no-effect steps", "runs with them", "their verdicts"],
             [[c["arm"], c["runs_recorded_verifier_off"], c["unwarned_no_effect_steps"],
               c["runs_with_unwarned_steps"], json.dumps(c["their_verdicts"])] for c in data["counterfactual"]],
             fmt, title="counterfactual: what the verifier would have flagged")
