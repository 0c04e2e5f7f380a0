"""Token usage, cost and time as the vendors' logs write them, read into :class:`~trajcheck.schemas.records.Usage`.

The vendors count differently, and trajcheck's columns count one way: ``tokens_input`` is every input token,
cached ones included (``tokens_cached`` says how many), and ``tokens_output`` every output token, reasoning
included (``tokens_reasoning`` says how many).

* Anthropic Messages ``usage`` (anthropic-sdk-python ``types/usage.py``): ``input_tokens`` counts only the
  tokens after the last cache breakpoint, so the input is ``input_tokens + cache_read_input_tokens +
  cache_creation_input_tokens`` and the cached ones are ``cache_read_input_tokens``;
  ``output_tokens_details.thinking_tokens`` is the reasoning.
* OpenAI Responses ``usage``: ``input_tokens`` already holds ``input_tokens_details.cached_tokens``, and
  ``output_tokens`` holds ``output_tokens_details.reasoning_tokens``. Chat Completions' ``prompt_tokens`` and
  ``completion_tokens`` (with ``prompt_tokens_details`` and ``completion_tokens_details``) are read the same way.
* A cost is read only where the log writes one (``cost_usd``, a harness's own field); the vendors' usage
  objects hold none.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...schemas.records import Usage


def count(v: Any) -> int | None:
    """A token count as a log writes it: a whole number, 0 or more (``12.0`` too: pickled stats hold floats);
    None for anything else."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < float("inf") or v != int(v):
        return None
    return int(v)


def amount(v: Any) -> float | None:
    """A cost or a duration: a finite number, 0 or more; None for anything else."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < float("inf") else None


def _model(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _sum(*parts: int | None) -> int | None:
    """The sum of the parts the log gives; None when the first (the count the others add to) is missing."""
    return None if parts[0] is None else sum(p for p in parts if p is not None)


def _made(u: Usage) -> Usage | None:
    return None if u.empty else u


def anthropic_usage(d: Any, model: Any = None) -> Usage | None:
    """A Messages API ``usage`` object (or a harness's record of one, with its ``cost_usd`` and ``model``)."""
    if not isinstance(d, dict):
        return None
    read, made = count(d.get("cache_read_input_tokens")), count(d.get("cache_creation_input_tokens"))
    details = given if isinstance(given := d.get("output_tokens_details"), dict) else {}
    return _made(Usage(_sum(count(d.get("input_tokens")), read, made), count(d.get("output_tokens")), read,
                       count(details.get("thinking_tokens")), amount(d.get("cost_usd")),
                       _model(d.get("model")) or _model(model)))


def openai_usage(d: Any, model: Any = None) -> Usage | None:
    """A Responses API ``usage`` object, or a Chat Completions one (``prompt_tokens``, ``completion_tokens``)."""
    if not isinstance(d, dict):
        return None
    chat = "prompt_tokens" in d or "completion_tokens" in d
    inp = d.get("prompt_tokens" if chat else "input_tokens")
    out = d.get("completion_tokens" if chat else "output_tokens")
    in_details = d.get("prompt_tokens_details" if chat else "input_tokens_details")
    out_details = d.get("completion_tokens_details" if chat else "output_tokens_details")
    cached = in_details.get("cached_tokens") if isinstance(in_details, dict) else None
    reasoning = out_details.get("reasoning_tokens") if isinstance(out_details, dict) else None
    return _made(Usage(count(inp), count(out), count(cached), count(reasoning), amount(d.get("cost_usd")),
                       _model(d.get("model")) or _model(model)))


def seconds_of(v: Any) -> float | None:
    """A timestamp as seconds since the epoch: a number (epoch seconds, or milliseconds past 1e11), or an ISO
    8601 string (a string without a zone is read as UTC: only differences between a log's own times matter)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v) / 1000 if v > 1e11 else float(v)
    if not isinstance(v, str) or not v:
        return None
    try:
        t = datetime.fromisoformat(v.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.timestamp() if t.tzinfo is not None else (t - datetime(1970, 1, 1)).total_seconds()


def elapsed(start: float | None, end: float | None) -> float | None:
    """``end - start`` in seconds (rounded to the microsecond); None without both, or when the clock went back."""
    if start is None or end is None or end < start:
        return None
    return round(end - start, 6)
