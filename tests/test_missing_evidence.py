"""Missing evidence is not failure (issue 39, part 1), end to end on the sample runs.

The sample runs are scored twice without their benchmark evaluator (``outcome.score`` removed, so that the
contracts decide): as recorded, and with every DOM snapshot removed as well (screenshots, URLs and contracts
kept). A contract check that needs the DOM is then undecided; no contract may fail for that, no verdict may turn
from pass to fail or back, and no run the labels call a success may be called a false claim.
"""

from __future__ import annotations

import json

import pytest

import trajcheck

from conftest import SAMPLES, copy_samples


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory) -> tuple[dict[str, dict], dict[str, dict]]:
    tmp = tmp_path_factory.mktemp("missing")
    got = []
    for name, dom in (("dom", True), ("nodom", False)):
        trajcheck.score([copy_samples(tmp / f"{name}-runs", dom=dom, evaluator=False)], tmp / name, jobs=1,
                        ocr="off")
        got.append({r["run_id"]: r for r in trajcheck.query(tmp / name, "select * from runs").to_json()})
    return got[0], got[1]


@pytest.mark.slow
def test_no_contract_fails_for_lack_of_evidence(ledgers):
    _, nodom = ledgers
    undecided_somewhere = 0
    for run_id, r in nodom.items():
        checks = json.loads(r["contract_checks"] or "[]")
        failed = [c for c in checks if c["passed"] is False]
        undecided = [c for c in checks if c["passed"] is None]
        undecided_somewhere += bool(undecided)
        assert all("undecided" not in c["evidence"] for c in failed), (run_id, failed)
        assert all(c["evidence"]["undecided"].startswith("missing evidence: ") for c in undecided), run_id
        if r["det_verdict"] == "fail":
            assert failed, run_id
        if undecided and not failed:
            assert r["det_verdict"] == "uncertain", run_id
    assert undecided_somewhere >= 5  # the DOM checks of the web runs' contracts


@pytest.mark.slow
def test_without_the_dom_no_verdict_is_wrong_and_no_true_success_is_accused(ledgers):
    dom, nodom = ledgers
    labels = json.loads((SAMPLES / "labels.json").read_text())
    assert dom.keys() == nodom.keys()
    for run_id, r in nodom.items():
        was = dom[run_id]["eval_final_verdict"]
        if was in ("pass", "fail") and r["eval_final_verdict"] in ("pass", "fail"):
            assert r["eval_final_verdict"] == was, run_id
        if labels[run_id]["outcome"] == "pass":
            assert r["eval_final_verdict"] != "fail" and not r["false_claim"], run_id
    # an undecided contract with nothing else to decide leaves the run uncertain, without an accusation
    left = [r for r in nodom.values() if r["verdict_reason"] == "contract_undecided"]
    assert left and all(r["eval_final_verdict"] == "uncertain" and not r["false_claim"] for r in left)
