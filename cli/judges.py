"""trajcheck judges: every judge checked against the evidence (and labels, where given)."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ..base.errors import LedgerError
from ..render import markdown

from .common import Exit, emit, err, literal, print_json
from .exits import ExitOutcome, exit_on_error
from .options import Format, LedgerArg, _format_option


class JudgesFormat(str, enum.Enum):
    """`judges` also prints Markdown, for a pull request or a notebook."""

    table = "table"
    json = "json"
    csv = "csv"
    md = "md"


JudgesFormatOpt = Annotated[JudgesFormat, _format_option(JudgesFormat)]

#: The judges table's columns, as table, CSV and Markdown show them.
JUDGE_COLUMNS = ["judge", "judged", "passes", "fails", "conflicts", "contradicted_failures", "precision", "recall",
                 "false_success", "false_failure", "flip_rate", "cost_per_run", "tokens_per_run"]
CONFLICT_COLUMNS = ["judge", "run_id", "said", "kind", "step", "action", "evidence", "frame"]


def _pct(r: dict[str, Any] | None) -> str:
    if not r or not r["n"]:
        return "-"
    return f"{100 * r['rate']:.1f}% [{100 * r['low']:.1f}, {100 * r['high']:.1f}] ({r['k']}/{r['n']})"


def _label(j: dict[str, Any], key: str) -> dict[str, Any] | None:
    return j["labels"][key] if j["labels"] else None


def judge_rows(data: dict[str, Any], plain: bool) -> list[list[Any]]:
    """One row per judge: rates as text (``plain`` False) or as their fractions (CSV)."""
    show = (lambda r: None if not r or not r["n"] else r["rate"]) if plain else _pct
    return [[j["judge"], j["judged"], j["passes"], j["fails"], j["conflicts"], j["contradicted_failures"],
             show(_label(j, "precision")), show(_label(j, "recall")), show(_label(j, "false_success")),
             show(_label(j, "false_failure")), show(j["flip"]), j["cost_per_run"], j["tokens_per_run"]]
            for j in data["judges"]]


def conflict_rows(items: list[dict[str, Any]]) -> list[list[Any]]:
    return [[c["judge"], c["run_id"], c["said"], c["kind"], c["step"], c["action"], c["evidence"], c["frame"]]
            for c in items]


def to_markdown(data: dict[str, Any]) -> str:
    out = [f"## Judges of {data['runs']} runs\n", markdown.table(JUDGE_COLUMNS, judge_rows(data, plain=False))]
    out += ["\n## Successes the evidence contradicts\n",
            markdown.table(CONFLICT_COLUMNS, conflict_rows(data["conflicts"]))]
    if data["contradicted_failures"]:
        out += ["\n## Failures the evidence contradicts\n",
                markdown.table(CONFLICT_COLUMNS, conflict_rows(data["contradicted_failures"]))]
    return "".join(out)


@exit_on_error(ExitOutcome(Exit.USAGE, "no judgments, a --judgments path that cannot be read or matches no run, "
                                   "or labels that cannot be read"), raises=(LedgerError,))
def judges(
    ledger_dir: LedgerArg,
    judgments: Annotated[Optional[list[Path]], typer.Option(
        "--judgments", help="A judge's file or folder, in its own format (repeatable; docs/judges.md): matched "
                            "to the ledger's runs by run id, folder or task id.")] = None,
    labels: Annotated[Optional[Path], typer.Option("--labels", help="Labels: JSON {run_id: {...}} or CSV.")] = None,
    max_false_success: Annotated[Optional[float], typer.Option(
        "--max-false-success", min=0.0, max=1.0,
        help="Name the cheapest judge whose false-success rate (against --labels) is at most this.")] = None,
    fmt: JudgesFormatOpt = JudgesFormat.table,
) -> None:
    """Check every judge against the evidence.

    The judges: those of `score --judgments` and those given here with --judgments. Per judge:
    coverage, conflicts, flip rate and cost per run; with --labels, precision, recall and the
    false-success and false-failure rates with Wilson intervals. Then Cohen's kappa between
    judges, and each run a judge calls a success while the evidence shows it failed (no answer,
    a dead decisive action, a blocking page, a failed contract check, an admitted failure,
    missing text), with the step and evidence; and each failure a contract or the evaluator
    contradicts.

    Example: trajcheck judges ledger/ --judgments judgments/webarena/AGENT/JUDGE --labels labels.json
    """
    from ..commands import judges as run_judges

    data = run_judges(ledger_dir, list(judgments or []), labels, max_false_success)
    if fmt is JudgesFormat.json:
        print_json(data)
        return
    if fmt is JudgesFormat.md:
        sys.stdout.write(to_markdown(data))
        return
    if fmt is JudgesFormat.csv:  # the judges, their rates as fractions; the conflicts are in json and md
        emit(JUDGE_COLUMNS, judge_rows(data, plain=True), Format.csv)
        return
    emit(JUDGE_COLUMNS[:6] + ["precision", "recall", "false success", "false failure", "flips", "cost/run",
                              "tokens/run"], judge_rows(data, plain=False), Format.table,
         title=f"judges of {data['runs']} runs")
    if data["kappa"]:
        emit(["a", "b", "items", "kappa"], [[k["a"], k["b"], k["items"], k["kappa"]] for k in data["kappa"]],
             Format.table, title="Cohen's kappa between judges")
    emit(CONFLICT_COLUMNS, conflict_rows(data["conflicts"]), Format.table,
         title="successes the evidence contradicts")
    if data["contradicted_failures"]:
        emit(CONFLICT_COLUMNS, conflict_rows(data["contradicted_failures"]), Format.table,
             title="failures the evidence contradicts")
    if data["cheapest"] is not None:
        c = data["cheapest"]
        err.print(literal(f"cheapest judge with false success <= {c['max_false_success']}: "
                          + (f"{c['judge']} ({c['cost_per_run']} USD per run)" if c["judge"] else "none")),
                  highlight=False)
    for s in data["sources"]:
        m = s["matching"]
        err.print(literal(f"{s['path']}: {m['matched']} judgments matched (run_id {m['by']['run_id']}, path "
                          f"{m['by']['path']}, task_id {m['by']['task_id']}), {m['unmatched']} matched no run"),
                  highlight=False)
