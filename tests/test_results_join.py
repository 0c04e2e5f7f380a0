"""Issue 47 item 3: a harness's results file joined to its runs without a script. The run folders carry a start
time, a condition, a task and a run number in their names; one results file beside them (CSV, JSON or JSON Lines)
holds each run's task id, condition, run number and success, but not the start time. A hand mapping takes the
values from the path (`[run] path`) and names the record field each matches (`[outcome.join]`)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.cli.main import app
from trajcheck.errors import UsageError
from trajcheck.readers.mapping.join import JoinKey, canonical

import mapping_shapes as shapes

#: (folder, recorded success or None for a run the results file does not list)
RUNS = [("2025-03-01_12-30-05_gpt4o_task-17_run1", True), ("2025-03-01_12-41-10_gpt4o_task-17_run2", False),
        ("2025-03-01_13-02-44_claude_task-17_run1", True), ("2025-03-01_13-15-00_claude_task-9_run1", None)]
#: records as the harness writes them: a prefixed task id, the condition in another case, the run as a number
RECORDS = [{"task_id": "task-17", "condition": "GPT4o", "run": 1, "success": True},
           {"task_id": "task-17", "condition": "gpt4o ", "run": 2, "success": False},
           {"task_id": "Task-17", "condition": "claude", "run": "01", "success": True},
           {"task_id": "task-23", "condition": "claude", "run": 1, "success": False}]  # a run not recorded here

MAPPING = r"""
[run]
files = "actions.log"
lines = '^Step (?P<step>\d+): (?P<action>\w+)(?: - (?P<rest>.*))?$'
path = '(?P<time>[^_]+_[^_]+)_(?P<condition>[^_]+)_task-(?P<task>\d+)_run(?P<run>\d+)$'
task_id = { value = "task-{task}" }
goal = { value = "task {task} of the suite" }

[run.config]
condition = { value = "{condition}" }

[step]
type = "action"
x = { path = "rest", regex = 'at \((?P<x>\d+), *\d+\)' }
y = { path = "rest", regex = 'at \(\d+, *(?P<y>\d+)\)' }
text = { path = "rest", regex = 'text: (?P<text>.*)' }
keys = { path = "rest", regex = 'keys: (?P<keys>.*)' }
screenshot_file = "step_{step:02}.png"
screenshot_after_file = "step_{step:02}_action.png"

[step.types]
left_click = "CLICK"
type = "TYPE"
key = "KEY_PRESS"

[outcome]
file = "FILE"
success = "success"

[outcome.join]
task = { field = "task_id", prefix = "task-" }
condition = "condition"
run = "run"
"""


def _runs(root: Path, results: str | None = "results.csv", records: list[dict] = RECORDS) -> Path:
    """The timestamped run folders (actions.log and screenshots, as docs/mappings/actions-log.toml reads them)
    under root/results, and the results file beside them."""
    folder = root / "results"
    for r, (name, _ok) in enumerate(RUNS):
        d = folder / name
        d.mkdir(parents=True)
        (d / "actions.log").write_text("starting\n" + "\n".join(shapes.LOG_LINES[:3]) + "\nstate check done\n")
        for i in range(1, 4):
            shapes.shot(d / f"step_{i:02d}.png", i + r, (640, 400))
            shapes.shot(d / f"step_{i:02d}_action.png", i + r + 1, (640, 400))
    if results is not None:
        _write(folder / results, records)
    return folder


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(records[0]))
            w.writeheader()
            w.writerows(records)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:  # JSON: an object whose member holds the list
        path.write_text(json.dumps({"results": records}, indent=1))


def _mapping(tmp: Path, file: str = "results.csv", edit: tuple[str, str] = ("", "")) -> Path:
    m = tmp / "harness.toml"
    text = MAPPING.replace('file = "FILE"', f"file = {file!r}" + ('\nrecords = "results"' if file.endswith(".json")
                                                                  else ""))
    m.write_text(text.replace(*edit) if edit[0] else text)
    return m


@pytest.mark.slow
@pytest.mark.parametrize("results", ["results.csv", "results.jsonl", "results.json"])
def test_a_results_file_beside_timestamped_runs_is_joined_with_no_script(tmp_path, results):
    """The records hold no start time; the path pattern's groups find them, with a prefix, another case and a
    number written another way. The recorded success is the evaluator; the run with no record has no outcome."""
    folder = _runs(tmp_path, results)
    res = trajcheck.score([folder], out=tmp_path / "L", mapping=_mapping(tmp_path, results))
    assert res.scored == 4 and not res.invalid
    runs = trajcheck.runs(tmp_path / "L").set_index("run_id")
    want = {name: ok for name, ok in RUNS}
    for name, ok in want.items():
        row = runs.loc[name]
        if ok is None:  # no record: no outcome, never a failure for it
            assert pd.isna(row["outcome_score"]) and row["verdict_source"] != "evaluator"
            assert row["eval_final_verdict"] != "fail", row.to_dict()
        else:
            assert row["outcome_score"] == (1.0 if ok else 0.0) and row["verdict_source"] == "evaluator"
            assert row["eval_final_verdict"] == ("pass" if ok else "fail")
    assert runs.loc[RUNS[0][0], "task_id"] == "task-17" and runs.loc[RUNS[3][0], "task_id"] == "task-9"
    assert runs.loc[RUNS[0][0], "goal"] == "task 17 of the suite"
    assert json.loads(runs.loc[RUNS[2][0], "config"]) == {"condition": "claude"}


@pytest.mark.slow
def test_the_join_report_counts_runs_joined_runs_without_a_record_and_records_without_a_run(tmp_path):
    folder = _runs(tmp_path)
    m = _mapping(tmp_path)
    res = trajcheck.score([folder], out=tmp_path / "L", mapping=m)
    assert res.join is not None
    got = res.join.to_json()
    assert (got["runs"], got["joined"], got["runs_without_record"], got["records"], got["records_without_run"]) == (
        4, 3, 1, 4, 1)
    assert got["examples"] == {"runs_without_record": [RUNS[3][0]],
                               "records_without_run": ["task_id='task-23', condition='claude', run='1'"]}
    assert got["files"] == ["results.csv"] and got["why"] is None
    cli = CliRunner().invoke(app, ["score", str(folder), "--out", str(tmp_path / "L2"), "--mapping", str(m),
                                   "--format", "json", "--quiet"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout)["join"] == got  # --format json is the library's report
    assert ("results joined: 3 of 4 runs have a record in [outcome] file 'results.csv' (results.csv); 1 without a "
            "record, 1 of 4 records without a run") in cli.stderr
    assert f"runs without a record, e.g. {RUNS[3][0]}" in cli.stderr
    val = CliRunner().invoke(app, ["validate", str(folder), "--mapping", str(m), "--format", "json"])
    assert json.loads(val.stdout)["join"] == got and "results joined: 3 of 4 runs" in val.stderr


@pytest.mark.slow
def test_a_join_that_matches_nothing_is_an_error_that_shows_a_run_its_groups_and_a_record(tmp_path):
    """Without the prefix the task ids never meet: score stops before scoring, naming a run's path, what the
    pattern took from it and a record's key values; validate reports the same as an error."""
    folder = _runs(tmp_path)
    m = _mapping(tmp_path, edit=('task = { field = "task_id", prefix = "task-" }', 'task = "task_id"'))
    with pytest.raises(UsageError) as exc:
        trajcheck.score([folder], out=tmp_path / "L", mapping=m)
    msg = str(exc.value)
    assert f"run {RUNS[0][0]!r} gives time='2025-03-01_12-30-05', condition='gpt4o', task='17', run='1'" in msg
    assert "the first record of results.csv has task_id='task-17', condition='GPT4o', run='1'" in msg
    assert "compared as ('17', 'gpt4o', '1')" in msg and "compared as ('task-17', 'gpt4o', '1')" in msg
    assert not (tmp_path / "L").exists()  # nothing scored
    cli = CliRunner().invoke(app, ["score", str(folder), "--out", str(tmp_path / "L"), "--mapping", str(m)])
    assert cli.exit_code == 2 and "joins none of the 4 runs to a record" in cli.output
    val = trajcheck.validate([folder], mapping=m)
    bad = [p for p in val.errors if p.field == "outcome.file"]
    assert len(bad) == 1 and "joins none of the 4 runs" in bad[0].message


@pytest.mark.parametrize("edit, why", [
    (("_run(?P<run>\\d+)$'", "_attempt(?P<run>\\d+)$'"), "matches no run's path (e.g. '2025-03-01_12-30-05_gpt4o_"),
    (("file = 'results.csv'", "file = 'scores.csv'"), "no run finds the file"),
])
def test_the_error_says_when_the_pattern_or_the_file_is_what_is_wrong(tmp_path, edit, why):
    folder = _runs(tmp_path)
    with pytest.raises(UsageError, match="joins none of the 4 runs") as exc:
        trajcheck.score([folder], out=tmp_path / "L", mapping=_mapping(tmp_path, edit=edit))
    assert why in str(exc.value)


def test_keys_are_compared_with_the_declared_tolerance_only():
    assert canonical(" Task-17 ", ("task-",)) == canonical(17) == canonical("017") == canonical("17.0") == "17"
    assert canonical("GPT4o") == canonical("gpt4o ") == "gpt4o" and canonical("a  b") == "a b"
    assert canonical("task-17") != canonical(17)  # no prefix declared: not equal
    assert canonical("") is None and canonical(None) is None and canonical(True) == "true"
    key = JoinKey("run", {"field": "attempt", "pattern": r"run(\d+)"}, "m.toml")
    assert key.of_record({"attempt": "gpt4o/run02"}) == key.of_group("2") == "2"
    assert key.of_record({"attempt": "first"}) is None
    spaced = JoinKey("task", "task id", "m.toml")  # a CSV column whose name is no JMESPath: looked up by name
    assert spaced.of_record({"task id": "T-3"}) == "t-3"
    with pytest.raises(UsageError, match="unknown key"):
        JoinKey("task", {"field": "task_id", "prefx": "task-"}, "m.toml")


def test_a_misspelt_outcome_key_is_an_error_not_a_join_left_out(tmp_path):
    with pytest.raises(UsageError, match=r"\[outcome\] has unknown key\(s\) jion"):
        trajcheck.score([tmp_path], out=tmp_path / "L", mapping=_mapping(tmp_path, edit=("[outcome.join]",
                                                                                          "[outcome.jion]")))


def test_a_join_needs_the_path_groups_it_names(tmp_path):
    with pytest.raises(UsageError, match=r"\[run\] path has no group of that name \(it has time, condition, task, "
                                         r"run\)"):
        trajcheck.score([tmp_path], out=tmp_path / "L",
                        mapping=_mapping(tmp_path, edit=("run = \"run\"\n", "attempt = \"run\"\n")))
    with pytest.raises(UsageError, match="join needs \\[run\\] path"):
        trajcheck.score([tmp_path], out=tmp_path / "L", mapping=_mapping(
            tmp_path, edit=("path = '(?P<time>[^_]+_[^_]+)_(?P<condition>[^_]+)_task-(?P<task>\\d+)_run(?P<run>\\d+)$'",
                            "")))


@pytest.mark.slow
def test_results_files_below_and_above_the_runs_and_never_outside_the_folder_scored(tmp_path):
    """A path with / is relative to the run folder (below it here); a glob without / is looked for upward from
    the run folder to the folder scored, and a results file above that folder is never read."""
    folder = _runs(tmp_path, results=None)
    for name, ok in RUNS[:2]:
        _write(folder / name / "eval" / "result.jsonl", [r for r in RECORDS if r["run"] == int(name[-1])
                                                         and r["condition"].strip().lower() == "gpt4o"])
    res = trajcheck.score([folder], out=tmp_path / "L", mapping=_mapping(tmp_path, "eval/*.jsonl"))
    assert res.join is not None and (res.join.joined, res.join.runs) == (2, 4)
    runs = trajcheck.runs(tmp_path / "L").set_index("run_id")
    assert list(runs.loc[[RUNS[0][0], RUNS[1][0]], "outcome_score"]) == [1.0, 0.0]
    # above: the glob is found two folders up, inside the folder scored
    top = tmp_path / "top"
    (top / "batch").mkdir(parents=True)
    folder.rename(top / "batch" / "results")
    _write(top / "all-results.csv", RECORDS)
    res = trajcheck.score([top], out=tmp_path / "L2", mapping=_mapping(tmp_path, "all-*.csv"))
    assert res.join is not None and res.join.joined == 3 and res.join.files == ["all-results.csv"]
    # the same file above the folder given is outside it: not read
    with pytest.raises(UsageError, match="no run finds the file"):
        trajcheck.score([top / "batch"], out=tmp_path / "L3", mapping=_mapping(tmp_path, "all-*.csv"))
    with pytest.raises(UsageError, match="no run finds the file"):
        trajcheck.score([top / "batch"], out=tmp_path / "L4", mapping=_mapping(tmp_path, "../../../all-results.csv"))


@pytest.mark.slow
def test_a_run_whose_path_the_pattern_misses_is_named_and_keeps_no_outcome(tmp_path):
    folder = _runs(tmp_path)
    (folder / RUNS[1][0]).rename(folder / "retry_gpt4o_task-17")
    res = trajcheck.score([folder], out=tmp_path / "L", mapping=_mapping(tmp_path))
    assert res.join is not None and res.join.path_unmatched == ["retry_gpt4o_task-17"]
    assert res.join.to_json()["runs_path_not_matched"] == 1
    runs = trajcheck.runs(tmp_path / "L").set_index("run_id")
    row = runs.loc["retry_gpt4o_task-17"]
    assert pd.isna(row["outcome_score"]) and pd.isna(row["task_id"])
    assert any("[run] path of harness.toml does not match this run's path" in w for w in row["warnings"])


@pytest.mark.slow
def test_a_changed_results_file_rescores_the_runs_it_joins(tmp_path):
    folder = _runs(tmp_path)
    m = _mapping(tmp_path)
    trajcheck.score([folder], out=tmp_path / "L", mapping=m)
    assert trajcheck.score([folder], out=tmp_path / "L", mapping=m).scored == 0  # unchanged: skipped
    flipped = [{**r, "success": not r["success"]} if r["run"] == 2 else r for r in RECORDS]
    _write(folder / "results.csv", flipped)
    again = trajcheck.score([folder], out=tmp_path / "L", mapping=m)
    assert again.scored == 4  # the file is every joined run's input (and the unjoined one's: it looked there)
    runs = trajcheck.runs(tmp_path / "L").set_index("run_id")
    assert runs.loc[RUNS[1][0], "outcome_score"] == 1.0


@pytest.mark.slow
def test_a_broken_line_of_the_results_file_is_named_and_costs_only_its_record(tmp_path):
    """A JSON Lines file cut off in its last record (the harness was still writing): the other records join;
    the report and the run left without a record name the file and the line."""
    folder = _runs(tmp_path, "results.jsonl")
    text = (folder / "results.jsonl").read_text().splitlines()
    (folder / "results.jsonl").write_text("\n".join(text[:2] + [text[2][:25]]) + "\n")
    res = trajcheck.score([folder], out=tmp_path / "L", mapping=_mapping(tmp_path, "results.jsonl"))
    assert res.join is not None and res.join.joined == 2
    assert len(res.join.unreadable) == 1 and res.join.unreadable[0].startswith("results.jsonl: ")
    assert "line 3" in res.join.unreadable[0], res.join.unreadable
    runs = trajcheck.runs(tmp_path / "L").set_index("run_id")
    assert pd.isna(runs.loc[RUNS[2][0], "outcome_score"])
    warned = [w for w in runs.loc[RUNS[2][0], "warnings"] if "no record of this run in [outcome] file" in w]
    assert len(warned) == 1 and "line 3" in warned[0], list(runs.loc[RUNS[2][0], "warnings"])


@pytest.mark.slow
def test_a_join_by_the_run_folders_name_is_reported_and_checked_too(tmp_path):
    """The older join (key and joins = "folder", docs/mappings/actions-log.toml) gets the same report, and the
    same error when its key names no run."""
    from conftest import ROOT

    shapes.actions_log(tmp_path)
    mapping = ROOT / "docs" / "mappings" / "actions-log.toml"
    res = trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=mapping)
    assert res.join is not None and (res.join.runs, res.join.joined, res.join.records) == (4, 4, 4)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(mapping.read_text().replace('key = "run"', 'key = "task"'))
    with pytest.raises(UsageError, match=r"run 'rename_baseline' is named \('rename_baseline',\) \(folder\); the "
                                         r"first record of results.json has key='rename'"):
        trajcheck.score([tmp_path / "runs"], out=tmp_path / "L2", mapping=wrong)
