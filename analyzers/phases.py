"""Progress over long runs: a run cut into phases, the screens each reached, and where progress last advanced (pure).

A *phase* is a stretch of consecutive steps spent in one *place*: the page (the URL after the step, without its
fragment) and the page's or window's title, as the log records them. A phase ends where either changes. A run
that records neither has no place but its screens: its phases are cut where the screen (the step's state,
:mod:`trajcheck.analyzers.states`) changes. A step that records no URL and no title stays in the place before
it: missing evidence is no change. A place seen again later is the same place (the same letter in the strip).

Each phase says the screens (states) its steps ended on and how many of them were new to the run. *Progress*
last advanced at the last step that reached a new screen or had a high-risk action's effect observed (as the
decisive error ``stall`` reads it, :mod:`trajcheck.analyzers.decisive`), or where a checkpoint first held. A new
screen the run did not keep is no advance: in a run with no net progress (``runs.no_net_progress``), one reached
at or after ``stalled_from_step``, as the process score counts it (:mod:`trajcheck.analyzers.process`); it stays
among its phase's screens (``not_kept`` lists its step).

The *checkpoints* are the nodes of the run's contract (a rubric tree's nodes; a flat contract's checks), each
with the step at which the evidence already read shows it first held (:mod:`trajcheck.analyzers.checkpoints`).

Computed from ledger rows (the steps table's ``step_index``, ``url_after``, ``title_after``, ``state_id``,
``state_kind``, ``effect_high_risk``, ``action_effect_observed``, ``screen_text``, ``action_type``; the runs
table's ``goal``, ``contract_tree``, ``contract_checks``, ``stalled_from_step``, ``no_net_progress``), so
``trajcheck timeline --phases`` works on any ledger.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .checkpoints import Checkpoint, checkpoints

#: The letters of the places, in the order first seen; a place past the last letter is drawn ``*``.
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Place:
    """Where a phase's steps are: a page and a title as the log records them (either may be None), or, for a
    run that records neither, a screen (``screen``, the state id)."""

    letter: str
    page: str | None
    title: str | None
    screen: int | None
    first_step: int
    steps: int  # steps spent here, over every visit
    visits: int  # phases spent here
    new_screens: int  # screens first reached here

    def to_json(self) -> dict[str, Any]:
        return {"letter": self.letter, "page": self.page, "title": self.title, "screen": self.screen,
                "first_step": self.first_step, "steps": self.steps, "visits": self.visits,
                "new_screens": self.new_screens}


@dataclass(frozen=True)
class Phase:
    """Consecutive steps in one place: from ``first_step`` to ``last_step`` (step indices, both in it)."""

    place: int  # its place's position in Phases.places
    letter: str  # its place's letter
    first_step: int
    last_step: int
    steps: int
    cut: str  # what changed where it begins: start, page, title, page+title or screen
    screens: tuple[int, ...]  # the states its steps ended on, in the order first seen in it
    new_screens: int  # of those, screens the run had not seen before
    returns: int  # steps that went back to a screen seen before (state_kind return)

    def to_json(self) -> dict[str, Any]:
        return {"place": self.place, "letter": self.letter, "first_step": self.first_step,
                "last_step": self.last_step,
                "steps": self.steps, "cut": self.cut, "screens": list(self.screens),
                "new_screens": self.new_screens, "returns": self.returns}


@dataclass(frozen=True)
class Phases:
    """A run's progress timeline (see the module docstring)."""

    run_id: str
    n_steps: int
    first_step: int | None
    last_step: int | None
    cut_by: str  # page_title (the run records a URL or a title) or screen (it records neither) or none (no steps)
    phases: tuple[Phase, ...]
    places: tuple[Place, ...]
    screens_reached: int  # distinct screens the run's steps ended on
    advanced: tuple[int, ...]  # the steps that advanced: reached a new screen it kept, or a high-risk action's effect
    #: The last step that advanced (as the decisive error's ``stall`` reads it: a new screen, or a high-risk
    #: action's observed effect), or where a checkpoint first held, whichever is later.
    last_progress_step: int | None
    last_progress: str | None  # what advanced there: "a new screen", "a high-risk effect", "checkpoint N"
    stalled_from_step: int | None  # as the runs table has it (analyzers/states.py)
    checkpoints: tuple[Checkpoint, ...]
    #: The steps that reached a new screen the run did not keep: at or after ``stalled_from_step`` in a run with no
    #: net progress (``runs.no_net_progress``), as the process score counts them (analyzers/process.py).
    not_kept: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "n_steps": self.n_steps, "first_step": self.first_step,
                "last_step": self.last_step, "cut_by": self.cut_by,
                "phases": [p.to_json() for p in self.phases], "places": [p.to_json() for p in self.places],
                "screens_reached": self.screens_reached, "advanced": list(self.advanced),
                "last_progress_step": self.last_progress_step,
                "last_progress": self.last_progress, "stalled_from_step": self.stalled_from_step,
                "checkpoints": [c.to_json() for c in self.checkpoints], "not_kept": list(self.not_kept)}


def page_of(url: str | None) -> str | None:
    """The page a URL shows: the URL without its fragment (as the states are told apart)."""
    return url.split("#", 1)[0] if url else None


def _keys(steps: Sequence[Row]) -> tuple[str, list[tuple[Any, ...]]]:
    """Each step's place key, and what cuts: (page, title), a part the step does not record carried over from the
    steps before; for a run that records neither, the screen, carried over steps without one."""
    keys: list[tuple[Any, ...]] = []
    if not any(s.get("url_after") or s.get("title_after") for s in steps):
        screen = None
        for s in steps:
            screen = s["state_id"] if s.get("state_id") is not None else screen
            keys.append((screen,))
        return "screen", keys
    page: str | None = None
    title: str | None = None
    for s in steps:
        page = page_of(s.get("url_after")) or page
        title = s.get("title_after") or title
        keys.append((page, title))
    return "page_title", keys


def _cut(by: str, a: tuple[Any, ...], b: tuple[Any, ...]) -> str:
    if by == "screen":
        return "screen"
    return "+".join(w for w, x, y in (("page", a[0], b[0]), ("title", a[1], b[1])) if x != y)


def analyze(run: Row, steps: Sequence[Row]) -> Phases:
    """The progress timeline of ``run`` (a runs-table row) from its ``steps`` (steps-table rows, in order)."""
    by, keys = _keys(steps) if steps else ("none", [])
    indices = [int(s["step_index"]) for s in steps]
    places: dict[tuple[Any, ...], int] = {}
    seen: set[int] = set()
    spans: list[tuple[int, int, str]] = []  # (start position, end position exclusive, cut)
    for i, k in enumerate(keys):
        places.setdefault(k, len(places))
        if i == 0 or k != keys[i - 1]:
            spans.append((i, i + 1, "start" if i == 0 else _cut(by, keys[i - 1], k)))
        else:
            spans[-1] = (spans[-1][0], i + 1, spans[-1][2])
    phases: list[Phase] = []
    last_new: tuple[int, str] | None = None
    advanced: list[int] = []
    not_kept: list[int] = []
    stalled = run.get("stalled_from_step") if run.get("no_net_progress") else None  # None: every new screen kept
    for a, b, cut in spans:
        screens: dict[int, None] = {}  # an ordered set
        new = returns = 0
        for s in steps[a:b]:
            sid = s.get("state_id")
            if sid is not None:
                screens[int(sid)] = None
            if sid is not None and s.get("state_kind") == "new" and sid not in seen:
                new += 1
                if stalled is not None and int(s["step_index"]) >= stalled:
                    not_kept.append(int(s["step_index"]))  # a screen in the phase, but no advance
                else:
                    last_new = (int(s["step_index"]), "a new screen")
                    advanced.append(last_new[0])
            elif s.get("effect_high_risk") and s.get("action_effect_observed") is True:
                last_new = (int(s["step_index"]), "a high-risk effect")
                advanced.append(last_new[0])
            if sid is not None:
                seen.add(int(sid))
            returns += s.get("state_kind") == "return"
        place = places[keys[a]]
        phases.append(Phase(place, _letter(place), indices[a], indices[b - 1], b - a, cut, tuple(screens), new,
                            returns))
    cps = checkpoints(run, steps)
    last_step, last_what = last_new if last_new is not None else (None, None)
    held = [c for c in cps if c.step is not None]
    if held:  # the checkpoint that held last (of several at one step, the last named: a check, not its parent)
        c = max(reversed(held), key=lambda x: x.step or 0)
        if last_step is None or (c.step or 0) > last_step:  # a checkpoint at a new screen's step: the screen
            last_step, last_what = c.step, f"checkpoint {c.name}"
    return Phases(str(run.get("run_id")), len(steps), indices[0] if indices else None,
                  indices[-1] if indices else None, by, tuple(phases), _places(by, list(places), phases),
                  len(seen), tuple(advanced), last_step, last_what, run.get("stalled_from_step"), cps,
                  tuple(not_kept))


def _places(by: str, keys: Sequence[tuple[Any, ...]], phases: Sequence[Phase]) -> tuple[Place, ...]:
    """Each place (``keys`` in the order first seen, the phases' ``place`` indexing them) with its totals."""
    steps, visits, new, first = [0] * len(keys), [0] * len(keys), [0] * len(keys), [0] * len(keys)
    for p in phases:
        if not visits[p.place]:
            first[p.place] = p.first_step
        steps[p.place] += p.steps
        visits[p.place] += 1
        new[p.place] += p.new_screens
    return tuple(Place(_letter(i), k[0] if by == "page_title" else None, k[1] if by == "page_title" else None,
                       k[0] if by == "screen" else None, first[i], steps[i], visits[i], new[i])
                 for i, k in enumerate(keys))


def _letter(place: int) -> str:
    return LETTERS[place] if place < len(LETTERS) else "*"
