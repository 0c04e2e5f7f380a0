"""The import graph of trajcheck's own modules, and its loops.

``python -m devtools.imports`` prints the loops (strongly connected components of more than one module, and
modules that import themselves) with the imports that form them; tests/test_import_graph.py fails on any.
The layers the modules are drawn in, and the diagram in docs/architecture.md, are :mod:`devtools.layers`.

What counts as an import of module B by module A (an edge A -> B): every ``import`` statement in A's source,
wherever it is: at the top, inside a function (a deferred import still has to run before the code that uses
it, so it loops just as well), and under ``if TYPE_CHECKING:``. Type-only imports are counted too: they cost
nothing at run time, but they are still a dependency of A's code on B's, and a loop through them is a knot
that a change at either end has to think about; none of them is needed to keep the graph one way.
``from P import N`` is an import of module P.N when that is a module, of P otherwise; relative imports are
resolved against A's package. Running a submodule's package ``__init__`` first is Python's doing, not A's,
and is not an edge (every module would otherwise import ``trajcheck``).

A call of ``importlib.import_module`` (or ``__import__``) counts too: a constant name is an import of that
module; a name built at run time from a constant start (``f"trajcheck.analyzers.{name}"``) is an import of
every module whose name has that start, since any of them may be the one. A name with no constant start
cannot be resolved; :func:`build` lists such calls in :attr:`Graph.unresolved` (and the test fails on them).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: The root package and its sub-packages that live in folders of their own (setuptools package-dir).
PACKAGES = ("trajcheck", "trajcheck.cli", "trajcheck.analyzers", "trajcheck.schemas")


@dataclass(frozen=True, order=True)
class Edge:
    """One import of a trajcheck module by another: where it is (file line) and how it is made."""

    source: str
    target: str
    line: int
    how: str = "top"  # "top", "function" (inside a def), "type-checking" (under `if TYPE_CHECKING:`), "dynamic"

    def __str__(self) -> str:
        how = "" if self.how == "top" else f" ({self.how})"
        return f"{self.source} -> {self.target}   line {self.line}{how}"


@dataclass
class Graph:
    """The modules of trajcheck (name -> file), their imports of each other, and what could not be resolved."""

    files: dict[str, Path]
    edges: list[Edge] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)

    def targets(self) -> dict[str, set[str]]:
        """Each module -> the modules it imports."""
        out: dict[str, set[str]] = {m: set() for m in self.files}
        for e in self.edges:
            out[e.source].add(e.target)
        return out


def package_folders(packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Each package -> its folder, as the import system finds it (source folders in an editable install)."""
    folders = {}
    for name in packages:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations, name
        folders[name] = Path(next(iter(spec.submodule_search_locations)))
    return folders


def module_files(folders: dict[str, Path]) -> dict[str, Path]:
    """Every module -> its file: the ``*.py`` files under each package's folder, named from that package."""
    files: dict[str, Path] = {}
    for package, folder in folders.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            files.setdefault(".".join((package, *parts)), path)
    return files


def build(folders: dict[str, Path] | None = None) -> Graph:
    """The import graph of every module under ``folders`` (by default trajcheck's own packages)."""
    graph = Graph(module_files(package_folders() if folders is None else folders))
    for module, path in graph.files.items():
        tree = ast.parse(path.read_text("utf-8"), str(path))
        _Visitor(graph, module, path.name == "__init__.py").visit(tree)
    graph.edges = sorted(set(graph.edges))
    return graph


class _Visitor(ast.NodeVisitor):
    """Collects one module's imports of trajcheck modules into the graph, noting where each one sits."""

    def __init__(self, graph: Graph, module: str, is_package: bool) -> None:
        self.graph, self.module = graph, module
        self.package = module if is_package else module.rpartition(".")[0]
        self.context = ["top"]

    def _add(self, target: str | None, line: int, how: str | None = None) -> None:
        if target is not None:
            self.graph.edges.append(Edge(self.module, target, line, how or self.context[-1]))

    def _known(self, name: str) -> str | None:
        """``name`` or the longest of its parents that is a trajcheck module (None: not trajcheck's)."""
        while name and name not in self.graph.files:
            name = name.rpartition(".")[0]
        return name or None

    def _absolute(self, name: str, level: int) -> str:
        if level == 0:
            return name
        base = self.package.rsplit(".", level - 1)[0] if level > 1 else self.package
        return f"{base}.{name}" if name else base

    def _nested(self, nodes: list[ast.stmt], how: str) -> None:
        """Visit ``nodes`` as code that runs later (in a function) or never (under TYPE_CHECKING); the outer
        context wins (a function under TYPE_CHECKING is type-checking)."""
        self.context.append(how if self.context[-1] == "top" else self.context[-1])
        for node in nodes:
            self.visit(node)
        self.context.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._nested(node.body, "function")

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._nested(node.body, "function")

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
        if name == "TYPE_CHECKING":
            self._nested(node.body, "type-checking")
            self._nested(node.orelse, "top")
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(self._known(alias.name), node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._absolute(node.module or "", node.level)
        for alias in node.names:
            full = f"{base}.{alias.name}"  # `from P import N`: module P.N, or a name defined in P
            self._add(full if full in self.graph.files else self._known(base), node.lineno)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in ("import_module", "__import__") and node.args:
            self._dynamic(node)
        self.generic_visit(node)

    def _dynamic(self, node: ast.Call) -> None:
        start = _constant_start(node.args[0], self.package)
        if start is None:
            self.graph.unresolved.append(f"{self.module} line {node.lineno}: {ast.unparse(node)}")
            return
        if start.startswith("."):  # import_module(".x", __package__ or __name__)
            rest = start.lstrip(".")
            start = f"{self._absolute('', len(start) - len(rest))}.{rest}"
        if isinstance(node.args[0], ast.Constant):
            self._add(self._known(start), node.lineno, "dynamic")
            return
        for target in self.graph.files:
            if target.startswith(start) and target != self.module:
                self._add(target, node.lineno, "dynamic")


def _constant_start(arg: ast.expr, package: str) -> str | None:
    """The part of a module name known before run time: a constant, or an f-string's leading constant text
    (``__package__`` at its start reads as the module's package). None: nothing is known."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if not isinstance(arg, ast.JoinedStr):
        return None
    start = ""
    for i, part in enumerate(arg.values):
        if isinstance(part, ast.Constant):
            start += str(part.value)
        elif i == 0 and isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) \
                and part.value.id == "__package__":
            start += package
        else:
            break
    return start or None


def components(targets: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of a graph (node -> the nodes it points to), each sorted: Tarjan's
    algorithm, iterative (no recursion limit on a long chain of imports)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(targets):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(targets[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(targets.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def loops(graph: Graph) -> list[tuple[list[str], list[Edge]]]:
    """Every loop of the graph: a component of more than one module, or a module that imports itself, with the
    imports between its modules (the edges to cut). Largest first."""
    out = []
    for component in components(graph.targets()):
        members = set(component)
        edges = [e for e in graph.edges if e.source in members and e.target in members]
        if len(component) > 1 or edges:
            out.append((component, edges))
    return sorted(out, key=lambda c: (-len(c[0]), c[0]))


def describe(found: list[tuple[list[str], list[Edge]]]) -> str:
    """The loops as text: each loop's modules, then the imports that form it."""
    parts = []
    for component, edges in found:
        parts.append(f"loop of {len(component)} module(s): {', '.join(component)}\n"
                     + "".join(f"    {e}\n" for e in edges))
    return "".join(parts)


def main(argv: list[str]) -> int:
    """Print the size of the graph and its loops, each with the imports that form it (exit code 1 if any)."""
    if argv:
        print("usage: python -m devtools.imports   (the layer diagram: python -m devtools.layers)", file=sys.stderr)
        return 2
    graph = build()
    found = loops(graph)
    sizes = sorted((len(c) for c, _ in found), reverse=True)
    print(f"{len(graph.files)} modules, {len(graph.edges)} imports, loops: {sizes or 'none'}")
    print(describe(found), end="")
    for site in graph.unresolved:
        print(f"unresolved dynamic import: {site}")
    return 1 if found or graph.unresolved else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
