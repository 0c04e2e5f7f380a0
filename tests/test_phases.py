"""Issue 51 item 3, progress over long runs: phases, where progress last advanced, checkpoints, `timeline --phases`
(one 80x50 screen at 500 steps), and the report's strip of links into the run page."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

import trajcheck
from trajcheck.analyzers.checkpoints import checkpoints
from trajcheck.analyzers.phases import analyze
from trajcheck.cli import phasetext
from trajcheck.cli.main import app
from trajcheck.render.phasestrip import phase_strip

from conftest import ROOT, SAMPLES, copy_samples

runner = CliRunner()


def _step(i: int, url: str | None = None, title: str | None = None, state: int | None = None,
          kind: str | None = None, **more: Any) -> dict[str, Any]:
    return {"step_index": i, "url_after": url, "title_after": title, "state_id": state, "state_kind": kind,
            "action_type": "CLICK", "effect_high_risk": False, "action_effect_observed": None, "screen_text": None,
            **more}


def test_a_phase_ends_where_the_page_or_the_title_changes():
    steps = [_step(1, "http://a/x", "X", 1, "new"), _step(2, "http://a/x#top", "X", 2, "new"),
             _step(3, "http://a/x", "X edited", 3, "new"), _step(4, "http://a/y", "Y", 4, "new"),
             _step(5, None, None, 4, "same"),  # records neither: no change
             _step(6, "http://a/x", "X edited", 3, "return")]
    ph = analyze({"run_id": "r"}, steps)
    assert ph.cut_by == "page_title"
    assert [(p.letter, p.first_step, p.last_step, p.cut) for p in ph.phases] == [
        ("A", 1, 2, "start"), ("B", 3, 3, "title"), ("C", 4, 5, "page+title"), ("B", 6, 6, "page+title")]
    assert [(p.letter, p.steps, p.visits, p.new_screens) for p in ph.places] == [
        ("A", 2, 1, 2), ("B", 2, 2, 1), ("C", 2, 1, 1)]
    assert ph.phases[3].returns == 1 and ph.phases[3].new_screens == 0
    assert ph.screens_reached == 4 and ph.advanced == (1, 2, 3, 4)
    assert (ph.last_progress_step, ph.last_progress) == (4, "a new screen")


def test_without_urls_or_titles_a_phase_ends_where_the_screen_changes():
    steps = [_step(1, state=1, kind="new"), _step(2, state=1, kind="same"), _step(3, state=None),
             _step(4, state=2, kind="new"), _step(5, state=1, kind="return")]
    ph = analyze({"run_id": "r", "stalled_from_step": 3}, steps)
    assert ph.cut_by == "screen"
    assert [(p.letter, p.first_step, p.last_step, p.cut) for p in ph.phases] == [
        ("A", 1, 3, "start"), ("B", 4, 4, "screen"), ("A", 5, 5, "screen")]
    assert ph.places[0].screen == 1 and ph.stalled_from_step == 3


def test_progress_last_advanced_at_an_effect_or_a_checkpoint():
    steps = [_step(1, "http://a/x", state=1, kind="new"),
             _step(2, "http://a/x", state=1, kind="same", effect_high_risk=True, action_effect_observed=True),
             _step(3, "http://a/done", state=1, kind="return"), _step(4, "http://a/done", state=1, kind="same")]
    ph = analyze({"run_id": "r"}, steps)
    assert (ph.last_progress_step, ph.last_progress) == (2, "a high-risk effect")
    checks = [{"type": "url_matches", "name": "done", "passed": True,
               "evidence": {"url": "http://a/done", "pattern": "/done$"}}]
    ph = analyze({"run_id": "r", "contract_checks": json.dumps(checks)}, steps)
    assert (ph.last_progress_step, ph.last_progress) == (3, "checkpoint done")
    assert analyze({"run_id": "r"}, []).phases == ()


def test_a_new_screen_a_run_with_no_net_progress_did_not_keep_is_no_advance():
    """As the process score counts it (analyzers/process.py): with no net progress, from stalled_from_step on a new
    screen is kept in its phase but does not move where progress last advanced."""
    steps = [_step(1, "http://a/x", state=1, kind="new"), _step(2, "http://a/x", state=2, kind="new"),
             _step(3, "http://a/x", state=1, kind="return"), _step(4, "http://a/x", state=3, kind="new"),
             _step(5, "http://a/x", state=1, kind="return")]
    ph = analyze({"run_id": "r", "stalled_from_step": 2, "no_net_progress": True}, steps)
    assert (ph.last_progress_step, ph.last_progress) == (1, "a new screen")
    assert ph.advanced == (1,) and ph.not_kept == (2, 4)
    assert ph.phases[0].screens == (1, 2, 3) and ph.phases[0].new_screens == 3 and ph.screens_reached == 3
    assert ph.to_json()["not_kept"] == [2, 4]
    # stalled but with net progress (or not recorded): every new screen still advances
    for run in ({"run_id": "r", "stalled_from_step": 2, "no_net_progress": False}, {"run_id": "r"}):
        ph = analyze(run, steps)
        assert (ph.last_progress_step, ph.advanced, ph.not_kept) == (4, (1, 2, 4), ())


def test_timeline_phases_of_a_run_that_kept_nothing(sample_ledger, width):
    """menu-toggle-aimless opens and closes menus from step 2 to its end and ends where it began (no net progress,
    stalled from step 2, its failure step): the screens it reached from step 2 on were not kept. Before, it said
    "progress last advanced at step 10 (a new screen)"."""
    width(80)  # as the other timeline tests: a cli module first imported here keeps the console it was given
    res = runner.invoke(app, ["timeline", str(sample_ledger), "menu-toggle-aimless", "--phases"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[:7] == [
        "run menu-toggle-aimless  12 steps  1 phase in 1 place  6 screens reached",
        "progress last advanced at step 1 (a new screen)",
        "stalled from step 2 (5 new screens from it on not kept)",
        "",
        "steps    1         12",
        "place    AAAAAAAAAAAA",
        "advance  +           "]  # step 1 only: the + at 2, 4, 6, 8 and 10 were screens not kept
    assert "  A      1-12  12 +6 <5  http://sample.local/quillpad.html" in res.stdout
    row = trajcheck.query(sample_ledger, "select failure_step, stalled_from_step, no_net_progress from runs "
                                         "where run_id = 'menu-toggle-aimless'").to_json()[0]
    assert row == {"failure_step": 2, "stalled_from_step": 2, "no_net_progress": True}
    html = phase_strip(trajcheck.query(sample_ledger, "select * from runs where run_id = 'menu-toggle-aimless'")
                       .to_json()[0], trajcheck.query(sample_ledger, "select * from steps where run_id = "
                                                      "'menu-toggle-aimless' order by step_index").to_json())
    assert 'progress last advanced at <a href="#step-1">step 1</a> (a new screen); 5 new screens from step 2 on ' \
           "not kept (no net progress)" in html


def _tree(name: str, kind: str, result: str, children: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    node = {"name": name, "kind": kind, "result": result, "score": None, "weight": 1.0, "critical": False}
    return node | ({"children": children} if children is not None else {})


def test_checkpoints_come_only_from_evidence_already_read():
    steps = [_step(1, "http://a/cart"), _step(2, "http://a/pay", screen_text=["Card accepted"]),
             _step(3, "http://a/cart"), _step(4, "http://a/cart", action_type="DONE")]
    checks = [
        {"type": "url_matches", "name": "paid", "passed": False, "evidence": {"url": "http://a/cart", "pattern": "/pay$"}},
        {"type": "text_present", "name": "accepted", "passed": True, "evidence": {"text": "card accepted"}},
        {"type": "element_exists", "name": "badge", "passed": True, "evidence": {"selector": "#b", "matches": 1}},
        {"type": "url_matches", "name": "no url", "passed": None, "evidence": {"undecided": "missing evidence"}},
        {"type": "answer_matches", "name": "answer", "passed": True, "evidence": {"value": "42", "answer": "42"}},
        {"type": "url_matches", "name": "never", "passed": False, "evidence": {"url": "http://a/cart",
                                                                             "pattern": "/nowhere"}},
    ]
    tree = _tree("root", "all", "fail", [
        _tree("either", "any", "pass", [_tree("paid", "check", "fail"), _tree("accepted", "check", "pass")]),
        _tree("both", "all", "fail", [_tree("paid", "check", "fail"), _tree("answer", "check", "pass")]),
        _tree("badge", "check", "pass"), _tree("no url", "check", "undecided"), _tree("never", "check", "fail")])
    got = [(c.name, c.depth, c.result, c.step, c.basis) for c in
           checkpoints({"contract_tree": json.dumps(tree), "contract_checks": json.dumps(checks)}, steps)]
    assert got == [
        ("root", 0, "fail", None, None),  # a part never held: the all node has no step
        ("either", 1, "pass", 2, "parts"), ("paid", 2, "fail", 2, "url"), ("accepted", 2, "pass", 2, "screen_text"),
        ("both", 1, "fail", 4, "parts"), ("paid", 2, "fail", 2, "url"), ("answer", 2, "pass", 4, "answer"),
        ("badge", 1, "pass", None, "final_frame"),  # read only on the final state: no step is invented
        ("no url", 1, "undecided", None, None),  # missing evidence: undecided, never a step, never failed
        ("never", 1, "fail", None, None)]


def test_a_flat_contracts_checks_are_the_checkpoints_of_one_all_node():
    checks = [{"type": "url_matches", "name": "done", "passed": True, "evidence": {"pattern": "/done$"}},
              {"type": "text_present", "name": "thanks", "passed": True, "evidence": {"text": "Thanks"}}]
    got = checkpoints({"contract_checks": checks, "contract_name": "c"}, [_step(7, "http://a/done")])
    assert [(c.name, c.kind, c.step, c.basis) for c in got] == [
        ("c", "all", None, "final_frame"), ("done", "check", 7, "url"), ("thanks", "check", None, "final_frame")]
    assert checkpoints({}, []) == ()


GOAL = "Change the Tasklane display name to 'Jane Doe' and save it."


def test_a_goal_quoted_on_the_screen_is_no_checkpoint_held():
    """A harness window showing the instruction from step 1: its words are not evidence that a text check held
    there (analyzers/goalquotes.py, as the screen checks read it); the page's own message at step 3 is."""
    banner = ["Task: Change the Tasklane display name", "to 'Jane Doe' and save it."]
    steps = [_step(1, "http://a/profile", state=1, kind="new", screen_text=banner),
             _step(2, "http://a/profile", state=2, kind="new", screen_text=banner + ["Display name"]),
             _step(3, "http://a/profile", state=2, kind="same", screen_text=banner + ["Saved: Jane Doe"]),
             _step(4, "http://a/profile", state=2, kind="same", screen_text=banner)]
    checks = [{"type": "text_present", "name": "name shown", "passed": True, "evidence": {"text": "Jane Doe"}},
              {"type": "text_matches", "name": "saved", "passed": True, "evidence": {"pattern": "Jane D[a-z]+"}}]
    run = {"run_id": "r", "goal": GOAL, "contract_checks": checks, "contract_name": "c"}
    got = [(c.name, c.step, c.basis) for c in checkpoints(run, steps)]
    assert got == [("c", 3, "parts"), ("name shown", 3, "screen_text"), ("saved", 3, "screen_text")]
    ph = analyze(run, steps)
    assert (ph.last_progress_step, ph.last_progress) == (3, "checkpoint saved")
    # without the goal, its quote is read as the page's text: both held at step 1 (what the filter prevents)
    assert [c.step for c in checkpoints({**run, "goal": None}, steps)] == [1, 1, 1]


def test_the_timeline_reads_the_runs_goal_from_the_ledger(sample_ledger, monkeypatch):
    from trajcheck.queries import phases as query

    seen: list[dict[str, Any]] = []
    real = query.analyze
    monkeypatch.setattr(query, "analyze", lambda run, steps: seen.append(dict(run)) or real(run, steps))
    trajcheck.phases(sample_ledger, "nc-profile-toast")
    goal = json.loads((SAMPLES / "nc-profile-toast" / "run.json").read_text())["goal"]
    assert goal and seen[0]["goal"] == goal


def _screen(text: Any, width: int = 80) -> list[str]:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(text, soft_wrap=False, crop=True)
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


def test_the_timeline_fits_one_screen_whatever_the_run_holds():
    """500 steps in 250 places (a page each two steps), 40 checkpoints, titles with escapes: at most 50 lines of
    at most 80 columns, and what does not fit is counted."""
    steps = [_step(i, f"http://site/{i // 2}", f"\x1b[31mPage {i // 2}\x1b]8;;http://x\x07" + "x" * 90, i, "new")
             for i in range(1, 501)]
    checks = [{"type": "url_matches", "name": f"page {k}", "passed": False, "evidence": {"pattern": f"/{k * 6}$"}}
              for k in range(40)]
    data = analyze({"run_id": "r" * 100, "contract_checks": checks, "stalled_from_step": 12}, steps).to_json()
    lines = _screen(phasetext.render(data, width=80, height=50))
    assert len(lines) <= 50 and max(map(len, lines)) <= 80
    assert not any("\x1b" in x or "\x07" in x for x in lines)  # a title's escapes are shown, never obeyed
    assert any(re.match(r"  \.\.\. \d+ more places, \d+ steps$", x) for x in lines)
    assert any(re.match(r"  \.\.\. \d+ more checkpoints$", x) for x in lines)
    axis = next(x for x in lines if x.startswith("steps"))
    assert axis.split()[1:] == ["1", "500"]


def test_timeline_phases_of_a_sample_run(sample_ledger, width):
    width(80)
    res = runner.invoke(app, ["timeline", str(sample_ledger), "shop-checkout-1080p-jpeg", "--phases"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[:7] == [
        "run shop-checkout-1080p-jpeg  6 steps  3 phases in 3 places  4 screens reached",
        "progress last advanced at step 5 (a new screen)",
        "",
        "steps    1    6",
        "place    ABBBCC",
        "advance   + ++ ",
        "checks       2 "]
    assert "  2   check url_matches#1: first held at step 5 (its URL)" in res.stdout
    assert "  3   check text_present#2: held at the end (read only on the final frame)" in res.stdout
    res = runner.invoke(app, ["timeline", str(sample_ledger), "shop-checkout-1080p-jpeg", "--phases",
                              "--format", "json"])
    assert json.loads(res.stdout) == trajcheck.phases(sample_ledger, "shop-checkout-1080p-jpeg").to_json()
    res = runner.invoke(app, ["timeline", str(sample_ledger), "no-such-run", "--phases"])
    assert res.exit_code == 2 and "no run 'no-such-run'" in res.output


RUBRIC = {"format": "trajcheck.contract/1", "name": "order placed", "checks": [
    {"type": "url_matches", "name": "at checkout", "pattern": "/shop/checkout\\.html$"},
    {"type": "url_matches", "name": "confirmed", "pattern": "/shop/confirmed\\.html"},
    {"type": "text_present", "name": "says confirmed", "text": "confirmed"}],
    "rubric": {"name": "order placed", "all": [{"any": ["at checkout", "confirmed"], "name": "got to pay"},
                                               "says confirmed"]}}


def test_checkpoints_of_a_sample_run_with_a_rubric_contract(tmp_path):
    """No sample run's own contract is a rubric tree: shop-checkout's checks, and one more, put in one. The steps
    are those its steps.jsonl shows: the URL is the checkout page after step 2 and the confirmation after 5."""
    runs = copy_samples(tmp_path / "runs", only="shop-checkout-1080p-jpeg", contract=RUBRIC)
    trajcheck.score([runs], out=tmp_path / "L")
    recorded = [json.loads(x) for x in (SAMPLES / "shop-checkout-1080p-jpeg/steps.jsonl").read_text().splitlines()]
    first_checkout = next(s["index"] for s in recorded if s["page"]["url_after"].endswith("/shop/checkout.html"))
    first_confirmed = next(s["index"] for s in recorded if "/shop/confirmed.html" in s["page"]["url_after"])
    ph = trajcheck.phases(tmp_path / "L", "shop-checkout-1080p-jpeg")
    got = [(c.name, c.kind, c.result, c.step, c.basis) for c in ph.checkpoints]
    assert got == [("order placed", "all", "pass", None, "final_frame"),
                   ("got to pay", "any", "pass", first_checkout, "parts"),
                   ("at checkout", "check", "fail", first_checkout, "url"),  # held at step 2, not at the end
                   ("confirmed", "check", "pass", first_confirmed, "url"),
                   ("says confirmed", "check", "pass", None, "final_frame")]
    assert (first_checkout, first_confirmed) == (2, 5)


def test_the_report_strip_links_each_phase_to_its_step(sample_ledger, tmp_path):
    trajcheck.report(sample_ledger, tmp_path / "rep", max_runs=1)
    page = (tmp_path / "rep" / "runs" / "shop-checkout-1080p-jpeg.html").read_text("utf-8")
    strip = re.search(r"<div class=phasestrip>(.*?)</div>", page)
    assert strip, "no phase strip on the run page"
    links = re.findall(r'<a href="#step-(\d+)" style="flex-grow:(\d+);', strip.group(1))
    assert links == [("1", "1"), ("2", "3"), ("5", "2")]
    anchors = set(re.findall(r'id="step-(\d+)"', page))
    assert {n for n, _ in links} <= anchors
    marks = re.search(r"<div class=cpmarks>(.*?)</div>", page)
    assert marks and re.findall(r'href="#step-(\d+)"', marks.group(1)) == ["5"]


def test_the_strip_escapes_what_the_run_wrote():
    steps = [_step(1, "http://a/<script>", "<b>x</b>", 1, "new")]
    html = phase_strip({"run_id": "r"}, steps)
    assert "<script>" not in html and "<b>x</b>" not in html and "&lt;script&gt;" in html


@pytest.mark.slow
def test_a_500_step_run_of_sample_frames_fits_one_80x50_screen(tmp_path, width):
    """issue 51's Done-when: a 500-step run made from the sample runs' frames (benchmarks/long_run.py), scored,
    `timeline --phases` at 80 columns: at most 50 lines, none wider than 80."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from long_run import build_long_run

    run = build_long_run(tmp_path / "runs" / "long-500", 500, same_frames=True)
    trajcheck.score([run.parent], out=tmp_path / "L")
    width(80)
    res = runner.invoke(app, ["timeline", str(tmp_path / "L"), "long-500", "--phases"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert len(lines) <= 50 and max(len(x) for x in lines) <= 80, res.stdout
    assert lines[0].startswith("run long-500  500 steps")
    data = trajcheck.phases(tmp_path / "L", "long-500")
    assert data.n_steps == 500 and len(data.phases) > 50  # more phases than lines: the places are listed
    held = [c for c in data.checkpoints if c.kind == "check"]
    assert held and all(c.step is not None and c.basis == "url" for c in held)
