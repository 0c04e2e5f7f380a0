"""Hostile inputs (issue 19): every one ends in bounded time with a named problem, and the rest of the batch
is scored. Each row of the issue's table has a test here; time limits are generous (a hang is what they
catch), and memory is measured by benchmarks/bench_hostile.py, not here.

Inputs that could hang (FIFOs) are scored by `trajcheck score` in a subprocess with a timeout, so a
regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from trajcheck.store import ledger
from trajcheck.media.domscan import MAX_DOM_ELEMENTS, dom_shape

from conftest import ROOT, SAMPLES, read_steps

GOOD = SAMPLES / "terms-checkbox-on"  # a small run with frames, DOM snapshots and a click
TRACE = ROOT / "tests" / "fixtures" / "playwright_trace" / "notes-trace"
fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes (POSIX)")


def _cli(*args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], float]:
    """`trajcheck ARGS` in a subprocess; (result, seconds). A hang fails the test at ``timeout``."""
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-c", "from trajcheck.cli.main import main; main()", *args],
                         capture_output=True, text=True, timeout=timeout)
    return res, time.monotonic() - start


def _batch(tmp_path: Path, *names: str) -> Path:
    """A folder of copies of the good run, one per name (run_id = name), plus the untouched 'good' run."""
    root = tmp_path / "runs"
    for name in ("good", *names):
        d = shutil.copytree(GOOD, root / name)
        meta = json.loads((d / "run.json").read_text())
        meta["run_id"] = name
        (d / "run.json").write_text(json.dumps(meta))
    return root


def _rows(out: Path) -> dict[str, tuple[str, str, list[str]]]:
    return {r[0]: (r[1], r[2], list(r[3] or [])) for r in
            ledger.query(out, "select run_id, status, error, warnings from runs").rows}


def _assert_scored(out: Path, expected: set[str]) -> dict[str, tuple[str, str, list[str]]]:
    rows = _rows(out)
    assert set(rows) == expected, rows.keys()
    assert rows["good"][0] == "ok" and not rows["good"][1]
    return rows


# --- a FIFO anywhere in a run folder ------------------------------------------------------------------


@pytest.mark.slow
@fifo_only
def test_a_fifo_beside_run_json_is_never_opened(tmp_path):
    root = _batch(tmp_path, "fifo-extra")
    os.mkfifo(root / "fifo-extra" / "extra.fifo")
    res, took = _cli("score", str(root), "--out", str(tmp_path / "L"), "-q", "-j", "1")
    assert res.returncode == 0, res.stderr
    assert took < 30
    rows = _assert_scored(tmp_path / "L", {"good", "fifo-extra"})
    status, _, warnings = rows["fifo-extra"]
    assert status == "ok" and any("extra.fifo" in w and "[not_a_regular_file]" in w for w in warnings)
    inputs = json.loads(ledger.query(tmp_path / "L", "select inputs from runs where run_id = 'fifo-extra'").rows[0][0])
    assert inputs["files"]["extra.fifo"][2] == "special:a named pipe (FIFO)"


@pytest.mark.slow
@fifo_only
def test_fifo_frames_snapshots_and_contracts_are_warnings_and_never_opened(tmp_path):
    root = _batch(tmp_path, "fifo-frame", "fifo-dom", "fifo-contract")
    steps = read_steps(root / "good")
    frame = next(s["frames"]["post"] for s in steps if s["action"].get("x") is not None)
    dom = next(s["page"]["dom_after"] for s in steps if (s.get("page") or {}).get("dom_after"))
    (root / "fifo-frame" / frame).unlink()
    os.mkfifo(root / "fifo-frame" / frame)
    (root / "fifo-dom" / dom).unlink()
    os.mkfifo(root / "fifo-dom" / dom)
    (root / "fifo-contract" / "contract.json").unlink(missing_ok=True)
    os.mkfifo(root / "fifo-contract" / "contract.json")
    res, took = _cli("score", str(root), "--out", str(tmp_path / "L"), "-q", "-j", "2")
    assert res.returncode == 0, res.stderr
    assert took < 30
    rows = _assert_scored(tmp_path / "L", {"good", "fifo-frame", "fifo-dom", "fifo-contract"})
    for name, fragment in (("fifo-frame", "field frames.post"), ("fifo-dom", "field page.dom_after"),
                           ("fifo-contract", "contract.json")):
        status, _, warnings = rows[name]
        assert status == "ok", rows[name]
        assert any(fragment in w and "[not_a_regular_file]" in w for w in warnings), (name, warnings)
    reasons = {r[0] for r in ledger.query(tmp_path / "L", "select effect_reason from steps where run_id = "
                                                          "'fifo-frame' and (frame_post = ? or frame_pre = ?)"
                                          .replace("?", repr(frame))).rows}
    assert reasons <= {"not_a_regular_file", "not_high_risk"} and "not_a_regular_file" in reasons
    res, took = _cli("validate", str(root), "--format", "json")
    assert took < 30 and "not_a_regular_file" in {p["slug"] for p in json.loads(res.stdout)["problems"]}


@pytest.mark.slow
@fifo_only
@pytest.mark.parametrize("name", ["run.json", "steps.jsonl"])
def test_a_fifo_run_file_makes_the_run_invalid(tmp_path, name):
    root = _batch(tmp_path, "fifo-run")
    (root / "fifo-run" / name).unlink()
    os.mkfifo(root / "fifo-run" / name)
    res, took = _cli("score", str(root), "--out", str(tmp_path / "L"), "-q", "-j", "1")
    assert res.returncode == 1, res.stderr
    assert took < 30
    rows = _assert_scored(tmp_path / "L", {"good", "fifo-run"})
    status, error, _ = rows["fifo-run"]
    assert status == "invalid" and f"{name}: a named pipe (FIFO)" in error and "[not_a_regular_file]" in error


@pytest.mark.slow
@fifo_only
def test_a_fifo_trace_zip_makes_the_run_invalid(tmp_path):
    root = _batch(tmp_path)
    os.mkdir(root / "trace-run")
    os.mkfifo(root / "trace-run" / "trace.zip")
    res, took = _cli("score", str(root), "--out", str(tmp_path / "L"), "-q", "-j", "1")
    assert res.returncode == 1 and took < 30, res.stderr
    status, error, _ = _assert_scored(tmp_path / "L", {"good", "trace-run"})["trace-run"]
    assert status == "invalid" and "trace.zip" in error and "[not_a_regular_file]" in error


# --- one rule for links ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["run.json", "steps.jsonl", "contract.json", "dom"])
def test_a_run_file_linking_outside_the_run_is_path_escapes_run(tmp_path, name):
    root = _batch(tmp_path, "linked")
    run = root / "linked"
    outside = tmp_path / "outside"
    outside.mkdir()
    if name == "dom":
        steps = read_steps(run)
        rel = next(s["page"]["dom_after"] for s in steps if (s.get("page") or {}).get("dom_after"))
    else:
        rel = name
        if name == "contract.json":
            (run / rel).write_text('{"format": "trajcheck.contract/1", "checks": []}')
    shutil.move(run / rel, outside / "target")
    os.symlink(outside / "target", run / rel)
    start = time.monotonic()
    result = __import__("trajcheck").score([root], out=tmp_path / "L", jobs=1)
    assert time.monotonic() - start < 30
    status, error, _ = _assert_scored(tmp_path / "L", {"good", "linked"})["linked"]
    assert status == "invalid" and "[path_escapes_run]" in error and rel in error, error
    assert len(result.invalid) == 1


def test_a_trace_zip_linking_outside_the_run_is_path_escapes_run(tmp_path):
    root = _batch(tmp_path)
    (root / "trace-run").mkdir()
    os.symlink(TRACE / "trace.zip", root / "trace-run" / "trace.zip")
    __import__("trajcheck").score([root], out=tmp_path / "L", jobs=1)
    status, error, _ = _assert_scored(tmp_path / "L", {"good", "trace-run"})["trace-run"]
    assert status == "invalid" and "[path_escapes_run]" in error and "trace.zip" in error


def test_links_that_stay_inside_the_run_are_followed(tmp_path):
    root = _batch(tmp_path, "inside")
    run = root / "inside"
    (run / "meta").mkdir()
    shutil.move(run / "run.json", run / "meta" / "run.json")
    os.symlink("meta/run.json", run / "run.json")
    __import__("trajcheck").score([root], out=tmp_path / "L", jobs=1)
    assert _assert_scored(tmp_path / "L", {"good", "inside"})["inside"][0] == "ok"


# --- archives that claim little and unpack to a lot -----------------------------------------------------


def _trace_with_big_frames(run: Path, size: int, lie: bool) -> list[str]:
    """Rewrite the trace fixture with every screencast frame a step uses replaced by ``size`` zero bytes
    (deflated to almost nothing); with ``lie``, each such member's header claims 1,000 bytes."""
    from trajcheck.readers.adapters.playwright import reader as pt

    first, _ = pt.READER.read(TRACE, "notes-trace")
    used = sorted({f for s in first.steps for f in (s.frame_pre, s.frame_post) if f})
    shutil.copytree(TRACE, run)
    src = run / "trace.zip"
    with zipfile.ZipFile(src) as z:
        members = [(i.filename, z.read(i)) for i in z.infolist()]
    with zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            z.writestr(name, bytes(size) if name in used else data)
    if lie:
        raw = bytearray(src.read_bytes())
        with zipfile.ZipFile(src) as z:
            infos = [i for i in z.infolist() if i.filename in used]
        for info in infos:  # the uncompressed size, in the local header and in the central directory
            for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
                at = raw.find(sig + b"", 0)
                while at >= 0:
                    name_len = int.from_bytes(raw[at + (26 if sig == b"PK\x03\x04" else 28):][:2], "little")
                    start = at + (30 if sig == b"PK\x03\x04" else 46)
                    if raw[start:start + name_len] == info.filename.encode():
                        raw[at + off:at + off + 4] = (1000).to_bytes(4, "little")
                    at = raw.find(sig, at + 4)
        src.write_bytes(bytes(raw))
    return used


@pytest.mark.slow
@pytest.mark.parametrize("lie", [False, True], ids=["honest-headers", "lying-headers"])
def test_trace_frames_are_unpacked_lazily_with_a_byte_budget(tmp_path, monkeypatch, lie):
    """Frame members that unpack past the frame byte budget are refused (frame_too_large) after that many
    bytes, whatever their header says (a lying header stops zipfile at the claimed size: a CRC error,
    frame_unreadable); the steps are scored without them and the other run of the batch is scored."""
    from trajcheck.media import frames

    monkeypatch.setattr(frames, "MAX_FRAME_BYTES", 1 << 20)  # 1 MiB here; 32 MiB in real runs
    root = _batch(tmp_path)
    used = _trace_with_big_frames(root / "trace-run", 3 << 20, lie)
    start = time.monotonic()
    result = __import__("trajcheck").score([root], out=tmp_path / "L", jobs=1)
    assert time.monotonic() - start < 30
    status, _, warnings = _assert_scored(tmp_path / "L", {"good", "trace-run"})["trace-run"]
    assert status == "ok" and not result.invalid
    slug = "frame_unreadable" if lie else "frame_too_large"
    named = [w for w in warnings if f"[{slug}]" in w]
    assert named and all("trace.zip:trace.trace" in w for w in named)
    assert {u for u in used if any(repr(u) in w for w in named)} == set(used)


def test_trace_frames_are_not_held_in_memory(tmp_path):
    """The reader keeps no frame bytes: the run's inline frames unpack one member per access."""
    from trajcheck.readers.adapters.playwright import reader as pt

    run, _ = pt.READER.read(TRACE, "notes-trace")
    assert isinstance(run.inline_frames, pt.TraceFrames)
    name = next(iter(run.inline_frames))
    assert run.inline_frames[name][:2] in (b"\xff\xd8", b"\x89P")  # JPEG or PNG bytes, unpacked now
    assert not any(isinstance(v, bytes) for v in vars(run.inline_frames).values())


# --- DOM snapshots: linear time, a depth limit ----------------------------------------------------------


def _with_dom(root: Path, name: str, html: str) -> str:
    steps = read_steps(root / name)
    rel = next(s["page"]["dom_after"] for s in steps if (s.get("page") or {}).get("dom_after"))
    (root / name / rel).write_text(html)
    return rel


@pytest.mark.slow
def test_a_deep_dom_snapshot_is_a_named_warning_in_bounded_time(tmp_path):
    root = _batch(tmp_path, "deep-dom", "wide-dom")
    deep = _with_dom(root, "deep-dom", "<html><body>" + "<div>" * 80_000 + "x" + "</div>" * 80_000 + "</body></html>")
    _with_dom(root, "wide-dom", "<html><body>" + "<i></i>" * (MAX_DOM_ELEMENTS + 10) + "</body></html>")
    start = time.monotonic()
    __import__("trajcheck").score([root], out=tmp_path / "L", jobs=1)
    assert time.monotonic() - start < 20  # 6.6 s for the parse alone before the limit
    rows = _assert_scored(tmp_path / "L", {"good", "deep-dom", "wide-dom"})
    status, _, warnings = rows["deep-dom"]
    assert status == "ok" and any(repr(deep) in w and "[dom_too_deep]" in w for w in warnings), warnings
    status, _, warnings = rows["wide-dom"]
    assert status == "ok" and any("[dom_too_large]" in w for w in warnings), warnings


def test_dom_scan_time_is_linear_in_depth():
    times = []
    for n in (20_000, 80_000):
        html = "<html><body>" + "<div>" * n + "x" + "</div>" * n
        start = time.perf_counter()
        shape = dom_shape(html, max_depth=10 ** 9)
        times.append(time.perf_counter() - start)
        assert shape.depth >= n
    assert times[1] < 4 * times[0] * 3  # linear (x4 input), with slack for a noisy machine


@pytest.mark.parametrize("html", [
    "<div>" * 700, "<div/>" * 700, "<div></span>" * 700, "<svg>" + "<div/>" * 700,
    "<svg><foreignObject>" + "<div/>" * 700, "<span>" * 700, "<table><tr><td>" * 200,
    "<ul>" + "<li><div>" * 400, "<p><b><div>" * 300, "<div>" + "<b class=x{}>" * 300 + "</div>x<div>" * 3,
    "".join(f"<div><b class=c{i}></div>x" for i in range(300)),
])
def test_dom_scan_never_finds_less_depth_than_the_parser_builds(html):
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    deepest, stack = 0, [(tree.root, 1)]
    while stack:
        node, d = stack.pop()
        if not node.tag.startswith("-"):
            deepest = max(deepest, d)
            c = node.child
            while c is not None:
                stack.append((c, d + 1))
                c = c.next
    assert dom_shape(html, max_depth=10 ** 9).depth >= deepest - 1  # a leaf that is never pushed: -1


def test_dom_scan_agrees_with_the_parser_on_the_sample_snapshots():
    from selectolax.lexbor import LexborHTMLParser

    for f in sorted(SAMPLES.glob("*/dom/*.html")):
        html = f.read_text("utf-8")
        tree = LexborHTMLParser(html)
        deepest, stack = 0, [(tree.root, 1)]
        while stack:
            node, d = stack.pop()
            if not node.tag.startswith("-"):
                deepest = max(deepest, d)
                c = node.child
                while c is not None:
                    stack.append((c, d + 1))
                    c = c.next
        assert deepest - 1 <= dom_shape(html).depth <= deepest + 3, f


# --- numbers JSON cannot hold ---------------------------------------------------------------------------


@pytest.mark.parametrize("token,field", [("1e999", "outcome.score"), ("-1e999", "outcome.score"),
                                         ("NaN", "outcome.score"), ("Infinity", "outcome.score")])
def test_non_finite_numbers_in_run_json_make_the_run_invalid(tmp_path, token, field):
    root = _batch(tmp_path, "odd-number")
    meta = json.loads((root / "odd-number" / "run.json").read_text())
    meta.setdefault("outcome", {})["score"] = "__X__"
    (root / "odd-number" / "run.json").write_text(json.dumps(meta).replace('"__X__"', token))
    __import__("trajcheck").score([root], out=tmp_path / "L", jobs=1)
    status, error, _ = _assert_scored(tmp_path / "L", {"good", "odd-number"})["odd-number"]
    assert status == "invalid" and "[value_out_of_range]" in error and "run.json" in error
    assert f"field {field}" in error and token.lstrip("-") in error


def test_non_finite_numbers_anywhere_in_a_step_are_refused_with_their_line_and_field(tmp_path):
    root = _batch(tmp_path, "odd-step")
    lines = (root / "odd-step" / "steps.jsonl").read_text().splitlines()
    s = json.loads(lines[1])
    s["note"] = {"deep": [1, "__X__"]}  # a property format v1 does not define: still refused
    lines[1] = json.dumps(s).replace('"__X__"', "1e999")
    (root / "odd-step" / "steps.jsonl").write_text("\n".join(lines) + "\n")
    __import__("trajcheck").score([root], out=tmp_path / "L", jobs=1)
    status, error, _ = _assert_scored(tmp_path / "L", {"good", "odd-step"})["odd-step"]
    assert status == "invalid" and "steps.jsonl:2" in error and "field note.deep.1" in error
    assert "[value_out_of_range]" in error


# --- a ledger nobody committed to -----------------------------------------------------------------------


def _leftovers(out: Path, extra: str | None = None) -> None:
    """What a `score` killed after its parts and digests.json, before its first manifest, leaves."""
    (out / "runs").mkdir(parents=True)
    (out / "steps").mkdir()
    (out / "runs" / "part-000001.parquet").write_bytes(b"PAR1 half")
    (out / "steps" / f"part-000001.parquet.{'a' * 32}.tmp").write_bytes(b"PAR1")
    (out / "digests.json").write_text('{"generation": 1, "runs": []}')
    (out / f"manifest.json.{'b' * 32}.tmp").write_text("{")
    if extra:
        (out / extra).write_text("someone's notes")


@pytest.mark.slow
def test_a_folder_holding_only_trajcheck_leftovers_is_a_new_ledger(tmp_path):
    root = _batch(tmp_path)
    out = tmp_path / "L"
    _leftovers(out)
    res, took = _cli("score", str(root), "--out", str(out), "-q", "-j", "1")
    assert res.returncode == 0, res.stderr
    assert took < 60
    assert ledger.read_manifest(out).generation == 1
    _assert_scored(out, {"good"})
    assert (out / "runs" / "part-000001.parquet").is_file()
    assert ledger.read_manifest(out).parts["runs"] == ["runs/part-000001.parquet"]
    assert not list(out.glob("**/*.tmp"))


@pytest.mark.slow
def test_a_folder_with_anything_else_is_still_refused(tmp_path):
    root = _batch(tmp_path)
    out = tmp_path / "L"
    _leftovers(out, extra="notes.txt")
    res, _ = _cli("score", str(root), "--out", str(out), "-q", "-j", "1")
    assert res.returncode == 3 and "holds no trajcheck ledger" in res.stderr
    assert (out / "notes.txt").read_text() == "someone's notes" and (out / "digests.json").exists()
    assert not (out / ".trajcheck-lock").exists()  # the refused folder is left as it was


def test_page_text_reads_only_the_leading_text_and_equals_the_whole_text_cut():
    """The page text (5,000 characters) is read from the first text nodes only; it equals the whole text,
    collapsed and cut, on random markup and on every sample snapshot."""
    import random

    from selectolax.lexbor import LexborHTMLParser

    from trajcheck.analyzers import skeleton as sk

    rng = random.Random(3)
    frags = ["<p>", "</p>", "<b>", "</b>", "word", "  ", "\n", "&amp;", "<!-- c -->", "<br>", "<span>x</span>", "é",
             "<div>", "</div>", "\t", "a" * 50, "<textarea>t a</textarea>", "<svg><text>s</text></svg>"]
    pages = ["<html><body>" + "".join(rng.choice(frags) for _ in range(rng.randint(0, 300))) + "</body></html>"
             for _ in range(400)]
    pages += [p.read_text(errors="replace") for p in sorted(SAMPLES.glob("*/dom/*.html"))[:60]]
    for html in pages:
        for limit in (5000, 40, 3):
            whole = sk._text(LexborHTMLParser(html).body, limit)
            assert sk._leading_text(LexborHTMLParser(html).body, limit) == whole, (html[:120], limit)


# --- text from a log is data (issue 40 part 3): never markup, never control codes -----------------------------

#: What a web page can make an agent write into its log, and so into a terminal that prints it raw.
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
LINK = "\x1b]8;;https://evil.example/\x07the docs\x1b]8;;\x07"  # OSC 8: text that links elsewhere
COLOUR = "\x1b[31mred\x1b[0m"
CSI = "\x9b2J"  # the one-byte (C1) form of ESC [
BIDI = "\u202egnp.exe\u202c \u2066isolated\u2069"  # right-to-left override: shows 'exe.png'
MARKUP = "[bold red]LOUD[/bold red] [link=https://evil.example]here[/link] [role=alert]"
HOSTILE = f"look {MARKUP} {CLEAR}{LINK} {COLOUR} {CSI} {BIDI} bell\x07 back\x08 cr\r end"
RAW = ("\x1b", "\x9b", "\x07", "\x08", "\r", "\u202e", "\u202c", "\u2066", "\u2069")


def test_clean_shows_every_control_and_override_visibly():
    from trajcheck.cli.common import clean, literal

    shown = clean(HOSTILE)
    assert not any(c in shown for c in RAW), repr(shown)
    assert "\\x1b[2J" in shown and "\\x1b]8;;https://evil.example/\\x07" in shown and "\\x9b2J" in shown
    assert "\\u202egnp.exe\\u202c" in shown and "bell\\x07" in shown and "cr\\x0d end" in shown
    assert MARKUP in shown  # clean() leaves brackets alone: printed as Text, they are not markup
    assert clean("tab\tand\nline") == "tab\tand\nline"  # layout stays
    from rich.console import Console
    import io

    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None).print(literal(HOSTILE), soft_wrap=True)
    assert MARKUP in buf.getvalue() and "\x1b" not in buf.getvalue()


def _hostile_pair(tmp_path: Path) -> Path:
    """Two runs of one task (copies of the good run) whose reasoning, typed text and recorded feedback hold
    markup, escape sequences and bidi overrides; scored into a ledger."""
    root = tmp_path / "runs"
    for name in ("hostile-a", "hostile-b"):
        d = shutil.copytree(GOOD, root / name)
        meta = json.loads((d / "run.json").read_text())
        (d / "run.json").write_text(json.dumps({**meta, "run_id": name}))
        steps = read_steps(d)
        for s in steps:
            s["reasoning"] = HOSTILE
            s.setdefault("recorded", {})["feedback"] = f"the page said: {HOSTILE}"
        steps[0]["action"] = {"type": "TYPE", "text": HOSTILE}
        (d / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    out = tmp_path / "L"
    from trajcheck.api import score

    score([root], out, jobs=1)
    return out


def _terminal(*args: str, columns: int = 120) -> str:
    """A command's stdout as a terminal of ``columns`` gets it, colours and all (a forced terminal console)."""
    from rich.console import Console
    from typer.testing import CliRunner

    from trajcheck.cli import common, diff as diff_cli, timeline as timeline_cli
    from trajcheck.cli.main import app

    tty = Console(width=columns, force_terminal=True, color_system="truecolor", soft_wrap=True)
    saved = common.out, diff_cli.out, timeline_cli.out
    common.out = diff_cli.out = timeline_cli.out = tty
    try:
        res = CliRunner().invoke(app, list(args))
    finally:
        common.out, diff_cli.out, timeline_cli.out = saved
    assert res.exit_code in (0, 1), res.output
    return res.stdout


def _no_escape_from_the_log(stdout: str) -> None:
    """Rich's own colour codes are fine; none of the log's may reach the terminal."""
    import re

    log_codes = stdout.replace("\x1b[0m", "")
    log_codes = re.sub(r"\x1b\[[0-9;]*m", "", log_codes)  # the SGR colours rich writes
    assert not any(c in log_codes for c in RAW), [c for c in RAW if c in log_codes]


@pytest.mark.slow
def test_timeline_and_diff_show_hostile_reasoning_literally(tmp_path):
    ledger_dir = _hostile_pair(tmp_path)
    timeline = _terminal("timeline", str(ledger_dir), "hostile-a")
    _no_escape_from_the_log(timeline)
    flat = " ".join(timeline.split())
    assert "[bold red]LOUD[/bold red]" in flat and "[role=alert]" in flat  # markup shown as written
    assert "\\x1b[2J\\x1b[H" in flat and "\\u202egnp.exe\\u202c" in flat  # escapes shown visibly
    diff = _terminal("diff", str(ledger_dir), "hostile-a", "hostile-b")
    _no_escape_from_the_log(diff)
    flat = " ".join(diff.split())
    assert "[bold" in flat and "\\x1b" in flat and "\\u202e" in flat  # the typed text and the feedback shown


def test_timeline_shows_a_selector_in_brackets_as_written(sample_ledger):
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    res = CliRunner().invoke(app, ["timeline", str(sample_ledger), "consent-overlay-off"])
    assert res.exit_code == 0, res.output
    assert "no line matched `Subscribed` in `[role=alert]`" in " ".join(res.stdout.split())
    assert "``" not in res.stdout


def test_a_table_cell_with_markup_and_escapes_prints_them_visibly(tmp_path, width):
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    width(100)
    ledger.write(tmp_path / "L", [{"run_id": "r1", "task_id": f"t {MARKUP}", "status": "ok",
                                   "goal": HOSTILE}], [])
    res = CliRunner().invoke(app, ["query", str(tmp_path / "L"), "select run_id, task_id, goal from runs"])
    assert res.exit_code == 0, res.output
    assert not any(c in res.stdout for c in RAW)
    flat = "".join(res.stdout.split())
    assert "".join(MARKUP.split()) in flat and "\\x1b]8;;https://evil.example/\\x07" in flat


@pytest.mark.slow
def test_a_one_megabyte_line_of_reasoning_is_scored_and_shown_in_bounded_time(tmp_path):
    root = _batch(tmp_path, "megabyte")
    steps = read_steps(root / "megabyte")
    steps[0]["reasoning"] = ("x" * 999 + " ") * 1024 + MARKUP + CLEAR  # 1 MB on one line, hostile at its end
    (root / "megabyte" / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    res, took = _cli("score", str(root), "--out", str(tmp_path / "L"), "-q", "-j", "1")
    assert res.returncode == 0 and took < 60, res.stderr
    for args in (("timeline", str(tmp_path / "L"), "megabyte"),
                 ("query", str(tmp_path / "L"), "select run_id, step_index, reasoning from steps "
                                                "where run_id = 'megabyte' and step_index = 1")):
        res, took = _cli(*args, timeout=120)
        assert res.returncode == 0 and took < 60, res.stderr
        assert "\x1b" not in res.stdout
    assert "\\x1b[2J" in res.stdout.replace("\n", "").replace(" ", "")  # the table shows the whole cell


@pytest.mark.slow
def test_the_report_escapes_text_from_a_run(tmp_path):
    root = _batch(tmp_path, "scripted")
    meta = json.loads((root / "scripted" / "run.json").read_text())
    (root / "scripted" / "run.json").write_text(json.dumps({**meta, "goal": "<script>alert('goal')</script>"}))
    steps = read_steps(root / "scripted")
    for s in steps:
        s["reasoning"] = "<img src=x onerror=alert(1)> <script>alert('why')</script> " + HOSTILE
    (root / "scripted" / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    res, _ = _cli("score", str(root), "--out", str(tmp_path / "L"), "-q", "-j", "1")
    assert res.returncode == 0, res.stderr
    res, _ = _cli("report", str(tmp_path / "L"), "--out", str(tmp_path / "report"), timeout=300)
    assert res.returncode == 0, res.stderr
    pages = [p.read_text("utf-8") for p in (tmp_path / "report").rglob("*.html")]
    text = "\n".join(pages)
    assert "alert(&#x27;why&#x27;)" in text or "alert(&#39;why&#39;)" in text  # the reasoning is on a page
    assert "<script>alert(" not in text and "<img src=x" not in text


@pytest.mark.slow
def test_a_deeply_nested_log_is_sniffed_in_bounded_memory(tmp_path):
    """Readers claim a log by the shape of its head (trajcheck.readers.kit.shape): a JSON file nested 30,000 deep
    once took gigabytes there, each event's dotted prefix growing with the depth (quadratic: 28,000 deep took over
    20 GB). Its head is read, and discovery of its folder ends, in a few hundred MB (the process is also held to
    4 GB of address space, so that the check cannot take the machine down)."""
    deep = tmp_path / "runs" / "deep"
    deep.mkdir(parents=True)
    (deep / "reasoning.json").write_text('{"task": "t", "steps": [{"raw_reply": ' + "[" * 30000 + "]" * 30000 + "}]}")
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
            # the process's own high-water mark (VmHWM): rusage's ru_maxrss carries the parent's over exec
            "def _hwm_mb():\n"
            "    line = next(x for x in open('/proc/self/status') if x.startswith('VmHWM:'))\n"
            "    return int(line.split()[1]) // 1024\n"
            "from pathlib import Path\n"
            "from trajcheck.readers.kit import shape\n"
            "from trajcheck.readers import discovery\n"
            "v = shape.head_value(Path(sys.argv[1]) / 'deep' / 'reasoning.json')\n"
            "refs, problems = discovery.discover([sys.argv[1]])\n"
            "print(type(v).__name__, sorted(v), _hwm_mb())\n")
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path / "runs")], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    kind, first, second, peak_mb = res.stdout.split()
    assert (kind, first, second) == ("dict", "['steps',", "'task']")
    assert int(peak_mb) < 400, f"peak {peak_mb} MB"
