"""Ledger tables, declared once as data.

Every column has a name, an Arrow type and a description. The Parquet writer,
docs/columns.md (``trajcheck columns --format md``) and the tests all
read these declarations, so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from .version import SCHEMA_VERSION as SCHEMA_VERSION, TABLE_NAMES as TABLE_NAMES  # re-exported


@dataclass(frozen=True)
class Column:
    """One ledger column: its name, Arrow type, where its value comes from, and what it means.

    ``source`` is read by :mod:`trajcheck.scoring.rows`, which builds every row from these declarations:
    - a dotted path into the findings of the step (steps table: ``run``, ``step``, ``ev`` the image
      evidence, ``risk``, ``effect``, ``page``, ``pred``, ``loop``, ``reward``, ``gate``, ``state``, ``follow``,
      ``spend``) or of the run (runs table: ``run``, ``contract``, ``contract_result``, ``verdict``, ``ev_verdict``,
      ``claim``, ``evaluator``, ``n_frames``, ``totals``, ``spend``); a None on the way gives None;
    - optionally ``|str``, ``|list``, ``|box`` or ``|json``, a conversion of the value (see rows.CONVERT);
    - ``fn:NAME``: a named function of :mod:`trajcheck.scoring.rows` (rows.RUN_FUNCTIONS / rows.STEP_FUNCTIONS);
    - ``analyzer:MODULE.FUNCTION``: a pure function in ``trajcheck.analyzers.MODULE`` of the step's (or the
      run's) findings: a new analyzer that derives from what the others found is its module and its columns;
    - ``late``: set by the scorer after the row is built (the run's input digest).
    """

    name: str
    type: pa.DataType
    source: str
    description: str


def _c(name: str, type_: pa.DataType, source: str, description: str) -> Column:
    return Column(name, type_, source, description)


S, B, I32, I64, F64 = pa.string(), pa.bool_(), pa.int32(), pa.int64(), pa.float64()
LS, LI = pa.list_(pa.string()), pa.list_(pa.int32())
LLI = pa.list_(LI)

RUNS: tuple[Column, ...] = (
    _c("run_id", S, "run.run_id", "Run id from run.json; for an invalid run, its directory relative to the argument it was found under."),
    _c("status", S, "fn:status", "`ok`, or `invalid` when the run could not be scored (see `error`)."),
    _c("error", S, "fn:error", "Every problem that made the run invalid, with file, line and field; empty when ok."),
    _c("warnings", LS, "fn:warnings", "Problems that did not stop scoring (missing or unreadable frames, unknown action types, points outside the frame)."),
    _c("source_format", S, "run.source_format", "Format the run was read from (`trajcheck.run/1`)."),
    _c("run_path", S, "fn:run_path", "The run directory, as found from the command-line argument."),
    _c("task_id", S, "run.task_id", "Task id; runs of one task are paired by it."),
    _c("trial", I64, "run.trial", "Repetition number of the task, when recorded."),
    _c("goal", S, "run.goal", "The instruction the agent was given."),
    _c("agent_name", S, "run.agent_name", "agent.name"),
    _c("agent_model", S, "run.agent_model", "agent.model"),
    _c("config", S, "fn:config", "The run's config object as JSON (sorted keys); `--by config.KEY` reads it."),
    _c("config_perceptual_verifier", B, "run.perceptual_verifier_recorded", "Was the perceptual verifier on when the run was recorded (the ablation arm)."),
    _c("config_require_confirmation", B, "fn:require_confirmation", "config.require_confirmation as recorded."),
    _c("screen_width", I32, "run.screen_width", "screen.width: the coordinate space of action x."),
    _c("screen_height", I32, "run.screen_height", "screen.height: the coordinate space of action y."),
    _c("coord_space", S, "fn:coord_space", "The space the log's action points were in: screen (pixels of the screen), screenshot (pixels of the screenshot), relative-1000 (UI-TARS's 0-1000 grid) or smart-resize (pixels of the image a Qwen2.5-VL model saw); action_x/action_y are converted to screen_width x screen_height whatever it was. Null for a run without a point."),
    _c("coord_space_source", S, "fn:coord_space_source", "How coord_space was decided: declared (the log says), default (the format's convention), data: ... (the only space every point fits), ambiguous: ... (several fit; a coord_space_ambiguous warning says so)."),
    _c("started_at", S, "run.started_at", "started_at as recorded."),
    _c("outcome_status", S, "run.outcome_status", "outcome.status as the runner reported it (done, failed, max_steps, error)."),
    _c("outcome_score", F64, "run.outcome_score", "outcome.score: the benchmark's own evaluator result, when recorded (see evaluator_verdict)."),
    _c("outcome_judge", S, "fn:outcome_judge", "outcome.judge as recorded (JSON), when present."),
    _c("n_steps", I32, "fn:n_steps", "Number of steps."),
    _c("n_frames", I32, "n_frames", "Number of distinct frame files decoded."),
    _c("actions_after_last_frame", I32, "actions_after_last_frame", "Actions that change the screen (not DONE, FAIL, WAIT, READ or a screenshot) taken after the run's last readable screenshot: the final state they led to was not seen, and a contract's screen checks on the final frame are undecided (docs/referee.md, \"Steps no screenshot shows\"); 0 when the last screenshot follows the last action, null when the run has none."),
    _c("perceptual_summary", S, "fn:perceptual_summary", "The seed's per-run summary as JSON: `{\"checked\": n, \"no_effect\": k}` over trajcheck's verdicts, `{}` when the verifier never fired."),
    _c("effect_checked", I32, "totals.effect_checked", "High-risk steps with a verdict (trajcheck's rule)."),
    _c("effect_no_effect", I32, "totals.effect_no_effect", "Of those, steps with no observed effect (trajcheck's rule)."),
    _c("effect_checked_seed", I32, "totals.effect_checked_seed", "High-risk steps with a verdict (seed's literal rule)."),
    _c("effect_no_effect_seed", I32, "totals.effect_no_effect_seed", "Of those, steps with no observed effect (seed's literal rule)."),
    _c("effect_warning_steps", LI, "fn:effect_warning_steps", "Indices of the steps after which the runner injects the WARNING line (trajcheck's rule)."),
    _c("warnings_recovered", I32, "totals.warnings_recovered", "Of the warnings (effect_no_effect, trajcheck's rule), those the agent recovered from: warning_followup recovered."),
    _c("warnings_repeated", I32, "totals.warnings_repeated", "Of the warnings, those after which the agent repeated the same dead action: warning_followup repeated."),
    _c("warnings_false", I32, "totals.warnings_false", "Of the warnings, those on steps that in fact had an effect (effect_in_fact): false warnings."),
    _c("warnings_false_checked", I32, "totals.warnings_false_checked", "Of the warnings, those with evidence to tell a false one (effect_in_fact not null): the denominator of warnings_false."),
    _c("effect_recorded_agree", I32, "totals.effect_recorded_agree", "Steps whose recorded `action_effect_observed` equals the recomputed verdict."),
    _c("effect_recorded_disagree", I32, "totals.effect_recorded_disagree", "Steps whose recorded `action_effect_observed` differs from the recomputed verdict."),
    _c("reward_total", F64, "totals.reward_total", "Sum of the steps' reward_score."),
    _c("reward_mean", F64, "totals.reward_mean", "Mean of the steps' reward_score."),
    _c("reward_first_blocking_step", I32, "totals.reward_first_blocking_step", "First step whose reward reasons include blocking_page, captcha or auth_redirect."),
    _c("longest_loop", I32, "totals.longest_loop", "Length of the longest drift loop (0: none)."),
    _c("loops", I32, "totals.loops", "Number of drift loops."),
    _c("reference_steps", I32, "reference_steps", "The task's reference step count (a human's or the optimal one, as OSWorld-Human publishes): run.json's reference_steps, else the contract's, else the --tasks file's; null without one."),
    _c("efficiency", F64, "fn:efficiency", "reference_steps over the run's steps, its DONE or FAIL not counted: 1.0 is as short as the reference, 0.5 twice as long; null without a reference. The summary export averages it over the runs that passed."),
    _c("states_distinct", I32, "states.states", "Distinct screens (states) the run's frames show: same page where URLs are recorded, pHash within 8 bits and at most 2 of the 32x32 thumbnail's cells moved by more than 12 levels (analyzers/states.py). 0 without frames."),
    _c("states_returning", F64, "states.returning", "Share of the steps with a placed post frame that went back to a screen seen before (state_kind return)."),
    _c("oscillations", I32, "states.oscillations", "Stretches of steps that only go back: every step a return, or a new screen left by a return at the next step, with at least 2 returns (A, B, A, B; a menu opened and closed again and again)."),
    _c("stalled_from_step", I32, "states.stalled_from", "The first step after which the run reached nothing it kept: it ends on a screen first seen just before it, and moved away and back since. Null when the run was still reaching new screens at its end."),
    _c("no_net_progress", B, "no_net_progress", "The run ends on a screen it first saw early on (in the first half of its steps), moved away and came back, and no high-risk step had an observed effect since: its positive rewards from stalled_from_step on are dropped, its DONE is negative, and the evidence referee counts it against a claim of success."),
    _c("reward_done_gate", B, "totals.reward_done_gate", "Did a DONE follow WAIT steps with no frame change (no_observed_delta_after_waits)."),
    _c("pred_checked", I32, "totals.pred_checked", "Steps whose recorded prediction could be checked."),
    _c("pred_accuracy", F64, "totals.pred_accuracy", "Share of those predictions that held."),
    _c("obs_no_change_steps", I32, "totals.obs_no_change_steps", "Steps the observation verifier failed for no change at all."),
    _c("reward_strong_positive", I32, "totals.reward_strong_positive", "Steps classified strong_positive."),
    _c("reward_weak_positive", I32, "totals.reward_weak_positive", "Steps classified weak_positive."),
    _c("reward_neutral", I32, "totals.reward_neutral", "Steps classified neutral."),
    _c("reward_negative", I32, "totals.reward_negative", "Steps classified negative."),
    _c("reward_hard_negative", I32, "totals.reward_hard_negative", "Steps classified hard_negative."),
    _c("det_verdict", S, "contract_result.verdict", "The deterministic outcome contract: pass, fail, uncertain (a check lacked its evidence and none failed: never a fail), or not_applicable (no contract)."),
    _c("contract_name", S, "fn:contract_name", "The contract's name."),
    _c("contract_source", S, "contract.source", "Where the contract came from: contract.json in the run, or the file of --contracts DIR that applies to the run (by task id, goal or path)."),
    _c("contract_checks", S, "fn:contract_checks", "Every check with its evidence, as JSON: [{type, name, passed, evidence}]; passed is null for a check that could not be decided, whose evidence.undecided says what was missing."),
    _c("contract_score", F64, "rubric.score", "Partial credit of the contract in [0, 1]: the weighted share of its checks that hold, undecided checks left out; over a rubric tree, an all node's weighted mean of its decided children, an any node's best (docs/referee.md, Rubric trees); null when no check was decided or there is no contract."),
    _c("contract_tree", S, "fn:contract_tree", "A rubric contract's tree, as JSON: {name, kind (all, any, check), result (pass, fail, undecided), score, weight, critical, children}; null for a flat contract (contract_checks has its checks)."),
    _c("judge_model", S, "verdict.judge.model", "The visual judge of the final verdict: the recorded judge's model, else reference-phash."),
    _c("judge_verdict", S, "verdict.judge.verdict", "pass or fail."),
    _c("judge_score", F64, "verdict.judge.score", "The judge's score."),
    _c("judge_confidence", F64, "verdict.judge.confidence", "The judge's confidence."),
    _c("judge_reasons", LS, "verdict.judge.reasons|list", "The judge's reasons."),
    _c("judge_source", S, "fn:judge_source", "recorded (outcome.judge of run.json), judgments (`score --judgments`), recorded+judgments (several judges, combined by majority: docs/referee.md), or reference (computed offline from reference screenshots)."),
    _c("judgments", S, "fn:judgments", "Every judgment of `score --judgments` on this run, as JSON: [{judge, verdict, confidence, reason, source (file:line)}]; null when none."),
    _c("judge_other", S, "fn:judge_other", "A second judge kept beside the first (the reference judge when a recorded one exists), as JSON."),
    _c("evaluator_verdict", S, "evaluator", "The benchmark evaluator's verdict from outcome_score: pass at `score --evaluator-pass` (default 1.0) or above, else fail; null without a score."),
    _c("eval_final_verdict", S, "verdict.final", "pass, fail, uncertain (contract, evaluator and judge disagree), or unknown. Contract, evaluator and judge decide; only when all are absent does the evidence verdict become the final verdict (verdict_source evidence)."),
    _c("final_confidence", F64, "verdict.confidence", "Confidence of the final verdict (lower when only one source exists; at most 0.6 from evidence alone)."),
    _c("verdict_reason", S, "verdict.reason", "agreement, judge_disagreement, evaluator_disagreement, contract_only, evaluator_only, judge_only, evidence_only, no_answer, contract_undecided, no_verdict, not_read (most actions not understood or most screenshots missing: unknown), harness_may_stop (the run ended without an answer and its harness may stop a run itself: unknown) or ends_undeclared (the run ended without an answer and its format does not declare how runs end: unknown)."),
    _c("verdict_source", S, "verdict.source", "Which sources decided the final verdict, joined by +: contract, evaluator, judge (e.g. contract+judge); or evidence; or no_answer (nothing else decided and the run ended without an answer: fail); or none."),
    _c("disagreement_reason", S, "fn:disagreement_reason", "judge_disagreement or evaluator_disagreement when the final verdict is uncertain, else null."),
    _c("evidence_verdict", S, "ev_verdict.verdict", "The evidence referee's verdict from the run's own evidence (pass, fail or unknown), computed for every run whatever the other sources say."),
    _c("evidence_reasons", LS, "ev_verdict.reasons|list", "The evidence referee's reasons, `code@step: evidence` (codes in docs/referee.md, the evidence referee)."),
    _c("evidence_confidence", F64, "ev_verdict.confidence", "Confidence of the evidence verdict in [0, 1] (0 when unknown)."),
    _c("claimed_success", B, "verdict.claimed_success", "The agent claimed success: its final DONE (or outcome status done) read for what it says; a failure flag or a final message that admits failure is no claim (see claim_reason)."),
    _c("claim_reason", S, "claim.reason", "Why claimed_success is what it is: no_done, agent_reported_failure, agent_reported_success, message_admits_failure, done, outcome_done (docs/referee.md, \"What the agent claimed\")."),
    _c("message_source", S, "ev_verdict.message_source", "Where the page message that the evidence verdict read (error_after_last_high_risk or success_after_last_high_risk) was read: `dom` (a DOM snapshot) or `screen_text` (OCR of the frames, where no DOM said it); null when no message decided."),
    _c("message_text", S, "ev_verdict.message", "The words of that message, as the evidence reason gives them."),
    _c("screen_text_final", LS, "final_screen.lines|opt", "For a run that claims success (or whose contract asks what its final screen shows) and has no DOM snapshot of its final state: the lines OCR read on the final frame where it changed since the last high-risk action (since the first frame when no action was high-risk; the last high-risk step's read reused where unchanged); null when not read."),
    _c("screen_messages_final", LS, "final_screen.messages|opt", "The messages among them that were not there before that action, as `kind: text (confidence)` (see steps.screen_messages); null when not read."),
    _c("ocr_engine", S, "ocr_engine", "The OCR engine that read the run's screen text (e.g. `tesseract 5.5.4`); null when nothing was read."),
    _c("claim_evidence", S, "claim.evidence", "The words or flag claim_reason rests on (e.g. 'unable to: unable to proceed'); null for a plain DONE."),
    _c("false_claim", B, "verdict.false_claim", "Claimed success while the final verdict is fail or uncertain."),
    _c("false_claim_basis", S, "verdict.false_claim_basis", "What a false claim rests on: evaluator (the benchmark's evaluator alone), evidence (the evidence referee), or referee (a contract or judge took part); null when not a false claim."),
    _c("failure_mode", S, "failure.mode", "Why a run that did not pass failed (fail, uncertain, or unknown with a claim of success): blocked, app_said_no, dead_action, looped, no_answer, gave_up, wrong_result or not_determined, the first in this order its evidence shows (docs/failures.md); null for the others."),
    _c("failure_detail", S, "failure.detail", "The failure mode's sub-kind: the blocker (captcha, auth_wall, blocking_page), the error text normalised, the action type, the loop kind, the failed check's type... (docs/reasons.md, \"Failure modes\")."),
    _c("failure_details", LS, "failure.subkinds|opt", "Every sub-kind the failure mode's evidence shows, failure_detail first: several error texts the page showed, several blockers, several loop kinds, every failed check of the result (contract check types, then evaluator, judge, answer); empty when the mode has none; null for runs without a failure mode, and in ledgers written before schema 15 (docs/failures.md)."),
    _c("failure_step", I64, "failure.step", "The step the failure mode rests on; null when it rests on none (not_determined)."),
    _c("failure_evidence", S, "failure.evidence", "The evidence the failure mode rests on: the page that blocked, the error the page showed, the failed check..."),
    _c("failure_control", S, "analyzer:control.failure", "Could the agent have avoided its failure mode: controllable (what it chose: an overlay it could have dismissed, an error it did not act on, a dead action, a loop...) or uncontrollable (a CAPTCHA, an access-denied or rate-limit page, a server error, out of stock, a sign-in wall the goal gave no credentials for, a damaged run); null for not_determined and where the evidence does not say (docs/failures.md)."),
    _c("decisive_step", I64, "decisive.step", "For a run with a failure mode: the step after which its evidence shows it could no longer succeed, its first decisive error (docs/failures.md); null when no step shows it (not_determined) and for runs without a failure mode."),
    _c("decisive_kind", S, "decisive.kind", "The decisive error's kind: blocked, ignored_message, dead_action, loop_start, contract_check, stall or not_determined (docs/reasons.md, \"Decisive errors\")."),
    _c("decisive_evidence", S, "decisive.evidence", "What shows the decisive error, with the frames that show it (`frames PRE -> POST`)."),
    _c("decisive_control", S, "analyzer:control.decisive", "Could the agent have avoided its decisive error: controllable or uncontrollable, as failure_control; null for not_determined and where the evidence does not say."),
    _c("process_score", F64, "analyzer:process.score", "How the run went about its task, beside its outcome, in [0, 1]: the weighted mean of its effective actions (acting steps that visibly did something), its progress (steps that reached a new screen or their expected outcome, against returns) and its recovery after warnings (recovered 1, moved_on 0.5, repeated or declared_done 0), weights 0.8, 0.4 and 1.2 from the evidence reward; steps spent on an uncontrollable block (a CAPTCHA, an outage, a rate limit, out of stock, a sign-in wall without credentials, a damaged run) count neither way; null when no step can be judged (docs/failures.md, \"The process score\")."),
    _c("process_evidence", S, "analyzer:process.evidence", "The process score's parts as JSON: per part (effective, progress, recovery) the credit k over the steps judged n, the follow-ups of the warnings judged, and the steps left out as blocked (how many, from which step, by what)."),
    _c("damage", S, "analyzer:damage.kind", "Why the run's failure or success is not the agent's doing: infrastructure, reset_failed, harness_killed, parse_artifact or pre_satisfied, the first in this order the log or frames show (docs/reasons.md, \"Damaged runs\"); null for a run that shows none. Never changes the verdict."),
    _c("damage_evidence", S, "analyzer:damage.evidence", "What the damage rests on: the error that ended the run, the action that killed the harness, the marker read from the reasoning, the passing run that never acted..."),
    _c("lesson_promotable", B, "verdict.lesson_promotable", "May a lesson from this run be promoted: only pass, or fail where the contract failed and the judge did not say pass; never on evidence alone."),
    _c("lesson_candidate", S, "verdict.lesson", "On disagreement: which check and which judge disagreed, on what evidence."),
    _c("tokens_input", I64, "spend.tokens_input", "Input tokens the run's model calls used, those read from a cache included: the log's total for the run, else the sum over its steps; null when the log records none (see docs/formats.md for where each format keeps them)."),
    _c("tokens_output", I64, "spend.tokens_output", "Output tokens, reasoning included: the run's total, else the steps' sum; null when the log records none."),
    _c("tokens_cached", I64, "spend.tokens_cached", "Of the input tokens, those read from a cache (Anthropic cache_read_input_tokens, OpenAI cached_tokens); null when the log does not say."),
    _c("tokens_reasoning", I64, "spend.tokens_reasoning", "Of the output tokens, the model's reasoning (OpenAI reasoning_tokens); null when the log does not say."),
    _c("cost_usd", F64, "spend.cost_usd", "What the run cost in USD: the log's recorded cost (its total, else the steps' sum), or, with `score --prices FILE` and no recorded cost, its tokens times the model's prices; null otherwise, never an estimate of trajcheck's own (cost_source says which)."),
    _c("cost_source", S, "spend.cost_source", "Where cost_usd comes from: log (recorded) or prices (computed from --prices); null without a cost."),
    _c("wall_seconds", F64, "spend.wall_seconds", "The run's elapsed seconds: the log's own for the whole run, else the sum of its steps' wall_seconds; null when the log records no time."),
    _c("extra", S, "run.extra|json", "Properties of run.json that format v1 does not define, as JSON."),
    _c("input_digest", S, "late", "Digest of the run's files, reader, scoring options and trajcheck version; an unchanged digest is not scored again."),
    _c("inputs", S, "late", "JSON {root, files: {path: [size, mtime_ns, hash]}}: what the digest covers (the run directory's absolute path and files)."),
    _c("schema_version", I32, "fn:schema_version", "Ledger schema version."),
    _c("trajcheck_version", S, "fn:trajcheck_version", "trajcheck version that wrote the row."),
)

STEPS: tuple[Column, ...] = (
    _c("run_id", S, "run.run_id", "Run id (key, with step_index)."),
    _c("step_index", I32, "step.index", "Step index as recorded (key, with run_id)."),
    _c("action_type", S, "step.action.type", "Action type, upper-cased (CLICK, KEY_PRESS, ...)."),
    _c("action_known", B, "step.action.known", "Is the action type one of format v1's."),
    _c("action_x", F64, "step.action.x", "Action x in screen coordinates, as recorded."),
    _c("action_y", F64, "step.action.y", "Action y in screen coordinates, as recorded."),
    _c("action_keys", S, "step.action.keys", "Keys of a KEY_PRESS."),
    _c("action_text", S, "step.action.text", "Text of a TYPE."),
    _c("action_url", S, "step.action.url", "URL of a NAVIGATE."),
    _c("reasoning", S, "step.reasoning", "The agent's text for the step."),
    _c("frame_pre", S, "step.frame_pre", "Pre-action frame, relative to the run directory."),
    _c("frame_post", S, "step.frame_post", "Post-action frame, relative to the run directory."),
    _c("frame_width", I32, "ev.change.width", "Width of the post frame in pixels."),
    _c("frame_height", I32, "ev.change.height", "Height of the post frame in pixels."),
    _c("frame_pre_phash", S, "ev.pre_hash|str", "64-bit pHash of the pre frame (hex, as imagehash prints it)."),
    _c("frame_post_phash", S, "ev.post_hash|str", "64-bit pHash of the post frame (hex)."),
    _c("executor_ok", B, "step.executor_ok", "executor.ok as recorded."),
    _c("executor_error", S, "step.executor_error", "executor.error as recorded."),
    _c("url_before", S, "step.page.url_before", "page.url_before as recorded."),
    _c("url_after", S, "step.page.url_after", "page.url_after as recorded."),
    _c("title_before", S, "step.page.title_before", "page.title_before as recorded: the page's or the window's title before the action; null when the log records none."),
    _c("title_after", S, "step.page.title_after", "page.title_after as recorded: the title after the action (a phase of `timeline --phases` ends where it changes); null when the log records none."),
    _c("effect_high_risk", B, "risk.high_risk", "Does the seed's high-risk table select this action."),
    _c("effect_rule", S, "risk.rule", "Which row of the table: `submit_key`, `keyword`, or null."),
    _c("effect_keyword", S, "risk.matched", "The key or keyword that made the action high-risk."),
    _c("action_effect_observed", B, "effect.action_effect_observed", "trajcheck's verdict: did the high-risk action visibly change the screen (null: not checked, see effect_reason)."),
    _c("effect_reason", S, "effect.reason", "Why: a slug (content_changed_in_region, only_focus_outline, no_pixel_change, not_high_risk, verifier_off, frames_missing, ...)."),
    _c("action_effect_observed_seed", B, "effect.action_effect_observed_seed", "The seed's literal rule: global pHash changed OR region pHash changed."),
    _c("effect_seed_reason", S, "effect.seed_reason", "Why, for the seed rule (global_changed, region_changed, global_and_region_stable, ...)."),
    _c("effect_global_distance", I32, "ev.global_distance", "Hamming distance between the pHashes of the whole pre and post frames."),
    _c("effect_region_distance", I32, "ev.region_distance", "Hamming distance between the pHashes of the 200x200 regions around the action point."),
    _c("effect_point", S, "ev.point", "The action point: `in_frame`, `outside_frame`, or `none` (no coordinates)."),
    _c("effect_region_box", LI, "ev.region|box", "The region [left, top, right, bottom] in frame pixels."),
    _c("effect_changed_px", I64, "ev.change.changed_px", "Pixels that differ between pre and post frames."),
    _c("effect_region_px", I64, "ev.change.region_px", "Of those, pixels inside the region."),
    _c("effect_content_px", I64, "effect.content_px", "Changed pixels left after discounting outlines, carets and ambient change."),
    _c("effect_change_bbox", LI, "ev.change.bbox|box", "Bounding box [left, top, right, bottom] of every changed pixel."),
    _c("effect_content_changed", B, "effect.content_changed", "Did content change (computed for every step with both frames, high-risk or not)."),
    _c("effect_filtered", LS, "effect.filtered|list", "Kinds of change that were discounted: outline, caret, ambient."),
    _c("effect_feedback", S, "effect.feedback", "The WARNING line the runner injects into the next step's feedback (trajcheck's verdict)."),
    _c("effect_feedback_seed", S, "effect.feedback_seed", "The same line under the seed's rule."),
    _c("recorded_action_effect_observed", B, "step.recorded_effect", "The verdict the runner itself recorded (recorded.action_effect_observed)."),
    _c("recorded_feedback", S, "step.recorded_feedback", "The feedback line the runner recorded."),
    _c("effect_agrees_recorded", B, "analyzer:perceptual.agrees_with_recorded", "Does the recomputed verdict equal the recorded one (null when either is missing)."),
    _c("warning_followup", S, "follow.followup", "On a step trajcheck's rule warned on (action_effect_observed false): what the agent did next: recovered, repeated, moved_on, declared_done or run_ended (docs/perceptual.md, \"After a warning\"); null elsewhere, or when the step that would decide has no frames."),
    _c("warning_followup_step", I32, "follow.step", "The step that decided warning_followup (the retry, the next high-risk action, the DONE); null for run_ended."),
    _c("warning_followup_seed", S, "follow.followup_seed", "The same under the seed's literal rule, on the steps it warned on (action_effect_observed_seed false)."),
    _c("warning_shown", B, "follow.shown", "On a step either rule warned on: was the WARNING line shown to the agent (null: unknown); see warning_shown_source."),
    _c("warning_shown_source", S, "follow.shown_source", "Where warning_shown comes from: recorded_feedback, recorded_verdict or run_config (config.perceptual_verifier)."),
    _c("effect_in_fact", B, "follow.in_fact", "On a step either rule warned on: did it in fact have an effect, by evidence besides its two frames (URL, DOM, a later frame, the run's outcome): true is a false warning; null when the run records nothing to tell."),
    _c("effect_in_fact_basis", S, "follow.in_fact_basis", "What shows the effect when effect_in_fact is true: url_changed, dom_changed, later_frame or run_passed."),
    _c("obs_observations", LS, "page.obs.observations|list", "The observation list: URL change, skeleton diff items (\"New message appeared: ...\"), focus, client witness."),
    _c("obs_url_changed", B, "page.obs.url_changed", "URL before differs from URL after (null without both)."),
    _c("obs_dom_changed", B, "page.obs.dom_changed", "The DOM snapshot's hash changed (null without both snapshots)."),
    _c("obs_meaningful_change", B, "page.obs.meaningful_change", "The skeleton diff has items (or, without a skeleton, the DOM hash changed)."),
    _c("obs_something_changed", B, "page.obs.something_changed", "URL changed OR meaningful change OR the client witness saw something."),
    _c("obs_success", B, "page.obs.success", "False when nothing changed; else action_succeeded and confidence >= 0.70 (null without a semantic verdict)."),
    _c("obs_goal_achieved", B, "page.obs.goal_achieved", "task_completed and confidence >= 0.70."),
    _c("obs_low_confidence_completion", B, "page.obs.low_confidence_completion", "Goal achieved with confidence below 0.85."),
    _c("obs_confidence", F64, "page.obs.confidence", "0.2 when nothing changed; else the recorded semantic confidence."),
    _c("obs_reason", S, "page.obs.reason", "no_change, semantic_goal_achieved, semantic_success, semantic_failure, changed_no_semantic_verdict, client_witness_only, no_page_evidence."),
    _c("pred_prediction", S, "pred.prediction", "What the step predicted: frame_changed, frame_stable, expected (an expected-outcome block), or null."),
    _c("pred_held", B, "pred.held", "Did the prediction hold (null when it could not be checked)."),
    _c("pred_failed_checks", LS, "pred.failed_checks|list", "The checks that failed (e.g. element_should_exist:#toast)."),
    _c("pred_checks", I32, "pred.checks", "Number of checks run."),
    _c("pred_confidence", F64, "pred.confidence", "Expected-outcome confidence by the seed's rules (missing element caps at 0.60; navigation as expected lifts to 0.75)."),
    _c("pred_action_kind", S, "pred.action_kind", "The seed's action-type classification: navigation, dropdown or generic."),
    _c("shared_frames", B, "fn:shared_frames", "Several actions fell between the same two screenshots (a loop that screenshots on request) and this one's pair went to another: its perceptual verdict is null (effect_reason shared_frames), never a no-effect of its own."),
    _c("loop_id", I32, "loop.loop_id", "Drift loop this step belongs to (numbered from 1 within the run), null outside a loop."),
    _c("loop_len", I32, "loop.loop_len", "Length of that loop."),
    _c("state_id", I32, "state.state", "The screen (state) the step's post frame shows, numbered from 0 in the run in the order first seen; null without a post frame."),
    _c("state_kind", S, "state.kind", "new (a screen no earlier frame of the run showed), return (one an earlier frame showed) or same (the screen of the pre frame); null without frames."),
    _c("state_returns_to", I32, "state.first_step", "For a return: the step whose frame first showed that screen (its pre frame when the reward reason says 'before step N')."),
    _c("oscillation_id", I32, "state.oscillation", "The oscillation this step is part of (numbered from 1 in the run), null outside one."),
    _c("screen_text", LS, "screen.lines|opt", "Lines of text OCR read on the post frame, in the regions a high-risk step changed (where no DOM snapshot says what the page showed, or with --ocr always); null when the step was not read (docs/referee.md, \"Screen text\")."),
    _c("screen_text_boxes", LLI, "screen.boxes|boxes", "The box [left, top, right, bottom] of each screen_text line, frame pixels."),
    _c("screen_text_new", LS, "screen.new|opt", "The screen_text lines that were not in the same region of the pre frame: what the action brought up."),
    _c("screen_messages", LS, "screen.messages|opt", "Messages among the new lines, as `kind: text (confidence)` (error or success, by the DOM path's catalogue of phrases); a line read with less than the minimum confidence is listed with `low confidence: decides nothing`."),
    _c("screen_text_agrees", B, "screen.agrees", "Where a DOM snapshot was read too (--ocr always): do the DOM and the screen text find the same kinds of new message after the step; the DOM decides either way. Null otherwise."),
    _c("reward_done_gate", B, "gate", "This DONE follows WAIT steps with no frame change (no_observed_delta_after_waits)."),
    _c("reward_score", F64, "reward.score", "Evidence reward in [-1, 1]."),
    _c("reward_class", S, "reward.klass", "strong_positive, weak_positive, neutral, negative or hard_negative."),
    _c("reward_reasons", LS, "reward.reasons|list", "Short codes with their evidence (e.g. `executor_timeout: Timeout 5000ms exceeded`)."),
    _c("reward_confidence", F64, "reward.confidence", "Confidence in [0, 1]; missing evidence lowers it."),
    _c("tokens_input", I64, "spend.tokens_input", "Input tokens of the step's model call, those read from a cache included; null when the log records none. A call that issued several actions has its figures on one of them (the one whose effect is checked), null on the others."),
    _c("tokens_output", I64, "spend.tokens_output", "Output tokens of the step's model call, reasoning included; null when the log records none."),
    _c("tokens_cached", I64, "spend.tokens_cached", "Of the input tokens, those read from a cache; null when the log does not say."),
    _c("tokens_reasoning", I64, "spend.tokens_reasoning", "Of the output tokens, the model's reasoning; null when the log does not say."),
    _c("cost_usd", F64, "spend.cost_usd", "What the step's model call cost in USD: as the log recorded it, or its tokens times the `--prices` of its model (runs.cost_source says which); null otherwise."),
    _c("wall_seconds", F64, "spend.wall_seconds", "The step's elapsed seconds as the log's clock gives them (docs/formats.md says how, per format); null when the log records no time."),
    _c("extra", S, "step.extra|json", "Step properties that format v1 does not define, as JSON."),
    _c("action_extra", S, "step.action.extra|json", "Action properties that have no column, as JSON: a scroll's dy or direction, a drag's start, a format's raw call (function, args, input)."),
)

TABLES: dict[str, tuple[Column, ...]] = {"runs": RUNS, "steps": STEPS}
assert tuple(TABLES) == TABLE_NAMES


def arrow_schema(table: str) -> pa.Schema:
    return pa.schema([pa.field(c.name, c.type) for c in TABLES[table]],
                     metadata={b"trajcheck.schema_version": str(SCHEMA_VERSION).encode()})
