"""A run's progress timeline from the ledger: its phases, places, checkpoints (trajcheck.analyzers.phases)."""

from __future__ import annotations

import os

from ..analyzers.phases import Phases, analyze
from ..store import ledger
from .views import one_run

#: The columns the analyzer reads (analyzers/phases.py, analyzers/checkpoints.py).
RUN_COLUMNS = ("run_id", "n_steps", "goal", "contract_name", "contract_tree", "contract_checks", "stalled_from_step",
               "no_net_progress")
STEP_COLUMNS = ("step_index", "action_type", "url_after", "title_after", "state_id", "state_kind",
                "effect_high_risk", "action_effect_observed", "screen_text")


def phases(ledger_dir: str | os.PathLike[str], run_id: str) -> Phases:
    """One run's progress timeline (``trajcheck timeline --phases``): the run cut into phases where its page or
    title (else its screen) changes, the screens each reached, where progress last advanced, and the step where
    each contract node first held (docs/analysis.md, "Progress over long runs"). UsageError when the ledger has
    no such run."""
    con = ledger.connect(ledger_dir)
    try:
        row = one_run(con, run_id, RUN_COLUMNS)
        steps = [dict(zip(STEP_COLUMNS, r)) for r in con.execute(
            f"select {', '.join(STEP_COLUMNS)} from steps where run_id = ? order by step_index", [run_id]).fetchall()]
    finally:
        con.close()
    return analyze(dict(zip(RUN_COLUMNS, row)), steps)
