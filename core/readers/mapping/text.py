"""Logs that are text, as a mapping reads them: CSV (each row a step), HTML and Markdown (their text), and a step
as a block of several lines (``[run] blocks``).

* A log named ``*.csv`` (``*.tsv``: tab-separated) is read with :mod:`csv`: the list of its rows, each an object
  of its columns by the header's names (``steps = "@"``; a field is a column's name).
* An HTML log (``*.html``, ``*.htm``, or text that starts as an HTML document) is parsed (selectolax, the lexbor
  HTML5 parser; never a regular expression over its tags) and read as its text: block elements on their own
  lines, scripts and styles left out, and each ``<img>`` as a line ``![alt](src)``: the image's ``src`` (a path,
  or an inline ``data:`` URL) where a pattern can find it, as in a Markdown log.
* ``[run] lines`` and ``[run] blocks`` see that text (a Markdown or plain log: as it is). ``blocks`` is a regular
  expression matched over the whole text: each match is one step (its named groups are the step's fields,
  ``block`` the whole match), so a step that spans lines (a time stamp, a thought, an image, an action line) is
  one step. It is matched with the ``regex`` library under a time limit (a pattern that backtracks ends the read
  with an error that says so, never a hang), at most :data:`MAX_BLOCKS` matches.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from typing import Any

from ...analyzers import patterns
from ...base.errors import Problem, UsageError
from ..kit.reading import load_json_or_jsonl

#: Most steps a text log gives (rows of a CSV, matches of a block pattern).
MAX_BLOCKS = 1_000_000
#: Longest cell of a CSV log: an inline screenshot (base64 of a frame at the frame size limit) fits.
MAX_CELL_CHARS = 96 * 1024 * 1024
#: Seconds a block pattern may take over a text: one second, and one more for each 4 MiB of text (a plain
#: pattern takes milliseconds a megabyte; one that backtracks takes forever, and is stopped).
BLOCK_SECONDS = patterns.TIMEOUT
BLOCK_BYTES_PER_SECOND = 4 * 1024 * 1024
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
#: Elements whose text starts a line (and ends one) in an HTML log's text.
_BLOCK_TAGS = frozenset({"address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "dialog", "div",
                         "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
                         "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
                         "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul"})
#: Elements whose content is not the page's text.
_SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "head", "-comment"})
_BLANKS = re.compile(r"[ \t\r\f\v]*\n[ \t\r\f\v\n]*\n")
_TRAILING = re.compile(r"[ \t\r\f\v]+\n")


class BlockTimeout(Exception):
    """A block pattern that ran past its time limit over a log's text."""

    def __init__(self, pattern: str, seconds: float):
        super().__init__(f"[run] blocks = {pattern!r} took over {seconds:.0f} s over the log's text: overlapping "
                         "repeats such as (a|aa)+ or .*.* backtrack without end; anchor it (^...$ with (?m)) or use "
                         "lazy repeats bounded by what follows")
        self.seconds = seconds


def compile_blocks(text: Any, where: str) -> Any:
    """``[run] blocks`` compiled (the ``regex`` library, re's syntax), None when absent; UsageError when it is not
    a pattern."""
    if text is None:
        return None
    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"{where} must be a regular expression (a string)")
    try:
        rx = patterns.compiled(text)
    except patterns.PatternError as exc:
        raise UsageError(f"{where} = {text!r} is not a regular expression ({exc})") from None
    return rx


def is_html(name: str, text: str) -> bool:
    """A log that is an HTML document: by its name, or by how its text starts."""
    if name.lower().endswith(HTML_SUFFIXES):
        return True
    head = text[:1024].lstrip("\ufeff \t\r\n").lower()
    return head.startswith(("<!doctype html", "<html"))


def text_of(name: str, text: str) -> str:
    """The text a line or block pattern sees: an HTML log's text (:func:`html_text`), any other log as it is."""
    return html_text(text) if is_html(name, text) else text


def html_text(html: str) -> str:
    """An HTML document's text, in document order: each block element on its own lines, the text of scripts,
    styles and the head left out, each image as a line ``![alt](src)``, blank lines collapsed to one."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    root = tree.body if tree.body is not None else tree.root
    if root is None:
        return ""
    out: list[str] = []
    todo: list[tuple[Any, bool]] = [(root, False)]
    while todo:  # an explicit stack: a document nested 100,000 deep is read without recursion
        node, closing = todo.pop()
        tag = node.tag
        if closing:
            out.append("\n")
            continue
        if tag == "-text":
            out.append(node.text_content or "")
            continue
        if tag in _SKIP_TAGS:
            continue
        if tag == "img":
            src = str(node.attributes.get("src") or "").strip()
            if src:
                src = "".join(src.split()) if src.startswith("data:") else src.replace("\n", " ")
                alt = re.sub(r"[\[\]()\n]", " ", str(node.attributes.get("alt") or "image")).strip() or "image"
                out.append(f"\n![{alt}]({src})\n")
            continue
        if tag in _BLOCK_TAGS:
            out.append("\n")
            todo.append((node, True))
        todo.extend((child, False) for child in reversed(list(node.iter(include_text=True))))
    text = _TRAILING.sub("\n", "".join(out))
    return _BLANKS.sub("\n\n", text).strip("\n") + "\n"


def csv_rows(text: str, name: str, *, run: str, problems: list[Problem]) -> list[dict[str, Any]] | None:
    """A CSV (or TSV) log's rows, each ``{column: cell}`` by the header's names (a cell beyond the header is left
    out, a missing one is null); None with a ``json_invalid``-like problem when the file is not CSV."""
    from ...base.problems import Slug

    if csv.field_size_limit() < MAX_CELL_CHARS:  # an inline screenshot in a cell is longer than csv's default
        csv.field_size_limit(MAX_CELL_CHARS)
    delimiter = CSV_SUFFIXES.get(name[name.rfind("."):].lower(), ",")
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")), delimiter=delimiter)
    out: list[dict[str, Any]] = []
    try:
        for row in itertools.islice(reader, MAX_BLOCKS):
            out.append({str(k).strip(): v for k, v in row.items() if k is not None})
    except csv.Error as exc:
        problems.append(Problem(Slug.FILE_UNREADABLE, f"not a CSV file past row {len(out) + 1} ({exc})", run=run,
                                file=name, severity="error", hint="the log's rows are its steps: check the file"))
        return None
    return out


def load(text: str, name: str, *, run: str, problems: list[Problem]) -> Any:
    """A log's value for ``[run] steps``: a CSV log's rows, else JSON or JSON Lines (None when it is neither)."""
    if name[name.rfind("."):].lower() in CSV_SUFFIXES:
        return csv_rows(text, name, run=run, problems=problems)
    return load_json_or_jsonl(text, run=run, rel=name, problems=problems)


def blocks(text: str, rx: Any) -> list[tuple[dict[str, Any], int]]:
    """Each match of the block pattern ``rx`` over ``text`` (an empty match is none): its named groups that
    matched, ``block`` (the whole match), and the line it starts on; :class:`BlockTimeout` past the time limit."""
    seconds = BLOCK_SECONDS + len(text) / BLOCK_BYTES_PER_SECOND
    out: list[tuple[dict[str, Any], int]] = []
    line, last = 1, 0
    try:
        for m in rx.finditer(text, timeout=seconds):
            if m.end() == m.start():
                continue
            line += text.count("\n", last, m.start())
            last = m.start()
            out.append(({**{k: v for k, v in m.groupdict().items() if v is not None}, "block": m.group(0)}, line))
            if len(out) >= MAX_BLOCKS:
                break
    except TimeoutError:
        raise BlockTimeout(rx.pattern, seconds) from None
    return out
