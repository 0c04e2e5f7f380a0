"""Where runs fail: the failure modes of a ledger's runs, per arm (``trajcheck failures``).

Each run that did not pass has one failure mode in the ledger (``runs.failure_mode``, chosen by
:mod:`trajcheck.analyzers.failuremodes`); this module counts them per arm (``by`` a runs column or
``config.KEY``), with the share of the arm's failing runs and the rate over all its runs, each with a
Wilson interval, the run ids of each mode, one example run with its evidence, the sub-kinds, the most frequent
error texts and the pages that blocked. Everything is ordered by a fixed rule (counts down, then names), so
the same ledger always gives the same result, byte for byte.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..analyzers.failuremodes import blocking_page
from ..base import stats
from ..base.failuremodes import FailureMode
from ..store import ledger

from .views import arm_rows, group_expr

#: The arm of the runs without a value of ``by``.
MISSING = "(null)"
#: The final verdicts of the runs that did not pass (and so have a failure mode), in this order; an unknown
#: run has a mode only when the agent claimed success.
NOT_PASSED = ("fail", "uncertain", "unknown")
#: How many error texts and blocking pages are listed per arm.
TOP = 10

_COLUMNS = ("run_id", "task_id", "trial", "eval_final_verdict", "claimed_success", "failure_mode", "failure_detail",
            "failure_details", "failure_step", "failure_evidence", "contract_checks", "failure_control")


@dataclass(frozen=True)
class ModeCount:
    """One mode in one arm: its runs, share of the arm's failures and rate over all its runs, an example."""

    mode: str
    runs: tuple[str, ...]
    share: stats.Rate  # of the arm's runs that have a failure mode
    rate: stats.Rate  # of all the arm's runs
    details: tuple[tuple[str, int], ...]  # sub-kinds, most frequent first
    example: dict[str, Any]  # run_id, detail, step, evidence, check (the failed contract check) of the first run
    controllable: int = 0  # of its runs, those whose failure the agent could have avoided (runs.failure_control)

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "count": len(self.runs), "share": self.share.to_json(),
                "rate": self.rate.to_json(), "details": [{"detail": d, "count": n} for d, n in self.details],
                "example": self.example, "runs": list(self.runs), "controllable": self.controllable}


@dataclass(frozen=True)
class ArmFailures:
    arm: str
    runs: int  # scored runs of the arm
    failed: int  # of them, runs with a failure mode: every run that did not pass (fail, uncertain, unknown claimed)
    by_verdict: tuple[tuple[str, int], ...]  # those runs per final verdict: fail, uncertain, unknown (claimed)
    modes: tuple[ModeCount, ...]  # in precedence order, modes with at least one run
    errors: tuple[tuple[str, int], ...]  # the app_said_no error texts, most frequent first
    blocking_pages: tuple[tuple[str, int], ...]
    #: the controllable failures over the arm's runs less its uncontrollable failures (they count neither way)
    controllable: stats.Rate
    uncontrollable: int  # failures the agent could not have avoided (runs.failure_control)

    def mode(self, name: str) -> ModeCount | None:
        return next((m for m in self.modes if m.mode == name), None)

    def to_json(self) -> dict[str, Any]:
        return {"arm": self.arm, "runs": self.runs, "failed": self.failed, "not_passed": dict(self.by_verdict),
                "modes": [m.to_json() for m in self.modes],
                "errors": [{"text": t, "count": n} for t, n in self.errors],
                "blocking_pages": [{"page": p, "count": n} for p, n in self.blocking_pages],
                "controllable": self.controllable.to_json(), "uncontrollable": self.uncontrollable}


@dataclass(frozen=True)
class Failures:
    by: str | None
    where: str | None
    arms: tuple[ArmFailures, ...]
    unscored: int  # runs of the ledger with a failure_mode column still null because they were scored before it

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "where": self.where, "modes": [str(m) for m in FailureMode],
                "arms": [a.to_json() for a in self.arms], "runs_scored_before_failure_modes": self.unscored}


def checks_of(value: Any) -> list[dict[str, Any]]:
    """``runs.contract_checks`` as a list of checks, whether still JSON text (the ledger) or parsed."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return [c for c in value or [] if isinstance(c, dict)]

def subkinds(r: Mapping[str, Any]) -> list[str]:
    """Every sub-kind of a run's failure mode (runs.failure_details), failure_detail first; a ledger written before
    schema 15 has only failure_detail, its one sub-kind."""
    details = [str(d) for d in (r.get("failure_details") or []) if d]
    if details:
        return details
    return [str(r["failure_detail"])] if r.get("failure_detail") else []


def failed_check(evidence: str | None, checks: Any) -> dict[str, Any] | None:
    """The contract check a ``wrong_result`` failure's evidence names (``contract check NAME failed: ...``,
    analyzers/failuremodes.py), from the run's checks; None for other evidence."""
    if not evidence or not evidence.startswith("contract check "):
        return None
    return next((c for c in checks_of(checks) if c.get("passed") is False
                 and evidence.startswith(f"contract check {c.get('name')} failed: ")), None)



def load(ledger_dir: str | os.PathLike[str], by: str | None = None, where: str | None = None
         ) -> list[dict[str, Any]]:
    """The scored runs' failure columns and arm (``arm``), ordered by run id. UsageError for a bad ``by`` or
    ``where``."""
    arm = group_expr(by) if by else "NULL"
    con = ledger.connect(ledger_dir)
    try:
        rows = arm_rows(con, _COLUMNS, arm, where, scored_only=True)
    finally:
        con.close()
    for r in rows:
        r["arm"] = (MISSING if r["arm"] is None else str(r["arm"])) if by else "all"
    return rows


def _ranked(counts: Counter[str]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def arm_failures(name: str, rows: list[dict[str, Any]]) -> ArmFailures:
    """The failure modes of one arm's runs (ordered by run id)."""
    failing = [r for r in rows if r["failure_mode"]]
    modes = []
    for mode in FailureMode:
        mine = [r for r in failing if r["failure_mode"] == mode]
        if not mine:
            continue
        first = mine[0]
        # the evidence as the ledger keeps it (cut), and a failed contract check's whole evidence, raw
        example = {"run_id": first["run_id"], "detail": first["failure_detail"], "details": subkinds(first),
                   "step": first["failure_step"],
                   "evidence": first["failure_evidence"],
                   "check": failed_check(first["failure_evidence"], first["contract_checks"])}
        modes.append(ModeCount(str(mode), tuple(r["run_id"] for r in mine), stats.wilson(len(mine), len(failing)),
                               stats.wilson(len(mine), len(rows)),
                               _ranked(Counter(d for r in mine for d in (subkinds(r) or ["-"]))), example,
                               sum(1 for r in mine if r.get("failure_control") == "controllable")))
    errors = Counter(d for r in failing if r["failure_mode"] == FailureMode.APP_SAID_NO for d in subkinds(r))
    pages = Counter(p for r in failing if r["failure_mode"] == FailureMode.BLOCKED
                    for p in [blocking_page(r["failure_evidence"])] if p)
    verdicts = Counter(r["eval_final_verdict"] or "unknown" for r in failing)
    by_verdict = tuple((v, verdicts[v]) for v in NOT_PASSED)
    return ArmFailures(name, len(rows), len(failing), by_verdict, tuple(modes), _ranked(errors)[:TOP],
                       _ranked(pages)[:TOP], *control_rate(rows))


def control_rate(rows: list[dict[str, Any]]) -> tuple[stats.Rate, int]:
    """The controllable failure rate of a group of runs (``failure_mode``, ``failure_control``): the runs whose
    failure the agent could have avoided over the runs less those whose failure it could not (which count
    neither way), with its Wilson interval; and how many those were. ``failures`` and ``compare`` both say it."""
    control = Counter(r.get("failure_control") for r in rows if r["failure_mode"])
    return stats.wilson(control["controllable"], len(rows) - control["uncontrollable"]), control["uncontrollable"]


def failures(ledger_dir: str | os.PathLike[str], by: str | None = None, where: str | None = None) -> Failures:
    """The failure modes of the ledger's runs per arm of ``by`` (all runs as one arm without it)."""
    rows = load(ledger_dir, by, where)
    arms: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        arms.setdefault(r["arm"], []).append(r)
    # a run that did not pass but has no mode was scored before the failure columns existed
    unscored = sum(1 for r in rows if r["failure_mode"] is None and (
        r["eval_final_verdict"] in ("fail", "uncertain") or (r["eval_final_verdict"] == "unknown"
                                                            and r["claimed_success"])))
    return Failures(by, where, tuple(arm_failures(a, arms[a]) for a in sorted(arms)), unscored)


@dataclass(frozen=True)
class ModeChange:
    """A failure mode whose rate (runs in the mode over all runs) changed between the baseline arm and another:
    the difference (arm minus baseline) with Newcombe's interval, over the runs that pair (same task and trial,
    as ``compare`` pairs them) with the exact McNemar test, else over the two arms as independent samples. Where
    runs pair, a mode changed when its discordant pairs differ; else when the two rates differ."""

    mode: str
    baseline: str
    arm: str
    base: stats.Rate
    other: stats.Rate
    difference: float
    low: float | None
    high: float | None
    paired: bool
    pairs: int
    only_baseline: int  # pairs in the mode on the baseline's side only
    only_arm: int
    mcnemar_p: float | None

    def to_json(self) -> dict[str, Any]:
        def r(v: float | None) -> float | None:
            return None if v is None else round(v, 6)

        return {"mode": self.mode, "baseline": self.baseline, "arm": self.arm, "baseline_rate": self.base.to_json(),
                "arm_rate": self.other.to_json(), "difference": r(self.difference), "low": r(self.low),
                "high": r(self.high), "method": "newcombe_paired" if self.paired else "newcombe_unpaired",
                "pairs": self.pairs, "only_baseline": self.only_baseline, "only_arm": self.only_arm,
                "mcnemar_p": r(self.mcnemar_p)}


def mode_changes(base: str, other: str, runs: list[tuple[str, tuple[str, int | None], str | None]]
                 ) -> list[ModeChange]:
    """The modes whose rate differs between arm ``base`` and arm ``other``, in precedence order. ``runs``: each
    scored run's arm, pairing key (task, trial) and failure mode, ordered by run id (the first run of a key in
    an arm is its partner)."""
    a = [(k, m) for arm, k, m in runs if arm == base]
    b = [(k, m) for arm, k, m in runs if arm == other]
    pa: dict[tuple[str, int | None], str | None] = {}
    pb: dict[tuple[str, int | None], str | None] = {}
    for k, m in a:
        pa.setdefault(k, m)
    for k, m in b:
        pb.setdefault(k, m)
    keys = sorted(set(pa) & set(pb), key=lambda k: (k[0], -1 if k[1] is None else k[1]))
    out = []
    for mode in FailureMode:
        ka, kb = sum(1 for _, m in a if m == mode), sum(1 for _, m in b if m == mode)
        ra, rb = stats.wilson(ka, len(a)), stats.wilson(kb, len(b))
        if not a or not b:
            continue
        only_a = sum(1 for k in keys if pa[k] == mode and pb[k] != mode)
        only_b = sum(1 for k in keys if pb[k] == mode and pa[k] != mode)
        if keys:  # over the pairs, as compare's paired difference of success
            both = sum(1 for k in keys if pa[k] == mode and pb[k] == mode)
            diff, low, high = stats.newcombe_table(both, only_a, only_b, len(keys) - both - only_a - only_b)
            p = stats.mcnemar_exact(only_a, only_b)
            if only_a == only_b:
                continue  # as many pairs moved into the mode as out of it: no change where the runs pair
        else:
            diff, low, high = stats.newcombe_unpaired(ka, len(a), kb, len(b))
            p = None
            if ka * len(b) == kb * len(a):
                continue  # the same rate in both arms
        out.append(ModeChange(str(mode), base, other, ra, rb, diff, low, high, bool(keys), len(keys), only_a, only_b,
                              p))
    return out
