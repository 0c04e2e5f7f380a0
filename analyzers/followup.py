"""After a warning: what the agent did next, whether it was shown the warning, and whether the warning was false.

A step *warned on* is one where the perceptual verifier's rule fired: a high-risk action with no observed
effect, after which the runner injects the WARNING line into the next step's feedback. trajcheck's rule
(``action_effect_observed = false``) and the seed's literal rule (``action_effect_observed_seed = false``)
disagree on some steps (a hover restyle the pHash sees, a focus ring it does not), so each gets its own
follow-up; the evidence that a warning was false does not depend on the rule.

**What followed.** The steps after the warned step ``w`` are read in order; the first rule that matches a
step decides (``effect`` is the step's verdict under the rule when it has one, else whether its screen
changed: trajcheck's content test, or the seed's pHash test):

1. a DONE (an answer) or FAIL: ``declared_done``;
2. a step on the same target as ``w`` (the same element where both name one, else points within
   :data:`~trajcheck.analyzers.loops.SAME_POINT_PX`; actions without a target: the same action):
   effect -> ``recovered``; no effect and the same action (type, target, keys, text) -> ``repeated``; no
   effect and another action (a double click, a hover) -> no decision, read on; effect unknown (no
   frames) -> unknown (null);
3. a high-risk step on another target: effect -> ``recovered``; no effect -> ``moved_on``; unknown -> null;
4. an acting step (not a WAIT, a read or a screenshot) that ends on another page (host and path of the URL)
   than the warned step left the agent on: ``moved_on``;
5. anything else (a scroll, a typed field, a click without a high-risk keyword elsewhere, a wait) decides
   nothing; after the last step: ``run_ended``.

**Was it shown.** The feedback the runner recorded for the step (a WARNING line in it, or not), else the
verdict it recorded (false: its runner injected the line), else the run's ``config.perceptual_verifier``
(off: not shown; on: shown where trajcheck's rule fired, the line the ledger's ``effect_feedback`` holds;
unknown where only the seed's did, since the runner's rule is not recorded).

**Was it false.** A warned step *in fact had an effect* when, besides its two frames, its URL changed, its
DOM snapshots differ in the page's skeleton, a later frame taken before the agent acted again shows another
screen (states as :mod:`trajcheck.analyzers.states` groups them, so a ticking clock is no change), or the
run passed by a contract, an evaluator or a judge while the warned step was its last high-risk action and
no high-risk action of the run had a visible effect. It is unknown (null) when the run records none of the
first three kinds of evidence for the step and the last does not hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlparse

from ..base.reasons import EffectInFactBasis, WarningFollowup, WarningShownSource

from .evidence import NON_ACTING
from .loops import SAME_POINT_PX, ActionKey

#: Steps by which the agent ends the run itself.
TERMINAL = frozenset({"DONE", "FAIL"})

#: The runner's warning in a recorded feedback line (the seed's "WARNING: high-risk action had no observed
#: effect"; any case, as a word).
WARNING_WORD = re.compile(r"\bwarning\b", re.IGNORECASE)


@dataclass(frozen=True)
class FollowStep:
    """What the follow-up reads of one step, every field already computed by another analyzer."""

    index: int
    action_type: str
    key: ActionKey  # type, target, keys, text and URL (loops.step_key)
    element: str | None = None
    point: tuple[float, float] | None = None
    high_risk: bool = False
    verdict: bool | None = None  # trajcheck's perceptual verdict (high-risk steps)
    changed: bool | None = None  # trajcheck's content change (any step with both frames)
    verdict_seed: bool | None = None  # the seed's literal rule
    changed_seed: bool | None = None  # the seed's pHash test on any step with both frames
    url_before: str | None = None
    url_after: str | None = None
    dom_changed: bool | None = None  # the skeleton diff has items (observation verifier's meaningful change)
    state: int | None = None  # the screen (state) of the post frame
    own_pre_state: int | None = None  # the state of a pre frame that is not the previous step's post frame
    recorded_feedback: str | None = None
    recorded_effect: bool | None = None


@dataclass(frozen=True)
class Followup:
    """A step's findings: null everywhere on a step neither rule warned on."""

    followup: WarningFollowup | None = None  # trajcheck's rule
    step: int | None = None  # the step that decided it
    followup_seed: WarningFollowup | None = None  # the seed's rule
    shown: bool | None = None
    shown_source: WarningShownSource | None = None
    in_fact: bool | None = None  # the step had an effect after all: a false warning
    in_fact_basis: EffectInFactBasis | None = None


NONE = Followup()


def _page(url: str | None) -> str | None:
    if not url:
        return None
    u = urlparse(url)
    return f"{u.netloc}{u.path.rstrip('/') or '/'}"


def same_target(a: FollowStep, b: FollowStep) -> bool:
    """Do two actions aim at the same thing: the same element where both name one, else points within
    ``SAME_POINT_PX``; actions without a common kind of target (key presses) are the same action or not."""
    if a.element is not None and b.element is not None:
        return a.element == b.element
    if a.point is not None and b.point is not None:
        return abs(a.point[0] - b.point[0]) <= SAME_POINT_PX and abs(a.point[1] - b.point[1]) <= SAME_POINT_PX
    return a.key.same(b.key)


def _effect(s: FollowStep, seed: bool) -> bool | None:
    """The step's effect under a rule: its verdict where it has one, else whether its screen changed."""
    verdict, changed = (s.verdict_seed, s.changed_seed) if seed else (s.verdict, s.changed)
    return verdict if verdict is not None else changed


def follow(steps: list[FollowStep], w: int, seed: bool = False) -> tuple[WarningFollowup | None, int | None]:
    """What followed the warning at position ``w`` of ``steps``, and the step that decided it (module docstring:
    the rules, in order). ``(None, step)``: that step would decide, and its effect is unknown."""
    warned = steps[w]
    page = _page(warned.url_after or warned.url_before)
    for s in steps[w + 1:]:
        if s.action_type in TERMINAL:
            return WarningFollowup.DECLARED_DONE, s.index
        effect = _effect(s, seed)
        if same_target(warned, s):
            if effect is None:
                return None, s.index
            if effect:
                return WarningFollowup.RECOVERED, s.index
            if s.key.same(warned.key):
                return WarningFollowup.REPEATED, s.index
            continue
        if s.high_risk:
            if effect is None:
                return None, s.index
            return (WarningFollowup.RECOVERED if effect else WarningFollowup.MOVED_ON), s.index
        after = _page(s.url_after)
        if s.action_type not in NON_ACTING and page is not None and after is not None and after != page:
            return WarningFollowup.MOVED_ON, s.index
    return WarningFollowup.RUN_ENDED, None


def shown(s: FollowStep, verifier_on: bool | None, warned: bool) -> tuple[bool | None, WarningShownSource | None]:
    """Was the warning after step ``s`` shown to the agent, and how that is known. ``verifier_on``: the run's
    config.perceptual_verifier; ``warned``: trajcheck's rule fired on ``s``."""
    if s.recorded_feedback is not None:
        return bool(WARNING_WORD.search(s.recorded_feedback)), WarningShownSource.RECORDED_FEEDBACK
    if s.recorded_effect is not None:
        return s.recorded_effect is False, WarningShownSource.RECORDED_VERDICT
    if verifier_on is False:
        return False, WarningShownSource.RUN_CONFIG
    if verifier_on is True and warned:
        return True, WarningShownSource.RUN_CONFIG
    return None, None


def _later_states(steps: list[FollowStep], w: int) -> list[int]:
    """The states of the frames taken after step ``w``'s post frame and before the agent acted again: pre frames
    of their own, and the post frames of the steps that do not act (a WAIT, a read, the DONE)."""
    out: list[int] = []
    for s in steps[w + 1:]:
        if s.own_pre_state is not None:
            out.append(s.own_pre_state)
        if s.action_type not in NON_ACTING:
            break
        if s.state is not None:
            out.append(s.state)
    return out


def in_fact(steps: list[FollowStep], w: int, passed: bool) -> tuple[bool | None, EffectInFactBasis | None]:
    """Did the warned step at position ``w`` have an effect after all (module docstring), and the first evidence
    that says so. ``passed``: the run passed by a contract, an evaluator or a judge (not its own evidence).
    The run's outcome counts only when step ``w`` is its last high-risk action and no high-risk action of the
    run had a visible effect: then nothing else can have done what the run passed on."""
    return _in_fact(steps, w, passed and _only_candidate(steps) == w)


def _only_candidate(steps: list[FollowStep]) -> int | None:
    """The position of the run's last high-risk step when no high-risk step had a visible effect, else None."""
    if any(t.verdict for t in steps):
        return None
    return next((i for i in range(len(steps) - 1, -1, -1) if steps[i].high_risk), None)


def _in_fact(steps: list[FollowStep], w: int, passed_by_it: bool) -> tuple[bool | None, EffectInFactBasis | None]:
    s = steps[w]
    known = False
    url_changed = s.url_before != s.url_after if s.url_before and s.url_after else None
    for value, basis in ((url_changed, EffectInFactBasis.URL_CHANGED),
                         (s.dom_changed, EffectInFactBasis.DOM_CHANGED)):
        if value is not None:
            known = True
            if value:
                return True, basis
    later = _later_states(steps, w)
    if s.state is not None and later:
        known = True
        if any(x != s.state for x in later):
            return True, EffectInFactBasis.LATER_FRAME
    if passed_by_it:
        return True, EffectInFactBasis.RUN_PASSED
    return (False if known else None), None


def followups(steps: list[FollowStep], verifier_on: bool | None, passed: bool) -> list[Followup]:
    """Per step, what followed its warning under each rule, whether it was shown, and whether it was false;
    :data:`NONE` on steps neither rule warned on. ``verifier_on``: the run's config.perceptual_verifier;
    ``passed``: the run passed by a contract, an evaluator or a judge."""
    out: list[Followup] = []
    candidate = _only_candidate(steps) if passed else None  # computed once: a run has many warnings at most
    for w, s in enumerate(steps):
        warned, warned_seed = s.verdict is False, s.verdict_seed is False
        if not (warned or warned_seed):
            out.append(NONE)
            continue
        f, at = follow(steps, w) if warned else (None, None)
        f_seed = follow(steps, w, seed=True)[0] if warned_seed else None
        out.append(Followup(f, at, f_seed, *shown(s, verifier_on, warned), *_in_fact(steps, w, candidate == w)))
    return out
