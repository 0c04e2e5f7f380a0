"""The layers of trajcheck's modules: each module's group, the imports between groups, and their diagram.

A module imports modules of its own group or of the groups below it (:data:`GROUPS`, lowest first), never of a
group above: tests/test_import_graph.py fails on an import upward, on a module that no group (or more than one)
claims, and on a stale diagram. The diagram in docs/architecture.md ("The import graph") is generated::

    python -m trajcheck.layers --diagram docs/architecture.md

The import graph itself (what counts as an import, the loops) is :mod:`trajcheck.imports`.
"""

from __future__ import annotations

import fnmatch
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .imports import Graph, build, components, describe, loops


@dataclass(frozen=True)
class Group:
    """A layer of modules: its name, what it does, and the module names it claims (``fnmatch`` patterns of the
    name under ``trajcheck.``: ``adapters.*``)."""

    name: str
    about: str
    patterns: tuple[str, ...]


#: The groups, lowest first: a module may import its own group and the groups before it.
GROUPS = (
    Group("schemas", "typed records, the ledger's columns and migrations", ("schemas", "schemas.*")),
    Group("base", "errors, the catalogues of problems and reasons, bounded reading of a run's files, JSON, the "
          "pHash value and its on-disk cache, atomic writes",
          ("version", "problems", "reasons", "verdicts", "errors", "inputs", "jsonio", "runfiles", "remote", "box",
           "atomic", "hashing", "resample", "diskcache")),
    Group("analyzers", "pure analyzers: evidence in, findings out", ("analyzers", "analyzers.*")),
    Group("media", "decoding frames and DOM snapshots, reading text on the screen",
          ("frames", "dom", "domscan", "refcache", "ocr", "ocrprobe", "screenread")),
    Group("readers", "the native reader, the format adapters, discovery", ("reader", "rundir", "discovery",
                                                                           "mapping", "adapters", "adapters.*")),
    Group("loading", "every read that scoring does, and the options it is told", ("loading", "contracts",
                                                                                 "options")),
    Group("scoring", "one run: analysis, rows, the row check, digests, what needs scoring, validation",
          ("analysis", "rows", "rowcheck", "coverage", "scorerun", "digest", "incremental", "validation")),
    Group("pipeline", "many runs: the execution engines", ("engines", "engine_dask", "pipeline")),
    Group("ledger", "the Parquet ledger, its manifest and lock, DuckDB views for reading",
          ("ledger", "manifest", "lock", "ledgerquery")),
    Group("queries", "comparisons, agreement, statistics, tables, paired runs side by side, the HTML report, the "
          "CI gate", ("views", "comparison", "agreement", "stats", "tables", "pairdiff", "pairpage", "htmlreport",
                      "reportgeometry", "gate", "gateruns", "gatereport")),
    Group("api", "the public API (the package itself, one function per command), live verification, the run "
          "writer", ("", "api", "commands", "live", "writer")),
    Group("cli", "the commands", ("cli", "cli.*")),
    Group("tools", "the import graph and this diagram, the API page, the exit-code table and the reasons page",
          ("imports", "layers", "apidoc", "exitdoc", "reasonsdoc")),
)

BEGIN = "<!-- import-graph: begin (generated: python -m trajcheck.layers --diagram docs/architecture.md) -->"
END = "<!-- import-graph: end -->"


def groups_of(module: str) -> list[str]:
    """The names of the groups whose patterns match ``module`` (one, for every module of trajcheck)."""
    short = module.removeprefix("trajcheck").removeprefix(".")
    return [g.name for g in GROUPS if any(fnmatch.fnmatchcase(short, p) for p in g.patterns)]


def grouping(graph: Graph) -> tuple[dict[str, str], list[str]]:
    """Each module -> its group, and the problems: a module that no group, or more than one, claims."""
    found: dict[str, str] = {}
    problems = []
    for module in graph.files:
        names = groups_of(module)
        if len(names) == 1:
            found[module] = names[0]
        else:
            problems.append(f"{module}: claimed by {names or 'no group'} (give it one group in trajcheck.layers "
                            "GROUPS)")
    return found, problems


def group_edges(graph: Graph, group: dict[str, str]) -> Counter[tuple[str, str]]:
    """(importing group, imported group) -> how many imports between two different groups."""
    return Counter((group[e.source], group[e.target]) for e in graph.edges
                   if e.source in group and e.target in group and group[e.source] != group[e.target])


def upward(graph: Graph, group: dict[str, str]) -> list[str]:
    """Every import of a module of a higher group (GROUPS' order), as text."""
    rank = {g.name: i for i, g in enumerate(GROUPS)}
    return [f"{e}   ({group[e.source]} imports {group[e.target]}, a group above it)" for e in graph.edges
            if e.source in group and e.target in group and rank[group[e.source]] < rank[group[e.target]]]


def group_loops(graph: Graph, group: dict[str, str]) -> list[list[str]]:
    """The loops among the groups (an import's groups as a graph): none, when every import goes one way."""
    targets: dict[str, set[str]] = {g.name: set() for g in GROUPS}
    for a, b in group_edges(graph, group):
        targets[a].add(b)
    return [c for c in components(targets) if len(c) > 1]


def drawn(edges: Counter[tuple[str, str]]) -> list[tuple[str, str]]:
    """The group imports the diagram draws: those that no longer way through other groups implies (the
    transitive reduction; cli imports base directly, and through every group between them too)."""
    targets: dict[str, set[str]] = {}
    for a, b in edges:
        targets.setdefault(a, set()).add(b)

    def longer_way(a: str, b: str) -> bool:  # b reached from a through another group
        seen: set[str] = set()
        todo = [c for c in targets[a] if c != b]
        while todo:
            c = todo.pop()
            if c == b:
                return True
            if c not in seen:
                seen.add(c)
                todo += targets.get(c, ())
        return False

    return [(a, b) for a, b in edges if not longer_way(a, b)]


def diagram(graph: Graph) -> str:
    """The generated part of docs/architecture.md: a Mermaid diagram of the groups, highest at the top, with an
    arrow where a group imports a lower one (the longer ways round left out, see :func:`drawn`); the number of
    imports between every two groups; each group's modules."""
    group, _ = grouping(graph)
    counts = Counter(group.values())
    edges = group_edges(graph, group)
    order = {g.name: i for i, g in enumerate(GROUPS)}
    lines = ["```mermaid", "flowchart TD"]
    lines += [f'    {g.name}["{g.name} ({counts[g.name]})"]' for g in reversed(GROUPS)]
    lines += [f"    {a} --> {b}" for a, b in sorted(drawn(edges), key=lambda e: (-order[e[0]], -order[e[1]]))]
    names = [g.name for g in reversed(GROUPS)]
    lines += ["```", "", "Imports from each group (row) into each other group (column):", "",
              "| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for a in names:
        lines.append(f"| **{a}** | " + " | ".join(str(edges[a, b]) if edges[a, b] else "" for b in names) + " |")
    lines += ["", "| group | what | modules |", "|---|---|---|"]
    for g in reversed(GROUPS):
        members = sorted(m.removeprefix("trajcheck.") if m != "trajcheck" else "trajcheck (the package)"
                         for m, name in group.items() if name == g.name)
        lines.append(f"| {g.name} | {g.about} | {', '.join(f'`{n}`' for n in members)} |")
    return "\n".join(lines) + "\n"


def splice(text: str, generated: str) -> str:
    """``text`` with what lies between the markers replaced by ``generated``; ValueError without the markers."""
    head, sep, rest = text.partition(BEGIN + "\n")
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"the markers are missing: {BEGIN} ... {END}")
    return head + BEGIN + "\n" + generated + END + tail


def write_diagram(graph: Graph, path: Path) -> None:
    """Rewrite the diagram between the markers of ``path`` (docs/architecture.md)."""
    path.write_text(splice(path.read_text("utf-8"), diagram(graph)), "utf-8")


def main(argv: list[str]) -> int:
    """``--diagram FILE``: rewrite FILE's diagram. Without arguments: print the loops, the modules without a
    group and the imports upward (exit code 1 when there is any)."""
    graph = build()
    if argv[:1] == ["--diagram"] and len(argv) == 2:
        write_diagram(graph, Path(argv[1]))
        return 0
    if argv:
        print("usage: python -m trajcheck.layers [--diagram docs/architecture.md]", file=sys.stderr)
        return 2
    group, problems = grouping(graph)
    found = [*describe(loops(graph)).splitlines(), *problems, *upward(graph, group)]
    print("\n".join(found) if found else f"{len(graph.files)} modules in {len(GROUPS)} groups, every import "
          "goes one way")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
