"""The reward follows states: going back is not progress, and a run that ends where it already was made none.

:mod:`trajcheck.analyzers.states` says where each step's post frame is (a new screen, a return, the same);
this module applies that to the step rewards the evidence scorer gave (:mod:`trajcheck.analyzers.reward`):

| rule | effect on the step's reward | reason |
|---|---|---|
| a step returns to a screen seen before | not positive (capped at 0) | ``state_return: back to the screen of step N`` |
| a return inside an oscillation (A→B→A→B, a menu opened and closed again and again) | -0.3 more | ``oscillation: K`` |
| a step of a run with no net progress, from the step where it stalled | not positive | ``no_net_progress: ends on the screen of step N`` |
| the run's DONE, when it made no net progress (and its answer does not match a reference) | -0.4 more | ``no_net_progress`` |

A run makes **no net progress** when it ends on a screen it first saw early on (in the first half of its
steps), moved away from it since and came back, and no high-risk step in between had an observed effect.
The first visit to a new screen keeps the evidence scorer's rules.
"""  # noqa: E501  (the table above is Markdown: one row a line)

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..base.reasons import RewardCode as R

from .reward import Reward, klass_of
from .states import RunStates, StepState

#: The rules' weights, one entry per code (docs/reward.md's table is checked against it: tests/test_reward.py):
#: what a return inside an oscillation costs beyond losing its positive reward, and what a DONE costs when the
#: run made no net progress.
WEIGHTS: dict[R, float] = {
    R.OSCILLATION: -0.3,
    R.NO_NET_PROGRESS: -0.4,
}
#: The run's final screen counts as seen "early on" when first seen within this share of its steps.
EARLY_SHARE = 0.5


def no_net_progress(indices: Sequence[int], run: RunStates, effects: Sequence[bool | None]) -> bool:
    """Did the run end on a screen it first saw early on, with nothing a high-risk step did in between?
    ``effects`` per step: True where a high-risk step had an observed effect."""
    if run.stalled_from is None or run.final_first_step is None:
        return False
    pos = list(indices).index(run.final_first_step)
    if pos >= EARLY_SHARE * len(indices):
        return False
    start = list(indices).index(run.stalled_from)
    return not any(e is True for e in effects[start:])


def stall_evidence(run: RunStates) -> tuple[int, str]:
    """The step a run stalled from and what it ended on, for the evidence referee's ``no_net_progress``."""
    assert run.stalled_from is not None
    return run.stalled_from, f"ends on {_final(run)}; nothing reached since was kept"


def _final(run: RunStates) -> str:
    return f"the screen {'before' if run.final_first_before else 'after'} step {run.final_first_step}"


def _where(s: StepState) -> str:
    if s.first_step is None:
        return "an earlier screen"
    return f"the screen {'before' if s.first_before else 'after'} step {s.first_step}"


def apply(rewards: Sequence[Reward], steps: Sequence[StepState], indices: Sequence[int], run: RunStates,
          stalled: bool, done_answer_matches: Sequence[bool | None], action_types: Sequence[str]) -> list[Reward]:
    """The step rewards with the state rules applied (see the table above); ``stalled`` is
    :func:`no_net_progress`'s answer for the run."""
    start = list(indices).index(run.stalled_from) if stalled and run.stalled_from is not None else None
    final = f"ends on {_final(run)}"
    out = []
    for k, (r, s, a, answered) in enumerate(zip(rewards, steps, action_types, done_answer_matches)):
        score, reasons = r.score, list(r.reasons)
        if s.kind == "return" and r.klass != "hard_negative":
            score = min(score, 0.0)
            reasons.append(f"{R.STATE_RETURN}: back to {_where(s)}")
            if s.oscillation is not None:
                score += WEIGHTS[R.OSCILLATION]
                reasons.append(f"{R.OSCILLATION}: {s.oscillation}")
        if start is not None and k >= start and answered is not True:  # a matching answer is what it came for
            if a == "DONE":
                score = min(score, 0.0) + WEIGHTS[R.NO_NET_PROGRESS]
                reasons.append(f"{R.NO_NET_PROGRESS}: {final}")
            elif score > 0:
                score = 0.0
                reasons.append(f"{R.NO_NET_PROGRESS}: {final}")
        if reasons == list(r.reasons):
            out.append(r)
            continue
        score = max(-0.95, round(score, 4)) if r.klass != "hard_negative" else r.score
        reasons = [c for c in reasons if c != R.NO_SIGNAL] or reasons
        out.append(replace(r, score=score, klass=r.klass if r.klass == "hard_negative" else klass_of(score),
                           reasons=tuple(reasons)))
    return out

