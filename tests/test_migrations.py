"""Ledger migrations (schemas/migrations.py): a ledger written by an older schema stays readable and is
upgraded by the next `score`. tests/fixtures/ledger_v2 was written by trajcheck at schema version 2
(commit ed075c7) from two sample runs, paths rewritten to a neutral home directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from trajcheck.store import ledger
from trajcheck.cli.main import app
from trajcheck.schemas.ledger import RUNS, STEPS
from trajcheck.schemas.migrations import MIGRATIONS, OLDEST_READABLE
from trajcheck.schemas.version import SCHEMA_VERSION

from conftest import SAMPLES

V2 = Path(__file__).resolve().parent / "fixtures" / "ledger_v2"


def test_history_is_ordered_and_ends_at_this_version():
    assert [m.version for m in MIGRATIONS] == list(range(OLDEST_READABLE + 1, SCHEMA_VERSION + 1))


def test_every_column_added_since_v2_is_named_by_a_migration():
    added = {t: {c for m in MIGRATIONS for c in m.added.get(t, ())} for t in ("runs", "steps")}
    for table, declared in (("runs", RUNS), ("steps", STEPS)):
        v2 = set(pq.read_schema(next((V2 / table).glob("*.parquet"))).names)
        now = {c.name for c in declared}
        assert now - v2 == added[table], f"{table}: columns added without a migration, or named but not added"
        assert not v2 - now, f"{table}: columns removed need a rewrite migration: {sorted(v2 - now)}"


@pytest.mark.slow
def test_old_ledger_reads_with_nulls_and_upgrades_on_score(tmp_path):
    old = shutil.copytree(V2, tmp_path / "ledger")
    before = ledger.query(old, "select run_id, evidence_verdict, verdict_source from runs order by run_id")
    assert before.rows == [("captcha-blocked", None, None), ("consent-overlay-off", None, None)]

    res = CliRunner().invoke(app, ["score", str(SAMPLES / "consent-overlay-off"), "--out", str(old), "--quiet"])
    assert res.exit_code == 0, res.output
    assert json.loads((old / "manifest.json").read_text())["schema_version"] == SCHEMA_VERSION
    after = ledger.query(old, "select run_id, schema_version, evidence_verdict, verdict_source from runs "
                              "order by run_id")
    # The rescored run has the new columns; the run not scored again keeps its rows, with nulls there.
    assert after.rows == [("captcha-blocked", 2, None, None), ("consent-overlay-off", SCHEMA_VERSION, "fail",
                                                                 "contract+evaluator")]
    assert ledger.query(old, "select count(*) from steps where run_id = 'captcha-blocked'").rows == [(3,)]


def test_newer_ledger_is_refused_with_a_message(tmp_path):
    new = shutil.copytree(V2, tmp_path / "ledger")
    m = json.loads((new / "manifest.json").read_text())
    m["schema_version"] = SCHEMA_VERSION + 1
    (new / "manifest.json").write_text(json.dumps(m))
    res = CliRunner().invoke(app, ["query", str(new), "select 1"])
    assert res.exit_code != 0
    assert f"newer than this trajcheck's ({SCHEMA_VERSION}); upgrade trajcheck" in res.output


def _stored(slug: str, message: str, hint: str, old: str, **where: str) -> str:
    """A problem's line as a trajcheck before ``old`` was retired stored it: today's text, the old slug."""
    from trajcheck.base.errors import Problem

    text = str(Problem(slug, message, hint=hint, **where))
    assert text.endswith(f"[{slug}]")
    return text[: -len(slug) - 2] + f"[{old}]"


@pytest.mark.slow
def test_retired_slugs_read_under_their_successors_and_match_by_either_name(tmp_path):
    # A ledger as trajcheck wrote it before issue 28 retired four slugs, plus a run scored since (a mixed
    # ledger, as after a partial rescore): queries with the old names and with the new ones both work.
    both = _stored("steps_ambiguous", "history.json, AgentHistory.json all exist; history.json is read",
                   "keep one history per directory", "history_ambiguous", run="bu", file="AgentHistory.json")
    null = _stored("action_null", "model_output is null (the model gave no usable answer)",
                   "the step is scored as an UNKNOWN action", "action_missing", run="bu", field="history[2].model_output")
    score = _stored("score_not_a_number", "result.txt holds 'n/a', not a number", "the score is left empty",
                    "wrong_type", run="os", file="result.txt")
    trace = _stored("file_unreadable", "not a readable zip (File is not a zip file)", "re-export the trace",
                    "trace_unreadable", run="pw", file="trace.zip")
    line = _stored("record_not_object", "a traj.jsonl line must be a JSON object", "repair or remove the line",
                   "wrong_type", run="pw", file="traj.jsonl", line=3)
    ledger.write(tmp_path, [
        {"run_id": "bu", "status": "ok", "error": "", "warnings": [both, null]},
        {"run_id": "os", "status": "ok", "error": "", "warnings": [score]},
        {"run_id": "pw", "status": "invalid", "error": f"{trace}; {line}", "warnings": []},
        {"run_id": "new", "status": "ok", "error": "", "warnings": ["run new, b.json: a.jsonl, b.json are all "
                                                                    "transcripts; a.jsonl is read [steps_ambiguous]"]},
    ], [])
    rows = {r[0]: r[1:] for r in ledger.query(tmp_path, "select run_id, error, warnings from runs").rows}
    assert rows["bu"][1] == [both.replace("[history_ambiguous]", "[steps_ambiguous]"),
                             null.replace("[action_missing]", "[action_null]")]
    assert rows["os"][1] == [score.replace("[wrong_type]", "[score_not_a_number]")]
    assert rows["pw"][0] == (f"{trace}; {line}".replace("[trace_unreadable]", "[file_unreadable]")
                             .replace("[wrong_type]", "[record_not_object]"))

    def runs(where: str) -> list[str]:
        return sorted(r[0] for r in ledger.query(tmp_path, f"select run_id from runs where {where}").rows)

    assert runs("has_problem(warnings, 'history_ambiguous')") == runs("has_problem(warnings, 'steps_ambiguous')") \
        == runs("list_contains(list_transform(warnings, lambda w: w[-17:]), '[steps_ambiguous]')") == ["bu", "new"]
    assert runs("has_problem(warnings, 'wrong_type') or has_problem(error, 'wrong_type')") == ["os", "pw"]
    assert runs("has_problem(error, 'record_not_object')") == ["pw"]
    assert runs("has_problem(warnings, 'record_not_object')") == []  # os's wrong_type was the other meaning
    assert runs("has_problem(warnings, 'action_missing')") == runs("has_problem(warnings, 'action_null')") == ["bu"]
    assert runs("has_problem(error, 'trace_unreadable')") == runs("has_problem(error, 'file_unreadable')") == ["pw"]
    assert runs("has_problem(warnings, 'unknown_action_type')") == []
    assert runs("error like '%[trace_unreadable]%' or list_contains(warnings, 'x')") == []  # read as renamed


def test_a_version_2_ledger_reads_through_the_renaming_view():
    # ledger_v2's parts have error and warnings (empty): the view's rewrite and the macro apply to them too
    res = ledger.query(V2, "select run_id, error, warnings, has_problem(warnings, 'history_ambiguous') from runs "
                           "order by run_id")
    assert res.rows == [("captcha-blocked", "", [], False), ("consent-overlay-off", "", [], False)]
