"""Format adapters: readers that map runs recorded by other harnesses into trajcheck's records.

One package per harness (``webvoyager/``, ``browsergym/``, ...), its parts named alike: ``reader`` exposes
``READER`` (a :class:`trajcheck.readers.kit.reader.Reader`) and ``DOC``, its field mapping and what it loses as
data (:class:`trajcheck.readers.kit.reader.FormatDoc`); ``actions`` is the harness's action grammar; ``shape``,
where there is one, tells its logs by their parsed shape; other modules are named for what they read (``logs``,
``history``, ``stepinfo``, Playwright's ``archive`` and ``events``). A reader reads its format in three stages,
parse, align and outcome, with the shared parts from :mod:`~trajcheck.readers.kit.reading`. :data:`ALL` lists
the readers in the order they are asked to claim a directory, after the native reader. docs/formats.md is
generated from the ``DOC`` s by ``python -m devtools.formatsdoc``.
"""

from __future__ import annotations

from .anthropic import reader as anthropic
from .browser_use import reader as browser_use
from .browsergym import reader as browsergym
from .openai import reader as openai
from .osworld import reader as osworld
from .playwright import reader as playwright
from .ui_tars import reader as ui_tars
from .webvoyager import reader as webvoyager

ALL = [webvoyager.READER, browsergym.READER, browser_use.READER, playwright.READER, osworld.READER,
       anthropic.READER, openai.READER, ui_tars.READER]

__all__ = ["ALL"]
