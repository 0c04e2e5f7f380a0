"""The browser-use reader: the real 2024 history mapped exactly, the newer shape, bad input located."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from trajcheck.readers import discovery
from trajcheck.readers.adapters import ALL
from trajcheck.readers.adapters.browser_use.reader import READER
from trajcheck.base.errors import RunFormatError
from trajcheck.scoring.pipeline import score_paths

REALRUNS = Path(__file__).resolve().parents[2] / "shared" / "realruns"
BU = REALRUNS / "browser-use"
ELON = "AgentHistoryList_elon_musk"


@pytest.fixture
def adapters(monkeypatch):
    have = {r.name for r in discovery.READERS}
    monkeypatch.setattr(discovery, "READERS", discovery.READERS + [r for r in ALL if r.name not in have])


def _real() -> Path:
    if not BU.is_dir():
        pytest.skip(f"{BU} is not present")
    return BU / ELON


# --- the real run --------------------------------------------------------------------------------

@pytest.mark.realruns
def test_real_history_maps_actions_inline_frames_and_urls():
    d = _real()
    assert READER.claims(d) and not READER.claims(BU)
    run, warnings = READER.read(d, d.name)
    assert warnings == []
    assert (run.source_format, run.run_id, run.outcome_status) == ("browser-use", ELON, "done")
    acts = [(s.action.type, s.action.element, s.action.url, s.action.text) for s in run.steps]
    assert acts == [
        ("NAVIGATE", None, "https://www.google.com/search?q=elon%20musk", "elon musk"),
        ("CLICK", "40", None, None),
        ("CLICK", "97", None, None),
        ("DONE", None, None, "The first search result for 'Elon Musk' on Wikipedia was clicked and opened successfully."),
    ]
    assert run.steps[1].action.extra["element"] == 40
    names = [f"inline/step-{i:04d}.png" for i in range(4)]
    assert [(s.frame_pre, s.frame_post) for s in run.steps] == [
        (names[0], names[1]), (names[1], names[2]), (names[2], names[3]), (names[3], None)]
    assert sorted(run.inline_frames) == names
    assert all(b.startswith(b"\x89PNG") for b in run.inline_frames.values())
    assert Image.open(io.BytesIO(run.inline_frames[names[1]])).size == (1280, 1024)
    assert [(s.page.url_before, s.page.url_after) for s in run.steps] == [
        ("about:blank", "https://www.google.com/search?q=elon%20musk"),
        ("https://www.google.com/search?q=elon%20musk", "https://www.google.com/search?q=elon%20musk"),
        ("https://www.google.com/search?q=elon%20musk", "https://de.wikipedia.org/wiki/Elon_Musk"),
        ("https://de.wikipedia.org/wiki/Elon_Musk", None)]
    assert run.steps[2].page.title_after == "Elon Musk – Wikipedia"
    assert run.steps[0].reasoning == "Eval: Unknown\nNext goal: Search for 'elon musk' on Google."
    assert run.steps[1].extra["extracted_content"].endswith("Clicked element 40: //div[2]/div[3]/span[1]/div[1]/div[1]"
                                                            "/div[1]/div[3]/div[1]/button[2]")
    assert "Alle akzeptieren" in run.steps[1].extra["interacted_element"]["text"]
    assert all(s.executor_ok is True for s in run.steps)
    assert [s.line for s in run.steps] == [3, 35, 984, 2277]


@pytest.mark.realruns
def test_real_history_scores_ok(adapters):
    if not BU.is_dir():
        pytest.skip(f"{BU} is not present")
    [res] = score_paths([BU], jobs=1, input_format="browser-use").results
    assert res.run["status"] == "ok" and res.run["warnings"] == []
    assert (res.run["n_steps"], res.run["n_frames"], res.run["source_format"]) == (4, 4, "browser-use")
    assert [s["frame_width"] for s in res.steps] == [1280, 1280, 1280, None]  # the final step has no post frame


# --- the newer shape, built in tmp_path -----------------------------------------------------------

def _png(path: Path, color: tuple[int, int, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 48), color).save(path)


def _b64png(color: tuple[int, int, int]) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (32, 24), color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _new_item(actions: list[dict], results: list[dict], url: str, shot: str | None) -> dict:
    return {"model_output": {"thinking": "think", "evaluation_previous_goal": "ok", "memory": "m",
                             "next_goal": "next", "action": actions},
            "result": results,
            "state": {"url": url, "title": url, "tabs": [], "interacted_element": [None] * len(actions),
                      "screenshot_path": shot},
            "metadata": {"step_start_time": 1.0, "step_end_time": 2.0, "step_number": 1}}


def _make_new(root: Path) -> Path:
    d = root / "bu_run"
    d.mkdir(parents=True)
    for i in range(3):
        _png(d / "screenshots" / f"step_{i}.png", (i * 80, 0, 0))
    history = [
        _new_item([{"navigate": {"url": "https://a.example/", "new_tab": False}}], [{"is_done": False}],
                  "about:blank", "screenshots/step_0.png"),
        _new_item([{"input": {"index": 3, "text": "cats"}}, {"click": {"index": 4}}],
                  [{"is_done": False}, {"is_done": False, "error": "Element index 4 not found"}],
                  "https://a.example/", "screenshots/step_1.png"),
        _new_item([{"done": {"text": "no cats", "success": False}}],
                  [{"is_done": True, "success": False, "extracted_content": "no cats",
                    "judgement": {"verdict": False, "reasoning": "gave up", "failure_reason": "element missing"}}],
                  "https://a.example/", "screenshots/step_2.png"),
    ]
    (d / "AgentHistory.json").write_text(json.dumps({"history": history}, indent=2))
    return d


def test_newer_shape_multi_actions_errors_and_judgement(tmp_path):
    d = _make_new(tmp_path)
    run, warnings = READER.read(d, d.name)
    assert warnings == []
    assert [(s.action.type, s.action.element, s.extra["history_index"]) for s in run.steps] == [
        ("NAVIGATE", None, 0), ("TYPE", "3", 1), ("CLICK", "4", 1), ("DONE", None, 2)]
    nav, typ, click, done = run.steps
    # a two-action item: both see the same pre frame, only the last one gets the post frame
    assert (typ.frame_pre, typ.frame_post) == ("screenshots/step_1.png", None)
    assert (click.frame_pre, click.frame_post) == ("screenshots/step_1.png", "screenshots/step_2.png")
    assert (click.executor_ok, click.executor_error) == (False, "Element index 4 not found")
    assert typ.executor_ok is True
    assert click.page.url_after == "https://a.example/" and typ.page.url_after is None
    assert nav.reasoning == "Thinking: think\nEval: ok\nMemory: m\nNext goal: next"
    assert done.action.extra["infeasible"] is True and done.extra["extracted_content"] == "no cats"
    assert run.outcome_status == "done"
    assert (run.judge.verdict, run.judge.reasons) == ("fail", ("gave up", "element missing"))


def test_absolute_screenshot_path_is_relocated_or_refused(tmp_path):
    d = _make_new(tmp_path)
    data = json.loads((d / "AgentHistory.json").read_text())
    data["history"][0]["state"]["screenshot_path"] = "/tmp/browser_use_agent_x/screenshots/step_0.png"
    data["history"][1]["state"]["screenshot_path"] = "../../etc/passwd"
    (d / "AgentHistory.json").write_text(json.dumps(data, indent=2))
    run, warnings = READER.read(d, d.name)
    assert [(w.slug, w.field) for w in warnings] == [
        ("screenshot_relocated", "history[0].state.screenshot_path"),
        ("path_escapes_run", "history[1].state.screenshot_path")]
    assert run.steps[0].frame_pre == "screenshots/step_0.png"
    assert run.steps[0].frame_post is None and run.steps[1].frame_pre is None


# --- bad input ------------------------------------------------------------------------------------

def test_truncated_history_is_invalid_with_file_and_line(tmp_path):
    d = _make_new(tmp_path)
    text = (d / "AgentHistory.json").read_text()
    (d / "AgentHistory.json").write_text(text[: len(text) * 2 // 3])
    with pytest.raises(RunFormatError) as exc:
        READER.read(d, d.name)
    p = exc.value.problems[0]
    assert (p.slug, p.file, p.run) == ("json_invalid", "AgentHistory.json", "bu_run")
    assert p.line is not None and p.line > 10


def test_missing_screenshot_is_one_located_warning(tmp_path, adapters):
    d = _make_new(tmp_path)
    (d / "screenshots" / "step_1.png").unlink()
    run, warnings = READER.read(d, d.name)
    assert warnings == []  # the reader keeps the path: scoring reports the missing file, once
    [res] = score_paths([d], jobs=1, input_format="browser-use").results
    assert res.run["status"] == "ok"
    [w] = [x for x in res.run["warnings"] if "step_1.png" in x]
    assert "file not found" in w and w.endswith("[frames_missing]")
    assert f", AgentHistory.json:{run.steps[0].line}, field frames.post: " in w  # its first use


def test_unparseable_action_is_unknown_with_raw_entry(tmp_path):
    d = _make_new(tmp_path)
    data = json.loads((d / "AgentHistory.json").read_text())
    data["history"][0]["model_output"]["action"] = [{"navigate": {"url": "x"}, "click": {"index": 1}}]
    (d / "AgentHistory.json").write_text(json.dumps(data, indent=2))
    run, warnings = READER.read(d, d.name)
    [w] = warnings
    assert (w.slug, w.field, w.severity) == ("action_unparsed", "history[0].model_output.action[0]", "warning")
    assert w.line == 3
    assert run.steps[0].action.type == "UNKNOWN"
    assert run.steps[0].action.extra["raw"] == {"navigate": {"url": "x"}, "click": {"index": 1}}


def test_inline_base64_and_bad_base64(tmp_path):
    d = tmp_path / "inline_run"
    d.mkdir()
    history = [{"model_output": {"current_state": {"evaluation_previous_goal": "", "memory": "", "next_goal": "go"},
                                 "action": {"scroll_down": {"amount": None}}},
                "result": {"is_done": False}, "state": {"url": "u", "title": "t", "screenshot": _b64png((1, 2, 3))}},
               {"model_output": {"current_state": {"next_goal": "stop"}, "action": {"done": {"text": "ok"}}},
                "result": {"is_done": True}, "state": {"url": "u", "title": "t", "screenshot": "not base64!!"}}]
    (d / "AgentHistoryList.json").write_text(json.dumps({"history": history}, indent=2))
    run, warnings = READER.read(d, d.name)
    assert [(w.slug, w.field) for w in warnings] == [("frame_unreadable", "history[1].state.screenshot")]
    assert run.steps[0].action.type == "SCROLL" and run.steps[0].action.extra["direction"] == "down"
    assert (run.steps[0].frame_pre, run.steps[0].frame_post) == ("inline/step-0000.png", None)
    assert list(run.inline_frames) == ["inline/step-0000.png"]


def test_claims_skip_native_runs(tmp_path):
    d = tmp_path / "both"
    d.mkdir()
    (d / "AgentHistoryList.json").write_text('{"history": []}')
    assert READER.claims(d)
    (d / "run.json").write_text("{}")
    assert not READER.claims(d)


def test_validate_reads_inline_frames_instead_of_looking_for_files(tmp_path, adapters):
    from trajcheck.scoring.validation import validate_paths

    d = tmp_path / "inline_ok"
    d.mkdir()
    history = [{"model_output": {"current_state": {"next_goal": "go"}, "action": {"scroll_down": {"amount": None}}},
                "result": {"is_done": False}, "state": {"url": "u", "title": "t", "screenshot": _b64png((1, 2, 3))}},
               {"model_output": {"current_state": {"next_goal": "stop"}, "action": {"done": {"text": "ok"}}},
                "result": {"is_done": True}, "state": {"url": "u", "title": "t", "screenshot": _b64png((9, 9, 9))}}]
    (d / "AgentHistoryList.json").write_text(json.dumps({"history": history}))
    report = validate_paths([d])
    assert report.runs == 1
    assert not [p for p in report.problems if p.slug.startswith("frame")], [str(p) for p in report.problems]


# --- the newer shape, constructed from browser-use's writer code (tests/fixtures/browser_use_new) ----------

NEW = Path(__file__).resolve().parent / "fixtures" / "browser_use_new" / "recipe-search"


def test_newer_shape_fixture_maps_points_frames_and_outcome(tmp_path):
    run, warnings = READER.read(NEW, NEW.name)
    assert [w.slug for w in warnings] == ["screenshot_relocated"] * 3
    assert [s.action.type for s in run.steps] == ["NAVIGATE", "TYPE", "CLICK", "DONE"]
    nav, typ, click, done = run.steps
    # a point from the interacted element's bounds: the centre of the box
    b = click.extra["interacted_element"]["bounds"]
    assert (click.action.x, click.action.y) == (round(b["x"] + b["width"] / 2, 1), round(b["y"] + b["height"] / 2, 1))
    assert click.action.extra["point_from"] == "interacted_element.bounds"
    assert typ.action.text == "lentil soup" and typ.action.has_point
    assert nav.action.url == "http://recipes.test/" and not nav.action.has_point
    assert (typ.frame_pre, typ.frame_post) == ("screenshots/step_2.png", None)
    assert (click.frame_pre, click.frame_post) == ("screenshots/step_2.png", "screenshots/step_3.png")
    assert click.page.url_after.startswith("http://recipes.test/results")
    assert run.outcome_status == "done" and done.extra["extracted_content"] == "3 recipes found"
    assert "Thinking: The search box" in typ.reasoning


def test_newer_shape_submit_is_checked_around_its_point(tmp_path, adapters):
    report = score_paths([NEW], jobs=1)
    [res] = report.results
    assert res.ok
    click = next(s for s in res.steps if s["action_type"] == "CLICK")
    assert click["effect_high_risk"] and click["effect_point"] == "in_frame"
    assert click["action_effect_observed"] is True  # the results page replaced the form
