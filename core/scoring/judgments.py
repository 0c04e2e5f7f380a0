"""Judgments of judges users already run (``score --judgments FILE``): read, checked, kept per run.

A judgments file is CSV (a header row) or JSONL (one object a line): ``run_id``, ``verdict`` (pass or fail),
and optionally ``confidence`` (0 to 1), ``judge`` (a name; default the file's name) and ``reason``. The output
of Online-Mind2Web's auto-evaluators (``src/run.py``: WebJudge, WebVoyager_eval, Autonomous_eval, AgentTrek_eval;
one JSON object a line with ``task_id``, ``predicted_label`` 1 or 0 and ``evaluation_details.response``) is read
as it is: ``task_id`` is the run_id, 1 a pass, the response the reason, the file's name the judge.
Anything else is a ValueError naming the file, the line and the field.
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The most judgments one file may hold.
MAX_JUDGMENTS = 1_000_000
#: The most characters of a reason kept (a judge's whole chain of thought is not a reason).
MAX_REASON = 2000
#: The largest judgments file read.
MAX_BYTES = 256 * 1024 * 1024


#: Control characters (terminal escapes among them): a judge's text is data, never a code for a terminal.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _text(value: Any) -> str:
    return _CONTROL.sub("\ufffd", str(value)).strip()


@dataclass(frozen=True)
class Judgment:
    """One judge's verdict on one run, as a judgments file gives it."""

    run_id: str
    judge: str
    verdict: str  # pass | fail
    confidence: float | None
    reason: str | None
    where: str  # file:line, for messages

    def to_json(self) -> dict[str, Any]:
        return {"judge": self.judge, "verdict": self.verdict, "confidence": self.confidence, "reason": self.reason,
                "source": self.where}


def _verdict(value: Any, where: str) -> str:
    v = str(value).strip().lower() if value is not None and not isinstance(value, bool) else value
    if v in ("pass", "success", "1", 1, True):
        return "pass"
    if v in ("fail", "failure", "not success", "0", 0, False):
        return "fail"
    raise ValueError(f"{where}: verdict must be pass or fail (got {value!r})")


def _confidence(value: Any, where: str) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        c = float(value) if not isinstance(value, bool) else -1.0
    except ValueError:
        c = -1.0
    if not (0.0 <= c <= 1.0) or math.isnan(c):
        raise ValueError(f"{where}: confidence must be a number from 0 to 1 (got {value!r})")
    return c


def _row(d: dict[str, Any], where: str, default_judge: str) -> Judgment:
    """One judgment from a row (CSV) or an object (JSONL), in our columns or Online-Mind2Web's."""
    if "verdict" not in d and "predicted_label" in d:  # Online-Mind2Web's auto_eval_results
        details = d.get("evaluation_details")
        reason = details.get("response") if isinstance(details, dict) else None
        d = {"run_id": d.get("task_id"), "verdict": d["predicted_label"], "reason": reason}
    rid = d.get("run_id")
    if rid is None or not str(rid).strip():
        raise ValueError(f"{where}: run_id is empty")
    if d.get("verdict") is None:
        raise ValueError(f"{where}: verdict is missing (pass or fail)")
    judge = _text(d.get("judge") or "")[:200] or default_judge
    reason = d.get("reason")
    reason = None if reason is None or not str(reason).strip() else _text(reason)[:MAX_REASON]
    return Judgment(str(rid).strip(), judge, _verdict(d["verdict"], where), _confidence(d.get("confidence"), where),
                    reason, where)


def _judge_name(path: Path) -> str:
    """The default judge name: the file's name without its suffix, and without Online-Mind2Web's tail."""
    return _text(path.stem.removesuffix("_auto_eval_results")) or "judgments"


def read_judgments(path: Path) -> tuple[Judgment, ...]:
    """Every judgment of a CSV or JSONL file (see the module docstring), in file order. ValueError naming the
    file, line and field of a bad row; a run judged twice by one judge is an error too."""
    from ..base.inputs import read_regular

    data = read_regular(path, limit=MAX_BYTES)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path}: over the {MAX_BYTES} byte limit of a judgments file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc})") from None
    default = _judge_name(path)
    rows: list[tuple[dict[str, Any], str]] = []
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        try:
            if not reader.fieldnames or not {"run_id", "verdict"} <= set(reader.fieldnames):
                raise ValueError(f"{path}: a CSV judgments file needs the columns run_id and verdict (and optionally "
                                 "confidence, judge, reason)")
            rows = [(r, f"{path.name}:{i}") for i, r in enumerate(reader, start=2)]
        except csv.Error as exc:  # a NUL byte, a field over csv's size limit
            raise ValueError(f"{path.name}, near line {reader.line_num + 1}: not CSV ({exc})") from None
    else:
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError) as exc:
                raise ValueError(f"{path.name}:{i}: not a JSON object ({exc}); a judgments file is JSONL, one "
                                 "object a line, or CSV") from None
            if not isinstance(obj, dict):
                raise ValueError(f"{path.name}:{i}: expected a JSON object with run_id and verdict")
            rows.append((obj, f"{path.name}:{i}"))
            if len(rows) > MAX_JUDGMENTS:
                break
    if len(rows) > MAX_JUDGMENTS:
        raise ValueError(f"{path}: over the limit of {MAX_JUDGMENTS} judgments")
    out = [_row(d, where, default) for d, where in rows]
    seen: dict[tuple[str, str], str] = {}
    for j in out:
        first = seen.setdefault((j.run_id, j.judge), j.where)
        if first != j.where:
            raise ValueError(f"{j.where}: judge {j.judge!r} already judged run {j.run_id!r} at {first}")
    return tuple(out)

