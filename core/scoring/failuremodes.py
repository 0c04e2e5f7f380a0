"""A run's failure mode and its first decisive error from its findings: what :mod:`trajcheck.analyzers.failuremodes`
and :mod:`trajcheck.analyzers.decisive` read, gathered from what the other analyzers found (kept apart from
:mod:`trajcheck.scoring.analysis`, which calls :func:`failure_of` and :func:`decisive_of`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..analyzers import checklink, claims, decisive, failuremodes as failures
from ..analyzers.loops import LoopFinding
from ..analyzers.states import StepState
from ..analyzers.answers import answer_matches
from ..analyzers.contract import ContractResult
from ..analyzers.evidence import EvidenceVerdict, StepEvidence
from ..analyzers.referee import Verdict
from ..base.reasons import BLOCKING_CODES, ClaimReason
from ..media.frames import to_frame
from ..schemas.records import Run, Step

#: Claims in which the agent itself reported that it failed.
_GAVE_UP = frozenset({ClaimReason.AGENT_REPORTED_FAILURE, ClaimReason.MESSAGE_ADMITS_FAILURE})


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def failure_of(run: Run, verdict: Verdict, ev: EvidenceVerdict, claim: claims.Claim, contract: ContractResult,
               evaluator: str | None, overlays: Mapping[int, str | None], ev_steps: Sequence[StepEvidence] = ()
               ) -> failures.Failure:
    """The failure mode of ``run`` (none for a run that passed, or an unknown run that claimed nothing);
    ``overlays``: the modal overlay open before each step, if any; ``ev_steps``: what the evidence referee read of
    each step (the messages in its frames)."""
    if not failures.applies(verdict.final, verdict.claimed_success):
        return failures.NONE
    steps = run.steps
    last = steps[-1] if steps else None
    ender = next((s for s in reversed(steps) if s.action.type in ("DONE", *claims.GIVE_UP_TYPES)), None)
    gave_up: str | None = claim.reason if claim.reason in _GAVE_UP else None
    if gave_up is None and ender is not None and ender.action.type in claims.GIVE_UP_TYPES:
        gave_up = "fail_step"
    urls = {s.index: u for s in steps if s.page is not None for u in [s.page.url_after or s.page.url_before] if u}
    judge = verdict.judge
    return failures.classify(failures.FailureFacts(
        verdict=verdict.final, verdict_reason=str(verdict.reason), claimed=verdict.claimed_success,
        evidence_reasons=ev.reasons, last_step=last.index if last else None, urls=urls,
        overlays={i: o for i, o in overlays.items() if o},
        no_answer=claims.ended_without_answer(run, claim),
        executor_error=(last.executor_error or "failed") if last is not None and last.executor_ok is False else None,
        gave_up=gave_up, gave_up_evidence=claim.evidence, done_step=ender.index if ender else None,
        failed_checks=tuple((c.name, c.type, _json(c.evidence)) for c in contract.failed),
        evaluator=evaluator, outcome_score=run.outcome_score,
        judge=judge.verdict if judge else None, judge_model=judge.model if judge else None,
        answer_matches=answer_matches(run, ender) if ender is not None and ender.action.type == "DONE" else None,
        refused=failures.refusal(ev_steps)))


def _path(url: str | None) -> str | None:
    return failures.page_of(url)


def _new_errors(ev: StepEvidence) -> tuple[str, ...]:
    """The error messages on the page after a step that were not there before it: read from the screen (new by
    its pixels), or from a DOM snapshot before and after (on another path, only errors worded as errors, as the
    evidence referee reads them); none where no snapshot shows the page before."""
    after, before = ev.messages_after, ev.messages_before
    if after is None:
        return ()
    if after.source == "screen_text":
        return tuple(sorted(after.errors))
    if before is None:
        return ()
    moved = _path(ev.url_before) not in (None, _path(ev.url_after)) and ev.url_after is not None
    return tuple(sorted((after.worded_errors if moved else after.errors) - before.errors))


def check_link(steps: Sequence[Step], contract: ContractResult, spec: Mapping[str, Any] | None,
               screen: tuple[int | None, int | None], frame: tuple[int, int] | None) -> tuple[int, str] | None:
    """The step a failed contract check is linked to and its evidence (analyzers/checklink.py); None without a
    contract, a failed check, or a step it names. ``screen``: the run's screen size, ``frame``: the judged frame's
    (the steps' points are mapped to frame pixels, where the checks read)."""
    if spec is None or not contract.failed:
        return None
    specs = {c.get("name") or f"{c.get('type')}#{i}": c for i, c in enumerate(spec.get("checks") or [], start=1)
             if isinstance(c, Mapping)}
    checks = [checklink.FailedCheck(c.name, c.type, specs.get(c.name, {}), c.evidence) for c in contract.failed]
    traces = []
    for s in steps:
        a, p = s.action, s.page
        point = to_frame(*a.point, screen, frame)[:2] if a.point is not None and frame is not None else a.point
        traces.append(checklink.CheckStep(s.index, a.type, point, a.text, p.url_before if p else None,
                                          p.url_after if p else None, s.frame_pre, s.frame_post))
    found = checklink.link(checks, traces)
    return (found.step, found.evidence) if found is not None else None


def decisive_of(steps: Sequence[Step], states: Sequence[StepState], loops: Sequence[LoopFinding],
                ev_steps: Sequence[StepEvidence], failure: failures.Failure, stalled_from: int | None,
                checked: tuple[int, str] | None = None) -> decisive.Decisive:
    """The first decisive error of a run with a failure mode (analyzers/decisive.py), from what scoring found of
    each step: its state, its drift loop, what the evidence referee read of it (``ev_steps``), and the step a
    failed contract check is linked to (``checked``, :func:`check_link`)."""
    if failure.mode is None:
        return decisive.NONE
    traces = []
    for k, (s, state, loop, ev) in enumerate(zip(steps, states, loops, ev_steps)):
        shown = failures.flashed(ev_steps, k) if ev.high_risk else frozenset()
        before, after = _path(ev.url_before), _path(ev.url_after)
        traces.append(decisive.StepTrace(
            index=s.index, action_type=s.action.type, high_risk=ev.high_risk, effect=ev.effect,
            changed=ev.content_changed, moved=before is not None and after is not None and before != after,
            state_kind=state.kind, first_seen=state.first_step, loop=loop.loop_id,
            new_errors=tuple(sorted(set(_new_errors(ev)) | shown)),
            blocking=tuple(c for c in ev.reward_codes if c in BLOCKING_CODES),
            frame_pre=s.frame_pre, frame_post=s.frame_post))
    return decisive.find(traces, failure, stalled_from, checked)
