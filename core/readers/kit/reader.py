"""What a reader is: how it claims and reads a run directory (:class:`Reader`), and how its format maps into
trajcheck's records (:class:`FormatDoc`, declared as data beside the reader's code).

A module of its own, below both sides: the readers (the native one in :mod:`trajcheck.readers.rundir`, the format
adapters in :mod:`trajcheck.readers.adapters`) declare theirs with it, and :mod:`trajcheck.readers.discovery`, which
asks
them to claim directories, imports the readers, never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ...schemas.records import Run

    from ...base.errors import Problem


@dataclass(frozen=True)
class Table:
    """One field-mapping table of a format: rows of (the format's field or path, what it becomes in trajcheck's
    records). Cells are markdown (`code` spans); ``head`` names the two columns."""

    rows: tuple[tuple[str, str], ...]
    head: tuple[str, str] = ("source", "trajcheck")


@dataclass(frozen=True)
class FormatDoc:
    """How a reader maps its format, declared as data beside the reader's code: ``docs/formats.md``, the
    README's format table and ``trajcheck formats NAME`` are generated from it (``devtools.formatsdoc``).
    Text is markdown, one string per paragraph or list item (the generator wraps it)."""

    title: str  # the format's name for people: "WebVoyager", "Playwright traces"
    claims: str  # what a run is, and what makes the reader claim a directory
    example: str = ""  # shell lines
    about: tuple[str, ...] = ()  # how the harness records a run (before the tables); "- " starts a list item
    tables: tuple[Table, ...] = ()
    notes: tuple[str, ...] = ()  # rules the tables only name (after them); "- " starts a list item
    lost: tuple[str, ...] = ()  # what the format records that trajcheck does not keep, or cannot know
    bad_input: str = ""  # what a damaged run becomes
    fixtures: str = ""  # where the test inputs of this format come from
    brief: tuple[str, str, str] = ("", "", "")  # the README row: a run is, actions and coordinates, lost (main)
    #: why the reader declares its harness ends runs as it does (:attr:`Reader.ends`), from the harness's code or
    #: docs: one sentence, shown beside the declaration
    ends: str = ""

    def pairs(self) -> tuple[tuple[str, str], ...]:
        """Every mapping row of every table, without markdown's code marks (for a terminal)."""
        return tuple((_plain(a), _plain(b)) for t in self.tables for a, b in t.rows)


def _plain(text: str) -> str:
    return text.replace("`", "")


#: How well a folder fits a reader's format, from worst to best: not at all; by a file the format names
#: (``interact_messages.json``, ``trace.zip``); by the shape of a log's parsed data (a list of messages whose
#: content holds ``tool_use`` blocks). The better fit reads the folder; between equal fits, the reader asked first.
NO_CLAIM, BY_NAME, BY_SHAPE = 0, 1, 2


@dataclass(frozen=True)
class FolderClaim:
    """A reader's answer about one folder: how well it fits (:data:`NO_CLAIM`, :data:`BY_NAME`, :data:`BY_SHAPE`)
    and why, in words for ``trajcheck formats --detect`` (the file it looked at, what it found)."""

    fit: int
    why: str
    file: str = ""

    @property
    def claimed(self) -> bool:
        return self.fit > NO_CLAIM


@dataclass(frozen=True)
class Reader:
    """A run format trajcheck reads: how it claims a directory, how it reads one, and (``doc``) how its fields
    map and what it loses."""

    name: str  # what --input-format takes, and the runs table's source_format
    claims: Callable[[Path], bool]  # cheap test on a directory: is it a run of this format (``judge(p).claimed``)
    read: Callable[[Path, str], tuple[Run, list[Problem]]]  # (dir, display) -> run, warnings; raises RunFormatError
    summary: str = ""
    doc: FormatDoc | None = None  # the field mapping and what is lost (None: a --mapping file's reader)
    companions: tuple[str, ...] = ()  # folders the reader reads beside its runs (WebVoyager's _metadata/)
    #: a claimed folder's run files, when it holds several runs of one file each (a folder of transcripts);
    #: empty when the folder is one run
    entries: Callable[[Path], list[str]] | None = None
    #: how well a folder fits and why (:class:`FolderClaim`); None: from ``claims`` (a claim by the files it names)
    claim: Callable[[Path], FolderClaim] | None = None
    #: How the format's harness ends a run (:data:`trajcheck.base.verdicts.ENDS`): ``answer``, only by the agent's
    #: answer or a limit that cuts it off (a step budget, a crash); ``external``, it may also stop a run itself
    #: (its own state check, a person). None: not declared. Only under ``answer`` does a run that ended without
    #: an answer fail (:mod:`trajcheck.scoring.noanswer`); a run's own declaration (run.json ``ends``) wins.
    ends: str | None = None

    def judge(self, path: Path) -> FolderClaim:
        """Does this reader claim ``path``, how well, and why. Never raises: a folder that cannot be looked at
        is not claimed, and says so."""
        try:
            if self.claim is not None:
                return self.claim(path)
            if self.claims(path):
                return FolderClaim(BY_NAME, "a file of its format is there")
            return FolderClaim(NO_CLAIM, "none of the files its format names is there")
        except OSError as exc:
            return FolderClaim(NO_CLAIM, f"the folder could not be read: {exc.strerror or exc}")

    @property
    def mapping(self) -> tuple[tuple[str, str], ...]:
        """(format's field, trajcheck field) rows, from the reader's :class:`FormatDoc`."""
        return self.doc.pairs() if self.doc is not None else ()
