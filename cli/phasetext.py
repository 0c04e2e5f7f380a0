"""`trajcheck timeline --phases`: a run's progress timeline on one screen, however long the run.

The result of :func:`trajcheck.phases` drawn in at most ``height`` lines of at most ``width`` characters: a
header, a strip (a column per step, or per equal stretch of steps when the run is longer than the strip is wide),
then the phases (or, when they do not fit, the places, the most visited first) and the checkpoints. What does
not fit is counted on a last line ("... 12 more places, 80 steps"), never dropped unsaid. Every string came from
a run: drawn as ``Text``, never read as markup, its control codes made visible (:func:`cleaned`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.text import Text

from .common import cleaned

#: The label column before the strip ("advance  ").
LABEL = 9
#: The marks of the checkpoints in the strip and in their list, in order; past them, ``*``.
MARKS = "123456789abcdefghijklmnopqrstuvwxyz"
#: Lines kept for the phases or places when checkpoints compete for the screen.
MIN_PLACE_LINES = 8


def _n(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _buckets(first: int, last: int, cols: int) -> list[tuple[int, int]]:
    """The strip's columns: ``cols`` stretches of step indices, equal but for rounding, covering first..last."""
    span = last - first + 1
    n = max(1, min(cols, span))
    return [(first + span * i // n, first + span * (i + 1) // n - 1) for i in range(n)]


def _col(step: int, first: int, last: int, n: int) -> int:
    return min(n - 1, max(0, (step - first) * n // max(1, last - first + 1)))


def strip(data: dict[str, Any], cols: int) -> list[tuple[str, str]]:
    """The strip's rows as (label, characters): the steps' axis, the place each column spent most steps in, the
    columns whose steps advanced (``+``), and the checkpoints' marks where each first held."""
    first, last = data["first_step"], data["last_step"]
    cuts = _buckets(first, last, cols)
    n = len(cuts)
    place = []
    k = 0
    phases = data["phases"]
    for lo, hi in cuts:  # the place most steps of the column were in (phases are in step order)
        count: Counter[str] = Counter()
        while k < len(phases) and phases[k]["last_step"] < lo:
            k += 1
        j = k
        while j < len(phases) and phases[j]["first_step"] <= hi:
            p = phases[j]
            count[p["letter"]] += min(hi, p["last_step"]) - max(lo, p["first_step"]) + 1
            j += 1
        place.append(count.most_common(1)[0][0] if count else " ")
    advance = [" "] * n
    for s in data["advanced"]:
        advance[_col(s, first, last, n)] = "+"
    marks = [" "] * n
    for i, c in enumerate(data["checkpoints"]):
        if c["step"] is not None:
            at = _col(c["step"], first, last, n)
            marks[at] = "*" if marks[at] != " " or i >= len(MARKS) else MARKS[i]
    axis = str(first).ljust(n)
    axis = (axis[: n - len(str(last))] + str(last)) if n > len(str(first)) + len(str(last)) else str(first)
    rows = [("steps", axis), ("place", "".join(place)), ("advance", "".join(advance))]
    if any(m != " " for m in marks):
        rows.append(("checks", "".join(marks)))
    return rows


def _where(p: dict[str, Any]) -> str:
    if p.get("screen") is not None or (p.get("page") is None and p.get("title") is None):
        return f"screen {p.get('screen')}"
    return " · ".join(x for x in (p.get("page"), p.get("title")) if x)


def _phase_line(ph: dict[str, Any], place: dict[str, Any]) -> str:
    span = f"{ph['first_step']}-{ph['last_step']}" if ph["steps"] > 1 else f"{ph['first_step']}"
    new = f" +{ph['new_screens']}" if ph["new_screens"] else ""
    back = f" <{ph['returns']}" if ph["returns"] else ""
    return f"  {ph['letter']} {span:>9} {ph['steps']:>3}{new}{back}  {_where(place)}"


def _place_line(p: dict[str, Any]) -> str:
    new = f" +{p['new_screens']}" if p["new_screens"] else ""
    return f"  {p['letter']} {p['steps']:>4} steps {p['visits']:>3}x from {p['first_step']}{new}  {_where(p)}"


#: How a checkpoint's step reads, by its basis.
_BASIS = {"url": "first held at step {n} (its URL)", "screen_text": "first held at step {n} (read on its screen)",
          "answer": "held at step {n} (the answer given)", "parts": "held by step {n} (each part had held)",
          "final_frame": "held at the end (read only on the final frame)"}


def _checkpoint_line(i: int, c: dict[str, Any]) -> str:
    mark = MARKS[i] if i < len(MARKS) else "*"
    basis = c["basis"]
    if c["kind"] == "any" and basis == "parts":
        said = "held at step {n} (a part held)"
    else:
        said = _BASIS.get(basis or "", "never held where the evidence was read")
    if basis is None and c["result"] == "undecided":
        said = "undecided: its evidence is missing"
    said = said.format(n=c["step"])
    if c["step"] is not None and c["result"] != "pass":
        said += f"; {c['result']} at the end"
    return f"  {mark} {'  ' * c['depth']}{c['kind']} {c['name']}: {said}"


def _more(lines: list[str], budget: int, what: str) -> list[str]:
    """``lines`` cut to ``budget``, the last kept line saying how many more there were."""
    if len(lines) <= budget:
        return lines
    keep = max(0, budget - 1)
    return lines[:keep] + [f"  ... {len(lines) - keep} more {what}"]


def render(data: dict[str, Any], width: int = 80, height: int = 50) -> Text:
    """The timeline in at most ``height`` lines of at most ``width`` characters (the module docstring)."""
    data = cleaned(data)
    lines: list[tuple[str, str]] = []  # (text, style)
    head = (f"run {data['run_id']}  {_n(data['n_steps'], 'step')}  {_n(len(data['phases']), 'phase')} in "
            f"{_n(len(data['places']), 'place')}  {_n(data['screens_reached'], 'screen')} reached")
    lines.append((head, "bold"))
    if data["last_progress_step"] is not None:
        said = f"progress last advanced at step {data['last_progress_step']} ({data['last_progress']})"
    else:
        said = "no step advanced: no new screen, no high-risk effect, no checkpoint"
    stalled = f"stalled from step {data['stalled_from_step']}" if data["stalled_from_step"] is not None else ""
    if stalled and data.get("not_kept"):  # new screens, but no net progress: not advances (analyzers/phases.py)
        stalled += f" ({_n(len(data['not_kept']), 'new screen')} from it on not kept)"
    if stalled and len(said) + 2 + len(stalled) <= width:
        said, stalled = f"{said}; {stalled}", ""
    lines += [(said, "")] + ([(stalled, "")] if stalled else [])
    if not data["phases"]:
        return _join(lines, width)
    lines.append(("", ""))
    for label, row in strip(data, width - LABEL):
        lines.append((f"{label:<{LABEL}}{row}", "dim" if label == "steps" else ""))
    cps = data["checkpoints"]
    cp_lines = [_checkpoint_line(i, c) for i, c in enumerate(cps)]
    ph_lines = [_phase_line(ph, data["places"][ph["place"]]) for ph in data["phases"]]
    free = height - len(lines) - 2 - (2 if cps else 0)  # the headings and a blank line before each section
    room = max(min(MIN_PLACE_LINES, free), free - len(cp_lines))
    if len(ph_lines) <= room:
        lines += [("", ""), ("phases  (place, steps, how many, +new screens, <returns, page · title)", "bold")]
        lines += [(x, "") for x in ph_lines]
        used = len(ph_lines)
    else:
        places = sorted(data["places"], key=lambda p: (-p["steps"], p["first_step"]))
        lines += [("", ""), ("places  (most steps first: steps, visits, first step, +new screens, page · title)",
                                   "bold")]
        shown = _more([_place_line(p) for p in places], room, "places")
        if len(shown) < len(places):
            rest = sum(p["steps"] for p in places[len(shown) - 1:])
            shown[-1] += f", {rest} steps"
        lines += [(x, "") for x in shown]
        used = len(shown)
    if cps:
        lines += [("", ""), ("checkpoints  (the step each contract node first held)", "bold")]
        lines += [(x, "") for x in _more(cp_lines, max(1, free - used), "checkpoints")]
    return _join(lines[:height], width)


def _join(lines: list[tuple[str, str]], width: int) -> Text:
    out = Text("")
    for i, (line, style) in enumerate(lines):
        out.append(("\n" if i else "") + _fit(line, width), style=style)
    return out
