"""benchmarks/RESULTS.md: each benchmark's `--write-results` adds its output there, newest first."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
_HEAD = "# Benchmark results\n"


def record(script: str, argv: list[str], lines: list[str]) -> Path:
    """Add ``lines`` (a benchmark's output), with the command that printed them and the time, at the top
    of RESULTS.md. Returns the file's path."""
    cmd = shlex.join(["python", f"benchmarks/{script}", *argv])
    entry = f"`{cmd}` on {time.strftime('%Y-%m-%d %H:%M %Z')}:\n\n```\n" + "\n".join(lines) + "\n```\n"
    old = RESULTS.read_text("utf-8") if RESULTS.exists() else ""
    body = old[len(_HEAD):].lstrip("\n") if old.startswith(_HEAD) else old
    RESULTS.write_text(_HEAD + "\n" + entry + ("\n" + body if body else ""), "utf-8")
    return RESULTS
