"""A run folder with screenshots and no log any reader claims: a run row that says so (damage ``no_log``).

A harness that died before writing its log, or a log lost on the way, leaves a folder of screenshots. Discovery
(:func:`trajcheck.readers.discovery.discover`) makes such a folder a run only by this rule, so that no folder of
other images becomes one:

- no reader claims it, and no run was found at or below it;
- it holds screenshots (PNG, JPEG or WebP), in it or all under one subfolder (``frames/``): screenshots in two
  subfolders or more are a folder of runs, not one;
- it holds no JSON or JSON Lines file (but a ``contract.json``): a JSON file no reader claims is a log of another
  shape (read it with ``--mapping``), and the folder stays a ``no_reader_claims`` problem that says so;
- its images look like a run's screenshots: at least 2 whose names carry a step number (``001.png``,
  ``step_2.png``: a number in the name, 2 different numbers at least), and at least 2 of these (of the first
  :data:`SIZES_READ` read) the size (width x height) of a frame of a run beside it (the first :data:`SIZES_READ`
  images of each of up to :data:`RUNS_READ` of those runs). A folder of plots (``success_rate.png``) or of pictures
  of another size is not a run;
- the batch has runs beside it: a folder next to it (the same parent) is a run, or a cousin is (a run at the
  same depth under the same grandparent: ``runs/a/r1`` makes ``runs/b/r2`` a run folder, never
  ``runs/b/r2/pages`` nor ``other/b/r2``);
- it is not hidden, ignored (``.trajcheckignore``) or a reader's companion folder (WebVoyager's ``_metadata``);
- it holds at most :data:`MAX_ENTRIES` files and folders (a bigger folder is no one run).

Each folder is looked at in one walk that stops after :data:`MAX_ENTRIES` entries, and decided once, however many
folders with images below it point to it; each run's frame sizes are read once: the rule costs a walk of each
folder it decides, never one per folder below it.

Any other folder with data and no run stays a ``no_reader_claims`` problem. The run read here has no steps and no
task (nothing says which task it ran): its row has status ``ok``, the verdict ``unknown``, ``damage`` ``no_log``
with the screenshots it holds as evidence, so it is counted among the runs, in the expected runs' summary and in
``redo``, and it never passes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .kit.reader import FolderClaim, NO_CLAIM, Reader

if TYPE_CHECKING:
    from ..base.errors import Problem
    from ..schemas.records import Run

NAME = "no_log"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
LOG_SUFFIXES = (".json", ".jsonl")
NOT_LOGS = frozenset({"contract.json"})
#: How many screenshot names the evidence lists.
SHOWN = 3
#: A step number in an image's name (its stem).
NUMBER = re.compile(r"\d+")
#: How many images' sizes are read from a folder (their headers), and of how many runs beside it.
SIZES_READ = 8
RUNS_READ = 4
#: How many entries (files and folders) a look at one folder reads: a folder bigger than this is no one run.
MAX_ENTRIES = 20_000


@dataclass(frozen=True)
class Look:
    """What one walk of a folder finds (hidden subfolders skipped), as paths relative to it: a folder's files by
    name, then each subfolder's."""

    shots: tuple[str, ...]  # screenshots (PNG, JPEG, WebP)
    logs: tuple[str, ...]  # JSON and JSON Lines files but a contract: logs of a shape no reader knows
    whole: bool  # False: the folder holds more than MAX_ENTRIES entries, and the walk stopped there


def look(path: Path) -> Look:
    """One walk of ``path`` (``os.scandir``, one call a folder), stopped after :data:`MAX_ENTRIES` entries: a
    folder bigger than that is no one run, and no folder costs more than that to look at."""
    shots: list[str] = []
    found_logs: list[str] = []
    seen = 0
    todo = [""]
    while todo:
        rel = todo.pop()
        try:
            with os.scandir(path / rel if rel else path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        seen += len(entries)
        if seen > MAX_ENTRIES:
            return Look(tuple(shots), tuple(found_logs), False)
        below = []
        for e in entries:
            name = f"{rel}/{e.name}" if rel else e.name
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if not e.name.startswith("."):
                    below.append(name)
            elif e.name.lower().endswith(IMAGE_SUFFIXES):
                shots.append(name)
            elif e.name.lower().endswith(LOG_SUFFIXES) and e.name not in NOT_LOGS:
                found_logs.append(name)
        todo += reversed(below)  # a folder's files, then each subfolder's in name order, as os.walk gives them
    return Look(tuple(shots), tuple(found_logs), True)


def screenshots(path: Path) -> list[str]:
    """The screenshots in ``path`` and its subfolders (hidden ones skipped), as paths relative to it, sorted (of
    the first :data:`MAX_ENTRIES` entries)."""
    return list(look(path).shots)


def logs(path: Path) -> list[str]:
    """The files in ``path`` and its subfolders that may be a log of a shape no reader knows: JSON and JSON Lines,
    but a trajcheck contract (``contract.json``), which is a check, not a log."""
    return list(look(path).logs)


class _Rule:
    """The rule of the module docstring over one batch: each folder looked at once, each folder decided once, each
    run's frame sizes read once, so that deciding N folders costs a walk of each, not one per folder below it."""

    def __init__(self, root: Path, runs: list[Path]) -> None:
        self.root = root
        self.holders = {p for r in runs for p in (r, *r.parents)}
        self.siblings: dict[Path, list[Path]] = {}  # parent -> its runs
        self.cousins: dict[Path, list[Path]] = {}  # grandparent -> its grandchildren that are runs
        for r in sorted(runs):
            self.siblings.setdefault(r.parent, []).append(r)
            if r.parent != root:
                self.cousins.setdefault(r.parent.parent, []).append(r)
        self.decided: dict[Path, bool] = {}
        self.sizes: dict[Path, set[tuple[int, int]]] = {}

    def candidate(self, here: Path) -> Path | None:
        """The folder at the runs' level that ``here`` (a folder with images) would make a run, if any."""
        for a in (here, *here.parents):
            if a == self.root or not a.is_relative_to(self.root) or a in self.holders:
                return None
            if a.parent in self.siblings or (a.parent != self.root and a.parent.parent in self.cousins):
                return a
        return None

    def is_run(self, path: Path) -> bool:
        if path not in self.decided:
            found = look(path)
            self.decided[path] = found.whole and _one_run(found) and self._like_frames(path, found)
        return self.decided[path]

    def _beside(self, path: Path) -> list[Path]:
        """The runs that make ``path`` a run folder: its siblings, else its cousins (module docstring)."""
        near = self.siblings.get(path.parent)
        if near:
            return near
        return self.cousins.get(path.parent.parent, []) if path.parent != self.root else []

    def _frame_sizes(self, run: Path) -> set[tuple[int, int]]:
        """The sizes of a run's first images (none for a run that is a file)."""
        from .kit.screenshots import image_size

        if run not in self.sizes:
            shots = look(run).shots[:SIZES_READ] if run.is_dir() else ()
            self.sizes[run] = {size for s in shots for size in [image_size(run / s)] if size is not None}
        return self.sizes[run]

    def _like_frames(self, path: Path, found: Look) -> bool:
        """Do ``path``'s images look like the screenshots of the runs beside it: at least 2 with a step number in
        their names, at least 2 of them the size of a frame of those runs (module docstring)?"""
        from .kit.screenshots import image_size

        numbered = _numbered(found.shots)
        if len(numbered) < 2:
            return False
        sizes = {size for r in self._beside(path)[:RUNS_READ] for size in self._frame_sizes(r)}
        return sum(image_size(path / s) in sizes for s in numbered[:SIZES_READ]) >= 2


def without_log(root: Path, unclaimed: list[tuple[Path, list[int]]], runs: list[Path]
                ) -> tuple[list[Path], list[tuple[Path, list[int]]]]:
    """Of the folders no reader claims (``unclaimed``: each with its counts of JSON, HTML and image files), those
    that are runs without a log (the module docstring: they hold screenshots, and a run is their sibling or their
    cousin under ``root``; ``runs``: the paths of the runs found under it), and the rest. A folder of screenshots
    inside such a folder (``r2/frames``) makes the folder at the runs' level the run."""
    rule = _Rule(root, runs)
    found: dict[Path, None] = {}
    rest = []
    for here, counts in unclaimed:
        run = rule.candidate(here) if counts[2] else None  # counts[2]: images
        if run is None or not rule.is_run(run):
            rest.append((here, counts))
        else:
            found[run] = None
    return list(found), [(h, c) for h, c in rest if not any(a in found for a in (h, *h.parents))]


def _one_run(found: Look) -> bool:
    """Is the folder ``found`` describes one run without a log: its screenshots in it, or all under one subfolder
    (``frames/``), and no JSON that could be a log of another shape? Screenshots in two subfolders or more (``1/``,
    ``2/``) are a folder of runs, and a JSON file no reader claims is a log to read with a mapping: both stay
    folders no reader claims."""
    branches = {s.split("/", 1)[0] if "/" in s else "." for s in found.shots}
    return ("." in branches or len(branches) == 1) and not found.logs


def _numbered(shots: tuple[str, ...]) -> list[str]:
    """The images whose names carry a step number (one per number: the first)."""
    seen: dict[str, str] = {}
    for s in shots:
        found = NUMBER.findall(s.rsplit("/", 1)[-1].rsplit(".", 1)[0])
        if found:
            seen.setdefault(str(int(found[-1])), s)
    return list(seen.values())


def evidence(path: Path) -> str:
    """What a ``no_log`` run rests on: how many screenshots, the first of them, and that no reader claims a log."""
    shots = screenshots(path)
    names = ", ".join(shots[:SHOWN]) + (", ..." if len(shots) > SHOWN else "")
    return (f"{len(shots)} screenshot{'s' * (len(shots) != 1)} ({names}) and no log a reader claims: the run was "
            "not read")


def _read(path: Path, display: str) -> "tuple[Run, list[Problem]]":
    from ..base.errors import Problem
    from ..base.problems import Slug
    from ..schemas.records import Run

    why = evidence(path)
    run = Run(run_id=display, path=display, source_format=NAME, steps=(), extra={NAME: why})
    return run, [Problem(Slug.SCREENSHOTS_WITHOUT_LOG, f"{display}: {why}", run=display, file=str(path),
                         severity="warning", hint="re-run it (trajcheck redo lists it), restore its log, or read "
                         "a log of another shape with --mapping FILE")]


NO_LOG = Reader(
    name=NAME,
    claims=lambda p: False,  # never claims a folder itself: discovery names the folders (module docstring)
    claim=lambda p: FolderClaim(NO_CLAIM, "a folder of screenshots without a log is named by discovery, never "
                                "claimed"),
    read=_read,
    summary="a run folder with screenshots and no log any reader claims (damage no_log)",
)
