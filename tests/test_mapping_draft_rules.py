"""draft-mapping's general rules met on real harness logs (issue 38), each on a tiny made-up folder: JSON Lines
under another name, calls a grammar does not know named through [step.types], a reply with a section after its
action, a harness's annotated copy of a screenshot beside the screenshot, and the screen after the last step."""

from __future__ import annotations

import json

from trajcheck.commands import draft_mapping
from trajcheck.readers.adapters.ui_tars import actions as ui_tars_actions
from trajcheck.readers.kit.reading import load_json_or_jsonl
from trajcheck.readers.mapping.steps import next_numbered, plain_twin, screen_of

from mapping_shapes import shot


def test_json_lines_under_a_txt_name_are_read_as_lines():
    problems: list = []
    text = '{"step": 1, "a": "x"}\n{"step": 2, "a": "y"}\n'
    assert load_json_or_jsonl(text, run="r", rel="log.txt", problems=problems) == [{"step": 1, "a": "x"},
                                                                                  {"step": 2, "a": "y"}]
    assert not problems
    # a broken JSON file is still a located problem, not a list of lines
    assert load_json_or_jsonl('{"a": 1} trailing', run="r", rel="log.json", problems=problems) is None
    assert problems and problems[0].file == "log.json"


def test_a_reply_with_a_section_after_its_action_and_a_bare_action_name():
    assert ui_tars_actions.parse_reply("Thought: go\nAction: tap(6)\nSummary: I tapped.")[1] == [
        ("tap", {"start_box": "6"})]
    assert ui_tars_actions.parse_reply("Thought: all done\nAction: FINISH\nSummary: done")[1] == [("FINISH", {})]
    # a UI-TARS reply is read as before
    assert ui_tars_actions.parse_reply("Thought: t\nAction: click(start_box='(1,2)')")[1] == [
        ("click", {"start_box": "(1,2)"})]


def test_annotated_copies_and_the_screen_after_the_last_step(tmp_path):
    for name in ("s_1.png", "s_1_labeled.png", "s_2.png", "shot_03_after.png", "shot_03.png"):
        (tmp_path / name).write_bytes(b"x")
    assert plain_twin(tmp_path, "s_1_labeled.png") == "s_1.png"
    assert plain_twin(tmp_path, "s_5_labeled.png") == "s_5_labeled.png"  # no twin: kept
    assert plain_twin(tmp_path, "shot_03_after.png") == "shot_03_after.png"  # an after screen is another screen
    assert next_numbered(tmp_path, "s_1.png") == "s_2.png" and next_numbered(tmp_path, "s_2.png") is None
    names = {"s_1.png", "s_1_labeled.png", "shot_03_after.png", "shot_03.png"}
    assert {screen_of(n, names) for n in names} == {"s_1.png", "shot_03_after.png", "shot_03.png"}


def _phone_run(d, replies):
    d.mkdir(parents=True)
    lines = []
    for i, r in enumerate(replies, 1):
        shot(d / f"{d.name}_{i}.png", i)
        shot(d / f"{d.name}_{i}_labeled.png", i + 3)
        lines.append(json.dumps({"step": i, "prompt": "p", "image": f"{d.name}_{i}_labeled.png", "response": r}))
    shot(d / f"{d.name}_{len(replies) + 1}.png", 7)  # the screen after the last step, no model call on it
    (d / f"log_{d.name}.txt").write_text("\n".join(lines) + "\n")


def test_a_folder_of_such_runs_is_drafted_and_read_in_full(tmp_path):
    _phone_run(tmp_path / "runs" / "t_01", ["Thought: a\nAction: tap(3)\nSummary: s",
                                            'Thought: b\nAction: text("hi there")\nSummary: s'])
    _phone_run(tmp_path / "runs" / "t_02", ["Thought: c\nAction: long_press(2)\nSummary: s",
                                            "Thought: d\nAction: FINISH\nSummary: s"])
    d = draft_mapping(tmp_path / "runs", check=True)
    c = d.coverage
    assert c is not None
    assert (c["runs_read"], c["actions"], c["actions_understood"]) == (2, 4, 4), d.text
    assert (c["screenshots"], c["screenshots_found"], c["frames_not_there"]) == (6, 6, 0), d.text
    assert "'text' = 'TYPE'" in d.text and "'FINISH' = 'DONE'" in d.text and "'tap' = 'CLICK'" in d.text


def test_a_call_named_through_step_types_keeps_its_text(tmp_path):
    import trajcheck

    _phone_run(tmp_path / "runs" / "t_01", ['Thought: b\nAction: text("hi there")\nSummary: s',
                                            "Thought: c\nAction: grid()\nSummary: s"])
    (tmp_path / "m.toml").write_text(draft_mapping(tmp_path / "runs").text)
    res = trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=tmp_path / "m.toml")
    assert res.scored == 1
    st = trajcheck.steps(tmp_path / "L").sort_values("step_index").to_dict("records")
    assert (st[0]["action_type"], st[0]["action_text"]) == ("TYPE", "hi there")
    assert st[1]["action_type"] == "UNKNOWN"  # grid(): no type guessed, a step with a warning, not dropped
