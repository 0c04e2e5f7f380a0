"""browser-use ``AgentHistoryList`` JSON (``agent.save_history()`` / ``history.save_to_file()``).

``{"history": [{"model_output", "result", "state", "metadata"?}]}``. Two shapes are
read:

* 2024 (v0.1.x): ``model_output.current_state`` {evaluation_previous_goal (or the
  misspelt ``valuation_previous_goal``), memory, next_goal}, ``model_output.action``
  one ``{name: params}`` dict (or a list of them), ``result`` one dict,
  ``state.screenshot`` base64.
* newer: ``model_output`` {thinking, evaluation_previous_goal, memory, next_goal,
  action: [{name: params}, ...]}, ``result`` a list parallel to the actions,
  ``state`` {url, title, tabs, interacted_element, screenshot_path}, ``metadata``.

``state`` is captured *before* the model acts, so history item i's screenshot is
the pre frame of its actions and item i+1's the post frame. An item with several
actions becomes several steps: all share the pre frame, only the last one gets
the post frame (nothing was captured between them).
"""

from __future__ import annotations

import base64
import binascii
import math
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import quote

from trajcheck.discovery import Reader
from trajcheck.errors import Problem
from trajcheck.rundir import safe_join
from trajcheck.schemas.records import Action, Page, RecordedJudge, Run, Step

from trajcheck.inputs import image_ext as _image_ext
from trajcheck.jsonio import parse_json_text

from .webvoyager import array_item_lines, claims_plain_dir, raise_errors, read_text_file

NAME = "browser-use"
FILE_NAMES = ("AgentHistoryList.json", "AgentHistory.json", "agent_history.json")
#: Histories carry base64 screenshots; allow more than a native steps file.
MAX_HISTORY_BYTES = 512 * 1024 * 1024
#: One decoded screenshot larger than this is refused.
MAX_FRAME_BYTES = 64 * 1024 * 1024

_SEARCH_URLS = {"google": "https://www.google.com/search?q=", "bing": "https://www.bing.com/search?q=",
                "duckduckgo": "https://duckduckgo.com/?q="}
_BRAIN_FIELDS = (("thinking", "Thinking"), ("evaluation_previous_goal", "Eval"),
                 ("valuation_previous_goal", "Eval"), ("memory", "Memory"), ("next_goal", "Next goal"))


#: Actions aimed at an element whose box gives the point of the action.
POINT_ACTIONS = frozenset({"CLICK", "DOUBLE_CLICK", "TYPE", "SELECT_OPTION"})


def _bounds_center(el: Any) -> tuple[float, float] | None:
    """Centre of a newer interacted element's ``bounds`` {x, y, width, height} (CSS pixels of the
    viewport, the screenshot's coordinates), or None."""
    b = el.get("bounds") if isinstance(el, dict) else None
    if not isinstance(b, dict):
        return None
    try:
        x, y, w, h = (float(b[k]) for k in ("x", "y", "width", "height"))
    except (KeyError, TypeError, ValueError):
        return None
    if not all(map(math.isfinite, (x, y, w, h))) or w < 0 or h < 0:
        return None
    return round(x + w / 2, 1), round(y + h / 2, 1)


def reasoning_of(mo: dict[str, Any]) -> str | None:
    brain = mo.get("current_state") if isinstance(mo.get("current_state"), dict) else mo
    parts = []
    seen = set()
    for key, label in _BRAIN_FIELDS:
        v = brain.get(key)
        if isinstance(v, str) and v.strip() and label not in seen:
            parts.append(f"{label}: {v.strip()}")
            seen.add(label)
    return "\n".join(parts) or None


def map_action(name: str, params: dict[str, Any]) -> Action:
    """One browser-use action ``{name: params}`` as a trajcheck action."""
    p = params
    idx = p.get("index")
    el = None if idx is None else str(idx)
    extra: dict[str, Any] = {"function": name, "args": p}
    if el is not None:
        extra["element"] = idx

    def s(v: Any) -> str | None:
        return None if v is None else str(v)

    if name in ("click_element", "click_element_by_index", "click"):
        x, y = p.get("coordinate_x"), p.get("coordinate_y")
        has_xy = isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool)
        kind = "DOUBLE_CLICK" if p.get("num_clicks") == 2 else "CLICK"
        return Action(kind, x=float(x) if has_xy else None, y=float(y) if has_xy else None,  # type: ignore[arg-type]
                      element=el, extra=extra)
    if name in ("input_text", "input"):
        return Action("TYPE", text=s(p.get("text")), element=el, extra=extra)
    if name in ("go_to_url", "navigate", "open_tab"):
        if name == "open_tab" or p.get("new_tab") is True:
            extra["navigation"] = "new_tab"
        return Action("NAVIGATE", url=s(p.get("url")), extra=extra)
    if name in ("search_google", "search"):
        engine = str(p.get("engine") or ("google" if name == "search_google" else "duckduckgo")).lower()
        q = p.get("query")
        base = _SEARCH_URLS.get(engine)
        return Action("NAVIGATE", url=base + quote(str(q), safe='') if base and q is not None else None,
                      text=s(q), extra=extra)
    if name == "go_back":
        return Action("NAVIGATE", extra={**extra, "navigation": "back"})
    if name in ("scroll_down", "scroll_up", "scroll"):
        down = name == "scroll_down" or (name == "scroll" and p.get("down", True) is not False)
        return Action("SCROLL", element=el, extra={**extra, "direction": "down" if down else "up"})
    if name == "send_keys":
        return Action("KEY_PRESS", keys=s(p.get("keys")), extra=extra)
    if name == "done":
        if p.get("success") is False:
            extra["infeasible"] = True  # the agent stops without claiming success
        return Action("DONE", text=s(p.get("text")), extra=extra)
    if name in ("extract_content", "extract", "extract_structured_data", "extract_page_content"):
        return Action("EXTRACT", text=s(p.get("goal") or p.get("query")), extra=extra)
    if name == "wait":
        return Action("WAIT", extra=extra)
    return Action(name.upper(), element=el, extra=extra)


def _actions_of(mo: Any) -> tuple[list[Any], str | None]:
    """The raw action entries of a model_output, or (entries, why they cannot be read)."""
    if not isinstance(mo, dict):
        return [], None
    acts = mo.get("action")
    if isinstance(acts, dict):
        return [acts], None
    if isinstance(acts, list):
        return acts, None if acts else "the action list is empty"
    return [], "model_output has no action"


def _one_action(entry: Any) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(entry, dict):
        return None
    keys = [k for k, v in entry.items() if v is not None and k != "interacted_element"]
    if len(keys) != 1:
        return None
    params = entry[keys[0]]
    if params == {} or params is True:
        params = {}
    if not isinstance(params, dict):
        return None
    return keys[0], params


def _element_info(state: dict[str, Any], index: str) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    sm = state.get("selector_map")
    if isinstance(sm, dict) and isinstance(sm.get(index), str):
        out["xpath"] = sm[index]
    items = state.get("items")
    if isinstance(items, list):
        for it in items:
            if isinstance(it, dict) and str(it.get("index")) == index and isinstance(it.get("text"), str):
                out["text"] = it["text"][:500]
                break
    return out or None


class _Frames:
    """Resolves each history item's screenshot to a frame name (inline bytes or a file in the run)."""

    def __init__(self, run_dir: Path, run: str, source: str, problems: list[Problem], lines: list[int]):
        self.run_dir = run_dir
        self.run = run
        self.source = source
        self.problems = problems
        self.lines = lines
        self.inline: dict[str, bytes] = {}

    def _warn(self, slug: str, msg: str, i: int, field: str, hint: str) -> None:
        self.problems.append(Problem(slug, msg, run=self.run, file=self.source,
                                     line=self.lines[i] if i < len(self.lines) else None, field=field,
                                     severity="warning", hint=hint))

    def of(self, i: int, state: Any) -> str | None:
        if not isinstance(state, dict):
            return None
        b64 = state.get("screenshot")
        if isinstance(b64, str) and b64:
            field = f"history[{i}].state.screenshot"
            if b64.startswith("data:") and "," in b64:
                b64 = b64.split(",", 1)[1]
            if len(b64) > MAX_FRAME_BYTES * 4 // 3 + 4:
                self._warn("frame_too_large", "the inline screenshot is over the size limit", i, field,
                           "the step's frames are not checked")
                return None
            try:
                data = base64.b64decode(b64, validate=True)
            except (binascii.Error, ValueError) as exc:
                self._warn("frame_unreadable", f"the inline screenshot is not valid base64 ({exc})", i, field,
                           "re-export the history; the step's frames are not checked")
                return None
            ext = _image_ext(data)
            if ext is None:
                self._warn("frame_unreadable", "the inline screenshot is not a PNG, JPEG or WebP image", i, field,
                           "the step's frames are not checked")
                return None
            name = f"inline/step-{i:04d}.{ext}"
            self.inline[name] = data
            return name
        path = state.get("screenshot_path")
        if not isinstance(path, str) or not path:
            return None
        field = f"history[{i}].state.screenshot_path"
        rel = path.replace("\\", "/")
        target = safe_join(self.run_dir, rel)
        if target is not None:
            if not target.is_file():
                self._warn("screenshot_missing", f"{path} is missing", i, field,
                           "copy the screenshots with the history; the steps that use it are not checked "
                           "(frames_missing)")
            return str(PurePosixPath(target.relative_to(Path(self.run_dir).resolve()).as_posix()))
        # an absolute path (browser-use writes them under its temp dir) or one that leaves the run:
        # look for the same file inside the run directory by its last path parts only
        parts = (PureWindowsPath(path) if "\\" in path else PurePosixPath(path)).parts
        for k in (2, 1):
            if len(parts) < k:
                continue
            cand = "/".join(parts[-k:])
            t = safe_join(self.run_dir, cand)
            if t is not None and t.is_file():
                self._warn("screenshot_relocated", f"{path} is outside the run directory; {cand} inside it "
                           "is used", i, field, "store screenshot paths relative to the history file")
                return cand
        self._warn("path_escapes_run", f"screenshot path {path!r} points outside the run directory and no file "
                   "of that name is inside it", i, field,
                   "copy the screenshots next to the history and store relative paths")
        return None


def read_browser_use(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    run_id = run_dir.resolve().name or display
    problems: list[Problem] = []
    present = [n for n in FILE_NAMES if (run_dir / n).is_file()]
    source = present[0] if present else FILE_NAMES[0]
    if len(present) > 1:
        problems.append(Problem("history_ambiguous", f"{', '.join(present)} all exist; {source} is read",
                                run=run_id, file=present[1], severity="warning", hint="keep one history per directory"))
    text = read_text_file(run_dir / source, run=run_id, rel=source, problems=problems, limit=MAX_HISTORY_BYTES)
    data = None
    if text is not None:
        data, p = parse_json_text(text, run=run_id, file=source)
        if p:
            problems.append(p)
        elif not isinstance(data, dict) or not isinstance(data.get("history"), list):
            problems.append(Problem("schema", "expected an object with a history array", run=run_id, file=source,
                                    line=1, field="history", hint="this is browser-use's AgentHistoryList.json"))
            data = None
    raise_errors(problems, run_id)
    assert data is not None and text is not None
    history: list[Any] = data["history"]
    lines = array_item_lines(text, "history")
    del text

    def line_of(i: int) -> int | None:
        return lines[i] if i < len(lines) else None

    for i, item in enumerate(history):
        if not isinstance(item, dict):
            problems.append(Problem("schema", f"history item is a {type(item).__name__}, not an object", run=run_id,
                                    file=source, line=line_of(i), field=f"history[{i}]",
                                    hint="each item is {model_output, result, state}"))
    if not history:
        problems.append(Problem("steps_empty", "the history is empty", run=run_id, file=source, field="history",
                                hint="a run needs at least one step"))
    raise_errors(problems, run_id)

    frames = _Frames(run_dir, run_id, source, problems, lines)
    shots = [frames.of(i, item.get("state")) for i, item in enumerate(history)]
    for i, item in enumerate(history):
        if isinstance(item.get("state"), dict) and shots[i] is None and not any(
                p.field.startswith(f"history[{i}].state") for p in problems):
            problems.append(Problem("screenshot_missing", "this state has no screenshot", run=run_id, file=source,
                                    line=line_of(i), field=f"history[{i}].state.screenshot", severity="warning",
                                    hint="the step's frames are not checked (frames_missing)"))

    steps: list[Step] = []
    last_done = False
    last_error = None
    judgement: Any = None
    for i, item in enumerate(history):
        mo = item.get("model_output")
        state = item.get("state") if isinstance(item.get("state"), dict) else {}
        nstate = history[i + 1].get("state") if i + 1 < len(history) and isinstance(
            history[i + 1].get("state"), dict) else None
        results = item.get("result")
        if isinstance(results, dict):
            results = [results]
        if not isinstance(results, list):
            results = []
        entries, why = _actions_of(mo)
        reasoning = reasoning_of(mo) if isinstance(mo, dict) else None
        interacted = state.get("interacted_element")
        meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else None
        loc = {"run": run_id, "file": source, "line": line_of(i)}
        if not entries:
            entries = [None]  # one step that records what happened without an action
            if mo is None:
                problems.append(Problem("action_missing", "model_output is null (the model gave no usable answer)",
                                        field=f"history[{i}].model_output", severity="warning",
                                        hint="the step is scored as an UNKNOWN action", **loc))
            else:
                problems.append(Problem("action_unparsed", why or "no action", field=f"history[{i}].model_output.action",
                                        severity="warning", hint="the step is scored as an UNKNOWN action", **loc))
        n = len(entries)
        for j, entry in enumerate(entries):
            last = j == n - 1
            field = f"history[{i}].model_output.action" + (f"[{j}]" if isinstance(mo.get("action") if isinstance(
                mo, dict) else None, list) else "")
            extra: dict[str, Any] = {"history_index": i}
            if n > 1:
                extra["action_index"] = j
            if entry is None:
                action = Action("UNKNOWN", extra={"raw": None, "model_output": mo})
            else:
                one = _one_action(entry)
                if one is None:
                    problems.append(Problem("action_unparsed", f"cannot read the action {str(entry)[:100]!r}: expected "
                                            "one {name: {params}} entry", field=field, severity="warning",
                                            hint="the step is scored as an UNKNOWN action", **loc))
                    action = Action("UNKNOWN", extra={"raw": entry})
                else:
                    action = map_action(*one)
            r = results[j] if j < len(results) and isinstance(results[j], dict) else None
            ok = error = None
            if r is not None:
                err = r.get("error")
                failed = bool(err.strip()) if isinstance(err, str) else err is not None
                ok, error = not failed, (str(err).strip() if failed else None)
                for k in ("extracted_content", "is_done", "success", "include_in_memory", "long_term_memory",
                          "judgement", "attachments"):
                    if r.get(k) not in (None, [], {}):
                        extra[k] = r[k]
                if r.get("metadata") not in (None, {}):
                    extra["result_metadata"] = r["metadata"]
                if r.get("is_done") is True and action.type == "DONE" and r.get("success") is False:
                    action = Action(action.type, action.x, action.y, action.keys, action.text, action.url,
                                    action.element, {**action.extra, "infeasible": True})
                if isinstance(r.get("judgement"), dict):
                    judgement = r["judgement"]
            if isinstance(interacted, list) and j < len(interacted) and interacted[j] is not None:
                extra["interacted_element"] = interacted[j]
                center = _bounds_center(interacted[j])
                if center is not None and action.x is None and action.type in POINT_ACTIONS:
                    action = Action(action.type, center[0], center[1], action.keys, action.text, action.url,
                                    action.element, {**action.extra, "point_from": "interacted_element.bounds"})
            elif action.element is not None:
                info = _element_info(state, action.element)
                if info:
                    extra["interacted_element"] = info  # 2024 shape: from the state's selector_map and items
            if j == 0 and meta:
                extra["metadata"] = meta
            if j == 0 and len(results) > n:
                extra["results_unmatched"] = results[n:]
            steps.append(Step(
                index=len(steps), action=action, reasoning=reasoning, frame_pre=shots[i],
                frame_post=(shots[i + 1] if i + 1 < len(history) else None) if last else None,
                executor_ok=ok, executor_error=error,
                page=Page(url_before=state.get("url") if isinstance(state.get("url"), str) else None,
                          url_after=nstate.get("url") if last and nstate and isinstance(nstate.get("url"), str)
                          else None,
                          title_before=state.get("title") if isinstance(state.get("title"), str) else None,
                          title_after=nstate.get("title") if last and nstate and isinstance(nstate.get("title"), str)
                          else None),
                extra=extra, source=source, line=line_of(i)))
            if i == len(history) - 1 and last:
                last_done = bool(r and r.get("is_done") is True) or action.type == "DONE"
                last_error = error
    raise_errors(problems, run_id)

    extra_run: dict[str, Any] = {}
    if last_done:
        status = "done"
    elif last_error:
        status = "error"
    else:
        status = "max_steps"
        extra_run["outcome_inferred"] = "no done action and no error at the end: assumed the step limit"
    judge = None
    if isinstance(judgement, dict) and isinstance(judgement.get("verdict"), bool):
        reasons = tuple(str(judgement[k]) for k in ("reasoning", "failure_reason") if judgement.get(k))
        judge = RecordedJudge(model="browser-use judge", verdict="pass" if judgement["verdict"] else "fail", reasons=reasons)
    for k in ("usage", "task", "task_id"):
        if data.get(k) is not None:
            extra_run[k] = data[k]
    others = {k: v for k, v in data.items() if k not in ("history", "usage", "task", "task_id")}
    if others:
        extra_run["other_fields"] = sorted(others)
    task = data.get("task")
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps),
              task_id=str(data["task_id"]) if data.get("task_id") is not None else None,
              goal=task if isinstance(task, str) else None, agent_name="browser-use", outcome_status=status,
              judge=judge, extra=extra_run, inline_frames=frames.inline)
    return run, [p for p in problems if p.severity != "error"]


READER = Reader(
    name=NAME,
    claims=lambda p: claims_plain_dir(p, *FILE_NAMES),
    read=read_browser_use,
    summary="browser-use AgentHistoryList.json (2024 and newer shapes); screenshots inline (base64) or by "
            "screenshot_path inside the run directory",
    mapping=(
        ("directory name", "run_id"),
        ("history[i].model_output.current_state / thinking, evaluation_previous_goal, memory, next_goal",
         "steps.reasoning"),
        ("history[i].model_output.action ({name: params} or a list of them)", "one step per action"),
        ("click_element / click_element_by_index / click {index}", "CLICK, element index (coordinate_x/y: x, y)"),
        ("input_text / input {index, text}", "TYPE, text, element"),
        ("go_to_url / navigate / open_tab {url}", "NAVIGATE, url"),
        ("search_google / search {query}", "NAVIGATE, url of the search, text query"),
        ("go_back", "NAVIGATE, extra.navigation = back"),
        ("scroll_down / scroll_up / scroll {down}", "SCROLL, extra.direction"),
        ("send_keys {keys}", "KEY_PRESS, keys"),
        ("done {text, success}", "DONE, text (success false: extra.infeasible)"),
        ("extract_content / extract {goal|query}", "EXTRACT, text"),
        ("other actions", "their name upper-cased, extra.args"),
        ("history[i].state.screenshot (base64)", "inline frame inline/step-<i>.png: frames.pre of item i, "
                                                "frames.post of item i-1"),
        ("history[i].state.screenshot_path", "the same, as a file inside the run directory"),
        ("history[i].state.url / title, history[i+1].state.url / title", "page.url_before / after (title)"),
        ("history[i].result[j].error", "executor.ok false, executor.error"),
        ("history[i].result[j].extracted_content, is_done, success, ...", "steps.extra"),
        ("history[i].state.interacted_element[j], metadata", "steps.extra"),
        ("history[i].state.interacted_element[j].bounds {x, y, width, height} (newer shape)",
         "action.x, action.y = the box centre (click, input, select)"),
        ("last result is_done", "outcome.status done (else error when the last result has one, else max_steps)"),
        ("result.judgement {verdict, reasoning}", "outcome.judge (pass/fail)"),
    ),
)
