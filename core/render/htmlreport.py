"""A self-contained static HTML report: tables, a chart, and per run a visual timeline.

``index.html`` lists every run (sortable, filtered by verdict and false claim, with a
text search: ``assets/index.js``, trajcheck's own script, no library and no network);
``runs/<n>.html`` tells one run's story. Everything that comes from a recorded run (reasoning, URLs, DOM
text, run ids) is escaped with ``html.escape`` before it is written, and no script reads it. Texts longer
than a few hundred characters are cut, with the whole text in its own file one click away. The thumbnails
mark where the action aimed (a magenta ring), the region the verifier hashed (blue) and the changed box (red).
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any, Callable

from PIL import Image, ImageDraw

from ..base.atomic import atomic_path
from ..base.box import Box
from ..media.frames import FrameError, decode
from ..scoring.digest import outside_names
from .failurepage import failure_line, failure_section
from .reportgeometry import frame_point, motion
from .rubrichtml import rubric_and_judges
from ..base.runfiles import safe_join
from ..base.verdicts import coverage
from ..base.version import __version__

THUMB_WIDTH = 360
#: Runs whose pages get thumbnails, most telling first (false claims, uncertain, failed).
DEFAULT_MAX_RUNS = 60

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d1d1f;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table.trajcheck{border-collapse:collapse;margin:8px 0}table.trajcheck td,table.trajcheck th{border:1px solid #ddd;
padding:3px 8px;text-align:right}table.trajcheck td:first-child,table.trajcheck th:first-child{text-align:left}
caption{caption-side:bottom;color:#666;font-size:12px;text-align:left}
.run{border:1px solid #ddd;border-radius:6px;padding:12px;margin:16px 0}
.badge{display:inline-block;border-radius:4px;padding:1px 6px;margin-right:4px;font-size:12px;color:#fff}
.pass{background:#1a7f37}.fail{background:#cf222e}.uncertain{background:#bf8700}.unknown{background:#6e7781}
.claim{background:#8250df}.step{display:grid;grid-template-columns:220px 1fr;gap:8px;border-top:1px solid #eee;
padding:8px 0}.frames img{margin-right:6px;border:1px solid #ccc;vertical-align:top}.muted{color:#666}
.warn{color:#9a6700}.neg{color:#cf222e}.pos{color:#1a7f37}code{font-size:12px}
#runs td,#runs th{text-align:left}#runs th{cursor:pointer;user-select:none}
#runs th[data-dir=asc]::after{content:" \\25B2"}#runs th[data-dir=desc]::after{content:" \\25BC"}
.states{display:flex;gap:2px;flex-wrap:wrap;margin:6px 0}.states span{min-width:22px;text-align:center;
border-radius:3px;font-size:11px;padding:1px 3px;border:1px solid #ccc}.states .new{background:#dafbe1}
.states .return{background:#ffebe9;border-color:#cf222e;font-weight:bold}.states .same{background:#f6f8fa}
table.pairs td,table.pairs th{vertical-align:top;text-align:left}table.pairs .side{width:48%}
.pairs .step{grid-template-columns:1fr}.pairs .frames img{max-width:calc(50% - 8px)}tr.diverge td{background:#ffebe9}
"""


def _e(v: Any) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def _chart(arms: list[dict[str, Any]], label: str) -> str:
    """Success rate per arm with its 95% interval, as inline SVG."""
    w, h, left, bar = 640, 40 + 34 * len(arms), 170, 28
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" '
             f'aria-label="success rate per arm">', f'<text x="4" y="16" font-size="12">success rate by {_e(label)} '
             '(bar) and 95% Wilson interval (line)</text>']
    scale = w - left - 130  # the rate's label goes right of the bar, never under its interval line
    for i, a in enumerate(arms):
        s = a["success"]
        y = 30 + i * 34
        parts.append(f'<text x="4" y="{y + 18}" font-size="12">{_e(a["arm"])}</text>')
        parts.append(f'<rect x="{left}" y="{y}" width="{scale}" height="{bar}" fill="#f3f3f3"/>')
        if s["n"]:
            parts.append(f'<rect x="{left}" y="{y}" width="{scale * s["rate"]:.1f}" height="{bar}" fill="#4c8bf5"/>')
            lo, hi = left + scale * s["low"], left + scale * s["high"]
            parts.append(f'<line x1="{lo:.1f}" x2="{hi:.1f}" y1="{y + bar / 2}" y2="{y + bar / 2}" stroke="#111" '
                         'stroke-width="2"/>')
            parts.append(f'<text x="{left + scale + 8}" y="{y + 18}" font-size="12" fill="#111">'
                         f'{100 * s["rate"]:.0f}% ({s["k"]}/{s["n"]})</text>')
    parts.append("</svg>")
    return "".join(parts)


#: The action point's mark (a ring with a crosshair), the region box and the changed box on the frames.
MARK, REGION, CHANGED = (230, 0, 200), (0, 110, 255), (255, 0, 0)


def _thumb(src: Path, dst: Path, box: list[int] | None = None, highlight: list[int] | None = None,
           crop: list[int] | None = None, point: tuple[float, float] | None = None,
           path: tuple[float, float] | None = None, arrow: tuple[float, float] | None = None) -> bool:
    """Write a thumbnail (or a region crop) of ``src``; draw ``highlight`` (the changed box) in red, ``box`` (the
    region the verifier hashed) in blue and ``point`` (where the action aimed, frame pixels) as a magenta ring
    sized to stay visible after the thumbnail is scaled down."""
    try:
        frame = decode(src)
    except FrameError:
        return False
    img = Image.fromarray(frame.rgb)
    if crop:
        img = img.crop(Box(*crop))
    draw = ImageDraw.Draw(img)
    scale = 1.0 if crop else max(1.0, img.width / THUMB_WIDTH)  # frame pixels per thumbnail pixel
    ox, oy = (crop[0], crop[1]) if crop else (0, 0)
    for b, colour in ((box, REGION), (highlight, CHANGED)):
        if b:
            x0, y0, x1, y1 = b[0] - ox, b[1] - oy, b[2] - ox, b[3] - oy
            draw.rectangle((x0, y0, x1 - 1, y1 - 1), outline=colour, width=max(2, round(2 * scale)))
    if point is not None and path is not None:  # a drag: a line from where it started to the point
        draw.line((path[0] - ox, path[1] - oy, point[0] - ox, point[1] - oy), fill=MARK, width=max(2, round(3 * scale)))
    if point is not None and arrow is not None:  # a scroll: an arrow from the point in its direction
        ex, ey = point[0] - ox + arrow[0] * 40 * scale, point[1] - oy + arrow[1] * 40 * scale
        draw.line((point[0] - ox, point[1] - oy, ex, ey), fill=MARK, width=max(2, round(3 * scale)))
        hx, hy = -arrow[1] * 8 * scale, arrow[0] * 8 * scale  # the head: a bar across the arrow's end
        draw.line((ex - hx, ey - hy, ex + hx, ey + hy), fill=MARK, width=max(2, round(3 * scale)))
    if point is not None:
        px, py = point[0] - ox, point[1] - oy
        r, lw = 7 * scale, max(2, round(2 * scale))
        draw.ellipse((px - r, py - r, px + r, py + r), outline=MARK, width=lw)
        draw.line((px - 2 * r, py, px + 2 * r, py), fill=MARK, width=lw)
        draw.line((px, py - 2 * r, px, py + 2 * r), fill=MARK, width=lw)
    if not crop and img.width > THUMB_WIDTH:
        img = img.resize((THUMB_WIDTH, max(1, round(img.height * THUMB_WIDTH / img.width))), Image.Resampling.LANCZOS)
    img.save(dst, "PNG" if crop else "JPEG", **({} if crop else {"quality": 82}))
    return True


#: The index page's script (sorting, filtering, search), written to assets/: trajcheck's own, no library.
INDEX_JS = """
(function () {
  const table = document.getElementById('runs'), body = table.tBodies[0];
  const q = document.getElementById('q'), verdict = document.getElementById('verdict');
  const claims = document.getElementById('claims'), shown = document.getElementById('shown');
  function apply() {
    const text = q.value.toLowerCase(), v = verdict.value, fc = claims.checked;
    let n = 0;
    for (const row of body.rows) {
      const ok = (!v || row.dataset.verdict === v) && (!fc || row.dataset.claim === '1') &&
                 (!text || row.textContent.toLowerCase().includes(text));
      row.hidden = !ok; n += ok;
    }
    shown.textContent = n + ' of ' + body.rows.length + ' runs';
  }
  [q, verdict, claims].forEach(el => el.addEventListener('input', apply));
  table.tHead.querySelectorAll('th').forEach((th, i) => th.addEventListener('click', () => {
    const dir = th.dataset.dir === 'asc' ? -1 : 1;
    table.tHead.querySelectorAll('th').forEach(h => delete h.dataset.dir);
    th.dataset.dir = dir === 1 ? 'asc' : 'desc';
    const key = row => row.cells[i].dataset.sort ?? row.cells[i].textContent;
    const rows = [...body.rows].sort((a, b) => {
      const x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
      return dir * (isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny);
    });
    rows.forEach(r => body.appendChild(r));
  }));
  apply();
})();
"""

#: The order of verdicts in the default sort of the index: the runs that need a look first.
_RANK = {"uncertain": 0, "fail": 1, "unknown": 2, "pass": 3}


#: More pages (the pair pages, trajcheck.render.pairpage): (folder, runs by page, steps, --by, --max-runs) -> index
#: section.
Pages = Callable[[Path, list[dict[str, Any]], dict[str, list[dict[str, Any]]], str, int], str]


def write_report(ledger_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str], by: str | None = None,
                 max_runs: int = DEFAULT_MAX_RUNS, success_score: float = 1.0, pages: Pages | None = None
                 ) -> tuple[Path, int]:
    """Write ``out_dir/index.html`` (summary, comparison and a sortable, filterable table of every run),
    ``out_dir/runs/<n>.html`` (one page per run: its story step by step) and ``out_dir/assets/``; return the
    index path and the number of run pages. The ``max_runs`` most telling runs (false claims, uncertain,
    failed first) get thumbnails. With a ``by``, ``pages`` adds its pages and section."""
    from ..store import ledger  # DuckDB, scipy.stats: imported when a report is written, not at CLI start-up
    from ..queries.comparison import compare
    from ..queries.tables import build, to_html

    out = Path(out_dir)
    con = ledger.connect(ledger_dir)
    try:
        runs = [dict(zip([d[0] for d in cur.description], r)) for cur in [con.execute(
            "select * from runs order by (false_claim is true) desc, "
            "case eval_final_verdict when 'uncertain' then 0 when 'fail' then 1 when 'unknown' then 2 else 3 end, "
            "run_id")] for r in cur.fetchall()]
        arm_count = con.execute("select count(distinct config_perceptual_verifier) from runs").fetchone()
        has_arms = arm_count is not None and arm_count[0] > 1
        steps_by_run: dict[str, list[dict[str, Any]]] = {}
        cur = con.execute("select * from steps order by run_id, step_index")
        cols = [d[0] for d in cur.description]
        for row in cur.fetchall():
            d = dict(zip(cols, row))
            steps_by_run.setdefault(d["run_id"], []).append(d)
    finally:
        con.close()
    by = by or ("config.perceptual_verifier" if has_arms else None)
    # written beside the old report and swapped in whole (the old one removed after): never half a report
    with atomic_path(out, hidden=True) as tmp:
        assets = tmp / "assets"
        assets.mkdir(parents=True)
        (tmp / "runs").mkdir()
        body = [f"<h1>trajcheck report</h1><p class=muted>{len(runs)} runs from {_e(Path(ledger_dir).name)}; "
                f"trajcheck {_e(__version__)}</p><p><b>{_e(coverage(runs).text())}</b></p>"]
        body.append("<h2>Summary</h2>" + to_html(build(ledger_dir, "summary", by, success_score)))
        body.append(failure_section(ledger_dir, by, {r["run_id"]: i for i, r in enumerate(runs)}))
        if by:
            c = compare([ledger_dir], by, success_score).to_json()
            body.append("<h2>Comparison</h2>" + _chart(c["arms"], by)
                        + to_html(build(ledger_dir, "compare", by, success_score))
                        + (pages(tmp, runs, steps_by_run, by, max_runs) if pages else ""))
        body.append("<h2>Per action type</h2>" + to_html(build(ledger_dir, "per-action-type", by, success_score)))
        body.append(_runs_table(runs, steps_by_run, by))
        for i, r in enumerate(runs):
            page = _run_section(i, r, steps_by_run.get(r["run_id"], []), assets, thumbs=i < max_runs)
            (tmp / "runs" / f"{i}.html").write_text(_page(f"{r['run_id']} - trajcheck", page, "../"), "utf-8")
        (assets / "index.js").write_text(INDEX_JS, "utf-8")
        (tmp / "index.html").write_text(_page("trajcheck report", "".join(body), "", script=True), "utf-8")
    return out / "index.html", len(runs)


def _page(title: str, body: str, root: str, script: bool = False) -> str:
    js = f'<script src="{root}assets/index.js" defer></script>' if script else ""
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
            f"<style>{CSS}</style>{js}</head><body>{body}</body></html>\n")


def _runs_table(runs: list[dict[str, Any]], steps_by_run: dict[str, list[dict[str, Any]]], by: str | None) -> str:
    """Every run, one row each, most telling first; sortable by any column, filtered by verdict, false claim
    and a text search (assets/index.js; without scripts the table is still all there)."""
    head = ["run", "verdict", "false claim", "format", "arm", "task", "steps", "no-effect", "loops", "reward",
            "first blocking step"]
    rows = []
    for i, r in enumerate(runs):
        v = r.get("eval_final_verdict") or ("invalid" if r["status"] != "ok" else "unknown")
        if r["status"] != "ok":
            v = "invalid"
        arm = r.get("config_perceptual_verifier")
        cells = [f'<td><a href="runs/{i}.html">{_e(r["run_id"])}</a></td>',
                 f'<td data-sort="{_RANK.get(v, 4)}">{_badges(r)}</td>',
                 f'<td>{"yes (" + _e(r.get("false_claim_basis") or "referee") + ")" if r.get("false_claim") else ""}'
                 '</td>',
                 f'<td>{_e(r.get("source_format"))}</td>', f'<td>{_e("" if arm is None else arm)}</td>',
                 f'<td>{_e(r.get("task_id") or "")}</td>', f'<td>{_e(r.get("n_steps") or 0)}</td>',
                 f'<td>{_e(r.get("effect_no_effect") or 0)}</td>', f'<td>{_e(r.get("loops") or 0)}</td>',
                 f'<td>{"" if r.get("reward_total") is None else format(r["reward_total"], ".2f")}</td>',
                 f'<td>{_e("" if r.get("reward_first_blocking_step") is None else r["reward_first_blocking_step"])}'
                 '</td>']
        rows.append(f'<tr data-verdict="{_e(v)}" data-claim="{1 if r.get("false_claim") else 0}">{"".join(cells)}</tr>')
    options = "".join(f"<option>{v}</option>" for v in ("pass", "fail", "uncertain", "unknown", "invalid"))
    return ("<h2>Runs</h2><p>"
            '<input id=q type=search placeholder="search run, task, format" aria-label=search> '
            f'<select id=verdict aria-label=verdict><option value="">every verdict</option>{options}</select> '
            '<label><input id=claims type=checkbox> false claims only</label> <span id=shown class=muted></span>'
            "</p><table class=trajcheck id=runs><thead><tr>" + "".join(f"<th>{h}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
            "<p class=muted>Click a column to sort. False claims, uncertain and failed runs come first.</p>")


def _badges(r: dict[str, Any]) -> str:
    v = r.get("eval_final_verdict") or ("invalid" if r["status"] != "ok" else "unknown")
    cls = v if v in ("pass", "fail", "uncertain") else "unknown"
    out = f'<span class="badge {cls}">{_e(v)}</span>'
    if r.get("false_claim"):
        out += f'<span class="badge claim">false claim ({_e(r.get("false_claim_basis") or "referee")})</span>'
    return out


def _story(r: dict[str, Any]) -> str:
    """The run's outcome in words: the claim against the verdict, and a disagreement between sources."""
    v = r.get("eval_final_verdict") or "unknown"
    claim = "claimed success" if r.get("claimed_success") else "did not claim success"
    says = f"The agent {claim}; the final verdict is <b>{_e(v)}</b> (from {_e(r.get('verdict_source') or 'none')})."
    if r.get("false_claim"):
        says += (f" <span class=neg>That claim is false (on the {_e(r.get('false_claim_basis') or 'referee')}'s word)."
                 "</span>")
    if r.get("disagreement_reason"):
        says += f" The sources disagree: {_e(r['disagreement_reason'])}."
    if r.get("claim_reason") and not r.get("claimed_success") and r.get("claim_evidence"):
        says += f" Its last words admit it: <code>{_e(r['claim_evidence'])}</code>."
    return f"<p>{says}</p>" + failure_line(r)


def _run_section(i: int, r: dict[str, Any], steps: list[dict[str, Any]], assets: Path, thumbs: bool = True) -> str:
    parts = [f'<p><a href="../index.html">all runs</a></p><div class=run id="run-{i}"><h3>{_e(r["run_id"])} '
             f'{_badges(r)}</h3>']
    if r["status"] != "ok":
        return "".join(parts) + f"<p class=neg>invalid: {_e(r['error'])}</p></div>"
    parts.append(_story(r))
    parts.append(f"<p><b>task</b> {_e(r['task_id'])} &middot; <b>goal</b> {_e(r['goal'])} &middot; <b>outcome</b> "
                  f"{_e(r['outcome_status'])} &middot; <b>perceptual verifier</b> "
                  f"{_VERIFIER[r['config_perceptual_verifier']]}</p>")
    checks = json.loads(r["contract_checks"]) if r.get("contract_checks") else []
    failed = [c for c in checks if not c["passed"]]
    parts.append(f"<p><b>contract</b> {_e(r['det_verdict'])} {_e(r['contract_name'] or '')}"
                 + "".join(f"<br><code>{_e(c['name'])}: {_e(json.dumps(c['evidence']))[:400]}</code>" for c in failed)
                 + f"<br><b>judge</b> {_e(r['judge_verdict'] or 'none')} {_e(r['judge_model'] or '')} "
                 f"<br><b>evidence</b> {_e(r.get('evidence_verdict') or 'unknown')} "
                 + "".join(f"<br><code>{_e(x)}</code>" for x in r.get("evidence_reasons") or [])
                 + f"<br><b>final</b> {_e(r['eval_final_verdict'])} ({_e(r['verdict_reason'])}, from "
                 f"{_e(r.get('verdict_source') or 'none')})</p>")
    parts.append(rubric_and_judges(r))
    if r.get("lesson_candidate"):
        parts.append(f"<p class=muted>{_e(r['lesson_candidate'])}</p>")
    parts.append(_states_strip(r, steps))
    run_dir = Path(r["run_path"])
    run_dir = run_dir.parent if run_dir.is_file() else run_dir  # a run that is one file of a folder of transcripts
    outside = outside_names(r.get("inputs"))  # frames beside its folder, inside the folder scored
    if not thumbs:
        parts.append("<p class=muted>No thumbnails for this run: only the most telling runs get them "
                     "(raise --max-runs).</p>")
    for s in steps:
        parts.append(_step_html(i, s, run_dir, assets, (r.get("screen_width"), r.get("screen_height")), thumbs,
                                outside))
    parts.append("</div>")
    return "".join(parts)


#: Whether the run's config says the runner had trajcheck's verifier on (config.perceptual_verifier), in words.
_VERIFIER = {True: "on", False: "off", None: "not recorded"}


def _states_strip(r: dict[str, Any], steps: list[dict[str, Any]]) -> str:
    """The screens the run went through, a box per step showing its state: new ones green, returns red with
    the step they went back to."""
    if not any(s.get("state_kind") for s in steps):
        return ""
    boxes = []
    for s in steps:
        kind = s.get("state_kind") or "none"
        title = {"new": "a new screen", "same": "the same screen", "none": "no frame"}.get(
            kind, f"back to the screen of step {s.get('state_returns_to')}")
        label = "-" if s.get("state_id") is None else str(s["state_id"])
        boxes.append(f'<span class="{_e(kind)}" title="step {_e(s["step_index"])}: {_e(title)}">{label}</span>')
    screens = r.get("states_distinct")
    head = (f"<b>states</b> {_e(screens)} screen{'' if screens == 1 else 's'}, "
            f"{100 * (r.get('states_returning') or 0):.0f}% of "
            f"steps going back" + (f", stalled from step {_e(r['stalled_from_step'])}"
                                   if r.get("stalled_from_step") is not None else "")
            + (" <span class=neg>no net progress</span>" if r.get("no_net_progress") else ""))
    return f"<div><p>{head}</p><div class=states>{''.join(boxes)}</div></div>"


def _img(assets: Path, name: str, src: Path | None, **kw: Any) -> str:
    # made once: a pair page shows the thumbnails its runs' pages have
    if src is None or not ((assets / name).exists() or _thumb(src, assets / name, **kw)):
        return "<span class=muted>(no frame)</span>"
    return f'<img src="../assets/{_e(name)}" alt="{_e(name)}" loading="lazy">'


def _cut(assets: Path, name: str, text: Any, limit: int = 600) -> str:
    """A long text cut at ``limit`` characters, with the whole text one click away in its own file."""
    t = "" if text is None else str(text)
    if len(t) <= limit:
        return _e(t)
    (assets / name).write_text(t, "utf-8")
    return (f'{_e(t[:limit])}<a class=muted href="../assets/{_e(name)}">…({len(t) - limit:,} more characters)</a>')


def _screen_html(assets: Path, key: str, post: Path | None, s: dict[str, Any]) -> str:
    """What OCR read of a step's change: a crop of the post frame around the new lines, each line's box drawn,
    and the lines with their boxes and the messages among them beside it."""
    boxes = dict(zip(s["screen_text"] or [], s.get("screen_text_boxes") or []))
    new = [(t, boxes.get(t)) for t in (s.get("screen_text_new") or [])]
    placed = [b for _, b in new if b]
    out = "<br><span class=muted>read on screen (OCR), post frame</span><br>"
    if placed:
        pad = 12
        crop = [max(0, min(b[0] for b in placed) - pad), max(0, min(b[1] for b in placed) - pad),
                max(b[2] for b in placed) + pad, max(b[3] for b in placed) + pad]
        ring = 5  # the drawn box stands off the letters
        out += _img(assets, f"{key}-screen-text.png", post, crop=crop, highlight=[
            min(b[0] for b in placed) - ring, min(b[1] for b in placed) - ring, max(b[2] for b in placed) + ring,
            max(b[3] for b in placed) + ring])
    lines = "".join(f"<br><code>{_e(t)}</code>" + (f" <span class=muted>at [{', '.join(map(str, b))}]</span>"
                                                  if b else "") for t, b in new[:8]) or \
        "<br><span class=muted>nothing new</span>"
    said = "".join(f"<br><span class={'neg' if m.startswith('error') else 'pos'}>{_e(m)}</span>"
                   for m in s.get("screen_messages") or [])
    return f"<div class=screen-text>{out}{lines}{said}</div>"


def _step_html(i: int, s: dict[str, Any], run_dir: Path, assets: Path,
               screen: tuple[Any, Any] = (None, None), thumbs: bool = True,
               outside: frozenset[str] = frozenset()) -> str:
    pre, post = (None if not rel else Path(os.path.realpath(run_dir / rel)) if rel in outside  # scored from there
                 else safe_join(run_dir, rel) for rel in (s["frame_pre"], s["frame_post"]))
    key = f"r{i}-s{s['step_index']}"
    bbox = s["effect_change_bbox"]
    region = s["effect_region_box"]
    point = frame_point(s, screen)
    path, arrow = motion(s, screen)
    if not thumbs:
        pre = post = None
    frames = (_img(assets, f"{key}-pre.jpg", pre, box=region, point=point, path=path, arrow=arrow)
              + _img(assets, f"{key}-post.jpg", post, box=region, highlight=bbox, point=point, path=path,
                     arrow=arrow)) if thumbs else ""
    if region and s["effect_high_risk"] and thumbs:
        frames += ("<br><span class=muted>200x200 region, pre / post</span><br>"
                   + _img(assets, f"{key}-crop-pre.png", pre, crop=region, point=point)
                   + _img(assets, f"{key}-crop-post.png", post, crop=region, highlight=bbox, point=point))
    if s.get("screen_text") is not None and thumbs:
        frames += _screen_html(assets, key, post, s)
    verdict = {True: "<span class=pos>effect seen</span>", False: "<span class=neg>no effect</span>",
               None: "<span class=muted>not checked</span>"}[s["action_effect_observed"]]
    action = _e(s["action_type"]) + (f" ({s['action_x']:g}, {s['action_y']:g})" if s["action_x"] is not None
                                     and s["action_y"] is not None else "")
    for k in ("action_keys", "action_text", "action_url"):
        if s[k]:
            action += f" <code>{_cut(assets, f'{key}-{k}.txt', s[k], 300)}</code>"
    rw = "pos" if (s["reward_score"] or 0) > 0 else "neg" if (s["reward_score"] or 0) < 0 else "muted"
    info = (f"<b>step {s['step_index']}</b><br>{action}<br><span class=muted>"
            f"{_cut(assets, f'{key}-reasoning.txt', s['reasoning'])}</span><br>"
            f"{verdict} <code>{_e(s['effect_reason'])}</code>"
            + (f"<br><span class=warn>{_e(s['effect_feedback'])}</span>" if s["effect_feedback"] else "")
            + "".join(f"<br><span class=muted>{_e(o)}</span>" for o in (s["obs_observations"] or [])[:4])
            + f"<br><span class={rw}>reward {s['reward_score']:+.2f} {_e(s['reward_class'])}</span> "
            f"<code>{_e(', '.join(s['reward_reasons'] or []))}</code>")
    return f"<div class=step><div>{info}</div><div class=frames>{frames}</div></div>"

