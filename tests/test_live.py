"""The live verifier (trajcheck.verify_step): the ledger's verdict, one step at a time, in a runner's loop."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

import trajcheck
from trajcheck.scoring.pipeline import score_paths

from conftest import SAMPLES

COLUMNS = {"action_effect_observed": "action_effect_observed", "reason": "effect_reason",
           "feedback": "effect_feedback", "rule": "effect_rule", "global_distance": "effect_global_distance",
           "region_distance": "effect_region_distance", "action_effect_observed_seed": "action_effect_observed_seed"}


def _replay(run_dir, frame=lambda p: p):
    """Call verify_step on every step of a recorded run, in order, with one state, as a runner would."""
    meta = json.loads((run_dir / "run.json").read_text())
    scr = meta.get("screen")
    state = trajcheck.LiveState(screen=(scr["width"], scr["height"]) if scr else None)
    out = {}
    for line in (run_dir / "steps.jsonl").read_text().splitlines():
        st = json.loads(line)
        out[st["index"]] = trajcheck.verify_step(
            frame(run_dir / st["frames"]["pre"]), frame(run_dir / st["frames"]["post"]), st["action"],
            reasoning=st.get("reasoning"), previous=state, page=st.get("page"), client=st.get("client"))
    return out


@pytest.mark.slow
def test_live_verdicts_equal_the_ledger_on_every_high_risk_step():
    results = score_paths([SAMPLES], jobs=2).results
    checked = 0
    for res in results:
        live = _replay(SAMPLES / res.run["run_id"])
        for row in res.steps:
            if not row["effect_high_risk"]:
                continue
            c = live[row["step_index"]]
            assert c.high_risk is True
            for attr, col in COLUMNS.items():
                assert getattr(c, attr) == row[col], (res.run["run_id"], row["step_index"], attr)
            assert (list(c.region_box) if c.region_box else None) == row["effect_region_box"]
            checked += 1
    assert checked == 42  # every labelled high-risk step of the 26 sample runs


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bytes", "array", "pil", "str"])
def test_frames_as_bytes_arrays_images_or_paths_give_one_verdict(kind):
    def as_kind(p):
        if kind == "bytes":
            return p.read_bytes()
        if kind == "str":
            return str(p)
        with Image.open(p) as img:
            img.load()
            return np.asarray(img) if kind == "array" else img.copy()

    run = SAMPLES / "consent-overlay-on"
    want, got = _replay(run), _replay(run, as_kind)
    assert got == want
    assert [c.action_effect_observed for c in got.values()] == [False, None, True, None]  # 2: accept cookies
    assert got[1].feedback.startswith("clicked (no visible change); WARNING: high-risk action had no observed effect")


def test_bad_frames_are_a_problem_not_an_exception(tmp_path):
    good = (SAMPLES / "consent-overlay-on" / "frames" / "001.png").read_bytes()
    c = trajcheck.verify_step(good, good[:200], {"type": "CLICK", "x": 10, "y": 10}, reasoning="Click Submit")
    assert (c.action_effect_observed, c.reason, c.problem) == (None, "frame_unreadable", "frame_unreadable")
    c = trajcheck.verify_step(good, tmp_path / "missing.png", "KEY_PRESS", reasoning="press Enter to submit")
    assert c.problem == "frames_missing" and c.action_effect_observed is None
    with pytest.raises(TypeError):
        trajcheck.verify_step(good, 42, "CLICK")
    with pytest.raises(TypeError):
        trajcheck.verify_step(good, np.zeros((4, 4), dtype=np.float32), "CLICK")


@pytest.mark.slow
def test_the_state_learns_ambient_change_across_calls():
    """ticker-dead-send: the dead click on Send shows only the clock ticking, which the state learned from
    the steps before it; a fresh state for that one step calls the clock an effect."""
    run = SAMPLES / "ticker-dead-send"
    live = _replay(run)
    assert (live[3].action_effect_observed, live[3].reason) == (False, "only_cosmetic_change")
    steps = [json.loads(l) for l in (run / "steps.jsonl").read_text().splitlines()]
    st = steps[2]
    alone = trajcheck.verify_step(run / st["frames"]["pre"], run / st["frames"]["post"], st["action"],
                                  reasoning=st["reasoning"], screen=(1280, 800), page=st["page"], client=st["client"])
    assert alone.action_effect_observed is True and "ambient" not in alone.filtered
