"""Screenshots named by id: a log that keeps its images in a map (id -> a data: URL, base64 or a path) apart from
its steps, each step holding only the id of its screen (``uiContext.screenshot.id``). The draft finds the map
(``[run] images``) and the fields of the steps whose values are its ids; with two such fields, which is the
screen before and which the screen after is told by the log's own chain (the screen after a step is often the
screen before the next: the same id) and then by the fields' names (``after``), else it is UNSURE."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ...kit.screenshots import looks_like_base64
from ..steps import IMAGE_SUFFIXES
from .vocab import jkey, toml_str

#: How deep into a log a map of images is looked for, and into a step its ids; values of one step looked at.
MAX_DEPTH = 3
MAX_STEP_DEPTH = 5
MAX_WALK = 2000
#: A label of a list's entries that says when its screenshot was taken (``timing: 'after-calling'``).
_WHEN = re.compile(r"(?<![a-z])(?:before|after|pre|post|start|end|begin|finish)(?![a-z])", re.I)
_AFTER = re.compile(r"after|post|next|end|finish|result", re.I)


def _image(v: Any) -> bool:
    return isinstance(v, str) and (v.startswith("data:image") or looks_like_base64(v) or
                                   (v.lower().endswith(IMAGE_SUFFIXES) and len(v) < 1024 and "\n" not in v))


def maps(value: Any, path: str = "", depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """The objects in a log whose members are mostly images (at least two), with their JMESPath."""
    out: list[tuple[str, dict[str, Any]]] = []
    if not isinstance(value, dict) or depth > MAX_DEPTH:
        return out
    sample = list(value.values())[:50]
    if len(sample) >= 2 and 2 * sum(_image(v) for v in sample) > len(sample):
        return [(path or "@", value)]
    for k, v in value.items():
        if isinstance(k, str) and isinstance(v, dict):
            out += maps(v, f"{path}.{jkey(k)}" if path else jkey(k), depth + 1)
    return out


def _ids(step: Any, keys: dict[str, Any]) -> dict[str, str]:
    """Each path of ``step`` (through objects, and lists by the label of their entries or the one entry) whose
    value is a key of ``keys``: path -> the id."""
    out: dict[str, str] = {}
    todo: list[tuple[str, Any, int]] = [("", step, 0)]
    seen = 0
    while todo and seen < MAX_WALK:
        path, v, depth = todo.pop()
        seen += 1
        if isinstance(v, str):
            if path and len(v) < 4096 and v in keys:
                out.setdefault(path, v)
            continue
        if depth >= MAX_STEP_DEPTH:
            continue
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str):
                    todo.append((f"{path}.{jkey(k)}" if path else jkey(k), x, depth + 1))
        elif isinstance(v, list) and path and "|" not in path:
            for e in v[:20]:
                label = next(((k, x) for k, x in e.items() if isinstance(x, str) and len(x) < 40 and
                              _WHEN.search(x) and re.fullmatch(r"[A-Za-z_]\w*", k)), None) \
                    if isinstance(e, dict) else None
                if label is not None:
                    todo.append((f"{path}[?{label[0]}=={label[1]!r}] | [0]", e, depth + 1))
                elif len(v) == 1:
                    todo.append((f"{path}[0]", e, depth + 1))
    return out


def drafted(values: list[Any], runs: list[list[Any]]) -> tuple[list[str], list[str], list[str]] | None:
    """(``[run]`` lines, ``[step]`` lines, what is unsure) for the steps of ``runs`` (those that act) naming their
    screenshots by id in a map of images of their log (``values``, each run's parsed log); None when none do."""
    found = [m for v in values for m in maps(v)]
    if not found:
        return None
    where = Counter(p for p, _ in found).most_common(1)[0][0]
    keys: dict[str, Any] = {}
    for p, m in found:
        if p == where:
            keys.update(m)
    per_run = [[_ids(s, keys) for s in run] for run in runs]
    hits = Counter(p for run in per_run for ids in run for p in ids)
    n = sum(len(run) for run in runs)
    paths = [p for p, c in hits.most_common() if 2 * c >= n][:2]
    if not paths:
        return None
    run_lines = [f"images = {toml_str(where)}   # a map of id -> image: the steps name their screenshots by id"]
    if len(paths) == 1:
        side = "post" if _AFTER.search(paths[0]) else "pre"
        return run_lines, [f"screenshot = {toml_str(paths[0])}", f"screenshot_is = '{side}'"], []
    a, b = paths
    ab = sum(r[i].get(a) is not None and r[i].get(a) == r[i + 1].get(b) for r in per_run for i in range(len(r) - 1))
    ba = sum(r[i].get(b) is not None and r[i].get(b) == r[i + 1].get(a) for r in per_run for i in range(len(r) - 1))
    unsure: list[str] = []
    if ab != ba:  # the screen after a step is the screen before the next
        pre, post = (b, a) if ab > ba else (a, b)
        why = f"{max(ab, ba)} times the screen after a step is the next one's before; {min(ab, ba)} times the other way"
    elif bool(_AFTER.search(a)) != bool(_AFTER.search(b)):
        pre, post = (b, a) if _AFTER.search(a) else (a, b)
        why = "by the fields' names"
    else:
        pre, post = a, b
        why = "UNSURE: neither the log's chain of ids nor the fields' names say which is the screen after"
        unsure.append(f"screenshots: {a!r} and {b!r} both name a step's screenshot; which is the screen after is a "
                      "guess")
    return run_lines, [f"screenshot = {toml_str(pre)}", "screenshot_is = 'pre'",
                       f"screenshot_after = {toml_str(post)}   # {why}"], unsure
