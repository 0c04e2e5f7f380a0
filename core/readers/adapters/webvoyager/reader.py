"""WebVoyager runs: ``interact_messages.json`` + ``screenshot{K}.png`` (Set-of-Mark frames).

WebVoyager's ``run.py`` (github.com/MinorJerry/WebVoyager) loops over iterations
``it = 1, 2, ...``: it appends one user message per iteration, then the model's
reply. When the previous action ran, the user message is an observation and
``screenshot{it}.png`` is saved first; when it failed (or the reply had no
Thought/Action), the user message is the bare error text and *no* screenshot
is saved, so screenshot numbers skip that iteration. Old observations are
clipped in the saved log to ``"Observation: A screenshot and some texts.
(Omitted in context.)"``; images are never saved (literal ``{b64_img}``).

Step k (0-based) is iteration k+1: the (k+1)-th user message, its screenshot
(the frame the model saw) and the (k+1)-th assistant reply. Its post frame is
the next iteration's screenshot, when one was taken. There are no pixel
coordinates (actions name Set-of-Mark labels), no URLs per step and no reward.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...kit.claiming import by_names
from ...kit.reader import FormatDoc, Reader, Table
from ....base.errors import Problem
from ....base.problems import Slug
from ....base.jsonio import parse_json_text
from ....schemas.records import Action, Run, Step

from ...kit.reading import (Problems, array_item_lines, claims_plain_dir, load_json, read_json_file, read_text_file,
                            run_id_of, safe_join)
from .actions import ACTION_ROWS, GOOGLE_URL, parse_reply

__all__ = ["DOC", "GOOGLE_URL", "MESSAGES", "NAME", "READER", "parse_reply", "read_webvoyager"]

NAME = "webvoyager"
MESSAGES = "interact_messages.json"
METADATA_DIR = "_metadata"

#: WebVoyager's own texts (run.py) that a user message carries instead of an observation.
FAIL_OBS = "The action you have chosen cannot be exected"
FORMAT_ERROR = "Format ERROR"
PDF_OBS = "You downloaded a PDF file"

_TASK_RE = re.compile(r"Now given a task:\s*(?P<goal>.*?)\s*Please interact with\s+(?P<url>\S+?)\s+and get the answer",
                      re.S)


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(t for t in parts if isinstance(t, str))
    return None


def _has_image(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "image_url" for p in content)


# --- parse ------------------------------------------------------------------------------------------------

def _parse(run_dir: Path, problems: Problems) -> tuple[list[Any], list[int]]:
    """The chat messages and the line each starts on; raises when the log cannot be read or is no list."""
    got = load_json(run_dir / MESSAGES, run=problems.run, rel=MESSAGES, problems=problems)
    if got is not None and not isinstance(got[0], list):
        problems.error(Slug.SCHEMA, f"expected a JSON array of chat messages, got {type(got[0]).__name__}", line=1,
                       field="(record)", hint="interact_messages.json is WebVoyager's list of {role, content}")
    problems.raise_errors()
    assert got is not None
    return got[0], array_item_lines(got[1])


@dataclass
class _Iteration:
    """One iteration of run.py: its user message (an observation, or the error text of a failed action) and
    the model's reply."""

    iteration: int
    user: int | None  # index of the user message
    observation: bool
    user_text: str
    reply: int | None = None  # index of the assistant reply


LineOf = Callable[[int], int | None]  # a message's index -> the line it starts on


def _iterations(messages: list[Any], line_of: LineOf,
                problems: Problems) -> tuple[list[_Iteration], str | None, str | None]:
    """The iterations in order, and the goal and start URL of the first user message."""
    its: list[_Iteration] = []
    goal = start_url = None
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") not in ("system", "user", "assistant"):
            problems.error(Slug.SCHEMA, "a message must be an object with role system, user or assistant",
                           line=line_of(i), field=f"[{i}].role", hint="keep WebVoyager's {role, content} messages")
            continue
        if msg["role"] == "system":
            continue
        if msg["role"] == "user":
            content = msg.get("content")
            body = _text_of(content) or ""
            n = len(its) + 1
            its.append(_Iteration(n, i, n == 1 or _has_image(content) or "Observation:" in body, body))
            if n == 1 and (m := _TASK_RE.search(body)):
                goal, start_url = m.group("goal").strip(), m.group("url")
            continue
        if not its or its[-1].reply is not None:
            problems.warn(Slug.REPLY_WITHOUT_OBSERVATION, "an assistant reply follows no user message; it is read as "
                          "its own step", line=line_of(i), field=f"[{i}]",
                          hint="WebVoyager alternates user observations and assistant replies")
            its.append(_Iteration(len(its) + 1, None, False, ""))
        its[-1].reply = i
    return its, goal, start_url


def _action(messages: list[Any], i: int, line: int | None, problems: Problems) -> tuple[Action, str | None]:
    """Reply ``i``'s action (UNKNOWN with the raw text when it does not parse) and its thought."""
    reply = _text_of(messages[i].get("content"))
    thought = raw = action = None
    if reply is None:
        problems.warn(Slug.ACTION_UNPARSED, "the assistant reply has no text", line=line, field=f"[{i}].content",
                      hint="scored as an UNKNOWN action")
    else:
        thought, raw, action = parse_reply(reply)
        if action is None:
            shown = (raw if raw is not None else reply)[:120]
            problems.warn(Slug.ACTION_UNPARSED, f"cannot read the action {shown!r}: expected Click [N], Type [N]; "
                          "text, Scroll [N|WINDOW]; up|down, Wait, GoBack, Google or ANSWER; text", line=line,
                          field=f"[{i}].content", hint="the step is scored as an UNKNOWN action")
    if action is None:
        return Action("UNKNOWN", extra={"raw": raw if raw is not None else reply}), thought
    return Action(action.type, action.x, action.y, action.keys, action.text, action.url, action.element,
                  {**action.extra, "raw": raw}), thought


# --- align ------------------------------------------------------------------------------------------------

def _frame(it: _Iteration) -> str | None:
    """The screenshot an iteration saved: only an observation has one."""
    return f"screenshot{it.iteration}.png" if it.observation else None


def _executor(nxt: _Iteration | None, extra: dict[str, Any]) -> tuple[bool | None, str | None]:
    """Whether the action ran, from the next user message: an observation, or WebVoyager's failure text."""
    if nxt is None:
        return None, None
    body = nxt.user_text
    if not nxt.observation:
        if body.startswith(FORMAT_ERROR):
            extra["format_error"] = True
        return False, body.strip()
    note = re.match(r"Observation:\s*(.*?)\s*(?:please analyze|Please analyze)", body, re.S)
    if note and note.group(1):
        if note.group(1).startswith(PDF_OBS):
            extra["pdf_observation"] = note.group(1)
        else:
            extra["harness_note"] = note.group(1)  # e.g. typing into something not a textbox
    return True, None


def _align(run_dir: Path, messages: list[Any], its: list[_Iteration], line_of: LineOf,
           problems: Problems) -> list[Step]:
    """One step per reply: the pre frame is the screenshot the model saw, the post frame the next
    iteration's (none when that action failed and no screenshot was saved)."""
    steps: list[Step] = []
    last_seen: str | None = None
    for k, it in enumerate(its):
        if it.reply is None:
            continue  # a last observation with no reply: the post frame of the step before
        i = it.reply
        extra: dict[str, Any] = {"iteration": it.iteration}
        action, thought = _action(messages, i, line_of(i), problems)
        # the frame the model saw: this iteration's screenshot, or (after a failed action, when the
        # harness re-asks without a new screenshot) the last one it saw
        pre = _frame(it)
        if pre is None and last_seen is not None:
            pre = last_seen
            extra["frame_pre_reused"] = True
        if _frame(it):
            last_seen = _frame(it)
        nxt = its[k + 1] if k + 1 < len(its) else None
        ok, error = _executor(nxt, extra)
        no_box = f"screenshot{it.iteration}_no_box.png"
        if it.observation and (run_dir / no_box).is_file():
            extra["frame_pre_no_box"] = no_box  # the same frame without Set-of-Mark overlays
        steps.append(Step(index=len(steps), action=action, reasoning=thought if thought else None,
                          frame_pre=pre, frame_post=_frame(nxt) if nxt else None, executor_ok=ok,
                          executor_error=error, extra=extra, source=MESSAGES, line=line_of(i)))
    # A screenshot that is not on disk is reported once, where a step uses it (frames_missing), not here too.
    if not steps:
        problems.error(Slug.STEPS_EMPTY, "the chat log has no assistant reply, so the run has no steps",
                       hint="a run needs at least one Thought/Action reply")
    problems.raise_errors()
    return steps


# --- outcome ----------------------------------------------------------------------------------------------

def _status(steps: list[Step], messages: list[Any]) -> str:
    if steps[-1].action.type == "DONE":
        return "done"
    if messages and isinstance(messages[-1], dict) and messages[-1].get("role") == "user":
        return "error"  # an observation the model never answered: the API call failed
    return "max_steps"  # run.py stops at --max_iter (or a driver error it only logs)


def _load_metadata(run_dir: Path, task_id: str, run: str, problems: list[Problem]) -> dict[str, Any]:
    """The task line and reference answer for ``task_id`` from a ``_metadata/`` folder in the run or
    beside it (WebVoyager's data/WebVoyager_data.jsonl and data/reference_answer.json, subset)."""
    out: dict[str, Any] = {}
    for base in (run_dir, run_dir.parent):
        meta = base / METADATA_DIR
        if not meta.is_dir():
            continue
        files = [f for f in sorted(meta.iterdir()) if safe_join(base, f"{METADATA_DIR}/{f.name}") and f.is_file()]
        for f in (f for f in files if f.suffix == ".jsonl"):
            rel = f"{'' if base == run_dir else '../'}{METADATA_DIR}/{f.name}"
            text = read_text_file(f, run=run, rel=rel, problems=problems)
            for n, line in enumerate((text or "").splitlines(), start=1):
                if task_id not in line:
                    continue
                value, p = parse_json_text(line, run=run, file=rel, line=n)
                if p:
                    p.severity = "warning"
                    problems.append(p)
                elif isinstance(value, dict) and value.get("id") == task_id:
                    out["task"] = value
        for f in (f for f in files if f.suffix == ".json"):
            rel = f"{'' if base == run_dir else '../'}{METADATA_DIR}/{f.name}"
            before = len(problems)
            value = read_json_file(f, run=run, rel=rel, problems=problems)
            for p in problems[before:]:
                p.severity = "warning"  # metadata is optional: a broken file costs the reference, not the run
            if isinstance(value, dict) and isinstance(value.get(task_id), dict):
                out["reference"] = value[task_id]
        if out:
            out["source"] = METADATA_DIR if base == run_dir else f"../{METADATA_DIR}"
            return out
    return out


def _task(run_dir: Path, task_id: str, problems: Problems, goal: str | None,
          start_url: str | None) -> tuple[str | None, tuple[str, ...], dict[str, Any]]:
    """The goal, the reference answers and the run's extra, with what ``_metadata/`` says of the task."""
    extra_run: dict[str, Any] = {"start_url": start_url}
    meta = _load_metadata(run_dir, task_id, problems.run, problems)
    refs: tuple[str, ...] = ()
    if meta:
        extra_run["metadata_source"] = meta.get("source")
        task = meta.get("task") or {}
        if isinstance(task.get("ques"), str):
            goal = task["ques"]
        if isinstance(task.get("web"), str):
            extra_run["start_url"] = task["web"]
        if task.get("web_name"):
            extra_run["web_name"] = task["web_name"]
        ref = meta.get("reference")
        if isinstance(ref, dict):
            extra_run["reference"] = ref
            # "golden" answers are the answer; "possible" ones describe a moving target (live sites)
            if ref.get("type") == "golden" and isinstance(ref.get("ans"), str) and ref["ans"].strip():
                refs = (ref["ans"].strip(),)
    return goal, refs, {k: v for k, v in extra_run.items() if v is not None}


def read_webvoyager(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one WebVoyager task folder (see the module's docstring and :data:`DOC`)."""
    run_id = run_id_of(run_dir, display)
    problems = Problems(run_id, MESSAGES)
    messages, lines = _parse(run_dir, problems)

    def line_of(i: int) -> int | None:
        return lines[i] if i < len(lines) else None

    its, goal, start_url = _iterations(messages, line_of, problems)
    steps = _align(run_dir, messages, its, line_of, problems)
    task_id = run_id[4:] if run_id.startswith("task") else run_id
    goal, refs, extra_run = _task(run_dir, task_id, problems, goal, start_url)
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps), task_id=task_id,
              goal=goal, agent_name="WebVoyager", outcome_status=_status(steps, messages), reference_answers=refs,
              extra=extra_run)
    return run, problems.warnings()


DOC = FormatDoc(
    ends=("WebVoyager's `run.py` loop stops when the model's action is `ANSWER`, at `--max_iter`, or when its "
          'driver fails: nothing in it stops a run because the task is done, so a run without `ANSWER` was '
          'cut off.'),
    title="WebVoyager",
    claims=("Claims a directory holding `interact_messages.json` (WebVoyager's "
            "`results/<time>/task<Website>--<n>/`)."),
    example="trajcheck score results/20240301_12_00_00/ --out ledger --input-format webvoyager",
    about=(
        ("How `run.py` records a run: iteration `it = 1, 2, ...` appends a user message then the model's "
         "reply. If the previous action ran, the user message is an observation and `screenshot{it}.png` is "
         "saved first (Set-of-Mark boxes and labels drawn on it). If it failed, or the reply had no "
         "`Thought:`/`Action:`, the user message is the bare error text and **no screenshot is saved**, so "
         "screenshot numbers skip that iteration. The reader follows the same numbering."),
    ),
    tables=(
        Table(head=("WebVoyager", "trajcheck"), rows=(
            ("directory name `task<id>`", "`run_id`; `task_id = <id>`"),
            ("first user message `Now given a task: G  Please interact with URL and get the answer`",
             "`goal = G`, `extra.start_url = URL`"),
            (('`_metadata/*.jsonl` line with `"id": <id>` (`ques`, `web`, `web_name`), in the run or beside '
              "it"),
             "`goal`, `extra.start_url`, `extra.web_name`"),
            ("`_metadata/*.json` `{<id>: {type, ans}}`",
             "`reference_answer` when `type` is `golden`; always `extra.reference`"),
            *ACTION_ROWS,
            ("`screenshot{K}.png`", "`steps[K-1].frames.pre`, `steps[K-2].frames.post`"),
            ("iteration without a screenshot (failed action)",
             ("`frames.pre` = the last screenshot the model saw (`extra.frame_pre_reused`); the failed "
              "step's `frames.post` is null")),
            ("`screenshot{K}_no_box.png`", "`steps[K-1].extra.frame_pre_no_box` (not scored)"),
            ("next user message is WebVoyager's failure text",
             "`executor.ok = false`, `executor.error` (`extra.format_error` for a format error)"),
            ("next user message is an observation",
             ("`executor.ok = true`; `Observation:note: ...` in `extra.harness_note`, a PDF answer in "
              "`extra.pdf_observation`")),
            ("last assistant action is `ANSWER`", "`outcome.status = done`"),
            ("last message is an unanswered user observation (the model call failed)", "`outcome.status = error`"),
            ("otherwise", "`outcome.status = max_steps`"),
        )),
    ),
    lost=(
        ("Frames carry the Set-of-Mark overlay; labels are redrawn on every frame, so a pre/post difference "
         "includes label changes. The overlay-free `_no_box` frames exist for one run only and are listed, "
         "not scored."),
        ("No URLs, titles or DOM per step; no reward or evaluator verdict (the reference answers of "
         '`_metadata/` are the only ground truth; "possible" answers describe live pages and are not used '
         "as references)."),
        ('The element list sent with each observation (`[N]: <tag> "text"`) and old observations, which '
         "WebVoyager clips in the log, are not kept. WebVoyager's type-into-non-textbox note survives only "
         "in unclipped messages."),
        ('A click that failed with "element click intercepted" is silently retried by the harness; it looks '
         "like a success in the log."),
        "No agent model, token counts or timing (they are only in `agent.log`).",
        ("A run that stopped at `--max_iter` and one whose driver failed before the next screenshot look "
         "the same (`max_steps`)."),
        ("Text-only runs (`accessibility_tree{K}.txt`, no screenshots) are read, with a "
         "`frames_missing` warning per screenshot."),
    ),
    brief=("a task folder with `interact_messages.json` and `screenshot{K}.png`",
           "`Click [N]`, `Type [N]; text`, `Scroll`, `GoBack`, `Google`, `ANSWER; ...`; Set-of-Mark labels, no "
           "pixel coordinates: the global hash decides",
           "no URLs or DOM; labels redrawn on every frame; silent harness retries look like successes"),
)


READER = Reader(
    name=NAME,
    claims=lambda p: claims_plain_dir(p, MESSAGES),
    claim=by_names(MESSAGES),
    read=read_webvoyager,
    companions=(METADATA_DIR,),
    summary="WebVoyager: interact_messages.json chat log + screenshot{K}.png Set-of-Mark frames "
            "(element labels, no coordinates)",
    ends="answer",  # how the harness ends a run: DOC.ends says why
    doc=DOC,
)
