"""What a :func:`trajcheck.score` call did (:class:`ScoreResult`), and the error of a call that found no run
(:class:`NoRunsFound`): the public API's results, apart from the call itself (:mod:`trajcheck.api`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base.errors import LedgerError, Problem, TrajcheckError

if TYPE_CHECKING:
    from .base.verdicts import Coverage
    from .readers.mapping.joinreport import JoinReport
    from .scoring.contracts import ContractUse


#: The slug a stored problem text ends with: '... (hint: ...) [frame_unreadable]'.
_SLUG_AT_END = re.compile(r"\[([a-z0-9_]+)\]$")


class NoRunsFound(TrajcheckError):
    """No path given to :func:`score` holds a run that any reader claims."""

    def __init__(self, message: str, problems: list[Problem]):
        super().__init__(message)
        self.problems = problems


@dataclass
class ScoreResult:
    """What one :func:`score` call did. ``summaries`` holds each scored run's main fields."""

    ledger: Path
    generation: int | None  # the ledger generation committed, None when nothing changed
    scored: int
    frames: int
    elapsed: float
    summaries: list[dict[str, Any]] = field(default_factory=list)
    invalid: list[dict[str, Any]] = field(default_factory=list)  # run rows of the invalid runs
    skipped: list[str] = field(default_factory=list)  # unchanged runs, not scored again
    removed: list[str] = field(default_factory=list)  # runs whose directory is gone, dropped
    problems: list[Problem] = field(default_factory=list)  # problems of the paths themselves
    #: How the contracts of ``contracts`` (a folder) applied to the runs scored; None without one
    contracts: "ContractUse | None" = None
    join: "JoinReport | None" = None  # how the mapping's results file joined the runs (None: no such join)
    # with a table of expected runs (score --expect): queries.expected.Denominator.to_json() of the ledger
    expected: list[dict[str, Any]] | None = None

    @property
    def ok(self) -> bool:
        """True when no run is invalid and every folder under the paths was read (none that no reader
        claims)."""
        return not self.invalid and not self.unclaimed

    @property
    def unclaimed(self) -> list[Problem]:
        """The folders under the paths that hold JSON, HTML or images but no run any reader claims."""
        from .base.problems import Slug  # not with the package: `python -m trajcheck.base.problems` runs it unimported

        return [p for p in self.problems if p.slug == Slug.NO_READER_CLAIMS]

    @property
    def warning_kinds(self) -> dict[str, int]:
        """How many of the scored runs have a warning of each kind (its slug, which ends each stored warning),
        most frequent first: what the closing lines of ``score`` name (``trajcheck validate`` shows them)."""
        counts: dict[str, int] = {}
        for r in self.summaries:
            for slug in {m.group(1) for w in r.get("warnings") or [] if (m := _SLUG_AT_END.search(str(w)))}:
                counts[slug] = counts.get(slug, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def with_warnings(self) -> int:
        """How many of the scored runs have a warning (they are scored, and their rows may say less)."""
        return sum(bool(r.get("warnings")) for r in self.summaries)

    @property
    def coverage(self) -> "Coverage":
        """How many of the scored runs have a verdict, by their strongest source (:mod:`trajcheck.base.verdicts`)."""
        from .base.verdicts import coverage

        return coverage(self.summaries)

    @property
    def frames_per_second(self) -> float:
        """Frames scored per second of the call (0.0 for a call that took no time)."""
        return self.frames / self.elapsed if self.elapsed > 0 else 0.0

    def ledger_runs(self) -> list[dict[str, Any]]:
        """Every run of the ledger as the summaries give them (status, verdict, its source, false claim):
        what a call that scored nothing reports instead (an unchanged ledger's verdicts). Empty when the
        ledger has no runs table yet."""
        from .store.manifest import verdicts_from_index

        fast = verdicts_from_index(self.ledger)  # the digest index has them: no Arrow, no DuckDB
        if fast is not None:
            return sorted(fast, key=lambda r: str(r["run_id"]))
        from .store.ledgerquery import query

        keys = ("run_id", "status", "eval_final_verdict", "verdict_source", "false_claim")
        try:
            res = query(self.ledger, f"select {', '.join(keys)} from runs order by run_id")
        except LedgerError:
            return []
        return [dict(zip(keys, r)) for r in res.rows]

    def to_json(self) -> dict[str, Any]:
        """The result as ``score --format json`` prints it: ``runs`` holds the scored runs' summaries."""
        return {"ledger": str(self.ledger), "generation": self.generation, "ok": self.ok, "scored": self.scored,
                "frames": self.frames, "elapsed": round(self.elapsed, 3), "verdicts": self.coverage.to_json(),
                "runs": self.summaries,
                "invalid": self.invalid, "skipped": self.skipped, "removed": self.removed,
                "problems": [p.to_dict() for p in self.problems], "expected": self.expected,
                "join": self.join.to_json() if self.join is not None else None} | (
                    {"contracts": self.contracts.to_json()} if self.contracts is not None else {})
