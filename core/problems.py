"""Every problem trajcheck reports, declared once: slug, severity, what it means, what to do.

How to add a problem: add one ``ProblemKind`` to the right section of ``SECTIONS`` below, then build
the ``Problem`` at the call site with that slug and a message saying what was found (and a hint that
fits the case, or none to take the catalogue's). ``Problem`` refuses a slug that is not declared here,
so a new or misspelled slug fails at once. ``tests/test_problems.py`` then asks you to regenerate the
reference page with::

    python -m trajcheck.problems > docs/problems.md

A slug is stable: the ledger stores it (in ``runs.error`` and ``runs.warnings``), and scripts match on
it. Never rename one in passing, and never reuse a retired slug for another meaning.

Severity: ``error`` means the run (or the path argument) is not scored and is reported as invalid;
``warning`` means the problem is reported and the run is still scored. A few slugs take either,
depending on which file they concern; ``other`` says when the second severity applies.

The null reasons of effect verdicts (``effect_reason``: ``not_high_risk``, ``verifier_off`` ...) are
ledger values, not problems, and are documented with the ledger's columns, not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]

#: The severities a ``Problem`` may have.
SEVERITIES: tuple[Severity, ...] = ("error", "warning")

#: The command that rewrites the committed reference page from this catalogue.
REGENERATE = "python -m trajcheck.problems > docs/problems.md"


@dataclass(frozen=True)
class ProblemKind:
    """One kind of problem: its stable ``slug``, its usual ``severity``, one line on what it ``means``
    and a default ``hint`` (what the user should do). ``other``, when set, says when the slug is
    reported with the other severity. ``fills_hint`` is False where a ``Problem`` made without a hint
    must stay without one (its text is already stored in ledgers)."""

    slug: str
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
# WebVoyager's task metadata is optional: a broken metadata file costs the reference answer, not the run.
_METADATA = "in WebVoyager's optional task metadata"

#: The catalogue, in sections (the headings of docs/problems.md); within a section, in reading order.
SECTIONS: tuple[tuple[str, tuple[ProblemKind, ...]], ...] = (
    ("Finding runs", (
        _K("path_not_found", "error", "A path argument, or the prefix of a store URL, does not exist.",
           "pass a run directory or a folder that holds runs; for a URL, check the bucket and prefix"),
        _K("not_a_directory", "warning", "A path argument is a file, not a folder; it is skipped.",
           "pass the folder that holds the run"),
        _K("no_reader_claims", "error", "A folder holds JSON files or images, but no reader recognises a run "
           "in it (up to five such folders are named, with their counts).",
           "`trajcheck formats` says what each reader looks for; a native run needs run.json beside "
           "steps.jsonl"),
        _K("format_not_remote", "error", "`--input-format` names an adapter, but runs behind a URL are read "
           "in trajcheck's own format only.", "copy the runs locally to read them with an adapter"),
        _K("store_unreadable", "error", "A remote store (an fsspec URL) cannot be listed, or a run cannot be "
           "fetched from it.",
           "check the URL, the credentials and the endpoint (`FSSPEC_<PROTOCOL>_*` variables)"),
        _K("mapping_matches_nothing", "error", "A `--mapping` file matches no log, or its `steps` expression "
           "gives no list of steps.",
           "check the mapping's expressions against one log (jmespath.org) and `files` against the log's name",
           other="for a step field that matches nothing in any step of a run"),
        _K("duplicate_run_id", "error", "Two runs share one run_id: the first keeps it, the second is not "
           "scored (both paths are named).", "give every run its own run_id"),
    )),
    ("Reading a run's files", (
        _K("file_missing", "error", "A file the run needs (run.json, a step file, a log) is not there.",
           "the run directory is incomplete; copy the whole run", other=_METADATA),
        _K("file_unreadable", "error", "A run file exists but cannot be read (permissions, an I/O error).",
           "check permissions and that the file is not a broken link", other=_METADATA),
        _K("file_too_large", "error", "A run file is over the byte limit for its kind.",
           "split the run or strip embedded images", other=_METADATA),
        _K("not_a_regular_file", "error", "A run file is a FIFO, a socket or a device; it is never opened "
           "(reading one could block forever).", "replace it with the file the runner wrote, or remove it",
           other="for a frame, a DOM snapshot, a contract or any other file of the run, and " + _METADATA),
        _K("path_escapes_run", "error", "A path is absolute, goes through `..`, or is a link that resolves "
           "outside the run directory (or outside a trace archive); it is not read.",
           "keep every file inside the run directory and name it by a relative path",
           other="for a screenshot path in a transcript or history, a contract's reference image, a DOM "
                 "snapshot, and " + _METADATA),
        _K("not_utf8", "error", "A text file is not UTF-8 (the first bad byte and its offset are named).",
           "re-save the file as UTF-8", other=_METADATA),
        _K("json_invalid", "error", "A JSON document or a JSONL line does not parse (often a truncated file).",
           "re-export the file or remove the broken part", other=_METADATA),
        _K("json_too_deep", "error", "A JSON document nests deeper than trajcheck reads.",
           "flatten the record", other=_METADATA),
        _K("value_out_of_range", "error", "A number the ledger cannot store (NaN, Infinity, an overflowing "
           "float, an over-long integer, a value beyond its column's type) or a string holding a lone UTF-16 "
           "surrogate; the field is named.",
           "write null for a missing number, and numbers that fit a 64-bit float", other=_METADATA),
        _K("schema", "error", "A record does not have the shape its format requires (a JSON Schema error, or "
           "a value where an object or a list is expected).",
           "see the run format (schemas/*.schema.json), or `trajcheck formats NAME` for an adapter's shape"),
        _K("wrong_type", "error", "A line of OSWorld's traj.jsonl is not a JSON object.",
           "repair or remove the line", other="when OSWorld's result.txt holds no number (the score is left empty)"),
        _K("more_problems", "error", "The run has more errors than are listed; the rest are counted, not shown.",
           "fix the errors shown, then run `trajcheck validate` again", fills_hint=False),
    )),
    ("Steps and actions", (
        _K("steps_missing", "error", "The run has no step records at all (no steps.jsonl and no steps/ "
           "folder; no BrowserGym step_N.pkl.gz).", "write one JSON object per step to steps.jsonl"),
        _K("steps_empty", "error", "The run's log holds no step (no record, no assistant reply, no tool call, "
           "no action).", "a run needs at least one step with an action"),
        _K("steps_ambiguous", "warning", "Both steps.jsonl and a steps/ folder exist; steps.jsonl is read.",
           "remove one of them"),
        _K("steps_out_of_order", "warning", "Step indices are not increasing; the steps are sorted by index.",
           "write the steps in the order they ran"),
        _K("duplicate_step_index", "error", "Two steps share one index.",
           "give every step its own index, in order"),
        _K("steps_gap", "warning", "BrowserGym step files are missing in the middle of the episode.",
           "copy every step_N.pkl.gz; the steps around the gap have no before/after state"),
        _K("step_number_mismatch", "warning", "A BrowserGym step file's own step number differs from its "
           "file name; the name is used.", "check that the step files were not renamed"),
        _K("step_alignment", "warning", "BrowserGym's next step records another last action than this step's, "
           "so its last_action_error may belong to another action.",
           "check that the step files belong to one episode"),
        _K("run_unfinished", "warning", "A BrowserGym episode did not finish; it is scored as far as it goes "
           "and its outcome status is null.", "copy the whole episode, or re-run it to the end"),
        _K("history_ambiguous", "warning", "A run directory holds several histories or transcripts; one is read "
           "(the one named).", "keep one history or transcript per directory"),
        _K("reply_without_observation", "warning", "A WebVoyager assistant reply follows no user message; it "
           "is read as its own step.", "keep WebVoyager's alternation of observations and replies"),
        _K("unknown_action_type", "warning", "The action type is not a v1 action type; it is scored as "
           "unknown (never high-risk).", "map it to a v1 action type"),
        _K("half_coordinate", "warning", "Only one of action.x and action.y is set; the region check is "
           "skipped.", "record both coordinates or neither"),
        _K("action_missing", "warning", "A step records no action (browser-use's model_output is null; a "
           "BrowserGym step mid-episode); it is scored as UNKNOWN or skipped.",
           "check that the runner records every step's action"),
        _K("action_unparsed", "warning", "The recorded action cannot be read in its format's grammar; the step "
           "is scored as an UNKNOWN action.", "compare the action with the grammar `trajcheck formats NAME` shows"),
        _K("multi_action", "warning", "A step holds several action calls; the first is the step's action, all "
           "are kept in extra.calls.", "trajcheck scores one action per step; record one action per step"),
        _K("no_actions", "warning", "A Playwright trace records no user action.",
           "trace the part of the test that acts on the page"),
    )),
    ("Screenshots and frames", (
        _K("screenshot_missing", "warning", "A screenshot the log names is not in the run; the steps that use "
           "it are not checked (frames_missing).", "copy the run's screenshots with it"),
        _K("screenshot_relocated", "warning", "A screenshot path the log records is not in the run (an absolute "
           "path, or the folder the harness wrote to); the one file of the same name inside the run is used.",
           "store screenshot paths relative to the log"),
        _K("screenshot_ambiguous", "warning", "A screenshot path the log records is not in the run, and several "
           "files of its name are; none is used.", "store screenshot paths relative to the log"),
        _K("coord_space_ambiguous", "warning", "Nothing declares the space of the run's action points, and "
           "several spaces fit every point, or none does; the reader's default is used (runs.coord_space_source "
           "says so).",
           "declare the coordinate space (or the screen size) in the log, or read it with a --mapping file"),
        _K("screenshot_overwritten", "warning", "OSWorld's runner wrote the next action's screenshot over this "
           "one's; the step is scored without its post frame.", "give every step's screenshot its own file"),
        _K("screen_unknown", "warning", "UI-TARS coordinates are relative (0-999) but the session records no "
           "screen size; the points are left out.",
           "add screen {width, height} to the session log, or coordinate_space: pixels"),
        _K("frames_missing", "warning", "A frame file a step references is not there; the step's verdict is "
           "null.", "re-export the run with its screenshots, or drop the reference"),
        _K("frame_unreadable", "warning", "A frame is not a readable PNG, JPEG or WebP image (corrupt, empty, "
           "bad base64); the step's verdict is null.", "re-export the screenshot as PNG, JPEG or WebP"),
        _K("frame_too_large", "warning", "A frame is over Pillow's MAX_IMAGE_PIXELS (a decompression bomb) or "
           "over the byte budget of an inline or archived frame; the step's verdict is null.",
           "keep screenshots at the screen's size"),
        _K("coords_outside_frame", "warning", "The action point is outside the frame; only the global hash "
           "decides.", "check run.json screen {width, height} against the frame size"),
    )),
    ("How much of a run was read", (
        _K("actions_not_understood", "warning", "Most of a run's actions were not understood by its reader "
           "(scored as UNKNOWN): its verdicts rest on little.",
           "check the run's format (`trajcheck formats`), or read it with a --mapping file"),
        _K("frames_not_found", "warning", "Most of a run's steps have no readable screenshot: their effect "
           "verdicts are null.", "copy the run's screenshots with it, or check the paths the log records"),
    )),
    ("DOM snapshots", (
        _K("dom_missing", "warning", "A DOM snapshot a step references is not there; the observation check "
           "falls back to URLs and the client witness.", "copy the run's DOM snapshots with it"),
        _K("dom_unreadable", "warning", "A DOM snapshot cannot be read; the step is scored without it.",
           "check permissions and that the file is not a broken link"),
        _K("dom_too_large", "warning", "A DOM snapshot is over the byte or element limit; the step is scored "
           "without it.", "snapshot the page the agent saw, not a page grown without bound"),
        _K("dom_too_deep", "warning", "A DOM snapshot's elements nest deeper than Chromium's parser allows; "
           "the step is scored without it.", "snapshot the page as the browser parsed it"),
    )),
    ("Archives and logs of other harnesses", (
        _K("pickle_unreadable", "error", "A BrowserGym pickle cannot be read as plain data (it is corrupt or "
           "names classes outside BrowserGym's).",
           "re-export the run, or remove a file that is not BrowserGym's"),
        _K("pickle_unexpected", "error", "A BrowserGym pickle reads, but is not the object expected (ExpArgs "
           "with env_args, a StepInfo with obs and action).", "check that the file is BrowserGym's"),
        _K("trace_unreadable", "error", "trace.zip is not a readable zip, a member cannot be unpacked, or it "
           "holds no *.trace event file.", "re-export the trace with context.tracing.stop(path=...)"),
        _K("trace_too_large", "error", "trace.zip has too many members, or unpacks past its byte limits.",
           "split the trace"),
        _K("trace_line_unreadable", "warning", "A trace event line is not JSON or is over the line byte limit; "
           "it is skipped and the other events are read.", "the trace may be truncated; re-export it"),
    )),
    ("Contracts", (
        _K("contract_invalid", "warning", "A contract cannot be read or does not match the contract schema; "
           "the run is scored without it.", "see the contract format in docs/referee.md"),
    )),
    ("Scoring", (
        _K("internal_error", "error", "trajcheck failed on this run (a bug); the run is invalid and the batch "
           "goes on.", "please report this with the run attached"),
        _K("out_of_memory", "error", "Scoring ran out of memory reading this run.",
           "score it alone with --jobs 1, or check its frames' sizes"),
    )),
)

#: Every problem kind by slug.
CATALOGUE: dict[str, ProblemKind] = {k.slug: k for _, kinds in SECTIONS for k in kinds}


def lookup(slug: str) -> ProblemKind:
    """The catalogue entry of ``slug``; ValueError naming the slug and where to declare it if unknown."""
    try:
        return CATALOGUE[slug]
    except KeyError:
        raise ValueError(f"unknown problem slug {slug!r}: declare it in core/problems.py (trajcheck.problems), "
                         f"then run `{REGENERATE}`") from None


def _cell(text: str) -> str:
    """``text`` safe inside one Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _severity_cell(kind: ProblemKind) -> str:
    return f"{kind.severity}; {kind.severities[1]} {kind.other}" if kind.other else kind.severity


def markdown() -> str:
    """The reference page docs/problems.md: one table per section (slug, severity, what it means, what
    to do), generated from ``SECTIONS``."""
    out = ["# Problems trajcheck reports", "",
           f"<!-- generated from core/problems.py by `{REGENERATE}`; do not edit by hand -->", "",
           ("`trajcheck validate` lists these (with run, file, line and field); `trajcheck score` stores them "
            "in the ledger's `runs.error` (the run is invalid) and `runs.warnings` (the run is scored). "
            "**error**: the run, or the path argument, is not scored; **warning**: reported, and the run is "
            "still scored. The hint a problem carries may be more specific than the one below."), ""]
    for title, kinds in SECTIONS:
        out += [f"## {title}", "", "| slug | severity | what it means | what to do |", "|---|---|---|---|"]
        out += [f"| `{k.slug}` | {_cell(_severity_cell(k))} | {_cell(k.means)} | {_cell(k.hint)} |" for k in kinds]
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(markdown(), end="")
