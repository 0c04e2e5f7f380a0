"""Domain errors. The library raises these; only the CLI turns them into messages and exit codes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .problems import ProblemKind, Slug


class TrajcheckError(Exception):
    """Base class of every error trajcheck raises on purpose."""


def _kind(slug: object) -> ProblemKind:
    # Imported on first use, not with the package: ``python -m trajcheck.base.problems`` must find the module
    # not yet imported (runpy warns otherwise), and the package import stays as light as it was.
    from .problems import lookup

    return lookup(slug if isinstance(slug, str) else repr(slug))


@dataclass
class Problem:
    """One thing wrong with a run, located as precisely as the evidence allows.

    ``slug`` is a member of :class:`trajcheck.base.problems.Slug`, an entry of the catalogue (listed in
    docs/problems.md); a plain string is looked up and replaced by its member, and an undeclared slug raises
    ValueError, when the problem is made and when its slug is changed.
    ``message`` is for people and says what was found; ``hint`` says what to do about it, and is the
    catalogue's default hint when the call site gives none.
    """

    slug: Slug
    message: str
    run: str = ""
    file: str = ""
    line: int | None = None
    field: str = ""
    hint: str = ""
    severity: str = "error"  # "error" makes the run invalid; "warning" is reported, the run is still scored
    reader: str = ""  # the reader (or mapping) that read the run; set where the run is read (validate, score)

    def __post_init__(self) -> None:
        from .problems import SEVERITIES

        if self.severity not in SEVERITIES:  # anything else would silently count as a warning
            raise ValueError(f"problem severity {self.severity!r} is neither 'error' nor 'warning'")
        kind = _kind(self.slug)
        if not self.hint and kind.fills_hint:
            self.hint = kind.hint

    def __setattr__(self, name: str, value: object) -> None:
        if name == "slug":  # call sites re-label a problem (contracts.py): the new slug must be declared too
            value = _kind(value).slug
        super().__setattr__(name, value)

    def location(self) -> str:
        """Where the problem is: run, file[:line] and field, those that are known."""
        parts = []
        if self.run:
            parts.append(f"run {self.run}" + (f" (read by {self.reader})" if self.reader else ""))
        elif self.reader:
            parts.append(f"read by {self.reader}")
        if self.file:
            parts.append(self.file + (f":{self.line}" if self.line is not None else ""))
        if self.field:
            parts.append(f"field {self.field}")
        return ", ".join(parts)

    def __str__(self) -> str:
        """The one line ``validate`` prints and the ledger stores: location, message, hint, slug."""
        loc = self.location()
        text = f"{loc}: {self.message}" if loc else self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return f"{text} [{self.slug}]" if self.slug else text

    def to_dict(self) -> dict[str, object]:
        """The problem as plain data (``validate --format json``)."""
        return {
            "severity": self.severity,
            "slug": self.slug,
            "run": self.run,
            "reader": self.reader,
            "file": self.file,
            "line": self.line,
            "field": self.field,
            "message": self.message,
            "hint": self.hint,
        }


def read_by(problems: list[Problem], reader: str) -> list[Problem]:
    """``problems`` (of one run) with the reader that read the run named in each that names none yet."""
    for p in problems:
        if not p.reader:
            p.reader = reader
    return problems


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
