"""A run's failure mode from its findings: what :mod:`trajcheck.analyzers.failuremodes` reads, gathered from what
the other analyzers found (kept apart from :mod:`trajcheck.scoring.analysis`, which calls :func:`failure_of`)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..analyzers import claims, failuremodes as failures
from ..analyzers.answers import answer_matches
from ..analyzers.contract import ContractResult
from ..analyzers.evidence import EvidenceVerdict
from ..analyzers.referee import Verdict
from ..base.reasons import ClaimReason
from ..schemas.records import Run

#: Claims in which the agent itself reported that it failed.
_GAVE_UP = frozenset({ClaimReason.AGENT_REPORTED_FAILURE, ClaimReason.MESSAGE_ADMITS_FAILURE})


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def failure_of(run: Run, verdict: Verdict, ev: EvidenceVerdict, claim: claims.Claim, contract: ContractResult,
               evaluator: str | None, overlays: Mapping[int, str | None]) -> failures.Failure:
    """The failure mode of ``run`` (none for a run that passed, or an unknown run that claimed nothing);
    ``overlays``: the modal overlay open before each step, if any."""
    if not failures.applies(verdict.final, verdict.claimed_success):
        return failures.NONE
    steps = run.steps
    last = steps[-1] if steps else None
    ender = next((s for s in reversed(steps) if s.action.type in ("DONE", *claims.GIVE_UP_TYPES)), None)
    gave_up: str | None = claim.reason if claim.reason in _GAVE_UP else None
    if gave_up is None and ender is not None and ender.action.type in claims.GIVE_UP_TYPES:
        gave_up = "fail_step"
    urls = {s.index: u for s in steps if s.page is not None for u in [s.page.url_after or s.page.url_before] if u}
    judge = verdict.judge
    return failures.classify(failures.FailureFacts(
        verdict=verdict.final, verdict_reason=str(verdict.reason), claimed=verdict.claimed_success,
        evidence_reasons=ev.reasons, last_step=last.index if last else None, urls=urls,
        overlays={i: o for i, o in overlays.items() if o},
        no_answer=claims.ended_without_answer(run, claim),
        executor_error=(last.executor_error or "failed") if last is not None and last.executor_ok is False else None,
        gave_up=gave_up, gave_up_evidence=claim.evidence, done_step=ender.index if ender else None,
        failed_checks=tuple((c.name, c.type, _json(c.evidence)) for c in contract.failed),
        evaluator=evaluator, outcome_score=run.outcome_score,
        judge=judge.verdict if judge else None, judge_model=judge.model if judge else None,
        answer_matches=answer_matches(run, ender) if ender is not None and ender.action.type == "DONE" else None))
