"""Aligning the tool-call transcripts of vendor computer-use loops (Anthropic's computer tool, OpenAI's
computer-use tool): screenshots arrive only in tool results, so several actions can fall between two frames.
The readers parse their transcripts into a :data:`Timeline`; :func:`steps_of` turns it into steps. (Reading
the transcripts' files and frames is the kit's: :class:`~trajcheck.readers.kit.reading.Sniffer`,
:class:`~trajcheck.readers.kit.reading.Frames`.)"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...analyzers import highrisk
from ...schemas.records import Action, Step, Usage

#: A transcript in order: ``("act", action, reasoning, call id, message index)``, ``("frame", name)`` and
#: ``("usage", usage, seconds)``: what the model call whose actions follow used, and its elapsed seconds
#: (either None where the log does not say).
Timeline = list[tuple[Any, ...]]
#: Each tool call's result by call id: (is_error, its text).
Results = dict[str, tuple[bool, str | None]]

#: Action types a preceding MOUSE_MOVE gives its point to when they have none.
CLICK_TYPES = frozenset({"CLICK", "RIGHT_CLICK", "MIDDLE_CLICK", "DOUBLE_CLICK", "TRIPLE_CLICK"})


def last_frame(timeline: Timeline) -> str | None:
    """The transcript's last screenshot (a final answer's frames: nothing happened after it)."""
    return next((t[1] for t in reversed(timeline) if t[0] == "frame"), None)


def _plus(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else a + b


def trailing_usage(timeline: Timeline) -> tuple[Usage | None, float | None]:
    """What the model calls after the last action used, and their seconds: the final answer's (the DONE step's)."""
    usage, seconds = None, None
    for item in reversed(timeline):
        if item[0] == "act":
            break
        if item[0] == "usage":
            usage, seconds = _plus(item[1], usage), _plus(item[2], seconds)
    return usage, seconds


def _owner(acts: list[tuple[Action, str | None, str | None, str | None]], members: list[int],
           looks: frozenset[str]) -> int:
    """The action of ``members`` (indices into ``acts``) whose effect is checked: the last high-risk one, else
    the last acting one (not a look, a tool or an unknown), else the last."""
    risky = [m for m in members if highrisk.classify(acts[m][0].type, acts[m][0].keys, acts[m][1],
                                                     acts[m][0].text, acts[m][0].extra).high_risk]
    acting = [m for m in members if acts[m][0].extra.get("tool_action") not in looks
              and acts[m][0].type not in ("TOOL", "UNKNOWN")]
    return (risky or acting or members)[-1]


def steps_of(timeline: Timeline, results: Results, rel: str,
             looks: frozenset[str]) -> list[Step]:
    """Steps from a tool-call timeline: ``("act", action, reasoning, call id, message index)`` and
    ``("frame", name)`` entries in the order the transcript holds them; ``results`` maps a call id to
    (is_error, text); ``looks`` are the tool actions that only look (``extra.tool_action``). A click
    without a point right after a MOUSE_MOVE is one click at the moved-to point. Each group of actions
    between two frames gets that pair; when a group has several actions, the pair is checked on its last
    high-risk action (else its last acting one) and the others are marked ``shared_frames``: their
    verdict is null, never a no-effect of their own.

    A ``("usage", usage, seconds)`` entry starts a model call: the actions after it (up to the next one) are
    that call's, and its usage and seconds go to one of them, the one whose effect is checked (the same
    rule), so that a run's totals count them once. A call that issued no action adds its figures to the
    next call's; those after the last action are :func:`trailing_usage`'s."""
    acts: list[tuple[Action, str | None, str | None, str | None]] = []  # action, reasoning, use id, pre frame
    groups: list[list[int]] = [[]]
    frame: str | None = None
    pre_of_group: list[str | None] = [None]
    calls: list[tuple[Usage | None, float | None, list[int]]] = []  # each model call: usage, seconds, its acts
    pending: tuple[Usage | None, float | None] | None = None
    for item in timeline:
        if item[0] == "usage":
            pending = (item[1], item[2]) if pending is None else (_plus(pending[0], item[1]),
                                                                  _plus(pending[1], item[2]))
            continue
        if item[0] == "frame":
            frame = item[1]
            if groups[-1]:
                groups.append([])
                pre_of_group.append(frame)
            else:
                pre_of_group[-1] = frame
            continue
        _, action, reasoning, use_id, _i = item
        prev = acts[-1][0] if acts and groups[-1] else None
        if action.type in CLICK_TYPES and action.x is None and prev is not None and prev.type == "MOUSE_MOVE" \
                and prev.x is not None:
            merged = Action(action.type, prev.x, prev.y, extra={**action.extra, "point_from": "mouse_move"})
            acts[-1] = (merged, reasoning, use_id, acts[-1][3])
            continue
        acts.append((action, reasoning, use_id, frame))
        groups[-1].append(len(acts) - 1)
        if pending is not None:
            calls.append((*pending, []))
            pending = None
        if calls:
            calls[-1][2].append(len(acts) - 1)
    post_of_group = [pre_of_group[g + 1] if g + 1 < len(pre_of_group) else None for g in range(len(groups))]
    steps: list[Step] = []
    owner: dict[int, int] = {}
    for g, members in enumerate(groups):
        if members:
            owner[g] = _owner(acts, members, looks)
    spent = {_owner(acts, members, looks): (usage, seconds) for usage, seconds, members in calls if members}
    for g, members in enumerate(groups):
        for m in members:
            action, reasoning, use_id, _pre = acts[m]
            err, msg = results.get(str(use_id), (False, None))
            extra: dict[str, Any] = {"tool_use_id": use_id} if use_id else {}
            pre, post = pre_of_group[g], post_of_group[g]
            if m != owner[g] and len(members) > 1:
                extra["shared_frames"] = True
                pre = post = None
            if msg and not err:
                extra["tool_output"] = msg[:2000]
            usage, seconds = spent.get(m, (None, None))
            steps.append(Step(index=len(steps), action=action, reasoning=reasoning, frame_pre=pre, frame_post=post,
                              executor_ok=not err, executor_error=(msg or "tool error")[:2000] if err else None,
                              usage=usage, wall_seconds=seconds, extra=extra, source=rel))
    return steps


def with_usage(step: Step, usage: Usage | None, seconds: float | None) -> Step:
    """``step`` with ``usage`` and ``seconds`` added to its own (the final answer's, on the DONE step)."""
    if usage is None and seconds is None:
        return step
    return replace(step, usage=_plus(step.usage, usage), wall_seconds=_plus(step.wall_seconds, seconds))
