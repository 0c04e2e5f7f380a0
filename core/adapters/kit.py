"""The adapter kit: the parts every format reader shares.

A reader *parses* its format's files into records, *aligns* them into steps with their frames, and reads
the run's *outcome*; what those three stages have in common across formats lives here, so a new reader
imports the kit and not another reader:

* problems: :class:`Problems`, the list a reader collects its problems in, bound to the run and its main
  file; :func:`raise_errors` ends a read that found an error (at most ``MAX_PROBLEMS`` named);
* reading: :func:`read_text_file` (size limit, regular files only, no link out of the run),
  :func:`load_json` / :func:`read_json_file` (strict JSON, located problems), :func:`jsonl_values` and
  :func:`load_json_or_jsonl`, :func:`array_item_lines` (the line each element of a JSON array starts on,
  so a problem in element ``i`` names its line);
* claiming: :func:`claims_plain_dir` (by file names), :class:`Sniffer` (by what a folder's JSON holds);
* frames and paths: :func:`safe_join` (a path a run names stays inside it), :func:`relocated` (an absolute
  path found again inside the run), :func:`first_file`, :func:`decode_image` and :class:`Frames` (inline
  base64 screenshots and screenshot paths), :func:`png_size`, :func:`image_size`;
* values: :func:`num`, :func:`run_id_of`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Callable

from trajcheck.errors import Problem
from trajcheck.inputs import exists_not_dir, image_ext, open_regular
from trajcheck.jsonio import iter_jsonl, parse_json_text
from trajcheck.rundir import MAX_JSON_BYTES, MAX_PROBLEMS, raise_errors, read_text_file, safe_join

__all__ = ["MAX_FRAME_BYTES", "MAX_HISTORY_BYTES", "MAX_JSON_BYTES", "MAX_PROBLEMS", "SNIFF_BYTES", "SNIFF_FILES",
           "BadImage", "Frames", "Problems", "Sniffer", "array_item_lines", "claims_plain_dir", "decode_image",
           "first_file", "image_size", "jsonl_values", "load_json", "load_json_or_jsonl", "looks_like_base64", "num",
           "png_size", "raise_errors", "read_json_file", "read_text_file", "relocated", "run_id_of", "safe_join",
           "str_or_none"]

#: Logs that carry base64 screenshots (browser-use histories, vendor transcripts) may be this large.
MAX_HISTORY_BYTES = 512 * 1024 * 1024
#: One decoded inline screenshot larger than this is refused.
MAX_FRAME_BYTES = 64 * 1024 * 1024
#: How much of a JSON file is read to decide whether a reader claims it, and how many files of a folder.
SNIFF_BYTES = 256 * 1024
SNIFF_FILES = 8


# --- problems ------------------------------------------------------------------------------------------------

class Problems(list[Problem]):
    """The problems of one run as its reader finds them. It is a list, so the shared readers
    (:func:`read_text_file`, :class:`Frames`, ...) append to it; :meth:`error` and :meth:`warn` fill in the run
    and the reader's main file, so a call site names only the slug, the message and what differs."""

    def __init__(self, run: str, file: str = "") -> None:
        super().__init__()
        self.run = run
        self.file = file

    def error(self, slug: str, message: str, *, hint: str = "", file: str | None = None, line: int | None = None,
              field: str = "", severity: str = "error") -> Problem:
        """Add a problem (an error unless ``severity`` says otherwise) and return it."""
        p = Problem(slug, message, run=self.run, file=self.file if file is None else file, line=line, field=field,
                    hint=hint, severity=severity)
        self.append(p)
        return p

    def warn(self, slug: str, message: str, *, hint: str = "", file: str | None = None, line: int | None = None,
             field: str = "") -> Problem:
        """Add a warning: reported, and the run is still scored."""
        return self.error(slug, message, hint=hint, file=file, line=line, field=field, severity="warning")

    def raise_errors(self) -> None:
        """End the read when any problem so far is an error."""
        raise_errors(self, self.run)

    def warnings(self) -> list[Problem]:
        """What a reader returns beside its run: every problem that is not an error."""
        return [p for p in self if p.severity != "error"]


def run_id_of(run_dir: Path, display: str) -> str:
    """A run's id when its format names none: the directory's own name."""
    return run_dir.resolve().name or display


# --- reading -------------------------------------------------------------------------------------------------

def load_json(path: Path, *, run: str, rel: str, problems: list[Problem],
              limit: int = MAX_JSON_BYTES) -> tuple[Any, str] | None:
    """(value, text) of ``path`` read as strict JSON, or None with a located problem appended. The text is
    kept for :func:`array_item_lines`; ``None`` is told apart from a file that holds ``null``."""
    text = read_text_file(path, run=run, rel=rel, problems=problems, limit=limit)
    if text is None:
        return None
    value, p = parse_json_text(text, run=run, file=rel)
    if p:
        problems.append(p)
        return None
    return value, text


def read_json_file(path: Path, *, run: str, rel: str, problems: list[Problem],
                   limit: int = MAX_JSON_BYTES) -> Any:
    """Read ``path`` as strict JSON; on failure append a located problem and return None."""
    got = load_json(path, run=run, rel=rel, problems=problems, limit=limit)
    return None if got is None else got[0]


def jsonl_values(text: str, *, run: str, rel: str, problems: list[Problem]) -> Iterator[Any]:
    """The values of a JSONL text, lazily (a caller that stops early reads no further line); a line that is
    not JSON is a located problem, appended when the line is reached."""
    for _n, value, p in iter_jsonl(text, run=run, file=rel):
        if p:
            problems.append(p)
        else:
            yield value


def load_json_or_jsonl(text: str, *, run: str, rel: str, problems: list[Problem]) -> Any:
    """A log that is JSON, or JSONL when its name ends with ``.jsonl`` (then: the list of its lines' values).
    None, with the problem appended, when JSON does not parse."""
    if rel.endswith(".jsonl"):
        return list(jsonl_values(text, run=run, rel=rel, problems=problems))
    value, p = parse_json_text(text, run=run, file=rel)
    if p:
        problems.append(p)
    return value


_WS = re.compile(r"[ \t\n\r]*")


def _skip(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m is not None else i  # the pattern matches the empty string: m is never None


def _find_key(text: str, i: int, key: str, dec: json.JSONDecoder) -> int | None:
    """Where the value of top-level ``key`` starts in the object at ``i``, or None."""
    if text[i] != "{":
        return None
    i += 1
    while True:
        i = _skip(text, i)
        if text[i] == "}":
            return None
        k, i = dec.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] != ":":
            return None
        i = _skip(text, i + 1)
        if k == key:
            return i
        _, i = dec.raw_decode(text, i)
        i = _skip(text, i)
        if text[i] == ",":
            i += 1


def array_item_lines(text: str, key: str | None = None) -> list[int]:
    """1-based line where each element of a JSON array starts: the top-level array, or the array under
    top-level ``key``. Best effort (``[]`` when the text has another shape); call it on text that parsed."""
    if text.startswith("\ufeff"):
        text = text[1:]
    dec = json.JSONDecoder()
    try:
        found = _find_key(text, _skip(text, 0), key, dec) if key is not None else _skip(text, 0)
        if found is None or text[found] != "[":
            return []
        i = found + 1
        lines: list[int] = []
        line, pos = 1, 0
        while True:
            i = _skip(text, i)
            if text[i] == "]":
                return lines
            line += text.count("\n", pos, i)
            pos = i
            lines.append(line)
            _, i = dec.raw_decode(text, i)
            i = _skip(text, i)
            if text[i] == ",":
                i += 1
    except (ValueError, IndexError, AttributeError):
        return []


def str_or_none(v: Any) -> str | None:
    """A JSON string as is; None for anything else."""
    return v if isinstance(v, str) else None


def num(v: Any) -> float | None:
    """A JSON number as a float; None for anything else (a bool is not a number here)."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


# --- claiming ------------------------------------------------------------------------------------------------

def claims_plain_dir(path: Path, *names: str) -> bool:
    """Any of ``names`` is a file in ``path`` (a FIFO or a device too: the reader reports it as
    not_a_regular_file and never opens it), and ``path`` is not a native run."""
    if (path / "run.json").exists():
        return False
    return any(exists_not_dir(path / n) for n in names)


class Sniffer:
    """Claims a folder by what its JSON holds: ``test`` sees the first SNIFF_BYTES of each of the folder's
    first SNIFF_FILES ``.json``/``.jsonl`` files; ``default`` is the file named when there is none."""

    def __init__(self, test: Callable[[bytes], bool], default: str):
        self.test, self.default = test, default

    def files(self, path: Path) -> list[Path]:
        """The folder's files that pass the test, by name."""
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
        """A reader's ``claims``: not a native run, and one of its files passes the test."""
        return not (path / "run.json").exists() and bool(self.files(path))

    def pick(self, run_dir: Path, run: str, problems: list[Problem]) -> str:
        """The transcript a run is read from (the first by name; a warning when there are several)."""
        found = self.files(run_dir)
        if len(found) > 1:
            problems.append(Problem("history_ambiguous", f"{', '.join(p.name for p in found)} are all transcripts; "
                                    f"{found[0].name} is read", run=run, file=found[1].name, severity="warning",
                                    hint="keep one transcript per directory"))
        return found[0].name if found else self.default


# --- frames and paths ----------------------------------------------------------------------------------------

class BadImage(ValueError):
    """An inline screenshot that cannot be a frame: ``slug`` is frame_too_large or frame_unreadable, ``kind``
    says which check failed (size, base64, format), the message completes "the screenshot ..."."""

    def __init__(self, slug: str, kind: str, message: str):
        super().__init__(message)
        self.slug, self.kind = slug, kind


def decode_image(b64: str) -> tuple[bytes, str]:
    """The bytes and file extension of an inline screenshot (base64, or a ``data:`` URL); raises
    :class:`BadImage` when it is over MAX_FRAME_BYTES, not base64, or not a PNG, JPEG or WebP image."""
    if b64.startswith("data:") and "," in b64:
        b64 = b64.split(",", 1)[1]
    if len(b64) > MAX_FRAME_BYTES * 4 // 3 + 4:  # checked before decoding: the size is known from the text
        raise BadImage("frame_too_large", "size", "is over the size limit")
    try:
        data = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadImage("frame_unreadable", "base64", f"is not valid base64 ({exc})") from None
    ext = image_ext(data)
    if ext is None:
        raise BadImage("frame_unreadable", "format", "is not a PNG, JPEG or WebP image")
    return data, ext


def looks_like_base64(shot: str) -> bool:
    """A screenshot field that holds the image itself (a data: URL, or a long string that is no path)."""
    return shot.startswith("data:") or (len(shot) > 200 and "/" not in shot[:64] and "." not in shot[-8:])


class Frames:
    """The frames a log carries: inline images kept (as ``Run.inline_frames``) under generated names, files
    by their path inside the run directory; a bad one is a located warning."""

    def __init__(self, run_dir: Path, run: str, rel: str, problems: list[Problem]):
        self.run_dir, self.run, self.rel, self.problems = run_dir, run, rel, problems
        self.inline: dict[str, bytes] = {}

    def _warn(self, slug: str, msg: str, field: str) -> None:
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
        """A screenshot saved as a file inside the run directory, or None with a warning."""
        if safe_join(self.run_dir, path) is None:
            self._warn("path_escapes_run", f"screenshot path {path!r} leaves the run directory", field)
            return None
        return path

    def from_any(self, shot: str, field: str) -> str | None:
        """A screenshot field that holds either the image (base64) or its path."""
        return self.from_base64(shot, field) if looks_like_base64(shot) else self.from_path(shot, field)


def relocated(run_dir: Path, path: str) -> str | None:
    """A path that is not inside the run (an absolute one, as harnesses write under their temp dirs) found
    again inside it by its last two parts, else its name; None when neither is a file there."""
    parts = (PureWindowsPath(path) if "\\" in path else PurePosixPath(path)).parts
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
    from PIL import Image  # loaded when a reader needs a size (not by a warm `score`)

    try:
        with open(open_regular(path), "rb", closefd=True) as f, Image.open(f) as img:  # never a FIFO
            w, h = img.size
            return w, h
    except (OSError, Image.DecompressionBombError):  # a header claiming a bomb's size is no usable size
        return None
