"""trajcheck at scale: a corpus of N distinct runs, cold and warm scoring, memory, and DuckDB.

    python benchmarks/bench_scale.py [--runs N] [--no-4n] [--seed S] [--write-results]

Builds, in a temporary directory, N runs (and 4N for the memory check) from the
recorded runs in sample_runs/: each copy gets its own run_id and every frame gets a
small deterministic pixel change (a 6x6 block in a corner, its colour derived from
the copy and the frame), so all frames are distinct and no cache can help. Then, in
one process run, it measures:

  * the decode floor: Pillow decoding every distinct frame once, on 1 core and on
    all cores;
  * the naive baseline: a per-step loop calling imagehash.phash on the pre and post
    frames and their 200x200 crops around the action point, files reopened, 1 core;
  * `trajcheck score` (a subprocess, all cores) cold into a new ledger, then warm
    (same corpus, same ledger: unchanged runs are skipped);
  * the peak RSS of the largest trajcheck process for N and for 4N runs;
  * bit identity: every frame's hash in the ledger against imagehash.phash of the file;
  * a DuckDB aggregate and a join over a ledger of at least 1M step rows (the real
    step rows replicated under new run ids, written as Parquet parts).

Machines are shared and noisy: read the ratios of one run, not seconds across runs.
--write-results writes the output to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pool
from pathlib import Path

import imagehash
import PIL
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_runs"
FRAME_EXT = (".png", ".jpg", ".jpeg", ".webp")


def build_corpus(dest: Path, n: int, seed: int) -> Path:
    sources = sorted(p.parent for p in SAMPLES.glob("*/run.json"))
    dest.mkdir(parents=True)
    for i in range(n):
        src = sources[i % len(sources)]
        run = dest / f"{src.name}-c{i:05d}"
        shutil.copytree(src, run)
        meta = json.loads((run / "run.json").read_text())
        meta["run_id"] = run.name
        (run / "run.json").write_text(json.dumps(meta, indent=2))
        for k, f in enumerate(sorted((run / "frames").iterdir())):
            if f.suffix.lower() not in FRAME_EXT:
                continue
            with Image.open(f) as img:
                fmt = img.format
                im = img.convert("RGB")
            v = (seed * 7919 + i * 131 + k * 31) % 256
            im.paste((v, 255 - v, (v * 3) % 256), (0, im.height - 6, 6, im.height))
            buf = io.BytesIO()
            im.save(buf, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
            f.write_bytes(buf.getvalue())
    return dest


def _steps(corpus: Path) -> list[tuple[Path, dict]]:
    out = []
    for meta in sorted(corpus.glob("*/run.json")):
        for line in (meta.parent / "steps.jsonl").read_text().splitlines():
            if line.strip():
                out.append((meta.parent, json.loads(line)))
    return out


def _frames(corpus: Path) -> list[str]:
    seen: dict[str, None] = {}
    for d, s in _steps(corpus):
        for k in ("pre", "post"):
            f = (s.get("frames") or {}).get(k)
            if f:
                seen[str(d / f)] = None
    return list(seen)


def _decode(path: str) -> int:
    with Image.open(path) as img:
        img.load()
        return img.size[0]


def decode_floor(frames: list[str], procs: int) -> float:
    t = time.perf_counter()
    if procs == 1:
        for f in frames:
            _decode(f)
    else:
        with Pool(procs) as pool:
            pool.map(_decode, frames, chunksize=8)
    return time.perf_counter() - t


def naive(corpus: Path) -> float:
    t = time.perf_counter()
    for d, s in _steps(corpus):
        fr = s.get("frames") or {}
        a = s.get("action") or {}
        for k in ("pre", "post"):
            if not fr.get(k):
                continue
            with Image.open(d / fr[k]) as img:
                imagehash.phash(img)
                if a.get("x") is not None:
                    x, y = a["x"], a["y"]
                    box = (max(0, int(x) - 100), max(0, int(y) - 100), int(x) + 100, int(y) + 100)
                    imagehash.phash(img.crop(box))
    return time.perf_counter() - t


def trajcheck_score(corpus: Path, ledger: Path) -> tuple[float, int, str]:
    """Wall time, peak RSS (KiB) of the largest trajcheck process, and the summary line."""
    probe = ("import resource, subprocess, sys, time\n"
             "t = time.perf_counter()\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "dt = time.perf_counter() - t\n"
             "print(dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)\n"
             "print(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else '')\n")
    trajcheck = shutil.which("trajcheck") or "trajcheck"
    out = subprocess.run([sys.executable, "-c", probe, trajcheck, "score", str(corpus), "--out", str(ledger), "-q",
                          "-f", "csv"], capture_output=True, text=True, check=True).stdout.splitlines()
    dt, rss, rc = out[0].split()
    if rc not in ("0", "1"):
        raise SystemExit(f"trajcheck score failed ({rc}): {out[1:]}")
    return float(dt), int(rss), out[1] if len(out) > 1 else ""


def identity(ledger: Path) -> tuple[int, int]:
    from trajcheck import ledger as L

    rows = L.query(ledger, "select distinct r.run_path, s.frame_pre, s.frame_pre_phash from steps s join runs r "
                           "using (run_id) where s.frame_pre_phash is not null").rows
    bad = 0
    for run_path, rel, h in rows:
        with Image.open(Path(run_path) / rel) as img:
            bad += str(imagehash.phash(img)) != h
    return len(rows), bad


def big_ledger(src: Path, dest: Path, min_rows: int) -> int:
    """A ledger of at least ``min_rows`` step rows: the real rows replicated under new run ids."""
    from trajcheck import ledger as L

    runs = L._read_parts(src, L.read_manifest(src).parts["runs"], "runs")
    steps = L._read_parts(src, L.read_manifest(src).parts["steps"], "steps")
    copies = -(-min_rows // max(1, steps.num_rows))
    dest.mkdir(parents=True)
    parts: dict[str, list[str]] = {"runs": [], "steps": []}
    per_part = max(1, copies // 8)
    for start in range(0, copies, per_part):
        rs, ss = [], []
        for c in range(start, min(copies, start + per_part)):
            suffix = pa.scalar(f"-x{c:05d}")
            rs.append(runs.set_column(0, "run_id", pa.compute.binary_join_element_wise(runs["run_id"], suffix, "")))
            ss.append(steps.set_column(0, "run_id", pa.compute.binary_join_element_wise(steps["run_id"], suffix, "")))
        for table, chunk in (("runs", rs), ("steps", ss)):
            rel = f"{table}/part-000001-{start:05d}.parquet"
            (dest / table).mkdir(exist_ok=True)
            pq.write_table(pa.concat_tables(chunk), dest / rel, compression="zstd", row_group_size=64 * 1024)
            parts[table].append(rel)
    L._commit(dest, L.Manifest(1, parts))
    return copies * steps.num_rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=40, help="N distinct runs (default 40)")
    ap.add_argument("--no-4n", action="store_true", help="skip the 4N memory run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rows", type=int, default=1_000_000, help="step rows of the DuckDB ledger (default 1M)")
    ap.add_argument("--write-results", action="store_true", help="also write benchmarks/RESULTS.md")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    lines: list[str] = []

    def say(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    with tempfile.TemporaryDirectory(prefix="trajcheck-bench-") as tmp:
        t = Path(tmp)
        corpus = build_corpus(t / "corpus", args.runs, args.seed)
        frames = _frames(corpus)
        say(f"machine: {platform.machine()}, {cores} cores, Python {platform.python_version()}, Pillow {PIL.__version__}")
        say(f"corpus: {args.runs} runs built from sample_runs/ (seed {args.seed}), {len(frames)} distinct frames, "
            f"{len(_steps(corpus))} steps")
        say()
        floor1 = decode_floor(frames, 1)
        floorn = decode_floor(frames, cores)
        base = naive(corpus)
        cold, rss_n, line_cold = trajcheck_score(corpus, t / "L")
        warm, _, line_warm = trajcheck_score(corpus, t / "L")
        n_hash, bad = identity(t / "L")
        fps = lambda s: len(frames) / s  # noqa: E731
        say(f"{'measure':52} {'seconds':>8} {'frames/s':>9} {'vs naive':>9} {'vs floor(all)':>14}")
        for name, s in ((f"decode floor, Pillow, 1 core", floor1), (f"decode floor, Pillow, {cores} cores", floorn),
                        ("naive imagehash loop, 1 core", base), (f"trajcheck score cold, {cores} processes", cold),
                        ("trajcheck score warm (unchanged corpus)", warm)):
            say(f"{name:52} {s:8.2f} {fps(s):9.1f} {base / s:8.2f}x {floorn / s:13.2f}x")
        say()
        say(f"warm re-score: {cold / warm:.1f}x faster than cold ({line_warm})")
        say(f"bit identity: {bad} of {n_hash} frame hashes differ from imagehash.phash")
        say(f"peak RSS of the largest trajcheck process, {args.runs} runs: {rss_n / 1024:.0f} MiB")
        if not args.no_4n:
            corpus4 = build_corpus(t / "corpus4", 4 * args.runs, args.seed + 1)
            cold4, rss_4n, _ = trajcheck_score(corpus4, t / "L4")
            say(f"peak RSS of the largest trajcheck process, {4 * args.runs} runs: {rss_4n / 1024:.0f} MiB "
                f"({rss_4n / rss_n:.2f}x the {args.runs}-run figure; cold {len(_frames(corpus4)) / cold4:.1f} frames/s)")
            shutil.rmtree(corpus4)
        say()
        from trajcheck import ledger as L

        rows = big_ledger(t / "L", t / "big", args.rows)
        queries = {
            "aggregate": "select reward_class, count(*), avg(reward_score) from steps group by 1 order by 1",
            "join": "select r.outcome_status, count(*) from steps s join runs r using (run_id) "
                    "where s.action_effect_observed = false group by 1 order by 1",
        }
        for name, sql in queries.items():
            t0 = time.perf_counter()
            L.query(t / "big", sql)
            dt = time.perf_counter() - t0
            say(f"DuckDB {name} over {rows:,} step rows: {dt:.3f} s ({rows / dt / 1e6:.1f} M rows/s)")
    if args.write_results:
        cmd = "python benchmarks/bench_scale.py " + " ".join(sys.argv[1:])
        (ROOT / "benchmarks" / "RESULTS.md").write_text(
            f"# Benchmark results\n\n`{cmd.strip()}` on {time.strftime('%Y-%m-%d')}:\n\n```\n" + "\n".join(lines)
            + "\n```\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
