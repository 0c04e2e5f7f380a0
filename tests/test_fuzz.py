"""Seeded mutation fuzzing (issue 17): sample runs mutated (removed keys, odd types, huge and integral
floats, 1e999 and NaN, lone surrogates, deep nesting, truncated lines, flipped and truncated frame and
archive bytes, deep DOM snapshots) and scored in batches into one ledger each. For every batch: no
exception escapes, every run has exactly one row, every invalid row names its problem. A modest number
of cases here; `python benchmarks/fuzz_runs.py` runs thousands (see its docstring)."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import fuzz_runs  # noqa: E402


@pytest.mark.parametrize("seed", [11, 23, 37])
def test_mutated_runs_never_cost_the_batch(tmp_path, seed):
    failures, slugs = fuzz_runs.run_fuzz(cases=24, batch=24, seed=seed, jobs=1, keep=tmp_path, log=lambda m: None)
    assert failures == []
    assert slugs["(runs ok)"] and slugs["(runs invalid)"]  # the mutations make both kinds of run
