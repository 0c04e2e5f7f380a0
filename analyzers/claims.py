"""Did the agent claim success? What it said, read for what it says.

A DONE step (or an outcome status ``done``) ends a run; it is not always a claim that the task
succeeded. Agents end runs they gave up on with a DONE whose own words admit it ("I could not finish:
the site asks me to sign in"), harnesses record a success flag beside the final message (browser-use's
``done`` with ``success: false``, BrowserGym's ``report_infeasible``, OSWorld's ``FAIL``), and a step's
``semantic.task_completed`` is the agent's own verdict. None of this is evidence that the task
succeeded: it is the claim the referee checks (:mod:`trajcheck.analyzers.referee`).

Rules, first that applies (``CLAIM_RULES`` is the table docs/referee.md prints):

1. no DONE step and no outcome status ``done``: no claim (``no_done``);
2. a recorded flag on the final DONE: ``extra.infeasible`` (the harness's "gave up" or success false)
   or ``semantic.task_completed = false``: no claim (``agent_reported_failure``);
   ``semantic.task_completed = true``: a claim (``agent_reported_success``);
3. the final message (the DONE's text, else its reasoning) admits failure, refuses or names a block:
   no claim (``message_admits_failure``, with the words that say so);
4. otherwise a DONE is a claim (``done``), and an outcome status ``done`` without a DONE step too
   (``outcome_done``).

The admission patterns ask for the agent or the task as the subject ("I could not", "unable to
complete", "impossible to determine", "the task is infeasible") so that an answer which merely
mentions a fact ("the store cannot deliver on Sundays") is still read as the claim it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..base.reasons import BY_COLUMN, ClaimReason as CR
from ..schemas.records import Run

_CLAIMED = {CR.NO_DONE: False, CR.AGENT_REPORTED_FAILURE: False, CR.AGENT_REPORTED_SUCCESS: True,
            CR.MESSAGE_ADMITS_FAILURE: False, CR.DONE: True, CR.OUTCOME_DONE: True}

#: (code, claimed, what it means): every reason :func:`read_claim` gives, in rule order (the meanings are
#: the catalogue's, trajcheck.base.reasons).
CLAIM_RULES: tuple[tuple[CR, bool, str], ...] = tuple(
    (c, claimed, BY_COLUMN["runs.claim_reason"].means[c]) for c, claimed in _CLAIMED.items())

_I = r"\b(?:i|we)(?:\s+(?:still|really|just|unfortunately))?\s+"
_NEG_ABLE = (r"(?:could\s*not|couldn'?t|can\s*not|cannot|can'?t|was\s*n[o']t\s+able|were\s*n[o']t\s+able|"
             r"am\s+not\s+able|are\s+not\s+able|(?:was|am|were|are)\s+unable|(?:have|had)\s*n[o']t\s+been\s+able|"
             r"(?:have|had)\s+not\s+been\s+able|failed|did\s*n[o']t\s+(?:manage|succeed))")
_TASK_VERB = (r"(?:complete|finish|proceed|continue|find|locate|access|open|submit|place|log\s*in|sign\s*in|"
              r"determine|perform|do|save|send|create|book|buy|order|purchase|reach|get|load|verify|confirm|"
              r"fulfil|fulfill|carry\s+out|accomplish|retrieve|identify|answer)")

#: (label, pattern) of a final message that admits failure; the label is kept as the claim's evidence.
ADMISSIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "I could not find any errors" reports a check that passed, not a failure
    ("agent could not", re.compile(_I + _NEG_ABLE + r"(?!\s+(?:find|see|spot)\s+(?:any\s+)?(?:errors?|problems?|"
                                   r"issues?|mistakes?)\b)", re.I)),
    ("agent gave up", re.compile(_I + r"(?:gave\s+up|give\s+up|am\s+giving\s+up|have\s+to\s+stop|must\s+stop|"
                                 r"will\s+stop\s+here|am\s+stopping)", re.I)),
    ("unable to", re.compile(r"\bunable\s+to\s+" + _TASK_VERB, re.I)),
    ("impossible to", re.compile(r"\b(?:impossible|not\s+possible)\s+(?:for\s+me\s+)?to\s+" + _TASK_VERB, re.I)),
    ("task not done", re.compile(r"\b(?:task|goal|request|order|form|submission)\b[^.;:!?]{0,40}?\b"
                                 r"(?:could\s*not|couldn'?t|cannot|can'?t|was\s*n[o']t|is\s*n[o']t|has\s*n[o']t)\s+"
                                 r"(?:be(?:en)?\s+)?(?:completed|done|finished|submitted|placed|performed|accomplished|"
                                 r"possible|feasible|achievable)\b", re.I)),
    ("task infeasible", re.compile(r"\b(?:task|goal|request)\s+(?:is|was|seems|appears|looks)\s+(?:to\s+be\s+)?"
                                   r"(?:impossible|infeasible|unachievable|not\s+(?:possible|feasible|achievable))\b",
                                   re.I)),
    ("something prevents it", re.compile(r"\bprevent(?:s|ed|ing)\s+(?:me\s+|us\s+)?(?:from\s+|the\s+\w+(?:\s+\w+)?"
                                         r"\s+from\s+)", re.I)),
    ("blocked by a wall", re.compile(r"\b(?:blocked\s+by|stuck\s+(?:on|at)|(?:asks?|requires?|wants?|needs?)\s+"
                                     r"(?:me\s+|us\s+)?to\s+(?:sign|log)\s*in|(?:sign|log)[\s-]*in\s+(?:is\s+)?"
                                     r"required|behind\s+a\s+(?:login|sign[\s-]*in|paywall))", re.I)),
    ("refusal", re.compile(r"\b(?:i|we)\s+(?:won'?t|will\s+not|must\s+decline|decline\s+to|refuse\s+to)\b", re.I)),
)


@dataclass(frozen=True)
class Claim:
    claimed: bool
    reason: CR
    evidence: str | None = None  # the admission's label and words, or the flag that decided


def admission(message: str | None) -> str | None:
    """The first admission of failure in ``message``: "label: matched words", or None."""
    if not message:
        return None
    # the start and the end of a long message: an admission opens or closes it, and the scan stays bounded
    text = message if len(message) <= 6000 else message[:4000] + " ... " + message[-2000:]
    for label, rx in ADMISSIONS:
        m = rx.search(text)
        if m:
            return f"{label}: {' '.join(m.group(0).split())[:60]}"
    return None


def read_claim(has_done: bool, outcome_status: str | None, *, flag_failed: bool = False,
               task_completed: bool | None = None, message: str | None = None) -> Claim:
    """What the agent claimed at the end of its run.

    ``has_done``: the run has a DONE step; the other arguments describe the last one. ``flag_failed``:
    the harness recorded that the agent stopped without success (``extra.infeasible``).
    """
    if not has_done:
        if outcome_status == "done":
            return Claim(True, CR.OUTCOME_DONE)
        return Claim(False, CR.NO_DONE)
    if flag_failed or task_completed is False:
        return Claim(False, CR.AGENT_REPORTED_FAILURE,
                     "infeasible" if flag_failed else "semantic.task_completed = false")
    if task_completed is True:
        return Claim(True, CR.AGENT_REPORTED_SUCCESS, "semantic.task_completed = true")
    said = admission(message)
    if said is not None:
        return Claim(False, CR.MESSAGE_ADMITS_FAILURE, said)
    return Claim(True, CR.DONE)


#: Step types that end a run by declaring it infeasible (OSWorld's FAIL): an answer, though not a claim.
GIVE_UP_TYPES = frozenset({"FAIL"})


def ended_without_answer(run: Run, claim: Claim) -> bool:
    """Did ``run`` end without any answer: no DONE step, no outcome status done, no infeasible report (the
    agent was cut off by an executor error, the step budget, a crash, or the log ends early)?"""
    return claim.reason == CR.NO_DONE and not any(s.action.type in GIVE_UP_TYPES for s in run.steps)


def claim_of(run: Run) -> Claim:
    """What ``run`` claimed: its last DONE step read by :func:`read_claim` (or its outcome status without one)."""
    done = next((s for s in reversed(run.steps) if s.action.type == "DONE"), None)
    if done is None:
        return read_claim(False, run.outcome_status)
    return read_claim(True, run.outcome_status, flag_failed=bool(done.action.extra.get("infeasible")),
                      task_completed=done.semantic.task_completed if done.semantic else None,
                      message=done.action.text or done.reasoning)
