"""Bad input gets a clear error naming run, file, line or field; the other runs are still scored."""

from __future__ import annotations

import json

from conftest import SAMPLES
import os
import zlib
import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajcheck.store import ledger
from trajcheck.cli.main import app
from trajcheck.scoring.pipeline import score_paths

from conftest import copy_run, read_steps, sample_run_dirs, write_steps




def _first_clickable_run() -> Path:
    for d in sample_run_dirs():
        steps = read_steps(d)
        if any(s["action"].get("x") is not None for s in steps) and (d / "frames").is_dir():
            if all(s.get("frames", {}).get("pre", "").endswith(".png") for s in steps if s.get("frames")):
                return d
    raise AssertionError("no sample run with a click")


def _png_bomb(path: Path, w: int = 30000, h: int = 30000) -> None:
    """A valid PNG header declaring w x h pixels (Pillow must refuse it before decoding)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = zlib.compress(b"\x00" * (w // 8 + 1) * 16)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 1, 0, 0, 0, 0))
                     + chunk(b"IDAT", raw) + chunk(b"IEND", b""))


def _variant(root: Path, good: Path, name: str) -> Path:
    d = copy_run(good, root / name)
    meta = json.loads((d / "run.json").read_text())
    meta["run_id"] = name
    (d / "run.json").write_text(json.dumps(meta))
    return d


def _first_click(steps: list[dict]) -> dict:
    return next(s for s in steps if s["action"].get("x") is not None)


def build_bad_corpus(root: Path) -> dict[str, tuple[str, list[str]]]:
    """Make one run per kind of bad input. Returns name -> (expected status, fragments of the message)."""
    good = _first_clickable_run()
    _variant(root, good, "good")
    exp: dict[str, tuple[str, list[str]]] = {}

    d = _variant(root, good, "corrupt_png")
    f = _first_click(read_steps(d))["frames"]["post"]
    (d / f).write_bytes((d / f).read_bytes()[:200])
    exp["corrupt_png"] = ("ok", ["frame_unreadable", f, "frames.post"])

    d = _variant(root, good, "empty_image")
    f = _first_click(read_steps(d))["frames"]["pre"]
    (d / f).write_bytes(b"")
    exp["empty_image"] = ("ok", [f, "frames.pre"])

    d = _variant(root, good, "missing_frame")
    f = _first_click(read_steps(d))["frames"]["post"]
    (d / f).unlink()
    exp["missing_frame"] = ("ok", ["frames_missing", f])

    d = _variant(root, good, "bomb")
    f = _first_click(read_steps(d))["frames"]["post"]
    _png_bomb(d / f)
    exp["bomb"] = ("ok", ["frame_too_large", f])

    d = _variant(root, good, "truncated_jsonl")
    text = (d / "steps.jsonl").read_text()
    (d / "steps.jsonl").write_text(text.rstrip("\n")[:-25])
    n = len(text.rstrip("\n").splitlines())
    exp["truncated_jsonl"] = ("invalid", [f"steps.jsonl:{n}", "not valid JSON", "truncated"])

    d = _variant(root, good, "run_json_not_json")
    (d / "run.json").write_text("{this is not json")
    exp["run_json_not_json"] = ("invalid", ["run.json", "not valid JSON"])

    d = _variant(root, good, "not_utf8")
    (d / "steps.jsonl").write_bytes(b'{"index": 1, "action": {"type": "CLICK"}, "reasoning": "caf\xe9"}\n')
    exp["not_utf8"] = ("invalid", ["steps.jsonl", "not UTF-8", "steps.jsonl:1"])

    d = _variant(root, good, "deep_json")
    (d / "steps.jsonl").write_text('{"index": 1, "action": {"type": "WAIT"}, "x": ' + "[" * 100000 + "]" * 100000 + "}\n")
    exp["deep_json"] = ("invalid", ["steps.jsonl:1", "nested too deeply"])

    d = _variant(root, good, "empty_steps")
    (d / "steps.jsonl").write_text("\n")
    exp["empty_steps"] = ("invalid", ["steps.jsonl", "no steps"])

    d = _variant(root, good, "wrong_types")
    steps = read_steps(d)
    _first_click(steps)["action"]["x"] = "640px"
    steps[0]["index"] = "one"
    write_steps(d, steps)
    exp["wrong_types"] = ("invalid", ["field action.x", "field index", "steps.jsonl:"])

    d = _variant(root, good, "nan_coordinate")
    lines = (d / "steps.jsonl").read_text().splitlines()
    i = next(i for i, l in enumerate(lines) if '"x"' in l)
    s = json.loads(lines[i])
    s["action"]["x"] = 1e999  # json.dumps writes Infinity
    lines[i] = json.dumps(s).replace("Infinity", "NaN")
    (d / "steps.jsonl").write_text("\n".join(lines) + "\n")
    exp["nan_coordinate"] = ("invalid", [f"steps.jsonl:{i + 1}", "NaN is not valid JSON", "field action.x",
                                         "value_out_of_range"])

    d = _variant(root, good, "outside_frame")
    steps = read_steps(d)
    _first_click(steps)["action"].update(x=99999, y=5)
    write_steps(d, steps)
    exp["outside_frame"] = ("ok", ["coords_outside_frame", "action.x", "99999"])

    d = _variant(root, good, "duplicate_index")
    steps = read_steps(d)
    steps[1]["index"] = steps[0]["index"]
    write_steps(d, steps)
    exp["duplicate_index"] = ("invalid", ["duplicate_step_index", "field index", "steps.jsonl:2"])

    d = _variant(root, good, "unknown_action")
    steps = read_steps(d)
    steps[0]["action"]["type"] = "HOVER"
    write_steps(d, steps)
    exp["unknown_action"] = ("ok", ["unknown_action_type", "HOVER", "action.type"])

    d = _variant(root, good, "escaping_path")
    steps = read_steps(d)
    steps[0]["frames"]["pre"] = "../../../../etc/passwd"
    write_steps(d, steps)
    exp["escaping_path"] = ("invalid", ["path_escapes_run", "frames.pre", "steps.jsonl:1"])

    d = _variant(root, good, "symlink_out")
    f = _first_click(read_steps(d))["frames"]["post"]
    outside = root / "outside.png"
    outside.write_bytes((d / f).read_bytes())
    (d / f).unlink()
    os.symlink(outside, d / f)
    exp["symlink_out"] = ("invalid", ["path_escapes_run", f])

    d = root / "no_run_json_here"
    d.mkdir()
    (d / "notes.txt").write_text("not a run")
    return exp


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    exp = build_bad_corpus(root)
    report = score_paths([root], jobs=1)
    return root, exp, {r.run["run_id"]: r for r in report.results}


@pytest.mark.slow
def test_every_bad_run_is_reported_and_the_good_run_is_scored(bad):
    _root, exp, results = bad
    good = results["good"]
    # the untouched copy scores as the sample run it was copied from: every step, nothing to report
    assert (good.ok, len(good.steps), good.run["warnings"], good.run["error"]) == (
        True, len(read_steps(_first_clickable_run())), [], "")
    for name, (status, fragments) in exp.items():
        r = results[name]
        assert r.run["status"] == status, (name, r.run["error"], r.run["warnings"])
        if status == "invalid":  # an error names its run (a warning is stored on the run's own row)
            text = r.run["error"]
            assert name in text, (name, text)
        else:
            text = " ".join(r.run["warnings"])
        for frag in fragments:
            assert frag in text, (name, frag, text)
    assert len(results) == len(exp) + 1  # the folder without run.json is not a run


@pytest.mark.slow
def test_a_step_with_an_unreadable_frame_gets_a_null_verdict(bad):
    _root, exp, results = bad
    bad_frame = exp["corrupt_png"][1][1]
    using = [r for r in results["corrupt_png"].steps if bad_frame in (r["frame_pre"], r["frame_post"])]
    high_risk = [r for r in using if r["effect_high_risk"]]
    assert high_risk, "the corpus must put the truncated frame on a high-risk step"
    assert all(r["effect_reason"] == "frame_unreadable" and r["action_effect_observed"] is None for r in high_risk)
    after = [r for r in using if r["frame_post"] == bad_frame]
    assert after, "the truncated frame is the post frame of the first click"
    assert [r["frame_post_phash"] for r in after] == [None] * len(after)


@pytest.mark.slow
def test_cli_reports_without_traceback_and_keeps_the_good_run(bad, tmp_path):
    root, exp, _ = bad
    out = tmp_path / "L"
    res = CliRunner().invoke(app, ["score", str(root), "--out", str(out), "--jobs", "2", "--quiet"])
    assert res.exit_code == 1, res.output
    # CliRunner also reports an uncaught exception as exit code 1: only a SystemExit(1) is the command's own
    assert isinstance(res.exception, SystemExit) and res.exception.code == 1, repr(res.exception)
    assert "Traceback" not in res.output
    got = dict(ledger.query(out, "select run_id, status from runs").rows)
    assert got["good"] == "ok"
    assert {k for k, v in got.items() if v == "invalid"} == {k for k, (s, _) in exp.items() if s == "invalid"}


@pytest.mark.slow
def test_validate_lists_every_problem_with_location(bad):
    root, exp, _ = bad
    res = CliRunner().invoke(app, ["validate", str(root), "--format", "json"])
    assert res.exit_code == 1
    problems = json.loads(res.stdout)["problems"]
    slugs = {p["slug"] for p in problems}
    assert {"json_invalid", "value_out_of_range", "json_too_deep", "duplicate_step_index", "path_escapes_run",
            "frames_missing", "frame_too_large", "frame_unreadable", "unknown_action_type",
            "coords_outside_frame", "schema", "not_utf8", "steps_empty"} <= slugs
    for p in problems:
        assert p["run"] and p["file"] and p["hint"], p


@pytest.mark.slow
def test_duplicate_run_ids_are_both_reported(tmp_path):
    good = _first_clickable_run()
    copy_run(good, tmp_path / "a")
    copy_run(good, tmp_path / "b")
    report = score_paths([tmp_path], jobs=1)
    statuses = [r.run["status"] for r in report.results]
    assert statuses == ["ok", "invalid"]
    err = report.results[1].run["error"]
    assert str(tmp_path / "a") in err and str(tmp_path / "b") in err
    assert report.results[1].run["run_id"] == "b"  # its path relative to the argument


def test_missing_argument_is_exit_3(tmp_path):
    res = CliRunner().invoke(app, ["score", str(tmp_path / "nope"), "--out", str(tmp_path / "L"), "-q"])
    assert res.exit_code == 3
    assert "does not exist" in res.output


def test_safe_join_refuses_every_way_out_of_the_run_directory(tmp_path):
    from trajcheck.readers.rundir import safe_join

    run = tmp_path / "run"
    (run / "frames").mkdir(parents=True)
    (run / "frames" / "a.png").write_bytes(b"x")
    (tmp_path / "secret").write_text("s")
    os.symlink(tmp_path / "secret", run / "frames" / "link.png")  # a file link out
    os.symlink(tmp_path, run / "up")  # a directory link out
    os.symlink(run / "frames", run / "inside")  # a link that stays inside
    real = os.path.realpath(run)
    for rel in ["frames/a.png", "./frames//a.png", "frames/../frames/a.png", "inside/a.png", "frames/missing.png"]:
        got = safe_join(run, rel)
        assert got is not None and str(got) == os.path.realpath(os.path.join(run, rel)), rel
        assert str(got).startswith(real + os.sep)
    for rel in ["../secret", "frames/link.png", "up/secret", "frames/../../secret", "/etc/passwd", "", "a\x00b"]:
        assert safe_join(run, rel) is None, rel


@pytest.mark.slow
@pytest.mark.parametrize("name", ["step", "run"])
def test_fast_schema_check_agrees_with_jsonschema_on_mutated_records(name):
    """The compiled validator only short-cuts valid records: on recorded records with values swapped for
    wrong types, removed or unknown keys, it accepts exactly what jsonschema accepts."""
    import copy
    import random

    from jsonschema import Draft202012Validator

    from trajcheck.readers.rundir import _fast_check
    from trajcheck.schemas import load_json_schema

    fast, slow = _fast_check(name), Draft202012Validator(load_json_schema(name))
    assert fast is not None
    if name == "step":
        recs = [json.loads(l) for f in sorted(SAMPLES.glob("*/steps.jsonl")) for l in f.read_text().splitlines() if l]
    else:
        recs = [json.loads(f.read_text()) for f in sorted(SAMPLES.glob("*/run.json"))]
    values = [None, True, False, 0, 1, -1, 1.5, 1e308, 2**70, "", "x", "CLICK", [], [1], {}, {"a": 1}, 255, 256]
    rng = random.Random(7)

    def leaves(o, p=()):
        yield p
        for k, v in (o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()):
            yield from leaves(v, p + (k,))

    agree = valid = 0
    for _ in range(3000):
        r = copy.deepcopy(rng.choice(recs))
        for _ in range(rng.randint(1, 3)):
            p = rng.choice(list(leaves(r))[1:] or [()])
            if not p:
                break
            parent = r
            for k in p[:-1]:
                parent = parent[k]
            op = rng.random()
            if op < 0.6:
                parent[p[-1]] = copy.deepcopy(rng.choice(values))
            elif isinstance(parent, dict) and op < 0.8:
                parent.pop(p[-1])
            elif isinstance(parent, dict):
                parent[f"zz{rng.randint(0, 9)}"] = rng.choice(values)
        try:
            fast(r)
            ok = True
        except Exception:  # noqa: BLE001
            ok = False
        slow_ok = not any(True for _ in slow.iter_errors(r))
        agree += ok == slow_ok
        valid += slow_ok
    assert agree == 3000
    assert 300 < valid < 2700  # the mutations make both valid and invalid records
