"""Kept for the commands already written down: bench_scale.py is now bench_score.py.

    python benchmarks/bench_scale.py [--runs N] [--no-4n] [--seed S] [--write-results] ...

runs `python benchmarks/bench_score.py` with the same arguments (see its docstring:
N distinct runs, decode floor, naive loop, cold/warm/--force scoring, peak RSS for
N and 4N runs, bit identity, DuckDB over 1M step rows).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_score import main

if __name__ == "__main__":
    raise SystemExit(main())
