"""The adapter kit's frames and paths (re-exported by :mod:`trajcheck.readers.kit.reading`): inline screenshots
(base64, data URLs) and screenshot files inside a run, found again by name when the log names another folder,
or beside the run's folder inside the folder being scored, and image sizes read from headers."""

from __future__ import annotations

import base64
import binascii
import os
import struct
from collections.abc import Iterable
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import BinaryIO

from ...base.errors import Problem
from ...base.problems import Slug
from ...base.inputs import exists_not_dir, image_ext, open_regular
from ...base.runfiles import beside_run, outside_join, safe_join

#: One decoded inline screenshot larger than this is refused.
MAX_FRAME_BYTES = 64 * 1024 * 1024
#: How far a run directory is searched for a screenshot by its file name.
MAX_LISTED_FILES = 20_000
MAX_LISTED_DEPTH = 4


class BadImage(ValueError):
    """An inline screenshot that cannot be a frame: ``slug`` is frame_too_large or frame_unreadable, ``kind``
    says which check failed (size, base64, format), the message completes "the screenshot ..."."""

    def __init__(self, slug: Slug, kind: str, message: str):
        super().__init__(message)
        self.slug, self.kind = slug, kind


def decode_image(b64: str) -> tuple[bytes, str]:
    """The bytes and file extension of an inline screenshot (base64, or a ``data:`` URL); raises
    :class:`BadImage` when it is over MAX_FRAME_BYTES, not base64, or not a PNG, JPEG or WebP image."""
    if b64.startswith("data:") and "," in b64:
        b64 = b64.split(",", 1)[1]
    if len(b64) > MAX_FRAME_BYTES * 4 // 3 + 4:  # checked before decoding: the size is known from the text
        raise BadImage(Slug.FRAME_TOO_LARGE, "size", "is over the size limit")
    try:
        data = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadImage(Slug.FRAME_UNREADABLE, "base64", f"is not valid base64 ({exc})") from None
    ext = image_ext(data)
    if ext is None:
        raise BadImage(Slug.FRAME_UNREADABLE, "format", "is not a PNG, JPEG or WebP image")
    return data, ext


def looks_like_base64(shot: str) -> bool:
    """A screenshot field that holds the image itself (a data: URL, or a long string that is no path)."""
    return shot.startswith("data:") or (len(shot) > 200 and "/" not in shot[:64] and "." not in shot[-8:])


class Frames:
    """The frames a log carries: inline images kept (as ``Run.inline_frames``) under generated names, files
    by their path inside the run directory, and files beside it inside the folder being scored (as
    ``Run.outside_files``, by their path relative to the run directory); a bad one is a located warning."""

    def __init__(self, run_dir: Path, run: str, rel: str, problems: list[Problem]):
        self.run_dir, self.run, self.rel, self.problems = run_dir, run, rel, problems
        self.inline: dict[str, bytes] = {}
        #: files outside the run directory, inside the scoring root, that frames come from, and those looked for
        #: there and not found (so that the run's digest changes when one appears): relative path -> resolved path
        self.outside: dict[str, str] = {}
        self._names: dict[str, list[str]] | None = None  # image files by name, listed when first needed
        self._relocated: set[str] = set()  # folders named by the log whose screenshots were found elsewhere
        self._beside: set[str] = set()  # folders named by the log whose screenshots were found beside the run

    def _warn(self, slug: Slug, msg: str, field: str) -> None:
        self.problems.append(Problem(slug, msg, run=self.run, file=self.rel, field=field, severity="warning",
                                     hint="the steps around this screenshot are not checked (frames_missing)"))

    def from_base64(self, b64: str, field: str) -> str | None:
        """An inline screenshot (base64, or a data: URL) as a frame name, or None with a warning."""
        try:
            data, ext = decode_image(b64)
        except BadImage as exc:
            self._warn(exc.slug, f"the screenshot {exc}", field)
            return None
        name = f"inline/frame-{len(self.inline):04d}.{ext}"
        self.inline[name] = data
        return name

    def from_path(self, path: str, field: str) -> str | None:
        """A screenshot saved as a file, or None with a warning. In order:

        * a file at ``path`` inside the run directory;
        * a path through ``..`` (or an absolute one) that resolves to a file inside the folder being scored
          (:func:`~trajcheck.base.runfiles.scoring_root`), outside the run directory: used, with one
          ``screenshot_outside_run`` note for each folder the log names;
        * a path that is not a file there (the folder the harness wrote to, an absolute path) looked up by its
          file name inside the run: one match is used (one ``screenshot_relocated`` warning for each folder the
          log names), several are ``screenshot_ambiguous``;
        * a relative path found under a folder between the run directory and the scoring root (a harness that
          keeps ``logs/`` beside ``screenshots/`` and names ``screenshots/a.png`` from its own working folder):
          used, with the ``screenshot_outside_run`` note;
        * else the path inside the run (``frames_missing`` where a step uses it), or, for one that leaves the
          run, its place inside the scoring root (also ``frames_missing``); one that leaves the scoring root
          too is refused (``path_escapes_run``)."""
        target = safe_join(self.run_dir, path)
        if target is not None and exists_not_dir(target):
            return path
        out = outside_join(self.run_dir, path) if target is None else None
        if out is not None and exists_not_dir(out[1]):
            return self._outside(path, out[0], out[1], field)
        name = _pure(path).name
        found = self._by_name().get(name, []) if name else []
        if len(found) == 1:
            self._once(self._relocated, path, field, Slug.SCREENSHOT_RELOCATED, f"is not in the run; {found[0]!r}, "
                       "the one file of its name inside it, is used", "store screenshot paths relative to the log")
            return found[0]
        if len(found) > 1:
            self.problems.append(Problem(
                Slug.SCREENSHOT_AMBIGUOUS, f"screenshot {path!r} is not in the run, and {len(found)} files of its name "
                f"are ({', '.join(found[:3])}); none is used", run=self.run, file=self.rel, field=field,
                severity="warning", hint="store screenshot paths relative to the log"))
            return None
        if target is not None:
            beside = beside_run(self.run_dir, path)
            hit = next(((rel, t) for rel, t in beside if exists_not_dir(t)), None)
            if hit is not None:
                return self._outside(path, hit[0], hit[1], field)
            self.outside.update((rel, str(t)) for rel, t in beside)  # looked for there: in the digest as absent
            return path  # not there: loading reports it (frames_missing) where a step uses it
        if out is not None:  # inside the scoring root, not there: loading reports it (frames_missing)
            self.outside[out[0]] = str(out[1])
            return out[0]
        self.problems.append(Problem(
            Slug.PATH_ESCAPES_RUN, f"screenshot path {path!r} leaves the run directory", run=self.run, file=self.rel,
            field=field, severity="warning", hint="the steps around this screenshot are not checked (frames_missing); "
            "to use screenshots kept beside the run's folder, score the folder that holds both"))
        return None

    def _outside(self, path: str, rel: str, target: Path, field: str) -> str:
        """A screenshot found outside the run directory, inside the folder being scored: noted once per folder
        the log names, kept (``outside``) for loading and for the run's digest."""
        self.outside[rel] = str(target)
        self._once(self._beside, path, field, Slug.SCREENSHOT_OUTSIDE_RUN, f"is outside the run's folder; {rel!r}, "
                   "inside the folder being scored, is used",
                   "scoring the run's folder alone would not find it: score the folder that holds both")
        return rel

    def _once(self, seen: set[str], path: str, field: str, slug: Slug, what: str, hint: str) -> None:
        """A warning for the first screenshot of each folder the log names (``seen``: those noted): "screenshot
        ``path`` ``what`` (and likewise for the other screenshots under that folder)"."""
        where = str(_pure(path).parent)
        if where not in seen:
            seen.add(where)
            self.problems.append(Problem(slug, f"screenshot {path!r} {what} (and likewise for the other screenshots "
                                         f"under {where!r})", run=self.run, file=self.rel, field=field,
                                         severity="warning", hint=hint))

    def _by_name(self) -> dict[str, list[str]]:
        """The run directory's image files by file name (relative paths): see :func:`images_by_name`."""
        if self._names is None:
            self._names = images_by_name(self.run_dir)
        return self._names

    def from_any(self, shot: str, field: str) -> str | None:
        """A screenshot field that holds either the image (base64) or its path."""
        return self.from_base64(shot, field) if looks_like_base64(shot) else self.from_path(shot, field)


def _pure(path: str) -> PurePosixPath | PureWindowsPath:
    """A path as the log wrote it: Windows's when it holds a backslash."""
    return PureWindowsPath(path) if "\\" in path else PurePosixPath(path)


_listed: dict[tuple[str, int], dict[str, list[str]]] = {}


def images_by_name(run_dir: Path) -> dict[str, list[str]]:
    """A folder's image files by file name (relative paths): at most MAX_LISTED_FILES entries (files and
    folders), MAX_LISTED_DEPTH folders deep, hidden folders left out. Listed once per folder state in a process:
    the runs of a folder of transcripts share one listing."""
    try:
        key = (str(run_dir), run_dir.stat().st_mtime_ns)
    except OSError:
        return {}
    names = _listed.get(key)
    if names is not None:
        return names
    names = {}
    seen = 0
    for dirpath, dirnames, files in os.walk(run_dir, followlinks=False):
        here = Path(dirpath)
        depth = len(here.relative_to(run_dir).parts)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if depth < MAX_LISTED_DEPTH else []
        for f in sorted(files):
            if f.lower().endswith((".png", ".jpg", ".jpeg", ".webp")):
                names.setdefault(f, []).append((here / f).relative_to(run_dir).as_posix())
        seen += len(files) + len(dirnames)
        if seen > MAX_LISTED_FILES:
            break
    if len(_listed) > 64:
        _listed.clear()
    _listed[key] = names
    return names


def relocated(run_dir: Path, path: str) -> str | None:
    """A path that is not inside the run (an absolute one, as harnesses write under their temp dirs) found
    again inside it by its last two parts, else its name; None when neither is a file there."""
    parts = _pure(path).parts
    for k in (2, 1):
        if len(parts) < k:
            continue
        cand = "/".join(parts[-k:])
        t = safe_join(run_dir, cand)
        if t is not None and t.is_file():
            return cand
    return None


def first_file(run_dir: Path, names: Iterable[str]) -> str | None:
    """The first of ``names`` that is a file in ``run_dir``."""
    return next((n for n in names if (run_dir / n).is_file()), None)


def frame_size(frames: Frames, name: str | None) -> tuple[int, int] | None:
    """(width, height) of a frame a reader found (inline, a file in the run, or one beside it inside the folder
    being scored), from its header; None when it cannot be read."""
    if name is None:
        return None
    if name in frames.inline:
        import io

        return _size_of(io.BytesIO(frames.inline[name]))
    path = Path(frames.outside[name]) if name in frames.outside else safe_join(frames.run_dir, name)
    return image_size(path) if path is not None else None


def png_size(path: Path) -> tuple[int, int] | None:
    """(width, height) from a PNG's header, without decoding it; None for another format or an unreadable
    file."""
    try:
        with open(open_regular(path), "rb", closefd=True) as f:  # never a FIFO
            head = f.read(24)
    except OSError:
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        w, h = struct.unpack(">II", head[16:24])
        return w, h
    return None


def image_size(path: Path) -> tuple[int, int] | None:
    """(width, height) of any image Pillow reads; None when it cannot be read."""
    try:
        with open(open_regular(path), "rb", closefd=True) as f:  # never a FIFO
            return _size_of(f)
    except OSError:
        return None


def _size_of(f: BinaryIO) -> tuple[int, int] | None:
    """(width, height) from an image's header (Pillow); None when it cannot be read."""
    from PIL import Image  # loaded when a reader needs a size (not by a warm `score`)

    try:
        with Image.open(f) as img:
            w, h = img.size
            return w, h
    except (OSError, Image.DecompressionBombError):  # a header claiming a bomb's size is no usable size
        return None
