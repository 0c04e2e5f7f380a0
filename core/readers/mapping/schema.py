"""A mapping file compiled (:class:`Mapping`): its fields, the shape its steps come from, screenshots, coordinate
space and outcome. The format is described in :mod:`trajcheck.readers.mapping.reader` and docs/formats.md."""

from __future__ import annotations

import fnmatch
import hashlib
import itertools
import re
import tomllib
from pathlib import Path
from typing import Any

from ..kit.reading import MAX_STEP_FILES, natural, safe_join
from ..kit.coords import SPACES
from .grammars import GRAMMARS
from .fields import Field, compile_fields
from .extras import EXTRA_RUN_FIELDS, EXTRA_STEP_FIELDS
from . import text as textlog
from .outcome import Outcome
from .paths import PathPattern
from .stops import HarnessStop
from ...base.errors import Problem, UsageError
from ...base.verdicts import ENDS
from ...base.inputs import exists_not_dir

#: The step fields a mapping may name, and the run fields.
STEP_FIELDS: tuple[str, ...] = (
               "type", "x", "y", "keys", "text", "url", "url_after", "reasoning", "error", "screenshot", "action",
               "tokens_input", "tokens_output", "tokens_cached", "tokens_reasoning", "cost_usd", "wall_seconds",
               "timestamp", "screenshot_after")
RUN_FIELDS: tuple[str, ...] = ("run_id", "task_id", "goal", "model", "screen_width", "screen_height")
MAX_LOG_BYTES = 512 * 1024 * 1024
#: The coordinate spaces a mapping may declare: trajcheck's own, ``pixels`` (= screen) and ``model`` (a model
#: space given by ``model_scale`` or ``model_size``).
COORDINATES = (*SPACES, "pixels", "model")
_RUN_KEYS = {"files", "steps", "step_files", "step_files_not", "goal_file", "lines", "members", "chat", "coordinates",
             "screen", "model_scale", "model_size", "ends", "unsure", *RUN_FIELDS}
_RUN_KEYS |= {"path", "config"}  # values from the run folder's path (paths.py), config values (runs.config)
_RUN_KEYS |= {"images"}  # a map of id -> image in the log: a step's screenshot named by its id (images.py)
#: The readings a mapping may mark unsure (``[run] unsure``): runs read through it get no verdict of their own.
UNSURE = ("alignment", "coordinates", "actions")
_STEP_KEYS = {*STEP_FIELDS, "grammar", "types", "screenshot_file", "screenshot_after_file", "screenshots",
              "screenshots_offset", "screenshot_is", "harness_stop"}
# text logs and the fields added with them (mapping/text.py, mapping/extras.py): a step as a block of lines; the
# target element, a scroll's direction and amount, the URL a step saw; the run's elapsed time, cost and tokens
STEP_FIELDS += EXTRA_STEP_FIELDS
RUN_FIELDS += EXTRA_RUN_FIELDS
_RUN_KEYS |= {"blocks", *EXTRA_RUN_FIELDS}
_STEP_KEYS |= set(EXTRA_STEP_FIELDS)


def _strs(table: dict[str, Any], *keys: str) -> dict[str, str]:
    return {k: str(table[k]) for k in keys if isinstance(table.get(k), str)}


def action_key(name: str) -> str:
    """A log's action name as the value map looks it up: lower case, spaces and dashes as ``_``, without the
    punctuation around it (``stop.`` is ``stop``, ``Click:`` is ``click``, ``[TAP]`` is ``tap``)."""
    return re.sub(r"[\s\-]+", "_", re.sub(r"^[^\w]+|[^\w]+$", "", name.strip().lower()))


def _pair(v: Any) -> tuple[float, float] | None:
    if isinstance(v, list) and len(v) == 2 and all(isinstance(c, (int, float)) and c > 0 for c in v):
        return float(v[0]), float(v[1])
    return None


class Mapping:
    """A mapping file, compiled: its fields, the shape its steps come from, its action-type map, screenshots,
    coordinate space and outcome."""

    def __init__(self, path: Path, source: bytes | None = None):
        """The mapping file at ``path``, or, given ``source``, the mapping whose file held those bytes (a worker
        compiles the bytes the caller read: it need not see the file, nor can the file change between them)."""
        try:
            raw = path.read_bytes() if source is None else source
            # newlines translated as reading the file as text does
            data = tomllib.loads(raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--mapping {path}: cannot read it ({exc})") from None
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"--mapping {path}: not valid TOML ({exc})") from None
        self.path = path
        self.source = raw  # the file's bytes: what travels with the score options (ScoreOptions.mapping)
        where = f"--mapping {path}"
        run, step, chat = data.get("run", {}), data.get("step", {}), data.get("chat", {})
        for name, table, known in (("run", run, _RUN_KEYS), ("step", step, _STEP_KEYS)):
            unknown = sorted(set(table) - known)
            if unknown:
                raise UsageError(f"{where}: [{name}] has unknown key(s) {', '.join(unknown)}; see docs/formats.md")
        s = _strs(run, "step_files", "step_files_not", "files", "goal_file", "lines", "members")
        self.step_files = s.get("step_files")
        self.step_files_not = s.get("step_files_not")  # a glob of file names that are not steps
        self.lines = self._regex(s.get("lines"), f"{where}: [run] lines")
        self.members = self._regex(s.get("members"), f"{where}: [run] members")
        self.blocks = textlog.compile_blocks(run.get("blocks"), f"{where}: [run] blocks")
        self.chat = bool(run.get("chat")) or bool(chat)
        if not (isinstance(run.get("steps"), str) or self.step_files or self.lines or self.blocks) or \
                not isinstance(step.get("type"), (str, dict)) and not isinstance(step.get("grammar"), str):
            raise UsageError(f"{where}: [run] steps (or step_files, lines or blocks) and [step] type (or grammar) "
                             "are required")
        self.files = s.get("files", "*.log" if self.lines or self.blocks else "*.json")
        self.goal_file = s.get("goal_file")
        for key, pattern in (("step_files", self.step_files), ("goal_file", self.goal_file)):
            if pattern is not None and not _inside(pattern):
                raise UsageError(f"{where}: [run] {key} = {pattern!r} must be a non-empty glob relative to "
                                 "the run folder, without '..'")
        t = _strs(step, "screenshot_file", "screenshot_after_file", "screenshots", "grammar")
        self.shot_file, self.shot_after, self.shot_glob = (t.get("screenshot_file"), t.get("screenshot_after_file"),
                                                           t.get("screenshots"))
        if self.shot_glob is not None and not _inside(self.shot_glob):
            raise UsageError(f"{where}: [step] screenshots = {self.shot_glob!r} must be a glob inside the run folder")
        offset = step.get("screenshots_offset", 0)
        if not isinstance(offset, int) or isinstance(offset, bool) or abs(offset) > 1000:
            raise UsageError(f"{where}: [step] screenshots_offset = {offset!r}: a whole number (1: each step's "
                             "screenshot is the one the step after it names; -1: the one the step before names)")
        self.shot_offset = offset
        if "screenshot_after" in step and (offset or str(step.get("screenshot_is", "pre")) == "post"):
            raise UsageError(f"{where}: [step] screenshot_after gives each step's screen after it, so `screenshot` is "
                             "the screen before: remove screenshot_is = 'post' and screenshots_offset")
        self.grammar = t.get("grammar")
        if self.grammar is not None and self.grammar not in GRAMMARS:
            raise UsageError(f"{where}: [step] grammar = {self.grammar!r}: one of {', '.join(GRAMMARS)}")
        self.pre = str(step.get("screenshot_is", "pre")) != "post"
        self._space(run, where)
        self.ends = self._ends(run.get("ends"), where)
        screen = run.get("screen")
        self.screen = (int(screen[0]), int(screen[1])) if isinstance(screen, list) and len(screen) == 2 else None
        self.types = {str(k): str(v) for k, v in (step.get("types") or {}).items()}
        # answers that are the harness's own stop, not the agent's (stops.py)
        self.harness_stop = HarnessStop(step["harness_stop"], where) if "harness_stop" in step else None
        self.type_keys = {action_key(k): v for k, v in self.types.items()}  # by action_key, where no name matches
        unsure = run.get("unsure", [])
        if not isinstance(unsure, list) or any(u not in UNSURE for u in unsure):
            raise UsageError(f"{where}: [run] unsure = {unsure!r}: a list of {', '.join(UNSURE)}")
        self.unsure: tuple[str, ...] = tuple(dict.fromkeys(str(u) for u in unsure))
        self.chat_role = Field("role", chat.get("role", "role"), f"{where}: [chat] role")
        self.chat_steps = str(chat.get("steps", "assistant"))
        self.chat_image = self._regex(str(chat.get("image", r"\bimage_\d+\b")), f"{where}: [chat] image")
        self.chat_image_file = str(chat["image_file"]) if isinstance(chat.get("image_file"), str) else None
        self.fields: dict[str, Field] = {**compile_fields(run, ("steps", "images", *RUN_FIELDS), "run.", where),
                                         **compile_fields(step, STEP_FIELDS, "step.", where)}
        self.run_path = PathPattern(run["path"], where) if "path" in run else None
        config = run.get("config", {})
        if not isinstance(config, dict):
            raise UsageError(f"{where}: [run.config] must be a table: each config value's name = a field")
        self.config = {str(k): Field(str(k), v, f"{where}: run.config.{k}") for k, v in config.items()}
        self.outcome = Outcome(data.get("outcome", {}), where, self.run_path)
        digest = hashlib.blake2b(raw, digest_size=4).hexdigest()
        self.name = f"mapping:{path.stem}@{digest}"  # a changed mapping rescores its runs

    def _space(self, run: dict[str, Any], where: str) -> None:
        coords = run.get("coordinates")
        if coords == "relative":
            coords = "relative-1000"
        if coords is not None and coords not in COORDINATES:
            raise UsageError(f"{where}: [run] coordinates = {coords!r}: one of {', '.join(COORDINATES)}")
        self.coordinates: str | None = "screen" if coords == "pixels" else coords
        self.model_scale = float(run["model_scale"]) if isinstance(run.get("model_scale"), (int, float)) else None
        self.model_size = _pair(run.get("model_size"))
        if self.coordinates == "model" and self.model_scale is None and self.model_size is None:
            raise UsageError(f"{where}: [run] coordinates = \"model\" needs model_scale (screenshot pixels per model "
                             "pixel) or model_size ([width, height] of the image the model saw)")

    @staticmethod
    def _ends(value: Any, where: str) -> str | None:
        """``[run] ends``: how the harness ends a run (``answer`` or ``external``); None when not declared."""
        if value is None or value in ENDS:
            return value if isinstance(value, str) else None
        raise UsageError(f"{where}: [run] ends = {value!r}: one of {', '.join(ENDS)} (\"answer\": the harness ends a "
                         "run only by the agent's answer or a step limit; \"external\": it may also stop one itself)")

    @staticmethod
    def _regex(text: str | None, where: str) -> re.Pattern[str] | None:
        if text is None:
            return None
        try:
            return re.compile(text)
        except re.error as exc:
            raise UsageError(f"{where} = {text!r} is not a regular expression ({exc})") from None

    def get(self, key: str, value: Any, ctx: dict[str, Any] | None = None) -> Any:
        """The value of the field at ``key`` on ``value`` (``ctx``: the step's place, for templates); None
        where it matches nothing or fails on this value."""
        f = self.fields.get(key)
        return None if f is None else f.value(value, ctx)

    def step_paths(self, path: Path) -> list[Path]:
        """A run directory's step files (``[run] step_files``) in natural order, at most MAX_STEP_FILES."""
        if self.step_files is None:
            return []
        try:  # at most MAX_STEP_FILES + 1 matches are looked at: a glob over a huge tree stays bounded
            found = [p for p in itertools.islice(path.glob(self.step_files), MAX_STEP_FILES + 1)
                     if exists_not_dir(p) and safe_join(path, str(p.relative_to(path))) is not None
                     and not (self.step_files_not and fnmatch.fnmatch(p.name, self.step_files_not))]
        except (OSError, ValueError, NotImplementedError):
            return []
        return sorted(found, key=lambda p: natural(p.relative_to(path).as_posix()))[:MAX_STEP_FILES]

    def steps_in(self, value: Any) -> list[Any] | dict[str, Any] | None:
        """The steps one log (or one step file) holds: ``[run] steps`` (a list, or an object whose members are
        the steps); a step file without it is one step."""
        if self.step_files is not None and "run.steps" not in self.fields:
            return [value] if value is not None else None
        got = self.get("run.steps", value)
        return got if isinstance(got, (list, dict)) else None

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
        """A reader's ``claims``: not a native run, and the log gives at least one step (a matching line)."""
        if (path / "run.json").exists():
            return False
        logs = self.step_paths(path)[:20] if self.step_files is not None else [self.log_of(path)]
        for log in logs:  # a step file may hold no step (a planning call): the first 20 are looked at
            if log is None or not log.is_file() or log.stat().st_size > MAX_LOG_BYTES:
                continue
            try:
                text = log.read_text("utf-8", errors="replace")
                if self.blocks is not None:
                    if textlog.blocks(textlog.text_of(log.name, text), self.blocks):
                        return True
                elif self.lines is not None:
                    text = textlog.text_of(log.name, text)
                    if any(self.lines.search(ln) for ln in itertools.islice(text.splitlines(), 100_000)):
                        return True
                elif self.steps_in(_load(text, log.name, path.name, [])):
                    return True
            except (RecursionError, OSError, textlog.BlockTimeout):
                continue
        return False


def _inside(pattern: str) -> bool:
    """A glob that stays inside the run folder: not empty, not absolute, no drive, no '..' part."""
    parts = pattern.replace("\\", "/").split("/")
    return bool(pattern.strip()) and not pattern.startswith(("/", "\\")) and ":" not in parts[0] \
        and ".." not in parts


def _load(text: str, rel: str, run: str, problems: list[Problem]) -> Any:
    return textlog.load(text, rel, run=run, problems=problems)  # JSON, JSON Lines, or a CSV log's rows


