"""Every reason and code the analyzers write into the ledger, declared once, with what each value means.

A reason column holds one of a fixed set of values: why a step's effect verdict is what it is
(``steps.effect_reason``), why the reward scorer scored a step as it did (the codes of
``steps.reward_reasons``), why the referee decided a run's verdict (``runs.verdict_reason``)... Each set is
a ``StrEnum`` here, so the analyzers name a value (``EffectReason.NOT_HIGH_RISK``) and the type checker
refuses a misspelt one; a member is its text, so the ledger stores what it stored before.

How to add a value: add the member to its enum and its meaning to the enum's ``Section`` in ``SECTIONS``
(``tests/test_reasons.py`` fails while one lacks the other), use the member in the analyzer, then regenerate the
reference page: ``python -m devtools.reasonsdoc > docs/reasons.md``; ``trajcheck columns`` links to it. Problems
(what is wrong with a run's files) are another catalogue: :mod:`trajcheck.base.problems`.
"""

from __future__ import annotations

from enum import StrEnum

from .catalogue import Section as Section  # re-exported: the sections below are its values
from .failuremodes import (CONTROL_MEANINGS, DAMAGE_MEANINGS, DECISIVE_MEANINGS, MEANINGS as FAILURE_MEANINGS,
                           Control as Control, Damage as Damage, DecisiveKind as DecisiveKind,
                           FailureMode as FailureMode)

#: The command that rewrites the committed reference page from this catalogue.
REGENERATE = "python -m devtools.reasonsdoc > docs/reasons.md"


class EffectReason(StrEnum):
    """Why the perceptual verifier's verdict is what it is (``effect_reason``, ``effect_seed_reason``)."""

    VERIFIER_OFF = "verifier_off"
    NOT_HIGH_RISK = "not_high_risk"
    # the four frame problems a step's evidence can carry: their problem slugs (trajcheck.base.problems) too
    FRAMES_MISSING = "frames_missing"
    FRAME_UNREADABLE = "frame_unreadable"
    FRAME_TOO_LARGE = "frame_too_large"
    NOT_A_REGULAR_FILE = "not_a_regular_file"
    SHARED_FRAMES = "shared_frames"
    FRAME_SIZE_CHANGED = "frame_size_changed"
    CONTENT_CHANGED = "content_changed"
    CONTENT_CHANGED_IN_REGION = "content_changed_in_region"
    CONTENT_CHANGED_OUTSIDE_REGION = "content_changed_outside_region"
    NO_PIXEL_CHANGE = "no_pixel_change"
    ONLY_FOCUS_OUTLINE = "only_focus_outline"
    ONLY_CARET = "only_caret"
    ONLY_AMBIENT_CHANGE = "only_ambient_change"
    ONLY_POINTER_RESTYLE = "only_pointer_restyle"
    ONLY_RENDER_NOISE = "only_render_noise"
    ONLY_COSMETIC_CHANGE = "only_cosmetic_change"
    GLOBAL_AND_REGION_CHANGED = "global_and_region_changed"
    GLOBAL_CHANGED = "global_changed"
    REGION_CHANGED = "region_changed"
    GLOBAL_AND_REGION_STABLE = "global_and_region_stable"
    GLOBAL_STABLE = "global_stable"


class ObservationReason(StrEnum):
    """Why the observation verifier decided as it did (``obs_reason``)."""

    NO_CHANGE = "no_change"
    CLIENT_WITNESS_ONLY = "client_witness_only"
    CHANGED_NO_SEMANTIC_VERDICT = "changed_no_semantic_verdict"
    SEMANTIC_GOAL_ACHIEVED = "semantic_goal_achieved"
    SEMANTIC_SUCCESS = "semantic_success"
    SEMANTIC_FAILURE = "semantic_failure"
    NO_PAGE_EVIDENCE = "no_page_evidence"


class RewardCode(StrEnum):
    """The codes of the reward scorer's signals (``reward_reasons``: ``code`` or ``code: evidence``)."""

    UNCONFIRMED_DESTRUCTIVE_ACTION = "unconfirmed_destructive_action"
    CONTRACT_PASSED = "contract_passed"
    CONTRACT_FAILED = "contract_failed"
    EXPECTED_DATA_EXTRACTED = "expected_data_extracted"
    EXPECTED_STATE_REACHED = "expected_state_reached"
    EXECUTOR_ERROR = "executor_error"
    EXECUTOR_STALE_REF = "executor_stale_ref"
    EXECUTOR_TIMEOUT = "executor_timeout"
    EXECUTOR_NOT_FOUND = "executor_not_found"
    REPEATED_FAILED_ACTION = "repeated_failed_action"
    CAPTCHA = "captcha"
    BLOCKING_PAGE = "blocking_page"
    AUTH_REDIRECT = "auth_redirect"
    DRIFT_LOOP = "drift_loop"
    NO_OBSERVED_DELTA_AFTER_WAITS = "no_observed_delta_after_waits"
    NO_OBSERVED_EFFECT = "no_observed_effect"
    PREDICTION_FAILED = "prediction_failed"
    FRESH_READ_AFTER_FAILURE = "fresh_read_after_failure"
    NEW_INFORMATION = "new_information"
    REPEATED_OBSERVATION = "repeated_observation"
    PAGE_CHANGED = "page_changed"
    NO_CHANGE = "no_change"
    NO_SIGNAL = "no_signal"
    STATE_RETURN = "state_return"
    OSCILLATION = "oscillation"
    NO_NET_PROGRESS = "no_net_progress"


#: Reward codes that mean the page after the step blocks the agent: they cap a step's score (the reward
#: scorer's rule 4), end a run blocked (the evidence referee) and set ``runs.reward_first_blocking_step``.
BLOCKING_CODES: frozenset[RewardCode] = frozenset({RewardCode.AUTH_REDIRECT, RewardCode.BLOCKING_PAGE,
                                                   RewardCode.CAPTCHA})


class EvidenceCode(StrEnum):
    """The evidence referee's reason codes (``evidence_reasons``: ``code@step: evidence``)."""

    ENDS_BLOCKED = "ends_blocked"
    ERROR_AFTER_LAST_HIGH_RISK = "error_after_last_high_risk"
    LAST_HIGH_RISK_NO_EFFECT = "last_high_risk_no_effect"
    ENDS_IN_LOOP = "ends_in_loop"
    DONE_AFTER_IDLE_WAITS = "done_after_idle_waits"
    NAVIGATED_AFTER_LAST_HIGH_RISK = "navigated_after_last_high_risk"
    SUCCESS_AFTER_LAST_HIGH_RISK = "success_after_last_high_risk"
    ANSWER_MATCHES_REFERENCE = "answer_matches_reference"
    EFFECT_WITHOUT_OUTCOME = "effect_without_outcome"
    NO_NET_PROGRESS = "no_net_progress"


class VerdictReason(StrEnum):
    """Why the referee's final verdict is what it is (``verdict_reason``, ``disagreement_reason``)."""

    AGREEMENT = "agreement"
    JUDGE_DISAGREEMENT = "judge_disagreement"
    EVALUATOR_DISAGREEMENT = "evaluator_disagreement"
    CONTRACT_ONLY = "contract_only"
    EVALUATOR_ONLY = "evaluator_only"
    JUDGE_ONLY = "judge_only"
    EVIDENCE_ONLY = "evidence_only"
    NO_ANSWER = "no_answer"
    NO_VERDICT = "no_verdict"
    HARNESS_MAY_STOP = "harness_may_stop"
    ENDS_UNDECLARED = "ends_undeclared"
    NOT_READ = "not_read"
    NO_LOG = "no_log"
    CONTRACT_UNDECIDED = "contract_undecided"


class PairMatch(StrEnum):
    """How two runs' aligned steps compare (``trajcheck diff``: each pair's ``match``, and the first
    divergence's ``reason``)."""

    SAME = "same"
    DIFFERENT_SCREEN = "different_screen"
    DIFFERENT_ACTION = "different_action"
    DIFFERENT_TARGET = "different_target"
    DIFFERENT_RESULT = "different_result"
    EXTRA_STEP = "extra_step"
    RUN_ENDED = "run_ended"


class ClaimReason(StrEnum):
    """Why ``claimed_success`` is what it is (``claim_reason``)."""

    NO_DONE = "no_done"
    AGENT_REPORTED_FAILURE = "agent_reported_failure"
    AGENT_REPORTED_SUCCESS = "agent_reported_success"
    MESSAGE_ADMITS_FAILURE = "message_admits_failure"
    DONE = "done"
    OUTCOME_DONE = "outcome_done"


class WarningFollowup(StrEnum):
    """What the agent did after a step the perceptual verifier warned on (``warning_followup``,
    ``warning_followup_seed``); the rules and their order are in docs/perceptual.md, "After a warning"."""

    RECOVERED = "recovered"
    REPEATED = "repeated"
    MOVED_ON = "moved_on"
    DECLARED_DONE = "declared_done"
    RUN_ENDED = "run_ended"


class WarningShownSource(StrEnum):
    """Where ``warning_shown`` comes from (``warning_shown_source``)."""

    RECORDED_FEEDBACK = "recorded_feedback"
    RECORDED_VERDICT = "recorded_verdict"
    RUN_CONFIG = "run_config"


class EffectInFactBasis(StrEnum):
    """What shows that a warned step did have an effect, a false warning (``effect_in_fact_basis``)."""

    URL_CHANGED = "url_changed"
    DOM_CHANGED = "dom_changed"
    LATER_FRAME = "later_frame"
    RUN_PASSED = "run_passed"


class CostSource(StrEnum):
    """Where a run's cost comes from (``cost_source``)."""

    LOG = "log"
    PRICES = "prices"


_E = EffectReason
_R = RewardCode
_V = VerdictReason

SECTIONS: tuple[Section, ...] = (
    Section("Effect verdicts", ("steps.effect_reason", "steps.effect_seed_reason"), EffectReason,
            "the value itself; the seed's rule (effect_seed_reason) gives the first seven and the last five",
            {
                _E.VERIFIER_OFF: "the run was scored with the perceptual verifier off (null verdict)",
                _E.NOT_HIGH_RISK: "the action is not high-risk by the seed's table, so it is not checked (null)",
                _E.FRAMES_MISSING: "a frame of the step is not there, or the step has none (null)",
                _E.FRAME_UNREADABLE: "a frame is not a readable PNG, JPEG or WebP image (null)",
                _E.FRAME_TOO_LARGE: "a frame is over the decompression-bomb or byte limit (null)",
                _E.NOT_A_REGULAR_FILE: "a frame is a FIFO, a socket or a device, never opened (null)",
                _E.SHARED_FRAMES: "several actions fell between the same two screenshots and the pair went to "
                                  "another of them (null)",
                _E.FRAME_SIZE_CHANGED: "the post frame has another size than the pre frame (True)",
                _E.CONTENT_CHANGED: "content changed and the action has no point, so no region (True)",
                _E.CONTENT_CHANGED_IN_REGION: "content changed, some of it in the region around the point (True)",
                _E.CONTENT_CHANGED_OUTSIDE_REGION: "content changed, all of it outside the region (True)",
                _E.NO_PIXEL_CHANGE: "no pixel changed (False)",
                _E.ONLY_FOCUS_OUTLINE: "only a thin outline changed: a focus ring drawn or removed (False)",
                _E.ONLY_CARET: "only a caret-sized line changed: a blinking cursor (False)",
                _E.ONLY_AMBIENT_CHANGE: "only cells the run shows to be ambient changed: a clock, a spinner (False)",
                _E.ONLY_POINTER_RESTYLE: "only colours changed, the same shapes in another style: a hover or "
                                         "pressed style (False)",
                _E.ONLY_RENDER_NOISE: "only faint differences, none strong anywhere: rendering or compression "
                                     "noise (False)",
                _E.ONLY_COSMETIC_CHANGE: "only changes of several of the kinds above (False)",
                _E.GLOBAL_AND_REGION_CHANGED: "seed's rule: the whole frame's pHash and the region's both changed "
                                              "(True)",
                _E.GLOBAL_CHANGED: "seed's rule: the whole frame's pHash changed, the region's did not (True)",
                _E.REGION_CHANGED: "seed's rule: the region's pHash changed, the whole frame's did not (True)",
                _E.GLOBAL_AND_REGION_STABLE: "seed's rule: neither pHash changed (False)",
                _E.GLOBAL_STABLE: "seed's rule: the whole frame's pHash did not change, and there is no region "
                                  "(False)",
            }),
    Section("After a warning", ("steps.warning_followup", "steps.warning_followup_seed"), WarningFollowup,
            "the value itself, on a step the verifier warned on (trajcheck's rule, or the seed's for "
            "warning_followup_seed); the first rule that matches a later step decides, in docs/perceptual.md's order",
            {
                WarningFollowup.RECOVERED: "a later retry on the same target, or the next high-risk action, had an "
                                           "effect",
                WarningFollowup.REPEATED: "the same action on the same target (a point within 16 px, or the same "
                                          "element) again, with no effect",
                WarningFollowup.MOVED_ON: "the next high-risk action was on another target and had no effect either, "
                                          "or the agent acted on another page",
                WarningFollowup.DECLARED_DONE: "the agent ended the run (DONE, an answer, or FAIL) before any of the "
                                               "above",
                WarningFollowup.RUN_ENDED: "the run ended (step budget, error, cut-off log) before any of the above",
            }),
    Section("Warning shown", ("steps.warning_shown_source",), WarningShownSource, "the value itself", {
        WarningShownSource.RECORDED_FEEDBACK: "the feedback the runner recorded for the step (recorded.feedback) "
                                              "carries a WARNING line, or does not",
        WarningShownSource.RECORDED_VERDICT: "no feedback recorded: the runner's own verdict (recorded."
                                             "action_effect_observed) was false, so its runner injected the line, or "
                                             "true, so it did not",
        WarningShownSource.RUN_CONFIG: "nothing recorded: the run's config.perceptual_verifier (the ablation arm) "
                                       "says whether the runner injected warnings, on the steps trajcheck's rule "
                                       "warned on",
    }),
    Section("Effect in fact", ("steps.effect_in_fact_basis",), EffectInFactBasis,
            "the value itself, on a warned step that in fact had an effect (a false warning); the first that holds",
            {
                EffectInFactBasis.URL_CHANGED: "the step's URL changed",
                EffectInFactBasis.DOM_CHANGED: "the step's DOM snapshots differ in the page's skeleton (an element, a "
                                               "value, a message appeared or changed), though the screen did not "
                                               "show it",
                EffectInFactBasis.LATER_FRAME: "a later frame taken before the agent acted again shows another "
                                               "screen (a delayed effect)",
                EffectInFactBasis.RUN_PASSED: "the run passed by its contract, evaluator or judge, the warned step "
                                              "was its last high-risk action, and no high-risk action of the run had "
                                              "a visible effect",
            }),
    Section("Observation verdicts", ("steps.obs_reason",), ObservationReason, "the value itself", {
        ObservationReason.NO_CHANGE: "neither the URL, the page's skeleton nor the client witness changed",
        ObservationReason.CLIENT_WITNESS_ONLY: "only the browser extension (the client witness) saw a change",
        ObservationReason.CHANGED_NO_SEMANTIC_VERDICT: "something changed, and no semantic verdict was recorded",
        ObservationReason.SEMANTIC_GOAL_ACHIEVED: "the recorded semantic verdict says the task is completed, "
                                                  "confidently enough",
        ObservationReason.SEMANTIC_SUCCESS: "the recorded semantic verdict says the action succeeded, confidently "
                                            "enough",
        ObservationReason.SEMANTIC_FAILURE: "the recorded semantic verdict says neither, or not confidently enough",
        ObservationReason.NO_PAGE_EVIDENCE: "the step records no URL, DOM snapshot or client witness to check",
    }),
    Section("Reward signals", ("steps.reward_reasons",), RewardCode,
            "`code`, or `code: evidence`; see docs/reward.md for the weights", {
                _R.UNCONFIRMED_DESTRUCTIVE_ACTION: "a destructive or transactional action with no confirmation "
                                                   "before it, when the run requires one (hard negative)",
                _R.CONTRACT_PASSED: "the step's contract passed (strong positive)",
                _R.CONTRACT_FAILED: "the step's contract failed (negative)",
                _R.EXPECTED_DATA_EXTRACTED: "the answer the agent extracted matches the reference answer",
                _R.EXPECTED_STATE_REACHED: "every check of the step's expected outcome held",
                _R.EXECUTOR_ERROR: "the executor reported an error of no known kind",
                _R.EXECUTOR_STALE_REF: "the executor's error says the element was stale or detached",
                _R.EXECUTOR_TIMEOUT: "the executor's error says it timed out",
                _R.EXECUTOR_NOT_FOUND: "the executor's error says the element was not found",
                _R.REPEATED_FAILED_ACTION: "the same action already failed earlier in the run",
                _R.CAPTCHA: "the page after the step asks to prove the agent is human (blocking)",
                _R.BLOCKING_PAGE: "the page after the step denies access (\"access denied\", \"just a moment\"...; "
                                  "blocking)",
                _R.AUTH_REDIRECT: "the action landed on a sign-in wall it was not on before (blocking)",
                _R.DRIFT_LOOP: "the same action repeated on an unchanging screen",
                _R.NO_OBSERVED_DELTA_AFTER_WAITS: "DONE after WAIT steps whose frames never changed",
                _R.NO_OBSERVED_EFFECT: "a high-risk action with no visible effect (the perceptual verifier)",
                _R.PREDICTION_FAILED: "the step's own prediction did not hold",
                _R.FRESH_READ_AFTER_FAILURE: "an observation that brought new information right after a "
                                             "stale-element or not-found failure",
                _R.NEW_INFORMATION: "an observation-only step whose screen or DOM had not been seen before",
                _R.REPEATED_OBSERVATION: "an observation-only step that brought nothing new",
                _R.PAGE_CHANGED: "the URL changed, the DOM changed meaningfully, or the screen's content changed",
                _R.NO_CHANGE: "an acting step after which nothing changed (the observation verifier)",
                _R.NO_SIGNAL: "no rule applied (neutral)",
                _R.STATE_RETURN: "the step went back to a screen seen before: not progress (its reward is at most 0)",
                _R.OSCILLATION: "a return inside an oscillation: the run keeps going back (A, B, A, B; a menu opened "
                                "and closed again and again)",
                _R.NO_NET_PROGRESS: "the run ends on a screen it first saw early on, with nothing kept since: the "
                                    "steps after it are not progress, and its DONE is negative",
            }),
    Section("Evidence referee", ("runs.evidence_reasons",), EvidenceCode,
            "`code@step: evidence`; see docs/referee.md for the weights", {
                EvidenceCode.ENDS_BLOCKED: "the run ends on a blocking page, a CAPTCHA, or the login page an auth "
                                           "redirect led to",
                EvidenceCode.ERROR_AFTER_LAST_HIGH_RISK: "an error message or a field marked invalid appeared after "
                                                         "the last high-risk action and was not on the page before it",
                EvidenceCode.LAST_HIGH_RISK_NO_EFFECT: "the last high-risk action had no observed effect and nothing "
                                                       "after it changed the screen or the URL",
                EvidenceCode.ENDS_IN_LOOP: "the last acting step repeats an action on an unchanging screen (a drift "
                                           "loop)",
                EvidenceCode.DONE_AFTER_IDLE_WAITS: "DONE after WAIT steps whose frames never changed (the done gate)",
                EvidenceCode.NAVIGATED_AFTER_LAST_HIGH_RISK: "the last high-risk action led to a page with another "
                                                             "path",
                EvidenceCode.SUCCESS_AFTER_LAST_HIGH_RISK: "a success message appeared after the last high-risk "
                                                           "action",
                EvidenceCode.ANSWER_MATCHES_REFERENCE: "the agent's extracted answer matches the task's reference "
                                                       "answer",
                EvidenceCode.EFFECT_WITHOUT_OUTCOME: "the last high-risk action changed the screen, with no message "
                                                     "or navigation saying whether it worked",
                EvidenceCode.NO_NET_PROGRESS: "after its last high-risk action the run came back to a screen it had "
                "reached early on and kept nothing it reached since",
            }),
    Section("Final verdicts", ("runs.verdict_reason", "runs.disagreement_reason"), VerdictReason, "the value itself; "
            "disagreement_reason holds the two disagreements only, when the verdict is uncertain", {
                _V.AGREEMENT: "the sources present (contract, evaluator, judge) agree",
                _V.JUDGE_DISAGREEMENT: "the contract or the evaluator and the judge disagree (uncertain)",
                _V.EVALUATOR_DISAGREEMENT: "the contract and the benchmark's evaluator disagree (uncertain)",
                _V.CONTRACT_ONLY: "only the contract decided",
                _V.EVALUATOR_ONLY: "only the benchmark's evaluator decided",
                _V.JUDGE_ONLY: "only the judge decided",
                _V.EVIDENCE_ONLY: "no contract, evaluator or judge: the evidence referee decided",
                _V.NO_ANSWER: "no source decided, and the run ended without an answer (no DONE, no answer, no "
                "infeasible report: an executor error, the step budget, a crash or a cut-off log) in a format that "
                "declares its harness ends runs only by an answer or a limit (ends = answer): fail, as benchmarks "
                "count it",
                _V.NO_VERDICT: "no source could decide (unknown)",
                _V.HARNESS_MAY_STOP: "the run ended without an answer, and its format declares that the harness may "
                "stop a run itself (ends = external: its own state check, a person): the no-answer rule does not apply "
                "(unknown)",
                _V.ENDS_UNDECLARED: "the run ended without an answer, and its format does not declare how its harness "
                "ends a run: the no-answer rule does not apply (unknown); declare ends (a mapping's [run] ends, "
                "run.json's ends)",
                _V.NOT_READ: "most actions not understood or most screenshots missing: not read (unknown)",
                _V.NO_LOG: "a folder of screenshots with no log any reader claims: the run was not read (unknown; "
                "runs.damage no_log)",
                _V.CONTRACT_UNDECIDED: "a contract check lacks its evidence (no DOM, no frame), none failed and "
                "nothing else decided: uncertain, never a fail nor a false claim",
            }),
    Section("What the agent claimed", ("runs.claim_reason",), ClaimReason, "the value itself", {
        ClaimReason.NO_DONE: "the run has no DONE step and no outcome status done",
        ClaimReason.AGENT_REPORTED_FAILURE: "the final DONE carries the harness's failure flag (browser-use success "
                                            "false, BrowserGym report_infeasible, OSWorld FAIL) or "
                                            "semantic.task_completed = false",
        ClaimReason.AGENT_REPORTED_SUCCESS: "the final DONE carries semantic.task_completed = true",
        ClaimReason.MESSAGE_ADMITS_FAILURE: "the final message says the agent could not do the task, refuses it, or "
                                            "names what blocked it (a sign-in wall, a CAPTCHA)",
        ClaimReason.DONE: "a DONE step whose message does not admit failure",
        ClaimReason.OUTCOME_DONE: "outcome status done, without a DONE step",
    }),
    Section("Paired runs", (), PairMatch, "the value itself", {
        PairMatch.SAME: "the same action on the same screen, leading to the same screen (or a frame is missing)",
        PairMatch.DIFFERENT_SCREEN: "the two steps acted on different screens (pHash more than 8 bits apart, or "
                                    "another page)",
        PairMatch.DIFFERENT_ACTION: "on the same screen, actions of different types (a CLICK and a DONE)",
        PairMatch.DIFFERENT_TARGET: "on the same screen, actions of one type with different targets (another "
                                    "point, keys, text or URL)",
        PairMatch.DIFFERENT_RESULT: "the same action on the same screen led to different screens",
        PairMatch.EXTRA_STEP: "a step one run took that the other has no counterpart of, both runs going on "
                              "after it",
        PairMatch.RUN_ENDED: "a step one run took after the other had ended",
    }, output="`trajcheck diff` (`pairs[].match`, `first_divergence.reason`; the report's pair pages)"),
    Section("Failure modes", ("runs.failure_mode",), FailureMode, "the value itself; the first that holds, in this "
            "order (docs/failures.md); runs.failure_detail holds the sub-kind", FAILURE_MEANINGS),
    Section("Decisive errors", ("runs.decisive_kind",), DecisiveKind, "the value itself; runs.decisive_step is the "
            "step, runs.decisive_evidence what shows it (docs/failures.md)", DECISIVE_MEANINGS),
    Section("Control", ("runs.failure_control", "runs.decisive_control"), Control, "the value itself; null where "
            "the evidence does not say", CONTROL_MEANINGS),
    Section("Damaged runs", ("runs.damage",), Damage, "the value itself; the first that holds, in this order; "
            "runs.damage_evidence holds what it rests on; the verdict is kept", DAMAGE_MEANINGS),
    Section("Cost sources", ("runs.cost_source",), CostSource,
            "the value itself; null when the run has no cost (the log records none, and no price list gave one)", {
                CostSource.LOG: "the log recorded the cost (of the steps, or of the whole run): it is the log's "
                                "own figure",
                CostSource.PRICES: "the log recorded tokens and the model, not the cost: tokens times the prices of "
                                   "`score --prices FILE`",
            }),
)

#: The section of each reason column, by ``table.column``.
BY_COLUMN: dict[str, Section] = {c: s for s in SECTIONS for c in s.columns}


def code_of(cell: str) -> str:
    """The code of one stored reason: ``code``, ``code: evidence`` or ``code@step: evidence`` -> ``code``."""
    return cell.split(":", 1)[0].split("@", 1)[0]
