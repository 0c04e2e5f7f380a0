"""Which states of a run no screenshot shows (issue 48, item 2), pure: a screen check that does not find its text
on the frames that exist has shown nothing about the states no frame captured.

Readers fill a step's frames in two ways. A harness that screenshots before and after each action gives both;
one that screenshots only before each action (a chat transcript, many mappings) gives the step its pre frame
and the *next* step's pre frame as the screen after it, or nothing when that is not known. So the state after
step ``p`` is seen when a screenshot was taken between step ``p`` and step ``p + 1``: step ``p``'s post frame, or
step ``p + 1``'s pre frame. *When* a screenshot was taken is the earliest its uses say (:func:`taken_at`): a file
that is the pre frame of an earlier step was taken before that step, whichever later step also names it (a final
answer given the last frame the transcript holds, as both its frames). A batch of actions between two
screenshots (``shared_frames``: the vendor transcripts, UI-TARS replies) gives its frame pair to one of its
steps: the others have no screenshot after them, and the pre frame of the step that carries the pair was taken
before the batch began, so it shows nothing after the batch's earlier steps.

Only actions that change the screen count (:func:`acts`): a final answer, a wait, a read or a screenshot shows
nothing that the frame before it did not. Screenshots are the readable ones (``readable``): a file the log names
that is missing or cannot be decoded shows nothing either.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..schemas.records import Step
from .evidence import NON_ACTING


def acts(step: Step) -> bool:
    """Does ``step`` change the screen (not a final answer, a give-up, a wait, a read or a screenshot)?"""
    return step.action.type not in NON_ACTING


def _shared(step: Step) -> bool:
    return step.extra.get("shared_frames") is True


def taken_at(steps: Sequence[Step], readable: Collection[str]) -> dict[str, float]:
    """When each readable screenshot was taken, as a position among the steps: ``p - 0.5`` just before the step at
    position ``p``, ``p + 0.5`` just after it; the earliest its uses say. The pre frame of a step that follows a
    batch's steps (``shared_frames``) is the batch's: taken before the batch's first step."""
    out: dict[str, float] = {}
    start = 0  # the first position of the batch the step at p may close
    for p, s in enumerate(steps):
        if p == 0 or not _shared(steps[p - 1]):
            start = p
        for rel, at in ((s.frame_pre, start - 0.5), (s.frame_post, p + 0.5)):
            if rel is not None and rel in readable:
                out[rel] = min(out.get(rel, at), at)
    return out


def unseen_steps(steps: Sequence[Step], readable: Collection[str]) -> tuple[int, int]:
    """``(unseen, acting)``: of the steps that change the screen (``acting``), those after which no readable
    screenshot was taken before the next step."""
    after = set(taken_at(steps, readable).values())
    acting = [p for p, s in enumerate(steps) if acts(s)]
    return sum(1 for p in acting if p + 0.5 not in after), len(acting)


def actions_after(steps: Sequence[Step], readable: Collection[str], frame: str | None = None) -> int | None:
    """How many actions that change the screen came after the screenshot ``frame`` was taken (None: the run's last
    readable screenshot); None when there is no such screenshot. The trailing steps of a batch whose frame pair
    is the last screenshot's are before it: the batch's screenshot after was taken after all of them."""
    times = taken_at(steps, readable)
    if frame is not None and frame not in times:
        return None
    if not times:
        return None
    last = times[frame] if frame is not None else max(times.values())
    later = [s for p, s in enumerate(steps) if p > last and acts(s)]
    carrier = steps[round(last - 0.5)] if last > 0 else None  # the step whose post frame it may be
    if carrier is not None and carrier.frame_post is not None and times.get(carrier.frame_post) == last \
            and not _shared(carrier) and all(_shared(s) for s in later):
        return 0
    return len(later)


def typed_unseen(steps: Sequence[Step], readable: Collection[str]) -> tuple[tuple[int, str], ...]:
    """``(step index, text)`` of each TYPE the harness ran without a recorded error after which no readable
    screenshot was taken: what the screen cannot confirm or contradict."""
    after = set(taken_at(steps, readable).values())
    return tuple((s.index, s.action.text) for p, s in enumerate(steps)
                 if s.action.type == "TYPE" and s.action.text and p + 0.5 not in after
                 and s.executor_ok is not False and not s.executor_error)


def typed_together(steps: Sequence[Step], readable: Collection[str]) -> tuple[tuple[int, int, str], ...]:
    """``(first step index, last step index, text)`` of each text typed over consecutive TYPE steps into one field
    (``Jane`` then `` Doe``): two or more TYPEs the harness ran without a recorded error, with nothing but steps
    that change nothing between them (a click, a key or a scroll may move the focus: it ends the group, as a TYPE
    whose text ends with a newline does), joined as the field holds them; kept when no readable screenshot was
    taken after the last of them (a screenshot after an earlier one shows only part of the text)."""
    after = set(taken_at(steps, readable).values())
    out: list[tuple[int, int, str]] = []
    group: list[tuple[int, Step]] = []

    def close() -> None:
        if len(group) > 1 and group[-1][0] + 0.5 not in after:
            out.append((group[0][1].index, group[-1][1].index, "".join(str(s.action.text) for _p, s in group)))
        group.clear()

    for p, s in enumerate(steps):
        if s.action.type == "TYPE" and s.action.text and s.executor_ok is not False and not s.executor_error:
            group.append((p, s))
            if s.action.text.endswith("\n"):
                close()
        elif acts(s) or s.action.type == "TYPE":
            close()
    close()
    return tuple(out)
