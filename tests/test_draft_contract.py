"""A contract drafted from a run (issue 39, part 6): ``trajcheck draft-contract LEDGER RUN_ID`` proposes checks of
what the run's final screen shows that its first did not; the draft is a valid contract, holds on the run it was
drafted from, and tells that run from a failed run of the same task."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.analyzers.draft import MAX_TEXT_CHECKS, Screen, new_lines, propose, url_pattern
from trajcheck.cli.main import app
from trajcheck.errors import UsageError
from trajcheck.readers.rundir import validator

from conftest import SAMPLES


def test_new_lines_leave_out_what_the_first_screen_showed_and_noise():
    first = Screen(text="Create a workspace Name Create")
    final = Screen(lines=("Create a workspace", "Workspace created", "Workspace created", "42", "ok", "x" * 200,
                          "Invite your team"), text="Workspace created Invite your team")
    assert new_lines(first, final) == ["Workspace created", "Invite your team"]
    many = Screen(lines=tuple(f"line number {i}" for i in range(40)))
    assert len(new_lines(Screen(), many)) == MAX_TEXT_CHECKS


def test_propose_is_a_valid_contract_with_unique_names():
    first = Screen("https://shop.example/cart?id=1", "Cart", ("Your cart",), "Your cart", "dom")
    final = Screen("https://shop.example/order/done?id=77#top", "Order placed", ("Thank you!", "Thank you!!"),
                   "Thank you! Thank you!!", "dom")
    draft = propose("r1", "t1", first, final)
    assert list(validator("contract").iter_errors(draft.contract)) == []
    checks = draft.contract["checks"]
    assert checks[0] == {"name": "on shop.example/order/done", "type": "url_matches",
                         "pattern": url_pattern(final.url or "")}
    assert checks[0]["pattern"] == r"shop\.example/order/done"
    assert checks[1]["selector"] == "title" and checks[1]["pattern"] == "Order placed"
    assert [c["type"] for c in checks[2:]] == ["text_present", "text_present"]
    assert len({c["name"] for c in checks}) == len(checks)
    # without a DOM: OCR lines, and the window title as text
    ocr = propose("r2", None, Screen(title="Finder"), Screen(None, "Saved - Notes", ("Note saved",), "Note saved",
                                                               "screen_text"))
    assert [c["type"] for c in ocr.contract["checks"]] == ["text_present", "text_present"]
    assert ocr.contract["checks"][0]["text"] == "Saved - Notes"


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("draft")
    for name in ("terms-checkbox-on", "terms-checkbox-off"):
        shutil.copytree(SAMPLES / name, tmp / "runs" / name, ignore=shutil.ignore_patterns("contract.json"))
    trajcheck.score([tmp / "runs"], tmp / "ledger", jobs=1, ocr="off")
    return tmp


@pytest.mark.slow
def test_the_draft_holds_on_its_run_and_fails_the_failed_run(scored):
    runner = CliRunner()
    contracts = scored / "contracts"
    contracts.mkdir()
    out = contracts / "create-workspace.json"
    res = runner.invoke(app, ["draft-contract", str(scored / "ledger"), "terms-checkbox-on", "--out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert list(validator("contract").iter_errors(data)) == []
    assert data["task_id"] == "create-workspace"
    assert [c["type"] for c in data["checks"]][:2] == ["url_matches", "element_text"]
    assert {"name": "shows Workspace created", "type": "text_present", "text": "Workspace created"} in data["checks"]
    # printed to stdout without --out: the same contract
    res = runner.invoke(app, ["draft-contract", str(scored / "ledger"), "terms-checkbox-on"])
    assert res.exit_code == 0 and json.loads(res.stdout) == data
    trajcheck.score([scored / "runs"], scored / "ledger2", jobs=1, ocr="off", contracts=contracts)
    rows = {r["run_id"]: r for r in trajcheck.query(scored / "ledger2", "select * from runs").to_json()}
    assert rows["terms-checkbox-on"]["det_verdict"] == "pass"
    assert rows["terms-checkbox-on"]["contract_score"] == 1.0
    assert rows["terms-checkbox-off"]["det_verdict"] == "fail"


def test_unknown_run_is_a_usage_error(scored):
    with pytest.raises(UsageError, match="no run 'terms-checkbox' in the ledger; did you mean terms-checkbox-off"):
        trajcheck.draft_contract(scored / "ledger", "terms-checkbox")
    res = CliRunner().invoke(app, ["draft-contract", str(scored / "ledger"), "nope"])
    assert res.exit_code == 2 and "no run 'nope'" in res.output


def test_a_failed_run_is_named_so_and_nothing_new_is_an_error(scored):
    # terms-checkbox-off never leaves its form: nothing new to check, and its verdict is fail
    with pytest.raises(UsageError) as exc:
        trajcheck.draft_contract(scored / "ledger", "terms-checkbox-off")
    assert str(exc.value) == ("run 'terms-checkbox-off': the ledger's verdict of this run is fail: draft a contract "
                              "only from a run you know succeeded; the final screen shows nothing new that a check "
                              "could name; write the checks by hand")


def test_without_a_dom_the_final_screen_is_what_ocr_read(tmp_path):
    from trajcheck.queries.draft import _screens
    from trajcheck.readers.discovery import discover, get_reader

    run_dir = tmp_path / "run"
    shutil.copytree(SAMPLES / "terms-checkbox-on", run_dir, ignore=shutil.ignore_patterns("dom", "contract.json"))
    steps = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    for s in steps:
        for k in ("dom_before", "dom_after"):
            (s.get("page") or {}).pop(k, None)
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    (ref,), _ = discover([run_dir])
    run, _ = get_reader(ref.reader).read(ref.path, ref.display)
    first, final = _screens(run, run_dir, ["Workspace created", "Invite your team to get started."])
    assert first.source == "none" and final.source == "screen_text"
    draft = propose(run.run_id, run.task_id, first, final)
    assert [(c["type"], c.get("text") or c.get("pattern")) for c in draft.contract["checks"]] == [
        ("url_matches", r"sample\.local/workspace/created\.html"),
        ("text_present", "Workspace created - Tasklane"),  # the title the log records, checked as text on screen
        ("text_present", "Workspace created"), ("text_present", "Invite your team to get started.")]
    # nothing read on screen and no DOM: only the URL and the title, and a note that says so
    first, final = _screens(run, run_dir, None)
    draft = propose(run.run_id, run.task_id, first, final)
    assert [c["type"] for c in draft.contract["checks"]] == ["url_matches", "text_present"]
    assert draft.notes and draft.notes[0].startswith("no DOM snapshot and no screen text")
