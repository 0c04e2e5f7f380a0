"""Small work: one run scored by the command, and the live verifier (trajcheck.verify_step) per step.

Used by bench_score.py (its "small work" rows); run alone for just these:

    python benchmarks/bench_live.py
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_runs"
#: The run of issue 16's figure: 4 steps, 5 frame files (1280x800 PNG).
ONE_RUN = SAMPLES / "consent-overlay-on"


def trajcheck_command() -> str:
    """The ``trajcheck`` script installed with the Python running this benchmark: what a user of that
    environment runs. A version manager's wrapper found first on PATH (pyenv's shims are bash scripts that
    start another process to find the real one: 0.06 s a call on this machine) is not trajcheck's cost."""
    beside = Path(sys.executable).parent / "trajcheck"
    if beside.is_file():
        return str(beside)
    import sysconfig

    scripts = Path(sysconfig.get_path("scripts")) / "trajcheck"
    return str(scripts) if scripts.is_file() else (shutil.which("trajcheck") or "trajcheck")


TRAJCHECK = trajcheck_command()


def one_run_wall(repeat: int = 5) -> list[float]:
    """Wall time of `trajcheck score ONE_RUN --out NEW_LEDGER -q`, a fresh process each time."""
    out = []
    with tempfile.TemporaryDirectory(prefix="trajcheck-one-") as tmp:
        for i in range(repeat):
            t = time.perf_counter()
            subprocess.run([TRAJCHECK, "score", str(ONE_RUN), "--out", f"{tmp}/L{i}", "-q"], check=True,
                           capture_output=True)
            out.append(time.perf_counter() - t)
    return out


def live_per_step() -> tuple[int, int, float, float]:
    """verify_step, in this process, after a first call: every step of the 1280x800 PNG sample runs
    replayed in order with one state per run, frames given as PNG bytes. Returns (runs, calls, median s,
    90th percentile s) over the calls whose two frames differ (a repeated frame is cheaper)."""
    import trajcheck

    runs = []
    for meta_path in sorted(SAMPLES.glob("*/run.json")):
        meta = json.loads(meta_path.read_text())
        rec = meta.get("recorder", {})
        if meta.get("screen") != {"width": 1280, "height": 800} or rec.get("device_scale_factor", 1) != 1 \
                or rec.get("frame_format") != "png":
            continue
        rd = meta_path.parent
        steps = [json.loads(line) for line in (rd / "steps.jsonl").read_text().splitlines()]
        runs.append([((rd / s["frames"]["pre"]).read_bytes(), (rd / s["frames"]["post"]).read_bytes(), s)
                     for s in steps])
    pre, post, s = runs[0][0]
    trajcheck.verify_step(pre, post, s["action"])  # first call: imports and per-size tables, not timed
    times = []
    for run in runs:
        state = trajcheck.LiveState(screen=(1280, 800))
        for pre, post, s in run:
            t = time.perf_counter()
            trajcheck.verify_step(pre, post, s["action"], reasoning=s.get("reasoning"), previous=state,
                                  page=s.get("page"), client=s.get("client"))
            if pre != post:
                times.append(time.perf_counter() - t)
    times.sort()
    return len(runs), len(times), statistics.median(times), times[int(0.9 * len(times))]


def report(repeat: int = 5) -> list[tuple[str, float, float]]:
    """Lines for bench_score.py: (name, measured, target) plus printable text."""
    walls = one_run_wall(repeat)
    n_runs, n_calls, med, p90 = live_per_step()
    return [("one 5-frame run, `trajcheck score` wall, best of %d fresh processes" % repeat, min(walls), 0.5),
            (f"verify_step per 1280x800 PNG pair, median of {n_calls} calls ({n_runs} runs replayed; "
             f"90th percentile {1000 * p90:.1f} ms)", med, 0.010)]


if __name__ == "__main__":
    for name, got, target in report():
        print(f"{name}: {got * 1000:.1f} ms (target <= {target * 1000:.0f} ms: {'met' if got <= target else 'NOT met'})")
    sys.exit(0)
