"""trajcheck's modules import one another one way: no loop in the import graph (imports inside functions and
under TYPE_CHECKING count), every module in one layer, no import of a higher layer, and the diagram in
docs/architecture.md is the generated one."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from trajcheck import imports, layers
from trajcheck.imports import Edge

from conftest import ROOT

ARCHITECTURE = ROOT / "docs" / "architecture.md"
REGENERATE = "python -m trajcheck.layers --diagram docs/architecture.md"


@pytest.fixture(scope="module")
def graph() -> imports.Graph:
    return imports.build()


def test_no_module_is_in_a_loop_of_imports(graph):
    found = imports.loops(graph)
    assert not found, ("modules that import one another in a loop (move code so that imports go one way; "
                       "`python -m trajcheck.imports` prints this too):\n" + imports.describe(found))


def test_every_dynamic_import_is_resolved(graph):
    assert not graph.unresolved, f"imports whose module name has no constant start: {graph.unresolved}"


def test_the_graph_holds_every_module_and_known_imports_of_each_kind(graph):
    """Not vacuous: the modules are found, and imports at the top, in a function, under TYPE_CHECKING and through
    importlib are all edges."""
    assert len(graph.files) > 100 and "trajcheck.cli.main" in graph.files and "trajcheck.adapters.kit" in graph.files
    kinds = {(e.source, e.target, e.how) for e in graph.edges}
    assert ("trajcheck.scorerun", "trajcheck.rows", "top") in kinds
    assert ("trajcheck.discovery", "trajcheck.adapters", "function") in kinds  # the adapters, when first needed
    assert ("trajcheck.api", "trajcheck.pipeline", "type-checking") in kinds
    assert ("trajcheck.cli.main", "trajcheck.cli.score", "dynamic") in kinds  # f"{__package__}.{module}"
    assert ("trajcheck", "trajcheck.live", "function") in kinds  # the package's lazy names
    assert ("trajcheck.adapters.kit", "trajcheck.runfiles", "top") in kinds  # `from trajcheck.runfiles import ...`
    assert ("trajcheck.adapters", "trajcheck.adapters.webvoyager", "top") in kinds  # `from . import webvoyager`


def _package(tmp: Path, files: dict[str, str]) -> imports.Graph:
    for name, text in files.items():
        path = tmp / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return imports.build({"pkg": tmp / "pkg"})


def test_a_loop_through_a_function_and_a_type_checking_import_is_found_with_its_edges(tmp_path):
    graph = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def f():\n    from .sub.c import x\n",
        "sub/__init__.py": "",
        "sub/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import y\nx = 1\n",
        "d.py": "import pkg.d\nimport importlib\nimportlib.import_module(f'pkg.sub.{1}')\n",
        "e.py": "import json\nfrom pkg import a\n",
        "f.py": "import importlib\nimportlib.import_module('.a', __package__)\n",
    })
    found = imports.loops(graph)
    assert [(members, [(e.source, e.target, e.how) for e in edges]) for members, edges in found] == [
        (["pkg.a", "pkg.b", "pkg.sub.c"], [("pkg.a", "pkg.b", "top"), ("pkg.b", "pkg.sub.c", "function"),
                                          ("pkg.sub.c", "pkg.a", "type-checking")]),
        (["pkg.d"], [("pkg.d", "pkg.d", "top")]),  # a module importing itself is a loop too
    ]
    kinds = {(e.source, e.target, e.how) for e in graph.edges}
    assert ("pkg.d", "pkg.sub.c", "dynamic") in kinds and ("pkg.f", "pkg.a", "dynamic") in kinds
    assert "pkg.a -> pkg.b   line 1\n" in imports.describe(found)
    assert {e.target for e in graph.edges if e.source == "pkg.e"} == {"pkg.a"}  # json is not trajcheck's


def test_a_dynamic_import_with_no_constant_start_is_unresolved(tmp_path):
    graph = _package(tmp_path, {"__init__.py": "", "a.py": "import importlib\nname = 'x'\nimportlib.import_module(name)\n"})
    assert graph.unresolved == ["pkg.a line 3: importlib.import_module(name)"]


def test_every_module_is_in_exactly_one_group(graph):
    _, problems = layers.grouping(graph)
    assert not problems, problems
    assert layers.groups_of("trajcheck.a_module_nobody_placed") == []  # a new module must be given a group


def test_imports_go_from_a_group_to_itself_or_a_group_below_it(graph):
    group, _ = layers.grouping(graph)
    up = layers.upward(graph, group)
    assert not up, "imports of a higher layer (trajcheck.layers GROUPS, lowest first):\n" + "\n".join(up)


def test_the_groups_import_one_another_without_a_loop(graph):
    group, _ = layers.grouping(graph)
    assert layers.group_loops(graph, group) == []
    # the check can fail: one import of cli from the base layer makes a loop of every group between them
    worse = imports.Graph(graph.files, [*graph.edges, Edge("trajcheck.errors", "trajcheck.cli.main", 1)])
    assert layers.upward(worse, group) and layers.group_loops(worse, group)


def test_the_diagram_in_architecture_md_is_the_generated_one(graph):
    text = ARCHITECTURE.read_text()
    assert layers.BEGIN in text and layers.END in text, f"docs/architecture.md lost its markers: run `{REGENERATE}`"
    assert layers.splice(text, layers.diagram(graph)) == text, f"docs/architecture.md's diagram is stale: run `{REGENERATE}`"


def test_the_diagram_draws_each_group_and_only_the_shortest_ways_between_them(graph):
    out = layers.diagram(graph)
    assert out.startswith("```mermaid\nflowchart TD\n")
    for g in layers.GROUPS:
        assert f'    {g.name}["{g.name} (' in out
    assert "    cli --> base\n" not in out  # also through every layer between them: not drawn
    assert layers.drawn(Counter({("a", "b"): 1, ("b", "c"): 1, ("a", "c"): 2})) == [("a", "b"), ("b", "c")]


def test_analyzers_import_no_module_that_reads_files_and_hash_nothing(graph):
    """Pure analyzers: outside their package they import only the records, the box, the hash value and the
    reason catalogue (which imports nothing); a region's pHash (which reads the resize tables' on-disk cache)
    comes from the loading stage."""
    outside = {e.target for e in graph.edges if e.source.startswith("trajcheck.analyzers")
               and not e.target.startswith(("trajcheck.analyzers", "trajcheck.schemas"))}
    assert outside <= {"trajcheck.box", "trajcheck.hashing", "trajcheck.reasons"}, outside
    calls = [f"{path.name}:{node.lineno}" for path in sorted((ROOT / "analyzers").glob("*.py"))
             for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Attribute)
             and isinstance(node.value, ast.Name) and node.value.id == "Hash64" and node.attr.startswith("of")]
    assert not calls, f"analyzers computing a pHash: {calls}"


def test_the_module_entry_points_say_there_is_no_loop():
    out = subprocess.run([sys.executable, "-m", "trajcheck.imports"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.endswith("loops: none\n"), out.stdout + out.stderr
    out = subprocess.run([sys.executable, "-m", "trajcheck.layers"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.endswith("every import goes one way\n"), out.stdout + out.stderr
