"""Real logs of harnesses trajcheck has no reader for (tests/fixtures/real/*/PROVENANCE.md), read through
`draft-mapping` with no edit and through a hand-written mapping (docs/mappings/)."""

from __future__ import annotations

import pytest

import trajcheck
from trajcheck.commands import draft_mapping
from trajcheck.readers.mapping.reach import measure

from conftest import ROOT

REAL = ROOT / "tests" / "fixtures" / "real"
MAPS = ROOT / "docs" / "mappings"


@pytest.mark.slow
def test_screenagent_sessions_through_a_drafted_mapping_with_no_edit():
    d = draft_mapping(REAL / "screenagent", check=True)
    assert d.coverage is not None
    c = d.coverage
    assert (c["runs_found"], c["runs_read"], c["actions"], c["actions_understood"]) == (2, 2, 4, 4), d.text
    # 10 screenshots: 8 are the acting calls' (before) and the evaluating calls' (after); the 2 planning calls'
    # screens are used by no action
    assert (c["screenshots"], c["screenshots_found"], c["frames_not_there"]) == (10, 8, 0)
    assert "step_files_not = '*-*-*_*-*-*-*_neg_eval.json'" in d.text and "[?status=='acting']" in d.text


@pytest.mark.slow
def test_screenagent_sessions_through_the_hand_mapping(tmp_path):
    cov = measure([REAL / "screenagent"], MAPS / "screenagent.toml")
    assert (cov.runs_read, cov.actions, cov.understood, cov.screenshots_used, cov.frames_missing) == (2, 4, 4, 8, 0)
    res = trajcheck.score([REAL / "screenagent"], out=tmp_path / "L", mapping=MAPS / "screenagent.toml")
    assert res.scored == 2 and not res.invalid
    st = trajcheck.steps(tmp_path / "L").sort_values(["run_id", "step_index"]).to_dict("records")
    first = st[0]
    assert (first["action_type"], first["action_x"], first["action_y"]) == ("CLICK", 543.0, 133.0)
    assert (first["frame_pre"], first["frame_post"]) == ("images/2024-01-13_21-37-47-367890.jpg",
                                                         "images/2024-01-13_21-40-01-827822.jpg")
    assert st[1]["action_type"] == "TYPE" and st[1]["action_text"] == ")"
    runs = trajcheck.runs(tmp_path / "L").set_index("run_id")
    assert runs.loc["08a2def941d942ffb542ba0ba3d8aa99", "goal"] == "Find the wrong line of code and fix it"
    assert set(runs["coord_space"]) == {"screen"} and set(runs["screen_width"]) == {1024}


@pytest.mark.slow
def test_mobile_agent_results_through_a_drafted_mapping_with_no_edit():
    d = draft_mapping(REAL / "mobile-agent", check=True)
    assert d.coverage is not None
    c = d.coverage
    assert (c["runs_found"], c["runs_read"], c["actions"], c["actions_understood"]) == (2, 2, 12, 12), d.text
    assert (c["screenshots"], c["screenshots_found"], c["frames_not_there"]) == (12, 12, 0)


@pytest.mark.slow
def test_mobile_agent_results_through_the_phone_agent_mapping(tmp_path):
    res = trajcheck.score([REAL / "mobile-agent"], out=tmp_path / "L", mapping=MAPS / "phone-agent.toml")
    assert res.scored == 2 and not res.invalid
    assert sorted(trajcheck.runs(tmp_path / "L")["run_id"]) == ["results/Gmail/1", "results/Notes/2"]
    st = trajcheck.steps(tmp_path / "L")
    gmail = st[st["run_id"] == "results/Gmail/1"].sort_values("step_index").to_dict("records")
    assert [s["action_type"] for s in gmail] == ["NAVIGATE", "CLICK", "TYPE", "CLICK", "DONE"]
    assert gmail[2]["action_text"] == "junyangwang@bjtu.edu.cn" and gmail[0]["action_text"] == "Gmail"
    assert (gmail[0]["frame_pre"], gmail[0]["frame_post"], gmail[-1]["frame_pre"]) == ("1.jpg", "2.jpg", "5.jpg")


APPAGENT = REAL / "appagent"


def test_appagent_task_logs_through_a_drafted_mapping_with_no_edit():
    # JSON Lines under a .txt name; replies "Observation/Thought/Action: tap(6)/Summary"; the log names the
    # labelled copy of each screen, the screen as captured is beside it, and the screen after the last step is
    # the next-numbered file
    d = draft_mapping(APPAGENT, check=True)
    assert d.coverage is not None
    c = d.coverage
    assert (c["runs_found"], c["runs_read"], c["actions"], c["actions_understood"]) == (2, 2, 5, 5), d.text
    assert not c["not_read"] and not c["unknown_actions"]
    # 14 files, 7 screens (each with its labelled copy): every one is a step's frame
    assert (c["screenshots"], c["screenshots_found"], c["frames_not_there"]) == (7, 7, 0)
    assert c["actions_understood"] >= 0.9 * c["actions"] and c["screenshots_found"] >= 0.9 * c["screenshots"]
    assert "grammar = 'ui-tars'" in d.text and "'tap' = 'CLICK'" in d.text


@pytest.mark.slow
def test_appagent_steps_read_through_the_drafted_mapping(tmp_path):
    (tmp_path / "m.toml").write_text(draft_mapping(APPAGENT).text)
    res = trajcheck.score([APPAGENT], out=tmp_path / "L", mapping=tmp_path / "m.toml")
    assert res.scored == 2 and not res.invalid
    st = trajcheck.steps(tmp_path / "L").sort_values(["run_id", "step_index"]).to_dict("records")
    gmail = [s for s in st if s["run_id"].endswith("22-02-59")]
    assert [s["action_type"] for s in gmail] == ["CLICK", "DRAG"]  # tap(6), swipe(16, "up", "short")
    assert gmail[0]["action_x"] is None or gmail[0]["action_x"] != gmail[0]["action_x"]  # a label number, no point
    t = "task_system_2024-05-14_22-02-59"
    assert [(s["frame_pre"], s["frame_post"]) for s in gmail] == [(f"{t}_1.png", f"{t}_2.png"),
                                                                  (f"{t}_2.png", f"{t}_3.png")]
    runs = trajcheck.runs(tmp_path / "L")
    # no outcome is recorded and neither run said FINISH: a draft never declares how the harness ends a run, so
    # the no-answer rule does not apply: the runs are unknown, with the reason that says to declare it
    assert set(runs["verdict_reason"]) == {"ends_undeclared"} and not runs["false_claim"].fillna(False).any()
    assert set(runs["eval_final_verdict"]) == {"unknown"}


def test_appagent_task_logs_through_the_hand_mapping(tmp_path):
    cov = measure([APPAGENT], MAPS / "appagent.toml")
    assert (cov.runs_read, cov.actions, cov.understood, cov.screenshots, cov.screenshots_used, cov.frames_missing) \
        == (2, 5, 5, 7, 7, 0)
    res = trajcheck.score([APPAGENT], out=tmp_path / "L", mapping=MAPS / "appagent.toml")
    assert res.scored == 2 and not res.invalid
    goals = trajcheck.runs(tmp_path / "L").set_index("run_id")["goal"]
    assert goals["tasks/task_system_2024-05-14_22-02-59"] == "open gmail"  # from the prompt text
