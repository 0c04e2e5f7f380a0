"""`trajcheck query` only reads: an empty SQL and every statement that writes, attaches, installs, loads or
changes a setting is a usage error (exit 2, one line), checked on DuckDB's own parse of the SQL, and the
connection it runs on opens no file but the ledger's parts."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from trajcheck.base.errors import QueryError, UsageError
from trajcheck.cli.main import app
from trajcheck.store import ledger

runner = CliRunner()


@pytest.fixture
def own_ledger(tmp_path, sample_ledger):
    """A copy of the sample ledger that a failed refusal may damage without harming the other tests."""
    return shutil.copytree(sample_ledger, tmp_path / "L")


def _query(ledger_dir, sql, *extra):
    return runner.invoke(app, ["query", str(ledger_dir), sql, *extra])


def _one_usage_error(res, *words):
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and isinstance(res.exception, SystemExit)
    error_lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(error_lines) == 1, res.stderr
    for word in words:
        assert word in error_lines[0], error_lines[0]
    assert res.stdout == ""


@pytest.mark.parametrize("sql", ["", "   ", ";", " ; ;", "/* nothing */"])
def test_no_statement_is_a_usage_error(sample_ledger, sql):
    _one_usage_error(_query(sample_ledger, sql), "holds no statement", "select count(*) from runs")


def test_only_a_comment_after_the_separator_is_a_usage_error(sample_ledger):
    res = runner.invoke(app, ["query", str(sample_ledger), "--", "-- a comment"])
    _one_usage_error(res, "holds no statement")


def test_copy_to_writes_no_file(own_ledger, tmp_path):
    out = tmp_path / "out.csv"
    res = _query(own_ledger, f"COPY (SELECT run_id FROM runs) TO '{out}'")
    _one_usage_error(res, "only reads the ledger", "COPY statement", "--format csv")
    assert not out.exists()


def test_a_copy_inside_a_select_cannot_overwrite_a_ledger_part(own_ledger):
    part = next((own_ledger / "runs").glob("*.parquet"))
    before = part.read_bytes()
    sql = f"WITH x AS (COPY (SELECT 1 AS a) TO '{part}' (FORMAT parquet, USE_TMP_FILE false)) SELECT 1"
    _one_usage_error(_query(own_ledger, sql), "only reads the ledger", "COPY")
    assert part.read_bytes() == before
    assert ledger.query(own_ledger, "select count(*) from runs").rows[0][0] > 1


def test_drop_view_fails_and_the_views_stay(own_ledger):
    _one_usage_error(_query(own_ledger, "DROP VIEW runs"), "DROP statement")
    _one_usage_error(_query(own_ledger, "select 1; drop view runs"), "DROP statement")
    res = _query(own_ledger, "select count(*) from runs", "--format", "csv")
    assert res.exit_code == 0 and res.stdout.splitlines()[1] != "0"


@pytest.mark.parametrize("sql", [
    "CREATE TABLE t AS SELECT 1", "CREATE VIEW v AS SELECT 1", "CREATE MACRO f(x) AS x", "ALTER VIEW runs RENAME TO r",
    "INSERT INTO runs (run_id) VALUES ('x')", "UPDATE runs SET run_id = 'x'", "DELETE FROM runs",
    "WITH x AS (DELETE FROM runs RETURNING *) SELECT * FROM x", "ATTACH ':memory:' AS m", "DETACH memory",
    "INSTALL httpfs", "LOAD parquet", "EXPORT DATABASE 'exported'", "IMPORT DATABASE 'exported'",
    "PRAGMA version", "SET threads = 1", "RESET threads", "SET VARIABLE x = 1", "USE memory", "CALL pragma_version()",
    "CHECKPOINT", "BEGIN", "VACUUM", "PREPARE p AS SELECT 1", "EXPLAIN ANALYZE COPY (SELECT 1) TO 'explained.csv'",
    "PIVOT runs ON status USING count(*)",
])
def test_statements_that_do_more_than_read_are_refused(own_ledger, sql, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # where a relative path would be written
    with pytest.raises(UsageError, match="only reads the ledger"):
        ledger.query(own_ledger, sql)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["L"]


@pytest.mark.parametrize("sql", [
    "select run_id from runs order by 1 limit 2",
    "with a as (select run_id from runs) select count(*) from a",
    "with recursive r(n) as (select 1 union all select n + 1 from r where n < 3) select max(n) from r",
    "select 1 union select 2 order by 1",
    "from steps select count(*)",
    "describe runs", "show tables", "summarize steps", "explain select * from runs", "explain analyze select 1",
    "pivot runs on status in ('ok') using count(*)",
    "select count(*) from runs where has_problem(warnings, 'frame_unreadable')",
    "select 1; select count(*) from runs",
])
def test_reading_statements_still_run(sample_ledger, sql):
    res = _query(sample_ledger, sql, "--format", "json")
    assert res.exit_code == 0, res.output
    assert ledger.query(sample_ledger, sql).rows


def test_no_file_but_the_ledgers_parts_can_be_read(sample_ledger, tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("a\n1\n")
    with pytest.raises(QueryError, match="disabled by configuration"):
        ledger.query(sample_ledger, f"select * from read_csv('{other}')")


def test_the_locked_connection_cannot_be_unlocked(sample_ledger):
    import duckdb

    con = ledger.connect(sample_ledger, locked=True)
    try:
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute("SET enable_external_access = true")
        assert con.execute("select count(*) from steps").fetchone()[0] > 0
    finally:
        con.close()


@pytest.mark.parametrize("command", [["compare", "--by", "config.perceptual_verifier"],
                                     ["check", "--min-success", "0.1"], ["failures"]])
def test_a_where_condition_cannot_write_either(own_ledger, tmp_path, command):
    out = tmp_path / "written.csv"
    where = f"true; COPY (SELECT 1) TO '{out}'"
    res = runner.invoke(app, [command[0], str(own_ledger), *command[1:], "--where", where])
    assert res.exit_code == 2, res.output
    assert "--where: " in res.stderr and "COPY" in res.stderr and "Traceback" not in res.output
    assert not out.exists()


def test_a_where_of_several_statements_is_refused(sample_ledger):
    res = runner.invoke(app, ["compare", str(sample_ledger), "--by", "config.perceptual_verifier",
                              "--where", "true; select 1"])
    assert res.exit_code == 2 and "--where: one condition, not several statements" in res.stderr
