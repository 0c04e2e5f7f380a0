"""What an arm's runs cost and took (``compare``'s spend figures): per run and per success, and the spend on steps
that had no effect and on runs that were false claims."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base import stats


def _r(v: float | None) -> float | None:
    return None if v is None or v != v else round(v, 6)


@dataclass
class Spend:
    """What an arm's runs cost and took: per run and per success, and the spend on steps that had no effect and
    on runs that were false claims. ``None`` where no run of the ledger has the figure (a ledger without cost
    has no cost figures); the means carry Student's t interval (:func:`trajcheck.base.stats.mean_interval`), the
    ratios (per success) none."""

    cost_per_run: stats.Mean | None  # over the runs with a cost
    cost_per_success: float | None  # the cost of the runs with one, over their successes
    steps_per_success: float | None  # every step of the arm, over its successes
    seconds_per_run: stats.Mean | None  # over the runs with a time
    cost_total: float | None
    cost_no_effect: float | None  # the cost of the steps whose high-risk action had no observed effect
    cost_false_claims: float | None  # the cost of the runs that claimed a success they did not have
    runs_with_cost: int = 0
    runs_with_seconds: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"runs_with_cost": self.runs_with_cost, "runs_with_seconds": self.runs_with_seconds,
                "cost_per_run": self.cost_per_run.to_json() if self.cost_per_run else None,
                "cost_per_success": _r(self.cost_per_success), "steps_per_success": _r(self.steps_per_success),
                "seconds_per_run": self.seconds_per_run.to_json() if self.seconds_per_run else None,
                "cost_total": _r(self.cost_total), "cost_no_effect_steps": _r(self.cost_no_effect),
                "cost_false_claims": _r(self.cost_false_claims)}


def spend_of(rows: list[dict[str, Any]], successes: int, has_cost: bool, has_seconds: bool) -> Spend | None:
    """The spend of one group of runs rows (``cost_usd``, ``wall_seconds``, ``n_steps``, ``false_claim`` and
    ``no_effect_cost``, the cost of its no-effect steps), ``successes`` of them successes; ``has_cost`` and
    ``has_seconds``: does the ledger hold any cost, any time (else those figures are None, and without
    either there is no spend)."""
    if not (has_cost or has_seconds):
        return None
    priced = [r for r in rows if r.get("cost_usd") is not None]
    costs = [float(r["cost_usd"]) for r in priced]
    seconds = [float(r["wall_seconds"]) for r in rows if r.get("wall_seconds") is not None]
    total = sum(costs) if costs else None
    won = sum(1 for r in priced if r.get("success"))  # a success of a run without a cost says nothing of cost
    return Spend(
        cost_per_run=stats.mean_interval(costs) if has_cost else None,
        cost_per_success=total / won if total is not None and won else None,
        steps_per_success=sum(r["n_steps"] or 0 for r in rows) / successes if successes else None,
        seconds_per_run=stats.mean_interval(seconds) if has_seconds else None,
        cost_total=total,
        cost_no_effect=sum(r.get("no_effect_cost") or 0.0 for r in rows) if costs else None,
        cost_false_claims=sum(float(r["cost_usd"]) for r in rows if r.get("false_claim") and r.get("cost_usd")
                              is not None) if costs else None,
        runs_with_cost=len(costs), runs_with_seconds=len(seconds))
