"""The process score: how a run went about its task, from its steps, beside its outcome (pure, deterministic).

Three parts, each a share of the steps it can judge:

| part | a step counts 1 when | 0 when | not judged |
|---|---|---|---|
| effective | an acting step (not DONE, FAIL, a wait, a read, a scroll) visibly did something: a high-risk action with an observed effect or one that in fact had one by a visible sign (a false warning shown by its URL, a later frame or the run's pass; a DOM that changed with nothing drawn is none); another action whose screen content changed, whose focus ring or caret moved, whose URL changed or that reached a new screen | it did none of that | no frames and no URL; a step whose frame pair went to another action (shared_frames) |
| progress | the step reached a screen the run had not shown before (state_kind new), or its own expected outcome held (expected_state_reached) | it went back to a screen seen before (state_kind return); it reached one at or after the step from which a run with no net progress kept nothing | it stayed on its screen (same) or has no frame |
| recovery | after a warning (a high-risk action with no observed effect) the agent recovered (``recovered``); after an action the executor failed, a fresh read (``fresh_read_after_failure``) | it repeated the dead action (``repeated``) or declared done (``declared_done``); it repeated the failed action (``repeated_failed_action``) | the warning was false, the run ended there (``run_ended``), the follow-up is unknown |

``moved_on`` (the agent left the dead target but nothing shows the new action worked) counts 0.5: it did what the
warning is for, not to repeat the click, without evidence that it got anywhere.

The score is the weighted share of the judged steps' credit, ``sum(w * k) / sum(w * n)`` over the parts (``k`` the
credit, ``n`` the steps judged): each judged step weighs its part's weight, the swing the evidence reward gives
between its two outcomes (:data:`trajcheck.analyzers.reward.WEIGHTS`, from the seed's reward classes):

- effective: page_changed (+0.4) against no_observed_effect (-0.4): 0.8;
- progress: a new screen's page_changed (+0.4) against a return, whose reward is capped at 0 (analyzers/progress.py): 0.4;
- recovery: fresh_read_after_failure (+0.5) against repeated_failed_action (-0.7): 1.2.

**Uncontrollable blocks count neither way.** A step whose screen shows a CAPTCHA or an access-denied or rate-limit
page, a sign-in wall the goal gives no way in to (or whose goal is not recorded), a message that the server failed,
the site is down or the item is out of stock (:data:`trajcheck.analyzers.control.OUTSIDE`), the decisive step of a
run whose decisive error is uncontrollable, and the step a harness damage names (every step for a failed reset):
it and every step after it that stays on the blocked screens (or on its own screen, or has no frame) leave all three
parts, numerator and denominator. A run with no step judged has no score (null): missing evidence is not failure.
"""  # noqa: E501  (the table above is Markdown: one row a line)

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..base.reasons import Control, Damage, DecisiveKind, FailureMode, RewardCode as R, WarningFollowup as F, code_of

from . import control as control_mod, damage as damage_mod
from .followup import TERMINAL
from .reward import OBSERVATION_TYPES, WEIGHTS as REWARD

#: Each part's weight: the swing of the evidence reward between the part's good and bad outcome (module docstring).
WEIGHTS: dict[str, float] = {
    "effective": round(REWARD[R.PAGE_CHANGED] - REWARD[R.NO_OBSERVED_EFFECT], 4),
    "progress": round(REWARD[R.PAGE_CHANGED] - 0.0, 4),
    "recovery": round(REWARD[R.FRESH_READ_AFTER_FAILURE] - REWARD[R.REPEATED_FAILED_ACTION], 4),
}
PARTS = tuple(WEIGHTS)

#: The credit of each follow-up of a warning; a follow-up not named here is not judged.
RECOVERY_CREDIT: dict[str, float] = {F.RECOVERED: 1.0, F.MOVED_ON: 0.5, F.REPEATED: 0.0, F.DECLARED_DONE: 0.0}
#: After an action the executor failed (its error is the agent's warning), the reward's own recovery signals.
FAILURE_CREDIT: dict[str, float] = {R.FRESH_READ_AFTER_FAILURE: 1.0, R.REPEATED_FAILED_ACTION: 0.0}

#: A step's own expected outcome held: a progress event whatever screen it ends on.
PROGRESS_EVENTS = frozenset({R.EXPECTED_STATE_REACHED})

#: The blocking reward codes and the blocker each one is (analyzers/control.py decides whether it is controllable).
WALLS: dict[str, str] = {R.CAPTCHA: "captcha", R.BLOCKING_PAGE: "blocking_page", R.AUTH_REDIRECT: "auth_wall"}

#: An observation line that is a message the page showed (analyzers/observation.py).
_MESSAGE = re.compile(r"^New message appeared: ", re.I)
#: The step a harness damage's evidence names (analyzers/damage.py: "step N error: ...", "step N: ...").
_DAMAGE_STEP = re.compile(r"^step (-?\d+)\b")


@dataclass(frozen=True)
class ProcessStep:
    """What the process score reads of one step (from its steps row)."""

    index: int
    action_type: str
    high_risk: bool = False
    effect: bool | None = None  # the perceptual verdict of a high-risk step
    in_fact: bool | None = None  # a warned step did in fact have a visible effect (not by its DOM alone)
    changed: bool | None = None  # the screen's content changed (outlines, carets, ambient change discounted)
    focus: bool = False  # a focus outline or a caret moved (discounted from ``changed``)
    url_changed: bool | None = None
    state: int | None = None
    state_kind: str | None = None  # new, return, same
    codes: tuple[str, ...] = ()  # the reward codes
    followup: str | None = None  # after a warning on this step
    messages: tuple[str, ...] = ()  # messages the page or the screen showed after the step, and executor errors
    shared: bool = False  # its frame pair went to another action


@dataclass(frozen=True)
class ProcessScore:
    """The score (None: no step judged) and its parts: per part, the credit and the steps judged."""

    score: float | None
    parts: dict[str, tuple[float, int]]
    followups: dict[str, int]
    blocked: tuple[int, ...]  # the steps left out as spent on an uncontrollable block
    blocked_by: str | None  # what the first block was

    def evidence(self) -> str:
        """``runs.process_evidence``: the parts and counts, as short JSON."""
        out: dict[str, Any] = {p: {"k": _num(k), "n": n} for p, (k, n) in self.parts.items()}
        out["recovery"].update({str(f): n for f, n in self.followups.items() if n})
        if self.blocked:
            out["blocked"] = {"steps": len(self.blocked), "from": self.blocked[0], "by": self.blocked_by}
        return json.dumps(out, sort_keys=True, ensure_ascii=False)


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() else round(v, 4)


def effective(s: ProcessStep) -> bool | None:
    """Did the acting step visibly do something (None: not an acting step, or no evidence)?"""
    if s.action_type in TERMINAL or s.action_type in OBSERVATION_TYPES or s.shared:
        return None
    if s.high_risk and s.effect is not None:
        return s.effect or s.in_fact is True
    if s.changed or s.focus or s.url_changed or s.state_kind == "new":
        return True
    return False if s.changed is False else None


def progressed(s: ProcessStep, kept: bool = True) -> bool | None:
    """Did the step reach a new screen or its expected outcome (False: it went back, or what it reached was not
    kept: ``kept`` False, the run made no net progress from before it; None: not judged)?"""
    if any(c in PROGRESS_EVENTS for c in s.codes) or s.state_kind == "new":
        return kept
    return False if s.state_kind == "return" else None


def _blocker(s: ProcessStep, goal: str | None) -> str | None:
    """What blocks the agent after step ``s`` when it could not have avoided it (None: nothing, or avoidable)."""
    for code in s.codes:
        wall = WALLS.get(code)
        if wall is not None and control_mod.of_failure(FailureMode.BLOCKED, wall, None, None, goal) \
                != Control.CONTROLLABLE:
            return wall
    for text in s.messages:
        m = control_mod.OUTSIDE.search(text)
        if m:
            return f"message: {m.group(0).lower()}"
    return None


def blocked_steps(steps: Sequence[ProcessStep], goal: str | None, starts: dict[int, str]
                  ) -> tuple[list[int], str | None]:
    """The steps spent on an uncontrollable block, and what the first was: a step showing one (or named in
    ``starts``, step -> blocker: the decisive step of an uncontrollable error, a damaged harness's step), and the
    steps after it while the run stays on a blocked screen, on its own screen or without a frame."""
    out: list[int] = []
    by: str | None = None
    walls: set[int] = set()
    on = False
    for s in steps:
        blocker = _blocker(s, goal) or starts.get(s.index)
        if blocker is None and on:
            stays = s.state is None or s.state_kind == "same" or s.state in walls
            on = stays
        if blocker is not None:
            on = True
            by = by or blocker
        if on:
            out.append(s.index)
            if s.state is not None:
                walls.add(s.state)
    return out, by


def assess(steps: Sequence[ProcessStep], goal: str | None = None, starts: dict[int, str] | None = None,
           stalled_from: int | None = None) -> ProcessScore:
    """The process score of a run's steps; ``goal``: the task's text (does it give a way past a sign-in wall);
    ``starts``: steps known to start an uncontrollable block, with what blocks (see :func:`blocked_steps`);
    ``stalled_from``: the step from which a run that made no net progress kept nothing it reached."""
    blocked, by = blocked_steps(steps, goal, starts or {})
    out = set(blocked)
    judged = [s for s in steps if s.index not in out]
    eff = [e for s in judged for e in [effective(s)] if e is not None]
    prog = [p for s in judged for p in [progressed(s, stalled_from is None or s.index < stalled_from)]
            if p is not None]
    followups = {f: sum(1 for s in judged if s.followup == f and s.in_fact is not True) for f in RECOVERY_CREDIT}
    followups.update({c: sum(1 for s in judged if c in s.codes) for c in FAILURE_CREDIT})
    credit = {**RECOVERY_CREDIT, **FAILURE_CREDIT}
    rec = (sum(credit[f] * n for f, n in followups.items()), sum(followups.values()))
    parts = {"effective": (float(sum(eff)), len(eff)), "progress": (float(sum(prog)), len(prog)), "recovery": rec}
    weight = sum(WEIGHTS[p] * n for p, (_, n) in parts.items())
    score = round(sum(WEIGHTS[p] * k for p, (k, _) in parts.items()) / weight, 4) if weight else None
    return ProcessScore(score, parts, followups, tuple(blocked), by)


# the run columns (schemas/ledger.py: analyzer:process.score, analyzer:process.evidence), of the run's facts


def _messages(row: dict[str, Any]) -> tuple[str, ...]:
    lines = [ln for ln in row.get("obs_observations") or [] if _MESSAGE.match(ln)]
    lines += [ln for ln in row.get("screen_messages") or [] if ln.startswith("error:")]
    return tuple(lines + ([row["executor_error"]] if row.get("executor_error") else []))


def step_of(row: dict[str, Any]) -> ProcessStep:
    """What the process score reads of a steps row (schemas/ledger.py STEPS)."""
    filtered = row.get("effect_filtered") or []
    # a DOM that changed with nothing drawn (a modal mounted off screen) is no visible effect
    in_fact = None if row["effect_in_fact_basis"] == "dom_changed" else row["effect_in_fact"]
    return ProcessStep(
        index=row["step_index"], action_type=str(row["action_type"] or ""), high_risk=bool(row["effect_high_risk"]),
        effect=row["action_effect_observed"], in_fact=in_fact, changed=row["effect_content_changed"],
        focus="outline" in filtered or "caret" in filtered, url_changed=row["obs_url_changed"],
        state=row["state_id"], state_kind=row["state_kind"],
        codes=tuple(code_of(c) for c in row["reward_reasons"] or []), followup=row["warning_followup"],
        messages=_messages(row), shared=bool(row["shared_frames"]))


def starts(damage: str | None, damage_evidence: str | None, decisive_step: int | None, decisive_kind: str | None,
           decisive_control: str | None, steps: Sequence[ProcessStep]) -> dict[int, str]:
    """The steps the run's other findings say start an uncontrollable block: a harness damage's step (every step,
    for a failed reset), the decisive step of an uncontrollable decisive error."""
    out: dict[int, str] = {}
    if damage == Damage.RESET_FAILED:
        return {s.index: f"damage: {damage}" for s in steps}
    if damage in control_mod.HARNESS:
        m = _DAMAGE_STEP.match(damage_evidence or "")
        at = int(m.group(1)) if m else (steps[-1].index if steps else None)
        if at is not None:
            out[at] = f"damage: {damage}"
        return out
    if decisive_step is not None and decisive_kind in (DecisiveKind.BLOCKED, DecisiveKind.IGNORED_MESSAGE) \
            and decisive_control == Control.UNCONTROLLABLE:
        out[int(decisive_step)] = f"decisive: {decisive_kind}"
    return out


def _starts(facts: Any, steps: Sequence[ProcessStep]) -> dict[int, str]:
    d = facts.decisive
    return starts(damage_mod.kind(facts), damage_mod.evidence(facts), d.step, d.kind, control_mod.decisive(facts),
                  steps)


def of_facts(facts: Any) -> ProcessScore:
    """The process score of a scored run (its steps rows and findings)."""
    steps = [step_of(r) for r in facts.step_rows]
    stalled = facts.states.stalled_from if facts.no_net_progress and facts.states is not None else None
    return assess(steps, facts.run.goal, _starts(facts, steps), stalled)


def score(facts: Any) -> float | None:
    """``runs.process_score``."""
    return of_facts(facts).score


def evidence(facts: Any) -> str | None:
    """``runs.process_evidence``."""
    return of_facts(facts).evidence()


def of_rows(run: dict[str, Any], step_rows: Sequence[dict[str, Any]]) -> ProcessScore:
    """The process score from a run's ledger rows (its runs row and steps rows), as :func:`of_facts` gives it at
    score time: for a run whose damage changed after it was scored (a failed reset found across its repeats,
    :mod:`trajcheck.queries.resets`). ``run`` carries the damage and ``decisive_control`` as they now are."""
    steps = [step_of(r) for r in sorted(step_rows, key=lambda r: r["step_index"])]
    stalled = run.get("stalled_from_step") if run.get("no_net_progress") else None
    return assess(steps, run.get("goal"), starts(run.get("damage"), run.get("damage_evidence"),
                                                 run.get("decisive_step"), run.get("decisive_kind"),
                                                 run.get("decisive_control"), steps), stalled)
