"""The failure mode of a run that did not pass: the decisive cause its evidence shows (pure, deterministic).

A run gets a mode when its final verdict is ``fail`` or ``uncertain``, or ``unknown`` while the agent claimed
success; a passing run, and an unknown run that claimed nothing, gets none. The modes are tried in the order
of :class:`~trajcheck.base.failuremodes.FailureMode`, and the first whose evidence the run shows is its mode:

| mode | evidence | detail |
|---|---|---|
| blocked | evidence referee ``ends_blocked``; or a dead action (below) under a modal overlay (analyzers/overlays.py) | captcha, auth_wall, blocking_page; overlay |
| app_said_no | ``error_after_last_high_risk``; or a dead action (below) after a high-risk action whose response, in any frame before the next action, was an error message (:func:`refusal`) | the error text, normalised |
| dead_action | ``last_high_risk_no_effect`` | the action type |
| looped | ``ends_in_loop``, ``no_net_progress``, ``done_after_idle_waits`` (in this order) | drift_loop, no_net_progress, idle_waits |
| no_answer | no DONE, no answer, no infeasible report | executor_error, cut_off |
| gave_up | the agent's failure flag, FAIL, or a final message admitting failure | the admission's kind |
| wrong_result | a failed contract check (by name), the evaluator, the judge, the answer (in this order) | the check type, evaluator, judge, answer |
| not_determined | nothing above | the verdict's reason |

The order goes from the cause nearest the page to the most general: a page that blocks the agent explains an
error message it shows; an error message explains why the action changed nothing; a dead action explains a
loop; each of these explains why no answer came and why the result is wrong. Ties inside a mode are broken by
the fixed orders in the table. A message that appeared after a high-risk action and was gone before the end (a
validation message shown for a moment, then removed) is the application saying no: the action that changed nothing
after it repeated what had been refused. Several error texts by preferring worded messages to ``invalid field: X`` marks,
then the alphabetical first. Missing evidence is never a cause: a check whose evidence is absent (undecided) is
not a failed check, and a run whose only trouble is absent evidence is ``not_determined``.
"""  # noqa: E501  (the table above is Markdown: one row a line)

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlparse

from ..base.reasons import EvidenceCode as C, FailureMode as M

from .evidence import NON_ACTING, StepEvidence

#: How the evidence referee writes a reason (analyzers/evidence.py): ``code@step: evidence``.
_REASON = re.compile(r"^(?P<code>[a-z_]+)@(?P<step>-?\d+): (?P<evidence>.*)$", re.S)
_VETOED = " (vetoed by the error)"
_SCREEN_TEXT = "screen text: "

#: A framework's summary header before the errors it lists (Rails: "2 errors prohibited this user from being
#: saved:"), dropped so that the error itself is the detail.
_HEADER = re.compile(r"^\d+\s+errors?\s+prohibited\s+this\s+[\w ]+?\s+from\s+being\s+saved\s*:\s*", re.I)

#: The looped mode's evidence codes and details, in their tie order.
_LOOPS = ((C.ENDS_IN_LOOP, "drift_loop"), (C.NO_NET_PROGRESS, "no_net_progress"),
          (C.DONE_AFTER_IDLE_WAITS, "idle_waits"))

#: The blocker kinds, in their tie order.
_BLOCKERS = ("captcha", "auth_wall", "blocking_page")  # then overlay, read only on a dead action

EVIDENCE_LIMIT = 160


@dataclass(frozen=True)
class Failure:
    """A run's failure mode, its sub-kind, the step it rests on and the evidence string (all None: no mode).
    ``details``: every sub-kind the evidence shows, ``detail`` first (several error texts, several blockers, several
    loop kinds, several failed checks); empty when the mode has no sub-kind."""

    mode: str | None = None
    detail: str | None = None
    step: int | None = None
    evidence: str | None = None
    details: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.detail is not None and (not self.details or self.details[0] != self.detail):
            rest = tuple(d for d in self.details if d != self.detail)
            object.__setattr__(self, "details", (self.detail, *rest))

    @property
    def subkinds(self) -> tuple[str, ...] | None:
        """``runs.failure_details``: the sub-kinds, None for a run without a failure mode."""
        return None if self.mode is None else self.details


NONE = Failure()


@dataclass(frozen=True)
class FailureFacts:
    """What the failure mode reads of a run, every field already computed by another analyzer."""

    verdict: str  # the final verdict: pass | fail | uncertain | unknown
    verdict_reason: str
    claimed: bool
    evidence_reasons: Sequence[str] = ()  # the evidence referee's ``code@step: evidence``
    last_step: int | None = None
    urls: Mapping[int, str] = field(default_factory=dict)  # the page each step ended on, by step index
    overlays: Mapping[int, str] = field(default_factory=dict)  # a modal overlay open before the step (overlays.py)
    no_answer: bool = False
    executor_error: str | None = None  # the last step's executor error, if it failed
    gave_up: str | None = None  # the claim's reason when the agent reported failure (or FAIL)
    gave_up_evidence: str | None = None
    done_step: int | None = None  # the last DONE (or FAIL) step
    failed_checks: Sequence[tuple[str, str, str]] = ()  # (name, type, evidence JSON) of the failed checks
    evaluator: str | None = None
    outcome_score: float | None = None
    judge: str | None = None  # the judge's verdict
    judge_model: str | None = None
    answer_matches: bool | None = None
    refused: tuple[int, tuple[str, ...]] | None = None  # :func:`refusal`: the step the page said no to, its errors


def applies(verdict: str, claimed: bool) -> bool:
    """Does a run with this final verdict and claim get a failure mode?"""
    return verdict in ("fail", "uncertain") or (verdict == "unknown" and claimed)


def normalise(text: str) -> str:
    """An error text as one sub-kind: lower case, one space between words, no surrounding punctuation, no
    framework header ("Password is too short" and "password is too short." are one)."""
    t = " ".join(_CONTROL.sub(" ", text).split()).lower()
    t = _HEADER.sub("", t)
    return t.strip(" .!;:,…")


#: Control characters (C0, DEL, C1): text from a log is data, and never reaches a terminal as a control code.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def clip(text: str, limit: int = EVIDENCE_LIMIT) -> str:
    """An evidence string: control characters made spaces, at most ``limit`` characters."""
    text = _CONTROL.sub(" ", text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def page_of(url: str | None) -> str | None:
    """A page as the failures command groups it: host and path, no query or fragment."""
    if not url:
        return None
    u = urlparse(url)
    return f"{u.netloc}{u.path.rstrip('/') or '/'}" if u.netloc else url.split("?", 1)[0].split("#", 1)[0]


def blocking_page(evidence: str | None) -> str | None:
    """The page a ``blocked`` failure's evidence names (``KIND at PAGE``), or None."""
    if not evidence or " at " not in evidence:
        return None
    return evidence.rpartition(" at ")[2] or None


def _reasons(evidence_reasons: Sequence[str]) -> dict[str, tuple[int, str]]:
    """The first reason of each code: its step and evidence."""
    out: dict[str, tuple[int, str]] = {}
    for cell in evidence_reasons:
        m = _REASON.match(cell)
        if m is None:
            continue
        ev = m["evidence"]
        ev = ev[:-len(_VETOED)] if ev.endswith(_VETOED) else ev
        out.setdefault(m["code"], (int(m["step"]), ev))
    return out


def error_texts(evidence: str) -> list[str]:
    """The error texts of an ``error_after_last_high_risk`` evidence string, normalised, in tie order: worded
    messages before ``invalid field`` marks, then alphabetical; a text the referee clipped comes last."""
    body = evidence[len(_SCREEN_TEXT):] if evidence.startswith(_SCREEN_TEXT) else evidence
    parts = [p for p in body.split("; ") if p.strip(" …")]
    texts = {(p.endswith("…"), normalise(p).startswith("invalid field"), normalise(p)) for p in parts}
    return [t for _, _, t in sorted(texts) if t]


def _blocked(step: int, evidence: str, urls: Mapping[int, str]) -> Failure:
    """The blocked mode: its kind, and the page it ended on (the step's URL; the referee's evidence names an
    auth wall's, clipped)."""
    codes = {c.strip() for c in evidence.split(",")}
    kind = "auth_wall" if evidence.startswith("auth wall") else next((k for k in _BLOCKERS if k in codes),
                                                                     "blocking_page")
    page = page_of(urls.get(step) or (evidence[len("auth wall"):].strip(" …") if kind == "auth_wall" else None))
    return Failure(M.BLOCKED, kind, step, clip(f"{kind.replace('_', ' ')} at {page}" if page else evidence),
                   tuple(k for k in _BLOCKERS if k in codes))


def _from_evidence(found: dict[str, tuple[int, str]], urls: Mapping[int, str], overlays: Mapping[int, str],
                   refused: tuple[int, tuple[str, ...]] | None = None) -> Failure | None:
    """The modes the evidence referee's reasons show: blocked, app_said_no, dead_action, looped."""
    if C.ENDS_BLOCKED in found:
        return _blocked(*found[C.ENDS_BLOCKED], urls)
    if C.ERROR_AFTER_LAST_HIGH_RISK in found:
        step, ev = found[C.ERROR_AFTER_LAST_HIGH_RISK]
        texts = error_texts(ev)
        return Failure(M.APP_SAID_NO, clip(texts[0]) if texts else None, step, clip(ev), tuple(clip(t) for t in texts))
    if C.LAST_HIGH_RISK_NO_EFFECT in found:
        step, ev = found[C.LAST_HIGH_RISK_NO_EFFECT]
        if step in overlays:  # the action went to the page beneath a modal overlay: the overlay blocked it
            return Failure(M.BLOCKED, "overlay", step, clip(f"overlay '{overlays[step]}' open: {ev}"))
        if refused is not None:  # a message came and went after the refused action: the application said no
            at, said = refused[0], "; ".join(refused[1])
            texts = error_texts(said)
            return Failure(M.APP_SAID_NO, clip(texts[0]) if texts else None, at,
                           clip(f"after step {at}, before the next action, the page said: {said}; then {ev}"),
                           tuple(clip(t) for t in texts))
        return Failure(M.DEAD_ACTION, clip(ev.split(" ", 1)[0]) or None, step, clip(ev))
    loops = [(code, detail) for code, detail in _LOOPS if code in found]
    if loops:
        step, ev = found[loops[0][0]]
        return Failure(M.LOOPED, loops[0][1], step, clip(ev), tuple(d for _, d in loops))
    return None


def _wrong_result(f: FailureFacts) -> Failure | None:
    """A failed check of the run's result: the contract's (the first by name), the evaluator, the judge, the
    answer; its details every check that failed, in this order."""
    step = f.done_step if f.done_step is not None else f.last_step
    checks = sorted(f.failed_checks)
    others = (["evaluator"] if f.evaluator == "fail" else []) + (["judge"] if f.judge == "fail" else []) + \
        (["answer"] if f.answer_matches is False else [])
    details = tuple(dict.fromkeys([clip(k, 60) for _, k, _ in checks] + others))
    if checks:
        name, kind, ev = checks[0]
        return Failure(M.WRONG_RESULT, clip(kind, 60), step, clip(f"contract check {name} failed: {ev}"), details)
    if f.evaluator == "fail":
        return Failure(M.WRONG_RESULT, "evaluator", step, f"the benchmark's evaluator scored {f.outcome_score}",
                       details)
    if f.judge == "fail":
        return Failure(M.WRONG_RESULT, "judge", step, clip(f"the judge ({f.judge_model or 'unnamed'}) said fail"),
                       details)
    if f.answer_matches is False:
        return Failure(M.WRONG_RESULT, "answer", step, "the extracted answer does not contain the reference answer",
                       details)
    return None


def classify(f: FailureFacts) -> Failure:
    """The failure mode of a run (see the module docstring); :data:`NONE` for a run that gets none."""
    if not applies(f.verdict, f.claimed):
        return NONE
    found = _reasons(f.evidence_reasons)
    by_evidence = _from_evidence(found, f.urls, f.overlays, f.refused)
    if by_evidence is not None:
        return by_evidence
    if f.no_answer:
        if f.executor_error:
            return Failure(M.NO_ANSWER, "executor_error", f.last_step, clip(f"executor error: {f.executor_error}"))
        return Failure(M.NO_ANSWER, "cut_off", f.last_step,
                       f"no DONE, answer or infeasible report; the log ends at step {f.last_step}")
    if f.gave_up is not None:
        ev = f.gave_up_evidence or f.gave_up
        kind = ev.split(":", 1)[0].strip().replace(" ", "_") if f.gave_up == "message_admits_failure" else f.gave_up
        return Failure(M.GAVE_UP, clip(kind, 60), f.done_step, clip(ev))
    wrong = _wrong_result(f)
    if wrong is not None:
        return wrong
    rest = sorted(f"{code}@{s}: {ev}" for code, (s, ev) in found.items())
    return Failure(M.NOT_DETERMINED, clip(f.verdict_reason) or None, None,
                   clip("; ".join(rest)) if rest else "no evidence of a cause")


def _page(url: str | None) -> str | None:
    return page_of(url)


def flashed(steps: Sequence[StepEvidence], k: int) -> frozenset[str]:
    """The error messages shown in any frame after step ``k`` and before the next acting step's action that were
    not on the page before step ``k``: its frame after, the frames of the steps that do not act, and the next
    acting step's own frame before it (a snapshot taken apart from the previous step's). On another page than the
    one step ``k`` acted on, only errors worded as errors count (as the evidence referee reads them)."""
    first = steps[k]
    then = first.messages_before.errors if first.messages_before is not None else frozenset()
    start = _page(first.url_before)
    seen = [(first.messages_after, first.url_after)]
    for t in steps[k + 1:]:
        seen.append((t.messages_before, t.url_before))
        if t.action_type not in NON_ACTING:
            break
        seen.append((t.messages_after, t.url_after))
    out: set[str] = set()
    for m, url in seen:
        if m is None:
            continue
        moved = start is not None and _page(url) not in (None, start)
        out |= (m.worded_errors if moved else m.errors) - then
    return frozenset(out)


def refusal(steps: Sequence[StepEvidence]) -> tuple[int, tuple[str, ...]] | None:
    """The last high-risk step whose response, in any frame before the next action, was an error message
    (:func:`flashed`), and its errors; None when there is none, or when an acting step after it changed the
    screen or the URL (the agent acted on what it saw, or the page moved on)."""
    for k in range(len(steps) - 1, -1, -1):
        s = steps[k]
        if not s.high_risk:
            continue
        errors = flashed(steps, k)
        if not errors:
            continue
        start = _page(s.url_before)
        if any(t.action_type not in NON_ACTING
               and (t.content_changed is not False or _page(t.url_after) not in (None, start)) for t in steps[k + 1:]):
            return None
        return s.index, tuple(sorted(errors))
    return None
