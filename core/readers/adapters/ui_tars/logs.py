"""The shapes of UI-TARS logs (:mod:`trajcheck.readers.adapters.ui_tars.reader`), each read into one timeline of actions
and screenshots: a session log's steps, an Agent TARS event stream, a UI-TARS-desktop session."""

from __future__ import annotations

import json
import re
from typing import Any

from ....base.problems import Slug
from ....schemas.records import Action

from ...kit.reading import Frames, Problems
from ...kit.sparse import Results, Timeline
from .actions import map_action, map_flat, parse_reply

#: Keys a harness keeps the model's reply under, in the order they are tried.
REPLY_KEYS = ("response", "prediction", "raw_response", "model_reply", "raw_reply", "model_output", "output")
SHOT_KEYS = ("screenshot", "screenshot_path", "image", "screenshot_file", "image_path")


def _reply(d: dict[str, Any]) -> str | None:
    return next((d[k] for k in REPLY_KEYS if isinstance(d.get(k), str)), None)


#: The side file a UI-TARS harness writes beside its session log: the same steps with the model's ``raw_reply``.
REASONING = "reasoning.json"
_BOX_TOKENS = re.compile(r"<\|box_(?:start|end)\|>")
_ELLIPSIS = ("...", "\u2026")
#: Steps whose replies differ are named one by one up to this many; the rest are counted.
_MOST_CONFLICTS = 10


def _plain(reply: str) -> str:
    """A reply as both files hold it: the harness's ``add_box_token`` wraps the raw reply's ``(x,y)`` in
    ``<|box_start|>``/``<|box_end|>`` and re-joins its actions, so those tokens and spacing do not count."""
    return " ".join(_BOX_TOKENS.sub("", reply).split())


def _cut_short(ours: str, theirs: str) -> bool:
    """The session log's reply is the side file's cut short (a prefix of it, perhaps ending in an ellipsis)."""
    a, b = _plain(ours), _plain(theirs)
    stem = a.rstrip(".\u2026 ") if a.endswith(_ELLIPSIS) else a
    return len(a) < len(b) and b.startswith(stem)


def _number(step: Any, i: int) -> Any:
    n = step.get("step")
    return n if isinstance(n, int) and not isinstance(n, bool) else f"#{i}"


def _listed(names: list[str], most: int = 10) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _in_order(steps: list[Any], more: dict[Any, dict[str, Any]]) -> list[Any]:
    """``steps`` with the steps of ``more`` (by number) each placed before the first step of a higher number
    (those without a number at the end): one pass, whatever their count."""
    numbered = sorted(((k, r) for k, r in more.items() if isinstance(k, int)), key=lambda kr: kr[0])
    out: list[Any] = []
    k = 0
    for s in steps:
        n = s.get("step") if isinstance(s, dict) else None
        while isinstance(n, int) and k < len(numbered) and numbered[k][0] < n:
            out.append(numbered[k][1])
            k += 1
        out.append(s)
    return out + [r for _, r in numbered[k:]] + [r for key, r in more.items() if not isinstance(key, int)]


def merge_reasoning(raw: list[Any], side: list[Any], problems: Problems, file: str) -> list[Any]:
    """A session log's steps with the side file's (:data:`REASONING`) merged in, by step number (``step``; by
    position where a step has none). The side file's reply (``raw_reply``) fills a step whose reply is missing,
    empty or cut short, and its ``thought`` a step without one; where both hold a reply and they differ, the
    session log's is kept and a ``reply_conflict`` warning names the step. Steps only the side file holds are
    added in step order, never dropped. One ``reasoning_merged`` note says what was taken."""
    theirs: dict[Any, dict[str, Any]] = {}
    for j, r in enumerate(side):
        if isinstance(r, dict):
            theirs.setdefault(_number(r, j), r)
    filled: list[str] = []
    conflicts: list[int] = []
    out: list[Any] = []
    for i, s in enumerate(raw):
        r = theirs.pop(_number(s, i), None) if isinstance(s, dict) else None
        if r is None:
            out.append(s)
            continue
        s = dict(s)
        ours, reply = _reply(s), _reply(r)
        if reply and reply.strip():
            if ours is None or not ours.strip() or _cut_short(ours, reply):
                s[next((k for k in REPLY_KEYS if isinstance(s.get(k), str)), "raw_reply")] = reply
                filled.append(str(_number(s, i)))
            elif _plain(ours) != _plain(reply):
                conflicts.append(i)
                if len(conflicts) <= _MOST_CONFLICTS:
                    problems.warn(Slug.REPLY_CONFLICT, f"step {_number(s, i)}: the session log's reply and {file}'s "
                                  f"differ ({_plain(ours)[:80]!r} / {_plain(reply)[:80]!r}); the session log's is "
                                  "read", field=f"steps[{i}]", hint=f"check which file the harness wrote last; {file} "
                                  "is used only where the session log has no reply")
        if not (isinstance(s.get("thought"), str) and s["thought"].strip()) and isinstance(r.get("thought"), str):
            s["thought"] = r["thought"]
        out.append(s)
    if len(conflicts) > _MOST_CONFLICTS:
        problems.warn(Slug.REPLY_CONFLICT, f"and {len(conflicts) - _MOST_CONFLICTS} more steps whose replies differ; "
                      "the session log's are read", hint="check which file the harness wrote last")
    added = [str(k) for k in theirs]
    out = _in_order(out, theirs)
    if filled or added:
        what = [f"fills the reply of step{'s' * (len(filled) > 1)} {_listed(filled)} (missing or cut short in the "
                "session log)"] if filled else []
        what += [f"adds step{'s' * (len(added) > 1)} {_listed(added)}, which the session log does not hold"] \
            if added else []
        problems.warn(Slug.REASONING_MERGED, f"{file} beside the session log {' and '.join(what)}", file=file,
                      hint="nothing to do: both files are read")
    return out


class Builder:
    """A log's actions and screenshots in order (a :data:`Timeline`), with what each step said."""

    def __init__(self, frames: Frames, problems: Problems):
        self.frames, self.problems = frames, problems
        self.timeline: Timeline = []
        self.results: Results = {}
        self.flat = 0  # actions read from a harness's flat shape (executed points, in screen pixels)
        #: (executed point, the reply's point) of steps that record both: do they agree, or how do they scale?
        self.pairs: list[tuple[tuple[float, float], tuple[float, float]]] = []
        self.unreadable: list[Any] = []  # flat actions the harness itself could not parse (type raw / none)
        self.fractions = False

    def frame(self, shot: Any, field: str) -> None:
        if isinstance(shot, str) and shot:
            name = self.frames.from_any(shot, field)
            if name:
                self.timeline.append(("frame", name))

    def act(self, action: Action, reasoning: str | None, call_id: str | None, i: int) -> None:
        self.timeline.append(("act", action, reasoning, call_id, i))

    def unknown(self, what: str, raw: Any, i: int, field: str, reasoning: str | None) -> None:
        """An action that cannot be read: an UNKNOWN step and a warning naming it, never a dropped step."""
        self.problems.warn(Slug.ACTION_UNPARSED, what, field=field, hint="the step is scored as an UNKNOWN action")
        self.act(Action("UNKNOWN", extra={"raw": raw if isinstance(raw, str) else json.dumps(raw)[:2000]}),
                 reasoning, None, i)

    def reply_actions(self, reply: str | None, i: int, field: str, reasoning: str | None,
                      call_id: str | None = None) -> bool:
        """The actions of a UI-TARS reply (True when it had any, or an unreadable call that is now UNKNOWN)."""
        if not reply:
            return False
        return self.reply_calls(parse_reply(reply), i, field, reasoning, call_id)

    def reply_calls(self, parsed: tuple[str | None, list[tuple[str, dict[str, str]]], list[str]], i: int,
                    field: str, reasoning: str | None, call_id: str | None = None) -> bool:
        """The actions of a parsed reply (:func:`parse_reply`'s thought, calls and unreadable calls)."""
        thought, calls, bad = parsed
        for kind, inputs in calls:
            a = map_action(kind, inputs)
            a.extra["from_reply"] = True  # the model's point, in the model's space (not an executed one)
            self.named(a, reasoning or thought, call_id, i, field)
        for text in bad:
            self.unknown(f"the action call {text[:120]!r} does not parse", text, i, field, reasoning or thought)
        return bool(calls or bad)

    def named(self, action: Action, reasoning: str | None, call_id: str | None, i: int, field: str) -> None:
        if action.type == "UNKNOWN":
            self.problems.warn(Slug.ACTION_UNPARSED, f"{action.extra.get('tool_action')!r} is not a UI-TARS action "
                               "trajcheck knows", field=field, hint="the step is scored as an UNKNOWN action")
        self.act(action, reasoning, call_id, i)

    def parsed(self, parsed: Any, i: int, field: str, reasoning: str | None) -> bool:
        """A harness's parsed action(s): UI-TARS's structure (one or a list) or the flat shape."""
        items = parsed if isinstance(parsed, list) else [parsed]
        items = [p for p in items if isinstance(p, dict)]
        done = False
        for p in items:
            if p.get("action_type"):
                given = p.get("action_inputs")
                inputs = dict(given) if isinstance(given, dict) else {}
                fractions = _fractions(inputs)
                self.fractions |= fractions
                self.named(map_action(str(p["action_type"]), inputs, fractions), reasoning or _str(p.get("thought")),
                           None, i, field)
                done = True
            elif "type" in p:
                action = map_flat(p)
                if action is None:
                    self.unreadable.append(p)  # raw / none: the harness could not parse the reply; the reply is read
                    continue
                self.flat += 1
                self.act(action, reasoning, None, i)
                done = True
        return done


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v.strip() else None


def _fractions(inputs: dict[str, Any]) -> bool:
    """UI-TARS's parser gives boxes as fractions of the screen (``"[0.5, 0.5, 0.5, 0.5]"``)."""
    box = inputs.get("start_box") or inputs.get("end_box")
    nums = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", str(box))] if box is not None else []
    return bool(nums) and all(0.0 <= n <= 1.0 for n in nums) and "." in str(box)


def _pair(b: Builder, before: int, said: tuple[str | None, list[tuple[str, dict[str, str]]], list[str]]) -> None:
    """When a step's flat action (the point executed) and its reply (the model's point) both name a point, keep
    the pair: the run's reply points are then read in the space the pairs show."""
    if b.flat == before or not said[1]:
        return
    executed = next((t[1].point for t in reversed(b.timeline) if t[0] == "act"), None)
    model = map_action(*said[1][0]).point
    if executed is not None and model is not None:
        b.pairs.append((executed, model))


def session_steps(b: Builder, raw: list[Any]) -> bool:
    """A session log's steps; True when the last one says the session finished."""
    finished = False
    for i, s in enumerate(raw):
        field = f"steps[{i}]"
        if not isinstance(s, dict):
            b.problems.error(Slug.SCHEMA, f"step is a {type(s).__name__}, not an object", field=field,
                             hint="each step is {screenshot, response, parsed_action}")
            continue
        b.frame(next((s[k] for k in SHOT_KEYS if isinstance(s.get(k), str) and s.get(k)), None), f"{field}.screenshot")
        reply = _reply(s)
        said = parse_reply(reply) if reply else (None, [], [])  # once per step: the thought and the calls
        reasoning = _str(s.get("thought"))
        parsed = s.get("parsed_action", s.get("action"))
        b.unreadable.clear()
        flat = b.flat
        if b.parsed(parsed, i, f"{field}.parsed_action", reasoning or said[0]):
            _pair(b, flat, said)
        else:
            read = b.reply_calls(said, i, field, reasoning) if reply else False
            if not read:
                what = (f"the parsed action {json.dumps(b.unreadable[0])[:120]} is no action, and the reply holds "
                        "no Action: call" if b.unreadable else "no parsed action and no Action: call in the reply")
                b.unknown(what, reply if reply is not None else parsed, i, field, reasoning)
        finished = str(s.get("status_after_action") or s.get("status") or "").upper() in ("FINISHED", "DONE")
    return finished


def events(b: Builder, events: list[Any]) -> tuple[str | None, str | None]:
    """An Agent TARS event stream: the goal and a final answer (an assistant message that calls no tool)."""
    goal = final = None
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            continue
        kind = e.get("type")
        if kind == "user_message":
            content = e.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for j, c in enumerate(x for x in blocks if isinstance(x, dict)):
                if c.get("type") == "image_url" and isinstance(c.get("image_url"), dict):
                    b.frame(c["image_url"].get("url"), f"[{i}].content[{j}]")
                elif goal is None and isinstance(c.get("text"), str) and c["text"].strip():
                    goal = c["text"].strip()
        elif kind == "tool_call":
            args: dict[str, Any] = given if isinstance(given := e.get("arguments"), dict) else {}
            cid = str(e.get("toolCallId") or e.get("id"))
            if not b.reply_actions("Action: " + str(args.get("action", "")), i, f"[{i}].arguments.action",
                                   _str(args.get("thought")), cid):
                b.unknown(f"the tool call {e.get('name')!r} holds no action", args, i, f"[{i}]", None)
            final = None
        elif kind == "tool_result":
            content = e.get("content")
            status = content.get("status") if isinstance(content, dict) else None
            failed = status not in (None, "success") or bool(e.get("error"))
            b.results[str(e.get("toolCallId"))] = (failed, str(e.get("error") or status or "")[:2000] or None)
        elif kind == "assistant_message":
            final = None if e.get("toolCalls") else _str(e.get("content"))
    return goal, final


def desktop(b: Builder, data: dict[str, Any]) -> tuple[str | None, tuple[int, int] | None]:
    """A UI-TARS-desktop session (``conversations``): the instruction and the screen size it records."""
    size = None
    for i, c in enumerate(data.get("conversations") or []):
        if not isinstance(c, dict):
            continue
        if c.get("from") == "human":
            shot = c.get("screenshotBase64")
            ctx: dict[str, Any] = given if isinstance(given := c.get("screenshotContext"), dict) else {}
            sz: dict[str, Any] = got if isinstance(got := ctx.get("size"), dict) else {}
            if size is None and isinstance(sz.get("width"), int) and isinstance(sz.get("height"), int):
                size = (sz["width"], sz["height"])
            b.frame(shot, f"conversations[{i}].screenshotBase64")
        elif c.get("from") == "gpt":
            thought = parse_reply(c["value"])[0] if isinstance(c.get("value"), str) else None
            if not b.parsed(c.get("predictionParsed"), i, f"conversations[{i}].predictionParsed", thought):
                b.reply_actions(_str(c.get("value")), i, f"conversations[{i}].value", thought)
    goal = data.get("instruction")
    return (goal if isinstance(goal, str) else None), size
