"""Playwright trace.zip reader, on a trace recorded by Playwright itself (tests/fixtures/playwright_trace)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from trajcheck.readers import discovery
from trajcheck.store import ledger  # noqa: F401  (discovery first: it registers the adapters)
from trajcheck.readers.adapters.playwright import reader as pt
from trajcheck.readers.adapters.playwright import archive as pz
from trajcheck.base.errors import RunFormatError
from trajcheck.scoring.pipeline import score_paths

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


@pytest.mark.slow
def test_scored_like_a_native_run(tmp_path):
    report = score_paths([FIXTURE.parent], jobs=1)
    assert sorted(r.run["run_id"] for r in report.results) == ["notes-trace", "popup-trace"]
    assert all(r.ok and r.run["source_format"] == "playwright-trace" for r in report.results)
    [res] = [r for r in report.results if r.run["run_id"] == "notes-trace"]
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
    monkeypatch.setattr(pz, "MAX_MEMBERS", 3)
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
    assert not res.ok and res.run["error"].endswith("[file_unreadable]") and "trace.zip" in res.run["error"]


def test_native_runs_are_not_claimed(tmp_path):
    d = _copy(tmp_path)
    (d / "run.json").write_text(json.dumps({"format": "trajcheck.run/1", "run_id": "x"}))
    assert not pt.READER.claims(d)


@pytest.mark.realruns
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


POPUP = FIXTURE.parent / "popup-trace"


def _page_of(member: str | None) -> str | None:
    """The page a screencast member belongs to (Playwright names them screencast/<pageId>-<time>.jpeg)."""
    return member.split("/")[-1].rsplit("-", 1)[0] if member else None


def test_frames_come_from_the_page_the_action_is_on():
    """A real trace with two pages: a click opens a popup, the popup is filled, then the first page is used again."""
    run, warnings = pt.READER.read(POPUP, "popup-trace")
    assert warnings == []
    _nav, compose, fill, mark, _wait = run.steps
    assert [s.action.type for s in run.steps] == ["NAVIGATE", "CLICK", "TYPE", "CLICK", "WAIT"]
    first = _page_of(compose.frame_pre)
    popup = compose.extra["opened_page"]
    assert popup != first and _page_of(compose.frame_post) == popup  # the click's effect is the new page
    assert fill.page.url_before == "http://mail.test/compose"
    assert _page_of(fill.frame_pre) == _page_of(fill.frame_post) == popup
    assert fill.frame_pre == compose.frame_post
    # back on the first page: its own frames, although the popup painted in between
    assert _page_of(mark.frame_pre) == _page_of(mark.frame_post) == first
    assert mark.frame_pre != mark.frame_post and "opened_page" not in mark.extra


def test_a_page_without_an_opener_is_not_the_effect_of_the_action_before_it(tmp_path):
    """The same trace with openerPageId removed (as for a page made by context.new_page()): the click's post
    frame stays on its own page."""
    run = tmp_path / "popup-trace"
    shutil.copytree(POPUP, run)

    def drop_opener(name, data):
        if name == "trace.trace":
            data = data.replace(b',"openerPageId":', b',"x_openerPageId":')
        return [(name, data)]

    _rewrite(run, drop_opener)
    r, _ = pt.READER.read(run, run.name)
    compose = r.steps[1]
    assert "opened_page" not in compose.extra and _page_of(compose.frame_post) == _page_of(compose.frame_pre)


def _one_event_per_call(run: Path, v3: bool) -> None:
    """Rewrite a real trace into the shape of traces v4 (one ``action`` event per call, written when the call
    ends, ``log`` as a list, snapshots named by ``beforeSnapshot``/``afterSnapshot``, screencast frames by
    ``sha1`` under ``resources/``) or v3 (the same under ``metadata``). A conversion for the test, not a
    trace written by an old Playwright."""

    def convert(name, data):
        if name.startswith("screencast/"):
            return [("resources/" + name.split("/", 1)[1], data)]
        if name != "trace.trace":
            return [(name, data)]
        out, calls = [], {}
        for line in data.decode().splitlines():
            ev = json.loads(line)
            t = ev["type"]
            if t == "before":
                calls[ev["callId"]] = dict(ev, type="action", apiName=f"{ev['class'].lower()}.{ev['method']}", log=[])
                calls[ev["callId"]].pop("title", None)
            elif t == "input":
                if ev.get("point"):
                    calls[ev["callId"]]["point"] = ev["point"]
            elif t == "log":
                calls[ev["callId"]]["log"].append(ev["message"])
            elif t == "after":
                c = calls.pop(ev["callId"])
                c["endTime"] = ev["endTime"]
                if ev.get("error"):
                    c["error"] = ev["error"]
                c["beforeSnapshot"], c["afterSnapshot"] = f"before@{c['callId']}", f"after@{c['callId']}"
                if v3:
                    c = {"type": "action", "metadata": {
                        "id": c["callId"], "type": c["class"], "method": c["method"], "apiName": c["apiName"],
                        "params": c["params"], "startTime": c["startTime"], "endTime": c["endTime"],
                        "point": c.get("point"), "log": c["log"], "error": {"error": c["error"]} if c.get("error")
                        else None, "snapshots": [{"title": "before", "snapshotName": c["beforeSnapshot"]},
                                                 {"title": "after", "snapshotName": c["afterSnapshot"]}]}}
                out.append(c)
            elif t == "frame-snapshot":
                snap = ev["snapshot"]
                snap["snapshotName"] = f"{snap.pop('phase')}@{snap['callId']}"
                out.append(ev)
            elif t == "screencast-frame":
                ev["sha1"] = ev.pop("file").split("/", 1)[1]
                out.append(ev)
            else:
                out.append(ev)
        return [(name, "\n".join(json.dumps(e) for e in out).encode())]

    _rewrite(run, convert)


@pytest.mark.parametrize("v3", [False, True], ids=["v4", "v3"])
def test_one_event_per_call_traces_read_like_the_current_format(tmp_path, v3):
    now, _ = pt.READER.read(FIXTURE, "notes-trace")
    run = _copy(tmp_path)
    _one_event_per_call(run, v3)
    old, warnings = pt.READER.read(run, run.name)
    assert warnings == []
    assert [s.action.type for s in old.steps] == [s.action.type for s in now.steps]
    assert [(s.action.x, s.action.y) for s in old.steps] == [(s.action.x, s.action.y) for s in now.steps]
    assert [s.executor_error for s in old.steps] == [s.executor_error for s in now.steps]
    assert [s.page for s in old.steps] == [s.page for s in now.steps]
    assert [s.reasoning for s in old.steps] == [s.reasoning for s in now.steps]
    def strip(f):
        return f and f.split("/", 1)[1]

    assert [(strip(s.frame_pre), strip(s.frame_post)) for s in old.steps] == \
        [(strip(s.frame_pre), strip(s.frame_post)) for s in now.steps]


@pytest.mark.parametrize("member", ["/etc/passwd", "C:/Windows/evil.txt", "resources\\..\\evil.txt",
                                    "resources/../../evil.txt"])
def test_absolute_and_escaping_member_names_are_refused(tmp_path, member):
    run = _copy(tmp_path)
    _rewrite(run, lambda n, d: [(n, d)] + ([(member, b"x")] if n == "trace.trace" else []))
    with pytest.raises(RunFormatError) as exc:
        pt.READER.read(run, run.name)
    [p] = exc.value.problems
    assert p.slug == "path_escapes_run" and p.file == "trace.zip" and repr(member) in p.message


def test_a_member_over_the_size_limit_is_refused(monkeypatch):
    monkeypatch.setattr(pz, "MAX_MEMBER_BYTES", 10_000)
    with pytest.raises(RunFormatError) as exc:
        pt.READER.read(FIXTURE, "notes-trace")
    assert exc.value.problems[0].slug == "trace_too_large" and "trace.trace" in exc.value.problems[0].message
    monkeypatch.setattr(pz, "MAX_MEMBER_BYTES", 256 * 1024 * 1024)
    monkeypatch.setattr(pz, "MAX_TOTAL_BYTES", 20_000)
    with pytest.raises(RunFormatError) as exc:
        pt.READER.read(FIXTURE, "notes-trace")
    assert exc.value.problems[0].slug == "trace_too_large" and "unpacks to" in exc.value.problems[0].message


def test_a_damaged_frame_member_is_a_located_warning(tmp_path):
    """A frame whose bytes were damaged in the archive (bad CRC) costs that frame only."""
    run = _copy(tmp_path)
    src = run / "trace.zip"
    with zipfile.ZipFile(src) as z:
        members = [(i.filename, z.read(i)) for i in z.infolist()]
    first, _ = pt.READER.read(FIXTURE, "notes-trace")
    target = first.steps[3].frame_post  # the frame after the click on Save
    with zipfile.ZipFile(src, "w") as z:
        for name, data in members:
            z.writestr(name, data, zipfile.ZIP_STORED if name == target else zipfile.ZIP_DEFLATED)
    raw = bytearray(src.read_bytes())
    data = dict(members)[target]
    at = raw.index(data) + len(data) // 2
    raw[at] ^= 0xFF
    src.write_bytes(bytes(raw))
    r, warnings = pt.READER.read(run, run.name)
    bad = [w for w in warnings if w.slug == "frame_unreadable"]
    assert bad and target in bad[0].message and bad[0].file == "trace.zip:trace.trace" and bad[0].line is not None
    assert target not in r.inline_frames and len(r.steps) == len(first.steps)


@pytest.mark.slow
def test_trajcheck_score_on_the_fixture_folder(tmp_path):
    from trajcheck.cli.main import app
    from typer.testing import CliRunner

    res = CliRunner().invoke(app, ["score", str(FIXTURE.parent), "--out", str(tmp_path / "L"), "--format", "json",
                                   "-q", "-j", "1"])
    assert res.exit_code == 0, res.output
    assert sorted((r["run_id"], r["status"]) for r in json.loads(res.stdout)["runs"]) == \
        [("notes-trace", "ok"), ("popup-trace", "ok")]
    rows = ledger.query(tmp_path / "L", "select run_id, source_format, n_steps from runs order by 1").rows
    assert rows == [("notes-trace", "playwright-trace", 8), ("popup-trace", "playwright-trace", 5)]


REAL = Path(__file__).resolve().parent / "fixtures" / "real" / "playwright"


def test_traces_playwright_itself_wrote():
    """Real traces (provenance in tests/fixtures/real/playwright/README.md), of trace format 4 (calls named by
    apiName) and 8 (class and method only): every user action a step, its point, its screencast frames."""
    runs = {r.run["run_id"]: r for r in score_paths([REAL], jobs=1).results}
    old, new = runs["pw-upstream-1.31-click"], runs["pwtracellm-v8-scroll"]
    assert [(s["action_type"], s["action_x"], s["action_y"]) for s in old.steps] == [("CLICK", 36.74, 18.48)]
    assert old.steps[0]["frame_pre"] and old.steps[0]["frame_post"] != old.steps[0]["frame_pre"]
    assert old.steps[0]["effect_reason"] == "content_changed_in_region"
    assert [s["action_type"] for s in new.steps] == ["NAVIGATE", "TYPE", "CLICK", "WAIT", "CLICK", "WAIT"]
    assert new.steps[1]["action_text"] == "Hello World"
    assert [(s["action_x"], s["action_y"]) for s in new.steps if s["action_type"] == "CLICK"] == [
        (289.95, 119.37), (400.0, 202.87)]
    frames = {f for s in new.steps for f in (s["frame_pre"], s["frame_post"]) if f}
    assert len(frames) == 3  # the trace's 3 screencast frames, every one used
    assert all(r.run["status"] == "ok" and not r.run["warnings"] for r in runs.values())
