"""Each judge's verdict on a run, from the judgments a ledger records (``runs.judgments``, ``score --judgments``) or
a judge's files: the majority of the judge's samples, a tie no verdict. What ``trajcheck judges``
(:mod:`trajcheck.queries.judges`), the gate's ``--max-judge-false-success`` and ``compare --outcome judge:NAME``
count a judge's verdicts by; it imports no other query, so each of them may import it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..base.errors import UsageError
from ..store import ledger


@dataclass
class Entry:
    """One judgment of a run by a judge, from the ledger (``score --judgments``) or a ``--judgments`` path."""

    judge: str
    run_id: str
    verdict: str
    source: str
    sample: str | None = None
    cost_usd: float | None = None
    tokens: int | None = None
    score: float | None = None
    process_score: float | None = None
    cited: list[dict[str, Any]] = field(default_factory=list)


def entries_from_ledger(runs: list[dict[str, Any]]) -> list[Entry]:
    """The judgments of runs rows (``run_id``, ``judgments``), one entry each."""
    out = []
    for r in runs:
        for j in json.loads(r["judgments"]) if r.get("judgments") else []:
            out.append(Entry(j["judge"], r["run_id"], j["verdict"], j.get("source") or "", j.get("sample"),
                             j.get("cost_usd"), j.get("tokens"), j.get("score"), j.get("process_score"),
                             j.get("cited") or []))
    return out


def dedupe(entries: list[Entry]) -> list[Entry]:
    """One entry per judge, run, sample and source (a file given to both ``score`` and ``judges`` counts once)."""
    seen: dict[tuple[str, str, str | None, str], Entry] = {}
    for e in entries:
        seen.setdefault((e.judge, e.run_id, e.sample, e.source), e)
    return sorted(seen.values(), key=lambda e: (e.judge, e.run_id, e.sample or "", e.source))


def verdicts(entries: list[Entry]) -> dict[str, dict[str, bool | None]]:
    """Each judge's verdict per run: the majority of its samples (a tie is no verdict)."""
    votes: dict[str, dict[str, list[bool]]] = {}
    for e in entries:
        votes.setdefault(e.judge, {}).setdefault(e.run_id, []).append(e.verdict == "pass")
    out: dict[str, dict[str, bool | None]] = {}
    for judge, runs in votes.items():
        out[judge] = {rid: (None if 2 * sum(v) == len(v) else 2 * sum(v) > len(v)) for rid, v in runs.items()}
    return out


def run_verdicts(judgments: str | None) -> dict[str, bool | None]:
    """Each judge's verdict on one run from its ``runs.judgments`` (JSON): the majority of the judge's samples,
    True a success, None a tie; empty for a run no judge judged."""
    entries = dedupe(entries_from_ledger([{"run_id": "", "judgments": judgments}]))
    return {judge: said[""] for judge, said in verdicts(entries).items()}


def ledger_verdicts(ledger_dir: str | os.PathLike[str]) -> dict[str, dict[str, bool | None]]:
    """Each judge of the ledger's scored runs (``runs.judgments``) and its verdict on each run it judged:
    ``{judge: {run_id: True (pass) | False (fail) | None (a tie of its samples)}}``."""
    con = ledger.connect(ledger_dir)
    try:
        rows = con.execute("select run_id, judgments from runs where status = 'ok' and judgments is not null "
                           "order by run_id").fetchall()
    finally:
        con.close()
    out: dict[str, dict[str, bool | None]] = {}
    for rid, judgments in rows:
        for judge, v in run_verdicts(judgments).items():
            out.setdefault(judge, {})[rid] = v
    return dict(sorted(out.items()))


def outcome_judge(outcome: str | None) -> str | None:
    """The judge of ``compare --outcome judge:NAME`` (None for ``verdict``, the default: the final verdict);
    UsageError for any other outcome."""
    if outcome is None or outcome == "verdict":
        return None
    kind, sep, name = outcome.partition(":")
    if kind != "judge" or not sep or not name:
        raise UsageError(f"--outcome {outcome}: give verdict (the final verdict, the default) or judge:NAME (one "
                         "judge's verdicts, runs.judgments)")
    return name


def judged_rows(rows: list[dict[str, Any]], judge: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The runs rows (with ``arm``, ``status`` and ``judgments``) whose outcome ``judge`` decides: each scored
    run it judged gets ``judge_success`` (its verdict, the majority of its samples); the scored runs it did not
    judge (or judged to a tie) are left out and counted per arm; invalid runs are kept, to be counted as such.
    UsageError when no run of ``rows`` has a judgment by ``judge``, naming the judges there are."""
    kept: list[dict[str, Any]] = []
    left: dict[str, int] = {}
    seen: set[str] = set()
    for r in rows:
        said = run_verdicts(r.get("judgments")) if r["status"] == "ok" else {}
        seen.update(said)
        if r["status"] == "ok" and said.get(judge) is None:
            left[r["arm"]] = left.get(r["arm"], 0) + 1
            continue
        kept.append({**r, "judge_success": said.get(judge)})
    if judge not in seen:
        raise UsageError(f"--outcome judge:{judge}: no run has a judgment by {judge!r} (runs.judgments, `score "
                         f"--judgments`); the judges there are: {', '.join(sorted(seen)) or 'none'}")
    return kept, dict(sorted(left.items()))
