"""The first decisive error of a run that did not pass: the step after which its evidence shows it could no longer
succeed, with its kind and the frames that show it (pure, deterministic).

It reads what scoring already computed for every step (the effect verdicts of high-risk actions, the screen states
and returns, drift loops, the messages the page showed, the blocking pages) and the run's failure mode:

| kind | the step | holds when |
|---|---|---|
| blocked | the step that led onto the wall | the failure mode is ``blocked`` by a CAPTCHA, an access-denied page or a sign-in wall the run never left |
| ignored_message | the step after which the error appeared | an error message not on the page before the step, and no later acting step changed the screen or the URL |
| dead_action | the dead action | a high-risk action had no observed effect; no later high-risk action had one (or an undecided one), no later step reached a new screen |
| loop_start | the first return | the run ends on a screen it had left (``stalled_from``), returning at least ``MIN_RETURNS`` times since, with no high-risk effect; or the first step of the drift loop it ends in |
| contract_check | the step that caused a failed contract check | a contract check failed and its evidence names the step that put the wrong value there (analyzers/checklink.py); only with a contract |
| stall | the last step that advanced | at least ``MIN_STALL`` acting steps follow the last new screen or high-risk effect, and none reaches a new screen |
| not_determined | none | nothing above |

``blocked`` comes first: a wall the run ended on explains what went before it. Among ignored_message, dead_action,
loop_start and contract_check the earliest step wins (the first error is the decisive one; a later one is its
consequence), ties in that order. ``stall`` is the least specific evidence and comes only when none of them holds.

Missing evidence is never a decisive error: a high-risk action without frames has no effect verdict, so it is never
a dead action, and a later step whose screen is unknown, or a later high-risk action whose effect is undecided,
leaves an earlier dead action or stall undecided (not a decisive error). The agent's words are never read.
"""  # noqa: E501  (the table above is Markdown: one row a line)

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..base.reasons import DecisiveKind as K, FailureMode as M

from .evidence import NON_ACTING
from .failuremodes import Failure, clip
from .states import MIN_RETURNS

#: Acting steps after the last advance that make a stall: the fewest that repeat a failure to advance (two, as two
#: repetitions make a drift loop: analyzers/loops.py ``MIN_LOOP``); one step that changed nothing before the end
#: may be a look or a final check.
MIN_STALL = 2

#: The blocking reward code of each blocked failure's detail, and the wall in words.
_WALLS = {"captcha": ("captcha", "a CAPTCHA"), "blocking_page": ("blocking_page", "a blocking page"),
          "auth_wall": ("auth_redirect", "a sign-in wall")}


@dataclass(frozen=True)
class StepTrace:
    """What the decisive error reads of one step, every field already computed by another analyzer."""

    index: int
    action_type: str
    high_risk: bool = False
    effect: bool | None = None  # the perceptual verdict of a high-risk step (None: undecided or not high-risk)
    changed: bool | None = None  # the screen's content changed
    moved: bool = False  # the URL's path changed
    state_kind: str | None = None  # new | return | same; None: no post frame
    first_seen: int | None = None  # a return: the step at which that screen was first seen
    loop: int | None = None  # the drift loop the step is part of
    new_errors: tuple[str, ...] = ()  # error messages on the page after the step that were not there before it
    blocking: tuple[str, ...] = ()  # blocking reward codes of the page after the step (captcha, auth_redirect...)
    frame_pre: str | None = None
    frame_post: str | None = None

    @property
    def acting(self) -> bool:
        return self.action_type not in NON_ACTING

    def frames(self) -> str:
        """The step's frames, as evidence names them."""
        return f"before {self.frame_pre or '-'}, after {self.frame_post or '-'}"


@dataclass(frozen=True)
class Decisive:
    """A run's first decisive error: its step, kind and evidence (all None: the run passed, or gets no mode)."""

    step: int | None = None
    kind: str | None = None
    evidence: str | None = None


NONE = Decisive()


def _blocked(steps: Sequence[StepTrace], failure: Failure) -> Decisive | None:
    """The step that led onto the wall the run ended on: back from the failure's step while the page blocks."""
    wall = _WALLS.get(failure.detail or "")
    if failure.mode != M.BLOCKED or wall is None or failure.step is None:
        return None
    code, words = wall
    pos = next((i for i, s in enumerate(steps) if s.index == failure.step), None)
    if pos is None:
        return None
    while pos > 0 and code in steps[pos - 1].blocking and code != "auth_redirect":
        pos -= 1
    s = steps[pos]
    return Decisive(s.index, K.BLOCKED, clip(f"{s.action_type} at step {s.index} led to {words} the run "
                                            f"never left ({s.frames()})"))


def _dead_action(steps: Sequence[StepTrace]) -> Decisive | None:
    for i, s in enumerate(steps):
        if not (s.high_risk and s.effect is False):
            continue
        later = steps[i + 1:]
        if any(t.high_risk and t.effect is not False for t in later):
            continue  # recovered (an effect), or undecided
        if any(t.state_kind == "new" or (t.acting and t.state_kind is None) for t in later):
            continue
        return Decisive(s.index, K.DEAD_ACTION, clip(f"{s.action_type} changed nothing ({s.frames()}); no later "
                                                    "action had an effect or reached a new screen"))
    return None


def _ignored_message(steps: Sequence[StepTrace]) -> Decisive | None:
    for i, s in enumerate(steps):
        if not s.new_errors:
            continue
        if any(t.acting and (t.changed is not False or t.moved or t.state_kind in ("new", "return"))
               for t in steps[i + 1:]):
            continue  # the agent acted after the message (or what it did is unknown)
        said = "; ".join(sorted(s.new_errors))
        return Decisive(s.index, K.IGNORED_MESSAGE, clip(f"after {s.action_type} ({s.frames()}) the page said, "
                                                        f"and no later action changed it: {said}"))
    return None


def _loop_start(steps: Sequence[StepTrace], stalled_from: int | None) -> Decisive | None:
    """The first return of a run that ends on a screen it had left; else the first step of the drift loop it ends
    in."""
    if stalled_from is not None:
        since = [s for s in steps if s.index >= stalled_from]
        returns = [s for s in since if s.state_kind == "return"]
        if len(returns) >= MIN_RETURNS and not any(s.high_risk and s.effect is not False for s in since):
            r = returns[0]
            return Decisive(r.index, K.LOOP_START, clip(
                f"{r.action_type} went back to the screen first seen at step {r.first_seen} ({r.frames()}); "
                f"{len(returns)} returns since, and the run ends on a screen it had left"))
    acting = [s for s in steps if s.acting]
    if acting and acting[-1].loop is not None:
        first = next(s for s in acting if s.loop == acting[-1].loop)
        n = sum(1 for s in acting if s.loop == first.loop)
        said = f"{first.action_type} repeated {n} times on an unchanging screen from step {first.index} to the end"
        return Decisive(first.index, K.LOOP_START, clip(f"{said} ({first.frames()})"))
    return None


def _stall(steps: Sequence[StepTrace]) -> Decisive | None:
    """The step where progress last advanced, when at least :data:`MIN_STALL` acting steps follow it and none
    advances (each with a known screen)."""
    pos = next((i for i in range(len(steps) - 1, -1, -1)
                if steps[i].state_kind == "new" or (steps[i].high_risk and steps[i].effect is True)), None)
    if pos is None:
        return None
    later = [t for t in steps[pos + 1:] if t.acting]
    if len(later) < MIN_STALL or any(t.state_kind is None or (t.high_risk and t.effect is None) for t in later):
        return None
    p = steps[pos]
    return Decisive(p.index, K.STALL, clip(f"progress last advanced at step {p.index} ({p.frames()}); the {len(later)} "
                                           f"acting steps after it reached no new screen"))


def find(steps: Sequence[StepTrace], failure: Failure, stalled_from: int | None,
         checked: tuple[int, str] | None = None) -> Decisive:
    """The first decisive error of a run with a failure mode (see the module docstring); :data:`NONE` for a run with
    none. ``stalled_from``: the step from which the run reached nothing it kept (analyzers/states.py); ``checked``:
    the step a failed contract check is linked to and its evidence (analyzers/checklink.py), if any."""
    if failure.mode is None:
        return NONE
    blocked = _blocked(steps, failure)
    if blocked is not None:
        return blocked
    by_check = Decisive(checked[0], K.CONTRACT_CHECK, checked[1]) if checked is not None else None
    found = [d for d in (_ignored_message(steps), _dead_action(steps), _loop_start(steps, stalled_from), by_check)
             if d is not None]
    if found:  # the earliest step; min keeps the first of a tie, so the tie order is the list's
        return min(found, key=lambda d: d.step if d.step is not None else 0)
    stall = _stall(steps)
    if stall is not None:
        return stall
    return Decisive(None, K.NOT_DETERMINED, "no step shows where the run was lost")
