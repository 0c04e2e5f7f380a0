"""`trajcheck check` on a 10,000-run ledger against a 10,000-run baseline (issue 30: under 2 seconds).

    python benchmarks/bench_check.py [LEDGER] [--runs N] [--repeat K] [--write-results]

LEDGER is a real ledger written by `trajcheck score` (default: sample_runs/ scored into a temporary
directory). Its runs part is read with pyarrow and replicated until it holds N run rows (default 10,000):
each copy gets new run ids and new task ids (``<id>-x<copy>``), so the ledger has one task per run of the
sample, about 6,800 tasks: the most per-task rows, test cases and pairs a check of N runs can have. The
baseline is the same rows with one passing run in seven failing instead (a drop of some 7 points, confirmed
at this size) and both get a ``cost_usd`` per run (seeded; the baseline's 10% lower), so all four rules run:

    trajcheck check BIG --baseline BASE --max-false-claim-rate 0.5 --min-success 0.3 \\
        --max-success-drop 0.05 --max-cost-increase 0.5 --format junit|json|table

The ledgers have no step rows: check reads the runs view only.

Before timing, trajcheck's modules are compiled to bytecode if PYTHONDONTWRITEBYTECODE is set (as `pip
install` does; bench_score.py's compile_trajcheck). It times, best of K (default 3), the library call (``trajcheck.check``) and the command in its own process
(what a CI job waits for: interpreter start, imports, both ledgers opened, the rules, the output), and as the
baseline measured in the same run the floor of any command on that ledger: `trajcheck query BIG "select
count(*) from runs"` in its own process. It prints the ratio of each to that floor and whether the command
answers in under 2 seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import results  # noqa: E402
from bench_score import compile_trajcheck  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TRAJCHECK = shutil.which("trajcheck") or "trajcheck"
TARGET_S = 2.0
RULES = ["--max-false-claim-rate", "0.5", "--min-success", "0.3", "--max-success-drop", "0.05",
         "--max-cost-increase", "0.5"]


def _suffixed(col: pa.ChunkedArray, copy: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(col, pc.cast(pa.array(copy), pa.string()), "-x")


def _with(t: pa.Table, name: str, values: pa.Array) -> pa.Table:
    i = t.schema.get_field_index(name)
    return t.append_column(name, values) if i < 0 else t.set_column(i, t.schema.field(name), values)


def build(src: Path, dest: Path, base: Path, n_runs: int) -> int:
    """Write the ledger (``dest``) and its baseline (``base``) of ``n_runs`` run rows from ``src``'s runs."""
    manifest = json.loads((src / "manifest.json").read_text("utf-8"))
    runs = pa.concat_tables([pq.read_table(src / rel) for rel in manifest["tables"]["runs"]])
    copies = -(-n_runs // runs.num_rows)
    big = pa.concat_tables([runs] * copies).slice(0, n_runs)
    copy = np.repeat(np.arange(copies), runs.num_rows)[:n_runs]
    task = pc.if_else(pc.is_null(big["task_id"]), big["run_id"], big["task_id"])
    big = _with(big, "run_id", _suffixed(big["run_id"], copy))
    big = _with(big, "task_id", _suffixed(task, copy))
    rng = np.random.default_rng(20261122)
    cost = rng.gamma(4.0, 0.05, n_runs)
    verdicts = big["eval_final_verdict"].to_pylist()
    passed = [i for i, v in enumerate(verdicts) if v == "pass"]
    for i in passed[::7]:  # one passing run in seven fails in the ledger (not in the baseline): a drop
        verdicts[i] = "fail"
    for path, table in ((dest, _with(_with(big, "eval_final_verdict", pa.array(verdicts, pa.string())),
                                     "cost_usd", pa.array(cost))),
                        (base, _with(big, "cost_usd", pa.array(cost * 0.9)))):
        (path / "runs").mkdir(parents=True)
        pq.write_table(table, path / "runs" / "part-000001.parquet", compression="zstd")
        path.joinpath("manifest.json").write_text(json.dumps(
            {**manifest, "generation": 1, "tables": {"runs": ["runs/part-000001.parquet"], "steps": []}},
            indent=2, sort_keys=True) + "\n", "utf-8")
    return int(pc.count_distinct(big["task_id"]).as_py())


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    """(first, best of ``repeat``) wall seconds of ``fn()``, and its least CPU seconds (user + system, of this
    process and of the commands it ran): the CPU figure barely moves when other work shares the machine."""
    times, cpu = [], []
    for _ in range(max(1, repeat)):
        c = _cpu()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        cpu.append(_cpu() - c)
    return times[0], min(times), min(cpu)


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TRAJCHECK, *args], capture_output=True, text=True, check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ledger", nargs="?", type=Path, help="a ledger written by trajcheck score (default: "
                    "sample_runs/ scored into a temporary directory)")
    ap.add_argument("--runs", type=int, default=10_000, help="run rows in each ledger (default 10,000)")
    ap.add_argument("--repeat", type=int, default=3, help="best of K (default 3)")
    ap.add_argument("--write-results", action="store_true", help="add the output to benchmarks/RESULTS.md")
    args = ap.parse_args()
    import trajcheck

    lines: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    with tempfile.TemporaryDirectory(prefix="trajcheck-bench-check-") as tmp:
        t = Path(tmp)
        src = args.ledger
        if src is None:
            src = t / "L"
            subprocess.run([TRAJCHECK, "score", str(ROOT / "sample_runs"), "--out", str(src), "-q"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        big, base = t / "big", t / "base"
        tasks = build(src, big, base, args.runs)
        # as `pip install` does: with PYTHONDONTWRITEBYTECODE set, every command would compile trajcheck again
        compile_trajcheck()
        result = trajcheck.check(big, base, max_false_claim_rate=0.5, min_success=0.3, max_success_drop=0.05,
                                 max_cost_increase=0.5)
        cases = sum(1 + len(r.groups) for r in result.rules)
        say(f"ledger and baseline: {args.runs:,} runs each, about {tasks:,} tasks; {result.shared_tasks:,} tasks in "
            f"both; {cases:,} rows (JUnit test cases); rules failing: {', '.join(result.failed) or 'none'}")
        floor = _best(lambda: _cli("query", str(big), "select count(*) from runs", "--format", "json"), args.repeat)
        lib = _best(lambda: trajcheck.check(big, base, max_false_claim_rate=0.5, min_success=0.3,
                                            max_success_drop=0.05, max_cost_increase=0.5), args.repeat)
        say(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        say(f"{'what':58} {'first s':>8} {f'best/{args.repeat} s':>9} {'x floor':>8} {'cpu s':>6}")
        label = 'trajcheck query BIG "select count(*) from runs" (floor)'
        say(f"{label:58} {floor[0]:8.3f} {floor[1]:9.3f} {1:8.2f} {floor[2]:6.2f}")
        label = "trajcheck.check(BIG, BASE, 4 rules) in this process"
        say(f"{label:58} {lib[0]:8.3f} {lib[1]:9.3f} {lib[1] / floor[1]:8.2f} {lib[2]:6.2f}")
        worst = 0.0
        for fmt in ("junit", "json", "csv", "md", "table"):
            out = ["--out", str(t / f"check.{fmt}")] if fmt != "table" else []
            cmd = ["check", str(big), "--baseline", str(base), *RULES, "--format", fmt, *out]
            code = _cli(*cmd).returncode
            first, best, cpu = _best(lambda: _cli(*cmd), args.repeat)
            worst = max(worst, best)
            label = f"trajcheck check BIG --baseline BASE --format {fmt} (exit {code})"
            say(f"{label:58} {first:8.3f} {best:9.3f} {best / floor[1]:8.2f} {cpu:6.2f}")
        say(f"target (issue 30): check of {args.runs:,} runs against a baseline in under {TARGET_S:g} s: "
            f"{'met' if worst < TARGET_S else 'NOT met'} (slowest format, best of {args.repeat}: {worst:.2f} s)")
    if args.write_results:
        print(f"recorded in {results.record('bench_check.py', sys.argv[1:], lines)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
