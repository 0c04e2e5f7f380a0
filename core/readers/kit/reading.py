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
* claiming (:mod:`~trajcheck.readers.kit.claiming`, re-exported): :func:`claims_plain_dir` (by file names),
  :class:`Sniffer` (by the shape of a folder's parsed JSON);
* frames and paths: :func:`safe_join` (a path a run names stays inside it), :func:`relocated` (an absolute
  path found again inside the run), :func:`first_file`, :func:`decode_image` and :class:`Frames` (inline
  base64 screenshots and screenshot paths), :func:`png_size`, :func:`image_size`;
* values: :func:`num`, :func:`run_id_of`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...base.errors import Problem
from ...base.problems import Slug
from ...base.jsonio import iter_jsonl, parse_json_text
from ...base.runfiles import MAX_JSON_BYTES, MAX_PROBLEMS, raise_errors, read_text_file, safe_join

from .claiming import SNIFF_BYTES, SNIFF_FILES, Sniffer, claims_plain_dir
from .screenshots import (MAX_FRAME_BYTES, BadImage, Frames, decode_image, first_file, frame_size, image_size,
                          looks_like_base64, png_size, relocated)

__all__ = ["MAX_FRAME_BYTES", "MAX_HISTORY_BYTES", "MAX_JSON_BYTES", "MAX_PROBLEMS", "SNIFF_BYTES", "SNIFF_FILES",
           "BadImage", "Frames", "Problems", "Sniffer", "array_item_lines", "claims_plain_dir", "decode_image",
           "first_file", "frame_size", "image_size", "jsonl_values", "load_json", "load_json_or_jsonl",
           "looks_like_base64", "num", "png_size", "raise_errors", "read_json_file", "read_text_file", "relocated",
           "run_id_of", "safe_join", "split_run", "str_or_none", "MAX_STEP_FILES", "natural", "file_size"]

#: Logs that carry base64 screenshots (browser-use histories, vendor transcripts) may be this large.
MAX_HISTORY_BYTES = 512 * 1024 * 1024



# --- problems ------------------------------------------------------------------------------------------------

class Problems(list[Problem]):
    """The problems of one run as its reader finds them. It is a list, so the shared readers
    (:func:`read_text_file`, :class:`Frames`, ...) append to it; :meth:`error` and :meth:`warn` fill in the run
    and the reader's main file, so a call site names only the slug, the message and what differs."""

    def __init__(self, run: str, file: str = "") -> None:
        super().__init__()
        self.run = run
        self.file = file

    def error(self, slug: Slug, message: str, *, hint: str = "", file: str | None = None, line: int | None = None,
              field: str = "", severity: str = "error") -> Problem:
        """Add a problem (an error unless ``severity`` says otherwise) and return it."""
        p = Problem(slug, message, run=self.run, file=self.file if file is None else file, line=line, field=field,
                    hint=hint, severity=severity)
        self.append(p)
        return p

    def warn(self, slug: Slug, message: str, *, hint: str = "", file: str | None = None, line: int | None = None,
             field: str = "") -> Problem:
        """Add a warning: reported, and the run is still scored."""
        return self.error(slug, message, hint=hint, file=file, line=line, field=field, severity="warning")

    def raise_errors(self) -> None:
        """End the read when any problem so far is an error."""
        raise_errors(self, self.run)

    def warnings(self) -> list[Problem]:
        """What a reader returns beside its run: every problem that is not an error."""
        return [p for p in self if p.severity != "error"]


#: At most this many step files are read for one run (a log written one file per step).
MAX_STEP_FILES = 100_000


def natural(name: str) -> list[Any]:
    """A sort key that orders numbers by value: step_9 before step_10."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", name) if t]


def file_size(path: Path) -> int:
    """A file's size in bytes; 0 when it cannot be read."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def run_id_of(run_dir: Path, display: str) -> str:
    """A run's id when its format names none: the directory's own name (a run that is one file of a folder of
    transcripts: the folder's name and the file's name without its extension, ``logs/session_3``)."""
    if run_dir.is_file():  # its folder's name too: model_a/task1.json and model_b/task1.json are two runs
        return f"{run_dir.resolve().parent.name}/{run_dir.stem}"
    return run_dir.resolve().name or display


def split_run(path: Path) -> tuple[Path, str | None]:
    """The run's folder and, for a run that is one file of a folder of transcripts, that file's name."""
    return (path.parent, path.name) if path.is_file() else (path, None)


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
    """A log that is JSON, or JSONL when its name ends with ``.jsonl`` or it does not parse whole and its first
    two lines are each a JSON object or array (then: the list of its lines' values; a
    pretty-printed JSON array saved under a ``.jsonl`` name, as Agent TARS writes its event stream, is read whole).
    None, with the problem appended, when JSON does not parse."""
    if rel.endswith(".jsonl"):
        if text.lstrip("\ufeff \t\r\n").startswith("[") and "\n" in text.strip():  # a JSON array under a .jsonl name
            value, p = parse_json_text(text, run=run, file=rel)
            if p is None and isinstance(value, list):
                return value
        return list(jsonl_values(text, run=run, rel=rel, problems=problems))
    value, p = parse_json_text(text, run=run, file=rel)
    if p and _lines_of_json(text):  # JSON Lines under another name (AppAgent writes log_*.txt)
        return list(jsonl_values(text, run=run, rel=rel, problems=problems))
    if p:
        problems.append(p)
    return value


def _lines_of_json(text: str) -> bool:
    """Whether a text's first two non-empty lines are each a JSON object or array: JSON Lines, whatever its name."""
    lines: list[str] = []
    for ln in text.splitlines():
        if ln.strip():
            lines.append(ln.strip())
        if len(lines) == 2:
            break
    if len(lines) < 2 or not all(ln[:1] in "[{" for ln in lines):
        return False
    try:
        return all(isinstance(json.loads(ln), (dict, list)) for ln in lines)
    except (ValueError, RecursionError):
        return False


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
