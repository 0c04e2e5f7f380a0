"""Reading a large log one item at a time: a JSON log with ijson's C parser (yajl), a JSONL log one line at a time.
A transcript or history whose screenshots are inline (base64) is never held whole, only the item (or line) being
read. A reader decodes each item's screenshots as it goes (:class:`~trajcheck.readers.kit.reading.Frames`) and drops
the text."""

from __future__ import annotations

import codecs
import json
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ...base.errors import Problem
from ...base.inputs import open_regular
from ...base.jsonio import parse_json_text
from ...base.problems import Slug
from ...base.runfiles import safe_join

#: Logs at least this large are streamed; smaller ones are read whole (the same result, with a JSON error's
#: line and column in the problem).
STREAM_BYTES = 32 * 1024 * 1024


def streams(run_dir: Path, rel: str, limit: int, suffixes: tuple[str, ...] = (".json",)) -> bool:
    """Whether the log ``rel`` is read streamed: a file with one of ``suffixes`` (JSON by default) from
    STREAM_BYTES up to ``limit`` bytes, a regular file inside the run (else it is read whole, whose checks report
    the file that is too large, not regular, or a link out of the run)."""
    path = safe_join(run_dir, rel)
    if path is None or not rel.endswith(suffixes):
        return False
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and STREAM_BYTES <= st.st_size <= limit


#: The deepest a streamed file is read: no transcript nests this deep (the JSON reader refuses past 64 levels).
MAX_DEPTH = 256


class StreamError(ValueError):
    """The file is not JSON (or not readable) past some point; read it whole to locate the problem."""


def _joined(names: list[str | None]) -> str | None:
    """The dotted path of ``names`` as ijson.parse spells a prefix; None past two levels, where no prefix this
    module compares with can be."""
    return ".".join(n or "" for n in names) if len(names) <= 2 else None


def stream_items(path: Path, key: str, meta: dict[str, Any]) -> Iterator[Any]:
    """The items of the array under top-level ``key`` of a JSON object (or of the top-level array itself), one
    at a time. The object's other top-level values are put in ``meta`` as they are read, so ``meta`` is whole
    once the items are. Raises :class:`StreamError` where the JSON breaks."""
    import ijson
    from ijson.common import ObjectBuilder

    items = {f"{key}.item"}
    builder: ObjectBuilder | None = None
    into: str | None = None  # None: the item being built is one of the array's, else the meta key it fills
    top_key = ""
    names: list[str | None] = []  # the path to the current event: a map's key, "item" in an array
    try:
        with open(open_regular(path), "rb", closefd=True) as f:
            # basic_parse, with the path kept here and joined only near the top: ijson.parse builds every event's
            # dotted prefix, a string as long as the nesting is deep, a chunk's worth at a time (a file nested
            # 30,000 deep took gigabytes); no deeper than MAX_DEPTH, past which the file is read whole and the
            # JSON reader names the depth
            for event, value in ijson.basic_parse(f, use_float=True):
                if event in ("start_map", "start_array"):
                    prefix = _joined(names)
                    if len(names) >= MAX_DEPTH:
                        raise StreamError(f"nested deeper than {MAX_DEPTH} levels")
                    names.append(None if event == "start_map" else "item")
                elif event in ("end_map", "end_array"):
                    names.pop()
                    prefix = _joined(names)
                elif event == "map_key":
                    prefix = _joined(names[:-1])
                    names[-1] = value
                else:
                    prefix = _joined(names)
                if builder is None:
                    if prefix == "" and event == "start_array":
                        items = {"item"}  # a top-level array: its items are the ones wanted
                    if prefix == "" and event == "map_key":
                        top_key = value
                        continue
                    if prefix in items:
                        builder, into = ObjectBuilder(), None
                    elif prefix == top_key and top_key != key and prefix:
                        builder, into = ObjectBuilder(), top_key
                    else:
                        continue
                builder.event(event, value)
                if not builder.containers:  # the value is whole
                    done, builder = builder.value, None
                    if into is None:
                        yield done
                    else:
                        meta[into] = done
    except (OSError, ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError) as exc:
        raise StreamError(str(exc)) from None


def stream_lines(path: Path, *, run: str, rel: str, problems: list[Problem]) -> Iterator[Any]:
    """The values of a JSONL file, one line at a time: what :func:`~trajcheck.readers.kit.reading.jsonl_values` gives
    for the whole text (the same lines, numbered alike; a line that is not JSON is a located problem, appended
    when it is reached), holding one line at a time. Bytes that are not UTF-8 are the ``not_utf8`` problem of
    the whole read (its byte, offset and line), and the reading stops there. Raises :class:`StreamError` when
    the file cannot be read."""
    n = offset = 0
    try:
        with open(open_regular(path), "rb", closefd=True) as f:
            for k, raw in enumerate(f):  # split at b"\n" only, which no UTF-8 character holds: each decodes alone
                at = offset
                offset += len(raw)
                if at == 0 and raw.startswith(codecs.BOM_UTF8):  # utf-8-sig, as the whole read decodes
                    raw, at = raw[len(codecs.BOM_UTF8):], len(codecs.BOM_UTF8)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    problems.append(Problem(
                        Slug.NOT_UTF8, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {at + exc.start})",
                        run=run, file=rel, line=k + 1, hint="re-save the file as UTF-8"))
                    return
                for line in text.splitlines():  # as the whole text's splitlines() numbers them
                    n += 1
                    if not line.strip():
                        continue
                    value, p = parse_json_text(line, run=run, file=rel, line=n)
                    if p:
                        problems.append(p)
                    else:
                        yield value
    except OSError as exc:
        raise StreamError(str(exc)) from None


def any_line(path: Path, mark: bytes, test: Callable[[Any], bool]) -> bool:
    """Whether a line of a JSONL file that holds ``mark`` parses to a value that passes ``test``: a cheap scan
    (only the lines holding the mark are parsed) that tells a file's shape before it is streamed."""
    try:
        with open(open_regular(path), "rb", closefd=True) as f:
            for raw in f:
                if mark in raw:
                    try:
                        if test(json.loads(raw)):
                            return True
                    except (ValueError, RecursionError):
                        continue
    except OSError:
        return False
    return False
