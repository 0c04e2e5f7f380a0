"""`trajcheck diff` on a 10,000-run ledger (issue 30: it answers in under 2 seconds).

    python benchmarks/bench_diff.py [LEDGER] [--runs N] [--repeat K] [--write-results]

LEDGER is a ledger written by `trajcheck score` (default: sample_runs/ scored into a temporary directory).
Its runs and steps are replicated under new run ids (``<run_id>-x<copy>``, bench_ledger.build_big_ledger)
until the runs table holds at least N rows (default 10,000); each task then has hundreds of runs per arm,
so `--task T --by KEY` has to choose among them.

Timed, each the first call and the best of K:

  * the library call, ``trajcheck.diff(L, A, B)`` (two named runs) and ``trajcheck.diff(L, task=T, by=KEY)``;
  * the command, ``trajcheck diff L A B --format json`` and ``... --task T --by KEY``, as a fresh process
    (start-up and imports included: what a person waits for);
  * the baseline, measured in the same run: reading the same two runs with ``trajcheck.timeline`` (one call
    each), and ``trajcheck timeline L A --format json`` as a process: the cost of looking at one run, which a
    diff of two cannot beat by much.

and the alignment alone on two synthetic 300-step runs (it is quadratic in the steps). The target: each
diff answers in under 2 seconds.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ledger import build_big_ledger  # noqa: E402
from results import record  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
#: The command of the Python running this script (its venv's), not whichever trajcheck PATH finds first.
_BESIDE = Path(sys.executable).with_name("trajcheck")
TRAJCHECK = str(_BESIDE) if _BESIDE.exists() else shutil.which("trajcheck") or "trajcheck"
TASK, BY = "newsletter-subscribe", "config.perceptual_verifier"
TARGET = 2.0


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(first call seconds, best of ``repeat`` seconds)."""
    times = []
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times[0], min(times)


def command(*args: str) -> Callable[[], None]:
    return lambda: subprocess.run([TRAJCHECK, *args], check=True, capture_output=True)


def alignment_alone(steps: int, repeat: int) -> float:
    """Best seconds of aligning two synthetic runs of ``steps`` steps (every third step differs)."""
    from trajcheck.analyzers.alignment import Screen, StepSig, align

    def run(shift: int) -> list[StepSig]:
        return [StepSig(i, "CLICK", None, (((i + shift * (i % 3 == 0)) % 40) / 40, 0.5),
                        Screen((i * 0x9E3779B97F4A7C15) & (2**64 - 1))) for i in range(steps)]

    a, b = run(0), run(7)
    return best(lambda: align(a, b), repeat)[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ledger", nargs="?", type=Path, help="a ledger written by trajcheck score (default: "
                    "sample_runs/ scored into a temporary directory)")
    ap.add_argument("--runs", type=int, default=10_000, help="at least this many run rows (default 10,000)")
    ap.add_argument("--repeat", type=int, default=3, help="each measure's best of K (default 3)")
    ap.add_argument("--write-results", action="store_true", help="add the output to benchmarks/RESULTS.md")
    args = ap.parse_args()
    import pyarrow.parquet as pq

    import trajcheck

    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="trajcheck-bench-diff-") as tmp:
        src = args.ledger
        if src is None:
            src = Path(tmp) / "L"
            subprocess.run([TRAJCHECK, "score", str(ROOT / "sample_runs"), "--out", str(src), "-q"],
                           stdout=subprocess.DEVNULL, check=False)
        counts = trajcheck.query(src, "select (select count(*) from runs), (select count(*) from steps)").rows[0]
        copies = -(-args.runs // int(counts[0]))
        big = Path(tmp) / "big"
        steps, runs = build_big_ledger(src, big, copies * int(counts[1]))
        n_runs = sum(pq.ParquetFile(p).metadata.num_rows for p in (big / "runs").glob("*.parquet"))
        mid = copies // 2
        a, b = f"consent-overlay-off-x{mid}", f"consent-overlay-on-x{mid}"
        per_arm = trajcheck.query(big, f"select count(*) from runs where task_id = '{TASK}' and config_perceptual_"
                                       "verifier is not null").rows[0][0]
        lines.append(f"ledger: {n_runs:,} runs, {steps:,} steps ({copies} copies of {src}); task {TASK}: {per_arm} "
                     f"runs in the two arms of {BY}")
        d = trajcheck.diff(big, task=TASK, by=BY).to_json()
        lines.append(f"--task {TASK} --by {BY} picks {d['a']['run_id']} and {d['b']['run_id']}; first divergence: "
                     f"{d['first_divergence']['reason']} at pair {d['first_divergence']['pair']}")
        measures = [
            ("baseline: trajcheck.timeline x2 (A, B)",
             lambda: (trajcheck.timeline(big, a), trajcheck.timeline(big, b))),
            ("trajcheck.diff(L, A, B)", lambda: trajcheck.diff(big, a, b)),
            ("trajcheck.diff(L, task=T, by=KEY)", lambda: trajcheck.diff(big, task=TASK, by=BY)),
            ("baseline: `trajcheck timeline L A` process", command("timeline", str(big), a, "--format", "json")),
            ("`trajcheck diff L A B` process", command("diff", str(big), a, b, "--format", "json")),
            ("`trajcheck diff L --task T --by KEY` process", command("diff", str(big), "--task", TASK, "--by", BY,
                                                                     "--format", "json")),
        ]
        lines.append(f"{'measure':46} {'first s':>8} {f'best/{args.repeat} s':>9} {'vs baseline':>11}")
        base: dict[bool, float] = {}
        results = []
        for name, fn in measures:
            first, fast = best(fn, args.repeat)
            is_process = "process" in name
            if name.startswith("baseline"):
                base[is_process] = fast
            ratio = fast / base[is_process]
            lines.append(f"{name:46} {first:8.3f} {fast:9.3f} {ratio:10.2f}x")
            if not name.startswith("baseline"):
                results.append((name, max(first, fast)))
    lines.append(f"alignment alone, two synthetic 300-step runs: {alignment_alone(300, args.repeat):.3f} s")
    slowest = max(results, key=lambda r: r[1])
    lines.append(f"target (issue 30): diff on a {n_runs:,}-run ledger under {TARGET:g} s: slowest {slowest[1]:.3f} s "
                 f"({slowest[0]}, first call): {'met' if slowest[1] < TARGET else 'NOT met'}")
    print("\n".join(lines))
    if args.write_results:
        record("bench_diff.py", sys.argv[1:], lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
