"""trajcheck score: recompute every analyzer over recorded runs and write the ledger."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from rich.markup import escape

from ..analyzers.effect_options import DEFAULT_THRESHOLD
from ..api import NoRunsFound
from ..base.errors import LedgerError
from ..store.lock import DEFAULT_WAIT, LedgerBusy

from .common import Exit, emit, err, out, print_json, print_problems, wait_line
from .exits import Outcome, Rule, exit_on_error
from .options import Format, FormatOpt, InputFormatOpt, MappingOpt, QuietOpt, WaitOpt

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


class Engine(str, enum.Enum):
    local = "local"
    dask = "dask"


class OcrMode(str, enum.Enum):
    auto = "auto"
    always = "always"
    off = "off"


#: Per-run rows are listed for people up to this many runs; beyond it, a summary.
MAX_LISTED = 60


@exit_on_error(Rule(LedgerError, Exit.INPUT, "cannot write the ledger: {error}",
                    means="the ledger cannot be read or written"),
               Outcome(Exit.OK, "all runs scored"),
               Outcome(Exit.FINDINGS, "the ledger was written but some runs are invalid, or a folder holds JSON, "
                                      "HTML or images that no reader claims (named on stderr)"),
               raises=(NoRunsFound, LedgerBusy))
def score(
    runs: Annotated[list[str], typer.Argument(help="Run directories, folders searched recursively for runs, or "
                                              "fsspec URLs (s3://bucket/prefix).", show_default=False)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Ledger directory to write (created, or updated: "
                                      "rescored runs replace their rows).")] = Path("ledger"),
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", min=1, help="Worker processes (default: all cores). Workers start only for 2 runs or more "
        "per worker: fewer are scored in this process, which is faster than starting one.")] = None,
    threshold: Annotated[int, typer.Option(min=0, max=64, help="pHash Hamming distance above which the seed "
                                           "rule counts a frame or region as changed.")] = DEFAULT_THRESHOLD,
    verifier: Annotated[bool, typer.Option("--verifier/--no-verifier", help="Run the perceptual verifier "
                                           "(--no-verifier is the seed's ablation toggle: verdicts are null "
                                           "with reason verifier_off).")] = True,
    ambient: Annotated[bool, typer.Option("--ambient/--no-ambient", help="Discount change the run shows "
                                          "happening on its own (clocks, spinners).")] = True,
    pixel_tolerance: Annotated[int, typer.Option(min=0, max=255, help="A pixel counts as changed when a "
                                                 "channel differs by more than this.")] = 0,
    contracts: Annotated[Optional[Path], typer.Option("--contracts", help="Folder of outcome contracts named "
                                                      "<task_id>.json (a run's own contract.json wins).")] = None,
    mapping: MappingOpt = None,
    tasks: Annotated[Optional[Path], typer.Option("--tasks", help="Reference step counts per task (a person's or "
                                                  "the optimal count), for runs.efficiency: JSON {task_id: N} or "
                                                  "CSV task_id,reference_steps.")] = None,
    ocr: Annotated[OcrMode, typer.Option("--ocr", help="Read the text on screen with OCR where a high-risk step "
                                         "changed it, and on a claiming run's final frame: auto (where no DOM "
                                         "snapshot says it), always (also beside the DOM, recording whether "
                                         "they agree) or off. Needs the ocr extra: pip install "
                                         "'trajcheck[ocr]'.")] = OcrMode.auto,
    prices: Annotated[Optional[Path], typer.Option("--prices", help="A price list (USD per million tokens, per "
                                                   "model): runs whose logs record tokens and the model but no "
                                                   "cost get tokens x price (cost_source prices): CSV with the "
                                                   "columns model, input_per_million, output_per_million and "
                                                   "optionally cached_per_million, or TOML with a table per model "
                                                   "(README, \"Cost and time\"). Nothing is priced without "
                                                   "it.")] = None,
    input_format: InputFormatOpt = None,
    engine: Annotated[Engine, typer.Option("--engine", help="Where runs are scored: local worker processes, "
                                           "or a dask.distributed cluster (pip install 'trajcheck[dask]').")]
    = Engine.local,
    scheduler: Annotated[Optional[str], typer.Option("--scheduler", help="Dask scheduler address, e.g. "
                                                     "tcp://10.0.0.5:8786 (default: a local cluster of --jobs "
                                                     "workers).")] = None,
    evaluator_pass: Annotated[float, typer.Option("--evaluator-pass", help="A recorded evaluator score "
                                                  "(outcome.score) at or above this is a pass, below it a fail "
                                                  "(lower it for partial credit, as OSWorld gives).")] = 1.0,
    force: Annotated[bool, typer.Option("--force", help="Score every run again, even those whose files, "
                                        "options and trajcheck version are unchanged since the ledger scored "
                                        "them.")] = False,
    wait: WaitOpt = DEFAULT_WAIT,
    fmt: FormatOpt = Format.table,
    quiet: QuietOpt = False,
) -> None:
    """Score recorded runs and write the Parquet ledger.

    Example: trajcheck score sample_runs/ --out ledger/

    Scoring into an existing ledger skips runs whose input digest (files, reader,
    options, trajcheck version) is unchanged, rescores the rest, and drops runs
    whose directory is gone from a folder scored again; --force rescores all.
    """
    from ..api import score as run_score

    if engine is Engine.local and OWN_PROCESS:
        _no_pandas()
    with _Bar(quiet) as bar:
        result = run_score(runs, out, jobs=jobs, threshold=threshold, verifier=verifier, ambient=ambient,
                           pixel_tolerance=pixel_tolerance, contracts=contracts, input_format=input_format,
                           engine=engine.value, scheduler=scheduler, force=force, evaluator_pass=evaluator_pass,
                           on_found=bar.found, on_result=bar.scored, wait=wait, on_wait=_waiting, mapping=mapping,
                           tasks=tasks, ocr=ocr.value, prices=prices)
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
    """The closing lines on stderr: what was scored, skipped and removed, and each invalid run."""
    extra = ""
    if result.skipped:
        extra += f", {len(result.skipped)} unchanged runs skipped (--force rescores them)"
    if result.removed:
        extra += f", {len(result.removed)} runs whose directory is gone removed"
    if result.unclaimed:
        n = len(result.unclaimed)
        extra += f", {n} folder{'s' * (n != 1)} that no reader claims (named above)"
    state = "unchanged" if result.generation is None else f"generation {result.generation}"
    err.print(f"scored {result.scored} runs ({len(result.invalid)} invalid), {result.frames} frames in "
              f"{result.elapsed:.2f}s ({result.frames_per_second:.1f} frames/s){extra} -> {result.ledger} ({state})",
              highlight=False)
    if result.summaries:
        err.print(_readers_line(result.summaries), highlight=False, markup=False)
        err.print(_verdict_line(result.summaries), highlight=False)
        err.print(result.coverage.text(), highlight=False)
        spend = _spend_line(result.summaries)
        if spend:
            err.print(spend, highlight=False)
    poor = [w for r in result.summaries for w in r.get("warnings") or [] if _read_poorly(w)]
    for w in poor[:MAX_LISTED]:  # runs read so poorly that their rows say little: named, never silent
        err.print(f"[yellow]warning:[/] {escape(w)}", highlight=False)
    if len(poor) > MAX_LISTED:
        err.print(f"[yellow]warning:[/] and {len(poor) - MAX_LISTED} more runs read as poorly (the runs table's "
                  "warnings column has them all)", highlight=False)
    for r in result.invalid:
        err.print(f"[red]invalid:[/] {escape(r['error'])}", highlight=False)


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
