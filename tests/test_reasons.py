"""The reason catalogue (trajcheck.base.reasons): every value a reason column can hold is declared with its meaning,
the analyzers name values by their enums, the ledger holds no value outside the catalogue, and
docs/reasons.md is the generated page."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from trajcheck.base import reasons
from devtools import reasonsdoc
from trajcheck.analyzers import claims, evidence, reward
from trajcheck.base.reasons import BLOCKING_CODES, BY_COLUMN, REGENERATE, SECTIONS, EffectReason, RewardCode, code_of
from trajcheck.schemas.ledger import TABLES

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"

#: The modules that produce the reason columns' values, and the literals in them that spell a value but are
#: something else there: (file, text).
PRODUCERS = ("analyzers/perceptual.py", "analyzers/observation.py", "analyzers/reward.py", "analyzers/evidence.py",
             "analyzers/referee.py", "analyzers/claims.py", "analyzers/lookback.py", "analyzers/followup.py",
             "core/scoring/rows.py", "core/scoring/loading.py", "core/scoring/coverage.py", "analyzers/alignment.py", "core/queries/pairdiff.py",
             "core/render/pairpage.py", "cli/diff.py")
NOT_REASONS = frozenset({("analyzers/claims.py", "done"),  # the outcome status "done", not the claim reason
                         ("core/scoring/loading.py", "region_changed"),  # a contract check's type
                         ("core/scoring/loading.py", "shared_frames"),  # the key a reader sets in a step's extra
                         ("core/scoring/rows.py", "shared_frames"),  # the column of that name
                         ("analyzers/alignment.py", "same"),  # two screens compared: same, different or unknown
                         ("core/queries/pairdiff.py", "recorded_feedback")})  # the steps column of that name


def test_every_value_has_a_meaning_and_every_meaning_a_value() -> None:
    for s in SECTIONS:
        assert list(s.means) == list(s.values), f"{s.key}: meanings out of step with {s.values.__name__}"
        assert all(m and not m.endswith(".") and "\n" not in m for m in s.means.values()), s.key
        assert all(v.name == v.value.upper() for v in s.values), s.key


def test_every_reason_column_has_a_section() -> None:
    declared = {f"{t}.{c.name}" for t, cols in TABLES.items() for c in cols}
    assert set(BY_COLUMN) <= declared
    named = {k for k in declared if k.endswith(("_reason", "_reasons"))}
    # judge_reasons holds a judge's own words (a recorded judge's free text), not codes
    assert named - set(BY_COLUMN) == {"runs.judge_reasons"}
    assert len({s.key for s in SECTIONS}) == len(SECTIONS)


def test_blocking_codes_are_declared_once() -> None:
    assert reward.BLOCKED_CODES is BLOCKING_CODES
    assert evidence.BLOCKING_CODES == BLOCKING_CODES - {RewardCode.AUTH_REDIRECT}
    assert BLOCKING_CODES == {"auth_redirect", "blocking_page", "captcha"}


def test_the_analyzers_read_their_meanings_from_the_catalogue() -> None:
    assert evidence.MEANINGS is BY_COLUMN["runs.evidence_reasons"].means
    assert set(evidence.WEIGHTS) == set(reasons.EvidenceCode)
    assert [c for c, _, _ in claims.CLAIM_RULES] == list(reasons.ClaimReason)
    assert all(m == BY_COLUMN["runs.claim_reason"].means[c] for c, _, m in claims.CLAIM_RULES)


def _literals(path: str, values: set[str]) -> list[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return [f"{n.value!r} at {path}:{n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and n.value in values and (path, n.value) not in NOT_REASONS]


def test_producers_name_values_by_their_enums() -> None:
    values = {str(v) for s in SECTIONS for v in s.values}
    found = [hit for path in PRODUCERS for hit in _literals(path, values)]
    assert not found, "name these by their enum in trajcheck.base.reasons, not by a string: " + "; ".join(found)
    assert _literals("core/base/reasons.py", values)  # the scan finds the values where they are declared


def _cells(rows: list[dict[str, object]], column: str) -> set[str]:
    out: set[str] = set()
    for r in rows:
        v = r[column]
        for cell in v if isinstance(v, list) else [v]:
            if cell is not None:
                out.add(code_of(str(cell)))
    return out


@pytest.mark.parametrize("table", ["runs", "steps"])
def test_every_value_in_the_golden_ledger_is_catalogued(table: str) -> None:
    # tests/test_golden_ledger.py keeps this snapshot equal to the ledger of sample_runs/ scored now
    rows = [json.loads(line) for line in (GOLDEN / f"sample_runs.{table}.jsonl").read_text().splitlines()]
    for key, s in BY_COLUMN.items():
        if key.startswith(table + "."):
            seen = _cells(rows, key.split(".", 1)[1])
            unknown = seen - {str(v) for v in s.values}
            assert not unknown, f"{key} holds values trajcheck.base.reasons does not declare: {sorted(unknown)}"
            # the sample runs record no cost (tests/test_spend.py scores runs with both cost sources), and none is
            # damaged (tests/test_damage.py damages copies of them, one kind each)
            assert seen or key in ("runs.disagreement_reason", "runs.cost_source", "runs.damage"), \
                f"{key}: the sample runs hold no value at all"


def test_code_of_reads_each_stored_form() -> None:
    assert code_of("no_signal") == "no_signal"
    assert code_of("executor_timeout: Timeout 5000ms exceeded") == "executor_timeout"
    assert code_of("ends_blocked@7: captcha") == "ends_blocked"


def test_effect_reasons_cover_the_verifier() -> None:
    from trajcheck.analyzers.perceptual import SKIP_REASONS, _FALSE_REASONS

    assert set(SKIP_REASONS) | set(_FALSE_REASONS.values()) < set(EffectReason)


def test_docs_page_is_generated() -> None:
    committed = (ROOT / "docs" / "reasons.md").read_text(encoding="utf-8")
    assert committed == reasonsdoc.markdown(), f"docs/reasons.md is out of date: run `{REGENERATE}`"


def test_the_regenerate_command_prints_the_page() -> None:
    done = subprocess.run([sys.executable, "-m", "devtools.reasonsdoc"], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == reasonsdoc.markdown()


def test_page_has_one_section_per_set() -> None:
    page = reasonsdoc.markdown()
    for s in SECTIONS:
        assert f"\n## {s.title}\n" in page and s.key.replace("-", "").isalpha()  # a plain heading: a plain anchor
        assert all(f"| `{v}` | " in page for v in s.values)
    assert "| `only_caret` | only a caret-sized line changed: a blinking cursor (False) |" in page


def test_frame_problems_are_effect_reasons_under_their_slugs() -> None:
    # a step whose frame could not be used carries the problem's slug as its effect_reason (core/scoring/loading.py)
    from trajcheck.base.problems import Slug

    shared = {str(v) for v in EffectReason} & {str(s) for s in Slug}
    assert shared == {"frames_missing", "frame_unreadable", "frame_too_large", "not_a_regular_file"}


def test_columns_link_each_reason_column_to_its_section() -> None:
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    md = CliRunner().invoke(app, ["columns", "--format", "md"])
    as_json = CliRunner().invoke(app, ["columns", "--format", "json"])
    assert md.exit_code == as_json.exit_code == 0
    described = {f"{r['table']}.{r['column']}": r["description"] for r in json.loads(as_json.output)}
    for key, s in BY_COLUMN.items():
        column = key.split(".", 1)[1]
        assert f"Values: [reasons.md#{s.key}](reasons.md#{s.key}). |" in next(
            line for line in md.output.splitlines() if line.startswith(f"| `{column}` |"))
        assert described[key].endswith(f" Values: docs/reasons.md#{s.key}.")
    assert sum("reasons.md#" in d for d in described.values()) == len(BY_COLUMN)
