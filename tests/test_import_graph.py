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

from devtools import imports, layers
from devtools.imports import Edge

from conftest import ROOT

ARCHITECTURE = ROOT / "docs" / "architecture.md"
REGENERATE = "python -m devtools.layers --diagram docs/architecture.md"


@pytest.fixture(scope="module")
def graph() -> imports.Graph:
    return imports.build()


def test_no_module_is_in_a_loop_of_imports(graph):
    found = imports.loops(graph)
    assert not found, ("modules that import one another in a loop (move code so that imports go one way; "
                       "`python -m devtools.imports` prints this too):\n" + imports.describe(found))


def test_every_dynamic_import_is_resolved(graph):
    assert not graph.unresolved, f"imports whose module name has no constant start: {graph.unresolved}"


def test_the_graph_holds_every_module_and_known_imports_of_each_kind(graph):
    """Not vacuous: the modules are found, and imports at the top, in a function, under TYPE_CHECKING and through
    importlib are all edges."""
    assert len(graph.files) > 100 and "trajcheck.cli.main" in graph.files and "trajcheck.readers.kit.reading" in graph.files
    kinds = {(e.source, e.target, e.how) for e in graph.edges}
    assert ("trajcheck.scoring.scorerun", "trajcheck.scoring.rows", "top") in kinds
    assert ("trajcheck.readers.discovery", "trajcheck.readers.adapters", "function") in kinds  # the adapters, when first needed
    assert ("trajcheck.api", "trajcheck.scoring.pipeline", "type-checking") in kinds
    assert ("trajcheck.cli.main", "trajcheck.cli.score", "dynamic") in kinds  # f"{__package__}.{module}"
    assert ("trajcheck", "trajcheck.live", "function") in kinds  # the package's lazy names
    assert ("trajcheck.readers.kit.reading", "trajcheck.base.runfiles", "top") in kinds  # `from ...base.runfiles import ...`
    assert ("trajcheck.readers.adapters", "trajcheck.readers.adapters.webvoyager.reader", "top") in kinds  # `from . import webvoyager`


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
    # a layer is a folder: a new module in a layer's folder needs no edit, a new folder must be given a place
    assert layers.groups_of("trajcheck.media.a_new_module") == ["media"]
    assert layers.groups_of("trajcheck.readers.kit.a_new_module") == ["readers.kit"]
    assert layers.groups_of("trajcheck.a_new_module") == ["api"]
    assert layers.groups_of("trajcheck.a_new_folder.a_module") == []
    assert layers.groups_of("elsewhere.module") == []


def test_the_layers_are_folders_and_few_modules_sit_directly_in_core():
    """core/ is a handful of modules and at least five sub-packages, each a layer (issue 37)."""
    top = sorted(p.name for p in (ROOT / "core").glob("*.py"))
    folders = sorted(p.name for p in (ROOT / "core").iterdir() if (p / "__init__.py").is_file())
    assert len(top) <= 12 and len(folders) >= 5, (top, folders)
    named = {g.folder for g in layers.GROUPS}
    nested = [g.folder for g in layers.GROUPS if g.nested]
    for folder in (ROOT / "core").rglob("__init__.py"):
        dotted = ".".join(folder.parent.relative_to(ROOT / "core").parts)
        assert dotted in named or any(dotted.startswith(n + ".") for n in nested), \
            f"core/{dotted.replace('.', '/')}/ is no layer"
    # the development tools (the generators of reference docs among them) are not in the library
    assert not [p for p in (ROOT / "core").rglob("*.py") if p.stem in ("imports", "layers", "apidoc", "exitdoc",
                                                                         "reasonsdoc", "docs", "formatsdoc",
                                                                         "mappingdoc")]


def test_readers_have_a_folder_per_harness_and_for_mapping_files():
    """readers/ is shaped by packages, not by prefixes (issue 46): mapping files in readers/mapping/ (drafting in
    its draft/), each harness in readers/adapters/<harness>/, and no module of readers/ named mapping_*."""
    readers = ROOT / "core" / "readers"
    assert not [p.name for p in readers.rglob("mapping_*.py")]
    assert (readers / "mapping" / "__init__.py").is_file() and (readers / "mapping" / "draft" / "__init__.py").is_file()
    assert sorted(p.name for p in (readers / "adapters").glob("*.py")) == ["__init__.py"]
    assert layers.groups_of("trajcheck.readers.adapters.webvoyager.actions") == ["readers.adapters"]
    assert layers.groups_of("trajcheck.readers.mapping.draft.compose") == ["readers.mapping"]
    assert layers.groups_of("trajcheck.nowhere.module") == []  # a new folder outside the nested layers has no place


def test_imports_go_from_a_group_to_itself_or_a_group_below_it(graph):
    group, _ = layers.grouping(graph)
    up = layers.upward(graph, group)
    assert not up, "imports of a higher layer (devtools.layers GROUPS, lowest first):\n" + "\n".join(up)


def test_the_groups_import_one_another_without_a_loop(graph):
    group, _ = layers.grouping(graph)
    assert layers.group_loops(graph, group) == []
    # the check can fail: one import of cli from the base layer makes a loop of every group between them
    worse = imports.Graph(graph.files, [*graph.edges, Edge("trajcheck.base.errors", "trajcheck.cli.main", 1)])
    assert layers.upward(worse, group) and layers.group_loops(worse, group)


def test_the_diagram_in_architecture_md_is_the_generated_one(graph):
    text = ARCHITECTURE.read_text()
    assert layers.BEGIN in text and layers.END in text, f"docs/architecture.md lost its markers: run `{REGENERATE}`"
    assert layers.splice(text, layers.diagram(graph)) == text, f"docs/architecture.md's diagram is stale: run `{REGENERATE}`"


def test_the_diagram_draws_each_group_and_only_the_shortest_ways_between_them(graph):
    out = layers.diagram(graph)
    assert out.startswith("```mermaid\nflowchart TD\n")
    for g in layers.GROUPS:
        assert f'    {g.name.replace(".", "_")}["{g.name} (' in out
    assert "    cli --> base\n" not in out  # also through every layer between them: not drawn
    assert layers.drawn(Counter({("a", "b"): 1, ("b", "c"): 1, ("a", "c"): 2})) == [("a", "b"), ("b", "c")]


def test_analyzers_import_no_module_that_reads_files_and_hash_nothing(graph):
    """Pure analyzers: outside their package they import only the records, the box, the hash value and the
    reason catalogue (which imports nothing); a region's pHash (which reads the resize tables' on-disk cache)
    comes from the loading stage."""
    outside = {e.target for e in graph.edges if e.source.startswith("trajcheck.analyzers")
               and not e.target.startswith(("trajcheck.analyzers", "trajcheck.schemas"))}
    assert outside <= {"trajcheck.base.box", "trajcheck.base.hashing", "trajcheck.base.reasons"}, outside
    calls = [f"{path.name}:{node.lineno}" for path in sorted((ROOT / "analyzers").glob("*.py"))
             for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Attribute)
             and isinstance(node.value, ast.Name) and node.value.id == "Hash64" and node.attr.startswith("of")]
    assert not calls, f"analyzers computing a pHash: {calls}"


@pytest.mark.slow
def test_the_module_entry_points_say_there_is_no_loop():
    out = subprocess.run([sys.executable, "-m", "devtools.imports"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.endswith("loops: none\n"), out.stdout + out.stderr
    out = subprocess.run([sys.executable, "-m", "devtools.layers"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.endswith("every import goes one way\n"), out.stdout + out.stderr


@pytest.mark.slow
def test_inside_the_package_every_import_of_trajcheck_is_relative():
    """One import style inside the package (issue 37): relative, so that a tool that reads the folders sees every
    import where it points; ``trajcheck.`` spelled out is for code outside (tests, benchmarks, devtools)."""
    absolute = []
    for folder in ("core", "cli", "analyzers", "schemas"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                names = ([node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                         else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
                if any(n == "trajcheck" or n.startswith("trajcheck.") for n in names):
                    absolute.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not absolute, absolute
