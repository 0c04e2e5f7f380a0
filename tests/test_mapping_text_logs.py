"""A mapping for any text log (issue 47 item 4): CSV rows as steps, HTML and Markdown read as text (images as
``![alt](src)`` lines), a step as a block of lines (``[run] blocks``), an image in the log as the step's
screenshot, the thought as reasoning, the target element, a scroll's direction and amount, the URL after a step
from the next step's, the run's totals; `draft-mapping` drafting them, and saying when a built-in reader reads a
folder. docs/mappings/visualwebarena.toml on the real VisualWebArena log."""

from __future__ import annotations

import base64
import io
import time
from pathlib import Path

import pytest
from PIL import Image

from trajcheck.base.errors import RunFormatError, UsageError
from trajcheck.commands import draft_mapping
from trajcheck.readers.mapping import text as textlog
from trajcheck.readers.mapping.grammars import parse_all
from trajcheck.readers.mapping.reach import measure
from trajcheck.readers.mapping.reader import Mapping, reader_of

from conftest import ROOT

VWA = ROOT / "tests" / "fixtures" / "real" / "visualwebarena"
MAPS = ROOT / "docs" / "mappings"


def _png(shade: int = 40) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 40), (shade, shade, shade)).save(buf, "PNG")
    return buf.getvalue()


def _read(mapping: Path, run_dir: Path):
    return reader_of(Mapping(mapping)).read(run_dir, run_dir.name)


def _map(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "m.toml"
    p.write_text(text)
    return p


# --- CSV: each row a step, the columns its fields -------------------------------------------------------------

CSV = """step,action,x,y,text,thought,screenshot
1,click,120,40,,"I open the search box, at the top",shots/1.png
2,type,,,hello world,I type the query,shots/2.png
3,done,,,found it,Done,shots/3.png
"""


def _csv_run(root: Path) -> Path:
    d = root / "runs" / "r1"
    (d / "shots").mkdir(parents=True)
    for i in (1, 2, 3, 4):
        (d / "shots" / f"{i}.png").write_bytes(_png(20 * i))
    (d / "actions.csv").write_text(CSV)
    return d


def test_a_csv_log_is_read_row_by_row_with_its_columns_as_fields(tmp_path):
    d = _csv_run(tmp_path)
    m = _map(tmp_path, """
[run]
files = "actions.csv"
steps = "@"
[step]
type = "action"
x = "x"
y = "y"
text = "text"
reasoning = "thought"
screenshot = "screenshot"
""")
    run, _warns = _read(m, d)
    assert [s.action.type for s in run.steps] == ["CLICK", "TYPE", "DONE"]
    assert (run.steps[0].action.x, run.steps[0].action.y) == (120, 40)  # numbers written as cells are numbers
    assert run.steps[1].action.text == "hello world"
    assert run.steps[0].reasoning == "I open the search box, at the top"  # a quoted cell with a comma
    assert [s.frame_pre for s in run.steps] == ["shots/1.png", "shots/2.png", "shots/3.png"]
    assert run.steps[2].frame_post == "shots/4.png"  # the next-numbered screen after the last step


def test_draft_mapping_reads_a_csv_log_with_no_edit(tmp_path):
    _csv_run(tmp_path)
    d = draft_mapping(tmp_path / "runs", check=True)
    assert "files = 'actions.csv'" in d.text and "steps = '@'" in d.text, d.text
    c = d.coverage
    assert c is not None
    assert (c["runs_read"], c["actions"], c["actions_understood"]) == (1, 3, 3), d.text
    assert c["screenshots_found"] == 4 and c["frames_not_there"] == 0, d.text


def test_a_csv_cell_longer_than_the_csv_modules_default_limit_is_read(tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    big = "data:image/png;base64," + base64.b64encode(_png() + b"\0" * 200_000).decode()  # > 131072 chars
    (d / "log.csv").write_text(f'action,screenshot\nclick,"{big}"\ndone,"{big}"\n')  # quoted: it holds a comma
    run, _ = _read(_map(tmp_path, '[run]\nfiles = "log.csv"\nsteps = "@"\n[step]\ntype = "action"\n'
                                  'screenshot = "screenshot"\n'), d)
    assert [s.action.type for s in run.steps] == ["CLICK", "DONE"]
    assert run.steps[0].frame_pre in run.inline_frames


# --- Markdown: a step as a block of lines ---------------------------------------------------------------------

MD = """# Run of the shopping agent

Task: buy a red umbrella
Model: gpt-4o
Elapsed: 41.5
Cost: 0.042

## Step 1
**Time:** 2024-05-01T10:00:00
**URL:** https://shop.example/
**Thought:** The search box is at the top.
I will click it first.
![screen](shots/step_1.png)
**Action:** click(120, 40)

## Step 2
**Time:** 2024-05-01T10:00:05
**URL:** https://shop.example/
**Thought:** Now I type the query.
![screen](shots/step_2.png)
**Action:** type("red umbrella")

## Step 3
**Time:** 2024-05-01T10:00:09
**URL:** https://shop.example/search?q=red+umbrella
**Thought:** The results are below: scroll.
![screen](shots/step_3.png)
**Action:** scroll(640, 400)

## Step 4
**Time:** 2024-05-01T10:00:12
**URL:** https://shop.example/item/7
**Thought:** This is the umbrella.
![screen](shots/step_4.png)
**Action:** done("found")
"""


def _md_run(root: Path) -> Path:
    d = root / "runs" / "shop-1"
    (d / "shots").mkdir(parents=True)
    for i in (1, 2, 3, 4):
        (d / "shots" / f"step_{i}.png").write_bytes(_png(30 * i))
    (d / "trace.md").write_text(MD)
    return d


def test_draft_mapping_drafts_blocks_of_a_markdown_log_and_reads_them_with_no_edit(tmp_path):
    d = _md_run(tmp_path)
    drafted = draft_mapping(tmp_path / "runs", check=True)
    t = drafted.text
    assert "files = 'trace.md'" in t and "blocks = " in t and "(?P<step>\\d+)" in t, t
    assert "screenshot = { path = 'block'" in t and "screenshot_is = 'pre'" in t, t
    assert "reasoning = " in t and "url_before = " in t and "timestamp = " in t, t
    c = drafted.coverage
    assert c is not None
    assert (c["runs_read"], c["actions"], c["actions_understood"]) == (1, 4, 4), t
    assert (c["screenshots"], c["screenshots_found"]) == (4, 4), t
    m = _map(tmp_path, t)
    run, _ = _read(m, d)
    assert run.goal == "buy a red umbrella"
    # the thought spans two lines and stops at the next label (the image, the action)
    assert run.steps[0].reasoning == "The search box is at the top.\nI will click it first."
    assert (run.steps[0].action.x, run.steps[0].action.y) == (120, 40)
    assert [s.wall_seconds for s in run.steps] == [None, 5.0, 4.0, 3.0]  # from the time stamps
    # the URL a step saw, and after it the next step's
    assert run.steps[1].page is not None and run.steps[1].page.url_after == "https://shop.example/search?q=red+umbrella"
    assert run.steps[3].page is not None and run.steps[3].page.url_after is None


def test_run_level_values_model_elapsed_and_cost_are_read_from_the_log_text(tmp_path):
    d = _md_run(tmp_path)
    m = _map(tmp_path, r"""
[run]
files = "trace.md"
blocks = '(?ms)^## Step (?P<step>\d+)$.*?(?=^## Step|\Z)'
model = { path = "text", regex = '(?m)^Model: (?P<model>.*)$' }
wall_seconds = { path = "text", regex = '(?m)^Elapsed: (?P<wall_seconds>[\d.]+)' }
cost_usd = { path = "text", regex = '(?m)^Cost: (?P<cost_usd>[\d.]+)' }
[step]
type = { path = "block", regex = '\*\*Action:\*\* (?P<type>\w+)' }
screenshot_file = "shots/step_{step}.png"
""")
    run, _ = _read(m, d)
    assert len(run.steps) == 4
    assert run.agent_model == "gpt-4o"
    assert run.wall_seconds == 41.5
    assert run.usage is not None and run.usage.cost_usd == 0.042
    assert run.steps[0].line == 8  # the line the block starts on


# --- plain text: multi-line blocks, the target element, a scroll's direction and amount --------------------------

TXT = """[2024-05-01 10:00:00] STEP 1
thought: the login button is on the right
element: #login
action: click
---
[2024-05-01 10:00:03] STEP 2
thought: the form is lower on the page
scroll: down 3
action: scroll
---
[2024-05-01 10:00:07] STEP 3
thought: all done
action: finish
"""


def test_a_plain_text_log_with_multi_line_blocks_gives_target_and_scroll(tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    (d / "agent.log").write_text(TXT)
    m = _map(tmp_path, r"""
[run]
blocks = '(?ms)^\[(?P<time>[^\]]+)\] STEP (?P<step>\d+)$.*?(?=^\[|\Z)'
[step]
type = { path = "block", regex = '(?m)^action: (?P<type>\w+)' }
reasoning = { path = "block", regex = '(?m)^thought: (?P<reasoning>.*)$' }
target = { path = "block", regex = '(?m)^element: (?P<target>\S+)' }
scroll_direction = { path = "block", regex = '(?m)^scroll: (?P<scroll_direction>\w+)' }
scroll_amount = { path = "block", regex = '(?m)^scroll: \w+ (?P<scroll_amount>\d+)' }
timestamp = "time"
[step.types]
finish = "DONE"
""")
    run, warns = _read(m, d)
    assert [s.action.type for s in run.steps] == ["CLICK", "SCROLL", "DONE"]
    assert run.steps[0].action.element == "#login"
    assert run.steps[1].action.extra["direction"] == "down" and run.steps[1].action.extra["amount"] == 3
    assert run.steps[0].reasoning == "the login button is on the right"
    assert [s.wall_seconds for s in run.steps] == [None, 3.0, 4.0]
    # target applies to pointed actions, scroll fields to scrolls: a step without them is no warning
    assert not [w for w in warns if w.field in ("step.target", "step.scroll_direction")], warns


# --- HTML: its text, images as ![alt](src) lines ----------------------------------------------------------------

def test_an_html_log_is_read_as_text_with_its_images_inline_or_relative(tmp_path):
    d = tmp_path / "r"
    (d / "img").mkdir(parents=True)
    (d / "img" / "a.png").write_bytes(_png(10))
    inline = base64.b64encode(_png(200)).decode()
    (d / "trace.html").write_text(f"""<!DOCTYPE html><html><head><style>h2 {{ color: red }}</style></head><body>
<script>var step = "<h2>Step 9</h2>";</script>
<h2>Step 1</h2><p>URL: https://a.example/</p><img src="img/a.png" alt="shot"><pre>click [3]</pre>
<h2>Step 2</h2><p>URL: https://a.example/b</p>
<img src="data:image/png;base64,{inline[:40]}
{inline[40:]}"><div>stop [the answer]</div>
</body></html>""")
    text = textlog.html_text((d / "trace.html").read_text())
    assert "Step 9" not in text and "color" not in text  # scripts and styles are not the page's text
    assert "![shot](img/a.png)" in text and "\n" not in text.split("![image](")[1].split(")")[0]
    m = _map(tmp_path, r"""
[run]
files = "*.html"
blocks = '(?ms)^Step \d+$.*?(?=^Step \d+$|\Z)'
[step]
grammar = "webarena"
action = { path = "block", regex = '(?m)^(?P<action>(?:click|stop) .*)$' }
screenshot = { path = "block", regex = '!\[[^\]]*\]\((?P<screenshot>[^)]+)\)' }
url_before = { path = "block", regex = 'URL: (?P<url_before>\S+)' }
""")
    run, _ = _read(m, d)
    assert [s.action.type for s in run.steps] == ["CLICK", "DONE"]
    assert run.steps[0].action.element == "3" and run.steps[0].action.x is None  # an id, not a point
    assert run.steps[1].action.text == "the answer"
    assert run.steps[0].frame_pre == "img/a.png" and run.steps[1].frame_pre in run.inline_frames
    assert run.steps[0].frame_post == run.steps[1].frame_pre
    assert run.steps[0].page is not None and run.steps[0].page.url_after == "https://a.example/b"


def test_html_nested_deeper_than_the_recursion_limit_is_read():
    html = "<div>" * 5000 + "deep" + "</div>" * 5000
    assert textlog.html_text(html).strip() == "deep"


# --- the webarena grammar ------------------------------------------------------------------------------------

@pytest.mark.parametrize("s, t, element, text, keys, url, extra", [
    ("click [8] where [8]", "CLICK", "8", None, None, None, {}),
    ("hover [12]", "MOUSE_MOVE", "12", None, None, None, {}),
    ("type [12] [red umbrella] [0]", "TYPE", "12", "red umbrella", None, None, {"press_enter": False}),
    ("type [5] [a [b] c]", "TYPE", "5", "a [b] c", None, None, {"press_enter": True}),  # enter by default
    ("press [Meta+a]", "KEY_PRESS", None, None, "Meta+a", None, {}),
    ("scroll [down]", "SCROLL", None, None, None, None, {"direction": "down"}),
    ("goto [http://x.example/a]", "NAVIGATE", None, None, None, "http://x.example/a", {}),
    ("go_back", "NAVIGATE", None, None, None, None, {"navigation": "go_back"}),
    ("stop [N/A]", "DONE", None, "N/A", None, None, {}),
    ("none", "WAIT", None, None, None, None, {}),
    ("In summary, the next action I will perform is ```click [3]```", "CLICK", "3", None, None, None, {}),
    ("jump [3]", "UNKNOWN", None, None, None, None, {}),
    ("click [the button]", "UNKNOWN", None, None, None, None, {}),
])
def test_the_webarena_grammar(s, t, element, text, keys, url, extra):
    [a], _ = parse_all("webarena", s)
    assert (a.type, a.element, a.text, a.keys, a.url) == (t, element, text, keys, url)
    assert a.point is None
    assert extra.items() <= a.extra.items()


# --- bounded: a pattern that backtracks ends the read, with a message -----------------------------------------------

@pytest.mark.slow
def test_a_block_pattern_that_backtracks_ends_the_read_in_bounded_time(tmp_path, monkeypatch):
    monkeypatch.setattr(textlog, "BLOCK_SECONDS", 0.5)
    d = tmp_path / "r"
    d.mkdir()
    (d / "x.log").write_text("a" * 5000 + "\n")
    m = _map(tmp_path, "[run]\nblocks = '(a|aa)+$b'\n[step]\ntype = 'x'\n")
    t = time.monotonic()
    with pytest.raises(RunFormatError, match="took over"):
        _read(m, d)
    assert time.monotonic() - t < 30


@pytest.mark.slow
def test_a_field_regex_that_backtracks_gives_nothing_with_a_warning(tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    (d / "x.log").write_text("STEP\n" + "a" * 40 + "\nclick\n")
    m = _map(tmp_path, "[run]\nblocks = '(?ms)^STEP$.*'\n[step]\ntype = { path = 'block', regex = '(click)' }\n"
                       "text = { path = 'block', regex = '(?P<text>(a|aa)+b)' }\n")
    run, warns = _read(m, d)
    assert run.steps[0].action.type == "CLICK" and run.steps[0].action.text is None
    assert any(w.field == "step.text" and "took over" in w.message for w in warns), warns


def test_a_bad_block_pattern_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match=r"\[run\] blocks = .* is not a regular expression"):
        Mapping(_map(tmp_path, "[run]\nblocks = '(unclosed'\n[step]\ntype = 'x'\n"))


# --- a folder a built-in reader reads needs no mapping ----------------------------------------------------------

def test_draft_mapping_names_the_built_in_reader_that_reads_the_folder():
    d = draft_mapping(ROOT / "tests" / "fixtures" / "real" / "ui_tars", check=True)
    assert d.reader == "ui-tars"
    assert d.text.startswith("# No mapping is needed: the ui-tars reader reads these runs (trajcheck formats "
                             "ui-tars).")
    assert d.coverage is None and d.to_json()["reader"] == "ui-tars"


# --- the real VisualWebArena log, through the committed mapping ---------------------------------------------------

@pytest.mark.slow
def test_the_visualwebarena_mapping_reads_the_real_render_html():
    m = MAPS / "visualwebarena.toml"
    c = measure([VWA], m)
    assert (c.runs_found, c.runs_read, c.actions, c.understood) == (1, 1, 13, 13)
    assert (c.screenshots, c.screenshots_used, c.frames_missing) == (13, 13, 0)
    run, _ = _read(m, VWA / "results")
    assert run.goal == "Book a table at a Italian restaurant in the downtown area with {{reqs}}"
    assert run.task_id == "0" and (run.screen_width, run.screen_height) == (1280, 2048)
    first = run.steps[0]
    assert first.action.type == "CLICK" and first.action.element == "8" and first.action.point is None
    assert first.reasoning == "In summary, the next action I will perform is ```click [8]```."
    # block 2's image is the screen before its go_back (OpenTable); go_back led to the blank page of block 3
    assert first.page is not None and first.page.url_before == "https://www.opentable.com/"
    assert run.steps[1].page is not None and run.steps[1].page.url_after == "about:blank"
    assert [s.frame_pre for s in run.steps] == [f"inline/frame-{i:04d}.png" for i in range(13)]
    assert [s.action.type for s in run.steps[:-1]].count("WAIT") == 3  # the harness's `none`: a reply not parsed
    # the closing `stop [Early stop: ...]` is the harness's own stop (harness_stop), not the agent's answer
    last = run.steps[-1].action
    assert (last.type, last.extra["harness_stop"]) == ("WAIT", "Early stop: Failed to parse actions for 3 times")
