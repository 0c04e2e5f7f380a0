"""The no-answer rule applies only where the format has a way to answer.

The referee fails a run that ended without an answer (``verdict_source = no_answer``): a DONE, a finish action,
an infeasible report or an outcome status is how a harness answers, and a run cut off before it has failed, as
benchmarks count it. A harness that has no way to answer (its loop stops when its own state check passes, and
its log has no DONE) would have every run failed by that rule, successes included. So a batch in which no run
has any answer gets no ``no_answer`` failures: those runs are ``unknown`` (``no_answer_action``).

Results stream in discovery order (a sink writes them as they come), so a run the rule failed is held, with
every result after it, until a run with an answer is seen (then they pass on unchanged) or the batch ends (then
they are rewritten). At most :data:`HOLD` results are held: a batch whose first ``HOLD`` results after a
no-answer fail hold no answer is taken to have none, and the no-answer fails that come before the first answer
are rewritten as they arrive. The order of the results, and so the ledger, is the same whatever the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ..base.reasons import VerdictReason
from .rows import RunResult

#: How many results are held while the batch has shown no answer.
HOLD = 200


def answered(res: RunResult) -> bool:
    """The run gave an answer: a DONE or an outcome status (claim_reason is not no_done), or a FAIL step."""
    if not res.ok:
        return False
    return res.run.get("claim_reason") != "no_done" or any(s.get("action_type") == "FAIL" for s in res.steps)


def _no_answer_fail(res: RunResult) -> bool:
    return res.ok and res.run.get("verdict_reason") == VerdictReason.NO_ANSWER.value


def unanswerable(res: RunResult) -> RunResult:
    """``res`` with its no-answer fail taken back: unknown, no source decided, reason ``no_answer_action``."""
    if _no_answer_fail(res):
        res.run.update(eval_final_verdict="unknown", verdict_source="none", final_confidence=0.0,
                       verdict_reason=VerdictReason.NO_ANSWER_ACTION.value, lesson_promotable=False)
        if not res.run.get("claimed_success"):  # an unknown run that claimed nothing has no failure mode
            res.run.update(failure_mode=None, failure_detail=None, failure_step=None, failure_evidence=None)
    return res


def batch_answers(results: Iterable[RunResult], elsewhere: Callable[[], bool] | None = None) -> Iterator[RunResult]:
    """``results`` in the same order, with the no-answer fails of a batch in which no run answered taken back
    (module docstring). ``elsewhere``: whether a run of the batch that is not among ``results`` answered (an
    unchanged run an incremental score skipped, as the ledger holds it); asked once, and only before a fail
    would be taken back, so that scoring a batch again gives each run the verdict scoring it whole gives."""
    seen = False  # a run with an answer was seen: the rule stands
    decided = False  # HOLD results held with no answer: the batch is taken to have none
    asked: list[bool] = []
    held: list[RunResult] = []

    def answered_elsewhere() -> bool:
        if not asked:
            asked.append(elsewhere is not None and elsewhere())
        return asked[0]

    for res in results:
        if not seen and answered(res):
            seen = True
            yield from held
            held.clear()
            yield res
        elif seen:
            yield res
        elif decided:
            yield unanswerable(res)
        elif held or _no_answer_fail(res):
            held.append(res)
            if len(held) >= HOLD:
                if answered_elsewhere():
                    seen = True
                    yield from held
                else:
                    decided = True
                    yield from (unanswerable(r) for r in held)
                held.clear()
        else:
            yield res
    if held and answered_elsewhere():
        yield from held
    else:
        yield from (unanswerable(r) for r in held)
