"""The runs a benchmark expects, so that its denominator never shrinks in silence (issue 50, item 3).

``score --expect TASKS`` reads a file of task ids, one a line, each optionally followed by its repeats (``task x 3``,
``task × 3`` or ``task * 3``; blank lines and ``#`` comments are skipped; a task named twice adds up), and records
it beside the ledger's parts as ``expected.json`` ({"format": "trajcheck.expected/1", "tasks": {task: repeats}}):
a small table of its own, not ledger columns, so it changes no run's digest and needs no migration.

Each group of runs (all the runs, or each arm of ``by``: every arm is expected to run every expected task as often)
then has M expected runs, N scored (status ``ok``) of the expected tasks, K damaged (runs with a ``damage`` value,
when the ledger has that column), I invalid (unreadable: status ``invalid``), J missing (for each task, the expected
repeats less the runs the group has of it, scored or not) and the runs of tasks not expected. A run without a log
(damage ``no_log``) has no task id: nothing says which expected task it ran, so it is counted apart (``K runs without
a log (task unknown)``), never taken for one of the missing runs; in a rate it is a damaged run that did not pass.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.atomic import atomic_write
from ..base.errors import UsageError
from ..base.failuremodes import Damage
from ..store import ledger
from .comparison import outcome_of
from .views import group_expr

if TYPE_CHECKING:
    from .comparison import Comparison
    from .tables import ReportTable

EXPECTED = "expected.json"
FORMAT = "trajcheck.expected/1"
_LINE = re.compile(r"^(?P<task>\S+)(?:\s*[x×*]\s*(?P<n>\d+))?$")


def read_expect(path: str | os.PathLike[str]) -> dict[str, int]:
    """The tasks file of ``score --expect``: task id -> expected runs (module docstring). UsageError naming the line
    of anything else."""
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--expect {path}: cannot read it ({exc})") from None
    tasks: dict[str, int] = {}
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _LINE.match(line)
        if not m or (m["n"] is not None and int(m["n"]) < 1):
            raise UsageError(f"--expect {path}:{n}: expected a task id, or a task id and its repeats "
                             f"('task x 3'), not {raw.strip()!r}")
        tasks[m["task"]] = tasks.get(m["task"], 0) + int(m["n"] or 1)
    if not tasks:
        raise UsageError(f"--expect {path}: no task in it")
    return tasks


def save(ledger_dir: str | os.PathLike[str], tasks: dict[str, int]) -> None:
    """Record the expected runs beside the ledger (atomically: a reader sees the old table or the new one)."""
    with atomic_write(Path(ledger_dir) / EXPECTED, "w") as f:
        f.write(json.dumps({"format": FORMAT, "tasks": dict(sorted(tasks.items()))}, indent=1) + "\n")


def record(ledger_dir: str | os.PathLike[str], tasks: dict[str, int] | None) -> list[dict[str, Any]] | None:
    """After a score: record ``tasks`` as the expected runs (None: keep the table there is), and each group's
    :class:`Denominator` as JSON; None when the ledger records no expected runs."""
    if tasks is not None:
        save(ledger_dir, tasks)
    found = denominators(ledger_dir)
    return None if found is None else [d.to_json() for d in found]


def load(ledger_dir: str | os.PathLike[str]) -> dict[str, int] | None:
    """The ledger's expected runs (task -> repeats), None when ``score --expect`` never recorded any."""
    path = Path(ledger_dir) / EXPECTED
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
        tasks = data["tasks"] if data.get("format") == FORMAT else None
        if not isinstance(tasks, dict):
            raise ValueError("no tasks")
        return {str(t): int(n) for t, n in tasks.items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        from ..base.errors import LedgerError

        raise LedgerError(f"{path}: unreadable table of expected runs ({exc}); `trajcheck score --expect` "
                          "records it again") from None


@dataclass(frozen=True)
class Denominator:
    """One group's expected runs against what it has (module docstring)."""

    group: str
    expected: int
    scored: int
    damaged: int
    invalid: int
    missing: int
    missing_tasks: dict[str, int]  # task -> runs missing
    unexpected: int  # runs of tasks the table does not name
    redo: list[dict[str, Any]] = field(default_factory=list)  # the runs to run again, each {task_id, run_id, why}
    damaged_successes: int = 0  # damaged runs that count as successes (left out with --damaged exclude)
    #: runs without a log (damage no_log) and so without a task id, counted apart: nothing says which expected
    #: task each ran, so none is taken for a missing run (nor among ``scored``, ``damaged`` and ``missing``); in a
    #: rate each is a damaged run that did not pass
    unknown_task: int = 0

    def text(self) -> str:
        """'scored 26 of 28 expected runs; 0 damaged; 2 missing: t1, t2 x2', and '; 1 run without a log (task
        unknown)' when the group has such runs."""
        missing = ", ".join(t if n == 1 else f"{t} x{n}" for t, n in self.missing_tasks.items())
        return (f"scored {self.scored} of {self.expected} expected runs; {self.damaged} damaged; "
                f"{self.missing} missing" + (f": {missing}" if missing else "") + self._tail())

    def _tail(self) -> str:
        n = self.unknown_task
        return ((f"; {n} run{'s' * (n != 1)} without a log (task unknown)" if n else "")
                + (f"; {self.invalid} invalid" if self.invalid else "")
                + (f"; {self.unexpected} runs of tasks not expected" if self.unexpected else ""))

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "expected": self.expected, "scored": self.scored, "damaged": self.damaged,
                "invalid": self.invalid, "missing": self.missing, "missing_tasks": self.missing_tasks,
                "unexpected": self.unexpected, **({"unknown_task": self.unknown_task} if self.unknown_task else {}),
                "text": self.text()}


def _rows(ledger_dir: str | os.PathLike[str], by: str | None) -> list[tuple[Any, ...]]:
    con = ledger.connect(ledger_dir)
    try:
        names = {d[0] for d in con.execute("select * from runs limit 0").description}
        damage = "damage" if "damage" in names else "NULL"
        expr = f"CAST({group_expr(by)} AS VARCHAR)" if by else "'(all)'"
        try:
            return con.execute(f"select {expr}, coalesce(task_id, run_id), run_id, status, {damage}, "
                               "eval_final_verdict, verdict_source, outcome_score, task_id is null from runs "
                               "order by run_id").fetchall()
        except Exception as exc:  # noqa: BLE001  (binder error: unknown column)
            raise UsageError(f"--by {by}: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()


def denominators(ledger_dir: str | os.PathLike[str], by: str | None = None, success_score: float = 1.0
                 ) -> list[Denominator] | None:
    """Each group's :class:`Denominator` (one, ``(all)``, without ``by``); None when no runs are expected."""
    found = grouped(ledger_dir, by, success_score)
    return None if found is None else found[0]


def grouped(ledger_dir: str | os.PathLike[str], by: str | None = None, success_score: float = 1.0
            ) -> tuple[list[Denominator], int] | None:
    """Each group's :class:`Denominator`, and the runs without a log that are in no group: with ``by``, a run
    without a log has no value of it (no config, no task: nothing was read), so it is no run of any arm, and no
    group of its own is made for it; it is counted here, once (:func:`apart`). None when no runs are expected."""
    tasks = load(ledger_dir)
    if tasks is None:
        return None
    groups: dict[str, list[tuple[Any, ...]]] = {}
    unplaced = 0
    for g, *rest in _rows(ledger_dir, by):
        _, _, status, damage, *_, no_task = rest
        if by and g is None and no_task and damage == Damage.NO_LOG and status == "ok":
            unplaced += 1
            continue
        groups.setdefault("(null)" if g is None else str(g), []).append(tuple(rest))
    if not groups and not by:
        groups["(all)"] = []
    return [_group(name, tasks, rows, success_score) for name, rows in sorted(groups.items())], unplaced


def apart(n: int, by: str | None) -> str:
    """What the runs without a log that are in no group are: '1 run without a log (task unknown, no value of
    config.seed): in no arm's expected runs'."""
    return (f"{n} run{'s' * (n != 1)} without a log (task unknown, no value of {by}): in no arm's expected runs"
            if n else "")


def _group(name: str, tasks: dict[str, int], rows: list[tuple[Any, ...]], success_score: float) -> Denominator:
    present: dict[str, int] = {}
    redo: list[dict[str, Any]] = []
    scored = damaged = invalid = unexpected = won = unknown = 0
    for task, run_id, status, damage, verdict, source, score, no_task in rows:
        if task not in tasks and no_task and damage == Damage.NO_LOG and status == "ok":
            unknown += 1  # a folder of screenshots: a run of the batch whose task nothing says, counted apart
            redo.append({"task_id": None, "run_id": run_id, "why": f"damaged: {damage}"})
            continue
        if task not in tasks:
            unexpected += 1
            continue
        present[task] = present.get(task, 0) + 1
        if status != "ok":
            invalid += 1
            redo.append({"task_id": task, "run_id": run_id, "why": "invalid"})
            continue
        scored += 1
        if damage:
            damaged += 1
            won += outcome_of({"eval_final_verdict": verdict, "verdict_source": source, "outcome_score": score},
                              success_score)[0]
            redo.append({"task_id": task, "run_id": run_id, "why": f"damaged: {damage}"})
    missing = {t: n - present.get(t, 0) for t, n in sorted(tasks.items()) if n > present.get(t, 0)}
    redo = [{"task_id": t, "run_id": None, "why": "missing"} for t, n in missing.items() for _ in range(n)] + redo
    return Denominator(name, sum(tasks.values()), scored, damaged, invalid, sum(missing.values()), missing,
                       unexpected, redo, won, unknown)


@dataclass(frozen=True)
class Redo:
    """The runs to run again (``trajcheck redo``): the missing (no run id), the invalid and the damaged."""

    expected: bool  # False: the ledger records no expected runs, so none can be missing
    runs: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"expected": self.expected, "runs": self.runs}


def redo(ledger_dir: str | os.PathLike[str]) -> Redo:
    """The runs to run again, as task ids and run ids (a missing run has none): without a table of expected runs,
    only the invalid and damaged runs of the ledger."""
    found = denominators(ledger_dir)
    if found is not None:
        return Redo(True, [r for d in found for r in d.redo])
    runs = [{"task_id": None if row[-1] else task, "run_id": run_id,
             "why": "invalid" if status != "ok" else f"damaged: {damage}"}
            for row in _rows(ledger_dir, None) for _, task, run_id, status, damage, *_ in [row]
            if status != "ok" or damage]
    return Redo(False, runs)


#: How missing and damaged runs enter a rate: export's and compare's --missing and --damaged. With expected runs
#: the default is ``fail``: the rates are over the expected runs, each one not scored a failure.
MISSING_CHOICES = ("fail", "skip")
DAMAGED_CHOICES = ("keep", "exclude")


def _check(missing: str | None, damaged: str) -> None:
    if missing not in (None, *MISSING_CHOICES) or damaged not in DAMAGED_CHOICES:
        raise UsageError(f"--missing is one of {', '.join(MISSING_CHOICES)}, --damaged one of "
                         f"{', '.join(DAMAGED_CHOICES)}")


def _no_expected(missing: str | None, damaged: str, what: str) -> None:
    """Without a table of expected runs there is nothing to count missing: asking for it is a usage error
    (``--missing skip``, what is done anyway, is not)."""
    _check(missing, damaged)
    if missing == "fail" or damaged != "keep":
        raise UsageError(f"--missing fail and --damaged exclude need the expected runs{what}: score with --expect "
                         "TASKS first")


def adjusted(k: int, n: int, d: Denominator, missing: str | None, damaged: str) -> tuple[int, int]:
    """A group's successes k of n scored runs, over the denominator the options say: ``missing`` ``fail`` (the
    default, None) counts each expected run that was not scored, missing or unreadable (invalid), as a failure,
    so the rate is over the expected runs; ``skip`` leaves them out. ``damaged`` ``exclude`` leaves the damaged
    runs out of both, runs without a log among them (``keep``: counted as they are: a run without a log, in
    ``n``, as a run that did not pass)."""
    _check(missing, damaged)
    if damaged == "exclude":
        k, n = k - d.damaged_successes, n - d.damaged - d.unknown_task
    if missing in (None, "fail"):
        n += d.missing + d.invalid
    return k, n


def apply(table: "ReportTable", ledger_dir: str | os.PathLike[str], by: str | None, success_score: float,
          missing: str | None = None, damaged: str = "keep") -> "ReportTable":
    """``table`` (export's) with the expected runs: the caption says each group's denominator and what the rates
    are over; the summary's success is over the runs the options say, with its expected, missing and damaged
    runs in columns of their own. The table as it is when the ledger records no expected runs."""
    from dataclasses import replace

    from .tables import Cell, _rate_cell
    from ..base import stats

    both = grouped(ledger_dir, by, success_score)
    if both is None:
        _no_expected(missing, damaged, "")
        return table
    found, unplaced = both
    caption = table.caption + "; " + "; ".join(
        [("" if d.group == "(all)" else f"{d.group}: ") + d.text() for d in found]
        + ([apart(unplaced, by)] if unplaced else [])) + "; " + note(missing, damaged)
    if table.name != "summary":
        return replace(table, caption=caption)
    by_group = {d.group: d for d in found}
    at = table.columns.index("success")
    rows = []
    for row in table.rows:
        d = by_group.get("(all)") if by is None else by_group.get(str(row[0].value))
        if d is None:
            rows.append((*row, Cell(None, "-"), Cell(None, "-"), Cell(None, "-")))
            continue
        k, n = adjusted(row[at].value["k"], row[at].value["n"], d, missing, damaged)
        cells = list(row)
        cells[at] = _rate_cell(stats.wilson(k, n))
        hurt = d.damaged + d.unknown_task  # every damaged run in the rate, runs without a log among them
        rows.append((*cells, Cell(d.expected, str(d.expected)), Cell(d.missing, str(d.missing)),
                     Cell(hurt, str(hurt))))
    return replace(table, caption=caption, columns=(*table.columns, "expected", "missing", "damaged"),
                   rows=tuple(rows))


def note(missing: str | None, damaged: str) -> str:
    """What a table's rates are over, in words."""
    over = ("rates over the scored runs: missing and unreadable runs not counted (by default they count as failures)"
            if missing == "skip" else "rates over the expected runs: missing and unreadable runs counted as failures "
            "(--missing skip leaves them out)")
    return over + ", damaged runs " + ("left out" if damaged == "exclude" else "counted as scored")


def apply_comparison(comparison: "Comparison", ledger_dir: str | os.PathLike[str] | None,
                     missing: str | None = None, damaged: str = "keep") -> "Comparison":
    """``comparison`` (of one ledger: ``ledger_dir``; None for two) with each arm's denominator and its success over
    the runs ``missing`` and ``damaged`` say (:func:`adjusted`). As it is without expected runs."""
    both = None if ledger_dir is None else grouped(ledger_dir, comparison.by, comparison.success_score)
    if both is None:
        _no_expected(missing, damaged, " of one ledger")
        return comparison
    found, comparison.runs_without_log = both
    from ..base import stats

    by_arm = {d.group: d for d in found}
    for arm in comparison.arms:
        d = by_arm.get(arm.name)
        if d is not None:
            arm.success = stats.wilson(*adjusted(arm.success.k, arm.success.n, d, missing, damaged))
    comparison.expected = [d.to_json() for d in found]
    comparison.rates_over = note(missing, damaged)
    return comparison
