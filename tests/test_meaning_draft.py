"""A drafted mapping's readings chosen by the runs' own screenshots (issue 47), on synthetic harness logs made of
the sample runs' real frames and clicks: screenshots named one step off, points in a model space 1.25 times
smaller, and clicks that change nothing. The draft chooses with no edit, `validate` warns on a mapping that
declares the wrong reading, and where the evidence cannot tell, the draft says unsure and the runs' verdicts
are held."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import trajcheck
from trajcheck.commands import draft_mapping

from conftest import SAMPLES

CLICKS = ("CLICK", "DOUBLE_CLICK")


def build(out: Path, named: str = "pre", key: str = "screenshot", scale: float = 1.0, same: bool = False) -> int:
    """A harness log per sample run whose frames form one chain: ``trajectory.json`` ({"task", "steps": [{"action",
    "coordinate", "text", KEY}]}) and ``shots/K.png``, the K-th screen of the run. The truth is the sample run's:
    step i acts between screens i and i+1. ``named``: which one each step names (``pre``: i, ``post``: i+1,
    ``early``: i-1, none for the first step; ``late``: i+2, none for the last step);
    ``scale``: the points are logged divided by it; ``same``: every screen is the first (no click changes
    anything)."""
    made = 0
    for d in sorted(p for p in SAMPLES.iterdir() if (p / "steps.jsonl").is_file()):
        steps = [json.loads(ln) for ln in (d / "steps.jsonl").read_text().splitlines() if ln.strip()]
        meta = json.loads((d / "run.json").read_text())
        chain = [steps[0]["frames"]["pre"]] + [s["frames"]["post"] for s in steps]
        if any(s["frames"]["pre"] != chain[i] for i, s in enumerate(steps)) or \
                not any(s["action"]["type"] in CLICKS for s in steps):
            continue
        run = out / d.name
        (run / "shots").mkdir(parents=True)
        for k, f in enumerate(chain):
            shutil.copy(d / (chain[0] if same else f), run / "shots" / f"{k}{Path(f).suffix}")
        from PIL import Image

        k = Image.open(d / chain[0]).size[0] / meta["screen"]["width"]  # screen points -> frame pixels
        logged = []
        for i, s in enumerate(steps):
            a = s["action"]
            j = {"pre": i, "post": i + 1, "early": i - 1, "late": i + 2}[named]
            st: dict[str, object] = {"action": a["type"].lower()}
            if 0 <= j < len(chain):
                st[key] = f"shots/{j}{Path(chain[j]).suffix}"
            if a.get("x") is not None:
                st["coordinate"] = [round(a["x"] * k / scale, 1), round(a["y"] * k / scale, 1)]
            if a.get("text"):
                st["text"] = a["text"]
            logged.append(st)
        (run / "trajectory.json").write_text(json.dumps({"task": meta["goal"], "steps": logged}))
        made += 1
    return made


@pytest.fixture(scope="module")
def harnesses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("harnesses")
    kinds = {"after": dict(named="post"), "before_named_after": dict(key="screenshot_after"),
             "scaled": dict(scale=1.25), "still": dict(same=True), "early": dict(named="early"),
             "late": dict(named="late")}
    out = {}
    for name, kw in kinds.items():
        assert build(root / name, **kw) >= 20  # type: ignore[arg-type]
        out[name] = root / name
    return out


@pytest.fixture(scope="module")
def drafts(harnesses: dict[str, Path]) -> dict[str, str]:
    """Each harness's draft, drafted once."""
    return {}


def drafted(harnesses: dict[str, Path], drafts: dict[str, str], name: str) -> str:
    if name not in drafts:
        drafts[name] = draft_mapping(harnesses[name]).text
    return drafts[name]


def line(text: str, key: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith(key + " = "))


@pytest.mark.slow
def test_screenshots_taken_after_each_action_are_drafted_post(harnesses, drafts):
    text = drafted(harnesses, drafts, "after")
    assert line(text, "screenshot_is").startswith("screenshot_is = 'post'   # clicks and typing change the screen "
                                                    "where they land: 41 of 50 as post; 23 of 68 as pre"), text
    assert "unsure = " not in text and line(text, "coordinates").startswith("coordinates = 'screenshot'")


@pytest.mark.slow
def test_a_key_named_after_whose_screenshots_are_taken_before_is_drafted_pre(harnesses):
    d = draft_mapping(harnesses["before_named_after"])
    assert line(d.text, "screenshot").startswith("screenshot = 'screenshot_after'")
    assert line(d.text, "screenshot_is").startswith("screenshot_is = 'pre'   # clicks and typing change the screen "
                                                    "where they land: 56 of 68 as pre"), d.text
    assert "unsure = " not in d.text


@pytest.mark.slow
def test_points_in_a_model_space_scaled_by_1_25_are_drafted_so(harnesses, drafts):
    text = drafted(harnesses, drafts, "scaled")
    assert "coordinates = 'model'" in text and line(text, "model_scale").startswith(
        "model_scale = 1.25   # clicks and typing change the screen where they land: 56 of 69 as model_scale 1.25; "
        "21 of 69 as screenshot"), text
    assert "unsure = " not in text


def frames_read(folder: Path, text: str, tmp: Path) -> dict[str, list[tuple[str | None, str | None]]]:
    """Each run's frames (pre, post) per step as ``text`` (a mapping) reads them, as ``shots/K`` stems."""
    from trajcheck.readers.mapping.read import read_mapped
    from trajcheck.readers.mapping.schema import Mapping

    m = tmp / "read.toml"
    m.write_text(text)
    mapping = Mapping(m)

    def stem(f: str | None) -> str | None:
        return None if f is None else f.rsplit(".", 1)[0]
    return {d.name: [(stem(s.frame_pre), stem(s.frame_post)) for s in read_mapped(mapping, d, d.name)[0].steps]
            for d in sorted(folder.iterdir())}


def truth(frames: dict[str, list[tuple[str | None, str | None]]]) -> dict[str, list[tuple[str, str]]]:
    return {k: [(f"shots/{i}", f"shots/{i + 1}") for i in range(len(v))] for k, v in frames.items()}


@pytest.mark.slow
def test_screenshots_one_step_earlier_than_pre_are_drafted_offset_1(harnesses, tmp_path):
    d = draft_mapping(harnesses["early"])
    assert "unsure = " not in d.text and not any(u.startswith("alignment: ") for u in d.unsure), d.text
    assert line(d.text, "screenshot_is").startswith(
        "screenshot_is = 'pre'   # clicks and typing change the screen where they land: 56 of 68 as pre, offset +1; "
        "24 of 50 as pre; 10 of 37 as post; 8 of 24 as post, offset -1"), d.text
    assert line(d.text, "screenshots_offset").startswith("screenshots_offset = 1   # each step's screenshot is the "
                                                         "one the step after it names")
    # read through the draft, every step is paired with the screens it acted between (the last step's after is
    # the next-numbered file), as the sample run recorded it
    got = frames_read(harnesses["early"], d.text, tmp_path)
    assert got == truth(got)
    # the same mapping without the offset reads every step one screen early, and validate says so
    wrong = d.text.replace("screenshots_offset = 1", "screenshots_offset = 0")
    (p,) = _validate(harnesses["early"], wrong, tmp_path)
    assert p["field"] == "alignment" and "56 of 68 as one step later; 24 of 50 as read" in p["message"], p
    assert p["hint"].startswith("the screenshots support screenshot_is = 'pre' and screenshots_offset = 1: ")
    assert _validate(harnesses["early"], d.text, tmp_path) == []


@pytest.mark.slow
def test_screenshots_one_step_later_than_post_are_drafted_post_offset_minus_1(harnesses, tmp_path):
    d = draft_mapping(harnesses["late"])
    assert "unsure = " not in d.text, d.text
    assert line(d.text, "screenshot_is").startswith("screenshot_is = 'post'   # clicks and typing change the screen "
                                                    "where they land: "), d.text
    assert line(d.text, "screenshot_is").split("land: ")[1].split(" as ")[1].startswith("post, offset -1;"), d.text
    assert line(d.text, "screenshots_offset").startswith("screenshots_offset = -1   # each step's screenshot is "
                                                         "the one the step before it names")
    got = frames_read(harnesses["late"], d.text, tmp_path)
    # the first step's screen before is the one screenshot no step names
    assert {k: v[1:] for k, v in got.items()} == {k: v[1:] for k, v in truth(got).items()}
    assert all(v[0] == (None, "shots/1") for v in got.values())


@pytest.mark.slow
def test_clicks_that_change_nothing_leave_both_readings_unsure_and_the_verdicts_held(harnesses, tmp_path):
    folder = harnesses["still"]
    d = draft_mapping(folder)
    assert "unsure = ['alignment', 'coordinates']" in d.text, d.text
    assert line(d.text, "screenshot_is").startswith("screenshot_is = 'pre'   # UNSURE: clicks and typing change the "
                                                    "screen where they land: 0 of 69 as pre")
    assert any(u.startswith("alignment: ") for u in d.unsure) and any(u.startswith("coordinates: ") for u in d.unsure)
    held, unheld = tmp_path / "held.toml", tmp_path / "unheld.toml"
    held.write_text(d.text)
    unheld.write_text("\n".join(ln for ln in d.text.splitlines() if not ln.startswith("unsure = ")))
    verdicts = {}
    for m in (held, unheld):
        res = trajcheck.score([folder], out=tmp_path / m.stem, mapping=m)
        runs = trajcheck.runs(tmp_path / m.stem)
        verdicts[m.stem] = runs
        assert res.scored == len(runs) >= 20
    # read as the draft left it, no run has a verdict of its own; without the mark, some would
    assert set(verdicts["held"]["eval_final_verdict"]) == {"unknown"}
    assert set(verdicts["held"]["verdict_reason"]) == {"not_read"}
    assert all("[reading_unsure]" in " ".join(w) for w in verdicts["held"]["warnings"])
    assert set(verdicts["unheld"]["eval_final_verdict"]) & {"pass", "fail"}


def _validate(folder: Path, text: str, tmp: Path) -> list[dict]:
    m = tmp / "m.toml"
    m.write_text(text)
    return [p for p in trajcheck.validate([folder], mapping=m).to_json()["problems"]
            if p["slug"] == "reading_contradicted"]


@pytest.mark.slow
def test_validate_warns_on_a_mapping_that_declares_the_wrong_alignment(harnesses, drafts, tmp_path):
    right = drafted(harnesses, drafts, "after")
    assert _validate(harnesses["after"], right, tmp_path) == []
    wrong = right.replace("screenshot_is = 'post'", "screenshot_is = 'pre' #")
    (p,) = _validate(harnesses["after"], wrong, tmp_path)
    assert p["field"] == "alignment" and "41 of 50 as one step earlier; 23 of 68 as read" in p["message"]
    assert p["hint"].startswith("the screenshots support screenshot_is = 'post' (no screenshots_offset): ")


def test_the_alignment_a_warning_names_is_the_declared_one_moved_one_step():
    from trajcheck.readers.mapping.meaning import supported

    # (pre, k) one step later is (pre, k+1); (post, k) one step later is (pre, k); one earlier: (post, k), (post, k-1)
    assert supported((True, 0), "one step later") == "screenshot_is = 'pre' and screenshots_offset = 1"
    assert supported((True, 0), "one step earlier") == "screenshot_is = 'post' (no screenshots_offset)"
    assert supported((False, 0), "one step later") == "screenshot_is = 'pre' (no screenshots_offset)"
    assert supported((False, 0), "one step earlier") == "screenshot_is = 'post' and screenshots_offset = -1"
    assert supported((True, 1), "one step earlier") == "screenshot_is = 'pre' (no screenshots_offset)"  # (post, 1)
    assert supported((False, -1), "one step later") == "screenshot_is = 'post' (no screenshots_offset)"  # (pre, -1)
    assert supported((True, -2), "one step earlier") == "screenshot_is = 'post' and screenshots_offset = -2"


@pytest.mark.slow
def test_validate_warns_on_a_mapping_that_declares_the_wrong_scale(harnesses, drafts, tmp_path):
    right = drafted(harnesses, drafts, "scaled")
    assert _validate(harnesses["scaled"], right, tmp_path) == []
    (p,) = _validate(harnesses["scaled"], right.replace("model_scale = 1.25", "model_scale = 1 #"), tmp_path)
    assert p["field"] == "coordinates" and "56 of 69 as x1.25" in p["message"]
