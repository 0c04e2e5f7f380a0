"""Scoring one run: run directory -> typed records -> loaded evidence -> findings -> ledger rows.

One run is the unit of work of every engine. :func:`score_run` never raises for bad input: a run that
cannot be read gives an ``invalid`` row naming each problem, and a value the ledger cannot store costs
that run only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from ..base import remote
from . import rowcheck
from .analysis import analyze
from .contracts import find_contract
from .coverage import read_coverage
from .digest import (file_manifest, input_digest, judgments_entry, options_fingerprint, outside_manifest,
                     special_files)
from ..readers.discovery import RunRef, get_reader
from ..readers.kit.reader import Reader
from ..base.errors import Problem, RunFormatError, read_by
from ..base.problems import Slug
from .loading import load_run, plan_referee
from .noanswer import declared_ends
from .options import ScoreOptions
from ..readers.nolog import NAME as NO_LOG_READER
from .rows import RunResult, build_result, invalid_result, no_log_result
from ..base.runfiles import scoring_root


def reader_for(ref: RunRef, opts: ScoreOptions) -> Reader:
    """The reader of ``ref``: one of the call's own (its mapping's, rebuilt here from the options: a worker has
    only what it is sent) or of every call's; KeyError when there is none."""
    return get_reader(ref.reader, opts.readers())


def _score(ref: RunRef, opts: ScoreOptions) -> RunResult:
    with scoring_root(ref.root):  # screenshots beside the run's folder, inside the argument, are found
        reader = reader_for(ref, opts)
        run, warnings = reader.read(ref.path, ref.display)
    if ref.reader == NO_LOG_READER and NO_LOG_READER in run.extra:  # a folder of screenshots with no log
        return no_log_result(ref.display, str(ref.path), str(run.extra[NO_LOG_READER]), warnings)
    run = declared_ends(run, reader)
    contract, contract_problems = find_contract(ref.run_dir, run.task_id, opts.contracts_dir, run.run_id,
                                                run.goal, ref.display)
    plan = plan_referee(run, contract)
    loaded = load_run(run, ref.run_dir, plan, opts)
    found = analyze(run, loaded, plan, opts)
    coverage = read_coverage(run, loaded.evidence)
    res = build_result(found, ref, loaded.frames_decoded,
                       read_by(coverage + warnings + contract_problems + loaded.problems, ref.reader))
    res.outside = dict(run.outside_files)
    res.ocr_unread = loaded.ocr_unread
    return res


def _score_safely(ref: RunRef, opts: ScoreOptions) -> RunResult:
    try:
        return _score(ref, opts)
    except RunFormatError as exc:
        return invalid_result(ref.display, str(ref.path), exc.problems, ref.reader)
    except RecursionError:
        return invalid_result(ref.display, str(ref.path), [Problem(
            Slug.JSON_TOO_DEEP, "a record is nested too deeply to read", run=ref.display,
            hint="flatten the run's JSON")], ref.reader)
    except MemoryError:
        return invalid_result(ref.display, str(ref.path), [Problem(
            Slug.OUT_OF_MEMORY, "ran out of memory reading this run", run=ref.display,
            hint="score it alone with --jobs 1, or check its frames' sizes")], ref.reader)


def _score_remote(ref: RunRef, opts: ScoreOptions, fingerprint: str | None) -> RunResult:
    """A run at a URL (``s3://...``), staged into a local directory for the time it is scored."""
    assert ref.url is not None
    try:
        with remote.staged(ref.url) as local:
            res = score_run(RunRef(local, ref.display, ref.reader), opts, fingerprint)
    except Exception as exc:  # noqa: BLE001  (a store error costs this run only)
        return invalid_result(ref.display, ref.url, [Problem(
            Slug.STORE_UNREADABLE, f"{ref.url}: {type(exc).__name__}: {exc}", run=ref.display,
            hint="check the URL, the credentials and the endpoint")], ref.reader)
    res.run["run_path"] = ref.url
    inputs = json.loads(res.run["inputs"])
    inputs["root"] = ref.url
    res.run["inputs"] = json.dumps(inputs, sort_keys=True)
    return res


def locate_step(reader: Reader, path: Path, display: str) -> Callable[[Any], tuple[str, int | None]]:
    """A step's file and line by its index, from the run read again by ``reader`` (the error path only)."""
    def locate(index: Any) -> tuple[str, int | None]:
        try:
            run, _ = reader.read(path, display)
            step = next((s for s in run.steps if s.index == index), None)
            if step is not None:
                return step.source, step.line
        except Exception:  # noqa: BLE001  (the location is a courtesy; the problem stands without it)
            pass
        return "", None

    return locate


def checked(res: RunResult, ref: RunRef, opts: ScoreOptions) -> RunResult:
    """``res`` (the result of the run at ``ref``, scored with ``opts``), or, when one of its rows holds a value the
    ledger cannot store (:func:`trajcheck.scoring.rowcheck.find_bad_value`), the run's ``invalid`` result naming
    it."""
    bad = rowcheck.find_bad_value(res.run, res.steps)
    if bad is None:
        return res
    fmt = res.run.get("source_format") or ref.reader
    problem = bad.problem(rowcheck.printable(str(res.run.get("run_id") or ref.display)), fmt,
                          locate_step(reader_for(ref, opts), Path(ref.path), ref.display))
    return invalid_result(rowcheck.printable(ref.display), rowcheck.printable(str(ref.path)), [problem], fmt)


_blas: Any = None


def _one_blas_thread() -> Any:
    """A context in which numpy's BLAS runs on one thread. The pHash resize is a handful of small matrix
    products per frame; BLAS threads on top of one worker process per core fight over the cores (measured:
    2.4x slower on 2 cores). threadpoolctl finds the BLAS numpy loaded, once per process; the limit is
    lifted when the context ends, so a caller's own numpy work is left as it was."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController

        _blas = ThreadpoolController()
    return _blas.limit(limits=1, user_api="blas")


def score_run(ref: RunRef, opts: ScoreOptions, fingerprint: str | None = None) -> RunResult:
    """Score one run directory; never raises for bad input (the row says what is wrong).
    The row carries the run's input digest (see :mod:`trajcheck.scoring.digest`)."""
    if ref.url is not None:
        return _score_remote(ref, opts, fingerprint)
    with _one_blas_thread():
        res = _score_safely(ref, opts)
    res = checked(res, ref, opts)  # a value the ledger cannot store costs this run, not the batch
    files = file_manifest(Path(ref.path))
    files.update(outside_manifest(res.outside))
    files.update(judgments_entry(opts, res.run.get("run_id")))
    res.run["warnings"] = res.run["warnings"] + special_files(files, res.run["run_id"], res.run["warnings"])
    fp = fingerprint if fingerprint is not None else options_fingerprint(opts, None)
    res.run["input_digest"] = input_digest(files, ref.reader, fp)
    res.run["inputs"] = json.dumps({"root": ref.key, "files": files}, sort_keys=True)
    return res
