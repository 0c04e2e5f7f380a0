"""Real logs of harnesses trajcheck had never seen (issue 47, item 6), read as a new user would: a built-in
reader, else `draft-mapping` with no edit. Each fixture's provenance and the format its harness writes are in
tests/fixtures/real/<harness>/PROVENANCE.md; the figures and problems are in docs/real-logs.md.

The plain tests assert what trajcheck reads today. Where that is not the truth, an `xfail(strict=True)` test
asserts the truth, naming the issue item whose fix turns it green."""

from __future__ import annotations

import pytest

import trajcheck
from trajcheck.api import NoRunsFound
from trajcheck.commands import draft_mapping

from conftest import ROOT

REAL = ROOT / "tests" / "fixtures" / "real"

# --- VisualWebArena: render_<task>.html, one block a step, screenshots embedded as base64 PNG -------------------

VWA = REAL / "visualwebarena"


def test_visualwebarena_render_is_claimed_by_no_reader_and_the_folder_is_named(tmp_path):
    with pytest.raises(NoRunsFound):
        trajcheck.score([VWA], out=tmp_path / "L")


def test_visualwebarena_render_drafted_in_full():
    # issue 47 item 4: the HTML log read as text, a step a block of lines, the embedded image its screenshot
    d = draft_mapping(VWA, check=True)
    assert d.coverage is not None
    c = d.coverage
    # 13 blocks: click, go_back, goto x5, new_tab x2, 3 unparsable replies (none), the harness's closing stop
    assert (c["runs_found"], c["runs_read"], c["actions"]) == (1, 1, 13), d.text
    assert c["actions_understood"] >= 12
    # each block's image is the screen before its action (rendered before env.step)
    assert (c["screenshots"], c["screenshots_found"], c["frames_not_there"]) == (13, 13, 0)


@pytest.mark.xfail(strict=True,
                   reason="issue 47 item 4 (today the draft reads no step), then item 2: how runs end is "
                          "declared: VisualWebArena writes its own early stop (`stop [Early stop: ...]`) as a stop "
                          "action; its score is only in a log file, absent here (the evaluator raised, error.txt)")
def test_visualwebarena_harness_early_stop_is_not_an_answer(tmp_path):
    (tmp_path / "m.toml").write_text(draft_mapping(VWA).text)
    trajcheck.score([VWA], out=tmp_path / "L", mapping=tmp_path / "m.toml")
    runs = trajcheck.runs(tmp_path / "L")
    assert len(runs) == 1
    # no recorded outcome, and the last "answer" is the harness giving up: no claim, no verdict
    assert set(runs["eval_final_verdict"]) == {"unknown"}
    assert not runs["false_claim"].fillna(False).any()
