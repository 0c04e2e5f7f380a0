"""Issue 47: a harness's own stop is not the agent's answer. A harness that ends a run itself may write its stop
as an answer action (VisualWebArena's `stop [Early stop: Reach max steps 30]`); a mapping says which answers are
the harness's (`[step] harness_stop`, or a `[step.types]` name typed HARNESS_STOP), and `draft-mapping` proposes
it when a sampled run's last answer reads as a harness's message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import trajcheck
from trajcheck.commands import draft_mapping
from trajcheck.errors import UsageError

import mapping_shapes as shapes

MAPPING = """
[run]
files = "log.json"
steps = "steps"
goal = "task"
ENDS

[step]
type = "action"
text = "text"
screenshot = "screenshot"
STOP

[step.types]
wait = "WAIT"
scroll = "SCROLL"
stop = "DONE"
TYPES
"""
#: the last step of each run: (action, answer); the first is the harness's own stop, the others are the agent's
ENDINGS = {"stopped": ("stop", "Early stop: Reach max steps 30"), "errored": ("stop", "ERROR: the model's reply "
           "could not be parsed"), "answered": ("stop", "The cheapest is $5; an error message was shown first"),
           "limit": ("max_steps_reached", "")}


def _runs(root: Path, names: tuple[str, ...] = tuple(ENDINGS)) -> Path:
    """One run a name under root/results: a wait and a scroll, then the ending of ENDINGS (screens that tell
    nothing: no evidence decides the runs, so how they end is what is left)."""
    folder = root / "results"
    for name in names:
        d = folder / name
        d.mkdir(parents=True)
        steps = [{"action": a, "screenshot": f"{i}.png"} for i, a in enumerate(("wait", "scroll"))]
        act, answer = ENDINGS[name]
        steps.append({"action": act, "text": answer, "screenshot": "2.png", "source": "harness" if act ==
                      "stop" and answer.startswith(("Early", "ERROR")) else "agent"})
        for i in range(3):
            shapes.shot(d / f"{i}.png", 0)
        (d / "log.json").write_text(json.dumps({"task": "find the cheapest", "steps": steps}))
    return folder


def _score(tmp_path: Path, folder: Path, ends: str = 'ends = "external"',
           stop: str = "harness_stop = '^(?:Early stop|ERROR): '", types: str = "") -> dict[str, dict]:
    m = tmp_path / "m.toml"
    m.write_text(MAPPING.replace("ENDS", ends).replace("STOP", stop).replace("TYPES", types))
    trajcheck.score([folder], out=tmp_path / "L", mapping=m)
    runs = trajcheck.runs(tmp_path / "L")
    return {r["run_path"].rsplit("/", 1)[-1]: r for r in runs.to_dict("records")}


def _extra(row: dict) -> dict:
    return json.loads(row["extra"]) if isinstance(row["extra"], str) else {}  # NaN: no extra


def test_the_harness_stop_is_no_claim_and_under_external_ends_the_run_is_unknown(tmp_path):
    got = _score(tmp_path, _runs(tmp_path, ("stopped", "errored", "answered")))
    for name in ("stopped", "errored"):
        r = got[name]
        assert (r["claimed_success"], r["claim_reason"], r["false_claim"]) == (False, "no_done", False), name
        assert (r["eval_final_verdict"], r["verdict_reason"]) == ("unknown", "harness_may_stop"), name
        assert _extra(r)["harness_stop"] == {"step": 3, "text": ENDINGS[name][1]}
    # the agent's own answer, even one that mentions an error, is still its answer and its claim
    assert (got["answered"]["claimed_success"], got["answered"]["claim_reason"]) == (True, "done")
    assert "harness_stop" not in _extra(got["answered"])


def test_the_harness_stop_stays_a_step_that_does_nothing_with_the_harness_words(tmp_path):
    _score(tmp_path, _runs(tmp_path, ("stopped",)))
    steps = trajcheck.steps(tmp_path / "L")
    last = steps.sort_values("step_index").iloc[-1]
    assert last["action_type"] == "WAIT"
    assert len(steps) == 3  # the step and its screenshot are kept: the screen the run ended on


def test_under_answer_ends_a_run_the_harness_stopped_fails_for_no_answer(tmp_path):
    got = _score(tmp_path, _runs(tmp_path, ("stopped",)), ends='ends = "answer"')
    assert (got["stopped"]["eval_final_verdict"], got["stopped"]["verdict_reason"]) == ("fail", "no_answer")
    assert not got["stopped"]["false_claim"]


def test_a_field_of_the_step_and_an_action_name_typed_harness_stop(tmp_path):
    got = _score(tmp_path, _runs(tmp_path, ("stopped", "answered", "limit")),
                 stop="harness_stop = { path = \"source\", regex = '^harness$' }",
                 types='max_steps_reached = "HARNESS_STOP"')
    assert (got["stopped"]["claim_reason"], got["stopped"]["verdict_reason"]) == ("no_done", "harness_may_stop")
    assert got["answered"]["claim_reason"] == "done"
    assert (got["limit"]["claim_reason"], got["limit"]["verdict_reason"]) == ("no_done", "harness_may_stop")
    assert _extra(got["limit"])["harness_stop"] == {"step": 3, "text": "max_steps_reached"}


def test_a_harness_stop_that_is_not_a_regular_expression_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="harness_stop = .* is not a regular expression"):
        _score(tmp_path, _runs(tmp_path, ("stopped",)), stop="harness_stop = '(unclosed'")


def test_the_draft_proposes_harness_stop_from_answers_worded_as_a_harness_message(tmp_path):
    folder = _runs(tmp_path)
    d = draft_mapping(folder)
    line = next(ln for ln in d.text.splitlines() if ln.startswith("harness_stop = "))
    assert "UNSURE" in line and "2 of 4 sampled runs" in line, line
    assert any(u.startswith("harness_stop: ") for u in d.unsure)
    (tmp_path / "d.toml").write_text(d.text)
    trajcheck.score([folder], out=tmp_path / "D", mapping=tmp_path / "d.toml")
    got = {r["run_path"].rsplit("/", 1)[-1]: r for r in trajcheck.runs(tmp_path / "D").to_dict("records")}
    assert {n for n, r in got.items() if r["claim_reason"] == "no_done"} >= {"stopped", "errored"}
    assert got["answered"]["claim_reason"] == "done"  # "an error message was shown" mid-answer is the agent's
    assert not any(r["verdict_reason"] == "no_answer" for r in got.values())  # ends stays undeclared


@pytest.mark.parametrize(("ends", "said"), [
    ('ends = "answer"', "2 of 3 runs read by mapping:m@{h} end without an answer; declared ends = answer: they fail "
                        "for no answer unless another source decides"),
    ('ends = "external"', "2 of 3 runs read by mapping:m@{h} end without an answer; declared ends = external (the "
                          "harness may stop a run itself): they are unknown (harness_may_stop) unless another source "
                          "decides"),
    ("", "2 of 3 runs read by mapping:m@{h} end without an answer; ends undeclared: they are unknown "
         "(ends_undeclared) unless another source decides; declare how the harness ends a run ([run] ends of a "
         "mapping, run.json ends)"),
])
def test_validate_says_how_many_runs_end_without_an_answer_and_what_the_declaration_makes_of_them(tmp_path, ends,
                                                                                                  said):
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    folder = _runs(tmp_path, ("stopped", "errored", "answered"))
    m = tmp_path / "m.toml"
    m.write_text(MAPPING.replace("ENDS", ends).replace("STOP", "harness_stop = '^(?:Early stop|ERROR): '")
                 .replace("TYPES", ""))
    report = trajcheck.validate([folder], mapping=m)
    (note,) = report.endings
    h = note.reader.rsplit("@", 1)[1]
    assert note.text() == said.format(h=h)
    assert not report.problems  # information, not a finding: --strict does not fail on it
    res = CliRunner().invoke(app, ["validate", str(folder), "--mapping", str(m), "--strict"])
    assert res.exit_code == 0 and said.format(h=h) in res.stderr
    res = CliRunner().invoke(app, ["validate", str(folder), "--mapping", str(m), "--format", "json"])
    assert json.loads(res.stdout)["endings"] == [{"reader": note.reader, "runs": 3, "without_answer": 2,
                                                  "ends": ends.split('"')[1] if ends else None}]
