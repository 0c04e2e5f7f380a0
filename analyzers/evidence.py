"""The evidence referee: a run's verdict from its own evidence, when it has no contract and no judge.

Pure and deterministic. It reads what trajcheck already computed for every step (the perceptual
verdict, content change, URLs, page messages, reward reasons, loops, the done gate) and never the
agent's own claim: a DONE, an outcome status ``done`` or a ``task_completed`` flag is what it checks,
not evidence.

What happens **after the last high-risk action** decides; a failure the agent recovered from before
it does not count. Each rule that holds adds a reason ``code@step: evidence`` and its weight:

| code | weight | holds when |
|---|---|---|
| ends_blocked | -0.8 | the run ends on a blocking page or CAPTCHA, or on the login page an auth redirect led to |
| error_after_last_high_risk | -0.8 | an error message (alert, validation text, a field marked invalid) appeared after the last high-risk action and was not on the page before it |
| last_high_risk_no_effect | -0.6 | the last high-risk action had no observed effect and nothing after it changed the screen or the URL |
| ends_in_loop | -0.6 | the last acting step repeats an action on an unchanging screen (a drift loop) |
| done_after_idle_waits | -0.4 | DONE after WAIT steps whose frames never changed (the seed's done gate) |
| navigated_after_last_high_risk | +0.6 | the last high-risk action led to a page with another path (not a query or fragment echo) |
| success_after_last_high_risk | +0.7 | a success message (status, toast, "saved", "sent", "thank you for your order") appeared after the last high-risk action |
| answer_matches_reference | +0.8 | the answer the agent extracted matches the task's reference answer |
| no_net_progress | -0.6 | after the last high-risk action the run came back to a screen it had reached early on, and kept nothing it reached since (analyzers/progress.py) |
| effect_without_outcome | 0 | the last high-risk action changed the screen, and nothing says whether that was success or failure (no DOM, or no message and no navigation) |

An error after the last high-risk action vetoes the pass-leaning rules (they are kept as reasons with
weight 0): a page that moved on to show a validation error did not succeed. The verdict is ``fail``
when the weights sum to at most ``-DECIDE_AT``, ``pass`` at ``+DECIDE_AT`` or more, otherwise
``unknown``; the confidence is the sum's magnitude, capped at ``MAX_CONFIDENCE`` (0 for unknown).
"""  # noqa: E501  (the tables above are Markdown: one row a line)

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

from ..base.reasons import BLOCKING_CODES as _BLOCKING, BY_COLUMN, EvidenceCode as C, RewardCode

from .messages import PageMessages
from .screentext import SCREEN_TEXT_TRUST

#: The rules' weights (see the table above).
WEIGHTS: dict[C, float] = {
    C.ENDS_BLOCKED: -0.8,
    C.ERROR_AFTER_LAST_HIGH_RISK: -0.8,
    C.LAST_HIGH_RISK_NO_EFFECT: -0.6,
    C.ENDS_IN_LOOP: -0.6,
    C.DONE_AFTER_IDLE_WAITS: -0.4,
    C.NAVIGATED_AFTER_LAST_HIGH_RISK: 0.6,
    C.SUCCESS_AFTER_LAST_HIGH_RISK: 0.7,
    C.ANSWER_MATCHES_REFERENCE: 0.8,
    C.EFFECT_WITHOUT_OUTCOME: 0.0,
    C.NO_NET_PROGRESS: -0.6,
}

#: What each reason code means, for docs/referee.md: the catalogue's (trajcheck.base.reasons).
MEANINGS: dict[str, str] = BY_COLUMN["runs.evidence_reasons"].means

#: The rules that rest on a message the page showed.
MESSAGE_CODES = frozenset({C.ERROR_AFTER_LAST_HIGH_RISK, C.SUCCESS_AFTER_LAST_HIGH_RISK})

#: Reasons whose weight an error after the last high-risk action sets to 0.
PASS_CODES = frozenset({C.NAVIGATED_AFTER_LAST_HIGH_RISK, C.SUCCESS_AFTER_LAST_HIGH_RISK})

#: The sum of weights at which the referee decides.
DECIDE_AT = 0.5
MAX_CONFIDENCE = 0.9

#: Step types that act on the page (everything else observes, waits or ends the run).
NON_ACTING = frozenset({"DONE", "FAIL", "WAIT", "SCREENSHOT", "READ", "READ_PAGE", "EXTRACT", "OBSERVE", "GET_TEXT",
                        "SNAPSHOT", "FIND"})

#: Reward reason codes that mean the page itself blocks the agent (an auth redirect is read apart: only when
#: the run ends on the wall it led to).
BLOCKING_CODES = _BLOCKING - {RewardCode.AUTH_REDIRECT}


@dataclass(frozen=True)
class StepEvidence:
    """What the referee reads of one step (every field already computed by another analyzer)."""

    index: int
    action_type: str
    high_risk: bool = False
    effect: bool | None = None  # the perceptual verdict of a high-risk step
    content_changed: bool | None = None  # the screen's content changed (any step)
    url_before: str | None = None
    url_after: str | None = None
    reward_codes: tuple[str, ...] = ()  # codes of the step's reward reasons
    in_loop: bool = False  # part of a drift loop
    done_gate: bool = False
    messages_before: PageMessages | None = None  # what the page showed before the action (None: no DOM)
    messages_after: PageMessages | None = None
    answer_matches: bool | None = None


@dataclass(frozen=True)
class EvidenceVerdict:
    verdict: str  # pass | fail | unknown
    reasons: tuple[str, ...]  # "code@step: evidence"
    confidence: float
    message_source: str | None = None  # where the message the verdict read was read: dom or screen_text
    message: str | None = None  # its words


#: How an evidence string begins when its message was read from the screen (OCR), not from a DOM snapshot.
SCREEN_TEXT = "screen text: "


UNKNOWN = EvidenceVerdict("unknown", (), 0.0)


def _path(url: str | None) -> str | None:
    if not url:
        return None
    u = urlparse(url)
    return f"{u.netloc}{u.path.rstrip('/') or '/'}"


def _clip(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _short(items: frozenset[str] | set[str]) -> str:
    return _clip("; ".join(sorted(items)))


def _messages_after(steps: list[StepEvidence], k: int) -> tuple[set[str], set[str], bool, set[str]]:
    """Errors and successes on the page after step ``k`` and later that were not there before it.

    On a page with another path than the one step ``k`` acted on, an error counts only when its own
    words say so (``PageMessages.worded_errors``): a new page's error-classed templates, hidden by style
    sheets a snapshot does not carry, are not a response to the action."""
    first = steps[k]
    start = _path(first.url_before)
    before = first.messages_before
    errors_then = before.errors if before else frozenset()
    successes_then = before.successes if before else frozenset()
    errors: set[str] = set()
    successes: set[str] = set()
    seen_dom = False
    on_screen: set[str] = set()  # the messages read from the screen (OCR)
    for s in steps[k:]:
        m = s.messages_after
        if m is None:
            continue
        seen_dom = True
        moved = start is not None and _path(s.url_after) not in (None, start)
        new_errors = (m.worded_errors if moved else m.errors) - errors_then
        new_successes = m.successes - successes_then
        if m.source == "screen_text":
            on_screen |= new_errors | new_successes
        errors |= new_errors
        successes |= new_successes
    return errors, successes, seen_dom, on_screen


def _said(items: set[str], on_screen: set[str]) -> str:
    """The evidence of a message rule: its words, marked when they were all read from the screen."""
    return (SCREEN_TEXT if items <= on_screen else "") + _short(items)


def _final_url(steps: list[StepEvidence]) -> str | None:
    for s in reversed(steps):
        if s.url_after or s.url_before:
            return s.url_after or s.url_before
    return None


def _end_rules(steps: list[StepEvidence]) -> list[tuple[C, int, str]]:
    """Rules about how the run ends, whatever its last high-risk action was."""
    out: list[tuple[C, int, str]] = []
    last_page = next((s for s in reversed(steps) if s.reward_codes or s.url_after or s.messages_after is not None),
                     None)
    if last_page is not None:
        codes = sorted(c for c in last_page.reward_codes if c in BLOCKING_CODES)
        if codes:
            out.append((C.ENDS_BLOCKED, last_page.index, ", ".join(codes)))
    final = _path(_final_url(steps))
    auth = next((s for s in reversed(steps) if RewardCode.AUTH_REDIRECT in s.reward_codes), None)
    if auth is not None and final is not None and _path(auth.url_after) == final and not out:
        out.append((C.ENDS_BLOCKED, auth.index, _clip(f"auth wall {auth.url_after}")))
    acting = [s for s in steps if s.action_type not in NON_ACTING]
    if acting and acting[-1].in_loop:
        out.append((C.ENDS_IN_LOOP, acting[-1].index, f"{acting[-1].action_type} repeated on an unchanging screen"))
    gate = next((s for s in steps if s.done_gate), None)
    if gate is not None:
        out.append((C.DONE_AFTER_IDLE_WAITS, gate.index, "no frame change across the waits before DONE"))
    answer = next((s for s in reversed(steps) if s.answer_matches is not None), None)
    if answer is not None and answer.answer_matches:
        out.append((C.ANSWER_MATCHES_REFERENCE, answer.index, "extracted answer contains a reference answer"))
    return out


def _last_action_rules(steps: list[StepEvidence]) -> list[tuple[C, int, str]]:
    """Rules about the last high-risk action and what followed it."""
    k = next((i for i in range(len(steps) - 1, -1, -1) if steps[i].high_risk), None)
    if k is None:
        return []
    last = steps[k]
    later = steps[k + 1:]
    out: list[tuple[C, int, str]] = []
    errors, successes, seen_dom, on_screen = _messages_after(steps, k)
    if errors:
        out.append((C.ERROR_AFTER_LAST_HIGH_RISK, last.index, _said(errors, on_screen)))
    start = _path(last.url_before)
    moved_to = next((u for s in steps[k:] for u in (s.url_after, s.url_before) if u and _path(u) != start), None) \
        if start else None
    blocked = any(c in _BLOCKING for s in steps[k:] for c in s.reward_codes)
    if moved_to is not None and not blocked:
        out.append((C.NAVIGATED_AFTER_LAST_HIGH_RISK, last.index, _clip(f"to {moved_to}")))
    if successes:
        out.append((C.SUCCESS_AFTER_LAST_HIGH_RISK, last.index, _said(successes, on_screen)))
    changed_later = any(s.content_changed or (s.url_after and _path(s.url_after) != start) for s in later)
    if last.effect is False and not changed_later and moved_to is None:
        out.append((C.LAST_HIGH_RISK_NO_EFFECT, last.index, f"{last.action_type} changed nothing, nor did any "
                                                            "later step"))
    elif (last.effect or changed_later) and not out:
        why = "no DOM snapshot to read a message from" if not seen_dom else "no message and no navigation"
        out.append((C.EFFECT_WITHOUT_OUTCOME, last.index, why))
    return out


def decide(steps: list[StepEvidence], stalled: tuple[int, str] | None = None) -> EvidenceVerdict:
    """The evidence verdict of a run (see the module docstring). ``stalled``: the step from which the run made
    no net progress and what it ended on (:func:`trajcheck.analyzers.progress.no_net_progress`), if it did not."""
    if not steps:
        return UNKNOWN
    found = _last_action_rules(steps) + _end_rules(steps)
    if stalled is not None:
        found.append((C.NO_NET_PROGRESS, stalled[0], stalled[1]))
    veto = any(code == C.ERROR_AFTER_LAST_HIGH_RISK for code, _, _ in found)
    total = 0.0
    reasons: list[str] = []
    message: tuple[str, str] | None = None
    for code, index, evidence in found:
        full = WEIGHTS[code] * (SCREEN_TEXT_TRUST if evidence.startswith(SCREEN_TEXT) else 1.0)
        weight = 0.0 if veto and code in PASS_CODES else full
        total += weight
        reasons.append(f"{code}@{index}: {evidence}" + (" (vetoed by the error)" if weight != full else ""))
        if code in MESSAGE_CODES and message is None and weight != 0:
            read = evidence.startswith(SCREEN_TEXT)
            message = ("screen_text" if read else "dom", evidence[len(SCREEN_TEXT):] if read else evidence)
    total = round(total, 6)
    if total <= -DECIDE_AT:
        verdict = "fail"
    elif total >= DECIDE_AT:
        verdict = "pass"
    else:
        verdict = "unknown"
    confidence = 0.0 if verdict == "unknown" else round(min(MAX_CONFIDENCE, abs(total)), 3)
    return EvidenceVerdict(verdict, tuple(reasons), confidence, *(message or (None, None)))
