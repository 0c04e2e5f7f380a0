"""The events of a Playwright trace: read line by line from the archive's ``*.trace`` files, then gathered
into calls (with their points, ends, errors, logs, pages and URLs), each page's screencast frames and the
pages calls opened.

Per API call, ``before`` {callId, startTime, class + method (``apiName`` in older traces), params}, ``input``
{callId, point?}, ``after`` {callId, endTime, error?} and ``log`` lines; ``screencast-frame`` {pageId, file
(``sha1`` in ``resources/`` in older traces), timestamp}; ``frame-snapshot`` {callId, pageId, phase, frameUrl}.
Older traces write one ``action`` event per call when it ends (v4: the same fields at the top level with
``log`` as a list; v3: under ``metadata``), and name snapshots by ``beforeSnapshot``/``afterSnapshot``
instead of a ``phase`` (before v9).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from ....base.errors import Problem, RunFormatError
from ....base.problems import Slug
from ....base.jsonio import NumberOutOfRange, loads_finite, out_of_range_problem

from ...kit.reading import Problems, num
from .archive import MAX_EVENT_LINE_BYTES, READ_ERRORS, TRACE_ZIP, event_lines

__all__ = ["Event", "Trace", "attach", "gather", "read_events"]

#: What a frame-snapshot event keeps (its page, hundreds of KB, is not read).
_SNAPSHOT_KEYS = ("callId", "pageId", "phase", "frameUrl", "isMainFrame", "snapshotName")

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
    c["end"] = num(ev.get("endTime"))
    err = ev.get("error")
    if isinstance(err, dict) and isinstance(err.get("error"), dict):
        err = err["error"]
    c["error"] = err or None
    if isinstance(ev.get("log"), list):
        c["logs"].extend(str(m) for m in ev["log"])


# --- the events ------------------------------------------------------------------------------------------------

Event = tuple[int, str, dict[str, Any]]  # (line, event file, event)


def read_events(z: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], problems: Problems) -> list[Event]:
    """Every event of the archive's ``*.trace`` files, in file order; a line that is not JSON is a warning,
    a member that cannot be unpacked makes the run invalid."""
    display = problems.run
    names = [n for n in members if PurePosixPath(n).name.endswith(".trace") and "/" not in n]
    if not names:
        raise RunFormatError([Problem(Slug.FILE_UNREADABLE, "no *.trace event file in the archive", run=display,
                                      file=TRACE_ZIP, hint="export the trace with context.tracing.stop(path=...)")])
    events: list[Event] = []
    for name in sorted(names):
        where = f"{TRACE_ZIP}:{name}"
        try:
            for lineno, raw in event_lines(z, members[name]):
                ev = _event(raw, where, lineno, problems)
                if isinstance(ev, dict):
                    if ev.get("type") == "frame-snapshot" and isinstance(ev.get("snapshot"), dict):
                        ev = {"type": "frame-snapshot",
                              "snapshot": {k: ev["snapshot"][k] for k in _SNAPSHOT_KEYS if k in ev["snapshot"]}}
                    events.append((lineno, name, ev))
        except RecursionError:
            raise RunFormatError([Problem(Slug.JSON_TOO_DEEP, "an event is nested too deeply to read", run=display,
                                          file=where, hint="re-export the trace")]) from None
        except READ_ERRORS as exc:
            raise RunFormatError([Problem(Slug.FILE_UNREADABLE, f"{name} cannot be unpacked ({exc})", run=display,
                                          file=where, hint="re-export the trace")]) from None
    return events


def _event(raw: bytes | None, where: str, lineno: int, problems: Problems) -> Any:
    """One event line as JSON (None for a blank, oversized or unreadable line: the last two are warnings)."""
    if raw is None:
        problems.warn(Slug.TRACE_LINE_UNREADABLE, f"event over {MAX_EVENT_LINE_BYTES} bytes, skipped", file=where,
                      line=lineno, hint="the other events are read")
        return None
    line = raw.decode("utf-8", errors="replace")
    if not line.strip():
        return None
    try:
        return loads_finite(line)
    except NumberOutOfRange:
        raise RunFormatError([out_of_range_problem(line, run=problems.run, file=where, line=lineno)]) from None
    except ValueError as exc:
        problems.warn(Slug.TRACE_LINE_UNREADABLE, f"not JSON ({getattr(exc, 'msg', exc)})", file=where, line=lineno,
                      hint="the trace may be truncated; the other events are read")
        return None


@dataclass
class Trace:
    """The events, gathered: the viewport, the calls, each page's screencast frames, the pages opened."""

    viewport: dict[str, Any] = field(default_factory=dict)
    calls: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # by (event file, callId)
    snap_phase: dict[tuple[str, str], str] = field(default_factory=dict)  # (file, snapshotName) -> phase (< v9)
    frames_by_page: dict[str | None, list[tuple[float, str]]] = field(default_factory=dict)  # page -> (t, member)
    rest: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # events read in pass 2
    opened_pages: list[tuple[float, str, str]] = field(default_factory=list)  # (time, pageId, openerPageId)


def gather(events: list[Event]) -> Trace:
    """Pass 1: the calls (callIds restart per event file; a one-event call of traces < v5 is written when it
    ends, after its snapshots), the screencast, the viewport. Pass 2 (:func:`attach`) reads the rest."""
    t = Trace()
    for lineno, name, ev in events:
        kind = ev.get("type")
        if kind == "action" and isinstance(ev.get("metadata"), dict):
            if ev["metadata"].get("internal"):
                continue
            ev = _from_v3(ev["metadata"])  # one event per call, its fields under metadata (traces v3)
        if kind == "context-options":
            opts = ev.get("options")
            vp = opts.get("viewport") if isinstance(opts, dict) else None
            t.viewport = vp if isinstance(vp, dict) else {}
        elif kind in ("before", "action"):
            method = str(ev.get("method") or str(ev.get("apiName") or "").split(".")[-1])
            key = (name, str(ev.get("callId")))
            params, page = ev.get("params"), ev.get("pageId")
            t.calls[key] = {"method": method, "class": ev.get("class"),
                            "params": params if isinstance(params, dict) else {},
                            "start": num(ev.get("startTime")), "end": num(ev.get("endTime")),
                            "point": ev.get("point"), "error": ev.get("error"), "logs": [], "line": lineno,
                            "source": name, "urls": {}, "page": page if isinstance(page, str) else None,
                            "seq": len(t.calls)}
            _after_fields(t.calls[key], ev, kind == "action")
        elif kind == "screencast-frame":
            member = ev.get("file") or (f"resources/{ev['sha1']}" if ev.get("sha1") else None)
            at = num(ev.get("timestamp"))
            if isinstance(member, str) and at is not None:
                page = ev.get("pageId") if isinstance(ev.get("pageId"), str) else None
                t.frames_by_page.setdefault(page, []).append((at, member))
        else:
            t.rest.append((name, str(kind), ev))
        for phase in ("before", "after"):
            if kind in ("before", "action", "after") and isinstance(ev.get(f"{phase}Snapshot"), str):
                t.snap_phase[(name, ev[f"{phase}Snapshot"])] = phase
    return t


def attach(t: Trace) -> None:
    """Pass 2: what belongs to a call (its point, end, error, log, page and URLs), and the pages opened."""
    for name, kind, ev in t.rest:
        c = t.calls.get((name, str(ev.get("callId"))))
        if kind == "input" and c is not None:
            if ev.get("point"):
                c["point"] = ev["point"]
        elif kind == "after" and c is not None:
            _after_fields(c, ev, True)
        elif kind == "log" and c is not None:
            c["logs"].append(str(ev.get("message", "")))
        elif kind == "event" and ev.get("method") == "page" and isinstance(ev.get("params"), dict):
            # BrowserContext 'page': a page was created; openerPageId when a page opened it (popup, new tab)
            pid, opener, at = ev["params"].get("pageId"), ev["params"].get("openerPageId"), num(ev.get("time"))
            if isinstance(pid, str) and isinstance(opener, str) and at is not None:
                t.opened_pages.append((at, pid, opener))
        elif kind == "frame-snapshot":
            snap = given if isinstance(given := ev.get("snapshot"), dict) else {}
            c = t.calls.get((name, str(snap.get("callId"))))
            if c is None or not snap.get("isMainFrame", True):
                continue
            if c["page"] is None and isinstance(snap.get("pageId"), str):
                c["page"] = snap["pageId"]
            phase = snap.get("phase") or t.snap_phase.get((name, str(snap.get("snapshotName"))))
            if phase in ("before", "after") and isinstance(snap.get("frameUrl"), str):
                c["urls"].setdefault(phase, snap["frameUrl"])
    for fs in t.frames_by_page.values():
        fs.sort()
