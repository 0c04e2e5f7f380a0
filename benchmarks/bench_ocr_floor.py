"""What reading screens costs a score with contracts, against the floor: Tesseract reading each needed frame once
(issue 48).

    python benchmarks/bench_ocr_floor.py [--repeat R] [--jobs J] [--runs DIR] [--arm samples|desktop|both]
                                         [--copies N]

Two corpora (arms), each measured on its own. ``samples``: the sample runs (each with its own contract where it
has one) copied with every DOM snapshot removed, so the contracts' text checks, the final read of a claiming run
and the referee's reads of high-risk changes are all decided from the screen, as on a desktop run that records
screenshots only. ``desktop``: real desktop screenshots (VS Code, GIMP, macOS System Settings and Finder) as runs
with contracts written from their tasks' text (``benchmarks/desktop_runs.py``, written into the temporary folder;
``--copies N``: each run N times).

1. **The OCR work of a score.** The corpus is scored cold (a fresh ledger and a fresh cache folder each time:
   no read is served from an earlier score) with ``--ocr auto`` and with ``--ocr off``, interleaved with each
   other and with the floor (round by round: a load that comes and goes weighs on all three alike), best of R,
   with ``--jobs J``. The OCR work is the difference.
2. **The floor.** The frames the score read are the ones whose bytes have an entry in the cold cache folder's
   ``ocr/`` (every read of a frame, a region's or the whole frame's, starts with one kept there). Each is decoded
   as scoring decodes it and read whole, once, by :func:`trajcheck.media.ocr.read_lines` at trajcheck's
   settings (the frame's scale to its declared screen, a whole screen at its own resolution), on J processes
   as the score used: the least any reading of those frames can cost.
3. The ratio of the two; issue 48's target is at most 1.5.

Printed for each arm: both times, the frames read, the ratio, and the same in CPU seconds (the children's user
and system time: less moved than wall time by other processes on a shared machine; the floor's without what its
workers spend starting, measured with no frame to read); ``--json`` prints them as one object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import desktop_runs  # noqa: E402
from measure_screen_text import score, strip_dom  # noqa: E402

#: The target of issue 48: a score's OCR work at most this many times the floor.
TARGET = 1.5


def _frames(runs: Path) -> dict[bytes, tuple[Path, int | None]]:
    """Every frame file of the corpus by its content digest (as scoring keys OCR's cache), with its run's
    declared screen width."""
    out: dict[bytes, tuple[Path, int | None]] = {}
    for run in sorted(p.parent for p in runs.glob("*/run.json")):
        width = (json.loads((run / "run.json").read_text()).get("screen") or {}).get("width")
        for f in sorted(run.rglob("*")):
            if f.suffix.lower() in (".png", ".jpg", ".jpeg", ".webp") and f.is_file():
                out.setdefault(hashlib.blake2b(f.read_bytes(), digest_size=16).digest(), (f, width))
    return out


def _read_once(job: tuple[str, int | None]) -> float:
    """Seconds to read one frame whole, once, as trajcheck reads a whole screen (no cache)."""
    from types import SimpleNamespace

    from trajcheck.base.box import Box
    from trajcheck.media import ocr
    from trajcheck.media.frames import decode
    from trajcheck.media.screenread import ScreenPlan

    path, width = job
    frame = decode(Path(path))
    eng, why = ocr.engine()
    assert eng is not None, why
    scale = ScreenPlan.scale(SimpleNamespace(screen_width=width), frame)
    at = max(scale, ocr.TEXT_SCALE)  # a whole screen at its own resolution (trajcheck.media.contractread)
    os.environ["TRAJCHECK_NO_CACHE"] = "1"  # no read served by the disk cache of an earlier floor or score,
    ocr._reads.clear()  # nor by this process's memory (a frame of the same pixels read in an earlier round)
    t = time.perf_counter()
    ocr.read_lines(eng, frame.luma, Box(0, 0, frame.width, frame.height), at)
    return time.perf_counter() - t


def floor(needed: list[tuple[Path, int | None]], jobs: int) -> float:
    """Wall seconds for ``jobs`` processes to read every needed frame once (the engines started beforehand)."""
    with ProcessPoolExecutor(jobs) as pool:
        list(pool.map(_warm, range(jobs)))
        t = time.perf_counter()
        list(pool.map(_read_once, [(str(p), w) for p, w in needed], chunksize=1))
        return time.perf_counter() - t


def _warm(_: int) -> None:
    from trajcheck.media import ocr

    ocr.engine()
    time.sleep(0.2)  # every worker takes one: each starts its engine


def _cpu() -> float:
    """CPU seconds (user and system) of this process's finished children: the scores and the floor's workers."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(fn: Any, *args: Any, **kw: Any) -> tuple[float, float]:
    """Wall and CPU seconds of ``fn`` (its children's CPU)."""
    c = _cpu()
    wall = fn(*args, **kw)
    return wall, _cpu() - c


def arm(runs: Path, base: Path, repeat: int, jobs: int) -> dict[str, Any]:
    """One corpus's figures: the cold scores and the floor, interleaved round by round (a load that comes and
    goes weighs on both alike), best of ``repeat``; wall seconds, and CPU seconds beside them (less moved by the
    other processes of a shared machine)."""
    on, off, least, needed, idle = [], [], [], [], []
    for r in range(repeat):
        off.append(_timed(score, runs, base / "L", "off", base / "cache", jobs=jobs))
        on.append(_timed(score, runs, base / "L", "auto", base / "cache", jobs=jobs))
        if r == 0:  # the first cold `auto` score's cache folder names the frames it read (each score reads the same)
            frames = _frames(runs)
            read = sorted(bytes.fromhex(p.stem) for p in (base / "cache" / "ocr").glob("*") if len(p.stem) == 32)
            needed = [frames[d] for d in read if d in frames]
        least.append(_timed(floor, needed, jobs))
        idle.append(_timed(floor, [], jobs)[1])  # the workers' start and their engines: not reading
    work = min(w for w, _c in on) - min(w for w, _c in off)
    cpu = min(c for _w, c in on) - min(c for _w, c in off)
    fl, fl_cpu = min(w for w, _c in least), min(c for _w, c in least) - min(idle)
    return {"score_ocr_off_s": round(min(w for w, _c in off), 3), "score_ocr_auto_s": round(min(w for w, _c in on), 3),
            "ocr_work_s": round(work, 3), "frames_read": len(needed), "floor_s": round(fl, 3),
            "ratio": round(work / fl, 2) if fl else None, "ocr_work_cpu_s": round(cpu, 3),
            "floor_cpu_s": round(fl_cpu, 3), "cpu_ratio": round(cpu / fl_cpu, 2) if fl_cpu else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--runs", type=Path, default=None, help="a folder of runs to use instead of the sample runs")
    ap.add_argument("--arm", choices=("samples", "desktop", "both"), default="both",
                    help="the sample runs without their DOM (or --runs), the real desktop frames, or both")
    ap.add_argument("--copies", type=int, default=1, help="each desktop run this many times (the same frames)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from trajcheck.media import ocr

    if ocr.engine()[0] is None:
        print(f"OCR is not installed: {ocr.engine()[1]}", file=sys.stderr)
        return 2
    got: dict[str, Any] = {"jobs": args.jobs, "repeat": args.repeat, "target": TARGET}
    with tempfile.TemporaryDirectory(prefix="trajcheck-ocrfloor-") as tmp:
        for name in ("samples", "desktop") if args.arm == "both" else (args.arm,):
            base = Path(tmp) / name
            runs = base / "runs"
            if name == "samples":
                strip_dom(args.runs or ROOT / "sample_runs", runs)
            else:
                desktop_runs.write(runs, args.copies)
            got[name] = arm(runs, base, args.repeat, args.jobs)
    if args.json:
        print(json.dumps(got))
        return 0
    for name in ("samples", "desktop"):
        if name in got:
            g = got[name]
            print(f"{name}: score --ocr off {g['score_ocr_off_s']:.2f} s; --ocr auto {g['score_ocr_auto_s']:.2f} s; "
                  f"OCR work {g['ocr_work_s']:.2f} s (best of {args.repeat}, {args.jobs} jobs)")
            print(f"{name}: floor: {g['frames_read']} frames read once each, whole, {g['floor_s']:.2f} s")
            print(f"{name}: ratio: {g['ratio']}x the floor (target: at most {TARGET}x)")
            print(f"{name}: CPU seconds: OCR work {g['ocr_work_cpu_s']:.2f} s, floor {g['floor_cpu_s']:.2f} s "
                  f"(its workers' start left out), {g['cpu_ratio']}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
