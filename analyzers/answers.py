"""Does the agent's answer contain a reference answer the run records (a benchmark's expected answer)?"""

from __future__ import annotations

from ..schemas.records import Run, Step


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def answer_matches(run: Run, s: Step) -> bool | None:
    """True when a reference answer of ``run`` appears in the step's answer (its text or extracted content),
    case and spacing aside; None when the run has no reference answers or the step no answer."""
    if not run.reference_answers:
        return None
    answer = " ".join(str(v) for v in (s.action.text, s.extra.get("extracted_content")) if v)
    if not answer:
        return None
    return any(_norm(ref) in _norm(answer) for ref in run.reference_answers)
