"""Writing the report: every run's page on every core, then the pair pages and the index; only what changed.

:func:`write_report` reads the ledger, hands each run to :func:`trajcheck.render.reportwork.run_pages` (its
thumbnails, crops and page, over a process pool), then writes the pair pages and ``index.html`` (last, so
that every page it links is already there) and records the folder's files
(:mod:`trajcheck.render.reportfiles`): a second report of the same ledger writes nothing, and of a grown ledger
only the new and changed pages.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..base.diskcache import prune
from ..base.verdicts import coverage
from ..base.version import __version__
from ..media.thumbs import RECIPE
from ..store.lock import DEFAULT_WAIT, LockWait, acquire
from .htmlreport import INDEX_JS, _chart, _page, _runs_table, render_run
from .htmltext import escape as _e
from .failuremodes import failure_section
from .judgespage import has_judgments, report_judges
from .reportfiles import Output, ensure_folder, page_name, read_manifest
from .reportwork import Images, run_pages
from ..base.words import count

#: Thumbnails and crops kept in the cache folder (a few KB to 30 KB each): a report folder keeps its own copies,
#: so the cache only saves making them again.
THUMBS_KEPT = 10_000

#: More pages (the pair pages, trajcheck.render.pairpage): (output, runs, steps by run, --by, thumbnails,
#: images of the runs' frames) -> the index's section.
Pages = Callable[[Output, list[dict[str, Any]], dict[str, list[dict[str, Any]]], str, bool, Images], str]
#: Told (runs done, runs in all) as the run pages are written.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Written:
    """What a report wrote: its index, how many run pages (with thumbnails drawn), files written and kept,
    files removed (of runs gone from the ledger) and frames decoded."""

    index: Path
    runs: int
    with_thumbnails: int
    written: int
    kept: int
    removed: int
    decoded: int


def _read(ledger_dir: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]], bool]:
    from ..store import ledger  # DuckDB: imported when a report is written, not at CLI start-up

    con = ledger.connect(ledger_dir)
    try:
        runs = [dict(zip([d[0] for d in cur.description], r)) for cur in [con.execute(
            "select * from runs order by (false_claim is true) desc, "
            "case eval_final_verdict when 'uncertain' then 0 when 'fail' then 1 when 'unknown' then 2 else 3 end, "
            "run_id")] for r in cur.fetchall()]
        arm_count = con.execute("select count(distinct config_perceptual_verifier) from runs").fetchone()
        steps_by_run: dict[str, list[dict[str, Any]]] = {}
        cur = con.execute("select * from steps order by run_id, step_index")
        cols = [d[0] for d in cur.description]
        for row in cur.fetchall():
            d = dict(zip(cols, row))
            steps_by_run.setdefault(d["run_id"], []).append(d)
    finally:
        con.close()
    return runs, steps_by_run, arm_count is not None and arm_count[0] > 1


def write_report(ledger_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str], by: str | None = None,
                 max_runs: int | None = None, success_score: float = 1.0, pages: Pages | None = None,
                 jobs: int | None = None, on_progress: Progress | None = None, wait: float = DEFAULT_WAIT,
                 on_wait: Callable[[LockWait], None] | None = None,
                 labels: str | os.PathLike[str] | None = None) -> Written:
    """Write ``out_dir/index.html`` (summary, comparison and a sortable, filterable table of every run),
    ``out_dir/runs/<name>.html`` (one page per run, named by its id: its story step by step, with thumbnails)
    and ``out_dir/assets/``, each file only when its bytes changed since the last report there. The ``max_runs``
    most telling runs (false claims, uncertain, failed first; None: every run) get thumbnails. With a ``by``,
    ``pages`` adds its pages and section. ``jobs`` worker processes (None: one per core). When the ledger holds
    judgments, ``out_dir/judges.html`` checks each judge against the evidence (:mod:`trajcheck.render.judgespage`;
    against ``labels`` too, when given).

    One report at a time writes a folder: the folder's lock (:mod:`trajcheck.store.lock`, the ledger's kind) is
    held from before the last report's record is read until the new one is written, so two reports into one
    folder never mix their pages or remove each other's. A second waits up to ``wait`` seconds (``on_wait``
    hears who holds it), then raises :class:`~trajcheck.store.lock.LedgerBusy`, having written nothing."""
    root = Path(out_dir)
    ensure_folder(root)
    with acquire(root, wait, on_wait):
        return _write(ledger_dir, root, by, max_runs, success_score, pages, jobs, on_progress, labels)


def _write(ledger_dir: str | os.PathLike[str], root: Path, by: str | None, max_runs: int | None,
           success_score: float, pages: Pages | None, jobs: int | None, on_progress: Progress | None,
           labels: str | os.PathLike[str] | None = None) -> Written:
    from ..queries.comparison import compare
    from ..queries.tables import build, to_html

    runs, steps_by_run, has_arms = _read(ledger_dir)
    by = by or ("config.perceptual_verifier" if has_arms else None)
    out = Output(root, read_manifest(root))
    limit = len(runs) if max_runs is None else max_runs
    work = [(r, steps_by_run.get(r["run_id"], []), i < limit) for i, r in enumerate(runs)]
    images, drawn = Images(), 0
    workers = max(1, jobs or os.cpu_count() or 1)
    for done, got in enumerate(run_pages(root, out.old, work, render_run, workers), 1):
        out.merge(got.files, got.written)
        images.merge(got.images)
        drawn += got.drawn
        if on_progress is not None:
            on_progress(done, len(work))
    body = [f"<h1>trajcheck report</h1><p class=muted>{count(len(runs), 'run')} from {_e(Path(ledger_dir).name)}; "
            f"trajcheck {_e(__version__)}</p><p><b>{_e(coverage(runs).text())}</b></p>"]
    body.append("<h2>Summary</h2>" + to_html(build(ledger_dir, "summary", by, success_score)))
    names = {r["run_id"]: page_name(r["run_id"]) for r in runs}
    body.append(failure_section(ledger_dir, by, names))
    if has_judgments(runs):
        page, section = report_judges(ledger_dir, labels, names)
        out.put("judges.html", _page("judges - trajcheck report", page, ""))
        body.append(section)
    if by:
        c = compare([ledger_dir], by, success_score).to_json()
        body.append("<h2>Comparison</h2>" + _chart(c["arms"], by)
                    + to_html(build(ledger_dir, "compare", by, success_score))
                    + (pages(out, runs, steps_by_run, by, limit > 0, images) if pages else ""))
    body.append("<h2>Per action type</h2>" + to_html(build(ledger_dir, "per-action-type", by, success_score)))
    body.append(_runs_table(runs, steps_by_run, by))
    out.put("assets/index.js", INDEX_JS)
    out.put("index.html", _page("trajcheck report", "".join(body), "", script=True))  # last: its links are there
    removed = out.finish()
    prune(f"thumbs-{RECIPE}", THUMBS_KEPT, nested=True)  # the report folder keeps its own: the cache stays bounded
    written = len(set(out.written))
    return Written(root / "index.html", len(runs), drawn, written, len(out.files) - written, len(removed),
                   images.made)
