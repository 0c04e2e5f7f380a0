"""Checkpoints: a contract's nodes, each with the step at which the evidence already read shows it first held (pure).

A contract is evaluated on the run's final state (:mod:`trajcheck.analyzers.contract`); over a long run the
question is also *when* each part of it first held. Nothing is read again here: a node's step comes only from
what the ledger already holds about each step.

| a check | first held at | ``basis`` |
|---|---|---|
| ``url_matches`` | the first step whose URL after it matches the pattern | ``url`` |
| ``text_present``, ``text_matches`` | the first step whose screen text (OCR of what it changed), without the lines that quote the run's goal, holds the text | ``screen_text`` |
| decided from a frame other than the final one | that frame's step, as the check's evidence names it | ``screen_text`` |
| ``answer_matches`` that holds | the step whose DONE gave the answer | ``answer`` |
| any other check that holds at the end | no step: its evidence was read only on the final frame | ``final_frame`` |

A check that held at a step and no longer holds at the end keeps that step (``result`` says it failed at the
end). A check that holds nowhere the evidence shows has no step; missing evidence is never failure: an undecided
check is undecided, without a step. An ``all`` node first held when each of its parts had (the latest of their
steps: ``by step N``); an ``any`` node when its first part did (the earliest); a node with a part held only on
the final frame has no step of its own, and says so (``final_frame``).

A rubric contract's checkpoints are its tree's nodes; a flat contract's are its checks, under one ``all`` node.
"""  # noqa: E501  (the table above is Markdown: one row a line)

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from . import patterns
from .goalquotes import goal_quotes

Row = Mapping[str, Any]

#: A screen check's evidence names the frame it was read on: ``after step N`` (``final`` for the last one).
_AFTER_STEP = re.compile(r"^after step (\d+)$")


@dataclass(frozen=True)
class Checkpoint:
    """One node of the contract, depth-first: where the evidence shows it first held."""

    name: str
    kind: str  # all | any | check
    depth: int  # 0 for the root
    result: str  # at the end of the run: pass | fail | undecided
    step: int | None  # the step at which it first held; None when no step shows it
    basis: str | None  # url, screen_text, answer, parts, final_frame; None when it never held
    check_type: str | None = None  # a check's type (url_matches, ...)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "depth": self.depth, "result": self.result,
                "step": self.step, "basis": self.basis, "check_type": self.check_type}


def _loads(v: Any) -> Any:
    return json.loads(v) if isinstance(v, str) else v


def _tree(run: Row) -> dict[str, Any] | None:
    """The rubric tree; for a flat contract, its checks as one ``all`` node; None without a contract."""
    tree = _loads(run.get("contract_tree"))
    if tree:
        return dict(tree)
    checks = _loads(run.get("contract_checks")) or []
    if not checks:
        return None
    leaves = [{"name": c["name"], "kind": "check", "result": {True: "pass", False: "fail"}.get(c["passed"],
                                                                                            "undecided")}
              for c in checks]
    results = [x["result"] for x in leaves]
    root = "fail" if "fail" in results else "undecided" if "undecided" in results else "pass"
    return {"name": run.get("contract_name") or "checks", "kind": "all", "result": root, "children": leaves}


def _search(pattern: str, text: str) -> bool:
    try:
        return patterns.search(pattern, text) is not None
    except (patterns.PatternError, patterns.PatternTimeout):
        return False  # the check itself says the pattern is unusable; no step is shown


def _read(step: Row, goal: str | None) -> list[str]:
    """The step's screen text without the lines that quote the goal (:func:`goal_quotes`, as the screen checks
    leave them out): the task's own words on the screen are not evidence that it was done."""
    lines = [str(t) for t in step.get("screen_text") or []]
    drop = goal_quotes(tuple(lines), goal) if lines and goal else frozenset()
    return [t for i, t in enumerate(lines) if i not in drop]


def _first(steps: Sequence[Row], holds: Any) -> int | None:
    return next((int(s["step_index"]) for s in steps if holds(s)), None)


def _check_step(check: Mapping[str, Any] | None, result: str, steps: Sequence[Row],
                goal: str | None = None) -> tuple[int | None, str | None]:
    """Where a check first held, and on what (see the module's table); ``goal``: the run's, whose quotes on the
    screen are left out of its screen text."""
    if check is None:
        return None, None
    kind, ev = check.get("type"), check.get("evidence") or {}
    frame = _AFTER_STEP.match(str(ev.get("frame") or ""))
    if result == "pass" and frame:
        return int(frame.group(1)), "screen_text"
    if kind == "url_matches" and ev.get("pattern"):
        step = _first(steps, lambda s: bool(s.get("url_after")) and _search(ev["pattern"], s["url_after"]))
        if step is not None:
            return step, "url"
    if kind in ("text_present", "text_matches") and (ev.get("text") or ev.get("pattern")):
        if kind == "text_present":
            needle = str(ev["text"]).lower()
            holds = lambda s: needle in " ".join(_read(s, goal)).lower()  # noqa: E731
        else:
            holds = lambda s: bool(lines := _read(s, goal)) and _search(ev["pattern"], " ".join(lines))  # noqa: E731
        step = _first(steps, holds)
        if step is not None:
            return step, "screen_text"
    if result != "pass":
        return None, None
    if kind == "answer_matches":
        done = [s for s in steps if str(s.get("action_type") or "").upper() == "DONE"]
        if done:
            return int(done[-1]["step_index"]), "answer"
    return None, "final_frame"


def checkpoints(run: Row, steps: Sequence[Row]) -> tuple[Checkpoint, ...]:
    """The run's contract nodes, depth-first, each with the step at which it first held (module docstring);
    empty without a contract."""
    tree = _tree(run)
    if tree is None:
        return ()
    by_name = {c["name"]: c for c in (_loads(run.get("contract_checks")) or [])}
    out: list[Checkpoint] = []

    def visit(node: Mapping[str, Any], depth: int) -> tuple[int | None, str | None]:
        at = len(out)
        out.append(Checkpoint("", "", 0, "", None, None))  # its place, filled once its parts are known
        if node["kind"] == "check":
            check = by_name.get(node["name"])
            step, basis = _check_step(check, node["result"], steps, run.get("goal"))
            kind = check.get("type") if check else None
        else:
            parts = [visit(c, depth + 1) for c in node.get("children") or []]
            step, basis = _combine(node["kind"], parts)
            kind = None
        out[at] = Checkpoint(str(node["name"]), node["kind"], depth, node["result"], step, basis, kind)
        return step, basis

    visit(tree, 0)
    return tuple(out)


def _combine(kind: str, parts: list[tuple[int | None, str | None]]) -> tuple[int | None, str | None]:
    """An all node held once each part had (the latest step), an any node once one had (the earliest); a part
    held only on the final frame gives the node no step of its own."""
    held = [(s, b) for s, b in parts if b is not None]
    if not parts or (kind == "all" and len(held) < len(parts)) or not held:
        return None, None
    steps = [s for s, _ in held if s is not None]
    if kind == "any":
        return (min(steps), "parts") if steps else (None, "final_frame")
    if len(steps) < len(held):
        return None, "final_frame"
    return max(steps), "parts"
