"""Rubric trees (issue 39, part 4): all/any nodes over a contract's checks, weights, critical nodes, partial
credit; undecided leaves never fail; flat contracts unchanged; end to end in the ledger."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import trajcheck
from trajcheck.analyzers import contract as contract_mod, rubric
from trajcheck.analyzers.contract import ContractState
from trajcheck.readers.rundir import validator

from conftest import SAMPLES

CHECKS = [
    {"name": "url", "type": "url_matches", "pattern": "/done"},
    {"name": "saved", "type": "text_present", "text": "Saved"},
    {"name": "toast", "type": "text_present", "text": "Toast"},
    {"name": "no error", "type": "text_absent", "text": "Error"},
]


def _eval(tree: dict | None, url: str | None = "https://x/done", text: str | None = "Saved"):
    contract = {"name": "c", "checks": CHECKS, **({"rubric": tree} if tree is not None else {})}
    assert list(validator("contract").iter_errors(contract)) == []
    assert rubric.tree_problems(contract) == []
    return rubric.evaluate(contract, ContractState(url=url, text=text))


def test_flat_contract_verdict_is_unchanged_and_scored_as_a_share():
    contract = {"name": "c", "checks": CHECKS}
    st = ContractState(url="https://x/done", text="Saved")
    result, credit = rubric.evaluate(contract, st)
    assert result == contract_mod.evaluate(contract, st)
    assert result.verdict == "fail"  # toast is missing
    assert credit.tree is None and credit.score == pytest.approx(3 / 4)


def test_any_passes_with_one_child_and_all_fails_with_one():
    result, credit = _eval({"all": ["url", {"any": ["saved", "toast"], "name": "message"}, "no error"]})
    assert result.verdict == "pass"
    assert credit.tree is not None
    message = credit.tree.children[1]
    assert (message.name, message.kind, message.result, message.score) == ("message", "any", "pass", 1.0)
    assert credit.score == 1.0  # the any node scores its best child
    result, _ = _eval({"all": ["url", "saved", "toast", "no error"]})
    assert result.verdict == "fail"


def test_weights_give_partial_credit():
    _, credit = _eval({"all": [{"check": "url", "weight": 3}, "saved", "toast", "no error"]},
                      url="https://x/elsewhere")
    # url (3) and toast (1) fail; saved (1) and no error (1) hold: 2 of 6
    assert credit.score == pytest.approx(2 / 6)


def test_undecided_leaves_never_fail_and_leave_the_denominator():
    # no page text at all: the three text checks are undecided, the URL holds
    result, credit = _eval({"all": ["url", {"any": ["saved", "toast"]}, "no error"]}, text=None)
    assert result.verdict == "uncertain"
    assert credit.tree is not None and credit.tree.result == "undecided"
    assert credit.score == 1.0  # only the URL was decided
    result, credit = _eval({"all": ["url", "saved", "toast", "no error"]}, url=None, text=None)
    assert result.verdict == "uncertain" and credit.score is None
    # an any with an undecided child and a failed one is undecided, not failed
    result, credit = _eval({"all": [{"any": ["url", "saved"]}, "toast", "no error"]}, url="https://x/other",
                           text=None)
    assert credit.tree is not None and credit.tree.children[0].result == "undecided"
    assert result.verdict == "uncertain" and credit.score is None  # nothing under the root was decided
    # a failed child still fails an all, whatever is undecided beside it
    result, _ = _eval({"all": ["url", "saved", "toast", "no error"]}, url="https://x/other", text=None)
    assert result.verdict == "fail"


def test_an_undecided_node_is_left_out_of_its_parents_score():
    """An ``any`` whose children failed but for one left undecided is undecided: its parent averages its decided
    children only (docs/referee.md), so a parent of that node and of a check that holds scores 1.0, not 0.5."""
    checks = [{"name": "done", "type": "url_matches", "pattern": "/done"},
              {"name": "other", "type": "url_matches", "pattern": "/other"},
              {"name": "saved", "type": "text_present", "text": "Saved"}]
    contract = {"name": "c", "checks": checks, "rubric": {"all": ["done", {"any": ["other", "saved"]}]}}
    assert rubric.tree_problems(contract) == []
    result, credit = rubric.evaluate(contract, ContractState(url="https://x/done", text=None))
    assert credit.tree is not None
    assert [(c.result, c.score) for c in credit.tree.children] == [("pass", 1.0), ("undecided", 0.0)]
    assert result.verdict == "uncertain" and credit.score == 1.0


def test_a_failed_critical_node_fails_the_run_whatever_the_rest_says():
    tree = {"any": [{"all": ["url", "saved"]}, {"check": "toast", "critical": True}, "no error"]}
    result, credit = _eval(tree)
    assert credit.tree is not None and credit.tree.result == "pass"  # the any holds by its first child
    assert result.verdict == "fail" and credit.critical_failed == ("toast",)
    tree["any"][1] = {"check": "toast", "critical": False}
    assert _eval(tree)[0].verdict == "pass"
    # an undecided critical node fails nothing
    tree["any"][1] = {"check": "toast", "critical": True}
    assert _eval(tree, url="https://x/done", text=None)[0].verdict != "fail"


def test_tree_problems_name_unknown_missing_and_repeated_checks():
    contract = {"checks": CHECKS, "rubric": {"all": ["url", "saved", "saved", "nope"]}}
    found = rubric.tree_problems(contract)
    messages = [m for _, m in found]
    assert any("no check is named 'nope'" in m for m in messages)
    assert any("'saved' is named 2 times" in m for m in messages)
    assert any("'toast' is not in the rubric" in m for m in messages)
    assert ("rubric.all.3", "no check is named 'nope' (checks: url, saved, toast, no error)") in found


def test_a_tree_too_deep_is_refused_naming_where():
    node: object = "url"
    for _ in range(rubric.MAX_DEPTH + 2):
        node = {"all": [node]}
    found = rubric.tree_problems({"checks": CHECKS[:1], "rubric": node})
    assert len(found) == 1 and found[0][1] == f"the rubric is nested deeper than {rubric.MAX_DEPTH} levels"
    assert found[0][0].startswith("rubric.all.0.all.0.")


def test_schema_refuses_a_node_with_both_all_and_any_and_a_zero_weight():
    bad = {"checks": CHECKS, "rubric": {"all": ["url"], "any": ["saved"]}}
    assert list(validator("contract").iter_errors(bad))
    bad = {"checks": CHECKS, "rubric": {"all": [{"check": "url", "weight": 0}]}}
    assert list(validator("contract").iter_errors(bad))


RUBRIC_CONTRACT = {
    "format": "trajcheck.contract/1", "name": "workspace created (rubric)",
    "checks": [{"name": "created page", "type": "url_matches", "pattern": "/workspace/created\\.html"},
               {"name": "wrong page", "type": "url_matches", "pattern": "/nowhere"},
               {"name": "dom check", "type": "element_exists", "selector": "body"}],
    "rubric": {"all": [{"check": "created page", "weight": 3}, {"any": ["wrong page", "dom check"], "name": "either"}]},
}


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> tuple[Path, dict[str, dict]]:
    tmp = tmp_path_factory.mktemp("rubric")
    runs = tmp / "runs"
    for name in ("terms-checkbox-on", "terms-checkbox-off"):
        shutil.copytree(SAMPLES / name, runs / name)
    (runs / "terms-checkbox-on" / "contract.json").write_text(json.dumps(RUBRIC_CONTRACT))
    critical = json.loads(json.dumps(RUBRIC_CONTRACT))
    critical["rubric"]["all"][1] = {"any": ["wrong page", "dom check"], "name": "either"}
    critical["rubric"]["all"].append({"check": "wrong page", "critical": True})
    critical["rubric"]["all"][1]["any"] = ["dom check"]
    (runs / "terms-checkbox-off" / "contract.json").write_text(json.dumps(critical))
    trajcheck.score([runs], tmp / "ledger", jobs=1, ocr="off")
    rows = {r["run_id"]: r for r in trajcheck.query(tmp / "ledger", "select * from runs").to_json()}
    return tmp / "ledger", rows


def test_the_tree_and_the_score_are_in_the_ledger(scored):
    _, rows = scored
    on = next(r for r in rows.values() if r["contract_name"] == "workspace created (rubric)"
              and r["run_path"].endswith("terms-checkbox-on"))
    tree = json.loads(on["contract_tree"])
    assert tree["kind"] == "all" and [c["name"] for c in tree["children"]] == ["created page", "either"]
    either = tree["children"][1]
    assert [c["result"] for c in either["children"]] == ["fail", "pass"] and either["result"] == "pass"
    assert on["det_verdict"] == "pass" and on["contract_score"] == 1.0
    off = next(r for r in rows.values() if r["run_path"].endswith("terms-checkbox-off"))
    tree = json.loads(off["contract_tree"])
    assert tree["children"][-1] == {"name": "wrong page", "kind": "check", "result": "fail", "score": 0.0,
                                    "weight": 1.0, "critical": True}
    assert off["det_verdict"] == "fail"


@pytest.mark.slow
def test_timeline_and_report_show_the_tree(scored, tmp_path):
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    ledger, rows = scored
    rid = next(r["run_id"] for r in rows.values() if r["run_path"].endswith("terms-checkbox-on"))
    res = CliRunner().invoke(app, ["timeline", str(ledger), rid])
    assert res.exit_code == 0, res.output
    assert "rubric    pass, score 1.00" in res.output
    assert "any either: pass  score 1.00" in res.output
    assert "check created page: pass  weight 3" in res.output
    res = CliRunner().invoke(app, ["timeline", str(ledger), rid, "--format", "json"])
    assert json.loads(res.output)["run"]["contract_tree"]["name"] == "rubric"
    out = tmp_path / "report"
    res = CliRunner().invoke(app, ["report", str(ledger), "--out", str(out)])
    assert res.exit_code == 0, res.output
    from trajcheck.render.reportfiles import page_name

    page = (out / "runs" / f"{page_name(rid)}.html").read_text()
    assert "rubric-tree" in page and "either" in page and "contract score 1.00" in page
    assert "<th>contract score</th>" in (out / "index.html").read_text()


def test_the_documented_example_is_a_valid_rubric():
    from conftest import ROOT

    doc = (ROOT / "docs" / "referee.md").read_text()
    start = doc.index("### Rubric trees")
    block = doc[doc.index("```json", start) + len("```json"):doc.index("```", doc.index("```json", start) + 7)]
    contract = json.loads(block)
    assert list(validator("contract").iter_errors(contract)) == [] and rubric.tree_problems(contract) == []
    st = ContractState(url="https://shop/order/12/done", text="Order placed")
    result, credit = rubric.evaluate(contract, st)
    # no DOM: the badge is undecided, the toast decides the any; the critical check holds
    assert (result.verdict, credit.score) == ("pass", 1.0)
    result, credit = rubric.evaluate(contract, ContractState(url="https://shop/cart", text="Order placed"))
    assert (result.verdict, credit.score) == ("fail", 0.5)
    result, _ = rubric.evaluate(contract, ContractState(url="https://shop/order/1/done", text="payment failed"))
    assert result.verdict == "fail"
