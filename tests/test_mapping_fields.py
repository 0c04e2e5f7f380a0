"""The expressions of a mapping file: templates, regex cuts, embedded data parsed without evaluation, fields for
some action types only, and the messages of a mapping that reads nothing."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import trajcheck
from trajcheck.cli.main import app
from trajcheck.errors import UsageError
from trajcheck.readers.mapping.fields import Field, fill, parse_embedded

import mapping_shapes as shapes


def test_templates_fill_place_names_with_padding_and_offsets():
    ctx = {"index": 0, "index1": 1, "key": "7", "step": "03", "stem": "a"}
    assert fill("step_{index1:02}.png", ctx) == "step_01.png"
    assert fill("{key+1}.jpg", ctx) == "8.jpg"
    assert fill("{step:03}_{stem}", ctx) == "003_a"
    assert fill("{index-1}.png", ctx) == "-1.png"
    assert fill("{missing}.png", ctx) is None and fill("{stem:02}", ctx) is None  # padding needs a number


def test_a_regex_cut_keeps_the_group_of_the_fields_name_and_strips_it():
    f = Field("text", {"path": "Action", "regex": r"type \((?P<text>.*)\)"}, "t")
    assert f.value({"Action": "type (hello world )"}) == "hello world"
    assert f.value({"Action": "back"}) is None
    g = Field("x", {"path": "@", "regex": r"at \((\d+), (\d+)\)", "group": "2"}, "t")
    assert g.value("left_click - at (251, 37)") == "37"


def test_embedded_data_is_parsed_never_evaluated(tmp_path):
    assert parse_embedded("[{'name': 'computer', 'input': {'coordinate': [1, 2]}}]", "python") == [
        {"name": "computer", "input": {"coordinate": [1, 2]}}]
    assert parse_embedded('{"a": 1}', "json") == {"a": 1}
    marker = tmp_path / "ran"
    assert parse_embedded(f"__import__('pathlib').Path({str(marker)!r}).touch()", "auto") is None
    assert not marker.exists()
    f = Field("action", {"path": "@", "regex": "(?s)<action>(.*)</action>", "parse": "auto", "then": "[0].input"}, "t")
    assert f.value("think\n<action>[{'input': {'action': 'key'}}]</action>") == {"action": "key"}


@pytest.mark.parametrize("spec, message", [
    ({"path": "a[?"}, "not JMESPath"), ({"regex": "("}, "not a regular expression"),
    ({"parse": "eval"}, "one of json, python, auto"), ({"pathh": "a"}, "unknown key")])
def test_a_bad_field_is_a_usage_error_naming_it(spec, message):
    with pytest.raises(UsageError, match=message):
        Field("text", spec, "--mapping m.toml: step.text")


def test_a_field_for_some_action_types_does_not_warn_on_runs_without_them(tmp_path):
    """The phone mapping's `text` applies to TYPE and NAVIGATE: a run of clicks only gets no warning for it,
    while a field that matches nothing where it applies still warns."""
    d = tmp_path / "runs" / "r1"
    d.mkdir(parents=True)
    (d / "data.json").write_text(json.dumps({"1": {"Action": "click text (OK)"}, "2": {"Action": "stop"}}))
    for k in (1, 2):
        shapes.shot(d / f"{k}.jpg", k)
    m = tmp_path / "m.toml"
    m.write_text('[run]\nfiles = "data.json"\nsteps = "@"\n[step]\n'
                 'type = { path = "Action", regex = \'^(?P<type>[^(]*?)\\s*(?:\\(|$)\' }\n'
                 'text = { path = "Action", regex = \'\\((?P<text>.*)\\)$\', for = ["TYPE"] }\n'
                 'url = "Url"\nscreenshot_file = "{key}.jpg"\n'
                 '[step.types]\n"click text" = "CLICK"\nstop = "DONE"\n')
    report = trajcheck.validate([tmp_path / "runs"], mapping=m)
    fields = [p.field for p in report.problems if p.slug == "mapping_matches_nothing"]
    assert fields == []  # url: the run has no NAVIGATE; text: no TYPE
    m.write_text(m.read_text().replace('url = "Url"', 'reasoning = "Thought"'))
    report = trajcheck.validate([tmp_path / "runs"], mapping=m)
    assert [p.field for p in report.problems if p.slug == "mapping_matches_nothing"] == ["step.reasoning"]


@pytest.mark.slow
def test_a_text_log_a_mapping_reads_nothing_of_is_explained_as_text(tmp_path):
    shapes.actions_log(tmp_path)
    m = tmp_path / "m.toml"
    m.write_text('[run]\nfiles = "actions.log"\nsteps = "history"\n[step]\ntype = "a"\n')
    res = CliRunner().invoke(app, ["validate", str(tmp_path / "runs"), "--mapping", str(m), "--format", "json"])
    hint = [p for p in json.loads(res.stdout)["problems"] if p["slug"] == "mapping_matches_nothing"][0]["hint"]
    assert "not JSON" in hint and "[run] lines" in hint and "(a list)" not in hint
    m.write_text('[run]\nfiles = "actions.log"\nlines = "^Move (?P<n>\\\\d+)"\n[step]\ntype = "n"\n')
    res = CliRunner().invoke(app, ["validate", str(tmp_path / "runs"), "--mapping", str(m), "--format", "json"])
    probs = [p for p in json.loads(res.stdout)["problems"] if p["slug"] == "mapping_matches_nothing"]
    assert probs and probs[0]["field"] == "run.lines" and "starting episode" in probs[0]["hint"]


def test_an_action_the_mapping_does_not_map_is_a_step_with_a_warning(tmp_path):
    d = tmp_path / "runs" / "r1"
    d.mkdir(parents=True)
    (d / "log.json").write_text(json.dumps({"steps": [{"a": "click"}, {"a": "wiggle"}, {"a": "done"}]}))
    m = tmp_path / "m.toml"
    m.write_text('[run]\nfiles = "log.json"\nsteps = "steps"\n[step]\ntype = "a"\n')
    report = trajcheck.validate([tmp_path / "runs"], mapping=m)
    warn = [p for p in report.problems if p.slug == "action_unparsed"]
    assert len(warn) == 1 and "1 of 3 steps" in warn[0].message and "'wiggle'" in warn[0].message
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=m)
    assert list(trajcheck.steps(tmp_path / "L").sort_values("step_index")["action_type"]) == [
        "CLICK", "UNKNOWN", "DONE"]


def test_a_draft_never_carries_control_codes_from_a_log(tmp_path):
    d = tmp_path / "runs" / "r1"
    d.mkdir(parents=True)
    (d / "log.json").write_text(json.dumps({"steps": [{"action": "cl\x1b[31mick"}, {"action": "done"}] * 2}))
    res = CliRunner().invoke(app, ["draft-mapping", str(tmp_path / "runs")])
    assert res.exit_code == 0 and "\x1b" not in res.stdout
    import tomllib

    tomllib.loads(res.stdout)  # and it is still valid TOML


def test_a_chat_with_inline_images_gives_its_steps_inline_frames(tmp_path):
    import base64
    import io

    from PIL import Image

    def data_url(colour):
        buf = io.BytesIO()
        Image.new("RGB", (64, 40), colour).save(buf, "PNG")
        return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()

    d = tmp_path / "runs" / "chat1"
    d.mkdir(parents=True)
    msgs = [{"role": "user", "content": [{"type": "text", "text": "Open it"},
                                         {"type": "image_url", "image_url": {"url": data_url((200, 0, 0))}}]},
            {"role": "assistant", "content": "Thought: open\nAction: click(start_box='(10,20)')"},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": data_url((0, 200, 0))}}]},
            {"role": "assistant", "content": "Action: finished(content='done')"}]
    (d / "messages.json").write_text(json.dumps(msgs))
    drafted = trajcheck.draft_mapping(tmp_path / "runs", check=True)
    assert drafted.coverage is not None
    c = drafted.coverage
    assert (c["actions"], c["actions_understood"], c["screenshots"], c["screenshots_found"]) == (2, 2, 2, 2)
    m = tmp_path / "m.toml"
    m.write_text(drafted.text)
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=m)
    st = trajcheck.steps(tmp_path / "L").sort_values("step_index")
    assert list(st["action_type"]) == ["CLICK", "DONE"]
    assert st.iloc[0]["frame_pre"].startswith("inline/") and st.iloc[0]["frame_post"].startswith("inline/")
    assert trajcheck.runs(tmp_path / "L").iloc[0]["goal"] == "Open it"


def test_an_outcome_recorded_in_the_log_is_drafted_and_decides_as_the_evaluator(tmp_path):
    for name, ok in (("ep1", True), ("ep2", False)):
        d = tmp_path / "runs" / name
        d.mkdir(parents=True)
        steps = [{"action": {"type": "click", "x": 10, "y": 20}, "screenshot": "s1.png"},
                 {"action": {"type": "click", "x": 30, "y": 40}, "screenshot": "s2.png"}]
        (d / "episode.json").write_text(json.dumps({"task": "t", "steps": steps, "eval": {"success": ok}}))
        for i in (1, 2):
            shapes.shot(d / f"s{i}.png", i)
    drafted = trajcheck.draft_mapping(tmp_path / "runs")
    assert "[outcome]" in drafted.text and "success = 'eval.success'" in drafted.text, drafted.text
    m = tmp_path / "m.toml"
    m.write_text(drafted.text)
    trajcheck.score([tmp_path / "runs"], out=tmp_path / "L", mapping=m)
    runs = trajcheck.runs(tmp_path / "L").set_index("run_id")
    assert dict(runs["eval_final_verdict"]) == {"ep1": "pass", "ep2": "fail"}
    assert set(runs["verdict_source"]) == {"evaluator"}


def test_an_outcome_file_must_be_a_name_or_a_relative_path(tmp_path):
    """A relative path may lead above the run folder (nothing outside the folder scored is read:
    tests/test_results_join.py); an absolute path, a folder or a Windows path is refused."""
    from trajcheck.readers.mapping.outcome import Outcome

    for bad in ("/etc/passwd", "..", "", "a\\b.json", "C:/x.json", "results/"):
        with pytest.raises(UsageError, match="must be a file name or glob"):
            Outcome({"file": bad, "success": "ok"}, "--mapping m.toml")
    for good in ("results.json", "../results.csv", "eval/result.json", "../../*.jsonl"):
        assert Outcome({"file": good, "key": "run", "success": "ok"}, "m").file == good
