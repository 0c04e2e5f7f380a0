"""What a log file holds, parsed: the data a reader claims a folder by (its shape, never a substring).

:func:`head_value` parses a JSON or JSONL file's first SNIFF_BYTES: the whole value when the file is that small,
else as much of it as the bytes hold (every complete string, number and container, and the containers cut short
with the members read so far), so that a log of any size is judged by the same data in the same time. The values
are cached by path, size and modification time, so the readers asked about one folder parse each file once.

:func:`walk` visits a value's containers breadth first, at most :data:`MAX_NODES` of them, for the shapes a reader
looks for deep in a log (a ``tool_use`` block in a message's content).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...base.inputs import open_regular

#: How much of a file is parsed to tell its shape (the same budget as the readers' sniffing had).
HEAD_BYTES = 256 * 1024
#: The deepest a head is parsed (a log nests a few levels; the JSON reader refuses past 64).
MAX_DEPTH = 128
#: How many containers :func:`walk` visits.
MAX_NODES = 20_000
#: How many parsed heads are kept: the files of the folder being claimed (each reader asks about the same few
#: files in turn), never more, as a parsed head may take a few MB.
_CACHE_SIZE = 16
_cache: dict[tuple[str, int, int], Any] = {}


class _Missing:
    """No value: the file is not JSON, or cannot be read."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def head_value(path: Path) -> Any:
    """The value of the JSON (or JSONL: a list of its lines' values) file ``path``, whole or as much as its first
    HEAD_BYTES hold; :data:`MISSING` when it is not JSON, not a regular file, or cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return MISSING
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if key in _cache:
        return _cache[key]
    try:
        with open(open_regular(path), "rb", closefd=True) as f:
            data = f.read(HEAD_BYTES)
    except OSError:
        return MISSING
    value = _parse(data, whole=st.st_size <= HEAD_BYTES, lines=path.suffix.lower() == ".jsonl")
    if len(_cache) >= _CACHE_SIZE:
        _cache.clear()
    _cache[key] = value
    return value


def _parse(data: bytes, whole: bool, lines: bool) -> Any:
    """A JSON value (a JSONL file: the list of its lines' values; a JSONL file that is one JSON array, as some
    harnesses name them: the array)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if whole:
        try:
            v = json.loads(data)
            return [v] if lines and not isinstance(v, list) else v
        except (ValueError, RecursionError):
            pass
    first = data.lstrip()[:1]
    if first == b"[" or (first == b"{" and not lines):
        return _partial(data)
    return _lines(data)


def _lines(data: bytes) -> Any:
    """The values of a JSONL head's complete lines (a line cut short, or that is not JSON, is left out);
    MISSING when none is JSON."""
    out = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except (ValueError, RecursionError):
            continue
    return out if out else MISSING


def _partial(data: bytes) -> Any:
    """As much of a JSON value as ``data`` holds (ijson's events up to where the bytes end or break)."""
    import ijson

    stack: list[Any] = []
    keys: list[str | None] = []
    root: Any = MISSING

    def add(v: Any) -> None:
        nonlocal root
        if not stack:
            root = v
        elif isinstance(stack[-1], list):
            stack[-1].append(v)
        else:
            stack[-1][keys[-1]] = v

    try:
        # basic_parse, not parse: parse builds each event's dotted prefix, whose length grows with the depth, so a
        # head of 200 KB nested 30,000 deep took gigabytes (the fuzzer's deep nesting); and no deeper than
        # MAX_DEPTH, past which no log of any harness nests (what was read so far is the value)
        for event, value in ijson.basic_parse(io.BytesIO(data), use_float=True):
            if event in ("start_map", "start_array"):
                if len(stack) >= MAX_DEPTH:
                    break
                c: Any = {} if event == "start_map" else []
                add(c)
                stack.append(c)
                keys.append(None)
            elif event in ("end_map", "end_array"):
                stack.pop()
                keys.pop()
            elif event == "map_key":
                keys[-1] = value
            else:
                add(value)
    except Exception:  # noqa: BLE001  (the head ends, or the file is not JSON: what was read so far)
        pass
    return root


def walk(value: Any, most: int = MAX_NODES) -> Iterator[Any]:
    """The containers (dicts and lists) in ``value``, breadth first, at most ``most`` of them."""
    queue = [value]
    seen = 0
    while queue and seen < most:
        nxt: list[Any] = []
        for v in queue:
            if isinstance(v, dict):
                seen += 1
                yield v
                nxt.extend(x for x in v.values() if isinstance(x, (dict, list)))
            elif isinstance(v, list):
                seen += 1
                yield v
                nxt.extend(x for x in v if isinstance(x, (dict, list)))
            if seen >= most:
                return
        queue = nxt


def json_files(path: Path, suffixes: tuple[str, ...] = (".json", ".jsonl"), most: int = 8) -> list[Path]:
    """The first ``most`` files of ``path`` with one of ``suffixes``, by name (none when it cannot be listed)."""
    try:
        with os.scandir(path) as it:
            names = sorted(e.name for e in it if e.name.lower().endswith(suffixes) and not e.is_dir())
    except OSError:
        return []
    return [path / n for n in names[:most]]
