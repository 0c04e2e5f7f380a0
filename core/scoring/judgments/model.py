"""A judgment, as every judgments format gives it: one judge's verdict on one run, with what the judge recorded
beside it (a numeric score, a process score, the steps it cited, its cost and tokens, which sample it is).

The values of a judge's file are data: every text is stripped of control characters (a terminal escape in a
judge's reason is shown, never run) and cut to a bound, and every number is checked before it is kept.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The most judgments one file (or folder) may hold.
MAX_JUDGMENTS = 1_000_000
#: The most characters of a reason kept (a judge's whole chain of thought is not a reason).
MAX_REASON = 2000
#: The most characters of a cited step's quote kept.
MAX_QUOTE = 300
#: The most cited steps kept of one judgment.
MAX_CITED = 50
#: The largest judgments file read.
MAX_BYTES = 256 * 1024 * 1024

#: Control characters (terminal escapes among them): a judge's text is data, never a code for a terminal.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def text(value: Any) -> str:
    """``value`` as text a terminal or a page shows as it is: control characters replaced, ends stripped."""
    return _CONTROL.sub("\ufffd", str(value)).strip()


def optional_text(value: Any, limit: int = MAX_REASON) -> str | None:
    """:func:`text` cut to ``limit``, or None for a missing or blank value."""
    if value is None or not str(value).strip():
        return None
    return text(value)[:limit]


@dataclass(frozen=True)
class Cited:
    """A step a judge cites for its verdict, with the quote it cites (cube-harness's ``evidence[{step, quote}]``)."""

    step: int
    quote: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "quote": self.quote}


@dataclass(frozen=True)
class Judgment:
    """One judge's verdict on one run, as its file gives it.

    ``run_id`` is the id the file names (a run id, a task id or a folder's name: :mod:`.matching` finds the run);
    ``keys`` are further ids the file gives for the same run, tried in order after ``run_id``."""

    run_id: str
    judge: str
    verdict: str  # pass | fail
    confidence: float | None
    reason: str | None
    where: str  # file:line, for messages
    score: float | None = None  # the judge's own numeric score, as recorded
    process_score: float | None = None  # a rubric verifier's score of the process
    cited: tuple[Cited, ...] = ()
    cost_usd: float | None = None
    tokens: int | None = None
    sample: str | None = None  # which of several judgments of one run by one judge
    keys: tuple[str, ...] = field(default=(), compare=False)
    format: str = "table"

    def to_json(self) -> dict[str, Any]:
        """The judgment as ``runs.judgments`` keeps it: the five fields every judgment has, then only the others
        the judge recorded (so a ledger of plain CSV judgments reads as before)."""
        out: dict[str, Any] = {"judge": self.judge, "verdict": self.verdict, "confidence": self.confidence,
                               "reason": self.reason, "source": self.where}
        extra: dict[str, Any] = {"score": self.score, "process_score": self.process_score,
                                 "cited": [c.to_json() for c in self.cited] or None, "cost_usd": self.cost_usd,
                                 "tokens": self.tokens, "sample": self.sample}
        out.update({k: v for k, v in extra.items() if v is not None})
        return out


#: A verdict as judges write it, lower-cased: AgentRewardBench's Successful/Unsuccessful, the Status: answers of
#: Agent-Eval-Refine and WebJudge, cube-harness's outcomes, pass/fail and 1/0.
VERDICTS = {"pass": "pass", "passed": "pass", "success": "pass", "successful": "pass", "succeeded": "pass",
            "true": "pass", "yes": "pass", "1": "pass", "success_lucky": "pass",
            "should_have_been_rewarded": "pass",
            "fail": "fail", "failed": "fail", "failure": "fail", "unsuccessful": "fail", "unsuccesful": "fail",
            "not success": "fail", "false": "fail", "no": "fail", "0": "fail", "almost": "fail"}


def verdict_of(value: Any) -> str | None:
    """``pass`` or ``fail`` from a verdict as a judge writes it (:data:`VERDICTS`, a bool, 1 or 0); None when it
    is none of them."""
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if isinstance(value, (int, float)) and value in (0, 1):
        return "pass" if value == 1 else "fail"
    if isinstance(value, str):
        return VERDICTS.get(value.strip().strip("\"'*").strip().lower())
    return None


def verdict(value: Any, where: str) -> str:
    """:func:`verdict_of`, or a ValueError naming ``where``."""
    got = verdict_of(value)
    if got is None:
        raise ValueError(f"{where}: verdict must be pass or fail (got {value!r})")
    return got


def number(value: Any, where: str, name: str, low: float | None = None, high: float | None = None) -> float | None:
    """A finite number within [low, high] from a number or its text; None when missing; else a ValueError."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        x = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x) or (low is not None and x < low) or (high is not None and x > high):
        bounds = f" from {low:g} to {high:g}" if low is not None and high is not None else ""
        raise ValueError(f"{where}: {name} must be a number{bounds} (got {value!r})")
    return x


def confidence(value: Any, where: str) -> float | None:
    return number(value, where, "confidence", 0.0, 1.0)


def count(value: Any, where: str, name: str) -> int | None:
    x = number(value, where, name, 0.0)
    return None if x is None else int(x)


def cited(value: Any, where: str) -> tuple[Cited, ...]:
    """The steps a judge cites: a list of step numbers or of ``{step, quote}`` objects, or text such as
    ``3;5`` or ``3,5`` (a CSV cell)."""
    if value is None or value == "":
        return ()
    items: list[Any]
    if isinstance(value, str):
        items = [s for s in re.split(r"[;,\s]+", value) if s]
    elif isinstance(value, list):
        items = value
    else:
        items = [value]
    out: list[Cited] = []
    for item in items[:MAX_CITED]:
        quote = None
        if isinstance(item, dict):
            quote = optional_text(item.get("quote"), MAX_QUOTE)
            item = item.get("step")
        step = number(item, where, "a cited step", 0.0)
        if step is None or step != int(step):
            raise ValueError(f"{where}: a cited step must be a whole number (got {item!r})")
        out.append(Cited(int(step), quote))
    return tuple(out)


@dataclass
class FileJudgments:
    """What one file of a judge holds: its judgments, and notes on what it holds that is not one (a judge call
    that failed, a reply with no verdict), each naming the file."""

    judgments: list[Judgment] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class JudgmentFormat:
    """A format of judgments: how a file of it is told (``claims(name, head)``: the file's name and its first
    64 KiB of text), how it is read (``read(path)``), and where the format is defined (``source``: repository,
    file and commit, for docs/judges.md)."""

    name: str
    summary: str
    source: str
    claims: Callable[[str, str], bool]
    read: Callable[[Path], FileJudgments]
