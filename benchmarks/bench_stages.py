"""Where a cold score's CPU time goes, stage by stage, in one process.

Issue 16's third target compares the whole cold `trajcheck score` with trajcheck's hashing stage alone
(bench_score.py's "cold score against the hashing stage" line). This script says which stages make the
difference: it scores a corpus in this process (``--jobs 1``, worker set-up applied as a worker's), with a
timer around each stage, and prints each stage's seconds and share, split into the work the hashing stage
also does (decoding a PNG, the gray pixels and row/column resize of the pHash, region hashes) and the rest
(pixel diff, DOM snapshots, reading and checking the run, digests, analyzers, rows).

    python benchmarks/corpus.py /tmp/c200 --runs 200     # once: the 200-run corpus
    python benchmarks/bench_stages.py /tmp/c200           # then

The timers are plain ``perf_counter`` wrappers installed on module attributes (a profiler's per-call cost
would inflate the Python-heavy stages and hide the numpy-heavy ones). A stage nested in another is counted
in the inner one only. The first pass is what a scoring worker's runs cost, its lazy imports and caches
included; with ``--repeat K`` the pass with the least wall time is shown, whole (later passes find those
imports and caches warm). Figures vary by a few percent from one pass to the next on a shared machine:
read the shares rather than the seconds.
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
    ("decode, gray pixels and pHash of each frame file", "trajcheck.scoring.loading", "decode", True),
    ("changed rows against the frame decoded before", "trajcheck.media.frames", "changed_rows", False),
    ("region pHashes", "trajcheck.media.frames", "Frame.region_hash", True),
    ("pixel diff of each frame pair", "trajcheck.scoring.loading", "diff_frames", False),
    ("DOM snapshots", "trajcheck.media.dom", "DomCache._load", False),
    ("loading's own work (files, caches, evidence)", "trajcheck.scoring.scorerun", "load_run", False),
    ("analyzers", "trajcheck.scoring.scorerun", "analyze", False),
    ("ledger rows", "trajcheck.scoring.scorerun", "build_result", False),
    ("file digests", "trajcheck.scoring.scorerun", "file_manifest", False),
    ("reading and checking the run, its contract", "trajcheck.scoring.scorerun", "_score_safely", False),
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
    """Score ``corpus`` in this process with the stage timers: (wall seconds, own seconds by stage, calls).
    The timers are removed afterwards, whatever happens (a stage that no longer exists raises here)."""
    from trajcheck import api

    timers = Timers()
    out = Path(tempfile.mkdtemp(prefix="trajcheck-stages-"))
    try:
        for label, module, attr, _ in STAGES:
            timers.wrap(label, *_owner(module, attr))
        t = time.perf_counter()
        api.score([str(corpus)], out / "L", jobs=1)
        wall = time.perf_counter() - t
    finally:
        timers.undo()
        shutil.rmtree(out, ignore_errors=True)
    return wall, timers.own, timers.calls


def table(wall: float, own: Counter[str], calls: Counter[str]) -> list[str]:
    """The lines printed for one pass: each stage, what no stage covers, and the hashing stage's share."""
    lines = [f"{'stage':50} {'calls':>6} {'seconds':>8} {'share':>6}  also in the hashing stage"]
    for label, _m, _a, shared in STAGES:
        lines.append(f"{label:50} {calls[label]:6d} {own[label]:8.2f} {own[label] / wall:6.1%}  "
                     f"{'yes' if shared else ''}".rstrip())
    rest = wall - sum(own[label] for label, *_ in STAGES)
    lines.append(f"{'everything else (discovery, ledger, lazy imports)':50} {'':6} {rest:8.2f} {rest / wall:6.1%}")
    hashing = sum(own[label] for label, _m, _a, shared in STAGES if shared)
    lines.append(f"work the hashing stage also does: {hashing:.2f} s ({hashing / wall:.0%}); the rest: "
                 f"{wall - hashing:.2f} s ({(wall - hashing) / wall:.0%})")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/bench_stages.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, help="a folder of runs (benchmarks/corpus.py builds one)")
    ap.add_argument("--repeat", type=int, default=1, help="score K times in this process, show the fastest pass")
    ap.add_argument("--write-results", action="store_true", help="add the output to benchmarks/RESULTS.md")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    from trajcheck.scoring.engines import keep_freed_memory

    from trajcheck.cli.score import _no_pandas

    threadpool_limits(1, user_api="blas")  # as a scoring worker runs
    keep_freed_memory()
    _no_pandas()  # as the `score` command does: pyarrow's first conversion would import pandas (0.2-0.3 s)
    import trajcheck.scoring.pipeline  # noqa: F401  (what a worker inherits from its parent, loaded before timing)
    import trajcheck.scoring.scorerun  # noqa: F401

    passes = [score_once(args.corpus) for _ in range(max(1, args.repeat))]
    best = min(range(len(passes)), key=lambda i: passes[i][0])
    wall, own, calls = passes[best]
    lines = [f"corpus: {args.corpus}; scored in one process ({len(passes)} pass(es), the fastest shown: pass "
             f"{best + 1}, {'cold' if best == 0 else 'imports and caches warm'}): {wall:.2f} s",
             *table(wall, own, calls)]
    for line in lines:
        print(line)
    if args.write_results:
        import results

        path = results.record("bench_stages.py", sys.argv[1:] if argv is None else argv, lines)
        print(f"\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
