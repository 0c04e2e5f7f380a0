"""Views of a ledger for people: a run's timeline, the best rollout per task, and `--by` group expressions."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Sequence

from ..store import ledger
from ..base.errors import LedgerError, UsageError

#: Verdicts from best to worst, for choosing among rollouts: no verdict is better
#: than a disputed one, which is better than a failure.
VERDICT_RANK = {"pass": 3, "unknown": 2, "uncertain": 1, "fail": 0}

TIMELINE_STEP_COLUMNS = (
    "step_index", "action_type", "action_x", "action_y", "action_keys", "action_text", "action_url", "reasoning",
    "executor_ok", "executor_error", "url_before", "url_after", "obs_observations", "obs_reason",
    "effect_high_risk", "action_effect_observed", "effect_reason", "action_effect_observed_seed",
    "effect_global_distance", "effect_region_distance", "effect_feedback", "recorded_feedback",
    "warning_followup", "warning_followup_step", "warning_shown", "warning_shown_source", "effect_in_fact",
    "effect_in_fact_basis",
    "loop_id", "loop_len", "pred_prediction", "pred_held", "reward_score", "reward_class", "reward_reasons",
    "reward_confidence", "state_id", "state_kind", "state_returns_to", "oscillation_id", "screen_text",
    "screen_text_boxes", "screen_text_new", "screen_messages", "screen_text_agrees",
)
TIMELINE_RUN_COLUMNS = (
    "run_id", "task_id", "goal", "status", "error", "outcome_status", "n_steps", "perceptual_summary",
    "det_verdict", "contract_name", "contract_checks", "judge_model", "judge_verdict", "judge_score",
    "judge_confidence", "judge_reasons", "judge_source", "judge_other", "eval_final_verdict", "final_confidence",
    "verdict_reason", "verdict_source", "disagreement_reason", "evidence_verdict", "evidence_reasons",
    "evidence_confidence", "claimed_success", "false_claim", "false_claim_basis", "lesson_promotable",
    "lesson_candidate", "reward_total", "longest_loop", "states_distinct", "states_returning", "oscillations",
    "stalled_from_step", "no_net_progress", "message_source", "message_text", "screen_text_final",
    "screen_messages_final", "contract_score", "contract_tree", "judgments", "failure_mode", "failure_detail",
    "failure_details", "failure_step", "failure_evidence", "actions_after_last_frame", "failure_control",
    "decisive_step", "decisive_kind", "decisive_evidence", "decisive_control", "damage", "damage_evidence",
    "process_score", "process_evidence",
)


def action_label(s: dict[str, Any]) -> str:
    """How a step's action reads: ``CLICK (640, 316)``, ``TYPE "jane.doe@example.com"`` (timeline, diff)."""
    a = str(s["action_type"] or "?")
    if s["action_x"] is not None and s["action_y"] is not None:
        a += f" ({s['action_x']:g}, {s['action_y']:g})"
    for k in ("action_keys", "action_text", "action_url"):
        if s[k]:
            a += f" {json.dumps(s[k], ensure_ascii=False)}"
    return a


def one_run(con: Any, run_id: str, columns: Sequence[str]) -> tuple[Any, ...]:
    """The ``columns`` of run ``run_id`` from an open ledger connection; UsageError, naming up to five runs whose
    id holds it, when the ledger has no such run."""
    row = con.execute(f"select {', '.join(columns)} from runs where run_id = ?", [run_id]).fetchone()
    if row is None:
        near = [r[0] for r in con.execute("select run_id from runs where run_id ilike ? order by 1 limit 5",
                                          [f"%{run_id}%"]).fetchall()]
        raise UsageError(f"no run {run_id!r} in the ledger" + (f"; did you mean {', '.join(near)}?" if near else ""))
    return tuple(row)


def timeline(ledger_dir: str | os.PathLike[str], run_id: str) -> dict[str, Any]:
    """One run step by step, with its referee verdicts, as plain data."""
    con = ledger.connect(ledger_dir)
    try:
        run = dict(zip(TIMELINE_RUN_COLUMNS, one_run(con, run_id, TIMELINE_RUN_COLUMNS)))
        for k in ("contract_checks", "judge_other", "perceptual_summary", "contract_tree", "judgments",
                  "process_evidence"):
            if run.get(k):
                run[k] = json.loads(run[k])
        steps = [dict(zip(TIMELINE_STEP_COLUMNS, r)) for r in con.execute(
            f"select {', '.join(TIMELINE_STEP_COLUMNS)} from steps where run_id = ? order by step_index",
            [run_id]).fetchall()]
    finally:
        con.close()
    return {"run": run, "steps": steps}


@dataclass(frozen=True)
class BestOf:
    group: Any
    best: str
    verdict: str | None
    reward_total: float | None
    n_steps: int | None
    candidates: int
    why: str
    source: str | None = None  # which sources decided the verdict (verdict_source)


_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def group_expr(by: str) -> str:
    """A runs column, or config.KEY read from the config JSON."""
    if by.startswith("config."):
        key = by[len("config."):]
        if not _COLUMN.match(key):
            raise UsageError(f"--by {by}: config keys are letters, digits and underscores")
        return f"json_extract_string(config, '$.{key}')"
    if not _COLUMN.match(by):
        raise UsageError(f"--by {by}: not a column name")
    return by


def rank_key(verdict: str | None, reward_total: float | None, n_steps: int | None, run_id: str) -> tuple[Any, ...]:
    """How :func:`best_of` orders rollouts, best first: verdict, then higher total reward, then fewer steps,
    then run_id."""
    return (-VERDICT_RANK.get(verdict or "unknown", 2), -(reward_total if reward_total is not None else float("-inf")),
            n_steps if n_steps is not None else 1 << 30, run_id)


def best_of(ledger_dir: str | os.PathLike[str], by: str = "task_id") -> list[BestOf]:
    """For each group of rollouts, the best run: verdict first (pass > unknown > uncertain >
    fail), then the higher total reward, then fewer steps, then run_id (so ties are
    broken the same way every time)."""
    expr = group_expr(by)
    con = ledger.connect(ledger_dir)
    try:
        try:
            rows = con.execute(f"select {expr} as g, run_id, eval_final_verdict, reward_total, n_steps, "
                               "verdict_source from runs "
                               "where status = 'ok' order by g, run_id").fetchall()
        except Exception as exc:  # noqa: BLE001  (duckdb binder error: unknown column)
            raise UsageError(f"--by {by}: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    groups: dict[Any, list[tuple[Any, ...]]] = {}
    for r in rows:
        groups.setdefault(r[0], []).append(r)
    out = []
    for g, runs in groups.items():
        ranked = sorted(runs, key=lambda r: rank_key(r[2], r[3], r[4], r[1]))
        best = ranked[0]
        why = _why(best, ranked[1:])
        out.append(BestOf(g, best[1], best[2], best[3], best[4], len(runs), why, best[5]))
    return out


def _reward(total: float | None) -> str:
    """A reward total for the choice's reason; a run without one (no steps scored) says so."""
    return "none" if total is None else f"{total:.2f}"


def _why(best: tuple[Any, ...], rest: list[tuple[Any, ...]]) -> str:
    if not rest:
        return "only rollout"
    nxt = rest[0]
    if best[2] != nxt[2]:
        return f"verdict {best[2]} beats {nxt[2]} ({nxt[1]})"
    if best[3] != nxt[3]:
        return f"same verdict {best[2]}; reward {_reward(best[3])} > {_reward(nxt[3])} ({nxt[1]})"
    if best[4] != nxt[4]:
        return f"same verdict and reward; {best[4]} steps < {nxt[4]} ({nxt[1]})"
    return f"tied with {nxt[1]}; first by run_id"


__all__ = ["timeline", "best_of", "BestOf", "LedgerError", "VERDICT_RANK", "rank_key"]


def arm_rows(con: Any, columns: Sequence[str], arm_expr: str | None, where: str | None,
             scored_only: bool = False) -> list[dict[str, Any]]:
    """The runs' ``columns`` and their arm (``arm``: ``arm_expr`` as text), ordered by run id; only the scored
    runs when ``scored_only``, and those ``where`` holds. UsageError naming --where or --by when DuckDB
    refuses one of them."""
    arm = arm_expr or "NULL"
    if where:
        ledger.check_where(con, where)
    conditions = (["status = 'ok'"] if scored_only else []) + ([f"({where})"] if where else [])
    filt = f"where {' and '.join(conditions)}" if conditions else ""
    try:
        cur = con.execute(f"select {', '.join(columns)}, CAST({arm} AS VARCHAR) AS arm from runs {filt} "
                          "order by run_id")
    except Exception as exc:  # noqa: BLE001  (binder error: unknown column)
        raise UsageError(f"--by: {str(exc).splitlines()[0]}") from None
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]
