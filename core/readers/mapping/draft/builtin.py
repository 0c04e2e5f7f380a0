"""Drafting a mapping, asked first: does a reader trajcheck already has read the folder? A folder whose every
run a built-in reader (or one a package registers) reads needs no mapping, and a draft would read it worse."""

from __future__ import annotations

from pathlib import Path

from ...discovery import discover, get_reader
from ....base.errors import RunFormatError
from ....base.problems import Slug
from ....base.runfiles import scoring_root


def reader_for(folder: Path, sample: int) -> tuple[str, int] | None:
    """The reader that reads the runs under ``folder`` in full, and how many runs it found: discovery finds runs,
    no folder of data under ``folder`` is left unclaimed, one reader claims them all, and that reader reads the
    (at most ``sample``, spread) runs it is asked to without error. None otherwise."""
    refs, problems = discover([folder])
    if not refs or any(p.slug == Slug.NO_READER_CLAIMS for p in problems):
        return None
    names = {r.reader for r in refs}
    if len(names) != 1:
        return None
    name = names.pop()
    step = max(1, len(refs) // max(1, sample))
    for ref in refs[::step][:sample]:
        try:
            with scoring_root(ref.root):
                get_reader(ref.reader).read(ref.path, ref.display)
        except (RunFormatError, KeyError):
            return None
    return name, len(refs)
