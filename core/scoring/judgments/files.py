"""Reading a judge's file: bounded, UTF-8, its head for telling its format, JSON and JSON lines with the file
and line named in every error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .model import MAX_BYTES, MAX_JUDGMENTS

#: How much of a file is read to tell its format.
HEAD_BYTES = 64 * 1024


def read_text(path: Path, limit: int = MAX_BYTES) -> str:
    """The file's text (UTF-8, a BOM dropped); ValueError naming it when it is too large or not text."""
    from ...base.inputs import read_regular

    data = read_regular(path, limit=limit)
    if len(data) > limit:
        raise ValueError(f"{path}: over the {limit} byte limit of a judgments file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc})") from None


def head(path: Path) -> str:
    """The first :data:`HEAD_BYTES` of the file as text (undecodable bytes replaced); empty when unreadable."""
    from ...base.inputs import read_regular

    try:
        return read_regular(path, limit=HEAD_BYTES)[:HEAD_BYTES].decode("utf-8-sig", errors="replace")
    except OSError:
        return ""


def first_object(text: str) -> dict[str, Any] | None:
    """The first non-blank line of ``text`` as a JSON object, or None (not JSON lines, or cut off by the head)."""
    for line in text.splitlines():
        if line.strip():
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                return None
            return obj if isinstance(obj, dict) else None
    return None


def json_lines(path: Path, text: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Each object of a JSON-lines text with its ``file:line``; ValueError naming the line of one that is not an
    object, and past :data:`MAX_JUDGMENTS` lines."""
    n = 0
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{i}"
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"{where}: not a JSON object ({exc}); a judgments file is JSONL, one object a line, "
                             "or CSV") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{where}: expected a JSON object")
        n += 1
        if n > MAX_JUDGMENTS:
            raise ValueError(f"{path}: over the limit of {MAX_JUDGMENTS} judgments")
        yield obj, where


def json_value(path: Path, text: str) -> Any:
    """The file's one JSON value; ValueError naming the file."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{path.name}: not JSON ({exc})") from None


def dig(value: Any, *keys: str | int) -> Any:
    """``value[k1][k2]...``, or None where a key is missing or a value is not a container."""
    for k in keys:
        if isinstance(k, int):
            value = value[k] if isinstance(value, list) and -len(value) <= k < len(value) else None
        else:
            value = value.get(k) if isinstance(value, dict) else None
        if value is None:
            return None
    return value
