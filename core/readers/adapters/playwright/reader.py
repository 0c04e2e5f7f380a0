"""Playwright traces (``context.tracing.stop(path="trace.zip")``): one run per directory holding ``trace.zip``.

Parse: :mod:`~trajcheck.readers.adapters.playwright.archive` opens the archive in place (limits, safe member names,
frames unpacked on demand within a byte budget) and :mod:`~trajcheck.readers.adapters.playwright.events` gathers its
events into calls, screencast frames and opened pages. Only user actions become steps (click, dblclick,
fill, type, press, check, goto, mouse and keyboard calls, ...); bookkeeping calls (newPage, route, evaluate,
waits for load states) are skipped. Calls are ordered by start time.

Align (this module). A call's page is its ``pageId`` (older traces) or the page of its frame-snapshots;
frames are taken from that page's screencast (from all frames when the page is unknown or sent none). The
pre frame of an action is the page's last frame painted at or before it started (or at or before the
previous action's post time, when that is later); its post frame is the page's last frame painted before
the next action started (or the last of the trace). When the action opened a page (a ``BrowserContext``
``page`` event whose ``openerPageId`` is the action's page, after the action started and by that time: a
popup, a new tab) that painted a frame by then, the post frame is that new page's last frame
(``extra.opened_page``). Screencast frames arrive 8-15 ms after the page paints (measured on Chromium
traces), so when the next call starts less than SETTLE_MS (30 ms) after this one ended, as in scripted tests,
the post time is SETTLE_MS after the end (but not after the next call ended), and the next action's pre
frame is that same frame. The screencast sends a frame only when the page repaints, so "no newer frame"
means "nothing repainted": pre and post are then the same file. Each frame named by a step is unpacked once
while the trace is read, discarding the bytes, so a damaged or oversized frame is a located warning then;
``inline_frames`` is a :class:`TraceFrames` that unpacks a frame on each access.

Outcome: a trace records none.
"""

from __future__ import annotations

import bisect
import re
import zipfile
from pathlib import Path
from typing import Any

from ...kit.claiming import by_names
from ...kit.reader import FormatDoc, Reader, Table
from ....base.errors import Problem
from ....base.problems import Slug
from ....schemas.records import Action, Client, Page, Run, Step

from ...kit.reading import Problems, claims_plain_dir, num, run_id_of, str_or_none
from .events import Trace, attach, gather, read_events
from .archive import TRACE_ZIP, TraceFrames, open_zip, unpack

__all__ = ["ACTIONS", "DOC", "NAME", "READER", "SETTLE_MS", "TRACE_ZIP", "TraceFrames", "read_trace"]

NAME = "playwright-trace"
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


def _element_text(logs: list[str]) -> str | None:
    for msg in logs:
        m = _RESOLVED.search(msg)
        if m:
            text = " ".join(_TAGS.sub(" ", m.group(1)).split())
            return f"{m.group(1).split('>')[0]}> {text}".strip() if text else m.group(1)
    return None


# --- align ------------------------------------------------------------------------------------------------

class _Frames:
    """Which screencast frame is a call's pre or post frame; each frame a step names is unpacked once here
    (discarding the bytes) so a damaged or oversized one is a located warning now, and held never."""

    def __init__(self, z: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], t: Trace, problems: Problems):
        self.z, self.members, self.t, self.problems = z, members, t, problems
        self.all = sorted(f for fs in t.frames_by_page.values() for f in fs)
        self.inline: dict[str, zipfile.ZipInfo] = {}  # the frames steps use, checked, unpacked when scored
        self.refused: dict[str, Exception] = {}

    def at(self, page: str | None, t: float | None) -> str | None:
        """The last frame of ``page`` (of any page when it is unknown or sent no frame) painted at or before
        ``t``."""
        frames = self.t.frames_by_page.get(page) or self.all
        if t is None:
            return frames[-1][1] if frames else None
        i = bisect.bisect_right(frames, (t, "\uffff"))
        return frames[i - 1][1] if i else None

    def load(self, member: str | None, field_name: str, c: dict[str, Any]) -> str | None:
        """``member`` as a step's frame, or None with a warning when it is missing or cannot be unpacked."""
        from ....media.frames import FrameError  # numpy and Pillow: not at import (warm `score`)

        if member is None:
            return None
        if member not in self.inline:
            info = self.members.get(member)
            if info is None:
                self.problems.warn(Slug.SCREENSHOT_MISSING, f"screencast frame {member!r} is not in the archive",
                                   file=f"{TRACE_ZIP}:{c['source']}", line=c["line"], field=field_name,
                                   hint="the step is scored without it")
                return None
            try:
                if member in self.refused:
                    raise self.refused[member]
                unpack(self.z, info, keep=False)  # damaged or over the frame budget: known now, held never
            except FrameError as exc:
                self.refused[member] = exc
                self.problems.warn(exc.slug, str(exc), file=f"{TRACE_ZIP}:{c['source']}", line=c["line"],
                                   field=field_name, hint="the step is scored without it")
                return None
            self.inline[member] = info
        return member

    def opened_page(self, c: dict[str, Any], until: float | None) -> str | None:
        """The last page the call's page opened after the call started and by ``until`` that painted a frame
        by then."""
        if c["page"] is None or c["start"] is None:
            return None
        new = [(t, page) for t, page, opener in self.t.opened_pages
               if opener == c["page"] and t > c["start"] and (until is None or t <= until)
               and self.at(page, until) is not None and page in self.t.frames_by_page]
        return max(new)[1] if new else None


def _action(c: dict[str, Any]) -> tuple[Action, str]:
    """A call as an action, and its reasoning: the call and the element it resolved to (traces carry no agent
    text)."""
    p = c["params"]
    point = c["point"] if isinstance(c.get("point"), dict) else {}
    x, y = num(point.get("x")), num(point.get("y"))
    if c["method"] == "mouseClick" and num(p.get("x")) is not None and num(p.get("y")) is not None:
        x, y = num(p.get("x")), num(p.get("y"))
    extra: dict[str, Any] = {"api": f"{c['class'] or ''}.{c['method']}".lstrip("."), "params": {
        k: v for k, v in p.items() if k not in ("timeout", "strict")}}
    element = str_or_none(p.get("selector"))
    text = str_or_none(p.get("value") if c["method"] == "fill" else p.get("text"))
    action = Action(type=ACTIONS[c["method"]], x=x, y=y,
                    keys=_key_name(p["key"]) if isinstance(p.get("key"), str) else None,
                    text=text, url=str_or_none(p.get("url")), element=element, extra=extra)
    resolved = _element_text(c["logs"])
    reasoning = f"{c['method']}({element or p.get('url') or p.get('key') or ''})"
    if resolved:
        reasoning += f" on {resolved}"
    return action, reasoning


def _post_time(c: dict[str, Any], nxt: dict[str, Any] | None) -> float | None:
    """When a call's effect is read: the next call's start, or SETTLE_MS after this call's end when the next
    call follows sooner (the screencast lags the page), but not past the next call's end."""
    until = nxt["start"] if nxt else None
    nxt_end = nxt["end"] if nxt else None
    if until is not None and isinstance(c.get("end"), (int, float)) and until - c["end"] < SETTLE_MS:
        until = max(until, min(c["end"] + SETTLE_MS, nxt_end if isinstance(nxt_end, (int, float)) else until))
    return until


def _seconds(c: dict[str, Any], prev: dict[str, Any] | None) -> float | None:
    """A call's seconds by the trace's clock (milliseconds): from the previous action's end to this one's (what
    the agent took to choose it, and the action itself); the first action, its own start to end."""
    start = prev["end"] if prev is not None else c["start"]
    end = c.get("end")
    if not isinstance(start, (int, float)) or not isinstance(end, (int, float)) or end < start:
        return None
    return round((end - start) / 1000, 6)


def _align(calls: list[dict[str, Any]], frames: _Frames) -> list[Step]:
    """One step per user action, in start order, with the frames around it."""
    steps: list[Step] = []
    last_post_t: float | None = None
    for i, c in enumerate(calls):
        action, reasoning = _action(c)
        until = _post_time(c, calls[i + 1] if i + 1 < len(calls) else None)
        pre_t = c["start"] if last_post_t is None or c["start"] is None else max(c["start"], last_post_t)
        pre = frames.load(frames.at(c["page"], pre_t), "frames.pre", c)
        opened = frames.opened_page(c, until)
        if opened is not None:
            # the action opened a page (popup, new tab): what it changed is that page, not its own
            action.extra["opened_page"] = opened
            post = frames.load(frames.at(opened, until), "frames.post", c)
        else:
            post = frames.load(frames.at(c["page"], until), "frames.post", c)
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
            wall_seconds=_seconds(c, calls[i - 1] if i else None), extra=action.extra,
            source=f"{TRACE_ZIP}:{c['source']}", line=c["line"]))
    return steps


def read_trace(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one Playwright trace (see the module's docstring and :data:`DOC`). A trace records no outcome."""
    problems = Problems(display)
    z, members = open_zip(run_dir / TRACE_ZIP, display)
    keep_open = False
    try:
        events = read_events(z, members, problems)
        t = gather(events)
        attach(t)
        calls = sorted((c for c in t.calls.values() if c["method"] in ACTIONS),
                       key=lambda c: (c["start"] is None, c["start"] or 0.0, c["seq"]))
        frames = _Frames(z, members, t, problems)
        steps = _align(calls, frames)
        keep_open = bool(frames.inline)  # the frames are unpacked from it while the run is scored
    finally:
        if not keep_open:
            z.close()
    if not steps:
        problems.warn(Slug.NO_ACTIONS, "the trace records no user action", file=TRACE_ZIP,
                      hint="trace the part of the test that acts on the page")
    width, height = t.viewport.get("width"), t.viewport.get("height")
    run = Run(run_id=run_id_of(run_dir, display), path=display, source_format=NAME, steps=tuple(steps),
              screen_width=width if isinstance(width, int) else None,
              screen_height=height if isinstance(height, int) else None,
              agent_name="playwright", extra={"trace_events": len(events)},
              inline_frames=TraceFrames(z, frames.inline))
    return run, problems.warnings()


DOC = FormatDoc(
    ends=('A trace is stopped by the script that started it (`context.tracing.stop`), not by an agent: it '
          'records no answer, and where the script stops says nothing of the outcome.'),
    title="Playwright traces",
    claims=("A run is a directory holding a `trace.zip` written by `context.tracing.stop(path=...)` (start "
            "tracing with `screenshots=True` to get frames). The archive is read in place and never "
            "extracted: at most 20,000 members, 256 MiB per member and 2 GiB in all; a member named with "
            "`..` or an absolute path makes the run invalid (`path_escapes_run`), and so does a `trace.zip` "
            "that is a link to a file outside the run folder (one that is a FIFO or a device is "
            "`not_a_regular_file`, never opened). The event files are streamed line by line (an event over "
            "16 MiB is skipped with a warning). Screencast frames are unpacked when a step needs them and "
            "released after use, each with a budget of 32 MiB counted on the bytes the decompressor "
            "produces, whatever the member's header claims: a frame that would unpack past it is refused "
            "(`frame_too_large`, a warning) after 32 MiB, so a small archive of members that unpack to "
            "hundreds of MB costs neither the memory nor the time."),
    example=("trajcheck score test-results/ --out LEDGER          # every folder holding a trace.zip\n"
             "trajcheck formats playwright-trace"),
    tables=(
        Table(head=("trace", "trajcheck"), rows=(
            ("directory holding `trace.zip`", "`run_id` = the directory name"),
            ("`context-options.options.viewport`", "`screen` {width, height}"),
            ("`before` {class, method} (`apiName` in older traces), `params`",
             ("action type: click/tap/check CLICK, dblclick DOUBLE_CLICK, fill/type/keyboard.type TYPE, "
              "press/keyboard.press KEY_PRESS, goto/goBack/reload NAVIGATE, mouse.wheel SCROLL, "
              "waitForTimeout WAIT, selectOption/hover/dragAndDrop/setInputFiles kept as their own "
              "(unknown) types; `extra.api`, `extra.params`")),
            ("`params.selector`", "`action.element`"),
            ("`input.point` {x, y} (CSS pixels)", "`action.x`, `action.y`"),
            ("`params.value` / `params.text`, `params.key`, `params.url`",
             "`action.text`, `action.keys` (`Control+Enter` as `ctrl+Enter`), `action.url`"),
            ('`log` "locator resolved to <button ...>Save</button>"',
             "`reasoning` = `click(#save) on <button ...> Save`"),
            ("`after.error.message`", "`executor.ok = false`, `executor.error`"),
            ("`screencast-frame` {pageId, file (or `sha1` under `resources/`), timestamp}",
             ("`frames.pre`: the last frame of the call's page painted before the call started; "
              "`frames.post`: the last one of that page painted before the next call started, or of the "
              "page the call opened")),
            ("`frame-snapshot` {callId, pageId, phase before/after, frameUrl}",
             "the call's page; `page.url_before`, `page.url_after`, `client.did_url_change`"),
            (("one `action` event per call (traces v3/v4, `metadata` in v3), snapshots named by "
              "`beforeSnapshot`/`afterSnapshot` (before v9)"),
             "read like `before`/`input`/`after`; calls ordered by start time"),
            ("`before.startTime`, `after.endTime` (milliseconds)",
             "`wall_seconds`: from the previous action's end to this one's; the first action, its own start to end"),
        )),
    ),
    notes=(
        "The frame rule, in full:",
        ("- A call's page is its `pageId` (older traces) or the page of its `frame-snapshot`s. Frames are "
         "taken from that page's screencast only, so a popup or another tab painting in between does not "
         "become this step's frame (all frames are used when the page is unknown or sent none)."),
        ("- **pre** = the page's last frame painted at or before the call started (or at or before the "
         "previous step's post time, when that is later)."),
        ("- **post** = the page's last frame painted before the next action started (the last frame of the "
         "trace for the last action). When the action opened a page (the trace's `BrowserContext` `page` "
         "event names the action's page as `openerPageId`, after the action started and by that time: a "
         "popup, a `target=_blank` tab) and that page painted a frame by then, post is the new page's last "
         "frame, and `steps.extra.opened_page` names it. Pages made by `context.new_page()` have no opener "
         "and never count."),
        ("- Screencast frames arrive 8-15 ms after the page paints (measured on Chromium traces). When the "
         "next call starts less than 30 ms after one ends, as in scripted tests, the post time is 30 ms "
         "after the end (never after the next call ended), and the next step's pre frame is that same frame."),
        ("- The screencast only sends a frame when the page repaints: pre and post are the same file when "
         "nothing repainted."),
    ),
    lost=(
        ("Traces carry no agent text, so `reasoning` is the API call and the element it resolved to: "
         'high-risk keywords are found in the element\'s text ("Save", "Submit"), not in an agent\'s intent.'),
        ("The DOM snapshots of the trace (`frame-snapshot` html trees) are not converted to HTML files: "
         "`page.dom_before/after` stay null; the network log (`trace.network`) is not read "
         "(`client.did_network_occur` stays null)."),
        ("Frames are JPEG screencast frames at the page's size: lossy, so faint changes are harder to see, "
         "and the pixel diff judges a blob's shape on what changed by more than 12 levels."),
        ("Bookkeeping calls (newPage, route handlers, evaluate, waits for load states, expect assertions) "
         "are not steps; only user actions are."),
        "A trace records no outcome: `outcome` is empty.",
        ("No tokens or cost (a trace records the browser, not the model). A step's `wall_seconds` is the "
         "trace's clock from the previous action's end to its own (the first: its own start to end)."),
        ("Frames of pages the action did not act on or open are not used: an action that changes another "
         "page already open (a popup writing to its opener, say) is judged on its own page's frames. Older "
         "traces without the `page` event's `openerPageId` give no `opened_page`."),
    ),
    bad_input=("an event line that is not JSON is a warning naming `trace.zip:trace.trace` and the line "
               "(`trace_line_unreadable`), the other events are read; a screencast frame that is missing "
               "from the archive or cannot be unpacked (bad CRC) is a located warning "
               "(`screenshot_missing`, `frame_unreadable`); an archive that is not a zip, has no `*.trace` "
               "member, or has a member whose trace events cannot be unpacked makes the run invalid "
               "(`file_unreadable`); too many members or bytes, `trace_too_large`; a member named with "
               "`..`, an absolute path, a drive letter or a backslash, `path_escapes_run`."),
    fixtures=("The fixtures (`tests/fixtures/playwright_trace/`) are real traces written by Playwright's "
              "own tracing driving Debian's Chromium (see their README); `tests/fixtures/real/playwright` holds two "
              "traces from public repositories (trace formats 4 and 8), with their provenance."),
    brief=("a folder holding a `trace.zip` (read in place, never extracted; member count and size limits; "
           "events streamed; each screencast frame unpacked when a step needs it, with a 32 MiB budget counted "
           "on the bytes produced)",
           "API calls (click, fill, press, goto, mouse, keyboard); `input.point` gives pixel coordinates; frames "
           "are the screencast frames around each call",
           "no agent text (reasoning is the call and its resolved element); DOM snapshots and network log not "
           "read; no outcome"),
)


READER = Reader(
    name=NAME,
    claims=lambda p: claims_plain_dir(p, TRACE_ZIP),
    claim=by_names(TRACE_ZIP),
    read=read_trace,
    summary="Playwright trace.zip: trace.trace action events (before/input/after), screencast frames, "
            "frame snapshots' URLs; read in place, never extracted",
    ends="external",  # how the harness ends a run: DOC.ends says why
    doc=DOC,
)
