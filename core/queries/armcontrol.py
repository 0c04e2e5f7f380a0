"""Could the agent have avoided it, per arm (``compare``): each arm's controllable failure rate, with the failures
it could not have avoided out of both sides, its difference from the baseline arm, and its mean process score.

The rate is :func:`trajcheck.queries.failuremodes.control_rate`, the one ``failures`` gives: the controllable
failures (``runs.failure_control``) over the arm's runs less its uncontrollable failures. The difference (arm
minus baseline) carries Newcombe's hybrid score interval for two independent proportions: the runs left out
differ between the arms, so the two rates are over different runs and are not paired. The process score
(``runs.process_score``) is averaged over the runs that have one, with Student's t interval; a run none of whose
steps could be judged has none and is not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..base import stats

from .failuremodes import control_rate


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 6)


@dataclass(frozen=True)
class ArmControl:
    controllable: stats.Rate  # controllable failures over the runs less the uncontrollable failures
    uncontrollable: int  # failures the agent could not have avoided: out of both sides of the rate
    process: stats.Mean | None  # the mean process score over the runs that have one
    #: against the baseline arm (None for the baseline itself): the difference of the controllable rates (arm
    #: minus baseline) with its interval, and the difference of the mean process scores
    difference: tuple[float, float | None, float | None] | None = None
    process_difference: float | None = None

    def to_json(self) -> dict[str, Any]:
        d = self.difference
        return {"controllable_failures": self.controllable.to_json(), "uncontrollable_failures": self.uncontrollable,
                "controllable_vs_baseline": None if d is None else {
                    "difference": _r(d[0]), "low": _r(d[1]), "high": _r(d[2]), "method": "newcombe_unpaired"},
                "process_score": self.process.to_json() if self.process else None,
                "process_vs_baseline": _r(self.process_difference)}


def arm_control(rows: list[dict[str, Any]]) -> ArmControl:
    """The control figures of one arm's runs rows (``failure_mode``, ``failure_control``, ``process_score``)."""
    rate, uncontrollable = control_rate(rows)
    scores = [float(r["process_score"]) for r in rows if r.get("process_score") is not None]
    return ArmControl(rate, uncontrollable, stats.mean_interval(scores))


def versus(base: ArmControl | None, arm: ArmControl | None) -> ArmControl | None:
    """``arm``'s figures with their differences from the baseline arm's."""
    if base is None or arm is None:
        return arm
    a, b = base.controllable, arm.controllable
    diff = stats.newcombe_unpaired(a.k, a.n, b.k, b.n) if a.n and b.n else None
    proc = arm.process.value - base.process.value if arm.process and base.process else None
    return replace(arm, difference=diff, process_difference=proc)
