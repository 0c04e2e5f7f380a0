"""How many runs have a verdict, and from which source: the line every table prints beside its figures.

A table of success rates means little when most runs have no verdict; each command says how many do:
``verdict for 19 of 26 runs: contract 4, evaluator 5, evidence 6, no answer 4; unknown 7``. A run counts
under the strongest source that decided it (:data:`SOURCES`, the referee's ranking; ``contract+evaluator``
counts as contract). Pure: it reads run rows (``eval_final_verdict``, ``verdict_source``, ``status``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .words import count

#: The verdict sources, strongest first (docs/referee.md, "The ranking of sources").
SOURCES = ("contract", "evaluator", "judge", "evidence", "no_answer")
#: How a harness ends a run, as its format declares it (docs/referee.md, "How runs end"): ``answer``, only by
#: the agent's answer (a DONE, a FAIL, an infeasible report) or a limit that cuts the agent off (a step budget,
#: a crash); ``external``, it may also stop a run itself (its own state check, a person). Only under ``answer``
#: is a run that ended without an answer a fail; undeclared (None), it is never one.
ENDS = ("answer", "external")
#: Final verdicts that are a verdict (``unknown`` is none).
DECIDED = frozenset({"pass", "fail", "uncertain"})


def strongest(verdict_source: str | None) -> str | None:
    """The strongest source named in a ``verdict_source`` (``contract+judge`` -> ``contract``); None for none."""
    named = set((verdict_source or "").split("+"))
    return next((s for s in SOURCES if s in named), None)


@dataclass(frozen=True)
class Coverage:
    """Of ``runs`` scored runs, ``decided`` have a verdict, counted by their strongest source."""

    runs: int
    decided: int
    by_source: dict[str, int] = field(default_factory=dict)

    @property
    def unknown(self) -> int:
        return self.runs - self.decided

    def text(self) -> str:
        """``verdict for 19 of 26 runs: contract 4, evaluator 5, evidence 6, no answer 4; unknown 7``."""
        parts = ", ".join(f"{s.replace('_', ' ')} {n}" for s, n in self.by_source.items())
        return (f"verdict for {self.decided} of {count(self.runs, 'run')}" + (f": {parts}" if parts else "")
                + (f"; unknown {self.unknown}" if self.unknown else ""))

    def to_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "with_verdict": self.decided, "by_source": dict(self.by_source),
                "unknown": self.unknown}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Coverage":
        """Back from :meth:`to_json` (a command renders the JSON its library call returned)."""
        return cls(int(d["runs"]), int(d["with_verdict"]), dict(d["by_source"]))


def coverage(rows: Iterable[Mapping[str, Any]]) -> Coverage:
    """The verdict coverage of the scored runs among ``rows`` (invalid runs are not counted)."""
    runs = decided = 0
    counts = dict.fromkeys(SOURCES, 0)
    for r in rows:
        if r.get("status", "ok") != "ok":
            continue
        runs += 1
        if r.get("eval_final_verdict") in DECIDED:
            decided += 1
            src = strongest(r.get("verdict_source"))
            if src is not None:
                counts[src] += 1
    return Coverage(runs, decided, {s: n for s, n in counts.items() if n})
