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
from trajcheck.analyzers.draft import MAX_TEXT_CHECKS, DraftScreen, new_lines, propose, url_pattern, without_clock
from trajcheck.analyzers.screentext import TextLine
from trajcheck.base.box import Box
from trajcheck.cli.main import app
from trajcheck.errors import UsageError
from trajcheck.media import ocr
from trajcheck.readers.rundir import validator

from conftest import SAMPLES


def test_new_lines_leave_out_what_the_first_screen_showed_and_noise():
    first = DraftScreen(text="Create a workspace Name Create")
    final = DraftScreen(lines=("Create a workspace", "Workspace created", "Workspace created", "42", "ok", "x" * 200,
                          "Invite your team"), text="Workspace created Invite your team")
    assert new_lines(first, final) == ["Workspace created", "Invite your team"]
    many = DraftScreen(lines=tuple(f"line number {i}" for i in range(40)))
    assert len(new_lines(DraftScreen(), many)) == MAX_TEXT_CHECKS


def test_propose_is_a_valid_contract_with_unique_names():
    first = DraftScreen("https://shop.example/cart?id=1", "Cart", ("Your cart",), "Your cart", "dom")
    final = DraftScreen("https://shop.example/order/done?id=77#top", "Order placed", ("Thank you!", "Thank you!!"),
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
    ocr = propose("r2", None, DraftScreen(title="Finder"), DraftScreen(None, "Saved - Notes", ("Note saved",), "Note saved",
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
    # OCR not asked to read the frames: what the ledger says it read on the final one (as where it is not installed)
    first, final = _screens(run, run_dir, ["Workspace created", "Invite your team to get started."], read=False)
    assert first.source == "none" and final.source == "screen_text"
    draft = propose(run.run_id, run.task_id, first, final)
    assert [(c["type"], c.get("text") or c.get("pattern")) for c in draft.contract["checks"]] == [
        ("url_matches", r"sample\.local/workspace/created\.html"),
        ("text_present", "Workspace created - Tasklane"),  # the title the log records, checked as text on screen
        ("text_present", "Workspace created"), ("text_present", "Invite your team to get started.")]
    # nothing read on screen and no DOM: only the URL and the title, and a note that says so
    first, final = _screens(run, run_dir, None, read=False)
    draft = propose(run.run_id, run.task_id, first, final)
    assert [c["type"] for c in draft.contract["checks"]] == ["url_matches", "text_present"]
    assert draft.notes and draft.notes[0].startswith("no DOM snapshot and no screen text")


# -- issue 48, item 5: clocks, menu bars, noise and the goal left out; numbers, the answer and the title band in --

GOAL = "Change the Tasklane display name to 'Jane Doe' and save it."


def test_clocks_dates_and_the_goal_are_left_out_and_numbers_kept():
    final = DraftScreen(lines=("Tue Jul 1 7:48AM", "579", "12/07/2026", "Task: Change the Tasklane display name",
                          "to 'Jane Doe' and save it.", "Sent 7:52 PM", "May I help you?", "Version 2.10.3"))
    assert new_lines(DraftScreen(), final, GOAL) == ["579", "Sent", "May I help you?", "Version 2.10.3"]
    assert without_clock("Quillpad File Edit View Tue Jul 1 7:48AM") == "Quillpad File Edit View"
    assert without_clock("Meeting booked for Jul 1 at noon") == "Meeting booked for Jul 1 at noon"


def _line(text: str, top: int, confidence: float = 0.95) -> TextLine:
    return TextLine(text, confidence, Box(10, top, 600, top + 18))


def test_where_ocr_read_the_frame_noise_and_the_menu_bar_are_left_out_and_the_title_band_is_checked():
    first = DraftScreen(lines=(), read=(_line("Quillpad File Edit View Tue Jul 1 7:48AM", 4), _line("Untitled", 30)),
                   source="screen_text", band=64)
    final = DraftScreen(read=(_line("Quillpad File Edit View Tue Jul 1 7:52AM", 4), _line("notes.txt - Quillpad", 30),
                         _line("Tue Jul 1 7:52AM", 300), _line("Saved to notes.txt", 400), _line("@® ~|", 500, 0.41)),
                   source="screen_text", band=64)
    draft = propose("r", "t", first, final, GOAL, answer=" 579 ")
    assert list(validator("contract").iter_errors(draft.contract)) == []
    assert [(c["type"], c.get("text") or c.get("value"), c.get("area")) for c in draft.contract["checks"]] == [
        ("text_present", "notes.txt - Quillpad", "title"), ("text_present", "Saved to notes.txt", None),
        ("answer_matches", "579", None)]


@pytest.mark.slow
@pytest.mark.skipif(ocr.engine()[0] is None, reason="OCR is not installed here")
def test_a_desktop_like_run_gets_a_draft_without_its_clock_that_holds_on_it(tmp_path):
    """nc-profile-toast without its DOM and URLs (as a desktop run records it), with a menu bar whose clock moves
    drawn over its frames: the draft reads the first and final frames, proposes no clock, a check of the title
    band, the toast, and holds on the run."""
    from PIL import Image, ImageDraw, ImageFont

    run_dir = tmp_path / "runs" / "nc-profile-toast"
    shutil.copytree(SAMPLES / "nc-profile-toast", run_dir, ignore=shutil.ignore_patterns("dom"))
    steps = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    for s in steps:
        s.pop("page", None)
    (run_dir / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    font = ImageFont.load_default(size=15)
    for k, png in enumerate(sorted((run_dir / "frames").glob("*.png"))):
        img = Image.open(png).convert("RGB")
        d = ImageDraw.Draw(img)
        d.rectangle((0, 0, 1280, 22), fill=(236, 236, 236))
        d.text((12, 3), "Chromium   File   Edit   View", fill=(0, 0, 0), font=font)
        d.text((1100, 3), f"Tue Jul 1 7:{48 + k}AM", fill=(0, 0, 0), font=font)
        img.save(png)
    trajcheck.score([tmp_path / "runs"], tmp_path / "ledger", jobs=1, ocr="auto")
    draft = trajcheck.draft_contract(tmp_path / "ledger", "nc-profile-toast")
    checks = draft.contract["checks"]
    said = " ".join(str(c.get("text") or c.get("pattern") or "") for c in checks)
    assert "7:" not in said and "Jul" not in said, checks
    assert any(c.get("area") == "title" for c in checks), checks
    assert any("Profile saved" in str(c.get("text")) or "visible to your team" in str(c.get("text"))
               for c in checks), checks
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    (contracts / "profile-name.json").write_text(json.dumps(draft.contract))
    trajcheck.score([tmp_path / "runs"], tmp_path / "ledger2", jobs=1, ocr="auto", contracts=contracts)
    row = trajcheck.query(tmp_path / "ledger2", "select det_verdict, contract_checks from runs").to_json()[0]
    assert row["det_verdict"] == "pass", row["contract_checks"]
