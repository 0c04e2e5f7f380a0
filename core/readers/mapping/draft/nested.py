"""Step lists nested one level down: a list of one or a few records (a run's executions, its episodes, its
pages) each holding a longer list of records, the steps. The draft offers the records of all the inner lists,
in order, as one list (``executions[].tasks[]``, JMESPath's flatten) when they look more like steps than the
outer records do: they name an action trajcheck knows, hold a point, or a screenshot."""

from __future__ import annotations

from typing import Any

from .vocab import POINT_KEYS, SHOT_KEYS, X_KEYS, jkey, type_of

#: Most records of an outer list whose inner lists are offered flattened ("one or a few").
MAX_OUTER = 5
#: Most records looked at to say whether a list's records look like steps.
MAX_LOOKED = 300
_STEP_KEYS = {k.lower() for k in (*POINT_KEYS, *X_KEYS, *SHOT_KEYS)}


def _acts(v: Any) -> bool:
    return isinstance(v, str) and 0 < len(v) < 40 and type_of(v)[1] == "name"


def step_like(records: list[Any]) -> float:
    """The share of ``records`` that look like steps: a short string (or one a member object holds) that is an
    action name trajcheck knows, or a key naming a point or a screenshot."""
    looked = [r for r in records[:MAX_LOOKED] if isinstance(r, dict)]
    if not looked:
        return 0.0

    def one(r: dict[str, Any]) -> bool:
        for k, v in r.items():
            if str(k).lower() in _STEP_KEYS or _acts(v):
                return True
            if isinstance(v, dict) and any(str(k2).lower() in _STEP_KEYS or _acts(v2) for k2, v2 in v.items()):
                return True
        return False

    return sum(one(r) for r in looked) / len(looked)


def flattened(value: list[Any], path: str) -> list[tuple[int, str, str, Any]]:
    """The inner lists of ``value`` (a list of a few records at ``path``) as one list each: (score, "list",
    JMESPath, records) for each key under which the records hold lists of records that are more numerous than the
    outer records and look more like steps."""
    if not 0 < len(value) <= MAX_OUTER or not all(isinstance(v, dict) for v in value):
        return []
    out = []
    outer = step_like(value)
    for k in dict.fromkeys(k for v in value for k in v):
        inner = [v.get(k) for v in value]
        if not all(isinstance(i, list) for i in inner):
            continue
        flat = [r for i in inner for r in i]
        if len(flat) <= len(value) or not all(isinstance(r, dict) for r in flat[:50]):
            continue
        if step_like(flat) > outer:
            expr = ("" if path == "@" else path) + f"[].{jkey(str(k))}[]"
            out.append((len(flat) * 2 + 5, "list", expr, flat))
    return out
