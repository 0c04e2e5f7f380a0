"""benchmarks/bench_stages.py times the stages of a score by wrapping module attributes: a renamed or
moved stage would make it fail or time nothing. Behaviour only; the timings are not checked here."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_stages  # noqa: E402

RUN = ROOT / "sample_runs" / "consent-overlay-on"


def _installed() -> list:
    return [getattr(*bench_stages._owner(m, a)) for _, m, a, _ in bench_stages.STAGES]


def test_every_stage_is_timed_and_the_timers_are_removed():
    originals = _installed()
    wall, own, calls = bench_stages.score_once(RUN)
    assert set(calls) == {label for label, *_ in bench_stages.STAGES}, "a stage was never called"
    distinct = {f.read_bytes() for f in (RUN / "frames").iterdir()}
    assert calls["decode, gray pixels and pHash of each frame file"] == len(distinct)  # one decode per content
    assert 0 < sum(own.values()) < wall
    assert _installed() == originals


def test_the_table_accounts_for_the_whole_wall_time():
    wall, own, calls = bench_stages.score_once(RUN)
    lines = bench_stages.table(wall, own, calls)
    # every stage, then "everything else", whose label is longer than the column: read each row's seconds as the
    # number before its share, not at a fixed column (a fixed slice cut "0.46" to "0.4" when that row was large)
    seconds = [float(re.search(r"(-?\d+\.\d{2})\s+-?[\d.]+%", line).group(1)) for line in lines[1:-1]]
    assert len(seconds) == len(bench_stages.STAGES) + 1
    assert sum(seconds) == pytest.approx(wall, abs=0.005 * len(seconds))


def test_a_stage_that_no_longer_exists_leaves_no_timer_behind(monkeypatch):
    originals = _installed()
    monkeypatch.setattr(bench_stages, "STAGES", bench_stages.STAGES + [("gone", "trajcheck.scoring.loading", "no_such", False)])
    with pytest.raises(AttributeError):
        bench_stages.score_once(RUN)
    monkeypatch.undo()
    assert _installed() == originals


def test_nested_stages_count_their_own_time_only(monkeypatch):
    clock = [0.0]  # a clock the stages below move by hand: 2 s in outer, 3 in middle, 5 in inner
    monkeypatch.setattr(bench_stages, "time", type("Clock", (), {"perf_counter": staticmethod(lambda: clock[0])}))

    class Mod:
        @staticmethod
        def outer():
            clock[0] += 2
            Mod.middle()

        @staticmethod
        def middle():
            clock[0] += 3
            Mod.inner()

        @staticmethod
        def inner():
            clock[0] += 5

    t = bench_stages.Timers()
    for name in ("outer", "middle", "inner"):
        t.wrap(name, Mod, name)
    Mod.outer()
    t.undo()
    assert t.calls == {"outer": 1, "middle": 1, "inner": 1}
    assert t.own == {"outer": 2, "middle": 3, "inner": 5}
