"""Scoring many runs: discover them, skip the unchanged, score the rest on an engine, in discovery order.

The parts, in the order the data flows (docs/architecture.md):
:mod:`trajcheck.readers.discovery` finds runs and their readers; :mod:`trajcheck.scoring.incremental` decides which need
scoring; :mod:`trajcheck.scoring.engines` (or :mod:`trajcheck.scoring.engine_dask`) runs
:func:`trajcheck.scoring.scorerun.score_run`
on each: :mod:`trajcheck.scoring.loading` reads the evidence, :mod:`trajcheck.scoring.analysis` runs the analyzers,
:mod:`trajcheck.scoring.rows` builds the ledger rows from the column declarations.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from . import incremental
from .digest import forget_listings, options_fingerprint
from ..readers.discovery import RunRef, discover
from ..base.errors import Problem
from ..base.problems import Slug
from .incremental import Previous
from .options import ScoreOptions
from .rows import RunResult, invalid_result

__all__ = ["ScoreOptions", "ScoreReport", "RunResult", "SUMMARY_KEYS", "score_paths"]


@dataclass
class ScoreReport:
    results: list[RunResult]  # every scored run, in discovery order (empty when a sink took them)
    problems: list[Problem]  # problems of the arguments themselves (a path that does not exist)
    skipped: list[str] = field(default_factory=list)  # run_ids whose input digest did not change
    removed: list[str] = field(default_factory=list)  # run_ids whose directory is gone from a scored folder
    scored: int = 0  # runs scored (ok or invalid)
    frames: int = 0  # distinct frames decoded
    invalid: list[RunResult] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)  # each scored run's row (no steps)
    #: Runs whose tokens the price list gave no cost, by model ("": no model named).
    unpriced: Counter[str] = field(default_factory=Counter)
    #: Each scored run read (status ok): (its path under the argument, task_id, goal, contract_source), what
    #: the contracts of ``--contracts`` are matched on (:func:`trajcheck.api.score` sums it up).
    matched: list[tuple[str, str | None, str | None, str | None]] = field(default_factory=list)


def score_paths(paths: Iterable[str | os.PathLike[str]], opts: ScoreOptions | None = None, jobs: int | None = None,
                on_found: Callable[[int], None] | None = None,
                on_result: Callable[[RunResult], None] | None = None,
                input_format: str | None = None,
                previous: Iterable[Previous] | None = None,
                sink: Callable[[RunResult], None] | None = None,
                engine: str = "local", scheduler: str | None = None) -> ScoreReport:
    """Discover and score every run under ``paths``, in parallel over ``jobs`` processes.

    Results come back in discovery order whatever the order of completion, so the
    same input gives the same ledger. With ``previous`` (what a ledger holds), a run
    whose input digest is unchanged is skipped, and a run the ledger found under one
    of ``paths`` whose directory is gone is reported in ``removed``. With ``sink``,
    each result is handed over as it is ready (in order) instead of being kept.
    ``engine="dask"`` scores on a dask.distributed cluster (``scheduler`` is its
    address; without one, a local cluster of ``jobs`` worker processes); the rows are
    the same as the local engine's. Each run's verdict depends on its own files and reader only (the no-answer
    rule follows how its format declares runs end, :mod:`trajcheck.scoring.noanswer`), never on the batch.
    """
    opts = opts or ScoreOptions()
    paths = list(paths)
    forget_listings()
    refs, problems = discover(paths, input_format, opts.readers())  # the options' mapping is one of the readers
    fingerprint = options_fingerprint(opts, input_format)
    plan = incremental.plan(paths, refs, previous, fingerprint, opts)
    refs, skipped, removed, known = plan.todo, list(plan.skipped), plan.removed, plan.known
    if on_found:
        on_found(len(refs))
    report = ScoreReport([], problems, skipped, removed)
    # known: the first run to claim an id keeps it
    out = _Taker(report, dict(known), sink, on_result, replaced=plan.replaced)
    if engine not in ("local", "dask"):
        raise ValueError(f"unknown engine {engine!r}: local or dask")
    workers = jobs or os.cpu_count() or 1
    for res in _results(refs, opts, fingerprint, workers, engine, scheduler):
        out.take(res)
    unread = out.unread
    if unread[0]:
        report.problems.append(_ocr_not_installed(*unread))
    if opts.ocr != "off" and report.scored:
        from ..base import diskcache

        for folder in ("ocr", "ocrcrop"):  # what OCR keeps grows with every new screen: keep it bounded
            diskcache.prune(folder)
    return report


def _results(refs: list[RunRef], opts: ScoreOptions, fingerprint: str, workers: int, engine: str,
             scheduler: str | None) -> Iterable[RunResult]:
    """The results of ``refs``, in their order, from the engine named."""
    if engine == "dask":
        from .engine_dask import dask_ordered

        return dask_ordered(refs, opts, fingerprint, workers, scheduler)
    from .engines import local_results

    return local_results(refs, opts, fingerprint, workers)


@dataclass
class _Taker:
    """Where each result goes: counted in the report, then to the sink (or kept), then told."""

    report: ScoreReport
    seen: dict[str, str]  # run_id -> path: the first run to claim an id keeps it
    sink: Callable[[RunResult], None] | None
    on_result: Callable[[RunResult], None] | None
    unread: list[int] = field(default_factory=lambda: [0, 0])  # OCR regions not read (not installed), their runs
    replaced: dict[str, str] = field(default_factory=dict)  # a run's key -> the id the ledger held for it

    def _drop_old_id(self, res: RunResult) -> None:
        """A run scored again under another id than the ledger's row of the same folder (its log came back, its
        run.json's run_id changed): the old row goes, as a run whose folder is gone does."""
        try:
            key = json.loads(res.run.get("inputs") or "{}").get("root")
        except ValueError:
            return
        old = self.replaced.get(key) if isinstance(key, str) else None
        if old is not None and old != res.run["run_id"] and old not in self.report.removed:
            self.report.removed.append(old)

    def take(self, res: RunResult) -> None:
        res = _dedupe_one(res, self.seen)
        self._drop_old_id(res)
        report = self.report
        report.scored += 1
        report.frames += res.frames
        if res.ocr_unread:
            self.unread[0] += res.ocr_unread
            self.unread[1] += 1
        if not res.ok:
            report.invalid.append(res)
        report.summaries.append({k: res.run.get(k) for k in SUMMARY_KEYS})
        if res.ok:
            goal = res.run.get("goal")
            report.matched.append((res.display, res.run.get("task_id"), goal[:200] if isinstance(goal, str) else None,
                                   res.run.get("contract_source")))
        report.unpriced.update(res.unpriced)
        if self.sink is not None:
            self.sink(res)
        else:
            report.results.append(res)
        if self.on_result:
            self.on_result(res)


def _ocr_not_installed(regions: int, runs: int) -> Problem:
    """The one note of a ``score`` whose runs had regions to read on screen and no OCR to read them."""
    from ..media import ocr

    _, why = ocr.engine()
    return Problem(Slug.OCR_NOT_INSTALLED, f"{regions} screen region{'s' * (regions != 1)} in {runs} "
                   f"run{'s' * (runs != 1)} without a DOM snapshot were not read: {why}; their verdicts are what "
                   "they are without screen text", severity="warning",
                   hint="pip install 'trajcheck[ocr]', or score with --ocr off")


#: The run-row keys a report keeps for every run (the full rows go to the sink).
SUMMARY_KEYS = ("run_id", "source_format", "status", "error", "n_steps", "effect_checked", "effect_no_effect",
                "effect_no_effect_seed", "warnings", "outcome_status", "eval_final_verdict", "verdict_source",
                "false_claim", "cost_usd", "cost_source", "wall_seconds")

def _dedupe_one(r: RunResult, seen: dict[str, str]) -> RunResult:
    """Two runs with one run_id: the first keeps it, the second becomes invalid naming both paths."""
    rid = r.run["run_id"]
    path = r.run["run_path"]
    if rid in seen:
        return invalid_result(r.display or path, path, [Problem(
            Slug.DUPLICATE_RUN_ID, f"run_id {rid!r} is already used by the run at {seen[rid]}; this run at "
            f"{path} was not scored", run=rid, file="run.json", field="run_id",
            hint="give every run its own run_id")], r.run["source_format"])
    seen[rid] = path
    return r


