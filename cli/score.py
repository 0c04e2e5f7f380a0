"""trajcheck score: recompute every analyzer over recorded runs and write the ledger."""

from __future__ import annotations

from rich.markup import escape

import enum
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from trajcheck.analyzers.effect_options import DEFAULT_THRESHOLD, PerceptualOptions
from trajcheck.lock import DEFAULT_WAIT
from trajcheck.errors import LedgerError, UsageError

from .common import Exit, Format, emit, err, fail, out, wait_line

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


#: Per-run rows are listed for people up to this many runs; beyond it, a summary.
MAX_LISTED = 60


def score(
    runs: Annotated[list[str], typer.Argument(help="Run directories, folders searched recursively for runs, or fsspec URLs (s3://bucket/prefix).",
                                               show_default=False)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Ledger directory to write (created, or updated: "
                                      "rescored runs replace their rows).")] = Path("ledger"),
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", min=1,
                                                help="Worker processes (default: all cores).")] = None,
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
    mapping: Annotated[Optional[Path], typer.Option("--mapping", help="A mapping file (TOML, JMESPath) that reads "
                                                    "logs of another shape; see docs/mappings/.")] = None,
    input_format: Annotated[Optional[str], typer.Option("--input-format", help="Read every run as this format "
                                                        "instead of detecting it (see `trajcheck formats`).")] = None,
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
    wait: Annotated[float, typer.Option("--wait", min=0, help="Seconds to wait for another writer of the same "
                                        "ledger to finish (one writer at a time); then exit 4.")] = DEFAULT_WAIT,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output: table, json or csv.")] = Format.table,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Score recorded runs and write the Parquet ledger.

    Example: trajcheck score sample_runs/ --out ledger/

    Scoring into an existing ledger skips runs whose input digest (files, reader,
    options, trajcheck version) is unchanged, rescores the rest, and drops runs
    whose directory is gone from a folder scored again; --force rescores all.

    Exit codes: 0 all runs scored; 1 ledger written but some runs are invalid;
    2 bad options; 3 nothing could be read or the ledger cannot be written;
    4 another writer held the ledger for longer than --wait.
    """
    from trajcheck.api import NoRunsFound, score as run_score
    from trajcheck.lock import LedgerBusy

    if engine is Engine.local and OWN_PROCESS:
        _no_pandas()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=err, transient=True, disable=quiet)
    with progress:
        t_runs = progress.add_task("runs", total=None)
        t_frames = progress.add_task("frames", total=None)
        try:
            result = run_score(runs, out, jobs=jobs, threshold=threshold, verifier=verifier, ambient=ambient,
                               pixel_tolerance=pixel_tolerance, contracts=contracts, input_format=input_format,
                               engine=engine.value, scheduler=scheduler, force=force,
                               evaluator_pass=evaluator_pass,
                               on_found=lambda n: progress.update(t_runs, total=n),
                               on_result=lambda r: (progress.advance(t_runs), progress.advance(t_frames, r.frames)),
                               wait=wait, on_wait=lambda w: err.print(wait_line(w), highlight=False, markup=False),
                               mapping=mapping)
        except UsageError as exc:
            fail(str(exc), Exit.USAGE)
        except NoRunsFound as exc:
            for p in exc.problems:
                err.print(f"[yellow]{p.severity}:[/] {escape(str(p))}", highlight=False)
            fail(str(exc), Exit.INPUT, "pass run directories (holding run.json) or folders that contain them")
        except LedgerBusy as exc:
            fail(str(exc), Exit.LOCKED, "nothing was written; score again when it is done, or raise --wait")
        except LedgerError as exc:
            fail(f"cannot write the ledger: {exc}", Exit.INPUT)
    for p in result.problems:
        err.print(f"[yellow]{p.severity}:[/] {escape(str(p))}", highlight=False)
    _render(result.summaries, fmt)
    n_inv = len(result.invalid)
    rate = result.frames / result.elapsed if result.elapsed > 0 else 0.0
    extra = ""
    if result.skipped:
        extra += f", {len(result.skipped)} unchanged runs skipped (--force rescores them)"
    if result.removed:
        extra += f", {len(result.removed)} runs whose directory is gone removed"
    where = f"{out} (generation {result.generation})" if result.generation is not None else f"{out} (unchanged)"
    err.print(f"scored {result.scored} runs ({n_inv} invalid), {result.frames} frames in {result.elapsed:.2f}s "
              f"({rate:.1f} frames/s){extra} -> {where}", highlight=False)
    for r in result.invalid:
        err.print(f"[red]invalid:[/] {escape(r['error'])}", highlight=False)
    raise typer.Exit(int(Exit.FINDINGS if n_inv else Exit.OK))


#: Below this many columns the summary table leaves out no_effect_seed and warnings (--format json has all).
WIDE = 100


def _render(rows: list[dict], fmt: Format) -> None:
    cols = ["run_id", "status", "steps", "checked", "no_effect", "no_effect_seed", "warnings", "outcome"]
    table = [(r["run_id"], r["status"], r.get("n_steps"), r.get("effect_checked"), r.get("effect_no_effect"),
              r.get("effect_no_effect_seed"), len(r.get("warnings") or []), r.get("outcome_status")) for r in rows]
    if fmt is Format.table and len(table) > MAX_LISTED:
        ok = [r for r in rows if r["status"] == "ok"]
        emit(["runs", "invalid", "steps", "checked", "no_effect", "no_effect_seed"],
             [(len(rows), len(rows) - len(ok), sum(r["n_steps"] or 0 for r in ok),
               sum(r["effect_checked"] or 0 for r in ok), sum(r["effect_no_effect"] or 0 for r in ok),
               sum(r["effect_no_effect_seed"] or 0 for r in ok))], fmt, title="trajcheck score")
        return
    if fmt is Format.table and out.width < WIDE:  # a narrow terminal: the columns that matter most
        keep = [cols.index(c) for c in ("run_id", "status", "steps", "checked", "no_effect", "outcome")]
        cols, table = [cols[i] for i in keep], [tuple(r[i] for i in keep) for r in table]
    emit(cols, table, fmt, title="trajcheck score")
