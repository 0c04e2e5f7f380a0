"""A mapping's ``[outcome]``: the success flag, score or evaluator result a harness or benchmark recorded for a
run, from the log or from a results file above, beside or below the runs. It becomes the run's ``outcome_score``
(a success flag is 1 or 0), which the referee takes as the benchmark's own evaluator (verdict source
``evaluator``)::

    [outcome]
    success = "success"             # a flag (true/false, "success"/"fail", 1/0) ...
    score = "reward"                # ... or a score (1 passes; `score --evaluator-pass` lowers it)
    file = "results.json"           # optional: a results file (CSV, JSON or JSON Lines; :mod:`.join` says where)
    records = "runs"                # the list of records in it (or an object keyed by the run's name)
    key = "{task}/{condition}"      # a record's name: JMESPath, or a template of its fields (omitted: the
                                    # member names of an object of records)
    joins = "path"                  # folder (the run folder's name, default), path (under the scored folder),
                                    # run_id, task_id or goal

    [outcome.join]                  # instead of key/joins: by the groups of [run] path
    task = { field = "task_id", prefix = "task-" }
    condition = "condition"

Without ``file``, ``success`` and ``score`` are read from the log itself. The agent's own words (a DONE, "task
completed") are never an outcome: only what the harness or benchmark checked. A run without a record has no
outcome (never a failure for it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...base.errors import UsageError
from ..kit.reading import num
from .fields import Field, compile_fields
from .join import Found, Join
from .paths import PathPattern

_TRUE = {"true", "yes", "success", "succeeded", "successful", "pass", "passed", "ok", "1", "completed", "done"}
_KEYS = {"success", "score", "file", "records", "key", "joins", "join"}
_FALSE = {"false", "no", "fail", "failed", "failure", "0", "error", "incomplete", "timeout"}


class Outcome:
    """The ``[outcome]`` table of a mapping, compiled (``path``: the mapping's ``[run] path``, whose groups
    ``[outcome.join]`` matches)."""

    def __init__(self, table: dict[str, Any], where: str, path: PathPattern | None = None):
        unknown = sorted(set(table) - _KEYS)
        if unknown:
            raise UsageError(f"{where}: [outcome] has unknown key(s) {', '.join(unknown)} ({', '.join(sorted(_KEYS))}"
                             "); see docs/formats.md")
        self.fields: dict[str, Field] = compile_fields(table, ("success", "score"), "", where + " [outcome]")
        self.join = Join(table, where, path) if "file" in table else None
        self.file = self.join.spec if self.join is not None else None

    @property
    def empty(self) -> bool:
        return not self.fields.get("success") and not self.fields.get("score")

    def score(self, log: Any, run_dir: Path, names: dict[str, str | None],
              groups: dict[str, str] | None = None) -> tuple[float | None, str | None, Found | None]:
        """The run's recorded score (1/0 for a success flag), where it came from (``log`` or the results file's
        name; None, None when nothing is recorded for it) and, with a results file, the run's join.
        ``names``: the run's folder, path, run_id, task_id and goal, one of which a results record joins on
        (``key``/``joins``); ``groups``: what ``[run] path`` took from its path (``[outcome.join]``)."""
        if self.empty:
            return None, None, None
        if self.join is None:
            return _score_of(self.fields["success"].value(log) if "success" in self.fields else None,
                             self.fields["score"].value(log) if "score" in self.fields else None), "log", None
        found = self.join.find(run_dir, names, groups)
        if found.record is None or found.file is None:
            return None, None, found
        rec = found.record
        return _score_of(self.fields["success"].value(rec) if "success" in self.fields else None,
                         self.fields["score"].value(rec) if "score" in self.fields else None), found.file.name, found


def _score_of(success: Any, score: Any) -> float | None:
    """A success flag as 1 or 0, else a score as a number (a numeric string too)."""
    if isinstance(success, bool):
        return 1.0 if success else 0.0
    if isinstance(success, (int, float)):
        return 1.0 if success > 0 else 0.0
    if isinstance(success, str) and success.strip().lower() in _TRUE | _FALSE:
        return 1.0 if success.strip().lower() in _TRUE else 0.0
    got = num(score)
    if got is None and isinstance(score, str):
        try:
            got = float(score.strip())
        except ValueError:
            return None
    return got
