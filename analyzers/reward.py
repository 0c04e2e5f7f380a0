"""The evidence reward scorer: a deterministic score for every step.

Pure: the same :class:`RewardInput` always gives the same :class:`Reward`. Every
signal is a short code with its evidence (``executor_timeout: Timeout 5000ms
exceeded``), so a score can always be explained. Rules, strongest first:

1. *hard negative*: a destructive or transactional action (delete, purchase,
   place order, ...) attempted with no confirmation step before it, when the run
   requires confirmation;
2. a step *contract* result outranks every heuristic: passed is strong positive,
   failed is negative;
3. otherwise the signals below are summed (clamped to [-0.95, 0.95]) and the
   class follows from the sum;
4. a step that landed on a blocking page, a CAPTCHA or an auth redirect is
   negative whatever else it shows (its score is capped at -0.3): a URL that
   changed as predicted, or a page that changed, is not progress when the new
   page is a login wall.

| signal | weight | evidence |
|---|---|---|
| unconfirmed_destructive_action | -1.0 | rule 1: the step's whole score (class hard_negative) |
| contract_passed | +1.0 | rule 2: the step's whole score |
| contract_failed | -0.8 | rule 2: the step's whole score |
| expected_data_extracted | +0.9 | the answer the agent extracted matches the reference answer |
| expected_state_reached | +0.8 | every check of the step's expected outcome held |
| fresh_read_after_failure | +0.5 | an observation that brought new information right after a stale-ref / not-found failure |
| page_changed | +0.4 | URL changed, meaningful DOM change, or content change on screen |
| new_information | +0.1 | an observation-only step whose screen or DOM had not been seen before |
| repeated_observation | -0.3 | an observation-only step that brought nothing new |
| prediction_failed | -0.3 | the step's own prediction did not hold |
| no_change | -0.3 | an acting step after which nothing changed (observation verifier) |
| no_observed_effect | -0.4 | a high-risk action with no visible effect (perceptual verifier) |
| executor_error | -0.4 | the executor's error message, of no known class |
| executor_stale_ref | -0.5 | the executor's error: a stale or detached element |
| executor_not_found | -0.5 | the executor's error: no such element |
| executor_timeout | -0.5 | the executor's error: a time-out |
| no_observed_delta_after_waits | -0.5 | DONE after WAIT steps whose frames never changed |
| drift_loop | -0.6 | the same action repeated on an unchanging screen |
| repeated_failed_action | -0.7 | the same action that already failed earlier in the run |
| auth_redirect | -0.7 | the page moved to a sign-in wall: a login endpoint, an auth area with a next=/return_to= redirect, or a password field on a page that is not a sign-up or password page |
| blocking_page | -0.8 | "access denied", "just a moment", "too many requests"... in title or page text |
| captcha | -0.8 | "verify you are human", "I'm not a robot"... in title or page text |

The weights are :data:`WEIGHTS`, one entry per code; this table and docs/reward.md's are checked against it
(tests/test_reward.py).

Classes: strong_positive >= 0.6 > weak_positive >= 0.2 > neutral > -0.2 >= negative;
hard_negative only by rule 1. Confidence starts at 0.35 and each kind of
evidence present (frames, page/DOM, executor result, a semantic verdict) adds to
it; missing evidence never raises it.
"""  # noqa: E501  (the tables above are Markdown: one row a line)

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import ParseResult, parse_qs, urlparse

from ..base.reasons import BLOCKING_CODES as BLOCKED_CODES, RewardCode as R

#: The score cap of the signals that make a step negative whatever else it shows (rule 4: BLOCKED_CODES,
#: declared with the codes in trajcheck.base.reasons).
BLOCKED_MAX = -0.3

#: Each signal's weight (the table above): the only place a reward weight is written.
WEIGHTS: dict[R, float] = {
    R.UNCONFIRMED_DESTRUCTIVE_ACTION: -1.0,
    R.CONTRACT_PASSED: 1.0,
    R.CONTRACT_FAILED: -0.8,
    R.EXPECTED_DATA_EXTRACTED: 0.9,
    R.EXPECTED_STATE_REACHED: 0.8,
    R.FRESH_READ_AFTER_FAILURE: 0.5,
    R.PAGE_CHANGED: 0.4,
    R.NEW_INFORMATION: 0.1,
    R.REPEATED_OBSERVATION: -0.3,
    R.PREDICTION_FAILED: -0.3,
    R.NO_CHANGE: -0.3,
    R.NO_OBSERVED_EFFECT: -0.4,
    R.EXECUTOR_ERROR: -0.4,
    R.EXECUTOR_STALE_REF: -0.5,
    R.EXECUTOR_NOT_FOUND: -0.5,
    R.EXECUTOR_TIMEOUT: -0.5,
    R.NO_OBSERVED_DELTA_AFTER_WAITS: -0.5,
    R.DRIFT_LOOP: -0.6,
    R.REPEATED_FAILED_ACTION: -0.7,
    R.AUTH_REDIRECT: -0.7,
    R.BLOCKING_PAGE: -0.8,
    R.CAPTCHA: -0.8,
}

CLASSES = ("strong_positive", "weak_positive", "neutral", "negative", "hard_negative")

OBSERVATION_TYPES = frozenset({"WAIT", "SCROLL", "EXTRACT", "READ", "READ_PAGE", "SCREENSHOT", "OBSERVE",
                               "GET_TEXT", "FIND", "SNAPSHOT"})

_ERRORS = (
    (R.EXECUTOR_STALE_REF, re.compile(r"stale|detached|not attached|no longer (?:attached|in the dom)|"
                                            r"element (?:is )?not (?:attached|connected)", re.I)),
    (R.EXECUTOR_TIMEOUT, re.compile(r"time(?:d)? ?out|timeout|deadline exceeded", re.I)),
    (R.EXECUTOR_NOT_FOUND, re.compile(r"not found|no (?:such )?element|could not find|unable to (?:find|locate)|"
                                            r"no node|does not exist|invalid (?:bid|element|ref)", re.I)),
)

_CAPTCHA = re.compile(r"captcha|verify (?:that )?you(?:'re| are) (?:a )?human|are you a robot|i'?m not a robot|"
                      r"human verification|press (?:and|&) hold", re.I)
_BLOCKING = re.compile(r"access denied|just a moment|attention required|checking your browser|unusual traffic|"
                       r"too many requests|rate limit(?:ed)?|request blocked|you have been blocked|"
                       r"403 forbidden|error 1020|bot detection", re.I)
#: A path segment that is a login endpoint by itself (``/login``, ``/users/sign_in``, ``/wp-login.php``,
#: ``/oauth/authorize``, ``/session/new``).
_LOGIN_SEGMENT = re.compile(r"(?:wp-)?(?:log[-_]?in|log[-_]?on|sign[-_]?in|sign[-_]?on|authenticate|authorize)"
                            r"(?:\.\w{2,5})?", re.I)
#: A segment that names an authentication area without being a login page (Django keeps users and groups
#: under ``/admin/auth/``): login-like only with a redirect parameter or a password field on the page.
_AUTH_AREA = re.compile(r"auth|oauth2?|sso|saml2?|cas|openid|identity|idp|accounts?|session|sessions", re.I)
#: Pages with a password field that are not a wall: the agent went there to register or change a password.
_OWN_PASSWORD_PAGE = re.compile(r"regist|sign[-_]?up|join|password|reset|settings|preferences|profile|new[-_]?account",
                                re.I)
_REDIRECT_PARAMS = ("next", "return_to", "returnto", "redirect", "redirect_uri", "redirect_url", "continue",
                    "returnurl")
_DESTRUCTIVE = re.compile(r"\b(?:delet|remov|purchas|buy|place[\s_-]+(?:the\s+|my\s+|your\s+)?order|checkout|"
                          r"check[\s_-]+out|pay|transfer|wire|cancel[\s_-]+(?:subscription|account|order)|"
                          r"unsubscrib|destroy|drop|wipe|erase|submit[\s_-]+payment)\w*", re.I)
_CONFIRM = re.compile(r"\b(?:confirm\w*|are you sure|double[\s-]check\w*)\b", re.I)


@dataclass(frozen=True)
class Reward:
    score: float
    klass: str
    reasons: tuple[str, ...]
    confidence: float


@dataclass(frozen=True)
class RewardInput:
    action_type: str
    signature: str  # the action, for the evidence of repeated_failed_action
    reasoning: str | None = None
    high_risk: bool = False
    executor_ok: bool | None = None
    executor_error: str | None = None
    effect: bool | None = None  # the perceptual verifier's verdict
    content_changed: bool | None = None  # the screen's content changed (any step)
    frames_present: bool = False
    url_before: str | None = None
    url_after: str | None = None
    meaningful_change: bool | None = None  # observation verifier
    something_changed: bool | None = None
    page_title: str | None = None  # of the page after the action
    page_text: str | None = None
    login_form_after: bool | None = None  # the page after shows a password field (None: no DOM snapshot)
    new_information: bool | None = None  # screen or DOM after the step not seen earlier in the run
    contract_name: str | None = None
    contract_passed: bool | None = None
    prediction_held: bool | None = None
    expected_state_reached: bool | None = None
    answer_matches: bool | None = None
    loop_position: int | None = None  # 2+ for a repetition inside a drift loop
    done_gate: bool = False  # no_observed_delta_after_waits
    semantic_known: bool = False
    require_confirmation: bool = False
    confirmed_before: bool = False
    repeats_failed_action: bool = False  # the same action already failed earlier in the run
    previous_failure_kind: R | None = None  # executor_* code of the step just before


def classify_error(message: str | None) -> tuple[R, float]:
    """The executor error as a stable code and its weight."""
    for code, rx in _ERRORS:
        if message and rx.search(message):
            return code, WEIGHTS[code]
    return R.EXECUTOR_ERROR, WEIGHTS[R.EXECUTOR_ERROR]


def is_auth_redirect(url_before: str | None, url_after: str | None, login_form_after: bool | None = None) -> bool:
    """Did the action land on a sign-in wall it was not on before? The page after must be a login
    endpoint (a path segment such as ``login`` or ``sign_in``), or an authentication area (``/auth``,
    ``/sso``, ...) with a redirect parameter (``next=``, ``return_to=``...), or show a login form (a
    password field, ``login_form_after``) on a page that is not a registration or password page. A path
    that merely contains ``auth`` (Django's ``/admin/auth/group/``) is not a wall."""
    if not url_after or url_after == url_before:
        return False

    def wall(u: ParseResult, form: bool | None) -> bool:
        segments = [seg for seg in u.path.split("/") if seg]
        if any(_LOGIN_SEGMENT.fullmatch(seg) for seg in segments) or u.path.lower().rstrip("/").endswith(
                "/session/new"):
            return True
        redirect = bool({k.lower() for k in parse_qs(u.query)} & set(_REDIRECT_PARAMS))
        if redirect and any(_AUTH_AREA.fullmatch(seg) for seg in segments):
            return True
        return bool(form) and not _OWN_PASSWORD_PAGE.search(u.path)

    if not wall(urlparse(url_after), login_form_after):
        return False
    return not (url_before and wall(urlparse(url_before), None))


def blocking_signal(title: str | None, text: str | None) -> R | None:
    """``captcha`` or ``blocking_page`` when the page says so, else None."""
    hay = f"{title or ''}\n{(text or '')[:2000]}"
    if _CAPTCHA.search(hay):
        return R.CAPTCHA
    if _BLOCKING.search(hay):
        return R.BLOCKING_PAGE
    return None


def is_destructive(action_type: str, reasoning: str | None) -> bool:
    return action_type in ("CLICK", "KEY_PRESS", "DOUBLE_CLICK") and bool(reasoning and _DESTRUCTIVE.search(reasoning))


def mentions_confirmation(reasoning: str | None) -> bool:
    return bool(reasoning and _CONFIRM.search(reasoning))


def _ev(text: str | None, n: int = 60) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= n else t[: n - 3] + "..."


def _confidence(inp: RewardInput) -> float:
    c = 0.35
    c += 0.2 if inp.frames_present else 0.0
    c += 0.2 if (inp.url_after is not None or inp.meaningful_change is not None) else 0.0
    c += 0.1 if inp.executor_ok is not None else 0.0
    c += 0.1 if inp.semantic_known else 0.0
    return round(min(c, 0.95), 2)


def klass_of(score: float) -> str:
    """The class of a step score (see the table above)."""
    if score >= 0.6:
        return "strong_positive"
    if score >= 0.2:
        return "weak_positive"
    if score > -0.2:
        return "neutral"
    return "negative"


def score_step(inp: RewardInput) -> Reward:
    """Score one step from its evidence."""
    conf = _confidence(inp)
    if inp.require_confirmation and is_destructive(inp.action_type, inp.reasoning) and not (
            inp.confirmed_before or mentions_confirmation(inp.reasoning)):
        why = f"{R.UNCONFIRMED_DESTRUCTIVE_ACTION}: {_ev(inp.reasoning)}"
        return Reward(WEIGHTS[R.UNCONFIRMED_DESTRUCTIVE_ACTION], "hard_negative", (why,), max(conf, 0.8))
    if inp.contract_passed is True:
        return Reward(WEIGHTS[R.CONTRACT_PASSED], "strong_positive",
                      (f"{R.CONTRACT_PASSED}: {inp.contract_name or 'step contract'}",), 0.95)
    if inp.contract_passed is False:
        return Reward(WEIGHTS[R.CONTRACT_FAILED], "negative",
                      (f"{R.CONTRACT_FAILED}: {inp.contract_name or 'step contract'}",), 0.95)

    signals: list[tuple[str, float]] = []
    failed = inp.executor_ok is False or bool(inp.executor_error)
    observation = inp.action_type in OBSERVATION_TYPES

    if inp.answer_matches is True:
        signals.append((R.EXPECTED_DATA_EXTRACTED, WEIGHTS[R.EXPECTED_DATA_EXTRACTED]))
    if inp.expected_state_reached is True:
        signals.append((R.EXPECTED_STATE_REACHED, WEIGHTS[R.EXPECTED_STATE_REACHED]))
    if failed:
        code, w = classify_error(inp.executor_error)
        signals.append((f"{code}: {_ev(inp.executor_error) or 'executor reported failure'}", w))
        if inp.repeats_failed_action:
            signals.append((f"{R.REPEATED_FAILED_ACTION}: {inp.signature}", WEIGHTS[R.REPEATED_FAILED_ACTION]))
    block = blocking_signal(inp.page_title, inp.page_text)
    if block:
        signals.append((f"{block}: {_ev(inp.page_title) or _ev(inp.page_text)}", WEIGHTS[block]))
    if is_auth_redirect(inp.url_before, inp.url_after, inp.login_form_after):
        signals.append((f"{R.AUTH_REDIRECT}: {_ev(inp.url_after, 80)}", WEIGHTS[R.AUTH_REDIRECT]))
    if inp.loop_position is not None and inp.loop_position >= 2:
        signals.append((f"{R.DRIFT_LOOP}: repetition {inp.loop_position}", WEIGHTS[R.DRIFT_LOOP]))
    if inp.done_gate:
        signals.append((R.NO_OBSERVED_DELTA_AFTER_WAITS, WEIGHTS[R.NO_OBSERVED_DELTA_AFTER_WAITS]))
    if inp.effect is False:
        signals.append((R.NO_OBSERVED_EFFECT, WEIGHTS[R.NO_OBSERVED_EFFECT]))
    if inp.prediction_held is False:
        signals.append((R.PREDICTION_FAILED, WEIGHTS[R.PREDICTION_FAILED]))

    changed = bool(inp.url_before and inp.url_after and inp.url_before != inp.url_after) or bool(
        inp.meaningful_change) or (inp.effect is True) or (inp.content_changed is True and not observation)
    if observation and not failed:
        if inp.new_information:
            if inp.previous_failure_kind in (R.EXECUTOR_STALE_REF, R.EXECUTOR_NOT_FOUND):
                signals.append((R.FRESH_READ_AFTER_FAILURE, WEIGHTS[R.FRESH_READ_AFTER_FAILURE]))
            else:
                signals.append((R.NEW_INFORMATION, WEIGHTS[R.NEW_INFORMATION]))
        elif inp.new_information is False:
            signals.append((R.REPEATED_OBSERVATION, WEIGHTS[R.REPEATED_OBSERVATION]))
    elif not failed and not block and inp.action_type != "DONE":
        if changed:
            signals.append((R.PAGE_CHANGED, WEIGHTS[R.PAGE_CHANGED]))
        elif inp.something_changed is False and inp.effect is not False:
            signals.append((R.NO_CHANGE, WEIGHTS[R.NO_CHANGE]))

    score = max(-0.95, min(0.95, round(sum(w for _, w in signals), 4)))
    if any(code.split(":")[0] in BLOCKED_CODES for code, _ in signals):
        score = min(score, BLOCKED_MAX)
    reasons = tuple(str(code) for code, _ in signals) or (R.NO_SIGNAL,)
    if not signals:
        conf = min(conf, 0.5)
    return Reward(score, klass_of(score), reasons, conf)
