"""The HTML report shows control and bidirectional characters from a run as visible escapes, as the terminal
does (issue 46): a task id with a right-to-left override must not make "evil" display as "live"."""

from __future__ import annotations

import pytest

import json
from pathlib import Path

from typer.testing import CliRunner

from trajcheck.cli.common import clean
from trajcheck.cli.main import app
from trajcheck.render.htmltext import escape

from conftest import copy_run, read_steps, sample_run_dirs, write_steps

#: "evil" written backwards after a right-to-left override: a page that applies it displays "live".
EVIL = "\u202elive\u202c"
#: Every kind the terminal makes visible: bidi marks, embeddings, overrides, isolates, C0 and C1 controls.
RAW = ("\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f",
       "\x1b", "\x07", "\x9b", "\x00")
HOSTILE = "".join(RAW) + " tail"


def test_the_report_escapes_as_the_terminal_escapes() -> None:
    """One rule: the report's escape is the terminal's clean(), then HTML escaping; newline and tab stay."""
    assert escape(HOSTILE) == clean(HOSTILE)  # nothing in it for HTML to escape
    assert not any(c in escape(HOSTILE) for c in RAW)
    assert escape(EVIL) == "\\u202elive\\u202c"
    assert escape("<b>\u202e</b>\tx\ny") == "&lt;b&gt;\\u202e&lt;/b&gt;\tx\ny"
    assert escape(None) == ""


@pytest.mark.slow
def test_run_text_with_overrides_shows_them_as_escapes_in_every_page(tmp_path: Path) -> None:
    src = sample_run_dirs()[0]
    d = copy_run(src, tmp_path / "runs" / "bidi")
    meta = json.loads((d / "run.json").read_text())
    meta["run_id"] = f"run-{EVIL}"
    meta["task_id"] = f"task-{EVIL}"
    meta["goal"] = f"goal {HOSTILE}"
    (d / "run.json").write_text(json.dumps(meta))
    steps = read_steps(d)
    steps[0]["reasoning"] = f"reason {HOSTILE}"
    write_steps(d, steps)
    runner = CliRunner()
    res = runner.invoke(app, ["score", str(tmp_path / "runs"), "--out", str(tmp_path / "L"), "-q"])
    assert res.exit_code in (0, 1), res.output
    res = runner.invoke(app, ["report", str(tmp_path / "L"), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    pages = [tmp_path / "rep" / "index.html", *(tmp_path / "rep" / "runs").glob("*.html")]
    assert len(pages) == 2
    for page in pages:
        text = page.read_text("utf-8")
        assert not [c for c in RAW if c in text], (page.name, [hex(ord(c)) for c in RAW if c in text])
        assert "task-\\u202elive\\u202c" in text, page.name  # the override shown, "live" not turned into "evil"
    run_page = next(p for p in pages if p.parent.name == "runs").read_text("utf-8")
    assert "reason \\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\x1b\\x07\\x9b\\x00 tail" \
        in run_page
