"""One long run of N steps made from the sample runs' frames and steps (issue 51: runs of hundreds of steps).

    python benchmarks/long_run.py DEST --steps 500 [--same-frames] [--no-contract]

Writes ``DEST`` (which must not exist), a run in trajcheck's own format: the steps of the sample runs in
sample_runs/ recorded at 1280x800 and scale 1 (sorted by name, round-robin, as many passes as it takes),
chained one after another and numbered 1..N, each with its frames and DOM snapshots copied under a name of its
own. A DONE or FAIL step is skipped but at the end: the run ends on the N-th step (outcome ``max_steps``), as a
long run cut off by its step limit does. The steps' URLs, titles, reasoning and recorded verdicts are kept.

Every copy of a sample run (the k-th time its steps are chained) has its frames re-encoded in their own format
after painting a 16x16 block in the top-left corner in a colour of its own (benchmarks/corpus.py's
perturbation), so no cache keyed on pixels or bytes serves one copy from another, while within a copy a step
recorded with no pixel change keeps identical frames. The block moves one cell of the 32x32 thumbnail at most,
so the states (analyzers/states.py) see a screen met again as the same screen: the run comes back to pages and
screens as long runs do. ``--same-frames`` copies the files as they are (faster to build).

Unless ``--no-contract``, the run gets a rubric contract (contract.json) over the URLs that the chained sample
runs' own contracts ask for: one ``url_matches`` check each, all under one ``all`` node, the checkpoints that
``trajcheck timeline --phases`` places. Evaluated on the final state, most of them fail at the end; the steps
where each first held are in the ledger's URLs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import _palette, _perturb, sample_runs  # noqa: E402

#: Actions that end a run: skipped but for the last step.
ENDING = ("DONE", "FAIL")


def sources(root: Path | None = None) -> list[tuple[Path, dict[str, Any], list[dict[str, Any]]]]:
    """The sample runs chained: those recorded at 1280x800 and device scale 1, with their run.json and steps."""
    out = []
    for d in sample_runs(root) if root else sample_runs():
        meta = json.loads((d / "run.json").read_text("utf-8"))
        scale = (meta.get("recorder") or {}).get("device_scale_factor", 1)
        if meta.get("screen") != {"width": 1280, "height": 800} or scale != 1 or not (d / "steps.jsonl").is_file():
            continue
        steps = [json.loads(x) for x in (d / "steps.jsonl").read_text("utf-8").splitlines() if x.strip()]
        out.append((d, meta, steps))
    return out


def _copy(src: Path, dst: Path, colours: list[tuple[int, int, int]] | None, done: dict[Path, str],
          rel: str) -> str:
    """``src`` copied once to ``dst`` (perturbed with ``colours`` unless None); the path relative to the run."""
    if src not in done:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        if colours is not None:
            _perturb(dst, colours)
        done[src] = rel
    return done[src]


def _step(s: dict[str, Any], index: int, d: Path, dest: Path, prefix: str,
          colours: list[tuple[int, int, int]] | None, done: dict[Path, str]) -> dict[str, Any]:
    """A sample step renumbered, its frames and DOM snapshots copied under ``prefix``."""
    s = json.loads(json.dumps(s))
    s["index"] = index
    for k, v in (s.get("frames") or {}).items():
        if v:
            s["frames"][k] = _copy(d / v, dest / "frames" / f"{prefix}{Path(v).name}", colours, done,
                                   f"frames/{prefix}{Path(v).name}")
    page = s.get("page") or {}
    for k in ("dom_before", "dom_after"):
        if page.get(k):
            page[k] = _copy(d / page[k], dest / "dom" / f"{prefix}{Path(page[k]).name}", None, done,
                            f"dom/{prefix}{Path(page[k]).name}")
    return s


def build_long_run(dest: Path, n_steps: int, same_frames: bool = False, contract: bool = True,
                   seed: int = 1) -> Path:
    """Write a run of ``n_steps`` steps at ``dest`` (see the module docstring); return ``dest``."""
    runs = sources()
    if not runs or not any(s for _, _, s in runs):
        raise SystemExit("no sample runs at 1280x800 to chain (sample_runs/)")
    dest.mkdir(parents=True)
    palette = _palette(seed)
    steps: list[dict[str, Any]] = []
    patterns: dict[str, None] = {}
    copy = 0
    while len(steps) < n_steps:
        for d, _, src_steps in runs:
            prefix, done = f"c{copy:03d}-{d.name}-", {}
            colours = None if same_frames else [palette[copy % 512], palette[(copy // 512) % 512]]
            copy += 1
            for s in src_steps:
                if len(steps) == n_steps:
                    break
                last = len(steps) == n_steps - 1
                if str((s.get("action") or {}).get("type", "")).upper() in ENDING and not last:
                    continue
                steps.append(_step(s, len(steps) + 1, d, dest, prefix, colours, done))
            c = d / "contract.json"
            if c.is_file():
                for chk in json.loads(c.read_text("utf-8")).get("checks", []):
                    if chk.get("type") == "url_matches":
                        patterns[chk["pattern"]] = None
            if len(steps) == n_steps:
                break
    first = runs[0][1]
    meta = {"format": "trajcheck.run/1", "run_id": dest.name, "task_id": f"long-run-{n_steps}",
            "goal": f"A long run of {n_steps} steps chained from the sample runs' steps (benchmarks/long_run.py).",
            "agent": first.get("agent"), "config": {"perceptual_verifier": True}, "screen": first["screen"],
            "started_at": first.get("started_at"), "outcome": {"status": "max_steps"}}
    (dest / "run.json").write_text(json.dumps(meta, indent=2) + "\n", "utf-8")
    (dest / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps), "utf-8")
    if contract and patterns:
        checks = [{"type": "url_matches", "name": "reached " + p.strip("/^$").replace(chr(92), ""), "pattern": p}
                  for p in patterns]
        (dest / "contract.json").write_text(json.dumps(
            {"format": "trajcheck.contract/1", "name": "every sample page reached", "checks": checks,
             "rubric": {"all": [c["name"] for c in checks], "name": "every sample page reached"}}, indent=2)
            + "\n", "utf-8")
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dest", type=Path)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--same-frames", action="store_true", help="copy the frames as they are (no perturbation)")
    ap.add_argument("--no-contract", action="store_true", help="write no contract.json")
    args = ap.parse_args()
    run = build_long_run(args.dest, args.steps, args.same_frames, not args.no_contract)
    frames = len(list((run / "frames").iterdir()))
    print(f"{args.steps} steps, {frames} frame files -> {run}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
