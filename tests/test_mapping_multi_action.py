"""A mapping step that holds several actions (a list of tool calls, a reply with several calls) gives one
trajcheck step per action, in order: the first with the log step's screen before, the last with its screen
after, the reasoning and cost on the first (issue 38)."""

from __future__ import annotations

import json

import pandas as pd

import trajcheck
from trajcheck.readers.mapping.reach import measure

from mapping_shapes import shot


def _s(v: object) -> object:
    return v if isinstance(v, str) and v else None


def _call(action: str, **more: object) -> dict[str, object]:
    return {"type": "tool_use", "name": "computer", "input": {"action": action, **more}}


def _run(root):
    d = root / "runs" / "r1"
    d.mkdir(parents=True)
    for i in (1, 2, 3):
        shot(d / f"{i}.png", i)
    steps = [{"shot": "1.png", "why": "open the form and fill it", "tokens": 100,
              "calls": [_call("left_click", coordinate=[10, 20]), _call("screenshot"), _call("type", text="hi")]},
             {"shot": "2.png", "why": "submit", "tokens": 50, "calls": [_call("key", text="Return")]}]
    (d / "log.json").write_text(json.dumps({"task": "fill the form", "steps": steps}))
    m = root / "m.toml"
    m.write_text('[run]\nfiles = "log.json"\nsteps = "steps"\ngoal = "task"\nscreen = [320, 200]\n'
                 '[step]\ngrammar = "anthropic"\naction = "calls"\nreasoning = "why"\ntokens_input = "tokens"\n'
                 'screenshot = "shot"\nscreenshot_is = "pre"\n')
    return root / "runs", m


def test_each_action_of_a_log_step_is_its_own_step(tmp_path):
    runs, m = _run(tmp_path)
    res = trajcheck.score([runs], out=tmp_path / "L", mapping=m)
    assert res.scored == 1 and not res.invalid
    st = trajcheck.steps(tmp_path / "L").sort_values("step_index").to_dict("records")
    # the screenshot call between the click and the typing only looks: no step of its own
    assert [s["action_type"] for s in st] == ["CLICK", "TYPE", "KEY_PRESS"]
    assert (st[0]["action_x"], st[0]["action_y"], st[1]["action_text"]) == (10.0, 20.0, "hi")
    assert [(_s(s["frame_pre"]), _s(s["frame_post"])) for s in st] == [("1.png", None), (None, "2.png"),
                                                                        ("2.png", "3.png")]
    assert [_s(s["reasoning"]) for s in st] == ["open the form and fill it", None, "submit"]
    assert [s["tokens_input"] for s in st][0] == 100 and pd.isna(st[1]["tokens_input"])
    runs_t = trajcheck.runs(tmp_path / "L")
    assert int(runs_t["tokens_input"].iloc[0]) == 150  # the log step's cost is counted once


def test_coverage_counts_every_action(tmp_path):
    runs, m = _run(tmp_path)
    cov = measure([runs], m)
    assert (cov.runs_read, cov.actions, cov.understood) == (1, 3, 3)
    assert (cov.screenshots, cov.screenshots_used, cov.frames_missing) == (3, 3, 0)


def test_a_reply_with_several_calls_gives_each():
    from trajcheck.readers.mapping.grammars import parse, parse_all

    reply = "Thought: fill it\nAction: click(start_box='(1,2)')\n\ntype(content='abc')"
    acts, thought = parse_all("ui-tars", reply)
    assert [a.type for a in acts] == ["CLICK", "TYPE"] and acts[1].text == "abc" and thought == "fill it"
    first, _ = parse("ui-tars", reply)  # the first alone, with the count, for callers that want one
    assert first is not None and first.type == "CLICK" and first.extra["calls"] == 2
