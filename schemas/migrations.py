"""The ledger schema's history: what each version added, in order (as ``llm`` keeps its migrations).

A ledger written by any version from ``OLDEST_READABLE`` on is read by this trajcheck: a part that
lacks a column added later reads that column as nulls (``trajcheck.store.ledger`` fills them, for Arrow
and for DuckDB alike), and the next ``score`` into the ledger commits it at ``SCHEMA_VERSION``. The
run digests include the schema version, so that ``score`` also rescores the runs it finds again,
filling the new columns; runs it does not see keep nulls there until they are rescored.

To add a column: declare it in ``schemas/ledger.py`` and, once a ledger with the current schema may
exist (a release, or a commit on main), add one ``Migration`` here naming it: ``SCHEMA_VERSION``
(``schemas/version.py``) is the last migration's version. ``tests/test_migrations.py``
checks that every column a version added is named here, against a ledger written by version 2.
A renamed or removed column, or one whose meaning changed, needs a ``rewrite`` step, which no
migration has needed yet. A retired problem slug needs no migration: the ledger's query views read a
retired slug in ``runs.error`` and ``runs.warnings`` under the name that replaced it
(trajcheck.base.problems ``RETIRED``, :mod:`trajcheck.store.ledgerquery`), so no stored part is rewritten and no
run's digest changes (a schema version bump would rescore every run).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int  # the version this migration leads to
    summary: str
    added: dict[str, tuple[str, ...]]  # table -> columns added (null in older parts)


#: The oldest schema this trajcheck still reads (version 1 ledgers had no parts and no manifest).
OLDEST_READABLE = 2

MIGRATIONS: tuple[Migration, ...] = (
    Migration(3, "Evidence referee and evaluator source (issues 12, 20): the verdict of a run's own evidence, the "
                 "benchmark evaluator's verdict, which sources decided the final verdict, and what a false claim "
                 "rests on.",
              {"runs": ("verdict_source", "evidence_verdict", "evidence_reasons", "evidence_confidence",
                        "false_claim_basis", "evaluator_verdict")}),
    Migration(4, "What the agent claimed, read for what it says (issue 12): why claimed_success is true or false, "
                 "and the words or flag it rests on; steps whose frame pair went to another action of a sparse-"
                 "screenshot loop (issue 14); the action's own properties (issue 15's drag and scroll marks).",
              {"runs": ("claim_reason", "claim_evidence"), "steps": ("shared_frames", "action_extra")}),
    Migration(5, "Logs as harnesses write them (issue 27): the space a run's action points were in, and how it was "
                 "decided.",
              {"runs": ("coord_space", "coord_space_source")}),
    Migration(6, "Progress that is real (issue 29): the screens (states) a run visits, its returns and oscillations, "
                 "where it stalled, whether it made no net progress, and its efficiency against a reference step "
                 "count.",
              {"runs": ("reference_steps", "efficiency", "states_distinct", "states_returning", "oscillations",
                        "stalled_from_step", "no_net_progress"),
               "steps": ("state_id", "state_kind", "state_returns_to", "oscillation_id")}),
    Migration(7, "Screen text where no DOM says it (issue 31): the lines OCR read in the regions high-risk steps "
                 "changed and on a claiming run's final frame, the messages among them, whether they agree with "
                 "the DOM where both were read, and where the message the evidence verdict read came from.",
              {"runs": ("message_source", "message_text", "screen_text_final", "screen_messages_final",
                        "ocr_engine"),
               "steps": ("screen_text", "screen_text_boxes", "screen_text_new", "screen_messages",
                         "screen_text_agrees")}),
    Migration(8, "Warnings and what followed (issue 30): per step warned on, what the agent did next under each rule, "
                 "whether it was shown the warning and whether the step in fact had an effect; per run, the "
                 "warnings recovered from, repeated, and false.",
              {"runs": ("warnings_recovered", "warnings_repeated", "warnings_false", "warnings_false_checked"),
               "steps": ("warning_followup", "warning_followup_step", "warning_followup_seed", "warning_shown",
                         "warning_shown_source", "effect_in_fact", "effect_in_fact_basis")}),
    Migration(9, "Cost and time (issue 30): the tokens, cost and elapsed seconds of each step and each run, as the "
                 "log records them, and where a run's cost comes from (the log, or a --prices list).",
              {"runs": ("tokens_input", "tokens_output", "tokens_cached", "tokens_reasoning", "cost_usd",
                        "cost_source", "wall_seconds"),
               "steps": ("tokens_input", "tokens_output", "tokens_cached", "tokens_reasoning", "cost_usd",
                         "wall_seconds")}),
    Migration(10, "Rubric trees and the judges users run (issue 39 parts 4 and 5): a contract's partial credit and "
                  "its tree of all/any nodes with each node's result; the judgments of `score --judgments` for "
                  "each run.",
              {"runs": ("contract_score", "contract_tree", "judgments")}),
    Migration(11, "Where runs fail (issue 41): the failure mode of each run that did not pass, its sub-kind, the "
                  "step it rests on and its evidence.",
              {"runs": ("failure_mode", "failure_detail", "failure_step", "failure_evidence")}),
    Migration(12, "Missing evidence stays missing (issue 48, item 2): the actions taken after a run's last "
                  "screenshot, whose final state no frame shows.",
              {"runs": ("actions_after_last_frame",)}),
    Migration(13, "Damaged runs (issue 50): why a run's failure or success is not the agent's doing (an "
                  "infrastructure error, a failed reset, a killed harness, a marker parsed from the reasoning, a task "
                  "already satisfied), and its evidence; the verdict is kept.",
              {"runs": ("damage", "damage_evidence")}),
    Migration(14, "Where a run was lost (issue 51): its first decisive error (the step, its kind, the evidence and "
                  "frames that show it), and whether the agent could have avoided it and its failure mode.",
              {"runs": ("failure_control", "decisive_step", "decisive_kind", "decisive_evidence",
                        "decisive_control")}),
    Migration(15, "How a run went about it (issue 51, item 2): its process score from its effective actions, its "
                  "progress and its recovery after warnings, uncontrollable blocks left out, and the parts it rests "
                  "on.",
              {"runs": ("process_score", "process_evidence")}),
    Migration(16, "Progress over long runs (issue 51, item 3): the page's or window's title before and after each "
                  "step, as the log records it, where phases of the progress timeline are cut.",
              {"steps": ("title_before", "title_after")}),
    Migration(17, "The failure modes, sharpened (issue 51, item 4): every sub-kind a failure mode's evidence shows "
                  "(several error texts, blockers, loop kinds or failed checks), beside failure_detail, which keeps "
                  "the first.",
              {"runs": ("failure_details",)}),
)
