"""Judgments of judges users already run, read as each judge writes them (``score --judgments PATH``,
``trajcheck judges LEDGER --judgments PATH``).

A path is a file or a folder; each file's format is told by its name and its first 64 KiB
(:mod:`.formats`): our CSV and JSONL and Online-Mind2Web's lines (:mod:`.tables`), rubric-verifier tables
(:mod:`.tables`), AgentRewardBench's judgment folders (:mod:`.arb`), Agent-Eval-Refine's ``outputs.jsons``
(:mod:`.aer`), OSWorld's ``result.txt`` and ``summary/results.json`` (:mod:`.osworld`) and cube-harness judge
records (:mod:`.cube`); other packages add formats through the entry point group ``trajcheck.judgments``.
Each judgment (:class:`.model.Judgment`) keeps the judge's verdict, confidence, reason, numeric score, process
score, cited steps, cost, tokens and sample where the judge recorded them. docs/judges.md documents each format
with its source. Matching judgments to the runs of a ledger is :mod:`.matching`.
"""

from __future__ import annotations

from pathlib import Path

from .model import MAX_BYTES, MAX_JUDGMENTS, MAX_REASON, Cited, FileJudgments, Judgment, JudgmentFormat

__all__ = ["MAX_BYTES", "MAX_JUDGMENTS", "MAX_REASON", "Cited", "FileJudgments", "Judgment", "JudgmentFormat",
           "read_judgments"]


def read_judgments(path: Path) -> tuple[Judgment, ...]:
    """Every judgment of a file or a folder, in the order of its files (sorted) and their lines; ValueError naming
    the file, line and field of a bad entry, and for a file no format recognises."""
    from .formats import read_path

    return tuple(read_path(path).judgments)
