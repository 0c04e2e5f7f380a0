"""trajcheck's public API: score runs into a ledger, open it, read its tables.

    import trajcheck

    result = trajcheck.score(["sample_runs/"], out="ledger/")
    runs = trajcheck.runs("ledger/")          # a pandas DataFrame, one row per run
    con = trajcheck.connect("ledger/")        # DuckDB, views runs and steps

``trajcheck score`` on the command line is a call of :func:`score` plus a progress bar and a table.
Heavy libraries load only when they are needed: a re-score of unchanged runs reads only JSON.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from .base.errors import LedgerError, Problem, UsageError

if TYPE_CHECKING:
    from collections import Counter

    import duckdb
    import pandas

    from .analyzers.spend import Price
    from .scoring.judgments import Judgment

    from .store.lock import LockWait
    from .scoring.options import ScoreOptions
    from .scoring.pipeline import RunResult, ScoreReport
    from .scoring.scoreargs import ScoreArgs
    from .readers.mapping.joinreport import JoinReport


from .result import NoRunsFound as NoRunsFound, ScoreResult as ScoreResult  # re-exported: the call's results


def score(paths: Iterable[str | os.PathLike[str]], out: str | os.PathLike[str] = "ledger", *,
          expect: str | os.PathLike[str] | None = None, on_found: Callable[[int], None] | None = None,
          on_result: Callable[["RunResult"], None] | None = None, on_wait: Callable[["LockWait"], None] | None = None,
          **options: Any) -> ScoreResult:
    """Score every run under ``paths`` and commit the rows to the ledger at ``out``.

    The options are the ``trajcheck score`` command's, by the same names (``--no-verifier`` is
    ``verifier=False``, ``--input-format`` is ``input_format``), declared once in
    :class:`trajcheck.scoring.scoreargs.ScoreArgs`: ``mapping`` is a mapping file
    (:mod:`trajcheck.readers.mapping.reader`) that reads logs of any other shape; ``tasks`` a tasks file of reference
    step counts (:func:`trajcheck.scoring.options.read_tasks`: ``runs.efficiency``); ``ocr`` when to read the
    screen's text (``auto``: where no DOM snapshot says it; ``always``; ``off``; docs/referee.md, "Screen
    text"); ``prices`` a price list (:func:`trajcheck.scoring.options.read_prices`) that gives a cost to runs
    whose logs record tokens and the model but no cost (``runs.cost_source = 'prices'``; a model without a price
    is named once in ``problems``); ``judgments`` judgments files of judges the user runs
    (:func:`trajcheck.scoring.judgments.read_judgments`: each row a judge of its run, ``runs.judgments``; a run
    named that is not in the batch is a warning in ``problems``). ``expect``: the tasks expected (a file, recorded
    beside the ledger: :mod:`trajcheck.queries.expected`); ``expected`` counts the runs scored, damaged and missing.
    ``on_found`` hears how many runs will be
    scored, ``on_result`` each scored run, ``on_wait`` who holds the ledger's lock.

    Runs already in the ledger whose files, reader, options and trajcheck version are unchanged are
    skipped (``force=True`` rescores them); runs whose directory is gone from a folder scored again are
    dropped. Bad input never raises: an unreadable run gets an ``invalid`` row naming its problem.

    One writer at a time: the ledger's lock (:mod:`trajcheck.store.lock`) is held from before the ledger is
    read until the commit is over. Another writer holding it is waited for up to ``wait`` seconds
    (default :data:`trajcheck.store.lock.DEFAULT_WAIT`); ``on_wait`` hears who holds it. A call that finds
    nothing to score takes no lock. Raises :class:`UsageError` for bad options, :class:`LedgerError`
    when the ledger cannot be read or written, :class:`~trajcheck.store.lock.LedgerBusy` (a LedgerError) when
    the wait ran out, :class:`NoRunsFound` when no path holds a run. With a mapping that joins a results file to
    its runs by their paths (``[outcome] file``), the result's ``join`` says how it joined them, and a join of
    none of them raises UsageError, saying why, before anything is scored.
    """
    from .scoring.scoreargs import ScoreArgs

    try:
        args = ScoreArgs.of(options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if expect is None and not (Path(out) / "expected.json").is_file():  # none recorded: leave Arrow unloaded
        return _across(_score(paths, out, args, on_found, on_result, on_wait))
    from .queries import expected

    tasks = None if expect is None else expected.read_expect(expect)  # a bad file stops before any work
    result = _across(_score(paths, out, args, on_found, on_result, on_wait))
    found = expected.record(out, tasks)
    return result if found is None else dataclasses.replace(result, expected=found)


def _across(result: ScoreResult) -> ScoreResult:
    """After a score that committed something: the checks across the ledger's runs (a first frame that is not the
    start its task's repeats agree on: ``reset_failed``, :mod:`trajcheck.queries.resets`), into its damage columns."""
    if result.generation is not None:
        from .queries import resets

        generation = resets.apply(result.ledger)
        if generation is not None:
            return dataclasses.replace(result, generation=generation)
    return result


def _signature() -> inspect.Signature:
    """:func:`score`'s signature as introspection and the docs show it: every option of ScoreArgs by name."""
    from dataclasses import MISSING, fields

    from .scoring.scoreargs import ScoreArgs

    own = inspect.signature(score).parameters
    options = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY,
                                 default=getattr(f.default, "value", f.default) if f.default is not MISSING else None)
               for f in fields(ScoreArgs)]
    return inspect.Signature([own["paths"], own["out"], *options, own["expect"], own["on_found"], own["on_result"],
                              own["on_wait"]],
                             return_annotation=inspect.signature(score).return_annotation)


score.__signature__ = _signature()  # type: ignore[attr-defined]


def _score(paths: Iterable[str | os.PathLike[str]], out: str | os.PathLike[str], args: "ScoreArgs",
           on_found: Callable[[int], None] | None, on_result: Callable[["RunResult"], None] | None,
           on_wait: Callable[["LockWait"], None] | None) -> ScoreResult:
    """:func:`score` with its options checked."""
    start = time.perf_counter()
    run_paths = [os.fspath(p) for p in paths]
    root = Path(out)
    opts = _options(args)
    join = _join(args.mapping, run_paths, args.input_format)
    if not args.force:
        unchanged = _unchanged(root, run_paths, args.input_format, opts)
        if unchanged is not None:
            return ScoreResult(root, None, 0, 0, time.perf_counter() - start, skipped=unchanged[0],
                               problems=unchanged[1] + _unjudged(opts, unchanged[0]), join=join)
    report, generation, refused = _score_into(root, run_paths, opts, force=args.force, wait=args.wait,
                                              on_wait=on_wait, jobs=args.jobs,
                                              on_found=on_found, on_result=on_result,
                                              input_format=args.input_format, engine=args.engine.value,
                                              scheduler=args.scheduler)
    invalid = [r.run for r in report.invalid] + refused
    report.problems += _unjudged(opts, [str(r["run_id"]) for r in report.summaries] + report.skipped)
    if report.unpriced and args.prices is not None:
        report.problems.append(_unpriced(report.unpriced, Path(args.prices)))
    use = None
    if opts.contracts_dir is not None:
        from .scoring.contracts import contract_use

        use = contract_use(opts.contracts_dir, report.matched)
    return ScoreResult(root, generation, report.scored, report.frames, time.perf_counter() - start,
                       report.summaries, invalid, report.skipped, report.removed, report.problems, use, join)


def _join(mapping: str | os.PathLike[str] | None, paths: list[str],
          input_format: str | None) -> "JoinReport | None":
    """How the mapping's results file joins the runs under ``paths`` (None: it joins none by path); UsageError,
    before anything is scored, when it joins none of them."""
    if mapping is None:
        return None
    from .readers.mapping.joinreport import for_paths

    join = for_paths(mapping, paths, input_format)
    if join is not None and join.nothing_joined:
        raise UsageError(f"--mapping {mapping}: {join.why}")
    return join


def _unjudged(opts: "ScoreOptions", run_ids: list[str]) -> list[Problem]:
    """A warning for each run a judgments file names that is not in the batch scored (a typo, or another batch)."""
    from .base.problems import Slug

    known = set(run_ids)
    first: dict[str, str] = {}
    for j in opts.judgments:
        if j.run_id not in known:
            first.setdefault(j.run_id, j.where)
    return [Problem(Slug.JUDGED_RUN_UNKNOWN, f"judges run {rid!r}, which is not among the runs scored; the "
                    "judgment is not used", file=where, field="run_id", severity="warning",
                    hint="check the run_id or score its folder")
            for rid, where in first.items()]


def _unpriced(unpriced: "Counter[str]", prices: Path) -> Problem:
    """The one warning of a score call whose price list left runs with tokens without a cost: each model
    without a price, and the runs that name no model, with how many runs each."""
    from .base.problems import Slug

    parts = [f"{n} run{'s' * (n != 1)} " + (f"of model {m!r}, which it does not list" if m else "whose log names "
                                               "no model") for m, n in sorted(unpriced.items())]
    return Problem(Slug.PRICE_MISSING, f"--prices {prices.name} gave no cost to " + "; ".join(parts)
                   + ": their cost_usd is null", file=str(prices), severity="warning")


def _options(args: "ScoreArgs") -> "ScoreOptions":
    """The scoring options of a :func:`score` call, checked before anything is read or written (a bad
    option raises UsageError, and leaves no ledger behind). The call's mapping is one of them, as data: every
    engine's workers read its runs through it."""
    from .readers.discovery import reader_names
    from .scoring.options import MappingFile, ScoreOptions
    from .analyzers.effect_options import PerceptualOptions

    from .scoring.scoreargs import Engine

    engine, mapping, contracts, tasks, prices = args.engine, args.mapping, args.contracts, args.tasks, args.prices
    if args.scheduler and engine is not Engine.DASK:
        raise UsageError("a scheduler needs engine dask")
    if engine is Engine.DASK:
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            raise UsageError("engine dask needs dask.distributed: pip install 'trajcheck[dask]'") from None
    if contracts is not None and not Path(contracts).is_dir():
        raise UsageError(f"contracts {contracts}: no such folder")
    mapped: MappingFile | None = None
    if mapping is not None:  # read and compiled here: a bad mapping is a UsageError before anything is read
        from .readers.mapping.schema import Mapping

        m = Mapping(Path(mapping))
        mapped = MappingFile(m.path, m.source)
    own = ScoreOptions(mapping=mapped).readers()  # the mapping's reader is one of the names
    if args.input_format is not None and args.input_format not in reader_names(own):
        raise UsageError(f"unknown input format {args.input_format!r}; formats: " + ", ".join(reader_names(own)))
    reference_steps: tuple[tuple[str, int], ...] = ()
    if tasks is not None:
        from .scoring.options import read_tasks

        try:
            reference_steps = read_tasks(Path(tasks))
        except (OSError, ValueError) as exc:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
            raise UsageError(f"--tasks {tasks}: {exc}") from None
    price_list: tuple["Price", ...] = ()
    if prices is not None:
        from .scoring.options import read_prices

        try:
            price_list = read_prices(Path(prices))
        except (OSError, ValueError) as exc:  # tomllib's and csv's errors, and a bad encoding, are ValueErrors
            raise UsageError(f"--prices {prices}: {exc}") from None
    given: list["Judgment"] = []
    for path in args.judgments:
        from .scoring.judgments import read_judgments

        try:
            given += read_judgments(Path(path))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--judgments {path}: {exc}") from None
    return ScoreOptions(PerceptualOptions(enabled=args.verifier, ambient=args.ambient, threshold=args.threshold),
                        pixel_tolerance=args.pixel_tolerance, contracts_dir=Path(contracts) if contracts else None,
                        evaluator_pass=args.evaluator_pass, reference_steps=reference_steps, ocr=args.ocr,
                        prices=price_list, judgments=tuple(given), mapping=mapped)


def _unchanged(root: Path, paths: list[str], input_format: str | None,
               opts: "ScoreOptions") -> tuple[list[str], list[Problem]] | None:
    """The run ids, and the problems of the paths (folders no reader claims), when the ledger at ``root``
    holds every run under ``paths`` unchanged and none of them is gone (nothing to score: the analyzers and
    pyarrow are never loaded), else None."""
    from .scoring.digest import forget_listings, options_fingerprint  # json and hashlib only
    from .readers.discovery import discover
    from .scoring.incremental import plan

    previous = _previous(root)
    if not previous:
        return None
    forget_listings()
    refs, problems = discover(paths, input_format, opts.readers())
    p = plan(paths, refs, previous, options_fingerprint(opts, input_format), opts)
    if p.todo or p.removed or not p.skipped:
        return None
    return list(p.skipped), problems


def _score_into(root: Path, paths: list[str], opts: "ScoreOptions", *, force: bool, wait: float | None,
                on_wait: Callable[["LockWait"], None] | None,
                **how: Any) -> tuple["ScoreReport", int | None, list[dict[str, Any]]]:
    """Score ``paths`` into the ledger at ``root`` under its lock: the pipeline's report, the generation
    committed (None when nothing changed) and the run rows the ledger refused. ``how``: the rest of
    :func:`~trajcheck.scoring.pipeline.score_paths`'s options."""
    from .store import ledger  # pyarrow: only when something is written
    from .store.lock import DEFAULT_WAIT
    from .scoring.pipeline import SUMMARY_KEYS, score_paths  # the analyzers: only when something is scored

    lock = ledger.lock(root, DEFAULT_WAIT if wait is None else wait, on_wait)  # LedgerBusy when the wait runs out
    try:
        previous = None if force else _previous(root)  # again, now locked: a writer we waited for may have committed
        writer = ledger.Writer(root, lock)  # releases the lock when its ``with`` ends
    except BaseException as exc:
        lock.release()
        if isinstance(exc, OSError):
            raise LedgerError(str(exc)) from None
        raise
    with writer:
        try:
            report = score_paths(paths, opts, previous=previous, sink=lambda r: writer.add(r.run, r.steps), **how)
        except (OSError, *ledger.WRITE_ERRORS) as exc:
            raise LedgerError(f"{type(exc).__name__}: {exc}; nothing was committed") from None
        if opts.contracts_dir is not None and report.matched and not report.skipped:
            from .scoring.contracts import contract_use, why_none_applied

            use = contract_use(opts.contracts_dir, report.matched)
            if not use.matched:  # contracts given for these runs, and none applied: nothing is committed
                raise UsageError(why_none_applied(use, report.matched))
        if writer.refused:  # rows the ledger could not store: the runs are invalid, as the writer recorded
            refused = {r["run_id"]: r for r in writer.refused}
            report.summaries = [{k: refused[s["run_id"]].get(k) for k in SUMMARY_KEYS}
                                if s["run_id"] in refused else s for s in report.summaries]
        if not report.scored and not report.skipped and not report.removed:
            writer.abort()
            if opts.mapping is not None:
                from .readers.mapping.reader import explain

                report.problems += explain(opts.mapping.path, paths)
            raise NoRunsFound("no runs found", report.problems)
        generation = None
        if report.scored or report.removed:
            try:
                generation = writer.commit(report.removed).generation
            except OSError as exc:
                raise LedgerError(str(exc)) from None
        else:
            writer.abort()
    return report, generation, writer.refused


def _previous(root: Path) -> list[Any]:
    """What the ledger at ``root`` remembers of its runs: from digests.json when it is of the manifest's
    generation (JSON only), else from the runs parts (pyarrow)."""
    from .store.manifest import previous_from_index

    previous = previous_from_index(root)
    if previous is None:  # no digest index of this generation: read the runs parts
        from .store import ledger

        previous = ledger.previous(root)
    return previous


def connect(ledger: str | os.PathLike[str]) -> "duckdb.DuckDBPyConnection":
    """An in-memory DuckDB connection with the views ``runs`` and ``steps`` over the ledger."""
    from .store import ledger as _ledger

    return _ledger.connect(ledger)


def runs(ledger: str | os.PathLike[str]) -> "pandas.DataFrame":
    """The ledger's ``runs`` table as a pandas DataFrame (one row per run)."""
    return _table(ledger, "runs")


def steps(ledger: str | os.PathLike[str]) -> "pandas.DataFrame":
    """The ledger's ``steps`` table as a pandas DataFrame (one row per step)."""
    return _table(ledger, "steps")


def _table(ledger: str | os.PathLike[str], name: str) -> "pandas.DataFrame":
    con = connect(ledger)
    try:
        order = "run_id, step_index" if name == "steps" else "run_id"
        return con.execute(f"select * from {name} order by {order}").df()
    finally:
        con.close()
