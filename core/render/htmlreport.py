"""A self-contained static HTML report: tables, a chart, and per run a visual timeline.

``index.html`` lists every run (sortable, filtered by verdict and false claim, with a
text search: ``assets/index.js``, trajcheck's own script, no library and no network);
``runs/<name>.html`` tells one run's story (the name is the run id's safe form,
:func:`trajcheck.render.reportfiles.page_name`). Everything that comes from a recorded run
(reasoning, URLs, DOM text, run ids) is written through :func:`trajcheck.render.htmltext.escape`
(control characters and bidirectional overrides made visible as the terminal shows them, then
``html.escape``), and no script reads it. Texts
longer than a few hundred characters are cut, with the whole text in its own file
one click away. Over the thumbnails (:mod:`trajcheck.media.thumbs`), an SVG marks where the
action aimed (a magenta ring), the region the verifier hashed (blue) and the changed box (red)
(:mod:`trajcheck.render.marks`). The pages are written by :mod:`trajcheck.render.reportbuild`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..base.box import Box
from ..media.thumbs import factor, thumb_size
from .evidencetext import check_sentence, process_sentence
from .failuremodes import failure_line
from .htmltext import escape as _e
from .marks import Marks, shot
from .phasestrip import CSS as PHASE_CSS, phase_strip
from .reportfiles import Output, page_name
from .reportgeometry import frame_point, motion
from .reportwork import Images, frame_paths, screen_boxes, screen_crop
from .judgespage import run_conflicts
from .rubrichtml import rubric_and_judges


CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d1d1f;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table.trajcheck{border-collapse:collapse;margin:8px 0}table.trajcheck td,table.trajcheck th{border:1px solid #ddd;
padding:3px 8px;text-align:right}table.trajcheck td:first-child,table.trajcheck th:first-child{text-align:left}
caption{caption-side:bottom;color:#666;font-size:12px;text-align:left}
.run{border:1px solid #ddd;border-radius:6px;padding:12px;margin:16px 0}
.badge{display:inline-block;border-radius:4px;padding:1px 6px;margin-right:4px;font-size:12px;color:#fff}
.pass{background:#1a7f37}.fail{background:#cf222e}.uncertain{background:#bf8700}.unknown{background:#6e7781}
.damage{background:#953800}
.claim{background:#8250df}.step{display:grid;grid-template-columns:220px 1fr;gap:8px;border-top:1px solid #eee;
padding:8px 0}.shot{position:relative;display:inline-block;margin:0 6px 6px 0;border:1px solid #ccc;
vertical-align:top;max-width:100%}.shot img{display:block;max-width:100%;height:auto}.shot svg{position:absolute;
left:0;top:0;width:100%;height:100%;pointer-events:none}.muted{color:#666}
.warn{color:#9a6700}.neg{color:#cf222e}.pos{color:#1a7f37}code{font-size:12px}
#runs td,#runs th{text-align:left}#runs th{cursor:pointer;user-select:none}
#runs th[data-dir=asc]::after{content:" \\25B2"}#runs th[data-dir=desc]::after{content:" \\25BC"}
.states{display:flex;gap:2px;flex-wrap:wrap;margin:6px 0}.states span{min-width:22px;text-align:center;
border-radius:3px;font-size:11px;padding:1px 3px;border:1px solid #ccc}.states .new{background:#dafbe1}
.states .return{background:#ffebe9;border-color:#cf222e;font-weight:bold}.states .same{background:#f6f8fa}
table.pairs td,table.pairs th{vertical-align:top;text-align:left}table.pairs .side{width:48%}
.pairs .step{grid-template-columns:1fr}.pairs .frames .shot{max-width:calc(50% - 8px)}tr.diverge td{background:#ffebe9}
""" + PHASE_CSS


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


def _page(title: str, body: str, root: str, script: bool = False) -> str:
    js = f'<script src="{root}assets/index.js" defer></script>' if script else ""
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
            f"<style>{CSS}</style>{js}</head><body>{body}</body></html>\n")


def _runs_table(runs: list[dict[str, Any]], steps_by_run: dict[str, list[dict[str, Any]]], by: str | None) -> str:
    """Every run, one row each, most telling first; sortable by any column, filtered by verdict, false claim
    and a text search (assets/index.js; without scripts the table is still all there)."""
    head = ["run", "verdict", "false claim", "damage", "format", "arm", "task", "steps", "no-effect", "loops",
            "reward", "process", "first blocking step", "contract score"]
    rows = []
    for r in runs:
        v = r.get("eval_final_verdict") or ("invalid" if r["status"] != "ok" else "unknown")
        if r["status"] != "ok":
            v = "invalid"
        arm = r.get("config_perceptual_verifier")
        # a run that did not pass opens at its first decisive error (issue 51), its before and after frames
        at = "" if r.get("decisive_step") is None else f'#step-{int(r["decisive_step"])}'
        cells = [f'<td><a href="runs/{_e(page_name(r["run_id"]))}.html{at}">{_e(r["run_id"])}</a></td>',
                 f'<td data-sort="{_RANK.get(v, 4)}">{_badges(r)}</td>',
                 f'<td>{"yes (" + _e(r.get("false_claim_basis") or "referee") + ")" if r.get("false_claim") else ""}'
                 '</td>', f'<td>{_damage_badge(r)}</td>',
                 f'<td>{_e(r.get("source_format"))}</td>', f'<td>{_e(_lower(arm))}</td>',
                 f'<td>{_e(r.get("task_id") or "")}</td>', f'<td>{_e(r.get("n_steps") or 0)}</td>',
                 f'<td>{_e(r.get("effect_no_effect") or 0)}</td>', f'<td>{_e(r.get("loops") or 0)}</td>',
                 f'<td>{"" if r.get("reward_total") is None else format(r["reward_total"], ".2f")}</td>',
                 f'<td>{"" if r.get("process_score") is None else format(r["process_score"], ".2f")}</td>',
                 f'<td>{_e("" if r.get("reward_first_blocking_step") is None else r["reward_first_blocking_step"])}'
                 '</td>',
                 # the contract's partial credit (runs.contract_score): null without a contract or a decided check
                 f'<td>{"" if r.get("contract_score") is None else format(r["contract_score"], ".2f")}</td>']
        rows.append(f'<tr data-verdict="{_e(v)}" data-claim="{1 if r.get("false_claim") else 0}" '
                    f'data-damage="{_e(r.get("damage") or "")}">{"".join(cells)}</tr>')
    options = "".join(f"<option>{v}</option>" for v in ("pass", "fail", "uncertain", "unknown", "invalid"))
    return ("<h2>Runs</h2><p>"
            '<input id=q type=search placeholder="search run, task, format" aria-label=search> '
            f'<select id=verdict aria-label=verdict><option value="">every verdict</option>{options}</select> '
            '<label><input id=claims type=checkbox> false claims only</label> <span id=shown class=muted></span>'
            "</p><table class=trajcheck id=runs><thead><tr>" + "".join(f"<th>{h}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
            "<p class=muted>Click a column to sort. False claims, uncertain and failed runs come first.</p>")


def _lower(v: Any) -> str:
    """A value as every other table writes it: true/false in lower case (JSON's), nothing for null."""
    if v is None:
        return ""
    return str(v).lower() if isinstance(v, bool) else str(v)


def _badges(r: dict[str, Any]) -> str:
    v = r.get("eval_final_verdict") or ("invalid" if r["status"] != "ok" else "unknown")
    cls = v if v in ("pass", "fail", "uncertain") else "unknown"
    out = f'<span class="badge {cls}">{_e(v)}</span>'
    if r.get("false_claim"):
        out += f'<span class="badge claim">false claim ({_e(r.get("false_claim_basis") or "referee")})</span>'
    return out


def _damage_badge(r: dict[str, Any]) -> str:
    """A damaged run's badge (runs.damage), its evidence as the tooltip; nothing for an undamaged run."""
    if not r.get("damage"):
        return ""
    return f'<span class="badge damage" title="{_e(r.get("damage_evidence") or "")}">{_e(r["damage"])}</span>'


def _damage_line(r: dict[str, Any]) -> str:
    """The run page's line on its damage: the kind and the evidence it rests on, beside the verdict, kept."""
    if not r.get("damage"):
        return ""
    return (f"<p class=warn><b>damage</b> {_damage_badge(r)} {_e(r.get('damage_evidence') or '')} "
            "<span class=muted>(not the agent's doing: the verdict is kept, and <code>trajcheck redo</code> lists "
            "the run to run again)</span></p>")


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


def render_run(r: dict[str, Any], steps: list[dict[str, Any]], images: Images, out: Output, thumbs: bool) -> None:
    """Put one run's page (``runs/<name>.html``) and its long texts into ``out``."""
    body = _run_section(r, steps, images, out, thumbs)
    out.put(f"runs/{page_name(r['run_id'])}.html", _page(f"{r['run_id']} - trajcheck", body, "../"))


def _run_section(r: dict[str, Any], steps: list[dict[str, Any]], images: Images, out: Output,
                 thumbs: bool = True) -> str:
    name = page_name(r["run_id"])
    parts = [f'<p><a href="../index.html">all runs</a></p><div class=run id="run-{_e(name)}"><h3>{_e(r["run_id"])} '
             f'{_badges(r)}</h3>']
    if r["status"] != "ok":
        return "".join(parts) + f"<p class=neg>invalid: {_e(r['error'])}</p></div>"
    parts.append(_story(r))
    parts.append(_damage_line(r))
    parts.append(f"<p><b>task</b> {_e(r['task_id'])} &middot; <b>goal</b> {_e(r['goal'])} &middot; <b>outcome</b> "
                  f"{_e(r['outcome_status'])} &middot; <b>perceptual verifier</b> "
                  f"{_VERIFIER[r['config_perceptual_verifier']]}</p>")
    if r.get("actions_after_last_frame"):  # issue 48: the final state those actions led to was not seen
        parts.append(f"<p class=neg>{_e(r['actions_after_last_frame'])} action(s) after the last screenshot: the "
                     "final state was not seen</p>")
    checks = json.loads(r["contract_checks"]) if r.get("contract_checks") else []
    failed = [c for c in checks if not c["passed"]]
    parts.append(f"<p><b>contract</b> {_e(r['det_verdict'])} {_e(r['contract_name'] or '')}"
                 + "".join(f"<br>{_e(c['name'])}: {_e(check_sentence(c))}" for c in failed)
                 + f"<br><b>judge</b> {_e(r['judge_verdict'] or 'none')} {_e(r['judge_model'] or '')} "
                 f"<br><b>evidence</b> {_e(r.get('evidence_verdict') or 'unknown')} "
                 + "".join(f"<br><code>{_e(x)}</code>" for x in r.get("evidence_reasons") or [])
                 + f"<br><b>final</b> {_e(r['eval_final_verdict'])} ({_e(r['verdict_reason'])}, from "
                 f"{_e(r.get('verdict_source') or 'none')})</p>")
    if r.get("decisive_kind"):  # where the run went wrong (docs/failures.md), linked to the step's frames
        step = r.get("decisive_step")
        at = "" if step is None else f' at <a href="#step-{int(step)}">step {int(step)}</a>'
        control = f" ({_e(r['decisive_control'])})" if r.get("decisive_control") else ""
        parts.append(f"<p><b>decisive error</b> {_e(r['decisive_kind'])}{at}{control}: "
                     f"{_e(r.get('decisive_evidence') or '')}</p>")
    if r.get("process_evidence"):  # how it went about it, beside the outcome (docs/failures.md)
        parts.append(f"<p><b>process score</b> {_e(process_sentence(r.get('process_score'), r['process_evidence']))}"
                     "</p>")
    parts.append(rubric_and_judges(r))
    parts.append(run_conflicts(r, steps))
    if r.get("lesson_candidate"):
        parts.append(f"<p class=muted>{_e(r['lesson_candidate'])}</p>")
    parts.append(phase_strip(r, steps))  # the progress timeline (issue 51): phases, links to their steps
    parts.append(_states_strip(r, steps))
    if not thumbs:
        parts.append("<p class=muted>No thumbnails for this run: only the most telling runs get them "
                     "(raise --max-runs).</p>")
    for s in steps:
        # an anchor per step: the judges' conflicts link to the step that shows them (render.judgespage)
        parts.append(f'<div id="step-{s["step_index"]}">{_step_html(name, r, s, images, out, thumbs)}</div>')
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
    label = ("<p class=muted>The screen each step ends on, a box a step: screens numbered in the order first seen "
             "(the same number, the same screen), green a new one, red back to one seen before, - no frame; hover a "
             "box for its step.</p>")
    return f"<div><p>{head}</p>{label}<div class=states>{''.join(boxes)}</div></div>"


def _img(images: Images, src: Path | None, alt: str, marks: Marks) -> str:
    """A frame's thumbnail (shared by every step and page that shows the frame) with the step's marks over it."""
    t = images.thumb(src)
    if t is None:
        return "<span class=muted>(no frame)</span>"
    rel, fw, fh = t
    k, size = factor(fw), thumb_size(fw, fh)
    return shot("../" + rel, size, alt, marks, (0, 0, size[0] * k, size[1] * k), k)


def _crop(images: Images, src: Path | None, box: Box | list[int], alt: str, marks: Marks) -> str:
    """A crop of a frame at its full size (frame pixels), with the step's marks over it."""
    rel = images.crop(src, box)
    if rel is None:
        return "<span class=muted>(no frame)</span>"
    return shot("../" + rel, (box[2] - box[0], box[3] - box[1]), alt, marks, box, 1.0)


def _cut(out: Output, rel: str, text: Any, limit: int = 600) -> str:
    """A long text cut at ``limit`` characters, with the whole text one click away in its own file ``rel``."""
    t = "" if text is None else str(text)
    if len(t) <= limit:
        return _e(t)
    out.put(rel, t)
    return (f'{_e(t[:limit])}<a class=muted href="../{_e(rel)}">…({len(t) - limit:,} more characters)</a>')


def _screen_html(images: Images, post: Path | None, s: dict[str, Any]) -> str:
    """What OCR read of a step's change: a crop of the post frame around the new lines, each line's box drawn,
    and the lines with their boxes and the messages among them beside it."""
    boxes = dict(zip(s["screen_text"] or [], s.get("screen_text_boxes") or []))
    new = [(t, boxes.get(t)) for t in (s.get("screen_text_new") or [])]
    placed = screen_boxes(s)
    crop = screen_crop(s)
    out = "<br><span class=muted>read on screen (OCR), post frame</span><br>"
    if placed and crop is not None:
        ring = 5  # the drawn box stands off the letters
        out += _crop(images, post, crop, "screen text", Marks(highlight=[
            min(b[0] for b in placed) - ring, min(b[1] for b in placed) - ring, max(b[2] for b in placed) + ring,
            max(b[3] for b in placed) + ring]))
    lines = "".join(f"<br><code>{_e(t)}</code>" + (f" <span class=muted>at [{', '.join(map(str, b))}]</span>"
                                                  if b else "") for t, b in new[:8]) or \
        "<br><span class=muted>nothing new</span>"
    said = "".join(f"<br><span class={'neg' if m.startswith('error') else 'pos'}>{_e(m)}</span>"
                   for m in s.get("screen_messages") or [])
    return f"<div class=screen-text>{out}{lines}{said}</div>"


def _step_html(name: str, r: dict[str, Any], s: dict[str, Any], images: Images, out: Output,
               thumbs: bool = True) -> str:
    """One step of run ``r`` (its page named ``name``): what it did and why, and its frames with the marks."""
    pre, post = frame_paths(r, s)
    key = f"assets/text/{name}-s{s['step_index']}"
    bbox = s["effect_change_bbox"]
    region = s["effect_region_box"]
    screen = (r.get("screen_width"), r.get("screen_height"))
    point = frame_point(s, screen)
    path, arrow = motion(s, screen)
    frames = ""
    if thumbs:
        frames = (_img(images, pre, "pre", Marks(box=region, point=point, path=path, arrow=arrow))
                  + _img(images, post, "post", Marks(box=region, highlight=bbox, point=point, path=path,
                                                     arrow=arrow)))
        if region and s["effect_high_risk"]:
            frames += ("<br><span class=muted>200x200 region, pre / post</span><br>"
                       + _crop(images, pre, region, "region pre", Marks(point=point))
                       + _crop(images, post, region, "region post", Marks(highlight=bbox, point=point)))
        if s.get("screen_text") is not None:
            frames += _screen_html(images, post, s)
    verdict = {True: "<span class=pos>effect seen</span>", False: "<span class=neg>no effect</span>",
               None: "<span class=muted>not checked</span>"}[s["action_effect_observed"]]
    action = _e(s["action_type"]) + (f" ({s['action_x']:g}, {s['action_y']:g})" if s["action_x"] is not None
                                     and s["action_y"] is not None else "")
    for k in ("action_keys", "action_text", "action_url"):
        if s[k]:
            action += f" <code>{_cut(out, f'{key}-{k}.txt', s[k], 300)}</code>"
    rw = "pos" if (s["reward_score"] or 0) > 0 else "neg" if (s["reward_score"] or 0) < 0 else "muted"
    info = (f"<b>step {s['step_index']}</b><br>{action}<br><span class=muted>"
            f"{_cut(out, f'{key}-reasoning.txt', s['reasoning'])}</span><br>"
            f"{verdict} <code>{_e(s['effect_reason'])}</code>"
            + (f"<br><span class=warn>{_e(s['effect_feedback'])}</span>" if s["effect_feedback"] else "")
            + "".join(f"<br><span class=muted>{_e(o)}</span>" for o in (s["obs_observations"] or [])[:4])
            + f"<br><span class={rw}>reward {s['reward_score']:+.2f} {_e(s['reward_class'])}</span> "
            f"<code>{_e(', '.join(s['reward_reasons'] or []))}</code>")
    return f"<div class=step><div>{info}</div><div class=frames>{frames}</div></div>"
