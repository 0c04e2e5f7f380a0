"""Every problem trajcheck reports, declared once: slug, severity, what it means, what to do.

How to add a problem: add a member to ``Slug`` and one ``ProblemKind`` to the right section of
``SECTIONS`` below, then build the ``Problem`` at the call site with ``Slug.NAME`` and a message saying
what was found (and a hint that fits the case, or none to take the catalogue's). The type checker
refuses a name that is not a member, ``Problem`` refuses a slug that is not declared here, and
``tests/test_problems.py`` checks that ``Slug`` and the catalogue hold the same slugs, then asks you to
regenerate the reference page with::

    python -m devtools.problemsdoc > docs/problems.md

A slug is stable: the ledger stores it (in ``runs.error`` and ``runs.warnings``), and scripts match on
it. Never rename one in passing, and never reuse a retired slug for another meaning: a renamed or split
slug goes to ``RETIRED``, which the ledger's query views read (old ledgers are read with the current
names, and ``has_problem(warnings, 'old_name')`` finds the new ones: see :mod:`trajcheck.store.ledgerquery`).

Severity: ``error`` means the run (or the path argument) is not scored and is reported as invalid;
``warning`` means the problem is reported and the run is still scored. A few slugs take either,
depending on which file they concern; ``other`` says when the second severity applies.

The reasons of the analyzers' findings (``effect_reason``: ``not_high_risk``, ``verifier_off`` ...) are
ledger values, not problems: they are catalogued in :mod:`trajcheck.base.reasons` (docs/reasons.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

Severity = Literal["error", "warning"]

#: The severities a ``Problem`` may have.
SEVERITIES: tuple[Severity, ...] = ("error", "warning")

#: The command that rewrites the committed reference page from this catalogue.
REGENERATE = "python -m devtools.problemsdoc > docs/problems.md"


class Slug(StrEnum):
    """Every problem slug, by name: ``Problem(Slug.JSON_INVALID, ...)``. A member is its slug (a str), so
    the ledger stores and JSON prints the same text as before. Declared one by one, not built from
    ``SECTIONS``, so that the type checker sees the names; the catalogue's test checks the two agree."""

    PATH_NOT_FOUND = "path_not_found"
    NOT_A_DIRECTORY = "not_a_directory"
    NO_READER_CLAIMS = "no_reader_claims"
    READERS_COMPETE = "readers_compete"
    UNFINISHED_RUN = "unfinished_run"
    SCREENSHOTS_WITHOUT_LOG = "screenshots_without_log"
    READER_NOT_LOADED = "reader_not_loaded"
    FORMAT_NOT_REMOTE = "format_not_remote"
    STORE_UNREADABLE = "store_unreadable"
    MAPPING_MATCHES_NOTHING = "mapping_matches_nothing"
    OCR_NOT_INSTALLED = "ocr_not_installed"
    SCREEN_TEXT_CAPPED = "screen_text_capped"
    DUPLICATE_RUN_ID = "duplicate_run_id"
    PRICE_MISSING = "price_missing"
    JUDGED_RUN_UNKNOWN = "judged_run_unknown"
    FILE_MISSING = "file_missing"
    FILE_UNREADABLE = "file_unreadable"
    FILE_TOO_LARGE = "file_too_large"
    NOT_A_REGULAR_FILE = "not_a_regular_file"
    PATH_ESCAPES_RUN = "path_escapes_run"
    NOT_UTF8 = "not_utf8"
    JSON_INVALID = "json_invalid"
    JSON_TOO_DEEP = "json_too_deep"
    VALUE_OUT_OF_RANGE = "value_out_of_range"
    SCHEMA = "schema"
    RECORD_NOT_OBJECT = "record_not_object"
    SCORE_NOT_A_NUMBER = "score_not_a_number"
    MORE_PROBLEMS = "more_problems"
    STEPS_MISSING = "steps_missing"
    STEPS_EMPTY = "steps_empty"
    STEPS_AMBIGUOUS = "steps_ambiguous"
    STEPS_OUT_OF_ORDER = "steps_out_of_order"
    DUPLICATE_STEP_INDEX = "duplicate_step_index"
    STEPS_GAP = "steps_gap"
    STEP_NUMBER_MISMATCH = "step_number_mismatch"
    STEP_ALIGNMENT = "step_alignment"
    RUN_UNFINISHED = "run_unfinished"
    REPLY_WITHOUT_OBSERVATION = "reply_without_observation"
    UNKNOWN_ACTION_TYPE = "unknown_action_type"
    HALF_COORDINATE = "half_coordinate"
    ACTION_NULL = "action_null"
    STEP_WITHOUT_ACTION = "step_without_action"
    ACTION_UNPARSED = "action_unparsed"
    MULTI_ACTION = "multi_action"
    REASONING_MERGED = "reasoning_merged"
    REPLY_CONFLICT = "reply_conflict"
    NO_ACTIONS = "no_actions"
    SCREENSHOT_MISSING = "screenshot_missing"
    SCREENSHOT_RELOCATED = "screenshot_relocated"
    SCREENSHOT_AMBIGUOUS = "screenshot_ambiguous"
    SCREENSHOT_OUTSIDE_RUN = "screenshot_outside_run"
    COORD_SPACE_AMBIGUOUS = "coord_space_ambiguous"
    SCREENSHOT_OVERWRITTEN = "screenshot_overwritten"
    SCREEN_UNKNOWN = "screen_unknown"
    FRAMES_MISSING = "frames_missing"
    FRAME_UNREADABLE = "frame_unreadable"
    FRAME_TOO_LARGE = "frame_too_large"
    COORDS_OUTSIDE_FRAME = "coords_outside_frame"
    ACTIONS_NOT_UNDERSTOOD = "actions_not_understood"
    FRAMES_NOT_FOUND = "frames_not_found"
    READING_UNSURE = "reading_unsure"
    READING_CONTRADICTED = "reading_contradicted"
    DOM_MISSING = "dom_missing"
    DOM_UNREADABLE = "dom_unreadable"
    DOM_TOO_LARGE = "dom_too_large"
    DOM_TOO_DEEP = "dom_too_deep"
    PICKLE_UNREADABLE = "pickle_unreadable"
    PICKLE_UNEXPECTED = "pickle_unexpected"
    TRACE_TOO_LARGE = "trace_too_large"
    TRACE_LINE_UNREADABLE = "trace_line_unreadable"
    CONTRACT_INVALID = "contract_invalid"
    INTERNAL_ERROR = "internal_error"
    OUT_OF_MEMORY = "out_of_memory"


@dataclass(frozen=True)
class ProblemKind:
    """One kind of problem: its stable ``slug``, its usual ``severity``, one line on what it ``means``
    and a default ``hint`` (what the user should do). ``other``, when set, says when the slug is
    reported with the other severity. ``fills_hint`` is False where a ``Problem`` made without a hint
    must stay without one (its text is already stored in ledgers)."""

    slug: Slug
    severity: Severity
    means: str
    hint: str
    other: str = ""
    fills_hint: bool = True

    @property
    def severities(self) -> tuple[Severity, ...]:
        """The severities this slug is reported with, the usual one first."""
        if not self.other:
            return (self.severity,)
        return (self.severity, "warning" if self.severity == "error" else "error")


_K = ProblemKind
# Optional side files: a broken one costs what it adds (WebVoyager's reference answer, the replies a UI-TARS
# reasoning.json fills in), not the run.
_METADATA = "in an optional side file (WebVoyager's task metadata, the reasoning.json beside a UI-TARS session log)"

#: The catalogue, in sections (the headings of docs/problems.md); within a section, in reading order.
SECTIONS: tuple[tuple[str, tuple[ProblemKind, ...]], ...] = (
    ("Finding runs", (
        _K(Slug.PATH_NOT_FOUND, "error", "A path argument, or the prefix of a store URL, does not exist.", "pass "
           "a run directory or a folder that holds runs; for a URL, check the bucket and prefix"),
        _K(Slug.NOT_A_DIRECTORY, "warning", "A path argument is a file (skipped).", "pass the folder holding the run"),
        _K(Slug.NO_READER_CLAIMS, "error", "A folder holds JSON files or images, but no reader recognises a run "
           "in it (up to five such folders are named, with their counts).", "`trajcheck formats` says what each "
           "reader looks for; a native run needs run.json beside steps.jsonl"),
        _K(Slug.SCREENSHOTS_WITHOUT_LOG, "warning", "A folder of screenshots beside the batch's runs has no log "
           "any reader claims: it is a run row with damage no_log and no verdict (the rule: docs/analysis.md, "
           "\"Damaged runs\").",
           "re-run it (`trajcheck redo` lists it), or restore its log"),
        _K(Slug.READERS_COMPETE, "warning", "Several readers claim a folder; the best fit (a log's shape before a "
           "file name) reads it.", "`trajcheck formats --detect FOLDER` says why; or use --input-format NAME"),
        _K(Slug.READER_NOT_LOADED, "warning", "A `trajcheck.readers` entry point fails to load, or is no reader.",
           "fix or uninstall the package that declares it"),
        _K(Slug.UNFINISHED_RUN, "warning", "A RunWriter stopped before finish(): its hidden folder is not scored.",
           "run the harness again for that run, or delete the folder"),
        _K(Slug.FORMAT_NOT_REMOTE, "error", "`--input-format` names an adapter, but runs behind a URL are read "
           "in trajcheck's own format only.", "copy the runs locally to read them with an adapter"),
        _K(Slug.STORE_UNREADABLE, "error", "A remote store (an fsspec URL) cannot be listed, or a run cannot be "
           "fetched from it.",
           "check the URL, the credentials and the endpoint (`FSSPEC_<PROTOCOL>_*` variables)"),
        _K(Slug.MAPPING_MATCHES_NOTHING, "error", "A `--mapping` file matches no log, or its `steps` expression "
           "gives no list of steps.",
           "check the mapping's expressions against one log (jmespath.org) and `files` against the log's name",
           other="for a step field that matches nothing in any step of a run"),
        _K(Slug.DUPLICATE_RUN_ID, "error", "Two runs share one run_id: the first keeps it, the second is not "
           "scored (both paths are named).", "give every run its own run_id"),
        _K(Slug.PRICE_MISSING, "warning", "`score --prices` gave no cost to runs whose logs record tokens: their "
           "model has no price in the list, or the log names no model (said once per score call, with the models "
           "and how many runs each).", "add the model to the price list (a name, or a pattern such as "
           "claude-3-5-sonnet-*); a run whose log names no model gets no cost"),
        _K(Slug.JUDGED_RUN_UNKNOWN, "warning", "A `score --judgments` file judges a run not in the batch (scored or "
           "skipped unchanged): not used. Named once a run.", "check the run_id or score its folder"),
    )),
    ("Reading a run's files", (
        _K(Slug.FILE_MISSING, "error", "A file the run needs (run.json, a step file, a log) is not there.",
           "the run directory is incomplete; copy the whole run", other=_METADATA),
        _K(Slug.FILE_UNREADABLE, "error", "A run file exists but cannot be read: permissions, an I/O error, or an "
           "archive (Playwright's trace.zip) that is not a readable zip, holds no *.trace event file, or has a "
           "member that cannot be unpacked.",
           "check permissions and that the file is not a broken link", other=_METADATA),
        _K(Slug.FILE_TOO_LARGE, "error", "A run file is over the byte limit for its kind.",
           "split the run or strip embedded images", other=_METADATA),
        _K(Slug.NOT_A_REGULAR_FILE, "error", "A run file is a FIFO, a socket or a device; it is never opened "
           "(reading one could block forever).", "replace it with the file the runner wrote, or remove it",
           other="for a frame, a DOM snapshot, a contract or any other file of the run, and " + _METADATA),
        _K(Slug.PATH_ESCAPES_RUN, "error", "A path is absolute, goes through `..`, or is a link that resolves "
           "outside the run directory (or outside a trace archive); it is not read.",
           "keep every file inside the run directory and name it by a relative path",
           other="for a screenshot path in a transcript or history, a contract's reference image, a DOM "
                 "snapshot, and " + _METADATA),
        _K(Slug.NOT_UTF8, "error", "A text file is not UTF-8 (the first bad byte and its offset are named).",
           "re-save the file as UTF-8", other=_METADATA),
        _K(Slug.JSON_INVALID, "error", "A JSON document or a JSONL line does not parse (often a truncated file).",
           "re-export the file or remove the broken part", other=_METADATA),
        _K(Slug.JSON_TOO_DEEP, "error", "A JSON document nests deeper than trajcheck reads.",
           "flatten the record", other=_METADATA),
        _K(Slug.VALUE_OUT_OF_RANGE, "error", "A number the ledger cannot store (NaN, Infinity, an overflowing "
           "float, an over-long integer, a value beyond its column's type) or a string holding a lone UTF-16 "
           "surrogate; the field is named.",
           "write null for a missing number, and numbers that fit a 64-bit float", other=_METADATA),
        _K(Slug.SCHEMA, "error", "A record does not have the shape its format requires (a JSON Schema error, or "
           "a value where an object or a list is expected).",
           "see the run format (schemas/*.schema.json), or `trajcheck formats NAME` for an adapter's shape"),
        _K(Slug.RECORD_NOT_OBJECT, "error", "A line of OSWorld's traj.jsonl is not a JSON object.",
           "repair or remove the line"),
        _K(Slug.SCORE_NOT_A_NUMBER, "warning", "OSWorld's result.txt holds no number; the run's outcome_score is "
           "left empty.", "write the evaluator's score to result.txt as a number"),
        _K(Slug.MORE_PROBLEMS, "error", "The run has more errors than are listed; the rest are counted, not shown.",
           "fix the errors shown, then run `trajcheck validate` again", fills_hint=False),
    )),
    ("Steps and actions", (
        _K(Slug.STEPS_MISSING, "error", "The run has no step records at all (no steps.jsonl and no steps/ "
           "folder; no BrowserGym step_N.pkl.gz).", "write one JSON object per step to steps.jsonl"),
        _K(Slug.STEPS_EMPTY, "error", "The run's log holds no step (no record, no assistant reply, no tool call, "
           "no action).", "a run needs at least one step with an action"),
        _K(Slug.STEPS_AMBIGUOUS, "warning", "A run directory holds its steps in more than one place (steps.jsonl "
           "and a steps/ folder, several histories or transcripts, a report that embeds several sessions); one is "
           "read (the one named).", "keep one record of the steps per run directory"),
        _K(Slug.STEPS_OUT_OF_ORDER, "warning", "Step indices are not increasing; the steps are sorted by index.",
           "write the steps in the order they ran"),
        _K(Slug.DUPLICATE_STEP_INDEX, "error", "Two steps share one index.", "give every step its own index, in order"),
        _K(Slug.STEPS_GAP, "warning", "BrowserGym step files are missing in the middle of the episode.",
           "copy every step_N.pkl.gz; the steps around the gap have no before/after state"),
        _K(Slug.STEP_NUMBER_MISMATCH, "warning", "A BrowserGym step file's own step number differs from its "
           "file name; the name is used.", "check that the step files were not renamed"),
        _K(Slug.STEP_ALIGNMENT, "warning", "BrowserGym's next step records another last action than this step's, "
           "so its last_action_error may belong to another action.",
           "check that the step files belong to one episode"),
        _K(Slug.RUN_UNFINISHED, "warning", "A BrowserGym episode did not finish; it is scored as far as it goes "
           "and its outcome status is null.", "copy the whole episode, or re-run it to the end"),
        _K(Slug.REPLY_WITHOUT_OBSERVATION, "warning", "A WebVoyager assistant reply follows no user message; it "
           "is read as its own step.", "keep WebVoyager's alternation of observations and replies"),
        _K(Slug.UNKNOWN_ACTION_TYPE, "warning", "The action type is not a v1 action type; it is scored as "
           "unknown (never high-risk).", "map it to a v1 action type"),
        _K(Slug.HALF_COORDINATE, "warning", "Only one of action.x and action.y is set; the region check is "
           "skipped.", "record both coordinates or neither"),
        _K(Slug.ACTION_NULL, "warning", "A step's action is recorded as null (browser-use's model_output: the "
           "model gave no usable answer); the step is scored as an UNKNOWN action.",
           "check that the runner records every step's action"),
        _K(Slug.STEP_WITHOUT_ACTION, "warning", "A BrowserGym step in the middle of the episode records no action; "
           "the step is skipped.", "check that the runner records every step's action"),
        _K(Slug.ACTION_UNPARSED, "warning", "The recorded action cannot be read in its format's grammar; the step "
           "is scored as an UNKNOWN action.", "compare the action with the grammar `trajcheck formats NAME` shows"),
        _K(Slug.REASONING_MERGED, "warning", "A UI-TARS session log has a `reasoning.json` beside it (the same "
           "steps with the model's `raw_reply`): the steps whose reply the session log lacks or cut short take "
           "it from there, and steps only it holds are added; the message names them.",
           "nothing to do: both files are read"),
        _K(Slug.REPLY_CONFLICT, "warning", "A UI-TARS session log and the `reasoning.json` beside it hold "
           "different replies for a step (beyond the `<|box_start|>` tokens the harness adds); the session log's "
           "is read.", "check which file the harness wrote last"),
        _K(Slug.MULTI_ACTION, "warning", "A step holds several action calls; the first is the step's action, all "
           "are kept in extra.calls.", "trajcheck scores one action per step; record one action per step"),
        _K(Slug.NO_ACTIONS, "warning", "A Playwright trace records no user action.",
           "trace the part of the test that acts on the page"),
    )),
    ("Screenshots and frames", (
        _K(Slug.SCREENSHOT_MISSING, "warning", "The log gives a step no screenshot: it records none, or names one "
           "its reader cannot find and so leaves out (OSWorld's screenshot_file, a screencast frame not in the "
           "trace archive); the step is scored without it. A file the log names that a step keeps is reported "
           "as `frames_missing` instead, once.", "copy the run's screenshots with it"),
        _K(Slug.SCREENSHOT_RELOCATED, "warning", "A screenshot path the log records is not in the run (an absolute "
           "path, or the folder the harness wrote to); the one file of the same name inside the run is used.",
           "store screenshot paths relative to the log"),
        _K(Slug.SCREENSHOT_AMBIGUOUS, "warning", "A screenshot path the log records is not in the run, and several "
           "files of its name are; none is used.", "store screenshot paths relative to the log"),
        _K(Slug.SCREENSHOT_OUTSIDE_RUN, "warning", "A screenshot the log records is outside the run's folder but "
           "inside the folder being scored (the argument of `score` or `validate`): a harness that keeps `logs/` "
           "beside `screenshots/`. That file is used and is part of the run's digest; one outside the folder being "
           "scored is refused (`path_escapes_run`).", "nothing to do; scoring the run's folder alone would miss it"),
        _K(Slug.COORD_SPACE_AMBIGUOUS, "warning", "Nothing declares the space of the run's action points, and "
           "several spaces fit every point, or none does; the reader's default is used (runs.coord_space_source "
           "says so).", "declare the coordinate space (or the screen size) in the log, or read it with a --mapping"),
        _K(Slug.SCREENSHOT_OVERWRITTEN, "warning", "OSWorld's runner wrote the next action's screenshot over this "
           "one's; the step is scored without its post frame.", "give every step's screenshot its own file"),
        _K(Slug.SCREEN_UNKNOWN, "warning", "UI-TARS coordinates are relative (0-999) but the session records no "
           "screen size; the points are left out.",
           "add screen {width, height} to the session log, or coordinate_space: pixels"),
        _K(Slug.OCR_NOT_INSTALLED, "warning", "Scoring asked to read the screen's text (a high-risk step's change, "
           "or a claiming run's final frame, with no DOM snapshot to say what the page showed), but OCR is not "
           "installed: said once per `score`, with the count of regions left unread; verdicts are what they are "
           "without screen text.", "pip install 'trajcheck[ocr]', or score with --ocr off to say it is meant"),
        _K(Slug.SCREEN_TEXT_CAPPED, "warning", "A run has more high-risk changes to read on screen than scoring "
           "reads in one run (40, trajcheck.media.screenread.MAX_CHANGES_PER_RUN): the later ones are not read (their "
           "screen_text is null); the final frame of a claiming run is read all the same.",
           "nothing to fix in the run; its verdict rests on the changes that were read"),
        _K(Slug.FRAMES_MISSING, "warning", "A frame file a step references is not there (reported once per file, "
           "where a step first uses it); the step's verdict is null (effect_reason frames_missing).",
           "re-export the run with its screenshots, or drop the reference"),
        _K(Slug.FRAME_UNREADABLE, "warning", "A frame is not a readable PNG, JPEG or WebP image (corrupt, empty, "
           "bad base64); the step's verdict is null.", "re-export the screenshot as PNG, JPEG or WebP"),
        _K(Slug.FRAME_TOO_LARGE, "warning", "A frame is over Pillow's MAX_IMAGE_PIXELS (a decompression bomb) or "
           "over the byte budget of an inline or archived frame; the step's verdict is null.",
           "keep screenshots at the screen's size"),
        _K(Slug.COORDS_OUTSIDE_FRAME, "warning", "The action point is outside the frame; only the global hash "
           "decides.", "check run.json screen {width, height} against the frame size"),
    )),
    ("How much of a run was read", (
        _K(Slug.ACTIONS_NOT_UNDERSTOOD, "warning", "Most of a run's actions were not understood by its reader "
           "(scored as UNKNOWN): its verdicts rest on little.",
           "check the run's format (`trajcheck formats`), or read it with a --mapping file"),
        _K(Slug.FRAMES_NOT_FOUND, "warning", "Most of a run's steps have no readable screenshot: their effect "
           "verdicts are null.", "copy the run's screenshots with it, check the paths the log records, or score "
           "the folder that holds both the log and its screenshots"),
        _K(Slug.READING_UNSURE, "warning", "The run's mapping marks a reading of its log unsure (`[run] unsure`: "
           "the frame alignment, the coordinate space or the action names): its screenshots did not separate the "
           "readings (draft-mapping wrote the counts beside the line). The run gets no verdict from its own "
           "evidence nor from the no-answer rule (unknown, `not_read`); a contract, the benchmark's evaluator "
           "and a judge still decide.", "check that reading by eye against a few screenshots, set it in the "
           "mapping, and take it out of [run] unsure"),
        _K(Slug.READING_CONTRADICTED, "warning", "`validate`: the runs' screenshots contradict the reading their "
           "reader declares: clicks change the screen where they land under another frame alignment (one step "
           "earlier or later) or another scale of the points, by the margin rule of "
           "trajcheck.analyzers.readings (a sign test on the clicks where the readings disagree). Said once per "
           "reader, over up to 20 of its runs.", "check the mapping's screenshot_is, screenshots_offset and "
           "coordinates (or model_scale) against a few screenshots"),
    )),
    ("DOM snapshots", (
        _K(Slug.DOM_MISSING, "warning", "A DOM snapshot a step references is not there; the observation check "
           "falls back to URLs and the client witness.", "copy the run's DOM snapshots with it"),
        _K(Slug.DOM_UNREADABLE, "warning", "A DOM snapshot cannot be read; the step is scored without it.",
           "check permissions and that the file is not a broken link"),
        _K(Slug.DOM_TOO_LARGE, "warning", "A DOM snapshot is over the byte or element limit; the step is scored "
           "without it.", "snapshot the page the agent saw, not a page grown without bound"),
        _K(Slug.DOM_TOO_DEEP, "warning", "A DOM snapshot's elements nest deeper than Chromium's parser allows; "
           "the step is scored without it.", "snapshot the page as the browser parsed it"),
    )),
    ("Archives and logs of other harnesses", (
        _K(Slug.PICKLE_UNREADABLE, "error", "A BrowserGym pickle cannot be read as plain data (it is corrupt or "
           "names classes outside BrowserGym's).",
           "re-export the run, or remove a file that is not BrowserGym's"),
        _K(Slug.PICKLE_UNEXPECTED, "error", "A BrowserGym pickle reads, but is not the object expected (ExpArgs "
           "with env_args, a StepInfo with obs and action).", "check that the file is BrowserGym's"),
        _K(Slug.TRACE_TOO_LARGE, "error", "trace.zip has too many members, or unpacks past its byte limits.",
           "split the trace"),
        _K(Slug.TRACE_LINE_UNREADABLE, "warning", "A trace event line is not JSON or is over the line byte limit; "
           "it is skipped and the other events are read.", "the trace may be truncated; re-export it"),
    )),
    ("Contracts", (
        _K(Slug.CONTRACT_INVALID, "warning", "A contract cannot be read or does not match the contract schema; "
           "the run is scored without it.", "see the contract format in docs/referee.md"),
    )),
    ("Scoring", (
        _K(Slug.INTERNAL_ERROR, "error", "trajcheck failed on this run (a bug); the run is invalid and the batch "
           "goes on.", "please report this with the run attached"),
        _K(Slug.OUT_OF_MEMORY, "error", "Scoring ran out of memory reading this run.",
           "score it alone with --jobs 1, or check its frames' sizes"),
    )),
)

#: Every problem kind by slug.
CATALOGUE: dict[Slug, ProblemKind] = {k.slug: k for _, kinds in SECTIONS for k in kinds}


@dataclass(frozen=True)
class Retired:
    """A slug no longer reported: ``now`` names what replaced it. A slug split in two has one regular
    expression per new slug in ``when``, matched against the problem's stored text (its message, which
    the code that reported it wrote in fixed words), so that an old ledger's line is read under the right
    new name."""

    slug: str
    now: tuple[Slug, ...]
    why: str
    when: tuple[str, ...] = ()


#: Retired slugs (issue 28 settled the names the catalogue had made visible as inconsistent).
RETIRED: tuple[Retired, ...] = (
    Retired("history_ambiguous", (Slug.STEPS_AMBIGUOUS,), "named the same thing as steps_ambiguous: a run's "
            "steps in more than one place"),
    Retired("trace_unreadable", (Slug.FILE_UNREADABLE,), "named the same thing as file_unreadable: a run file "
            "(Playwright's trace.zip) that cannot be read"),
    Retired("wrong_type", (Slug.RECORD_NOT_OBJECT, Slug.SCORE_NOT_A_NUMBER), "had two meanings: an OSWorld "
            "traj.jsonl line that is not an object (an error), and a result.txt with no number (a warning)",
            when=(r"a traj\.jsonl line must be a JSON object", r"result\.txt holds .*, not a number")),
    Retired("action_missing", (Slug.ACTION_NULL, Slug.STEP_WITHOUT_ACTION), "had two meanings: browser-use's null "
            "model_output (scored as UNKNOWN), and a BrowserGym step with no action (skipped)",
            when=(r"model_output is null", r"a step in the middle of the run has no action")),
)

#: Every retired slug, with what replaced it.
ALIASES: dict[str, tuple[Slug, ...]] = {r.slug: r.now for r in RETIRED}


def lookup(slug: str) -> ProblemKind:
    """The catalogue entry of ``slug``; ValueError naming the slug and where to declare it if unknown (or
    what replaced it, if it is retired)."""
    try:
        return CATALOGUE[Slug(slug)]
    except ValueError:
        if slug in ALIASES:
            raise ValueError(f"problem slug {slug!r} is retired: use {' or '.join(ALIASES[slug])}") from None
        raise ValueError(f"unknown problem slug {slug!r}: declare it in core/base/problems.py "
                         "(trajcheck.base.problems), "
                         f"then run `{REGENERATE}`") from None
