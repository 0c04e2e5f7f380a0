"""Damaged runs (issue 50, item 2): each kind made into a copy of a sample run is found with its evidence, the run
keeps its verdict, and no undamaged sample run is flagged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from trajcheck.analyzers import damage
from trajcheck.store import ledger

from conftest import SAMPLES, copy_run, read_steps, run_json, write_steps


def _runs(path: Path) -> dict[str, dict[str, Any]]:
    con = ledger.connect(path)
    try:
        cur = con.execute("select run_id, status, eval_final_verdict, damage, damage_evidence from runs")
        cols = [d[0] for d in cur.description]
        return {r[0]: dict(zip(cols, r)) for r in cur.fetchall()}
    finally:
        con.close()


def test_no_undamaged_sample_run_is_flagged(sample_ledger: Path) -> None:
    runs = _runs(sample_ledger)
    assert len(runs) == 28 and {r["damage"] for r in runs.values()} == {None}


def _last(error: str) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        steps = read_steps(run)
        steps[-1]["executor"] = {"ok": False, "error": error}
        write_steps(run, steps)
    return edit


def _run_error(error: str) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        meta = json.loads((run / "run.json").read_text())
        meta["error"] = error
        (run / "run.json").write_text(json.dumps(meta))
    return edit


def _killer(run: Path) -> None:
    steps = read_steps(run)
    steps[-1]["action"] = {"type": "TYPE", "text": "pkill -9 -f xvfb-run"}
    write_steps(run, steps)


def _pending(run: Path) -> None:
    meta = json.loads((run / "run.json").read_text())
    meta["outcome"] = {"status": "error"}
    (run / "run.json").write_text(json.dumps(meta))
    steps = read_steps(run)
    steps[-1]["executor"] = {"ok": None, "error": None}
    steps[-1]["frames"].pop("post", None)
    write_steps(run, steps)


def _parsed(run: Path) -> None:
    steps = read_steps(run)
    steps[-1]["action"] = {"type": "DONE"}
    steps[-1]["reasoning"] = ("The form looks complete, so I think we are DONE... but first submit it: "
                              "<tool_call>{\"name\": \"computer\", \"arguments\": {\"action\": \"left_click\"}}")
    write_steps(run, steps)


def _idle(run: Path) -> None:
    steps = read_steps(run)
    for s in steps[:-1]:
        s["action"] = {"type": "WAIT"}
    steps[-1]["action"] = {"type": "DONE"}
    write_steps(run, steps)


# (kind, the sample run copied, how it is damaged, the start of the evidence expected)
CASES = [
    ("infrastructure", "drift-loop-off", _last("Error code: 429 - Rate limit reached for requests"),
     "step 5 error: Error code: 429 - Rate limit reached for requests"),
    ("infrastructure", "validation-flash-off", _run_error("openai.APITimeoutError: Request timed out."),
     "run log error: openai.APITimeoutError: Request timed out."),
    ("reset_failed", "terms-checkbox-off", _run_error("env.reset() failed: reset timed out after 120 s"),
     "run log error: env.reset() failed: reset timed out after 120 s"),
    ("harness_killed", "consent-overlay-off", _last("Target page, context or browser has been closed"),
     "step 2 error: Target page, context or browser has been closed"),
    ("harness_killed", "offscreen-modal-off", _killer,
     "step 2: the agent's action ran 'pkill' (pkill -9 -f xvfb-run) and the run ended there"),
    ("harness_killed", "captcha-blocked", _pending,
     "step 3: its WAIT is pending (no result, no later frame) and the run's status is 'error'"),
    ("parse_artifact", "sequencer-near-miss", _parsed,
     "step 6: ended on DONE, read from the reasoning's 'DONE' beside a pending call '<tool_call>"),
    # the contract and the evaluator still pass it: the final state satisfied the check without any action
    ("pre_satisfied", "terms-checkbox-on", _idle, "passed with no action taken (4 steps, none acting)"),
]


@pytest.mark.parametrize(("kind", "sample", "edit", "evidence"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_each_kind_is_found_with_its_evidence_and_the_verdict_is_kept(
        kind: str, sample: str, edit: Callable[[Path], None], evidence: str, sample_ledger: Path,
        tmp_path: Path) -> None:
    run = copy_run(SAMPLES / sample, tmp_path / "runs" / sample)
    edit(run)
    run_json("score", str(run), "--out", str(tmp_path / "L"), "-q")
    [row] = _runs(tmp_path / "L").values()
    assert (row["status"], row["damage"]) == ("ok", kind)
    assert row["damage_evidence"].startswith(evidence), row["damage_evidence"]
    if kind != "pre_satisfied":  # the damage is beside the verdict, whatever it is
        assert row["eval_final_verdict"] in ("pass", "fail", "uncertain", "unknown")


def test_the_kinds_are_tried_in_order_and_a_locator_timeout_is_the_agents_doing() -> None:
    from trajcheck.schemas.records import Action, Run, Step

    def run(step_error: str | None, status: str | None = None, **extra: Any) -> Run:
        return Run("r", "r", "trajcheck.run/1", (Step(1, Action("CLICK", 1, 2), executor_ok=False,
                                                       executor_error=step_error),), outcome_status=status,
                   extra=extra)

    # Playwright's click that found no element is the agent's doing, not the infrastructure's
    assert damage.detect(run("Timeout 30000ms exceeded waiting for locator('#go')"), "fail", 2) is None
    # an infrastructure error ends the run, even when the log also says the reset failed
    assert damage.detect(run("503 Service Unavailable", error="reset failed"), "fail", 2) == (
        damage.Damage.INFRASTRUCTURE, "step 1 error: 503 Service Unavailable")
    # a pending action with a normal status is missing evidence, not damage
    pending = Run("r", "r", "trajcheck.run/1", (Step(1, Action("CLICK", 1, 2)),), outcome_status="failed")
    assert damage.detect(pending, "fail", 2) is None


@pytest.mark.slow
def test_redo_and_export_take_the_damaged_runs_as_the_options_say(tmp_path: Path) -> None:
    # support-message twice: drift-loop-on passes, drift-loop-off (a fail) ended on a rate-limit error: damaged
    run = copy_run(SAMPLES / "drift-loop-off", tmp_path / "runs" / "drift-loop-off")
    _last("429 Too Many Requests")(run)
    copy_run(SAMPLES / "drift-loop-on", tmp_path / "runs" / "drift-loop-on")
    (tmp_path / "tasks.txt").write_text("support-message x 2\n")
    got = run_json("score", str(tmp_path / "runs"), "--out", str(tmp_path / "L"), "-q", "--expect",
                   str(tmp_path / "tasks.txt"))
    assert got["expected"][0]["text"] == "scored 2 of 2 expected runs; 1 damaged; 0 missing"
    from typer.testing import CliRunner
    from trajcheck.cli.main import app

    res = CliRunner().invoke(app, ["redo", str(tmp_path / "L")])
    assert res.exit_code == 0 and res.stdout == "support-message\tdrift-loop-off\n"
    assert run_json("redo", str(tmp_path / "L"))["runs"] == [
        {"task_id": "support-message", "run_id": "drift-loop-off", "why": "damaged: infrastructure"}]

    def success(*options: str) -> tuple[int, int]:
        [row] = json.loads(CliRunner().invoke(app, ["export", str(tmp_path / "L"), "-f", "json", *options]
                                              ).stdout)["rows"]
        return row["success"]["k"], row["success"]["n"]

    assert success() == (1, 2)  # the damaged run counted as scored (a failure)
    assert success("--damaged", "exclude") == (1, 1)  # left out of the rate


def test_timeline_says_the_damage_beside_the_verdict(tmp_path: Path) -> None:
    """A damaged run's timeline names the damage and its evidence, and says the verdict is kept (issue 50)."""
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    run = copy_run(SAMPLES / "drift-loop-off", tmp_path / "runs" / "drift-loop-off")
    _last("Error code: 429 - Rate limit reached for requests")(run)
    run_json("score", str(run), "--out", str(tmp_path / "L"), "-q")
    res = CliRunner().invoke(app, ["timeline", str(tmp_path / "L"), "drift-loop-off"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.stdout.splitlines() if "damage" in ln)
    assert "infrastructure: step 5 error: Error code: 429 - Rate limit reached for requests" in line
    assert "(the verdict is kept; trajcheck redo lists the run)" in line
    healthy = CliRunner().invoke(app, ["timeline", str(tmp_path / "L"), "drift-loop-off", "--format", "json"])
    assert json.loads(healthy.stdout)["run"]["damage"] == "infrastructure"


def test_a_first_frame_off_the_start_its_repeats_agree_on_is_a_failed_reset() -> None:
    """reset_failed from the frames: the repeats are the reference; fewer than 2 others agreeing, or a group split
    in halves, says nothing (missing evidence is not damage)."""
    from trajcheck.analyzers.startframe import FirstFrame, off_start
    from trajcheck.base.hashing import Hash64

    start, near, far = Hash64(0), Hash64(0b111), Hash64((1 << 40) - 1)  # 0, 3 and 40 bits from the start

    def group(*hashes: Hash64) -> list[FirstFrame]:
        return [FirstFrame(f"r{i}", h, "frames/001.png") for i, h in enumerate(hashes, 1)]

    found = off_start(group(start, near, far))
    assert list(found) == ["r3"]
    assert found["r3"].startswith("first frame 37 bits from the start 2 repeats of its task agree on (pHash; the "
                                  "same screen within 8 bits): its distances r1 40, r2 37; theirs from r1's first "
                                  "frame: r1 0, r2 3; frames: frames/001.png against r1/frames/001.png")
    assert off_start(group(start, far)) == {}  # one other run is not an agreement
    assert off_start(group(start, start, far, far)) == {}  # two halves: neither is the start
    assert off_start(group(start, Hash64(1 << 20 | 0xFF), far)) == {}  # the others do not agree with each other
    assert list(off_start(group(start, start, start, far, near))) == ["r4"]
    # 8 bits is still the same screen (the states analyzer's threshold), 9 is not
    assert off_start(group(start, start, Hash64(0xFF))) == {}
    assert list(off_start(group(start, start, Hash64(0x1FF)))) == ["r3"]


@pytest.mark.slow
def test_the_first_frame_check_writes_the_ledger_and_clears_when_the_group_changes(tmp_path: Path) -> None:
    """Three repeats of terms-checkbox-off, one starting on another task's screen: that one is reset_failed in the
    ledger (the others are not); once the odd run is gone, and so the group has 2 runs, nothing is said."""
    for i in (1, 2, 3):
        run = copy_run(SAMPLES / "terms-checkbox-off", tmp_path / "runs" / f"r{i}")
        meta = json.loads((run / "run.json").read_text())
        meta["run_id"] = f"r{i}"
        (run / "run.json").write_text(json.dumps(meta))
    (tmp_path / "runs" / "r3" / "frames" / "001.png").write_bytes((SAMPLES / "captcha-blocked" / "frames" /
                                                                  "001.png").read_bytes())
    run_json("score", str(tmp_path / "runs"), "--out", str(tmp_path / "L"), "-q")
    runs = _runs(tmp_path / "L")
    assert {r: v["damage"] for r, v in runs.items()} == {"r1": None, "r2": None, "r3": "reset_failed"}
    assert runs["r3"]["damage_evidence"].startswith("first frame 30 bits from the start 2 repeats of its task agree")
    assert runs["r3"]["eval_final_verdict"] == "fail"  # the verdict is kept
    import shutil

    shutil.rmtree(tmp_path / "runs" / "r2")  # r1 and r3 left: one other run is no agreement
    run_json("score", str(tmp_path / "runs"), "--out", str(tmp_path / "L"), "-q")
    assert {r: v["damage"] for r, v in _runs(tmp_path / "L").items()} == {"r1": None, "r3": None}


def test_the_report_shows_the_damage_with_its_evidence_escaped(tmp_path: Path) -> None:
    """The index has a damage column (a badge, the evidence as its tooltip) and the run page says the damage with
    its evidence; the log's text is data, escaped, never markup (issue 50)."""
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    run = copy_run(SAMPLES / "drift-loop-off", tmp_path / "runs" / "drift-loop-off")
    _last("429 Too Many Requests <script>alert(1)</script> & <b>quota</b>")(run)
    copy_run(SAMPLES / "drift-loop-on", tmp_path / "runs" / "drift-loop-on")
    run_json("score", str(tmp_path / "runs"), "--out", str(tmp_path / "L"), "-q")
    res = CliRunner().invoke(app, ["report", str(tmp_path / "L"), "--out", str(tmp_path / "R"), "-q"])
    assert res.exit_code == 0, res.output
    index = (tmp_path / "R" / "index.html").read_text()
    assert "<th>damage</th>" in index
    escaped = "429 Too Many Requests &lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;quota&lt;/b&gt;"
    badge = (f'<span class="badge damage" title="step 5 error: {escaped}">infrastructure</span>')
    assert badge in index and "<script>alert" not in index
    assert index.count('class="badge damage"') == 1  # drift-loop-on is not damaged
    page = (tmp_path / "R" / "runs" / "drift-loop-off.html").read_text()
    assert f"<b>damage</b> {badge} step 5 error: {escaped}" in page and "<script>alert" not in page
    assert "the verdict is kept" in page
    assert 'class="badge damage"' not in (tmp_path / "R" / "runs" / "drift-loop-on.html").read_text()


def test_a_folder_without_its_log_is_a_no_log_run_until_the_log_is_back(tmp_path: Path) -> None:
    """A copy of a sample run without run.json and steps.jsonl, beside a healthy run, is a no_log run (no verdict,
    its screenshots as evidence); an ignored folder of images is not; once the log is back, the run is read under
    its own id and the no_log row is gone."""
    import shutil

    runs = tmp_path / "runs"
    copy_run(SAMPLES / "terms-checkbox-off", runs / "terms-checkbox-off")
    lost = copy_run(SAMPLES / "terms-checkbox-on", runs / "folder-b")
    log = {n: (lost / n).read_bytes() for n in ("run.json", "steps.jsonl")}
    for n in log:
        (lost / n).unlink()
    assets = runs / "site-assets"  # a folder of images beside the runs, listed in the ignore file: not a run
    assets.mkdir()
    shutil.copy(SAMPLES / "terms-checkbox-on" / "frames" / "001.png", assets / "logo.png")
    (runs / ".trajcheckignore").write_text("site-assets\n")
    run_json("score", str(runs), "--out", str(tmp_path / "L"), "-q")
    con = ledger.connect(tmp_path / "L")
    try:
        rows = con.execute("select run_id, status, source_format, task_id, eval_final_verdict, verdict_reason, damage, "
                           "damage_evidence from runs order by run_id").fetchall()
    finally:
        con.close()
    assert rows[0][:7] == ("folder-b", "ok", "no_log", None, "unknown", "no_log", "no_log")
    assert rows[0][7].startswith("5 screenshots (frames/001.png, frames/002.png, frames/003.png, ...) and no log")
    assert [r[0] for r in rows] == ["folder-b", "terms-checkbox-off"]
    for n, data in log.items():
        (lost / n).write_bytes(data)
    run_json("score", str(runs), "--out", str(tmp_path / "L"), "-q")
    assert {r: v["damage"] for r, v in _runs(tmp_path / "L").items()} == {"terms-checkbox-off": None,
                                                                          "terms-checkbox-on": None}


def test_only_a_folder_of_one_runs_screenshots_beside_runs_becomes_a_no_log_run(tmp_path: Path) -> None:
    """The rule of readers/nolog.py, by discovery alone: beside a run, a folder of numbered screenshots the size of
    the run's frames (in it, or under one subfolder) is a run without a log; screenshots in two subfolders (a folder
    of runs), screenshots with a JSON no reader claims (a log of another shape), a folder of screenshots with no
    run beside it, images without step numbers (plots), numbered images of another size and a single screenshot
    stay unclaimed."""
    from PIL import Image

    from trajcheck.readers.discovery import discover

    png = (SAMPLES / "terms-checkbox-on" / "frames" / "001.png").read_bytes()

    def shots(folder: Path, *names: str) -> None:
        for n in names:
            (folder / n).parent.mkdir(parents=True, exist_ok=True)
            (folder / n).write_bytes(png)

    runs = tmp_path / "batch" / "runs"
    copy_run(SAMPLES / "terms-checkbox-off", runs / "a")
    shots(runs / "flat", "1.png", "2.png")
    shots(runs / "framed", "frames/001.png", "frames/002.png")
    shots(runs / "two-runs", "1/1.png", "2/1.png")
    shots(runs / "other-log", "1.png", "2.png")
    (runs / "other-log" / "history.json").write_text('{"steps": []}')
    shots(runs / "nested" / "x", "1.png", "2.png")  # its screenshots under one subfolder: runs/nested is the run
    shots(runs / "plots", "success_rate.png", "loss.png")  # screenshot-sized, but no step numbers
    shots(runs / "one-shot", "step_1.png")  # one numbered image is no sequence
    (runs / "thumbs").mkdir()
    for i in (1, 2, 3):  # numbered, but not the size of the runs' frames (1280 x 800)
        Image.new("RGB", (320, 200), "white").save(runs / "thumbs" / f"thumb_{i}.png")
    lonely = tmp_path / "lonely"
    shots(lonely / "shots", "1.png", "2.png")
    refs, problems = discover([tmp_path / "batch", lonely])
    got = {r.display: r.reader for r in refs}
    assert got == {"runs/a": "trajcheck.run/1", "runs/flat": "no_log", "runs/framed": "no_log",
                   "runs/nested": "no_log"}
    named = sorted(Path(p.file).relative_to(tmp_path).as_posix() for p in problems if p.slug == "no_reader_claims")
    assert named == ["batch/runs/one-shot", "batch/runs/other-log", "batch/runs/plots", "batch/runs/thumbs",
                     "batch/runs/two-runs/1", "batch/runs/two-runs/2", "lonely/shots"]
