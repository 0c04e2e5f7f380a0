"""OpenAI Responses transcripts of a computer-use (CUA) loop.

A run is a directory holding one transcript of the loop's items, in the shapes of the Responses API and
of OpenAI's reference loop (openai/openai-cua-sample-app, agent/agent.py): a JSON list of items, an
object with ``items`` (or with the request's ``input`` and the response's ``output``, and the ``tools``),
a list of responses (each with its ``output``), or JSONL with one item or one response per line.

* ``computer_call`` {call_id, action: {type: click (button, x, y), double_click, scroll (x, y, scroll_x,
  scroll_y), type (text), keypress (keys), move, drag (path), wait, screenshot}, pending_safety_checks};
* ``computer_call_output`` {call_id, output: a ``computer_screenshot`` (or ``input_image``) whose
  ``image_url`` is a data URL or a file path, current_url, acknowledged_safety_checks};
* ``reasoning`` {summary: [{text}]} and ``message`` items: the reasoning of the next call, and the final
  answer (the DONE);
* the ``computer_use_preview`` tool's ``display_width``/``display_height``: the coordinate space.

Frames and groups of actions that share a frame pair follow :mod:`trajcheck.readers.kit.sparse`, as for the
Anthropic reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...kit.reader import FormatDoc, Reader, Table
from ....base.errors import Problem
from ....base.problems import Slug
from ....base.jsonio import parse_json_text
from ....schemas.records import Action, Page, Run, Step

from ...kit.shape import walk
from ...kit.reading import (MAX_HISTORY_BYTES, Frames, Problems, Sniffer, jsonl_values, read_text_file, run_id_of,
                            split_run)
from .actions import map_action
from ...kit.sparse import Results, Timeline, last_frame, steps_of, trailing_usage, with_usage
from ...kit.stream import StreamError, stream_items, stream_lines, streams
from ...kit.usage import elapsed, openai_usage, seconds_of

NAME = "openai-responses"
_LOOKS = frozenset({"screenshot"})
#: The item :func:`_flatten` puts before a response's output: its usage, model and times (not the API's: a
#: transcript's own items never have this type).
_RESPONSE = "trajcheck:response"

def _shape(value: Any) -> str | None:
    """A transcript holds a computer_call item (a list of items, a response's output, a request's input)."""
    if any(isinstance(n, dict) and n.get("type") == "computer_call" for n in walk(value)):
        return "an OpenAI Responses transcript (computer_call items)"
    return None


SNIFF = Sniffer(_shape, "items.json", what="an OpenAI Responses transcript (computer_call items)")
claims = SNIFF.claims


def _flatten(value: Any, req: dict[str, Any]) -> list[Any]:
    """The items of a transcript in order, whatever its container; the request's fields go to ``req``."""
    if isinstance(value, list):
        out: list[Any] = []
        for v in value:
            out += _flatten(v, req) if isinstance(v, dict) and "type" not in v and (
                "output" in v or "input" in v or "items" in v) else [v]
        return out
    if isinstance(value, dict) and isinstance(value.get("type"), str) and value["type"] != "response":
        return [value]  # one item saved alone (a computer_call cut out of a response)
    if isinstance(value, dict) and isinstance(value.get("new_items"), list):  # cua's metadata.json: the run's items
        kw = value["kwargs"] if isinstance(value.get("kwargs"), dict) else {}
        value = {"input": kw.get("messages"), "items": value["new_items"], "model": kw.get("model")}
    if isinstance(value, dict):
        for k in ("tools", "model", "task_id", "metadata"):
            if k in value and k not in req:
                req[k] = value[k]
        items: list[Any] = []
        for k in ("input", "items", "output"):
            if k == "output" and isinstance(value.get("output"), list) and any(
                    f in value for f in ("usage", "created_at")):  # a Response: what its call used, and when
                items.append({"type": _RESPONSE, **{f: value.get(f) for f in ("usage", "model", "created_at",
                                                                              "completed_at")}})
            if isinstance(value.get(k), list):
                items += value[k]
            elif isinstance(value.get(k), str) and k == "input":
                items.append({"role": "user", "content": value[k]})
        return items
    return []


def _items_of(text: str, rel: str, run: str, problems: list[Problem]) -> tuple[list[Any], dict[str, Any]]:
    req: dict[str, Any] = {}
    if rel.endswith(".jsonl"):
        items: list[Any] = []
        for value in jsonl_values(text, run=run, rel=rel, problems=problems):
            items += _flatten([value], req)
        return items, req
    data, p = parse_json_text(text, run=run, file=rel)
    if p:
        problems.append(p)
        return [], req
    return _flatten(data, req), req


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content.strip() or None
    if isinstance(content, list):
        parts = [c.get("text", "").strip() for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]
        return "\n".join(p for p in parts if p) or None
    return None


def _image_of(frames: Frames, url: Any, field: str) -> str | None:
    if not isinstance(url, str) or not url:
        return None
    if url.startswith("data:"):
        return frames.from_base64(url, field)
    if "://" in url and not url.startswith("file://"):
        return None  # a remote URL: nothing to read offline
    return frames.from_path(url.removeprefix("file://"), field)


@dataclass
class _Transcript:
    """What the items say, in order: actions and screenshots (the timeline), each call's result, URL and
    acknowledged safety checks, the goal, and the final answer after the last call."""

    timeline: Timeline = field(default_factory=list)
    results: Results = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)
    safety: dict[str, Any] = field(default_factory=dict)
    goal: str | None = None
    final_text: str | None = None
    #: Each response's entry in the timeline, and when it was created and completed (epoch seconds).
    responses: list[tuple[int, float | None, float | None]] = field(default_factory=list)


def _response_seconds(t: _Transcript) -> None:
    """Each response's seconds, into its timeline entry: from its ``created_at`` to the next response's (its
    call, then the actions it issued and the screenshot after them); the last response, to its own
    ``completed_at`` when it issued no action (a final answer), else unknown."""
    for k, (pos, created, completed) in enumerate(t.responses):
        if k + 1 < len(t.responses):
            end = t.responses[k + 1][1]
        else:
            end = None if any(e[0] == "act" for e in t.timeline[pos + 1:]) else completed
        t.timeline[pos] = ("usage", t.timeline[pos][1], elapsed(created, end))


def _read_items(items: Iterable[Any], frames: Frames, problems: Problems) -> _Transcript:
    t = _Transcript()
    reasoning = None
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            continue
        kind = it.get("type") or ("message" if "role" in it else None)
        if kind == _RESPONSE:
            t.responses.append((len(t.timeline), seconds_of(it.get("created_at")), seconds_of(it.get("completed_at"))))
            t.timeline.append(("usage", openai_usage(it.get("usage"), it.get("model")), None))
        elif kind == "message" and it.get("role") == "user":
            if t.goal is None:
                t.goal = _text_of(it.get("content"))
            for j, c in enumerate(content if isinstance(content := it.get("content"), list) else []):
                if isinstance(c, dict) and c.get("type") == "input_image":
                    name = _image_of(frames, c.get("image_url"), f"items[{i}].content[{j}].image_url")
                    if name:
                        t.timeline.append(("frame", name))
        elif kind == "reasoning":
            summary = it.get("summary") if isinstance(it.get("summary"), list) else []
            reasoning = _text_of(summary) or reasoning
        elif kind == "message" and it.get("role") == "assistant":
            text = _text_of(it.get("content"))
            if it.get("phase") != "commentary":  # commentary narrates between calls: it is no final answer
                t.final_text = text
            reasoning = text or reasoning
        elif kind == "computer_call":
            acts: list[Any] = given if isinstance(given := it.get("actions"), list) else [it.get("action")]
            call = str(it.get("call_id") or it.get("id"))
            for k, a in enumerate(acts):  # a batch: every action runs, then one screenshot shows them all
                action = map_action(a) if isinstance(a, dict) else Action("UNKNOWN", extra={"raw": repr(a)[:200]})
                if action.type == "UNKNOWN":
                    problems.warn(Slug.ACTION_UNPARSED, f"computer_call action {action.extra.get('raw')!r} is not one "
                                  "trajcheck knows", field=f"items[{i}].action" + (f"s[{k}]" if len(acts) > 1 else ""),
                                  hint="the step is scored as an UNKNOWN action")
                if it.get("pending_safety_checks"):
                    action.extra["pending_safety_checks"] = it["pending_safety_checks"]
                if len(acts) > 1:
                    action.extra["batch"] = [k, len(acts)]
                t.timeline.append(("act", action, reasoning, call, i))
            t.final_text = None
            reasoning = None
        elif kind == "computer_call_output":
            _call_output(it, i, frames, t)
    _response_seconds(t)
    return t


def _call_output(it: dict[str, Any], i: int, frames: Frames, t: _Transcript) -> None:
    """A call's output: its screenshot, the page's URL, the acknowledged safety checks, an error."""
    call = str(it.get("call_id"))
    out = given if isinstance(given := it.get("output"), dict) else {}
    name = _image_of(frames, out.get("image_url"), f"items[{i}].output.image_url")
    if name:
        t.timeline.append(("frame", name))
    url = out.get("current_url") or it.get("current_url")
    if isinstance(url, str):
        t.urls[call] = url
    if it.get("acknowledged_safety_checks"):
        t.safety[call] = it["acknowledged_safety_checks"]
    err = out.get("error") or it.get("error")
    t.results[call] = (bool(err), str(err) if err else None)


def _screen(req: dict[str, Any]) -> tuple[int | None, int | None]:
    w = h = None
    for tool in req.get("tools") or []:
        if isinstance(tool, dict) and str(tool.get("type", "")).startswith("computer"):
            tw, th = tool.get("display_width"), tool.get("display_height")
            if isinstance(tw, int) and isinstance(th, int) and tw > 0 and th > 0:
                w, h = tw, th
    return w, h


def _whole(run_dir: Path, rel: str, run_id: str, problems: Problems) -> tuple[list[Any], dict[str, Any]]:
    """The transcript read whole: its items and the request's fields; raises on a file that does not parse."""
    text = read_text_file(run_dir / rel, run=run_id, rel=rel, problems=problems, limit=MAX_HISTORY_BYTES)
    items, req = _items_of(text, rel, run_id, problems) if text is not None else ([], {})
    problems.raise_errors()
    return items, req


def _streamed(path: Path, req: dict[str, Any], problems: Problems) -> Iterator[Any]:
    """The items of a large transcript, one at a time: a top-level list (of items or of responses) or
    ``{items}``; the request's other fields (and an ``{input, output}`` transcript's items, read whole) after.
    JSONL: a line at a time, each an item or a response, as :func:`_items_of` reads the whole text."""
    if path.name.endswith(".jsonl"):
        for value in stream_lines(path, run=problems.run, rel=problems.file, problems=problems):
            yield from _flatten([value], req)
        return
    meta: dict[str, Any] = {}
    for v in stream_items(path, "items", meta):
        yield from _flatten([v], req)
    yield from _flatten(meta, req)


def entries(path: Path) -> list[str]:
    """A folder holding several transcripts gives their names: each is a run of its own."""
    found = SNIFF.every(path)
    return sorted(p.name for p, _ in found) if len(found) > 1 else []


def read_openai_responses(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one OpenAI computer-use transcript (see the module's docstring and :data:`DOC`)."""
    run_id = run_id_of(run_dir, display)
    run_dir, only = split_run(run_dir)
    problems = Problems(run_id)
    rel = problems.file = only or SNIFF.pick(run_dir, run_id, problems)
    frames = Frames(run_dir, run_id, rel, problems)
    if streams(run_dir, rel, MAX_HISTORY_BYTES, (".json", ".jsonl")):  # a large transcript: an item at a time
        req: dict[str, Any] = {}
        try:
            t = _read_items(_streamed(run_dir / rel, req, problems), frames, problems)
        except StreamError as exc:
            _whole(run_dir, rel, run_id, problems)  # the JSON error, located, makes the run invalid
            problems.error(Slug.JSON_INVALID, f"the transcript stops being JSON: {str(exc).splitlines()[0]}",
                           hint="re-export the transcript")
            problems.raise_errors()
            raise
    else:
        items, req = _whole(run_dir, rel, run_id, problems)
        t = _read_items(items, frames, problems)
    steps = steps_of(t.timeline, t.results, rel, _LOOKS)
    steps = [_with_url(s, t.urls, t.safety) for s in steps]
    steps = _urls_before(steps)
    if t.final_text is not None:  # the outcome: an answer after the last call is the DONE
        last = last_frame(t.timeline)
        steps.append(Step(index=len(steps), action=Action("DONE", text=t.final_text), reasoning=t.final_text,
                          source=rel, frame_pre=last, frame_post=last))
    if steps:  # the usage of the responses after the last call: the final answer's
        steps[-1] = with_usage(steps[-1], *trailing_usage(t.timeline))
    if not any(s.action.type != "DONE" for s in steps):
        problems.error(Slug.STEPS_EMPTY, "the transcript has no computer_call",
                       hint="a run needs at least one action of the computer-use tool")
    problems.raise_errors()
    w, h = _screen(req)
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps), goal=t.goal,
              agent_name="openai computer use", agent_model=req.get("model") if isinstance(req.get("model"), str)
              else None, screen_width=w, screen_height=h, outcome_status="done" if t.final_text is not None else None,
              extra={k: req[k] for k in ("task_id", "metadata") if k in req}, inline_frames=frames.inline,
              outside_files=frames.outside)
    return run, problems.warnings()


def _with_url(s: Step, urls: dict[str, str], safety: dict[str, Any]) -> Step:
    call = s.extra.get("tool_use_id")
    extra = dict(s.extra)
    if call in safety:
        extra["acknowledged_safety_checks"] = safety[call]
    url = urls.get(call) if call else None
    return replace(s, page=Page(url_after=url) if url else None, extra=extra)


def _urls_before(steps: list[Step]) -> list[Step]:
    """A step's page before is the page after the step before it (the loop records URLs after calls)."""
    out: list[Step] = []
    prev = None
    for s in steps:
        if s.page is not None or prev is not None:
            s = replace(s, page=Page(url_before=prev, url_after=s.page.url_after if s.page else None))
        if s.page and s.page.url_after:
            prev = s.page.url_after
        out.append(s)
    return out


DOC = FormatDoc(
    ends=("OpenAI's reference loop (openai-cua-sample-app) runs until the model answers with a message, in a "
          'session a person may stop, and other harnesses save these items with their own limits and checks: '
          'a transcript that ends on a `computer_call_output` may have been stopped from outside.'),
    title="OpenAI computer-use transcripts",
    claims=("A run is a directory holding one transcript of a loop driving the Responses API's "
            "`computer_use_preview` tool: a JSON list of items, an object with `items` (or the request's "
            "`input` and the response's `output`) and the `tools`, a list of responses (each with its "
            "`output`), JSONL with one item or one response per line, or cua's `metadata.json` (its "
            "`new_items`; the goal in `kwargs.messages`). Claimed by the "
            "shape of its data: a `computer_call` item (an object, not words in a string) in the parsed data "
            "(the whole file, or as much as its first 256 KiB hold) of one of the folder's first 8 JSON files. "
            "A folder holding "
            "several transcripts is a run per file, named by the file."),
    example=("trajcheck score transcripts/ --out LEDGER          # one folder per transcript\n"
             "trajcheck formats openai-responses"),
    about=(
        ("Shapes as the Responses API documents them and as OpenAI's reference loop writes them "
         "(openai-cua-sample-app, `agent/agent.py`: each call's output is a screenshot, with `current_url` in "
         "a browser environment); openai/openai-python at e43b4224 "
         "(`types/responses/response_computer_tool_call.py`: `action` or a batched `actions` list, "
         "`pending_safety_checks`, `keys` held on a click; `response_output_message.py`: a message's `phase`, "
         "`commentary` or `final_answer`)."),
    ),
    tables=(
        Table(head=("transcript", "trajcheck"), rows=(
            ("`tools[type=computer_use_preview]` `display_width`, `display_height`", "`screen`"),
            ("first user message's text; its `input_image`", "`goal`; the first frame"),
            ("`reasoning` `summary[].text` (or an assistant message before a call)", "`reasoning` of the next call"),
            ("`computer_call` `action` `click` {button, x, y}",
             ("`CLICK` (`right`: `RIGHT_CLICK`, `wheel`: `MIDDLE_CLICK`, `back`/`forward`: "
              "`BACK_CLICK`/`FORWARD_CLICK`)")),
            ("`double_click`, `scroll` {scroll_x, scroll_y}, `type`, `move`, `drag` {path}",
             "`DOUBLE_CLICK`, `SCROLL` (`extra.scroll_x`, `scroll_y`), `TYPE`, `MOUSE_MOVE`, `DRAG` to the "
             "path's last point (`extra.start`)"),
            ("`move` then a click without a point", "one click at the moved-to point"),
            ('`keypress` {keys: ["CTRL", "A"]}',
             "`KEY_PRESS` `ctrl+a` (`ENTER`: `Return`, a submit; `CTRL`+`S`: a save shortcut)"),
            ("`wait`, `screenshot`", "`WAIT`"),
            ("`computer_call` `actions` [...] (a batch: every action runs, then one screenshot)",
             "one step per action (`extra.batch`), sharing the screenshot after the batch (`shared_frames`)"),
            ("an action type trajcheck does not know", "`UNKNOWN` (warning `action_unparsed`)"),
            ("`pending_safety_checks`, `acknowledged_safety_checks`", "`steps.extra`"),
            ("`computer_call_output` `output.image_url` (data URL, or a path inside the run)",
             "the frames around each call"),
            ("`output.current_url`", "`page.url_after`, and the next step's `url_before`"),
            ("the last assistant `message` after the last call, unless its `phase` is `commentary`",
             "a `DONE` step with its text (`outcome.status = done`); commentary is reasoning, no final answer"),
            (("a response's `usage`: `input_tokens`, `input_tokens_details.cached_tokens`, `output_tokens`, "
              "`output_tokens_details.reasoning_tokens`"),
             ("`tokens_input` (cached included), `tokens_cached`, `tokens_output` (reasoning included), "
              "`tokens_reasoning`, on the step of the response whose effect is checked (its last high-risk "
              "action, else its last acting one); a final answer's on the `DONE`")),
            ("a response's `created_at` (and `completed_at`)",
             ("`wall_seconds`: from its `created_at` to the next response's (its call, the actions it issued "
              "and the screenshot after them); the last response, to its own `completed_at` when it issued no "
              "action")),
            ("a response's `model`", "`agent.model`: the model `--prices` prices"),
        )),
    ),
    notes=("Several calls between two screenshots share them as for `anthropic-messages` (`shared_frames`).",
           ("**Large transcripts.** Past 32 MiB a transcript is read an item at a time: JSON with ijson (a list, "
            "or `items`), JSONL a line at a time; each screenshot is decoded as it is reached, the text is never "
            "held whole.")),
    lost=(
        "No DOM and no page titles.",
        ("A screenshot given only as a remote URL (nothing to read offline) leaves its steps without "
         "frames."),
        ("Items saved without the responses around them (a list of items, `{items}`) carry no usage and no "
         "times: no tokens, no `wall_seconds`."),
    ),
    bad_input=("a transcript that is not JSON (or a JSONL line that is not) makes the run invalid with its "
               "file and line (`json_invalid`); a transcript without a `computer_call`, `steps_empty`; an "
               "inline screenshot that is not base64 or not an image is a warning (`frame_unreadable`)."),
    fixtures=("The fixture `tests/fixtures/openai/cua-newsletter` is recorded in Chromium by "
              "`tests/fixtures/anthropic/make_fixtures.py`; `tests/fixtures/real/openai` holds output the GA "
              "`computer` tool really returned (batched `actions`; no screenshots), with its provenance."),
    brief=("a folder holding one transcript of a CUA loop (a JSON list of Responses items, `{items}` or "
           "`{input, output}` with the `tools`, a list of responses, or JSONL), claimed by content: "
           "`computer_call` items",
           "`computer_call` actions click (button), double_click, scroll (scroll_x/y), type, keypress (`[CTRL, "
           "A]` becomes `ctrl+a`, `ENTER` a submit), move, drag (path), wait, screenshot, in the declared "
           "`display_width`/`display_height`; frames are the `computer_call_output` screenshots (data URL or "
           "path) and a user message's `input_image`; `current_url` gives the pages; safety checks kept in "
           "`extra`",
           "no DOM; the final assistant message is the DONE"),
)


READER = Reader(
    name=NAME,
    claims=claims,
    claim=SNIFF.claim,
    read=read_openai_responses,
    entries=entries,
    summary="OpenAI Responses transcript of a computer-use (CUA) loop: computer_call and computer_call_output "
            "items (a JSON list, {items} or {input, output}, responses, or JSONL)",
    ends="external",  # how the harness ends a run: DOC.ends says why
    doc=DOC,
)
