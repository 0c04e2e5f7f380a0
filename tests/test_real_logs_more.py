"""Real logs of harnesses trajcheck had never seen (issue 47, item 6), read as a new user would: a built-in
reader, else `draft-mapping` with no edit. Each fixture's provenance and the format its harness writes are in
tests/fixtures/real/<harness>/PROVENANCE.md; the figures and problems are in docs/real-logs.md.

The plain tests assert what trajcheck reads today. Where that is not the truth, an `xfail(strict=True)` test
asserts the truth, naming the issue item whose fix turns it green."""

from __future__ import annotations

import json

import pytest

import trajcheck
from trajcheck.api import NoRunsFound
from trajcheck.commands import draft_mapping
from trajcheck.readers.mapping.reach import measure

from conftest import ROOT

REAL = ROOT / "tests" / "fixtures" / "real"

# --- VisualWebArena: render_<task>.html, one block a step, screenshots embedded as base64 PNG -------------------

VWA = REAL / "visualwebarena"


def test_visualwebarena_render_is_claimed_by_no_reader_and_the_folder_is_named(tmp_path):
    with pytest.raises(NoRunsFound):
        trajcheck.score([VWA], out=tmp_path / "L")


def test_visualwebarena_render_drafted_in_full():
    # issue 47 item 4: the HTML log read as text, a step a block of lines, the embedded image its screenshot
    d = draft_mapping(VWA, check=True)
    assert d.coverage is not None
    c = d.coverage
    # 13 blocks: click, go_back, goto x5, new_tab x2, 3 unparsable replies (none), the harness's closing stop
    assert (c["runs_found"], c["runs_read"], c["actions"]) == (1, 1, 13), d.text
    assert c["actions_understood"] >= 12
    # each block's image is the screen before its action (rendered before env.step)
    assert (c["screenshots"], c["screenshots_found"], c["frames_not_there"]) == (13, 13, 0)


@pytest.mark.parametrize("how", ["hand", "draft"])
def test_visualwebarena_harness_early_stop_is_not_an_answer(tmp_path, how):
    # VisualWebArena's run.py writes its own early stop as an answer: `stop [Early stop: Failed to parse actions
    # for 3 times]` closes this run. The hand mapping says so (harness_stop, ends = "external"); the unedited
    # draft proposes harness_stop from the answer's words. Read as the agent's answer it was a false claim.
    m = ROOT / "docs" / "mappings" / "visualwebarena.toml"
    if how == "draft":
        m = tmp_path / "m.toml"
        m.write_text(draft_mapping(VWA).text)
    trajcheck.score([VWA], out=tmp_path / "L", mapping=m)
    runs = trajcheck.runs(tmp_path / "L")
    assert len(runs) == 1
    r = runs.iloc[0]
    assert (r["claimed_success"], r["claim_reason"], bool(r["false_claim"])) == (False, "no_done", False)
    assert json.loads(r["extra"])["harness_stop"] == {"step": 13,
                                                      "text": "Early stop: Failed to parse actions for 3 times"}
    # no recorded outcome (the evaluator raised: error.txt). The end of the run decides nothing (no no_answer
    # verdict); the screens do: from step 3 on every screenshot is a blank white page (checked by eye), the
    # table was not booked, and the evidence's fail (no_net_progress) is right.
    assert r["verdict_source"] != "no_answer"
    assert (r["eval_final_verdict"], r["verdict_source"], r["failure_detail"]) == ("fail", "evidence",
                                                                                   "no_net_progress")


# --- cua (trycua/cua): a desktop agent's trajectory folder, its items in metadata.json, a folder a turn ---------

CUA = REAL / "cua"
CUA_RUN = "2025-09-14_claude-opus-4-20_064925_5723"


def test_cua_trajectory_needs_no_mapping():
    # a built-in reader reads the folder; the draft says so instead of drafting a weaker mapping (issue 47 item 4)
    d = draft_mapping(CUA, check=True)
    assert d.reader == "openai-responses", d.text
    assert "No mapping is needed" in d.text


def test_cua_trajectory_read_in_full(tmp_path):
    # metadata.json's new_items are the run's OpenAI Responses items (before: claimed, then 0 steps, invalid)
    trajcheck.score([CUA], out=tmp_path / "L")
    runs = trajcheck.runs(tmp_path / "L")
    assert len(runs) == 1
    r = runs.iloc[0]
    assert (r["run_id"], r["source_format"], r["status"]) == (CUA_RUN, "openai-responses", "ok")
    assert r["goal"].startswith('ULTRA FAST: Search for "teddy bears" on Google Shopping')
    s = trajcheck.steps(tmp_path / "L").sort_values("step_index")
    # screenshot, click in the search box, ctrl+a, type, Return, the final message: 6 of 6 understood
    assert list(s["action_type"]) == ["WAIT", "CLICK", "KEY_PRESS", "TYPE", "KEY_PRESS", "DONE"]
    assert bool(s["action_known"].all())
    click = s.iloc[1]
    assert (click["action_x"], click["action_y"]) == (443, 154)
    # each action turn's screenshot_after is the screen after that action (agent.py shoots after the call):
    # the click's before is the first screenshot call's after, its after is its own turn's
    assert (click["frame_pre"], click["frame_post"]) == ("turn_001/0003_screenshot_after.png",
                                                         "turn_003/0008_screenshot_after.png")
    assert list(s["frame_post"])[1:5] == ["turn_003/0008_screenshot_after.png", "turn_005/0014_screenshot_after.png",
                                          "turn_007/0019_screenshot_after.png", "turn_009/0024_screenshot_after.png"]
    # points are the screenshot's own pixels (1512x857): checked by eye, the click is in the search box and
    # the harness's crosshair (screenshot_action.png) sits there; the tool's declared 1024x768 is a fallback
    assert (r["coord_space"], int(click["frame_width"])) == ("screenshot", 1512)


def test_cua_trajectory_verdict_is_not_wrong(tmp_path):
    # No recorded outcome (status "completed" says only that the loop returned). By eye the last screen shows
    # Google Shopping's results for "teddy bears": the task was done. trajcheck holds its verdict back
    # (unknown), takes the final message as a claim, and never fails the run.
    trajcheck.score([CUA], out=tmp_path / "L")
    r = trajcheck.runs(tmp_path / "L").iloc[0]
    assert (r["claimed_success"], bool(r["false_claim"])) == (True, False)
    # unknown, not pass: with no outcome and no contract the only word of success is the agent's own claim
    assert r["eval_final_verdict"] == "unknown"
    assert r["verdict_source"] != "no_answer"


# --- Midscene.js on Android: one JSON dump, the steps nested in executions[].tasks[], images by id ---------------

MIDSCENE = REAL / "midscene"
MIDSCENE_MAP = ROOT / "docs" / "mappings" / "midscene.toml"


def test_midscene_android_dump_is_claimed_by_no_reader(tmp_path):
    with pytest.raises(NoRunsFound):
        trajcheck.score([MIDSCENE], out=tmp_path / "L")


def test_midscene_android_dump_drafted_in_full(tmp_path):
    # Unedited, the draft takes the nested list of tasks (dump.executions[].tasks[]), keeps those of type 'Action
    # Space' (the planning calls left out), names their actions by subType, and finds each one's screen before
    # (uiContext.screenshot.id) and after (the recorder's after-calling screenshot) as ids into `images`. Failed
    # before: steps = 'dump.executions' (1 action, not understood, no screenshot).
    d = draft_mapping(MIDSCENE, check=True)
    c = d.coverage
    assert c is not None
    assert (c["runs_found"], c["runs_read"], c["actions"], c["actions_understood"]) == (1, 1, 8, 8), d.text
    assert (c["screenshots"], c["screenshots_found"], c["frames_not_there"]) == (13, 13, 0)
    assert "steps = \"dump.executions[].tasks[] | [?type=='Action Space']\"" in d.text
    assert "images = 'images'" in d.text and "screenshot = 'uiContext.screenshot.id'" in d.text
    assert "screenshot_after = \"recorder[?timing=='after-calling'] | [0].screenshot.id\"" in d.text
    # the closing call is DONE by its place alone, and too few clicks (6) to decide alignment or space: the
    # run's verdict is held (unknown; by eye the task was done, so unknown is not wrong)
    assert "'Print_Assert_Result' = 'DONE'    # UNSURE" in d.text
    assert "unsure = ['actions', 'alignment', 'coordinates']" in d.text
    assert d.verdicts == {"unknown": 1}
    # each screenshot on its step, as the hand mapping reads them (checked by eye: docs/real-logs.md)
    m = tmp_path / "drafted.toml"
    m.write_text(d.text)
    trajcheck.score([MIDSCENE], out=tmp_path / "D", mapping=m)
    trajcheck.score([MIDSCENE], out=tmp_path / "H", mapping=MIDSCENE_MAP)
    drafted = trajcheck.steps(tmp_path / "D").sort_values("step_index")
    hand = trajcheck.steps(tmp_path / "H").sort_values("step_index")
    assert list(drafted["action_type"]) == ["CLICK", "CLICK", "KEY_PRESS", "TYPE", "CLICK", "CLICK", "CLICK", "DONE"]
    assert [(int(x), int(y)) for x, y in zip(drafted["action_x"][:2], drafted["action_y"][:2])] == [(54, 316),
                                                                                                     (177, 104)]
    assert drafted.iloc[3]["action_text"] == "su7"
    for col in ("frame_pre", "frame_post"):
        assert list(drafted[col]) == list(hand[col]) and drafted[col].notna().all()
    assert trajcheck.runs(tmp_path / "D").iloc[0]["verdict_source"] != "no_answer"


def test_midscene_android_dump_hand_mapping_reads_every_action(tmp_path):
    trajcheck.score([MIDSCENE], out=tmp_path / "L", mapping=MIDSCENE_MAP)
    s = trajcheck.steps(tmp_path / "L").sort_values("step_index")
    assert list(s["action_type"]) == ["CLICK", "CLICK", "KEY_PRESS", "TYPE", "CLICK", "CLICK", "CLICK", "DONE"]
    assert bool(s["action_known"].all())
    # points in the screenshot's pixels (393x873, the phone's logical size): checked by eye on the images
    assert [(int(x), int(y)) for x, y in zip(s["action_x"][:2], s["action_y"][:2])] == [(54, 316), (177, 104)]
    assert s.iloc[3]["action_text"] == "su7"
    r = trajcheck.runs(tmp_path / "L").iloc[0]
    assert (r["claimed_success"], r["coord_space"]) == (True, "screenshot")
    # no recorded outcome and no contract: no verdict (by eye the task was done), never a no-answer fail
    assert r["eval_final_verdict"] == "unknown" and r["verdict_source"] != "no_answer"


def test_midscene_android_dump_hand_mapping_finds_the_screenshots(tmp_path):
    # each step's screen before (uiContext.screenshot.id) and after (the recorder's after-calling screenshot.id),
    # ids into the log's `images` map ([run] images): failed before (no field for an image named by id)
    r = measure([MIDSCENE], MIDSCENE_MAP)
    # 13 distinct images are named by the 8 actions (16 slots: a screen after one is the screen before the next
    # three times); the 7 others of the 20 are the planner's own screens
    assert (r.actions, r.understood, r.screenshots, r.screenshots_used, r.frames_missing) == (8, 8, 13, 13, 0)
    trajcheck.score([MIDSCENE], out=tmp_path / "L", mapping=MIDSCENE_MAP)
    s = trajcheck.steps(tmp_path / "L").sort_values("step_index")
    assert int(s["frame_pre"].notna().sum()) == 8 and int(s["frame_post"].notna().sum()) == 8
    # by eye (docs/real-logs.md): the icon tap's before is the home screen, its after the app's splash; the same
    # image is one frame: Input's after (su7 typed) is the search tap's before
    pre, post = list(s["frame_pre"]), list(s["frame_post"])
    assert post[1] == pre[2] and post[2] == pre[3] and post[3] == pre[4]
    assert len(set(pre) | set(post)) == 13
