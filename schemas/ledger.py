"""Ledger tables, declared once as data.

Every column has a name, an Arrow type and a description. The Parquet writer,
the README's column tables (``trajcheck columns --format md``) and the tests all
read these declarations, so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from .version import SCHEMA_VERSION, TABLE_NAMES  # noqa: F401  (re-exported)


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    description: str


def _c(name: str, type_: pa.DataType, description: str) -> Column:
    return Column(name, type_, description)


S, B, I32, I64, F64 = pa.string(), pa.bool_(), pa.int32(), pa.int64(), pa.float64()
LS, LI = pa.list_(pa.string()), pa.list_(pa.int32())

RUNS: tuple[Column, ...] = (
    _c("run_id", S, "Run id from run.json; for an invalid run, its directory relative to the argument it was found under."),
    _c("status", S, "`ok`, or `invalid` when the run could not be scored (see `error`)."),
    _c("error", S, "Every problem that made the run invalid, with file, line and field; empty when ok."),
    _c("warnings", LS, "Problems that did not stop scoring (missing or unreadable frames, unknown action types, points outside the frame)."),
    _c("source_format", S, "Format the run was read from (`trajcheck.run/1`)."),
    _c("run_path", S, "The run directory, as found from the command-line argument."),
    _c("task_id", S, "Task id; runs of one task are paired by it."),
    _c("trial", I64, "Repetition number of the task, when recorded."),
    _c("goal", S, "The instruction the agent was given."),
    _c("agent_name", S, "agent.name"),
    _c("agent_model", S, "agent.model"),
    _c("config", S, "The run's config object as JSON (sorted keys); `--by config.KEY` reads it."),
    _c("config_perceptual_verifier", B, "Was the perceptual verifier on when the run was recorded (the ablation arm)."),
    _c("config_require_confirmation", B, "config.require_confirmation as recorded."),
    _c("screen_width", I32, "screen.width: the coordinate space of action x."),
    _c("screen_height", I32, "screen.height: the coordinate space of action y."),
    _c("started_at", S, "started_at as recorded."),
    _c("outcome_status", S, "outcome.status as the runner reported it (done, failed, max_steps, error)."),
    _c("outcome_score", F64, "outcome.score: the benchmark's own evaluator result, when recorded (see evaluator_verdict)."),
    _c("outcome_judge", S, "outcome.judge as recorded (JSON), when present."),
    _c("n_steps", I32, "Number of steps."),
    _c("n_frames", I32, "Number of distinct frame files decoded."),
    _c("perceptual_summary", S, "The seed's per-run summary as JSON: `{\"checked\": n, \"no_effect\": k}` over trajcheck's verdicts, `{}` when the verifier never fired."),
    _c("effect_checked", I32, "High-risk steps with a verdict (trajcheck's rule)."),
    _c("effect_no_effect", I32, "Of those, steps with no observed effect (trajcheck's rule)."),
    _c("effect_checked_seed", I32, "High-risk steps with a verdict (seed's literal rule)."),
    _c("effect_no_effect_seed", I32, "Of those, steps with no observed effect (seed's literal rule)."),
    _c("effect_warning_steps", LI, "Indices of the steps after which the runner injects the WARNING line (trajcheck's rule)."),
    _c("effect_recorded_agree", I32, "Steps whose recorded `action_effect_observed` equals the recomputed verdict."),
    _c("effect_recorded_disagree", I32, "Steps whose recorded `action_effect_observed` differs from the recomputed verdict."),
    _c("reward_total", F64, "Sum of the steps' reward_score."),
    _c("reward_mean", F64, "Mean of the steps' reward_score."),
    _c("reward_first_blocking_step", I32, "First step whose reward reasons include blocking_page, captcha or auth_redirect."),
    _c("longest_loop", I32, "Length of the longest drift loop (0: none)."),
    _c("loops", I32, "Number of drift loops."),
    _c("reward_done_gate", B, "Did a DONE follow WAIT steps with no frame change (no_observed_delta_after_waits)."),
    _c("pred_checked", I32, "Steps whose recorded prediction could be checked."),
    _c("pred_accuracy", F64, "Share of those predictions that held."),
    _c("obs_no_change_steps", I32, "Steps the observation verifier failed for no change at all."),
    _c("reward_strong_positive", I32, "Steps classified strong_positive."),
    _c("reward_weak_positive", I32, "Steps classified weak_positive."),
    _c("reward_neutral", I32, "Steps classified neutral."),
    _c("reward_negative", I32, "Steps classified negative."),
    _c("reward_hard_negative", I32, "Steps classified hard_negative."),
    _c("det_verdict", S, "The deterministic outcome contract: pass, fail, or not_applicable (no contract)."),
    _c("contract_name", S, "The contract's name."),
    _c("contract_source", S, "Where the contract came from: contract.json in the run, or DIR/<task_id>.json."),
    _c("contract_checks", S, "Every check with its evidence, as JSON: [{type, name, passed, evidence}]."),
    _c("judge_model", S, "The visual judge of the final verdict: the recorded judge's model, else reference-phash."),
    _c("judge_verdict", S, "pass or fail."),
    _c("judge_score", F64, "The judge's score."),
    _c("judge_confidence", F64, "The judge's confidence."),
    _c("judge_reasons", LS, "The judge's reasons."),
    _c("judge_source", S, "recorded (outcome.judge of run.json) or reference (computed offline from reference screenshots)."),
    _c("judge_other", S, "A second judge kept beside the first (the reference judge when a recorded one exists), as JSON."),
    _c("evaluator_verdict", S, "The benchmark evaluator's verdict from outcome_score: pass at `score --evaluator-pass` (default 1.0) or above, else fail; null without a score."),
    _c("eval_final_verdict", S, "pass, fail, uncertain (contract, evaluator and judge disagree), or unknown. Contract, evaluator and judge decide; only when all are absent does the evidence verdict become the final verdict (verdict_source evidence)."),
    _c("final_confidence", F64, "Confidence of the final verdict (lower when only one source exists; at most 0.6 from evidence alone)."),
    _c("verdict_reason", S, "agreement, judge_disagreement, evaluator_disagreement, contract_only, evaluator_only, judge_only, evidence_only or no_verdict."),
    _c("verdict_source", S, "Which sources decided the final verdict, joined by +: contract, evaluator, judge (e.g. contract+judge); or evidence, or none."),
    _c("disagreement_reason", S, "judge_disagreement or evaluator_disagreement when the final verdict is uncertain, else null."),
    _c("evidence_verdict", S, "The evidence referee's verdict from the run's own evidence (pass, fail or unknown), computed for every run whatever the other sources say."),
    _c("evidence_reasons", LS, "The evidence referee's reasons, `code@step: evidence` (codes in the README's evidence table)."),
    _c("evidence_confidence", F64, "Confidence of the evidence verdict in [0, 1] (0 when unknown)."),
    _c("claimed_success", B, "The agent claimed success: its final DONE (or outcome status done) read for what it says; a failure flag or a final message that admits failure is no claim (see claim_reason)."),
    _c("claim_reason", S, "Why claimed_success is what it is: no_done, agent_reported_failure, agent_reported_success, message_admits_failure, done, outcome_done (README, \"What the agent claimed\")."),
    _c("claim_evidence", S, "The words or flag claim_reason rests on (e.g. 'unable to: unable to proceed'); null for a plain DONE."),
    _c("false_claim", B, "Claimed success while the final verdict is fail or uncertain."),
    _c("false_claim_basis", S, "What a false claim rests on: evaluator (the benchmark's evaluator alone), evidence (the evidence referee), or referee (a contract or judge took part); null when not a false claim."),
    _c("lesson_promotable", B, "May a lesson from this run be promoted: only pass, or fail where the contract failed and the judge did not say pass; never on evidence alone."),
    _c("lesson_candidate", S, "On disagreement: which check and which judge disagreed, on what evidence."),
    _c("extra", S, "Properties of run.json that format v1 does not define, as JSON."),
    _c("input_digest", S, "Digest of the run's files, reader, scoring options and trajcheck version; an unchanged digest is not scored again."),
    _c("inputs", S, "JSON {root, files: {path: [size, mtime_ns, hash]}}: what the digest covers (the run directory's absolute path and files)."),
    _c("schema_version", I32, "Ledger schema version."),
    _c("trajcheck_version", S, "trajcheck version that wrote the row."),
)

STEPS: tuple[Column, ...] = (
    _c("run_id", S, "Run id (key, with step_index)."),
    _c("step_index", I32, "Step index as recorded (key, with run_id)."),
    _c("action_type", S, "Action type, upper-cased (CLICK, KEY_PRESS, ...)."),
    _c("action_known", B, "Is the action type one of format v1's."),
    _c("action_x", F64, "Action x in screen coordinates, as recorded."),
    _c("action_y", F64, "Action y in screen coordinates, as recorded."),
    _c("action_keys", S, "Keys of a KEY_PRESS."),
    _c("action_text", S, "Text of a TYPE."),
    _c("action_url", S, "URL of a NAVIGATE."),
    _c("reasoning", S, "The agent's text for the step."),
    _c("frame_pre", S, "Pre-action frame, relative to the run directory."),
    _c("frame_post", S, "Post-action frame, relative to the run directory."),
    _c("frame_width", I32, "Width of the post frame in pixels."),
    _c("frame_height", I32, "Height of the post frame in pixels."),
    _c("frame_pre_phash", S, "64-bit pHash of the pre frame (hex, as imagehash prints it)."),
    _c("frame_post_phash", S, "64-bit pHash of the post frame (hex)."),
    _c("executor_ok", B, "executor.ok as recorded."),
    _c("executor_error", S, "executor.error as recorded."),
    _c("url_before", S, "page.url_before as recorded."),
    _c("url_after", S, "page.url_after as recorded."),
    _c("effect_high_risk", B, "Does the seed's high-risk table select this action."),
    _c("effect_rule", S, "Which row of the table: `submit_key`, `keyword`, or null."),
    _c("effect_keyword", S, "The key or keyword that made the action high-risk."),
    _c("action_effect_observed", B, "trajcheck's verdict: did the high-risk action visibly change the screen (null: not checked, see effect_reason)."),
    _c("effect_reason", S, "Why: a slug (content_changed_in_region, only_focus_outline, no_pixel_change, not_high_risk, verifier_off, frames_missing, ...)."),
    _c("action_effect_observed_seed", B, "The seed's literal rule: global pHash changed OR region pHash changed."),
    _c("effect_seed_reason", S, "Why, for the seed rule (global_changed, region_changed, global_and_region_stable, ...)."),
    _c("effect_global_distance", I32, "Hamming distance between the pHashes of the whole pre and post frames."),
    _c("effect_region_distance", I32, "Hamming distance between the pHashes of the 200x200 regions around the action point."),
    _c("effect_point", S, "The action point: `in_frame`, `outside_frame`, or `none` (no coordinates)."),
    _c("effect_region_box", LI, "The region [left, top, right, bottom] in frame pixels."),
    _c("effect_changed_px", I64, "Pixels that differ between pre and post frames."),
    _c("effect_region_px", I64, "Of those, pixels inside the region."),
    _c("effect_content_px", I64, "Changed pixels left after discounting outlines, carets and ambient change."),
    _c("effect_change_bbox", LI, "Bounding box [left, top, right, bottom] of every changed pixel."),
    _c("effect_content_changed", B, "Did content change (computed for every step with both frames, high-risk or not)."),
    _c("effect_filtered", LS, "Kinds of change that were discounted: outline, caret, ambient."),
    _c("effect_feedback", S, "The WARNING line the runner injects into the next step's feedback (trajcheck's verdict)."),
    _c("effect_feedback_seed", S, "The same line under the seed's rule."),
    _c("recorded_action_effect_observed", B, "The verdict the runner itself recorded (recorded.action_effect_observed)."),
    _c("recorded_feedback", S, "The feedback line the runner recorded."),
    _c("effect_agrees_recorded", B, "Does the recomputed verdict equal the recorded one (null when either is missing)."),
    _c("obs_observations", LS, "The observation list: URL change, skeleton diff items (\"New message appeared: ...\"), focus, client witness."),
    _c("obs_url_changed", B, "URL before differs from URL after (null without both)."),
    _c("obs_dom_changed", B, "The DOM snapshot's hash changed (null without both snapshots)."),
    _c("obs_meaningful_change", B, "The skeleton diff has items (or, without a skeleton, the DOM hash changed)."),
    _c("obs_something_changed", B, "URL changed OR meaningful change OR the client witness saw something."),
    _c("obs_success", B, "False when nothing changed; else action_succeeded and confidence >= 0.70 (null without a semantic verdict)."),
    _c("obs_goal_achieved", B, "task_completed and confidence >= 0.70."),
    _c("obs_low_confidence_completion", B, "Goal achieved with confidence below 0.85."),
    _c("obs_confidence", F64, "0.2 when nothing changed; else the recorded semantic confidence."),
    _c("obs_reason", S, "no_change, semantic_goal_achieved, semantic_success, semantic_failure, changed_no_semantic_verdict, client_witness_only, no_page_evidence."),
    _c("pred_prediction", S, "What the step predicted: frame_changed, frame_stable, expected (an expected-outcome block), or null."),
    _c("pred_held", B, "Did the prediction hold (null when it could not be checked)."),
    _c("pred_failed_checks", LS, "The checks that failed (e.g. element_should_exist:#toast)."),
    _c("pred_checks", I32, "Number of checks run."),
    _c("pred_confidence", F64, "Expected-outcome confidence by the seed's rules (missing element caps at 0.60; navigation as expected lifts to 0.75)."),
    _c("pred_action_kind", S, "The seed's action-type classification: navigation, dropdown or generic."),
    _c("shared_frames", B, "Several actions fell between the same two screenshots (a loop that screenshots on request) and this one's pair went to another: its perceptual verdict is null (effect_reason shared_frames), never a no-effect of its own."),
    _c("loop_id", I32, "Drift loop this step belongs to (numbered from 1 within the run), null outside a loop."),
    _c("loop_len", I32, "Length of that loop."),
    _c("reward_done_gate", B, "This DONE follows WAIT steps with no frame change (no_observed_delta_after_waits)."),
    _c("reward_score", F64, "Evidence reward in [-1, 1]."),
    _c("reward_class", S, "strong_positive, weak_positive, neutral, negative or hard_negative."),
    _c("reward_reasons", LS, "Short codes with their evidence (e.g. `executor_timeout: Timeout 5000ms exceeded`)."),
    _c("reward_confidence", F64, "Confidence in [0, 1]; missing evidence lowers it."),
    _c("extra", S, "Step properties that format v1 does not define, as JSON."),
    _c("action_extra", S, "Action properties that have no column, as JSON: a scroll's dy or direction, a drag's start, a format's raw call (function, args, input)."),
)

TABLES: dict[str, tuple[Column, ...]] = {"runs": RUNS, "steps": STEPS}
assert tuple(TABLES) == TABLE_NAMES


def arrow_schema(table: str) -> pa.Schema:
    return pa.schema([pa.field(c.name, c.type) for c in TABLES[table]],
                     metadata={b"trajcheck.schema_version": str(SCHEMA_VERSION).encode()})
