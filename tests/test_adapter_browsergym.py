"""The BrowserGym reader and its restricted unpickler: real experiment dirs mapped exactly,
bad input located, malicious pickles never executed."""

from __future__ import annotations

import datetime
import gzip
import json
import os
import pathlib
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from trajcheck.readers import discovery
from trajcheck.readers.adapters import ALL
from trajcheck.readers.kit import safe_pickle
from trajcheck.readers.adapters.browsergym.reader import READER, parse_calls, split_action
from trajcheck.base.errors import RunFormatError
from trajcheck.scoring.pipeline import score_paths

REALRUNS = Path(__file__).resolve().parents[2] / "shared" / "realruns"
BG = REALRUNS / "browsergym-fork"
R196 = "2024-11-06_13-50-03_DemoAgentArgs_on_webarena.196_3"
R210 = "2024-11-06_13-52-18_DemoAgentArgs_on_webarena.210_30"
IPAD5 = "2024-11-20_16-48-41_DemoAgentArgs_on_workarena.servicenow.order-ipad-pro_5"
UNFINISHED = "2024-11-21_19-55-04_DemoAgentArgs_on_workarena.servicenow.navigate-and-order-ipad-pro-l3_31"
HOST = "http://ec2-18-223-217-129.us-east-2.compute.amazonaws.com:7780"


@pytest.fixture
def adapters(monkeypatch):
    have = {r.name for r in discovery.READERS}
    monkeypatch.setattr(discovery, "READERS", discovery.READERS + [r for r in ALL if r.name not in have])


def _real(name: str) -> Path:
    if not BG.is_dir():
        pytest.skip(f"{BG} is not present")
    return BG / name


# --- real runs -----------------------------------------------------------------------------------

@pytest.mark.realruns
def test_errored_run_maps_actions_urls_errors_and_outcome():
    d = _real(R196)
    assert READER.claims(d)
    run, warnings = READER.read(d, d.name)
    assert warnings == []
    assert (run.source_format, run.run_id, run.task_id, run.trial) == ("browsergym", R196, "webarena.196", 3)
    assert run.goal == "Compare the payment difference of the last 4 cancelled orders and completed orders"
    assert (run.agent_name, run.agent_model, run.started_at) == ("DemoAgentArgs", "gpt-4o", "2024-11-06T13:50:03.794613")
    assert run.config == {"use_html": False, "use_axtree": True, "use_screenshot": False, "chat_mode": False,
                          "demo_mode": "default", "max_steps": 100}
    assert [(s.index, s.action.type, s.action.element, s.action.extra.get("navigation")) for s in run.steps] == [
        (0, "CLICK", "156", None), (1, "CLICK", "168", None), (2, "NAVIGATE", None, "back"),
        (3, "CLICK", "156", None), (4, "CLICK", "168", None)]
    assert run.steps[0].action.extra["element"] == "156"
    assert [(s.frame_pre, s.frame_post) for s in run.steps] == [
        (f"screenshot_step_{n}.png", f"screenshot_step_{n + 1}.png") for n in range(5)]
    # the error of step N's action is in step N+1's observation
    assert [s.executor_ok for s in run.steps] == [True, False, True, True, False]
    assert run.steps[1].executor_error.startswith("TimeoutError: Locator.click: Timeout 500ms exceeded.")
    assert (run.steps[1].page.url_before, run.steps[1].page.url_after) == (
        f"{HOST}/admin/admin/dashboard/", f"{HOST}/admin/sales/order/")
    assert run.steps[1].page.title_after == "Orders / Operations / Sales / Magento Admin"
    assert run.steps[0].reasoning.startswith("To compare the payment difference") and "```" not in run.steps[0].reasoning
    assert (run.outcome_status, run.outcome_score) == ("error", 0.0)
    assert run.extra["err_msg"].startswith("Exception uncaught by agent or environment in task webarena.196.")
    assert run.extra["frame_sizes"] == [[1282, 713]]
    assert run.screen_width is None  # no coordinates and no recorded viewport: screen is omitted


@pytest.mark.realruns
def test_successful_run_fill_and_send_msg():
    run, _ = READER.read(_real(R210), "x")
    assert [s.action.type for s in run.steps] == ["CLICK", "CLICK", "TYPE", "CLICK", "DONE"]
    fill = run.steps[2].action
    assert (fill.element, fill.text, fill.extra["function"]) == ("844", "2065555555", "fill")
    assert run.steps[-1].action.text == ("The customer with phone number 2065555555 is Adam Garcia, and their "
                                         "email is gamingpro456@gmail.com.")
    assert run.steps[-1].extra["reward"] == 1.0 and run.steps[-1].extra["terminated"] is True
    assert (run.outcome_status, run.outcome_score, run.trial) == ("done", 1.0, 30)


@pytest.mark.realruns
def test_report_infeasible_is_done_without_a_success_claim():
    run, _ = READER.read(_real(IPAD5), "x")
    last = run.steps[-1].action
    assert (last.type, last.extra["infeasible"]) == ("DONE", True)
    assert last.text.startswith('The "Order Now" button is disabled')
    assert [s.action.type for s in run.steps] == ["CLICK", "CLICK", "SELECT_OPTION", "CLICK", "DONE"]
    assert run.steps[2].action.extra["args"] == {"bid": "a244", "options": "9"}
    assert (run.outcome_status, run.outcome_score) == ("done", 1.0)


@pytest.mark.realruns
def test_unfinished_run_is_valid_with_a_warning():
    run, warnings = READER.read(_real(UNFINISHED), "x")
    assert [w.slug for w in warnings] == ["run_unfinished"]
    assert warnings[0].file == "summary_info.json" and warnings[0].severity == "warning"
    assert run.outcome_status is None and run.outcome_score is None
    assert run.extra["unfinished"] is True
    assert len(run.steps) == 7
    last = run.steps[-1]
    assert (last.frame_pre, last.frame_post, last.executor_ok, last.page.url_after) == (
        "screenshot_step_6.png", "screenshot_step_7.png", None, None)


@pytest.mark.realruns
def test_every_real_run_scores_ok(adapters):
    if not BG.is_dir():
        pytest.skip(f"{BG} is not present")
    report = score_paths([BG], jobs=1, input_format="browsergym")
    rows = {r.run["run_id"]: r.run for r in report.results}
    assert len(rows) == 10 and all(r["status"] == "ok" for r in rows.values())
    assert sum(r["n_steps"] for r in rows.values()) == 59  # 68 step records minus 9 final observations
    for rid, r in rows.items():
        # obs.last_action of step N+1 always is step N's action in this data
        assert not any("step_alignment" in w or "last_action" in w for w in r["warnings"]), rid
        if rid != UNFINISHED:
            assert r["warnings"] == [], rid
    # the unfinished run's last screenshot was cut off while being written: the pipeline says so
    assert any("screenshot_step_7.png" in w and "truncated" in w for w in rows[UNFINISHED]["warnings"])
    assert {rid.rsplit("_on_", 1)[1]: r["outcome_status"] for rid, r in rows.items()} == {
        "webarena.196_3": "error", "webarena.210_30": "done", "webarena.210_3": "done", "webarena.210_20": "done",
        "webarena.100_32": "failed", "webarena.2_14": "done", "workarena.servicenow.order-ipad-pro_5": "done",
        "workarena.servicenow.dashboard-retrieve-catalog-and-max-order-apple-macbook-pro15-l2_25": "done",
        "workarena.servicenow.navigate-and-order-ipad-pro-l3_31": None,
        "workarena.servicenow.order-ipad-pro_17": "done"}
    assert sorted(r["outcome_score"] for r in rows.values() if r["outcome_score"] is not None) == [
        0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]


def test_action_code_parsing():
    code, why = split_action('I will click.\n\n```click("207")```')
    assert (code, why) == ('click("207")', "I will click.")
    assert parse_calls("press('12', 'Enter')") == [("press", {"bid": "12", "key_comb": "Enter"})]
    assert parse_calls("scroll(0, -200)") == [("scroll", {"delta_x": 0, "delta_y": -200})]
    from trajcheck.readers.adapters.browsergym.reader import ActionParseError, map_call
    assert map_call("press", {"bid": "12", "key_comb": "Enter"}).keys == "Enter"
    assert map_call("goto", {"url": "http://x/"}).url == "http://x/"
    assert map_call("noop", {}).type == "WAIT"
    assert map_call("new_tab", {}).extra["navigation"] == "new_tab"
    for bad in ("click(", "__import__('os').system('x')", "click(bid)", "x = 1", "click(*args)"):
        with pytest.raises(ActionParseError):
            parse_calls(bad)


# --- bad input, built in tmp_path -----------------------------------------------------------------

def _gz(path: Path, obj: object) -> None:
    path.write_bytes(gzip.compress(pickle.dumps(obj, protocol=4)))


def _obs(url: str, error: str = "", last_action: str = "") -> dict:
    return {"open_pages_urls": [url], "open_pages_titles": [url], "active_page_index": np.array([0]),
            "last_action": last_action, "last_action_error": error, "goal_object": [{"type": "text", "text": "g"}]}


def _make_exp(root: Path, actions: list[str | None]) -> Path:
    """An experiment dir with plain-dict pickles (what the restricted unpickler returns for StepInfo)."""
    d = root / "2024-01-01_00-00-00_Agent_on_task.x_7"
    d.mkdir(parents=True)
    (d / "summary_info.json").write_text(json.dumps({"n_steps": len(actions) - 1, "cum_reward": 1.0,
                                                     "err_msg": None, "terminated": True, "truncated": False},
                                                    indent=2))
    _gz(d / "goal_object.pkl.gz", [{"type": "text", "text": "Do the thing"}])
    prev = ""
    for n, a in enumerate(actions):
        _gz(d / f"step_{n}.pkl.gz", {"step": n, "obs": _obs(f"http://site/{n}", last_action=prev), "action": a,
                                     "reward": 0.0, "terminated": a is None, "truncated": False, "agent_info": {}})
        Image.new("RGB", (40, 30), (n * 50, 0, 0)).save(d / f"screenshot_step_{n}.png")
        prev = a or ""
    return d


def test_synthetic_run_without_exp_args(tmp_path):
    d = _make_exp(tmp_path, ['go\n```click("5")```', "```send_msg_to_user('done')```", None])
    run, warnings = READER.read(d, d.name)
    assert warnings == []
    assert (run.task_id, run.trial, run.goal) == ("task.x", 7, "Do the thing")  # from the dir name without exp_args
    assert [s.action.type for s in run.steps] == ["CLICK", "DONE"]
    assert run.steps[0].page.url_after == "http://site/1"


def test_truncated_step_pickle_is_invalid_naming_the_file(tmp_path):
    d = _make_exp(tmp_path, ["```click('5')```", "```noop()```", None])
    data = (d / "step_1.pkl.gz").read_bytes()
    raw = gzip.decompress(data)
    (d / "step_1.pkl.gz").write_bytes(gzip.compress(raw[: len(raw) // 2]))
    with pytest.raises(RunFormatError) as exc:
        READER.read(d, d.name)
    [p] = exc.value.problems
    assert (p.slug, p.file) == ("pickle_unreadable", "step_1.pkl.gz")
    assert "truncated" in p.message


def test_truncated_summary_is_invalid_with_line(tmp_path):
    d = _make_exp(tmp_path, ["```click('5')```", None])
    text = (d / "summary_info.json").read_text()
    (d / "summary_info.json").write_text(text[:-10])
    with pytest.raises(RunFormatError) as exc:
        READER.read(d, d.name)
    p = exc.value.problems[0]
    assert (p.slug, p.file) == ("json_invalid", "summary_info.json") and p.line is not None


def test_missing_screenshot_is_one_located_warning(tmp_path, adapters):
    d = _make_exp(tmp_path, ["```click('5')```", "```click('6')```", None])
    (d / "screenshot_step_1.png").unlink()
    run, warnings = READER.read(d, d.name)
    assert warnings == []  # the reader keeps the name: scoring reports the missing file, once
    assert run.steps[0].frame_post == run.steps[1].frame_pre == "screenshot_step_1.png"
    [res] = score_paths([d], jobs=1, input_format="browsergym").results
    assert res.run["status"] == "ok"
    [w] = [w for w in res.run["warnings"] if "screenshot_step_1.png" in w]
    assert w.startswith(f"run {d.name} (read by browsergym), step_0.pkl.gz, field frames.post: frame 'screenshot_step_1.png': file not "
                        "found") and w.endswith("[frames_missing]")


def test_unparseable_action_is_unknown_with_raw_text(tmp_path):
    d = _make_exp(tmp_path, ["I think\n```click('5'```", "```noop()```", None])
    run, warnings = READER.read(d, d.name)
    [w] = warnings
    assert (w.slug, w.file, w.field, w.severity) == ("action_unparsed", "step_0.pkl.gz", "action", "warning")
    assert run.steps[0].action.type == "UNKNOWN"
    assert run.steps[0].action.extra["raw"] == "I think\n```click('5'```"


# --- the restricted unpickler ---------------------------------------------------------------------

class _Evil:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickle_is_refused_without_running_anything(tmp_path):
    marker = tmp_path / "pwned"
    data = pickle.dumps(_Evil(marker))
    with pytest.raises(safe_pickle.UnsafePickleError) as exc:
        safe_pickle.loads(data)
    assert "system" in str(exc.value) and "nothing was imported or run" in str(exc.value)
    for proto in range(0, 6):  # every protocol spells the global differently
        with pytest.raises(safe_pickle.UnsafePickleError):
            safe_pickle.loads(pickle.dumps(_Evil(marker), protocol=proto))
    assert not marker.exists()


def test_malicious_exp_args_makes_the_run_invalid(tmp_path):
    marker = tmp_path / "pwned"
    d = _make_exp(tmp_path, ["```click('5')```", None])
    (d / "exp_args.pkl").write_bytes(pickle.dumps(_Evil(marker)))
    with pytest.raises(RunFormatError) as exc:
        READER.read(d, d.name)
    [p] = exc.value.problems
    assert (p.slug, p.file) == ("pickle_unreadable", "exp_args.pkl")
    assert not marker.exists()


def test_unknown_globals_become_inert_data_and_are_never_imported(tmp_path, monkeypatch):
    # a module whose import would leave a marker; the pickle calls a function of it
    marker = tmp_path / "imported"
    (tmp_path / "trajcheck_evilmod.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\ndef boom(*a):\n    open({str(marker)!r}, 'w').write('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    def short(text: str) -> bytes:  # SHORT_BINUNICODE
        return b"\x8c" + bytes([len(text)]) + text.encode()
    # PROTO 4, STACK_GLOBAL trajcheck_evilmod.boom, REDUCE with ("arg",), STOP
    payload = b"\x80\x04" + short("trajcheck_evilmod") + short("boom") + b"\x93" + short("arg") + b"\x85R."
    value = safe_pickle.to_plain(safe_pickle.loads(payload))
    assert value == {"__class__": "trajcheck_evilmod.boom", "args": ["arg"]}
    assert not marker.exists() and "trajcheck_evilmod" not in sys.modules


def test_plain_values_decode_without_their_libraries():
    class Thing:  # pickled by reference to this test module; read back as a stand-in, never imported
        pass
    t = Thing()
    t.a, t.when, t.where, t.arr, t.idx, t.x = (1, datetime.datetime(2024, 11, 6, 13, 50, 3, 794613),
                                               pathlib.PurePosixPath("results/x"), np.zeros((3, 4)),
                                               np.array([2]), np.float64(0.5))
    globals()["Thing"] = Thing
    Thing.__qualname__ = "Thing"
    try:
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):  # each protocol spells objects and bytes differently
            v = safe_pickle.to_plain(safe_pickle.loads(pickle.dumps(t, protocol=proto)))
            assert v["__class__"].endswith(".Thing") and v["a"] == 1, proto
            assert v["when"] == "2024-11-06T13:50:03.794613", proto
            assert v["where"] == "results/x", proto
            assert v["arr"] == {"__ndarray__": True, "shape": [3, 4], "dtype": "f8"}, proto
            assert v["idx"] == [2] and v["x"] == 0.5, proto
    finally:
        del globals()["Thing"]


@pytest.mark.realruns
def test_real_pickles_read_as_plain_data():
    v = safe_pickle.load_plain(_real(R196) / "exp_args.pkl")
    assert v["__class__"] == "browsergym.experiments.loop.ExpArgs"
    assert v["env_args"]["task_name"] == "webarena.196" and v["exp_dir"].endswith(R196)
    s = safe_pickle.load_plain(_real(R196) / "step_0.pkl.gz")
    assert s["obs"]["active_page_index"] == [0]
    assert s["profiling"]["__class__"] == "browsergym.experiments.loop.StepTimestamps"


@pytest.mark.slow
def test_shared_references_cannot_expand_exponentially():
    node: list = ["x"]
    for _ in range(40):  # 2**40 leaves in a few hundred bytes, through the pickle memo
        node = [node, node]
    data = pickle.dumps(node, protocol=4)
    assert len(data) < 1000
    with pytest.raises(safe_pickle.UnsafePickleError, match="expands to more than"):
        safe_pickle.to_plain(safe_pickle.loads(data))


@pytest.mark.realruns
def test_benchmark_evaluator_decides_runs_without_contract_or_judge():
    """Issue 20: WebArena's and WorkArena's own evaluator results are a verdict source; the reward-1 runs
    pass. Two runs end with the agent's message and reward 0: WebArena 2_14 answers (a false claim on the
    evaluator's word); the WorkArena chart run ends with report_infeasible ("impossible to determine" the
    values), the agent's own failure flag, which is no claim (issue 12): it fails without being a false
    claim."""
    if not BG.is_dir():
        pytest.skip(f"{BG} is not present")
    rows = {r.run["run_id"]: r.run for r in score_paths([BG], jobs=1).results}
    cols = ("outcome_score", "eval_final_verdict", "verdict_source", "claimed_success", "false_claim",
            "false_claim_basis", "claim_reason")
    r = rows["2024-11-18_10-53-14_DemoAgentArgs_on_webarena.2_14"]
    assert tuple(r[c] for c in cols) == (0.0, "fail", "evaluator", True, True, "evaluator", "done")
    r = rows["2024-11-21_19-51-18_DemoAgentArgs_on_workarena.servicenow.dashboard-retrieve-catalog-and-max-order-"
             "apple-macbook-pro15-l2_25"]
    assert tuple(r[c] for c in cols) == (0.0, "fail", "evaluator", False, False, None, "agent_reported_failure")
    assert r["claim_evidence"] == "infeasible"
    passed = [r for r in rows.values() if r["outcome_score"] == 1.0]
    assert len(passed) == 5
    assert all((r["eval_final_verdict"], r["verdict_source"], r["false_claim"]) == ("pass", "evaluator", False)
               for r in passed)
    assert rows[UNFINISHED]["evaluator_verdict"] is None  # no summary reward: stays as before
