"""docs/formats.md and the README's format table are generated from the readers' FormatDoc declarations."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from trajcheck.readers import discovery
from trajcheck.readers.adapters import ALL
from devtools import formatsdoc as docs
from trajcheck.readers.discovery import NATIVE, FormatDoc, Reader, Table

from conftest import ROOT

FORMATS_MD = ROOT / "docs" / "formats.md"
README = ROOT / "README.md"
REGENERATE = "python -m devtools.formatsdoc > docs/formats.md"


def test_committed_formats_md_is_the_generated_text():
    assert FORMATS_MD.read_text() == docs.markdown(), f"docs/formats.md is stale: run `{REGENERATE}`"


def test_formats_md_has_a_section_for_the_native_format_and_each_of_the_eight_readers():
    names = [r.name for r in ALL]
    assert names == ["webvoyager", "browsergym", "browser-use", "playwright-trace", "osworld", "anthropic-messages",
                     "openai-responses", "ui-tars"]
    headings = re.findall(r"^## .* \(`(.+)`\)$", FORMATS_MD.read_text(), re.M)
    assert headings == ["trajcheck.run/1", *names]


@pytest.mark.parametrize("reader", [NATIVE, *ALL], ids=lambda r: r.name)
def test_every_reader_declares_its_mapping_and_what_it_loses(reader):
    doc = reader.doc
    assert isinstance(doc, FormatDoc) and doc.title and doc.claims and doc.lost
    assert doc.tables and all(len(row) == 2 and all(row) for t in doc.tables for row in t.rows)
    if reader is not NATIVE:  # the README's table row
        assert all(doc.brief), reader.name


def test_readme_format_table_is_the_generated_one_inside_its_section():
    text = README.read_text()
    section = text.split("\n## Other run formats\n", 1)[1].split("\n## ", 1)[0]
    table = docs.readme_table()
    assert table in section, "README's format table is stale: run `python -m devtools.formatsdoc --readme`"
    assert [line.split(" | ")[0] for line in table.splitlines()[2:]] == [f"| `{r.name}`" for r in ALL]


@pytest.mark.slow
def test_the_module_entry_point_prints_both_texts():
    out = subprocess.run([sys.executable, "-m", "devtools.formatsdoc"], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out == docs.markdown()
    out = subprocess.run([sys.executable, "-m", "devtools.formatsdoc", "--readme"], capture_output=True,
                         text=True, cwd=ROOT, check=True).stdout
    assert out == docs.readme_table()
    bad = subprocess.run([sys.executable, "-m", "devtools.formatsdoc", "--nope"], capture_output=True, text=True,
                         cwd=ROOT)
    assert (bad.returncode, bad.stdout) == (2, "")


def _reader(doc: FormatDoc) -> Reader:
    return Reader(name="demo-format", claims=lambda p: False, read=lambda d, s: (None, []), summary="demo: a <n>",
                  doc=doc)  # type: ignore[arg-type,return-value]


def test_a_section_lays_out_every_part_of_the_declaration_in_reading_order():
    doc = FormatDoc(title="Demo", claims="A run is a folder.", example="trajcheck score demo/",
                    about=("How it records.",), tables=(Table(rows=(("`a|b`", "`x`"),), head=("demo", "trajcheck")),),
                    notes=("The rule:", "- first", "- second"), lost=("Nothing much.",), bad_input="a bad file.",
                    fixtures="Made by hand.", brief=("a folder", "none", "nothing"))
    assert docs.section(_reader(doc)) == (
        "## Demo (`demo-format`)\n\nA run is a folder.\n\n```sh\ntrajcheck score demo/\n```\n\nHow it records.\n\n"
        "| demo | trajcheck |\n|---|---|\n| `a\\|b` | `x` |\n\nThe rule:\n\n- first\n- second\n\n"
        "Lost in translation:\n\n- Nothing much.\n\nBad input: a bad file.\n\nMade by hand.")
    assert docs.readme_table([_reader(doc)]).splitlines()[2] == "| `demo-format` | a folder | none | nothing |"
    assert "| [`demo-format`](#demo-demo-format) | demo: a &lt;n> |" in docs.markdown([_reader(doc)])


def test_wrapping_never_starts_a_line_that_markdown_would_read_as_a_list_or_a_heading():
    text = "word " * 18 + "- not a list item, and # not a heading, and 1. not a numbered item " + "word " * 10
    lines = docs.wrap(text, width=40)
    assert all(len(line) <= 40 or line.split()[-1] in ("-", "#", "1.") for line in lines)
    assert not any(re.match(r"^(?:[-+*>#|]|\d+[.)]) ", line) for line in lines)
    assert " ".join(lines) == " ".join(text.split())
    assert docs.wrap("- item " + "x " * 30, width=20, indent="  ")[1].startswith("  x")


def test_formats_command_prints_a_readers_rows_from_its_declaration():
    from trajcheck.cli.main import app

    result = CliRunner().invoke(app, ["formats", "webvoyager", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = __import__("json").loads(result.stdout)
    by_source = {r["source field"]: r["trajcheck field"] for r in rows}
    assert by_source["Action: Click [N]"] == "CLICK, element = N, extra.element = N"  # code marks stripped
    assert len(rows) == sum(len(t.rows) for t in discovery.get_reader("webvoyager").doc.tables)  # type: ignore[union-attr]
