"""Speed of `trajcheck score` against baselines measured in the same process.

    python benchmarks/bench_score.py [RUNS_DIR] [--jobs N] [--repeat K]

Prints, for the runs under RUNS_DIR (default: sample_runs/):
  * decode floor: Pillow decoding every distinct frame once, on one core;
  * naive loop: per step, imagehash.phash of the pre and post frames and of their
    200x200 crops around the action point, each file opened and decoded anew
    (what a hand-written checker does), on one core;
  * trajcheck score: the whole pipeline (read, decode once, hashes, pixel diff,
    analyzers, Parquet ledger) on --jobs processes;
and each as frames per second and as a ratio. Machines are shared and noisy:
compare ratios from one run, not seconds across runs. Each timing is the best
of --repeat runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import imagehash
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent


def _runs(root: Path) -> list[tuple[Path, list[dict]]]:
    out = []
    for meta in sorted(root.glob("**/run.json")):
        d = meta.parent
        steps = [json.loads(l) for l in (d / "steps.jsonl").read_text().splitlines() if l.strip()]
        out.append((d, steps))
    return out


def _frames(runs) -> list[Path]:
    seen: dict[Path, None] = {}
    for d, steps in runs:
        for s in steps:
            for k in ("pre", "post"):
                f = (s.get("frames") or {}).get(k)
                if f:
                    seen[d / f] = None
    return list(seen)


def decode_floor(frames: list[Path]) -> float:
    t = time.perf_counter()
    for p in frames:
        with Image.open(p) as img:
            img.load()
    return time.perf_counter() - t


def naive_loop(runs) -> float:
    t = time.perf_counter()
    for d, steps in runs:
        screen = json.loads((d / "run.json").read_text()).get("screen") or {}
        for s in steps:
            fr = s.get("frames") or {}
            if not fr.get("pre") or not fr.get("post"):
                continue
            a = s.get("action") or {}
            for k in ("pre", "post"):
                with Image.open(d / fr[k]) as img:
                    imagehash.phash(img)
                    if a.get("x") is not None and a.get("y") is not None:
                        w, h = img.size
                        sx = w / screen["width"] if screen.get("width") else 1
                        sy = h / screen["height"] if screen.get("height") else 1
                        x, y = a["x"] * sx, a["y"] * sy
                        left = max(0, min(int(x) - 100, w - 200))
                        top = max(0, min(int(y) - 100, h - 200))
                        imagehash.phash(img.crop((left, top, left + 200, top + 200)))
    return time.perf_counter() - t


def trajcheck_score(root: Path, jobs: int) -> float:
    from trajcheck import ledger
    from trajcheck.pipeline import score_paths

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        report = score_paths([root], jobs=jobs)
        ledger.write(Path(tmp) / "L", [r.run for r in report.results], [s for r in report.results for s in r.steps])
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="?", default=str(ROOT / "sample_runs"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    root = Path(args.runs)
    runs = _runs(root)
    frames = _frames(runs)
    n = len(frames)
    best = lambda f: min(f() for _ in range(args.repeat))  # noqa: E731
    t_floor = best(lambda: decode_floor(frames))
    t_naive = best(lambda: naive_loop(runs))
    t_score1 = best(lambda: trajcheck_score(root, 1))
    t_score = best(lambda: trajcheck_score(root, args.jobs))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"Pillow {Image.__version__}")
    print(f"corpus: {root} - {len(runs)} runs, {n} distinct frames")
    rows = [
        ("decode floor (Pillow, 1 core)", t_floor),
        ("naive per-step imagehash loop (1 core)", t_naive),
        ("trajcheck score (1 process)", t_score1),
        (f"trajcheck score ({args.jobs} processes)", t_score),
    ]
    print(f"{'measure':42} {'seconds':>9} {'frames/s':>9} {'vs naive':>9} {'vs floor':>9}")
    for name, t in rows:
        print(f"{name:42} {t:9.3f} {n / t:9.1f} {t_naive / t:8.2f}x {t_floor / t:8.2f}x")


if __name__ == "__main__":
    sys.exit(main())
