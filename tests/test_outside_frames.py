"""Screenshots outside the run's folder, inside the folder the user asked to score (issue 27's leftover): the
CS715 harness (tests/fixtures/real/anthropic, provenance in its README) keeps every session log in `logs/` beside
one `screenshots/` folder, and its logs name `screenshots/<id>.png` from the harness's own folder. Here the two
committed sessions are laid out as the harness keeps them: harness/logs/*.json, harness/screenshots/*.png."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import trajcheck
from trajcheck.readers import discovery
from trajcheck.readers.adapters import ALL
from trajcheck.scoring.pipeline import score_paths
from trajcheck.scoring.rows import RunResult
from trajcheck.scoring.validation import validate_paths

from conftest import ROOT

REAL = ROOT / "tests" / "fixtures" / "real" / "anthropic"
SESSIONS = ("cs715-session-3", "cs715-session-15")
S3 = "logs/session_3_Basic_App_File_20250701_035818"
S15 = "logs/session_15_Basic_App_File_20250701_112824"


@pytest.fixture(autouse=True)
def adapters(monkeypatch):
    have = {r.name for r in discovery.READERS}
    monkeypatch.setattr(discovery, "READERS", discovery.READERS + [r for r in ALL if r.name not in have])


def _harness(tmp_path: Path, rewrite: str | None = None) -> Path:
    """The two real sessions in the harness's own layout; ``rewrite`` replaces the `screenshots/` prefix of the
    image paths the logs record (``../screenshots/``: a log that names them from its own folder)."""
    h = tmp_path / "harness"
    (h / "logs").mkdir(parents=True)
    (h / "screenshots").mkdir()
    for sess in SESSIONS:
        for f in (REAL / sess).glob("*.json"):
            text = f.read_text()
            if rewrite is not None:
                text = text.replace('"image_path": "screenshots/', f'"image_path": "{rewrite}')
            (h / "logs" / f.name).write_text(text)
        for png in (REAL / sess / "screenshots").iterdir():
            shutil.copy(png, h / "screenshots" / png.name)
    return h


def _score(path: Path) -> dict[str, RunResult]:
    report = score_paths([path], jobs=1)
    assert not report.problems, report.problems  # screenshots/ is part of the runs, no folder left unclaimed
    return {r.run["run_id"]: r for r in report.results}


def _frames(runs: dict[str, RunResult]) -> set[str]:
    return {f for r in runs.values() for s in r.steps for f in (s["frame_pre"], s["frame_post"]) if f}


def _warned(r: RunResult, slug: str) -> list[str]:
    return [w for w in r.run["warnings"] if w.endswith(f"[{slug}]")]


def test_screenshots_beside_the_logs_folder_are_found_inside_the_folder_scored(tmp_path):
    """Scored from the harness's folder, every screenshot the logs name is found beside logs/, the frames are
    read (the same steps as the sessions laid out one folder each), and a note says where they came from."""
    runs = _score(_harness(tmp_path))
    want = {r.run["run_id"]: r for r in score_paths([REAL], jobs=1).results}
    assert sorted(runs) == [S15, S3]
    for got, same in ((runs[S3], want["cs715-session-3"]), (runs[S15], want["cs715-session-15"])):
        keep = ("action_type", "action_x", "action_y", "action_effect_observed", "effect_reason", "frame_width")
        assert [[s[k] for k in keep] for s in got.steps] == [[s[k] for k in keep] for s in same.steps]
        assert len(_warned(got, "screenshot_outside_run")) == 1  # one note per folder the log names
        assert not _warned(got, "frames_missing") and not _warned(got, "frames_not_found")
    assert _frames(runs) == {f"../screenshots/{p.name}" for p in (tmp_path / "harness" / "screenshots").iterdir()}
    assert sum(r.frames for r in runs.values()) == 4  # each screenshot decoded
    report = validate_paths([tmp_path / "harness"])
    assert not [p for p in report.problems if p.severity == "error"]
    assert not [p for p in report.problems if p.slug in ("frames_missing", "frame_unreadable")]


def test_a_path_through_dotdot_that_stays_in_the_folder_scored_is_read(tmp_path):
    runs = _score(_harness(tmp_path, rewrite="../screenshots/"))
    assert len(_frames(runs)) == 4 and sum(r.frames for r in runs.values()) == 4
    assert all(_warned(r, "screenshot_outside_run") for r in runs.values())


def test_the_logs_folder_scored_alone_does_not_reach_beside_it(tmp_path):
    """The boundary is the folder the user passed: logs/ alone finds no screenshot (the steps say so, and the
    run-level warning too); a path through `..` is refused with the clear error, never read."""
    h = _harness(tmp_path)
    runs = _score(h / "logs")
    assert sum(r.frames for r in runs.values()) == 0
    assert all(_warned(r, "frames_not_found") for r in runs.values())
    h2 = _harness(tmp_path / "dotdot", rewrite="../screenshots/")
    runs = _score(h2 / "logs")
    assert sum(r.frames for r in runs.values()) == 0
    escapes = [w for r in runs.values() for w in _warned(r, "path_escapes_run")]
    assert escapes and all("leaves the run directory" in w and "score the folder that holds both" in w
                           for w in escapes)


def test_paths_and_links_that_leave_the_folder_scored_are_refused(tmp_path):
    """The hostile-input guarantees hold at the new boundary: `..` past the folder scored, an absolute path
    outside it, and a link inside it that leads out are refused (path_escapes_run or not found), never read."""
    secret = tmp_path / "secret"
    secret.mkdir()
    for png in (REAL / "cs715-session-3" / "screenshots").iterdir():
        shutil.copy(png, secret / png.name)
    h = _harness(tmp_path / "a", rewrite="../../../secret/")  # logs/ -> harness -> a -> tmp_path/secret
    runs = _score(h)
    assert sum(r.frames for r in runs.values()) == 0 and not any(f.startswith("..") for f in _frames(runs))
    assert all(_warned(r, "path_escapes_run") for r in runs.values())
    h = _harness(tmp_path / "b", rewrite=f"{secret}/")  # absolute, outside the folder scored
    runs = _score(h)
    assert sum(r.frames for r in runs.values()) == 0
    h = _harness(tmp_path / "c")
    shutil.rmtree(h / "screenshots")
    os.symlink(secret, h / "screenshots")  # screenshots/ is a link to a folder outside the one scored
    runs = _score(h)
    assert sum(r.frames for r in runs.values()) == 0
    assert not any(f.startswith("..") for f in _frames(runs))


def test_an_absolute_path_inside_the_folder_scored_is_read(tmp_path):
    """A harness that recorded absolute paths, its logs scored where it wrote them."""
    h = _harness(tmp_path)
    for log in (h / "logs").iterdir():
        text = log.read_text()
        log.write_text(text.replace('"image_path": "screenshots/', f'"image_path": "{h.resolve()}/screenshots/'))
    runs = _score(h)
    assert sum(r.frames for r in runs.values()) == 4 and len(_frames(runs)) == 4


def _inputs(ledger: Path) -> dict[str, dict[str, list[object]]]:
    from trajcheck.store import ledger as L

    rows = L.query(ledger, "select run_id, inputs from runs").rows
    return {rid: json.loads(inputs)["files"] for rid, inputs in rows}


@pytest.mark.slow
def test_the_digest_covers_the_screenshots_beside_the_run(tmp_path):
    """Rescoring skips an unchanged run, and rescores a run whose screenshot outside its folder changed, was
    removed, or (missing when it was scored) was copied in later."""
    h = _harness(tmp_path)
    shots = h / "screenshots"
    ledger = tmp_path / "L"
    assert trajcheck.score([h], out=ledger, jobs=1).scored == 2
    files = _inputs(ledger)
    assert {k for k in files[S3] if k.startswith("../")} == {
        "../screenshots/screenshot_toolu_014PqpSmUHdP7HQyJuQxzt7h.png",
        "../screenshots/screenshot_toolu_015CnVW2aFLNHY7fqmn4cAiu.png"}
    again = trajcheck.score([h], out=ledger, jobs=1)
    assert (again.scored, sorted(again.skipped)) == (0, [S15, S3])
    one = shots / "screenshot_toolu_015CnVW2aFLNHY7fqmn4cAiu.png"  # session 3's
    one.write_bytes((shots / "screenshot_toolu_01B5hjdsFhHfZGM5cy5i1A2g.png").read_bytes())
    changed = trajcheck.score([h], out=ledger, jobs=1)
    assert (changed.scored, changed.skipped) == (1, [S15])
    saved = one.read_bytes()
    one.unlink()
    gone = trajcheck.score([h], out=ledger, jobs=1)
    assert (gone.scored, gone.skipped) == (1, [S15])
    assert _inputs(ledger)[S3]["../screenshots/screenshot_toolu_015CnVW2aFLNHY7fqmn4cAiu.png"] == [0, 0, "absent"]
    still = trajcheck.score([h], out=ledger, jobs=1)
    assert still.scored == 0  # a screenshot still missing is no change
    one.write_bytes(saved)  # copied in later: found, and the run is scored again
    back = trajcheck.score([h], out=ledger, jobs=1)
    assert (back.scored, back.skipped) == (1, [S15])


@pytest.mark.slow
def test_the_report_shows_the_screenshots_beside_the_run(tmp_path):
    h = _harness(tmp_path)
    trajcheck.score([h], out=tmp_path / "L", jobs=1)
    trajcheck.report(tmp_path / "L", tmp_path / "R")
    pages = "".join(p.read_text() for p in (tmp_path / "R" / "runs").glob("*.html"))
    assert pages.count("<img ") >= 4
