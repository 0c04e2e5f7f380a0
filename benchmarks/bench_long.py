"""Is scoring a long run linear in its steps? The cost per step of a 500-step run against a 50-step run's.

    python benchmarks/bench_long.py [--short 50] [--long 500] [--repeat 5] [--same-frames] [--profile]

Both runs are built in a temporary directory by benchmarks/long_run.py from the sample runs' frames and steps
(each copy of a sample run with frames of its own, unless --same-frames; the long run is the short one's steps
and more). Then, in this process, after one untimed score of each (imports, resize tables, the regex engine):
``trajcheck.score([RUN], out=NEW_LEDGER, jobs=1)``, the short run and the long run in turn, --repeat times, each
into a new ledger (reading the run, scoring it and committing its rows: what `trajcheck score` of one run does,
without the process start-up). Printed: each run's median CPU seconds (this process's threads and any child it
waited for) and wall seconds, each per step, and the ratio of the long run's CPU cost per step to the short
run's (the baseline, measured in the same process, interleaved). CPU time is the cost: on a machine shared with
other work, wall clock also measures the others (it is printed too). Issue 51's target is a ratio of at most
1.10: a long run costs per step within 10% of a short one. Caches on disk are off
(TRAJCHECK_NO_CACHE=1), so no run is served from what an earlier one cached.

--profile: also run cProfile over one score of each run and print the functions whose own time per step grows
the most from the short run to the long one (where a cost that is not linear lives).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["TRAJCHECK_NO_CACHE"] = "1"  # before trajcheck is imported: nothing is served from disk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from long_run import build_long_run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
#: Issue 51: a long run's scoring cost per step within 10% of a short run's.
TARGET = 1.10


def _cpu() -> float:
    """CPU seconds of this process (all its threads) and of the child processes it waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _queued() -> float:
    """Seconds this process's main thread spent runnable but waiting for a CPU (Linux's schedstat; 0 elsewhere):
    the part of wall clock that the machine's other work takes."""
    try:
        return int(Path("/proc/self/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def score_once(run: Path, work: Path, k: int) -> tuple[float, float, float]:
    """CPU seconds, wall seconds and seconds waiting for a CPU to score ``run`` into a new ledger (one process,
    one job)."""
    import trajcheck

    out = work / f"ledger-{run.name}-{k}"
    cpu, wall, queued = _cpu(), time.perf_counter(), _queued()
    result = trajcheck.score([run.parent], out=out, jobs=1, force=True)
    cpu, wall, queued = _cpu() - cpu, time.perf_counter() - wall, _queued() - queued
    if result.ok != 1:
        raise SystemExit(f"{run.name} did not score: {result}")
    return cpu, wall, queued


def profile(run: Path, work: Path, steps: int) -> dict[str, float]:
    """Own seconds per step of each function in one score of ``run``."""
    import trajcheck

    prof = cProfile.Profile()
    prof.enable()
    trajcheck.score([run.parent], out=work / f"prof-{run.name}", jobs=1, force=True)
    prof.disable()
    stats = pstats.Stats(prof)
    out: dict[str, float] = {}
    for (file, line, fn), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        out[f"{Path(file).name}:{line} {fn}"] = own / steps
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", type=int, default=50)
    ap.add_argument("--long", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--same-frames", action="store_true")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}; trajcheck at git {git}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        t = time.perf_counter()
        runs = {n: build_long_run(work / f"runs-{n}" / f"long-{n}", n, same_frames=args.same_frames)
                for n in (args.short, args.long)}
        print(f"built runs of {args.short} and {args.long} steps from sample_runs/ in {time.perf_counter() - t:.1f}s"
              f" ({'frames copied as they are' if args.same_frames else 'each copy of a sample run perturbed'})")
        for run in runs.values():  # untimed: imports, resize tables, regex
            score_once(run, work, -1)
        seconds: dict[int, list[tuple[float, float, float]]] = {n: [] for n in runs}
        for k in range(args.repeat):
            for n, run in runs.items():
                seconds[n].append(score_once(run, work, k))
        print(f"trajcheck.score([RUN], jobs=1) into a new ledger, in this process; median of {args.repeat}, "
              "interleaved")
        print(f"{'run':>10} {'CPU s':>8} {'ms/step':>8} {'wall s':>8} {'ms/step':>8} {'queued s':>9}   CPU s of each")
        cpu, wall = {}, {}
        for n in runs:
            c, w, q = (statistics.median(x[i] for x in seconds[n]) for i in range(3))
            cpu[n], wall[n] = c / n, w / n
            print(f"{n:>6} st. {c:>8.3f} {1000 * cpu[n]:>8.2f} {w:>8.3f} {1000 * wall[n]:>8.2f} {q:>9.3f}   "
                  f"{', '.join(f'{x[0]:.3f}' for x in seconds[n])}")
        ratio = cpu[args.long] / cpu[args.short]
        verdict = "met" if ratio <= TARGET else "NOT met"
        print(f"CPU cost per step, {args.long} steps / {args.short} steps: {ratio:.3f} (target <= {TARGET:.2f}: "
              f"{verdict})")
        print(f"wall clock per step, {args.long} steps / {args.short} steps: {wall[args.long] / wall[args.short]:.3f} "
              "(the machine's other work included: queued s is the time spent waiting for a CPU)")
        if args.profile:
            short, long = (profile(runs[n], work, n) for n in (args.short, args.long))
            grown = sorted(long, key=lambda f: long[f] - short.get(f, 0.0), reverse=True)[:12]
            print("functions whose own time per step grew the most (ms/step, short -> long):")
            for f in grown:
                print(f"  {1000 * short.get(f, 0.0):8.3f} -> {1000 * long[f]:8.3f}  {f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
