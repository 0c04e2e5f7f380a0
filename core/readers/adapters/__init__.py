"""Format adapters: readers that map runs recorded by other harnesses into trajcheck's records.

Each reader module (``webvoyager``, ``browsergym``, ...) exposes ``READER`` (a
:class:`trajcheck.readers.kit.reader.Reader`) and ``DOC``, its field mapping and what it loses as data
(:class:`trajcheck.readers.kit.reader.FormatDoc`); it reads its format in three stages, parse, align and outcome,
with the shared parts from :mod:`~trajcheck.readers.kit.reading`, and keeps its action grammar (or, for Playwright,
its archive and event reading) in helper modules beside it (``*_actions``, ``playwright_zip``,
``playwright_events``). :data:`ALL` lists the readers in the order they are asked to claim a directory,
after the native reader. docs/formats.md is generated from the ``DOC`` s by :mod:`~trajcheck.readers.docs`.
"""

from __future__ import annotations

from . import (anthropic_messages, browser_use, browsergym, openai_responses, osworld, playwright_trace, ui_tars,
               webvoyager)

ALL = [webvoyager.READER, browsergym.READER, browser_use.READER, playwright_trace.READER, osworld.READER,
       anthropic_messages.READER, openai_responses.READER, ui_tars.READER]

__all__ = ["ALL"]

