"""``docs/formats.md`` and the README's format table, generated from the readers' own declarations.

Each reader declares its field mapping and what it loses as a :class:`~trajcheck.readers.kit.reader.FormatDoc`
beside its code; this module only lays them out. Regenerate after changing one::

    python -m devtools.formatsdoc > docs/formats.md
    python -m devtools.formatsdoc --readme      # the table of the README's "Other run formats"

``tests/test_format_docs.py`` fails when either is stale.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence

from trajcheck.readers.discovery import NATIVE
from trajcheck.readers.plugins import EXAMPLE_MODULE, EXAMPLE_TOML
from trajcheck.readers.kit.reader import FormatDoc, Reader, Table

from trajcheck.readers.adapters import ALL

#: Paragraphs are wrapped at this width (tables and code are not).
WIDTH = 100

_INTRO = (
    "Besides its own format (`trajcheck.run/1`), trajcheck reads runs recorded by other harnesses (WebVoyager, "
    "BrowserGym, browser-use, OSWorld), Playwright traces, Anthropic and OpenAI computer-use transcripts and "
    "UI-TARS session logs. A *reader* claims a directory by a file its format names, or by the shape of a "
    "log's parsed data (the transcript and session readers), never by a word found in a file, and never a "
    "directory that holds a `run.json`; when several claim one, the best fit (a shape before a name) reads it "
    "and a `readers_compete` warning names the others (`trajcheck formats --detect DIR` says why each reader did "
    "or did not claim each folder). It maps it into trajcheck's typed records "
    "(`Run`, `Step`, `Action`), and the run is then scored like a native one. The ledger's "
    "`runs.source_format` says which reader read it.",
)
_EXAMPLE = """\
trajcheck score RUNS/ --out LEDGER                          # every reader may claim a directory
trajcheck score RUNS/ --out LEDGER --input-format browsergym  # only this reader
trajcheck validate RUNS/                                    # problems only, no scoring
trajcheck formats                                           # the readers
trajcheck formats webvoyager                                # one reader's field mapping
trajcheck formats --detect RUNS/                            # which readers claim each folder, and why"""
_COMMON = (
    "What the element-based formats (WebVoyager, BrowserGym, browser-use) have in common:",
    "- **No pixel coordinates**, except browser-use's newer shape, whose `interacted_element` carries the "
    "element's `bounds`: the action's point is the box centre (CSS pixels of the viewport; a screenshot at "
    "another device scale is scaled only when the run records its screen size). Otherwise actions name "
    "elements (Set-of-Mark labels, BrowserGym `bid`s, browser-use indexes). The element id is kept in "
    "`action.element` and `action.extra.element`; `action.x`/`y` stay null, so the region check does not "
    "apply (`effect_point = none`) and only the global frame hash compares frames. High-risk clicks are "
    "still found by their reasoning's keywords.",
    "- **No DOM snapshot files.** `page.dom_before/after` stay null; the observation check relies on URLs "
    "(BrowserGym, browser-use) and frames.",
    "What every reader does:",
    "- **Tokens, cost and time** are read where the log records them (each reader's table says from where) and "
    "are null, never 0, where it does not: nothing is estimated. A model call that issued several actions has "
    "its figures on one of them, the one whose effect is checked (its last high-risk action, else its last "
    "acting one), so a run's totals count it once. A cost the log does not record comes only from a price "
    "list the user gives (`score --prices FILE`), for tokens of a named model (`runs.cost_source`).",
    "- Anything without a trajcheck field is kept in `steps.extra` / `runs.extra` (JSON columns of the "
    "ledger), unless it is bulky (page HTML, accessibility trees, DOM element lists), which is dropped.",
    "- Problems are located like native ones (run, file, line or field, hint). A truncated or invalid file "
    "makes the run invalid; a missing screenshot is a warning, once: `frames_missing` where a step uses a file "
    "that is not there, `screenshot_missing` where the log gives a step none; an action that cannot be read "
    "is a warning (`action_unparsed`) and the step is scored as action type `UNKNOWN` with the raw text in "
    "`action.extra.raw`.",
    "- **Screenshot paths** (the transcripts, UI-TARS logs and mappings): a path inside the run is used as it "
    "is; one the run does not hold is looked up by its file name inside it (`screenshot_relocated`). A path "
    "outside the run's folder but inside the folder given to `score` or `validate` is used too "
    "(`screenshot_outside_run`): `../screenshots/a.png`, an absolute path into that folder, or a relative "
    "path found under a folder between the two (a harness that keeps `logs/` beside `screenshots/` and names "
    "`screenshots/a.png` from its own working folder). Such files are part of the run's digest, as are the "
    "places a missing one was looked for, so a rescore sees one changed, removed or copied in later. A path "
    "that resolves outside the folder given (through `..`, an absolute path, a link) is refused "
    "(`path_escapes_run`) and never read; scoring `logs/` alone does not reach `screenshots/` beside it.",
)
_ADDING = (
    "A reader is one module of `core/readers/adapters/` (`trajcheck.readers.adapters`): it parses its files, "
    "aligns their "
    "records into steps with their frames, and reads the outcome, with the shared parts from "
    "`trajcheck.readers.kit.reading`; its `DOC` (a `FormatDoc`) is the section of this page, and its `READER` is "
    "listed in `trajcheck.readers.adapters.ALL` and in the `trajcheck.readers` entry point group of "
    "pyproject.toml. This page is generated from those declarations: "
    "`python -m devtools.formatsdoc > docs/formats.md`.",
)
_OUTSIDE = (
    "A harness's own package can register a reader: an entry point in the group `trajcheck.readers` names a "
    "`Reader` (or a function of no argument that returns one), written with the kit the built-in readers use "
    "(`trajcheck.readers.kit`: `Sniffer` claims a folder by the shape of a log's parsed data; `Problems`, "
    "`read_json_file`, `run_id_of` read it; `trajcheck.schemas.records` holds `Run`, `Step`, `Action`). Once "
    "the package is installed, `score`, `validate` and `formats` use the reader like a built-in one: it is "
    "asked after the built-in readers, and `--input-format` takes its name. The group is read once, when the "
    "readers are first needed; an entry point that fails to load, is no reader, or reuses a reader's name is "
    "a `reader_not_loaded` warning naming it, never a crash. A complete example, the Acme harness's reader "
    "(`tests/test_entry_points.py` installs it and scores its runs):",
)

#: A word that would make markdown read a wrapped line as a list item, a quote, a heading or a table row.
_LINE_START = re.compile(r"^(?:[-+*>#|]|\d+[.)])$")


def wrap(text: str, width: int = WIDTH, indent: str = "") -> list[str]:
    """``text`` in lines of at most ``width`` characters (a longer word stands alone), never starting a
    continuation line with a word that markdown would read as a list item, quote, heading or table row."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width and not _LINE_START.match(word):
            lines.append(line)
            line = indent + word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def _paragraphs(items: Iterable[str]) -> list[str]:
    """Markdown blocks of ``items``: a string starting with "- " is a list item (consecutive ones make one
    list), any other a paragraph."""
    blocks: list[str] = []
    in_list = False
    for item in items:
        if item.startswith("- "):
            text = "\n".join(wrap(item, indent="  "))
            if in_list:
                blocks[-1] += "\n" + text
            else:
                blocks.append(text)
            in_list = True
        else:
            blocks.append("\n".join(wrap(item)))
            in_list = False
    return blocks


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(t: Table) -> str:
    """One mapping table in markdown (a ``|`` in a cell is escaped)."""
    rows = [f"| {_cell(t.head[0])} | {_cell(t.head[1])} |", "|---|---|"]
    rows += [f"| {_cell(a)} | {_cell(b)} |" for a, b in t.rows]
    return "\n".join(rows)


def _code(lines: str) -> str:
    return f"```sh\n{lines}\n```"


def section(reader: Reader) -> str:
    """A reader's section of docs/formats.md: what a run is, an example, the mapping tables, the rules they
    only name, what is lost, what bad input becomes, where the test inputs come from."""
    doc: FormatDoc | None = reader.doc
    if doc is None:
        raise ValueError(f"reader {reader.name!r} declares no FormatDoc")
    blocks = [f"## {doc.title} (`{reader.name}`)", "\n".join(wrap(doc.claims))]
    if doc.example:
        blocks.append(_code(doc.example))
    blocks += _paragraphs(doc.about)
    blocks += [table(t) for t in doc.tables]
    blocks += _paragraphs(doc.notes)
    if doc.ends:
        said = f"`{reader.ends}`" if reader.ends else "not declared by the reader"
        blocks.append("\n".join(wrap(f"How a run ends: {said}. {doc.ends}")))
    if doc.lost:
        blocks.append("Lost in translation:")
        blocks += _paragraphs(f"- {item}" for item in doc.lost)
    if doc.bad_input:
        blocks.append("\n".join(wrap("Bad input: " + doc.bad_input)))
    if doc.fixtures:
        blocks.append("\n".join(wrap(doc.fixtures)))
    return "\n\n".join(blocks)


def _index(readers: Sequence[Reader]) -> str:
    """One row per reader: its name, linked to its section, and its summary (plain text, so ``<`` is escaped
    lest markdown read ``<n>`` as a tag)."""
    rows = ["| reader | reads |", "|---|---|"]
    rows += [f"| [`{r.name}`](#{_anchor(r)}) | {_cell(r.summary.replace('<', '&lt;'))} |" for r in readers]
    return "\n".join(rows)


def _anchor(reader: Reader) -> str:
    """GitHub's anchor of a reader's section heading."""
    assert reader.doc is not None
    heading = f"{reader.doc.title} ({reader.name})".lower()
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def readers() -> list[Reader]:
    """The readers the docs describe: the native format, then the adapters in the order they claim."""
    return [NATIVE, *ALL]


def markdown(described: Sequence[Reader] | None = None) -> str:
    """The whole of docs/formats.md."""
    described = readers() if described is None else described
    blocks = ["# Run formats trajcheck reads", *_paragraphs(_INTRO), _code(_EXAMPLE), _index(described),
              *_paragraphs(_COMMON), *_paragraphs(_ADDING), "## Readers from outside", *_paragraphs(_OUTSIDE),
              "```toml\n" + EXAMPLE_TOML + "\n```", "```python\n" + EXAMPLE_MODULE.rstrip() + "\n```"]
    blocks += [section(r) for r in described]
    from .mappingdoc import MAPPING_DOC

    blocks.append(MAPPING_DOC.strip())
    return "\n\n".join(blocks) + "\n"


def readme_table(described: Sequence[Reader] | None = None) -> str:
    """The format table of the README's "Other run formats" section: one row per adapter."""
    described = list(ALL) if described is None else described
    rows = ["| format | a run is | actions and coordinates | lost in translation (main points) |", "|---|---|---|---|"]
    for r in described:
        if r.doc is None:
            continue
        run_is, actions, lost = r.doc.brief
        rows.append(f"| `{r.name}` | {_cell(run_is)} | {_cell(actions)} | {_cell(lost)} |")
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str]) -> int:
    """Print docs/formats.md, or with ``--readme`` the README's format table."""
    if list(argv) not in ([], ["--readme"]):
        print("usage: python -m devtools.formatsdoc [--readme]", file=sys.stderr)
        return 2
    sys.stdout.write(readme_table() if argv else markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
