"""Rubric trees: a contract's checks combined by ``all`` and ``any`` nodes, with weights and critical nodes (pure).

A contract's ``checks`` are its leaves, evaluated one by one by :func:`trajcheck.analyzers.contract.evaluate`. Its
optional ``rubric`` is a tree over them by name::

    "rubric": {"all": ["on the cart page",
                       {"any": ["toast says saved", "badge shows 1"], "weight": 2},
                       {"check": "no error banner", "critical": true}]}

A child is a check's name, ``{"check": NAME, "weight": W, "critical": B}``, or another node ``{"all"|"any": [...],
"name", "weight", "critical"}``. Each check is named exactly once (its ``name``, else ``TYPE#i`` as the flat
contract names it).

Results, each ``pass``, ``fail`` or ``undecided`` (missing evidence is never a fail):
- a check: as the flat contract evaluates it (undecided when its evidence is absent);
- ``all``: fail when a child fails; else undecided when a child is undecided; else pass;
- ``any``: pass when a child passes; else undecided when a child is undecided; else fail;
- the contract (``det_verdict``): fail when the root or any *critical* node fails, whatever the rest says; else
  pass when the root passes, uncertain when it is undecided.

Partial credit (``contract_score``): a check that holds scores 1, one that fails 0; an ``all`` node scores the
weighted mean of its decided children's scores, an ``any`` node the best of them; undecided children are left
out of the denominator, and a node with no decided child has no score (null). For a flat contract (no
``rubric``) the checks are the children of one ``all`` of weight 1 each: the score is the share of the decided
checks that hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import contract as contract_mod
from .contract import CheckResult, ContractResult, ContractState

#: The deepest rubric tree evaluated (a contract nested deeper is refused when it is loaded).
MAX_DEPTH = 16


@dataclass(frozen=True)
class NodeResult:
    """One node of an evaluated rubric: a check (``kind`` check) or an ``all`` / ``any`` node."""

    name: str
    kind: str  # all | any | check
    result: str  # pass | fail | undecided
    score: float | None  # partial credit in [0, 1]; None when no leaf under it was decided
    weight: float
    critical: bool
    children: tuple["NodeResult", ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "result": self.result,
                               "score": None if self.score is None else round(self.score, 6),
                               "weight": self.weight, "critical": self.critical}
        if self.kind != "check":
            out["children"] = [c.to_json() for c in self.children]
        return out

    def walk(self, depth: int = 0) -> list[tuple[int, "NodeResult"]]:
        """Every node under this one (itself first), depth-first, with its depth."""
        out = [(depth, self)]
        for c in self.children:
            out += c.walk(depth + 1)
        return out


@dataclass(frozen=True)
class RubricResult:
    score: float | None  # the run's partial credit (contract_score)
    tree: NodeResult | None  # None for a flat contract
    critical_failed: tuple[str, ...] = ()  # the critical nodes that failed


NO_RUBRIC = RubricResult(None, None)


def check_names(contract: dict[str, Any]) -> list[str]:
    """Each check's name as the flat contract gives it: its ``name``, else ``TYPE#i``."""
    return [c.get("name") or f"{c.get('type')}#{i}" for i, c in enumerate(contract.get("checks", []), start=1)]


def tree_problems(contract: dict[str, Any]) -> list[tuple[str, str]]:
    """What is wrong with a schema-valid contract's rubric, as (field, message): a name that no check has, a
    check named twice in the tree or not at all, two checks of one name, a tree nested too deep."""
    tree = contract.get("rubric")
    if tree is None:
        return []
    names = check_names(contract)
    out = [("checks", f"two checks are named {n!r}: a rubric names each check once")
           for n in sorted({n for n in names if names.count(n) > 1})]
    used: list[str] = []

    def visit(node: Any, where: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            out.append((where, f"the rubric is nested deeper than {MAX_DEPTH} levels"))
            return
        if isinstance(node, str) or "check" in node:
            name = node if isinstance(node, str) else node["check"]
            used.append(name)
            if name not in names:
                out.append((where, f"no check is named {name!r} (checks: {', '.join(names)})"))
            return
        kind = "all" if "all" in node else "any"
        for i, child in enumerate(node[kind]):
            visit(child, f"{where}.{kind}.{i}", depth + 1)

    visit(tree, "rubric", 0)
    if any("nested deeper" in m for _, m in out):  # the checks below it were not visited: say only that
        return [(w, m) for w, m in out if "nested deeper" in m]
    out += [("rubric", f"check {n!r} is named {used.count(n)} times in the rubric")
            for n in sorted({n for n in used if used.count(n) > 1})]
    out += [("rubric", f"check {n!r} is not in the rubric: name it, or remove it from checks")
            for n in names if n not in used]
    return out


def combine(kind: str, results: list[str]) -> str:
    """An ``all`` or ``any`` node's result from its children's (see the module docstring)."""
    decisive, other = ("fail", "pass") if kind == "all" else ("pass", "fail")
    if decisive in results:
        return decisive
    return "undecided" if "undecided" in results else other


def _leaf(check: CheckResult, weight: float, critical: bool) -> NodeResult:
    result = "undecided" if check.passed is None else "pass" if check.passed else "fail"
    score = None if check.passed is None else float(check.passed)
    return NodeResult(check.name, "check", result, score, weight, critical)


def node_score(kind: str, children: tuple[NodeResult, ...]) -> float | None:
    """An ``all`` node's weighted mean of its decided children's scores, an ``any`` node's best; None if none. A
    child whose result is undecided is no decided child, whatever partial score it has of its own (an ``any``
    whose children failed but for one undecided scores 0 and is left out: it is not known to have failed)."""
    decided = [c for c in children if c.score is not None and c.result != "undecided"]
    if not decided:
        return None
    if kind == "any":
        return max(c.score for c in decided if c.score is not None)
    total = sum(c.weight for c in decided)
    return sum(c.weight * (c.score or 0.0) for c in decided) / total if total > 0 else None


def _node(spec: Any, checks: dict[str, CheckResult], label: str) -> NodeResult:
    if isinstance(spec, str):
        return _leaf(checks[spec], 1.0, False)
    weight, critical = float(spec.get("weight", 1.0)), bool(spec.get("critical", False))
    if "check" in spec:
        return _leaf(checks[spec["check"]], weight, critical)
    kind = "all" if "all" in spec else "any"
    children = tuple(_node(c, checks, f"{label}.{kind}.{i}") for i, c in enumerate(spec[kind]))
    return NodeResult(spec.get("name") or label, kind, combine(kind, [c.result for c in children]),
                      node_score(kind, children), weight, critical, children)


def evaluate(contract: dict[str, Any], st: ContractState) -> tuple[ContractResult, RubricResult]:
    """Evaluate every check (:func:`trajcheck.analyzers.contract.evaluate`), then the rubric tree over them. A
    flat contract's verdict is the flat one, unchanged; its score is the share of decided checks that hold.
    The contract must be free of :func:`tree_problems` (the loading stage refuses it otherwise)."""
    flat = contract_mod.evaluate(contract, st)
    tree = contract.get("rubric")
    if tree is None:
        root = NodeResult("checks", "all", "", None, 1.0, False, tuple(_leaf(c, 1.0, False) for c in flat.checks))
        return flat, RubricResult(node_score("all", root.children), None)
    root = _node(tree, {c.name: c for c in flat.checks}, "rubric")
    critical = tuple(n.name for _, n in root.walk() if n.critical and n.result == "fail")
    verdict = "fail" if root.result == "fail" or critical else "pass" if root.result == "pass" else "uncertain"
    return ContractResult(verdict, flat.name, flat.checks), RubricResult(root.score, root, critical)
