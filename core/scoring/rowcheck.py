"""A run's ledger rows checked against the ledger's Arrow schema while the run is still one run.

Arrow refuses some values a run can carry past its reader: an integer beyond its column's 32 or 64
bits (a step ``index`` of ``1e+308`` is an integral float the JSON Schema's ``integer`` accepts), a
string holding a lone UTF-16 surrogate, a Python int too large for a float64 column. Refused at commit,
one such value used to cost the whole batch. Checked here, before the rows are buffered, it costs its
own run: the run becomes ``invalid`` with a ``value_out_of_range`` problem naming the file, the line and
the field. Non-finite floats (NaN, infinity), which Arrow would store, are refused too: no column of the
ledger means them, and a sum or a mean over them is poisoned.

The check runs in plain Python against bounds precomputed per column from ``schemas/ledger.py``
(about 25 us for a 20-step run; building an Arrow table per run cost 10x that). A value of a type the
fast path does not know is handed to Arrow itself, one value at a time, so the check never refuses
what Arrow stores except the non-finite floats, and never passes what Arrow refuses.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from ..base.errors import Problem
from ..base.problems import Slug

#: Run-format field of each column that copies one (for messages); other columns are computed.
RUN_FIELDS = {
    "run_id": "run_id", "task_id": "task_id", "trial": "trial", "goal": "goal", "agent_name": "agent.name",
    "agent_model": "agent.model", "config": "config", "screen_width": "screen.width",
    "screen_height": "screen.height", "started_at": "started_at", "outcome_status": "outcome.status",
    "outcome_score": "outcome.score", "outcome_judge": "outcome.judge", "judge_model": "outcome.judge.model",
    "judge_score": "outcome.judge.score", "judge_confidence": "outcome.judge.confidence",
    "judge_reasons": "outcome.judge.reasons", "extra": "(properties format v1 does not define)",
}
STEP_FIELDS = {
    "step_index": "index", "action_type": "action.type", "action_x": "action.x", "action_y": "action.y",
    "action_keys": "action.keys", "action_text": "action.text", "action_url": "action.url",
    "reasoning": "reasoning", "frame_pre": "frames.pre", "frame_post": "frames.post",
    "executor_error": "executor.error", "url_before": "page.url_before", "url_after": "page.url_after",
    "recorded_feedback": "recorded.feedback", "obs_confidence": "semantic.confidence",
    "extra": "(properties format v1 does not define)",
}


@dataclass(frozen=True)
class BadValue:
    """The first value of a run's rows that the ledger cannot store."""

    table: str
    column: str
    value: Any
    why: str
    step_index: Any = None  # the step row's index, for a steps value

    def problem(self, run: str, source_format: str, locate: Callable[[Any], tuple[str, int | None]] | None = None
                ) -> Problem:
        """The ``value_out_of_range`` problem; ``locate(step_index)`` gives a step's file and line."""
        if self.table == "runs":
            field = RUN_FIELDS.get(self.column, f"ledger column runs.{self.column}")
            file, line = ("run.json" if source_format == "trajcheck.run/1" else ""), None
        else:
            field = STEP_FIELDS.get(self.column, f"ledger column steps.{self.column}")
            file, line = locate(self.step_index) if locate else ("", None)
        return Problem(Slug.VALUE_OUT_OF_RANGE, f"{_show(self.value)} {self.why}", run=run, file=file, line=line,
                       field=field, hint=f"the ledger stores {self.column} as {_TYPE_NAMES[self.kind]}; fix the value "
                       "where the run recorded it")

    @property
    def kind(self) -> str:
        return _kinds(self.table)[self.column][0]


def _show(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10 ** 24:
        return f"an integer of {len(str(abs(v))) if abs(v) < 10 ** 4000 else 'over 4000'} digits"
    text = repr(v)
    text = text if len(text) <= 60 else text[:45] + "..." + text[-10:]
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


_TYPE_NAMES = {"i32": "a 32-bit integer", "i64": "a 64-bit integer", "f64": "a finite 64-bit float",
               "str": "UTF-8 text", "bool": "a boolean", "list_str": "a list of UTF-8 texts",
               "list_i32": "a list of 32-bit integers", "other": "its Arrow type"}
_BOUNDS = {"i32": (-(2 ** 31), 2 ** 31 - 1), "i64": (-(2 ** 63), 2 ** 63 - 1)}


@lru_cache(maxsize=None)
def _kinds(table: str) -> dict[str, tuple[str, Any]]:
    """column -> (kind, Arrow type), from the ledger's declarations."""
    import pyarrow as pa

    from ..schemas.ledger import TABLES

    out = {}
    for c in TABLES[table]:
        t = c.type
        kind = {pa.int32(): "i32", pa.int64(): "i64", pa.float64(): "f64", pa.string(): "str",
                pa.bool_(): "bool", pa.list_(pa.string()): "list_str", pa.list_(pa.int32()): "list_i32"}.get(t, "other")
        out[c.name] = (kind, t)
    return out


def _utf8(v: str) -> bool:
    if v.isascii():
        return True
    try:
        v.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _arrow_takes(v: Any, t: Any) -> bool:
    import pyarrow as pa

    try:
        pa.array([v], type=t)
        return True
    except (pa.ArrowException, OverflowError, TypeError, ValueError, UnicodeError):
        return False


def _why(kind: str, t: Any, v: Any) -> str | None:
    """Why the ledger cannot store ``v`` in a column of this kind, or None when it can."""
    if v is None:
        return None
    tv = type(v)
    if tv is not bool and tv is not int and isinstance(v, numbers.Integral):  # numpy integers
        v, tv = int(v), int
    if kind in ("i32", "i64"):
        lo, hi = _BOUNDS[kind]
        if tv is int:
            return None if lo <= v <= hi else f"is outside the {kind[1:]}-bit integer range [{lo}, {hi}]"
        if tv is float:  # Arrow truncates an integral float; a fractional or non-finite one is no index
            if not math.isfinite(v) or v != int(v):
                return "is not an integer"
            return None if lo <= v <= hi else f"is outside the {kind[1:]}-bit integer range [{lo}, {hi}]"
    elif kind == "f64":
        if tv is float:
            return None if math.isfinite(v) else "is not a finite number"
        if tv is int:  # Arrow converts an int to a float only when the float holds it exactly
            return None if -(2 ** 53) <= v <= 2 ** 53 else "is an integer a 64-bit float cannot hold exactly"
        try:
            if not isinstance(v, bool) and not math.isfinite(v):  # numpy floats
                return "is not a finite number"
        except TypeError:
            pass
    elif kind == "str":
        if tv is str:
            return None if _utf8(v) else "holds a lone UTF-16 surrogate, which is not a Unicode character"
    elif kind == "bool":
        if tv is bool:
            return None
    elif kind in ("list_str", "list_i32"):
        if tv is list or tv is tuple:
            inner = "str" if kind == "list_str" else "i32"
            for x in v:
                why = _why(inner, t.value_type, x)
                if why is not None:
                    return f"holds {_show(x)}, which {why}"
            return None
    return None if _arrow_takes(v, t) else "is not a value of this column's type"


def find_bad_value(run: dict[str, Any], steps: list[dict[str, Any]]) -> BadValue | None:
    """The first value of the run's rows the ledger cannot store (see the module doc), or None."""
    for table, rows in (("runs", (run,)), ("steps", steps)):
        kinds = _kinds(table)
        for row in rows:
            for name, (kind, t) in kinds.items():
                v = row.get(name)
                if v is None:
                    continue
                tv = type(v)
                # the common cases inline: a string of ASCII, a bool, an int or float well inside any range
                if tv is str and (kind == "str") and v.isascii():
                    continue
                if tv is bool and kind == "bool":
                    continue
                if tv is int and kind in ("i32", "i64") and -2147483648 <= v <= 2147483647:
                    continue
                why = _why(kind, t, v)
                if why is not None:
                    return BadValue(table, name, v, why, row.get("step_index") if table == "steps" else None)
    return None


def printable(text: str) -> str:
    """``text`` with anything UTF-8 cannot hold escaped (a lone surrogate from a file name, say)."""
    return text if _utf8(text) else text.encode("utf-8", "backslashreplace").decode("utf-8")
