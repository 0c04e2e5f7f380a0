"""A desktop-like corpus for the OCR benchmarks (issue 48): real desktop screenshots (the ScreenAgent and Anthropic
computer-use fixtures of ``tests/fixtures/real``: VS Code, GIMP and macOS System Settings at 1024x768) made into
runs of trajcheck's own format, each with a contract written from its task's text alone (words the task names,
on any frame, on the final one, in the title band), as a new user writes one before looking at a run.

    python benchmarks/desktop_runs.py OUT [--copies N]

Nothing here is committed as a fixture: the benchmark writes the runs into a temporary folder. ``--copies``
writes each run N times under other ids (the same frames: a batch of reruns of one task).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "fixtures" / "real"


def _any(text: str, **more: Any) -> dict[str, Any]:
    return {"type": "text_present", "text": text, "frame": "any", **more}


#: Each run: its frames (in the order they were taken), its goal, the actions between them, its contract's checks.
RUNS: dict[str, dict[str, Any]] = {
    "screenagent-fix-code": {
        "frames": sorted((REAL / "screenagent" / "08a2def941d942ffb542ba0ba3d8aa99" / "images").glob("*.jpg")),
        "goal": "Find the wrong line of code and fix it",
        "actions": [{"type": "CLICK", "x": 290, "y": 134}, {"type": "TYPE", "text": ")"},
                    {"type": "KEY_PRESS", "keys": "ctrl+s"}, {"type": "KEY_PRESS", "keys": "Enter"}],
        "checks": [_any("print(str1.upper())"), {"type": "text_present", "text": "study.py", "area": "title"},
                   {"type": "text_absent", "text": "SyntaxError"}, _any("Visual Studio Code", area="title"),
                   {"type": "text_matches", "pattern": "line \\d+", "frame": "any"}],
    },
    "screenagent-gimp-brightness": {
        "frames": sorted((REAL / "screenagent" / "1358cf45f029484ebd3db124bda80159" / "images").glob("*.jpg")),
        "goal": "Increase brightness of an image using GIMP",
        "actions": [{"type": "CLICK", "x": 314, "y": 33}, {"type": "CLICK", "x": 388, "y": 250},
                    {"type": "CLICK", "x": 500, "y": 400}, {"type": "CLICK", "x": 600, "y": 500, "element": "OK"}],
        "checks": [_any("Brightness-Contrast"), _any("GIMP", area="title"),
                   {"type": "text_present", "text": "Brightness"}, _any("Brightness", area="title"),
                   {"type": "text_matches", "pattern": "[Bb]rightness", "frame": "any"}],
    },
    "anthropic-bluetooth": {
        "frames": [REAL / "anthropic" / "cs715-session-3" / "screenshots" / n for n in
                   ("screenshot_toolu_014PqpSmUHdP7HQyJuQxzt7h.png", "screenshot_toolu_015CnVW2aFLNHY7fqmn4cAiu.png")],
        "goal": "Turn on bluetooth",
        "actions": [{"type": "CLICK", "x": 211, "y": 306}],
        "checks": [{"type": "text_present", "text": "Bluetooth"}, _any("Bluetooth", area="title"),
                   {"type": "text_absent", "text": "Bluetooth is off", "frame": "any"}, _any("System Settings")],
    },
    "anthropic-books-alias": {
        "frames": [REAL / "anthropic" / "cs715-session-15" / "screenshots" / n for n in
                   ("screenshot_toolu_017h8tkWXYEccTUAW4wJc8a6.png", "screenshot_toolu_01B5hjdsFhHfZGM5cy5i1A2g.png")],
        "goal": "Create an alias for Apple Books on the Desktop.",
        "actions": [{"type": "KEY_PRESS", "keys": "cmd+l"}],
        "checks": [_any("Books alias"), {"type": "text_present", "text": "Finder", "area": "title"},
                   _any("Desktop")],
    },
}


def write(out: Path, copies: int = 1) -> list[str]:
    """Write the corpus's runs under ``out`` (each ``copies`` times); their ids."""
    ids = []
    for name, spec in RUNS.items():
        for k in range(copies):
            rid = name if copies == 1 else f"{name}-{k + 1}"
            d = out / rid
            (d / "frames").mkdir(parents=True, exist_ok=True)
            rels = []
            for i, src in enumerate(spec["frames"]):
                rel = f"frames/{i:03d}{src.suffix.lower()}"
                shutil.copyfile(src, d / rel)
                rels.append(rel)
            run = {"format": "trajcheck.run/1", "run_id": rid, "task_id": name, "goal": spec["goal"],
                   "agent": {"name": "desktop-fixture", "model": "recorded"}, "config": {},
                   "screen": {"width": 1024, "height": 768}, "started_at": "2026-12-01T12:00:00Z",
                   "outcome": {"status": "done"}}
            (d / "run.json").write_text(json.dumps(run, indent=1))
            steps = [{"index": i + 1, "action": a, "reasoning": "", "frames": {"pre": rels[i], "post": rels[i + 1]},
                      "executor": {"ok": True, "error": None}} for i, a in enumerate(spec["actions"])]
            (d / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
            contract = {"format": "trajcheck.contract/1", "name": spec["goal"], "checks": spec["checks"]}
            (d / "contract.json").write_text(json.dumps(contract, indent=1))
            ids.append(rid)
    return ids


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--copies", type=int, default=1)
    args = ap.parse_args()
    print("\n".join(write(args.out, args.copies)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
