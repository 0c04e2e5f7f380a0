"""Reading a run's files, for every reader: paths that must stay inside the run directory (:func:`safe_join`),
or, for a screenshot a harness keeps beside the run's folder, inside the folder the user asked to score
(:func:`scoring_root`, :func:`outside_join`), size-limited UTF-8 text with its problems named
(:func:`read_text_file`), and a run's errors raised together (:func:`raise_errors`).

Below every reader, and below the loading stage and the contracts, which read the files a run names: the native
reader (:mod:`trajcheck.readers.rundir`) and the adapter kit (:mod:`trajcheck.readers.kit.reading`) both import it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

from .errors import Problem, RunFormatError
from .problems import Slug
from .inputs import NotRegularFile, read_regular, regular_stat
from .jsonio import decode_utf8

#: Metadata and step files larger than this are refused (real ones are KiB to a few MiB).
MAX_JSON_BYTES = 64 * 1024 * 1024
#: At most this many problems are reported per run; the rest are counted.
MAX_PROBLEMS = 20


def raise_errors(problems: list[Problem], run: str) -> None:
    """Raise :class:`RunFormatError` with the errors among ``problems`` (the first MAX_PROBLEMS, then a count).
    Shared by the native reader and the format adapters (``trajcheck.readers.kit.reading``)."""
    errors = [p for p in problems if p.severity == "error"]
    if not errors:
        return
    if len(errors) > MAX_PROBLEMS:
        more = len(errors) - MAX_PROBLEMS
        errors = errors[:MAX_PROBLEMS] + [Problem(Slug.MORE_PROBLEMS, f"{more} more errors not shown", run=run)]
    raise RunFormatError(errors)


@lru_cache(maxsize=256)
def _real(path: str) -> str:
    """realpath of a run directory, once per directory (a run's frames and snapshots are joined to it)."""
    return os.path.realpath(path)


def safe_join(run_dir: Path, rel: str) -> Path | None:
    """Resolve ``rel`` inside ``run_dir``; None when it is absolute or escapes the
    directory (through ``..`` or a symlink)."""
    if not rel or os.path.isabs(rel) or re.match(r"^[A-Za-z]:[\\/]", rel) or "\x00" in rel:
        return None
    base = _real(os.fspath(run_dir))
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    target = os.path.join(base, *parts) if parts else base
    if ".." in parts or any(os.path.islink(os.path.join(base, *parts[:i + 1])) for i in range(len(parts))):
        # a symlink or ``..`` below the run directory: resolve it all (the base is already real, so a
        # path with neither resolves to itself with one lstat per component of ``rel``)
        target = os.path.realpath(os.path.join(base, rel))
    if target != base and not target.startswith(base + os.sep):
        return None
    return Path(target)


#: The folder the user asked to score (the argument a run was found under), while its run is read: the readers'
#: screenshots may come from outside the run's own folder but never from outside it. A context variable, not a
#: parameter, so that every reader's ``read(path, display)`` keeps its signature (a mapping reader's too); it is
#: set by whoever reads a run for scoring or validation (:mod:`trajcheck.scoring.scorerun`,
#: :mod:`trajcheck.scoring.validation`),
#: in the process that reads it. Unset (None), nothing outside the run's folder is read.
_ROOT: ContextVar[str | None] = ContextVar("trajcheck_scoring_root", default=None)


@contextmanager
def scoring_root(root: str | os.PathLike[str] | None) -> Iterator[None]:
    """Within the block, a run being read may take screenshots from anywhere inside ``root`` (the folder the
    user asked to score); None: only from inside the run's own folder."""
    token = _ROOT.set(None if root is None else os.path.realpath(os.fspath(root)))
    try:
        yield
    finally:
        _ROOT.reset(token)


def current_root() -> str | None:
    """The folder being scored (:func:`scoring_root`), resolved; None when unset."""
    return _ROOT.get()


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def outside_join(run_dir: Path, rel: str) -> tuple[str, Path] | None:
    """A path a run names that leaves the run's folder (``../screenshots/a.png``, or an absolute path) but stays
    inside the scoring root (:func:`scoring_root`), resolved through every ``..`` and link: (its path relative to
    the run's folder, the resolved path). None when no root is set, when the path stays in the run's folder (that
    is :func:`safe_join`'s) or when it resolves outside the root (then it is refused, as :func:`safe_join`
    refuses it). The file need not exist."""
    root = _ROOT.get()
    if root is None or not rel or "\x00" in rel:
        return None
    base = _real(os.fspath(run_dir))
    if not _inside(base, root) or base == root:
        return None  # the run is the root (or not below it): nothing outside its folder is in the root
    target = os.path.realpath(os.path.join(base, rel))  # an absolute rel replaces base
    if _inside(target, base) or not _inside(target, root):
        return None
    return os.path.relpath(target, base).replace(os.sep, "/"), Path(target)


def beside_run(run_dir: Path, rel: str) -> list[tuple[str, Path]]:
    """Where a relative path a run names may be, when it is not inside the run's folder: the same path under each
    folder between the run's folder and the scoring root (the harness's working folder: the CS715 harness writes
    ``screenshots/a.png`` in a log kept under ``logs/``), nearest first, each as (its path relative to the run's
    folder, the resolved path). Links and ``..`` that lead out of the folder tried are refused (:func:`safe_join`).
    Empty when no root is set, or for an absolute path."""
    root = _ROOT.get()
    if root is None or not rel or os.path.isabs(rel) or re.match(r"^[A-Za-z]:[\\/]", rel):
        return []
    base = _real(os.fspath(run_dir))
    if not _inside(base, root) or base == root:
        return []
    out = []
    here = base
    while here != root:
        here = os.path.dirname(here)
        target = safe_join(Path(here), rel)
        if target is not None and _inside(os.fspath(target), root) and not _inside(os.fspath(target), base):
            out.append((os.path.relpath(target, base).replace(os.sep, "/"), target))
    return out


def read_text_file(path: Path, *, run: str, rel: str, problems: list[Problem],
                   limit: int = MAX_JSON_BYTES) -> str | None:
    """A run file as UTF-8 text, or None with the problem appended (too large, missing, unreadable,
    not UTF-8, not a regular file, a link out of the run directory). Shared by the native reader and the
    format adapters. When ``path`` ends with ``rel``, the rest of it is the run directory, and ``rel`` must
    stay inside it as every path a run names must (:func:`safe_join`: a link out is refused)."""
    base = _base_of(path, rel)
    if base is not None and safe_join(base, rel) is None:
        problems.append(Problem(Slug.PATH_ESCAPES_RUN, f"{rel} is a link to a file outside the run directory; it "
                                "is not read", run=run, file=rel,
                                hint="copy the file into the run directory instead of linking to it"))
        return None
    try:
        st = regular_stat(path)
        if st.st_size > limit:
            problems.append(Problem(Slug.FILE_TOO_LARGE, f"{st.st_size} bytes is over the {limit} byte limit", run=run,
                                    file=rel, hint="split the run or strip embedded images"))
            return None
        data = read_regular(path, st)
    except NotRegularFile as exc:
        problems.append(Problem(Slug.NOT_A_REGULAR_FILE, f"{exc.kind}, not a regular file; it is not read", run=run,
                                file=rel, hint="replace it with the file the runner wrote"))
        return None
    except FileNotFoundError:
        problems.append(Problem(Slug.FILE_MISSING, "file not found", run=run, file=rel,
                                hint="the run directory is incomplete; copy the whole run"))
        return None
    except OSError as exc:
        problems.append(Problem(Slug.FILE_UNREADABLE, f"cannot read: {exc.strerror or exc}", run=run, file=rel,
                                hint="check permissions and that the file is not a broken link"))
        return None
    text, problem = decode_utf8(data, run=run, file=rel)
    if problem:
        problems.append(problem)
    return text


def _base_of(path: Path, rel: str) -> Path | None:
    """The directory ``path`` is ``rel`` inside (``path`` minus the parts of ``rel``), None when ``path``
    does not end with ``rel``."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or len(path.parts) <= len(parts) or list(path.parts[-len(parts):]) != parts:
        return None
    return Path(*path.parts[:-len(parts)])
