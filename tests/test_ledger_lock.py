"""One writer at a time (issue 17): concurrent `score` processes lose no run, a second writer waits and
names the holder or exits 4, a dead writer's lock is taken over, readers never wait, and `kill -9`
during `score` or `compact` leaves the last committed generation readable."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from trajcheck.store import ledger
from trajcheck.cli.common import Exit
from trajcheck.store.lock import LOCK_FILE, LedgerBusy, acquire

from conftest import SAMPLES

SMALL = ["terms-checkbox-on", "captcha-blocked", "consent-overlay-on", "consent-overlay-off", "drift-loop-on",
         "validation-flash-on"]
CLI = [sys.executable, "-c", "from trajcheck.cli.main import main; main()"]
HOLD = ("import sys, time\nfrom trajcheck.store.lock import acquire\nlock = acquire(sys.argv[1])\n"
        "print('locked', flush=True)\ntime.sleep(float(sys.argv[2]))\n")


def _copies(root: Path, prefix: str, names: list[str]) -> Path:
    for n in names:
        d = shutil.copytree(SAMPLES / n, root / f"{prefix}-{n}")
        meta = json.loads((d / "run.json").read_text())
        meta["run_id"] = d.name
        (d / "run.json").write_text(json.dumps(meta))
    return root


def _holder(out: Path, seconds: float = 60) -> subprocess.Popen[str]:
    """Another process holding the ledger's writer lock."""
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(out), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "locked"
    return p


def _run_ids(out: Path) -> set[str]:
    return {r[0] for r in ledger.query(out, "select run_id from runs").rows}


@pytest.mark.slow
def test_two_concurrent_writers_lose_no_run(tmp_path):
    a = _copies(tmp_path / "a", "a", SMALL[:3])
    b = _copies(tmp_path / "b", "b", SMALL[3:])
    shared = _copies(tmp_path / "s", "s", SMALL[:2])
    out = tmp_path / "L"
    procs = [subprocess.Popen([*CLI, "score", str(x), str(shared), "--out", str(out), "-q", "-j", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for x in (a, b)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    expected = {p.name for x in (a, b, shared) for p in x.iterdir()}
    assert _run_ids(out) == expected and len(expected) == 8
    assert ledger.query(out, "select count(*) from runs").rows == [(8,)]  # the shared runs once each
    index = json.loads((out / "digests.json").read_text())
    assert sorted(r[0] for r in index["runs"]) == sorted(expected)
    assert not (out / LOCK_FILE).read_text()  # released: no holder named


@pytest.mark.slow
def test_a_second_writer_names_the_holder_then_exits_4(tmp_path):
    runs = _copies(tmp_path / "r", "r", SMALL[:1])
    out = tmp_path / "L"
    subprocess.run([*CLI, "score", str(runs), "--out", str(out), "-q", "-j", "1"], check=True, capture_output=True)
    manifest = (out / "manifest.json").read_text()
    holder = _holder(out)
    try:
        _copies(runs, "new", SMALL[1:2])
        start = time.monotonic()
        res = subprocess.run([*CLI, "score", str(runs), "--out", str(out), "-q", "-j", "1", "--wait", "1.5"],
                             capture_output=True, text=True, timeout=60)
        took = time.monotonic() - start
        assert res.returncode == int(Exit.LOCKED) == 4, res.stderr
        assert 1.5 <= took < 30
        waiting = [l for l in res.stderr.splitlines() if l.startswith("waiting for")]
        assert waiting and f"locked by pid {holder.pid} on {socket.gethostname()}" in waiting[0]
        assert "since 20" in waiting[0] and "(-c " in waiting[0]  # when, and the command that holds it
        assert "gave up after" in res.stderr and "nothing was written" in res.stderr
        assert (out / "manifest.json").read_text() == manifest
        # readers never take the lock: they answer at once, from the last committed generation
        start = time.monotonic()
        q = subprocess.run([*CLI, "query", str(out), "select count(*) as n from runs", "--format", "json"],
                           capture_output=True, text=True, timeout=60)
        assert q.returncode == 0 and json.loads(q.stdout) == [{"n": 1}] and time.monotonic() - start < 20
        c = subprocess.run([*CLI, "compact", str(out), "--wait", "0"], capture_output=True, text=True, timeout=60)
        assert c.returncode == 4 and "gave up" in c.stderr
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow
def test_a_waiting_writer_proceeds_when_the_holder_finishes(tmp_path):
    runs = _copies(tmp_path / "r", "r", SMALL[:1])
    out = tmp_path / "L"
    # held long enough that the writer, whose start takes over a second on a busy machine, finds it held
    # (with 1 s, under load average 5-8 it started after the holder had finished: "took over the lock")
    holder = _holder(out, seconds=6.0)
    res = subprocess.run([*CLI, "score", str(runs), "--out", str(out), "-q", "-j", "1", "--wait", "60"],
                         capture_output=True, text=True, timeout=120)
    holder.wait()
    assert res.returncode == 0, res.stderr
    assert "waiting for" in res.stderr and f"pid {holder.pid}" in res.stderr
    assert _run_ids(out) == {"r-terms-checkbox-on"}


@pytest.mark.slow
def test_a_lock_left_by_a_killed_writer_is_taken_over(tmp_path):
    runs = _copies(tmp_path / "r", "r", SMALL[:1])
    out = tmp_path / "L"
    out.mkdir()
    holder = _holder(out)
    holder.send_signal(signal.SIGKILL)  # the kernel drops its lock; its file still names it
    holder.wait()
    assert json.loads((out / LOCK_FILE).read_text())["pid"] == holder.pid
    start = time.monotonic()
    res = subprocess.run([*CLI, "score", str(runs), "--out", str(out), "-q", "-j", "1", "--wait", "0"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert time.monotonic() - start < 60
    assert f"took over the lock of {out} left by pid {holder.pid}" in res.stderr and "(the process is gone)" in res.stderr
    assert _run_ids(out) == {"r-terms-checkbox-on"}


@pytest.mark.slow
def test_threads_of_one_process_take_turns_and_the_holder_may_take_it_again(tmp_path):
    out = tmp_path / "L"
    order: list[str] = []
    with acquire(out) as first:
        with acquire(out):  # the same thread again (ledger.write inside a score would)
            pass
        assert not first.released

        def other() -> None:
            try:
                acquire(out, wait=0.3)
            except LedgerBusy as exc:
                order.append(f"busy: {exc.holder}")
            with acquire(out, wait=30):
                order.append("second")

        t = threading.Thread(target=other)
        t.start()
        time.sleep(0.6)
        order.append("first done")
    t.join(30)
    assert order[0].startswith("busy: pid") and "another thread" in order[0]
    assert order[1:] == ["first done", "second"]


def test_no_lock_file_is_left_where_nothing_was_committed(tmp_path):
    with acquire(tmp_path / "new"):
        assert (tmp_path / "new" / LOCK_FILE).exists()
    assert not (tmp_path / "new").exists()  # created for the lock, nothing committed: removed
    (tmp_path / "theirs").mkdir()
    with acquire(tmp_path / "theirs"):
        pass
    assert (tmp_path / "theirs").is_dir() and not list((tmp_path / "theirs").iterdir())


def _kill_when(proc: subprocess.Popen[str], root: Path, pattern: str, timeout: float = 120) -> bool:
    """SIGKILL ``proc`` as soon as a file matching ``pattern`` appears under ``root``; False if it ended first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if any(root.glob(pattern)):
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.002)
    proc.wait()
    return False


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["**/part-*.tmp", "steps/part-000002.parquet"])  # writing; committing
def test_kill_9_during_score_leaves_the_last_generation_readable(tmp_path, moment):
    runs = _copies(tmp_path / "r", "r", SMALL[:2])
    out = tmp_path / "L"
    subprocess.run([*CLI, "score", str(runs), "--out", str(out), "-q", "-j", "1"], check=True, capture_output=True)
    before = _run_ids(out)
    _copies(runs, "new", SMALL[2:])
    proc = subprocess.Popen([*CLI, "score", str(runs), "--out", str(out), "-q", "-j", "1", "--force"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    _kill_when(proc, out, moment)
    got = _run_ids(out)  # readable: the old generation, or the new one if the kill came after the commit
    assert got in (before, {p.name for p in runs.iterdir()})
    res = subprocess.run([*CLI, "score", str(runs), "--out", str(out), "-q", "-j", "1"], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr  # the killed writer's lock is gone with it
    assert _run_ids(out) == {p.name for p in runs.iterdir()}
    assert not list(out.glob("**/*.tmp"))


@pytest.mark.slow
def test_kill_9_during_compact_leaves_the_last_generation_readable(tmp_path):
    runs = _copies(tmp_path / "r", "r", SMALL[:3])
    out = tmp_path / "L"
    for name in SMALL[:3]:  # three generations, three parts a table
        subprocess.run([*CLI, "score", str(runs / f"r-{name}"), "--out", str(out), "-q", "-j", "1"], check=True,
                       capture_output=True)
    rows = sorted(ledger.query(out, "select run_id, input_digest from runs").rows)
    proc = subprocess.Popen([*CLI, "compact", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            text=True)
    _kill_when(proc, out, "**/part-*.tmp")
    assert sorted(ledger.query(out, "select run_id, input_digest from runs").rows) == rows
    res = subprocess.run([*CLI, "compact", str(out), "--wait", "0"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert sorted(ledger.query(out, "select run_id, input_digest from runs").rows) == rows
    assert all(len(v) == 1 for v in ledger.read_manifest(out).parts.values())


@pytest.mark.slow
def test_ledger_write_and_compact_hold_the_lock(tmp_path, sample_ledger):
    out = tmp_path / "L"
    shutil.copytree(sample_ledger, out)
    holder = _holder(out)
    try:
        with pytest.raises(LedgerBusy):
            ledger.compact(out, wait=0.2)
        with pytest.raises(LedgerBusy):
            ledger.write(out, [], [], wait=0.2)
    finally:
        holder.kill()
        holder.wait()
    assert os.path.exists(out / "manifest.json")


@pytest.mark.slow
def test_one_report_at_a_time_writes_a_folder(tmp_path, sample_ledger):
    """Two reports into one folder would mix their pages and remove each other's: a report holds the folder's
    lock from before it reads the last report's record until it has written its own. A second names the holder,
    waits up to --wait, then exits 4 having written nothing; once the first is done it writes, and leaves no
    lock file behind."""
    report = tmp_path / "report"
    first = subprocess.run([*CLI, "report", str(sample_ledger), "--out", str(report), "-q", "-j", "1"],
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert not (report / LOCK_FILE).exists()
    before = {p: p.stat().st_mtime_ns for p in report.rglob("*") if p.is_file()}
    (report / "index.html").unlink()  # the next report that runs writes it again
    holder = _holder(report)
    try:
        res = subprocess.run([*CLI, "report", str(sample_ledger), "--out", str(report), "-q", "-j", "1",
                              "--wait", "1"], capture_output=True, text=True, timeout=120)
        assert res.returncode == int(Exit.LOCKED), res.stderr
        assert f"locked by pid {holder.pid}" in res.stderr and "nothing was written" in res.stderr
        assert not (report / "index.html").exists()
        assert {p: p.stat().st_mtime_ns for p in report.rglob("*") if p.is_file() and p.name != LOCK_FILE} == \
            {p: t for p, t in before.items() if p.name != "index.html"}
    finally:
        holder.kill()
        holder.wait()
    again = subprocess.run([*CLI, "report", str(sample_ledger), "--out", str(report), "-q", "-j", "1"],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert (report / "index.html").exists() and not (report / LOCK_FILE).exists()
