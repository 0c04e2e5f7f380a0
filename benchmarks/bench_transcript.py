"""Large logs with inline screenshots: memory and frame rate of `trajcheck score` against the same run in trajcheck's
own format, measured in the same run (issue 27, target: under 1 GiB, at least 0.7x the rate).

    python benchmarks/bench_transcript.py [--steps N] [--repeat K] [--cases json,jsonl,browser-use] [--write-results]

Steps:

 1. build, in a temporary directory, one run of N steps (default 300) in each shape asked for (all three by
    default), every screenshot inline as base64 PNG:
    * ``json``: an Anthropic computer-use transcript (``messages.json``): each step an assistant turn with a
      `left_click` and a user turn whose tool_result carries the screenshot after it;
    * ``jsonl``: the same messages as JSONL, one a line (``messages.jsonl``);
    * ``browser-use``: a browser-use history (``AgentHistoryList.json``): each item a click and the screenshot
      before it in ``state.screenshot``, then a `done` item with the last screenshot.
    The screenshots are the sample runs' Chromium frames, scaled to 2560x1600, each given a small pixel change of
    its own (no two alike) and a 480x480 block of noise (a picture on the page, which no PNG filter compresses),
    so that a log is about 1 MiB a step, as busy 2x captures are;
 2. the same run in trajcheck's own format: run.json, steps.jsonl, the same PNG bytes as files;
 3. `trajcheck score` of each into a new ledger (a subprocess, best of --repeat K passes, the shapes interleaved
    within a pass), with the peak RSS of its largest process (VmHWM sampled from /proc, as
    benchmarks/bench_score.py does).

Printed: each log's size, each score's seconds, frames/s and peak RSS, and for each shape the two targets: peak
RSS under 1 GiB, and its frame rate at least 0.7x the native run's.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_score import Scored, compile_trajcheck, trajcheck_score  # noqa: E402
from corpus import sample_runs  # noqa: E402

WIDTH, HEIGHT = 2560, 1600


def frames(n: int) -> list[bytes]:
    """n distinct 2560x1600 PNGs made from the sample runs' frames."""
    src = [p for run in sample_runs() for p in sorted((run / "frames").glob("*.png"))][:40]
    out = []
    for i in range(n):
        img = Image.open(src[i % len(src)]).convert("RGB").resize((WIDTH, HEIGHT), Image.Resampling.BILINEAR)
        px = np.asarray(img).copy()
        rng = np.random.default_rng(i)
        px[rng.integers(0, HEIGHT, 400), rng.integers(0, WIDTH, 400)] ^= np.uint8(i % 251 + 1)  # its own change
        # a photo-like block no PNG filter compresses (a video or a picture on the page): real 2x captures of
        # busy pages are 0.5-1.5 MB, the sample pages alone compress to 0.1 MB
        px[100:580, 1900:2380] = rng.integers(0, 256, (480, 480, 3), dtype=np.uint8)
        buf = io.BytesIO()
        Image.fromarray(px).save(buf, format="PNG", compress_level=1)
        out.append(buf.getvalue())
    return out


CASES = ("json", "jsonl", "browser-use")


def _point(i: int) -> tuple[int, int]:
    return 100 + (i * 37) % 1000, 100 + (i * 53) % 600


def _messages(shots: list[bytes], steps: int) -> Iterator[dict]:
    """The transcript's messages, one at a time (the benchmark never holds the whole log either)."""
    yield {"role": "user", "content": "Work through the form."}
    for i in range(steps):
        x, y = _point(i)
        yield {"role": "assistant", "content": [
            {"type": "text", "text": f"Step {i}: click the field."},
            {"type": "tool_use", "id": f"toolu_{i:04d}", "name": "computer",
             "input": {"action": "left_click", "coordinate": [x, y]}}]}
        yield {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i:04d}", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": base64.b64encode(shots[i + 1]).decode()}}]}]}


def write_native(root: Path, shots: list[bytes], steps: int) -> Path:
    nat = root / "native" / "big-run"
    (nat / "frames").mkdir(parents=True)
    lines = []
    for i in range(steps):
        x, y = _point(i)
        (nat / "frames" / f"{i:04d}.png").write_bytes(shots[i])
        lines.append(json.dumps({"index": i, "action": {"type": "CLICK", "x": x, "y": y},
                                 "reasoning": f"Step {i}: click the field.",
                                 "frames": {"pre": f"frames/{i:04d}.png", "post": f"frames/{i + 1:04d}.png"}}))
    (nat / "frames" / f"{steps:04d}.png").write_bytes(shots[steps])
    (nat / "steps.jsonl").write_text("\n".join(lines) + "\n")
    (nat / "run.json").write_text(json.dumps({"format": "trajcheck.run/1", "run_id": "big-run",
                                              "screen": {"width": 1280, "height": 800}}))
    return nat.parent


def write_case(root: Path, case: str, shots: list[bytes], steps: int) -> tuple[Path, int]:
    """The run of one shape (see the module's docstring) and its log's size in bytes."""
    run = root / case / "big-run"
    run.mkdir(parents=True)
    tools = [{"type": "computer_20250124", "name": "computer", "display_width_px": 1280, "display_height_px": 800}]
    if case == "json":
        log = run / "messages.json"
        with open(log, "w") as f:  # written piece by piece: the benchmark holds no 300 MB string
            f.write(json.dumps({"model": "claude-sonnet-4-5", "tools": tools})[:-1] + ', "messages": [')
            for k, m in enumerate(_messages(shots, steps)):
                f.write(("," if k else "") + json.dumps(m))
            f.write("]}")
    elif case == "jsonl":
        log = run / "messages.jsonl"
        with open(log, "w") as f:
            for m in _messages(shots, steps):
                f.write(json.dumps(m) + "\n")
    elif case == "browser-use":
        log = run / "AgentHistoryList.json"
        with open(log, "w") as f:
            f.write('{"task": "Work through the form.", "history": [')
            for i in range(steps + 1):
                x, y = _point(i)
                action = {"click": {"index": i, "coordinate_x": 2 * x, "coordinate_y": 2 * y}} if i < steps \
                    else {"done": {"text": "done", "success": True}}
                f.write(("," if i else "") + json.dumps({
                    "model_output": {"thinking": f"Step {i}: click the field.", "action": [action]},
                    "result": [{"is_done": i == steps, "success": True if i == steps else None}],
                    "state": {"url": "https://form.example/", "title": "Form",
                              "screenshot": base64.b64encode(shots[i]).decode()}}))
            f.write("]}")
    else:
        raise ValueError(f"unknown case {case!r}: one of {', '.join(CASES)}")
    return run.parent, log.stat().st_size


def main(argv: list[str] | None = None) -> list[str]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    compile_trajcheck()
    out: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        out.append(line)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shots = frames(args.steps + 1)
        corpora = {"native": write_native(root, shots, args.steps)}
        for case in cases:
            corpora[case], size = write_case(root, case, shots, args.steps)
            say(f"{case}: {args.steps} steps, {size / 2**20:.0f} MiB of {'JSONL' if case == 'jsonl' else 'JSON'} "
                f"({size / args.steps / 2**20:.2f} MiB a step)")
        del shots
        passes: dict[str, list[Scored]] = {name: [] for name in corpora}
        for k in range(args.repeat):  # interleaved: on a shared machine, a busy spell costs every shape alike
            for name, corpus in corpora.items():
                passes[name].append(trajcheck_score(corpus, root / f"L-{name}-{k}", "--jobs", "1"))
        runs = {}
        for name, got in passes.items():
            best = min(got, key=lambda r: r.seconds)
            s = runs[name] = Scored(best.seconds, max(r.maxrss_kib for r in got), max(r.tree_kib for r in got),
                                    best.summary)
            say(f"{name:>11}: {s.seconds:.2f} s (best of {len(got)}), {args.steps / s.seconds:.1f} steps/s, peak "
                f"RSS {s.maxrss_kib / 1024:.0f} MiB ({s.summary})")
        for case in cases:
            mem = runs[case].maxrss_kib / 1024
            rate = runs["native"].seconds / runs[case].seconds
            say(f"target: {case} peak RSS < 1024 MiB: {mem:.0f} MiB ({'met' if mem < 1024 else 'NOT met'})")
            say(f"target: {case} frame rate >= 0.70x native: {rate:.2f}x ({'met' if rate >= 0.7 else 'NOT met'})")
    if args.write_results:
        from results import record

        record("bench_transcript.py", sys.argv[1:] if argv is None else argv, out)
    return out


if __name__ == "__main__":
    main()
