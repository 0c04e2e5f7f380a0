"""The report's failure-modes section: per arm, each failure mode of the runs that did not pass, its count,
share and rate with their Wilson intervals, an example's evidence and a link to each of its runs' pages
(``trajcheck failures`` as HTML; docs/failures.md)."""

from __future__ import annotations

import os
from typing import Any

from ..queries.failuremodes import failed_check, subkinds
from .evidencetext import failure_sentence
from .htmltext import escape as _e
from ..base.words import count

#: The section's own style (the report's CSS styles the rest).
_CSS = ("table.failures td,table.failures th{vertical-align:top;text-align:left}"
        "table.failures .runs a{margin-right:6px;white-space:nowrap}")


def _pct(r: dict[str, Any]) -> str:
    if not r["n"]:
        return "-"
    return f"{100 * r['rate']:.1f}% [{100 * r['low']:.1f}, {100 * r['high']:.1f}] ({r['k']}/{r['n']})"


def _arm_table(arm: dict[str, Any], pages: dict[str, str]) -> str:
    rows = []
    for m in arm["modes"]:
        links = " ".join(f'<a href="runs/{pages[r]}.html">{_e(r)}</a>' if r in pages else _e(r) for r in m["runs"])
        details = ", ".join(f"{_e(d['detail'])} ({d['count']})" for d in m["details"])
        ex = m["example"]
        at = f"{ex['run_id']}" + (f" step {ex['step']}" if ex["step"] is not None else "")
        said = failure_sentence(ex["evidence"], ex.get("check"))
        rows.append(f'<tr data-mode="{_e(m["mode"])}"><td><b>{_e(m["mode"])}</b></td><td>{m["count"]}</td>'
                    f"<td>{_e(_pct(m['share']))}</td><td>{_e(_pct(m['rate']))}</td><td>{details}</td>"
                    f"<td><span class=muted>{_e(at)}:</span> {_e(said)}</td>"
                    f'<td class=runs>{links}</td></tr>')
    head = "".join(f"<th>{h}</th>" for h in ("mode", "runs", "share of failures", "rate of runs", "details",
                                             "example", "its runs"))
    return f"<table class=\"trajcheck failures\"><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _top(title: str, items: list[dict[str, Any]], key: str) -> str:
    if not items:
        return ""
    return f"<p class=muted>{title}: " + "; ".join(f"{_e(i[key])} ({i['count']})" for i in items) + "</p>"


def failure_section(ledger_dir: str | os.PathLike[str], by: str | None, pages: dict[str, str]) -> str:
    """The index's failure-modes section (``pages``: each run's page name, runs/<name>.html)."""
    from ..queries.failuremodes import failures  # DuckDB: loaded when a report is written

    data = failures(ledger_dir, by).to_json()
    parts = [f"<style>{_CSS}</style><h2 id=failure-modes>Failure modes</h2><p class=muted>Each run that did not "
             "pass has one failure mode: the decisive cause its evidence shows, the first of blocked, app_said_no, "
             "dead_action, looped, no_answer, gave_up, wrong_result, not_determined that holds (docs/failures.md). "
             "Share: of the arm's failing runs; rate: of all its runs; 95% Wilson intervals.</p>"]
    for arm in data["arms"]:
        title = f"{by} = {arm['arm']}" if by else "all runs"
        parts.append(f'<h3 class=failure-arm data-arm="{_e(arm["arm"])}">{_e(title)}: {arm["failed"]} of '
                     f"{count(arm['runs'], 'run')} did not pass (failed {arm['not_passed']['fail']}, uncertain "
                     f"{arm['not_passed']['uncertain']}, unknown-while-claiming {arm['not_passed']['unknown']})</h3>")
        if arm["modes"]:
            parts.append(_arm_table(arm, pages))
        parts.append(_top("Most frequent error texts", arm["errors"], "text"))
        parts.append(_top("Pages that blocked", arm["blocking_pages"], "page"))
    return "".join(parts)


def failure_line(r: dict[str, Any]) -> str:
    """A run page's line on its failure mode (runs.failure_mode), or nothing for a run without one."""
    if not r.get("failure_mode"):
        return ""
    at = f" at step {r['failure_step']}" if r.get("failure_step") is not None else ""
    kinds = subkinds(r)
    detail = f" ({_e('; '.join(kinds))})" if kinds else ""
    evidence = r.get("failure_evidence")
    return (f'<p class=failure-mode>Failure mode: <b>{_e(r["failure_mode"])}</b>{detail}{at}: '
            f'{_e(failure_sentence(evidence, failed_check(evidence, r.get("contract_checks"))))}</p>')
