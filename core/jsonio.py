"""Strict JSON reading with precise locations.

Python's ``json`` accepts NaN and Infinity, raises RecursionError (not
JSONDecodeError) on deeply nested input, and leaves decoding errors to the
caller; every one of those becomes a located :class:`~trajcheck.errors.Problem`
here, so the user learns the file, the line and what to do.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from .errors import Problem

#: Deeper nesting than this is refused (real step records nest a few levels).
MAX_DEPTH = 64


class _BadConstant(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _BadConstant(name)


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of ``value``, stopping early once over ``limit``."""
    depth = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            depth = max(depth, d)
            if depth > limit:
                return depth
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            depth = max(depth, d)
            if depth > limit:
                return depth
            stack.extend((x, d + 1) for x in v)
    return depth


def parse_json_text(text: str, *, run: str, file: str, line: int | None = None) -> tuple[Any, Problem | None]:
    """Parse one JSON document; return (value, None) or (None, problem)."""
    where = {"run": run, "file": file, "line": line}
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except _BadConstant as exc:
        return None, Problem(
            "json_nan", f"{exc.args[0]} is not valid JSON (numbers must be finite)",
            hint="write null for a missing number", **where)
    except RecursionError:
        return None, Problem(
            "json_too_deep", "JSON is nested too deeply to read",
            hint=f"step records nest a few levels; keep nesting under {MAX_DEPTH}", **where)
    except json.JSONDecodeError as exc:
        ln = line if line is not None else exc.lineno
        return None, Problem(
            "json_invalid", f"not valid JSON: {exc.msg} at column {exc.colno}",
            hint="the file may be truncated; re-export it or remove the broken part",
            run=run, file=file, line=ln)
    if _depth(value, MAX_DEPTH) > MAX_DEPTH:
        return None, Problem(
            "json_too_deep", f"JSON is nested deeper than {MAX_DEPTH} levels",
            hint="step records nest a few levels; flatten the record", **where)
    return value, None


def decode_utf8(data: bytes, *, run: str, file: str) -> tuple[str | None, Problem | None]:
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, Problem(
            "not_utf8", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            run=run, file=file, line=line, hint="re-save the file as UTF-8")


def iter_jsonl(text: str, *, run: str, file: str) -> Iterator[tuple[int, Any, Problem | None]]:
    """Yield (line_number, value, problem) for each non-blank line."""
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        value, problem = parse_json_text(raw, run=run, file=file, line=n)
        yield n, value, problem
