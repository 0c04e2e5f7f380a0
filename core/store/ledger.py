"""The Parquet ledger: a directory of table parts named by a manifest.

Layout::

    LEDGER/manifest.json         which part files make up each table (the commit point)
    LEDGER/digests.json          each run's input digest, for the manifest's generation (see manifest.py)
    LEDGER/runs/part-<gen>[-<k>].parquet    one or more parts per table
    LEDGER/steps/part-<gen>[-<k>].parquet

A write puts new parts under temporary names, renames them into place, then
replaces ``manifest.json`` atomically (:mod:`trajcheck.base.atomic`: a temp file, then a rename). A
reader only ever sees the parts the manifest names, so an interrupted command
leaves the previous ledger whole. Every file is flushed to disk (``fsync`` of the
file, then of its folder) before the manifest that names it is renamed into place,
and the folder again after, so a power loss loses at most the generation being
written. Writers take the ledger's lock (:mod:`trajcheck.store.lock`) for the whole
write; readers never do. Read the tables through :func:`connect` (DuckDB views
``runs`` and ``steps``) or ``trajcheck query``, never by file name.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from ..schemas.ledger import TABLES, arrow_schema
from ..schemas.version import SCHEMA_VERSION

from ..base.atomic import atomic_path, atomic_write, commit, fsync_dir, fsync_file, temp_name
from ..base.version import __version__
from ..base.errors import LedgerError
# the ledger's read side, re-exported (`X as X`): ledger.connect, ledger.query, ledger.check_where
from .ledgerquery import (QueryResult as QueryResult, check_where as check_where, connect as connect,
                          query as query)
from .lock import DEFAULT_WAIT, LedgerLock, LockWait, acquire
from ..scoring.rowcheck import find_bad_value, printable

# `X as X`: re-exported, callers read the manifest as ledger.read_manifest
from .manifest import (DIGESTS, INDEX_VERDICTS, LEDGER_FORMAT as LEDGER_FORMAT, MANIFEST, Manifest,
                       previous_from_index, read_manifest as read_manifest, write_digest_index)

#: ledger.lock(root, wait, on_wait): the writer lock, under the name callers know it by.
lock = acquire

#: What writing a part can raise besides OSError when a value slips past the row check (a bug): the commit
#: then aborts with a LedgerError and the previous generation stays whole.
WRITE_ERRORS = (pa.ArrowException, OverflowError, TypeError, ValueError, UnicodeError)


def _to_table(table: str, rows: list[dict[str, Any]]) -> pa.Table:
    schema = arrow_schema(table)
    columns = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.Table.from_pydict(columns, schema=schema)


def _read_part(ledger: Path, rel: str, table: str, columns: list[str] | None = None) -> pa.Table:
    """A part's rows in this schema's columns; a column the part's (older) schema lacks reads as nulls
    (see schemas/migrations.py)."""
    schema = arrow_schema(table)
    names = columns or schema.names
    try:
        with pq.ParquetFile(ledger / rel) as f:  # not pq.read_table: it loads pyarrow.dataset and pandas
            present = set(f.schema_arrow.names)
            t = f.read(columns=[n for n in names if n in present])
    except (OSError, pa.ArrowException) as exc:
        raise LedgerError(f"{ledger / rel}: unreadable ledger part ({exc})") from None
    for n in names:
        if n not in present:
            t = t.append_column(schema.field(n), pa.nulls(t.num_rows, schema.field(n).type))
    return t.select(names).cast(pa.schema([schema.field(n) for n in names]))


def _read_parts(ledger: Path, parts: list[str], table: str) -> pa.Table:
    tables = [_read_part(ledger, rel, table) for rel in parts]
    if not tables:
        return arrow_schema(table).empty_table()
    return pa.concat_tables(tables)


class Writer:
    """Streams scored runs into new ledger parts, then commits them with one manifest swap.

    Rows are buffered and written in row groups as they arrive, so memory does not
    grow with the number of runs. Nothing is visible to readers until
    :meth:`commit`; :meth:`abort` (or an exception inside ``with``) leaves the
    previous ledger whole. A run already in the ledger is replaced by its new rows
    (runs are keyed by ``run_id``): only the old parts that hold a replaced or
    removed run are rewritten without it; every other part is left as it is, so
    appending to a large ledger does not rewrite it. :func:`compact` merges parts.
    """

    #: Buffered rows per table before they are written as a row group.
    FLUSH_ROWS = 8192

    def __init__(self, ledger: str | os.PathLike[str], lock: LedgerLock | None = None) -> None:
        root = Path(ledger)
        if root.exists() and not root.is_dir():
            raise LedgerError(f"{root} exists and is not a directory")
        self._created = lock.created if lock is not None else not root.exists()
        self._lock = lock  # released when the writer's ``with`` block ends
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.old = read_manifest(root)
        if self.old is None:
            _adopt(root)  # a stranger's folder is refused; trajcheck's own leftovers are swept
        self.refused: list[dict[str, Any]] = []  # run rows made invalid here (a value the ledger cannot store)
        self.generation = (self.old.generation if self.old else 0) + 1
        self.ids: set[str] = set()
        self._buf: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._tmp: dict[str, Path] = {}
        self._written: list[Path] = []
        self._digests: list[list[Any]] = []  # DIGEST_COLUMNS of each added run, for digests.json

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        try:
            if kind is not None:
                self.abort()
        finally:
            if self._lock is not None:
                self._lock.release()

    def add(self, run: dict[str, Any], steps: list[dict[str, Any]]) -> None:
        """Buffer a run's rows. Rows holding a value the ledger cannot store (see :mod:`trajcheck.scoring.rowcheck`)
        are replaced by the run's ``invalid`` row naming it (kept in :attr:`refused`): one run never
        costs the batch."""
        bad = find_bad_value(run, steps)
        if bad is not None:
            run, steps = _refused_row(run, bad.problem(printable(str(run.get("run_id"))), run.get("source_format") or
                                                       "")), []
            self.refused.append(run)
        self.ids.add(run["run_id"])
        self._digests.append([run.get(c) for c in DIGEST_COLUMNS])
        self._buf["runs"].append(run)
        self._buf["steps"].extend(steps)
        for table in TABLES:
            if len(self._buf[table]) >= self.FLUSH_ROWS:
                self._flush(table)

    def _flush(self, table: str) -> None:
        rows = self._buf[table]
        if not rows:
            return
        if table not in self._writers:
            (self.root / table).mkdir(exist_ok=True)
            # renamed into place at the commit (a temp file is the ledger's until then: abort sweeps it)
            tmp = temp_name(self.root / f"{table}/part-{self.generation:06d}.parquet")
            self._tmp[table] = tmp
            self._writers[table] = pq.ParquetWriter(tmp, arrow_schema(table), compression="zstd")
        self._writers[table].write_table(_to_table(table, rows), row_group_size=64 * 1024)
        self._buf[table] = []

    def _put(self, table: str, data: pa.Table, rel: str) -> None:
        (self.root / table).mkdir(exist_ok=True)
        with atomic_path(self.root / rel, sync=True) as tmp:
            pq.write_table(data, tmp, compression="zstd", row_group_size=64 * 1024)
        self._written.append(self.root / rel)

    def commit(self, remove: Iterable[str] = ()) -> Manifest:
        """Publish the new rows (and drop the runs in ``remove``) with one atomic manifest swap."""
        try:
            for table in TABLES:
                self._flush(table)
            for w in self._writers.values():
                w.close()
            for tmp in self._tmp.values():
                fsync_file(tmp)  # on disk before the manifest names it
            drop = pa.array(sorted(self.ids | set(remove)), type=pa.string())
            parts: dict[str, list[str]] = {}
            for table in TABLES:
                keep: list[str] = []
                for k, rel in enumerate(self.old.parts.get(table, []) if self.old else []):
                    if len(drop) == 0:
                        keep.append(rel)
                        continue
                    import pyarrow.compute as pc

                    hit = pc.is_in(_read_part(self.root, rel, table, columns=["run_id"])["run_id"], value_set=drop)
                    if not pc.any(hit).as_py():
                        keep.append(rel)  # untouched: no run in it was rescored or removed
                        continue
                    data = _read_part(self.root, rel, table).filter(pc.invert(hit))
                    if data.num_rows:
                        new_rel = f"{table}/part-{self.generation:06d}-{k:04d}.parquet"
                        self._put(table, data, new_rel)
                        keep.append(new_rel)
                if table in self._tmp:
                    rel = f"{table}/part-{self.generation:06d}.parquet"
                    commit(self._tmp.pop(table), self.root / rel)  # fsynced above
                    self._written.append(self.root / rel)
                    keep.append(rel)
                parts[table] = keep
            manifest = Manifest(self.generation, parts)
            _commit(self.root, manifest, self._index(set(drop.to_pylist())))
        except WRITE_ERRORS as exc:
            self.abort()
            raise LedgerError(f"{self.root}: the commit failed ({type(exc).__name__}: {exc}); nothing was "
                              "written and the previous generation is intact") from None
        except BaseException:
            self.abort()
            raise
        _sweep(self.root, manifest)
        return manifest

    def _index(self, drop: set[str]) -> list[list[Any]] | None:
        """The digest index after this commit, from the previous one (without the dropped and rescored
        runs) plus the added runs: no part is read. None when there is no usable previous index."""
        if self.old is None:
            return list(self._digests)
        rows = _index_rows(self.root, self.old.generation)
        if rows is None:
            return None
        return [r for r in rows if r[0] not in drop] + self._digests

    def abort(self) -> None:
        """Drop everything this writer wrote; the committed manifest still names the old parts."""
        for w in self._writers.values():
            try:
                w.close()
            except Exception:  # noqa: BLE001  (already failing; the files go anyway)
                pass
        self._writers.clear()
        for p in self._written:
            p.unlink(missing_ok=True)
        for p in self.root.glob("**/*.tmp"):
            p.unlink(missing_ok=True)
        if self._created and self.old is None:  # leave no empty ledger directory behind
            for table in TABLES:
                d = self.root / table
                if d.is_dir() and not any(d.iterdir()):
                    d.rmdir()
            if self.root.is_dir() and not any(self.root.iterdir()):
                self.root.rmdir()


#: What trajcheck itself writes into a ledger folder (beside the manifest): parts and their temporary
#: files in the table folders; the digest index; temporary manifest and index files.
_OWN_PART = re.compile(r"part-\d{6}(?:-\d{4})?\.parquet(?:\.[0-9a-f]{32}\.tmp)?")
_OWN_FILE = re.compile(rf"{re.escape(DIGESTS)}|(?:{re.escape(MANIFEST)}|{re.escape(DIGESTS)})\.[0-9a-f]{{32}}\.tmp")


def _adopt(root: Path) -> None:
    """A folder without a manifest is a new ledger when it is empty or holds only what trajcheck writes
    (left by a ``score`` killed before its first commit: a ledger with no committed generation); those
    leftovers are removed. A folder holding anything else is refused, as someone else's."""
    leftovers: list[Path] = []
    for p in root.iterdir():
        if p.name.startswith("."):  # the lock file; hidden files are never trajcheck's data
            continue
        if p.name in TABLES and p.is_dir() and not p.is_symlink():
            inside = list(p.iterdir())
            if all(_OWN_PART.fullmatch(q.name) and q.is_file() and not q.is_symlink() for q in inside):
                leftovers += inside
                continue
        elif _OWN_FILE.fullmatch(p.name) and p.is_file() and not p.is_symlink():
            leftovers.append(p)
            continue
        raise LedgerError(f"{root} is not empty and holds no trajcheck ledger; choose a new directory")
    for p in leftovers:
        p.unlink(missing_ok=True)


def _refused_row(run: dict[str, Any], problem: Any) -> dict[str, Any]:
    """The ``invalid`` row of a run whose rows the ledger cannot store: its identity and the problem."""
    keep = ("run_id", "run_path", "source_format", "schema_version", "trajcheck_version", "input_digest", "inputs")
    row: dict[str, Any] = {k: run.get(k) for k in keep}
    row.update(status="invalid", error=str(problem), warnings=[])
    row = {k: printable(v) if isinstance(v, str) else v for k, v in row.items()}
    if find_bad_value(row, []) is not None:  # its identity is odd too: keep the id and the problem only
        row = {"run_id": printable(str(run.get("run_id"))), "status": "invalid", "error": printable(str(problem)),
               "warnings": [], "schema_version": SCHEMA_VERSION, "trajcheck_version": __version__}
    return row


def write(ledger: str | os.PathLike[str], runs: list[dict[str, Any]], steps: list[dict[str, Any]],
          remove: Iterable[str] = (), wait: float = DEFAULT_WAIT) -> Manifest:
    """Add scored runs to the ledger (see :class:`Writer`); drop the runs in ``remove``. Holds the
    ledger's writer lock, waiting up to ``wait`` seconds for another writer."""
    by_run: dict[str, list[dict[str, Any]]] = {}
    for s in steps:
        by_run.setdefault(s["run_id"], []).append(s)
    with Writer(ledger, lock(ledger, wait)) as w:
        for r in runs:
            w.add(r, by_run.pop(r["run_id"], []))
        if by_run:
            raise LedgerError(f"steps of runs with no run row: {sorted(by_run)[:5]}")
        return w.commit(remove)


def previous(ledger: str | os.PathLike[str]) -> list[Any]:
    """What the ledger at ``ledger`` remembers of its runs (for skipping unchanged ones);
    empty when there is no ledger there yet. From ``digests.json`` when it is of the manifest's
    generation (no Arrow needed), else four columns of the runs parts with Arrow, no DuckDB."""
    from ..scoring.incremental import Previous

    known = previous_from_index(ledger)
    if known is not None:
        return known
    root = Path(ledger)
    manifest = read_manifest(root) if root.is_dir() else None
    if manifest is None:
        return []
    cols = ["run_id", "status", "input_digest", "inputs"]
    out: list[Any] = []
    for rel in manifest.parts.get("runs", []):
        t = _read_part(root, rel, "runs", columns=cols).to_pydict()
        out += [Previous.from_row(r, st, d, i) for r, st, d, i in zip(*(t[c] for c in cols))]
    return out


def compact(ledger: str | os.PathLike[str], wait: float = DEFAULT_WAIT,
            on_wait: Callable[[LockWait], None] | None = None) -> Manifest:
    """Merge every part of each table into one (same rows, fewer files), holding the ledger's writer
    lock (waiting up to ``wait`` seconds for another writer; ``on_wait`` hears who holds it)."""
    root = Path(ledger)
    if not (root / MANIFEST).exists():  # checked before the lock, which would create the folder
        raise LedgerError(f"{root}: no {MANIFEST}; this is not a trajcheck ledger")
    with lock(root, wait, on_wait):
        return _compact(root)


def _compact(root: Path) -> Manifest:
    old = read_manifest(root)
    if old is None:
        raise LedgerError(f"{root}: no {MANIFEST}; this is not a trajcheck ledger")
    generation = old.generation + 1
    parts: dict[str, list[str]] = {}
    written: list[Path] = []
    try:
        for table in TABLES:
            data = _read_parts(root, old.parts.get(table, []), table)
            rel = f"{table}/part-{generation:06d}.parquet"
            (root / table).mkdir(exist_ok=True)
            with atomic_path(root / rel, sync=True) as tmp:
                pq.write_table(data, tmp, compression="zstd", row_group_size=64 * 1024)
            written.append(root / rel)
            parts[table] = [rel]
        manifest = Manifest(generation, parts)
        _commit(root, manifest, _index_rows(root, old.generation))  # the same runs as before
    except BaseException:
        for p in written:
            p.unlink(missing_ok=True)
        raise
    _sweep(root, manifest)
    return manifest


#: The columns of digests.json's rows: what skipping unchanged runs needs, then each run's verdict (what a
#: score that skipped them all reports of the ledger, with no Arrow loaded).
DIGEST_COLUMNS = ["run_id", "status", "input_digest", "inputs", *INDEX_VERDICTS]


def _index_rows(root: Path, generation: int) -> list[list[Any]] | None:
    """The rows of ``digests.json`` if it is of ``generation``, else None."""
    try:
        data = json.loads((root / DIGESTS).read_text("utf-8"))
        rows = data["runs"] if data.get("generation") == generation else None
        return rows if isinstance(rows, list) and all(isinstance(r, list) and len(r) == len(DIGEST_COLUMNS)
                                                      for r in rows) else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _commit(root: Path, manifest: Manifest, rows: list[list[Any]] | None = None) -> None:
    """Write the digest index of the new runs parts (``rows`` when the caller derived them from the
    previous index, else read from the runs parts), then replace the manifest atomically: the commit
    point of a write (an index left from an interrupted write names a generation no manifest has)."""
    if rows is None:
        rows = []
        for rel in manifest.parts.get("runs", []):
            t = _read_part(root, rel, "runs", columns=DIGEST_COLUMNS).to_pydict()
            rows += [list(r) for r in zip(*(t[c] for c in DIGEST_COLUMNS))]
    for table in TABLES:  # the parts' renames are on disk before the manifest names them
        if (root / table).is_dir():
            fsync_dir(root / table)
    write_digest_index(root, manifest.generation, rows)
    with atomic_write(root / MANIFEST, "w", sync=True) as f:  # the rename is the commit point
        f.write(json.dumps(manifest.to_json(), indent=2, sort_keys=True) + "\n")
    fsync_dir(root)  # ... made durable before the old parts are swept


def _sweep(root: Path, manifest: Manifest) -> None:
    """Remove part files the committed manifest no longer names."""
    keep = {root / p for parts in manifest.parts.values() for p in parts}
    for p in root.glob("*.tmp"):  # manifest or index temp files of an interrupted commit
        if p.name.startswith((MANIFEST + ".", DIGESTS + ".")):
            p.unlink(missing_ok=True)
    for table in TABLES:
        for p in (root / table).glob("*"):
            if p not in keep and (p.suffix in (".parquet", ".tmp")):
                p.unlink(missing_ok=True)

