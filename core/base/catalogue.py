"""A section of a catalogue of stored values: the title of its part of the reference page, the ledger columns
that hold its values, and what each value means (:data:`trajcheck.base.reasons.SECTIONS`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True)
class Section:
    """One set of values: the ``title`` of its section in docs/reasons.md, the ledger ``columns``
    (``table.column``) that hold them, how a value sits in a cell (``form``), and each value's meaning, in
    the enum's order."""

    title: str
    columns: tuple[str, ...]
    values: type[StrEnum]
    form: str
    means: dict[str, str]
    output: str = ""  # where the values appear, for a set that no ledger column holds (a command's output)

    @property
    def key(self) -> str:
        """The section's anchor, as GitHub makes it from the heading."""
        return self.title.lower().replace(" ", "-")

    @property
    def link(self) -> str:
        """The section's address, relative to docs/."""
        return f"reasons.md#{self.key}"
