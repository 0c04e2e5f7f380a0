"""Anthropic Messages transcripts of a computer-use loop (every ``computer`` tool version, the computer and
browser toolsets; the shapes harnesses save them in: :mod:`~trajcheck.readers.adapters.anthropic.logs`).

A run is a directory holding one transcript: a JSON file with a ``messages`` list (and, as the API
request has them, the ``tools`` and the ``model``), a JSON list of messages, or JSONL with one message
per line. Shapes as Anthropic documents them and as the reference loop writes them
(anthropic-quickstarts, computer-use-demo/computer_use_demo/loop.py, ``_make_api_tool_result``):

* assistant messages: ``text`` blocks (the reasoning) and ``tool_use`` blocks named ``computer`` with an
  ``input`` {action, coordinate [x, y], start_coordinate, text, scroll_direction, scroll_amount,
  duration}; actions of ``computer_20241022`` (key, type, mouse_move, left_click, left_click_drag,
  right_click, middle_click, double_click, screenshot, cursor_position) and of ``computer_20250124``
  and later (left_mouse_down/up, hold_key, scroll, wait, triple_click, zoom);
* user messages: ``tool_result`` blocks {tool_use_id, is_error, content: text and ``image`` blocks
  whose source is base64 (or, in harnesses that save screenshots, a file path)}.

Screenshots arrive only in tool results, so several actions can fall between two frames. Each action
is a step whose frames are the nearest screenshots before and after it; when a group of actions shares
one frame pair, the pair goes to the group's last high-risk action (else its last action) and the
others are marked ``shared_frames``: their perceptual verdict is null, never a no-effect of their own.
A ``mouse_move`` followed by a ``left_click`` without a coordinate is one click at the moved-to point.
Coordinates are in the display size the tool was declared with (``display_width_px`` /
``display_height_px``), which becomes the run's ``screen``: a screenshot saved at another scale (a 2x
capture) is scaled to it. The final assistant message without a tool call is the DONE step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...kit.reader import FormatDoc, Reader, Table
from ....base.errors import Problem
from ....base.problems import Slug
from ....schemas.records import Action, Run, Step

from ...kit import coords
from ...kit.reading import (MAX_HISTORY_BYTES, Frames, Problems, Sniffer, frame_size, natural, read_text_file,
                            run_id_of, split_run)
from .actions import LOOKS_ACTIONS, map_action, tool_action
from .logs import (SECONDS, USAGE, cumulative, shape, head, is_step_log, messages_of, step_files, steps_to_messages,
                   transcript)
from ...kit.sparse import Results, Timeline, last_frame, steps_of, trailing_usage, with_usage
from ...kit.usage import anthropic_usage
from ...kit.stream import StreamError

__all__ = ["READER", "claims", "map_action", "read_anthropic_messages"]

NAME = "anthropic-messages"

SNIFF = Sniffer(shape, "messages.json", what="a Claude computer-use transcript (messages with computer tool_use "
                "blocks)")
claims = SNIFF.claims


def _blocks(msg: Any) -> list[dict[str, Any]]:
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(blocks: list[dict[str, Any]]) -> str | None:
    parts = [b["text"].strip() for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    return "\n".join(p for p in parts if p) or None


def _screen(req: dict[str, Any]) -> tuple[int | None, int | None]:
    for tool in req.get("tools") or []:
        if isinstance(tool, dict) and (str(tool.get("type", "")).startswith("computer_")
                                       or tool.get("name") == "computer"):
            w, h = tool.get("display_width_px"), tool.get("display_height_px")
            if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0:
                return w, h
    w, h = req.get("display_width_px"), req.get("display_height_px")
    return (w, h) if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0 else (None, None)

def _frame_of(frames: Frames, block: dict[str, Any], field: str) -> str | None:
    """An ``image`` block's frame: ``source`` {type: base64, data}, or a file path (``source.path``,
    ``source.file``, ``path``) inside the run directory."""
    src = given if isinstance(given := block.get("source"), dict) else {}
    if src.get("type") == "base64" and isinstance(src.get("data"), str):
        return frames.from_base64(src["data"], field)
    path = src.get("path") or src.get("file") or block.get("path")
    return frames.from_path(path, field) if isinstance(path, str) and path else None


def entries(path: Path) -> list[str]:
    """A folder holding several transcripts, each a run of its own (a harness that keeps every session's log in
    one folder), gives their names; a folder that is one run (one transcript, one JSON per step, or a request
    saved at every step) gives none."""
    if step_files(path):
        return []
    found = SNIFF.every(path, cumulative)
    if len(found) < 2 or all(c for _, c in found):
        return []
    return sorted((p.name for p, _ in found), key=natural)


def _pick(run_dir: Path, problems: Problems) -> str:
    """The transcript of a folder that is one run: the last of the requests a harness saved at every step
    (the whole run), else the first by name (with a warning when there are several)."""
    found = SNIFF.every(run_dir, cumulative)
    if len(found) > 1 and all(c for _, c in found):
        return sorted((p.name for p, _ in found), key=natural)[-1]
    return SNIFF.pick(run_dir, problems.run, problems)


def _parse(run_dir: Path, problems: Problems, only: str | None) -> tuple[str, Iterable[Any], dict[str, Any]]:
    """The transcript's file (``only``: the run is that file of a folder of transcripts; the first step file of
    a run saved one JSON per step), its messages and the request around them; raises on an unreadable file."""
    steps = step_files(run_dir) if only is None else []
    if steps and is_step_log(head(run_dir / steps[0])):
        problems.file = steps[0]
        messages, req = steps_to_messages(run_dir, steps, problems.run, problems)
        problems.raise_errors()
        return steps[0], messages, req
    rel = problems.file = only or _pick(run_dir, problems)
    return rel, *transcript(run_dir, rel, problems)


def _timeline(messages: Iterable[Any], frames: Frames,
              problems: Problems) -> tuple[Timeline, Results, str | None, str | None, str | None]:
    """The actions, screenshots and usages in transcript order, each call's result, the goal, the text of a final
    assistant message that calls no tool (None when the transcript ends otherwise), and the model the first
    response names."""
    goal = None
    timeline: Timeline = []
    results: Results = {}
    final_text = None
    model = None
    for i, msg in enumerate(messages):
        blocks = _blocks(msg)
        role = msg.get("role") if isinstance(msg, dict) else None
        if role == "assistant":
            assert isinstance(msg, dict)  # it has a role
            usage = msg[USAGE] if USAGE in msg else anthropic_usage(msg.get("usage"), msg.get("model"))
            if usage is not None or msg.get(SECONDS) is not None:  # the response's usage (a saved Message's)
                timeline.append(("usage", usage, msg.get(SECONDS)))
            if model is None and isinstance(msg.get("model"), str):
                model = msg["model"]
            reasoning = _text(blocks)
            uses = [b for b in blocks if b.get("type") == "tool_use"]
            for b in uses:
                timeline.append(("act", tool_action(b, i, problems), reasoning, b.get("id"), i))
            final_text = None if uses else reasoning
        elif role == "user":
            if goal is None and _text(blocks) and not any(b.get("type") == "tool_result" for b in blocks):
                goal = _text(blocks)
            _user_turn(blocks, i, frames, timeline, results)
    return timeline, results, goal, final_text, model


def _user_turn(blocks: list[dict[str, Any]], i: int, frames: Frames, timeline: Timeline,
               results: Results) -> None:
    """A user message's screenshots (its own image blocks and those of its tool results) and results."""
    for j, b in enumerate(blocks):
        if b.get("type") == "image":  # a screenshot the harness sent in a user turn
            name = _frame_of(frames, b, f"messages[{i}].content[{j}]")
            if name:
                timeline.append(("frame", name))
        if b.get("type") != "tool_result":
            continue
        inner = b.get("content")
        inner = [{"type": "text", "text": inner}] if isinstance(inner, str) else inner
        inner = [c for c in inner if isinstance(c, dict)] if isinstance(inner, list) else []
        results[str(b.get("tool_use_id"))] = (bool(b.get("is_error")), _text(inner))
        for k, c in enumerate(inner):
            if c.get("type") == "image":
                name = _frame_of(frames, c, f"messages[{i}].content[{j}].content[{k}]")
                if name:
                    timeline.append(("frame", name))


def _dropped(steps: list[Step], timeline: Timeline) -> list[Step]:
    """Steps without frames before the transcript's first screenshot, in a transcript that has screenshots: the
    loop removed the older images (the reference loop keeps the most recent ones), which is expected, so they are
    marked ``extra.frames_dropped`` and not counted as missing."""
    if not any(t[0] == "frame" for t in timeline):
        return steps
    out: list[Step] = []
    for s in steps:
        if s.frame_pre is None and s.frame_post is None and not s.extra.get("shared_frames"):
            s = replace(s, extra={**s.extra, "frames_dropped": True})
        elif s.frame_pre is not None or s.frame_post is not None:
            out.extend(steps[len(out):])
            return out
        out.append(s)
    return out


def _space(req: dict[str, Any], steps: list[Step], shot: tuple[int, int] | None,
           problems: Problems) -> tuple[coords.Space, list[Problem]]:
    """The display the model's coordinates are in: the computer tool's declared ``display_width_px`` /
    ``display_height_px``; else, for a capture larger than the reference loop's scaling targets, the target
    it scales to (a coord_space_ambiguous warning when the points fit the capture too); else the capture."""
    w, h = _screen(req)
    if w and h:
        return coords.make_space("screen", "declared: the computer tool's display_width_px, display_height_px",
                                 (w, h), shot), []
    target = coords.scaling_target(shot)
    pts = [p for s in steps if (p := s.action.point) is not None]
    return coords.decide(pts, default="screen" if target else "screenshot", candidates=("screen", "screenshot"),
                         screen=target, shot=shot, run=problems.run, file=problems.file)


def read_anthropic_messages(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one Anthropic computer-use transcript (see the module's docstring and :data:`DOC`)."""
    run_id = run_id_of(run_dir, display)
    run_dir, only = split_run(run_dir)
    problems = Problems(run_id)
    rel, messages, req = _parse(run_dir, problems, only)
    frames = Frames(run_dir, run_id, rel, problems)
    try:
        timeline, results, goal, final_text, model = _timeline(messages, frames, problems)
    except StreamError as exc:  # read it whole: the JSON error, with its line and column, makes the run invalid
        text = read_text_file(run_dir / rel, run=run_id, rel=rel, problems=problems, limit=MAX_HISTORY_BYTES)
        if text is not None:
            messages_of(text, rel, run_id, problems)
        if not any(p.severity == "error" for p in problems):
            problems.error(Slug.JSON_INVALID, f"the transcript stops being JSON: {str(exc).splitlines()[0]}",
                           hint="re-export the transcript")
        problems.raise_errors()
        raise
    steps = _dropped(steps_of(timeline, results, rel, LOOKS_ACTIONS), timeline)
    if final_text is not None:  # the outcome: a last answer without a tool call is the DONE
        last = last_frame(timeline)
        steps.append(Step(index=len(steps), action=Action("DONE", text=final_text), reasoning=final_text,
                          source=rel, frame_pre=last, frame_post=last))
    if steps:  # the usage of the calls after the last action: the final answer's
        steps[-1] = with_usage(steps[-1], *trailing_usage(timeline))
    if not steps:
        problems.error(Slug.STEPS_EMPTY, "the transcript has no computer tool call", field="messages",
                       hint="a run needs at least one action of the computer tool")
    problems.raise_errors()
    space, notes = _space(req, steps, frame_size(frames, next((t[1] for t in timeline if t[0] == "frame"), None)),
                          problems)
    problems += notes
    w, h = space.screen if space.screen else (None, None)
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps), goal=goal,
              agent_name="anthropic computer use", agent_model=req.get("model") if isinstance(req.get("model"), str)
              else model, screen_width=w, screen_height=h, outcome_status="done" if final_text is not None else None,
              extra={k: req[k] for k in ("task_id", "metadata") if k in req}, coord_space=space.name,
              coord_space_source=space.how, inline_frames=frames.inline, outside_files=frames.outside)
    return run, problems.warnings()


DOC = FormatDoc(
    ends=("Anthropic's reference loop (computer-use-demo `sampling_loop`) ends when the model replies without "
          'a tool call, but it runs in a chat a person may stop at any time, and other harnesses save this '
          'transcript with their own limits and checks: a transcript that ends on a tool result may have been '
          'stopped from outside.'),
    title="Anthropic computer-use transcripts",
    claims=("A run is a directory holding one run of a Claude computer-use loop, in any of the shapes harnesses "
            "save: the request's `messages` (a JSON object with `messages`, `tools` and `model`; a JSON list of "
            "messages; JSONL of messages, or of whole requests, the last of which is read), an event log "
            "(`events`: `user_input`, `api_response`, `tool_result`), or one JSON per step (`step_01.json`: "
            "`{response, tool_output}`, with `step_01.png` and a `task_*.txt` beside them). Claimed by the "
            "shape of the parsed data of one of the folder's first 8 `.json`/`.jsonl` files (the whole file, or "
            "as much as its first 256 KiB hold): messages with a role, an event log or a step file, holding a "
            "`tool_use` block (an object, not words in a string) of the `computer` tool or of a member of the "
            "computer toolset (`left_click`, `type`, `screenshot`...). A folder holding several transcripts (a "
            "harness that keeps every session's log "
            "in one folder) is a run per file, named by the file; a folder of requests saved at every step "
            "(`{step, messages, response}`, each holding the whole conversation so far) is one run, read from its "
            "last file (natural order) with the response appended."),
    example=("trajcheck score transcripts/ --out LEDGER          # one folder per transcript\n"
             "trajcheck formats anthropic-messages"),
    about=(
        ("Sources: the reference loop, anthropics/anthropic-quickstarts `computer-use-demo/computer_use_demo/"
         "loop.py` (`_make_api_tool_result`, `_maybe_filter_to_n_most_recent_images`) and `tools/computer.py` "
         "(the actions, `scale_coordinates`, `MAX_SCALING_TARGETS`) at 44c2b5c97d6d, and anthropics/"
         "claude-quickstarts at 370e18d4a20f (`computer_20251124`: `zoom` with `region`, `left_click_drag` "
         "with `start_coordinate`); anthropics/anthropic-sdk-python at f6346e63b750, `computer-toolset.md` and "
         "`browser-toolset.md` (`computer_toolset_20260801`: each action a member tool of its own name with "
         "`toolset_name: computer`; `browser_toolset_20260801`); anhnhatcs/CS715_ComputerUse (MIT) at "
         "92fb144130be, `json_logger.py` (the event log)."),
    ),
    tables=(
        Table(head=("transcript", "trajcheck"), rows=(
            ("`tools[type=computer_*]` `display_width_px`, `display_height_px`",
             ("`screen`: the model's coordinates are in this size; a screenshot saved at another scale (2x) "
              "is scaled to it")),
            ("no declared display", ("the capture's size; a capture larger than the reference loop's scaling "
                                     "targets (1024x768, 1280x800, 1366x768, by aspect ratio) is taken to be "
                                     "scaled to the target, with `coord_space_ambiguous` when the points fit "
                                     "the capture too")),
            ("first user message's text (`task_*.txt` for step files, `user_input` for event logs)", "`goal`"),
            ("assistant `text` blocks", "`reasoning` of the actions of that turn"),
            ("`tool_use` `computer` `{action, coordinate, text, ...}`", "one step per action (table below)"),
            ("`tool_use` named after the action (`left_click`, `type`, ..., `toolset_name: computer`)",
             "the same steps: the computer toolset's member tools"),
            ("`tool_use` of the browser toolset (`toolset_name: browser`: `left_click` {target: {x, y} | {ref}}, "
             "`navigate` {url}, `read_page`, `find`, `form_input`, ...)",
             "`CLICK` at x, y or on `element = ref`, `NAVIGATE`, `READ`, `TYPE`..."),
            ("`tool_use` of `bash`, the text editor and the loop's other tools", "a `TOOL` step (`extra.tool`)"),
            ("any other `tool_use`", "`UNKNOWN`, with an `action_unparsed` warning naming the tool"),
            (("`tool_result` `image` blocks (`source.type = base64`, or `source.path` / `path`: inside the "
              "run, or beside it inside the folder scored)"),
             ("frames, in order: an action's pre frame is the last screenshot before it, its post frame the "
              "first one after it")),
            ("`tool_result` `is_error: true` and its text (the toolset's \"Not executed: ...\" included)",
             "`executor.ok = false`, `executor.error`"),
            ("tool results whose images the loop removed (only the most recent ones kept)",
             "steps without frames, marked `extra.frames_dropped`: expected, not counted as missing"),
            ("event log: `api_response` {content}, `tool_result` {tool_use_id, output | error | image_path}, "
             "`model_selection` {model}", "the assistant turns, the results (an `error` fails the call), "
                                          "frames, `agent.model`"),
            ("step files: `response` (blocks), `tool_output` {status, error, screenshot}, `step_NN.png`",
             "one assistant turn a file, in step order (step_10 after step_9); its screenshot after its last call"),
            ("the last assistant message, when it calls no tool",
             "a `DONE` step with its text (`outcome.status = done`); `claimed_success` reads what it says"),
            (("a response's `usage` (an assistant message saved as the API's whole Message; a step file's "
              "`response.usage`): `input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`, "
              "`output_tokens`, `output_tokens_details.thinking_tokens`"),
             ("`tokens_input` = the three input counts' sum (Anthropic counts the cached input apart), "
              "`tokens_cached` = `cache_read_input_tokens`, `tokens_output`, `tokens_reasoning`: on the step "
              "of the response whose effect is checked (its last high-risk action, else its last acting one), "
              "null on its other steps; a final answer's on the `DONE`")),
            ("event log: `token_usage` {input_tokens, output_tokens, cost_usd, model} before an `api_response`",
             "that response's tokens, and its `cost_usd` as the harness recorded it (`cost_source = log`)"),
            ("event log: each event's `timestamp`",
             ("`wall_seconds` of a response's step: from the end of the turn before it (its last event; for the "
              "first, the `user_input`) to the end of its own (its last `tool_result`, else the response): the "
              "model's call and the actions it issued")),
            ("a response's `model` (saved Messages, step files)",
             "`agent.model` when the request names none: the model `--prices` prices"),
        )),
        Table(head=("action", "step"), rows=(
            (("`left_click`, `right_click`, `middle_click`, `double_click`, `triple_click` (`coordinate`, "
              "`text` = modifiers)"),
             "`CLICK`, `RIGHT_CLICK`, `MIDDLE_CLICK`, `DOUBLE_CLICK`, `TRIPLE_CLICK` at x, y (`extra.modifiers`)"),
            ("`mouse_move` then a click without `coordinate`",
             "one click at the moved-to point (`extra.point_from = mouse_move`)"),
            ("`type`", "`TYPE`, text"),
            ("`key`, `hold_key` (xdotool names: `Return`, `ctrl+s`)",
             "`KEY_PRESS`, keys (`Return` submits: high-risk)"),
            ("`scroll` (`scroll_direction`, `scroll_amount`)", "`SCROLL` at x, y; `extra.direction`, `extra.amount`"),
            ("`left_click_drag` (`start_coordinate`), `left_mouse_down`/`up`, `mouse_move`",
             "`DRAG` (`extra.start`), `MOUSE_DOWN`/`MOUSE_UP`, `MOUSE_MOVE`"),
            ("`wait`, `screenshot`", "`WAIT` (a look: an idle frame pair teaches ambient change)"),
            ("`cursor_position`, `zoom` (`region`)", "`READ`"),
            ("an action name trajcheck does not know", "`UNKNOWN` (warning `action_unparsed`)"),
            ("every action", "`extra.tool_action`, `extra.input`; the call's id in `extra.tool_use_id`"),
        )),
    ),
    notes=(
        ("**Sparse screenshots.** Loops that screenshot only when the model asks put several actions "
         "between two frames. They all get those two frames as pre and post, but only one is checked: the "
         "group's last high-risk action (else its last acting step); the others are marked `shared_frames` "
         "(a `steps` column) and their perceptual verdict is null, never a no-effect of their own."),
        ("**Large transcripts.** Past 32 MiB a transcript is never held whole: a JSON `messages` transcript is "
         "read one message at a time (ijson), a JSONL one a line at a time (a JSONL of whole requests: only the "
         "last request is kept), and each screenshot is decoded as it is reached. Event logs, step files and "
         "requests saved with their response are read whole at any size."),
    ),
    lost=(
        "No URLs, titles or DOM: the observation check has frames only.",
        ("Screenshots the loop dropped from the transcript leave their steps without frames "
         "(`extra.frames_dropped`)."),
        ("A session log whose screenshots lie outside its folder (the CS715 harness keeps `logs/` beside "
         "`screenshots/`) finds them only inside the folder given to `score` or `validate`: score the harness's "
         "folder, not `logs/` alone (`screenshot_outside_run` notes where they came from; a `screenshots/` "
         "folder beside a run's folder is part of its runs, never named as a folder no reader claims)."),
        ("Tokens and time only where the log keeps them: the request's own `messages` hold no usage and no "
         "times. Requests saved at every step (`{step, messages, response}`) hold the usage of their own "
         "response only, and only the last file is read: no tokens are read from that shape (one response's "
         "would pass for the run's)."),
    ),
    bad_input=("a transcript that is not JSON (or a JSONL line that is not) makes the run invalid with its "
               "file and line (`json_invalid`); a transcript without a tool call, `steps_empty`; an "
               "inline screenshot that is not base64 or not an image, `frame_unreadable` (a warning), and a "
               "screenshot path that leaves the run directory, `path_escapes_run` (a warning)."),
    fixtures=("`tests/fixtures/anthropic/make_fixtures.py` records the fixtures in Chromium in these shapes "
              "(`claude-steps` is the feedback run saved one JSON per step); `tests/fixtures/real/anthropic` "
              "holds two sessions a Claude harness wrote, with their provenance."),
    brief=("a folder holding one run of a Claude computer-use loop (the request's messages as JSON or JSONL, an "
           "event log, or one JSON per step), claimed by its content: `tool_use` blocks of the computer tool or "
           "its toolset's member tools",
           "every `computer_*` version's actions and the toolset's member tools (left/right/middle/double/"
           "triple click, mouse_move, drag, mouse down/up, type, key, hold_key, scroll, wait, screenshot, "
           "cursor_position, zoom), the browser toolset, other tools as `TOOL` steps; coordinates in the "
           "declared display (a 2x capture is scaled), else decided from the capture (`coord_space`)",
           "no URLs or DOM; frames only where the loop screenshotted; `is_error` results are executor errors; "
           "the final message without a tool call is the DONE, read for what it claims"),
)


READER = Reader(
    name=NAME,
    claims=claims,
    claim=SNIFF.claim,
    read=read_anthropic_messages,
    entries=entries,
    companions=("screenshots",),  # the CS715 harness keeps logs/ beside screenshots/ (Frames.from_path)
    summary="Anthropic computer-use runs (computer_20241022 to computer_20251124, computer_toolset_20260801): "
            "a Messages transcript (JSON or JSONL), an event log, or one JSON per step",
    ends="external",  # how the harness ends a run: DOC.ends says why
    doc=DOC,
)
