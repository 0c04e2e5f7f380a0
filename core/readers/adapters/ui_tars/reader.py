"""UI-TARS logs: per-step screenshots, the model's reply in UI-TARS's grammar, and the action it became.

A run is a directory holding one log, in any of the shapes UI-TARS harnesses write:

* a **session log** (JSON or JSONL): an object with ``steps`` (or ``trajectory`` / ``history``), or a list
  of steps. Each step has the screenshot the model saw (``screenshot`` / ``screenshot_path`` / ``image`` /
  ``screenshot_file``: a path inside the run, or base64), the reply (``response`` / ``prediction`` /
  ``raw_response`` / ``model_reply`` / ``raw_reply`` / ``model_output``) and, when the harness parsed it,
  the action (``parsed_action`` / ``action``): UI-TARS's structure ``{action_type, action_inputs}`` (or a list
  of them) or a flat ``{type, x, y, ...}`` (the point the harness executed). A step's screenshot is its pre
  frame and the previous step's post frame;
* an **Agent TARS event stream** (``event-stream.jsonl``: a JSON array of ``user_message`` events with the
  screenshots, ``tool_call`` events whose ``arguments.action`` is a UI-TARS call, ``tool_result`` events);
* a **UI-TARS-desktop** session (``{conversations: [{from, value, screenshotBase64, predictionParsed}]}``),
  or the HTML report the desktop app exports, which embeds it in ``<script type="ui_tars_web_dump">``.

The grammar is :mod:`~trajcheck.readers.adapters.ui_tars.actions`. Several actions in one reply are one step each;
they share that reply's screenshots (``shared_frames``, as for the vendor transcripts). The space of the
points (:mod:`~trajcheck.readers.kit.coords`) is what the log declares (``coordinate_space``; a flat action's
executed point is in screen pixels), else what the points fit, and the screen is the declared ``screen``
or else the first screenshot's size.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...kit.reader import FormatDoc, Reader, Table
from ....base.errors import Problem
from ....base.problems import Slug
from ....base.inputs import exists_not_dir
from ....base.jsonio import parse_json_text
from ....schemas.records import Action, Run, Step

from ...kit import coords
from ...kit.reading import (MAX_HISTORY_BYTES, Frames, Problems, Sniffer, frame_size, load_json_or_jsonl,
                            read_json_file, read_text_file, run_id_of)
from ...kit.sparse import Timeline, last_frame, steps_of
from . import shape as ui_tars_shape
from .logs import REASONING, Builder, desktop, events, merge_reasoning, session_steps

NAME = "ui-tars"
#: The report's embedded session: the opening tag (bounded, so a page of unclosed tags costs linear time), then
#: the text up to the next closing tag, found with str.find.
_DUMP = re.compile(r"<script[^<>]{0,512}\bui_tars_web_dump\b[^<>]{0,512}>", re.I)
_LOOKS = frozenset({"wait"})
#: Declared coordinate spaces, as session logs name them.
_DECLARED = {"relative-1000": "relative-1000", "relative": "relative-1000", "pixels": "screen", "screen": "screen",
             "absolute": "screen", "screenshot": "screenshot", "smart-resize": "smart-resize"}


#: A log of one of UI-TARS's shapes (:mod:`.ui_tars_shape`), by its parsed data.
SNIFF = Sniffer(ui_tars_shape.shape, "session.json", suffixes=(".json", ".jsonl", ".html"),
                prefer=ui_tars_shape.has_screenshots, what="a UI-TARS log (session steps with UI-TARS replies or "
                "parsed actions, an Agent TARS event stream, a UI-TARS-desktop session or report)",
                text_test=ui_tars_shape.report)
claims = SNIFF.claims


def _parse(run_dir: Path, problems: Problems) -> tuple[str, Any]:
    """The log's file and its value (an HTML report: its embedded session); raises on an unreadable log. A
    ``reasoning.json`` is read instead only when it is the folder's one log (beside a session log, it is merged
    into it: :func:`_side`)."""
    rel = problems.file = SNIFF.pick(run_dir, problems.run, problems, side=(REASONING,))
    text = read_text_file(run_dir / rel, run=problems.run, rel=rel, problems=problems, limit=MAX_HISTORY_BYTES)
    value: Any = None
    if text is not None and rel.lower().endswith(".html"):
        tags = list(_DUMP.finditer(text))
        end = text.find("</script>", tags[0].end()) if tags else -1
        if end < 0:
            problems.error(Slug.STEPS_EMPTY, "the report embeds no ui_tars_web_dump script", hint="export the report "
                           "from UI-TARS-desktop again")
        else:
            if len(tags) > 1:
                problems.warn(Slug.STEPS_AMBIGUOUS, f"the report embeds {len(tags)} sessions; the first is read")
            value, p = parse_json_text(text[tags[0].end():end], run=problems.run, file=rel)
            if p:
                problems.append(p)
    elif text is not None:
        value = load_json_or_jsonl(text, run=problems.run, rel=rel, problems=problems)
    problems.raise_errors()
    return rel, value


def _side(run_dir: Path, rel: str, problems: Problems) -> tuple[list[Any], dict[str, Any]] | None:
    """The steps (and the task) of the ``reasoning.json`` beside the session log ``rel``, or None when there is
    none. A side file that cannot be read costs the merge, never the run: its problem is a warning."""
    if rel == REASONING or not exists_not_dir(run_dir / REASONING):
        return None
    found: list[Problem] = []
    value = read_json_file(run_dir / REASONING, run=problems.run, rel=REASONING, problems=found,
                           limit=MAX_HISTORY_BYTES)
    for p in found:
        problems.warn(p.slug, f"{p.message}; it is not merged into {rel}", file=REASONING, line=p.line,
                      field=p.field, hint=p.hint)
    steps, meta = _steps_list(value)
    return (steps, meta) if steps else None


def _shape(value: Any) -> str:
    """Which of the shapes (module docstring) a log's value is."""
    if isinstance(value, dict) and isinstance(value.get("conversations"), list):
        return "desktop"
    if isinstance(value, list) and any(isinstance(e, dict) and e.get("type") in ("tool_call", "user_message")
                                       and "id" in e for e in value[:50]):
        return "events"
    return "session"


def _steps_list(value: Any) -> tuple[list[Any], dict[str, Any]]:
    if isinstance(value, list):
        return value, {}
    if isinstance(value, dict):
        for k in ("steps", "trajectory", "history"):
            if isinstance(value.get(k), list):
                return value[k], value
    return [], value if isinstance(value, dict) else {}


def _first_size(frames: Frames, timeline: Timeline) -> tuple[int, int] | None:
    """The first screenshot's (width, height): the screen size when the log declares none."""
    return frame_size(frames, next((t[1] for t in timeline if t[0] == "frame"), None))


def _declared_screen(meta: dict[str, Any]) -> tuple[int, int] | None:
    screen: dict[str, Any] = given if isinstance(given := meta.get("screen"), dict) else {}
    w, h = screen.get("width"), screen.get("height")
    return (w, h) if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0 else None


def _points(acts: list[Action]) -> list[tuple[float, float]]:
    return [p for a in acts for p in (a.point, tuple(a.extra.get("start") or ())) if p and len(p) == 2
            and None not in p]


def _pair_scale(pairs: list[tuple[tuple[float, float], tuple[float, float]]]) -> tuple[float, float] | None:
    """The one scale that takes every reply point to its executed point (within 1%), or None."""
    ks = [(e[0] / m[0], e[1] / m[1]) for e, m in pairs if m[0] > 0 and m[1] > 0]
    if not ks:
        return None
    kx, ky = ks[0]
    if all(abs(x - kx) <= 0.01 * kx and abs(y - ky) <= 0.01 * ky for x, y in ks):
        return (1.0, 1.0) if abs(kx - 1) <= 0.01 and abs(ky - 1) <= 0.01 else (round(kx, 4), round(ky, 4))
    return None


def _spaces(b: Builder, meta: dict[str, Any], shape: str, screen: tuple[int, int] | None,
            shot: tuple[int, int] | None) -> tuple[coords.Space, coords.Space | None, list[Problem]]:
    """The space of the run's points, and of the points read from replies in a run whose other points are a
    harness's flat actions (their executed points are in screen pixels; a reply's are the model's)."""
    acts = [t[1] for t in b.timeline if t[0] == "act"]
    if b.flat and not _DECLARED.get(str(meta.get("coordinate_space") or "").lower()):
        flat = coords.make_space("screen", "declared: the harness logs the point it executed (parsed_action x, y) "
                                 "in screen pixels", screen, shot)
        replies = [a for a in acts if a.extra.get("from_reply")]
        if not _points(replies):
            return flat, None, []
        scale = _pair_scale(b.pairs)
        if scale is not None:  # the steps that log both show how the harness turned the model's points into its own
            how = ("declared: the harness executes the model's points as they are (parsed_action equals the reply)"
                   if scale == (1.0, 1.0) else f"data: the harness scaled the model's points by {scale[0]:g} x "
                   f"{scale[1]:g} (parsed_action against the reply)")
            return flat, coords.Space("screen", how, flat.screen, scale), []
        model, notes = _space(b, replies, meta, shape, screen, shot)
        return flat, model, notes
    space, notes = _space(b, acts, meta, shape, screen, shot)
    return space, None, notes


def _space(b: Builder, acts: list[Action], meta: dict[str, Any], shape: str, screen: tuple[int, int] | None,
           shot: tuple[int, int] | None) -> tuple[coords.Space, list[Problem]]:
    """The space of ``acts``' points: declared (``coordinate_space``; UI-TARS's parsed fractions are the
    0-1000 grid), else decided from the points."""
    pts = _points(acts)
    declared = _DECLARED.get(str(meta.get("coordinate_space") or "").lower())
    if declared is None and b.fractions:
        declared = "relative-1000"
    if declared == "screen" and screen is None:
        declared = "screenshot"
    model = str(meta.get("model") or meta.get("modelName") or "")
    default = "smart-resize" if re.search(r"1\.5", model) and "tars" in model.lower() else "relative-1000"
    return coords.decide(pts, default=default, declared=declared, screen=screen, shot=shot, run=b.problems.run,
                         file=b.problems.file, candidates=("relative-1000", "smart-resize", "screen", "screenshot")
                         if shape != "events" else ("relative-1000", "screenshot"))


def _convert(steps: list[Step], space: coords.Space, replies: coords.Space | None) -> list[Step]:
    """The steps with their points in the run's screen space (left out, with extra.point_dropped, when the
    space cannot place them); ``replies``, when set, is the space of the points read from replies, taken to
    the run's screen from there."""
    out = []
    for s in steps:
        a = s.action
        if a.x is None and not a.extra.get("start"):
            out.append(s)
            continue
        use = replies if replies is not None and a.extra.get("from_reply") else space
        if use is not space and use.screen and space.screen:  # the reply's space, then to the run's screen
            k = (space.screen[0] / use.screen[0], space.screen[1] / use.screen[1])
            use = coords.Space(use.name, use.how, space.screen, (use.scale[0] * k[0], use.scale[1] * k[1]),
                               use.usable)
        x, y = use.convert(a.x, a.y)
        extra = dict(a.extra)
        if isinstance(extra.get("start"), list) and len(extra["start"]) == 2:
            extra["start"] = list(use.convert(*extra["start"]))
        if not use.usable:
            extra["point_dropped"] = "relative coordinates without a screen size or a screenshot"
        out.append(Step(s.index, Action(a.type, x, y, a.keys, a.text, a.url, a.element, extra), s.reasoning,
                        s.frame_pre, s.frame_post, s.executor_ok, s.executor_error, s.page, s.client,
                        s.recorded_effect, s.recorded_feedback, s.semantic, s.contract_name, s.contract_passed,
                        s.predict, s.expected, s.extra, s.source, s.line))
    return out


def read_ui_tars(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one UI-TARS log (see the module's docstring and :data:`DOC`)."""
    run_id = run_id_of(run_dir, display)
    problems = Problems(run_id)
    rel, value = _parse(run_dir, problems)
    frames = Frames(run_dir, run_id, rel, problems)
    b = Builder(frames, problems)
    shape = _shape(value)
    final: str | None = None
    finished = False
    size: tuple[int, int] | None = None
    if shape == "desktop":
        goal, size = desktop(b, value)
        meta: dict[str, Any] = value
    elif shape == "events":
        goal, final = events(b, value)
        meta = {}
    else:
        raw, meta = _steps_list(value)
        side = _side(run_dir, rel, problems)
        if side is not None:
            raw = merge_reasoning(raw, side[0], problems, REASONING)
            meta = {**side[1], **meta}  # the session log's own fields first; the side file's task where it has none
        finished = session_steps(b, raw)
        g = meta.get("instruction") or meta.get("task") or meta.get("goal")
        goal = g if isinstance(g, str) else None
    steps = steps_of(b.timeline, b.results, rel, _LOOKS)
    if final is not None:  # the outcome: a last answer without a tool call is the DONE
        last = last_frame(b.timeline)
        steps.append(Step(index=len(steps), action=Action("DONE", text=final), reasoning=final, source=rel,
                          frame_pre=last, frame_post=last))
    if not steps:
        problems.error(Slug.STEPS_EMPTY, "the log has no steps", hint="a run needs at least one step")
    problems.raise_errors()
    screen = _declared_screen(meta) or size
    space, replies, notes = _spaces(b, meta, shape, screen, _first_size(frames, b.timeline))
    problems += notes
    if not space.usable and any(s.action.x is not None for s in steps):
        problems.warn(Slug.SCREEN_UNKNOWN, "coordinates are relative (0-1000) but the log records no screen size and "
                      "no screenshot", field="screen", hint="add screen {width, height} to the log; points are left "
                      "out")
    steps = _convert(steps, space, replies)
    done = steps[-1].action.type == "DONE" or finished
    model = meta.get("model") or meta.get("modelName")
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps), goal=goal,
              agent_name="ui-tars", agent_model=model if isinstance(model, str) else None,
              screen_width=space.screen[0] if space.screen else None,
              screen_height=space.screen[1] if space.screen else None,
              outcome_status="done" if done else None, coord_space=space.name, coord_space_source=space.how,
              inline_frames=frames.inline, outside_files=frames.outside)
    return run, problems.warnings()


DOC = FormatDoc(
    ends=('UI-TARS harnesses stop on `finished(...)` or their loop limit, and UI-TARS-desktop also on the '
          "person's stop (`user_stop`, the app's stop button): a run may end without `finished` because "
          'someone stopped it.'),
    title="UI-TARS logs",
    claims=("A run is a directory holding one UI-TARS log: a session log (JSON with `steps`, `trajectory` or "
            "`history`, or JSONL, one step per line), an Agent TARS event stream (`event-stream.jsonl`), a "
            "UI-TARS-desktop session (`conversations`) or the HTML report UI-TARS-desktop exports. Claimed by "
            "the shape of the parsed data of one of its first 8 JSON, JSONL or HTML files (the whole file, or "
            "as much as its first 256 KiB hold), never by a word in a string: steps that are objects, one at "
            "least with a reply in UI-TARS's grammar (`Action: click(start_box=...)`), UI-TARS's parsed action "
            "(`action_type`, `action_inputs`) or the keys its harnesses log (`model_reply`; `parsed_action` "
            "beside a reply); events whose tool calls carry a UI-TARS action; turns `from` human and gpt; an "
            "HTML report with a `ui_tars_web_dump` script. A chat list of `{role, content}` messages is none of "
            "these, and is not claimed. Of several, a log with screenshots is read first, with a "
            "`steps_ambiguous` warning; a "
            "`reasoning.json` beside a session log is no rival but its companion, merged into it (below)."),
    example=("trajcheck score sessions/ --out LEDGER          # one folder per session log\n"
             "trajcheck formats ui-tars"),
    about=(
        ("Sources: bytedance/UI-TARS (Apache-2.0) `codes/ui_tars/action_parser.py` and `prompt.py` at "
         "582f3a7ea5d2 (the grammar, `parse_action_to_structure_output`, `smart_resize`); "
         "bytedance/UI-TARS-desktop (Apache-2.0) at 239b6544a0ea: `packages/ui-tars/action-parser/src/"
         "actionParser.ts` (the full-width `Action：`, `<bbox>`), `packages/ui-tars/shared/src/types/data.ts` "
         "(`GUIAgentData`, `conversations`), `apps/ui-tars/src/renderer/src/utils/html.ts` (the report's "
         "`ui_tars_web_dump` script); martasumyk/rl_with_autonomous_feedback (MIT) `agents/agent_core.py` at "
         "7f2ae1f7e74a (a UI-TARS-1.5 harness's `session_log.json`: `model_reply`, `screenshot_path`, the flat "
         "`parsed_action`, `status_after_action`; `raw_reply` is the model's reply before the harness's "
         "`add_box_token`, `agents/vision.py`, wraps its `(x,y)` in `<|box_start|>`/`<|box_end|>` into "
         "`model_reply`; the `reasoning.json` beside the session log, the same steps with `raw_reply`, is "
         "written by the harness as issue 27 describes its logs: its source at that commit writes only "
         "`session_log.json`); bytedance/UI-TARS-desktop at d46aa85dd4f6, `packages/"
         "multimodal/agent/fixtures/gui-agent_basic/event-stream.jsonl` (the Agent TARS event stream)."),
    ),
    tables=(
        Table(head=("log", "trajcheck"), rows=(
            ("`instruction` / `task` / `goal`, `model`, `screen` {width, height}, `coordinate_space`",
             "`goal`, `agent.model`, `screen`, the declared coordinate space"),
            ("`screenshot` / `screenshot_path` / `image` / `screenshot_file` (a path, or base64)",
             ("the step's pre frame and the previous step's post frame (the model saw it before acting); a path "
              "that is not in the run (`sessions/<time>/step_000.png`) is found by its file name inside it "
              "(`screenshot_relocated`)")),
            ("`response` / `prediction` / `raw_response` / `model_reply` / `raw_reply` / `model_output`",
             "`reasoning` (the thought); the actions when none is parsed"),
            ("`parsed_action` / `action`: `{action_type, action_inputs}` (UI-TARS's parser: boxes as fractions "
             "`[0.5, 0.5, 0.5, 0.5]`), or a list of them", "the actions (fractions read as the 0-1000 grid)"),
            ("`parsed_action` flat: `{type: click, x, y}`, `{type: drag, x1, y1, x2, y2}`, `{type: hotkey, "
             "keys}`, `{type: type, text}`, `{type: scroll, x, y, direction}`, `{type: finished, content}`",
             "the action as the harness executed it: its point is in screen pixels (`coord_space_source` says so)"),
            ("`parsed_action` `{type: raw}` / `{type: none}`, an unknown name, a call that does not parse",
             "`UNKNOWN` (warning `action_unparsed` naming it): never dropped"),
            ("`status_after_action: FINISHED`, or the last action `finished`", "`outcome.status = done`"),
            ("`reasoning.json` beside `session_log.json` (`{task, steps: [{step, raw_reply, thought?}]}`)",
             ("merged by `step` number: its `raw_reply` fills a reply the session log lacks, leaves empty or cut "
              "short (and its `thought` a missing thought), a step only it holds is added in its place "
              "(`reasoning_merged` says which); where both hold a reply and they differ beyond the "
              "`<|box_start|>` tokens, the session log's is read (`reply_conflict` names the step); a "
              "`reasoning.json` that does not parse is a warning and is not merged")),
            ("Agent TARS `user_message` (text; `image_url` data URLs), `tool_call` `arguments.{thought, action}`, "
             "`tool_result` `content.status`, a last `assistant_message` without tool calls",
             "`goal`; frames; one step per call; `executor.ok`; a `DONE` step with its text"),
            ("UI-TARS-desktop `conversations`: `human` `screenshotBase64` (`screenshotContext.size`), `gpt` "
             "`value` and `predictionParsed`; the exported HTML report's `<script type=\"ui_tars_web_dump\">`",
             "frames, `screen`; the actions"),
        )),
        Table(head=("UI-TARS call", "step"), rows=(
            ("`click` / `left_single` / `left_click`, `left_double`, `right_single`, `long_press`, `hover`",
             "`CLICK`, `DOUBLE_CLICK`, `RIGHT_CLICK`, `LONG_PRESS`, `MOUSE_MOVE` at the point"),
            ("a point: `start_box='<|box_start|>(x,y)<|box_end|>'`, `'(x,y)'`, `'[x1,y1,x2,y2]'` (its centre), "
             "`point='<point>x y</point>'`, `<bbox>x1 y1 x2 y2</bbox>`, `start_point=`", "x, y"),
            ("`drag` / `select` / `swipe` (`start_box`/`start_point`, `end_box`/`end_point`), `scroll` (direction)",
             "`DRAG` to the end (`extra.start`), `SCROLL` (`extra.direction`)"),
            ("`hotkey(key='ctrl c')`, `press`, `keydown`, `release`/`keyup`, `type(content=...)`",
             "`KEY_PRESS ctrl+c`, `KEY_UP`; `TYPE` (a trailing newline: `extra.then_enter`, a submit)"),
            ("`navigate(content=url)`, `navigate_back`, `press_back`, `press_home`, `open_app(app_name)`",
             "`NAVIGATE` (`extra.navigation`), `KEY_PRESS home`"),
            ("`wait()`, `finished(content=...)`, `call_user()`, `user_stop` / `error_env`",
             "`WAIT`, `DONE` with its text, `CALL_USER`, `DONE` with `extra.infeasible` (no claim)"),
            ("`Thought:`, `Reflection:` + `Action_Summary:`, `Action:` or `Action：`; several calls separated by "
             "blank lines", "the thought is the reasoning; one step per call (they share the screenshots: "
             "`shared_frames`)"),
        )),
    ),
    notes=(
        ("Coordinates (`runs.coord_space`, `runs.coord_space_source`): the log's `coordinate_space` "
         "(`relative-1000`, `pixels`/`screen`, `screenshot`, `smart-resize`) when it declares one; a flat "
         "`parsed_action`'s point is in screen pixels (what the harness executed); UI-TARS's parsed fractions "
         "are the 0-1000 grid. Otherwise the points decide: a point beyond 1000 is no relative point, one "
         "beyond the screenshot is no pixel of it; when several spaces fit every point, the default is kept "
         "(relative-1000; smart-resize for a `model` named UI-TARS 1.5) with a `coord_space_ambiguous` "
         "warning. `smart-resize` is UI-TARS 1.5's (Qwen2.5-VL's) space: pixels of the screenshot resized to "
         "multiples of 28 within 100x28x28 to 16384x28x28 pixels. Without a declared `screen`, the screen is "
         "the first screenshot's size. Replies are parsed with Python's `ast`, never run."),
    ),
    lost=(
        "No URLs, titles or DOM: the observation check has frames only.",
        ("A relative point with neither a screen size nor a screenshot is left out (`screen_unknown`, "
         "`extra.point_dropped`): only the global frame hash compares that step's frames."),
        ("No tokens or cost: the logs record none. UI-TARS-desktop's `timing` {start, end, cost} on a "
         "conversation times the model's call alone, not the step (the call and its action): it is not read as "
         "`wall_seconds`."),
    ),
    bad_input=("a log that is not JSON (or a JSONL line that is not) makes the run invalid with its file and "
               "line (`json_invalid`); a step that is not an object is a `schema` error; an action that cannot "
               "be read is `UNKNOWN` (warning `action_unparsed`); a screenshot path found nowhere in the run is "
               "`frames_missing` where a step uses it."),
    fixtures=("`tests/fixtures/ui_tars/workspace` is recorded in Chromium by "
              "`tests/fixtures/anthropic/make_fixtures.py`; `tests/fixtures/ui_tars/macos-session` follows the "
              "UI-TARS-1.5 macOS harness's `session_log.json` as its source writes it, with a `reasoning.json` "
              "of the raw replies beside it; "
              "`tests/fixtures/real/ui_tars/agent-tars-gui-basic` is a log the Agent TARS harness wrote, with its "
              "provenance beside it."),
    brief=("a folder holding a UI-TARS log (a session log with `steps`, an Agent TARS event stream, a "
           "UI-TARS-desktop session or its HTML report), claimed by content",
           "UI-TARS's grammar in every published form (`<|box_start|>`, `(x,y)`, boxes, `<point>`, `<bbox>`, "
           "`point=`, `Action：`, several calls a reply), UI-TARS's parsed structure and harnesses' flat "
           "actions; coordinates declared or decided from the data (`coord_space`)",
           "no URLs or DOM; the space of the points is decided per run (`coord_space_source`)"),
)


READER = Reader(
    name=NAME,
    claims=claims,
    claim=SNIFF.claim,
    read=read_ui_tars,
    summary="UI-TARS logs: session logs (steps with screenshots, the reply in UI-TARS's grammar, a parsed "
            "action), Agent TARS event streams, UI-TARS-desktop sessions and reports; coordinates declared or "
            "decided from the data",
    ends="external",  # how the harness ends a run: DOC.ends says why
    doc=DOC,
)
