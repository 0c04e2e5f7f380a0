"""Where a cold score's CPU time goes, stage by stage, in one process.

Issue 16's fourth target compares the whole cold `trajcheck score` with trajcheck's hashing stage alone
(bench_score.py's "cold score against the hashing stage" line). This script says which stages make the
difference: it scores a corpus in this process (``--jobs 1``, worker set-up applied as a worker's), with a
timer around each stage, and prints each stage's seconds and share, split into the work the hashing stage
also does (decoding a PNG, the gray pixels and row/column resize of the pHash, region hashes) and the rest
(pixel diff, DOM snapshots, reading and checking the run, digests, analyzers, rows).

    python benchmarks/corpus.py /tmp/c200 --runs 200     # once: the 200-run corpus
    python benchmarks/bench_stages.py /tmp/c200           # then

The timers are plain ``perf_counter`` wrappers installed on module attributes (a profiler's per-call cost
would inflate the Python-heavy stages and hide the numpy-heavy ones). A stage nested in another is counted
in the inner one only. Figures vary by a few percent from one pass to the next on a shared machine: use
``--repeat`` and read the shares rather than the seconds.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

#: (label, module, attribute, counts as the hashing stage's work too). A stage called inside another (the
#: changed rows inside a decode, the decodes inside loading) is counted in the inner one only.
STAGES: list[tuple[str, str, str, bool]] = [
    ("decode, gray pixels and pHash of each frame file", "trajcheck.loading", "decode", True),
    ("changed rows against the frame decoded before", "trajcheck.frames", "changed_rows", False),
    ("region pHashes", "trajcheck.frames", "Frame.region_hash", True),
    ("pixel diff of each frame pair", "trajcheck.loading", "diff_frames", False),
    ("DOM snapshots", "trajcheck.dom", "DomCache._load", False),
    ("loading's own work (files, caches, evidence)", "trajcheck.scorerun", "load_run", False),
    ("analyzers", "trajcheck.scorerun", "analyze", False),
    ("ledger rows", "trajcheck.scorerun", "build_result", False),
    ("file digests", "trajcheck.scorerun", "file_manifest", False),
    ("reading and checking the run, its contract", "trajcheck.scorerun", "_score_safely", False),
]


class Timers:
    """Wraps module attributes with timers; an inner timed call is subtracted from the outer one."""

    def __init__(self) -> None:
        self.own: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self._stack: list[float] = []  # time spent in timed calls nested in the current one
        self._undo: list[Callable[[], None]] = []

    def wrap(self, label: str, owner: Any, name: str) -> None:
        inner = getattr(owner, name)
        timers = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            timers._stack.append(0.0)
            t = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spent = time.perf_counter() - t
                nested = timers._stack.pop()
                timers.own[label] += spent - nested
                timers.calls[label] += 1
                if timers._stack:
                    timers._stack[-1] += spent

        setattr(owner, name, timed)
        self._undo.append(lambda: setattr(owner, name, inner))

    def undo(self) -> None:
        for f in reversed(self._undo):
            f()
        self._undo.clear()


def _owner(module: str, attr: str) -> tuple[Any, str]:
    import importlib

    obj: Any = importlib.import_module(module)
    *path, name = attr.split(".")
    for p in path:
        obj = getattr(obj, p)
    return obj, name


def score_once(corpus: Path) -> tuple[float, Counter[str], Counter[str]]:
    """Score ``corpus`` in this process with the stage timers: (wall seconds, own seconds by stage, calls)."""
    from trajcheck import api

    timers = Timers()
    for label, module, attr, _ in STAGES:
        timers.wrap(label, *_owner(module, attr))
    out = Path(tempfile.mkdtemp(prefix="trajcheck-stages-"))
    try:
        t = time.perf_counter()
        api.score([str(corpus)], out / "L", jobs=1)
        wall = time.perf_counter() - t
    finally:
        timers.undo()
        shutil.rmtree(out, ignore_errors=True)
    return wall, timers.own, timers.calls


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/bench_stages.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, help="a folder of runs (benchmarks/corpus.py builds one)")
    ap.add_argument("--repeat", type=int, default=1, help="score K times, keep each stage's least time")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    from trajcheck.engines import keep_freed_memory

    threadpool_limits(1, user_api="blas")  # as a scoring worker runs
    keep_freed_memory()
    import trajcheck.pipeline  # noqa: F401  (the scoring modules, loaded before the first timer starts)
    import trajcheck.scorerun  # noqa: F401

    best: dict[str, float] = {}
    calls: Counter[str] = Counter()
    walls = []
    for _ in range(max(1, args.repeat)):
        wall, own, n = score_once(args.corpus)
        walls.append(wall)
        calls = n
        for label, _m, _a, _h in STAGES:
            best[label] = min(best.get(label, float("inf")), own[label])
    wall = min(walls)
    timed = sum(best.values())
    hashing = sum(best[label] for label, _m, _a, shared in STAGES if shared)
    print(f"corpus: {args.corpus}; scored in one process, best of {len(walls)}: {wall:.2f} s")
    print(f"{'stage':48} {'calls':>6} {'seconds':>8} {'share':>6}  also in the hashing stage")
    for label, _m, _a, shared in STAGES:
        print(f"{label:48} {calls[label]:6d} {best[label]:8.2f} {best[label] / wall:6.1%}  {'yes' if shared else ''}")
    rest = wall - timed
    print(f"{'everything else (discovery, ledger, lazy imports)':48} {'':6} {rest:8.2f} {rest / wall:6.1%}")
    print(f"work the hashing stage also does: {hashing:.2f} s ({hashing / wall:.0%}); the rest: "
          f"{wall - hashing:.2f} s ({(wall - hashing) / wall:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
