"""Issue 31: reading the screen where no DOM says what the page showed.

The rules are checked on their own (analyzers/screentext.py), then end to end: the sample runs scored with their
DOM snapshots removed catch every lie the DOM path catches through a message, through screen text, and accuse
no true success; beside the DOM (--ocr always) both are recorded and the DOM decides."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import trajcheck
from trajcheck.media import ocr
from trajcheck.analyzers import screentext as st
from trajcheck.analyzers.pixeldiff import diff_frames
from trajcheck.base.box import Box
from trajcheck.media.screenread import regions
from trajcheck.base.stats import wilson

from conftest import SAMPLES, copy_samples

ENGINE, MISSING = ocr.engine()
needs_ocr = pytest.mark.skipif(ENGINE is None, reason=f"OCR is not installed here: {MISSING}")


def line(text: str, conf: float = 0.95) -> st.TextLine:
    return st.TextLine(text, conf, Box(0, 0, 10, 10))


# -- the rules --------------------------------------------------------------------------------------------------

def test_a_small_change_reads_each_line_as_a_message_element_would():
    pm, found = st.classify((line("Please enter a correct username and password."), line("Profile saved")), False)
    assert pm.errors == {"please enter a correct username and password."} and pm.successes == {"profile saved"}
    assert pm.source == "screen_text" and {k for k, _, _ in found} == {"error", "success"}


def test_an_instruction_is_not_an_error_without_a_class_to_say_so():
    pm, found = st.classify((line("Please enter your email address"),), False)
    assert not pm.errors and not found


def test_a_new_screen_counts_only_whole_sentences_so_a_table_header_is_no_success():
    pm, _ = st.classify((line("Order Placed Status"), line("NW-1182 2026-11-02 Delivered")), True)
    assert not pm.errors and not pm.successes
    pm, _ = st.classify((line("Thank you for your order."),), True)
    assert pm.successes == {"thank you for your order."}
    pm, _ = st.classify((line("Order Placed Status"),), False)  # the same header in a small change is a message
    assert pm.successes == {"order placed status"}


def test_a_line_read_without_confidence_is_recorded_and_decides_nothing():
    low = st.MIN_LINE_CONFIDENCE - 0.2
    pm, found = st.classify((line("Password is too short", low),), False)
    assert not pm.errors and found == (("error", "password is too short", round(low, 3)),)
    f = st.finding([st.ScreenRead(Box(0, 0, 10, 10), (line("Password is too short", low),))])
    assert f is not None and f.messages == (f"error: password is too short ({low:.2f}, low confidence: decides "
                                            "nothing)",)


def test_a_message_already_on_screen_before_the_action_is_not_new():
    # the line whose pixels did not change with the action is old: it is kept, and says nothing
    read = st.ScreenRead(Box(0, 0, 10, 10), (line("« Password is too short"), line("Saved")), (False, True))
    assert [x.text for x in read.new_lines()] == ["Saved"]
    f = st.finding([read])
    assert f is not None and f.new_kinds == {"success"} and f.messages == ("success: saved (0.95)",)
    assert f.lines == ("« Password is too short", "Saved") and f.new == ("Saved",)


def test_a_line_is_new_where_the_pixels_under_it_changed():
    from trajcheck.media.screenread import _changed_under

    step = json.loads((SAMPLES / "nc-server-validation" / "steps.jsonl").read_text().splitlines()[-2])
    pre, post = _frames("nc-server-validation", Path(step["frames"]["pre"]).name, Path(step["frames"]["post"]).name)
    change = diff_frames(pre, post)
    error = st.TextLine("Password is too short", 0.9, Box(424, 174, 827, 189))  # where the error appeared
    heading = st.TextLine("Create your account", 0.9, Box(393, 84, 636, 107))  # on both frames, unchanged
    assert _changed_under(change, error) and not _changed_under(change, heading)


def test_where_the_dom_was_read_too_the_finding_says_whether_they_agree():
    from trajcheck.analyzers.messages import NO_MESSAGES, PageMessages

    read = st.ScreenRead(Box(0, 0, 10, 10), (line("Profile saved"),))
    dom_after = PageMessages(frozenset(), frozenset({"profile saved."}))
    assert st.finding([read], NO_MESSAGES, dom_after).agrees is True
    assert st.finding([read], NO_MESSAGES, NO_MESSAGES).agrees is False


def _frames(run: str, pre: str, post: str) -> tuple[np.ndarray, np.ndarray]:
    load = lambda n: np.asarray(Image.open(SAMPLES / run / "frames" / n).convert("RGB"))  # noqa: E731
    return load(pre), load(post)


def test_the_regions_read_are_the_change_not_the_screen():
    step = json.loads((SAMPLES / "nc-server-validation" / "steps.jsonl").read_text().splitlines()[-2])
    pre, post = _frames("nc-server-validation", Path(step["frames"]["pre"]).name, Path(step["frames"]["post"]).name)
    got = regions(diff_frames(pre, post), 1.0)
    h, w = post.shape[:2]
    assert got and all(not whole and b.width * b.height < 0.25 * w * h for b, whole in got)
    # the error box the DOM gives (data-bbox 392 125 496 85) lies inside one region
    assert any(b.left <= 392 and b.top <= 125 and b.right >= 392 + 496 - 8 and b.bottom >= 125 + 85 - 8
               for b, _ in got), got


# -- end to end -------------------------------------------------------------------------------------------------

def strip_dom(dst: Path) -> Path:
    return copy_samples(dst, dom=False)


def runs_of(ledger: Path) -> dict[str, dict]:
    return {r["run_id"]: r for r in trajcheck.query(ledger, "select * from runs").to_json()}


@pytest.fixture(scope="module")
def three_ledgers(tmp_path_factory) -> tuple[dict, dict, dict]:
    """The sample runs scored with their DOM, and with it removed: with OCR, and without."""
    tmp = tmp_path_factory.mktemp("screen")
    nodom = strip_dom(tmp / "nodom")
    trajcheck.score([SAMPLES], tmp / "dom", jobs=1, ocr="off")
    trajcheck.score([nodom], tmp / "ocr", jobs=1)
    trajcheck.score([nodom], tmp / "off", jobs=1, ocr="off")
    return runs_of(tmp / "dom"), runs_of(tmp / "ocr"), runs_of(tmp / "off")


def _has(r: dict, code: str) -> bool:
    return any(x.startswith(code) for x in r["evidence_reasons"])


@pytest.mark.slow
@needs_ocr
def test_every_lie_the_dom_catches_through_a_message_is_caught_through_screen_text(three_ledgers):
    dom, ocr_on, off = three_ledgers
    lies = [k for k, r in dom.items() if _has(r, "error_after_last_high_risk") and r["evidence_verdict"] == "fail"]
    assert lies  # nc-server-validation: "Password is too short" after the submit
    for k in lies:
        r = ocr_on[k]
        assert r["evidence_verdict"] == "fail" and r["message_source"] == "screen_text", r
        assert any(x.startswith("error_after_last_high_risk") and "screen text: " in x for x in r["evidence_reasons"])
        assert not _has(off[k], "error_after_last_high_risk")  # without OCR the lie was not caught so
    assert all(r["ocr_engine"] for k, r in ocr_on.items() if r["message_source"] == "screen_text")


@pytest.mark.slow
@needs_ocr
def test_no_true_success_is_accused_through_screen_text(three_ledgers):
    dom, ocr_on, _ = three_ledgers
    assert not [k for k, r in ocr_on.items() if r["evidence_verdict"] == "fail" and dom[k]["evidence_verdict"] == "pass"]
    # most success messages the DOM reads are read on screen too (the measured miss: a whole new page whose
    # heading is no sentence, offscreen-modal-on; docs/referee.md)
    read = [k for k, r in dom.items() if _has(r, "success_after_last_high_risk")]
    found = [k for k in read if _has(ocr_on[k], "success_after_last_high_risk")]
    assert len(found) >= len(read) - 1, (read, found)


@pytest.mark.slow
@needs_ocr
def test_beside_the_dom_both_are_recorded_and_the_trust_constant_is_what_they_measure(tmp_path):
    trajcheck.score([SAMPLES], tmp_path / "l", jobs=1, ocr="always")
    rows = trajcheck.query(tmp_path / "l", "select screen_text_agrees a from steps where a is not null").to_json()
    n, k = len(rows), sum(r["a"] for r in rows)
    assert n >= 15  # every high-risk step with a change, read beside its DOM
    bound = wilson(n - k, n).high
    assert st.SCREEN_TEXT_TRUST == round(1 - bound, 2), (k, n, bound)  # re-measure: benchmarks/measure_screen_text.py
    runs = runs_of(tmp_path / "l")
    assert all(r["message_source"] in (None, "dom") for r in runs.values())  # the DOM decides where it exists


@pytest.mark.slow
@needs_ocr
def test_a_second_score_reads_the_regions_from_the_cache(tmp_path, monkeypatch):
    src = strip_dom(tmp_path / "nodom")
    first = trajcheck.score([src / "nc-server-validation"], tmp_path / "a", jobs=1)
    assert first.invalid == []

    def no_ocr(*_a, **_k):
        raise AssertionError("read again instead of from the cache")

    monkeypatch.setattr(ocr, "read_lines", no_ocr)
    trajcheck.score([src / "nc-server-validation"], tmp_path / "b", jobs=1, force=True)
    q = "select step_index, screen_text, screen_messages from steps order by 1"
    assert trajcheck.query(tmp_path / "a", q).to_json() == trajcheck.query(tmp_path / "b", q).to_json()


@pytest.mark.slow
def test_without_ocr_installed_it_is_said_once_and_verdicts_are_those_without_screen_text(tmp_path, monkeypatch):
    src = strip_dom(tmp_path / "nodom")
    monkeypatch.setattr(ocr, "engine", lambda: (None, "tesserocr is not installed (pip install 'trajcheck[ocr]')"))
    got = trajcheck.score([src], tmp_path / "a", jobs=1)
    notes = [p for p in got.problems if p.slug == "ocr_not_installed"]
    assert len(notes) == 1 and "not read: tesserocr is not installed" in notes[0].message
    trajcheck.score([src], tmp_path / "b", jobs=1, ocr="off")
    q = "select run_id, evidence_verdict, evidence_reasons, eval_final_verdict from runs order by 1"
    assert trajcheck.query(tmp_path / "a", q).to_json() == trajcheck.query(tmp_path / "b", q).to_json()
    assert not [p for p in trajcheck.score([src], tmp_path / "c", jobs=1, ocr="off").problems
                if p.slug == "ocr_not_installed"]


@pytest.mark.slow
@needs_ocr
def test_timeline_and_report_show_the_text_beside_its_region(tmp_path):
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    src = strip_dom(tmp_path / "nodom")
    trajcheck.score([src / "nc-server-validation"], tmp_path / "l", jobs=1)
    res = CliRunner().invoke(app, ["timeline", str(tmp_path / "l"), "nc-server-validation"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    screen = [x for x in res.output.splitlines() if "too short" in x]
    assert screen and "[" in screen[0] and "]" in screen[0]  # the line with its box
    assert "error: " in res.output and "screen text: " in res.output
    trajcheck.report(tmp_path / "l", tmp_path / "rep")
    page = next((tmp_path / "rep" / "runs").glob("*.html")).read_text()
    assert "read on screen (OCR)" in page and "too short" in page
    import re

    crops = re.findall(r'<img src="\.\./(assets/t/[^"]+\.png)"[^>]*alt="screen text"', page)
    assert crops and all((tmp_path / "rep" / c).is_file() for c in crops)  # the crop around the lines read


def test_an_unknown_ocr_mode_is_a_usage_error(tmp_path):
    from trajcheck.base.errors import UsageError

    with pytest.raises(UsageError, match="unknown ocr mode .sometimes.: auto, always, off"):
        trajcheck.score([SAMPLES / "captcha-blocked"], tmp_path / "l", ocr="sometimes")


def test_a_stray_letter_read_from_an_icon_does_not_cancel_a_confident_message():
    pm, found = st.classify((line("Password is too short"), line("o", 0.30)), False)
    assert pm.errors == {"password is too short"} and found == (("error", "password is too short", 0.95),)


@pytest.mark.slow
def test_a_huge_crop_is_read_at_a_bounded_size():
    img = ocr.prepare(np.full((6000, 8000), 255, dtype=np.uint8), scale=1.0)
    assert img.width * img.height <= ocr.MAX_READ_PIXELS * 1.01 and img.width / img.height == pytest.approx(8 / 6, 0.01)
    assert ocr.prepare(np.full((100, 400), 255, dtype=np.uint8), scale=1.0).size == (800, 200)  # a message: 2x


@pytest.mark.slow
@needs_ocr
def test_past_the_cap_changes_are_not_read_and_it_is_said_but_the_final_frame_still_is(tmp_path, monkeypatch):
    from trajcheck.media import screenread

    monkeypatch.setattr(screenread, "MAX_CHANGES_PER_RUN", 0)
    src = strip_dom(tmp_path / "nodom")
    got = trajcheck.score([src / "nc-server-validation"], tmp_path / "l", jobs=1)
    run = trajcheck.query(tmp_path / "l", "select * from runs").to_json()[0]
    assert any("screen_text_capped" in w for w in run["warnings"])
    steps = trajcheck.query(tmp_path / "l", "select screen_text from steps where screen_text is not null").to_json()
    assert steps == [] and got.invalid == []
    # the claim is still checked against what the final frame shows
    assert run["message_source"] == "screen_text" and run["evidence_verdict"] == "fail"
