"""The analyzer sequence: what scoring concludes from a run's loaded evidence.

Each analyzer is a pure function of :mod:`trajcheck.analyzers`; this module only runs them in order and
hands each one what the earlier ones found:

1. ambient change, learned per page from the frame pairs the agent did not cause (``ambient``);
2. per step: high-risk classification (``highrisk``), the perceptual verdict (``perceptual``), the
   prediction check (``predictions``);
3. per run: drift loops and the done gate (``loops``), the referee's contract and judges (``contract``,
   ``referee``);
4. per step, looking back: the evidence reward (``lookback`` over ``reward``);
5. per run: the evidence referee (``evidence``), the evaluator, the agent's claim (``claims``), and the final
   verdict (``referee.decide``);
6. per step, looking ahead: what followed each warning of the verifier, and whether it was shown or false
   (``followup``);
7. per step and per run: tokens, cost and time (``spend``), with the cost of a ``--prices`` list where the log
   records none.

A new analyzer is one entry here, its findings one attribute of :class:`StepFindings` or
:class:`RunFindings`, and its columns one line each in :mod:`trajcheck.schemas.ledger`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analyzers import (claims, decisive as decisive_mod, evidence as evidence_mod, failuremodes as failures,
                         followup, highrisk, loops, lookback, perceptual, predictions, progress, referee,
                         rubric as rubric_mod, screentext, spend as spend_mod, states as states_mod)
from ..analyzers.ambient import learn_per_page, page_of
from ..analyzers.answers import answer_matches
from ..analyzers.contract import NOT_APPLICABLE, ContractResult
from ..analyzers.image_evidence import ImageEvidence
from ..analyzers.messages import PageMessages
from ..analyzers.page import PageFacts
from ..analyzers.perceptual import EffectFinding
from ..analyzers.predictions import PredictionFinding
from ..analyzers.referee import Judge, Verdict
from ..analyzers.reward import Reward
from ..schemas.records import Run, Step

from .coverage import not_read
from .contracts import LoadedContract
from .failuremodes import check_link, decisive_of, failure_of
from .judgments import Judgment
from .loading import LoadedRun, RefereeEvidence, RefereePlan
from .options import ScoreOptions


@dataclass
class StepFindings:
    """Everything known about one step; the steps table's column sources are paths into it."""

    run: Run
    step: Step
    ev: ImageEvidence
    risk: highrisk.HighRisk
    effect: EffectFinding
    page: PageFacts
    pred: PredictionFinding
    loop: loops.LoopFinding
    reward: Reward
    gate: bool  # no_observed_delta_after_waits
    state: states_mod.StepState  # where the step's post frame is: a new screen, a return, the same
    spend: spend_mod.StepSpend  # the step's tokens, cost and seconds
    screen: screentext.ScreenFinding | None = None  # what OCR read of the step's change (None: not read)
    follow: followup.Followup = followup.NONE  # after a warning: what the agent did, was it shown, was it false


@dataclass(kw_only=True)
class RunFindings:
    """Everything concluded about one run, built by keyword; the runs table's column sources are paths into it
    (through :class:`trajcheck.scoring.rows.RunFacts`, which adds only what belongs to rows). A new finding is one
    field here: the row builder needs no edit."""

    run: Run
    steps: list[StepFindings]
    contract: LoadedContract | None
    contract_result: ContractResult
    verdict: Verdict
    ev_verdict: evidence_mod.EvidenceVerdict
    evaluator: str | None
    claim: claims.Claim
    states: states_mod.RunStates
    no_net_progress: bool  # it ends on a screen first seen early on, with nothing kept since
    reference_steps: int | None  # the task's reference step count: the run's own, its contract's, the tasks file's
    spend: spend_mod.RunSpend  # the run's tokens, cost (and where it comes from) and seconds
    #: what appeared on the final frame since the last high-risk action (OCR, a claiming run without DOM)
    final_screen: screentext.ScreenFinding | None = None
    ocr_engine: str | None = None  # the OCR engine that read the screen, if any
    rubric: rubric_mod.RubricResult = rubric_mod.NO_RUBRIC  # the contract's tree and partial credit
    judgments: tuple[Judgment, ...] = ()  # the judges of score --judgments that judged this run
    failure: failures.Failure = failures.NONE  # the decisive cause of a run that did not pass (analyzers/failures)
    decisive: decisive_mod.Decisive = decisive_mod.NONE  # where it was lost: its first decisive error
    actions_after_last_frame: int | None = None  # actions that change the screen after the last screenshot


def _judges(run: Run, ev: RefereeEvidence, contract_data: dict[str, Any] | None, given: list[Judgment]
            ) -> tuple[ContractResult, rubric_mod.RubricResult, tuple[Judge | None, Judge | None]]:
    """The contract's result and its rubric, and the judges of the final state: the recorded one and those of
    ``score --judgments`` (``given``) combined (:func:`trajcheck.analyzers.referee.combine_judges`), and the one
    computed from references, kept beside them."""
    result, rubric = rubric_mod.evaluate(contract_data, ev.contract_state) \
        if contract_data is not None and ev.contract_state is not None else (NOT_APPLICABLE, rubric_mod.NO_RUBRIC)
    reference = referee.reference_judge(ev.final, ev.references, ev.regions, **ev.limits) \
        if ev.final is not None and ev.references else None
    recorded = None
    if run.judge and run.judge.verdict in ("pass", "fail"):
        recorded = Judge(run.judge.model or "recorded", run.judge.verdict, run.judge.score, run.judge.confidence,
                         tuple(run.judge.reasons), True, "recorded")
    users = [Judge(j.judge, j.verdict, None, j.confidence, (j.reason,) if j.reason else (), True, "judgments")
             for j in given]
    if users:
        recorded = referee.combine_judges(([recorded] if recorded is not None else []) + users)
    return result, rubric, referee.choose_judges(recorded, reference)


def _messages(sf: StepFindings) -> tuple[PageMessages | None, PageMessages | None]:
    """The messages before and after a step: its DOM snapshots', else after it the new messages OCR read of
    its change (the DOM wins where both were read; screen text is new by its pixels, so there is no before)."""
    before, after = sf.page.messages_before, sf.page.messages_after
    return before, sf.screen.after if sf.screen is not None and after is None else after


def _evidence_steps(findings: list[StepFindings], final: screentext.ScreenFinding | None
                    ) -> list[evidence_mod.StepEvidence]:
    """What the evidence referee reads of each step, from the findings already computed. What appeared on the
    final frame (``final``) is added to the last step's messages after."""
    msgs = [_messages(sf) for sf in findings]
    if final is not None and findings and any(r.width for r in final.regions):  # not NOTHING_NEW: a region read
        b, a = msgs[-1]
        if a is None or a.source == "screen_text":
            msgs[-1] = (b, final.after if a is None else screentext.merge([a, final.after]))
    out = []
    for sf, (m_before, m_after) in zip(findings, msgs):
        s, p = sf.step, sf.step.page
        out.append(evidence_mod.StepEvidence(
            index=s.index, action_type=s.action.type, high_risk=sf.risk.high_risk,
            effect=sf.effect.action_effect_observed, content_changed=sf.effect.content_changed,
            url_before=p.url_before if p else None, url_after=p.url_after if p else None,
            reward_codes=tuple(c.split(":")[0] for c in sf.reward.reasons), in_loop=sf.loop.loop_id is not None,
            done_gate=sf.gate, messages_before=m_before, messages_after=m_after,
            answer_matches=answer_matches(sf.run, s) if s.action.type == "DONE" else None))
    return out


def _follow_steps(found: list[StepFindings], threshold: int) -> list[followup.FollowStep]:
    """What the follow-up of the verifier's warnings reads of each step, from the findings already computed."""
    out = []
    prev: Step | None = None
    for sf in found:
        s, p, st = sf.step, sf.step.page, sf.state
        # a pre frame of its own (not the previous step's post frame) shows the screen just before this step
        own_pre = st.pre if prev is not None and sf.ev.pre_hash is not None and s.frame_pre != prev.frame_post \
            else None
        out.append(followup.FollowStep(
            index=s.index, action_type=s.action.type, key=loops.step_key(s), element=s.action.element,
            point=s.action.point, high_risk=sf.risk.high_risk, verdict=sf.effect.action_effect_observed,
            changed=sf.effect.content_changed, verdict_seed=sf.effect.action_effect_observed_seed,
            changed_seed=perceptual.seed_changed(sf.ev, threshold), url_before=p.url_before if p else None,
            url_after=p.url_after if p else None, dom_changed=sf.page.obs.meaningful_change, state=st.state,
            own_pre_state=own_pre, recorded_feedback=s.recorded_feedback,
            recorded_effect=s.recorded_effect))
        prev = s
    return out


def _passed_by_others(verdict: Verdict) -> bool:
    """Did the run pass by a contract, an evaluator or a judge (not by its own evidence alone)?"""
    return verdict.final == "pass" and bool({"contract", "evaluator", "judge"} & set(verdict.source.split("+")))


def _page_key(url: str | None) -> str | None:
    """The page a frame shows, for telling states apart: its URL without the fragment."""
    return url.split("#", 1)[0] if url else None


def _states(steps: tuple[Step, ...], evidence: list[ImageEvidence], pages: list[PageFacts]
            ) -> tuple[list[states_mod.StepState], states_mod.RunStates]:
    """The states the run's frames visit (analyzers/states.py)."""
    pre: list[states_mod.FrameSig | None] = []
    post: list[states_mod.FrameSig | None] = []
    for s, ev, pg in zip(steps, evidence, pages):
        p = s.page
        pre.append(states_mod.FrameSig(ev.pre_hash, ev.pre_thumb, _page_key(p.url_before if p else None),
                                       pg.skeleton_before) if ev.pre_hash is not None else None)
        post.append(states_mod.FrameSig(ev.post_hash, ev.post_thumb, _page_key(p.url_after if p else None),
                                        pg.skeleton_after) if ev.post_hash is not None else None)
    return states_mod.track([s.index for s in steps], pre, post)


def analyze(run: Run, loaded: LoadedRun, plan: RefereePlan, opts: ScoreOptions) -> RunFindings:
    """Run every analyzer over ``run``'s loaded evidence, in order."""
    steps = run.steps
    po = opts.perceptual
    ambient = learn_per_page(loaded.transitions) if po.ambient else {}
    risks = [highrisk.classify(s.action.type, s.action.keys, s.reasoning, s.action.text, s.action.extra)
             for s in steps]
    effects = [perceptual.assess(s.action.type, s.action.keys, r, ev, ambient.get(page_of(s)), po)
               for s, r, ev in zip(steps, risks, loaded.evidence)]
    preds = [predictions.step_prediction(s.predict, s.expected, f.content_changed, pg.expected_ran,
                                         pg.expected_failed, pg.url_as_expected, pg.kind)
             for s, f, pg in zip(steps, effects, loaded.pages)]
    signals = [loops.StepSignal(s.index, s.action.type, loops.step_key(s), ev.pre_hash, ev.post_hash)
               for s, ev in zip(steps, loaded.evidence)]
    loop_findings = loops.find_loops(signals, po.threshold)
    gates = loops.no_observed_delta_after_waits(signals, po.threshold)
    contract = plan.contract
    given = opts.judgments_of(run.run_id)
    contract_result, rubric, judges = _judges(run, loaded.referee, contract.data if contract else None, given)
    at_step = {steps[plan.eval_pos].index: contract_result} if contract_result.verdict != "not_applicable" else {}
    rewards = lookback.score_steps(run, loaded.evidence, effects, loaded.pages, preds, loop_findings, gates,
                                   po.threshold, at_step)
    step_states, run_states = _states(steps, loaded.evidence, loaded.pages)
    indices = [s.index for s in steps]
    stalled = progress.no_net_progress(indices, run_states, [f.action_effect_observed if r.high_risk else None
                                                             for f, r in zip(effects, risks)])
    answers = [answer_matches(run, s) if s.action.type == "DONE" else None for s in steps]
    rewards = progress.apply(rewards, step_states, indices, run_states, stalled, answers,
                             [s.action.type for s in steps])
    stalled_evidence = progress.stall_evidence(run_states) if stalled and True not in answers else None
    reads = loaded.screen or [[] for _ in steps]
    screens = [screentext.finding(r, pg.messages_before, pg.messages_after) for r, pg in zip(reads, loaded.pages)]
    step_spends, run_spend = spend_mod.assess([s.usage for s in steps], [s.wall_seconds for s in steps], run.usage,
                                              run.wall_seconds, run.agent_model, opts.prices)
    found = [StepFindings(run, *x) for x in zip(steps, loaded.evidence, risks, effects, loaded.pages, preds,
                                                loop_findings, rewards, gates, step_states, step_spends, screens)]
    final_screen = screentext.finding(loaded.final_screen)
    ev_steps = _evidence_steps(found, final_screen)
    ev_verdict = evidence_mod.decide(ev_steps, stalled_evidence)
    evaluator = referee.evaluator_verdict(run.outcome_score, opts.evaluator_pass)
    claim = claims.claim_of(run)
    verdict = referee.decide(contract_result, *judges, claim.claimed, ev_verdict, evaluator,
                             claims.ended_without_answer(run, claim), not_read(run, loaded.evidence), run.ends)
    follows = followup.followups(_follow_steps(found, po.threshold), run.perceptual_verifier_recorded,
                                 _passed_by_others(verdict))
    for sf, f in zip(found, follows):
        sf.follow = f
    failure = failure_of(run, verdict, ev_verdict, claim, contract_result, evaluator,
                         {sf.step.index: sf.page.overlay_before for sf in found}, ev_steps)
    final_frame = loaded.referee.final
    checked = check_link(steps, contract_result, contract.data if contract else None,
                         (run.screen_width, run.screen_height),
                         (final_frame.rgb.shape[1], final_frame.rgb.shape[0]) if final_frame is not None else None)
    return RunFindings(run=run, steps=found, contract=contract, contract_result=contract_result, verdict=verdict,
                       ev_verdict=ev_verdict, evaluator=evaluator, claim=claim, states=run_states,
                       no_net_progress=stalled, reference_steps=_reference_steps(run, contract, opts),
                       spend=run_spend, final_screen=final_screen, ocr_engine=loaded.ocr_engine, rubric=rubric,
                       judgments=tuple(given), actions_after_last_frame=loaded.actions_after_last_frame,
                       failure=failure, decisive=decisive_of(steps, step_states, loop_findings, ev_steps, failure,
                                                            run_states.stalled_from, checked))


def _reference_steps(run: Run, contract: LoadedContract | None, opts: ScoreOptions) -> int | None:
    """The task's reference step count: the run's own, else its contract's, else the tasks file's."""
    if run.reference_steps is not None:
        return run.reference_steps
    v = contract.data.get("reference_steps") if contract else None
    if isinstance(v, int) and not isinstance(v, bool) and v > 0:
        return v
    return opts.reference_steps_of(run.task_id)
