"""The library call behind each command: ``trajcheck validate`` is :func:`validate`, and so on.

    import trajcheck

    found = trajcheck.validate(["runs/"])               # every problem, without scoring
    arms = trajcheck.compare(["ledger/"], by="config.perceptual_verifier")
    best = trajcheck.best_of("ledger/")                 # a list of dicts, one per task

Each function returns plain data, or a value whose ``to_json()`` is plain data, and a command's
``--format json`` prints exactly that (:func:`plain`). The commands only parse options, call the function
and render its result; every decision (an exit code's condition, a count, a file written) is made here.
Heavy libraries load inside the functions: importing this module costs nothing at a command's start.
``trajcheck.score`` is in :mod:`trajcheck.api`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from .base.atomic import atomic_write
from .base.errors import UsageError
from .store.lock import DEFAULT_WAIT, LockWait

if TYPE_CHECKING:
    from .analyzers.draft import ContractDraft
    from .queries.comparison import Comparison
    from .queries.failuremodes import Failures
    from .queries.gate import GateResult
    from .store.ledgerquery import QueryResult
    from .queries.pairdiff import PairDiff
    from .queries.expected import Redo
    from .queries.repeats import Repeats
    from .scoring.validation import ValidationReport

Pathish = str | os.PathLike[str]


def plain(value: Any) -> Any:
    """What ``--format json`` prints for a function's result: its ``to_json()``, or the value itself."""
    to_json = getattr(value, "to_json", None)
    return to_json() if callable(to_json) else value


def validate(paths: Iterable[Pathish], *, mapping: Pathish | None = None,
             input_format: str | None = None) -> "ValidationReport":
    """Every problem of every run under ``paths`` (JSON, schema, step indices, paths, frame headers,
    coordinates), without scoring; ``mapping`` reads logs of another shape; ``input_format`` forces one reader
    (as ``score --input-format`` does; UsageError for an unknown name). Never raises for bad input."""
    from .scoring.validation import validate_paths

    return validate_paths(paths, mapping=mapping, input_format=input_format)


def _known_format(name: str | None) -> None:
    from .readers.discovery import get_reader, reader_names

    if name is None:
        return
    try:
        get_reader(name)
    except KeyError:
        raise UsageError(f"unknown format {name!r}; formats: " + ", ".join(reader_names())) from None


def query(ledger: Pathish, sql: str) -> "QueryResult":
    """The rows of ``sql`` over the ledger's views ``runs`` and ``steps`` (DuckDB); QueryError if it fails."""
    from .store.ledgerquery import query as run

    return run(ledger, sql)


def compare(ledgers: list[Pathish], by: str | None = None, success_score: float = 1.0, *,
            baseline: str | None = None, where: str | None = None,
            include_missing: bool = False, missing: str = "skip", damaged: str = "keep",
            outcome: str | None = None) -> "Comparison":
    """Ablation arms of one ledger (``by`` a runs column or ``config.KEY``) or two ledgers: success with
    Wilson intervals, the paired difference, McNemar's test, per-task wins, what the verifier-off arm
    missed. With the runs expected (``score --expect``), each arm's denominator, and its success over the runs
    ``missing`` and ``damaged`` say (:func:`trajcheck.queries.expected.apply_comparison`). ``outcome`` judge:NAME:
    success is that judge's verdict, the runs it did not judge left out and counted, no expected runs. UsageError
    for a bad ``by``, ``baseline``, ``where`` or ``outcome``, and ``missing`` or ``damaged`` with a judge's."""
    from .queries.comparison import compare as run
    from .queries.expected import apply_comparison

    found = run(list(ledgers), by, success_score, baseline=baseline, where=where, include_missing=include_missing,
                outcome=outcome)
    if found.judged is not None and (missing, damaged) != ("skip", "keep"):
        raise UsageError("--missing and --damaged count the expected runs by the ledger's verdicts, not a judge's")
    return found if found.judged else apply_comparison(found, ledgers[0] if len(ledgers) == 1 else None, missing,
                                                       damaged)


def failures(ledger: Pathish, by: str | None = None, *, where: str | None = None) -> "Failures":
    """Where runs fail: the failure modes of the ledger's runs per arm of ``by`` (a runs column or
    ``config.KEY``; all runs as one arm without it), each with its count, its share of the arm's failing runs
    and its rate over all its runs (Wilson intervals), its run ids, an example run with its evidence; the most
    frequent error texts and blocking pages. The same ledger gives the same result. UsageError for a bad ``by``
    or ``where``."""
    from .queries.failuremodes import failures as run

    return run(ledger, by, where)


def check(ledger: Pathish, baseline: Pathish | None = None, *, max_false_claim_rate: float | None = None,
          min_success: float | None = None, max_success_drop: float | None = None,
          max_cost_increase: float | None = None, by: str = "task_id", success_score: float = 1.0,
          where: str | None = None, max_mode_rate: dict[str, float] | None = None,
          max_judge_false_success: dict[str, float] | None = None, labels: Pathish | None = None) -> "GateResult":
    """A gate for CI: each rule given, judged over all runs and shown per task (``by``). The false-claim rate at
    most ``max_false_claim_rate`` and success at least ``min_success`` (the observed rates, Wilson intervals
    beside them); against ``baseline``, on the tasks both ledgers ran, a drop in success that its interval
    confirms above ``max_success_drop`` and a confirmed relative increase of ``runs.cost_usd`` per run above
    ``max_cost_increase`` fail; ``max_mode_rate`` ({failure mode: R}) fails when more than R of the runs failed in
    that mode; ``max_judge_false_success`` ({judge: R}) when a judge passes more than R of the runs ``labels`` fail.
    ``.passed`` when every rule holds. UsageError without a rule, for a limit out of range, a baseline rule without
    a baseline, a baseline sharing no task, no cost data, a judge rule without labels or its judge (docs/ci.md)."""
    from .queries.gate import check as run

    return run(ledger, baseline, max_false_claim_rate=max_false_claim_rate, min_success=min_success,
               max_success_drop=max_success_drop, max_cost_increase=max_cost_increase, by=by,
               success_score=success_score, where=where, max_mode_rate=max_mode_rate,
               max_judge_false_success=max_judge_false_success, labels=labels)


def flaky(ledger: Pathish, repeat_key: str | None = None, by: str | None = None, *, where: str | None = None,
          success_score: float = 1.0) -> "Repeats":
    """Repeats and the noise floor: every task's repeated runs (same task and config; ``repeat_key``,
    ``config.KEY``, names a config key that may differ between repeats) with its pass rate, whether it flips,
    pass@k and pass^k; per arm of ``by`` the flip rate, the ICC of verdicts within tasks, the design effect and the
    minimum detectable difference. ``.flaky``: the tasks that flip. UsageError for a bad key, ``by`` or ``where``."""
    from .queries.repeats import repeats as run

    return run(ledger, repeat_key, by, where=where, success_score=success_score)


def redo(ledger: Pathish) -> "Redo":
    """The runs to run again, as task ids and run ids: the missing (the runs ``score --expect`` recorded as
    expected that the ledger lacks; no run id), the invalid and the damaged. ``.expected`` is False when the ledger
    records no expected runs (then none can be missing)."""
    from .queries.expected import redo as run

    return run(ledger)


def agree(ledger: Pathish, labels: Pathish) -> dict[str, Any]:
    """Each verdict source against expert ``labels`` (JSON ``{run_id: {...}}`` or CSV): precision, recall,
    F1, NPV, TNR, contract-vs-judge confusion, Cohen's kappa, pass@k and flaky tasks."""
    from .queries.agreement import agree as run

    return run(ledger, labels)


def judges(ledger: Pathish, judgments: list[Pathish] | None = None, labels: Pathish | None = None,
           max_false_success: float | None = None) -> dict[str, Any]:
    """Every judge of the ledger (``score --judgments``) and of ``judgments`` (files or folders in each judge's own
    format, matched to the ledger's runs) checked against the evidence and, with ``labels``, against labels:
    coverage, rates with Wilson intervals, kappa, flip rates, cost, and each success the evidence contradicts
    (docs/judges.md). UsageError with no judgment, a path that matches no run, or ``max_false_success`` without
    labels."""
    from .queries.judges import judges as run

    return run(ledger, [Path(j) for j in judgments or []], labels, max_false_success)


#: The tables :func:`export_table` builds, and the formats it writes them in.
EXPORT_TABLES = ("summary", "per-task", "per-action-type", "compare")
EXPORT_FORMATS = ("md", "csv", "latex", "html", "json")


def export_table(ledger: Pathish, table: str = "summary", fmt: str = "md", *, by: str | None = None,
                 success_score: float = 1.0, out: Pathish | None = None, missing: str = "skip",
                 damaged: str = "keep") -> str:
    """One table for a paper or a PR (``table`` one of :data:`EXPORT_TABLES`, ``fmt`` one of
    :data:`EXPORT_FORMATS`), as text: the same ledger always gives the same bytes. With ``out`` the text is
    also written there, atomically (a reader never sees half a file); OSError if it cannot be. When the ledger
    records the runs expected (``score --expect``), the caption gives each group's denominator and the summary's
    success is over the runs ``missing`` (``skip``, or ``fail``: each missing run a failure) and ``damaged``
    (``keep``, or ``exclude``) say (:func:`trajcheck.queries.expected.apply`)."""
    from .queries.expected import apply
    from .queries.tables import RENDERERS, build

    if table not in EXPORT_TABLES:
        raise UsageError(f"unknown table {table!r}: " + ", ".join(EXPORT_TABLES))
    if fmt not in RENDERERS:
        raise UsageError(f"unknown export format {fmt!r}: " + ", ".join(RENDERERS))
    text = RENDERERS[fmt](apply(build(ledger, table, by, success_score), ledger, by, success_score, missing, damaged))
    if out is not None:
        with atomic_write(out, "w", hidden=True) as f:
            f.write(text)
    return text


@dataclass(frozen=True)
class ReportWritten:
    """What :func:`report` wrote: the index page, how many run pages (and how many with thumbnails), and how
    many files it wrote, kept unchanged from the last report in that folder, and removed."""

    index: Path
    runs: int
    with_thumbnails: int
    written: int = 0
    kept: int = 0
    removed: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"index": str(self.index), "runs": self.runs, "with_thumbnails": self.with_thumbnails,
                "written": self.written, "kept": self.kept, "removed": self.removed}


def report(ledger: Pathish, out: Pathish = "report", *, by: str | None = None, max_runs: int | None = None,
           success_score: float = 1.0, jobs: int | None = None,
           on_progress: Callable[[int, int], None] | None = None, wait: float | None = None,
           on_wait: Callable[[LockWait], None] | None = None, labels: Pathish | None = None) -> ReportWritten:
    """A static HTML report in the folder ``out``: index.html with summary and comparison tables and every run;
    one page per run (``runs/<name>.html``, named by its run id), with thumbnails (the ``max_runs`` most telling
    only, when given); one page per task with runs in two arms of ``by``, the pair side by side. Thumbnails are
    made once per frame content and cached; the work runs on ``jobs`` processes (None: one per core);
    ``on_progress(done, total)`` is told as run pages are written. Only files whose bytes changed since the last
    report in ``out`` are written (each atomically, the index last). One report at a time writes a folder: a
    second waits up to ``wait`` seconds (None: the default, 300) for the first (``on_wait`` hears who holds it),
    then raises LedgerBusy having written nothing. OSError when it cannot be written. With judgments in the
    ledger, ``judges.html`` checks each judge against the evidence (and ``labels``, when given)."""
    from functools import partial

    from .render.pairpage import write_pairs
    from .render.reportbuild import write_report

    w = write_report(ledger, out, by, max_runs, success_score, partial(write_pairs, ledger), jobs, on_progress,
                     DEFAULT_WAIT if wait is None else wait, on_wait, labels)
    return ReportWritten(w.index, w.runs, w.with_thumbnails, w.written, w.kept, w.removed)


def best_of(ledger: Pathish, by: str = "task_id") -> list[dict[str, Any]]:
    """The best rollout of each group (``by`` a runs column or ``config.KEY``): verdict (pass > unknown >
    uncertain > fail), then higher total reward, then fewer steps, then run_id, and why. One dict per group,
    its first key named ``by``."""
    from .queries.views import best_of as choose

    return [{by: r.group, "best_run": r.best, "verdict": r.verdict, "source": r.source,
             "reward_total": r.reward_total, "steps": r.n_steps, "rollouts": r.candidates, "why": r.why}
            for r in choose(ledger, by)]


def timeline(ledger: Pathish, run_id: str) -> dict[str, Any]:
    """One run as ``{"run": {...}, "steps": [...]}``: its row and its step rows, in order. UsageError when
    the ledger has no such run."""
    from .queries.views import timeline as build

    return build(ledger, run_id)


def draft_contract(ledger: Pathish, run_id: str) -> "ContractDraft":
    """A contract for the task of ``run_id``, a run the user says succeeded: checks of what its final screen shows
    that its first did not (new lines of text, the URL, the title), for the user to trim (``.contract``, valid
    against schemas/contract.schema.json; ``.notes`` what to know). UsageError when the run is not in the ledger,
    cannot be read again, or shows nothing new."""
    from .queries.draft import draft_contract as draft

    return draft(ledger, run_id)


def diff(ledger: Pathish, run_a: str | None = None, run_b: str | None = None, *, task: str | None = None,
         by: str | None = None, pick: str | int = "first", baseline: str | None = None,
         arm: str | None = None) -> "PairDiff":
    """Two runs side by side: ``run_a`` and ``run_b``, or one run of ``task`` from each of two arms of ``by``
    (``baseline``, default the first by name, and ``arm``; ``pick`` first, best or a trial number when an arm
    has several). Their steps aligned by screen (pHash, page) and action, and the first step where they
    diverge, and why. UsageError for a run, task or arm the ledger lacks."""
    from .queries.pairdiff import diff as run

    return run(ledger, run_a, run_b, task=task, by=by, pick=pick, baseline=baseline, arm=arm)


@dataclass(frozen=True)
class Compacted:
    """What :func:`compact` did: the ledger's parts before and after, and the generation it committed."""

    ledger: Path
    parts_before: int
    parts_after: int
    generation: int

    def to_json(self) -> dict[str, Any]:
        return {"ledger": str(self.ledger), "parts_before": self.parts_before, "parts_after": self.parts_after,
                "generation": self.generation}


def compact(ledger: Pathish, *, wait: float = DEFAULT_WAIT,
            on_wait: Callable[[LockWait], None] | None = None) -> Compacted:
    """Merge the ledger's parts into one per table (the rows are unchanged), holding its writer lock;
    LedgerError when it cannot be read or written, LedgerBusy when ``wait`` seconds ran out."""
    from .store import ledger as _ledger

    root = Path(ledger)
    before = _ledger.read_manifest(root) if root.is_dir() else None
    manifest = _ledger.compact(root, wait, on_wait)
    return Compacted(root, sum(map(len, before.parts.values())) if before else 0,
                     sum(map(len, manifest.parts.values())), manifest.generation)


def columns(table: str | None = None) -> list[dict[str, str]]:
    """The ledger's columns (of one table, ``runs`` or ``steps``, or both): table, column, Arrow type and
    meaning, from their one declaration. UsageError for an unknown table."""
    from .schemas.ledger import TABLES

    if table is not None and table not in TABLES:
        raise UsageError(f"no table {table!r}; tables: {', '.join(TABLES)}")
    return [{"table": n, "column": c.name, "type": str(c.type), "description": c.description + values_link(n, c.name)}
            for n in ([table] if table else TABLES) for c in TABLES[n]]


def values_link(table: str, column: str, md: bool = False) -> str:
    """For a reason column, where its values are listed (its section of docs/reasons.md, a Markdown link with
    ``md``); else ""."""
    from .base.reasons import BY_COLUMN

    section = BY_COLUMN.get(f"{table}.{column}")
    if section is None:
        return ""
    return f" Values: [reasons.md#{section.key}]({section.link})." if md else f" Values: docs/{section.link}."


def formats(name: str | None = None) -> list[dict[str, str]]:
    """The run formats ``score --input-format`` accepts (``{"format", "summary"}`` each), or with ``name``
    that format's field mapping (``{"source field", "trajcheck field"}`` each). UsageError for an unknown
    name."""
    from .readers.discovery import readers

    known = readers()
    if name is None:
        return [{"format": r.name, "summary": r.summary} for r in known]
    reader = next((r for r in known if r.name == name), None)
    if reader is None:
        raise UsageError(f"unknown format {name!r}; formats: " + ", ".join(r.name for r in known))
    return [{"source field": source, "trajcheck field": field} for source, field in reader.mapping]


@dataclass
class DraftedMapping:
    """A mapping drafted from a folder (``text``, TOML), what the draft is unsure of, the runs that hold its log
    and how many were read to draft it; with ``--check``, what the draft reads (``coverage``) and what scoring
    with it gave (``scored``, ``invalid``, ``verdicts``)."""

    text: str
    unsure: list[str]
    runs: int
    sampled: int
    coverage: dict[str, Any] | None = None
    scored: int | None = None
    invalid: int | None = None
    verdicts: dict[str, int] | None = None
    summary: str = ""
    #: a reader trajcheck has that reads every run under the folder: no mapping is needed (``text`` says so)
    reader: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mapping": self.text, "unsure": self.unsure, "runs": self.runs,
                               "sampled": self.sampled, "reader": self.reader}
        if self.coverage is not None:
            out["check"] = {**self.coverage, "scored": self.scored, "invalid": self.invalid,
                            "verdicts": self.verdicts}
        return out


def draft_mapping(folder: Pathish, *, sample: int = 20, check: bool = False) -> DraftedMapping:
    """A mapping file drafted from at most ``sample`` of the runs under ``folder`` (UsageError when nothing
    there looks like a log); with ``check``, the folder read and scored with the draft (in a temporary
    ledger): runs read, actions understood, screenshots found, verdicts. When a reader trajcheck has reads every
    run there, no mapping is drafted: ``reader`` names it and ``text`` says so (a TOML comment)."""
    import tempfile

    from .readers.mapping.draft.compose import draft

    if sample < 1:
        raise UsageError("--sample must be at least 1")
    d = draft(Path(folder), sample=sample)
    out = DraftedMapping(d.text, d.unsure, d.runs, d.sampled, reader=d.reader)
    if not check or d.reader is not None:
        return out
    from .api import score
    from .readers.mapping.reach import measure

    with tempfile.TemporaryDirectory(prefix="trajcheck-draft-") as tmp:
        m = Path(tmp) / "drafted.toml"
        m.write_text(d.text, encoding="utf-8")
        cov = measure([folder], m)
        res = score([folder], out=Path(tmp) / "ledger", mapping=m)
        verdicts: dict[str, int] = {}
        for r in res.summaries:
            v = str(r.get("eval_final_verdict") or "none")
            verdicts[v] = verdicts.get(v, 0) + 1
    out.coverage, out.summary = cov.to_json(), cov.summary()
    out.scored, out.invalid, out.verdicts = res.scored, len(res.invalid), verdicts
    return out
def detect_formats(folder: Pathish, input_format: str | None = None) -> list[dict[str, object]]:
    """Which readers looked at ``folder`` and the folders below it that discovery asks about, and why each did or
    did not claim each one (``{"folder", "reader", "claims", "fit", "reads", "why"}`` rows; ``reads``: the reader
    that reads it). ``input_format`` asks that reader alone. UsageError for an unknown name or a folder that
    does not exist."""
    from pathlib import Path

    from .readers.detect import detect
    from .readers.discovery import get_reader

    _known_format(input_format)
    root = Path(folder)
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder")
    return [x.to_dict() for x in detect(root, [get_reader(input_format)] if input_format else None)]


def format_summary(name: str) -> str:
    """One reader's one-line summary (the title of ``trajcheck formats NAME``)."""
    from .readers.discovery import get_reader

    return get_reader(name).summary
