"""What the tool-call transcripts of vendor computer-use loops have in common (Anthropic's computer tool,
OpenAI's computer-use tool): screenshots that arrive only in tool results, so several actions can fall
between two frames; frames inline as base64 or saved as files."""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any, Callable

from trajcheck.analyzers import highrisk
from trajcheck.errors import Problem
from trajcheck.inputs import exists_not_dir
from trajcheck.rundir import safe_join
from trajcheck.schemas.records import Action, Step

from trajcheck.inputs import image_ext

from .browser_use import MAX_FRAME_BYTES

#: How much of a JSON file is read to decide whether a reader claims it, and how many files of a folder.
SNIFF_BYTES = 256 * 1024
SNIFF_FILES = 8


class Sniffer:
    """A reader that claims a folder by what its JSON holds: ``test`` sees the first SNIFF_BYTES of each of
    the folder's first SNIFF_FILES ``.json``/``.jsonl`` files."""

    def __init__(self, test: Callable[[bytes], bool], default: str):
        self.test, self.default = test, default

    def files(self, path: Path) -> list[Path]:
        try:
            names = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl") and exists_not_dir(p))
        except OSError:
            return []
        out = []
        for p in names[:SNIFF_FILES]:
            try:
                if p.is_file():
                    with p.open("rb") as f:
                        if self.test(f.read(SNIFF_BYTES)):
                            out.append(p)
            except OSError:
                continue
        return out

    def claims(self, path: Path) -> bool:
        return not (path / "run.json").exists() and bool(self.files(path))

    def pick(self, run_dir: Path, run: str, problems: list[Problem]) -> str:
        """The transcript a run is read from (the first by name; a warning when there are several)."""
        found = self.files(run_dir)
        if len(found) > 1:
            problems.append(Problem("history_ambiguous", f"{', '.join(p.name for p in found)} are all transcripts; "
                                    f"{found[0].name} is read", run=run, file=found[1].name, severity="warning",
                                    hint="keep one transcript per directory"))
        return found[0].name if found else self.default


#: Action types a preceding MOUSE_MOVE gives its point to when they have none.
CLICK_TYPES = frozenset({"CLICK", "RIGHT_CLICK", "MIDDLE_CLICK", "DOUBLE_CLICK", "TRIPLE_CLICK"})


class Frames:
    """The frames a transcript carries: inline images kept as ``Run.inline_frames`` under generated names,
    files by their path inside the run directory; a bad one is a located warning."""

    def __init__(self, run_dir: Path, run: str, rel: str, problems: list[Problem]):
        self.run_dir, self.run, self.rel, self.problems = run_dir, run, rel, problems
        self.inline: dict[str, bytes] = {}

    def _warn(self, slug: str, msg: str, field: str) -> None:
        self.problems.append(Problem(slug, msg, run=self.run, file=self.rel, field=field, severity="warning",
                                     hint="the steps around this screenshot are not checked (frames_missing)"))

    def from_base64(self, b64: str, field: str) -> str | None:
        """An inline screenshot (base64, or a data: URL) as a frame name, or None with a warning."""
        if b64.startswith("data:") and "," in b64:
            b64 = b64.split(",", 1)[1]
        if len(b64) > MAX_FRAME_BYTES * 4 // 3 + 4:
            self._warn("frame_too_large", "the screenshot is over the size limit", field)
            return None
        try:
            data = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError) as exc:
            self._warn("frame_unreadable", f"the screenshot is not valid base64 ({exc})", field)
            return None
        ext = image_ext(data)
        if ext is None:
            self._warn("frame_unreadable", "the screenshot is not a PNG, JPEG or WebP image", field)
            return None
        name = f"inline/frame-{len(self.inline):04d}.{ext}"
        self.inline[name] = data
        return name

    def from_path(self, path: str, field: str) -> str | None:
        """A screenshot saved as a file inside the run directory, or None with a warning."""
        if safe_join(self.run_dir, path) is None:
            self._warn("path_escapes_run", f"screenshot path {path!r} leaves the run directory", field)
            return None
        return path


def last_frame(timeline: list[tuple[Any, ...]]) -> str | None:
    return next((t[1] for t in reversed(timeline) if t[0] == "frame"), None)


def steps_of(timeline: list[tuple[Any, ...]], results: dict[str, tuple[bool, str | None]], rel: str,
             looks: frozenset[str]) -> list[Step]:
    """Steps from a tool-call timeline: ``("act", action, reasoning, call id, message index)`` and
    ``("frame", name)`` entries in the order the transcript holds them; ``results`` maps a call id to
    (is_error, text); ``looks`` are the tool actions that only look (``extra.tool_action``). A click
    without a point right after a MOUSE_MOVE is one click at the moved-to point. Each group of actions
    between two frames gets that pair; when a group has several actions, the pair is checked on its last
    high-risk action (else its last acting one) and the others are marked ``shared_frames``: their
    verdict is null, never a no-effect of their own."""
    acts: list[tuple[Action, str | None, str | None, str | None]] = []  # action, reasoning, use id, pre frame
    groups: list[list[int]] = [[]]
    frame: str | None = None
    pre_of_group: list[str | None] = [None]
    for item in timeline:
        if item[0] == "frame":
            frame = item[1]
            if groups[-1]:
                groups.append([])
                pre_of_group.append(frame)
            else:
                pre_of_group[-1] = frame
            continue
        _, action, reasoning, use_id, _i = item
        prev = acts[-1][0] if acts and groups[-1] else None
        if action.type in CLICK_TYPES and action.x is None and prev is not None and prev.type == "MOUSE_MOVE" \
                and prev.x is not None:
            merged = Action(action.type, prev.x, prev.y, extra={**action.extra, "point_from": "mouse_move"})
            acts[-1] = (merged, reasoning, use_id, acts[-1][3])
            continue
        acts.append((action, reasoning, use_id, frame))
        groups[-1].append(len(acts) - 1)
    post_of_group = [pre_of_group[g + 1] if g + 1 < len(pre_of_group) else None for g in range(len(groups))]
    steps: list[Step] = []
    owner: dict[int, int] = {}
    for g, members in enumerate(groups):
        if not members:
            continue
        risky = [m for m in members if highrisk.classify(acts[m][0].type, acts[m][0].keys, acts[m][1],
                                                         acts[m][0].text, acts[m][0].extra).high_risk]
        acting = [m for m in members if acts[m][0].extra.get("tool_action") not in looks]
        owner[g] = (risky or acting or members)[-1]
    for g, members in enumerate(groups):
        for m in members:
            action, reasoning, use_id, _pre = acts[m]
            err, msg = results.get(str(use_id), (False, None))
            extra: dict[str, Any] = {"tool_use_id": use_id} if use_id else {}
            pre, post = pre_of_group[g], post_of_group[g]
            if m != owner[g] and len(members) > 1:
                extra["shared_frames"] = True
                pre = post = None
            if msg and not err:
                extra["tool_output"] = msg[:2000]
            steps.append(Step(index=len(steps), action=action, reasoning=reasoning, frame_pre=pre, frame_post=post,
                              executor_ok=not err, executor_error=(msg or "tool error")[:2000] if err else None,
                              extra=extra, source=rel))
    return steps
