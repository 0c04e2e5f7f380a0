"""Judgments as rows: our CSV and JSONL, Online-Mind2Web's auto-evaluator output, and rubric-verifier tables.

- **ours**: CSV (a header row) or JSONL (one object a line) with ``run_id`` and ``verdict`` (pass or fail), and
  optionally ``confidence`` (0 to 1), ``judge`` (default: the file's name), ``reason``, ``score``,
  ``process_score``, ``steps`` (the steps the judge cites: ``3;5`` in CSV, a list in JSONL, of numbers or of
  ``{step, quote}``), ``cost_usd``, ``tokens`` and ``sample`` (which of several judgments of one run by one judge).
- **Online-Mind2Web** (``src/run.py``: WebJudge, WebVoyager_eval, Autonomous_eval, AgentTrek_eval): one JSON object
  a line with ``task_id``, ``predicted_label`` 1 or 0 and ``evaluation_details.response``; the task_id is the id, 1 a
  pass, the response the reason, the file's name (without ``_auto_eval_results``) the judge.
- **rubric verifier**: a table (CSV or JSONL) of a verifier that scores a rubric over a run: an id (``run_id``,
  ``task_id`` or ``trajectory_id``), ``process_score`` and an outcome: ``outcome`` as a word (success, failure,
  pass, fail...) or a number, or ``outcome_score``; a number of 0.5 or more is a pass. Optionally ``judge`` (or
  ``verifier``), ``reason`` (or ``explanation``), ``steps``, ``cost_usd``, ``tokens``, ``sample``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from .files import first_object, json_lines, read_text
from .model import (MAX_JUDGMENTS, FileJudgments, Judgment, JudgmentFormat, cited, confidence, count, number,
                    optional_text, text, verdict, verdict_of)

#: A rubric verifier's numeric outcome at or above this is a pass.
RUBRIC_PASS = 0.5
_IDS = ("run_id", "task_id", "trajectory_id")


def _rows(path: Path, needs: tuple[str, ...] = ()) -> list[tuple[dict[str, Any], str]]:
    """The rows of a CSV file (by its suffix) or the objects of a JSONL file, each with its ``file:line``; a CSV
    file whose header lacks a column of ``needs`` is a ValueError."""
    content = read_text(path)
    if path.suffix.lower() != ".csv":
        return list(json_lines(path, content))
    reader = csv.DictReader(content.splitlines())
    try:
        if needs and not set(needs) <= set(reader.fieldnames or ()):
            raise ValueError(f"{path}: a CSV judgments file needs the columns {' and '.join(needs)} (and "
                             "optionally confidence, judge, reason)")
        rows = []
        for i, r in enumerate(reader, start=2):
            rows.append((dict(r), f"{path.name}:{i}"))
            if len(rows) > MAX_JUDGMENTS:
                raise ValueError(f"{path}: over the limit of {MAX_JUDGMENTS} judgments")
        return rows
    except csv.Error as exc:  # a NUL byte, a field over csv's size limit
        raise ValueError(f"{path.name}, near line {reader.line_num + 1}: not CSV ({exc})") from None


def _columns(name: str, head: str) -> set[str]:
    """The columns of a table's head: a CSV's header, or the keys of a JSONL file's first object."""
    if name.lower().endswith(".csv"):
        line = head.splitlines()[0] if head.strip() else ""
        return {c.strip().strip('"') for c in line.split(",")}
    obj = first_object(head)
    return set(obj) if obj is not None else set()


def judge_name(path: Path) -> str:
    """The default judge name: the file's name without its suffix, and without Online-Mind2Web's tail."""
    return text(path.stem.removesuffix("_auto_eval_results")) or "judgments"


def _extras(d: dict[str, Any], where: str) -> dict[str, Any]:
    return {"score": number(d.get("score"), where, "score"),
            "process_score": number(d.get("process_score"), where, "process_score"),
            "cited": cited(d.get("steps"), where),
            "cost_usd": number(d.get("cost_usd"), where, "cost_usd", 0.0),
            "tokens": count(d.get("tokens"), where, "tokens"),
            "sample": optional_text(d.get("sample"), 200)}


def _ours(d: dict[str, Any], where: str, default_judge: str, fmt: str) -> Judgment:
    rid = d.get("run_id")
    if rid is None or not str(rid).strip():
        raise ValueError(f"{where}: run_id is empty")
    if d.get("verdict") is None or d.get("verdict") == "":
        raise ValueError(f"{where}: verdict is missing (pass or fail)")
    judge = optional_text(d.get("judge"), 200) or default_judge
    return Judgment(text(rid), judge, verdict(d["verdict"], where), confidence(d.get("confidence"), where),
                    optional_text(d.get("reason")), where, format=fmt, **_extras(d, where))


def read_ours(path: Path) -> FileJudgments:
    """Our CSV or JSONL, and Online-Mind2Web's lines (module docstring)."""
    rows = _rows(path, ("run_id", "verdict"))
    default = judge_name(path)
    out = FileJudgments()
    for d, where in rows:
        fmt = "ours"
        if "verdict" not in d and "predicted_label" in d:  # Online-Mind2Web's auto_eval_results
            details = d.get("evaluation_details")
            d = {"run_id": d.get("task_id"), "verdict": d["predicted_label"],
                 "reason": details.get("response") if isinstance(details, dict) else None}
            fmt = "online-mind2web"
        out.judgments.append(_ours(d, where, default, fmt))
    return out


def claims_ours(name: str, head: str) -> bool:
    cols = _columns(name, head)
    return {"run_id", "verdict"} <= cols or {"task_id", "predicted_label"} <= cols


def _rubric_verdict(d: dict[str, Any], where: str) -> tuple[str, float | None]:
    """A rubric verifier's verdict and numeric outcome: a word is the verdict, a number (``outcome`` or
    ``outcome_score``) passes at :data:`RUBRIC_PASS` or more."""
    said = d.get("outcome")
    word = verdict_of(said) if isinstance(said, str) and not _is_number(said) else None
    if word is not None:
        return word, number(d.get("outcome_score"), where, "outcome_score")
    score = number(d.get("outcome_score") if d.get("outcome_score") not in (None, "") else said, where, "outcome")
    if score is None:
        raise ValueError(f"{where}: outcome is missing (a word such as success or failure, or a number)")
    return ("pass" if score >= RUBRIC_PASS else "fail"), score


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def read_rubric(path: Path) -> FileJudgments:
    """A rubric verifier's table (module docstring)."""
    default = judge_name(path)
    out = FileJudgments()
    for d, where in _rows(path):
        rid = next((d[k] for k in _IDS if d.get(k) not in (None, "")), None)
        if rid is None:
            raise ValueError(f"{where}: no id (run_id, task_id or trajectory_id)")
        said, score = _rubric_verdict(d, where)
        extras = _extras(d, where)
        extras["score"] = score
        keys = tuple(text(d[k]) for k in _IDS if d.get(k) not in (None, "") and text(d[k]) != text(rid))
        out.judgments.append(Judgment(
            text(rid), optional_text(d.get("judge") or d.get("verifier"), 200) or default, said,
            confidence(d.get("confidence"), where), optional_text(d.get("reason") or d.get("explanation")), where,
            keys=keys, format="rubric-verifier", **extras))
    return out


def claims_rubric(name: str, head: str) -> bool:
    cols = _columns(name, head)
    return "process_score" in cols and bool(cols & {"outcome", "outcome_score"}) and bool(cols & set(_IDS))


OURS = JudgmentFormat(
    "table", "our CSV or JSONL (run_id, verdict, ...), and Online-Mind2Web's auto_eval_results lines",
    "trajcheck (docs/referee.md); Online-Mind2Web: OSU-NLP-Group/Online-Mind2Web src/run.py",
    claims_ours, read_ours)
RUBRIC = JudgmentFormat(
    "rubric-verifier", "a rubric verifier's table: an id, an outcome and a process score per run or task",
    "no single project: the shape of rubric verifiers' per-task tables (docs/judges.md)", claims_rubric,
    read_rubric)
