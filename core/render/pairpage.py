"""The report's pair pages: for each task with runs in two arms of the comparison's ``--by`` key, the two
runs side by side (``pairs/<task>.html``, the task id's safe form), their steps aligned as ``trajcheck diff``
aligns them, each step with its thumbnails, and the first divergence marked; the index lists them under the
comparison table.

The pairs are the ones ``trajcheck diff --task T --by KEY`` shows (:func:`trajcheck.queries.pairdiff.report_pairs`).
A pair page shows the thumbnails its runs' pages have (the same files: nothing is decoded again).
"""

from __future__ import annotations

import os
from typing import Any

from ..analyzers.alignment import Pair, explain
from .htmlreport import _badges, _page, _step_html
from .htmltext import escape as _e
from .reportfiles import Output, page_name
from .reportwork import Images
from ..queries.pairdiff import Picked, align_runs, report_pairs
from ..base.reasons import PairMatch

#: How a pair's match reads in the middle column.
MARKS = {PairMatch.SAME: "=", PairMatch.DIFFERENT_SCREEN: "&ne; screen", PairMatch.DIFFERENT_ACTION: "&ne; action",
         PairMatch.DIFFERENT_TARGET: "&ne; target", PairMatch.DIFFERENT_RESULT: "&ne; result",
         PairMatch.EXTRA_STEP: "+ step", PairMatch.RUN_ENDED: "ended"}


def write_pairs(ledger_dir: str | os.PathLike[str], out: Output, runs: list[dict[str, Any]],
                steps_by_run: dict[str, list[dict[str, Any]]], by: str, thumbs: bool, images: Images) -> str:
    """Put ``pairs/<task>.html`` for every pair of ``by``'s arms into ``out``; return the index's section that
    links them ("" when no task has runs in two arms). ``images``: the thumbnails the run pages have."""
    pairs = report_pairs(ledger_dir, by)
    if not pairs:
        return ""
    index_of = {r["run_id"]: i for i, r in enumerate(runs)}
    rows = []
    for task, pa, pb in pairs:
        ia, ib = index_of[pa.run_id], index_of[pb.run_id]
        aligned, first = align_runs(runs[ia], steps_by_run.get(pa.run_id, []), runs[ib],
                                    steps_by_run.get(pb.run_id, []))
        body = _pair_page(task, by, (pa, pb), (runs[ia], runs[ib]), steps_by_run, aligned, first, out, images,
                          thumbs)
        name = page_name(task)
        out.put(f"pairs/{name}.html", _page(f"{task}: {pa.run_id} / {pb.run_id} - trajcheck", body, "../"))
        where = "agree throughout" if first is None else (
            f"pair {first + 1}: {_e(aligned[first].match)}")
        rows.append(f'<tr><td><a href="pairs/{_e(name)}.html">{_e(task)}</a></td>'
                    f'<td><a href="runs/{_e(page_name(pa.run_id))}.html">{_e(pa.run_id)}</a> ({_e(pa.arm)}) '
                    f'{_badges(runs[ia])}</td>'
                    f'<td><a href="runs/{_e(page_name(pb.run_id))}.html">{_e(pb.run_id)}</a> ({_e(pb.arm)}) '
                    f'{_badges(runs[ib])}</td>'
                    f"<td>{where}</td></tr>")
    return (f"<h3>Paired runs side by side</h3><p class=muted>One run of each task from each arm of {_e(by)} "
            "(as <code>trajcheck diff --task T --by KEY</code> picks them), aligned step by step; the task opens "
            "the pair's page.</p><table class=trajcheck id=pairs><thead><tr><th>task</th><th>A</th><th>B</th>"
            "<th>first divergence</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _side(label: str, p: Picked, r: dict[str, Any], by: str) -> str:
    return (f'<p><b>{label}</b> <a href="../runs/{_e(page_name(p.run_id))}.html">{_e(p.run_id)}</a> '
            f"({_e(by)} = {_e(p.arm)}) {_badges(r)} <span class=muted>{_e(r.get('n_steps'))} steps; picked: "
            f"{_e(p.why)}</span></p>")


def _pair_page(task: str, by: str, picked: tuple[Picked, Picked], both: tuple[dict[str, Any], dict[str, Any]],
               steps_by_run: dict[str, list[dict[str, Any]]], aligned: list[Pair], first: int | None, out: Output,
               images: Images, thumbs: bool) -> str:
    """One pair's page: both runs, the first divergence in a sentence, then a row per aligned pair."""
    pa, pb = picked
    ra, rb = both
    by_index = [{s["step_index"]: s for s in steps_by_run.get(p.run_id, [])} for p in picked]
    parts = [f'<p><a href="../index.html">all runs</a></p><div class=pair><h3>{_e(task)}: two runs side by side</h3>',
             _side("A", pa, ra, by), _side("B", pb, rb, by)]
    if first is None:
        parts.append("<p class=pos>No divergence: the runs took the same actions on the same screens.</p>")
    else:
        f = aligned[first]
        steps = ["-" if s is None else s.index for s in (f.a, f.b)]
        parts.append(f'<p class=neg id=divergence><b>First divergence</b> at <a href="#pair-{first + 1}">pair '
                     f"{first + 1}</a> (A step {steps[0]}, B step {steps[1]}): <b>{_e(f.match)}</b>. "
                     f"{_e(explain(f))}.</p>")
    parts.append(f'<table class="trajcheck pairs"><thead><tr><th>#</th><th class=side>A {_e(pa.run_id)}</th><th>match'
                 f"</th><th class=side>B {_e(pb.run_id)}</th></tr></thead><tbody>")
    for k, p in enumerate(aligned):
        cells = []
        for side, sig in enumerate((p.a, p.b)):
            if sig is None:
                gone = "(ended)" if p.match is PairMatch.RUN_ENDED else "(no such step)"
                cells.append(f'<td class="side muted">{gone}</td>')
                continue
            run = both[side]
            cells.append("<td class=side>" + _step_html(page_name(run["run_id"]), run, by_index[side][sig.index],
                                                        images, out, thumbs) + "</td>")
        here = k == first
        mark = MARKS[p.match] + ("<br><b>first divergence</b>" if here else "")
        parts.append(f'<tr id="pair-{k + 1}" class="{"diverge" if here else _e(p.match)}"><td>{k + 1}</td>{cells[0]}'
                     f"<td class=match>{mark}</td>{cells[1]}</tr>")
    parts.append("</tbody></table></div>")
    return "".join(parts)
