"""Damaged runs: a run whose failure or success is not the agent's doing, named with its evidence (pure).

The kinds of :class:`~trajcheck.base.failuremodes.Damage` are tried in their order, and the first the log or the
frames show is the run's (``runs.damage``, its evidence in ``runs.damage_evidence``). Damage never changes a
verdict: the run keeps it, and the damage is reported beside it. Missing evidence is not damage: a step without a
result or a later frame is damage only when the run's own status says it ended abnormally.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..base.reasons import Damage
from ..schemas.records import Run, Step

_I = re.I
#: Errors of the model's API or the environment's service, not of the page the agent acts on. A bare "timeout" is
#: not one: a click's locator timing out (Playwright's "Timeout 30000ms exceeded") is the agent's doing.
INFRA = re.compile(r"quota|insufficient_quota|resource[_ ]exhausted|rate[ _-]?limit|too many requests|\b429\b|"
                   r"\b401\b|unauthori[sz]ed|invalid[_ ]api[_ ]key|authentication[_ ](error|failed)|"
                   r"\b50[0234]\b|internal server error|bad gateway|service unavailable|gateway time-?out|"
                   r"overloaded|(request|read|connect|api)[ _-]?timed?[ _-]?out|deadline[_ ]exceeded|"
                   r"APITimeoutError|APIConnectionError|connection (reset|refused|aborted)", _I)
RESET = re.compile(r"reset (failed|error|timed out)|failed to reset|could not reset|reset_failed|"
                   r"environment reset (failed|error)", _I)
#: The harness's own channel going away: the browser, the session, the connection to the control server.
CHANNEL = re.compile(r"connection (closed|lost)|broken pipe|target (page, context or browser )?(has been )?closed|"
                     r"browser has (been )?(closed|disconnected)|session (deleted|closed|not created)|"
                     r"no such session|websocket (closed|error)|EOFError|server (disconnected|died)|"
                     r"control server", _I)
KILLS = re.compile(r"\b(pkill|killall|kill\s+-(9|KILL)|taskkill|xkill)\b", _I)
#: A call the model wrote: the tool call a parser should have read.
CALL = re.compile(r"<tool_call>|<function_call>|\b(pyautogui|computer)\.\w+\(|"
                  r"\b(left_click|double_click|click|type|scroll|press|hotkey|key)\s*\(|\"action\"\s*:", _I)
MARKERS = {"FAIL": re.compile(r"\bFAIL\b|infeasible", _I), "DONE": re.compile(r"\bDONE\b", _I)}
ABNORMAL = frozenset({"error", "aborted", "killed", "crashed", "interrupted"})
TERMINAL = frozenset({"DONE", "FAIL"})
RUN_ERRORS = ("error", "errors", "exception", "harness_error", "error_message")


def _clip(text: str, at: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= at else text[:at - 1] + "…"


def _run_error(run: Run) -> str | None:
    """The run's own error, where the log records one beside the steps (``error``, ``exception``...)."""
    for key in RUN_ERRORS:
        v = run.extra.get(key)
        if isinstance(v, str) and v.strip():
            return v
        if isinstance(v, list) and v and isinstance(v[-1], str):
            return v[-1]
        if isinstance(v, dict) and isinstance(v.get("message"), str):
            return str(v["message"])
    return None


def _step_error(s: Step) -> str | None:
    if s.executor_error:
        return s.executor_error
    v = s.extra.get("error")
    return v if isinstance(v, str) and v.strip() else None


def _action_text(s: Step) -> str:
    a = s.action
    return " ".join(str(v) for v in (a.text, a.keys, a.extra.get("command"), a.extra.get("code")) if v)


def detect(run: Run, verdict: str | None, states: int | None) -> tuple[Damage, str] | None:
    """The run's damage and its evidence, or None. ``verdict``: the final verdict; ``states``: how many distinct
    screen states the run's frames show (None: not known)."""
    steps: Sequence[Step] = run.steps
    last = steps[-1] if steps else None
    ending = [] if last is None else [(f"step {last.index}", e) for e in [_step_error(last)] if e]
    ending += [("run log", e) for e in [_run_error(run)] if e]
    for where, text in ending:
        if INFRA.search(text):
            return Damage.INFRASTRUCTURE, f"{where} error: {_clip(text)}"
    for where, text in ending + [(f"step {s.index}", e) for s in steps if (e := _step_error(s))]:
        if RESET.search(text):
            return Damage.RESET_FAILED, f"{where} error: {_clip(text)}"
    killed = _harness_killed(run, ending)
    if killed:
        return Damage.HARNESS_KILLED, killed
    parsed = _parse_artifact(last)
    if parsed:
        return Damage.PARSE_ARTIFACT, parsed
    if verdict == "pass":
        acting = [s for s in steps if s.action.type not in TERMINAL and s.action.type not in ("WAIT", "READ")]
        if not acting:
            return Damage.PRE_SATISFIED, f"passed with no action taken ({len(steps)} steps, none acting)"
        if states == 1:
            return Damage.PRE_SATISFIED, (f"passed without leaving the start screen: 1 screen state over "
                                          f"{len(steps)} steps")
    return None


def _harness_killed(run: Run, ending: list[tuple[str, str]]) -> str | None:
    for where, text in ending:
        if CHANNEL.search(text):
            return f"{where} error: {_clip(text)}"
    steps = run.steps
    for i, s in enumerate(steps):
        m = KILLS.search(_action_text(s))
        if m and i >= len(steps) - 2:  # the run ended at that action or the next
            return (f"step {s.index}: the agent's action ran {m.group(0)!r} ({_clip(_action_text(s), 80)}) and "
                    "the run ended there")
    last = steps[-1] if steps else None
    status = (run.outcome_status or "").lower()
    if last is not None and status in ABNORMAL and last.action.type not in TERMINAL and last.executor_ok is None \
            and last.frame_post is None:
        return f"step {last.index}: its {last.action.type} is pending (no result, no later frame) and the run's " \
               f"status is {status!r}"
    return None


def _parse_artifact(last: Step | None) -> str | None:
    if last is None or last.action.type not in MARKERS or not last.reasoning:
        return None
    marker, call = MARKERS[last.action.type].search(last.reasoning), CALL.search(last.reasoning)
    if marker is None or call is None:
        return None
    return (f"step {last.index}: ended on {last.action.type}, read from the reasoning's {marker.group(0)!r} beside a "
            f"pending call {_clip(last.reasoning[call.start():], 60)!r}")


# the run columns (schemas/ledger.py: analyzer:damage.kind, analyzer:damage.evidence), of the run's facts


def _of(facts: Any) -> tuple[Damage, str] | None:
    states = facts.states.states if facts.states is not None else None
    return detect(facts.run, facts.verdict.final if facts.verdict is not None else None, states)


def kind(facts: Any) -> str | None:
    """``runs.damage``: the run's damage kind, or None."""
    found = _of(facts)
    return None if found is None else str(found[0])


def evidence(facts: Any) -> str | None:
    """``runs.damage_evidence``: what the damage rests on, or None."""
    found = _of(facts)
    return None if found is None else found[1]
