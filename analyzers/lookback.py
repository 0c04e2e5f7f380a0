"""The reward scorer over a whole run: each step scored in order, looking back only at earlier steps.

:func:`trajcheck.analyzers.reward.score_step` scores one step from a :class:`RewardInput`. What a step's
input needs from the steps before it lives here: has this screen or DOM been seen before in the run (new
information), did the same action already fail, what kind of failure came just before, did the agent
mention a confirmation in its last three steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..base.hashing import Hash64
from ..base.reasons import RewardCode
from ..schemas.records import Run, Step

from . import reward
from .answers import answer_matches
from .image_evidence import ImageEvidence
from .loops import ActionKey, LoopFinding, step_key
from .page import PageFacts
from .perceptual import EffectFinding
from .predictions import PredictionFinding

#: Failures after which a re-read is judged against the observation the failing step relied on.
_STALE = (RewardCode.EXECUTOR_STALE_REF, RewardCode.EXECUTOR_NOT_FOUND)


@dataclass
class _History:
    """What the earlier steps of the run leave for the later ones."""

    failed_keys: list[ActionKey] = field(default_factory=list)
    seen_frames: list[Hash64] = field(default_factory=list)
    seen_doms: set[str] = field(default_factory=set)
    prev_failure: RewardCode | None = None
    last_observation: tuple[Hash64 | None, str | None] | None = None  # post state of the last observation step
    recent_confirm: list[bool] = field(default_factory=list)


def _new_information(s: Step, ev: ImageEvidence, pg: PageFacts, h: _History, t: int) -> bool | None:
    """Is the screen or DOM after the step unseen so far in the run (None: neither was recorded)?"""
    if ev.post_hash is None and pg.dom_after_hash is None:
        return None
    seen_pre = [ev.pre_hash] if ev.pre_hash is not None else []
    frame_new = ev.post_hash is not None and all(ev.post_hash - x > t for x in h.seen_frames + seen_pre)
    dom_new = pg.dom_after_hash is not None and pg.dom_after_hash not in h.seen_doms
    if h.prev_failure in _STALE and h.last_observation is not None and s.action.type in reward.OBSERVATION_TYPES:
        # A re-read after a stale reference is judged against the observation the stale reference came
        # from: the page may have re-rendered before the failing step.
        old_frame, old_dom = h.last_observation
        return bool((ev.post_hash is not None and old_frame is not None and ev.post_hash - old_frame > t)
                    or (pg.dom_after_hash is not None and old_dom is not None and pg.dom_after_hash != old_dom))
    return frame_new or dom_new


def _contract_fields(s: Step, contracts: dict[int, Any]) -> tuple[str | None, bool | None]:
    """The contract a step records, else the run's contract evaluated at this step (``contracts``)."""
    c = contracts.get(s.index)
    name = s.contract_name or (c.name if c is not None else None)
    passed = s.contract_passed
    if passed is None and c is not None:
        passed = {"pass": True, "fail": False}.get(c.verdict)  # an uncertain contract says nothing of the step
    return name, passed


def _remember(s: Step, ev: ImageEvidence, pg: PageFacts, key: ActionKey, h: _History) -> None:
    failed = s.executor_ok is False or bool(s.executor_error)
    if failed:
        h.failed_keys.append(key)
        h.prev_failure = reward.classify_error(s.executor_error)[0]
    else:
        h.prev_failure = None
    h.recent_confirm.append(reward.mentions_confirmation(s.reasoning))
    if s.action.type in reward.OBSERVATION_TYPES and not failed:
        h.last_observation = (ev.post_hash, pg.dom_after_hash)
    h.seen_frames += [x for x in (ev.pre_hash, ev.post_hash) if x is not None]
    if pg.dom_after_hash:
        h.seen_doms.add(pg.dom_after_hash)


def score_steps(run: Run, evidence: list[ImageEvidence], effects: list[EffectFinding], pages: list[PageFacts],
                preds: list[PredictionFinding], loop_findings: list[LoopFinding], gates: list[bool],
                threshold: int, contracts: dict[int, Any]) -> list[reward.Reward]:
    """The reward of every step of ``run`` (the lists are per step, in order). ``contracts`` maps a step index
    to the :class:`~trajcheck.analyzers.contract.ContractResult` of the run's contract evaluated there."""
    out: list[reward.Reward] = []
    h = _History()
    require = run.config.get("require_confirmation") is True
    for s, ev, f, pg, pr, lf, gate in zip(run.steps, evidence, effects, pages, preds, loop_findings, gates):
        key = step_key(s)
        contract_name, contract_passed = _contract_fields(s, contracts)
        p = s.page
        out.append(reward.score_step(reward.RewardInput(
            action_type=s.action.type, signature=str(key), reasoning=s.reasoning, high_risk=f.checked,
            executor_ok=s.executor_ok, executor_error=s.executor_error, effect=f.action_effect_observed,
            content_changed=f.content_changed, frames_present=ev.change is not None,
            url_before=p.url_before if p else None, url_after=p.url_after if p else None,
            meaningful_change=pg.obs.meaningful_change, something_changed=pg.obs.something_changed,
            page_title=pg.title, page_text=pg.text, login_form_after=pg.login_form_after,
            new_information=_new_information(s, ev, pg, h, threshold),
            contract_name=contract_name, contract_passed=contract_passed,
            prediction_held=pr.held, expected_state_reached=(pr.held if pr.prediction == "expected" else None),
            answer_matches=answer_matches(run, s) if s.action.type == "DONE" or s.extra.get("extracted_content")
            else None,
            loop_position=lf.position, done_gate=gate, semantic_known=s.semantic is not None,
            require_confirmation=require, confirmed_before=any(h.recent_confirm[-3:]),
            repeats_failed_action=any(key.same(k) for k in h.failed_keys), previous_failure_kind=h.prev_failure)))
        _remember(s, ev, pg, key, h)
    return out
