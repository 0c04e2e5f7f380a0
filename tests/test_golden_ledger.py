"""Golden ledger: every row of the ledger of ``sample_runs/`` (and of ``../shared/realruns``) as committed.

Any change to a verdict, a score, a hash or a column shows up here as a named run, step and column.
A deliberate change rewrites the snapshot in the same commit, with the reason in the commit message:

    TRAJCHECK_UPDATE_GOLDEN=1 python -m pytest tests/test_golden_ledger.py

The sample-run snapshot is the rows themselves (one JSON object a line, sorted), so a diff of the
snapshot file reads as a diff of the ledger. The real runs are third parties' data and are not copied
into the project: their snapshot keeps a short digest per (run, table, column) instead, enough to
name what changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import REALRUNS, SAMPLES

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("TRAJCHECK_UPDATE_GOLDEN") == "1"

#: Columns that depend on where and when the ledger was written, not on what the runs say:
#: absolute paths, file mtimes, and the digest that covers both.
VOLATILE = frozenset({"run_path", "inputs", "input_digest"})


def _ledger_rows(paths: list[Path], tmp: Path) -> dict[str, list[dict[str, Any]]]:
    """Score ``paths`` through the library and read both tables back from the written Parquet."""
    import pyarrow.parquet as pq

    from trajcheck.store import ledger
    from trajcheck.store.manifest import read_manifest
    from trajcheck.scoring.pipeline import score_paths

    report = score_paths(paths, jobs=1)
    ledger.write(tmp, [r.run for r in report.results], [s for r in report.results for s in r.steps])
    manifest = read_manifest(tmp)
    assert manifest is not None
    out: dict[str, list[dict[str, Any]]] = {}
    for table in ("runs", "steps"):
        rows: list[dict[str, Any]] = []
        for part in manifest.parts.get(table, []):
            rows += pq.read_table(tmp / part).to_pylist()
        key = (lambda r: (r["run_id"], r["step_index"])) if table == "steps" else (lambda r: (r["run_id"],))
        out[table] = sorted(({k: v for k, v in r.items() if k not in VOLATILE} for r in rows), key=key)
    return out


def _line(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, allow_nan=True)


def _compare_rows(table: str, got: list[dict[str, Any]], want: list[dict[str, Any]]) -> list[str]:
    """Differences as 'table run[/step] column: want -> got' lines (the first 40)."""
    def key(r: dict[str, Any]) -> str:
        return f"{r['run_id']}/{r['step_index']}" if table == "steps" else str(r["run_id"])

    g = {key(r): r for r in got}
    w = {key(r): r for r in want}
    diffs = [f"{table} {k}: row missing" for k in w if k not in g]
    diffs += [f"{table} {k}: new row" for k in g if k not in w]
    for k in w.keys() & g.keys():
        for col in sorted(set(w[k]) | set(g[k])):
            if _line({"v": w[k].get(col, "<absent>")}) != _line({"v": g[k].get(col, "<absent>")}):
                diffs.append(f"{table} {k} {col}: {w[k].get(col, '<absent>')!r} -> {g[k].get(col, '<absent>')!r}")
    return sorted(diffs)[:40]


@pytest.mark.slow
def test_sample_ledger_matches_golden(tmp_path):
    rows = _ledger_rows([SAMPLES], tmp_path / "ledger")
    assert len(rows["runs"]) == len(list(SAMPLES.glob("*/run.json")))
    for table in ("runs", "steps"):
        path = GOLDEN / f"sample_runs.{table}.jsonl"
        text = "".join(_line(r) + "\n" for r in rows[table])
        if UPDATE:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text)
            continue
        assert path.is_file(), f"{path} is missing: write it with TRAJCHECK_UPDATE_GOLDEN=1"
        want = [json.loads(l) for l in path.read_text().splitlines()]
        diffs = _compare_rows(table, rows[table], want)
        assert not diffs, "ledger differs from the golden snapshot (TRAJCHECK_UPDATE_GOLDEN=1 rewrites it):\n" + \
            "\n".join(diffs)
        assert text == path.read_text()  # byte for byte, column order and float text included


def _digest(values: list[Any]) -> str:
    return hashlib.blake2b(_line({"v": values}).encode(), digest_size=6).hexdigest()


def _column_digests(rows: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, str]]:
    """{table/run_id: {column: digest of that column's values over the run's rows}}."""
    out: dict[str, dict[str, str]] = {}
    for table, trows in rows.items():
        by_run: dict[str, list[dict[str, Any]]] = {}
        for r in trows:
            by_run.setdefault(r["run_id"], []).append(r)
        for run_id, rs in by_run.items():
            cols = sorted({c for r in rs for c in r})
            out[f"{table}/{run_id}"] = {c: _digest([r.get(c) for r in rs]) for c in cols}
    return out


@pytest.mark.realruns
@pytest.mark.skipif(not REALRUNS.is_dir(), reason="../shared/realruns is absent (a user's clone has none): "
                    "the real-run golden needs the recorded third-party runs beside the checkout")
def test_realruns_ledger_matches_golden(tmp_path):
    rows = _ledger_rows([REALRUNS], tmp_path / "ledger")
    got = _column_digests(rows)
    path = GOLDEN / "realruns.digests.json"
    if UPDATE:
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        return
    want = json.loads(path.read_text())
    diffs = [f"{k}: run missing" for k in want if k not in got] + [f"{k}: new run" for k in got if k not in want]
    for k in want.keys() & got.keys():
        diffs += [f"{k} {c}" for c in sorted(set(want[k]) | set(got[k])) if want[k].get(c) != got[k].get(c)]
    assert not diffs, "real-run ledger differs from the golden digests in (TRAJCHECK_UPDATE_GOLDEN=1 rewrites it):\n" \
        + "\n".join(sorted(diffs)[:60])
