"""Drift loops and the done-acceptance gate, from per-step lightweight evidence.

A *drift loop* is a run of consecutive steps in which the agent repeats the same
action while the screen stays pHash-equal (pre and post frames within the
threshold): the page never changes and the agent does not notice. The
*done-acceptance gate* ``no_observed_delta_after_waits`` fires when a DONE comes
after WAIT steps during which the frame did not change: the agent waited for
something that never happened, then declared success.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.hashing import Hash64
from ..schemas.records import Step

#: Points within this many pixels (in x and in y) count as the same click target.
SAME_POINT_PX = 16
#: At least this many repetitions make a loop.
MIN_LOOP = 2


@dataclass(frozen=True)
class ActionKey:
    """What makes two actions "the same": type, target (an element, or a point within
    16 px), keys, text and URL."""

    kind: str  # type, element, keys, text and URL joined
    x: float | None = None
    y: float | None = None

    def same(self, other: "ActionKey") -> bool:
        if self.kind != other.kind:
            return False
        if self.x is None or self.y is None or other.x is None or other.y is None:
            return (self.x, self.y) == (other.x, other.y)
        return abs(self.x - other.x) <= SAME_POINT_PX and abs(self.y - other.y) <= SAME_POINT_PX

    def __str__(self) -> str:
        return self.kind + (f"@{self.x:g},{self.y:g}" if self.x is not None and self.y is not None else "")


def action_key(action_type: str, x: float | None, y: float | None, keys: str | None, text: str | None,
               url: str | None, element: str | None = None) -> ActionKey:
    parts = [action_type.upper()]
    for name, v in (("el", element), ("keys", keys), ("text", text), ("url", url)):
        if v:
            parts.append(f"{name}={v}")
    if element:
        x = y = None
    return ActionKey("|".join(parts), x, y)


def step_key(s: Step) -> ActionKey:
    """The action key of a recorded step."""
    a = s.action
    return action_key(a.type, a.x, a.y, a.keys, a.text, a.url, a.element)


@dataclass(frozen=True)
class StepSignal:
    """The lightweight evidence of one step that later steps may look back at."""

    index: int
    action_type: str
    key: ActionKey
    pre_hash: Hash64 | None
    post_hash: Hash64 | None


def _stable(s: StepSignal, threshold: int) -> bool:
    return s.pre_hash is not None and s.post_hash is not None and (s.post_hash - s.pre_hash) <= threshold


def _continues(prev: StepSignal, nxt: StepSignal, threshold: int) -> bool:
    """Does ``nxt`` start on the screen ``prev`` ended on? (Unknown when a frame is missing: it does.)"""
    if prev.post_hash is None or nxt.pre_hash is None:
        return True
    return nxt.pre_hash - prev.post_hash <= threshold


@dataclass(frozen=True)
class LoopFinding:
    loop_id: int | None
    loop_len: int | None
    position: int | None  # 1 for the first step of the loop, 2 for the first repetition, ...


def find_loops(steps: list[StepSignal], threshold: int) -> list[LoopFinding]:
    """Per step, the drift loop it belongs to (ids numbered from 1 in the run), if any."""
    out = [LoopFinding(None, None, None)] * len(steps)
    loop_id = 0
    i = 0
    while i < len(steps):
        j = i
        if steps[i].action_type not in ("WAIT", "DONE") and _stable(steps[i], threshold):
            while (j + 1 < len(steps) and steps[j + 1].key.same(steps[i].key)
                   and _stable(steps[j + 1], threshold)
                   and _continues(steps[j], steps[j + 1], threshold)):
                j += 1
        n = j - i + 1
        if n >= MIN_LOOP:
            loop_id += 1
            for k in range(i, j + 1):
                out[k] = LoopFinding(loop_id, n, k - i + 1)
        i = j + 1
    return out


def no_observed_delta_after_waits(steps: list[StepSignal], threshold: int) -> list[bool]:
    """Per step: True on a DONE preceded by WAIT steps whose frames never changed."""
    out = [False] * len(steps)
    for i, s in enumerate(steps):
        if s.action_type != "DONE":
            continue
        k = i - 1
        waits = []
        while k >= 0 and steps[k].action_type == "WAIT":
            waits.append(steps[k])
            k -= 1
        if waits and all(_stable(w, threshold) for w in waits):
            first, last = waits[-1], waits[0]
            if (first.pre_hash is not None and last.post_hash is not None
                    and last.post_hash - first.pre_hash <= threshold):
                out[i] = True
    return out
