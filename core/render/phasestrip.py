"""The report's progress strip: a run's phases side by side, each as wide as its steps, each a link to its first
step's frames on the run page (``#step-N``), with the checkpoints marked where each first held.

The phases, places and checkpoints are :func:`trajcheck.analyzers.phases.analyze`'s, from the ledger rows the
report reads (``trajcheck timeline --phases`` draws the same in a terminal). A place keeps its colour and letter
wherever it recurs, so a return to a page reads as the same colour again. Every string from a run (a URL, a title,
a check's name) is written through :func:`trajcheck.render.htmltext.escape`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..analyzers.checkpoints import Checkpoint
from ..analyzers.phases import Phases, analyze
from .htmltext import escape as _e

CSS = """
.phasestrip{display:flex;height:22px;margin:6px 0 2px;border:1px solid #ccc;border-radius:3px;overflow:hidden}
.phasestrip a{min-width:2px;overflow:hidden;font-size:11px;line-height:22px;text-align:center;color:#1d1d1f;
text-decoration:none;border-right:1px solid #fff}.phasestrip a:hover{outline:2px solid #0969da}
.cpmarks{position:relative;height:16px;margin-bottom:6px}.cpmarks a{position:absolute;font-size:11px;
transform:translateX(-50%);text-decoration:none}
"""


def _hue(place: int) -> str:
    return f"hsl({(place * 47) % 360},60%,82%)"


def _where(ph: Phases, place: int) -> str:
    p = ph.places[place]
    if ph.cut_by == "screen":
        return f"screen {p.screen}"
    return " · ".join(x for x in (p.page, p.title) if x) or "no page or title recorded"


#: How a checkpoint's step reads, by its basis (cli/phasetext.py says the same in a terminal).
_BASIS = {"url": "first held at {at} (its URL)", "screen_text": "first held at {at} (read on its screen)",
          "answer": "held at {at} (the answer given)", "parts": "held by {at} (each part had held)",
          "final_frame": "held at the end (read only on the final frame)"}


def _checkpoint(i: int, c: Checkpoint) -> str:
    at = "" if c.step is None else f'<a href="#step-{c.step}">step {c.step}</a>'
    said = "held at {at} (a part held)" if c.kind == "any" and c.basis == "parts" else \
        _BASIS.get(c.basis or "", "undecided: its evidence is missing" if c.result == "undecided"
                   else "never held where the evidence was read")
    end = f"; {_e(c.result)} at the end" if c.step is not None and c.result != "pass" else ""
    return (f'<li style="margin-left:{16 * c.depth}px">{i + 1}. {_e(c.kind)} {_e(c.name)}: '
            f"{said.format(at=at)}{end}</li>")


def phase_strip(run: Mapping[str, Any], steps: Sequence[Mapping[str, Any]]) -> str:
    """The strip of ``run``'s phases with its checkpoints, as HTML; empty for a run without steps."""
    ph = analyze(run, steps)
    if not ph.phases or ph.first_step is None or ph.last_step is None:
        return ""
    boxes = []
    for p in ph.phases:
        span = f"step {p.first_step}" if p.steps == 1 else f"steps {p.first_step}-{p.last_step}"
        new = f", {p.new_screens} new screen{'s' * (p.new_screens != 1)}" if p.new_screens else ""
        back = f", {p.returns} going back" if p.returns else ""
        boxes.append(f'<a href="#step-{p.first_step}" style="flex-grow:{p.steps};background:{_hue(p.place)}" '
                     f'title="{_e(span)}{new}{back}: {_e(_where(ph, p.place))}">{_e(p.letter)}</a>')
    width = max(1, ph.last_step - ph.first_step + 1)
    marks = "".join(f'<a href="#step-{c.step}" style="left:{100 * (c.step - ph.first_step + 0.5) / width:.2f}%" '
                    f'title="{_e(c.name)}: first held at step {c.step}">{i + 1}</a>'
                    for i, c in enumerate(ph.checkpoints) if c.step is not None)
    last = ("no step advanced (no new screen, no high-risk effect, no checkpoint)" if ph.last_progress_step is None
            else f'progress last advanced at <a href="#step-{ph.last_progress_step}">step {ph.last_progress_step}</a>'
                 f" ({_e(ph.last_progress)})")
    if ph.not_kept:  # new screens a run with no net progress did not keep: no advance (analyzers/phases.py)
        last += (f"; {len(ph.not_kept)} new screen{'s' * (len(ph.not_kept) != 1)} from step {ph.stalled_from_step} "
                 "on not kept (no net progress)")
    head = (f"<b>phases</b> {len(ph.phases)} phase{'s' * (len(ph.phases) != 1)} in {len(ph.places)} "
            f"place{'s' * (len(ph.places) != 1)} ({'page or title' if ph.cut_by == 'page_title' else 'screen'}), "
            f"{ph.screens_reached} screen{'s' * (ph.screens_reached != 1)} reached; {last}")
    label = ("<p class=muted>The run's phases side by side, each as wide as its steps: a phase ends where the page "
             "or title (else the screen) changes; a colour and letter a place, the same again where the run comes "
             "back; click a phase for its first step, a number for the step where that checkpoint first held.</p>")
    cps = ("<ol class=muted style='list-style:none;padding-left:0'>"
           + "".join(_checkpoint(i, c) for i, c in enumerate(ph.checkpoints)) + "</ol>") if ph.checkpoints else ""
    return (f"<div><p>{head}</p>{label}<div class=phasestrip>{''.join(boxes)}</div>"
            f"<div class=cpmarks>{marks}</div>{cps}</div>")
