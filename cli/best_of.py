"""trajcheck best-of: the best rollout of each task, chosen deterministically."""

from __future__ import annotations

from ..base.errors import LedgerError

from .common import emit, print_json
from .exits import exit_on_error
from .options import ByOpt, Format, FormatOpt, LedgerArg


@exit_on_error(raises=(LedgerError,))
def best_of(
    ledger_dir: LedgerArg,
    by: ByOpt = "task_id",
    fmt: FormatOpt = Format.table,
) -> None:
    """Pick the best of several rollouts of each task, and say why.

    The order: verdict (pass > unknown > uncertain > fail), then higher total reward, then fewer
    steps, then run_id.

    Example: trajcheck best-of ledger/ --by task_id
    """
    from ..commands import best_of as choose  # DuckDB loads when the command runs

    group = by or "task_id"
    rows = choose(ledger_dir, group)
    if fmt is Format.json:
        print_json(rows)
        return
    cols = [group, "best_run", "verdict", "source", "reward_total", "steps", "rollouts", "why"]
    emit(cols, [[r[c] for c in cols] for r in rows], fmt, title="best of N")
