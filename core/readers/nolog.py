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
- it is not hidden, ignored (``.trajcheckignore``) or a reader's companion folder (WebVoyager's ``_metadata``).

Any other folder with data and no run stays a ``no_reader_claims`` problem. The run read here has no steps and no
task (nothing says which task it ran): its row has status ``ok``, the verdict ``unknown``, ``damage`` ``no_log``
with the screenshots it holds as evidence, so it is counted among the runs, in the expected runs' summary and in
``redo``, and it never passes.
"""

from __future__ import annotations

import os
import re
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


def _files(path: Path, suffixes: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, files in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        here = Path(dirpath).relative_to(path)
        found += [(here / f).as_posix() for f in sorted(files) if f.lower().endswith(suffixes)]
    return found


def screenshots(path: Path) -> list[str]:
    """The screenshots in ``path`` and its subfolders (hidden ones skipped), as paths relative to it, sorted."""
    return _files(path, IMAGE_SUFFIXES)


def logs(path: Path) -> list[str]:
    """The files in ``path`` and its subfolders that may be a log of a shape no reader knows: JSON and JSON Lines,
    but a trajcheck contract (``contract.json``), which is a check, not a log."""
    return [f for f in _files(path, LOG_SUFFIXES) if f.rsplit("/", 1)[-1] not in NOT_LOGS]


def without_log(root: Path, unclaimed: list[tuple[Path, list[int]]], runs: list[Path]
                ) -> tuple[list[Path], list[tuple[Path, list[int]]]]:
    """Of the folders no reader claims (``unclaimed``: each with its counts of JSON, HTML and image files), those
    that are runs without a log (the module docstring: they hold screenshots, and a run is their sibling or their
    cousin under ``root``; ``runs``: the paths of the runs found under it), and the rest. A folder of screenshots
    inside such a folder (``r2/frames``) makes the folder at the runs' level the run."""
    holders = {p for r in runs for p in (r, *r.parents)}
    parents = {r.parent for r in runs}
    grandparents = {p.parent for p in parents if p != root}
    found: list[Path] = []
    rest = []
    for here, counts in unclaimed:
        run = None
        if counts[2]:  # images
            for a in (here, *here.parents):
                if a == root or not a.is_relative_to(root) or a in holders:
                    break
                if a.parent in parents or (a.parent != root and a.parent.parent in grandparents):
                    run = a
                    break
        if run is None or not _one_run(run) or not _like_frames(run, _beside(run, root, runs)):
            rest.append((here, counts))
        elif run not in found:
            found.append(run)
    return found, [(h, c) for h, c in rest if not any(h.is_relative_to(f) for f in found)]


def _one_run(path: Path) -> bool:
    """Is ``path`` one run without a log: its screenshots in it, or all under one subfolder (``frames/``), and no
    JSON that could be a log of another shape? Screenshots in two subfolders or more (``1/``, ``2/``) are a folder
    of runs, and a JSON file no reader claims is a log to read with a mapping: both stay folders no reader
    claims."""
    branches = {s.split("/", 1)[0] if "/" in s else "." for s in screenshots(path)}
    return ("." in branches or len(branches) == 1) and not logs(path)


def _beside(path: Path, root: Path, runs: list[Path]) -> list[Path]:
    """The runs that make ``path`` a run folder: its siblings, else its cousins (module docstring), sorted."""
    near = sorted(r for r in runs if r.parent == path.parent)
    return near or sorted(r for r in runs if r.parent != root and path.parent != root
                          and r.parent.parent == path.parent.parent)


def _numbered(shots: list[str]) -> list[str]:
    """The images whose names carry a step number (one per number: the first)."""
    seen: dict[str, str] = {}
    for s in shots:
        found = NUMBER.findall(s.rsplit("/", 1)[-1].rsplit(".", 1)[0])
        if found:
            seen.setdefault(str(int(found[-1])), s)
    return list(seen.values())


def _frame_sizes(run: Path) -> set[tuple[int, int]]:
    """The sizes of a run's first images (none for a run that is a file)."""
    from .kit.screenshots import image_size

    if not run.is_dir():
        return set()
    return {size for s in screenshots(run)[:SIZES_READ] for size in [image_size(run / s)] if size is not None}


def _like_frames(path: Path, beside: list[Path]) -> bool:
    """Do ``path``'s images look like the screenshots of the runs ``beside`` it: at least 2 with a step number in
    their names, at least 2 of them the size of a frame of those runs (module docstring)?"""
    from .kit.screenshots import image_size

    numbered = _numbered(screenshots(path))
    if len(numbered) < 2:
        return False
    sizes = {size for r in beside[:RUNS_READ] for size in _frame_sizes(r)}
    return sum(image_size(path / s) in sizes for s in numbered[:SIZES_READ]) >= 2


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
