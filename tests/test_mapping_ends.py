"""Issue 47: each example mapping (docs/mappings/) declares how its harness ends a run, with the reason from that
harness's code in a comment, and the real fixtures read through them get the verdicts that follows: AppAgent's
loop ends only on FINISH, an error or its round limit, so its runs without FINISH fail for no answer (as its own
task_executor returns False for them); ScreenAgent's evaluator finishes a session, so a session without an answer
is unknown (harness_may_stop), never failed."""

from __future__ import annotations

import pytest

import trajcheck
from trajcheck.readers.mapping.schema import Mapping

from conftest import ROOT

MAPS = ROOT / "docs" / "mappings"
DECLARED = {"actions-log": "external", "appagent": "answer", "screenagent": "external", "phone-agent": "external",
            "tool-call-strings": "external"}


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_each_example_mapping_declares_how_its_harness_ends_a_run_and_why(name):
    path = MAPS / f"{name}.toml"
    assert Mapping(path).ends == DECLARED[name]
    lines = path.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("ends = "))
    assert lines[at - 1].startswith("#") and "How a run ends" in "\n".join(lines[max(0, at - 6):at])


@pytest.mark.slow
@pytest.mark.parametrize(("fixture", "mapping", "verdict", "reason"), [
    ("appagent", "appagent", "fail", "no_answer"),
    ("screenagent", "screenagent", "unknown", "harness_may_stop"),
    ("mobile-agent", "phone-agent", "unknown", "no_verdict"),  # both runs end in stop: their answer
])
def test_the_real_fixtures_get_the_verdict_their_harness_ending_gives(tmp_path, fixture, mapping, verdict, reason):
    trajcheck.score([ROOT / "tests/fixtures/real" / fixture], out=tmp_path / "L", mapping=MAPS / f"{mapping}.toml")
    runs = trajcheck.runs(tmp_path / "L")
    assert len(runs) == 2
    assert set(runs["eval_final_verdict"]) == {verdict} and set(runs["verdict_reason"]) == {reason}
