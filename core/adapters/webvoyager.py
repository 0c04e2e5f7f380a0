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

import json
import re
from pathlib import Path
from typing import Any

from trajcheck.discovery import Reader
from trajcheck.errors import Problem, RunFormatError
from trajcheck.inputs import exists_not_dir
from trajcheck.jsonio import parse_json_text
from trajcheck.rundir import MAX_JSON_BYTES, MAX_PROBLEMS, read_text_file, safe_join
from trajcheck.schemas.records import Action, Run, Step

NAME = "webvoyager"
MESSAGES = "interact_messages.json"
METADATA_DIR = "_metadata"
GOOGLE_URL = "https://www.google.com/"

#: WebVoyager's own texts (run.py) that a user message carries instead of an observation.
FAIL_OBS = "The action you have chosen cannot be exected"
FORMAT_ERROR = "Format ERROR"
PDF_OBS = "You downloaded a PDF file"

# --- helpers shared by the adapters ------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")


def read_json_file(path: Path, *, run: str, rel: str, problems: list[Problem],
                   limit: int = MAX_JSON_BYTES) -> Any:
    """Read ``path`` as strict JSON; on failure append a located problem and return None."""
    text = read_text_file(path, run=run, rel=rel, problems=problems, limit=limit)
    if text is None:
        return None
    value, p = parse_json_text(text, run=run, file=rel)
    if p:
        problems.append(p)
        return None
    return value


def array_item_lines(text: str, key: str | None = None) -> list[int]:
    """1-based line where each element of a JSON array starts: the top-level array, or the
    array under top-level ``key``. Best effort (``[]`` when the text has another shape);
    call it on text that already parsed."""
    if text.startswith("\ufeff"):
        text = text[1:]
    dec = json.JSONDecoder()
    try:
        i = _WS.match(text, 0).end()  # type: ignore[union-attr]
        if key is not None:
            if text[i] != "{":
                return []
            i += 1
            while True:
                i = _WS.match(text, i).end()  # type: ignore[union-attr]
                if text[i] == "}":
                    return []
                k, i = dec.raw_decode(text, i)
                i = _WS.match(text, i).end()  # type: ignore[union-attr]
                if text[i] != ":":
                    return []
                i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
                if k == key:
                    break
                _, i = dec.raw_decode(text, i)
                i = _WS.match(text, i).end()  # type: ignore[union-attr]
                if text[i] == ",":
                    i += 1
        if text[i] != "[":
            return []
        i += 1
        lines: list[int] = []
        line, pos = 1, 0
        while True:
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
            if text[i] == "]":
                return lines
            line += text.count("\n", pos, i)
            pos = i
            lines.append(line)
            _, i = dec.raw_decode(text, i)
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
            if text[i] == ",":
                i += 1
    except (ValueError, IndexError, AttributeError):
        return []


def raise_errors(problems: list[Problem], run: str) -> None:
    errors = [p for p in problems if p.severity == "error"]
    if not errors:
        return
    if len(errors) > MAX_PROBLEMS:
        more = len(errors) - MAX_PROBLEMS
        errors = errors[:MAX_PROBLEMS] + [Problem("more_problems", f"{more} more errors not shown", run=run)]
    raise RunFormatError(errors)


def claims_plain_dir(path: Path, *names: str) -> bool:
    """Any of ``names`` is a file in ``path`` (a FIFO or a device too: the reader reports it as
    not_a_regular_file and never opens it), and ``path`` is not a native run."""
    if (path / "run.json").exists():
        return False
    return any(exists_not_dir(path / n) for n in names)


# --- WebVoyager ----------------------------------------------------------------------------------

_TASK_RE = re.compile(r"Now given a task:\s*(?P<goal>.*?)\s*Please interact with\s+(?P<url>\S+?)\s+and get the answer",
                      re.S)
# The grammar of WebVoyager's system prompt (and of extract_information in its utils.py).
_CLICK = re.compile(r"^Click\s*\[?\s*(\d+)\s*\]?\s*$", re.I)
_TYPE = re.compile(r"^Type\s*\[?\s*(\d+)\s*\]?\s*[;:]?\s*(.*)$", re.I | re.S)
_SCROLL = re.compile(r"^Scroll\s*\[?\s*(\d+|WINDOW)\s*\]?\s*[;:]?\s*\[?\s*(up|down)\s*\]?\s*$", re.I)
_ANSWER = re.compile(r"^ANSWER\s*[;:]?\s*(.*)$", re.S)
_THOUGHT = re.compile(r"Thought:\s*(.*?)\s*(?=Action:|$)", re.S)


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(t for t in parts if isinstance(t, str))
    return None


def _has_image(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "image_url" for p in content)


def _strip_brackets(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == "[" and s[-1] == "]" and "[" not in s[1:-1]:
        s = s[1:-1].strip()
    return s


def parse_reply(reply: str) -> tuple[str | None, str | None, Action | None]:
    """(thought, raw action text, action) of one assistant reply; action None when it does not parse."""
    thought_m = _THOUGHT.search(reply)
    thought = thought_m.group(1).strip() if thought_m else None
    if "Action:" not in reply:
        return thought, None, None
    raw = reply.split("Action:", 1)[1]
    raw = re.split(r"Observation:|Thought:", raw, maxsplit=1)[0].strip()
    first = raw.splitlines()[0].strip() if raw else ""
    if m := _CLICK.match(first):
        n = int(m.group(1))
        return thought, raw, Action("CLICK", element=str(n), extra={"element": n})
    if m := _TYPE.match(raw):
        n = int(m.group(1))
        text = _strip_brackets(m.group(2))
        return thought, raw, Action("TYPE", text=text, element=str(n), extra={"element": n, "then_enter": True})
    if m := _SCROLL.match(first):
        target = m.group(1).upper()
        extra: dict[str, Any] = {"direction": m.group(2).lower(), "target": target}
        element = None
        if target != "WINDOW":
            extra["element"] = int(target)
            element = target
        return thought, raw, Action("SCROLL", element=element, extra=extra)
    if re.fullmatch(r"Wait\.?", first, re.I):
        return thought, raw, Action("WAIT")
    if re.fullmatch(r"Go\s*Back\.?", first, re.I):
        return thought, raw, Action("NAVIGATE", extra={"navigation": "back"})
    if re.fullmatch(r"Google\.?", first, re.I):
        return thought, raw, Action("NAVIGATE", url=GOOGLE_URL, extra={"navigation": "google"})
    if m := _ANSWER.match(raw):
        return thought, raw, Action("DONE", text=_strip_brackets(m.group(1)))
    return thought, raw, None


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


def read_webvoyager(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    run_id = run_dir.resolve().name or display
    problems: list[Problem] = []
    path = run_dir / MESSAGES
    text = read_text_file(path, run=run_id, rel=MESSAGES, problems=problems)
    messages = None
    if text is not None:
        messages, p = parse_json_text(text, run=run_id, file=MESSAGES)
        if p:
            problems.append(p)
        elif not isinstance(messages, list):
            problems.append(Problem("schema", f"expected a JSON array of chat messages, got {type(messages).__name__}",
                                    run=run_id, file=MESSAGES, line=1, field="(record)",
                                    hint="interact_messages.json is WebVoyager's list of {role, content}"))
            messages = None
    raise_errors(problems, run_id)
    assert messages is not None and text is not None
    lines = array_item_lines(text)

    def line_of(i: int) -> int | None:
        return lines[i] if i < len(lines) else None

    steps_raw: list[dict[str, Any]] = []  # one per iteration
    goal = start_url = None
    it = 0
    for i, msg in enumerate(messages):
        loc = {"run": run_id, "file": MESSAGES, "line": line_of(i)}
        if not isinstance(msg, dict) or msg.get("role") not in ("system", "user", "assistant"):
            problems.append(Problem("schema", "a message must be an object with role system, user or assistant",
                                    field=f"[{i}].role", hint="keep WebVoyager's {role, content} messages", **loc))
            continue
        role = msg["role"]
        content = msg.get("content")
        if role == "system":
            continue
        if role == "user":
            it += 1
            body = _text_of(content) or ""
            observation = it == 1 or _has_image(content) or "Observation:" in body
            rec: dict[str, Any] = {"iteration": it, "user": i, "observation": observation, "reply": None,
                                   "user_text": body}
            if it == 1 and (m := _TASK_RE.search(body)):
                goal, start_url = m.group("goal").strip(), m.group("url")
            steps_raw.append(rec)
            continue
        # assistant
        if not steps_raw or steps_raw[-1]["reply"] is not None:
            problems.append(Problem("reply_without_observation",
                                    "an assistant reply follows no user message; it is read as its own step",
                                    field=f"[{i}]", severity="warning",
                                    hint="WebVoyager alternates user observations and assistant replies", **loc))
            it += 1
            steps_raw.append({"iteration": it, "user": None, "observation": False, "reply": None, "user_text": ""})
        steps_raw[-1]["reply"] = i

    screenshot_names = {it_: f"screenshot{it_}.png" for it_ in range(1, it + 1)}

    def frame(rec: dict[str, Any]) -> str | None:
        if not rec["observation"]:
            return None
        return screenshot_names[rec["iteration"]]

    steps: list[Step] = []
    last_seen: str | None = None
    for k, rec in enumerate(steps_raw):
        if rec["reply"] is None:
            continue  # a last observation with no reply: the post frame of the step before
        i = rec["reply"]
        loc = {"run": run_id, "file": MESSAGES, "line": line_of(i)}
        content = messages[i].get("content")
        reply = _text_of(content)
        extra: dict[str, Any] = {"iteration": rec["iteration"]}
        thought = raw = None
        action = None
        if reply is None:
            problems.append(Problem("action_unparsed", "the assistant reply has no text", field=f"[{i}].content",
                                    severity="warning", hint="scored as an UNKNOWN action", **loc))
        else:
            thought, raw, action = parse_reply(reply)
            if action is None:
                shown = (raw if raw is not None else reply)[:120]
                problems.append(Problem(
                    "action_unparsed", f"cannot read the action {shown!r}: expected Click [N], Type [N]; text, "
                    "Scroll [N|WINDOW]; up|down, Wait, GoBack, Google or ANSWER; text",
                    field=f"[{i}].content", severity="warning", hint="the step is scored as an UNKNOWN action", **loc))
        if action is None:
            action = Action("UNKNOWN", extra={"raw": raw if raw is not None else reply})
        else:
            action = Action(action.type, action.x, action.y, action.keys, action.text, action.url, action.element,
                            {**action.extra, "raw": raw})

        # the frame the model saw: this iteration's screenshot, or (after a failed action, when the
        # harness re-asks without a new screenshot) the last one it saw
        pre = frame(rec)
        if pre is None and last_seen is not None:
            pre = last_seen
            extra["frame_pre_reused"] = True
        if frame(rec):
            last_seen = frame(rec)
        nxt = steps_raw[k + 1] if k + 1 < len(steps_raw) else None
        post = frame(nxt) if nxt else None

        ok: bool | None = None
        error = None
        if nxt is not None:
            body = nxt["user_text"]
            if not nxt["observation"]:
                ok = False
                error = body.strip()
                if body.startswith(FORMAT_ERROR):
                    extra["format_error"] = True
            else:
                ok = True
                note = re.match(r"Observation:\s*(.*?)\s*(?:please analyze|Please analyze)", body, re.S)
                if note and note.group(1):
                    if note.group(1).startswith(PDF_OBS):
                        extra["pdf_observation"] = note.group(1)
                    else:
                        extra["harness_note"] = note.group(1)  # e.g. typing into something not a textbox
        no_box = f"screenshot{rec['iteration']}_no_box.png"
        if rec["observation"] and (run_dir / no_box).is_file():
            extra["frame_pre_no_box"] = no_box  # the same frame without Set-of-Mark overlays
        steps.append(Step(index=len(steps), action=action, reasoning=thought if thought else None,
                          frame_pre=pre, frame_post=post, executor_ok=ok, executor_error=error,
                          extra=extra, source=MESSAGES, line=line_of(i)))

    # screenshots the log promises must be on disk
    for rec in steps_raw:
        name = frame(rec)
        if name and not (run_dir / name).is_file():
            problems.append(Problem("screenshot_missing", f"{name} is missing (the observation of iteration "
                                    f"{rec['iteration']})", run=run_id, file=MESSAGES,
                                    line=line_of(rec["user"]) if rec["user"] is not None else None,
                                    field=f"[{rec['user']}].content" if rec["user"] is not None else "",
                                    severity="warning", hint="copy the run's screenshots with it; the steps that "
                                    "use it are not checked (frames_missing)"))
    if not steps:
        problems.append(Problem("steps_empty", "the chat log has no assistant reply, so the run has no steps",
                                run=run_id, file=MESSAGES, hint="a run needs at least one Thought/Action reply"))
    raise_errors(problems, run_id)

    last = steps[-1]
    if last.action.type == "DONE":
        status = "done"
    elif messages and isinstance(messages[-1], dict) and messages[-1].get("role") == "user":
        status = "error"  # an observation the model never answered: the API call failed
    else:
        status = "max_steps"  # run.py stops at --max_iter (or a driver error it only logs)

    task_id = run_id[4:] if run_id.startswith("task") else run_id
    extra_run: dict[str, Any] = {"start_url": start_url}
    meta = _load_metadata(run_dir, task_id, run_id, problems)
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
    extra_run = {k: v for k, v in extra_run.items() if v is not None}
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps), task_id=task_id,
              goal=goal, agent_name="WebVoyager", outcome_status=status, reference_answers=refs,
              extra=extra_run)
    return run, [p for p in problems if p.severity != "error"]


READER = Reader(
    name=NAME,
    claims=lambda p: claims_plain_dir(p, MESSAGES),
    read=read_webvoyager,
    summary="WebVoyager: interact_messages.json chat log + screenshot{K}.png Set-of-Mark frames "
            "(element labels, no coordinates)",
    mapping=(
        ("directory name task<id>", "run_id; task_id = <id>"),
        ("first user message 'Now given a task: ... Please interact with URL'", "goal; extra.start_url"),
        ("_metadata/*.jsonl {id, ques, web}", "goal, extra.start_url (when present)"),
        ("_metadata/*.json {<id>: {type, ans}}", "reference_answer (type golden); extra.reference"),
        ("K-th assistant reply 'Thought: ...'", "steps[K-1].reasoning"),
        ("Action: Click [N]", "action CLICK, element N, extra.element"),
        ("Action: Type [N]; text", "action TYPE, text, element N (WebVoyager then presses Enter)"),
        ("Action: Scroll [N|WINDOW]; up|down", "action SCROLL, extra.direction, extra.target"),
        ("Action: Wait", "action WAIT"),
        ("Action: GoBack", "action NAVIGATE, extra.navigation = back"),
        ("Action: Google", "action NAVIGATE, url https://www.google.com/"),
        ("Action: ANSWER; text", "action DONE, text; outcome.status done"),
        ("unreadable action", "action UNKNOWN, extra.raw (warning action_unparsed)"),
        ("screenshot{K}.png", "steps[K-1].frames.pre; steps[K-2].frames.post"),
        ("next user message = error text (no screenshot)", "executor.ok false, executor.error"),
        ("next user message 'Observation:note: ...'", "executor.ok true, extra.harness_note"),
        ("last message a user observation", "outcome.status error"),
        ("no ANSWER at the end", "outcome.status max_steps"),
    ),
)
