"""A harness's own stop, written as an answer, is not the agent's answer: ``[step] harness_stop``.

Some harnesses end a run by writing an answer action themselves. VisualWebArena's ``run.py`` writes
``stop [Early stop: Reach max steps 30]`` (or ``Failed to parse actions for 3 times``, ``Same action for 5
times``) when its ``early_stop`` rules fire, and ``stop [ERROR: ...]`` when the agent raised, in the very action
the agent answers with. Read as an answer, the harness giving up becomes a claim of success. A mapping says
which answers are the harness's::

    [step]
    harness_stop = '^(?:Early stop|ERROR): '              # a regex searched in the text of each answer (DONE)
    harness_stop = { path = "stopped_by", regex = '.+' }   # or a field of the step: the answer is the harness's
                                                           # where it gives a value

    [step.types]
    max_steps_reached = "HARNESS_STOP"                      # an action name that is always the harness's stop

Such a step stays in the run as what it did to the screen (nothing: a ``WAIT``), with the harness's words in
its action's ``extra.harness_stop``; the run records it in ``extra.harness_stop`` (``{"step": k, "text": ...}``).
The run then ended without an answer of the agent's, and ``[run] ends`` says what that means: ``external`` (the
harness may stop a run itself), ``unknown``; ``answer`` (its stops are limits that cut the agent off), a fail.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ...analyzers import patterns
from ...base.errors import UsageError
from ...schemas.records import Action
from .fields import Field

#: The ``[step.types]`` target that names an action the harness itself writes to stop a run.
HARNESS_STOP = "HARNESS_STOP"
#: Answer action types a harness may write in the agent's place.
ANSWERS = frozenset({"DONE", "ANSWER"})


class HarnessStop:
    """``[step] harness_stop``, compiled: a regular expression over an answer's text, or a field of the step."""

    def __init__(self, spec: Any, where: str):
        where = f"{where}: [step] harness_stop"
        self.regex: Any = None
        self.field: Field | None = None
        if isinstance(spec, str):
            try:
                self.regex = patterns.compiled(spec)
            except patterns.PatternError as exc:
                raise UsageError(f"{where} = {spec!r} is not a regular expression ({exc})") from None
        elif isinstance(spec, dict):
            self.field = Field("harness_stop", spec, where)
        else:
            raise UsageError(f"{where} must be a regular expression searched in each answer's text "
                             "('^(?:Early stop|ERROR): ') or a field of the step ({ path, regex })")

    def words(self, a: Action, value: Any, ctx: dict[str, Any]) -> str | None:
        """What the harness wrote, when the answer ``a`` (of the step ``value``) is the harness's stop."""
        if a.type not in ANSWERS:
            return None
        if self.field is not None:
            got = self.field.value(value, ctx)
            return None if got in (None, "", False, [], {}) else str(got)
        text = a.text or ""
        try:
            hit = patterns.search(self.regex.pattern, text) is not None
        except patterns.PatternTimeout:
            hit = False
        return text if hit else None


def retyped(calls: list[Action], stop: HarnessStop | None, value: Any,
            ctx: dict[str, Any]) -> tuple[list[Action], str | None]:
    """A step's actions with the harness's stop among them as a ``WAIT`` (the harness's words in
    ``extra.harness_stop``), and those words (None: the step holds no harness stop)."""
    out, said = [], None
    for a in calls:
        words = (a.text or str(a.extra.get("log_type") or "")) if a.type == HARNESS_STOP else \
            stop.words(a, value, ctx) if stop is not None else None
        if words is None:
            out.append(a)
            continue
        said = said if said is not None else words
        out.append(replace(a, type="WAIT", extra={**a.extra, "harness_stop": _short(words)}))
    return out, said


def _short(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()[:500]


def harness_stops(stop: HarnessStop | None, recs: list[Any], acts: list[tuple[list[Action], str | None, str]]
                  ) -> tuple[list[tuple[list[Action], str | None, str]], dict[str, Any] | None]:
    """Each log step's actions (``acts``, of the steps ``recs``) with the harness's stops retyped, and the last
    stop as the run records it: ``{"step": its number among the run's steps, "text": the harness's words}``."""
    out: list[tuple[list[Action], str | None, str]] = []
    last: dict[str, Any] | None = None
    before = 0
    for r, (calls, thought, kind) in zip(recs, acts):
        got, said = retyped(calls, stop, r.value, r.ctx)
        if said is not None:
            at = next(j for j, a in enumerate(got) if "harness_stop" in a.extra)
            last = {"step": before + at + 1, "text": _short(said)}
        before += len(got)
        out.append((got, thought, kind))
    return out, last
