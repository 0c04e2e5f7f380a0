"""The README stays true: its first commands, its column tables, its exit codes."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from trajcheck.cli.columns import markdown
from trajcheck.cli.common import Exit
from trajcheck.schemas.ledger import TABLES

from conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_first_lines_give_install_and_run_then_the_test_command():
    blocks = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", README, re.S)
    assert "pip install" in blocks[0] and "trajcheck score sample_runs/" in blocks[0]
    assert "pytest" in blocks[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert blocks[1].strip().splitlines()[-1] in ci


def test_column_tables_match_the_declarations():
    for table in TABLES:
        assert markdown(table) in README, f"README's `{table}` table is stale: run `trajcheck columns --format md`"


def test_exit_codes_are_documented():
    for code in Exit:
        assert re.search(rf"^\| {int(code)} \|", README, re.M), code


def test_every_command_is_documented():
    from trajcheck.cli.main import app
    names = [c.name or c.callback.__name__ for c in app.registered_commands]
    for n in names:
        assert f"trajcheck {n}" in README, n


def test_evidence_referee_table_matches_its_rules():
    from trajcheck.analyzers import evidence

    rows = "".join(f"| `{c}` | {evidence.WEIGHTS[c]:+.1f} | {evidence.MEANINGS[c]} |\n" for c in evidence.WEIGHTS)
    assert "| code | weight | holds when |\n|---|---|---|\n" + rows in README, \
        "README's evidence referee table is stale: regenerate it from analyzers/evidence.py"


def test_claim_table_matches_its_rules():
    from trajcheck.analyzers.claims import CLAIM_RULES

    rows = "".join(f"| `{c}` | {'yes' if claimed else 'no'} | {m} |\n" for c, claimed, m in CLAIM_RULES)
    assert "| claim_reason | claimed | when |\n|---|---|---|\n" + rows in README, \
        "README's claim table is stale: regenerate it from analyzers/claims.py"
