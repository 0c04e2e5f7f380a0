"""The report's judges: a page of every judge of the ledger (``runs.judgments``) checked against the evidence, as
``trajcheck judges`` checks them, and on each run page the judges' verdicts the run's evidence contradicts.

``judges.html`` gives each judge's coverage, passes and fails, conflicts, contradicted failures, flip rate and cost
per run, and, when the report is given labels, its precision, recall, false-success and false-failure rates with
their Wilson intervals; then Cohen's kappa between judges, and every conflict with the step and the evidence that
show it, linked to the step on its run's page (``runs/<name>.html#step-N``). A report makes the page only when the
ledger holds judgments. A judge's text and a log's are data: every value goes through
:func:`trajcheck.render.htmltext.escape`.
"""

from __future__ import annotations

import os
from typing import Any

from ..queries.judges import CONFLICTS, CONTRADICTIONS, against_evidence
from ..queries.judgeverdicts import run_verdicts
from .htmltext import escape as _e
from .reportfiles import page_name
from ..base.words import count

#: The page's own style (the report's CSS styles the rest).
_CSS = ("table.judges td,table.judges th{vertical-align:top;text-align:left}"
        "table.conflicts td,table.conflicts th{vertical-align:top;text-align:left}")
#: The conflicts' columns, as ``trajcheck judges`` shows them.
CONFLICT_HEAD = ("judge", "run", "said", "kind", "step", "action", "evidence")


def _pct(r: dict[str, Any] | None) -> str:
    if not r or not r["n"]:
        return "-"
    return f"{100 * r['rate']:.1f}% [{100 * r['low']:.1f}, {100 * r['high']:.1f}] ({r['k']}/{r['n']})"


def _judge_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Each judge's figures as cells (already escaped where text): with labels, its rates against them."""
    labelled = data["labelled_runs"] is not None
    head = ["judge", "judged", "coverage", "passes", "fails", "conflicts", "contradicted failures", "flip rate",
            "cost/run"] + (["precision", "recall", "false success", "false failure"] if labelled else [])
    rows = []
    for j in data["judges"]:
        cells = [f'<a href="#judge-{_e(page_name(j["judge"]))}">{_e(j["judge"])}</a>', str(j["judged"]),
                 _e(_pct(j["coverage"])), str(j["passes"]), str(j["fails"]), str(j["conflicts"]),
                 str(j["contradicted_failures"]), _e(_pct(j["flip"])),
                 "-" if j["cost_per_run"] is None else _e(f"{j['cost_per_run']:g}")]
        if labelled:
            lab = j["labels"] or {}
            cells += [_e(_pct(lab.get(k))) for k in ("precision", "recall", "false_success", "false_failure")]
        rows.append(cells)
    return head, rows


def _table(cls: str, head: list[str] | tuple[str, ...], rows: list[list[str]]) -> str:
    return (f'<table class="trajcheck {cls}"><thead><tr>' + "".join(f"<th>{_e(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
            + "</tbody></table>")


def _step_link(page: str | None, step: int | None, root: str) -> tuple[str, str]:
    """The run's link (to the step shown, when there is one) and the step's cell."""
    if page is None:
        return "", "-" if step is None else str(step)
    href = f"{root}runs/{_e(page)}.html" + ("" if step is None else f"#step-{step}")
    return href, "-" if step is None else f'<a href="{href}">{step}</a>'


def _conflict_rows(items: list[dict[str, Any]], pages: dict[str, str], root: str) -> list[list[str]]:
    rows = []
    for c in items:
        href, step = _step_link(pages.get(c["run_id"]), c["step"], root)
        run = f'<a href="{href}">{_e(c["run_id"])}</a>' if href else _e(c["run_id"])
        what = CONFLICTS.get(c["kind"]) or CONTRADICTIONS.get(c["kind"]) or ""
        rows.append([_e(c["judge"]), run, _e(c["said"]), f'<span title="{_e(what)}">{_e(c["kind"])}</span>', step,
                     _e(c["action"] or "-"), f"<code>{_e(c['evidence'])}</code>"])
    return rows


def judges_page(data: dict[str, Any], pages: dict[str, str]) -> str:
    """The body of ``judges.html`` from :func:`trajcheck.queries.judges.judges`'s result (``pages``: each run's
    page name)."""
    labelled = data["labelled_runs"] is not None
    parts = [f"<style>{_CSS}</style><p><a href=\"index.html\">all runs</a></p><h1>Judges</h1>"
             f"<p class=muted>{count(len(data['judges']), 'judge')} of {count(data['runs'], 'scored run')} "
             "(runs.judgments, <code>score --judgments</code>). A judge is never evidence: each verdict is compared "
             "with what the run's evidence shows (docs/judges.md); missing evidence is never a conflict. A "
             "judge's verdict on a run is the majority of its samples; the flip rate is over the runs it judged more "
             "than once. " + (f"Rates against the labels of {count(data['labelled_runs'], 'run')}, 95% Wilson "
                              "intervals." if labelled else "No labels given: the report's --labels adds each "
                              "judge's precision, recall and false-success rate.") + "</p>"]
    parts.append(_table("judges", *_judge_rows(data)))
    if data["kappa"]:
        parts.append("<h2>Cohen's kappa between judges</h2>" + _table(
            "judges", ["a", "b", "runs both decided", "kappa"],
            [[_e(k["a"]), _e(k["b"]), str(k["items"]), "-" if k["kappa"] is None else _e(f"{k['kappa']:.3f}")]
             for k in data["kappa"]]))
    for j in data["judges"]:
        mine = [c for c in data["conflicts"] if c["judge"] == j["judge"]]
        against = [c for c in data["contradicted_failures"] if c["judge"] == j["judge"]]
        parts.append(f'<h2 id="judge-{_e(page_name(j["judge"]))}">{_e(j["judge"])}</h2>')
        parts.append(f"<p>Successes the evidence contradicts: {count(j['conflicts'], 'run')}</p>")
        if mine:
            parts.append(_table("conflicts", CONFLICT_HEAD, _conflict_rows(mine, pages, "")))
        if against:
            parts.append(f"<p>Failures the evidence contradicts: {count(j['contradicted_failures'], 'run')}</p>"
                         + _table("conflicts", CONFLICT_HEAD, _conflict_rows(against, pages, "")))
    return "".join(parts)


def judges_section(data: dict[str, Any]) -> str:
    """The index's judges section: a line per judge and the link to ``judges.html``."""
    items = "".join(f"<li>{_e(j['judge'])}: judged {j['judged']}, passes {j['passes']}, fails {j['fails']}; "
                    f"successes the evidence contradicts {j['conflicts']}, failures {j['contradicted_failures']}"
                    + (f"; false success {_e(_pct(j['labels']['false_success']))}" if j["labels"] else "") + "</li>"
                    for j in data["judges"])
    return (f"<h2 id=judges>Judges</h2><p><a href=\"judges.html\">Judges against the evidence</a>: "
            f"{count(len(data['judges']), 'judge')} (runs.judgments), each verdict compared with the runs' evidence."
            f"</p><ul>{items}</ul>")


def report_judges(ledger_dir: str | os.PathLike[str], labels: str | os.PathLike[str] | None,
                  pages: dict[str, str]) -> tuple[str, str]:
    """The judges page's body and the index's section (a ledger that holds judgments: :func:`has_judgments`)."""
    from ..queries.judges import judges  # DuckDB: loaded when a report is written

    data = judges(ledger_dir, labels_path=labels)
    return judges_page(data, pages), judges_section(data)


def has_judgments(runs: list[dict[str, Any]]) -> bool:
    """Does a scored run of the ledger (runs rows) hold a judgment: is there a judges page to make?"""
    return any(r["status"] == "ok" and r.get("judgments") for r in runs)


def run_conflicts(r: dict[str, Any], steps: list[dict[str, Any]]) -> str:
    """A run page's list of the judges' verdicts its evidence contradicts, each with the step (a link to it on
    the page) and the evidence; nothing when no judge judged the run, or the evidence contradicts none."""
    found = [c for judge, v in sorted(run_verdicts(r.get("judgments")).items()) for c in against_evidence(judge, v, r)]
    if not found:
        return ""
    actions = {s["step_index"]: s.get("action_type") for s in steps}
    items = []
    for c in found:
        what = CONFLICTS.get(c["kind"]) or CONTRADICTIONS.get(c["kind"]) or c["kind"]
        at = "" if c["step"] is None else (f' at <a href="#step-{c["step"]}">step {c["step"]}</a>'
                                           + (f" ({_e(actions[c['step']])})" if actions.get(c["step"]) else ""))
        items.append(f'<li data-judge="{_e(c["judge"])}" data-kind="{_e(c["kind"])}">{_e(c["judge"])} said '
                     f"<b>{_e(c['said'])}</b>; {_e(what)}{at}: <code>{_e(c['evidence'])}</code></li>")
    return (f"<div class=judge-conflicts><b>judges the evidence contradicts</b> "
            f'(<a href="../judges.html">all judges</a>)<ul>{"".join(items)}</ul></div>')
