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

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...kit.claiming import by_names
from ...kit.reader import FormatDoc, Reader, Table
from ....base.errors import Problem
from ....base.problems import Slug
from ....schemas.records import Action, Page, RecordedJudge, Run, Step, Usage

from .actions import (ACTION_ROWS, POINT_ACTIONS, actions_of, bounds_center, element_info, map_action, one_action,
                      reasoning_of)
from .history import FILE_NAMES, HistoryFrames, head, parse, shot, source, streamed
from ...kit.reading import MAX_FRAME_BYTES, MAX_HISTORY_BYTES, Problems, claims_plain_dir, num, run_id_of, str_or_none
from ...kit.stream import StreamError, streams
from ...kit.usage import amount, count, elapsed

__all__ = ["DOC", "FILE_NAMES", "MAX_FRAME_BYTES", "MAX_HISTORY_BYTES", "NAME", "READER", "map_action",
           "read_browser_use", "reasoning_of"]

NAME = "browser-use"
#: What the steps of one history item keep from its results.
_RESULT_KEYS = ("extracted_content", "is_done", "success", "include_in_memory", "long_term_memory", "judgement",
                "attachments")


# --- align ------------------------------------------------------------------------------------------------

@dataclass
class _End:
    """What the outcome is read from: the last action's result, and a judge's verdict on the run."""

    done: bool = False
    error: str | None = None
    judgement: Any = None


def _entries(i: int, mo: Any, loc: dict[str, Any], problems: Problems) -> list[Any]:
    """An item's action entries; an item without any is one step that records what happened (None)."""
    entries, why = actions_of(mo)
    if entries:
        return entries
    if mo is None:
        problems.warn(Slug.ACTION_NULL, "model_output is null (the model gave no usable answer)",
                      field=f"history[{i}].model_output", hint="the step is scored as an UNKNOWN action", **loc)
    else:
        problems.warn(Slug.ACTION_UNPARSED, why or "no action", field=f"history[{i}].model_output.action",
                      hint="the step is scored as an UNKNOWN action", **loc)
    return [None]


def _action(entry: Any, mo: Any, field: str, loc: dict[str, Any], problems: Problems) -> Action:
    if entry is None:
        return Action("UNKNOWN", extra={"raw": None, "model_output": mo})
    one = one_action(entry)
    if one is None:
        problems.warn(Slug.ACTION_UNPARSED, f"cannot read the action {str(entry)[:100]!r}: expected one {{name: "
                      "{params}} entry", field=field, hint="the step is scored as an UNKNOWN action", **loc)
        return Action("UNKNOWN", extra={"raw": entry})
    return map_action(*one)


def _result(r: dict[str, Any] | None, action: Action, extra: dict[str, Any],
            end: _End) -> tuple[Action, bool | None, str | None]:
    """An action's result: whether it ran, its error, what it kept (into ``extra``); a done that did not
    succeed is marked infeasible (no success claim)."""
    if r is None:
        return action, None, None
    err = r.get("error")
    failed = bool(err.strip()) if isinstance(err, str) else err is not None
    for k in _RESULT_KEYS:
        if r.get(k) not in (None, [], {}):
            extra[k] = r[k]
    if r.get("metadata") not in (None, {}):
        extra["result_metadata"] = r["metadata"]
    if r.get("is_done") is True and action.type == "DONE" and r.get("success") is False:
        action = Action(action.type, action.x, action.y, action.keys, action.text, action.url, action.element,
                        {**action.extra, "infeasible": True})
    if isinstance(r.get("judgement"), dict):
        end.judgement = r["judgement"]
    return action, not failed, (str(err).strip() if failed else None)


def _interacted(state: dict[str, Any], j: int, action: Action, extra: dict[str, Any]) -> Action:
    """What the state says of the element action ``j`` acted on; its box centre is the action's point."""
    interacted = state.get("interacted_element")
    if isinstance(interacted, list) and j < len(interacted) and interacted[j] is not None:
        extra["interacted_element"] = interacted[j]
        center = bounds_center(interacted[j])
        if center is not None and action.x is None and action.type in POINT_ACTIONS:
            action = Action(action.type, center[0], center[1], action.keys, action.text, action.url,
                            action.element, {**action.extra, "point_from": "interacted_element.bounds"})
    elif action.element is not None:
        info = element_info(state, action.element)
        if info:
            extra["interacted_element"] = info  # 2024 shape: from the state's selector_map and items
    return action


@dataclass
class _Item:
    """One history item as the steps are built: its index, the item and its screenshot's frame name."""

    i: int
    item: dict[str, Any]
    shot: str | None


def _item_steps(cur: _Item, nxt: _Item | None, lines: list[int], first_index: int, end: _End,
                problems: Problems) -> list[Step]:
    """The steps of history item ``cur``, one per action: all share the item's pre frame, only the last one
    gets the next item's (``nxt``, None for the last item) screenshot as its post frame (nothing was captured
    between them)."""
    i, item = cur.i, cur.item
    mo = item.get("model_output")
    state: dict[str, Any] = given if isinstance(given := item.get("state"), dict) else {}
    nstate: dict[str, Any] | None = None
    if nxt is not None and isinstance(nxt.item.get("state"), dict):
        nstate = nxt.item["state"]
    results = item.get("result")
    results = [results] if isinstance(results, dict) else results if isinstance(results, list) else []
    reasoning = reasoning_of(mo) if isinstance(mo, dict) else None
    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else None
    loc = {"line": lines[i] if i < len(lines) else None}
    entries = _entries(i, mo, loc, problems)
    listed = isinstance(mo.get("action") if isinstance(mo, dict) else None, list)
    steps: list[Step] = []
    for j, entry in enumerate(entries):
        last = j == len(entries) - 1
        extra: dict[str, Any] = {"history_index": i}
        if len(entries) > 1:
            extra["action_index"] = j
        field = f"history[{i}].model_output.action" + (f"[{j}]" if listed else "")
        r = results[j] if j < len(results) and isinstance(results[j], dict) else None
        action, ok, error = _result(r, _action(entry, mo, field, loc, problems), extra, end)
        action = _interacted(state, j, action, extra)
        if j == 0 and meta:
            extra["metadata"] = meta
        if j == 0 and len(results) > len(entries):
            extra["results_unmatched"] = results[len(entries):]
        after = nstate if last and nstate else {}
        seconds = elapsed(num(meta.get("step_start_time")), num(meta.get("step_end_time"))) if meta and last else None
        steps.append(Step(
            index=first_index + len(steps), action=action, reasoning=reasoning, frame_pre=cur.shot,
            frame_post=(nxt.shot if nxt is not None else None) if last else None,
            executor_ok=ok, executor_error=error,
            page=Page(url_before=str_or_none(state.get("url")), url_after=str_or_none(after.get("url")),
                      title_before=str_or_none(state.get("title")), title_after=str_or_none(after.get("title"))),
            wall_seconds=seconds, extra=extra, source=problems.file, line=loc["line"]))
        if nxt is None and last:
            end.done = bool(r and r.get("is_done") is True) or action.type == "DONE"
            end.error = error
    return steps


# --- outcome ----------------------------------------------------------------------------------------------

def _outcome(end: _End, extra_run: dict[str, Any]) -> tuple[str, RecordedJudge | None]:
    """done when the last action is done, error when it failed, else (a guess, said in ``extra_run``) the
    step limit; a judge's verdict recorded in a result is the run's recorded judge."""
    if end.done:
        status = "done"
    elif end.error:
        status = "error"
    else:
        status = "max_steps"
        extra_run["outcome_inferred"] = "no done action and no error at the end: assumed the step limit"
    judge = None
    j = end.judgement
    if isinstance(j, dict) and isinstance(j.get("verdict"), bool):
        reasons = tuple(str(j[k]) for k in ("reasoning", "failure_reason") if j.get(k))
        judge = RecordedJudge(model="browser-use judge", verdict="pass" if j["verdict"] else "fail", reasons=reasons)
    return status, judge


def _steps(items: Iterable[_Item], lines: list[int], end: _End, problems: Problems) -> list[Step]:
    """The steps of the history's items, read in order with one item of look-ahead (an item's post frame and
    page are the next item's): at most two items are held at a time."""
    steps: list[Step] = []
    prev: _Item | None = None
    for cur in items:
        if prev is not None:
            steps += _item_steps(prev, cur, lines, len(steps), end, problems)
        prev = cur
    if prev is not None:
        steps += _item_steps(prev, None, lines, len(steps), end, problems)
    return steps


def _read_streamed(run_dir: Path, frames: HistoryFrames, end: _End, problems: Problems) -> tuple[dict[str, Any],
                                                                                          list[Step]] | None:
    """A large history read an item at a time: (its other top-level fields, its steps); None when the file does
    not hold a history array with items (read whole then: that read names what is wrong)."""
    meta: dict[str, Any] = {}
    path = run_dir / problems.file
    if not head(path).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return None  # a top-level array or another value: no history
    try:
        items = (_Item(i, item, shot(i, item, frames, problems)) for i, item in streamed(path, problems, meta))
        steps = _steps(items, [], end, problems)
    except StreamError as exc:
        parse(run_dir, problems)  # the JSON error, with its line and column, makes the run invalid
        problems.error(Slug.JSON_INVALID, f"the history stops being JSON: {str(exc).splitlines()[0]}",
                       hint="re-export the history")
        problems.raise_errors()
        raise
    if not steps and not any(p.severity == "error" for p in problems):
        return None  # no history array, or an empty one
    return meta, steps


def _usage(summary: Any) -> Usage | None:
    """The history's ``usage`` (browser-use's UsageSummary: ``total_prompt_tokens``, cached among them
    ``total_prompt_cached_tokens``, ``total_completion_tokens``, ``total_cost``, ``by_model``): the run's totals.
    browser-use writes a cost of 0 when it computes none (``calculate_cost`` off): beside tokens, that is null."""
    if not isinstance(summary, dict):
        return None

    inp, out = count(summary.get("total_prompt_tokens")), count(summary.get("total_completion_tokens"))
    cost = amount(summary.get("total_cost"))
    if cost == 0 and (inp or out):
        cost = None
    models = summary.get("by_model")
    model = next(iter(models)) if isinstance(models, dict) and len(models) == 1 else None
    u = Usage(inp, out, count(summary.get("total_prompt_cached_tokens")), None, cost,
              model if isinstance(model, str) else None)
    return None if u.empty else u


def read_browser_use(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one browser-use history (see the module's docstring and :data:`DOC`). Past STREAM_BYTES the
    history is read an item at a time (:mod:`~trajcheck.readers.kit.stream`): its inline screenshots are decoded
    as each item is read, and the JSON text is never held whole."""
    problems = Problems(run_id_of(run_dir, display))
    name = source(run_dir, problems)
    end = _End()
    frames = HistoryFrames(run_dir, problems, [])
    got = _read_streamed(run_dir, frames, end, problems) if streams(run_dir, name, MAX_HISTORY_BYTES) else None
    if got is None:  # read whole: a history under STREAM_BYTES, or one the stream found no items in
        data, history, lines = parse(run_dir, problems)
        frames = HistoryFrames(run_dir, problems, lines)
        shots = [shot(i, item, frames, problems) for i, item in enumerate(history)]  # their warnings first
        steps = _steps((_Item(i, item, shots[i]) for i, item in enumerate(history)), lines, end, problems)
    else:
        data, steps = got
    problems.raise_errors()
    extra_run: dict[str, Any] = {}
    status, judge = _outcome(end, extra_run)
    for k in ("usage", "task", "task_id"):
        if data.get(k) is not None:
            extra_run[k] = data[k]
    others = {k: v for k, v in data.items() if k not in ("history", "usage", "task", "task_id")}
    if others:
        extra_run["other_fields"] = sorted(others)
    task = data.get("task")
    run = Run(run_id=problems.run, path=display, source_format=NAME, steps=tuple(steps),
              task_id=str(data["task_id"]) if data.get("task_id") is not None else None,
              goal=task if isinstance(task, str) else None, agent_name="browser-use", outcome_status=status,
              judge=judge, usage=_usage(data.get("usage")), extra=extra_run, inline_frames=frames.inline)
    return run, problems.warnings()


DOC = FormatDoc(
    ends=("browser-use's `Agent.run` stops on the `done` action or at `max_steps`, but also when "
          '`state.stopped` is set: a person (Ctrl+C, `Agent.stop()`) or a callback may stop a run, whatever '
          'it had reached.'),
    title="browser-use",
    claims=("Claims a directory holding `AgentHistoryList.json`, `AgentHistory.json` or "
            "`agent_history.json` (what `agent.save_history()` / `history.save_to_file()` write)."),
    example="trajcheck score histories/ --out ledger --input-format browser-use",
    about=(
        ("Two shapes are read: 2024 (`model_output.current_state` with the misspelt "
         "`valuation_previous_goal`, one action dict, one `result` dict, base64 `state.screenshot`) and "
         "newer (`model_output` `{thinking, evaluation_previous_goal, memory, next_goal, action: [...]}`, "
         "`result: [...]` parallel to the actions, `state.screenshot_path`, `metadata`). `state` is "
         "captured before the model acts."),
    ),
    tables=(
        Table(head=("browser-use", "trajcheck"), rows=(
            ("directory name", "`run_id`"),
            ("`task`, `task_id` at the top level (when present)", "`goal`, `task_id`"),
            ("`history[i].model_output` brain fields",
             "`steps.reasoning` (`Thinking: / Eval: / Memory: / Next goal:` lines)"),
            ("`history[i].model_output.action` (one `{name: params}` or a list)", "one step per action, in order"),
            *ACTION_ROWS,
            ("`history[i].state.screenshot` (base64)",
             ('`Run.inline_frames["inline/step-<i>.png"]`: `frames.pre` of item i\'s actions, `frames.post` '
              "of item i-1's last action")),
            ("`history[i].state.screenshot_path`",
             ("the same, as a file: it must resolve inside the run directory; an absolute path is looked up "
              "by its last parts inside the run (warning `screenshot_relocated`), else warning "
              "`path_escapes_run` and no frame")),
            ("`history[i].state.url`, `title` / `history[i+1].state.url`, `title`",
             "`page.url_before`, `title_before` / `url_after`, `title_after` (last action of the item)"),
            ("`history[i].result[j].error`", "`executor.ok = false`, `executor.error` (else `ok = true`)"),
            (("`result[j]` `extracted_content`, `is_done`, `success`, `include_in_memory`, "
              "`long_term_memory`, `judgement`, `attachments`"),
             "`steps.extra` (`extracted_content` also counts for reference answers)"),
            ("`state.interacted_element[j]`; 2024: `selector_map[index]`, `items[index].text`",
             "`steps.extra.interacted_element`"),
            ("`state.interacted_element[j].bounds` {x, y, width, height} (newer shape)",
             "`action.x`, `action.y` = the box centre (click, input, select; `extra.point_from`)"),
            ("`history[i].metadata`", "`steps.extra.metadata` (first action of the item)"),
            ("`history[i].metadata` `step_start_time`, `step_end_time`",
             "`wall_seconds` of the item's last action (the one with the post frame)"),
            (("`usage` (browser-use's UsageSummary: `total_prompt_tokens`, `total_prompt_cached_tokens`, "
              "`total_completion_tokens`, `total_cost`, `by_model`)"),
             ("the run's `tokens_input`, `tokens_cached`, `tokens_output`, `cost_usd` (a 0 cost beside tokens "
              "is browser-use's \"not computed\": null) and, with one model in `by_model`, its model; the steps "
              "have none")),
            ("last result `is_done`", "`outcome.status = done`"),
            ("last result has an error", "`outcome.status = error`"),
            ("otherwise", "`outcome.status = max_steps`, `extra.outcome_inferred`"),
            ("`result.judgement {verdict, reasoning, failure_reason}`",
             "`outcome.judge` (`pass`/`fail`, model `browser-use judge`)"),
        )),
    ),
    notes=(
        ("**Large histories.** Past 32 MiB a history is read an item at a time (ijson over `history.item`, one "
         "item ahead for the post frame): each inline screenshot is decoded as its item is read and the JSON text "
         "is never held whole. Its problems then name the item's field (`history[i]...`) without a line; a file "
         "that breaks off is read whole again to name the line."),
    ),
    lost=(
        ("An item with several actions has one screenshot before and one after all of them: every action "
         "gets the item's pre frame, only the last one the post frame (the others are not checked, "
         "`frames_missing`)."),
        "The final item has no post frame (nothing is captured after `done`).",
        ("The indexed DOM element lists (`items`, `selector_map`) and `tabs` are not kept, except the xpath "
         "and text of the element an action names."),
        "The 2024 shape records no task, so `goal` and `task_id` are null.",
        ("Why a run without `done` stopped (step limit, failures, interruption) is not recorded; "
         "`max_steps` is a guess when the last step has no error."),
        ("`metadata.input_tokens` is browser-use's estimate of the prompt, not the model's usage: it is not "
         "read; only the history's `usage` gives tokens, for the whole run."),
    ),
    brief=("an `AgentHistoryList` JSON (2024 and newer shapes), frames inline as base64 or by path",
           "`{name: params}` actions, several per item; element indexes, and in the newer shape the interacted "
           "element's box (its centre is the action point)",
           "one pre/post pair per item; no frame after `done`; DOM element lists dropped"),
)


READER = Reader(
    name=NAME,
    claims=lambda p: claims_plain_dir(p, *FILE_NAMES),
    claim=by_names(*FILE_NAMES),
    read=read_browser_use,
    summary="browser-use AgentHistoryList.json (2024 and newer shapes); screenshots inline (base64) or by "
            "screenshot_path inside the run directory",
    ends="external",  # how the harness ends a run: DOC.ends says why
    doc=DOC,
)
