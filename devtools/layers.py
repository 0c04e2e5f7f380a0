"""The layers of trajcheck's modules: the folders of the package, lowest first, the imports between them, and
their diagram.

A layer is a folder: the package ``trajcheck.base`` (``core/base/``) is the layer ``base``, and every module in
it, today's and tomorrow's, belongs to it with no edit here. A module imports modules of its own layer or of the
layers below it (:data:`GROUPS`, lowest first), never of a layer above: tests/test_import_graph.py fails on an
import upward, on a module in a folder that no layer names, on a loop, and on a stale diagram. The diagram in
docs/architecture.md ("The import graph") is generated::

    python -m devtools.layers --diagram docs/architecture.md

The import graph itself (what counts as an import, the loops) is :mod:`devtools.imports`.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from devtools.imports import Graph, build, components, describe, loops

ROOT_PACKAGE = "trajcheck"


@dataclass(frozen=True)
class Group:
    """A layer: the folder (package) under ``trajcheck`` whose modules it holds (``readers.kit``; ``""`` for the
    modules directly in the package), and what they do."""

    folder: str
    about: str
    #: Its sub-folders belong to it too (``readers.adapters.webvoyager`` is ``readers.adapters``): a layer made of
    #: packages of one kind, one per harness or part, that need no place of their own.
    nested: bool = False

    @property
    def name(self) -> str:
        return self.folder or "api"

    @property
    def package(self) -> str:
        return f"{ROOT_PACKAGE}.{self.folder}" if self.folder else ROOT_PACKAGE


#: The layers, lowest first: a module may import its own layer and the layers before it.
GROUPS = (
    Group("schemas", "typed records, the ledger's columns and migrations"),
    Group("base", "errors, the catalogues of problems and reasons, bounded reading of a run's files, JSON, the "
          "pHash value and its on-disk cache, atomic writes, the scoring options, statistics"),
    Group("analyzers", "pure analyzers: evidence in, findings out"),
    Group("media", "decoding frames and DOM snapshots, reading text on the screen"),
    Group("readers.kit", "what every reader is built from: the Reader base, reading a log's files, screenshots, "
          "coordinate spaces, streamed JSON, token counts"),
    Group("readers.adapters", "the built-in readers of other harnesses' logs, a package per harness (its reader, "
          "its actions, the shapes of its logs)", nested=True),
    Group("readers", "the native reader, discovery of runs and of the readers other packages register"),
    Group("readers.mapping", "mapping files: their schema, reading a run through one, how much of a folder one "
          "reads, and drafting one from a folder (draft/)", nested=True),
    Group("scoring", "every read that scoring does, one run (analysis, rows, the row check), digests, what needs "
          "scoring, validation, many runs (the execution engines), judges' files (judgments/, a module per format)",
          nested=True),
    Group("store", "the Parquet ledger, its manifest and lock, DuckDB views for reading"),
    Group("queries", "comparisons, agreement, tables, paired runs side by side, the CI gate"),
    Group("render", "the HTML report, its pair pages, the gate's report"),
    Group("", "the public API (the package itself, one function per command), live verification, the run writer"),
    Group("cli", "the commands"),
)


def groups_of(module: str) -> list[str]:
    """The layer of ``module``: the one whose folder holds it most closely (``trajcheck.readers.kit.reader`` is
    ``readers.kit``, not ``readers``; a folder below a ``nested`` layer's is that layer's), as a list of one name;
    ``[]`` for a module in a sub-folder that no layer names (a new folder must be given a place in
    :data:`GROUPS`) or outside trajcheck."""
    if module != ROOT_PACKAGE and not module.startswith(ROOT_PACKAGE + "."):
        return []
    holder = module if _is_package(module) else module.rpartition(".")[0]
    names = {g.package: g.name for g in GROUPS}
    if holder in names:
        return [names[holder]]
    nested = {g.package: g.name for g in GROUPS if g.nested}
    while "." in holder:
        holder = holder.rpartition(".")[0]
        if holder in nested:
            return [nested[holder]]
    return []


#: Packages (folders with an ``__init__``) among the modules, set by :func:`grouping` from the graph.
_PACKAGES: set[str] = set()


def _is_package(module: str) -> bool:
    return module in _PACKAGES


def grouping(graph: Graph) -> tuple[dict[str, str], list[str]]:
    """Each module -> its layer, and the problems: a module in a folder that no layer names."""
    _PACKAGES.clear()
    _PACKAGES.update(m for m, path in graph.files.items() if path.name == "__init__.py")
    found: dict[str, str] = {}
    problems = []
    for module in graph.files:
        names = groups_of(module)
        if len(names) == 1:
            found[module] = names[0]
        else:
            problems.append(f"{module}: its folder is no layer (add the folder to devtools.layers GROUPS, in the "
                            "order of imports)")
    return found, problems


BEGIN = "<!-- import-graph: begin (generated: python -m devtools.layers --diagram docs/architecture.md) -->"
END = "<!-- import-graph: end -->"


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
    node = {g.name: g.name.replace(".", "_") for g in GROUPS}  # Mermaid ids: no dots
    lines += [f'    {node[g.name]}["{g.name} ({counts[g.name]})"]' for g in reversed(GROUPS)]
    lines += [f"    {node[a]} --> {node[b]}"
              for a, b in sorted(drawn(edges), key=lambda e: (-order[e[0]], -order[e[1]]))]
    names = [g.name for g in reversed(GROUPS)]
    lines += ["```", "", "Imports from each group (row) into each other group (column):", "",
              "| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for a in names:
        lines.append(f"| **{a}** | " + " | ".join(str(edges[a, b]) if edges[a, b] else "" for b in names) + " |")
    lines += ["", "| layer | folder | what | modules |", "|---|---|---|---|"]
    for g in reversed(GROUPS):
        members = sorted(m.removeprefix(g.package + ".") if m != g.package else "(the package)"
                         for m, name in group.items() if name == g.name)
        folder = {"cli": "cli/", "analyzers": "analyzers/", "schemas": "schemas/"}.get(
            g.folder, "core/" + (g.folder.replace(".", "/") + "/" if g.folder else ""))
        lines.append(f"| {g.name} | `{folder}` | {g.about} | {', '.join(f'`{n}`' for n in members)} |")
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
        print("usage: python -m devtools.layers [--diagram docs/architecture.md]", file=sys.stderr)
        return 2
    group, problems = grouping(graph)
    found = [*describe(loops(graph)).splitlines(), *problems, *upward(graph, group)]
    print("\n".join(found) if found else f"{len(graph.files)} modules in {len(GROUPS)} groups, every import "
          "goes one way")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
