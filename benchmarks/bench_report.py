"""Build time and size of `trajcheck report` for a large ledger (issue 15).

    python benchmarks/bench_report.py [--runs 1000] [--max-runs 60]

Builds N distinct runs from sample_runs/ (benchmarks/corpus.py), scores them, then times
`trajcheck report LEDGER --out DIR` as a subprocess and prints the size of index.html, of all run pages,
and of the whole folder, against issue 15's targets (under a minute for 1,000 runs; index under 2 MB).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import build_corpus  # noqa: E402

TRAJCHECK = shutil.which("trajcheck") or "trajcheck"


def _size(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--max-runs", type=int, default=60)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="trajcheck-report-") as tmp:
        t = Path(tmp)
        build_corpus(t / "corpus", args.runs, 1)
        subprocess.run([TRAJCHECK, "score", str(t / "corpus"), "--out", str(t / "L"), "-q"], check=True,
                       capture_output=True)
        start = time.perf_counter()
        subprocess.run([TRAJCHECK, "report", str(t / "L"), "--out", str(t / "rep"), "--max-runs", str(args.max_runs)],
                       check=True, capture_output=True)
        secs = time.perf_counter() - start
        index, pages, total = _size(t / "rep" / "index.html"), _size(t / "rep" / "runs"), _size(t / "rep")
        n_files = sum(1 for f in (t / "rep").rglob("*") if f.is_file())
        print(f"report of {args.runs} runs (--max-runs {args.max_runs}): {secs:.1f} s; index.html {index / 1e6:.2f} MB; "
              f"run pages {pages / 1e6:.1f} MB; folder {total / 1e6:.1f} MB in {n_files} files")
        print(f"targets (issue 15): build under 60 s: {'met' if secs < 60 else 'NOT met'}; index under 2 MB: "
              f"{'met' if index < 2e6 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
