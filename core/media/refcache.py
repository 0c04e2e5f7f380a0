"""The one cache pattern of scoring: each file of a run loaded once, dropped after its last use.

Before the step loop, the scorer counts how many times each frame and each DOM snapshot will be asked
for (:func:`trajcheck.scoring.loading.uses`); every ``get`` of a file is matched by a ``release``, and the last
release drops what the file cost in memory. Memory then stays that of the few files a step needs, however
long the run.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Generic, TypeVar

from ..schemas.records import Run, Step

from ..base.errors import Problem

T = TypeVar("T")


class RefCountedCache(Generic[T]):
    """Files of one run by their path relative to the run directory. Subclasses say how a file is loaded
    (:meth:`_load`, which appends to ``problems`` what went wrong) and what is dropped after its last use
    (:meth:`_drop`)."""

    def __init__(self, run: Run, run_dir: Path, uses: Counter[str]):
        self.run = run
        self.run_dir = run_dir
        self.uses = uses
        self.cache: dict[str, T] = {}
        self.problems: list[Problem] = []

    def get(self, rel: str | None, step: Step, field_name: str) -> T | None:
        """The file at ``rel``, loaded on the first call; ``step`` and ``field_name`` locate a problem."""
        if rel is None:
            return None
        if rel not in self.cache:
            self.cache[rel] = self._load(rel, step, field_name)
        return self.cache[rel]

    def release(self, rel: str | None) -> None:
        """One use of ``rel`` is over; after the last one, drop it."""
        if rel is None:
            return
        self.uses[rel] -= 1
        if self.uses[rel] <= 0:
            self._drop(rel)

    def _load(self, rel: str, step: Step, field_name: str) -> T:
        raise NotImplementedError

    def _drop(self, rel: str) -> None:
        self.cache.pop(rel, None)
