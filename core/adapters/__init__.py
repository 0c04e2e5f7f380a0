"""Format adapters: readers that map runs recorded by other harnesses into trajcheck's records.

Each module exposes ``READER`` (a :class:`trajcheck.discovery.Reader`); :data:`ALL`
lists them in the order they are asked to claim a directory, after the native
reader. See docs/formats.md for each format's field mapping and what is lost.
"""

from __future__ import annotations

from . import (anthropic_messages, browser_use, browsergym, openai_responses, osworld, playwright_trace, ui_tars,
               webvoyager)

ALL = [webvoyager.READER, browsergym.READER, browser_use.READER, playwright_trace.READER, osworld.READER,
       anthropic_messages.READER, openai_responses.READER, ui_tars.READER]

__all__ = ["ALL"]
