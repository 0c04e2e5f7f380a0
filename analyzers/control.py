"""Could the agent have avoided it? Each failure mode and decisive error, ``controllable`` or ``uncontrollable`` from
its evidence (pure, deterministic).

| evidence | control |
|---|---|
| the run is damaged (infrastructure, failed reset, killed harness, parse artifact: analyzers/damage.py) | uncontrollable |
| a CAPTCHA, an access-denied or rate-limit page (blocked: captcha, blocking_page) | uncontrollable |
| a sign-in wall, when the goal gives no credentials (a password, a username, "log in as/with") | uncontrollable |
| a sign-in wall the goal gave credentials for | controllable |
| an error message that says the server failed, the site is down, the request was rate limited, the item is out of stock | uncontrollable |
| every other mode and kind: an overlay, an error message, a dead action, a loop, a stall, giving up, no answer, a wrong result | controllable |
| not_determined; a sign-in wall of a run whose goal is not recorded | null (the evidence does not say) |

Controllable is what the agent chose: an overlay it could have dismissed, an error it did not act on, a button it
clicked again and again. The goal is the task's text, not the agent's words; the agent's words are never read.
"""  # noqa: E501  (the table above is Markdown: one row a line)

from __future__ import annotations

import re
from typing import Any

from ..base.reasons import Control as C, Damage, DecisiveKind as K, FailureMode as M

from . import damage as damage_mod

#: Damage that is the harness's or the environment's, not the agent's (a passing run's pre_satisfied is no failure).
HARNESS = frozenset({Damage.INFRASTRUCTURE, Damage.RESET_FAILED, Damage.HARNESS_KILLED, Damage.PARSE_ARTIFACT})

#: An error text that is the server's or the shop's, not a mistake of the agent: a 5xx page, an outage, rate
#: limiting, a site that cannot be reached, an item out of stock.
OUTSIDE = re.compile(r"\b50[0234]\b|internal server error|bad gateway|service (temporarily )?unavailable|"
                     r"gateway time-?out|server error|something went wrong on our end|under maintenance|"
                     r"site (is )?(down|unavailable)|temporarily unavailable|can'?t be reached|could not be reached|"
                     r"too many requests|rate[ -]?limit|\b429\b|try again later|out of stock|sold out|"
                     r"no longer available|currently unavailable", re.I)

#: A goal that gives a way in: credentials, or how to sign in ("log in as jdoe", "sign in with the test account").
WAY_IN = re.compile(r"\b(?:password|passcode|passphrase|credentials?|username|user name|"
                    r"(?:log|sign) ?(?:in|on) (?:as|with|using))\b|\blog ?in:", re.I)


def _wall(detail: str | None, goal: str | None) -> str | None:
    if detail in ("captcha", "blocking_page"):
        return C.UNCONTROLLABLE
    if detail == "auth_wall":
        if goal is None:
            return None
        return C.CONTROLLABLE if WAY_IN.search(goal) else C.UNCONTROLLABLE
    return C.CONTROLLABLE  # an overlay: the agent could have dismissed it


def of_failure(mode: str | None, detail: str | None, evidence: str | None, damaged: str | None,
               goal: str | None) -> str | None:
    """The control of a failure mode (its sub-kind and evidence); ``damaged``: the run's damage kind, if any."""
    if mode is None or mode == M.NOT_DETERMINED:
        return None
    if damaged in HARNESS:
        return C.UNCONTROLLABLE
    if mode == M.BLOCKED:
        return _wall(detail, goal)
    if mode == M.APP_SAID_NO and OUTSIDE.search(f"{detail or ''} {evidence or ''}"):
        return C.UNCONTROLLABLE
    return C.CONTROLLABLE


def of_decisive(kind: str | None, evidence: str | None, failure_detail: str | None, damaged: str | None,
                goal: str | None) -> str | None:
    """The control of a decisive error; ``failure_detail``: the blocker a ``blocked`` error's failure mode names."""
    if kind is None or kind == K.NOT_DETERMINED:
        return None
    if damaged in HARNESS:
        return C.UNCONTROLLABLE
    if kind == K.BLOCKED:
        return _wall(failure_detail, goal)
    if kind == K.IGNORED_MESSAGE and evidence and OUTSIDE.search(evidence):
        return C.UNCONTROLLABLE
    return C.CONTROLLABLE


# the run columns (schemas/ledger.py: analyzer:control.failure, analyzer:control.decisive), of the run's facts


def failure(facts: Any) -> str | None:
    """``runs.failure_control``."""
    f = facts.failure
    return of_failure(f.mode, f.detail, f.evidence, damage_mod.kind(facts), facts.run.goal)


def decisive(facts: Any) -> str | None:
    """``runs.decisive_control``."""
    d = facts.decisive
    return of_decisive(d.kind, d.evidence, facts.failure.detail, damage_mod.kind(facts), facts.run.goal)


def of_row(run: dict[str, Any]) -> tuple[str | None, str | None]:
    """``runs.failure_control`` and ``runs.decisive_control`` from a runs row (as :func:`failure` and
    :func:`decisive` give them at score time, its ``damage`` as it now is): for a run whose damage changed after it
    was scored (:mod:`trajcheck.queries.resets`)."""
    damaged, goal = run.get("damage"), run.get("goal")
    return (of_failure(run.get("failure_mode"), run.get("failure_detail"), run.get("failure_evidence"), damaged, goal),
            of_decisive(run.get("decisive_kind"), run.get("decisive_evidence"), run.get("failure_detail"), damaged,
                        goal))
