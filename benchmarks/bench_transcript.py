"""A large transcript with inline screenshots: memory and frame rate of `trajcheck score` against the same run
in trajcheck's own format, measured in the same run (issue 27, target: under 1 GiB, at least 0.7x the rate).

    python benchmarks/bench_transcript.py [--steps N] [--repeat K] [--write-results]

Steps:

 1. build, in a temporary directory, one Anthropic computer-use transcript of N steps (default 300): each
    step an assistant turn with a `left_click` and a user turn whose tool_result carries the screenshot after
    it, inline as base64 PNG. The screenshots are the sample runs' Chromium frames, scaled to 2560x1600, each
    given a small pixel change of its own (no two alike) and a 480x480 block of noise (a picture on the page,
    which no PNG filter compresses), so that the transcript is about 1 MiB a step, as busy 2x captures are;
 2. the same run in trajcheck's own format: run.json, steps.jsonl, the same PNG bytes as files;
 3. `trajcheck score` of each into a new ledger (a subprocess, best of --repeat K), with the peak RSS of its
    largest process (VmHWM sampled from /proc, as benchmarks/bench_score.py does).

Printed: the transcript's size, each score's seconds, frames/s and peak RSS, and the two targets: peak RSS
of the transcript under 1 GiB, and its frame rate at least 0.7x the native run's.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_score import best_score, compile_trajcheck  # noqa: E402
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


def write_runs(root: Path, steps: int) -> tuple[Path, Path, int]:
    """The transcript run and the native run of the same steps; the transcript's size in bytes."""
    shots = frames(steps + 1)
    tr, nat = root / "transcript" / "big-run", root / "native" / "big-run"
    tr.mkdir(parents=True)
    (nat / "frames").mkdir(parents=True)
    tools = [{"type": "computer_20250124", "name": "computer", "display_width_px": 1280, "display_height_px": 800}]
    with open(tr / "messages.json", "w") as f:  # written piece by piece: the benchmark holds no 300 MB string
        f.write(json.dumps({"model": "claude-sonnet-4-5", "tools": tools})[:-1] + ', "messages": [')
        f.write(json.dumps({"role": "user", "content": "Work through the form."}))
        lines = []
        for i in range(steps):
            x, y = 100 + (i * 37) % 1000, 100 + (i * 53) % 600
            f.write("," + json.dumps({"role": "assistant", "content": [
                {"type": "text", "text": f"Step {i}: click the field."},
                {"type": "tool_use", "id": f"toolu_{i:04d}", "name": "computer",
                 "input": {"action": "left_click", "coordinate": [x, y]}}]}))
            f.write("," + json.dumps({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i:04d}",
                                      "content": [{"type": "image", "source": {
                                          "type": "base64", "media_type": "image/png",
                                          "data": base64.b64encode(shots[i + 1]).decode()}}]}]}))
            (nat / "frames" / f"{i:04d}.png").write_bytes(shots[i])
            lines.append(json.dumps({"index": i, "action": {"type": "CLICK", "x": x, "y": y},
                                     "reasoning": f"Step {i}: click the field.",
                                     "frames": {"pre": f"frames/{i:04d}.png", "post": f"frames/{i + 1:04d}.png"}}))
        f.write("]}")
    (nat / "frames" / f"{steps:04d}.png").write_bytes(shots[steps])
    (nat / "steps.jsonl").write_text("\n".join(lines) + "\n")
    (nat / "run.json").write_text(json.dumps({"format": "trajcheck.run/1", "run_id": "big-run",
                                              "screen": {"width": 1280, "height": 800}}))
    return tr.parent, nat.parent, (tr / "messages.json").stat().st_size


def main(argv: list[str] | None = None) -> list[str]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--write-results", action="store_true")
    args = ap.parse_args(argv)
    compile_trajcheck()
    out: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        out.append(line)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        transcript, native, size = write_runs(root, args.steps)
        say(f"transcript: {args.steps} steps, {size / 2**20:.0f} MiB of JSON ({size / args.steps / 2**20:.2f} MiB a step)")
        runs = {}
        for name, corpus in (("native", native), ("transcript", transcript)):
            runs[name] = best_score(corpus, [root / f"L-{name}-{k}" for k in range(args.repeat)], "--jobs", "1")
            s = runs[name]
            say(f"{name:>10}: {s.seconds:.2f} s, {args.steps / s.seconds:.1f} steps/s, peak RSS "
                f"{s.maxrss_kib / 1024:.0f} MiB ({s.summary})")
        mem = runs["transcript"].maxrss_kib / 1024
        rate = runs["native"].seconds / runs["transcript"].seconds
        say(f"target: transcript peak RSS < 1024 MiB: {mem:.0f} MiB ({'met' if mem < 1024 else 'NOT met'})")
        say(f"target: transcript frame rate >= 0.70x native: {rate:.2f}x ({'met' if rate >= 0.7 else 'NOT met'})")
    if args.write_results:
        from results import record

        record("bench_transcript.py", sys.argv[1:] if argv is None else argv, out)
    return out


if __name__ == "__main__":
    main()
