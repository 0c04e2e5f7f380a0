"""DOM snapshots of a run: each file read and parsed once, released after its last use."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

from selectolax.lexbor import LexborHTMLParser

from ..analyzers import skeleton as sk
from ..analyzers.messages import PageMessages, page_messages
from ..schemas.records import Run, Step

from .domscan import MAX_DOM_DEPTH, MAX_DOM_ELEMENTS, check as dom_shape
from ..base.errors import Problem
from ..base.problems import Slug
from .refcache import RefCountedCache
from ..base.inputs import kind_of, read_regular
from ..base.runfiles import safe_join

#: DOM snapshots larger than this are not parsed (real pages are KiB to a few MiB); nor are snapshots
#: deeper than domscan.MAX_DOM_DEPTH or with more elements than domscan.MAX_DOM_ELEMENTS (see there).
MAX_DOM_BYTES = 32 * 1024 * 1024


@dataclass
class Snapshot:
    hash: str
    skeleton: sk.Skeleton
    text: sk.PageText
    tree: LexborHTMLParser | None  # None once released (DomCache._drop): the small parts are kept
    messages: PageMessages  # errors and successes the page shows (kept after the tree is released)


class DomCache(RefCountedCache["Snapshot | None"]):
    """The DOM snapshots of one run: each parsed once; after its last use only the parse tree is dropped
    (the hash, skeleton, text and messages are small and the referee may still read them).

    A run often records the same page twice (an action that changed nothing; the page after one step
    and before the next: the 18 sample runs hold 142 snapshots of 77 pages, counted run by run).
    A snapshot with the text of one loaded before shares that one's small parts (read-only, like the
    rest of a snapshot) and its tree while it is alive (no analyzer changes a tree). The last tree
    dropped is kept until the next drop, for the same page recorded again in the next step; only then
    is a copy parsed again (scoring the 200-run benchmark corpus, of 503 repeats 324 found the tree
    alive, 179 the spare one and none were parsed again)."""

    def __init__(self, run: Run, run_dir: Path, uses: Counter[str]):
        super().__init__(run, run_dir, uses)
        self.by_content: dict[bytes, Snapshot] = {}  # SHA-256 of a snapshot -> the last one loaded
        self.digests: dict[str, bytes] = {}  # path -> SHA-256 of the snapshot parsed there
        self.spare: tuple[bytes, LexborHTMLParser] | None = None  # the last tree dropped, and its SHA-256

    def _load(self, rel: str, step: Step, field_name: str) -> Snapshot | None:
        snap = None
        path = safe_join(self.run_dir, rel)
        problem = None
        try:
            if path is None:
                problem = (Slug.PATH_ESCAPES_RUN, "path escapes the run directory")
            elif not S_ISREG((st := path.stat()).st_mode):  # a FIFO would block the read forever
                problem = (Slug.NOT_A_REGULAR_FILE, f"{kind_of(st.st_mode)}, not a regular file; it is never opened")
            elif st.st_size > MAX_DOM_BYTES:
                problem = (Slug.DOM_TOO_LARGE, f"snapshot over {MAX_DOM_BYTES} bytes")
            elif (seen := self.by_content.get(digest := sk.dom_digest(
                    html := read_regular(path, st).decode("utf-8", errors="replace")))) is not None:
                snap = Snapshot(seen.hash, seen.skeleton, seen.text, self._tree_again(html, digest, seen),
                                seen.messages)
                self.by_content[digest] = snap
                self.digests[rel] = digest
            elif (shape := dom_shape(html)).too_deep:
                problem = (Slug.DOM_TOO_DEEP, f"elements nest deeper than {MAX_DOM_DEPTH} levels (Chromium's own "
                           "parser stops there); parsing it would take time quadratic in its depth")
            elif shape.too_many:
                problem = (Slug.DOM_TOO_LARGE, f"over {MAX_DOM_ELEMENTS} elements")
            else:
                tree = sk.parse(html)
                skel = sk.extract(tree)  # before page_text, which strips scripts and styles from the tree
                text = sk.page_text(tree)
                snap = Snapshot(digest.hex()[:16], skel, text, tree, page_messages(tree, text.text))
                self.by_content[digest] = snap
                self.digests[rel] = digest
        except FileNotFoundError:
            problem = (Slug.DOM_MISSING, "file not found")
        except OSError as exc:
            problem = (Slug.DOM_UNREADABLE, exc.strerror or str(exc))
        if problem:
            self.problems.append(Problem(problem[0], f"DOM snapshot {rel!r}: {problem[1]}", run=self.run.run_id,
                                         file=step.source, line=step.line, field=field_name, severity="warning",
                                         hint="the step's observation check falls back to URLs and the client witness"))
        return snap

    def _tree_again(self, html: str, digest: bytes, seen: Snapshot) -> LexborHTMLParser:
        """The parse tree of a snapshot with the bytes of ``seen``: ``seen``'s or the spare one, else
        ``html`` parsed again and stripped as :func:`~trajcheck.analyzers.skeleton.page_text` strips it."""
        if seen.tree is not None:
            return seen.tree
        if self.spare is not None and self.spare[0] == digest:
            tree = self.spare[1]
            self.spare = None
            return tree
        tree = sk.parse(html)
        sk.drop_unrendered(tree)
        return tree

    def _drop(self, rel: str) -> None:
        snap = self.cache.get(rel)
        if snap is not None and snap.tree is not None:
            self.spare = (self.digests[rel], snap.tree)  # the one before is freed, unless a snapshot holds it
            snap.tree = None  # keep the small parts, drop the parse tree
