"""trajcheck score: recompute every analyzer over recorded runs and write the ledger."""

from __future__ import annotations

import inspect
import os
import sys
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Optional

import typer

from ..api import NoRunsFound
from ..base.errors import LedgerError
from ..scoring import scoreargs
from ..scoring.scoreargs import Engine
from ..store.lock import LedgerBusy

from ..base.words import count
from .common import Exit, emit, err, literal, out, print_json, print_problems, wait_line
from .exits import ExitOutcome, ExitRule, exit_on_error
from .options import Format, FormatOpt, QuietOpt

if TYPE_CHECKING:
    from rich.progress import Progress

    from ..api import ScoreResult
    from ..store.lock import LockWait
    from ..scoring.pipeline import RunResult

class _NoPandas:
    """A meta path finder that makes ``import pandas`` fail in this process."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("trajcheck score does not load pandas")
        return None


#: Set by the console entry point (trajcheck.cli.main.main): the process is this command's alone. A test
#: runner or a notebook invoking the Typer app keeps its pandas.
OWN_PROCESS = False


def _no_pandas() -> None:
    """pyarrow imports pandas on its first conversion of Python values (0.17-0.22 s, a fifth of scoring
    one run), only to ask whether the values are pandas objects; the `score` command never holds any.
    Here, and only in this command's process (a library caller keeps its pandas), pyarrow is told there
    is none. Nothing else `score` loads with the local engine imports pandas (tested)."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


def _typer_type(kind: Any) -> Any:
    """The type Typer is told for an option of ScoreArgs: a path-like is a Path, an optional stays optional."""
    if typing.get_origin(kind) is tuple:  # a repeatable option: a list on the command line
        item = _typer_type(typing.get_args(kind)[0])
        return Optional[list[Path if item == Optional[Path] else item]]  # type: ignore[misc]
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    optional = len(args) < len(typing.get_args(kind))
    if args and any(a is str for a in args) and any(typing.get_origin(a) is not None or a is os.PathLike
                                                   for a in args):
        return Optional[Path]
    if optional:
        return Optional[args[0]]
    return kind


#: The options given any number of times (their default is an empty tuple; not given, Typer says None).
_REPEATABLE = frozenset(name for name, _, _, default in scoreargs.flags() if default == ())


def with_score_options(command: Callable[..., None]) -> Callable[..., None]:
    """Give ``command``, which takes ``**options``, one parameter per field of
    :class:`trajcheck.scoring.scoreargs.ScoreArgs`, declared there once (flag, help, bounds, default), before
    its own last two (``--format``, ``--quiet``)."""
    own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.kind is not p.VAR_KEYWORD]
    hints = typing.get_type_hints(command, include_extras=True)
    added = []
    for name, kind, flag, default in scoreargs.flags():
        info = typer.Option(*flag.names, help=flag.help, min=flag.min, max=flag.max)
        annotation: Any = Annotated.__class_getitem__((_typer_type(kind), info))  # type: ignore[attr-defined]
        added.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None if default == () else default,
                                       annotation=annotation))
        hints[name] = annotation
    params = [*(p.replace(annotation=hints[p.name]) for p in own[:-2]), *added,
              *(p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints[p.name]) for p in own[-2:])]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    return command


#: Per-run rows are listed for people up to this many runs; beyond it, a summary.
MAX_LISTED = 60


#: ``--judgments``: the verdicts of judges the user runs (:func:`trajcheck.scoring.judgments.read_judgments`).
@exit_on_error(ExitRule(LedgerError, Exit.INPUT, "cannot write the ledger: {error}",
                    means="the ledger cannot be read or written"),
               ExitOutcome(Exit.OK, "all runs scored"),
               ExitOutcome(Exit.FINDINGS, "the ledger was written but some runs are invalid, or a folder holds JSON, "
                                      "HTML or images that no reader claims (named on stderr)"),
               raises=(NoRunsFound, LedgerBusy))
@with_score_options
def score(
    runs: Annotated[list[str], typer.Argument(help="Run directories, folders searched recursively for runs, or "
                                              "fsspec URLs (s3://bucket/prefix).", show_default=False)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Ledger directory to write (created, or updated: "
                                      "rescored runs replace their rows).")] = Path("ledger"),
    expect: Annotated[Optional[Path], typer.Option("--expect", metavar="TASKS", help="A file of the task ids the "
                                                   "benchmark should have runs of, one a line, each optionally with "
                                                   "its repeats ('task x 3'): recorded beside the ledger, and the "
                                                   "summary says how many runs were scored, damaged and missing.")
                      ] = None,
    fmt: FormatOpt = Format.table,
    quiet: QuietOpt = False,
    **options: Any,
) -> None:
    """Score recorded runs and write the Parquet ledger.

    Example: trajcheck score sample_runs/ --out ledger/

    Scoring into an existing ledger skips runs whose input digest (files, reader,
    options, trajcheck version) is unchanged, rescores the rest, and drops runs
    whose directory is gone from a folder scored again; --force rescores all.
    """
    from ..api import score as run_score

    if options.get("engine") in (None, Engine.LOCAL) and OWN_PROCESS:
        _no_pandas()
    with _Bar(quiet) as bar:
        given = {k: () if v is None and k in _REPEATABLE else v for k, v in options.items()}
        result = run_score(runs, out, expect=expect, on_found=bar.found, on_result=bar.scored, on_wait=_waiting,
                           **given)
    print_problems(result.problems)
    if fmt is Format.json:
        print_json(result.to_json())
    else:
        _render(result.summaries, fmt)
    _summary(result)
    raise typer.Exit(int(Exit.OK if result.ok else Exit.FINDINGS))


class _Bar:
    """The progress bar on stderr, fed by the library's callbacks: runs found and scored, frames decoded.
    With --quiet there is none, and rich.progress is not imported (4 ms of the command's start)."""

    def __init__(self, quiet: bool) -> None:
        self.progress: "Progress | None" = None
        if not quiet:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), console=err, transient=True)

    def __enter__(self) -> "_Bar":
        if self.progress is not None:
            self.progress.__enter__()
            self.runs = self.progress.add_task("runs", total=None)
            self.frames = self.progress.add_task("frames", total=None)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()  # transient: the bar is cleared, before an error or the results are printed

    def found(self, n: int) -> None:
        """``on_found``: the number of runs to score is known."""
        if self.progress is not None:
            self.progress.update(self.runs, total=n)

    def scored(self, r: "RunResult") -> None:
        """``on_result``: one more run scored, with its frames."""
        if self.progress is not None:
            self.progress.advance(self.runs)
            self.progress.advance(self.frames, r.frames)


def _waiting(w: "LockWait") -> None:
    err.print(wait_line(w), highlight=False, markup=False)


def _summary(result: "ScoreResult") -> None:
    """The closing lines on stderr: what was scored, skipped and removed, the runs with warnings counted by
    kind, and each invalid run."""
    extra = ""
    if result.skipped:
        extra += f", {count(len(result.skipped), 'unchanged run')} skipped (--force rescores them)"
    if result.removed:
        extra += f", {count(len(result.removed), 'run')} whose directory is gone removed"
    if result.unclaimed:
        n = len(result.unclaimed)
        extra += f", {n} folder{'s' * (n != 1)} that no reader claims (named above)"
    state = "unchanged" if result.generation is None else f"generation {result.generation}"
    err.print(f"scored {count(result.scored, 'run')} ({len(result.invalid)} invalid), {result.frames} frames in "
              f"{result.elapsed:.2f}s ({result.frames_per_second:.1f} frames/s){extra} -> {result.ledger} ({state})",
              highlight=False, markup=False)
    if result.contracts is not None:
        err.print(result.contracts.text(), highlight=False, markup=False)
    rows = result.summaries
    if not rows and not result.invalid:  # nothing to do: the ledger as it stands, so the answer is still there
        from ..base.verdicts import coverage

        rows = result.ledger_runs()
        if rows:
            err.print(f"the ledger holds {count(len(rows), 'run')}", highlight=False)
    if result.summaries:
        err.print(_readers_line(result.summaries), highlight=False, markup=False)
    for line in result.join.lines() if result.join is not None else []:  # the mapping's results file
        err.print(line, highlight=False, markup=False)
    if rows:
        err.print(_verdict_line(rows), highlight=False)
        err.print((result.coverage if rows is result.summaries else coverage(rows)).text(), highlight=False)
        spend = _spend_line(rows)
        if spend:
            err.print(spend, highlight=False)
    if result.with_warnings:  # scored, but a frame, a point or an action was not what it should be
        kinds = ", ".join(f"{slug} {n}" for slug, n in result.warning_kinds.items())
        n = result.with_warnings
        err.print(f"{n} run{'s' * (n != 1)} with warnings: {kinds}; trajcheck validate shows them",
                  highlight=False, markup=False)
    poor = [w for r in result.summaries for w in r.get("warnings") or [] if _read_poorly(w)]
    for w in poor[:MAX_LISTED]:  # runs read so poorly that their rows say little: named, never silent
        err.print(f"[yellow]warning:[/] {literal(w)}", highlight=False)
    if len(poor) > MAX_LISTED:
        err.print(f"[yellow]warning:[/] and {len(poor) - MAX_LISTED} more runs read as poorly (the runs table's "
                  "warnings column has them all)", highlight=False)
    for d in result.expected or []:  # score --expect: the denominator, whole
        err.print(("" if d["group"] == "(all)" else f"{d['group']}: ") + d["text"], highlight=False, markup=False)
    for r in result.invalid:
        err.print(f"[red]invalid:[/] {literal(r['error'])}", highlight=False)


#: The run-level warnings of a poorly read run (its stored text ends with the slug in brackets).
READ_WARNINGS = ("[actions_not_understood]", "[frames_not_found]", "[frame_unreadable]")


def _read_poorly(warning: str) -> bool:
    """A run-level warning that the run was read poorly (``frame_unreadable`` is also each such frame's
    warning: the run-level one is the one about the run's steps, field ``steps[i].frames``)."""
    if not warning.endswith(READ_WARNINGS):
        return False
    return not warning.endswith("[frame_unreadable]") or "steps have no readable screenshot" in warning


def _readers_line(rows: list[dict[str, Any]]) -> str:
    """Which reader (or mapping) read the scored runs, counted: 'read by: ui-tars 3, trajcheck.run/1 2'."""
    from collections import Counter

    counts = Counter(str(r.get("source_format") or "?") for r in rows)
    return "read by: " + ", ".join(f"{name} {n}" for name, n in counts.most_common())


def _verdict_line(rows: list[dict[str, Any]]) -> str:
    """The final verdicts of the scored runs and their false claims, counted: the first question."""
    from collections import Counter

    counts = Counter(r.get("eval_final_verdict") or "none" for r in rows if r["status"] == "ok")
    verdicts = ", ".join(f"{counts[v]} {v}" for v in ("pass", "fail", "uncertain", "unknown", "none") if counts[v])
    lies = sum(1 for r in rows if r.get("false_claim") is True)
    return f"verdicts: {verdicts or 'none'}; {lies} false claim{'s' * (lies != 1)}"


def _spend_line(rows: list[dict[str, Any]]) -> str | None:
    """What the scored runs cost and took, where their logs say (None when none does): 'spend: $0.1310 over 2 of
    3 runs (log 1, prices 1), $0.0655 a run; 58.3 s over 2 runs, 29.2 s a run'."""
    ok = [r for r in rows if r["status"] == "ok"]
    costs = [r["cost_usd"] for r in ok if r.get("cost_usd") is not None]
    seconds = [r["wall_seconds"] for r in ok if r.get("wall_seconds") is not None]
    parts = []
    if costs:
        total = sum(costs)
        sources = ", ".join(f"{src} {sum(r.get('cost_source') == src for r in ok)}" for src in ("log", "prices")
                            if any(r.get("cost_source") == src for r in ok))
        parts.append(f"${total:.4f} over {len(costs)} of {len(ok)} runs ({sources}), ${total / len(costs):.4f} a run")
    if seconds:
        parts.append(f"{sum(seconds):.1f} s over {len(seconds)} of {len(ok)} runs, {sum(seconds) / len(seconds):.1f} "
                     "s a run")
    return "spend: " + "; ".join(parts) if parts else None


#: Below this many columns the summary table leaves out no_effect_seed and warnings (--format json has all).
WIDE = 100


def _render(rows: list[dict[str, Any]], fmt: Format) -> None:
    """The scored runs' summaries on stdout: one row per run, or totals past MAX_LISTED runs in a table."""
    cols = ["run_id", "status", "steps", "checked", "no_effect", "no_effect_seed", "warnings", "outcome", "verdict",
            "false_claim"]
    table: list[tuple[Any, ...]] = [
        (r["run_id"], r["status"], r.get("n_steps"), r.get("effect_checked"), r.get("effect_no_effect"),
         r.get("effect_no_effect_seed"), len(r.get("warnings") or []), r.get("outcome_status"),
         r.get("eval_final_verdict"), r.get("false_claim")) for r in rows]
    if fmt is Format.table and not table:  # nothing scored: the closing lines say so, and what the ledger holds
        return
    if fmt is Format.table and len(table) > MAX_LISTED:
        ok = [r for r in rows if r["status"] == "ok"]
        emit(["runs", "invalid", "steps", "checked", "no_effect", "no_effect_seed", "pass", "fail", "false_claims"],
             [(len(rows), len(rows) - len(ok), sum(r["n_steps"] or 0 for r in ok),
               sum(r["effect_checked"] or 0 for r in ok), sum(r["effect_no_effect"] or 0 for r in ok),
               sum(r["effect_no_effect_seed"] or 0 for r in ok),
               sum(r.get("eval_final_verdict") == "pass" for r in ok),
               sum(r.get("eval_final_verdict") == "fail" for r in ok),
               sum(r.get("false_claim") is True for r in ok))], fmt, title="trajcheck score")
        return
    if fmt is Format.table and out.width < WIDE:  # a narrow terminal: the columns that matter most
        keep = [cols.index(c) for c in ("run_id", "status", "steps", "no_effect", "verdict", "false_claim")]
        cols, table = [cols[i] for i in keep], [tuple(r[i] for i in keep) for r in table]
    emit(cols, table, fmt, title="trajcheck score")
