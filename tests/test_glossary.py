"""One word per concept (issue 46): docs/glossary.md says each in one line, no two classes of the package share a
name, and the failure-mode feature is one word in every layer."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from conftest import ROOT

GLOSSARY = ROOT / "docs" / "glossary.md"
#: The words issue 46 asks the glossary to define.
WORDS = ("run", "step", "frame", "reader", "mapping", "contract", "check", "rubric", "judge", "evaluator", "evidence",
         "verdict", "claim", "failure mode", "arm", "gate", "damage", "phase", "checkpoint")
#: The folders of the package (core/ is trajcheck; cli/, analyzers/, schemas/ are its sub-packages).
PACKAGE = ("core", "cli", "analyzers", "schemas")


def _entries() -> dict[str, str]:
    rows = [ln for ln in GLOSSARY.read_text().splitlines() if ln.startswith("| **")]
    return {m.group(1): m.group(2) for ln in rows if (m := re.match(r"\| \*\*(.+?)\*\* \| (.+) \|$", ln))}


def test_the_glossary_defines_each_word_in_one_line():
    entries = _entries()
    assert sorted(entries) == sorted(WORDS)
    assert all(len(text) > 30 and "\n" not in text for text in entries.values())


def _classes(files: list[Path], root: Path) -> dict[str, list[str]]:
    """Each public class name of ``files`` -> the files that define one (paths relative to ``root``)."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in files:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found[node.name].append(str(path.relative_to(root)))
    return found


def _shared(files: list[Path], root: Path) -> dict[str, list[str]]:
    return {name: where for name, where in _classes(files, root).items() if len(where) > 1}


def test_no_two_classes_of_the_package_share_a_name():
    files = [p for top in PACKAGE for p in sorted((ROOT / top).rglob("*.py"))]
    assert len(files) > 150
    shared = _shared(files, ROOT)
    assert not shared, f"classes that share a name across the package (rename one; docs/glossary.md): {shared}"


def test_the_check_finds_a_name_two_modules_share(tmp_path):
    (tmp_path / "a.py").write_text("class Reader:\n    pass\nclass _Private:\n    pass\n")
    (tmp_path / "b.py").write_text("class Reader:\n    pass\nclass _Private:\n    pass\nclass Own:\n    pass\n")
    assert _shared([tmp_path / "a.py", tmp_path / "b.py"], tmp_path) == {"Reader": ["a.py", "b.py"]}


def test_the_failure_mode_feature_is_one_word_in_every_layer():
    """Its catalogue, analyzer, scoring, queries and report page are each `failuremodes`; only the command keeps
    the name users type (`trajcheck failures`)."""
    modules = {str(p.relative_to(ROOT)) for top in PACKAGE for p in (ROOT / top).rglob("*.py")}
    assert {"analyzers/failuremodes.py", "core/base/failuremodes.py", "core/scoring/failuremodes.py",
            "core/queries/failuremodes.py", "core/render/failuremodes.py"} <= modules
    other = sorted(m for m in modules if re.search(r"fail(ures|ing|urepage)\.py$", m) and not m.startswith("cli/"))
    assert other == []
