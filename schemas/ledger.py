"""Ledger tables, declared once as data.

Every column has a name, an Arrow type and a description. The Parquet writer,
the README's column tables (``trajcheck columns --format md``) and the tests all
read these declarations, so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

#: Bumped whenever a column is renamed, removed or changes meaning.
SCHEMA_VERSION = 1


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
    _c("outcome_score", F64, "outcome.score from an external evaluator, when recorded."),
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
    _c("extra", S, "Properties of run.json that format v1 does not define, as JSON."),
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
    _c("extra", S, "Step properties that format v1 does not define, as JSON."),
)

TABLES: dict[str, tuple[Column, ...]] = {"runs": RUNS, "steps": STEPS}


def arrow_schema(table: str) -> pa.Schema:
    return pa.schema([pa.field(c.name, c.type) for c in TABLES[table]],
                     metadata={b"trajcheck.schema_version": str(SCHEMA_VERSION).encode()})
