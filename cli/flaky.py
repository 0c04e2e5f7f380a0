"""trajcheck flaky: the tasks whose verdict flips between repeats, and the noise floor of each arm."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from ..base.errors import LedgerError

from .common import emit, print_json, say
from .exits import exit_on_error
from .options import ByOpt, Format, FormatOpt, LedgerArg, SuccessScoreOpt

RepeatKeyOpt = Annotated[Optional[str], typer.Option(
    "--repeat-key", metavar="config.KEY", help="The config key that differs between repeats (e.g. config.seed): "
    "runs of a task whose configs differ only in it are repeats. Default: the whole config must be equal.")]


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def arm_rows(data: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    cols = ["arm", "runs", "tasks", "mean repeats", "success", "flip rate", "icc", "design effect", "mdd"]
    rows = [[a["arm"], a["runs"], a["tasks"], "-" if a["mean_repeats"] is None else f"{a['mean_repeats']:.2f}",
             _pct(a["success"]["rate"]),
             f"{_pct(a['flip_rate']['rate'])} ({a['flip_rate']['k']}/{a['flip_rate']['n']})",
             "-" if a["icc"] is None else f"{a['icc']:.3f}", f"{a['design_effect']:.2f}",
             "-" if a["mdd"] is None else f"{100 * a['mdd']:.1f} pp"] for a in data["arms"]]
    return cols, rows


@exit_on_error(raises=(LedgerError,))
def flaky(
    ledger_dir: LedgerArg,
    repeat_key: RepeatKeyOpt = None,
    by: ByOpt = None,
    where: Annotated[Optional[str], typer.Option(help="SQL condition on `runs` selecting the runs.")] = None,
    success_score: SuccessScoreOpt = 1.0,
    fmt: FormatOpt = Format.table,
) -> None:
    """List the tasks whose verdict flips between repeated runs, with their runs, and each arm's noise floor.

    Runs of the same task under the same config are repeats. Per arm: the flip rate (Wilson), the
    intraclass correlation of verdicts within tasks, its design effect and the minimum detectable
    difference at these runs (alpha 0.05, power 0.8; docs/analysis.md).

    Example: trajcheck flaky ledger/ --repeat-key config.seed --by config.perceptual_verifier
    """
    from ..commands import flaky as run_flaky  # DuckDB loads when the command runs

    data = run_flaky(ledger_dir, repeat_key, by, where=where, success_score=success_score).to_json()
    if fmt is Format.json:
        print_json(data)
        return
    flips = [t for t in data["tasks"] if t["flips"]]
    k = data["k"]
    cols = ["task", "config", "arm", "repeats", "passed", "pass rate", f"pass@{k}", f"pass^{k}", "runs"]
    rows = [[t["task_id"], t["config"] or ("" if fmt is Format.csv else "-"), t["arm"], t["repeats"], t["passed"],
             t["pass_rate"] if fmt is Format.csv else _pct(t["pass_rate"]), t["pass_at_k"], t["pass_hat_k"],
             " ".join(f"{r['run_id']}:{r['verdict']}" for r in t["runs"])] for t in flips]
    if fmt is Format.csv:  # the flipping tasks, plain values
        emit(["task_id", "config", "arm", "repeats", "passed", "pass_rate", "k", "pass_at_k", "pass_hat_k", "runs"],
             [[*r[:6], k, *r[6:]] for r in rows], fmt)
        return
    emit(*arm_rows(data), fmt, title="repeat noise per arm (mdd: minimum detectable difference, alpha 0.05, "
         "power 0.8)")
    if rows:
        emit(cols, rows, fmt, title=f"{len(rows)} flipping tasks of {len(data['tasks'])}")
    else:
        say(f"no task flips: 0 of {len(data['tasks'])} tasks"
            + ("" if any(t["repeats"] > 1 for t in data["tasks"]) else " (no task has 2 repeats)"))
