"""Issue 47 item 3, drafted: `draft-mapping` writes `[run] path` from the run folders' names (a time stamp, a
condition, a task, a run number) when they share a structure, and `[outcome.join]` when a results file beside
the runs has fields whose values are the path's groups. The unedited draft joins the synthetic harness of
tests/test_results_join.py (timestamped run folders, results beside them) without a script."""

from __future__ import annotations

import re
import shutil

import pandas as pd
import pytest

import trajcheck
from trajcheck.commands import draft_mapping
from trajcheck.readers.mapping.draft.pathjoin import path_pattern

from test_results_join import RUNS, _runs


def _line(text: str, start: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith(start))


@pytest.mark.parametrize("results", ["results.csv", "results.json"])
def test_the_unedited_draft_joins_a_results_file_beside_timestamped_run_folders(tmp_path, results):
    folder = _runs(tmp_path, results)
    d = draft_mapping(folder)
    path = _line(d.text, "path = ")
    assert "(?P<time>" in path and "(?P<condition>" in path and "task-(?P<task>" in path and "_run(?P<run>" in path
    join = d.text.split("[outcome.join]", 1)[1]
    assert "3 of 4 runs find their record" in join and "no field holds time" in join
    assert "task = { field = 'task_id', prefix = 'task-' }" in join
    assert "condition = 'condition'" in join and "run = 'run'" in join
    # the run without a record and the record without a run are what the draft is unsure of
    assert any(u.startswith("outcome.join: 1 of 4 runs without a record") for u in d.unsure), d.unsure
    (tmp_path / "d.toml").write_text(d.text)
    res = trajcheck.score([folder], out=tmp_path / "L", mapping=tmp_path / "d.toml")
    assert res.scored == 4
    runs = trajcheck.runs(tmp_path / "L").set_index("run_id")
    for name, ok in RUNS:
        row = runs.loc[name]
        if ok is None:
            assert pd.isna(row["outcome_score"]) and row["eval_final_verdict"] != "fail"
        else:
            assert (row["verdict_source"], row["eval_final_verdict"]) == ("evaluator", "pass" if ok else "fail")


def test_folders_that_share_no_structure_get_no_path_and_no_join(tmp_path):
    folder = _runs(tmp_path)
    shutil.move(str(folder / RUNS[0][0]), str(folder / "first-try"))  # one name of another shape
    d = draft_mapping(folder)
    assert not re.search(r"^path = |^\[outcome\.join\]", d.text, re.M), d.text


@pytest.mark.parametrize("records", [
    # other tasks, another condition: no field holds the runs' values
    [{"task_id": f"task-{40 + i}", "condition": "other", "success": True} for i in range(4)],
    # episodes e0..e3 hold the run numbers 1 and 2 only by chance: three runs would share the record e1
    [{"episode": f"e{i}", "agent": "x", "success": True} for i in range(4)],
])
def test_a_results_file_the_runs_do_not_find_their_own_records_in_is_not_joined(tmp_path, records):
    d = draft_mapping(_runs(tmp_path, records=records))
    assert re.search(r"^path = ", d.text, re.M) and not re.search(r"^\[outcome|^file = ", d.text, re.M), d.text


@pytest.mark.parametrize(("names", "want"), [
    (["20250301T123005_seed1", "20250301T124410_seed2"], r"(?:^|/)(?P<time>\d{8}T\d{6})_seed(?P<seed>\d+)$"),
    (["gpt4o_3", "claude_12"], r"(?:^|/)(?P<condition>[^_/]+)_(?P<n>\d+)$"),
    (["exp_a_1", "exp_b_1"], r"(?:^|/)exp_(?P<condition>[^_/]+)_1$"),
    (["run_1", "run_1"], None),             # nothing varies
    (["a_1", "b_2_x"], None),               # no shared structure
    (["only"], None),                        # one run: nothing to compare
])
def test_path_patterns_from_folder_names(names, want):
    assert path_pattern(names) == want
