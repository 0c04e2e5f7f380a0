"""Which directories are runs, and which reader reads each.

A *reader* claims run directories of one format and maps them into the typed
records of :mod:`trajcheck.schemas.records`. The native format is one reader
among others; the format adapters' readers (``trajcheck.readers.adapters.ALL``) are added
to :data:`READERS` when first needed. The reader whose claim fits best reads a directory,
unless the user forces one with ``--input-format``. A call's own readers (a ``--mapping``
file's) are not in :data:`READERS`: the call passes them (``extra``) to :func:`discover` and
:func:`get_reader`, so nothing one call adds is seen by another.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from ..schemas.version import RUN_FORMAT

from ..base import remote
from ..base.errors import Problem
from ..base.problems import Slug
from ..base.inputs import exists_not_dir
# re-exported (`X as X`): what a reader is, where the callers of discovery look for it
from .kit.reader import (BY_NAME, BY_SHAPE, NO_CLAIM, FolderClaim as FolderClaim, FormatDoc as FormatDoc,
                         Reader as Reader, Table as Table)

if TYPE_CHECKING:
    from ..schemas.records import Run

_SKIP_DIRS = {"node_modules", "__pycache__"}
#: Files that make a folder look like run data: a folder holding one, with no run at or below it, is named.
_JSON_SUFFIXES = (".json", ".jsonl")
_HTML_SUFFIXES = (".html", ".htm")
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


def _read_native(path: Path, display: str) -> "tuple[Run, list[Problem]]":
    from .rundir import read_native_run  # the records and their checks: loaded when a run is read

    return read_native_run(path, display)


def _native_claim(path: Path) -> FolderClaim:
    # a FIFO run.json is a run, reported as not_a_regular_file; steps.jsonl without run.json is a run whose
    # run.json is missing (an invalid row that says so), not a folder to pass over in silence
    found = next((n for n in ("run.json", "steps.jsonl") if exists_not_dir(path / n)), None)
    if found:
        return FolderClaim(BY_NAME, f"{found} is there", found)
    return FolderClaim(NO_CLAIM, "no run.json or steps.jsonl")


NATIVE = Reader(
    name=RUN_FORMAT,
    claims=lambda p: _native_claim(p).claimed,
    claim=_native_claim,
    read=_read_native,
    summary="trajcheck's own format: run.json, steps.jsonl (or steps/<n>.json), frames/, dom/",
    doc=FormatDoc(
        title="trajcheck's own format",
        claims=("A run is a directory holding `run.json` (the run's metadata) and `steps.jsonl` (one JSON object "
                "per step; or `steps/<n>.json`, one file per step), with the screenshots and DOM snapshots the "
                "steps name by relative path inside it. The README's \"The run directory\" section is the "
                "format; `schemas/run.schema.json` and `schemas/step.schema.json` check every record. A "
                "directory holding `run.json` is always a native run (no other reader claims it); one with "
                "`steps.jsonl` but no `run.json` is an invalid run that says so."),
        example="trajcheck score runs/ --out LEDGER --input-format trajcheck.run/1",
        ends=("Any harness may write this format, so the reader declares nothing: each run says it in "
              "`run.json` `ends`, and a run that does not is never failed for ending without an answer."),
        tables=(Table(head=("run.json", "trajcheck"), rows=(
            ("`run_id`, `task_id`, `trial`, `goal`, `started_at`", "the same run fields"),
            ("`agent` {name, model}, `config`, `screen` {width, height}", "`agent.name`, `agent.model`, "
                                                                            "`config`, `screen`"),
            ("`outcome` {status, score, judge}", "`outcome.status` (what the runner reported), `outcome.score` "
                                                 "(an external evaluator's result: the evaluator verdict "
                                                 "source), `outcome.judge` (a recorded judge)"),
            ("`reference_answer` (a string or a list)", "`reference_answers`"),
            ("`reference_steps` (an integer)", "`reference_steps` (runs.efficiency)"),
            ("`ends` (`answer` or `external`)", "how the harness ends a run (the no-answer rule)"),
            ("`usage` {tokens_input, tokens_output, tokens_cached, tokens_reasoning, cost_usd, model}, "
             "`wall_seconds`", "the run's totals, when the runner keeps them for the whole run only (else the "
                               "ledger sums the steps')"),
            ("any other property", "`runs.extra`"),
        )), Table(head=("step", "trajcheck"), rows=(
            ("`index`, `action` {type, x, y, keys, text, url, element}, `reasoning`", "the same step fields"),
            ("`frames` {pre, post}, `page` {url, dom, focus, title before and after}", "frames and page state, "
                                                                                         "paths inside the run"),
            ("`executor`, `client`, `recorded`, `semantic`, `contract`, `predict`, `expected`",
             "the same step fields"),
            ("`usage` {tokens_input, tokens_output, tokens_cached, tokens_reasoning, cost_usd, model}",
             "the step's token columns and `cost_usd` (`cost_source = log` when a cost is given); `model` "
             "when the step's call was not `agent.model`'s"),
            ("`wall_seconds`", "the step's `wall_seconds`"),
            ("any other property", "`steps.extra`"),
        ))),
        lost=("Nothing: the format is trajcheck's own. Paths that leave the run directory are refused "
              "(`path_escapes_run`), and an action type outside the v1 list is scored as unknown "
              "(`unknown_action_type`).",),
    ),
)

#: The readers every call has, in the order they are asked to claim a directory: the native reader, then the
#: format adapters (added when first needed, :func:`readers`) and the readers other packages register. A call's
#: own readers (``extra``: a --mapping file's, :func:`trajcheck.readers.mapping.reader.reader_of`) are asked
#: after the native reader and before these, and are never added here.
READERS: list[Reader] = [NATIVE]


def readers(extra: Sequence[Reader] = ()) -> list[Reader]:
    """:data:`READERS` with the format adapters in it, and ``extra`` (a call's own readers) after the native
    reader. The adapters are imported when first needed (10-15 ms): a corpus of native runs, the common case, is
    found, checked for changes and scored without them."""
    register_adapters()
    return [READERS[0], *extra, *READERS[1:]] if extra else READERS


def reader_names(extra: Sequence[Reader] = ()) -> list[str]:
    """The names ``--input-format`` takes, in claiming order (``extra``: the call's own readers)."""
    return [r.name for r in readers(extra)]


def get_reader(name: str, extra: Sequence[Reader] = ()) -> Reader:
    """The reader called ``name``, of ``extra`` (a call's own readers) or of every call's; KeyError when there is
    none."""
    if name == NATIVE.name:
        return NATIVE
    from .nolog import NAME as NO_LOG_NAME, NO_LOG

    if name == NO_LOG_NAME:  # discovery's runs without a log (readers/nolog.py): never in READERS, never claims
        return NO_LOG
    for r in extra:
        if r.name == name:
            return r
    for outside in (False, True):  # a built-in reader is found without reading the entry points
        register_adapters(outside)
        for r in READERS:
            if r.name == name:
                return r
    raise KeyError(name)


@dataclass(frozen=True)
class RunRef:
    """A directory that a reader claimed as a run."""

    path: Path  # the directory (for a remote run: its display path; see ``url``)
    display: str  # its path relative to the argument it was found under (the run_id when invalid)
    reader: str  # name of the reader that reads it
    url: str | None = None  # fsspec URL of a remote run directory (copied locally to be scored)
    #: the argument it was found under (absolute): its screenshots may lie outside its own folder, never outside
    #: this one (:func:`trajcheck.base.runfiles.scoring_root`); None: only inside its own folder
    root: str | None = None

    @property
    def run_dir(self) -> Path:
        """The folder the run's files are in: ``path`` itself, or the folder of a run that is one file."""
        return self.path.parent if self.url is None and self.path.is_file() else self.path

    @property
    def key(self) -> str:
        """Where the run lives: its URL, or its absolute local path."""
        return self.url or os.path.abspath(self.path)


def _claim(path: Path, only: list[Reader] | None, notes: list[Problem] | None = None,
           extra: Sequence[Reader] = ()) -> Reader | None:
    """The reader (of ``only``, or of every reader and ``extra``) whose claim on ``path`` fits best
    (:class:`FolderClaim`: the shape of a log's data before a file name; between equal fits, the reader asked first).
    The native reader is asked first, and alone when it claims (no other reader claims a folder with run.json),
    so the adapters are loaded only for a directory it does not claim. When several readers claim, ``notes``
    gets a ``readers_compete`` warning that names them."""
    if only is not None:
        return next((r for r in only if r.judge(path).claimed), None)
    if NATIVE.judge(path).claimed:
        return NATIVE
    if _registered_in is not READERS and not _has_files(path):
        # no adapter claims a folder with no file in it (a folder of runs): they stay unloaded. A mapping may
        # (its step files in subfolders): it is asked
        asked: Sequence[Reader] = extra
    else:
        asked = [r for r in readers(extra) if r is not NATIVE]
    claims = [(r, c) for r in asked for c in (r.judge(path),) if c.claimed]
    if not claims:
        return None
    best = max(claims, key=lambda rc: fit(*rc))  # the first of the best fits
    if len(claims) > 1 and notes is not None:
        others = "; ".join(f"{r.name}: {c.why}" for r, c in claims if r is not best[0])
        tie = sum(fit(*rc) == fit(*best) for rc in claims) > 1
        why = "asked first among equal fits" if tie else "its claim fits best"
        notes.append(Problem(Slug.READERS_COMPETE, f"{len(claims)} readers claim {path}: {best[0].name} reads it "
                             f"({best[1].why}), {why}; also {others}", file=str(path),
                             severity="warning", hint="`trajcheck formats --detect` says why each claims it; force "
                             "one with --input-format NAME"))
    return best[0]


def fit(reader: Reader, claim: FolderClaim) -> int:
    """How well ``claim`` fits, ranked: a --mapping file's reader (the user's choice for this call) above every
    built-in reader, then by the claim's own fit."""
    return claim.fit + (BY_SHAPE + 1 if claim.claimed and reader.name.startswith("mapping:") else 0)


def _has_files(path: Path) -> bool:
    """Anything but a directory directly in ``path`` (a file, a link, a FIFO); True when it cannot be listed.
    Every format adapter claims a directory by a file in it (tests/test_adapter_kit.py checks each)."""
    try:
        with os.scandir(path) as it:
            return any(not e.is_dir(follow_symlinks=False) for e in it)
    except OSError:
        return True


def discover(args: Iterable[str | os.PathLike[str]], input_format: str | None = None,
             extra: Sequence[Reader] = ()) -> tuple[list[RunRef], list[Problem]]:
    """Find runs under each argument: a run directory, or a folder searched recursively.

    Directories that no reader claims are walked into (hidden ones, ``node_modules`` and the folders a
    ``.trajcheckignore`` names are skipped); a claimed directory is not descended into. A folder holding
    JSON, HTML or images with no run at or below it is a ``no_reader_claims`` problem. A missing argument
    is a problem, not an exception. ``extra``: this call's own readers (a --mapping file's), asked with
    every call's; ``input_format`` may name one of them.
    """
    only = [get_reader(input_format, extra)] if input_format else None
    refs: list[RunRef] = []
    problems: list[Problem] = []
    for arg in args:
        if remote.is_url(arg):
            local = remote.local_path(str(arg))
            if local is None:
                found, probs = remote.discover_url(str(arg))
                problems += probs
                if input_format and input_format != NATIVE.name:
                    problems.append(Problem(Slug.FORMAT_NOT_REMOTE, f"{arg}: only {NATIVE.name} runs are read from "
                                            "URLs", file=str(arg), hint="copy the runs locally to use an adapter"))
                    continue
                refs += [RunRef(Path(display), display, NATIVE.name, url) for url, display in found]
                continue
            arg = local
        root = Path(arg)
        if not root.exists():
            problems.append(Problem(Slug.PATH_NOT_FOUND, f"{root} does not exist", file=str(root),
                                    hint="pass a run directory or a folder that contains runs"))
            continue
        if not root.is_dir():
            problems.append(Problem(Slug.NOT_A_DIRECTORY, f"{root} is a file, not a run directory", file=str(root),
                                    severity="warning", hint="pass the folder that holds the run"))
            continue
        r = _claim(root, only, problems, extra)
        if r is not None:
            refs += _refs(root, root.resolve().name or str(root), r, os.path.abspath(root))
            continue
        refs += _walk(root, only, problems, extra)
    if _outside_in is READERS:  # the readers other packages register were asked: those that failed are named
        from .plugins import load_problems

        problems += load_problems()
    return refs, problems


#: A file in a searched folder naming its subfolders that hold no runs: one subfolder name or glob a line (matched
#: against the names of that folder's own subfolders; ``#`` starts a comment).
IGNORE_FILE = ".trajcheckignore"
#: How many unclaimed folders are named one by one; the rest are counted in one more problem.
MAX_NAMED = 20


def _ignored(here: Path) -> list[str]:
    """The patterns of ``here``'s ignore file (none when it has none or it cannot be read)."""
    try:
        with open(here / IGNORE_FILE, encoding="utf-8", errors="replace") as f:
            lines = f.read(64 * 1024).splitlines()
    except OSError:
        return []
    return [ln.strip().strip("/") for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def _walk(root: Path, only: list[Reader] | None, problems: list[Problem],
          extra: Sequence[Reader] = ()) -> list[RunRef]:
    """The runs below ``root`` (a folder no reader claims), in sorted order. Directories that no reader claims
    are walked into (hidden ones, ``node_modules`` and what an ignore file names are skipped); a claimed
    directory is not descended into. Every folder that holds JSON, HTML or images with no run at or below it
    is reported (``no_reader_claims``), whether or not runs were found beside it: nothing is passed over in
    silence."""
    refs: list[RunRef] = []
    data: list[tuple[Path, list[int]]] = []  # folders with JSON, HTML or images: their counts of each
    for dirpath, dirnames, files in os.walk(root, followlinks=False):
        dirnames.sort()
        here = Path(dirpath)
        counts = [sum(f.lower().endswith(s) for f in files) for s in (_JSON_SUFFIXES, _HTML_SUFFIXES, _IMAGE_SUFFIXES)]
        if any(counts):
            data.append((here, counts))
        skip = _ignored(here) if IGNORE_FILE in files else []
        keep = []
        for d in dirnames:
            if UNFINISHED.match(d):
                problems.append(_unfinished(here / d, d))
            if d.startswith(".") or d in _SKIP_DIRS or any(fnmatch.fnmatchcase(d, pat) for pat in skip):
                continue
            sub = here / d
            r = _claim(sub, only, problems, extra)
            if r is not None:
                refs += _refs(sub, sub.relative_to(root).as_posix(), r, os.path.abspath(root))
            else:
                keep.append(d)
        dirnames[:] = keep
    unclaimed = _unclaimed(data, refs)
    if unclaimed and refs:  # folders of screenshots beside the batch's runs: runs without a log
        from .nolog import NAME, without_log

        found, unclaimed = without_log(root, unclaimed, [r.path for r in refs])
        refs += [RunRef(p, p.relative_to(root).as_posix(), NAME, root=os.path.abspath(root)) for p in found]
    if unclaimed:  # the adapters' names: loaded only then (a folder of native runs leaves them unloaded)
        problems += _unclaimed_problems(root, unclaimed, only if only is not None else readers(extra))
    return refs


#: The hidden folder :class:`trajcheck.RunWriter` writes a run into until ``finish`` renames it into place.
UNFINISHED = re.compile(r"^\.(?P<name>.+)\.partial-[0-9a-f]{12}$")


def _unfinished(path: Path, name: str) -> Problem:
    """A RunWriter's hidden folder left behind: the run it was writing never finished (the process was killed)."""
    m = UNFINISHED.match(name)
    run = m.group("name") if m else name
    return Problem(Slug.UNFINISHED_RUN, f"{name} is the unfinished run {run!r}: trajcheck.RunWriter was writing it "
                   "and stopped before finish(), so it was never published and is not scored", run=run,
                   file=str(path), severity="warning", hint="run the harness again for this run, or delete the folder")


def _refs(path: Path, display: str, r: Reader, root: str) -> list[RunRef]:
    """The runs of a claimed folder (found under the argument ``root``): the folder, or (a folder of
    transcripts) each of its run files."""
    try:
        names = r.entries(path) if r.entries is not None else []
    except OSError:
        names = []
    if len(names) < 2:
        return [RunRef(path, display, r.name, root=root)]
    return [RunRef(path / n, f"{display}/{n}", r.name, root=root) for n in names]


def _companions(reader: str) -> tuple[str, ...]:
    try:
        return get_reader(reader).companions
    except KeyError:
        return ()


def _unclaimed(data: list[tuple[Path, list[int]]], refs: list[RunRef]) -> list[tuple[Path, list[int]]]:
    """The folders to name: those with data and no run at or below them (a folder of runs may keep its own
    labels or task lists), each once: a folder inside one already named adds its counts to it."""
    holders = {p for r in refs for p in (r.path, *r.path.parents)}
    companions = {r.run_dir.parent / c for r in refs for c in _companions(r.reader)}
    named: dict[Path, list[int]] = {}
    for here, counts in data:
        if here in holders or here in companions:
            continue
        top = next((a for a in here.parents if a in named), None)
        if top is not None:
            named[top] = [a + b for a, b in zip(named[top], counts)]
        else:
            named[here] = counts
    return list(named.items())


def _unclaimed_problems(root: Path, unclaimed: list[tuple[Path, list[int]]], readers: list[Reader]) -> list[Problem]:
    """Silence is a bug: a folder with JSON, HTML or screenshots in which no reader found a run is reported
    (``no_reader_claims``, an error), with what was found and what the readers look for."""
    names = ", ".join(r.name for r in readers)
    out = []
    for here, counts in unclaimed[:MAX_NAMED]:
        what = " and ".join(f"{n} {kind}{'s' * (n != 1)}" for n, kind in
                            zip(counts, ("JSON file", "HTML file", "image")) if n)
        rel = here.relative_to(root).as_posix() if here != root else "."
        why = f": {readers[0].judge(here).why}" if len(readers) == 1 else ""  # --input-format: why not this one
        out.append(Problem(Slug.NO_READER_CLAIMS, f"{what} in {rel}, but no reader ({names}) claims it as a "
                           f"run{why}",
                           file=str(here), hint="`trajcheck formats` says what each reader looks for; a native run "
                           "needs run.json beside steps.jsonl (README: the run directory), or write one with "
                           f"trajcheck.RunWriter; a folder that holds no runs can be listed in {IGNORE_FILE}"))
    if len(unclaimed) > MAX_NAMED:
        out.append(Problem(Slug.NO_READER_CLAIMS, f"and {len(unclaimed) - MAX_NAMED} more folders like these",
                           file=str(root), hint="see the folders above"))
    return out


#: The list the adapters were added to (None: not yet). A list, not a flag: whoever replaces :data:`READERS`
#: (a test, with a copy that has a reader more) gets the adapters added to the new list when it asks for them.
_registered_in: list[Reader] | None = None


def register_adapters(outside: bool = True) -> None:
    """Add the format adapters' readers (:data:`trajcheck.readers.adapters.ALL`) to :data:`READERS`, once (a worker
    process does it when it first reads a run of another format), then, with ``outside``, the readers other
    packages register (entry points, read once: :mod:`trajcheck.readers.plugins`). The adapters do not import this
    module (what a reader is, they take from :mod:`trajcheck.readers.kit.reader`), so importing them here is one
    way."""
    global _registered_in, _outside_in
    if _registered_in is not READERS:
        from .adapters import ALL

        _registered_in = READERS
        have = {r.name for r in READERS}
        READERS.extend(r for r in ALL if r.name not in have)
    if outside and _outside_in is not READERS:
        from .plugins import entry_readers

        _outside_in = READERS
        READERS.extend(entry_readers({r.name for r in READERS}))


#: The list the outside readers were added to (None: not yet): entry points are read only when every reader is
#: asked (discovery, ``formats``), or a run names a reader that is not built in; a worker reading a built-in
#: format never reads them (importlib.metadata and the scan of the installed packages cost some 60 ms).
_outside_in: list[Reader] | None = None
