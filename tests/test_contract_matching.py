"""Issue 47 item 5: contracts find their runs. A contract of ``score --contracts DIR`` applies to a run by its
task id (the file's name, the contract's ``task_id`` or ``match.task_id``), by its goal (equal after case and
whitespace are normalised, or ``match.goal_pattern``), or by its path under the scored folder (``match.path``,
``match.path_pattern``); the summary says how many runs got one; contracts that applied to no run are an error
that says why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.base.errors import UsageError
from trajcheck.cli.main import app
from trajcheck.scoring.contracts import contract_dir

from conftest import SAMPLES

SQL = "select run_id, det_verdict, contract_source from runs order by run_id"


def _run(root: Path, name: str, *, task_id: str | None = None, goal: str | None = None) -> Path:
    """The sample run terms-checkbox-on as ``name`` under ``root``: its contract taken out, no evaluator score
    (so the contract is what decides), the task id and goal given (None: none, as a transcript has)."""
    d = root / name
    shutil.copytree(SAMPLES / "terms-checkbox-on", d)
    (d / "contract.json").unlink()
    meta = json.loads((d / "run.json").read_text())
    meta.update(run_id=name.replace("/", "-"), outcome={"status": "done"})
    for key, value in (("task_id", task_id), ("goal", goal)):
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    (d / "run.json").write_text(json.dumps(meta))
    return d


def _contract(folder: Path, name: str, **fields: object) -> Path:
    folder.mkdir(exist_ok=True)
    data = json.loads((SAMPLES / "terms-checkbox-on" / "contract.json").read_text())
    data.pop("task_id", None)
    data.update(fields)
    (folder / name).write_text(json.dumps(data))
    return folder / name


def _score(tmp: Path, runs: Path, contracts: Path) -> tuple[trajcheck.ScoreResult, dict[str, dict]]:
    res = trajcheck.score([runs], tmp / "L", contracts=contracts, jobs=1)
    return res, {r["run_id"]: r for r in trajcheck.query(tmp / "L", SQL).to_json()}


@pytest.mark.slow
def test_a_contract_applies_by_task_id_by_goal_and_by_path(tmp_path):
    runs, cdir = tmp_path / "runs", tmp_path / "contracts"
    _run(runs, "named", task_id="create-workspace")
    _run(runs, "by-field", task_id="ws-7")
    _run(runs, "by-goal", goal="  create a WORKSPACE named 'Design team'.  ")
    _run(runs, "by-pattern", goal="Please create the workspace 'Design team' now")
    _run(runs, "arm-b/trial-3")
    _run(runs, "nothing", goal="Something else")
    _contract(cdir, "create-workspace.json")
    _contract(cdir, "ws.json", task_id="ws-7")
    _contract(cdir, "goal.json", match={"goal": "Create a workspace named 'Design team'."})
    _contract(cdir, "pattern.json", match={"goal_pattern": r"workspace 'design team' now$"})
    _contract(cdir, "path.json", match={"path": "arm-b/trial-*"})
    res, rows = _score(tmp_path, runs, cdir)
    got = {rid: (r["det_verdict"], Path(r["contract_source"]).name if r["contract_source"] else None)
           for rid, r in rows.items()}
    assert got == {"named": ("pass", "create-workspace.json"), "by-field": ("pass", "ws.json"),
                   "by-goal": ("pass", "goal.json"), "by-pattern": ("pass", "pattern.json"),
                   "arm-b-trial-3": ("pass", "path.json"), "nothing": ("not_applicable", None)}
    assert res.contracts is not None and res.contracts.text() == "contracts: 5 of 6 runs matched"
    assert res.to_json()["contracts"]["matched"] == 5


def test_a_path_pattern_and_a_task_id_list_match_too(tmp_path):
    runs, cdir = tmp_path / "runs", tmp_path / "contracts"
    _run(runs, "cond-a/run-01")
    _run(runs, "t2", task_id="b")
    _contract(cdir, "p.json", match={"path_pattern": r"^cond-a/run-\d+$"})
    _contract(cdir, "ids.json", match={"task_id": ["a", "b"]})
    _contract(cdir, "unused.json", match={"goal": "never"})
    res, rows = _score(tmp_path, runs, cdir)
    assert {rid: Path(r["contract_source"]).name for rid, r in rows.items()} == {"cond-a-run-01": "p.json",
                                                                                 "t2": "ids.json"}
    assert res.contracts is not None
    assert res.contracts.text() == "contracts: 2 of 2 runs matched; 1 contract matched no run"
    assert res.contracts.unused == ("unused.json",)


def test_two_contracts_that_match_one_run_apply_to_none_and_say_so(tmp_path):
    runs, cdir = tmp_path / "runs", tmp_path / "contracts"
    _run(runs, "r", goal="Create a workspace named 'Design team'.")
    _run(runs, "named", task_id="create-workspace")
    _contract(cdir, "create-workspace.json")
    _contract(cdir, "a.json", match={"goal": "create a workspace named 'design team'."})
    _contract(cdir, "b.json", match={"goal_pattern": "design team"})
    _, rows = _score(tmp_path, runs, cdir)
    assert rows["r"]["det_verdict"] == "not_applicable"
    [row] = trajcheck.query(tmp_path / "L", "select warnings from runs where run_id = 'r'").to_json()
    assert any("2 contracts match this run at once: a.json, b.json" in w for w in row["warnings"])


def test_contracts_that_apply_to_no_run_are_an_error_that_says_why(tmp_path):
    runs, cdir = tmp_path / "runs", tmp_path / "contracts"
    _run(runs, "transcript-1", goal="Book a flight")
    _contract(cdir, "create-workspace.json")
    with pytest.raises(UsageError) as exc:
        trajcheck.score([runs], tmp_path / "L", contracts=cdir, jobs=1)
    msg = str(exc.value)
    assert f"--contracts {cdir}: none of its 1 contracts applied to any of the 1 runs scored" in msg
    assert "the runs' task ids: none (runs read from transcripts have none)" in msg
    assert "their goals: 'Book a flight'" in msg and "create-workspace.json (task id create-workspace)" in msg
    assert not (tmp_path / "L" / "manifest.json").exists()  # nothing committed
    out = CliRunner().invoke(app, ["score", str(runs), "--out", str(tmp_path / "L2"), "--contracts", str(cdir)])
    assert out.exit_code == 2 and "none of its 1 contracts applied" in out.output


def test_the_score_summary_says_how_many_runs_got_a_contract(tmp_path):
    runs, cdir = tmp_path / "runs", tmp_path / "contracts"
    _run(runs, "named", task_id="create-workspace")
    _run(runs, "other", task_id="x")
    _contract(cdir, "create-workspace.json")
    out = CliRunner().invoke(app, ["score", str(runs), "--out", str(tmp_path / "L"), "--contracts", str(cdir)])
    assert out.exit_code == 0, out.output
    assert "contracts: 1 of 2 runs matched\n" in out.output


def test_a_bad_pattern_is_named_and_matches_nothing(tmp_path):
    cdir = tmp_path / "contracts"
    _contract(cdir, "bad.json", match={"goal_pattern": "("})
    d = contract_dir(cdir)
    assert d.entries[0].goal_pattern is None and d.problems[0].startswith("bad.json: match.goal_pattern = '('")
