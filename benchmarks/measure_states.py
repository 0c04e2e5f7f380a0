"""Measure when two frames show the same screen (analyzers/states.py's thresholds) on labelled runs.

    python benchmarks/measure_states.py [RUNS_DIR] [--labels LABELS_JSON]

For every step whose label says what the action did to the screen (labels.json: ``effect`` true or false,
and its ``kind``), decodes its pre and post frames as scoring does and prints, by label and kind, the
pHash distance and the number of 32x32-thumbnail cells that moved by more than D gray levels, for several
D. A pair labelled ``false`` (nothing the agent did shows: a caret, a hover, a ticking clock) must be one
screen; most pairs labelled ``true`` should be two (a focus ring may stay one screen: it is not progress).
Then, for each (D, N) pair, how many ``false`` pairs it splits and how many ``true`` pairs it merges.
analyzers/states.py's StateOptions quotes this output.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from trajcheck.readers.discovery import discover, get_reader
from trajcheck.media.frames import decode
from trajcheck.base.resample import pass_order, resize_gray

ROOT = Path(__file__).resolve().parent.parent
DELTAS = (4, 8, 12, 16, 24)


def thumb(path: Path) -> tuple[np.ndarray, object]:
    """The 32x32 grayscale thumbnail the frame's pHash is computed from, and the pHash."""
    f = decode(path)
    luma = f.luma if f.luma is not None else np.asarray(f.gray)
    order = pass_order(luma.shape[1], luma.shape[0])
    small = resize_gray(luma, order=order) if order is not None else None
    return small, f.phash


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="?", type=Path, default=ROOT / "sample_runs")
    ap.add_argument("--labels", type=Path, default=None, help="default: RUNS/labels.json")
    args = ap.parse_args()
    labels = json.loads((args.labels or args.runs / "labels.json").read_text())
    refs, _ = discover([args.runs])
    rows = []
    for ref in refs:
        run, _ = get_reader(ref.reader).read(ref.path, ref.display)
        lab = labels.get(run.run_id)
        if not lab:
            continue
        for s in run.steps:
            sl = lab["steps"].get(str(s.index))
            if not sl or sl.get("effect") is None or not s.frame_pre or not s.frame_post:
                continue
            (a, ha), (b, hb) = thumb(ref.run_dir / s.frame_pre), thumb(ref.run_dir / s.frame_post)
            if a is None or b is None:
                continue
            diff = np.abs(a.astype(np.int16) - b.astype(np.int16))
            cells = [int(np.count_nonzero(diff > d)) for d in DELTAS]
            rows.append((run.run_id, s.index, sl["effect"], sl["kind"], hb - ha, cells))  # type: ignore[operator]
    print(f"{len(rows)} labelled steps with both frames\n")
    head = " ".join(f"{d:>4}" for d in DELTAS)
    print(f"{'run':28} {'#':>2} {'label':5} {'kind':30} {'pHash':>5}  cells moved > {head}")
    for r in sorted(rows, key=lambda r: (not r[2], r[3], r[0], r[1])):
        print(f"{r[0]:28} {r[1]:>2} {str(r[2]):5} {r[3]:30} {r[4]:>5}  {'':14}" + " ".join(f"{c:>4}" for c in r[5]))
    print(f"\n{'D':>3} {'N':>3}  {'false pairs split':>17}  {'true pairs merged':>17}   "
          "(one screen: pHash <= 8 and at most N cells moved > D)")
    for i, d in enumerate(DELTAS):
        for n in (0, 1, 2, 3, 5, 8):
            split = sum(1 for r in rows if not r[2] and (r[4] > 8 or r[5][i] > n))
            merged = defaultdict(int)
            for r in rows:
                if r[2] and r[4] <= 8 and r[5][i] <= n:
                    merged[r[3]] += 1
            print(f"{d:>3} {n:>3}  {split:>17}  {sum(merged.values()):>17}   "
                  + ", ".join(f"{k} {v}" for k, v in sorted(merged.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
