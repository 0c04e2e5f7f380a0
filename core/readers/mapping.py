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

    [step]
    type = "action.name"              # required
    x = "action.point[0]"             # optional step fields: x, y, keys, text, url, reasoning, error
    y = "action.point[1]"
    reasoning = "thought"
    screenshot = "screenshot"         # a path inside the run directory, or base64 / a data: URL
    screenshot_is = "pre"             # "pre" (what the agent saw before acting) or "post"

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

import fnmatch
import hashlib
import itertools
import tomllib
from pathlib import Path
from typing import Any

from . import discovery
from .kit.reading import (MAX_STEP_FILES, Frames, load_json_or_jsonl, natural, num, raise_errors, read_text_file,
                          safe_join)
from .kit.reader import Reader
from ..base.errors import Problem, RunFormatError, UsageError
from ..base.problems import Slug
from ..base.inputs import exists_not_dir
from .kit.usage import amount, count, elapsed, seconds_of
from ..schemas.records import Action, Page, Run, Step, Usage

#: The step fields a mapping may name, and the run fields.
STEP_FIELDS = ("type", "x", "y", "keys", "text", "url", "url_after", "reasoning", "error", "screenshot",
               "tokens_input", "tokens_output", "tokens_cached", "tokens_reasoning", "cost_usd", "wall_seconds",
               "timestamp")
RUN_FIELDS = ("run_id", "task_id", "goal", "model", "screen_width", "screen_height")
MAX_LOG_BYTES = 512 * 1024 * 1024


class Mapping:
    """A mapping file, compiled: its JMESPath expressions, action-type map, screen and coordinate space."""

    def __init__(self, path: Path):
        import jmespath

        try:
            data = tomllib.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--mapping {path}: cannot read it ({exc})") from None
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"--mapping {path}: not valid TOML ({exc})") from None
        self.path = path
        run, step = data.get("run", {}), data.get("step", {})
        self.step_files = str(run["step_files"]) if isinstance(run.get("step_files"), str) else None
        if not (isinstance(run.get("steps"), str) or self.step_files) or not isinstance(step.get("type"), str):
            raise UsageError(f"--mapping {path}: [run] steps (or step_files) and [step] type are required "
                             "(JMESPath expressions)")
        self.files = str(run.get("files", "*.json"))
        self.goal_file = str(run["goal_file"]) if isinstance(run.get("goal_file"), str) else None
        for key, pattern in (("step_files", self.step_files), ("goal_file", self.goal_file)):
            if pattern is not None and not _inside(pattern):
                raise UsageError(f"--mapping {path}: [run] {key} = {pattern!r} must be a non-empty glob relative to "
                                 "the run folder, without '..'")
        self.shot_file = str(step["screenshot_file"]) if isinstance(step.get("screenshot_file"), str) else None
        self.pre = str(step.get("screenshot_is", "pre")) != "post"
        self.relative = str(run.get("coordinates", "pixels")) == "relative-1000"
        screen = run.get("screen")
        self.screen = (int(screen[0]), int(screen[1])) if isinstance(screen, list) and len(screen) == 2 else None
        self.types = {str(k): str(v) for k, v in (step.get("types") or {}).items()}
        self.expr: dict[str, Any] = {}
        for section, fields, prefix in ((run, ("steps", *RUN_FIELDS), "run."), (step, STEP_FIELDS, "step.")):
            for f in fields:
                if isinstance(section.get(f), str):
                    try:
                        self.expr[prefix + f] = jmespath.compile(section[f])
                    except jmespath.exceptions.JMESPathError as exc:
                        raise UsageError(f"--mapping {path}: {prefix}{f} = {section[f]!r} is not JMESPath ({exc})") \
                            from None
        digest = hashlib.blake2b(path.read_bytes(), digest_size=4).hexdigest()
        self.name = f"mapping:{path.stem}@{digest}"  # a changed mapping rescores its runs

    def get(self, key: str, value: Any) -> Any:
        """The value of the expression at ``key`` on ``value``; None where the expression fails on this value
        (a function given the wrong type), as where it matches nothing."""
        import jmespath

        e = self.expr.get(key)
        if e is None:
            return None
        try:
            return e.search(value)
        except jmespath.exceptions.JMESPathError:
            return None

    def step_paths(self, path: Path) -> list[Path]:
        """A run directory's step files (``[run] step_files``) in natural order, at most MAX_STEP_FILES."""
        if self.step_files is None:
            return []
        try:  # at most MAX_STEP_FILES + 1 matches are looked at: a glob over a huge tree stays bounded
            found = [p for p in itertools.islice(path.glob(self.step_files), MAX_STEP_FILES + 1)
                     if exists_not_dir(p) and safe_join(path, str(p.relative_to(path))) is not None]
        except (OSError, ValueError, NotImplementedError):
            return []
        return sorted(found, key=lambda p: natural(p.relative_to(path).as_posix()))[:MAX_STEP_FILES]

    def steps_in(self, value: Any) -> list[Any] | None:
        """The steps one log (or one step file) holds: ``[run] steps``; a step file without it is one step."""
        if self.step_files is not None and "run.steps" not in self.expr:
            return [value] if value is not None else None
        got = self.get("run.steps", value)
        return got if isinstance(got, list) else None

    def log_of(self, path: Path) -> Path | None:
        """The log file of a run directory: the first name matching ``[run] files`` (the first step file)."""
        if self.step_files is not None:
            steps = self.step_paths(path)
            return steps[0] if steps else None
        try:
            names = sorted(p for p in path.iterdir() if fnmatch.fnmatch(p.name, self.files) and exists_not_dir(p))
        except OSError:
            return None
        return names[0] if names else None

    def claims(self, path: Path) -> bool:
        """A reader's ``claims``: not a native run, and the log's ``steps`` expression gives a non-empty list."""
        if (path / "run.json").exists():
            return False
        log = self.log_of(path)
        if log is None or not log.is_file() or log.stat().st_size > MAX_LOG_BYTES:
            return False
        try:
            value = _load(log.read_text("utf-8", errors="replace"), log.name, path.name, [])
        except RecursionError:
            return False
        return bool(self.steps_in(value))


def _inside(pattern: str) -> bool:
    """A glob that stays inside the run folder: not empty, not absolute, no drive, no '..' part."""
    parts = pattern.replace("\\", "/").split("/")
    return bool(pattern.strip()) and not pattern.startswith(("/", "\\")) and ":" not in parts[0] \
        and ".." not in parts


def _load(text: str, rel: str, run: str, problems: list[Problem]) -> Any:
    return load_json_or_jsonl(text, run=run, rel=rel, problems=problems)


def _str(v: Any) -> str | None:
    return None if v is None else v if isinstance(v, str) else str(v)


def _spent(m: Mapping, records: list[Any], model: str | None) -> list[tuple[Usage | None, float | None]]:
    """Each step's usage and seconds, by the mapping's token, cost and time expressions: ``wall_seconds`` as
    given, else the time from the previous step's ``timestamp`` to this one's."""
    times = [seconds_of(m.get("step.timestamp", s)) for s in records]
    out: list[tuple[Usage | None, float | None]] = []
    for i, s in enumerate(records):
        u = Usage(count(m.get("step.tokens_input", s)), count(m.get("step.tokens_output", s)),
                  count(m.get("step.tokens_cached", s)), count(m.get("step.tokens_reasoning", s)),
                  amount(m.get("step.cost_usd", s)), model)
        seconds = amount(m.get("step.wall_seconds", s))
        if seconds is None and i:
            seconds = elapsed(times[i - 1], times[i])
        out.append((None if u.empty else u, seconds))
    return out


def _records(m: Mapping, run_dir: Path, run_name: str,
             problems: list[Problem]) -> tuple[str, Any, list[tuple[Any, str]]]:
    """The log's name, the value the run fields are read from, and each step with the folder (relative to the
    run) its screenshot paths are relative to: one log, or one file per step (``[run] step_files``)."""
    if m.step_files is None:
        log = m.log_of(run_dir)
        rel = log.name if log else m.files
        text = read_text_file(run_dir / rel, run=run_name, rel=rel, problems=problems, limit=MAX_LOG_BYTES)
        value = _load(text, rel, run_name, problems) if text is not None else None
        raise_errors(problems, run_name)
        return rel, value, [(s, "") for s in m.steps_in(value) or []]
    first: Any = None
    out: list[tuple[Any, str]] = []
    files = m.step_paths(run_dir)
    for path in files:
        rel = path.relative_to(run_dir).as_posix()
        text = read_text_file(path, run=run_name, rel=rel, problems=problems, limit=MAX_LOG_BYTES)
        value = _load(text, rel, run_name, problems) if text is not None else None
        if value is None:
            continue
        first = value if first is None else first
        folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        stem = path.name.rsplit(".", 1)[0]
        for s in m.steps_in(value) or []:
            out.append((_with_shot(m, s, folder, stem), folder))
    raise_errors(problems, run_name)
    return (files[0].relative_to(run_dir).as_posix() if files else m.step_files), first, out


def _with_shot(m: Mapping, s: Any, folder: str, stem: str) -> Any:
    """A step file's step, with the screenshot ``screenshot_file`` names beside it (when the step names none)."""
    if m.shot_file is None or not isinstance(s, dict) or m.get("step.screenshot", s):
        return s
    return {**s, "__screenshot_file__": m.shot_file.replace("{stem}", stem)}


def _goal(m: Mapping, run_dir: Path, value: Any, run_name: str, problems: list[Problem]) -> str | None:
    goal = _str(m.get("run.goal", value))
    if goal or m.goal_file is None:
        return goal
    try:
        names = sorted(p for p in itertools.islice(run_dir.glob(m.goal_file), 1000)
                       if exists_not_dir(p) and safe_join(run_dir, str(p.relative_to(run_dir))) is not None)
    except (OSError, ValueError, NotImplementedError):
        return None
    if not names:
        return None
    text = read_text_file(names[0], run=run_name, rel=names[0].name, problems=problems, limit=1024 * 1024)
    return text.strip() or None if text is not None else None


def read_mapped(m: Mapping, run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one run directory through mapping ``m`` (a reader's ``read``)."""
    run_name = run_dir.resolve().name or display
    problems: list[Problem] = []
    rel, value, records = _records(m, run_dir, run_name, problems)
    raw = [s for s, _ in records]
    if not raw:
        what = (f"[run] step_files = {m.step_files!r} of {m.path.name} matches no step file here"
                if m.step_files is not None else f"[run] steps of {m.path.name} gives no list of steps here")
        raise RunFormatError([Problem(Slug.MAPPING_MATCHES_NOTHING, what, run=run_name, file=rel,
                                      field="run.step_files" if m.step_files is not None else "run.steps",
                                      hint="check the expression against the log (jmespath.org)")])
    frames = Frames(run_dir, run_name, rel, problems)
    width = num(m.get("run.screen_width", value)) or (m.screen[0] if m.screen else None)
    height = num(m.get("run.screen_height", value)) or (m.screen[1] if m.screen else None)
    scale = (width / 1000, height / 1000) if m.relative and width and height else (1.0, 1.0)
    shots: list[str | None] = []
    for i, (s, folder) in enumerate(records):
        shot = _str(m.get("step.screenshot", s)) or (s.get("__screenshot_file__") if isinstance(s, dict) else None)
        if shot and folder and not shot.startswith(("/", "data:")) and len(shot) < 4096:
            shot = folder + shot  # relative to its step file
        shots.append(frames.from_any(shot, f"steps[{i}].screenshot") if shot else None)
    unmatched = [k for k in m.expr if k.startswith("step.") and all(m.get(k, s) is None for s in raw)]
    for k in unmatched:
        problems.append(Problem(Slug.MAPPING_MATCHES_NOTHING, f"{k} matches nothing in any of the {len(raw)} steps",
                                run=run_name, file=rel, field=k, severity="warning",
                                hint=f"check that expression in {m.path.name} against one step of the log"))
    steps: list[Step] = []
    model = _str(m.get("run.model", value))
    spent = _spent(m, raw, model)
    for i, s in enumerate(raw):
        kind = _str(m.get("step.type", s)) or "UNKNOWN"
        t = m.types.get(kind, kind.upper())
        x, y = num(m.get("step.x", s)), num(m.get("step.y", s))
        if x is not None and y is not None:
            x, y = round(x * scale[0], 1), round(y * scale[1], 1)
        err = _str(m.get("step.error", s))
        pre, post = (shots[i], shots[i + 1] if i + 1 < len(shots) else None) if m.pre else \
            (shots[i - 1] if i else None, shots[i])
        url, url_after = _str(m.get("step.url", s)), _str(m.get("step.url_after", s))
        steps.append(Step(index=len(steps), action=Action(t, x=x, y=y, keys=_str(m.get("step.keys", s)),
                                                          text=_str(m.get("step.text", s)), extra={"log_type": kind}),
                          reasoning=_str(m.get("step.reasoning", s)), frame_pre=pre, frame_post=post,
                          executor_ok=None if err is None else False, executor_error=err,
                          page=Page(url_before=url, url_after=url_after) if url or url_after else None,
                          usage=spent[i][0], wall_seconds=spent[i][1], source=rel))
    raise_errors(problems, run_name)
    run = Run(run_id=_str(m.get("run.run_id", value)) or run_name, path=display, source_format=m.name,
              steps=tuple(steps), task_id=_str(m.get("run.task_id", value)),
              goal=_goal(m, run_dir, value, run_name, problems),
              agent_model=model, screen_width=int(width) if width else None,
              screen_height=int(height) if height else None,
              outcome_status="done" if steps[-1].action.type == "DONE" else None, inline_frames=frames.inline,
              outside_files=frames.outside)
    return run, [p for p in problems if p.severity != "error"]


def register(path: str | Path | None) -> str | None:
    """Make a mapping file's reader the first after the native one (or, with None, none): the one mapping of
    this call, replacing a previous call's. Returns its name (the runs' source_format). Worker processes
    forked after this have it too."""
    readers = discovery.readers()  # looked up now: the list discovery reads at this moment (adapters in it)
    readers[:] = [r for r in readers if not r.name.startswith("mapping:")]
    if path is None:
        return None
    m = Mapping(Path(path))
    readers.insert(1, Reader(name=m.name, claims=m.claims, read=lambda d, disp: read_mapped(m, d, disp),
                             summary=f"logs read through the mapping {m.path}"))
    return m.name


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
            value = _load(p.read_text("utf-8", errors="replace"), p.name, p.parent.name, [])
            got = m.get("run.steps", value)
            what = "nothing" if got is None else f"a {type(got).__name__}" + (" (empty)" if got == [] else "")
            out.append(Problem(Slug.MAPPING_MATCHES_NOTHING, f"[run] steps of {m.path.name} gives {what} in this file, "
                               "not a list of steps", file=str(p), field="run.steps",
                               hint="check the expression against the file (jmespath.org); top-level keys: "
                               + ", ".join(sorted(value)[:8] if isinstance(value, dict) else ["(a list)"])))
    if not seen:
        out.append(Problem(Slug.MAPPING_MATCHES_NOTHING, f"no file matches [run] files = {m.files!r} of {m.path.name}",
                           file=str(paths[0]) if paths else "", field="run.files",
                           hint="set files to the log's name pattern, e.g. \"*.json\""))
    return out
