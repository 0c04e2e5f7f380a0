"""Domain errors. The library raises these; only the CLI turns them into messages and exit codes."""

from __future__ import annotations

from dataclasses import dataclass


class TrajcheckError(Exception):
    """Base class of every error trajcheck raises on purpose."""


@dataclass
class Problem:
    """One thing wrong with a run, located as precisely as the evidence allows.

    ``slug`` is stable (documented in the README); ``message`` is for people;
    ``hint`` says what to do about it.
    """

    slug: str
    message: str
    run: str = ""
    file: str = ""
    line: int | None = None
    field: str = ""
    hint: str = ""
    severity: str = "error"  # "error" makes the run invalid; "warning" is reported, the run is still scored

    def location(self) -> str:
        parts = []
        if self.run:
            parts.append(f"run {self.run}")
        if self.file:
            parts.append(self.file + (f":{self.line}" if self.line is not None else ""))
        if self.field:
            parts.append(f"field {self.field}")
        return ", ".join(parts)

    def __str__(self) -> str:
        loc = self.location()
        text = f"{loc}: {self.message}" if loc else self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return f"{text} [{self.slug}]" if self.slug else text

    def to_dict(self) -> dict[str, object]:
        return {
            "severity": self.severity,
            "slug": self.slug,
            "run": self.run,
            "file": self.file,
            "line": self.line,
            "field": self.field,
            "message": self.message,
            "hint": self.hint,
        }


class RunFormatError(TrajcheckError):
    """A run directory cannot be read; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


class LedgerError(TrajcheckError):
    """A ledger is missing, unreadable or of an unknown schema version."""


class QueryError(TrajcheckError):
    """A SQL query against the ledger failed."""


class UsageError(TrajcheckError):
    """Options that do not fit together or name something that does not exist."""
