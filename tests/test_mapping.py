"""`--mapping`: logs of any other shape read through a TOML file of JMESPath expressions (docs/mappings/)."""

from __future__ import annotations

import base64
import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.cli.main import app

from conftest import ROOT, SAMPLES

MAPS = ROOT / "docs" / "mappings"


def _sample_steps(name):
    src = SAMPLES / name
    return src, [json.loads(l) for l in (src / "steps.jsonl").read_text().splitlines()]


def test_a_computer13_log_read_through_the_osworld_mapping(tmp_path):
    src, steps = _sample_steps("consent-overlay-off")
    d = tmp_path / "logs" / "task-1"
    d.mkdir(parents=True)
    lines = []
    for s in steps:
        a = s["action"]
        act = {"action_type": {"CLICK": "CLICK", "DONE": "DONE"}[a["type"]]}
        if "x" in a:
            act.update(x=a["x"], y=a["y"])
        (d / s["frames"]["post"].split("/")[-1]).write_bytes((src / s["frames"]["post"]).read_bytes())
        lines.append({"action": act, "response": s.get("reasoning"), "screenshot_file": s["frames"]["post"].split("/")[-1]})
    (d / "traj.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    # the real screen of the sample is 1280x800: write a copy of the mapping with that screen
    m = tmp_path / "computer13.toml"
    m.write_text((MAPS / "osworld-computer13.toml").read_text().replace("[1920, 1080]", "[1280, 800]"))
    res = trajcheck.score([tmp_path / "logs"], out=tmp_path / "L", mapping=m)
    assert res.scored == 1 and not res.invalid
    [run] = trajcheck.runs(tmp_path / "L").to_dict("records")
    assert run["source_format"].startswith("mapping:computer13@")
    st = trajcheck.steps(tmp_path / "L").sort_values("step_index").to_dict("records")
    assert [s["action_type"] for s in st] == ["CLICK", "DONE"]
    # screenshot_is = post: the click's post frame is its own screenshot; it has no pre (no first frame)
    assert st[0]["frame_post"] == steps[0]["frames"]["post"].split("/")[-1] and pd.isna(st[0]["frame_pre"])
    assert st[1]["frame_pre"] == st[0]["frame_post"]


def test_a_2024_browser_use_history_read_through_its_mapping(tmp_path):
    src, steps = _sample_steps("consent-overlay-off")
    d = tmp_path / "histories" / "h1"
    d.mkdir(parents=True)
    names = {"CLICK": "click_element", "DONE": "done"}
    hist = [{"model_output": {"current_state": {"next_goal": s.get("reasoning")},
                              "action": {names[s["action"]["type"]]: {"index": 3, "text": "ok"}}},
             "result": {"error": None},
             "state": {"url": s["page"]["url_before"],
                       "screenshot": base64.b64encode((src / s["frames"]["pre"]).read_bytes()).decode()}}
            for s in steps]
    (d / "AgentHistoryList.json").write_text(json.dumps({"task": "Subscribe", "history": hist}))
    res = trajcheck.score([tmp_path / "histories"], out=tmp_path / "L", mapping=MAPS / "browser-use-2024.toml")
    assert res.scored == 1
    st = trajcheck.steps(tmp_path / "L").sort_values("step_index").to_dict("records")
    assert [(s["action_type"], s["url_before"]) for s in st] == [("CLICK", steps[0]["page"]["url_before"]),
                                                                  ("DONE", steps[1]["page"]["url_before"])]
    assert st[0]["frame_pre"].startswith("inline/") and st[0]["frame_post"] == st[1]["frame_pre"]
    assert trajcheck.runs(tmp_path / "L")["goal"].tolist() == ["Subscribe"]


def test_a_mapping_that_matches_nothing_is_reported(tmp_path):
    d = tmp_path / "logs" / "e1"
    d.mkdir(parents=True)
    (d / "log.json").write_text(json.dumps({"turns": [{"a": 1}]}))
    m = tmp_path / "mine.toml"
    m.write_text('[run]\nfiles = "log.json"\nsteps = "history"\n[step]\ntype = "kind"\n')
    res = CliRunner().invoke(app, ["validate", str(tmp_path / "logs"), "--mapping", str(m), "--format", "json"])
    assert res.exit_code == 3, res.output
    probs = json.loads(res.stdout)["problems"]
    hit = [p for p in probs if p["slug"] == "mapping_matches_nothing"]
    assert hit and hit[0]["field"] == "run.steps" and "turns" in hit[0]["hint"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[run]\nsteps = "history[?"\n[step]\ntype = "a"\n')
    res = CliRunner().invoke(app, ["validate", str(tmp_path / "logs"), "--mapping", str(bad)])
    assert res.exit_code == 2 and "not JMESPath" in res.output


@pytest.mark.slow
def test_a_mapping_does_not_linger_into_the_next_call(tmp_path):
    """A mapping is the call's own (issue 46): it travels with the call's options and is never added to the
    readers every call asks, so the next call without it reads none of its logs."""
    from trajcheck.readers import discovery

    test_a_computer13_log_read_through_the_osworld_mapping(tmp_path / "a")
    assert not any(r.name.startswith("mapping:") for r in discovery.READERS)
    assert not any(n.startswith("mapping:") for n in discovery.reader_names())
    trajcheck.score([tmp_path / "a" / "logs"], out=tmp_path / "L2")  # the same logs, without the mapping
    [run] = trajcheck.runs(tmp_path / "L2").to_dict("records")
    assert run["source_format"] == "ui-tars"  # a built-in reader's, not the mapping's of the call before


@pytest.mark.slow
def test_one_file_per_step_read_through_a_mapping(tmp_path):
    """Issue 27: a mapping names a per-step file pattern (natural order: step_10 after step_9), a goal file,
    and a screenshot beside each step file by its stem (docs/mappings/claude-step-files.toml)."""
    import shutil

    src = ROOT / "tests" / "fixtures" / "anthropic" / "claude-steps"
    d = tmp_path / "logs" / "claude-steps"
    shutil.copytree(src, d)
    (d / "step_03.json").unlink()
    for n in range(3, 11):  # step_3..step_10 wait (unpadded: by name, step_10 would come before step_3)
        (d / f"step_{n}.json").write_text(json.dumps({"response": {"content": [
            {"type": "tool_use", "id": f"w{n}", "name": "computer", "input": {"action": "screenshot"}}]},
            "tool_output": {"status": "success"}}))
        shutil.copy(d / "step_02.png", d / f"step_{n}.png")
    (d / "step_11.json").write_text((src / "step_03.json").read_text())  # the answer, last by number
    res = trajcheck.score([tmp_path / "logs"], out=tmp_path / "L", mapping=MAPS / "claude-step-files.toml")
    assert res.ok and res.scored == 1
    steps = trajcheck.steps(tmp_path / "L")
    assert list(steps["action_type"]) == ["WAIT", "CLICK"] + ["WAIT"] * 8 + ["DONE"]
    click = steps.iloc[1]
    assert (click["action_x"], click["action_y"], click["frame_pre"], click["frame_post"]) == (
        899.0, 453.0, "step_01.png", "step_02.png")
    assert click["action_effect_observed"] == False  # noqa: E712  (the swallowed click, as the reader finds it)
    runs = trajcheck.runs(tmp_path / "L")
    assert runs.iloc[0]["goal"] == "Send the drafted feedback about the mobile app to Brightdesk."
