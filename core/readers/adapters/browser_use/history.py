"""Reading a browser-use history (:mod:`~trajcheck.readers.adapters.browser_use.reader`): the history file read
whole (with the line each item starts on) or, past STREAM_BYTES, an item at a time (ijson over ``history.item``),
and each item's screenshot, inline (base64) or a file in the run."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from ....base.inputs import open_regular
from ....base.problems import Slug

from ...kit.reading import (MAX_HISTORY_BYTES, BadImage, Problems, array_item_lines, decode_image, load_json, relocated,
                            safe_join)
from ...kit.stream import stream_items

#: The file names browser-use saves a history under (``agent.save_history()``, ``history.save_to_file()``).
FILE_NAMES = ("AgentHistoryList.json", "AgentHistory.json", "agent_history.json")

#: The hint of each way an inline screenshot can fail (:class:`~trajcheck.readers.kit.reading.BadImage` kinds).
_IMAGE_HINTS = {"size": "the step's frames are not checked",
                "base64": "re-export the history; the step's frames are not checked",
                "format": "the step's frames are not checked"}


def source(run_dir: Path, problems: Problems) -> str:
    """The history file the run is read from (the first of FILE_NAMES; a warning when there are several)."""
    present = [n for n in FILE_NAMES if (run_dir / n).is_file()]
    name = problems.file = present[0] if present else FILE_NAMES[0]
    if len(present) > 1:
        problems.warn(Slug.STEPS_AMBIGUOUS, f"{', '.join(present)} all exist; {name} is read", file=present[1],
                      hint="keep one history per directory")
    return name


def parse(run_dir: Path, problems: Problems) -> tuple[dict[str, Any], list[Any], list[int]]:
    """The history file's top-level object, its items, and the line each item starts on; raises when the
    file cannot be read, is not a history, or has no items."""
    name = problems.file
    got = load_json(run_dir / name, run=problems.run, rel=name, problems=problems, limit=MAX_HISTORY_BYTES)
    data = None
    if got is not None:
        data = got[0]
        if not isinstance(data, dict) or not isinstance(data.get("history"), list):
            problems.error(Slug.SCHEMA, "expected an object with a history array", line=1, field="history",
                           hint="this is browser-use's AgentHistoryList.json")
            data = None
    problems.raise_errors()
    assert data is not None and got is not None
    history: list[Any] = data["history"]
    lines = array_item_lines(got[1], "history")
    for _ in check_items(enumerate(history), lines, problems):
        pass  # every item that is not an object is an error: the run is not read
    if not history:
        problems.error(Slug.STEPS_EMPTY, "the history is empty", field="history", hint="a run needs at least one step")
    problems.raise_errors()
    return data, history, lines


def check_items(items: Iterable[tuple[int, Any]], lines: list[int], problems: Problems) -> Iterator[tuple[int, Any]]:
    """``items`` with an error for each that is not an object (left out)."""
    for i, item in items:
        if isinstance(item, dict):
            yield i, item
        else:
            problems.error(Slug.SCHEMA, f"history item is a {type(item).__name__}, not an object",
                           line=lines[i] if i < len(lines) else None, field=f"history[{i}]",
                           hint="each item is {model_output, result, state}")


def streamed(path: Path, problems: Problems, meta: dict[str, Any]) -> Iterator[tuple[int, Any]]:
    """A large history's items, one at a time (ijson over ``history.item``; ``meta`` gets the other top-level
    fields once they are read). Raises :class:`StreamError` where the JSON breaks."""
    return check_items(enumerate(stream_items(path, "history", meta)), [], problems)


class HistoryFrames:
    """Resolves each history item's screenshot to a frame name (inline bytes or a file in the run)."""

    def __init__(self, run_dir: Path, problems: Problems, lines: list[int]):
        self.run_dir = run_dir
        self.problems = problems
        self.lines = lines
        self.inline: dict[str, bytes] = {}

    def _warn(self, slug: Slug, msg: str, i: int, field: str, hint: str) -> None:
        self.problems.warn(slug, msg, line=self.lines[i] if i < len(self.lines) else None, field=field, hint=hint)

    def of(self, i: int, state: Any) -> str | None:
        """Item ``i``'s screenshot: inline (``state.screenshot``) or a file (``state.screenshot_path``)."""
        if not isinstance(state, dict):
            return None
        b64 = state.get("screenshot")
        if isinstance(b64, str) and b64:
            try:
                data, ext = decode_image(b64)
            except BadImage as exc:
                self._warn(exc.slug, f"the inline screenshot {exc}", i, f"history[{i}].state.screenshot",
                           _IMAGE_HINTS[exc.kind])
                return None
            name = f"inline/step-{i:04d}.{ext}"
            self.inline[name] = data
            return name
        path = state.get("screenshot_path")
        if not isinstance(path, str) or not path:
            return None
        return self._file(i, path, f"history[{i}].state.screenshot_path")

    def _file(self, i: int, path: str, field: str) -> str | None:
        target = safe_join(self.run_dir, path.replace("\\", "/"))
        if target is not None:  # a file that is not there is reported where a step uses it (frames_missing)
            return str(PurePosixPath(target.relative_to(Path(self.run_dir).resolve()).as_posix()))
        # an absolute path (browser-use writes them under its temp dir) or one that leaves the run:
        # look for the same file inside the run directory by its last path parts only
        cand = relocated(self.run_dir, path)
        if cand is not None:
            self._warn(Slug.SCREENSHOT_RELOCATED, f"{path} is outside the run directory; {cand} inside it is used", i,
                       field, "store screenshot paths relative to the history file")
            return cand
        self._warn(Slug.PATH_ESCAPES_RUN, f"screenshot path {path!r} points outside the run directory and no file of "
                   "that name is inside it", i, field, "copy the screenshots next to the history and store "
                   "relative paths")
        return None


def shot(i: int, item: dict[str, Any], frames: HistoryFrames, problems: Problems) -> str | None:
    """Item ``i``'s screenshot, with a warning for a state that has none."""
    name = frames.of(i, item.get("state"))
    if isinstance(item.get("state"), dict) and name is None and not any(
            p.field.startswith(f"history[{i}].state") for p in problems):
        problems.warn(Slug.SCREENSHOT_MISSING, "this state has no screenshot", line=frames.lines[i]
                      if i < len(frames.lines) else None, field=f"history[{i}].state.screenshot",
                      hint="the step's frames are not checked (frames_missing)")
    return name


def head(path: Path) -> bytes:
    """The first bytes of the history file (empty when it cannot be read): its shape before it is streamed."""
    try:
        with open(open_regular(path), "rb", closefd=True) as f:  # never a FIFO
            return f.read(64)
    except OSError:
        return b""
