"""Playwright traces (``context.tracing.stop(path="trace.zip")``).

A run is a directory holding ``trace.zip``. Inside, ``trace.trace`` is NDJSON:

* ``context-options`` (the viewport is the screen size);
* per API call ``before`` {callId, startTime, class + method (``apiName`` in older
  traces), params}, ``input`` {callId, point?, box?}, ``after`` {callId, endTime,
  error?}; ``log`` lines of the call (``locator resolved to <button ...>Save</button>``);
* ``screencast-frame`` {pageId, file (``sha1`` in ``resources/`` in older traces),
  width, height, timestamp}: the page's frames, sent whenever it repaints;
* ``frame-snapshot`` {callId, pageId, phase before|after, frameUrl}: the URL and the
  page of each call.

Older traces are read too: one ``action`` event per call, written when it ends
(format v4: the same fields at the top level with ``log`` as a list; v3: under
``metadata``, with ``id``, ``type`` for the class and ``error.error``), and
snapshots named by ``beforeSnapshot``/``afterSnapshot`` instead of a ``phase``
(before v9). Calls are ordered by start time.

Only user actions become steps (click, dblclick, fill, type, press, check, goto,
mouse and keyboard calls, ...); bookkeeping calls (newPage, route, evaluate,
waits for load states) are skipped.

Frames. A call's page is its ``pageId`` (older traces) or the page of its
frame-snapshots; frames are taken from that page's screencast (from all frames when
the page is unknown or sent none). The pre frame of an action is the page's last
frame painted at or before it started (or at or before the previous action's post
time, when that is later); its post frame is the page's last frame painted before
the next action started (or the last of the trace). When the action opened a page
(a ``BrowserContext`` ``page`` event whose ``openerPageId`` is the action's page,
after the action started and by that time: a popup, a new tab) that painted a
frame by then, the post frame is that new page's last frame (``extra.opened_page``). Screencast frames arrive 8-15 ms after the page paints
(measured on Chromium traces), so when the next call starts less than SETTLE_MS
(30 ms) after this one ended, as in scripted tests, the post time is SETTLE_MS
after the end (but not after the next call ended), and the next action's pre frame
is that same frame. The screencast sends a frame only when the page repaints, so
"no newer frame" means "nothing repainted": pre and post are then the same file.

The zip is read in place, never extracted, with limits on the member count, on
each member's size and on the total; member names with ``..``, an absolute path, a
drive letter or a backslash are refused; ``trace.zip`` must be a regular file inside
the run folder (not a FIFO, not a link out). The event files are streamed line by
line (a line over MAX_EVENT_LINE_BYTES is skipped with a warning; a frame-snapshot
event keeps only the fields read, not its page). Screencast frames are unpacked
when a step needs them and released after use (``inline_frames`` is a
:class:`TraceFrames`), each with a byte budget counted on the bytes the
decompressor produces, whatever the member's header claims: a member that would
unpack past ``frames.MAX_FRAME_BYTES`` is refused (``frame_too_large``) after that
many bytes. Each frame named by a step is unpacked once while the trace is read,
discarding the bytes, so a damaged or oversized frame is a located warning then.
"""

from __future__ import annotations

import bisect
import json
import re
import weakref
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import IO, Any

from trajcheck.discovery import Reader
from trajcheck.errors import Problem, RunFormatError
from trajcheck.inputs import NotRegularFile, open_regular
from trajcheck.jsonio import NumberOutOfRange, loads_finite, out_of_range_problem
from trajcheck.rundir import safe_join
from trajcheck.schemas.records import Action, Client, Page, Run, Step

from .webvoyager import claims_plain_dir

NAME = "playwright-trace"
TRACE_ZIP = "trace.zip"
#: Zip limits: members, bytes of one member, bytes in all.
MAX_MEMBERS = 20_000
MAX_MEMBER_BYTES = 256 * 1024 * 1024
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024
#: An event line longer than this is skipped with a warning (frame snapshots of big pages are a few MB).
MAX_EVENT_LINE_BYTES = 16 * 1024 * 1024
#: Unpacked in chunks of this size.
CHUNK = 1 << 20
#: What a frame-snapshot event keeps (its page, hundreds of KB, is not read).
_SNAPSHOT_KEYS = ("callId", "pageId", "phase", "frameUrl", "isMainFrame", "snapshotName")

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
#: What unpacking one member can raise on a damaged archive (bad CRC, truncated deflate stream, ...).
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError)
_RESOLVED = re.compile(r"locator resolved to (.*)$")
_TAGS = re.compile(r"<[^>]*>")


def _key_name(key: str) -> str:
    """Playwright key chords ('Control+Enter') in trajcheck's spelling ('ctrl+Enter')."""
    names = {"Control": "ctrl", "Shift": "shift", "Alt": "alt", "Meta": "meta", "ControlOrMeta": "ctrl"}
    return "+".join(names.get(k, k) for k in key.split("+"))


def _safe_member(name: str) -> bool:
    """Relative, without ``..``, backslashes, a drive letter or NUL (the archive is never extracted, but a
    member named like that is not something Playwright writes)."""
    p = PurePosixPath(name)
    return bool(name) and not p.is_absolute() and ".." not in p.parts and "\\" not in name and "\0" not in name \
        and not re.match(r"^[A-Za-z]:", name)


def _open_zip(path: Path, run: str) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    def bad(slug: str, msg: str, hint: str) -> RunFormatError:
        return RunFormatError([Problem(slug, msg, run=run, file=TRACE_ZIP, hint=hint)])

    if safe_join(path.parent, path.name) is None:
        raise bad("path_escapes_run", f"{TRACE_ZIP} is a link to a file outside the run directory; it is not read",
                  "copy the trace into the run directory instead of linking to it")
    try:
        fp: IO[bytes] = open(open_regular(path), "rb", closefd=True)
    except NotRegularFile as exc:
        raise bad("not_a_regular_file", f"{exc.kind}, not a regular file; it is never opened",
                  "replace it with the trace Playwright wrote") from None
    except OSError as exc:
        raise bad("trace_unreadable", f"cannot read ({exc.strerror or exc})", "re-export the trace") from None
    try:
        z = zipfile.ZipFile(fp)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        fp.close()
        raise bad("trace_unreadable", f"not a readable zip ({exc})", "re-export the trace") from None
    weakref.finalize(z, fp.close)  # ZipFile does not close a file it was given
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


def _event_lines(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) of each line of an event file, streamed; None for a line over
    MAX_EVENT_LINE_BYTES (its bytes are read and dropped). Raises a _READ_ERRORS error on a damaged member."""
    produced = 0
    with z.open(info) as f:
        lineno = 0
        while True:
            line = f.readline(MAX_EVENT_LINE_BYTES + 1)
            if not line:
                return
            lineno += 1
            produced += len(line)
            if len(line) > MAX_EVENT_LINE_BYTES and not line.endswith(b"\n"):
                while (rest := f.readline(CHUNK)) and not rest.endswith(b"\n"):
                    produced += len(rest)
                produced += len(rest)
                yield lineno, None
            else:
                yield lineno, line
            if produced > MAX_MEMBER_BYTES:  # what zipfile checks against the header, counted on real bytes
                raise zipfile.BadZipFile(f"unpacks past {MAX_MEMBER_BYTES} bytes")


def _unpack(z: zipfile.ZipFile, info: zipfile.ZipInfo, keep: bool) -> bytes:
    """A screencast member's bytes (``keep``) or just its check, unpacked in chunks with the frame byte
    budget counted on the bytes produced. Raises FrameError (frame_too_large, frame_unreadable)."""
    from trajcheck.frames import MAX_FRAME_BYTES, FrameError  # numpy and Pillow: not at import (warm `score`)

    parts: list[bytes] = []
    produced = 0
    try:
        with z.open(info) as f:
            while chunk := f.read(CHUNK):
                produced += len(chunk)
                if produced > MAX_FRAME_BYTES:
                    raise FrameError("frame_too_large", f"screencast frame {info.filename!r} unpacks past the "
                                     f"{MAX_FRAME_BYTES} byte frame budget (refused without unpacking the rest)")
                if keep:
                    parts.append(chunk)
    except _READ_ERRORS as exc:
        raise FrameError("frame_unreadable", f"screencast frame {info.filename!r} cannot be unpacked ({exc})") from None
    return b"".join(parts)


class TraceFrames(Mapping[str, bytes]):
    """The screencast frames steps use, by member name, unpacked from the open archive on each access
    (the scorer decodes a frame once and drops it after its last use, so at most a step's frames are held).
    A frame that fails now (the archive changed since it was read) raises :class:`FrameError`."""

    def __init__(self, z: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo]):
        self._zip = z
        self._infos = infos

    def __getitem__(self, name: str) -> bytes:
        return _unpack(self._zip, self._infos[name], keep=True)

    def __iter__(self) -> Iterator[str]:
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)

    def __contains__(self, name: object) -> bool:
        return name in self._infos


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _from_v3(m: dict[str, Any]) -> dict[str, Any]:
    """A v3 ``action`` event's ``metadata`` in the field names of later traces."""
    snaps = {s.get("title"): s.get("snapshotName") for s in m.get("snapshots") or [] if isinstance(s, dict)}
    return {"type": "action", "callId": m.get("id"), "startTime": m.get("startTime"), "endTime": m.get("endTime"),
            "apiName": m.get("apiName"), "class": m.get("type"), "method": m.get("method"),
            "params": m.get("params"), "point": m.get("point"), "error": m.get("error"), "log": m.get("log"),
            "pageId": m.get("pageId"), "beforeSnapshot": snaps.get("before"), "afterSnapshot": snaps.get("after")}


def _after_fields(c: dict[str, Any], ev: dict[str, Any], carries: bool) -> None:
    """The end of a call from an ``after`` event (or a one-event ``action`` of traces before v5):
    end time, error ({message} or, in v3, {error: {message}}), and its log lines when listed there (v5)."""
    if not carries:
        return
    c["end"] = _num(ev.get("endTime"))
    err = ev.get("error")
    if isinstance(err, dict) and isinstance(err.get("error"), dict):
        err = err["error"]
    c["error"] = err or None
    if isinstance(ev.get("log"), list):
        c["logs"].extend(str(m) for m in ev["log"])


def _element_text(logs: list[str]) -> str | None:
    for msg in logs:
        m = _RESOLVED.search(msg)
        if m:
            text = " ".join(_TAGS.sub(" ", m.group(1)).split())
            return f"{m.group(1).split('>')[0]}> {text}".strip() if text else m.group(1)
    return None


def read_trace(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    from trajcheck.frames import FrameError

    run_id = run_dir.resolve().name or display
    problems: list[Problem] = []
    z, members = _open_zip(run_dir / TRACE_ZIP, display)
    keep_open = False
    try:
        names = [n for n in members if PurePosixPath(n).name.endswith(".trace") and "/" not in n]
        if not names:
            raise RunFormatError([Problem("trace_unreadable", "no *.trace event file in the archive", run=display,
                                          file=TRACE_ZIP, hint="export the trace with context.tracing.stop(path=...)")])
        events: list[tuple[int, str, dict[str, Any]]] = []
        for name in sorted(names):
            where = f"{TRACE_ZIP}:{name}"
            try:
                for lineno, raw in _event_lines(z, members[name]):
                    if raw is None:
                        problems.append(Problem("trace_line_unreadable", f"event over {MAX_EVENT_LINE_BYTES} bytes, "
                                                "skipped", run=display, file=where, line=lineno, severity="warning",
                                                hint="the other events are read"))
                        continue
                    line = raw.decode("utf-8", errors="replace")
                    if not line.strip():
                        continue
                    try:
                        ev = loads_finite(line)
                    except NumberOutOfRange:
                        raise RunFormatError([out_of_range_problem(line, run=display, file=where, line=lineno)]) \
                            from None
                    except ValueError as exc:
                        problems.append(Problem("trace_line_unreadable", f"not JSON ({getattr(exc, 'msg', exc)})",
                                                run=display, file=where, line=lineno, severity="warning",
                                                hint="the trace may be truncated; the other events are read"))
                        continue
                    if isinstance(ev, dict):
                        if ev.get("type") == "frame-snapshot" and isinstance(ev.get("snapshot"), dict):
                            ev = {"type": "frame-snapshot",
                                  "snapshot": {k: ev["snapshot"][k] for k in _SNAPSHOT_KEYS if k in ev["snapshot"]}}
                        events.append((lineno, name, ev))
            except RecursionError:
                raise RunFormatError([Problem("json_too_deep", "an event is nested too deeply to read", run=display,
                                              file=where, hint="re-export the trace")]) from None
            except _READ_ERRORS as exc:
                raise RunFormatError([Problem("trace_unreadable", f"{name} cannot be unpacked ({exc})", run=display,
                                              file=where, hint="re-export the trace")]) from None

        viewport: dict[str, Any] = {}
        calls: dict[tuple[str, str], dict[str, Any]] = {}  # by (event file, callId): callIds restart per file
        snap_phase: dict[tuple[str, str], str] = {}  # (event file, snapshotName) -> before | after (traces < v9)
        frames_by_page: dict[str | None, list[tuple[float, str]]] = {}  # pageId -> [(timestamp, member)]
        rest: list[tuple[str, str, dict[str, Any]]] = []
        opened_pages: list[tuple[float, str, str]] = []  # (time, pageId, openerPageId)
        # pass 1: the calls (a one-event call of traces < v5 is written when it ends, after its snapshots)
        for lineno, name, ev in events:
            kind = ev.get("type")
            if kind == "action" and isinstance(ev.get("metadata"), dict):
                if ev["metadata"].get("internal"):
                    continue
                ev = _from_v3(ev["metadata"])  # one event per call, its fields under metadata (traces v3)
            if kind == "context-options":
                opts = ev.get("options")
                vp = opts.get("viewport") if isinstance(opts, dict) else None
                viewport = vp if isinstance(vp, dict) else {}
            elif kind in ("before", "action"):
                method = str(ev.get("method") or str(ev.get("apiName") or "").split(".")[-1])
                key = (name, str(ev.get("callId")))
                params, page = ev.get("params"), ev.get("pageId")
                calls[key] = {"method": method, "class": ev.get("class"),
                              "params": params if isinstance(params, dict) else {},
                              "start": _num(ev.get("startTime")), "end": _num(ev.get("endTime")),
                              "point": ev.get("point"), "error": ev.get("error"), "logs": [], "line": lineno,
                              "source": name, "urls": {}, "page": page if isinstance(page, str) else None,
                              "seq": len(calls)}
                _after_fields(calls[key], ev, kind == "action")
            elif kind == "screencast-frame":
                member = ev.get("file") or (f"resources/{ev['sha1']}" if ev.get("sha1") else None)
                t = _num(ev.get("timestamp"))
                if isinstance(member, str) and t is not None:
                    page = ev.get("pageId") if isinstance(ev.get("pageId"), str) else None
                    frames_by_page.setdefault(page, []).append((t, member))
            else:
                rest.append((name, str(kind), ev))
            for phase in ("before", "after"):
                if kind in ("before", "action", "after") and isinstance(ev.get(f"{phase}Snapshot"), str):
                    snap_phase[(name, ev[f"{phase}Snapshot"])] = phase
        # pass 2: what belongs to a call
        for name, kind, ev in rest:
            c = calls.get((name, str(ev.get("callId"))))
            if kind == "input" and c is not None:
                if ev.get("point"):
                    c["point"] = ev["point"]
            elif kind == "after" and c is not None:
                _after_fields(c, ev, True)
            elif kind == "log" and c is not None:
                c["logs"].append(str(ev.get("message", "")))
            elif kind == "event" and ev.get("method") == "page" and isinstance(ev.get("params"), dict):
                # BrowserContext 'page': a page was created; openerPageId when a page opened it (popup, new tab)
                pid, opener, t = ev["params"].get("pageId"), ev["params"].get("openerPageId"), _num(ev.get("time"))
                if isinstance(pid, str) and isinstance(opener, str) and t is not None:
                    opened_pages.append((t, pid, opener))
            elif kind == "frame-snapshot":
                snap = ev.get("snapshot") if isinstance(ev.get("snapshot"), dict) else {}
                c = calls.get((name, str(snap.get("callId"))))
                if c is None or not snap.get("isMainFrame", True):
                    continue
                if c["page"] is None and isinstance(snap.get("pageId"), str):
                    c["page"] = snap["pageId"]
                phase = snap.get("phase") or snap_phase.get((name, str(snap.get("snapshotName"))))
                if phase in ("before", "after") and isinstance(snap.get("frameUrl"), str):
                    c["urls"].setdefault(phase, snap["frameUrl"])
        all_frames = sorted(f for fs in frames_by_page.values() for f in fs)
        for fs in frames_by_page.values():
            fs.sort()

        steps_calls = sorted((c for c in calls.values() if c["method"] in ACTIONS),
                             key=lambda c: (c["start"] is None, c["start"] or 0.0, c["seq"]))
        inline: dict[str, zipfile.ZipInfo] = {}  # the frames steps use, each checked once, unpacked later
        refused: dict[str, Exception] = {}

        def frame_at(c: dict[str, Any], t: float | None) -> str | None:
            """The last frame of the call's page (of any page when its page is unknown or sent no frame)
            painted at or before ``t``."""
            frames = frames_by_page.get(c["page"]) or all_frames
            if t is None:
                return frames[-1][1] if frames else None
            i = bisect.bisect_right(frames, (t, "\uffff"))
            return frames[i - 1][1] if i else None

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
                try:
                    if member in refused:
                        raise refused[member]
                    _unpack(z, info, keep=False)  # damaged or over the frame budget: known now, held never
                except FrameError as exc:
                    refused[member] = exc
                    problems.append(Problem(exc.slug, str(exc), run=display, file=f"{TRACE_ZIP}:{c['source']}",
                                            line=c["line"], field=field, severity="warning",
                                            hint="the step is scored without it"))
                    return None
                inline[member] = info
            return member

        def _opened_page(c: dict[str, Any], until: float | None) -> str | None:
            """The last page the call's page opened after the call started and by ``until`` that painted a
            frame by then."""
            if c["page"] is None or c["start"] is None:
                return None
            new = [(t, page) for t, page, opener in opened_pages
                   if opener == c["page"] and t > c["start"] and (until is None or t <= until)
                   and frame_at({"page": page}, until) is not None and page in frames_by_page]
            return max(new)[1] if new else None

        steps: list[Step] = []
        last_post_t: float | None = None
        for i, c in enumerate(steps_calls):
            typ = ACTIONS[c["method"]]
            p = c["params"]
            point = c["point"] if isinstance(c.get("point"), dict) else {}
            x, y = _num(point.get("x")), _num(point.get("y"))
            if c["method"] == "mouseClick" and _num(p.get("x")) is not None and _num(p.get("y")) is not None:
                x, y = _num(p.get("x")), _num(p.get("y"))
            extra: dict[str, Any] = {"api": f"{c['class'] or ''}.{c['method']}".lstrip("."), "params": {
                k: v for k, v in p.items() if k not in ("timeout", "strict")}}
            element = _str(p.get("selector"))
            text = _str(p.get("value") if c["method"] == "fill" else p.get("text"))
            action = Action(type=typ, x=x, y=y, keys=_key_name(p["key"]) if isinstance(p.get("key"), str) else None,
                            text=text, url=_str(p.get("url")), element=element, extra=extra)
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
            pre = load(frame_at(c, pre_t), "frames.pre", c)
            opened = _opened_page(c, until)
            if opened is not None:
                # the action opened a page (popup, new tab): what it changed is that page, not its own
                extra["opened_page"] = opened
                post = load(frame_at({"page": opened}, until), "frames.post", c)
            else:
                post = load(frame_at(c, until), "frames.post", c)
            last_post_t = until
            err = c.get("error") or None
            message = (err.get("message") if isinstance(err, dict) else err) if err else None
            message = None if message is None else str(message)
            urls = c["urls"]
            steps.append(Step(
                index=i + 1, action=action, reasoning=reasoning, frame_pre=pre, frame_post=post,
                executor_ok=message is None, executor_error=message,
                page=Page(url_before=urls.get("before"), url_after=urls.get("after")) if urls else None,
                client=Client(did_url_change=(urls["before"] != urls["after"])) if len(urls) == 2 else None,
                extra=extra, source=f"{TRACE_ZIP}:{c['source']}", line=c["line"]))
        keep_open = bool(inline)  # the frames are unpacked from it while the run is scored
    finally:
        if not keep_open:
            z.close()
    if not steps:
        problems.append(Problem("no_actions", "the trace records no user action", run=display, file=TRACE_ZIP,
                                severity="warning", hint="trace the part of the test that acts on the page"))
    width, height = viewport.get("width"), viewport.get("height")
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps),
              screen_width=width if isinstance(width, int) else None,
              screen_height=height if isinstance(height, int) else None,
              agent_name="playwright", extra={"trace_events": len(events)}, inline_frames=TraceFrames(z, inline))
    return run, problems


READER = Reader(
    name=NAME,
    claims=lambda p: claims_plain_dir(p, TRACE_ZIP),
    read=read_trace,
    summary="Playwright trace.zip: trace.trace action events (before/input/after), screencast frames, "
            "frame snapshots' URLs; read in place, never extracted",
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
        ("screencast-frame {pageId, file | sha1, timestamp}", ("frames.pre: the call's page's last frame at its "
         "start; frames.post: that page's last frame before the next call (30 ms settle when calls are back to "
         "back), or the last frame of a page the call opened (extra.opened_page)")),
        ("frame-snapshot {callId, pageId, phase, frameUrl}", ("the call's page; page.url_before / url_after; "
         "client.did_url_change")),
        ("one 'action' event per call (traces v3/v4)", "read like before/input/after"),
    ),
)
