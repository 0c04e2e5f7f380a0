"""DuckDB over a large ledger: an aggregate and a join over at least 1M step rows.

    python benchmarks/bench_ledger.py [LEDGER] [--rows R] [--repeat K]

LEDGER is a real ledger written by `trajcheck score` (default: sample_runs/ scored
into a temporary directory). Its runs and steps parts are read with pyarrow and
replicated under new run ids (``<run_id>-x<copy>``) until the steps table holds at
least R rows (default 1,000,000); the copies are written as Parquet parts (zstd,
64k-row groups, like the ledger writer) with the real parts' own schema, and a
manifest.json copied from the real ledger's (same format and schema version), so
`trajcheck query` and :func:`trajcheck.store.ledger.query` read it like any ledger.

Then it times, through ``trajcheck.store.ledger.query`` (a new DuckDB connection and the
views each time, as `trajcheck query` does):

  * aggregate: select reward_class, count(*), avg(reward_score) from steps group by 1
  * join:      select r.outcome_status, count(*) from steps s join runs r using (run_id)
               where s.action_effect_observed = false group by 1

and prints the first run and the best of K, with step rows per second.
bench_score.py calls the same functions on the ledger it scored.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
ROWS_PER_PART = 131_072

QUERIES = {
    "aggregate": "select reward_class, count(*), avg(reward_score) from steps group by 1",
    "join": "select r.outcome_status, count(*) from steps s join runs r using (run_id) "
            "where s.action_effect_observed = false group by 1",
}


def _read_table(ledger: Path, parts: list[str]) -> pa.Table:
    return pa.concat_tables([pq.ParquetFile(ledger / rel).read() for rel in parts])


def _replicate(t: pa.Table, first: int, count: int) -> pa.Table:
    """``count`` copies of ``t`` whose run ids get the suffixes -x<first> .. -x<first+count-1>."""
    out = pa.concat_tables([t] * count)
    copy = pa.array(np.repeat(np.arange(first, first + count), t.num_rows))
    ids = pc.binary_join_element_wise(out["run_id"], pc.cast(copy, pa.string()), "-x")
    return out.set_column(out.schema.get_field_index("run_id"), out.schema.field("run_id"), ids)


def build_big_ledger(src: Path, dest: Path, min_rows: int) -> tuple[int, int]:
    """Write a ledger of at least ``min_rows`` step rows at ``dest``; return (step rows, run rows)."""
    manifest = json.loads((src / "manifest.json").read_text("utf-8"))
    runs = _read_table(src, manifest["tables"]["runs"])
    steps = _read_table(src, manifest["tables"]["steps"])
    if not steps.num_rows:
        raise SystemExit(f"{src}: the ledger has no step rows to replicate")
    copies = -(-min_rows // steps.num_rows)
    per_part = max(1, ROWS_PER_PART // steps.num_rows)
    dest.mkdir(parents=True)
    parts: dict[str, list[str]] = {"runs": [], "steps": []}
    for start in range(0, copies, per_part):
        count = min(per_part, copies - start)
        for name, table in (("runs", runs), ("steps", steps)):
            rel = f"{name}/part-000001-{start // per_part:04d}.parquet"
            (dest / name).mkdir(exist_ok=True)
            pq.write_table(_replicate(table, start, count), dest / rel, compression="zstd", row_group_size=64 * 1024)
            parts[name].append(rel)
    manifest.update(generation=1, tables=parts)
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", "utf-8")
    return copies * steps.num_rows, copies * runs.num_rows


def time_queries(ledger: Path, repeat: int = 3) -> dict[str, tuple[float, float, int]]:
    """Per query: (first run seconds, best of ``repeat`` seconds, result rows)."""
    from trajcheck.store.ledger import query

    out = {}
    for name, sql in QUERIES.items():
        times = []
        for _ in range(max(1, repeat)):
            t = time.perf_counter()
            rows = query(ledger, sql).rows
            times.append(time.perf_counter() - t)
        out[name] = (times[0], min(times), len(rows))
    return out


def cli_count(ledger: Path) -> int:
    """Step rows as `trajcheck query` counts them (proves the CLI reads the synthetic ledger)."""
    trajcheck = shutil.which("trajcheck") or "trajcheck"
    out = subprocess.run([trajcheck, "query", str(ledger), "select count(*) as n from steps", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    return int(json.loads(out)[0]["n"])


def report(ledger: Path, rows: int, repeat: int) -> list[str]:
    """The lines bench_score.py and this script print."""
    lines = [f"{'DuckDB query':36} {'step rows':>10} {'first s':>8} {f'best/{repeat} s':>9} {'M rows/s':>9}"]
    for name, (first, best, _) in time_queries(ledger, repeat).items():
        lines.append(f"{'trajcheck.store.ledger.query ' + name:36} {rows:10,} {first:8.3f} {best:9.3f} {rows / best / 1e6:9.1f}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ledger", nargs="?", type=Path, help="a ledger written by trajcheck score "
                    "(default: sample_runs/ scored into a temporary directory)")
    ap.add_argument("--rows", type=int, default=1_000_000, help="at least this many step rows (default 1,000,000)")
    ap.add_argument("--repeat", type=int, default=3, help="each query's best of K (default 3)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="trajcheck-bench-ledger-") as tmp:
        src = args.ledger
        if src is None:
            src = Path(tmp) / "L"
            subprocess.run([shutil.which("trajcheck") or "trajcheck", "score", str(ROOT / "sample_runs"), "--out",
                            str(src), "-q"], stdout=subprocess.DEVNULL, check=False)
        t = time.perf_counter()
        rows, n_runs = build_big_ledger(src, Path(tmp) / "big", args.rows)
        print(f"synthetic ledger: {rows:,} step rows, {n_runs:,} run rows from {src} in {time.perf_counter() - t:.1f}s; "
              f"trajcheck query counts {cli_count(Path(tmp) / 'big'):,} step rows")
        print("\n".join(report(Path(tmp) / "big", rows, args.repeat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
