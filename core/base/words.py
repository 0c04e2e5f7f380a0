"""Counts in words: ``1 run``, ``2 runs``: one rule for every message that counts something."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, the noun plural unless ``n`` is 1 (``plural``, else the noun with an s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
