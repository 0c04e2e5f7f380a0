"""Seeded mutation fuzzing (issue 17): sample runs mutated (removed keys, odd types, huge and integral
floats, 1e999 and NaN, lone surrogates, deep nesting, truncated lines, flipped and truncated frame and
archive bytes, deep DOM snapshots) and scored in batches into one ledger each. For every batch: no
exception escapes, every run has exactly one row, every invalid row names its problem. A modest number
of cases here; `python benchmarks/fuzz_runs.py` runs thousands (see its docstring)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import fuzz_runs  # noqa: E402


@pytest.mark.realruns
@pytest.mark.parametrize("seed", [11, 23, 37])
def test_mutated_runs_never_cost_the_batch(tmp_path, seed):
    failures, slugs = fuzz_runs.run_fuzz(cases=24, batch=24, seed=seed, jobs=1, keep=tmp_path, log=lambda m: None)
    assert failures == []
    assert slugs["(runs ok)"] and slugs["(runs invalid)"]  # the mutations make both kinds of run


@pytest.mark.realruns
def test_the_fuzzer_mutates_a_run_of_every_reader():
    """Issue 27: every reader's logs are fuzzed, not only the native format's: the fuzzer's sources, unmutated,
    are read by every reader (WebVoyager and BrowserGym runs come from ../shared/realruns, when it is there)."""
    from trajcheck.readers import discovery
    from trajcheck.readers.adapters import ALL

    refs, problems = discovery.discover(fuzz_runs.adapter_sources() + [fuzz_runs.TRACE])
    assert not problems
    have = {r.reader for r in refs}
    want = {r.name for r in ALL}
    if not fuzz_runs.SHARED.is_dir():
        want -= {"webvoyager", "browsergym"}  # their runs are the real ones in ../shared only
    assert want <= have, f"no fuzzed run for {sorted(want - have)}"


@pytest.mark.realruns
@pytest.mark.parametrize("seed", [101, 202])
def test_mutated_logs_of_other_harnesses_never_cost_the_batch(tmp_path, seed):
    sources = fuzz_runs.adapter_sources()
    runs = fuzz_runs.make_batch(tmp_path / "batch", seed, 24, sources)
    failures, slugs = fuzz_runs.check_batch(tmp_path / "batch", runs, tmp_path / "L", 1)
    assert failures == []
    assert not any(s.startswith("internal_error") for s in slugs), slugs
    assert slugs["(runs ok)"] and slugs["(runs invalid)"]


def _jsonl_copy(src: Path, dest: Path, key: str, head: list[str]) -> Path:
    """A JSONL copy of a JSON transcript: its request's ``head`` fields on one line (when kept), then one line per
    element of ``key``."""
    import json

    data = json.loads(next(src.glob("*.json")).read_text())
    dest.mkdir(parents=True)
    lines = ([{k: data[k] for k in head if k in data} | ({"input": []} if key == "items" else {})] if head else [])
    (dest / "transcript.jsonl").write_text("".join(json.dumps(v) + "\n" for v in lines + data[key]))
    return dest


@pytest.mark.realruns
def test_mutated_logs_read_streamed_never_cost_the_batch(tmp_path, monkeypatch):
    """Issue 27: with the stream threshold at 0, every JSON and JSONL transcript and every browser-use history is
    read streamed (an item or a line at a time): mutated, they give problems, never tracebacks."""
    from trajcheck.readers.kit import stream

    monkeypatch.setattr(stream, "STREAM_BYTES", 0)
    fix = ROOT / "tests" / "fixtures"
    sources = [p for p in fuzz_runs.adapter_sources() if any(p.glob("*.json")) and not (p / "run.json").exists()]
    sources += [_jsonl_copy(fix / "anthropic" / "feedback-2x", tmp_path / "src" / "anthropic-jsonl", "messages", []),
                _jsonl_copy(fix / "openai" / "cua-newsletter", tmp_path / "src" / "openai-jsonl", "items",
                            ["model", "tools"])]
    runs = fuzz_runs.make_batch(tmp_path / "batch", 404, 30, sources)
    failures, slugs = fuzz_runs.check_batch(tmp_path / "batch", runs, tmp_path / "L", 1)
    assert failures == []
    assert not any(s.startswith("internal_error") for s in slugs), slugs
    assert slugs["(runs ok)"] and slugs["(runs invalid)"]
