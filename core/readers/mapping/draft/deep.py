"""A step's point and typed text held deeper than the step's own members or its action object
(``param.locate.center``, ``param.value``): looked for by a bounded walk of the sampled steps' objects."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .vocab import POINT_KEYS, toml_str

#: How deep into a step's objects a point or a text is looked for, and how many values of one step are looked at.
MAX_DEPTH = 4
MAX_WALK = 2000
_POINT = {*POINT_KEYS, "center", "centre"}
_TEXT = ("value", "text", "input", "typed_text", "content")


def _paths(step: dict[str, Any]) -> list[tuple[str, Any]]:
    """Each (JMESPath, value) reached through objects only, at most MAX_DEPTH keys deep."""
    out: list[tuple[str, Any]] = []
    todo: list[tuple[str, Any, int]] = [("", step, 0)]
    while todo and len(out) < MAX_WALK:
        path, v, depth = todo.pop()
        if not isinstance(v, dict) or depth >= MAX_DEPTH:
            continue
        for k, x in v.items():
            if not isinstance(k, str) or not k.isidentifier():
                continue
            p = f"{path}.{k}" if path else k
            out.append((p, x))
            todo.append((p, x, depth + 1))
    return out


def _pair(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(isinstance(c, (int, float)) and not isinstance(c, bool)
                                                       for c in v)


def point_and_text(steps: list[dict[str, Any]], lines: list[str]) -> list[str]:
    """``x``/``y`` lines for the pair of numbers under a point's name (``center``) that most steps hold, and a
    ``text`` line (for TYPE) for a deeper ``value``/``text`` string, unless ``lines`` has one."""
    points: Counter[str] = Counter()
    texts: Counter[str] = Counter()
    for s in steps[:500]:
        for p, v in _paths(s):
            last = p.rsplit(".", 1)[-1].lower()
            if last in _POINT and _pair(v):
                points[p] += 1
            elif "." in p and last in _TEXT and isinstance(v, str) and 0 < len(v) < 1000:
                texts[p] += 1
    out: list[str] = []
    if points:
        p = points.most_common(1)[0][0]
        out += [f"x = {toml_str(p + '[0]')}", f"y = {toml_str(p + '[1]')}"]
    if texts and not any(ln.startswith("text = ") for ln in lines):
        t = max(texts, key=lambda k: (texts[k], -k.count(".")))
        out.append(f"text = {{ path = {toml_str(t)}, for = [\"TYPE\"] }}")
    return out
