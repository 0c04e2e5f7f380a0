"""`trajcheck report` against `trajcheck score` of the same runs, measured in the same run (issue 40).

    python benchmarks/bench_report.py [--runs 28] [--runs 1000] [--jobs N] [--write-results]

For each N: builds N distinct runs from sample_runs/ (benchmarks/corpus.py: no two copies share a frame, so
no cache serves one copy from another), then with an empty cache folder (TRAJCHECK_CACHE_DIR) times, each as
a subprocess on all cores:

  * score: `trajcheck score CORPUS --out LEDGER -q`, cold (a new ledger, nothing cached);
  * report: `trajcheck report LEDGER --out REPORT -q`, thumbnails for every run, none cached yet;
  * again: the same report into the same folder (nothing changed: nothing is written);
  * grown: 1 more run scored into the ledger, then the report again (only its page and the index written).

and prints report/score, the target being at most 2 (issue 40). The machine is shared: the ratio is the
figure, not the seconds. Then, on up to 200 of the corpus's frames in this process, what a thumbnail costs by
stage (decode, reduce, WebP encode) against scoring's whole cost per frame: the figures behind leaving
thumbnails to the report rather than the score stage.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import build_corpus, distinct_frames, load_runs  # noqa: E402

LINES: list[str] = []


def say(line: str) -> None:
    print(line, flush=True)
    LINES.append(line)

TRAJCHECK = shutil.which("trajcheck") or str(Path(sys.executable).with_name("trajcheck"))


def _size(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size


def _timed(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    res = subprocess.run([TRAJCHECK, *args], check=True, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, res.stdout


def _stages(frames: list[Path]) -> str:
    """Per frame, in ms: the thumbnail's decode, reduce and encode (trajcheck.media.thumbs' route)."""
    from trajcheck.media import thumbs

    dec = red = enc = 0.0
    for f in frames:
        raw = f.read_bytes()
        t0 = time.perf_counter()
        img = thumbs._open(raw)
        whole = thumbs._full(img, raw) if img.format != "JPEG" else None
        t1 = time.perf_counter()
        small = thumbs._reduced(img, raw, whole)
        t2 = time.perf_counter()
        small.save(io.BytesIO(), "WEBP", quality=thumbs.WEBP_QUALITY, method=0)
        t3 = time.perf_counter()
        dec, red, enc = dec + t1 - t0, red + t2 - t1, enc + t3 - t2
        del img, whole, small
    n = max(1, len(frames))
    return (f"thumbnail per frame ({len(frames)} frames): decode {1000 * dec / n:.1f} ms, reduce (a JPEG's "
            f"decode at reduced size included) {1000 * red / n:.1f} ms, WebP {1000 * enc / n:.1f} ms")


def bench(n: int, jobs: int | None, tmp: Path) -> dict[str, float]:
    build_corpus(tmp / "corpus", n + 1, 1)
    extra = sorted((tmp / "corpus").iterdir())[-1]
    (tmp / "extra").mkdir()
    shutil.move(str(extra), tmp / "extra" / extra.name)  # the run that grows the ledger after the first report
    env = {**os.environ, "TRAJCHECK_CACHE_DIR": str(tmp / "cache")}
    j = ["--jobs", str(jobs)] if jobs else []
    score, _ = _timed(["score", str(tmp / "corpus"), "--out", str(tmp / "L"), "-q", *j], env)
    report, out = _timed(["report", str(tmp / "L"), "--out", str(tmp / "rep"), "-q", "--format", "json", *j], env)
    first = json.loads(out)
    again, out = _timed(["report", str(tmp / "L"), "--out", str(tmp / "rep"), "-q", "--format", "json", *j], env)
    second = json.loads(out)
    _timed(["score", str(tmp / "corpus"), str(tmp / "extra"), "--out", str(tmp / "L"), "-q", *j], env)
    grown, out = _timed(["report", str(tmp / "L"), "--out", str(tmp / "rep"), "-q", "--format", "json", *j], env)
    third = json.loads(out)
    index, total = _size(tmp / "rep" / "index.html"), _size(tmp / "rep")
    say(f"{n} runs: score {score:.1f} s (cold); report {report:.1f} s ({first['with_thumbnails']} of "
          f"{first['runs']} run pages with thumbnails, {first['written']} files); report/score "
          f"{report / score:.2f} (target <= 2: {'met' if report <= 2 * score else 'NOT met'})")
    say(f"  again, unchanged: {again:.1f} s, {second['written']} files written, {second['kept']} kept "
          f"(again/score {again / score:.2f})")
    say(f"  grown by 1 run: {grown:.1f} s, {third['written']} files written, {third['kept']} kept")
    say(f"  index.html {index / 1e6:.2f} MB; folder {total / 1e6:.1f} MB")
    frames = distinct_frames(load_runs(tmp / "corpus"))
    per_frame = 1000 * score / max(1, len(frames))
    say(f"  {_stages(frames[::max(1, len(frames) // 200)])}; score {per_frame:.1f} ms per frame (wall, all cores)")
    return {"runs": n, "score": score, "report": report, "ratio": report / score, "again": again, "grown": grown}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, action="append", help="corpus sizes (default: 28 and 1000)")
    ap.add_argument("--jobs", type=int, default=None, help="worker processes for both (default: all cores)")
    ap.add_argument("--write-results", action="store_true", help="add the output to benchmarks/RESULTS.md")
    args = ap.parse_args()
    say(f"cores: {os.cpu_count()}; load average {os.getloadavg()[0]:.2f}")
    for n in args.runs or [28, 1000]:
        with tempfile.TemporaryDirectory(prefix="trajcheck-report-") as tmp:
            bench(n, args.jobs, Path(tmp))
    if args.write_results:
        from results import record

        record("bench_report.py", sys.argv[1:], LINES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
