"""The report's work per run, on every core: its frames' thumbnails and crops, then its page.

For each frame a run page shows, the thumbnail is found, in this order: in the report folder (a previous
report wrote it and recorded it), in the cache (:class:`trajcheck.media.thumbs.Cache`), or made (one decode
per frame, its crops with it). The frame's content hash is the one scoring recorded in the run's ``inputs``
when the file's size and mtime are still those recorded (as scoring itself trusts them), else the hash of
its bytes. Runs are spread over worker processes (:func:`run_pages`); each writes its own files through an
:class:`~trajcheck.render.reportfiles.Output` and returns what it wrote and which images it has, for the pair
pages and the index that the parent process writes after.
"""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

from ..base.box import Box
from ..base.runfiles import safe_join
from ..media.frames import FrameError, read_frame_file
from ..media.thumbs import Cache, content_hash, crop_name, make, parse_thumb_name
from ..scoring.digest import outside_names
from .reportfiles import Output

_HEX = re.compile(r"^[0-9a-f]{32}$")
#: Frame file -> (thumbnail path in the report, frame width, frame height), or None when it has none.
Thumb = tuple[str, int, int]


@dataclass
class Images:
    """The images the report has of each frame file (by its resolved path)."""

    thumbs: dict[str, Thumb | None] = field(default_factory=dict)
    crops: dict[tuple[str, tuple[int, ...]], str] = field(default_factory=dict)
    made: int = 0  # frames decoded by this report

    def thumb(self, path: Path | None) -> Thumb | None:
        return None if path is None else self.thumbs.get(str(path))

    def crop(self, path: Path | None, box: Box | list[int]) -> str | None:
        return None if path is None else self.crops.get((str(path), tuple(int(v) for v in box)))

    def merge(self, other: "Images") -> None:
        self.thumbs.update(other.thumbs)
        self.crops.update(other.crops)
        self.made += other.made


@lru_cache(maxsize=16)
def _where(run_path: str, inputs: str | None) -> tuple[Path, frozenset[str]]:
    """A run's folder and the ``../`` names of its frames beside it (once per run, not per step)."""
    run_dir = Path(run_path)
    run_dir = run_dir.parent if run_dir.is_file() else run_dir  # a run that is one file of a folder of transcripts
    return run_dir, outside_names(inputs)  # frames beside its folder, inside the folder scored


def frame_paths(r: dict[str, Any], s: dict[str, Any]) -> tuple[Path | None, Path | None]:
    """A step's pre and post frame files, resolved inside its run's folder (or where scoring took them from,
    beside it); None where there is none or the path leads out."""
    run_dir, outside = _where(r["run_path"], r.get("inputs"))
    return tuple(  # type: ignore[return-value]
        None if not rel else Path(os.path.realpath(run_dir / rel)) if rel in outside else safe_join(run_dir, rel)
        for rel in (s["frame_pre"], s["frame_post"]))


def wanted_crops(s: dict[str, Any]) -> tuple[list[Box], list[Box]]:
    """The crops a step's page shows of its pre and post frames: the high-risk region of each, and on the post
    frame the box around the lines OCR read new (:func:`screen_crop`)."""
    pre: list[Box] = []
    post: list[Box] = []
    region = s.get("effect_region_box")
    if region and s.get("effect_high_risk"):
        pre.append(Box(*region))
        post.append(Box(*region))
    sc = screen_crop(s)
    if sc is not None:
        post.append(sc)
    return pre, post


#: Pixels around the lines OCR read in their crop.
SCREEN_PAD = 12


def screen_boxes(s: dict[str, Any]) -> list[list[int]]:
    """The boxes of the lines OCR read that the action brought up."""
    if s.get("screen_text") is None:
        return []
    boxes = dict(zip(s["screen_text"] or [], s.get("screen_text_boxes") or []))
    return [b for b in (boxes.get(t) for t in (s.get("screen_text_new") or [])) if b]


def screen_crop(s: dict[str, Any]) -> Box | None:
    placed = screen_boxes(s)
    if not placed:
        return None
    return Box(max(0, min(b[0] for b in placed) - SCREEN_PAD), max(0, min(b[1] for b in placed) - SCREEN_PAD),
               max(b[2] for b in placed) + SCREEN_PAD, max(b[3] for b in placed) + SCREEN_PAD)


def _recorded(r: dict[str, Any]) -> dict[str, list[Any]]:
    try:
        files = json.loads(r["inputs"]).get("files") if isinstance(r.get("inputs"), str) else None
    except (ValueError, AttributeError):
        return {}
    return files if isinstance(files, dict) else {}


def _known_hash(path: Path, rel: str, recorded: dict[str, list[Any]]) -> str | None:
    """The content hash scoring recorded for ``rel`` when the file's size and mtime are still the recorded ones."""
    entry = recorded.get(rel)
    if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], str) and _HEX.match(entry[2])):
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    return entry[2] if (st.st_size, st.st_mtime_ns) == (entry[0], entry[1]) else None


def thumbs_in(old: dict[str, list[Any]]) -> dict[str, str]:
    """The thumbnails a previous report's record lists: content hash -> path."""
    found = {}
    for rel in old:
        got = parse_thumb_name(rel[9:]) if rel.startswith("assets/t/") else None
        if got is not None:
            found[got[0]] = rel
    return found


class Thumbnailer:
    """Finds or makes the images of one run's frames, into the report folder."""

    def __init__(self, out: Output, cache: Cache, in_report: dict[str, str]):
        self.out, self.cache = out, cache
        self.in_report = in_report  # hash -> thumbnail path the previous report wrote (:func:`thumbs_in`)

    def run(self, r: dict[str, Any], steps: list[dict[str, Any]], images: Images) -> None:
        """Every frame ``steps`` show, with the crops they show of it."""
        want: dict[str, tuple[Path, str, set[Box]]] = {}
        for s in steps:
            pre_crops, post_crops = wanted_crops(s)
            for path, rel, crops in zip(frame_paths(r, s), (s["frame_pre"], s["frame_post"]), (pre_crops, post_crops)):
                if path is not None:
                    want.setdefault(str(path), (path, rel, set()))[2].update(crops)
        recorded = _recorded(r)
        for key, (path, rel, boxes) in want.items():
            self.frame(key, path, _known_hash(path, rel, recorded), sorted(boxes), images)

    def _have(self, rel: str) -> bool:
        """``rel`` is in the report folder: kept from the previous report, or copied from the cache."""
        if self.out.has(rel):
            return True
        data = self.cache.read(rel.rsplit("/", 1)[-1])
        if data is None:
            return False
        self.out.put(rel, data)
        return True

    def frame(self, key: str, path: Path, digest: str | None, crops: list[Box], images: Images) -> None:
        raw = None
        if digest is None:
            try:
                raw = read_frame_file(path)
            except (FrameError, OSError):
                images.thumbs[key] = None
                return
            digest = content_hash(raw)
        thumb = self.in_report.get(digest)
        if thumb is None or not self.out.has(thumb):
            name = self.cache.thumb(digest)
            thumb = None if name is None or not self._have(f"assets/t/{name}") else f"assets/t/{name}"
        missing = [b for b in crops if not self._have(f"assets/t/{crop_name(digest, b)}")]
        if thumb is not None and not missing:
            self._done(key, digest, thumb, crops, images)
            return
        try:
            if raw is None:
                raw = read_frame_file(path)
            made = make(raw, digest, thumb is None, tuple(missing))
        except (FrameError, OSError):  # gone or damaged since: what the report already has is still shown
            self._done(key, digest, thumb, [b for b in crops if b not in missing], images)
            return
        images.made += 1
        for name, data in ([made.thumb] if made.thumb else []) + list(made.crops.items()):
            self.cache.write(name, data)
            self.out.put(f"assets/t/{name}", data)
        self._done(key, digest, f"assets/t/{made.thumb[0]}" if made.thumb else thumb, crops, images)

    def _done(self, key: str, digest: str, thumb: str | None, crops: list[Box], images: Images) -> None:
        got = None if thumb is None else parse_thumb_name(thumb.rsplit("/", 1)[-1])
        images.thumbs[key] = None if thumb is None or got is None else (thumb, got[1], got[2])
        for b in crops:
            images.crops[(key, tuple(int(v) for v in b))] = f"assets/t/{crop_name(digest, b)}"


#: A run's page: (run, steps, images, output) -> nothing (it puts its files into the output).
RenderRun = Callable[[dict[str, Any], list[dict[str, Any]], Images, Output, bool], None]

_worker_state: dict[str, Any] = {}


def _init(root: Path, old: dict[str, list[Any]], render: RenderRun) -> None:
    _worker_state.update(root=root, old=old, render=render, in_report=thumbs_in(old), cache=Cache())


@dataclass
class RunDone:
    """What one run's work wrote and kept (the report folder's paths), and the images it has."""

    run_id: str
    files: dict[str, list[Any]]
    written: list[str]
    images: Images
    drawn: bool


def _one(job: tuple[dict[str, Any], list[dict[str, Any]], bool]) -> RunDone:
    r, steps, thumbs = job
    out = Output(_worker_state["root"], _worker_state["old"])
    images = Images()
    if thumbs and r.get("status") == "ok":
        Thumbnailer(out, _worker_state["cache"], _worker_state["in_report"]).run(r, steps, images)
    _worker_state["render"](r, steps, images, out, thumbs)
    drawn = any(v is not None for v in images.thumbs.values())
    return RunDone(r["run_id"], out.files, out.written, images, drawn)


def run_pages(root: Path, old: dict[str, list[Any]], jobs: list[tuple[dict[str, Any], list[dict[str, Any]], bool]],
              render: RenderRun, workers: int) -> Iterator[RunDone]:
    """Each run's images and page, over ``workers`` processes (in this one for 0 or 1), in the order of
    ``jobs``."""
    if workers <= 1 or len(jobs) < 2 * workers:
        _init(root, old, render)
        try:
            yield from map(_one, jobs)
        finally:
            _worker_state.clear()
        return
    with ProcessPoolExecutor(max_workers=workers, initializer=_init, initargs=(root, old, render)) as pool:
        yield from pool.map(_one, jobs, chunksize=max(1, min(8, len(jobs) // (workers * 8))))
