"""The report (issue 40 part 1): thumbnails on every run page, made once per frame content and cached, pages
named by run id, and a report into the same folder writing only what changed."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import trajcheck
from trajcheck.render import reportwork
from trajcheck.render.reportfiles import MANIFEST, page_name
from trajcheck.store import ledger

from conftest import SAMPLES, copy_run

SRC = re.compile(r'<img src="\.\./([^"]+)"')


def _stats(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder``: (inode, mtime_ns); a rewrite (atomic: a new file renamed in) changes both."""
    return {str(p.relative_to(folder)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.rglob("*")
            if p.is_file()}


def _count_makes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """The frames decoded to make a thumbnail or crops: (content hash, thumbnail made) (the report runs in this
    process with jobs=1)."""
    calls: list[tuple[str, bool]] = []
    real = reportwork.make

    def counting(raw: bytes, digest: str | None = None, thumb: bool = True, crops: tuple = ()) -> object:
        calls.append((digest or "?", thumb))
        return real(raw, digest, thumb, crops)

    monkeypatch.setattr(reportwork, "make", counting)
    return calls


@pytest.mark.slow
def test_every_run_page_has_its_thumbnails(sample_ledger: Path, tmp_path: Path) -> None:
    written = trajcheck.report(sample_ledger, tmp_path / "rep", jobs=1)
    runs = ledger.query(sample_ledger, "select run_id from runs").records()
    assert written.runs == len(runs) == written.with_thumbnails == 28
    for r in runs:
        page = (tmp_path / "rep" / "runs" / f"{page_name(r['run_id'])}.html").read_text()
        steps = ledger.query(sample_ledger, f"select frame_pre, frame_post from steps where run_id = '{r['run_id']}'"
                             ).records()
        frames = sum(bool(s["frame_pre"]) + bool(s["frame_post"]) for s in steps)
        shown = SRC.findall(page)
        # a pre and a post thumbnail per step that has the frames, each a file in the report
        assert len([s for s in shown if s.endswith(".webp")]) == frames > 0, r["run_id"]
        assert "(no frame)" not in page and "No thumbnails" not in page
        assert all((tmp_path / "rep" / s).is_file() for s in shown)


@pytest.mark.slow
def test_thumbnails_are_made_once_per_frame_and_reused_from_the_cache(
        sample_ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_makes(monkeypatch)
    trajcheck.report(sample_ledger, tmp_path / "one", jobs=1)
    made = [digest for digest, thumb in calls if thumb]
    # one thumbnail per frame content (pair pages decode nothing); a frame decoded again only for a crop of a
    # region another run's step did not need (two runs sharing a screenshot)
    assert made and len(made) == len(set(made)) and len(calls) - len(made) <= 3
    thumbs = sorted(p.name for p in (tmp_path / "one" / "assets" / "t").glob("*.webp"))
    assert len(thumbs) == len(made)
    calls.clear()
    trajcheck.report(sample_ledger, tmp_path / "two", jobs=1)  # another folder: every thumbnail from the cache
    assert calls == []
    for name in thumbs:
        assert (tmp_path / "two" / "assets" / "t" / name).read_bytes() == \
            (tmp_path / "one" / "assets" / "t" / name).read_bytes()


@pytest.mark.slow
def test_a_second_report_of_an_unchanged_ledger_writes_nothing(sample_ledger: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    first = trajcheck.report(sample_ledger, tmp_path / "rep", jobs=2)
    before = _stats(tmp_path / "rep")
    calls = _count_makes(monkeypatch)
    second = trajcheck.report(sample_ledger, tmp_path / "rep", jobs=1)
    assert (second.written, second.removed) == (0, 0) and second.kept == first.written
    assert _stats(tmp_path / "rep") == before and calls == []


def _score(runs: list[Path], out: Path) -> None:
    trajcheck.score(runs, out, jobs=1)


@pytest.mark.slow
def test_a_grown_ledger_rewrites_only_the_new_pages_and_a_smaller_one_removes_the_gone(tmp_path: Path) -> None:
    names = ["consent-overlay-on", "captcha-blocked", "sequencer-correct"]
    runs = [copy_run(SAMPLES / n, tmp_path / "runs" / n) for n in names]
    _score(runs[:2], tmp_path / "L")
    trajcheck.report(tmp_path / "L", tmp_path / "rep", jobs=1)
    before = _stats(tmp_path / "rep")
    _score(runs, tmp_path / "L")  # one run more
    grown = trajcheck.report(tmp_path / "L", tmp_path / "rep", jobs=1)
    after = _stats(tmp_path / "rep")
    changed = {k for k in after if before.get(k) != after[k]} - {MANIFEST}  # the record: of course
    new_page = f"runs/{page_name(names[2])}.html"
    assert new_page in changed and "index.html" in changed
    assert all(k in (new_page, "index.html") or not k.startswith("runs/") for k in changed)
    assert not {k for k in before if k.startswith("runs/")} & changed  # the old pages untouched
    assert changed - {new_page, "index.html"} <= {k for k in after if k not in before}  # the rest: its new assets
    assert grown.written == len(changed)
    # a ledger without one of them: that run's page and files go, the others stay as they were
    _score(runs[:2], tmp_path / "L2")
    smaller = trajcheck.report(tmp_path / "L2", tmp_path / "rep", jobs=1)
    assert not (tmp_path / "rep" / new_page).exists() and smaller.removed > 0
    last = _stats(tmp_path / "rep")
    assert all(last[k] == after[k] for k in last if k.startswith("runs/"))
    recorded = json.loads((tmp_path / "rep" / MANIFEST).read_text())["files"]
    assert set(recorded) == set(last) - {MANIFEST}


@pytest.mark.slow
def test_files_the_report_did_not_write_are_left_alone(sample_ledger: Path, tmp_path: Path) -> None:
    (tmp_path / "rep" / "runs").mkdir(parents=True)
    (tmp_path / "rep" / "notes.txt").write_text("mine")
    (tmp_path / "rep" / "runs" / "old.html").write_text("mine too")
    trajcheck.report(sample_ledger, tmp_path / "rep", jobs=1, max_runs=0)
    assert (tmp_path / "rep" / "notes.txt").read_text() == "mine"
    assert (tmp_path / "rep" / "runs" / "old.html").read_text() == "mine too"


@pytest.mark.slow
def test_a_tampered_record_cannot_remove_files_outside_the_report(sample_ledger: Path, tmp_path: Path) -> None:
    trajcheck.report(sample_ledger, tmp_path / "rep", jobs=1, max_runs=0)
    (tmp_path / "keep.txt").write_text("outside")
    record = tmp_path / "rep" / MANIFEST
    data = json.loads(record.read_text())
    data["files"]["../keep.txt"] = ["0" * 32, 7]
    data["files"][str(tmp_path / "keep.txt")] = ["0" * 32, 7]
    record.write_text(json.dumps(data))
    trajcheck.report(sample_ledger, tmp_path / "rep", jobs=1, max_runs=0)
    assert (tmp_path / "keep.txt").read_text() == "outside"


HOSTILE = ["../../etc/passwd", "a/b", "a\\b", "..", ".", "", "CON", "con.txt", "nul", "Run-A", "run-a", "run-a~x",
           "ünïcödé", "日本語", "x" * 1000, "x" * 81, "a\x00b", "a b", "~", "-a", ".hidden", "a.", "é", "e\u0301"]


def test_page_names_are_safe_stable_and_distinct_for_hostile_ids() -> None:
    names = [page_name(k) for k in HOSTILE]
    for key, name in zip(HOSTILE, names):
        assert re.fullmatch(r"[a-z0-9][a-z0-9._~-]*", name), (key, name)
        assert len(name) <= 80 and name not in (".", "..") and not name.endswith(".")
        assert name.split(".")[0] not in ("con", "nul")
        assert page_name(key) == name  # stable: the same id always gets the same name
    assert len(set(names)) == len(HOSTILE)  # collision-free, also case-insensitively and for unicode forms
    assert len({n.lower() for n in names}) == len(HOSTILE)
    assert page_name("nc-inbox-read") == "nc-inbox-read" and page_name("run-a") == "run-a"  # plain ids kept


@pytest.mark.slow
def test_hostile_run_ids_get_pages_inside_the_report_whose_links_work(tmp_path: Path) -> None:
    ids = ["../../outside", "a/b/<script>", "ünïcödé", "x" * 300, "Run-A"]
    for k, run_id in enumerate(ids):
        d = copy_run(SAMPLES / "captcha-blocked", tmp_path / "runs" / f"r{k}")
        meta = json.loads((d / "run.json").read_text())
        meta["run_id"] = run_id
        (d / "run.json").write_text(json.dumps(meta))
    _score([tmp_path / "runs"], tmp_path / "L")
    trajcheck.report(tmp_path / "L", tmp_path / "rep", jobs=1)
    pages = sorted(p.name for p in (tmp_path / "rep" / "runs").iterdir())
    assert len(pages) == len(ids) and not (tmp_path / "outside.html").exists()
    index = (tmp_path / "rep" / "index.html").read_text()
    links = re.findall(r'<a href="(runs/[^"#]+)(?:#step-\d+)?">', index)
    # each run's page, linked from the runs table (at its decisive step) and again from the failure modes (they all
    # failed blocked)
    assert len(set(links)) == len(ids) and all((tmp_path / "rep" / link).is_file() for link in links)
    assert "&lt;script&gt;" in index and "<script>" not in index.split("</head>", 1)[1]
    assert all(os.path.dirname(os.path.relpath(tmp_path / "rep" / link, tmp_path / "rep")) == "runs"
               for link in links)


@pytest.mark.slow
def test_the_report_tells_its_progress_run_by_run(sample_ledger: Path, tmp_path: Path) -> None:
    told: list[tuple[int, int]] = []
    written = trajcheck.report(sample_ledger, tmp_path / "rep", jobs=2, max_runs=0,
                               on_progress=lambda done, total: told.append((done, total)))
    assert told == [(k, written.runs) for k in range(1, written.runs + 1)]


@pytest.mark.slow
def test_the_command_draws_a_progress_bar_on_stderr_only(sample_ledger: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-c", "from trajcheck.cli.main import main; main()", "report",
                          str(sample_ledger), "--out", str(tmp_path / "rep"), "--max-runs", "0", "--format", "json"],
                         capture_output=True, text=True, check=True, env={**os.environ, "FORCE_COLOR": "1",
                                                                         "TTY_COMPATIBLE": "1", "COLUMNS": "100"})
    assert json.loads(res.stdout)["runs"] == 28  # stdout is the data alone
    assert "run pages" in res.stderr and "28/28" in res.stderr


@pytest.mark.parametrize("frame", ["consent-overlay-on/frames/001.png", "auth-redirect-hidpi/frames/001.png",
                                   "shop-checkout-1080p-jpeg/frames/001.jpg"])
def test_a_thumbnail_is_the_frame_reduced_to_the_size_the_page_draws_over(frame: str) -> None:
    """The thumbnail's size is the one the page's SVG assumes (the frame divided by a whole factor, rounded up),
    by every route (Wuffs for a PNG, a JPEG decoded at reduced size), and its pixels are the frame's box-filtered
    ones (a JPEG's reduced decode and WebP's loss stay within a few levels)."""
    import io

    import numpy as np
    from PIL import Image

    from trajcheck.base.box import Box
    from trajcheck.media import thumbs

    raw = (SAMPLES / frame).read_bytes()
    made = thumbs.make(raw, crops=(Box(10, 20, 210, 220),))
    assert made.thumb is not None
    name, data = made.thumb
    with Image.open(io.BytesIO(raw)) as full:
        w, h = full.size
        want = np.asarray(full.convert("RGB").reduce(thumbs.factor(w))).astype(int)
        region = np.asarray(full.convert("RGB").crop((10, 20, 210, 220)))
    assert thumbs.parse_thumb_name(name) == (thumbs.content_hash(raw), w, h)
    got = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)
    assert got.shape[:2] == want.shape[:2] == thumbs.thumb_size(w, h)[::-1]
    assert np.abs(got - want).mean() < 4
    [crop] = made.crops.values()
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(crop)).convert("RGB")), region)  # every pixel
