"""Ledger rows from findings, built from the column declarations of :mod:`trajcheck.schemas.ledger`.

Every column declares its source: a dotted path into :class:`~trajcheck.scoring.analysis.StepFindings` (steps) or
:class:`RunFacts` (runs), a conversion after ``|``, ``fn:NAME``, a function below, or
``analyzer:MODULE.FUNCTION``, a pure function in :mod:`trajcheck.analyzers` of those findings (an analyzer
that derives its value from what the others found needs no other wiring). The getters are
compiled once per process; a row is then one call per column. Adding a column is one line in the
declarations (plus a function here when no path reaches its value); ``tests/test_columns.py`` checks that
every declared column is produced and nothing undeclared is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from functools import reduce
from operator import attrgetter
from typing import Any, Callable

from ..analyzers import perceptual, reward
from ..base.errors import Problem, read_by
from ..base.reasons import BLOCKING_CODES, WarningFollowup, code_of
from ..base.version import __version__
from ..readers.discovery import RunRef
from ..schemas.ledger import RUNS, STEPS, Column
from ..schemas.version import SCHEMA_VERSION
from .analysis import RunFindings, StepFindings


@dataclass
class RunResult:
    """One scored run: its runs row, its steps rows, and the problems found on the way."""

    run: dict[str, Any]
    steps: list[dict[str, Any]]
    frames: int = 0
    problems: list[Problem] = field(default_factory=list)
    display: str = ""  # the run directory relative to the argument it was found under
    ocr_unread: int = 0  # regions the rules asked OCR to read that were not read (OCR not installed)
    #: files outside the run's folder, inside the folder being scored, that its frames come from or were looked
    #: for at (``Run.outside_files``): part of its input digest
    outside: dict[str, str] = field(default_factory=dict)
    #: The models whose tokens got no cost from the price list ("": no model named): said once per score call.
    unpriced: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.run["status"] == "ok"


def to_json(value: Any) -> str | None:
    """A value as the ledger stores JSON: sorted keys, UTF-8, None for None."""
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def empty_run_row(run_id: str, run_path: str, source_format: str) -> dict[str, Any]:
    """The columns every runs row has, whether or not the run could be scored."""
    return {
        "run_id": run_id, "status": "ok", "error": "", "warnings": [], "source_format": source_format,
        "run_path": run_path, "schema_version": SCHEMA_VERSION, "trajcheck_version": __version__,
    }


def invalid_result(ref_display: str, run_path: str, problems: list[Problem],
                   source_format: str = "trajcheck.run/1") -> RunResult:
    """The result of a run that could not be scored: its row names every problem."""
    read_by(problems, source_format)
    row = empty_run_row(ref_display, run_path, source_format)
    row["status"] = "invalid"
    row["error"] = "; ".join(str(p) for p in problems)
    return RunResult(row, [], 0, problems, ref_display)


def no_log_result(ref_display: str, run_path: str, evidence: str, problems: list[Problem]) -> RunResult:
    """The row of a folder of screenshots with no log (:mod:`trajcheck.readers.nolog`): a run not read, so no
    verdict (``unknown``, reason ``no_log``), no steps, and its damage ``no_log`` with what it rests on."""
    from ..base.failuremodes import Damage
    from ..base.reasons import VerdictReason
    from ..readers.nolog import NAME

    read_by(problems, NAME)
    row = empty_run_row(ref_display, run_path, NAME)
    # no failure mode: nothing of the agent's was read (the run is counted by its damage, not as a failure mode)
    row.update(warnings=[str(p) for p in problems], eval_final_verdict="unknown",
               verdict_reason=str(VerdictReason.NO_LOG), verdict_source="none", evidence_verdict="unknown",
               damage=str(Damage.NO_LOG), damage_evidence=evidence)
    return RunResult(row, [], 0, problems, ref_display)


@dataclass(kw_only=True)
class RunFacts(RunFindings):
    """What the runs table's sources read: the run's findings (every field of
    :class:`~trajcheck.scoring.analysis.RunFindings`, declared there once), and what belongs to rows only: the
    run's reference, its steps rows, the frames counted, the problems found and the totals over the steps rows."""

    ref: RunRef
    step_rows: list[dict[str, Any]]
    n_frames: int
    problems: list[Problem]
    totals: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, found: RunFindings, ref: RunRef, step_rows: list[dict[str, Any]], n_frames: int,
           problems: list[Problem]) -> "RunFacts":
        """The facts of ``found``: its fields as they are, and the rows' own."""
        own = {f.name: getattr(found, f.name) for f in fields(RunFindings)}
        return cls(**own, ref=ref, step_rows=step_rows, n_frames=n_frames, problems=problems)

    @property
    def effects(self) -> list[perceptual.EffectFinding]:
        """The perceptual finding of each step."""
        return [sf.effect for sf in self.steps]


#: Conversions a source may name after ``|``.
CONVERT: dict[str, Callable[[Any], Any]] = {
    "str": lambda v: str(v) if v else None,  # a hash as hex
    "list": lambda v: [] if v is None else list(v),
    "box": lambda v: list(v) if v else None,
    "json": lambda v: to_json(v) if v else None,
    "opt": lambda v: None if v is None else list(v),  # a list, or null when nothing was read
    "boxes": lambda v: None if v is None else [list(b) for b in v],
}


def _totals(f: RunFacts) -> dict[str, Any]:
    """Per-run counts and sums over the steps rows and the perceptual findings."""
    rows = f.step_rows
    summary = perceptual.perceptual_summary(f.effects)
    seed = perceptual.perceptual_summary(f.effects, seed=True)
    scores = [r["reward_score"] for r in rows]
    held = [r["pred_held"] for r in rows if r["pred_held"] is not None]
    warned = [r for r in rows if r["action_effect_observed"] is False]  # trajcheck's rule fired: a warning
    out: dict[str, Any] = {
        "perceptual_summary": summary,
        "effect_checked": summary.get("checked", 0), "effect_no_effect": summary.get("no_effect", 0),
        "effect_checked_seed": seed.get("checked", 0), "effect_no_effect_seed": seed.get("no_effect", 0),
        "effect_recorded_agree": sum(1 for r in rows if r["effect_agrees_recorded"] is True),
        "effect_recorded_disagree": sum(1 for r in rows if r["effect_agrees_recorded"] is False),
        "reward_total": round(sum(scores), 4) if scores else None,
        "reward_mean": round(sum(scores) / len(scores), 4) if scores else None,
        "reward_first_blocking_step": next((r["step_index"] for r in rows if any(
            code_of(c) in BLOCKING_CODES for c in r["reward_reasons"])), None),
        "longest_loop": max((r["loop_len"] or 0 for r in rows), default=0),
        "loops": len({r["loop_id"] for r in rows if r["loop_id"] is not None}),
        "reward_done_gate": any(r["reward_done_gate"] for r in rows),
        "pred_checked": len(held),
        "pred_accuracy": round(sum(held) / len(held), 4) if held else None,
        "obs_no_change_steps": sum(1 for r in rows if r["obs_something_changed"] is False),
        "warnings_recovered": sum(1 for r in rows if r["warning_followup"] == WarningFollowup.RECOVERED),
        "warnings_repeated": sum(1 for r in rows if r["warning_followup"] == WarningFollowup.REPEATED),
        "warnings_false": sum(1 for r in warned if r["effect_in_fact"] is True),
        "warnings_false_checked": sum(1 for r in warned if r["effect_in_fact"] is not None),
    }
    for k in reward.CLASSES:
        out[f"reward_{k}"] = sum(1 for r in rows if r["reward_class"] == k)
    return out


def _outcome_judge(f: RunFacts) -> str | None:
    j = f.run.judge
    if not j:
        return None
    return to_json({"model": j.model, "verdict": j.verdict, "score": j.score, "confidence": j.confidence,
                    "reasons": list(j.reasons)})


def _judge_other(f: RunFacts) -> str | None:
    j = f.verdict.other_judge
    if j is None:
        return None
    return to_json({"model": j.model, "verdict": j.verdict, "score": j.score, "confidence": j.confidence,
                    "reasons": list(j.reasons), "recorded": j.recorded})


def _coord_space(f: RunFacts) -> tuple[str | None, str | None]:
    """The space of the run's action points and how it was decided: the reader's, else the format's one
    rule (the recorded screen, or frame pixels without one); none for a run without a point."""
    run = f.run
    if run.coord_space is not None:
        return run.coord_space, run.coord_space_source
    if not any(s.action.point is not None for s in run.steps):
        return None, None
    if run.screen_width and run.screen_height:
        return "screen", "declared: the recorded screen size"
    return "screenshot", "default: no screen size recorded, points are frame pixels"


#: Steps that declare the end of a run rather than act: not counted in the run's length against a reference.
_TERMINAL = frozenset({"DONE", "FAIL"})


def _efficiency(f: RunFacts) -> float | None:
    """The reference step count over the run's steps (its DONE or FAIL not counted): 1.0 is as short as the
    reference, 0.5 twice as long."""
    ref = f.reference_steps
    taken = sum(1 for s in f.run.steps if s.action.type not in _TERMINAL)
    return round(ref / taken, 4) if ref and taken else None


def _require_confirmation(f: RunFacts) -> bool | None:
    v = f.run.config.get("require_confirmation")
    return v if isinstance(v, bool) else None


RUN_FUNCTIONS: dict[str, Callable[[RunFacts], Any]] = {
    "status": lambda f: "ok",
    "error": lambda f: "",
    "warnings": lambda f: [str(p) for p in f.problems],
    "run_path": lambda f: str(f.ref.path),
    "config": lambda f: to_json(f.run.config) or "{}",
    "require_confirmation": _require_confirmation,
    "coord_space": lambda f: _coord_space(f)[0],
    "coord_space_source": lambda f: _coord_space(f)[1],
    "efficiency": _efficiency,
    "outcome_judge": _outcome_judge,
    "n_steps": lambda f: len(f.run.steps),
    "perceptual_summary": lambda f: json.dumps(f.totals["perceptual_summary"], sort_keys=True),
    "effect_warning_steps": lambda f: [r["step_index"] for r in f.step_rows if r["effect_feedback"]],
    "contract_name": lambda f: f.contract_result.name or (f.contract.source if f.contract else None),
    "contract_checks": lambda f: to_json([c.to_json() for c in f.contract_result.checks])
    if f.contract_result.checks else None,
    "contract_tree": lambda f: to_json(f.rubric.tree.to_json()) if f.rubric and f.rubric.tree else None,
    "judge_source": lambda f: (f.verdict.judge.source or ("recorded" if f.verdict.judge.recorded else "reference"))
    if f.verdict.judge else None,
    "judgments": lambda f: to_json([j.to_json() for j in f.judgments]) if f.judgments else None,
    "judge_other": _judge_other,
    "disagreement_reason": lambda f: f.verdict.reason if f.verdict.final == "uncertain" else None,
    "schema_version": lambda f: SCHEMA_VERSION,
    "trajcheck_version": lambda f: __version__,
}


STEP_FUNCTIONS: dict[str, Callable[[StepFindings], Any]] = {
    "shared_frames": lambda sf: sf.step.extra.get("shared_frames") is True,
}


def analyzer_function(ref: str) -> Callable[[Any], Any]:
    """The function an ``analyzer:MODULE.FUNCTION`` source names in :mod:`trajcheck.analyzers`: a pure function
    of the step's findings (steps table) or of the run's (runs table)."""
    import importlib

    module, _, name = ref.rpartition(".")
    fn = getattr(importlib.import_module(f"trajcheck.analyzers.{module}"), name, None)
    if not callable(fn):
        raise ValueError(f"column source analyzer:{ref}: no function {name} in trajcheck.analyzers.{module}")
    return fn


def _path_getter(path: str) -> Callable[[Any], Any]:
    """A getter for a dotted path; a None on the way gives None (a missing attribute or dict key raises)."""
    parts = path.split(".")
    if len(parts) == 1:
        return attrgetter(path)
    if len(parts) == 2 and parts[0] != "totals":  # most columns: one attribute of one finding, kept fast
        first, second = parts

        def two(obj: Any) -> Any:
            x = getattr(obj, first)
            return None if x is None else getattr(x, second)

        return two

    def step(obj: Any, name: str) -> Any:
        if obj is None:
            return None
        return obj[name] if isinstance(obj, dict) else getattr(obj, name)  # a misspelt key raises, as a name does

    return lambda obj: reduce(step, parts, obj)


def compile_source(col: Column, functions: dict[str, Callable[[Any], Any]]) -> Callable[[Any], Any] | None:
    """The getter of ``col``'s declared source (None for ``late`` columns, which the scorer fills)."""
    src = col.source
    if src == "late":
        return None
    if src.startswith("fn:"):
        return functions[src[3:]]
    if src.startswith("analyzer:"):
        return analyzer_function(src[len("analyzer:"):])
    path, _, conv = src.partition("|")
    get = _path_getter(path)
    if not conv:
        return get
    convert = CONVERT[conv]
    return lambda obj: convert(get(obj))


_STEP_GETTERS = [(c.name, compile_source(c, STEP_FUNCTIONS)) for c in STEPS]
_RUN_GETTERS = [(c.name, compile_source(c, RUN_FUNCTIONS)) for c in RUNS]


def step_row(sf: StepFindings) -> dict[str, Any]:
    """The steps row of one step."""
    return {name: get(sf) if get is not None else None for name, get in _STEP_GETTERS}


def build_result(found: RunFindings, ref: RunRef, n_frames: int, problems: list[Problem]) -> RunResult:
    """The ledger rows of a scored run."""
    rows = [step_row(sf) for sf in found.steps]
    facts = RunFacts.of(found, ref, rows, n_frames, problems)
    facts.totals = _totals(facts)
    run_row = {name: get(facts) if get is not None else None for name, get in _RUN_GETTERS}
    return RunResult(run_row, rows, n_frames, problems, ref.display, unpriced=found.spend.unpriced)
