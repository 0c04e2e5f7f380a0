"""trajcheck agree: how well each verdict source agrees with expert labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..base.errors import LedgerError

from .common import Exit, emit, err, print_json, say
from .compare import pct
from .exits import ExitOutcome, exit_on_error
from .options import Format, FormatOpt, LedgerArg


@exit_on_error(ExitOutcome(Exit.USAGE, "the labels cannot be read"), raises=(LedgerError,))
def agree(
    ledger_dir: LedgerArg,
    labels: Annotated[Path, typer.Option("--labels", help="Labels: JSON {run_id: {...}} or CSV.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Check every verdict source against expert labels.

    The sources: contract, judge, evaluator, evidence, final verdict, self-report and the per-step
    verifier. For each: precision, recall, F1, NPV and TNR with Wilson intervals; then the
    contract-vs-judge confusion, Cohen's kappa, pass@k, pass^k and flaky tasks.

    Each judge given with `score --judgments` is checked too, against the labels, the contracts
    and the evaluators.

    Example: trajcheck agree ledger/ --labels sample_runs/labels.json
    """
    from ..commands import agree as run_agree  # scipy.stats: imported only when used

    data = run_agree(ledger_dir, labels)
    if fmt is Format.json:
        print_json(data)
        return
    if fmt is Format.csv:  # numbers, not what the table shows: a rate, its interval and its counts
        emit(CSV_COLUMNS, [_csv_row(s) for s in data["sources"]], fmt)
        _warn_unmatched(data)
        return
    cols = ["source", "level", "covered", "precision", "recall", "f1", "npv", "tnr"]
    rows = [[s["source"], s["level"], f"{s['covered']}/{s['labelled']}", pct(s["precision"]), pct(s["recall"]),
             "-" if s["f1"] is None else f"{s['f1']:.3f}", pct(s["npv"]), pct(s["tnr"])] for s in data["sources"]]
    from ..base.verdicts import Coverage

    # first: how many runs any source decided at all
    say(Coverage.from_json(data["verdicts"]).text())
    emit(cols, rows, fmt, title=f"agreement with {data['matched_runs']} labelled runs")
    if data["judges"]:
        emit(["judge", "against", "covered", "precision", "recall", "f1"],
             [[j["judge"], j["against"], f"{j['covered']}/{j['labelled']}", pct(j["precision"]), pct(j["recall"]),
               "-" if j["f1"] is None else f"{j['f1']:.3f}"] for j in data["judges"]], fmt,
             title="judges of score --judgments")
    judges = sorted({j for v in data["contract_vs_judge"].values() for j in v})
    if set(judges) - {"none"}:  # no judge ever decided: the table would count nothing against contracts
        emit(["contract \\ judge", *judges], [[k, *[v.get(j, 0) for j in judges]]
                                              for k, v in data["contract_vs_judge"].items()], fmt,
             title="contract vs judge")
    if data["kappa"]:
        emit(["a", "b", "items", "kappa"], [[k["a"], k["b"], k["items"], k["kappa"]] for k in data["kappa"]], fmt,
             title="Cohen's kappa")
    t = data["trials"]
    if t["k"] > 1:
        k = t["k"]
        emit(["task", "trials", "passed", "pass@1", f"pass@{k}", f"pass^{k}", "flaky"],
             [[r["task_id"], r["trials"], r["passed"], r["pass@1"], r[f"pass@{k}"], r[f"pass^{k}"], r["flaky"]]
              for r in t["tasks"]], fmt, title="repeated trials")
    _warn_unmatched(data)


#: The CSV of ``agree``: per source, its counts and each rate with its 95% interval (fractions, blank when
#: undefined) and the counts it is made of.
_RATES = ("precision", "recall", "npv", "tnr")
CSV_COLUMNS = ["source", "level", "labelled", "covered", "tp", "fp", "tn", "fn", "f1",
               *[f"{r}_{part}" for r in _RATES for part in ("rate", "low", "high", "k", "n")]]


def _csv_row(s: dict[str, Any]) -> list[Any]:
    row = [s["source"], s["level"], s["labelled"], s["covered"], s["tp"], s["fp"], s["tn"], s["fn"], s["f1"]]
    for r in _RATES:
        rate = s[r] or {}
        row += [rate.get(part) for part in ("rate", "low", "high", "k", "n")]
    return row


def _warn_unmatched(data: dict[str, Any]) -> None:
    """On stderr (stdout is the table or the CSV): labelled runs the ledger does not have."""
    if data["unmatched_labels"]:
        err.print(f"{len(data['unmatched_labels'])} labelled runs are not in the ledger", highlight=False)
