"""benchmarks/bench_stages.py times the stages of a score by wrapping module attributes: a renamed or
moved stage would make it fail or time nothing. Behaviour only; the timings are not checked here."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_stages  # noqa: E402


def test_every_stage_is_timed_and_the_timers_are_removed(tmp_path):
    originals = [getattr(*bench_stages._owner(m, a)) for _, m, a, _ in bench_stages.STAGES]
    run = ROOT / "sample_runs" / "consent-overlay-on"
    wall, own, calls = bench_stages.score_once(run)
    assert wall > 0
    assert set(calls) == {label for label, *_ in bench_stages.STAGES}, "a stage was never called"
    distinct = {f.read_bytes() for f in (run / "frames").iterdir()}
    assert calls["decode, gray pixels and pHash of each frame file"] == len(distinct)  # one decode per content
    assert all(own[label] >= 0 for label in calls)
    assert [getattr(*bench_stages._owner(m, a)) for _, m, a, _ in bench_stages.STAGES] == originals


def test_a_nested_stage_is_counted_in_the_inner_one_only():
    class Mod:
        @staticmethod
        def outer():
            Mod.inner()

        @staticmethod
        def inner():
            sum(range(200_000))

    t = bench_stages.Timers()
    t.wrap("outer", Mod, "outer")
    t.wrap("inner", Mod, "inner")
    Mod.outer()
    t.undo()
    assert t.calls == {"outer": 1, "inner": 1}
    assert t.own["inner"] > 0 and t.own["outer"] < t.own["inner"]
