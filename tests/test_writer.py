"""trajcheck.RunWriter: any harness writes trajcheck.run/1 directories, atomically."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

import trajcheck
from trajcheck.base.errors import RunFormatError
from trajcheck.scoring.pipeline import score_paths

from conftest import SAMPLES


def _replay(dst, src, frame=lambda p: p.read_bytes()):
    """Record a sample run again through the RunWriter, as a harness would, from its own files."""
    meta = json.loads((src / "run.json").read_text())
    steps = [json.loads(l) for l in (src / "steps.jsonl").read_text().splitlines()]
    with trajcheck.RunWriter(dst, run_id=meta["run_id"] + "-rw", task_id=meta["task_id"], goal=meta["goal"],
                             screen=(meta["screen"]["width"], meta["screen"]["height"]), config=meta["config"]) as w:
        w.observe(frame(src / steps[0]["frames"]["pre"]))
        for s in steps:
            extra = {k: s[k] for k in ("semantic", "expected", "predict") if k in s}
            w.step(s["action"], post=frame(src / s["frames"]["post"]), reasoning=s.get("reasoning"), page=s.get("page"),
                   client=s.get("client"), ok=s["executor"]["ok"], error=s["executor"]["error"], **extra)
        w.finish(outcome=meta["outcome"])
    return meta


def test_a_replayed_run_scores_as_the_original(tmp_path):
    src = SAMPLES / "consent-overlay-off"
    _replay(tmp_path / "rw", src)
    assert not list(tmp_path.glob(".*"))  # the partial folder was renamed into place
    res = {r.run["run_id"]: r for r in score_paths([src, tmp_path / "rw"], jobs=1).results}
    a, b = res["consent-overlay-off"], res["consent-overlay-off-rw"]
    cols = ("action_type", "effect_high_risk", "action_effect_observed", "effect_reason", "effect_global_distance")
    # DOM snapshots are not replayed here, so only the frame-based columns are compared
    assert [[s[c] for c in cols] for s in a.steps] == [[s[c] for c in cols] for s in b.steps]
    assert b.run["status"] == "ok" and b.run["eval_final_verdict"] == "fail"
    # the post frame of a step and the pre frame of the next are one file
    assert len(list((tmp_path / "rw" / "frames").iterdir())) == len({p.read_bytes() for p in (src / "frames").iterdir()})


def test_frames_as_arrays_and_images(tmp_path):
    def as_array(p):
        with Image.open(p) as img:
            return np.asarray(img.convert("RGB"))

    _replay(tmp_path / "arr", SAMPLES / "terms-checkbox-on", as_array)
    [r] = score_paths([tmp_path / "arr"], jobs=1).results
    assert r.run["status"] == "ok" and r.steps[0]["action_effect_observed"] is False


def test_a_killed_writer_leaves_no_run_and_a_bad_record_is_refused(tmp_path):
    w = trajcheck.RunWriter(tmp_path / "half", run_id="half")
    w.step({"type": "CLICK", "x": 1, "y": 2}, post=(SAMPLES / "consent-overlay-on" / "frames" / "001.png").read_bytes())
    del w  # the process dies here: the run was never finished
    assert not (tmp_path / "half").exists()
    res = score_paths([tmp_path], jobs=1)
    assert res.results == []  # the hidden partial folder is not a run
    with trajcheck.RunWriter(tmp_path / "bad", run_id="bad") as w:
        w.step({"type": "CLICK", "x": "left"})
        with pytest.raises(RunFormatError) as exc:
            w.finish()
    assert "action.x" in str(exc.value) and not (tmp_path / "bad").exists()
    with pytest.raises(FileExistsError):
        trajcheck.RunWriter(SAMPLES / "consent-overlay-on")
