"""Issue 38 part 3: readers chosen by structure. A reader claims a folder by the shape of a log's parsed data,
never by a substring; no built-in reader claims a log of another reader's shape; where two claim, the better fit
reads it and a note says so; `formats --detect` says why each reader did or did not claim each folder; every
problem and the score summary name the reader; `validate` takes --input-format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from trajcheck.cli.main import app
from trajcheck.readers.discovery import discover, readers
from trajcheck.readers.kit.reader import BY_SHAPE

from conftest import ROOT, SAMPLES

FIXTURES = ROOT / "tests" / "fixtures"


def _png(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 40), (200, 200, 200)).save(path)


def uitars_chat(d: Path) -> Path:
    """A UI-TARS-1.5 rollout saved as a chat list (the issue's first row): system, user and assistant messages;
    assistant turns in UI-TARS's grammar; user turns name the next screenshot, which sits beside the log."""
    d.mkdir(parents=True)
    msgs: list[dict] = [{"role": "system", "content": "You are a GUI agent.\nThought: ...\nAction: ..."},
                        {"role": "user", "content": [{"type": "text", "text": "Open the settings page"},
                                                     {"type": "image", "image": "image_0001"}]}]
    for i, call in enumerate(["click(start_box='<|box_start|>(120,340)<|box_end|>')", "type(content='hello')",
                              "finished(content='done')"], start=2):
        msgs.append({"role": "assistant", "content": f"Thought: step {i}.\nAction: {call}"})
        msgs.append({"role": "user", "content": [{"type": "image", "image": f"image_{i:04d}"}]})
    (d / "final_messages.json").write_text(json.dumps(msgs, indent=1))
    for i in (1, 2, 3):
        _png(d / f"image_{i:04d}.png")
    return d


def python_literal_result(d: Path) -> Path:
    """A result.json whose steps are strings holding a thought and a Python-literal list of tool calls, with
    'action_type' inside a string (the issue's fourth row), and screenshots trajectory/N.png by position."""
    d.mkdir(parents=True)
    calls = ("[{'name': 'computer', 'input': {'action': 'left_click', 'coordinate': [290, 177]}, 'id': 'toolu_01', "
             "'type': 'tool_use', 'meta': {'action_type': 'click'}}]")
    steps = [f"I click the search box.\n<action>{calls}</action>",
             "I type the query.\n<action>[{'name': 'computer', 'input': {'action': 'type', 'text': 'news'}}]</action>"]
    (d / "result.json").write_text(json.dumps({"task": "Search for news", "steps": steps, "success": True}))
    for i in (1, 2):
        _png(d / "trajectory" / f"{i}.png")
    return d


def _fixture_runs() -> list[tuple[Path, str]]:
    """Every run under tests/fixtures that a built-in reader claims, with that reader."""
    refs, _ = discover([FIXTURES])
    return [(r.run_dir, r.reader) for r in refs]


def test_every_fixture_is_claimed_by_its_own_reader_and_by_no_other():
    runs = _fixture_runs()
    found = {reader for _, reader in runs}
    # the adapters whose runs are fixtures here (webvoyager's and browsergym's live in ../shared/realruns)
    assert {"anthropic-messages", "browser-use", "openai-responses", "osworld", "playwright-trace",
            "ui-tars"} <= found, found
    for run_dir, reader in runs:
        others = [(r.name, c.why) for r in readers() if r.name != reader for c in (r.judge(run_dir),) if c.claimed]
        assert others == [], (run_dir.relative_to(FIXTURES), reader, others)


def test_the_two_logs_ui_tars_claimed_are_not_claimed(tmp_path):
    chat = uitars_chat(tmp_path / "chat" / "rollout-1")
    literal = python_literal_result(tmp_path / "literal" / "task-1")
    ui_tars = next(r for r in readers() if r.name == "ui-tars")
    for d in (chat, literal):
        c = ui_tars.judge(d)
        assert not c.claimed, (d.name, c.why)
        assert [r.name for r in readers() if r.judge(d).claimed] == [], d.name  # no reader reads them
    assert "final_messages.json is a list of 8 items (keys content, role)" in ui_tars.judge(chat).why
    assert "result.json is an object with keys task, steps, success" in ui_tars.judge(literal).why
    # discovery names the folder, never reads it with the wrong reader
    for root in (tmp_path / "chat", tmp_path / "literal"):
        refs, problems = discover([root])
        assert refs == [] and [p.slug for p in problems] == ["no_reader_claims"], problems


def test_a_log_that_names_a_shape_only_inside_strings_is_not_claimed(tmp_path):
    """The words alone ("tool_use", "computer_call", "start_box") inside strings claim nothing."""
    d = tmp_path / "notes"
    d.mkdir()
    (d / "notes.json").write_text(json.dumps({"text": 'we saw "type": "tool_use", "name": "computer" and '
                                              '"computer_call" and start_box=\'(1,2)\' in the logs',
                                              "role": "assistant"}))
    assert [r.name for r in readers() if r.judge(d).claimed] == []


def test_the_better_fit_reads_a_folder_two_readers_claim_and_a_note_says_so(tmp_path):
    d = tmp_path / "both"
    shutil.copytree(FIXTURES / "ui_tars" / "workspace", d)
    (d / "interact_messages.json").write_text("[]")  # WebVoyager's file name: a claim by name only
    refs, problems = discover([tmp_path])
    assert [(r.display, r.reader) for r in refs] == [("both", "ui-tars")]
    [note] = [p for p in problems if p.slug == "readers_compete"]
    assert note.severity == "warning"
    assert "2 readers claim" in note.message and "ui-tars reads it" in note.message and "webvoyager" in note.message
    assert next(r for r in readers() if r.name == "ui-tars").judge(d).fit == BY_SHAPE


def test_formats_detect_says_why_each_reader_did_or_did_not_claim(tmp_path):
    uitars_chat(tmp_path / "logs" / "chat")
    shutil.copytree(FIXTURES / "ui_tars" / "workspace", tmp_path / "logs" / "ws")
    res = CliRunner().invoke(app, ["formats", "--detect", str(tmp_path / "logs"), "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    by = {(r["folder"], r["reader"]): r for r in rows}
    assert {f for f, _ in by} == {".", "chat", "ws"}
    assert {r for f, r in by if f == "chat"} == {x.name for x in readers()}  # every reader looked
    ws = by[("ws", "ui-tars")]
    assert ws["reads"] is True and "session.json is a UI-TARS session log" in ws["why"]
    assert by[("chat", "ui-tars")]["claims"] is False and "not a UI-TARS log" in by[("chat", "ui-tars")]["why"]
    assert not any(r["reads"] for r in rows if r["folder"] == "chat")
    assert by[("chat", "webvoyager")]["why"] == "no interact_messages.json"
    table = CliRunner().invoke(app, ["formats", "--detect", str(tmp_path / "logs")])
    assert table.exit_code == 0 and "ui-tars" in table.stdout
    one = CliRunner().invoke(app, ["formats", "ui-tars", "--detect", str(tmp_path / "logs"), "--format", "json"])
    assert {r["reader"] for r in json.loads(one.stdout)} == {"ui-tars"}


def test_validate_takes_input_format_and_every_problem_names_its_reader(tmp_path):
    d = tmp_path / "runs" / "ws"
    shutil.copytree(FIXTURES / "ui_tars" / "macos-session", d)
    native = shutil.copytree(SAMPLES / "nc-inbox-read", tmp_path / "runs" / "native")
    steps = (native / "steps.jsonl").read_text().splitlines()
    first = json.loads(steps[0])
    first["action"]["type"] = "FROBNICATE"  # an action type no format knows: a warning of the native reader
    (native / "steps.jsonl").write_text("\n".join([json.dumps(first), *steps[1:]]) + "\n")
    res = CliRunner().invoke(app, ["validate", str(tmp_path / "runs"), "--format", "json"])
    report = json.loads(res.stdout)
    assert report["runs"] == 2 and report["problems"]
    readers_named = {p["run"]: p["reader"] for p in report["problems"]}
    assert readers_named == {"nc-inbox-read": "trajcheck.run/1", "ws": "ui-tars"}, report["problems"]
    # forced: only that reader is asked, as score --input-format does
    forced = CliRunner().invoke(app, ["validate", str(tmp_path / "runs"), "--input-format", "ui-tars",
                                      "--format", "json"])
    assert json.loads(forced.stdout)["runs"] == 1
    bad = CliRunner().invoke(app, ["validate", str(tmp_path / "runs"), "--input-format", "nope"])
    assert bad.exit_code == 2 and "unknown input format 'nope'" in bad.output


def test_the_score_summary_names_the_readers(tmp_path):
    shutil.copytree(FIXTURES / "ui_tars" / "workspace", tmp_path / "runs" / "ws")
    native = shutil.copytree(SAMPLES / "nc-inbox-read", tmp_path / "runs" / "native")
    steps = (native / "steps.jsonl").read_text().splitlines()
    first = json.loads(steps[0])
    first["action"]["type"] = "FROBNICATE"  # an action type no format knows: a warning of the native reader
    (native / "steps.jsonl").write_text("\n".join([json.dumps(first), *steps[1:]]) + "\n")
    res = CliRunner().invoke(app, ["score", str(tmp_path / "runs"), "--out", str(tmp_path / "L"), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "read by: " in res.output and "ui-tars 1" in res.output and "trajcheck.run/1 1" in res.output
    from trajcheck.scoring.pipeline import score_paths

    rows = {r.run["run_id"]: r.run for r in score_paths([tmp_path / "runs"], jobs=1).results}
    assert rows["nc-inbox-read"]["warnings"][0].startswith("run nc-inbox-read (read by trajcheck.run/1), steps.jsonl")


@pytest.mark.realruns
def test_no_reader_claims_a_real_run_of_another_reader():
    """The same cross-check on the recorded third-party runs (WebVoyager, BrowserGym, browser-use)."""
    from conftest import REALRUNS

    if not REALRUNS.is_dir():
        pytest.skip("../shared/realruns is absent (a user's clone has none)")
    refs, _ = discover([REALRUNS])
    assert {"webvoyager", "browsergym", "browser-use"} <= {r.reader for r in refs}
    for ref in refs:
        others = [r.name for r in readers() if r.name != ref.reader and r.judge(ref.run_dir).claimed]
        assert others == [], (ref.display, ref.reader, others)


def test_between_equal_fits_the_reader_asked_first_reads_and_the_note_says_so(tmp_path):
    d = tmp_path / "two-names"
    d.mkdir()
    (d / "interact_messages.json").write_text("[]")  # WebVoyager's file name
    (d / "trace.zip").write_bytes(b"")  # a Playwright trace's
    refs, problems = discover([tmp_path])
    assert [r.reader for r in refs] == ["webvoyager"]
    [note] = [p for p in problems if p.slug == "readers_compete"]
    assert "webvoyager reads it (interact_messages.json is there), asked first among equal fits" in note.message
    assert "also playwright-trace: trace.zip is there" in note.message
