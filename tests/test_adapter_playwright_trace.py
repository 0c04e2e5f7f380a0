"""Playwright trace.zip reader, on a trace recorded by Playwright itself (tests/fixtures/playwright_trace)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from trajcheck import discovery, ledger  # noqa: F401  (discovery first: it registers the adapters)
from trajcheck.adapters import playwright_trace as pt
from trajcheck.errors import RunFormatError
from trajcheck.pipeline import score_paths

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "playwright_trace" / "notes-trace"


def _copy(tmp_path: Path, name: str = "notes-trace") -> Path:
    d = tmp_path / name
    shutil.copytree(FIXTURE, d)
    return d


def _rewrite(run: Path, edit) -> None:
    """Rebuild trace.zip with edit(name, data) -> list of (name, data) for each member."""
    src = run / "trace.zip"
    with zipfile.ZipFile(src) as z:
        members = [(i.filename, z.read(i)) for i in z.infolist()]
    with zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            for n, d in edit(name, data):
                z.writestr(n, d)


def test_actions_coordinates_frames_and_urls():
    run, warnings = pt.READER.read(FIXTURE, "notes-trace")
    assert pt.READER.claims(FIXTURE) and warnings == []
    assert (run.screen_width, run.screen_height) == (640, 400)
    types = [s.action.type for s in run.steps]
    assert types == ["NAVIGATE", "CLICK", "TYPE", "CLICK", "KEY_PRESS", "CLICK", "CLICK", "WAIT"]
    nav, focus, fill, save, enter, missing, link, _wait = run.steps
    assert nav.action.url == "http://notes.test/" and nav.page.url_after == "http://notes.test/"
    assert focus.action.element == "#t" and focus.action.has_point
    assert fill.action.text == "groceries"
    assert enter.action.keys == "Enter"
    assert 0 < save.action.x < 640 and 0 < save.action.y < 400
    assert "Save" in save.reasoning  # the element the locator resolved to names the button
    assert missing.executor_ok is False and "Timeout" in missing.executor_error
    assert link.page.url_before == "http://notes.test/" and link.page.url_after == "http://notes.test/page2"
    assert link.client.did_url_change is True
    # frames: every named frame is carried inline, pre of each step is the post of the one before
    for s in run.steps:
        for f in (s.frame_pre, s.frame_post):
            assert f is None or f in run.inline_frames
    for a, b in zip(run.steps, run.steps[1:]):
        assert b.frame_pre == a.frame_post


def test_scored_like_a_native_run(tmp_path):
    report = score_paths([FIXTURE.parent], jobs=1)
    [res] = report.results
    assert res.ok and res.run["source_format"] == "playwright-trace"
    out = tmp_path / "L"
    ledger.write(out, [res.run], res.steps)
    rows = ledger.query(out, "select step_index, effect_high_risk, action_effect_observed, effect_reason "
                             "from steps where action_type = 'CLICK' and reasoning like '%Save%'").rows
    assert rows == [(4, True, True, "content_changed_in_region")]  # "Saved groceries" appeared


def test_a_truncated_event_line_is_a_located_warning(tmp_path):
    run = _copy(tmp_path)

    def cut(name, data):
        if name == "trace.trace":
            lines = data.decode().splitlines()
            lines[5] = lines[5][: len(lines[5]) // 2]
            data = "\n".join(lines).encode()
        return [(name, data)]

    _rewrite(run, cut)
    r, warnings = pt.READER.read(run, run.name)
    [w] = [w for w in warnings if w.slug == "trace_line_unreadable"]
    assert w.line == 6 and "trace.zip:trace.trace" in w.file
    assert len(r.steps) >= 7  # the other events are still read


def test_a_member_escaping_the_archive_is_refused(tmp_path):
    run = _copy(tmp_path)
    _rewrite(run, lambda n, d: [(n, d)] + ([("../evil.txt", b"x")] if n == "trace.trace" else []))
    with pytest.raises(RunFormatError) as exc:
        pt.READER.read(run, run.name)
    assert exc.value.problems[0].slug == "path_escapes_run" and "../evil.txt" in str(exc.value.problems[0])


def test_too_many_members_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(pt, "MAX_MEMBERS", 3)
    with pytest.raises(RunFormatError) as exc:
        pt.READER.read(FIXTURE, "notes-trace")
    assert exc.value.problems[0].slug == "trace_too_large"


def test_a_missing_screencast_frame_is_a_located_warning(tmp_path):
    run = _copy(tmp_path)
    with zipfile.ZipFile(run / "trace.zip") as z:
        frames = sorted(n for n in z.namelist() if n.startswith("screencast/"))
    gone = frames[2]
    _rewrite(run, lambda n, d: [] if n == gone else [(n, d)])
    r, warnings = pt.READER.read(run, run.name)
    missing = [w for w in warnings if w.slug == "screenshot_missing"]
    assert missing and gone in str(missing[0]) and missing[0].line is not None
    assert all(gone not in (s.frame_pre, s.frame_post) for s in r.steps)


def test_not_a_zip_makes_the_run_invalid_with_a_clear_error(tmp_path):
    run = tmp_path / "broken"
    run.mkdir()
    (run / "trace.zip").write_bytes(b"PK\x03\x04 not really")
    report = score_paths([run], jobs=1)
    [res] = report.results
    assert not res.ok and "trace_unreadable" in res.run["error"] and "trace.zip" in res.run["error"]


def test_native_runs_are_not_claimed(tmp_path):
    d = _copy(tmp_path)
    (d / "run.json").write_text(json.dumps({"format": "trajcheck.run/1", "run_id": "x"}))
    assert not pt.READER.claims(d)


def test_one_folder_mixing_every_format_scores_into_one_ledger(tmp_path):
    """Native, WebVoyager, BrowserGym, browser-use, OSWorld and a Playwright trace side by side."""
    from conftest import REALRUNS, SAMPLES

    if not REALRUNS.is_dir():
        pytest.skip(f"{REALRUNS} is not present")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copytree(SAMPLES / "consent-overlay-on", mixed / "native-run")
    shutil.copytree(REALRUNS / "webvoyager" / "taskAmazon--0", mixed / "taskAmazon--0")
    bg = sorted(p for p in (REALRUNS / "browsergym-fork").iterdir() if p.is_dir())[0]
    shutil.copytree(bg, mixed / bg.name)
    shutil.copytree(REALRUNS / "browser-use" / "AgentHistoryList_elon_musk", mixed / "bu-run")
    shutil.copytree(FIXTURE, mixed / "notes-trace")
    osw = FIXTURE.parents[1] / "osworld" / "results" / "pyautogui" / "screenshot" / "fixture-model" / "chrome"
    shutil.copytree(osw / "0f1e2d3c-search-recipes", mixed / "osworld-task")
    out = tmp_path / "L"
    report = score_paths([mixed], jobs=2)
    ledger.write(out, [r.run for r in report.results], [s for r in report.results for s in r.steps])
    rows = ledger.query(out, "select source_format, status from runs order by 1").rows
    assert rows == [("browser-use", "ok"), ("browsergym", "ok"), ("osworld", "ok"), ("playwright-trace", "ok"),
                    ("trajcheck.run/1", "ok"), ("webvoyager", "ok")]
