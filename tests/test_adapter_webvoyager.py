"""The WebVoyager reader: real example runs mapped exactly, and bad input located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from trajcheck.readers import discovery
from trajcheck.readers.adapters import ALL
from trajcheck.readers.adapters.webvoyager.reader import READER, parse_reply
from trajcheck.base.errors import RunFormatError
from trajcheck.scoring.pipeline import score_paths

REALRUNS = Path(__file__).resolve().parents[2] / "shared" / "realruns"
WV = REALRUNS / "webvoyager"


@pytest.fixture
def adapters(monkeypatch):
    """Register the adapters for this test only (discovery.py may already list them)."""
    have = {r.name for r in discovery.READERS}
    monkeypatch.setattr(discovery, "READERS", discovery.READERS + [r for r in ALL if r.name not in have])


def _real(name: str) -> Path:
    if not WV.is_dir():
        pytest.skip(f"{WV} is not present")
    return WV / name


# --- real runs -----------------------------------------------------------------------------------

@pytest.mark.realruns
def test_amazon_run_maps_actions_frames_goal_and_outcome():
    d = _real("taskAmazon--0")
    assert READER.claims(d)
    run, warnings = READER.read(d, d.name)
    assert warnings == []
    assert run.source_format == "webvoyager"
    assert run.run_id == "taskAmazon--0" and run.task_id == "Amazon--0"
    assert run.goal == "Search an Xbox Wireless controller with green color and rated above 4 stars."
    assert run.extra["start_url"] == "https://www.amazon.com/"
    assert run.outcome_status == "done"
    assert [(s.action.type, s.action.element, s.action.text) for s in run.steps] == [
        ("TYPE", "2", "green Xbox Wireless controller 4 stars"),
        ("CLICK", "33", None),
        ("DONE", None, 'The green Xbox Wireless controller ("Xbox Core Wireless Gaming Controller – Velocity Green") '
                       "rated above 4 stars has been found on Amazon with a rating of 4.7 out of 5 stars."),
    ]
    assert run.steps[1].action.extra["element"] == 33
    assert [(s.frame_pre, s.frame_post) for s in run.steps] == [
        ("screenshot1.png", "screenshot2.png"), ("screenshot2.png", "screenshot3.png"), ("screenshot3.png", None)]
    assert all(s.action.x is None and s.action.y is None for s in run.steps)
    assert run.steps[0].reasoning.startswith("The task is to search for a green Xbox Wireless controller")
    assert "Action:" not in run.steps[0].reasoning
    assert [s.line for s in run.steps] == [21, 40, 59]  # the assistant messages in interact_messages.json


@pytest.mark.realruns
def test_scroll_answer_and_reference_answers():
    run, _ = READER.read(_real("taskGoogle Search--3"), "x")
    assert [s.action.type for s in run.steps] == ["TYPE", "CLICK", "SCROLL", "SCROLL", "DONE"]
    assert run.steps[2].action.extra == {"direction": "down", "target": "WINDOW", "raw": "Scroll [WINDOW]; down"}
    assert run.steps[-1].action.text.endswith("4. City Lights\n5. Modern Times")
    # golden answers become reference answers; "possible" ones stay in extra
    assert run.reference_answers == ("Life Is Beautiful, Back to the Future, The Intouchables, City Lights, "
                                     "Modern Times",)
    amazon, _ = READER.read(_real("taskAmazon--0"), "x")
    assert amazon.reference_answers == () and amazon.extra["reference"]["type"] == "possible"


@pytest.mark.realruns
def test_harness_note_after_typing_into_a_button():
    run, _ = READER.read(_real("taskCoursera--16"), "x")
    s = run.steps[3]
    assert (s.action.type, s.action.text, s.action.element) == ("TYPE", "Xi Yang", "2")
    assert "may not be a textbox" in s.extra["harness_note"]
    assert s.executor_ok is True


@pytest.mark.realruns
def test_no_box_frames_are_kept_in_extra():
    run, _ = READER.read(_real("taskCambridge Dictionary--29"), "x")
    assert len(run.steps) == 12
    assert run.steps[0].frame_pre == "screenshot1.png"
    assert run.steps[0].extra["frame_pre_no_box"] == "screenshot1_no_box.png"


@pytest.mark.realruns
def test_every_real_run_scores_ok(adapters):
    if not WV.is_dir():
        pytest.skip(f"{WV} is not present")
    report = score_paths([WV], jobs=1, input_format="webvoyager")
    rows = {r.run["run_id"]: r.run for r in report.results}
    assert len(rows) == 15
    bad = {k: (r["status"], r["error"], r["warnings"]) for k, r in rows.items() if r["status"] != "ok" or r["warnings"]}
    assert bad == {}
    assert sum(r["n_steps"] for r in rows.values()) == 90
    assert sum(r["n_frames"] for r in rows.values()) == 90
    assert {r["source_format"] for r in rows.values()} == {"webvoyager"}
    assert {r["outcome_status"] for r in rows.values()} == {"done"}
    steps = [s for r in report.results for s in r.steps]
    assert {s["action_type"] for s in steps} == {"CLICK", "TYPE", "SCROLL", "DONE"}
    assert all(s["effect_point"] == "none" for s in steps)  # no coordinates: the region check does not apply


def test_claims_are_specific(tmp_path):
    if WV.is_dir():
        assert not READER.claims(WV / "_metadata")
        assert not READER.claims(WV)
    native = tmp_path / "native"
    native.mkdir()
    (native / "run.json").write_text("{}")
    (native / "interact_messages.json").write_text("[]")
    assert not READER.claims(native)


def test_a_forced_reader_that_does_not_claim_a_folder_says_why(tmp_path, adapters):
    """--input-format names one reader: a folder it does not claim is named with that reader's reason."""
    d = tmp_path / "run1"
    d.mkdir()
    (d / "history.json").write_text("[]")
    Image.new("RGB", (8, 8), "white").save(d / "screenshot1.png")
    refs, problems = discovery.discover([d], input_format="webvoyager")
    assert refs == []
    [p] = [p for p in problems if p.slug == "no_reader_claims"]
    assert "no reader (webvoyager) claims it as a run: " in p.message and "interact_messages.json" in p.message
    _, problems = discovery.discover([d])  # every reader asked: the readers are named, not each one's reason
    assert all("interact_messages" not in p.message for p in problems)


def test_parse_reply_grammar():
    assert parse_reply("Thought: t\n\nAction: GoBack")[2].extra == {"navigation": "back"}
    a = parse_reply("Thought: t\nAction: Google")[2]
    assert (a.type, a.url) == ("NAVIGATE", "https://www.google.com/")
    assert parse_reply("Thought: t\nAction: Wait")[2].type == "WAIT"
    a = parse_reply("Thought: t\nAction: Scroll [12]; up")[2]
    assert (a.type, a.element, a.extra["direction"]) == ("SCROLL", "12", "up")
    assert parse_reply("Thought: t\nAction: Type [3]; [hello world]")[2].text == "hello world"
    assert parse_reply("Thought: t\nAction: Dance [3]")[2] is None


# --- bad input, built in tmp_path -----------------------------------------------------------------

def _png(path: Path, color: tuple[int, int, int]) -> None:
    Image.new("RGB", (64, 48), color).save(path)


def _user(text: str, image: bool = True) -> dict:
    if not image:
        return {"role": "user", "content": text}
    return {"role": "user", "content": [{"type": "text", "text": text},
                                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,{b64_img}"}}]}


def _make_run(root: Path, replies: list[str], *, fail_after: int | None = None) -> Path:
    """A WebVoyager run: one observation per reply (screenshot{K}.png), except that the message
    after reply ``fail_after`` (0-based) is WebVoyager's bare failure text with no screenshot."""
    d = root / "taskExample--1"
    d.mkdir(parents=True)
    msgs: list[dict] = [{"role": "system", "content": "system prompt"}]
    for k, reply in enumerate(replies, start=1):
        if k == 1:
            msgs.append(_user("Now given a task: Find the thing.  Please interact with https://example.com/ and get "
                              "the answer. \nObservation: please analyze the attached screenshot."))
        elif fail_after is not None and k == fail_after + 2:
            msgs.append(_user("The action you have chosen cannot be exected. Please double-check if you have "
                              "selected the wrong Numerical Label or Action or Action format. Then provide the "
                              "revised Thought and Action.", image=False))
        else:
            msgs.append(_user("Observation: please analyze the attached screenshot and give the Thought and Action."))
        if not (fail_after is not None and k == fail_after + 2):
            _png(d / f"screenshot{k}.png", (k * 40 % 256, 10, 10))
        msgs.append({"role": "assistant", "content": reply})
    (d / "interact_messages.json").write_text(json.dumps(msgs, indent=2))
    return d


REPLIES = ["Thought: open it\n\nAction: Click [3]", "Thought: search\n\nAction: Type [1]; cats",
           "Thought: found\n\nAction: ANSWER; cats"]


def test_truncated_chat_log_is_invalid_with_file_and_line(tmp_path):
    d = _make_run(tmp_path, REPLIES)
    text = (d / "interact_messages.json").read_text()
    (d / "interact_messages.json").write_text(text[: len(text) // 2])
    with pytest.raises(RunFormatError) as exc:
        READER.read(d, d.name)
    p = exc.value.problems[0]
    assert (p.slug, p.file, p.run) == ("json_invalid", "interact_messages.json", "taskExample--1")
    assert p.line is not None and p.line > 1


def test_missing_screenshot_is_one_located_warning(tmp_path, adapters):
    d = _make_run(tmp_path, REPLIES)
    (d / "screenshot2.png").unlink()
    run, warnings = READER.read(d, d.name)
    assert warnings == []  # the reader keeps the name: scoring reports the missing file, once
    assert (run.steps[0].frame_post, run.steps[1].frame_pre) == ("screenshot2.png", "screenshot2.png")
    [res] = score_paths([d], jobs=1, input_format="webvoyager").results
    assert res.run["status"] == "ok"
    [w] = [x for x in res.run["warnings"] if "screenshot2.png" in x]
    assert "file not found" in w and w.endswith("[frames_missing]")
    assert f", interact_messages.json:{run.steps[0].line}, field frames.post: " in w


def test_unparseable_action_is_unknown_with_raw_text(tmp_path):
    d = _make_run(tmp_path, ["Thought: hmm\n\nAction: Dance [3]", *REPLIES[1:]])
    run, warnings = READER.read(d, d.name)
    [w] = warnings
    assert (w.slug, w.file, w.field, w.severity) == ("action_unparsed", "interact_messages.json", "[2].content", "warning")
    assert w.line == run.steps[0].line and w.line is not None
    assert run.steps[0].action.type == "UNKNOWN"
    assert run.steps[0].action.extra["raw"] == "Dance [3]"
    assert run.steps[0].reasoning == "hmm"


def test_failed_action_has_no_screenshot_and_the_numbering_skips(tmp_path):
    replies = ["Thought: a\nAction: Click [9]", "Thought: b\nAction: Click [3]", "Thought: c\nAction: Type [1]; x",
               "Thought: d\nAction: ANSWER; x"]
    d = _make_run(tmp_path, replies, fail_after=0)  # the user message after reply 1 is the failure text
    run, warnings = READER.read(d, d.name)
    assert warnings == []
    s0, s1, s2, s3 = run.steps
    assert (s0.executor_ok, s0.frame_pre, s0.frame_post) == (False, "screenshot1.png", None)
    assert s0.executor_error.startswith("The action you have chosen cannot be exected")
    assert (s1.frame_pre, s1.extra.get("frame_pre_reused"), s1.frame_post) == ("screenshot1.png", True, "screenshot3.png")
    assert (s2.frame_pre, s2.frame_post, s3.frame_pre, s3.frame_post) == (
        "screenshot3.png", "screenshot4.png", "screenshot4.png", None)
    assert run.outcome_status == "done"


def test_no_answer_means_max_steps_and_unanswered_observation_means_error(tmp_path):
    d = _make_run(tmp_path / "a", REPLIES[:2])
    assert READER.read(d, d.name)[0].outcome_status == "max_steps"
    msgs = json.loads((d / "interact_messages.json").read_text())
    msgs.append(_user("Observation: please analyze the attached screenshot."))
    (d / "interact_messages.json").write_text(json.dumps(msgs))
    _png(d / "screenshot3.png", (0, 0, 200))
    run, _ = READER.read(d, d.name)
    assert run.outcome_status == "error"
    assert run.steps[-1].frame_post == "screenshot3.png"


@pytest.mark.realruns
@pytest.mark.parametrize("name,steps", [("taskCambridge Dictionary--29", (6, 7, 8, 9)), ("taskHuggingface--3", (3,))])
def test_change_the_agent_caused_is_not_learned_as_ambient(adapters, name, steps):
    """Issue 20: each quiz answer brings the next question (33,000-38,000 pixels), a licence filter
    re-lists the models (23,000); the change recurs at every action, far from the click, and is the
    agent's doing: it counts as changed content."""
    [res] = score_paths([_real(name)], jobs=1).results
    rows = {r["step_index"]: r for r in res.steps}
    for i in steps:
        r = rows[i]
        assert r["effect_content_changed"] is True, (name, i, r["effect_filtered"])
        assert r["effect_content_px"] > 0.8 * r["effect_changed_px"] > 18_000, (name, i)
