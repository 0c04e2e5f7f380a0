"""Issue 38: four harness log shapes, made from their descriptions, read in full through a hand-written mapping
(docs/mappings/) and through `draft-mapping` with no edit."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.cli.main import app
from trajcheck.commands import draft_mapping
from trajcheck.readers.mapping.reach import measure

import mapping_shapes as shapes
from conftest import ROOT

MAPS = ROOT / "docs" / "mappings"
SHAPES = {"ui-tars-chat": shapes.ui_tars_chat, "phone-agent": shapes.phone_agent,
          "actions-log": shapes.actions_log, "tool-call-strings": shapes.tool_call_strings}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_is_read_in_full_through_its_mapping(tmp_path, name):
    want = SHAPES[name](tmp_path / "runs")
    cov = measure([tmp_path / "runs"], MAPS / f"{name}.toml")
    assert (cov.runs_found, cov.runs_read, cov.actions, cov.understood) == (
        want["runs"], want["runs"], want["actions"], want["actions"]), cov.to_json()
    assert (cov.screenshots, cov.screenshots_used, cov.frames_missing) == (want["screenshots"],) * 2 + (0,)
    res = trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=MAPS / f"{name}.toml")
    assert res.scored == want["runs"] and not res.invalid


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_is_read_in_full_through_a_drafted_mapping_with_no_edit(tmp_path, name):
    want = SHAPES[name](tmp_path / "runs")
    d = draft_mapping(tmp_path / "runs", check=True)
    assert d.coverage is not None
    got = d.coverage
    assert (got["runs_found"], got["runs_read"], got["actions"], got["actions_understood"]) == (
        want["runs"], want["runs"], want["actions"], want["actions"]), d.text
    assert (got["screenshots"], got["screenshots_found"], got["frames_not_there"]) == (want["screenshots"],) * 2 + (0,)
    assert d.scored == want["runs"] and d.invalid == 0


@pytest.mark.slow
def test_ui_tars_chat_steps_are_the_assistant_turns_with_the_named_images(tmp_path):
    shapes.ui_tars_chat(tmp_path / "runs", runs=1)
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=MAPS / "ui-tars-chat.toml")
    st = trajcheck.steps(tmp_path / "L").sort_values("step_index").to_dict("records")
    assert [s["action_type"] for s in st] == ["CLICK", "TYPE", "KEY_PRESS", "SCROLL", "DONE"]
    assert (st[0]["frame_pre"], st[0]["frame_post"]) == ("image_0001.png", "image_0002.png")
    assert st[1]["action_text"] == "hello world" and st[2]["action_keys"] == "ctrl+s"
    assert st[0]["reasoning"] == "The settings icon is at the top."
    # smart-resize of 1280x800 is 1288x812: (100, 200) in it is (99.4, 197.0) on the screenshot
    assert (st[0]["action_x"], st[0]["action_y"]) == (99.4, 197.0)
    run = trajcheck.runs(tmp_path / "L").iloc[0]
    assert run["goal"] == "Rename the file to hello world and save it." and run["coord_space"] == "smart-resize"


@pytest.mark.slow
def test_phone_runs_in_nested_folders_get_their_path_as_run_id_and_frames_by_key(tmp_path):
    shapes.phone_agent(tmp_path)
    res = trajcheck.score([tmp_path / "results"], out=tmp_path / "L", mapping=MAPS / "phone-agent.toml")
    assert res.scored == 5 and not res.invalid  # Gmail/1 and Maps/1 do not collide
    runs = trajcheck.runs(tmp_path / "L")
    assert sorted(runs["run_id"]) == ["Gmail/1", "Gmail/2", "Gmail/3", "Maps/1", "Maps/2"]
    st = trajcheck.steps(tmp_path / "L")
    g3 = st[st["run_id"] == "Gmail/3"].sort_values("step_index").to_dict("records")
    assert [s["action_type"] for s in g3] == ["NAVIGATE", "CLICK", "TYPE", "SCROLL", "NAVIGATE", "CLICK", "DONE"]
    assert g3[0]["action_text"] == "Chrome" and g3[2]["action_text"] == "alice@example.com"
    assert pd.isna(g3[1]["action_text"])  # `text` is for TYPE and NAVIGATE only: the clicked label is not typed
    assert (g3[0]["frame_pre"], g3[0]["frame_post"], g3[-1]["frame_post"]) == ("1.jpg", "2.jpg", "8.jpg")


@pytest.mark.slow
def test_validate_with_a_mapping_reports_the_run_ids_score_would_reject(tmp_path):
    shapes.phone_agent(tmp_path)
    m = tmp_path / "same-id.toml"
    m.write_text((MAPS / "phone-agent.toml").read_text().replace('steps = "@"', 'steps = "@"\nrun_id = "\'x\'"'))
    res = CliRunner().invoke(app, ["validate", str(tmp_path / "results"), "--mapping", str(m), "--format", "json"])
    dup = [p for p in json.loads(res.stdout)["problems"] if p["slug"] == "duplicate_run_id"]
    assert res.exit_code == 1 and len(dup) == 4 and dup[0]["run"] == "x"
    scored = trajcheck.score([tmp_path / "results"], out=tmp_path / "L", mapping=m)
    assert len(scored.invalid) == 4  # what validate reported is what score rejects


@pytest.mark.slow
def test_a_recorded_outcome_beside_the_runs_is_the_evaluator(tmp_path):
    """The harness stops when its own state check passes: no run ends with DONE, and the recorded success (not
    the no-answer rule) decides, as a benchmark's evaluator does."""
    want = shapes.actions_log(tmp_path)
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=MAPS / "actions-log.toml")
    runs = trajcheck.runs(tmp_path / "L").set_index("run_id")
    assert dict(runs["eval_final_verdict"]) == {"rename_baseline": "pass", "rename_verifier": "pass",
                                                "upload_baseline": "fail", "upload_verifier": "pass"}
    assert set(runs["verdict_source"]) == {"evaluator"} and (runs["eval_final_verdict"] == "pass").sum() == want["passed"]
    st = trajcheck.steps(tmp_path / "L")
    click = st[(st["run_id"] == "rename_baseline") & (st["step_index"] == 1)].iloc[0]  # numbered from 1
    assert (click["action_x"], click["action_y"], click["frame_pre"], click["frame_post"]) == (
        251.0, 37.0, "step_01.png", "step_01_action.png")


@pytest.mark.slow
def test_points_in_a_declared_model_space_are_scaled_to_the_screenshot(tmp_path):
    shapes.tool_call_strings(tmp_path / "runs")
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=MAPS / "tool-call-strings.toml")
    st = trajcheck.steps(tmp_path / "L")
    st = st[st["run_id"] == "episode_0"].sort_values("step_index").to_dict("records")
    assert [s["action_type"] for s in st] == ["CLICK", "TYPE", "KEY_PRESS", "CLICK"]
    assert (st[0]["action_x"], st[0]["action_y"]) == (362.5, 221.2)  # (290, 177) x 1.25
    assert st[0]["reasoning"] == "I open the menu." and st[1]["action_text"] == "weather"
    assert (st[0]["frame_pre"], st[-1]["frame_post"]) == ("trajectory/1.png", "trajectory/5.png")
    run = trajcheck.runs(tmp_path / "L").set_index("run_id").loc["episode_0"]
    assert run["coord_space"] == "model" and run["goal"] == "Find the weather"


@pytest.mark.slow
def test_draft_mapping_command_prints_toml_and_checks(tmp_path):
    shapes.actions_log(tmp_path)
    res = CliRunner().invoke(app, ["draft-mapping", str(tmp_path / "runs"), "--check"])
    assert res.exit_code == 0, res.output
    import tomllib

    drafted = tomllib.loads(res.stdout)
    assert drafted["outcome"]["success"] == "success" and drafted["step"]["types"]["left_click"] == "CLICK"
    assert "actions understood: 15 of 15 (100%)" in res.stderr and "screenshots found: 30 of 30 (100%)" in res.stderr
    res = CliRunner().invoke(app, ["draft-mapping", str(tmp_path / "runs"), "--format", "json"])
    assert json.loads(res.stdout)["runs"] == 4
    empty = tmp_path / "empty"
    empty.mkdir()
    assert CliRunner().invoke(app, ["draft-mapping", str(empty)]).exit_code == 3
    assert CliRunner().invoke(app, ["draft-mapping", str(tmp_path / "nowhere")]).exit_code == 3


def test_a_text_log_of_bracketed_actions_with_two_pairs_a_line_is_drafted(tmp_path):
    """Lines with no step number (`[Click] Screen Resolution (320, 720), Click Position (204, 170)`): each is a
    step, the last pair is the point (an UNSURE note says so), N.png is the screen before step N."""
    d = tmp_path / "runs" / "trace_1"
    d.mkdir(parents=True)
    (d / "eventStructs.txt").write_text("[Home]\n[Click] Screen Resolution (320, 720), Click Position (204, 170)\n"
                                        "[Click] Screen Resolution (320, 720), Click Position (150, 260)\n")
    for i in range(4):
        shapes.shot(d / f"{i}.png", i)
    drafted = draft_mapping(tmp_path / "runs", check=True)
    assert drafted.coverage is not None
    c = drafted.coverage
    assert (c["runs_read"], c["actions"], c["actions_understood"], c["screenshots"], c["screenshots_found"]) == (
        1, 3, 3, 4, 4), drafted.text
    assert any("several (x, y) pairs" in u for u in drafted.unsure)
    m = tmp_path / "m.toml"
    m.write_text(drafted.text)
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=m)
    st = trajcheck.steps(tmp_path / "L").sort_values("step_index")
    assert list(zip(st["action_type"], st["action_x"].fillna(-1))) == [("KEY_PRESS", -1), ("CLICK", 204.0),
                                                                       ("CLICK", 150.0)]


@pytest.mark.slow
def test_mapped_runs_number_their_steps_from_1_as_native_runs_do(tmp_path):
    """A mapped run's first step is step 1, as in a native run's steps.jsonl (issue 46: they started at 0)."""
    shapes.actions_log(tmp_path)
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=MAPS / "actions-log.toml")
    st = trajcheck.steps(tmp_path / "L")
    for _, run in st.groupby("run_id"):
        assert sorted(run["step_index"]) == list(range(1, len(run) + 1))
