"""Logs of any other shape, read through a mapping file: ``trajcheck score LOGS --mapping my-harness.toml``.

The mapping names, with JMESPath expressions (the ``jmespath`` library), where a log's steps are and, for
a step, its action type (with a value map), point, keys, text, reasoning, URL and screenshot, and whether
that screenshot was taken before or after the step's action. Each directory holding a file that matches
``[run] files`` and whose ``steps`` expression gives a non-empty list is one run::

    [run]
    files = "*.json"                  # the log file in a run directory (glob; the first match is read)
    steps = "history"                 # JMESPath to the list of steps
    goal = "task"                     # optional run fields: run_id, task_id, goal, model
    screen = [1280, 800]              # or screen_width / screen_height expressions
    coordinates = "pixels"            # or "relative-1000" (0-999 across the screen)
    ends = "answer"                   # or "external": how the harness ends a run (docs/referee.md)

    [step]
    type = "action.name"              # required
    x = "action.point[0]"             # optional step fields: x, y, keys, text, url, reasoning, error
    y = "action.point[1]"
    reasoning = "thought"
    screenshot = "screenshot"         # a path inside the run directory, or base64 / a data: URL
    screenshot_is = "pre"             # "pre" (what the agent saw before acting) or "post"
    screenshots_offset = 0            # 1: each step's screenshot is the one the step after it names

    [step.types]                      # the log's action names -> trajcheck's (others: upper-cased)
    tap = "CLICK"
    input = "TYPE"
    finish = "DONE"

What a step's model call used, and its time, where the log records them (each optional; nothing is
estimated)::

    [step]
    tokens_input = "usage.input_tokens"         # every input token, cached ones included
    tokens_output = "usage.output_tokens"       # every output token, reasoning included
    tokens_cached = "usage.cache_read_input_tokens"
    tokens_reasoning = "usage.output_tokens_details.reasoning_tokens"
    cost_usd = "cost"                           # a cost the harness recorded, in USD
    wall_seconds = "duration_s"                 # the step's elapsed seconds; or:
    timestamp = "finished_at"                   # when the step ended (ISO 8601 or epoch seconds): its
                                                # seconds are the time since the previous step's

A harness that writes one file per step (``step_01.json``, ``turn_003/0002_agent_response.json``) is read
with ``[run] step_files``, a glob relative to the run directory: its matches in natural order (step_10
after step_9), each one step (or, with ``steps``, the list that expression gives on it). The run fields are
read from the first step file, the goal may come from a text file, and a screenshot path is relative to
its step file's folder; ``screenshot_file`` names a screenshot beside each step file by its stem::

    [run]
    step_files = "step_*.json"
    goal_file = "task_*.txt"          # optional: the goal as a text file in the run directory

    [step]
    type = "response[?type=='tool_use'] | [0].input.action"
    screenshot_file = "{stem}.png"    # step_01.json -> step_01.png
    screenshot_is = "post"

``trajcheck validate LOGS --mapping FILE`` reports a mapping whose expressions match nothing, with the
file and the expression. docs/mappings/ holds two of trajcheck's own adapters' formats written as mappings.
"""

from __future__ import annotations

from functools import lru_cache, partial
from pathlib import Path

from ..kit.reader import Reader
from .schema import MAX_LOG_BYTES, Mapping, _load
from .read import read_mapped
from . import text as textlog
from ...base.errors import Problem
from ...base.problems import Slug

__all__ = ["Mapping", "read_mapped", "reader_of", "compiled", "explain"]


def reader_of(m: Mapping) -> Reader:
    """The reader of the runs mapping ``m`` reads, named ``mapping:<stem>@<hash>`` (the runs' source_format). It is
    no process-wide registration: each call that has a mapping hands its reader to discovery and to the readers of
    its runs (:func:`trajcheck.readers.discovery.discover`'s ``extra``), so a mapping never lingers into a later
    call, and a worker process gets it from the score options (:func:`compiled`)."""
    return Reader(name=m.name, claims=m.claims, read=partial(read_mapped, m),
                  summary=f"logs read through the mapping {m.path}", ends=m.ends)


@lru_cache(maxsize=8)
def compiled(path: str, source: bytes) -> Reader:
    """The reader of the mapping file at ``path`` whose bytes are ``source``, compiled once per process: a worker
    gets the mapping as data with every run it scores, and compiles it on the first (UsageError for a mapping that
    is not one; the caller compiled the same bytes before, so a worker does not meet it)."""
    return reader_of(Mapping(Path(path), source))


def explain(path: str | Path, paths: list[str]) -> list[Problem]:
    """Why a mapping read no run under ``paths``: for the first files matching its ``files`` glob, what its
    ``steps`` expression gave (``mapping_matches_nothing``, an error)."""
    m = Mapping(Path(path))
    out: list[Problem] = []
    seen = 0
    for root in paths:
        for p in sorted(Path(root).rglob(m.files)) if Path(root).is_dir() else []:
            if seen >= 5 or not p.is_file() or p.stat().st_size > MAX_LOG_BYTES:
                continue
            seen += 1
            out.append(_why_not(m, p))
    if not seen:
        out.append(Problem(Slug.MAPPING_MATCHES_NOTHING, f"no file matches [run] files = {m.files!r} of {m.path.name}",
                           file=str(paths[0]) if paths else "", field="run.files",
                           hint="set files to the log's name pattern, e.g. \"*.json\""))
    return out


def _why_not(m: Mapping, p: Path) -> Problem:
    """Why ``[run] steps`` (or ``lines``) gives no step in the log ``p``, with what the file holds."""
    text = p.read_text("utf-8", errors="replace")
    if m.lines is not None or m.blocks is not None:
        text = textlog.text_of(p.name, text)  # what the patterns see: an HTML log's text
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")[:120]
        if m.blocks is not None:
            return Problem(Slug.MAPPING_MATCHES_NOTHING, f"no stretch of this file's text matches [run] blocks of "
                           f"{m.path.name}", file=str(p), field="run.blocks",
                           hint="check the regular expression against the text (an HTML log: its text, images as "
                                f"![alt](src) lines); it starts {first!r}")
        return Problem(Slug.MAPPING_MATCHES_NOTHING, f"no line of this file matches [run] lines of {m.path.name}",
                       file=str(p), field="run.lines", hint=f"check the regular expression against a line, e.g. "
                       f"{first!r}")
    value = _load(text, p.name, p.parent.name, [])
    got = m.get("run.steps", value)
    what = "nothing" if got is None else f"a {type(got).__name__}" + (" (empty)" if got in ([], {}) else "")
    if value is None:
        holds = "the file is not JSON (for a text log, set [run] lines to a regular expression per step, or blocks "\
            "to one per step of several lines)"
    elif isinstance(value, dict):
        holds = "top-level keys: " + ", ".join(sorted(str(k) for k in value)[:8])
    else:
        holds = f"the file holds a {type(value).__name__}" + (f" of {len(value)}" if isinstance(value, list) else "")
    return Problem(Slug.MAPPING_MATCHES_NOTHING, f"[run] steps of {m.path.name} gives {what} in this file, not a "
                   "list of steps", file=str(p), field="run.steps",
                   hint=f"check the expression against the file (jmespath.org); {holds}")
