"""How much of a folder a mapping reads (``trajcheck draft-mapping --check``): runs read, actions understood
(a trajcheck type, not UNKNOWN) and screenshots found (the image files in the runs' folders, and the images
carried inside their logs, that the steps use as frames; a harness's annotated copy of a screenshot beside it,
``3_labeled.png`` beside ``3.png``, is the same screen). Of a log whose steps name their screenshots by id in a
map of images (``[run] images``), the screenshots are the map's images that the steps name, whichever field
names them)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..discovery import discover, get_reader
from .reader import reader_of
from .schema import Mapping
from .draft.files import images
from .steps import screen_of
from ...base.errors import RunFormatError
from ...base.runfiles import safe_join, scoring_root


@dataclass
class Reach:
    runs_found: int = 0
    runs_read: int = 0
    actions: int = 0
    understood: int = 0
    screenshots: int = 0  # image files in the runs' folders, and inline images in their logs
    screenshots_used: int = 0  # of those, the ones steps use as frames
    frames_missing: int = 0  # frames the steps name that are not there
    not_read: list[tuple[str, str]] = field(default_factory=list)  # (run, why)
    unknown_actions: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"runs_found": self.runs_found, "runs_read": self.runs_read, "actions": self.actions,
                "actions_understood": self.understood, "screenshots": self.screenshots,
                "screenshots_found": self.screenshots_used, "frames_not_there": self.frames_missing,
                "not_read": [{"run": r, "why": w} for r, w in self.not_read],
                "unknown_actions": self.unknown_actions}

    @staticmethod
    def pct(a: int, b: int) -> str:
        return f"{a} of {b} ({100 * a / b:.0f}%)" if b else f"{a} of {b}"

    def summary(self) -> str:
        return (f"runs read: {self.pct(self.runs_read, self.runs_found)}; actions understood: "
                f"{self.pct(self.understood, self.actions)}; screenshots found: "
                f"{self.pct(self.screenshots_used, self.screenshots)}"
                + (f"; {self.frames_missing} frames named but missing" if self.frames_missing else ""))


def measure(paths: list[str | os.PathLike[str]], mapping: str | os.PathLike[str]) -> Reach:
    """Read every run under ``paths`` through ``mapping`` and count what was understood."""
    own = (reader_of(Mapping(Path(mapping))),)  # the mapping's reader, for this call only
    refs, _problems = discover(paths, extra=own)
    c = Reach(runs_found=len(refs))
    for ref in refs:
        try:
            with scoring_root(ref.root):
                run, _warns = get_reader(ref.reader, own).read(ref.path, ref.display)
        except RunFormatError as exc:
            c.not_read.append((ref.display, exc.problems[0].message if exc.problems else "not read"))
            continue
        c.runs_read += 1
        c.actions += len(run.steps)
        for s in run.steps:
            if s.action.type == "UNKNOWN":
                k = str(s.action.extra.get("log_type") or "")[:60]
                c.unknown_actions[k] = c.unknown_actions.get(k, 0) + 1
            else:
                c.understood += 1
        used = {f for s in run.steps for f in (s.frame_pre, s.frame_post) if f}
        there = {f for f in used if _there(run.inline_frames, run.outside_files, ref.run_dir, f)}
        files = set(images(ref.run_dir))
        screens = {screen_of(f, files) for f in files}  # an annotated copy is the screen it marks up
        named = run.extra.get("images_named")  # a log's map of images by id: those its steps name are its screens
        c.screenshots += len(screens) + max(len(run.inline_frames), named if isinstance(named, int) else 0)
        c.screenshots_used += len({screen_of(f, files) for f in there & files}) + \
            len(there & set(run.inline_frames))
        c.frames_missing += len(used - there)
    return c


def _there(inline: Any, outside: Any, run_dir: Path, f: str) -> bool:
    if f in inline:
        return True
    if f in outside:
        return Path(outside[f]).is_file()
    p = safe_join(run_dir, f)
    try:
        return p is not None and p.is_file()
    except (OSError, ValueError):  # a name no file can have (too long, a NUL)
        return False
