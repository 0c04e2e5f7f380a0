"""DOM snapshots of a run: each file read and parsed once, released after its last use."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from trajcheck.analyzers import skeleton as sk
from trajcheck.analyzers.messages import PageMessages, page_messages
from trajcheck.schemas.records import Run, Step

from .errors import Problem
from .rundir import safe_join

#: DOM snapshots larger than this are not parsed (real pages are KiB to a few MiB).
MAX_DOM_BYTES = 32 * 1024 * 1024


@dataclass
class Snapshot:
    hash: str
    skeleton: sk.Skeleton
    text: sk.PageText
    tree: LexborHTMLParser
    messages: PageMessages  # errors and successes the page shows (kept after the tree is released)


class DomCache:
    def __init__(self, run: Run, run_dir: Path, uses: Counter[str]):
        self.run = run
        self.run_dir = run_dir
        self.uses = uses
        self.cache: dict[str, Snapshot | None] = {}
        self.problems: list[Problem] = []

    def get(self, rel: str | None, step: Step, field_name: str) -> Snapshot | None:
        if rel is None:
            return None
        if rel in self.cache:
            return self.cache[rel]
        snap = None
        path = safe_join(self.run_dir, rel)
        problem = None
        try:
            if path is None:
                problem = ("dom_unreadable", "path escapes the run directory")
            elif path.stat().st_size > MAX_DOM_BYTES:
                problem = ("dom_unreadable", f"snapshot over {MAX_DOM_BYTES} bytes")
            else:
                html = path.read_bytes().decode("utf-8", errors="replace")
                tree = sk.parse(html)
                skel = sk.extract(tree)  # before page_text, which strips scripts and styles from the tree
                text = sk.page_text(tree)
                snap = Snapshot(sk.dom_hash(html), skel, text, tree, page_messages(tree, text.text))
        except FileNotFoundError:
            problem = ("dom_missing", "file not found")
        except OSError as exc:
            problem = ("dom_unreadable", exc.strerror or str(exc))
        if problem:
            self.problems.append(Problem(problem[0], f"DOM snapshot {rel!r}: {problem[1]}", run=self.run.run_id,
                                         file=step.source, line=step.line, field=field_name, severity="warning",
                                         hint="the step's observation check falls back to URLs and the client witness"))
        self.cache[rel] = snap
        return snap

    def release(self, rel: str | None) -> None:
        if rel is None:
            return
        self.uses[rel] -= 1
        if self.uses[rel] <= 0 and rel in self.cache:
            snap = self.cache[rel]
            if snap is not None:
                snap.tree = None  # type: ignore[assignment]  # keep the small parts, drop the parse tree
