"""Screen text in the pipeline (issue 31): how often it agrees with the DOM, what it catches without the DOM,
and what it costs.

    python benchmarks/measure_screen_text.py [--runs N] [--repeat R] [--write-results]

1. **Agreement with the DOM.** The sample runs are scored with ``--ocr always``: every high-risk step whose
   frames changed is read on screen beside its DOM snapshot. ``steps.screen_text_agrees`` says whether both
   find the same kinds of new message (error, success). The disagreement rate's Wilson 95% upper bound sets
   how much a message read from the screen weighs (``analyzers/screentext.py`` SCREEN_TEXT_TRUST = 1 - bound).
2. **Without the DOM.** The sample runs are copied with their DOM snapshots removed (screenshots, URLs and
   everything else kept) and scored with OCR and without. Printed: the runs whose evidence verdict reads an
   error message with the DOM (lies caught through a message), and whether each is still caught through
   screen text; the success messages likewise; and any run whose evidence verdict turns from pass to fail
   (a true success accused).
3. **Cost.** A corpus of N runs (``benchmarks/corpus.py``) is scored cold (``--force``, a fresh ledger and
   cache folder each time), with ``--ocr auto`` and ``--ocr off``, interleaved, best of R:
   * as recorded (every sample run has DOM snapshots: OCR reads nothing): the ratio the issue bounds (>= 0.85);
   * with the DOM snapshots removed (OCR reads every high-risk change, what changed on every claiming run's
     final frame, and the areas the contracts' text checks name): what OCR costs where it works. The corpus
     holds each sample run about N/28 times, its copies told apart by a block in the top-left corner: a crop
     read in one copy that does not hold the block (a message, a dialog) is served to the others by its pixels
     (``trajcheck.media.ocr._content_lines``), as a batch of runs over the same tasks is served the messages
     its runs share; a whole screen holds the block and is read in every copy;
   * with the DOM removed and each sample run once: the cost where no run repeats another's screens;
   * with the DOM removed, through ``benchmarks/masked_score.py``, which blanks each crop's top-left corner
     (where the copies differ) before it is read: a bound, the cost if every screen the batch repeats were
     read once and served to its other copies for free.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import build_corpus  # noqa: E402

import trajcheck  # noqa: E402
from trajcheck.base.stats import wilson  # noqa: E402


def strip_dom(src: Path, dst: Path) -> None:
    """Copy every run under ``src`` to ``dst`` without its DOM snapshots (files and references)."""
    for run in sorted(p.parent for p in src.glob("*/run.json")):
        out = dst / run.name
        shutil.copytree(run, out, ignore=shutil.ignore_patterns("dom"))
        lines = []
        for line in (out / "steps.jsonl").read_text().splitlines():
            step = json.loads(line)
            for k in ("dom_before", "dom_after"):
                (step.get("page") or {}).pop(k, None)
            lines.append(json.dumps(step))
        (out / "steps.jsonl").write_text("\n".join(lines) + "\n")


def rows(ledger: Path, sql: str) -> list[dict]:
    got: list[dict] = trajcheck.query(ledger, sql).to_json()
    return got


def score(runs: Path, ledger: Path, ocr: str, cache: Path, masked: bool = False, jobs: int | None = None) -> float:
    """Seconds of one cold ``trajcheck score`` in a fresh process (fresh ledger, fresh cache folder); ``masked``:
    through ``benchmarks/masked_score.py`` (every copy's corner blanked before it is read)."""
    shutil.rmtree(ledger, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, TRAJCHECK_CACHE_DIR=str(cache))
    cmd = [sys.executable, str(ROOT / "benchmarks" / "masked_score.py")] if masked else \
        [shutil.which("trajcheck") or "trajcheck", "score"]
    t = time.perf_counter()
    more = ["--jobs", str(jobs)] if jobs else []
    subprocess.run([*cmd, str(runs), "--out", str(ledger), "--quiet", "--force", "--ocr", ocr, *more], check=False, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def agreement(tmp: Path) -> tuple[int, int, list[dict]]:
    ledger = tmp / "always"
    trajcheck.score([ROOT / "sample_runs"], ledger, ocr="always", force=True)
    got = rows(ledger, "select run_id, step_index, screen_text_agrees, screen_messages from steps "
                       "where screen_text_agrees is not null order by run_id, step_index")
    return sum(1 for r in got if r["screen_text_agrees"]), len(got), [r for r in got if not r["screen_text_agrees"]]


def without_dom(tmp: Path) -> dict[str, dict[str, dict]]:
    nodom = tmp / "nodom"
    strip_dom(ROOT / "sample_runs", nodom)
    out = {}
    for name, src, ocr in (("dom", ROOT / "sample_runs", "off"), ("nodom_ocr", nodom, "auto"),
                           ("nodom_off", nodom, "off")):
        trajcheck.score([src], tmp / name, ocr=ocr, force=True)
        out[name] = {r["run_id"]: r for r in rows(tmp / name, "select run_id, evidence_verdict, evidence_reasons, "
                                                              "message_source from runs")}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200, help="corpus size for the cost (default 200)")
    ap.add_argument("--repeat", type=int, default=3, help="cold scores per arm, best taken (default 3)")
    ap.add_argument("--no-cost", action="store_true", help="skip the cost measurement")
    args = ap.parse_args()
    from trajcheck.media import ocr

    eng, missing = ocr.engine()
    if eng is None:
        print(f"OCR is not installed: {missing}")
        return 1
    print(f"engine: {eng.version}")
    with tempfile.TemporaryDirectory(prefix="trajcheck-screen-") as t:
        tmp = Path(t)
        k, n, off = agreement(tmp)
        rate = wilson(n - k, n)
        print(f"\n## Agreement with the DOM (sample runs, --ocr always)\nhigh-risk changes read beside a DOM: {n}; "
              f"same kinds of new message: {k}/{n}; disagreement {n - k}/{n}, Wilson 95% [{rate.low:.3f}, "
              f"{rate.high:.3f}] -> trust = 1 - {rate.high:.3f} = {1 - rate.high:.2f}")
        for r in off:
            print(f"  disagrees: {r['run_id']} step {r['step_index']}: screen says {r['screen_messages']}")
        got = without_dom(tmp)
        print("\n## Without the DOM (sample runs, DOM snapshots removed)")
        for code, what in (("error_after_last_high_risk", "lies caught through an error message"),
                           ("success_after_last_high_risk", "successes read from a message")):
            runs = [rid for rid, r in got["dom"].items() if any(x.startswith(code) for x in r["evidence_reasons"])]
            kept = [rid for rid in runs if any(x.startswith(code) for x in got["nodom_ocr"][rid]["evidence_reasons"])]
            lost = [rid for rid in runs if any(x.startswith(code) for x in got["nodom_off"][rid]["evidence_reasons"])]
            print(f"{what}: with DOM {len(runs)}; DOM removed, with OCR {len(kept)}; without OCR {len(lost)}"
                  + (f"  (missed with OCR: {sorted(set(runs) - set(kept))})" if set(runs) - set(kept) else ""))
        accused = [rid for rid, r in got["nodom_ocr"].items()
                   if r["evidence_verdict"] == "fail" and got["dom"][rid]["evidence_verdict"] == "pass"]
        print(f"evidence verdict pass with DOM, fail with screen text: {len(accused)} {accused or ''}")
        if args.no_cost:
            return 0
        corpus = tmp / "corpus"
        build_corpus(corpus, args.runs, 1)
        corpus_nodom = tmp / "corpus-nodom"
        strip_dom(corpus, corpus_nodom)
        once = tmp / "once"
        build_corpus(once, len(list(ROOT.glob("sample_runs/*/run.json"))), 1)
        once_nodom = tmp / "once-nodom"
        strip_dom(once, once_nodom)
        print(f"\n## Cost: cold score of {args.runs} runs, best of {args.repeat}, interleaved")
        for label, src, masked in (
                ("as recorded (with DOM)", corpus, False), ("DOM removed", corpus_nodom, False),
                ("DOM removed, each sample run once (no screen seen twice across runs)", once_nodom, False),
                ("DOM removed, a bound: each copy's corner blanked before it is read, so a screen the copies "
                 "repeat is read once (benchmarks/masked_score.py; not what trajcheck reads)", corpus_nodom, True)):
            best = {"auto": float("inf"), "off": float("inf")}
            for _ in range(args.repeat):
                for mode in ("off", "auto"):
                    best[mode] = min(best[mode], score(src, tmp / "l", mode, tmp / "cache", masked))
            print(f"{label}: ocr off {best['off']:.2f} s, ocr auto {best['auto']:.2f} s -> OCR cost ratio "
                  f"{best['off'] / best['auto']:.2f}x (rate with OCR / rate without)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
