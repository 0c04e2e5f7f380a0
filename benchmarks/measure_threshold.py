"""Measure the pHash distance threshold of the seed's rule against labelled runs.

    python benchmarks/measure_threshold.py [RUNS_DIR] [--labels LABELS_JSON]

Scores RUNS_DIR (default: sample_runs/) in-process, joins every high-risk step
with its ground-truth label (labels.json: {run_id: {steps: {"<i>": {effect, kind}}}}),
and prints:
  * the global and region Hamming distances of each labelled step, by label and kind;
  * for thresholds T = 0..12, the seed's rule ("changed" = distance > T, global OR
    region) scored against the labels: errors, precision and recall of "effect";
  * trajcheck's verdict (pixel blobs, outline/caret/restyle/noise/ambient discounted)
    on the same steps, which does not depend on T.
docs/perceptual.md's threshold paragraph quotes this output.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from trajcheck.scoring.pipeline import ScoreOptions, score_paths

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="?", type=Path, default=ROOT / "sample_runs")
    ap.add_argument("--labels", type=Path, default=None, help="default: RUNS/labels.json")
    args = ap.parse_args()
    labels = json.loads((args.labels or args.runs / "labels.json").read_text())
    report = score_paths([args.runs], opts=ScoreOptions(), jobs=1)
    rows = []
    for res in report.results:
        lab = labels.get(res.run["run_id"])
        if not lab:
            continue
        for s in res.steps:
            sl = lab["steps"].get(str(s["step_index"]))
            if not sl or sl["effect"] is None or not s["effect_high_risk"] or s["effect_global_distance"] is None:
                continue
            rows.append((res.run["run_id"], s["step_index"], sl["effect"], sl["kind"], s["effect_global_distance"],
                         s["effect_region_distance"], s["action_effect_observed"], s["effect_reason"]))
    print(f"{len(rows)} labelled high-risk steps in {len({r[0] for r in rows})} runs\n")
    print(f"{'run':28} {'#':>2} {'label':6} {'kind':28} {'global':>6} {'region':>6}  trajcheck")
    for r in sorted(rows, key=lambda r: (not r[2], r[3], r[0], r[1])):
        reg = "-" if r[5] is None else str(r[5])
        print(f"{r[0]:28} {r[1]:>2} {str(r[2]):6} {r[3]:28} {r[4]:>6} {reg:>6}  {r[6]} ({r[7]})")

    by: dict[bool, list[int]] = defaultdict(list)
    for r in rows:
        by[r[2]].append(max(r[4], r[5] or 0))
    for k in (True, False):
        v = sorted(by[k])
        if v:
            print(f"\nmax(global, region) distance, label effect={k}: n={len(v)} min={v[0]} median={v[len(v) // 2]} max={v[-1]}")

    print(f"\n{'T':>3} {'errors':>6} {'false effect':>12} {'missed effect':>13} {'precision':>9} {'recall':>6}   (seed rule: changed = distance > T)")
    for t in range(13):
        tp = fp = fn = tn = 0
        for r in rows:
            said = r[4] > t or (r[5] is not None and r[5] > t)
            tp += said and r[2]
            fp += said and not r[2]
            fn += (not said) and r[2]
            tn += (not said) and not r[2]
        prec = tp / (tp + fp) if tp + fp else float("nan")
        rec = tp / (tp + fn) if tp + fn else float("nan")
        print(f"{t:>3} {fp + fn:>6} {fp:>12} {fn:>13} {prec:>9.3f} {rec:>6.3f}")
    tp = sum(1 for r in rows if r[6] and r[2])
    fp = sum(1 for r in rows if r[6] and not r[2])
    fn = sum(1 for r in rows if r[6] is False and r[2])
    print(f"\ntrajcheck verdict: errors={fp + fn} (false effect {fp}, missed effect {fn}) on {len(rows)} steps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
