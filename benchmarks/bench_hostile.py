"""Time and peak memory of `trajcheck score` on hostile inputs (issue 19), one run each beside a good run.

    python benchmarks/bench_hostile.py [--only NAME ...] [--keep DIR]

Each case is a folder holding the sample run terms-checkbox-on and one hostile run, scored by
`trajcheck score CASE --out LEDGER -q --jobs 1` in a subprocess (one process: its peak is the run's);
the peak is the largest VmHWM of the process tree, sampled from /proc every 50 ms as
bench_score.py does. Cases:

  baseline     the good run alone
  trace-bomb   a 1.8 MB trace.zip whose nine screencast members each unpack to 200 MB (zeros)
  dom-flat     a 31 MB DOM snapshot of 370,000 elements (over the element limit: refused)
  dom-big      a 31 MB DOM snapshot of 90,000 paragraphs (under both limits): parsed
  dom-wide     a DOM snapshot just under the element limit (99,000 buttons): parsed
  dom-deep     80,000 nested <div> (over the depth limit: refused)
  dom-at-limit 199 nests of 500 <div>: the deepest and largest a snapshot under both limits can be: parsed

Goals (issue 19): the trace scored in under 400 MB; a DOM snapshot parsed in under 10x its size over
the baseline where lexbor allows it (lexbor keeps ~600 bytes an element, so element-dense snapshots
cannot: their bound is the element limit); every case in seconds. Exit status 1 when the trace goal
is missed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_score import trajcheck_score  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GOOD = ROOT / "sample_runs" / "terms-checkbox-on"
TRACE = ROOT / "tests" / "fixtures" / "playwright_trace" / "notes-trace"
MB = 1024 * 1024


def _dom_run(dest: Path, html: str) -> int:
    run = shutil.copytree(GOOD, dest)
    meta = json.loads((run / "run.json").read_text())
    meta["run_id"] = dest.name
    (run / "run.json").write_text(json.dumps(meta))
    steps = [json.loads(l) for l in (run / "steps.jsonl").read_text().splitlines() if l.strip()]
    rel = next(s["page"]["dom_after"] for s in steps if (s.get("page") or {}).get("dom_after"))
    (run / rel).write_text(html)
    return len(html.encode())


def _trace_bomb(dest: Path, members: int = 9, size: int = 200 * MB) -> int:
    import trajcheck.readers.discovery  # noqa: F401  (registers the adapters; importing one first is circular)
    from trajcheck.readers.adapters.playwright import reader as pt

    first, _ = pt.READER.read(TRACE, "notes-trace")
    used = sorted({f for s in first.steps for f in (s.frame_pre, s.frame_post) if f})[:members]
    shutil.copytree(TRACE, dest)
    src = dest / "trace.zip"
    with zipfile.ZipFile(src) as z:
        old = [(i.filename, z.read(i)) for i in z.infolist()]
    zeros = bytes(size)
    with zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data in old:
            z.writestr(name, zeros if name in used else data)
    return src.stat().st_size


def build(case: str, root: Path) -> str:
    """Make the case's folder; a description of its hostile input."""
    shutil.copytree(GOOD, root / "good")
    if case == "baseline":
        return "terms-checkbox-on alone"
    if case == "trace-bomb":
        n = _trace_bomb(root / "bomb")
        return f"trace.zip of {n / MB:.1f} MB, nine members of 200 MB each"
    if case == "dom-flat":
        item = '<div class="item">a line of text, as a long flat list shows it, 84 bytes</div>'
        n = _dom_run(root / "flat", "<html><body>" + item * 370_000 + "</body></html>")
        return f"{n / MB:.1f} MB snapshot, 370,000 elements"
    if case == "dom-big":
        item = '<p class="item">' + "a paragraph of text " * 17 + "</p>"
        n = _dom_run(root / "big", "<html><body>" + item * (31 * MB // len(item)) + "</body></html>")
        return f"{n / MB:.1f} MB snapshot, {31 * MB // len(item):,} paragraphs"
    if case == "dom-wide":
        n = _dom_run(root / "wide", "<html><body>" + '<button class="b">Click</button>' * 99_000 + "</body></html>")
        return f"{n / MB:.1f} MB snapshot, 99,000 buttons"
    if case == "dom-deep":
        n = _dom_run(root / "deep", "<html><body>" + "<div>" * 80_000 + "x" + "</div>" * 80_000 + "</body></html>")
        return f"{n / MB:.1f} MB snapshot, 80,000 nested divs"
    if case == "dom-at-limit":
        unit = "<div>" * 500 + "x" + "</div>" * 500
        n = _dom_run(root / "limit", "<html><body>" + unit * 199 + "</body></html>")
        return f"{n / MB:.1f} MB snapshot of 199 nests 500 deep (99,500 elements)"
    raise SystemExit(f"unknown case {case}")


CASES = ["baseline", "trace-bomb", "dom-flat", "dom-big", "dom-wide", "dom-deep", "dom-at-limit"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=CASES, choices=CASES)
    ap.add_argument("--keep", type=Path, default=None)
    a = ap.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory(prefix="trajcheck-hostile-") as tmp:
        base = a.keep or Path(tmp)
        print(f"{'case':13} {'seconds':>8} {'peak MiB':>9}  input / trajcheck's summary")
        for case in a.only:
            root = base / case
            what = build(case, root / "runs")
            s = trajcheck_score(root / "runs", root / "ledger", "--jobs", "1")
            peak = s.maxrss_kib / 1024
            print(f"{case:13} {s.seconds:8.2f} {peak:9.0f}  {what}\n{'':33}{s.summary}", flush=True)
            with __import__("subprocess").Popen([sys.executable, "-c", "from trajcheck.cli.main import main; main()",
                                                 "query", str(root / "ledger"), "select run_id, status, warnings "
                                                 "from runs where run_id <> 'good'", "--format", "json"],
                                                stdout=-1, text=True) as q:
                rows = json.loads(q.communicate()[0] or "[]")
            for r in rows:
                slugs = sorted({w.rsplit("[", 1)[-1].rstrip("]") for w in r["warnings"] or []})
                print(f"{'':33}{r['run_id']}: {r['status']}, warnings {', '.join(slugs) or '-'}")
            if case == "trace-bomb" and peak >= 400:
                ok = False
                print(f"{'':33}GOAL MISSED: {peak:.0f} MiB (goal: under 400)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
