"""OSWorld result directories (fixture built by following OSWorld's writer code, see its README)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajcheck.readers import discovery
from trajcheck.store import ledger  # noqa: F401  (discovery first: it registers the adapters)
from trajcheck.readers.adapters.osworld import reader as ow
from trajcheck.readers.adapters.osworld.reader import parse_pyautogui
from trajcheck.scoring.pipeline import score_paths

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


@pytest.mark.slow
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


def test_pyautogui_forms_agents_write():
    a, names = parse_pyautogui("import pyautogui\nimport time\n\npyautogui.moveTo(300, 400)\ntime.sleep(0.2)\n"
                               "pyautogui.click()\n")
    assert (a.type, a.x, a.y, a.extra["point_from"], names) == ("CLICK", 300.0, 400.0, "moveTo", ["moveTo", "click"])
    a, _ = parse_pyautogui("pyautogui.click()")  # a click with no coordinates has no point
    assert a.type == "CLICK" and not a.has_point
    a, _ = parse_pyautogui("pyautogui.moveTo(x=640, y=360, duration=0.5)")  # only a move
    assert (a.type, a.x, a.y) == ("MOVE", 640.0, 360.0)
    assert parse_pyautogui("pyautogui.click(x=5, y=6, clicks=2)")[0].type == "DOUBLE_CLICK"
    assert parse_pyautogui("pyautogui.click(5, 6, button='right')")[0].type == "RIGHT_CLICK"
    a, _ = parse_pyautogui("pyautogui.click((12, 34))")
    assert (a.x, a.y) == (12.0, 34.0)
    a, _ = parse_pyautogui("pyautogui.moveTo(10, 20)\npyautogui.dragTo(110, 220, duration=1, button='left')")
    assert (a.type, a.x, a.y, a.extra["from"]) == ("DRAG", 110.0, 220.0, [10.0, 20.0])
    a, _ = parse_pyautogui("pyautogui.moveTo(50, 60); pyautogui.scroll(-5)")
    assert (a.type, a.x, a.y, a.extra["clicks"]) == ("SCROLL", 50.0, 60.0, -5.0)
    assert parse_pyautogui("pyautogui.press(['ctrl', 'c'])")[0].keys == "ctrl+c"
    a, _ = parse_pyautogui("pyautogui.write(message='hello')")
    assert (a.type, a.text) == ("TYPE", "hello")
    assert parse_pyautogui("import time; time.sleep(1)") == (None, [])


def _lines(d: Path) -> list[dict]:
    return [json.loads(line) for line in (d / "traj.jsonl").read_text().splitlines()]


def _write(d: Path, lines: list[dict]) -> None:
    (d / "traj.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_fail_and_no_final_action_outcomes(tmp_path):
    d = _copy(tmp_path)
    lines = _lines(d)
    lines[-1]["action"] = "FAIL"
    _write(d, lines)
    run, _ = ow.READER.read(d, "task")
    assert run.steps[-1].action.type == "FAIL" and run.outcome_status == "failed"
    _write(d, lines[:-1])  # the runner stopped at max_steps
    (d / "result.txt").write_text("0.0\n")
    run, _ = ow.READER.read(d, "task")
    assert run.outcome_status == "max_steps" and run.outcome_score == 0.0 and len(run.steps) == 2


def test_screenshot_names_of_other_runners(tmp_path):
    """The same real frames renamed the ways other runners in OSWorld's lib_run_single.py name them."""
    d = _copy(tmp_path)
    lines = _lines(d)
    shots = [line["screenshot_file"] for line in lines]
    # step_{n}.png with screenshot_file naming step_{n}_{ts}.png, a file that does not exist
    for line, shot in zip(lines, shots):
        (d / shot).rename(d / f"step_{line['step_num']}.png")
    _write(d, lines)
    run, warnings = ow.READER.read(d, "task")
    assert warnings == [] and [s.frame_post for s in run.steps] == ["step_1.png", "step_2.png", "step_3.png"]
    assert run.steps[1].frame_pre == "step_1.png"
    # step_{n}_{action_index}_{%Y%m%d@%H%M%S_%f}.png: two actions of one prediction in the same second,
    # told apart by action_index when screenshot_file is missing
    for i, line in enumerate(lines, start=1):
        line.update(step_num=1, action_index=i, action_timestamp=f"20261122@120000_0000{i}", screenshot_file=None)
        (d / f"step_{i}.png").rename(d / f"step_1_{i}_20261122@120000_0000{i}.png")
    _write(d, lines)
    run, warnings = ow.READER.read(d, "task")
    assert warnings == []
    assert [s.frame_post for s in run.steps] == [f"step_1_{i}_20261122@120000_0000{i}.png" for i in (1, 2, 3)]
    assert [s.extra["action_index"] for s in run.steps] == [1, 2, 3]


def test_an_overwritten_screenshot_is_not_paired_with_itself(tmp_path):
    """Two actions in the same second share step_{n}_{%Y%m%d@%H%M%S}.png: the second overwrote the first."""
    d = _copy(tmp_path)
    lines = _lines(d)
    first = lines[0]["screenshot_file"]
    (d / first).unlink()
    lines[0].update(step_num=2, action_timestamp=lines[1]["action_timestamp"],
                    screenshot_file=lines[1]["screenshot_file"])
    _write(d, lines)
    run, warnings = ow.READER.read(d, "task")
    assert [(w.slug, w.line, w.field) for w in warnings] == [("screenshot_overwritten", 1, "screenshot_file")]
    click, submit, _ = run.steps
    assert click.frame_pre == "step_0.png" and click.frame_post is None
    assert submit.frame_pre == "step_0.png" and submit.frame_post == lines[1]["screenshot_file"]


@pytest.mark.slow
def test_trajcheck_score_on_the_fixture_folder(tmp_path):
    from trajcheck.cli.main import app
    from typer.testing import CliRunner

    res = CliRunner().invoke(app, ["score", str(RESULTS), "--out", str(tmp_path / "L"), "--format", "json",
                                   "-q", "-j", "1"])
    assert res.exit_code == 0, res.output
    assert [(r["status"], r["outcome_status"]) for r in json.loads(res.stdout)["runs"]] == \
        [("ok", "done"), ("ok", "error")]
    rows = ledger.query(tmp_path / "L", "select source_format, outcome_score, screen_width, screen_height, n_steps "
                                        "from runs order by run_id").rows
    assert rows == [("osworld", 1.0, 960, 540, 3), ("osworld", None, 960, 540, 1)]


def test_a_log_osworlds_runner_wrote():
    """A real OSWorld-Verified traj.jsonl (provenance in tests/fixtures/real/osworld/README.md): all 15 actions
    read from the agent's pyautogui code, and its absent screenshots said per step and for the run."""
    real = Path(__file__).resolve().parent / "fixtures" / "real" / "osworld"
    [r] = score_paths([real], jobs=1).results
    assert r.run["status"] == "ok" and r.run["n_steps"] == 15
    types = [s["action_type"] for s in r.steps]
    assert "UNKNOWN" not in types and types.count("CLICK") == 10 and types.count("TYPE") == 2
    assert (r.steps[0]["action_x"], r.steps[0]["action_y"]) == (420.0, 72.0)
    assert [s["action_keys"] for s in r.steps if s["action_type"] == "KEY_PRESS"] == ["ctrl+f12", "tab", "backspace"]
    warns = r.run["warnings"]
    assert sum(w.endswith("[screenshot_missing]") for w in warns) >= 1
    assert any("15 of 15 steps have no readable screenshot" in w for w in warns)
