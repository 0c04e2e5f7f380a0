"""trajcheck failures: where runs fail, per arm, from the evidence each failure mode rests on."""

from __future__ import annotations

import csv
import io
import json
import sys
from typing import Annotated, Any, Optional

import typer

from ..base.errors import LedgerError
from ..render import markdown

from .common import emit, print_json
from .exits import exit_on_error
from .options import FailuresFormat, FailuresFormatOpt, Format, LedgerArg
from ..base.words import count



_COLUMNS = ["arm", "mode", "runs", "controllable", "share_of_failures", "share_low", "share_high", "rate_of_runs",
            "rate_low", "rate_high", "top_detail", "example_run", "example_step", "example_check", "example_evidence"]


def _pct(r: dict[str, Any]) -> str:
    if not r["n"]:
        return "-"
    return f"{100 * r['rate']:.1f}% [{100 * r['low']:.1f}, {100 * r['high']:.1f}] ({r['k']}/{r['n']})"


def _raw_evidence(ex: dict[str, Any]) -> Any:
    """The example's evidence whole: a failed contract check's evidence as JSON, else the ledger's text."""
    check = ex.get("check")
    return ex["evidence"] if check is None else json.dumps(check["evidence"], sort_keys=True, ensure_ascii=False)


def mode_rows(data: dict[str, Any], sentences: bool = False) -> list[list[Any]]:
    """One row per arm and mode, as csv and md print them (rates as fractions, 6 decimals at most): the
    example's evidence raw and whole (csv), or as a sentence (``sentences``: md, for people)."""
    from ..render.evidencetext import failure_sentence

    rows = []
    for a in data["arms"]:
        for m in a["modes"]:
            ex, sh, rt = m["example"], m["share"], m["rate"]
            check = ex.get("check")
            rows.append([a["arm"], m["mode"], m["count"], m["controllable"], sh["rate"], sh["low"], sh["high"],
                         rt["rate"], rt["low"], rt["high"], m["details"][0]["detail"] if m["details"] else None,
                         ex["run_id"], ex["step"],
                         None if check is None else check["name"],
                         failure_sentence(ex["evidence"], check) if sentences else _raw_evidence(ex)])
    return rows


def control_rows(data: dict[str, Any]) -> list[list[Any]]:
    """Per arm: its controllable failure rate (uncontrollable failures count neither way) and its uncontrollable
    failures."""
    return [[a["arm"], _pct(a["controllable"]), a["uncontrollable"]] for a in data["arms"]]


CONTROL_COLUMNS = ["arm", "controllable failure rate", "uncontrollable failures"]


def to_markdown(data: dict[str, Any]) -> str:
    """The failure modes as Markdown: the modes table, each arm's controllable failure rate, then each arm's error
    texts and blocking pages."""
    out = [f"## {title(data['by']).capitalize()}\n", markdown.table(_COLUMNS, mode_rows(data, sentences=True)),
           "\n### Controllable failures\n", markdown.table(CONTROL_COLUMNS, control_rows(data))]
    for a in data["arms"]:
        if a["errors"]:
            out += [f"\n### {markdown.cell(a['arm'])}: error texts\n", markdown.table(
                ["error", "runs"], [[e["text"], e["count"]] for e in a["errors"]])]
        if a["blocking_pages"]:
            out += [f"\n### {markdown.cell(a['arm'])}: blocking pages\n", markdown.table(
                ["page", "runs"], [[p["page"], p["count"]] for p in a["blocking_pages"]])]
    return "".join(out)


def to_csv(data: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(_COLUMNS)
    for r in mode_rows(data):
        w.writerow(["" if v is None else v for v in r])
    return buf.getvalue()


def not_passed(a: dict[str, Any]) -> str:
    """An arm's runs that did not pass, of all its runs, each kind counted: 'not passed 14/28 (failed 12,
    uncertain 1, unknown-while-claiming 1)'."""
    v = a["not_passed"]
    return (f"not passed {a['failed']}/{a['runs']} (failed {v['fail']}, uncertain {v['uncertain']}, "
            f"unknown-while-claiming {v['unknown']})")


def title(by: str | None) -> str:
    """The title of the modes table: per arm of ``by``, or over all runs as one arm."""
    return f"failure modes by {by}" if by else "failure modes over all runs"


def _tables(data: dict[str, Any]) -> None:
    """The rich tables: the modes per arm, then the error texts and blocking pages."""
    from ..render.evidencetext import failure_sentence

    rows = [[a["arm"], not_passed(a), m["mode"], _pct(m["share"]), _pct(m["rate"]),
             ", ".join(f"{d['detail']} {d['count']}" for d in m["details"][:3]),
             f"{m['example']['run_id']}@{m['example']['step']}" if m["example"]["step"] is not None
             else m["example"]["run_id"], failure_sentence(m["example"]["evidence"], m["example"].get("check"))]
            for a in data["arms"] for m in a["modes"]]
    rows += [[a["arm"], not_passed(a), "-", "-", "-", "", "", ""] for a in data["arms"]
             if not a["modes"]]  # an arm where every run passed: said, not left out
    emit(["arm", "runs", "mode", "share_of_failures", "rate_of_runs", "details", "example", "evidence"], rows,
         Format.table, title=title(data["by"]))
    emit(CONTROL_COLUMNS, control_rows(data), Format.table,
         title="controllable failures (uncontrollable ones count neither way)")
    errs = [[a["arm"], e["text"], e["count"]] for a in data["arms"] for e in a["errors"]]
    if errs:
        emit(["arm", "error text", "runs"], errs, Format.table, title="most frequent error texts")
    pages = [[a["arm"], p["page"], p["count"]] for a in data["arms"] for p in a["blocking_pages"]]
    if pages:
        emit(["arm", "blocking page", "runs"], pages, Format.table, title="pages that blocked")


@exit_on_error(raises=(LedgerError,))
def failures(
    ledger_dir: LedgerArg,
    by: Annotated[Optional[str], typer.Option("--by", help="The arms: a runs column or config.KEY (e.g. "
                                              "config.perceptual_verifier); all runs as one arm without it.")] = None,
    where: Annotated[Optional[str], typer.Option(help="SQL condition on `runs` selecting the runs counted, e.g. "
                                                 "\"task_id like 'shop-%'\".")] = None,
    fmt: FailuresFormatOpt = FailuresFormat.table,
) -> None:
    """Show where runs fail: the failure mode of each run that did not pass, counted per arm.

    A mode is the decisive cause a run's evidence shows (blocked, app_said_no, dead_action, looped, no_answer,
    gave_up, wrong_result, not_determined: the first that holds, docs/failures.md). Per arm: each mode's
    runs, its share of the failing runs and its rate over all runs (95% Wilson intervals), an example run with
    its evidence, the most frequent error texts and the pages that blocked. The same ledger always prints the
    same bytes.

    Example: trajcheck failures ledger/ --by config.perceptual_verifier
    """
    from ..commands import failures as run

    data = run(ledger_dir, by, where=where).to_json()
    if data["runs_scored_before_failure_modes"]:
        from .common import err

        n = data["runs_scored_before_failure_modes"]
        err.print(f"{count(n, 'run')} that did not pass {'was' if n == 1 else 'were'} scored before failure modes "
                  "existed and have none: `trajcheck score` them again", highlight=False)
    if fmt is FailuresFormat.json:
        print_json(data)
    elif fmt is FailuresFormat.csv:
        sys.stdout.write(to_csv(data))
    elif fmt is FailuresFormat.md:
        sys.stdout.write(to_markdown(data))
    else:
        _tables(data)


def mode_change_rows(changes: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """`compare`'s table of the failure modes whose rate moved between the baseline and an arm."""
    def rate(r: dict[str, Any]) -> str:
        return f"{100 * r['rate']:.1f}% ({r['k']}/{r['n']})" if r["n"] else "-"

    cols = ["mode", "baseline", "arm", "baseline_rate", "arm_rate", "difference", "95% CI", "pairs", "mcnemar_p"]
    rows = [[c["mode"], c["baseline"], c["arm"], rate(c["baseline_rate"]), rate(c["arm_rate"]),
             f"{100 * c['difference']:+.1f} pp", "-" if c["low"] is None else
             f"[{100 * c['low']:+.1f}, {100 * c['high']:+.1f}] pp", c["pairs"] or "unpaired",
             "-" if c["mcnemar_p"] is None else f"{c['mcnemar_p']:.4f}"] for c in changes]
    return cols, rows
