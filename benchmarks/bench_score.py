"""Speed, memory and bit identity of `trajcheck score`, against baselines measured in the same run.

    python benchmarks/bench_score.py [--runs N] [--no-4n] [--seed S] [--jobs J] [--repeat K]
                                     [--rows R] [--write-results]

With no arguments N is the number of recorded runs in sample_runs/ (26: one perturbed copy
of each, 142 distinct frame files), the 4N pass is 4N runs and the DuckDB ledger 1M step rows;
it takes about 40 s on 2 cores (--no-4n: about 30 s). `--runs 200 --no-4n --repeat 2
--write-results` is the pass kept in benchmarks/RESULTS.md.

Steps, all in one process run so the ratios compare like with like:

 1. build, in a temporary directory, a corpus of N distinct runs from sample_runs/
    (benchmarks/corpus.py: copies round-robin, each with its own run_id and every
    frame re-encoded in its own format with a small pixel change derived from the
    copy index and --seed, so no cache can serve one copy from another);
 2. decode floor: Pillow opening and decoding every distinct frame once, on 1 core
    and on all cores (a multiprocessing pool; its start-up is included);
 3. naive baseline, 1 core: per step, imagehash.phash of the pre and post frames
    and of their 200x200 crops around the action point, each file opened anew;
    and trajcheck's hashing stage alone on all cores: trajcheck.media.frames.decode (Wuffs,
    libspng or Pillow, grayscale, global pHash) and one 200x200 region pHash per
    distinct frame file, in a pool set up as trajcheck's workers are (one BLAS
    thread, freed frame buffers kept by malloc);
 4. `trajcheck score CORPUS --out LEDGER -q` as a subprocess (all cores unless
    --jobs), wall clock: cold (new ledger), warm (same corpus into the same ledger:
    unchanged runs may be skipped), and --force (same ledger, every run rescored);
    for each, the peak RSS of the largest process in its tree (VmHWM, the kernel's
    high-water mark of each process's own address space, read from /proc every 50 ms
    from the start; rusage's ru_maxrss is not used, as Linux carries the memory of
    the spawning process into it at exec) and the largest sum of RSS over the whole
    tree seen by the same sampling (main process plus workers; shared pages count
    once per process; a sample costs about 1 ms of this process's CPU);
    before any timing, trajcheck's modules are compiled to bytecode if
    PYTHONDONTWRITEBYTECODE is set (pip does this at install), and one untimed
    `trajcheck score` of one run loads trajcheck's
    libraries from disk into the page cache (the first load measured up to 7 s here);
 5. issue 16's targets: small work (benchmarks/bench_live.py: `trajcheck score` of one 5-frame
    sample run, wall clock, best of 5 fresh processes; trajcheck.verify_step per 1280x800 PNG
    pair, in this process after a first call, the sample runs replayed step by step); the default
    corpus against the naive loop; and the cold score's rate against the hashing stage's;
 5b. peak RSS for N and for 4N runs (a second corpus of 4N runs; --no-4n skips it);
 6. bit identity: the frame hashes the ledger recorded (`trajcheck query ...
    --format json`, hex strings) against imagehash.phash of each frame file;
 7. DuckDB (benchmarks/bench_ledger.py): the cold ledger's rows replicated under new
    run ids to at least --rows step rows, then an aggregate and a join through
    trajcheck.store.ledger.query, in rows per second.

Ratios are reference seconds / measured seconds, so above 1x is faster than the
reference. Machines are shared and noisy: compare the ratios of one run, not
seconds across runs. Every corpus file is in the page cache (just written). Each
timing is the best of --repeat K runs (default 1; a cold run always gets a new ledger; the warm
run, a few tenths of a second, is the best of at least 5).
--write-results adds the printed output, with the date and the command, at the
top of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path

import imagehash
import PIL
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_ledger
import bench_live
import results
from corpus import build_corpus, distinct_frames, load_runs, sample_runs

ROOT = Path(__file__).resolve().parent.parent
#: Issue 16's targets for a whole `trajcheck score`: the default corpus (one copy of each sample run) at
#: this many times the naive loop's speed, start-up included; and a 200-run corpus scored at this share of
#: the rate of the hashing stage alone (decode, grayscale, pHash and one region pHash per frame file).
DEFAULT_VS_NAIVE = 3.0
VS_HASHING = 0.75
VS_HASHING_RUNS = 200
TRAJCHECK = bench_live.TRAJCHECK  # the script installed with this Python, not a version manager's shim
#: The warm run takes a few tenths of a second, most of it start-up, so one scheduling hiccup of a shared
#: machine moves it by half: it is always the best of at least this many runs (each a full process).
WARM_REPEAT = 5


# ---------------------------------------------------------------- baselines

def _decode(path: Path) -> int:
    with Image.open(path) as img:
        img.load()
        return img.size[0]


def decode_floor(frames: list[Path], procs: int) -> float:
    """Seconds to open and decode every frame once with Pillow, on ``procs`` processes."""
    t = time.perf_counter()
    if procs == 1:
        for f in frames:
            _decode(f)
    else:
        with Pool(procs) as pool:
            pool.map(_decode, frames, chunksize=max(1, len(frames) // (procs * 8)))
    return time.perf_counter() - t


def _hash_frame(path: Path) -> int:
    from trajcheck.media.frames import decode, region_box

    f = decode(path)
    box = region_box(f.width / 2, f.height / 2, f.width, f.height)
    return f.phash.value ^ (f.region_hash(box).value if box else 0)


def _worker_setup() -> None:
    """What a trajcheck scoring process sets up: one BLAS thread, and glibc's malloc keeping freed frame
    buffers for the next frame (trajcheck.scoring.engines.keep_freed_memory)."""
    from threadpoolctl import threadpool_limits

    from trajcheck.scoring.engines import keep_freed_memory

    threadpool_limits(1, user_api="blas")
    keep_freed_memory()


def hashing_stage(frames: list[Path], procs: int) -> float:
    """Seconds for trajcheck's hashing stage alone on every distinct frame file, on ``procs`` processes:
    decode (Wuffs, libspng or Pillow), grayscale, the global pHash and one 200x200 region pHash per file,
    with no reuse between files of the same bytes (pool start-up included), in processes set up as
    trajcheck's are."""
    import scipy.fftpack  # noqa: F401  (loaded before the pool forks, as Pillow is for the decode floor)

    import trajcheck.media.frames  # noqa: F401
    import trajcheck.scoring.scorerun  # noqa: F401

    t = time.perf_counter()
    with Pool(procs, initializer=_worker_setup) as pool:
        pool.map(_hash_frame, frames, chunksize=max(1, len(frames) // (procs * 8)))
    return time.perf_counter() - t


def same_bytes(runs: list[tuple[Path, dict, list[dict]]]) -> int:
    """Frame files byte-identical to another frame file of the same run (trajcheck decodes those once)."""
    import hashlib

    dup = 0
    for d, _, steps in runs:
        seen: set[bytes] = set()
        for rel in sorted({(s.get("frames") or {}).get(k) for s in steps for k in ("pre", "post")} - {None}):
            h = hashlib.blake2b((d / rel).read_bytes(), digest_size=16).digest()
            dup += h in seen
            seen.add(h)
    return dup


def naive_loop(runs: list[tuple[Path, dict, list[dict]]]) -> float:
    """Seconds for what a hand-written checker does: per step, reopen both frames and pHash them and their crops."""
    t = time.perf_counter()
    for d, meta, steps in runs:
        screen = meta.get("screen") or {}
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
                        x = a["x"] * (w / screen["width"] if screen.get("width") else 1)
                        y = a["y"] * (h / screen["height"] if screen.get("height") else 1)
                        left = max(0, min(int(x) - 100, w - 200))
                        top = max(0, min(int(y) - 100, h - 200))
                        imagehash.phash(img.crop((left, top, left + 200, top + 200)))
    return time.perf_counter() - t


# ---------------------------------------------------------------- trajcheck score as a subprocess

@dataclass
class Scored:
    seconds: float
    maxrss_kib: int  # largest single process of the tree (rusage)
    tree_kib: int  # largest sampled sum over the tree (0: /proc not available)
    summary: str  # trajcheck's last stderr line


def _tree(root: int) -> list[int]:
    """``root`` and its descendants, from /proc/*/stat."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def _rss_kib(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, ValueError, IndexError):
            pass
    return total


def _hwm_kib(pids: list[int]) -> int:
    """The largest VmHWM (peak resident set of the process's own address space) among ``pids``."""
    best = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        best = max(best, int(line.split()[1]))
                        break
        except (OSError, ValueError, IndexError):
            pass
    return best


def compile_trajcheck() -> int:
    """Write the bytecode of trajcheck's modules when this environment would not (PYTHONDONTWRITEBYTECODE);
    the number of modules compiled (0: nothing to do)."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return 0
    import compileall
    import importlib

    # trajcheck's own folder holds the adapters sub-package; the other three are flat
    files = [py for name in ("trajcheck", "trajcheck.cli", "trajcheck.analyzers", "trajcheck.schemas")
             for py in Path(importlib.import_module(name).__file__).parent.glob("*.py" if "." in name else "**/*.py")]
    for py in files:
        compileall.compile_file(str(py), quiet=1)
    return len(files)


def trajcheck_score(corpus: Path, ledger: Path, *extra: str) -> Scored:
    """Run `trajcheck score CORPUS --out LEDGER -q [EXTRA]`; wall clock, peak RSS and its summary line."""
    cmd = [TRAJCHECK, "score", str(corpus), "--out", str(ledger), "-q", *extra]
    peak = [0, 0]  # tree sum of RSS, largest process VmHWM
    done = threading.Event()

    def sample(pid: int) -> None:
        while True:
            tree = _tree(pid)
            peak[0] = max(peak[0], _rss_kib(tree))
            peak[1] = max(peak[1], _hwm_kib(tree))
            if done.wait(0.05):
                return

    with tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        sampler = threading.Thread(target=sample, args=(proc.pid,), daemon=True)
        if os.path.isdir("/proc"):
            sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t
        done.set()
        if sampler.is_alive():
            sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = err.read().strip().splitlines()
    if proc.returncode not in (0, 1):  # 1: ledger written, some runs invalid
        raise SystemExit(f"{shlex.join(cmd)} exited {proc.returncode}:\n" + "\n".join(lines[-20:]))
    # rusage's ru_maxrss is not used: Linux carries the high-water mark of the address space a child had
    # before exec (this benchmark's own, 130+ MiB) into the child's, so it reads high for a small process.
    kib = peak[1] if peak[1] else (usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss // 1024)
    return Scored(seconds, kib, peak[0], lines[-1] if lines else "")


def best_score(corpus: Path, ledgers: list[Path], *extra: str) -> Scored:
    """The fastest of one run per ledger directory (memory: the largest seen)."""
    runs = [trajcheck_score(corpus, led, *extra) for led in ledgers]
    best = min(runs, key=lambda s: s.seconds)
    return Scored(best.seconds, max(s.maxrss_kib for s in runs), max(s.tree_kib for s in runs), best.summary)


# ---------------------------------------------------------------- bit identity

def _query(ledger: Path, sql: str) -> list[dict]:
    out = subprocess.run([TRAJCHECK, "query", str(ledger), sql, "--format", "json"], capture_output=True, text=True,
                         check=False)
    if out.returncode:
        raise SystemExit(f"trajcheck query failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def identity(ledger: Path) -> tuple[int, int, int]:
    """(frames checked, frames whose ledger hash differs from imagehash.phash, frames with no hash recorded)."""
    where = {r["run_id"]: Path(r["run_path"]) for r in _query(ledger, "select run_id, run_path from runs")}
    recorded: dict[Path, set] = {}
    for r in _query(ledger, "select frame_pre, frame_pre_phash, frame_post, frame_post_phash, run_id from steps"):
        for k in ("pre", "post"):
            if r[f"frame_{k}"]:
                recorded.setdefault(where[r["run_id"]] / r[f"frame_{k}"], set()).add(r[f"frame_{k}_phash"])
    bad = missing = 0
    for path, hashes in recorded.items():
        if None in hashes:
            missing += 1
            continue
        with Image.open(path) as img:
            bad += hashes != {str(imagehash.phash(img))}
    return len(recorded), bad, missing


# ---------------------------------------------------------------- report

def machine() -> str:
    import trajcheck

    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                         check=False)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "core", "cli", "analyzers",
                            "schemas"], capture_output=True, text=True, check=False).stdout.splitlines()
    rev = git.stdout.strip() or "?"
    if dirty:
        rev += f" + {len(dirty)} uncommitted files under core/ cli/ analyzers/ schemas/"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"Pillow {PIL.__version__}, imagehash {imagehash.__version__}; load average {load}\n"
            f"trajcheck {trajcheck.__version__} at git {rev}")


def main(argv: list[str] | None = None, prog: str = "benchmarks/bench_score.py") -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=None,
                    help="N distinct runs (default: one copy of each sample run, 18)")
    ap.add_argument("--no-4n", action="store_true", help="skip the 4N memory pass")
    ap.add_argument("--seed", type=int, default=1, help="perturbation seed (default 1)")
    ap.add_argument("--jobs", type=int, default=None, help="trajcheck score --jobs (default: all cores)")
    ap.add_argument("--repeat", type=int, default=1, help="best of K for each timing (default 1)")
    ap.add_argument("--rows", type=int, default=1_000_000, help="step rows of the DuckDB ledger (default 1,000,000)")
    ap.add_argument("--write-results", action="store_true", help="add the output to benchmarks/RESULTS.md")
    args = ap.parse_args(argv)
    n = args.runs if args.runs is not None else len(sample_runs())
    if n < 1:
        ap.error("--runs must be at least 1")
    cores = os.cpu_count() or 1
    procs = args.jobs or cores
    extra = ("--jobs", str(args.jobs)) if args.jobs else ()
    k = max(1, args.repeat)
    lines: list[str] = []

    def say(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    def best(f: Callable[[], float]) -> float:
        return min(f() for _ in range(k))

    with tempfile.TemporaryDirectory(prefix="trajcheck-bench-") as tmp:
        tmp_path = Path(tmp)
        t = time.perf_counter()
        build_corpus(tmp_path / "corpus", n, args.seed)
        runs = load_runs(tmp_path / "corpus")
        frames = distinct_frames(runs)
        n_steps = sum(len(s) for _, _, s in runs)
        say(machine())
        say(f"corpus: {n} runs built from sample_runs/ (seed {args.seed}) in {time.perf_counter() - t:.1f}s: "
            f"{len(frames)} distinct frame files, {n_steps} steps; {same_bytes(runs)} of the files are byte-identical "
            "to another file of their run (as recorded: nothing changed), which trajcheck decodes once")
        say(f"trajcheck score: `trajcheck score CORPUS --out LEDGER -q{' ' + ' '.join(extra) if extra else ''}` "
            f"as a subprocess, {procs} processes; best of {k} (warm: of {max(k, WARM_REPEAT)})")
        say()

        # Warm-up, not timed: trajcheck's own modules compiled to bytecode, as `pip install` does for an
        # installed package (an editable install compiles at first import, unless PYTHONDONTWRITEBYTECODE
        # is set, as it is in some sandboxes: then every start would recompile them, about 65 ms here);
        # then one `trajcheck score` of one run, so that no timing below includes the first load of
        # trajcheck's libraries (pandas, pyarrow, scipy, ...) from disk; the corpus is in the page cache
        # too (just written).
        compiled = compile_trajcheck()
        if compiled:
            say(f"warm-up: compiled {compiled} trajcheck modules to bytecode (PYTHONDONTWRITEBYTECODE is set)")
        subprocess.run([TRAJCHECK, "score", str(runs[0][0]), "--out", str(tmp_path / "warmup"), "-q"],
                       capture_output=True, check=False)
        floor1 = best(lambda: decode_floor(frames, 1))
        floor_n = best(lambda: decode_floor(frames, cores))
        naive = best(lambda: naive_loop(runs))
        hashing = best(lambda: hashing_stage(frames, procs))
        cold = best_score(tmp_path / "corpus", [tmp_path / f"L{i}" for i in range(k)], *extra)
        ledger = tmp_path / f"L{k - 1}"
        warm = best_score(tmp_path / "corpus", [ledger] * max(k, WARM_REPEAT), *extra)
        force = best_score(tmp_path / "corpus", [ledger] * k, "--force", *extra)

        rows = [
            ("decode floor, Pillow, 1 core", floor1),
            (f"decode floor, Pillow, {cores} cores (pool)", floor_n),
            ("naive per-step imagehash loop, 1 core", naive),
            (f"trajcheck hashing stage alone, {procs} processes", hashing),
            ("trajcheck score, cold (new ledger)", cold.seconds),
            ("trajcheck score, warm (same corpus, ledger)", warm.seconds),
            ("trajcheck score --force (same ledger)", force.seconds),
        ]
        say(f"{'measure':46} {'seconds':>8} {'frames/s':>9} {'vs naive':>9} {'vs floor1':>10} {f'vs floor{cores}':>10}")
        for name, s in rows:
            say(f"{name:46} {s:8.2f} {len(frames) / s:9.1f} {naive / s:8.2f}x {floor1 / s:9.2f}x {floor_n / s:9.2f}x")
        say()
        say(f"cold throughput: {naive / cold.seconds:.2f}x the naive 1-core loop, {floor_n / cold.seconds:.2f}x the "
            f"{cores}-core decode floor, {floor1 / cold.seconds:.2f}x the 1-core decode floor")
        say(f"hashing stage alone: {floor_n / hashing:.2f}x the {cores}-core decode floor")
        say(f"warm speedup (cold/warm): {cold.seconds / warm.seconds:.2f}x; --force re-score: "
            f"{cold.seconds / force.seconds:.2f}x cold")
        say(f"  cold:  {cold.summary}")
        say(f"  warm:  {warm.summary}")
        say(f"  force: {force.summary}")
        say()

        checked, bad, missing = identity(ledger)
        say(f"bit identity: {bad} mismatches: {bad} of {checked} distinct frames have a ledger pHash that differs from "
            f"imagehash.phash of the file ({missing} with no hash recorded)")
        say()
        targets = [
            ("cold >= 4x the naive 1-core loop", naive / cold.seconds, 4.0),
            (f"cold >= 0.6x the {cores}-core decode floor", floor_n / cold.seconds, 0.6),
            (f"hashing stage >= 0.85x the {cores}-core decode floor", floor_n / hashing, 0.85),
            ("warm >= 20x faster than cold", cold.seconds / warm.seconds, 20.0),
        ]
        say("targets (issue 7): " + "; ".join(f"{name}: {got:.2f}x {'met' if got >= want else 'NOT met'}"
                                              for name, got, want in targets)
            + f"; bit identity: {'met' if bad == 0 and missing == 0 else 'NOT met'}")
        say()

        say("issue 16:")
        small = bench_live.report()
        for name, got, target in small:
            say(f"  {name}: {1000 * got:.1f} ms (target <= {1000 * target:.0f} ms: "
                f"{'met' if got <= target else 'NOT met'})")
        if n == len(sample_runs()):
            vs_naive = naive / cold.seconds
            say(f"  the default corpus ({n} runs), cold, start-up included: {vs_naive:.2f}x the naive loop "
                f"(target >= {DEFAULT_VS_NAIVE:g}x: {'met' if vs_naive >= DEFAULT_VS_NAIVE else 'NOT met'})")
        rate = hashing / cold.seconds  # the same frames: the ratio of the rates is the inverse ratio of the times
        say(f"  the whole cold score against the hashing stage alone ({n} runs): {rate:.2f}x its rate "
            f"(target >= {VS_HASHING:g}x on {VS_HASHING_RUNS} runs: " + ("met" if rate >= VS_HASHING else "NOT met")
            + ("" if n == VS_HASHING_RUNS else f"; this pass has {n}") + ")")
        say()

        mem = [(f"cold, {n} runs", n, len(frames), cold), (f"warm, {n} runs", n, len(frames), warm)]
        if not args.no_4n:
            build_corpus(tmp_path / "corpus4", 4 * n, args.seed + 1)
            frames4 = len(distinct_frames(load_runs(tmp_path / "corpus4")))
            cold4 = trajcheck_score(tmp_path / "corpus4", tmp_path / "L4n", *extra)
            mem.append((f"cold, {4 * n} runs (4N)", 4 * n, frames4, cold4))
            shutil.rmtree(tmp_path / "corpus4")
            shutil.rmtree(tmp_path / "L4n")
        say(f"{'peak RSS of trajcheck score':28} {'runs':>5} {'frames':>7} {'seconds':>8} {'frames/s':>9} "
            f"{'largest process':>16} {'tree sum (sampled)':>19}")
        for name, runs_n, fr, s in mem:
            tree = f"{s.tree_kib / 1024:.0f} MiB" if s.tree_kib else "n/a"
            say(f"{name:28} {runs_n:5} {fr:7} {s.seconds:8.2f} {fr / s.seconds:9.1f} "
                f"{s.maxrss_kib / 1024:12.0f} MiB {tree:>19}")
        if not args.no_4n:
            c4 = mem[-1][3]
            say(f"4N/N: largest process {c4.maxrss_kib / cold.maxrss_kib:.2f}x"
                + (f", tree sum {c4.tree_kib / cold.tree_kib:.2f}x" if cold.tree_kib and c4.tree_kib else "")
                + " for 4x the runs")
        say()

        t = time.perf_counter()
        big_rows, big_runs = bench_ledger.build_big_ledger(ledger, tmp_path / "big", args.rows)
        say(f"DuckDB ledger: the cold ledger's rows replicated to {big_rows:,} step rows and {big_runs:,} run rows "
            f"({time.perf_counter() - t:.1f}s to write); `trajcheck query` counts "
            f"{bench_ledger.cli_count(tmp_path / 'big'):,} step rows")
        for line in bench_ledger.report(tmp_path / "big", big_rows, max(3, k)):
            say(line)

    if args.write_results:
        path = results.record("bench_score.py", sys.argv[1:] if argv is None else argv, lines)
        print(f"\nwritten to {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
