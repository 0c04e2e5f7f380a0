"""Playwright traces (``context.tracing.stop(path="trace.zip")``).

A run is a directory holding ``trace.zip``. Inside, ``trace.trace`` is NDJSON:

* ``context-options`` (the viewport is the screen size);
* per API call ``before`` {callId, startTime, class + method (``apiName`` in older
  traces), params}, ``input`` {callId, point?, box?}, ``after`` {callId, endTime,
  error?}; ``log`` lines of the call (``locator resolved to <button ...>Save</button>``);
* ``screencast-frame`` {pageId, file (``sha1`` in ``resources/`` in older traces),
  width, height, timestamp}: the page's frames, sent whenever it repaints;
* ``frame-snapshot`` {callId, phase before|after, frameUrl}: the URL at each call.

Only user actions become steps (click, dblclick, fill, type, press, check, goto,
mouse and keyboard calls, ...); bookkeeping calls (newPage, route, evaluate,
waits for load states) are skipped. Frames: the pre frame of an action is the last
screencast frame painted before it started; its post frame is the last one painted
before the next action started (or the last of the trace). Screencast frames arrive
8-15 ms after the page paints (measured on Chromium traces), so when the next call
starts less than SETTLE_MS (30 ms) after this one ended, as in scripted tests, the
post frame is the last one painted within SETTLE_MS of the end (but not after the
next call ended), and the next action's pre frame is that same frame. The screencast sends a frame only when the page repaints, so "no newer
frame" means "nothing repainted": pre and post are then the same file.

The zip is read in memory, never extracted, with limits on the member count, on
each member's size and on the total; member names with ``..`` or an absolute path
are refused. Frames stay in memory (``inline_frames``).
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from trajcheck.discovery import Reader
from trajcheck.errors import Problem, RunFormatError
from trajcheck.schemas.records import Action, Client, Page, Run, Step

from .webvoyager import claims_plain_dir

NAME = "playwright-trace"
TRACE_ZIP = "trace.zip"
#: Zip limits: members, bytes of one member, bytes in all.
MAX_MEMBERS = 20_000
MAX_MEMBER_BYTES = 256 * 1024 * 1024
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024

#: When the next call starts sooner than this (ms) after a call ends, the call's post frame is the last one
#: painted within this long of its end (screencast frames arrive a few ms after the page paints).
SETTLE_MS = 30.0

#: API methods that are user actions, and the trajcheck action type they map to.
ACTIONS = {
    "click": "CLICK", "tap": "CLICK", "check": "CLICK", "uncheck": "CLICK", "setChecked": "CLICK",
    "mouseClick": "CLICK", "dblclick": "DOUBLE_CLICK", "fill": "TYPE", "type": "TYPE", "keyboardType": "TYPE",
    "keyboardInsertText": "TYPE", "press": "KEY_PRESS", "keyboardPress": "KEY_PRESS", "goto": "NAVIGATE",
    "goBack": "NAVIGATE", "goForward": "NAVIGATE", "reload": "NAVIGATE", "mouseWheel": "SCROLL",
    "waitForTimeout": "WAIT", "selectOption": "SELECT_OPTION", "hover": "HOVER", "dragAndDrop": "DRAG",
    "setInputFiles": "UPLOAD",
}
_RESOLVED = re.compile(r"locator resolved to (.*)$")
_TAGS = re.compile(r"<[^>]*>")


def _key_name(key: str) -> str:
    """Playwright key chords ('Control+Enter') in trajcheck's spelling ('ctrl+Enter')."""
    names = {"Control": "ctrl", "Shift": "shift", "Alt": "alt", "Meta": "meta", "ControlOrMeta": "ctrl"}
    return "+".join(names.get(k, k) for k in key.split("+"))


def _safe_member(name: str) -> bool:
    p = PurePosixPath(name)
    return not p.is_absolute() and ".." not in p.parts and "\\" not in name


def _open_zip(path: Path, run: str) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    def bad(slug: str, msg: str, hint: str) -> RunFormatError:
        return RunFormatError([Problem(slug, msg, run=run, file=TRACE_ZIP, hint=hint)])

    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise bad("trace_unreadable", f"not a readable zip ({exc})", "re-export the trace") from None
    infos = z.infolist()
    if len(infos) > MAX_MEMBERS:
        z.close()
        raise bad("trace_too_large", f"{len(infos)} members (limit {MAX_MEMBERS})", "split the trace")
    total = 0
    members: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        if not _safe_member(info.filename):
            z.close()
            raise bad("path_escapes_run", f"member {info.filename!r} points outside the archive",
                      "re-export the trace with Playwright")
        if info.file_size > MAX_MEMBER_BYTES:
            z.close()
            raise bad("trace_too_large", f"member {info.filename!r} unpacks to {info.file_size} bytes "
                      f"(limit {MAX_MEMBER_BYTES})", "split the trace")
        total += info.file_size
        members[info.filename] = info
    if total > MAX_TOTAL_BYTES:
        z.close()
        raise bad("trace_too_large", f"the archive unpacks to {total} bytes (limit {MAX_TOTAL_BYTES})",
                  "split the trace")
    return z, members


def _element_text(logs: list[str]) -> str | None:
    for msg in logs:
        m = _RESOLVED.search(msg)
        if m:
            text = " ".join(_TAGS.sub(" ", m.group(1)).split())
            return f"{m.group(1).split('>')[0]}> {text}".strip() if text else m.group(1)
    return None


def read_trace(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    run_id = run_dir.resolve().name or display
    problems: list[Problem] = []
    z, members = _open_zip(run_dir / TRACE_ZIP, display)
    with z:
        names = [n for n in members if PurePosixPath(n).name.endswith(".trace") and "/" not in n]
        if not names:
            raise RunFormatError([Problem("trace_unreadable", "no *.trace event file in the archive", run=display,
                                          file=TRACE_ZIP, hint="export the trace with context.tracing.stop(path=...)")])
        events: list[tuple[int, str, dict[str, Any]]] = []
        for name in sorted(names):
            text = z.read(members[name]).decode("utf-8", errors="replace")
            for lineno, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    ev = json.loads(line)
                except ValueError as exc:
                    problems.append(Problem("trace_line_unreadable", f"not JSON ({exc.msg})", run=display,
                                            file=f"{TRACE_ZIP}:{name}", line=lineno, severity="warning",
                                            hint="the trace may be truncated; the other events are read"))
                    continue
                if isinstance(ev, dict):
                    events.append((lineno, name, ev))

        viewport: dict[str, Any] = {}
        calls: dict[str, dict[str, Any]] = {}
        order: list[str] = []
        frames: list[tuple[float, str]] = []  # (timestamp, member)
        for lineno, name, ev in events:
            kind = ev.get("type")
            if kind == "context-options":
                viewport = ((ev.get("options") or {}).get("viewport")) or {}
            elif kind in ("before", "action"):
                cid = str(ev.get("callId"))
                method = ev.get("method") or str(ev.get("apiName") or "").split(".")[-1]
                calls[cid] = {"method": method, "class": ev.get("class"), "params": ev.get("params") or {},
                              "start": ev.get("startTime"), "end": ev.get("endTime"), "point": ev.get("point"),
                              "error": ev.get("error"), "logs": [], "line": lineno, "source": name, "urls": {}}
                order.append(cid)
            elif kind == "input" and str(ev.get("callId")) in calls:
                if ev.get("point"):
                    calls[str(ev["callId"])]["point"] = ev["point"]
            elif kind == "after" and str(ev.get("callId")) in calls:
                c = calls[str(ev["callId"])]
                c["end"] = ev.get("endTime")
                c["error"] = ev.get("error")
            elif kind == "log" and str(ev.get("callId")) in calls:
                calls[str(ev["callId"])]["logs"].append(str(ev.get("message", "")))
            elif kind == "screencast-frame":
                member = ev.get("file") or (f"resources/{ev['sha1']}" if ev.get("sha1") else None)
                if member and isinstance(ev.get("timestamp"), (int, float)):
                    frames.append((float(ev["timestamp"]), member))
            elif kind == "frame-snapshot":
                snap = ev.get("snapshot") or {}
                cid = str(snap.get("callId"))
                if cid in calls and snap.get("isMainFrame", True) and snap.get("phase") in ("before", "after"):
                    calls[cid]["urls"].setdefault(snap["phase"], snap.get("frameUrl"))
        frames.sort()

        steps_calls = [calls[c] for c in order if calls[c]["method"] in ACTIONS]
        inline: dict[str, bytes] = {}

        def frame_at(t: float | None) -> str | None:
            """The last frame painted at or before ``t``."""
            if t is None:
                return frames[-1][1] if frames else None
            best = None
            for ts, member in frames:
                if ts <= t:
                    best = member
                else:
                    break
            return best

        def load(member: str | None, field: str, c: dict[str, Any]) -> str | None:
            if member is None:
                return None
            if member not in inline:
                info = members.get(member)
                if info is None:
                    problems.append(Problem("screenshot_missing", f"screencast frame {member!r} is not in the "
                                            "archive", run=display, file=f"{TRACE_ZIP}:{c['source']}",
                                            line=c["line"], field=field, severity="warning",
                                            hint="the step is scored without it"))
                    return None
                inline[member] = z.read(info)
            return member

        steps: list[Step] = []
        last_post_t: float | None = None
        for i, c in enumerate(steps_calls):
            typ = ACTIONS[c["method"]]
            p = c["params"]
            point = c.get("point") or {}
            x, y = point.get("x"), point.get("y")
            if c["method"] == "mouseClick":
                x, y = p.get("x", x), p.get("y", y)
            extra: dict[str, Any] = {"api": f"{c['class'] or ''}.{c['method']}".lstrip("."), "params": {
                k: v for k, v in p.items() if k not in ("timeout", "strict")}}
            element = p.get("selector")
            text = p.get("value") if c["method"] == "fill" else p.get("text")
            action = Action(type=typ, x=x, y=y, keys=_key_name(p["key"]) if isinstance(p.get("key"), str) else None,
                            text=text, url=p.get("url"), element=element, extra=extra)
            resolved = _element_text(c["logs"])
            reasoning = f"{c['method']}({element or p.get('url') or p.get('key') or ''})"
            if resolved:
                reasoning += f" on {resolved}"
            nxt = steps_calls[i + 1]["start"] if i + 1 < len(steps_calls) else None
            until = nxt
            nxt_end = steps_calls[i + 1]["end"] if i + 1 < len(steps_calls) else None
            if nxt is not None and isinstance(c.get("end"), (int, float)) and nxt - c["end"] < SETTLE_MS:
                # the screencast lags the page: give the action time to paint, but not past the next call's end
                until = max(nxt, min(c["end"] + SETTLE_MS, nxt_end if isinstance(nxt_end, (int, float)) else nxt))
            pre_t = c["start"] if last_post_t is None or c["start"] is None else max(c["start"], last_post_t)
            pre = load(frame_at(pre_t), "frames.pre", c)
            post = load(frame_at(until), "frames.post", c)
            last_post_t = until
            err = c.get("error") or None
            message = (err.get("message") if isinstance(err, dict) else str(err)) if err else None
            urls = c["urls"]
            steps.append(Step(
                index=i + 1, action=action, reasoning=reasoning, frame_pre=pre, frame_post=post,
                executor_ok=message is None, executor_error=message,
                page=Page(url_before=urls.get("before"), url_after=urls.get("after")) if urls else None,
                client=Client(did_url_change=(urls["before"] != urls["after"])) if len(urls) == 2 else None,
                extra=extra, source=f"{TRACE_ZIP}:{c['source']}", line=c["line"]))
    if not steps:
        problems.append(Problem("no_actions", "the trace records no user action", run=display, file=TRACE_ZIP,
                                severity="warning", hint="trace the part of the test that acts on the page"))
    width, height = viewport.get("width"), viewport.get("height")
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps),
              screen_width=width if isinstance(width, int) else None,
              screen_height=height if isinstance(height, int) else None,
              agent_name="playwright", extra={"trace_events": len(events)}, inline_frames=inline)
    return run, problems


READER = Reader(
    name=NAME,
    claims=lambda p: claims_plain_dir(p, TRACE_ZIP),
    read=read_trace,
    summary="Playwright trace.zip: trace.trace action events (before/input/after), screencast frames, "
            "frame snapshots' URLs; read in memory, never extracted",
    mapping=(
        ("directory holding trace.zip", "run_id = directory name"),
        ("context-options.options.viewport", "screen {width, height}"),
        ("before {class, method | apiName, params}", "action type (click CLICK, fill/type TYPE, press KEY_PRESS, "
         "goto NAVIGATE, dblclick DOUBLE_CLICK, mouseWheel SCROLL, ...); extra.api, extra.params"),
        ("params.selector", "action.element"),
        ("input.point {x, y}", "action.x, action.y (CSS pixels = screen coordinates)"),
        ("params.value / params.text / params.key / params.url", "action.text / action.text / action.keys / action.url"),
        ("log 'locator resolved to <...>'", "reasoning: 'click(#sel) on <button ...> Save' (traces carry no agent text)"),
        ("after.error.message", "executor.ok = false, executor.error"),
        ("screencast-frame {file | sha1, timestamp}", "frames.pre: last frame before the call; frames.post: last "
         "frame before the next call"),
        ("frame-snapshot {callId, phase, frameUrl}", "page.url_before / url_after; client.did_url_change"),
    ),
)
