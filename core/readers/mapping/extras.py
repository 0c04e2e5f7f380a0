"""A mapping's fields for what a step names besides its action and a run's totals: the target element
(``[step] target``: an id, label or text, kept as the action's ``element``), a scroll's direction and amount
(``scroll_direction``, ``scroll_amount``: the action's ``extra.direction`` and ``extra.amount``, as the built-in
readers keep them), the URL of the page a step acted on (``url_before``; without ``url_after``, a step's URL after
is the next step's ``url_before``: the page the next step saw), and the run's recorded elapsed seconds, cost
and tokens (``[run] wall_seconds``, ``cost_usd``, ``tokens_input``, ``tokens_output``)."""

from __future__ import annotations

from typing import Any, Protocol

from ..kit.usage import amount, count
from ...schemas.records import Usage
from .fields import Field

EXTRA_STEP_FIELDS = ("target", "scroll_direction", "scroll_amount", "url_before")
EXTRA_RUN_FIELDS = ("wall_seconds", "cost_usd", "tokens_input", "tokens_output")


class Fields(Protocol):
    """What these helpers need of a mapping: its compiled fields, and a field's value on a value."""

    fields: dict[str, Field]

    def get(self, key: str, value: Any, ctx: dict[str, Any] | None = None) -> Any: ...


def _str(v: Any) -> str | None:
    if v is None or isinstance(v, (dict, list)):
        return None
    got = str(v).strip()
    return got or None


def target_of(m: Fields, value: Any, ctx: dict[str, Any]) -> str | None:
    """The element a step's action names (``[step] target``), as text."""
    return _str(m.get("step.target", value, ctx))


def number(v: Any) -> Any:
    """A number written as text (a CSV cell, a pattern's group: ``"0.042"``) as a number; anything else as is."""
    if isinstance(v, str):
        try:
            f = float(v.strip())
        except ValueError:
            return None
        return int(f) if f.is_integer() and "." not in v else f
    return v


def scroll_of(m: Fields, value: Any, ctx: dict[str, Any]) -> dict[str, Any]:
    """A scroll's direction (lower case: ``up``, ``down``, ``left``, ``right``) and amount (a number) where the
    mapping names them and the step has them: the action's ``extra`` members."""
    out: dict[str, Any] = {}
    d = _str(m.get("step.scroll_direction", value, ctx))
    if d is not None:
        out["direction"] = d.lower()
    a = number(m.get("step.scroll_amount", value, ctx))
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        out["amount"] = a
    return out


def page_urls(m: Fields, values: list[tuple[Any, dict[str, Any]]]) -> list[tuple[str | None, str | None]]:
    """Each step's (URL before, URL after): ``url_before`` (else ``url``, as before these fields), and
    ``url_after``, else the next step's ``url_before`` (the last step's after is unknown)."""
    before = [_str(m.get("step.url_before", v, c)) if "step.url_before" in m.fields else None for v, c in values]
    out: list[tuple[str | None, str | None]] = []
    for i, (v, c) in enumerate(values):
        url = before[i] or _str(m.get("step.url", v, c))
        after = _str(m.get("step.url_after", v, c))
        if after is None and "step.url_before" in m.fields and i + 1 < len(values):
            after = before[i + 1]
        out.append((url, after))
    return out


def run_spend(m: Fields, value: Any, model: str | None) -> tuple[Usage | None, float | None]:
    """The run's recorded totals (``[run] tokens_input``, ``tokens_output``, ``cost_usd``) and elapsed seconds
    (``[run] wall_seconds``); None where the log records none."""
    def get(key: str) -> Any:
        return number(m.get("run." + key, value))

    u = Usage(count(get("tokens_input")), count(get("tokens_output")), None, None, amount(get("cost_usd")), model)
    return (None if u.empty else u), amount(get("wall_seconds"))
