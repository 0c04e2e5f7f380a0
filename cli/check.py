"""trajcheck check: a gate for CI. Exit 0 when every rule holds, 1 when one fails."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ..base.errors import LedgerError, UsageError

from .common import Exit, emit, err, say
from .exits import ExitOutcome, ExitRule, exit_on_error
from .options import CheckFormat, CheckFormatOpt, Format, LedgerArg, SuccessScoreOpt

if TYPE_CHECKING:
    from ..queries.gate import GateResult


def _limit(name: str, metavar: str, text: str, top: int | None = 1) -> typer.models.OptionInfo:
    return typer.Option(name, min=0, max=top, metavar=metavar, help=text, show_default=False)


@exit_on_error(ExitOutcome(Exit.OK, "every rule holds"), ExitOutcome(Exit.FINDINGS, "a rule fails"),
               ExitOutcome(Exit.USAGE, "no rule given, a limit out of range, a baseline rule without --baseline, a "
                       "baseline sharing no task, no cost data, runs scored before failure modes, or a judge rule "
                       "without --labels or of a judge the ledger does not hold"),
               ExitRule(OSError, Exit.INPUT, lambda exc, params: f"cannot write {params['out_file']}: {exc}",
                    means="the --out file cannot be written"), raises=(LedgerError,))
def check(
    ledger_dir: LedgerArg,
    baseline: Annotated[Optional[Path], typer.Option(metavar="OTHER_LEDGER", help="A ledger to compare with (the "
                                                     "last release's): --max-success-drop and --max-cost-increase "
                                                     "judge the tasks both ledgers ran.")] = None,
    max_false_claim_rate: Annotated[Optional[float], _limit(
        "--max-false-claim-rate", "R", "Fail when more than this share of the scored runs claimed a success the "
        "verdict does not give (false_claim), e.g. 0.1.")] = None,
    min_success: Annotated[Optional[float], _limit(
        "--min-success", "S", "Fail when fewer than this share of the scored runs succeed (as `compare` counts "
        "success), e.g. 0.8.")] = None,
    max_success_drop: Annotated[Optional[float], _limit(
        "--max-success-drop", "D", "With --baseline: fail when success fell by more than this (0.05 = 5 points) "
        "beyond doubt: the drop's 95% interval lies wholly above it. A drop within noise passes.")] = None,
    max_cost_increase: Annotated[Optional[float], _limit(
        "--max-cost-increase", "C", "With --baseline: fail when the cost per run (runs.cost_usd) rose by more than "
        "this share (0.2 = +20%) beyond doubt.", None)] = None,
    max_mode_rate: Annotated[Optional[list[str]], typer.Option(
        "--max-mode-rate", metavar="MODE=R", show_default=False,
        help="Fail when more than this share of the scored runs failed in this failure mode (runs.failure_mode, "
             "`trajcheck failures`), e.g. blocked=0.1; repeat for several modes.")] = None,
    max_judge_false_success: Annotated[Optional[list[str]], typer.Option(
        "--max-judge-false-success", metavar="JUDGE=R", show_default=False, rich_help_panel="Judges",
        help="With --labels: fail when this judge (runs.judgments, `score --judgments`) calls more than this share "
             "of the runs the labels fail a success, e.g. lenient=0.1; repeat for several judges.")] = None,
    labels: Annotated[Optional[Path], typer.Option(
        "--labels", rich_help_panel="Judges", help="Labels (JSON {run_id: {...}} or CSV, as `agree` reads them): what "
                         "--max-judge-false-success counts against.")] = None,
    by: Annotated[str, typer.Option("--by", help="One row (and JUnit test case) per value of this runs column "
                                    "or config.KEY.")] = "task_id",
    success_score: SuccessScoreOpt = 1.0,
    where: Annotated[Optional[str], typer.Option(help="SQL condition on `runs` selecting the runs judged, in both "
                                                 "ledgers.")] = None,
    fmt: CheckFormatOpt = CheckFormat.table,
    out_file: Annotated[Optional[Path], typer.Option("--out", "-o", help="Write the json, csv, md or junit output here "
                                                "instead of stdout.")] = None,
) -> None:
    """Gate a build on a ledger: exit 1 when a rule fails.

    The rules: false-claim rate, success, a failure mode's rate and a judge's false-success rate
    (against --labels) against limits, and against a baseline ledger a success drop or cost
    increase that its interval confirms. Prints each rule over all runs and the tasks
    beyond a limit; --format md is a pull-request comment, --format junit one test case per task and
    rule for CI (docs/ci.md).

    Example: trajcheck check ledger/ --baseline baseline-ledger/ --max-false-claim-rate 0.1 --max-success-drop 0.05
    """
    from ..render import gatereport
    from ..commands import check as run_check  # duckdb and scipy: imported only when used

    if out_file is not None and fmt is CheckFormat.table:
        raise UsageError("--out writes --format json, csv, md or junit; the table is for the terminal")
    result = run_check(ledger_dir, baseline, max_false_claim_rate=max_false_claim_rate, min_success=min_success,
                       max_success_drop=max_success_drop, max_cost_increase=max_cost_increase, by=by,
                       success_score=success_score, where=where, max_mode_rate=_mode_limits(max_mode_rate),
                       max_judge_false_success=_limits("--max-judge-false-success", "JUDGE=R, e.g. lenient=0.1",
                                                       max_judge_false_success), labels=labels)
    if fmt is CheckFormat.table:
        _table(result, by)
    else:
        _write(_text(result, fmt), out_file)
    err.print(f"check: {gatereport.summary(result)}", highlight=False, markup=False)
    raise typer.Exit(int(Exit.OK if result.passed else Exit.FINDINGS))


def _mode_limits(given: list[str] | None) -> dict[str, float] | None:
    """``--max-mode-rate MODE=R`` options as limits by mode; UsageError for one that is not MODE=R."""
    return _limits("--max-mode-rate", "MODE=R, e.g. blocked=0.1", given)


def _limits(option: str, shape: str, given: list[str] | None) -> dict[str, float] | None:
    """``NAME=R`` options as limits by name; UsageError for one that is not NAME=R. The name ends at the last
    ``=``: a judge's name may hold one, a limit never does."""
    if not given:
        return None
    limits: dict[str, float] = {}
    for item in given:
        name, sep, value = item.rpartition("=")
        try:
            limits[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise UsageError(f"{option} {item}: give {shape}")
    return limits


def _table(result: "GateResult", by: str) -> None:
    """For people: each rule's row and the task rows beyond a limit, then each rule's verdict in words."""
    from ..render import gatereport

    shown, hidden = gatereport.rows(result, everything=False)
    emit(gatereport.TABLE_COLUMNS, shown, Format.table, title=gatereport.scope_line(result))
    for r in result.rules:
        say(f"{r.name}: {gatereport.verdict(r.overall)}: {r.overall.why}")
    if any(row[2] == gatereport.ALONE for row in shown):
        say(gatereport.ALONE_NOTE)
    if hidden:
        err.print(f"{hidden} {by} rows not shown (within their limits, or past {gatereport.MAX_TASK_ROWS} a rule): "
                  "--format csv or json lists every row", highlight=False)


def _text(result: "GateResult", fmt: CheckFormat) -> str:
    from ..render import gatereport

    if fmt is CheckFormat.json:  # the library's result, as is (a row to a line: gatereport.json_text)
        return gatereport.json_text(result)
    if fmt is CheckFormat.csv:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(gatereport.CSV_COLUMNS)
        w.writerows(["" if v is None else v for v in r] for r in gatereport.csv_rows(result))
        return buf.getvalue()
    return gatereport.markdown(result) if fmt is CheckFormat.md else gatereport.junit(result)


def _write(text: str, path: Path | None) -> None:
    if path is None:
        sys.stdout.write(text)
        return
    from ..base.atomic import atomic_write

    with atomic_write(path, "w", hidden=True) as f:
        f.write(text)
