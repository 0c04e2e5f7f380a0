"""The readings analyzer (trajcheck.analyzers.readings): where a point lands on a change, the margin rule that
chooses a reading or says unsure, and the measurement its MARGIN rests on (the sample runs' recorded clicks)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from trajcheck.analyzers import readings as R
from trajcheck.analyzers.pixeldiff import Blob, ChangeMap, diff_frames
from trajcheck.base.box import Box
from trajcheck.media.frames import decode

from conftest import SAMPLES


def change(*boxes: tuple[int, int, int, int], kind: str = "content", w: int = 1280, h: int = 800) -> ChangeMap:
    blobs = tuple(Blob(Box(*b), 100, kind) for b in boxes)
    return ChangeMap(w, h, 100 * len(blobs), blobs[0].box if blobs else None, blobs)


def test_a_point_lands_on_a_change_within_the_margin_and_not_beyond():
    c = change((100, 100, 200, 140))
    assert R.lands(c, (150, 120)) is True
    assert R.lands(c, (200 + R.MARGIN - 1, 120)) is True
    assert R.lands(c, (200 + R.MARGIN + 1, 120)) is False
    assert R.lands(change((100, 100, 200, 140), kind="noise"), (150, 120)) is False  # rendering noise is no change
    assert R.lands(c, (1300, 120)) is False  # outside the frame
    assert R.lands(None, (150, 120)) is None and R.lands(c, None) is None


def test_typing_lands_on_its_line_where_a_click_does_not():
    c = change((420, 183, 460, 202))  # typed text at the field's left; the field was clicked in its middle
    assert R.lands(c, (640, 193)) is False
    assert R.lands(c, (640, 193), typing=True) is True
    assert R.lands(c, (640, 260), typing=True) is False  # another line
    assert R.pointed(["CLICK", "TYPE", "SCROLL"], [(640, 193), None, (1, 1)]) == [(640, 193), (640, 193), None]


@pytest.mark.parametrize("won,lost,readings,chosen", [
    (7, 0, 2, "a"), (6, 0, 2, None),  # two readings: 7 of 7 disagreements decide, 6 of 6 do not
    (8, 0, 3, "a"), (7, 0, 3, None),  # three: the level is shared between two comparisons
    (10, 6, 2, None), (27, 3, 2, "a"),
])
def test_the_margin_rule(won, lost, readings, chosen):
    a = [True] * won + [False] * lost + [True] * 5  # 5 actions both land on: they do not count
    b = [False] * won + [True] * lost + [True] * 5
    hits = {"a": a, "b": b}
    if readings == 3:
        hits["c"] = [False] * len(a)
    c = R.choose("alignment", hits)
    assert c.chosen == chosen, c.why
    assert str(c.tallies[0]) == f"{won + 5} of {won + lost + 5} as a"


def test_readings_no_action_tells_apart_are_unsure_alone_and_no_obstacle_beside_a_beaten_one():
    same = [True, False, True]
    assert R.choose("coordinates", {"a": same, "b": same}).chosen is None
    c = R.choose("coordinates", {"a": same * 3, "b": same * 3, "c": [False] * 9})
    assert c.chosen is None  # 6 to 0 against c is not enough among three
    c = R.choose("coordinates", {"a": same * 5, "b": same * 5, "c": [False] * 15})
    assert c.chosen == "a" and "b lands alike on every checked action" in c.why


def test_weigh_chooses_the_offset_and_the_scale_the_changes_support():
    # every click's change is in the frames of the step after it, at the point scaled by 1.25
    pts = [(100.0 + 40 * i, 200.0) for i in range(10)]
    changes = [None] + [change((int(x * 1.25) - 5, 245, int(x * 1.25) + 5, 255)) for x, _ in pts]
    s = R.Sample(tuple(pts) + (None,), tuple(changes), {"screenshot": (1.0, 1.0), "x1.25": (1.25, 1.25)})
    align, space = R.weigh([s], {"pre": 0, "post": -1, "later": 1}, ["screenshot", "x1.25"])
    assert (align.chosen, space.chosen) == ("later", "x1.25")
    assert align.evidence().startswith("clicks and typing change the screen where they land: 10 of 10 as later")
    # spaces that place every point within the margin are one reading: the first listed is kept
    s2 = R.Sample(s.points, s.changes, {"a": (1.25, 1.25), "b": (1.251, 1.251)})
    assert [t.reading for t in R.weigh([s2], {"x": 1}, ["a", "b"])[1].tallies] == ["a"]


def _box_distance(box: Box, x: float, y: float) -> float:
    return max(box[0] - x, 0, x - (box[2] - 1), box[1] - y, 0, y - (box[3] - 1))


@pytest.mark.slow
def test_margin_measured_on_the_sample_runs_recorded_clicks():
    """The measurement MARGIN rests on: the sample runs' clicks (real Chromium frames), the distance from each to
    the nearest visible change in its own frames, and in the frames of the step before."""
    own: list[float] = []
    before: list[float] = []
    for d in sorted(p for p in SAMPLES.iterdir() if (p / "steps.jsonl").is_file()):
        width = json.loads((d / "run.json").read_text())["screen"]["width"]
        steps = [json.loads(ln) for ln in (d / "steps.jsonl").read_text().splitlines() if ln.strip()]
        maps = []
        for s in steps:
            a, b = decode(d / s["frames"]["pre"]), decode(d / s["frames"]["post"])
            maps.append((diff_frames(a.px, b.px), a.width / width))
        for i, s in enumerate(steps):
            act = s["action"]
            if act["type"] not in ("CLICK", "DOUBLE_CLICK") or act.get("x") is None:
                continue
            for j, out in ((i, own), (i - 1, before)):
                if j >= 0:
                    cm, k = maps[j]
                    near = [_box_distance(b.box, act["x"] * k, act["y"] * k) for b in cm.blobs if b.kind != "noise"]
                    out.append(min(near, default=np.inf))
    assert len(own) == 84
    assert sum(d == 0 for d in own) == 64 and not [d for d in own if 0 < d < 48]
    assert sum(d <= R.MARGIN for d in before) == 18 and sum(d <= 24 for d in before) == 19
