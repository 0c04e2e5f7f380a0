"""How much of a run its reader understood: a run whose actions were mostly not understood, or whose
screenshots were mostly not found, says so at run level, so that nobody reads a ledger of empty runs
as a result. Per-step problems (``action_unparsed``, ``frames_missing``) say which steps; these say
how much of the run they cost."""

from __future__ import annotations

from collections.abc import Sequence

from ..analyzers.image_evidence import ImageEvidence
from ..schemas.records import Run, Step

from ..base.errors import Problem
from ..base.problems import Slug
from ..base.reasons import EffectReason

#: Evidence problems that mean a step's recorded screenshots could not be used.
_NO_FRAME = frozenset({Slug.FRAMES_MISSING, Slug.FRAME_UNREADABLE, Slug.FRAME_TOO_LARGE})
#: Of those, the files that are there but cannot be decoded.
_UNDECODED = frozenset({Slug.FRAME_UNREADABLE, Slug.FRAME_TOO_LARGE})


def _most(part: int, whole: int) -> bool:
    return whole > 0 and 2 * part > whole


def _unread(run: Run, evidence: Sequence[ImageEvidence]) -> tuple[list[Step], int, list[Step], int]:
    """(actions not understood, actions; steps without a readable screenshot, steps counted). Steps that share
    another action's frame pair, and steps whose screenshots the harness itself left out of its log
    (``extra.frames_dropped``), are not counted as missing."""
    acts = [s for s in run.steps if s.action.type != "DONE"]
    unknown = [s for s in acts if s.action.type == "UNKNOWN"]
    counted = [(s, e) for s, e in zip(run.steps, evidence)
               if e.problem != EffectReason.SHARED_FRAMES and not s.extra.get("frames_dropped")]
    lost = [s for s, e in counted if e.problem in _NO_FRAME]
    return unknown, len(acts), lost, len(counted)


def not_read(run: Run, evidence: Sequence[ImageEvidence]) -> bool:
    """The run was not read: most of its actions were not understood, or most of its steps have no readable
    screenshot, or its mapping marks a reading of its log unsure (``extra.unsure_readings``: the screenshots did
    not tell which frame is which step's, or in which space its points are, or what an action name means). Such a
    run gets no verdict from its own evidence nor from the no-answer rule (the referee's ``not_read``)."""
    if run.extra.get("unsure_readings"):
        return True
    unknown, acts, lost, counted = _unread(run, evidence)
    return _most(len(unknown), acts) or _most(len(lost), counted)


def read_coverage(run: Run, evidence: Sequence[ImageEvidence]) -> list[Problem]:
    """Run-level warnings: most actions not understood (``actions_not_understood``), most steps without a
    readable screenshot (``frames_not_found``), counted as :func:`not_read` counts them."""
    out: list[Problem] = []
    unknown, acts, lost, counted = _unread(run, evidence)
    if _most(len(unknown), acts):
        first = unknown[0]
        out.append(Problem(Slug.ACTIONS_NOT_UNDERSTOOD, f"{len(unknown)} of {acts} actions not understood; the run "
                           "gets no verdict from its own evidence (not_read)",
                           run=run.run_id, file=first.source, line=first.line, field=f"steps[{first.index}].action",
                           severity="warning"))
    if _most(len(lost), counted):
        out.append(_frames_lost(run, lost, counted, evidence))
    return out


def _frames_lost(run: Run, lost: list[Step], counted: int, evidence: Sequence[ImageEvidence]) -> Problem:
    """The run-level warning of a run whose screenshots were mostly not read: ``frame_unreadable`` when most of
    those steps have files that are there but cannot be decoded (the fix is the files, not copying them), else
    ``frames_not_found``."""
    problem = {s.index: e.problem for s, e in zip(run.steps, evidence)}
    bad = [s for s in lost if problem.get(s.index) in _UNDECODED]
    first = bad[0] if 2 * len(bad) >= len(lost) else lost[0]
    tail = "; the run gets no verdict from its own evidence (not_read)"
    if first in bad:
        rel = first.frame_post or first.frame_pre
        slug = Slug.FRAME_UNREADABLE
        message = f"{len(lost)} of {counted} steps have no readable screenshot: {len(bad)} have a file that cannot " \
                  f"be decoded (first: {rel}){tail}"
        hint = (f"the screenshot files are there but are not readable PNG, JPEG or WebP images (truncated, empty, "
                f"or not an image under an image's name): check {rel}, and how the harness writes its screenshots")
    else:
        slug, hint = Slug.FRAMES_NOT_FOUND, ""
        message = f"{len(lost)} of {counted} steps have no readable screenshot{tail}"
    return Problem(slug, message, run=run.run_id, file=first.source, line=first.line,
                   field=f"steps[{first.index}].frames", severity="warning", hint=hint)
