"""The report's run page: a rubric contract's tree and the judges of ``score --judgments`` (kept apart from
:mod:`trajcheck.render.htmlreport`, which lays out the page)."""

from __future__ import annotations

import json
from typing import Any

from .htmltext import escape as _e

_CLASS = {"pass": "pos", "fail": "neg", "undecided": "muted"}


def _node(node: dict[str, Any]) -> str:
    extra = ([f"weight {node['weight']:g}"] if node.get("weight", 1) != 1 else []) + \
        (["<b>critical</b>"] if node.get("critical") else [])
    if node["kind"] != "check" and node.get("score") is not None:
        extra.append(f"score {node['score']:.2f}")
    head = (f"{_e(node['kind'])} {_e(node['name'])}: <span class={_CLASS.get(node['result'], 'muted')}>"
            f"{_e(node['result'])}</span>" + (f" <span class=muted>{', '.join(extra)}</span>" if extra else ""))
    kids = "".join(_node(c) for c in node.get("children") or [])
    return f"<li>{head}" + (f"<ul>{kids}</ul>" if kids else "") + "</li>"


def rubric_and_judges(r: dict[str, Any]) -> str:
    """The run's rubric tree (each node's result, weight, critical mark and score) and each judge's verdict
    and reason; empty for a flat contract and no judgments."""
    parts = []
    if r.get("contract_tree"):
        score = r.get("contract_score")
        parts.append(f"<div class=rubric-tree><b>rubric</b> contract score "
                     f"{'-' if score is None else format(score, '.2f')}<ul>{_node(json.loads(r['contract_tree']))}"
                     "</ul></div>")
    if r.get("judgments"):
        rows = "".join(f"<li>{_e(j['judge'])}: <span class={_CLASS.get(j['verdict'], 'muted')}>{_e(j['verdict'])}"
                       "</span>" + ("" if j.get("confidence") is None else f" (confidence {j['confidence']:g})")
                       + (f"<br><code>{_e(j['reason'])}</code>" if j.get("reason") else "") + "</li>"
                       for j in json.loads(r["judgments"]))
        parts.append(f"<div class=judges><b>judges</b> (score --judgments)<ul>{rows}</ul></div>")
    return "".join(parts)
