"""Strict JSON reading with precise locations.

Python's ``json`` accepts NaN and Infinity, reads ``1e999`` as infinity, raises
ValueError (not JSONDecodeError) on an integer of more than 4300 digits and
RecursionError on deeply nested input, keeps a lone UTF-16 surrogate (``"\\ud800"``)
that no UTF-8 file or ledger column can hold, and leaves decoding errors to the
caller; every one of those becomes a located :class:`~trajcheck.base.errors.Problem`
here (the numbers and surrogates as ``value_out_of_range`` with the field's path),
so the user learns the file, the line, the field and what to do.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterator, TypedDict

from .errors import Problem
from .problems import Slug

#: Deeper nesting than this is refused (real step records nest a few levels).
MAX_DEPTH = 64


class Where(TypedDict):
    """Where a document or record came from: the location fields (run, file, line) of a :class:`Problem`."""

    run: str
    file: str
    line: int | None


class _BadConstant(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _BadConstant(name)


def _finite(text: str) -> float:
    """``parse_float``: a JSON number as a float, refusing one that overflows to infinity (``1e999``)."""
    value = float(text)
    if math.isinf(value):
        raise _BadConstant(text)
    return value


class _Mark:
    """Where a refused number was, in the second parse that looks for its field."""

    def __init__(self, text: str):
        self.text = text


def _mark_float(text: str) -> Any:
    value = float(text)
    return _Mark(text) if math.isinf(value) else value


def _mark_int(text: str) -> Any:
    try:
        return int(text)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        return _Mark(text)


#: A JSON escape of a UTF-16 surrogate: only then can a parsed string hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _find(value: Any, hit: Any, path: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], Any] | None:
    """The path (keys and indexes) and the value of the first leaf for which ``hit`` is true."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, dict):
            stack.extend((x, p + (k,)) for k, x in reversed(list(v.items())))
            bad_key = next((k for k in v if hit(k)), None)
            if bad_key is not None:
                return p + (bad_key,), bad_key
        elif isinstance(v, list):
            stack.extend((x, p + (i,)) for i, x in reversed(list(enumerate(v))))
        elif hit(v):
            return p, v
    return None


def _field(path: tuple[Any, ...]) -> str:
    # a key may itself hold the lone surrogate: escaped, so the message is text the ledger can store
    return ".".join(str(k) for k in path).encode("utf-8", "backslashreplace").decode("utf-8") or "(record)"


def _unencodable(v: Any) -> bool:
    if not isinstance(v, str) or v.isascii():
        return False
    try:
        v.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def short_number(v: Any) -> str:
    """A number for a message: ``1e+308``, or "an integer of 5000 digits" rather than the digits."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10 ** 24:
        return f"an integer of {len(str(abs(v))) if abs(v) < 10 ** 4000 else 'over 4000'} digits"
    if isinstance(v, str) and len(v) > 24:
        return f"{v[:12]}...{v[-6:]} ({len(v)} characters)"
    return str(v)


def _out_of_range(text: str, where: Where) -> Problem:
    """The ``value_out_of_range`` problem of a document that holds NaN, Infinity, a number that overflows
    a float, or an integer too long to convert: parsed again with markers to name the field."""
    try:
        value = json.loads(text, parse_constant=_Mark, parse_float=_mark_float, parse_int=_mark_int)
        found = _find(value, lambda v: isinstance(v, _Mark))
    except (ValueError, RecursionError):
        found = None
    token = found[1].text if found else "a number"
    if token in ("NaN", "Infinity", "-Infinity"):
        msg = f"{token} is not valid JSON (numbers must be finite)"
    elif token.lstrip("-").replace(".", "").isdigit() and len(token) > 300:
        msg = f"{short_number(token)} is too long a number (the ledger stores 64-bit numbers)"
    else:
        msg = f"{short_number(token)} is not a finite 64-bit number"
    return Problem(Slug.VALUE_OUT_OF_RANGE, msg, field=_field(found[0]) if found else "",
                   hint="write null for a missing number, and numbers that fit a 64-bit float", **where)


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
    where: Where = {"run": run, "file": file, "line": line}
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except _BadConstant:
        return None, _out_of_range(text, where)
    except RecursionError:
        return None, Problem(
            Slug.JSON_TOO_DEEP, "JSON is nested too deeply to read",
            hint=f"step records nest a few levels; keep nesting under {MAX_DEPTH}", **where)
    except json.JSONDecodeError as exc:
        ln = line if line is not None else exc.lineno
        return None, Problem(
            Slug.JSON_INVALID, f"not valid JSON: {exc.msg} at column {exc.colno}",
            hint="the file may be truncated; re-export it or remove the broken part",
            run=run, file=file, line=ln)
    except ValueError:  # an integer of more digits than Python converts
        return None, _out_of_range(text, where)
    if _depth(value, MAX_DEPTH) > MAX_DEPTH:
        return None, Problem(
            Slug.JSON_TOO_DEEP, f"JSON is nested deeper than {MAX_DEPTH} levels",
            hint="step records nest a few levels; flatten the record", **where)
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):  # a surrogate pair is fine; a lone half is not text
        found = _find(value, _unencodable)
        if found is not None:
            return None, Problem(
                Slug.VALUE_OUT_OF_RANGE, "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff escape without its "
                "pair), which is not a Unicode character", field=_field(found[0]),
                hint="write the character itself, or both halves of its surrogate pair", **where)
    return value, None


def decode_utf8(data: bytes, *, run: str, file: str) -> tuple[str | None, Problem | None]:
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        start = exc.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)  # utf-8-sig counts after the BOM
        line = data[:start].count(b"\n") + 1
        return None, Problem(
            Slug.NOT_UTF8, f"not UTF-8 text (byte 0x{data[start]:02x} at offset {start})",
            run=run, file=file, line=line, hint="re-save the file as UTF-8")


def iter_jsonl(text: str, *, run: str, file: str) -> Iterator[tuple[int, Any, Problem | None]]:
    """Yield (line_number, value, problem) for each non-blank line."""
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        value, problem = parse_json_text(raw, run=run, file=file, line=n)
        yield n, value, problem


class NumberOutOfRange(ValueError):
    """Raised by :func:`loads_finite` for NaN, Infinity, a number that overflows a float, or an integer
    too long to convert."""


def loads_finite(text: str | bytes) -> Any:
    """``json.loads`` refusing what :func:`parse_json_text` refuses as ``value_out_of_range`` (raises
    :class:`NumberOutOfRange`; other bad JSON raises ``json.JSONDecodeError``), for readers that parse
    many small documents and report a broken one their own way; no depth limit."""
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except _BadConstant as exc:
        raise NumberOutOfRange(str(exc)) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer of more digits than Python converts
        raise NumberOutOfRange(str(exc)) from None


def out_of_range_problem(text: str, *, run: str, file: str, line: int | None = None) -> Problem:
    """The located ``value_out_of_range`` problem of a document :func:`loads_finite` refused."""
    return _out_of_range(text, {"run": run, "file": file, "line": line})
