"""A failed contract check linked to the step that caused it (pure, deterministic; issue 51, item 4).

A wrong result that only a contract can see (a grid with one cell off, a field holding the wrong value) shows no
error on the screen and no dead action: its first decisive error is the step that put the wrong value there. It is
read from the failed check's evidence (what the check read of the final state: the grid cells that are on and must
not be, the URL, the element texts) and the steps' actions:

| check | the step | holds when |
|---|---|---|
| grid | the last acting step whose point lies in a cell the check forbids and found on (``forbidden_active``) | the check found a forbidden cell on |
| url_matches | the step that moved away from a URL the check's pattern holds (the run's URL held it at that step or before), when no later step came back to one | the run reached the wanted page and left it |
| element_text, text_absent | the last step that typed or selected the value the check found (``element_text``: a ``texts`` item equals it, spaces normalised, case kept; ``text_absent``: it holds the text, case ignored as the check reads it) | the wrong value is one the agent entered |

A check that failed because something is missing (a required cell off, a text absent, a wanted URL never reached)
names no step: an omission has no step that caused it, and the decisive error stays what the other evidence shows
(``not_determined`` without it). Several failed checks: the earliest step (the first error; later ones follow from
it). Without a contract there is no check, and nothing is linked.
"""  # noqa: E501  (the table above is Markdown: one row a line)

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .evidence import NON_ACTING
from . import patterns
from .failuremodes import clip, page_of


@dataclass(frozen=True)
class CheckStep:
    """What the link reads of one step: its action (its point already in frame pixels) and where it ended."""

    index: int
    action_type: str
    point: tuple[float, float] | None = None
    text: str | None = None  # what the action typed or selected
    url_before: str | None = None
    url_after: str | None = None
    frame_pre: str | None = None
    frame_post: str | None = None

    def frames(self) -> str:
        return f"before {self.frame_pre or '-'}, after {self.frame_post or '-'}"


@dataclass(frozen=True)
class FailedCheck:
    """A contract check that failed: its name, type, the check as the contract writes it, and its evidence."""

    name: str
    type: str
    spec: Mapping[str, Any] = field(default_factory=dict)
    evidence: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Link:
    """The step a failed check is linked to, and what shows it."""

    step: int
    evidence: str


def _cell(spec: Mapping[str, Any], col: int) -> tuple[float, float, float, float] | None:
    """The box (left, top, right, bottom) of the grid check's cell ``col`` (1-based) in its target row."""
    try:
        x, y, w, h = (float(v) for v in spec["box"])
        rows, cols, row = int(spec["rows"]), int(spec["cols"]), int(spec["target_row"]) - 1
    except (KeyError, TypeError, ValueError):
        return None
    if rows <= 0 or cols <= 0:
        return None
    cw, ch = w / cols, h / rows
    return x + (col - 1) * cw, y + row * ch, x + col * cw, y + (row + 1) * ch


def _grid(chk: FailedCheck, steps: Sequence[CheckStep]) -> Link | None:
    found: list[Link] = []
    for col in chk.evidence.get("forbidden_active") or ():
        box = _cell(chk.spec, int(col))
        if box is None:
            continue
        hit = [s for s in steps if s.action_type not in NON_ACTING and s.point is not None
               and box[0] <= s.point[0] < box[2] and box[1] <= s.point[1] < box[3]]
        if hit:
            s = hit[-1]  # the last click there left the cell as the check found it
            found.append(Link(s.index, f"{s.action_type} at step {s.index} set cell {col} of the grid, which check "
                                       f"'{chk.name}' forbids ({s.frames()})"))
    return min(found, key=lambda k: k.step) if found else None


def _held(pattern: str, url: str | None) -> bool | None:
    """Whether ``url`` holds the check's pattern; None when no URL is recorded or the pattern is unusable (the
    check itself says so)."""
    if not url:
        return None
    try:
        return patterns.search(pattern, url) is not None
    except (patterns.PatternError, patterns.PatternTimeout):
        return None


def _url(chk: FailedCheck, steps: Sequence[CheckStep]) -> Link | None:
    pattern = chk.spec.get("pattern") or chk.evidence.get("pattern")
    if not pattern:
        return None
    on: str | None = None  # the URL that held the pattern, while the run is known to be on it
    left: tuple[CheckStep, str] | None = None  # the step that moved away from it, and that URL
    for s in steps:
        before, after = _held(str(pattern), s.url_before), _held(str(pattern), s.url_after)
        if before:
            on, left = s.url_before, None
        elif before is False and on is not None:
            on = None  # it moved between two steps: no step is known to have left
        if after:
            on, left = s.url_after, None  # it is (back) on a wanted page: an earlier departure did not last
        elif after is False and on is not None:
            left, on = (s, on), None
    if left is None:
        return None
    s, was = left
    return Link(s.index, f"{s.action_type} at step {s.index} left {page_of(was)}, which check '{chk.name}' wants, "
                         f"and the run never came back ({s.frames()})")


def _same(text: str) -> str:
    return " ".join(text.split())


def _typed(chk: FailedCheck, steps: Sequence[CheckStep]) -> Link | None:
    forbidden = _same(str(chk.spec.get("text") or "")).lower() if chk.type == "text_absent" else ""
    found = {_same(str(t)) for t in chk.evidence.get("texts") or ()} - {""}
    for s in reversed(steps):
        typed = _same(s.text or "")
        if s.action_type in NON_ACTING or not typed:
            continue
        # element_text: the value the check found is what was typed, whole (a short value inside a longer one,
        # "a" in "Jane Doe-Smith", is no cause); text_absent: what was typed holds the text, as the check reads it
        caused = bool(forbidden) and forbidden in typed.lower() if chk.type == "text_absent" else typed in found
        if caused:
            return Link(s.index, f"{s.action_type} at step {s.index} entered '{clip(s.text or '', 40)}', the value "
                                 f"check '{chk.name}' found wrong ({s.frames()})")
    return None


_RULES = {"grid": _grid, "url_matches": _url, "element_text": _typed, "text_absent": _typed}


def link(checks: Sequence[FailedCheck], steps: Sequence[CheckStep]) -> Link | None:
    """The earliest step a failed check is linked to (see the module docstring); None when none is."""
    found = [k for c in checks if (rule := _RULES.get(c.type)) is not None and (k := rule(c, steps)) is not None]
    if not found:
        return None
    best = min(found, key=lambda k: k.step)
    return Link(best.step, clip(f"contract check failed: {best.evidence}"))
