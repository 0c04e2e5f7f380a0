"""Markdown tables of plain values, for `failures --format markdown` and `judges --format markdown`: text from a log
or a judge is data, so a cell's pipes, backslashes, backticks, angle brackets and line breaks are escaped."""

from __future__ import annotations

from typing import Any


def cell(v: Any) -> str:
    """One cell: None is empty; whitespace runs (line breaks included) are one space; markup is escaped."""
    if v is None:
        return ""
    text = " ".join(str(v).split())
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("<", "&lt;")


def table(cols: list[str], rows: list[list[Any]]) -> str:
    """A header row, its rule and one line a row, each cell escaped; ends with a line break."""
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"
