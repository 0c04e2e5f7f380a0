"""A benchmark corpus of N distinct runs built from the recorded runs in sample_runs/.

    python benchmarks/corpus.py DEST --runs N [--seed S]     # build one and print its size

Used by bench_score.py. Copy ``i`` (0 <= i < N) is sample run ``i % S`` (the S recorded runs
in sample_runs/, 26 today, sorted by name: round-robin), copied whole into ``DEST/<name>-c<i>``
(run.json, steps.jsonl, frames/, dom/, contract.json, reference/), with:

  * ``run_id`` in run.json set to the directory name, so every copy is its own run;
  * every image (frames/ and reference/) re-encoded with Pillow in its own format
    (PNG stays PNG, JPEG stays JPEG with the original's quantization tables,
    chroma subsampling and ICC profile) after painting a 16x16 block in the
    top-left corner whose colour is a function of the seed and of ``i``. No two
    copies share a frame, so no cache keyed on pixels, file bytes or paths can
    serve one copy from another. All images of one copy get the same colour, so
    the pixel difference between a step's pre and post frames is the recorded one:
    a step recorded with no pixel change keeps identical pre and post frames (the
    only frames of the corpus that share content, and only within one run).
    Colours come from a seeded palette of 512 (8 levels a channel, 32 apart: far
    more than JPEG's error on a flat 16x16 block, which is one MCU at 4:2:0);
    ``i`` is written in base 512, one block per digit (a second block from i=512).

Copies are written by a process pool (all cores).

The same ``--runs`` and ``--seed`` always give the same files.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
from multiprocessing import Pool
from pathlib import Path

from PIL import Image, JpegImagePlugin

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_runs"
IMAGE_EXT = (".png", ".jpg", ".jpeg", ".webp")
BLOCK = 16


def sample_runs(root: Path = SAMPLES) -> list[Path]:
    """The recorded run directories (those holding run.json), sorted by name."""
    return sorted(p.parent for p in root.glob("*/run.json"))


def _palette(seed: int) -> list[tuple[int, int, int]]:
    levels = [16 + 32 * k for k in range(8)]
    colours = [(r, g, b) for r in levels for g in levels for b in levels]
    random.Random(seed).shuffle(colours)
    return colours


def _perturb(path: Path, colours: list[tuple[int, int, int]]) -> None:
    """Paint one block per colour along the top edge and re-encode in the file's own format."""
    with Image.open(path) as img:
        fmt = img.format
        save: dict = {}
        if img.info.get("icc_profile"):
            save["icc_profile"] = img.info["icc_profile"]
        if fmt == "JPEG":
            save.update(qtables=img.quantization, subsampling=JpegImagePlugin.get_sampling(img))
        elif fmt == "WEBP":
            save.update(lossless=True)
        im = img.copy()
    if im.mode not in ("RGB", "RGBA", "L"):
        im = im.convert("RGBA" if "A" in im.getbands() or "transparency" in im.info else "RGB")
    for k, c in enumerate(colours):
        fill = c + (255,) if im.mode == "RGBA" else (sum(c) // 3 if im.mode == "L" else c)
        im.paste(fill, (k * BLOCK, 0, (k + 1) * BLOCK, BLOCK))
    buf = io.BytesIO()
    im.save(buf, format=fmt, **save)
    path.write_bytes(buf.getvalue())


def _copy(job: tuple[Path, Path, list[tuple[int, int, int]]]) -> None:
    src, run, colours = job
    shutil.copytree(src, run)
    meta = json.loads((run / "run.json").read_text("utf-8"))
    meta["run_id"] = run.name
    (run / "run.json").write_text(json.dumps(meta, indent=2) + "\n", "utf-8")
    for f in sorted(run.rglob("*")):
        if f.suffix.lower() in IMAGE_EXT and f.is_file():
            _perturb(f, colours)


def build_corpus(dest: Path, n: int, seed: int, source: Path = SAMPLES, procs: int | None = None) -> list[Path]:
    """Write N distinct runs under ``dest`` (which must not exist); return their directories."""
    sources = sample_runs(source)
    if not sources:
        raise SystemExit(f"no runs (directories with run.json) under {source}")
    palette = _palette(seed)
    dest.mkdir(parents=True)
    jobs = []
    for i in range(n):
        src = sources[i % len(sources)]
        digits, rest = [], i
        while True:  # i in base 512, one colour block per digit
            digits.append(palette[rest % 512])
            rest //= 512
            if not rest:
                break
        jobs.append((src, dest / f"{src.name}-c{i:05d}", digits))
    with Pool(procs or os.cpu_count() or 1) as pool:
        pool.map(_copy, jobs, chunksize=1)
    return [run for _, run, _ in jobs]


def load_runs(root: Path) -> list[tuple[Path, dict, list[dict]]]:
    """Every run under ``root``: (directory, run.json, steps), sorted by directory."""
    out = []
    for meta in sorted(root.glob("**/run.json")):
        d = meta.parent
        steps = [json.loads(l) for l in (d / "steps.jsonl").read_text("utf-8").splitlines() if l.strip()]
        out.append((d, json.loads(meta.read_text("utf-8")), steps))
    return out


def distinct_frames(runs: list[tuple[Path, dict, list[dict]]]) -> list[Path]:
    """Every frame file a step names (pre or post), once, in step order."""
    seen: dict[Path, None] = {}
    for d, _, steps in runs:
        for s in steps:
            for k in ("pre", "post"):
                f = (s.get("frames") or {}).get(k)
                if f:
                    seen[d / f] = None
    return list(seen)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dest", type=Path)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    build_corpus(args.dest, args.runs, args.seed)
    runs = load_runs(args.dest)
    print(f"{len(runs)} runs, {sum(len(s) for _, _, s in runs)} steps, {len(distinct_frames(runs))} distinct frames "
          f"-> {args.dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
