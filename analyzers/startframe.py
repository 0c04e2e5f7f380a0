"""A failed reset seen in the frames: a run whose first frame is not the start state its repeats agree on (pure).

A run's own log says nothing when the environment's reset failed in silence: the agent starts on the last run's
page, or on an error page, and fails (or passes) for it. Without a reference start frame, the repeats of the task
are the reference: runs of the same task under the same config should start on the same screen. In a group of
repeats, the *agreed start* is the first frame the most other runs' first frames are the same screen as (pHashes
within :attr:`~trajcheck.analyzers.states.StateOptions.global_max` bits, the states analyzer's threshold for
"the same screen"); a run is ``reset_failed`` when

- at least 2 other runs agree on that start (one other run is a pair, not an agreement), and they are more than
  half of the group (in a group split in two halves, neither is the start);
- its own first frame is farther than the threshold from every one of them.

Measured on the sample runs and the real runs (docs/analysis.md, "Damaged runs"): the first frames of repeats
agree within 0 to 2 bits (the 3 BrowserGym repeats of webarena.210: 0; its 2 repeats of order-ipad-pro: 2; the
sample runs' repeats: 0), while different tasks' first frames are 0 to 42 bits apart (5 pairs in about 350 within
8 bits): a reset that fails onto another page of the same site can look like the start and goes unseen (missing
evidence is not damage), never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..base.hashing import Hash64
from .states import StateOptions

#: Bits two first frames' pHashes may differ by and still be the same screen (the states analyzer's threshold).
SAME_SCREEN_BITS = StateOptions.global_max
#: Other repeats that must agree on a start before a run can be told apart from it.
MIN_AGREEING = 2
#: How every evidence of this check starts (``runs.damage_evidence``): the ledger pass knows its own by it.
EVIDENCE_PREFIX = "first frame"


@dataclass(frozen=True)
class FirstFrame:
    """One run of a group of repeats: its id, its first frame's pHash and that frame's path (in its run)."""

    run_id: str
    phash: Hash64
    frame: str | None = None


def _agreed(others: Sequence[FirstFrame], bits: int) -> tuple[FirstFrame, list[FirstFrame]] | None:
    """The start ``others`` agree on: the first frame the most of them are within ``bits`` of (itself included),
    the first such by run id on a tie; None for no others."""
    best: tuple[FirstFrame, list[FirstFrame]] | None = None
    for c in sorted(others, key=lambda o: o.run_id):
        near = [o for o in others if o.phash - c.phash <= bits]
        if best is None or len(near) > len(best[1]):
            best = (c, near)
    return best


def off_start(group: Sequence[FirstFrame], bits: int = SAME_SCREEN_BITS) -> dict[str, str]:
    """The runs of ``group`` (repeats of one task under one config) whose first frame is not the start the others
    agree on (module docstring), each with its evidence: its distances to the agreeing runs' first frames, how
    far those are from the start, and the frames."""
    out: dict[str, str] = {}
    for run in group:
        found = _agreed([o for o in group if o is not run], bits)
        if found is None:
            continue
        start, agreeing = found
        if len(agreeing) < MIN_AGREEING or 2 * len(agreeing) <= len(group):
            continue
        mine = {o.run_id: run.phash - o.phash for o in sorted(agreeing, key=lambda o: o.run_id)}
        if min(mine.values()) <= bits:
            continue
        theirs = ", ".join(f"{o.run_id} {o.phash - start.phash}" for o in sorted(agreeing, key=lambda o: o.run_id))
        out[run.run_id] = (
            f"{EVIDENCE_PREFIX} {min(mine.values())} bits from the start {len(agreeing)} repeats of its task agree "
            f"on (pHash; the same screen within {bits} bits): its distances "
            + ", ".join(f"{k} {v}" for k, v in mine.items())
            + f"; theirs from {start.run_id}'s first frame: {theirs}; frames: {run.frame or '?'} against "
            f"{start.run_id}/{start.frame or '?'}")
    return out
