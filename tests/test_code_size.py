"""Small parts: no module of trajcheck's own code much longer than 400 lines, no function longer than 80,
except where a comment on the function's first line says why (``# long: ...``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "cli", "analyzers", "schemas")
MAX_MODULE = 420  # "about 400"
MAX_FUNCTION = 80


def _sources() -> list[Path]:
    return sorted(p for d in PACKAGES for p in (ROOT / d).rglob("*.py"))


def test_modules_are_at_most_about_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in _sources() if (n := p.read_text().count("\n")) > MAX_MODULE}
    assert not long, f"split these modules: {long}"


@pytest.mark.slow
def test_functions_are_at_most_80_lines_unless_a_comment_says_why() -> None:
    long = {}
    for p in _sources():
        text = p.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if n > MAX_FUNCTION and "# long:" not in lines[node.lineno - 1]:
                    long[f"{p.relative_to(ROOT)}:{node.lineno} {node.name}"] = n
    assert not long, f"split these functions (or say why on the def line with '# long: ...'): {long}"
