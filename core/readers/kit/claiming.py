"""How a reader claims a folder: by a file its format names (:func:`by_names`), or by the shape of a log's parsed
data (:class:`Sniffer`), never by a substring. Each gives a :class:`~trajcheck.readers.kit.reader.FolderClaim`: how well
the folder fits and why, which ``trajcheck formats --detect`` prints for every reader that looked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ...base.errors import Problem
from ...base.inputs import exists_not_dir
from ...base.problems import Slug

from .reader import BY_NAME, BY_SHAPE, NO_CLAIM, FolderClaim
from .shape import MISSING, head_value, json_files

__all__ = ["MAX_ENTRIES", "SNIFF_BYTES", "SNIFF_FILES", "ShapeTest", "Sniffer", "by_names", "claims_plain_dir",
           "describe"]

#: How much of a JSON file is parsed to decide whether a reader claims it, and how many files of a folder.
SNIFF_BYTES = 256 * 1024
SNIFF_FILES = 8
#: A folder of transcripts is read as at most this many runs (one a file).
MAX_ENTRIES = 10_000

#: A test on a log's parsed data: the name of the format's shape it has ("a UI-TARS session log"), else None.
ShapeTest = Callable[[Any], "str | None"]

_NATIVE = FolderClaim(NO_CLAIM, "run.json is there: a trajcheck run, read by the native reader")


def by_names(*names: str) -> Callable[[Path], FolderClaim]:
    """A reader's ``claim``: any of ``names`` is a file in the folder (a FIFO or a device too: the reader reports it
    as not_a_regular_file and never opens it), and the folder is not a native run."""
    def claim(path: Path) -> FolderClaim:
        if (path / "run.json").exists():
            return _NATIVE
        found = next((n for n in names if exists_not_dir(path / n)), None)
        if found is not None:
            return FolderClaim(BY_NAME, f"{found} is there", found)
        return FolderClaim(NO_CLAIM, f"no {' or '.join(names)}")

    return claim


def claims_plain_dir(path: Path, *names: str) -> bool:
    """Any of ``names`` is a file in ``path``, and ``path`` is not a native run."""
    return by_names(*names)(path).claimed


def describe(value: Any) -> str:
    """A log's shape in a few words, for the reason a reader gives when it does not claim it."""
    if value is MISSING:
        return "not JSON"
    if isinstance(value, dict):
        keys = list(value)[:6]
        return "an object with " + (("keys " + ", ".join(map(str, keys)) + (", ..." if len(value) > 6 else ""))
                                    if keys else "no keys")
    if isinstance(value, list):
        kinds = {type(v).__name__ for v in value[:50]}
        inner = ""
        if kinds == {"dict"}:
            keys = sorted({str(k) for v in value[:50] for k in v})[:6]
            inner = f" (keys {', '.join(keys)})" if keys else ""
        elif kinds:
            inner = f" of {', '.join(sorted(kinds))}"
        return f"a list of {len(value)}{'+' * (len(value) >= 50)} items{inner}"
    return f"a JSON {type(value).__name__}"


class Sniffer:
    """Claims a folder by the shape of what its files hold: ``test`` sees the parsed data (:mod:`.shape`: the
    whole value, or as much as the first SNIFF_BYTES hold) of each of the folder's first SNIFF_FILES files with
    one of ``suffixes`` (JSON and JSONL by default) and names the shape it has, or None. ``text_test`` sees the
    raw head of the files that are not JSON (an HTML report). ``default`` is the file named when there is none;
    among several, those that pass ``prefer`` are read first (a log with screenshots before a side file of the
    same steps). ``what`` says what the format's logs are, for a folder it does not claim."""

    def __init__(self, test: ShapeTest, default: str, suffixes: tuple[str, ...] = (".json", ".jsonl"),
                 prefer: Callable[[Any], bool] | None = None, what: str = "a log of this format",
                 text_test: Callable[[bytes], str | None] | None = None):
        self.test, self.default, self.suffixes, self.prefer = test, default, suffixes, prefer
        self.what, self.text_test = what, text_test

    def _judge(self, p: Path) -> tuple[Any, str | None]:
        """A file's parsed value (or raw head) and the shape the test found in it."""
        if p.suffix.lower() in (".json", ".jsonl"):
            value = head_value(p)
            return value, (self.test(value) if value is not MISSING else None)
        if self.text_test is None:
            return MISSING, None
        try:
            with p.open("rb") as f:
                head = f.read(SNIFF_BYTES)
        except OSError:
            return MISSING, None
        return head, self.text_test(head)

    def _heads(self, path: Path, most: int = SNIFF_FILES, keep: Callable[[Any], Any] | None = None
               ) -> list[tuple[Path, Any, str]]:
        """The files that pass the test, each with its parsed data (or what ``keep`` makes of it: a folder of
        thousands of logs keeps one fact a log, not every log's data) and its shape."""
        out = []
        for p in json_files(path, self.suffixes, most):
            try:
                if not p.is_file():
                    continue
                value, shape = self._judge(p)
            except (OSError, RecursionError):
                continue
            if shape:
                out.append((p, value if keep is None else keep(value), shape))
        return out

    def files(self, path: Path) -> list[Path]:
        """The folder's files that pass the test: those that pass ``prefer`` first, then by name."""
        heads = self._heads(path)
        if self.prefer is not None:
            prefer = self.prefer
            heads.sort(key=lambda h: not prefer(h[1]))
        return [p for p, _, _ in heads]

    def every(self, path: Path, keep: Callable[[Any], Any] = lambda v: None) -> list[tuple[Path, Any]]:
        """Every file of the folder that passes the test (at most MAX_ENTRIES), with what ``keep`` makes of its
        parsed data (nothing by default: the data of thousands of logs is never held at once)."""
        return [(p, v) for p, v, _ in self._heads(path, MAX_ENTRIES, keep)]

    def claim(self, path: Path) -> FolderClaim:
        """A reader's ``claim``: not a native run, and one of its files has the format's shape."""
        if (path / "run.json").exists():
            return _NATIVE
        heads = self._heads(path)
        if heads:
            p, _, shape = heads[0]
            return FolderClaim(BY_SHAPE, f"{p.name} is {shape}", p.name)
        looked = json_files(path, self.suffixes)
        if not looked:
            return FolderClaim(NO_CLAIM, f"no {'/'.join(self.suffixes)} file")
        seen = "; ".join(f"{p.name} is {describe(head_value(p))}" for p in looked[:3])
        return FolderClaim(NO_CLAIM, f"{seen}: not {self.what}", looked[0].name)

    def claims(self, path: Path) -> bool:
        """A reader's ``claims``: :meth:`claim` claims it."""
        return self.claim(path).claimed

    def pick(self, run_dir: Path, run: str, problems: list[Problem], side: tuple[str, ...] = ()) -> str:
        """The transcript a run is read from (the first, see :meth:`files`; a warning when there are several).
        Files named in ``side`` are a log's companions (read beside it, never instead of it): they are read
        only when there is nothing else, and are no rivals."""
        found = self.files(run_dir)
        found = [p for p in found if p.name not in side] or found
        if len(found) > 1:
            problems.append(Problem(Slug.STEPS_AMBIGUOUS, f"{', '.join(p.name for p in found)} are all transcripts; "
                                    f"{found[0].name} is read", run=run, file=found[1].name, severity="warning",
                                    hint="keep one transcript per directory"))
        return found[0].name if found else self.default
