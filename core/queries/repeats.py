"""Repeats and the noise floor (``trajcheck flaky``): which tasks flip their verdict between repeated runs, and how
large a difference this many runs can tell from that noise.

Runs are repeats when they ran the same task under the same config. ``repeat_key`` (``config.seed``) names the
config key that differs between repeats, so runs whose configs differ only in it are repeats; without it the
whole config must be equal (a run without a config has the empty one). Success is compare's
(:func:`trajcheck.queries.comparison.outcome_of`); only scored runs (status ``ok``) count.

Per task (a task under one config): the repeats, the pass rate, whether it flips (passed some repeats and failed
others), pass@k and pass^k at the smallest number of repeats any task has. Per arm (the values of ``by``; one arm
without it): the flip rate over the tasks with 2 repeats or more (Wilson), the ICC of verdicts within tasks, its
design effect and the minimum detectable difference against an arm like it (docs/analysis.md).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ..base import stats
from ..base.errors import UsageError
from ..store import ledger
from .comparison import MISSING, outcome_of
from .views import arm_rows, group_expr, _COLUMN

COLUMNS = ("run_id", "task_id", "status", "eval_final_verdict", "verdict_source", "outcome_score", "config")
#: The arm of every run when no ``by`` is given.
ALL = "(all)"


@dataclass(frozen=True)
class TaskRepeats:
    """One task under one config in one arm: its runs (run id and verdict) and what they add up to."""

    task_id: str
    config: str  # the config keys that set this group apart from the task's others ("": none), as key=value
    arm: str
    runs: list[tuple[str, str, bool]]  # run_id, verdict, success
    k: int

    @property
    def passed(self) -> int:
        return sum(s for _, _, s in self.runs)

    @property
    def flips(self) -> bool:
        return 0 < self.passed < len(self.runs)

    def to_json(self) -> dict[str, Any]:
        n, c = len(self.runs), self.passed
        return {"task_id": self.task_id, "config": self.config, "arm": self.arm, "repeats": n, "passed": c,
                "pass_rate": round(c / n, 6), "flips": self.flips, "k": self.k,
                "pass_at_k": _r(stats.pass_at_k(n, c, self.k)), "pass_hat_k": _r(stats.pass_hat_k(n, c, self.k)),
                "runs": [{"run_id": r, "verdict": v, "success": s} for r, v, s in self.runs]}


@dataclass(frozen=True)
class ArmNoise:
    """An arm's repeat noise: the flip rate, the ICC of verdicts within tasks, its design effect, and the minimum
    detectable difference against an arm like this one (same runs, tasks, rate and ICC: variance
    2 p(1 - p) DE / N)."""

    arm: str
    runs: int
    tasks: int
    repeated_tasks: int  # tasks with 2 repeats or more: the flip rate's denominator
    success: stats.Rate
    flip_rate: stats.Rate
    icc: float | None
    design_effect: float
    mdd: float | None

    def to_json(self) -> dict[str, Any]:
        return {"arm": self.arm, "runs": self.runs, "tasks": self.tasks, "repeated_tasks": self.repeated_tasks,
                "mean_repeats": round(self.runs / self.tasks, 6) if self.tasks else None,
                "success": self.success.to_json(), "flip_rate": self.flip_rate.to_json(), "icc": _r(self.icc),
                "design_effect": round(self.design_effect, 6), "mdd": _r(self.mdd)}


@dataclass(frozen=True)
class Repeats:
    """What :func:`repeats` found: every task's repeats and each arm's noise."""

    repeat_key: str | None
    by: str | None
    k: int
    tasks: list[TaskRepeats]
    arms: list[ArmNoise]

    @property
    def flaky(self) -> list[TaskRepeats]:
        return [t for t in self.tasks if t.flips]

    def to_json(self) -> dict[str, Any]:
        return {"repeat_key": self.repeat_key, "by": self.by, "k": self.k, "alpha": stats.ALPHA,
                "power": stats.POWER, "arms": [a.to_json() for a in self.arms],
                "flaky": sorted({t.task_id for t in self.flaky}), "tasks": [t.to_json() for t in self.tasks]}


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 6)


def _config_groups(configs: list[str | None], key: str | None) -> list[dict[str, Any]]:
    """Each run's config as a dict, without the repeat key."""
    out = []
    for c in configs:
        try:
            d = json.loads(c) if c else {}
        except ValueError:
            d = {"config": c}
        d = d if isinstance(d, dict) else {"config": d}
        if key is not None:
            d.pop(key, None)
        out.append(d)
    return out


def _labels(configs: list[dict[str, Any]], places: list[tuple[str, str]]) -> list[str]:
    """A short label per run's config: the keys whose values differ among the runs of its task in its arm
    (``places``: each run's arm and task), as key=value ("": none)."""
    seen: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for cfg, place in zip(configs, places):
        seen.setdefault(place, []).append(cfg)
    varying: dict[tuple[str, str], list[str]] = {}
    for place, cfgs in seen.items():
        keys = sorted({k for g in cfgs for k in g})
        varying[place] = [k for k in keys if len({json.dumps(g.get(k), sort_keys=True) for g in cfgs}) > 1]
    return [", ".join(f"{k}={json.dumps(g.get(k))}" for k in varying[place]) for g, place in zip(configs, places)]


def repeats(ledger_dir: str | os.PathLike[str], repeat_key: str | None = None, by: str | None = None, *,
            where: str | None = None, success_score: float = 1.0) -> Repeats:
    """The repeats of every task and each arm's noise (module docstring). ``repeat_key``: ``config.KEY``, the
    config key that differs between repeats; ``by``: a runs column or config.KEY whose values are the arms."""
    key = None
    if repeat_key is not None:
        key = repeat_key[len("config."):] if repeat_key.startswith("config.") else ""
        if not _COLUMN.match(key):
            raise UsageError(f"--repeat-key {repeat_key}: give config.KEY, the config key that differs between "
                             "repeats (e.g. config.seed)")
    con = ledger.connect(ledger_dir)
    try:
        rows = arm_rows(con, COLUMNS, group_expr(by) if by else None, where, scored_only=True)
    finally:
        con.close()
    configs = _config_groups([r["config"] for r in rows], key)
    places = [(ALL if not by else MISSING if r["arm"] is None else str(r["arm"]), r["task_id"] or r["run_id"])
              for r in rows]
    groups: dict[tuple[str, str, str], list[tuple[str, str, bool]]] = {}
    label_of: dict[tuple[str, str, str], str] = {}
    for r, cfg, (arm, task), label in zip(rows, configs, places, _labels(configs, places)):
        group = (arm, task, json.dumps(cfg, sort_keys=True))
        groups.setdefault(group, []).append((r["run_id"], r["eval_final_verdict"] or "unknown",
                                             outcome_of(r, success_score)[0]))
        label_of[group] = label
    # pass@k and pass^k at the fewest repeats of a task repeated at all (a task run once has neither for k > 1)
    k = min((len(v) for v in groups.values() if len(v) > 1), default=1)
    tasks = [TaskRepeats(task, label_of[arm, task, cfg], arm, runs, k)
             for (arm, task, cfg), runs in sorted(groups.items())]
    arms = [_arm(a, [t for t in tasks if t.arm == a]) for a in sorted({t.arm for t in tasks})]
    return Repeats(repeat_key, by, k, tasks, arms)


def _arm(name: str, tasks: list[TaskRepeats]) -> ArmNoise:
    runs = sum(len(t.runs) for t in tasks)
    passed = sum(t.passed for t in tasks)
    repeated = [t for t in tasks if len(t.runs) > 1]
    icc = stats.icc_oneway([[float(s) for _, _, s in t.runs] for t in tasks])
    p = passed / runs
    cl = stats.Cluster(p * (1 - p), icc, runs, len(tasks))
    se = (2 * cl.var_of_mean()) ** 0.5
    return ArmNoise(name, runs, len(tasks), len(repeated), stats.wilson(passed, runs),
                    stats.wilson(sum(t.flips for t in repeated), len(repeated)), icc, cl.design_effect,
                    stats.noise_z() * se if se > 0 else None)
