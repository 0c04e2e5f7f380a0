"""OSWorld result directories (fixture built by following OSWorld's writer code, see its README)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajcheck import discovery, ledger  # noqa: F401  (discovery first: it registers the adapters)
from trajcheck.adapters import osworld as ow
from trajcheck.adapters.osworld import parse_pyautogui
from trajcheck.pipeline import score_paths

RESULTS = Path(__file__).resolve().parent / "fixtures" / "osworld" / "results"
OK = RESULTS / "pyautogui" / "screenshot" / "fixture-model" / "chrome" / "0f1e2d3c-search-recipes"
CRASHED = OK.parent / "9a8b7c6d-crashed"


def test_pyautogui_code_is_parsed_without_running_it():
    a, _ = parse_pyautogui("import pyautogui; import time; pyautogui.click(412, 300); time.sleep(0.5)")
    assert (a.type, a.x, a.y) == ("CLICK", 412.0, 300.0)
    a, _ = parse_pyautogui("pyautogui.doubleClick(x=10, y=20)")
    assert (a.type, a.x, a.y) == ("DOUBLE_CLICK", 10.0, 20.0)
    assert parse_pyautogui("pyautogui.hotkey('ctrl', 'shift', 't')")[0].keys == "ctrl+shift+t"
    assert parse_pyautogui("pyautogui.press('enter')")[0].keys == "enter"
    a, names = parse_pyautogui("pyautogui.typewrite('lentil soup'); pyautogui.press('enter')")
    assert (a.type, a.keys, a.text, names) == ("KEY_PRESS", "enter", "lentil soup", ["typewrite", "press"])
    assert parse_pyautogui("pyautogui.write('hi')")[0].type == "TYPE"
    a, _ = parse_pyautogui("pyautogui.scroll(-3, x=5, y=6)")
    assert (a.type, a.x, a.y, a.extra["clicks"]) == ("SCROLL", 5.0, 6.0, -3.0)
    assert parse_pyautogui("pyautogui.rightClick(1, 2)")[0].type == "RIGHT_CLICK"
    assert parse_pyautogui("pyautogui.dragTo(100, 200, duration=1)")[0].type == "DRAG"
    a, _ = parse_pyautogui("x = 5\npyautogui.click(x, 20)")  # a computed coordinate is no point
    assert a.type == "CLICK" and not a.has_point
    assert parse_pyautogui("__import__('os').system('rm -rf /')")[0] is None  # never evaluated
    assert parse_pyautogui("pyautogui.click(")[0] is None


def test_fixture_maps_steps_frames_and_outcome():
    run, warnings = ow.READER.read(OK, "pyautogui/screenshot/fixture-model/chrome/0f1e2d3c-search-recipes")
    assert warnings == []
    assert run.task_id == "0f1e2d3c-search-recipes" and run.agent_model == "fixture-model"
    assert run.config == {"action_space": "pyautogui", "observation_type": "screenshot"}
    assert (run.screen_width, run.screen_height) == (960, 540)
    assert [s.action.type for s in run.steps] == ["CLICK", "KEY_PRESS", "DONE"]
    click, submit, done = run.steps
    assert click.frame_pre == "step_0.png" and click.frame_post.startswith("step_1_")
    assert submit.frame_pre == click.frame_post and submit.action.text == "lentil soup"
    assert run.outcome_status == "done" and run.outcome_score == 1.0
    assert click.extra["action_timestamp"] == "20261122@120000"


def test_crashed_run_finds_its_renamed_screenshot_and_reports_the_error():
    run, warnings = ow.READER.read(CRASHED, "chrome/9a8b7c6d-crashed")
    assert warnings == []
    [step] = run.steps
    assert step.frame_post == "step_1_20261122@120500123456.png"  # named without microseconds in traj.jsonl
    assert step.frame_pre is None
    assert run.outcome_status == "error" and "Time limit exceeded" in run.extra["error"]


def test_scored_into_the_ledger_with_enter_as_a_checked_submit(tmp_path):
    report = score_paths([RESULTS], jobs=1)
    assert sorted(r.run["source_format"] for r in report.results) == ["osworld", "osworld"]
    assert all(r.ok for r in report.results)
    out = tmp_path / "L"
    ledger.write(out, [r.run for r in report.results], [s for r in report.results for s in r.steps])
    rows = ledger.query(out, "select action_type, action_keys, effect_high_risk, action_effect_observed "
                             "from steps where action_type = 'KEY_PRESS'").rows
    assert rows == [("KEY_PRESS", "enter", True, True)]  # the results page appeared
    ids = [r[0] for r in ledger.query(out, "select run_id from runs order by 1").rows]
    assert ids == ["pyautogui/screenshot/fixture-model/chrome/0f1e2d3c-search-recipes",
                   "pyautogui/screenshot/fixture-model/chrome/9a8b7c6d-crashed"]


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "task"
    shutil.copytree(OK, d)
    return d


def test_a_truncated_last_line_is_an_error_naming_file_and_line(tmp_path):
    d = _copy(tmp_path)
    lines = (d / "traj.jsonl").read_text().splitlines()
    (d / "traj.jsonl").write_text("\n".join(lines[:-1] + [lines[-1][:20]]) + "\n")
    [res] = score_paths([d], jobs=1).results
    assert not res.ok and "traj.jsonl:3" in res.run["error"] and "json_invalid" in res.run["error"]


def test_a_missing_screenshot_is_a_located_warning(tmp_path):
    d = _copy(tmp_path)
    next(d.glob("step_2_*.png")).unlink()
    run, warnings = ow.READER.read(d, "task")
    [w] = warnings
    assert w.slug == "screenshot_missing" and w.line == 2 and w.file == "traj.jsonl"
    assert run.steps[1].frame_post is None and run.steps[2].frame_pre == run.steps[0].frame_post


def test_an_unparseable_action_is_unknown_with_the_raw_code(tmp_path):
    d = _copy(tmp_path)
    lines = [json.loads(l) for l in (d / "traj.jsonl").read_text().splitlines()]
    lines[0]["action"] = "pyautogui.click(  # broken"
    (d / "traj.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    run, warnings = ow.READER.read(d, "task")
    assert [(w.slug, w.line, w.field) for w in warnings] == [("action_unparsed", 1, "action")]
    assert run.steps[0].action.type == "UNKNOWN" and run.steps[0].action.extra["raw"].startswith("pyautogui.click(")


def test_native_runs_are_not_claimed(tmp_path):
    d = _copy(tmp_path)
    (d / "run.json").write_text("{}")
    assert not ow.READER.claims(d)
