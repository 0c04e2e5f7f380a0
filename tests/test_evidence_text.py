"""Evidence as a sentence a person reads (issue 46): one renderer (trajcheck.render.evidencetext) for
`failures`, `timeline` and the report, by check kind, with a fallback that names the kind and never dumps
JSON; the raw values stay in --format json, and `failures --format csv` holds them whole."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Callable

import pytest
from typer.testing import CliRunner

from trajcheck.cli.main import app
from trajcheck.queries.failuremodes import checks_of, failed_check
from trajcheck.render.evidencetext import SENTENCES, check_sentence, failure_sentence
from trajcheck.store import ledger

from conftest import ROOT

SUBSCRIBED = "no line matched `Subscribed` in `[role=alert]`"
KICK = "step 9 is required but not active; step 10 is active but forbidden (active: 1, 5, 10, 13)"


def _checks(sample_ledger: Path, run_id: str) -> list[dict[str, Any]]:
    con = ledger.connect(sample_ledger)
    try:
        [(cell,)] = con.execute("select contract_checks from runs where run_id = ?", [run_id]).fetchall()
    finally:
        con.close()
    return checks_of(cell)


def _run(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code in (0, 1), res.output
    return res.stdout


def test_the_sample_runs_failed_checks_read_as_sentences(sample_ledger: Path) -> None:
    [sub] = _checks(sample_ledger, "consent-overlay-off")
    assert check_sentence(sub) == SUBSCRIBED
    kick = next(c for c in _checks(sample_ledger, "sequencer-near-miss") if c["name"] == "kick row")
    assert check_sentence(kick) == KICK


CASES: list[tuple[str, bool | None, dict[str, Any], str]] = [
    ("element_text", False, {"pattern": "Saved", "selector": "#note", "texts": ["Error: try again"]},
     "no line matched `Saved` in `#note`; it reads `Error: try again`"),
    ("element_text", True, {"pattern": "Saved", "selector": "#note", "texts": ["Saved"]},
     "a line in `#note` matched `Saved`"),
    ("element_exists", False, {"selector": "#done", "matches": 0}, "no element matches `#done`"),
    ("element_absent", False, {"selector": ".error", "matches": 2}, "2 elements match `.error`, which should be absent"),
    ("text_present", False, {"text": "Thanks", "found": False}, "`Thanks` is not on the page"),
    ("text_absent", False, {"text": "Error", "found": True}, "`Error` is on the page"),
    ("text_present", False, {"text": "Thanks", "source": "screen_text", "lines_read": 3}, "`Thanks` is not on screen (OCR)"),
    ("text_matches", False, {"pattern": "order #\\d+", "match": None}, "nothing on the page matches `order #\\d+`"),
    ("url_matches", False, {"url": "http://x/a", "pattern": "/b$"}, "the URL `http://x/a` does not match `/b$`"),
    ("region_matches", False, {"region": [0, 0, 10, 10], "distance": 9, "max_distance": 4, "reference": "ok.png"},
     "region [0, 0, 10, 10] is 9 bits from reference `ok.png` (more than the 4 allowed)"),
    ("region_changed", False, {"region": [1, 2, 3, 4], "since_step": 2, "changed_px": 0, "distance": 0},
     "region [1, 2, 3, 4] did not change since step 2"),
    ("region_unchanged", False, {"region": [1, 2, 3, 4], "since_step": 2, "changed_px": 1, "distance": 3},
     "region [1, 2, 3, 4] changed since step 2 (1 pixel)"),
    ("answer_matches", False, {"value": "42", "answer": "41"}, "the answer `41` does not equal `42`"),
    ("grid", False, {"active_steps": [1, 5], "required_steps": [1, 5], "missing_required": [], "forbidden_active": [],
                     "margin": 0.1, "min_margin": 0.2, "distances": [1.0]},
     "the active and inactive cells differ by a margin of 0.1, under the 0.2 needed (active: 1, 5)"),
    ("url_matches", None, {"undecided": "missing evidence: no URL recorded"},
     "undecided: missing evidence: no URL recorded"),
]


@pytest.mark.parametrize("kind,passed,evidence,said", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_each_check_kind_has_its_sentence(kind: str, passed: bool | None, evidence: dict[str, Any],
                                          said: str) -> None:
    assert check_sentence({"type": kind, "name": "n", "passed": passed, "evidence": evidence}) == said


def test_every_kind_a_contract_may_hold_has_a_sentence_and_an_unknown_one_is_named_without_json() -> None:
    schema = json.loads((ROOT / "schemas" / "contract.schema.json").read_text())
    kinds = schema["properties"]["checks"]["items"]["properties"]["type"]["enum"]
    assert set(kinds) <= set(SENTENCES), set(kinds) - set(SENTENCES)
    odd = check_sentence({"type": "pixel_poem", "name": "p", "passed": False, "evidence": {"lines": [1, {"a": 2}]}})
    assert odd == "a pixel_poem check failed (its evidence: --format json)"
    # a known kind with evidence of another shape: the same plain fallback, never the JSON
    assert "{" not in check_sentence({"type": "grid", "passed": False, "evidence": {"active_steps": 3}})


def test_failures_says_the_evidence_and_csv_holds_it_whole(sample_ledger: Path, width: Callable[[int], None]) -> None:
    width(80)
    table = " ".join(_run("failures", str(sample_ledger)).split())
    assert f"contract check `kick row` failed: {KICK}" in table
    assert '{"' not in table and "active_steps" not in table
    rows = list(csv.DictReader(io.StringIO(_run("failures", str(sample_ledger), "--format", "csv"))))
    wrong = next(r for r in rows if r["mode"] == "wrong_result")
    kick = next(c for c in _checks(sample_ledger, "sequencer-near-miss") if c["name"] == "kick row")
    assert wrong["example_check"] == "kick row"
    assert json.loads(wrong["example_evidence"]) == kick["evidence"]  # whole, raw: not cut with …
    assert all("…" not in r["example_evidence"] or r["mode"] == "app_said_no" for r in rows)  # (the referee cut it)
    data = json.loads(_run("failures", str(sample_ledger), "--format", "json"))
    example = next(m for m in data["arms"][0]["modes"] if m["mode"] == "wrong_result")["example"]
    assert example["check"] == kick  # the JSON keeps the raw values


def test_timeline_says_the_evidence(sample_ledger: Path, width: Callable[[int], None]) -> None:
    width(100)
    text = " ".join(_run("timeline", str(sample_ledger), "consent-overlay-off").split())
    assert f"element_text#1: {SUBSCRIBED}" in text and "texts" not in text
    text = " ".join(_run("timeline", str(sample_ledger), "sequencer-near-miss").split())
    assert f"kick row: {KICK}" in text
    assert f"wrong_result (grid; evaluator) at step 6 [controllable]: contract check `kick row` failed: {KICK}" in text
    assert '{"active_steps"' not in text and "active_steps=" not in text.split("lesson")[0]


@pytest.mark.slow
def test_the_report_says_the_evidence(sample_ledger: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["report", str(sample_ledger), "--out", str(tmp_path / "r"), "--max-runs", "0"])
    assert res.exit_code == 0, res.output
    index = (tmp_path / "r" / "index.html").read_text()
    assert f"contract check `kick row` failed: {KICK}" in index
    pages = {p.stem: p.read_text() for p in (tmp_path / "r" / "runs").glob("*.html")}
    near = next(t for name, t in pages.items() if name.startswith("sequencer-near-miss"))
    assert f"kick row: {KICK}" in near and f"failed: {KICK}" in near
    consent = next(t for name, t in pages.items() if name.startswith("consent-overlay-off"))
    assert SUBSCRIBED in consent
    for t in (index, near, consent):
        assert "{&quot;" not in t and "&quot;active_steps&quot;" not in t


def test_failed_check_finds_the_check_the_evidence_names() -> None:
    checks = [{"type": "url_matches", "name": "a: b", "passed": False, "evidence": {"url": "u", "pattern": "p"}},
              {"type": "url_matches", "name": "a", "passed": True, "evidence": {"url": "u", "pattern": "u"}}]
    ev = 'contract check a: b failed: {"pattern": "p", "url": "u"}'
    assert failed_check(ev, json.dumps(checks)) == checks[0]
    assert failed_check("CLICK changed nothing", checks) is None
    assert failure_sentence(ev, checks[0]) == "contract check `a: b` failed: the URL `u` does not match `p`"
    assert failure_sentence("CLICK changed nothing") == "CLICK changed nothing"
