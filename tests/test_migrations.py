"""Ledger migrations (schemas/migrations.py): a ledger written by an older schema stays readable and is
upgraded by the next `score`. tests/fixtures/ledger_v2 was written by trajcheck at schema version 2
(commit ed075c7) from two sample runs, paths rewritten to a neutral home directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from trajcheck import ledger
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
