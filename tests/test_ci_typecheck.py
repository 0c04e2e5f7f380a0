""".ci/typecheck: mypy runs on a tree of links shaped as the package, and its findings are reported
under each file's real folder (core/, cli/, analyzers/, schemas/), never under trajcheck/."""

from __future__ import annotations

import importlib.util
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".ci" / "typecheck"


def _load_script() -> ModuleType:
    """The script as a module (it has no .py suffix, so the loader is named explicitly)."""
    loader = SourceFileLoader("ci_typecheck", str(SCRIPT))
    spec = importlib.util.spec_from_loader("ci_typecheck", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def typecheck() -> ModuleType:
    return _load_script()


@pytest.fixture(scope="module")
def mapping(typecheck: ModuleType) -> dict[str, str]:
    mapped: dict[str, str] = typecheck.package_dirs(ROOT / "pyproject.toml")
    return mapped


def test_the_mapping_is_pyprojects_package_dir(mapping: dict[str, str]) -> None:
    assert mapping == {"trajcheck": "core", "trajcheck.cli": "cli", "trajcheck.analyzers": "analyzers",
                       "trajcheck.schemas": "schemas"}


def test_each_finding_is_reported_under_its_real_folder(typecheck: ModuleType, mapping: dict[str, str]) -> None:
    report = ("trajcheck/report.py:12: error: Missing return statement  [return]\n"
              "trajcheck/readers/kit/reading.py:137: error: Item \"None\" has no attribute \"end\"  [union-attr]\n"
              "trajcheck/cli/common.py:136: error: Incompatible types in assignment  [assignment]\n"
              "trajcheck/analyzers/skeleton.py:40: note: Revealed type is \"builtins.int\"\n"
              "trajcheck/schemas/records.py:200: error: Name \"Mapping\" is not defined  [name-defined]\n"
              "Found 4 errors in 5 files (checked 104 source files)\n")
    assert typecheck.real_paths(report, mapping) == (
        "core/report.py:12: error: Missing return statement  [return]\n"
        "core/readers/kit/reading.py:137: error: Item \"None\" has no attribute \"end\"  [union-attr]\n"
        "cli/common.py:136: error: Incompatible types in assignment  [assignment]\n"
        "analyzers/skeleton.py:40: note: Revealed type is \"builtins.int\"\n"
        "schemas/records.py:200: error: Name \"Mapping\" is not defined  [name-defined]\n"
        "Found 4 errors in 5 files (checked 104 source files)\n")


def test_only_a_path_at_the_start_of_a_line_is_rewritten(typecheck: ModuleType, mapping: dict[str, str]) -> None:
    # a message that quotes a module path is mypy's text, not a location: it is left as written
    line = "cli/main.py:3: note: see trajcheck/cli/score.py and trajcheck/stats.py\n"
    assert typecheck.real_paths(line, mapping) == line
    assert typecheck.real_paths("Success: no issues found in 104 source files\n", mapping) == (
        "Success: no issues found in 104 source files\n")


def test_the_longest_package_wins(typecheck: ModuleType) -> None:
    # a sub-package mapped to a folder of its own is not read as a folder under its parent's
    nested = {"pkg": "src", "pkg.sub": "elsewhere/sub", "pkg.sub.deep": "deep/"}
    assert typecheck.real_paths("pkg/sub/deep/a.py:1: error\npkg/sub/b.py:2: error\npkg/c.py:3: error\n",
                                nested) == "deep/a.py:1: error\nelsewhere/sub/b.py:2: error\nsrc/c.py:3: error\n"


def test_the_tree_links_each_mapped_folder_at_its_package(typecheck: ModuleType, mapping: dict[str, str],
                                                          tmp_path: Path) -> None:
    typecheck.build_tree(tmp_path, mapping)
    assert (tmp_path / "trajcheck" / "base" / "stats.py").resolve() == ROOT / "core" / "base" / "stats.py"
    assert (tmp_path / "trajcheck" / "readers").resolve() == ROOT / "core" / "readers"
    assert (tmp_path / "trajcheck" / "cli" / "common.py").resolve() == ROOT / "cli" / "common.py"
    assert (tmp_path / "trajcheck" / "schemas" / "records.py").resolve() == ROOT / "schemas" / "records.py"
    assert (tmp_path / "trajcheck" / "analyzers").is_dir() and not (tmp_path / "trajcheck" / "analyzers").is_symlink()
    assert not (tmp_path / "trajcheck" / "__pycache__").exists()
