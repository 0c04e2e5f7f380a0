"""A mapping's results file (``[outcome] file``) joined to its runs: where the file is, reading it (CSV, JSON, JSON
Lines), which record is a run's, and the join report (runs joined, runs without a record, records without a run).

Where: ``file`` without a ``/`` is a name or a glob looked for in the run folder, then in each folder above it up to
the folder given to ``score``, nearest first (``results.csv`` beside the run folders is in the folder above each);
``file`` with a ``/`` is a path relative to the run folder, a glob allowed (``../results.csv`` beside it,
``eval/result.json`` below it, ``../../summary/*.jsonl`` above it). Nothing outside the folder given to ``score``
is read.

Which record: by a name (``key`` and ``joins``: a record's key equals the run folder's name, its path, its
run_id, task_id or goal), or by the groups of ``[run] path`` (``[outcome.join]``: each group names the record
field it matches). The groups are compared with tolerance (:func:`canonical`): as text without surrounding
blanks, runs of blanks as one, case-insensitively; a declared ``prefix`` dropped from the start of either
value; a ``pattern`` cutting the record's value; numbers written in digits equal when their values are
(``017``, ``17`` and ``17.0``).
"""

from __future__ import annotations

import csv
import glob
import io
import itertools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...base.errors import UsageError
from ...base.runfiles import current_root, outside_join, safe_join
from ..kit.reading import load_json_or_jsonl
from .fields import Field, fill
from .paths import PathPattern

#: The runs' names a ``key`` may join on (``joins``).
JOINS = ("folder", "path", "run_id", "task_id", "goal")
MAX_RESULTS_BYTES = 256 * 1024 * 1024
#: Matches of a results file glob looked at in one folder (a glob over a huge folder stays bounded).
MAX_MATCHES = 200
#: Examples the join report names of each kind.
MAX_EXAMPLES = 3
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")
_KEY_KEYS = {"field", "prefix", "pattern"}


def canonical(value: Any, prefixes: tuple[str, ...] = ()) -> str | None:
    """A join value as it is compared: text without surrounding blanks, runs of blanks as one space, case
    folded; the first of ``prefixes`` it starts with dropped; a number in digits as its value (``017`` and
    ``17.0`` are ``17``). None for nothing or an empty text."""
    if value is None or isinstance(value, (dict, list)):
        return None
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    text = " ".join(text.split()).casefold()
    for p in prefixes:
        p = " ".join(p.split()).casefold()
        if p and text.startswith(p):
            text = text[len(p):].lstrip()
            break
    if _NUMBER.fullmatch(text):
        sign = "-" if text.startswith("-") else ""
        whole, _, frac = text.lstrip("+-").partition(".")
        whole, frac = whole.lstrip("0") or "0", frac.rstrip("0")
        text = ("" if whole == "0" and not frac else sign) + whole + ("." + frac if frac else "")
    return text or None


class JoinKey:
    """One entry of ``[outcome.join]``: the path's group ``group`` matches the record field ``field`` (a column
    or member name, else a JMESPath expression), after ``prefix`` and ``pattern``."""

    def __init__(self, group: str, spec: Any, where: str):
        where = f"{where} [outcome.join] {group}"
        if isinstance(spec, str):
            spec = {"field": spec}
        if not isinstance(spec, dict):
            raise UsageError(f"{where} must be the record field the group matches (\"task_id\") or a table "
                             "{ field, prefix, pattern }")
        unknown = set(spec) - _KEY_KEYS
        if unknown:
            raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (field, prefix, pattern)")
        self.group = group
        self.name = str(spec.get("field", group))
        prefix = spec.get("prefix", [])
        if not isinstance(prefix, (str, list)) or isinstance(prefix, list) and not all(
                isinstance(p, str) for p in prefix):
            raise UsageError(f"{where}.prefix must be a text or a list of texts (\"task-\")")
        self.prefixes: tuple[str, ...] = (prefix,) if isinstance(prefix, str) else tuple(prefix)
        pattern = spec.get("pattern")
        self.pattern: re.Pattern[str] | None = None
        if pattern is not None:
            try:
                self.pattern = re.compile(str(pattern))
            except re.error as exc:
                raise UsageError(f"{where}.pattern = {pattern!r} is not a regular expression ({exc})") from None
        try:
            self.path: Field | None = Field(group, self.name, f"{where}.field")
        except UsageError:  # a column name that is no JMESPath ("task id"): looked up by name only
            self.path = None

    def raw(self, record: dict[str, Any]) -> Any:
        """The record's value of the field, as it is written."""
        if self.name in record:
            return record[self.name]
        return self.path.value(record) if self.path is not None else None

    def of_record(self, record: dict[str, Any]) -> str | None:
        """The record's value as it is compared (``pattern`` cut, then :func:`canonical`)."""
        v = self.raw(record)
        if v is not None and self.pattern is not None:
            m = self.pattern.search(v if isinstance(v, str) else str(v))
            if m is None:
                return None
            named = m.groupdict()
            v = named.get(self.group) or next((g for g in named.values() if g is not None), None) or (
                m.group(1) if self.pattern.groups else m.group(0))
        return canonical(v, self.prefixes)

    def of_group(self, value: str | None) -> str | None:
        """The path's group as it is compared."""
        return canonical(value, self.prefixes)


@dataclass
class ResultsTable:
    """A results file read: its records, their numbers by key (a record without a key is in none), and what went
    wrong reading it (``error``: nothing read; ``notes``: lines left out)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    index: dict[tuple[str, ...], list[int]] = field(default_factory=dict)
    error: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Found:
    """A run's join: its key (None: its path or log gives none), the results files looked in (path relative to
    the run folder, resolved path), the file and record that are its (``at``: the record's number in the file),
    how many records of that file have its key, and what went wrong reading the files."""

    key: tuple[str, ...] | None
    files: list[tuple[str, Path]] = field(default_factory=list)
    record: dict[str, Any] | None = None
    file: Path | None = None
    at: int | None = None
    matches: int = 0
    errors: list[str] = field(default_factory=list)


class Join:
    """How a mapping's runs find their records in its results file (``[outcome]`` file, records, key, joins,
    join), compiled."""

    def __init__(self, table: dict[str, Any], where: str, path: PathPattern | None):
        self.spec = check_file(table.get("file"), where)
        self.records = Field("records", table["records"], f"{where} [outcome] records") \
            if isinstance(table.get("records"), (str, dict)) else None
        key, joins, join = table.get("key"), table.get("joins"), table.get("join")
        self.keys: list[JoinKey] | None = None
        if join is not None:
            if key is not None or joins is not None:
                raise UsageError(f"{where} [outcome]: join (by the groups of [run] path) and key/joins (by a name) "
                                 "are two ways to join: keep one")
            if not isinstance(join, dict) or not join:
                raise UsageError(f"{where} [outcome] join must be a table: each named group of [run] path = the "
                                 "record field it matches")
            if path is None:
                raise UsageError(f"{where} [outcome] join needs [run] path, the regular expression whose named "
                                 "groups it matches")
            missing = [g for g in join if g not in path.names]
            if missing:
                raise UsageError(f"{where} [outcome.join] {', '.join(missing)}: [run] path has no group of that "
                                 f"name (it has {', '.join(path.names)})")
            self.keys = [JoinKey(str(g), spec, where) for g, spec in join.items()]
        self.key_template = str(key) if isinstance(key, str) and "{" in key else None
        self.key = Field("key", key, where + " [outcome] key") if isinstance(key, str) and "{" not in key else None
        self.joins = str(joins if joins is not None else "folder")
        if self.joins not in JOINS:
            raise UsageError(f"{where} [outcome] joins = {self.joins!r}: one of {', '.join(JOINS)}")
        self._tables: dict[tuple[str, int, int], ResultsTable] = {}
        self._listings: dict[tuple[str, str], tuple[int, list[str]]] = {}

    @property
    def by_path(self) -> bool:
        """Whether a run's key comes from its path alone (the join report needs no log read)."""
        return self.keys is not None or self.joins in ("folder", "path")

    def run_key(self, names: dict[str, str | None], groups: dict[str, str] | None) -> tuple[str, ...] | None:
        """A run's key: its path's groups as compared (``[outcome.join]``), else its name (``joins``)."""
        if self.keys is not None:
            return _all([k.of_group((groups or {}).get(k.group)) for k in self.keys])
        name = names.get(self.joins)
        return (name.strip("/"),) if name else None

    def record_key(self, record: dict[str, Any]) -> tuple[str, ...] | None:
        """A record's key, as :meth:`run_key` gives a run's."""
        if self.keys is not None:
            return _all([k.of_record(record) for k in self.keys])
        k = fill(self.key_template, record) if self.key_template else \
            (self.key.value(record) if self.key is not None else None)
        if k is None and "__key__" in record:
            k = record["__key__"]
        return (str(k).strip("/"),) if k is not None else None

    def shown(self, record: dict[str, Any]) -> str:
        """A record's key values as written, for messages: ``task_id='task-17', condition='gpt4o'``."""
        if self.keys is not None:
            return ", ".join(f"{k.name}={k.raw(record)!r}" for k in self.keys)
        k = fill(self.key_template, record) if self.key_template else \
            (self.key.value(record) if self.key is not None else record.get("__key__"))
        return f"key={k!r}"

    def files(self, run_dir: Path) -> list[tuple[str, Path]]:
        """The results files a run looks in, nearest first, each as (its path relative to the run folder, the
        resolved path)."""
        return results_files(run_dir, self.spec, self._listings)

    def table(self, path: Path) -> ResultsTable:
        """A results file's records and their keys (kept while the file is unchanged)."""
        try:
            st = path.stat()
        except OSError as exc:
            return ResultsTable(error=f"cannot be read ({exc.strerror})")
        tag = (str(path), st.st_mtime_ns, st.st_size)
        if tag not in self._tables:
            if len(self._tables) > 16:
                self._tables.clear()
            self._tables[tag] = self._read(path, st.st_size)
        return self._tables[tag]

    def _read(self, path: Path, size: int) -> ResultsTable:
        if size > MAX_RESULTS_BYTES:
            return ResultsTable(error=f"is larger than {MAX_RESULTS_BYTES >> 20} MiB; not read")
        value, notes, error = load_results(path)
        if error is not None:
            return ResultsTable(error=error)
        if self.records is not None:
            value = self.records.value(value)
        if isinstance(value, dict):
            rows = [({**v, "__key__": k} if isinstance(v, dict) else {"value": v, "__key__": k})
                    for k, v in value.items()]
        else:
            rows = [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []
        t = ResultsTable(rows=rows, notes=notes)
        for i, r in enumerate(rows):
            k = self.record_key(r)
            if k is not None:
                t.index.setdefault(k, []).append(i)
        return t

    def find(self, run_dir: Path, names: dict[str, str | None], groups: dict[str, str] | None) -> Found:
        """The run's record: in the nearest results file that has one with its key (the first such record)."""
        found = Found(self.run_key(names, groups))
        if found.key is None:
            return found
        found.files = self.files(run_dir)
        for rel, path in found.files:
            t = self.table(path)
            if t.error is not None:
                found.errors.append(f"{rel} {t.error}")
            found.errors += [f"{rel}: {n}" for n in t.notes]
            hits = t.index.get(found.key)
            if hits:
                found.record, found.file, found.at, found.matches = t.rows[hits[0]], path, hits[0], len(hits)
                break
        return found


def _all(values: list[str | None]) -> tuple[str, ...] | None:
    """The values as a key, or None when one of them is missing (a key is whole or none)."""
    return tuple(v for v in values if v is not None) if None not in values else None


def check_file(spec: Any, where: str) -> str:
    """``[outcome] file`` checked: a name or glob (looked for upward) or a path relative to the run folder."""
    text = spec if isinstance(spec, str) else ""
    parts = text.split("/")
    if not text.strip() or text.startswith("/") or "\\" in text or ":" in parts[0] or text.strip("/.") == "" \
            or text.endswith("/"):
        raise UsageError(f"{where} [outcome] file = {spec!r} must be a file name or glob (looked for in the run "
                         "folder and each folder above it) or a path relative to the run folder with / between "
                         "folders (../results.csv), not an absolute path or a folder")
    return text


def results_files(run_dir: Path, spec: str, listings: dict[tuple[str, str], tuple[int, list[str]]] | None = None
                  ) -> list[tuple[str, Path]]:
    """The files ``spec`` names for the run at ``run_dir`` (see the module's doc), nearest first, each as (its path
    relative to the run folder, the resolved path), only those inside the folder being scored
    (:func:`~trajcheck.base.runfiles.current_root`; unset: inside the run folder). ``listings`` keeps a folder's
    matches while the folder is unchanged: the runs of one folder share the glob of the folder above them."""
    base = os.path.realpath(run_dir)
    out: list[tuple[str, Path]] = []
    if "/" in spec:
        matches = sorted(itertools.islice(glob.iglob(os.path.join(glob.escape(base), spec)), MAX_MATCHES))
        for m in matches:
            got = _inside(run_dir, os.path.relpath(m, base).replace(os.sep, "/"))
            if got is not None:
                out.append(got)
        return out
    root = current_root()
    here = base
    for _ in range(64):
        for m in _listing(here, spec, {} if listings is None else listings):
            got = _inside(run_dir, os.path.relpath(m, base).replace(os.sep, "/"))
            if got is not None:
                out.append(got)
        parent = os.path.dirname(here)
        if root is None or here == root or parent == here or not _under(parent, root):
            break
        here = parent
    return out


def _listing(folder: str, spec: str, listings: dict[tuple[str, str], tuple[int, list[str]]]) -> list[str]:
    """The paths in ``folder`` that the glob ``spec`` matches, sorted, at most MAX_MATCHES (kept in ``listings``
    while the folder's mtime is unchanged)."""
    try:
        stamp = os.stat(folder).st_mtime_ns
    except OSError:
        return []
    got = listings.get((folder, spec))
    if got is None or got[0] != stamp:
        if len(listings) > 4096:
            listings.clear()
        try:
            names = sorted(itertools.islice(glob.iglob(os.path.join(glob.escape(folder), spec)), MAX_MATCHES))
        except OSError:
            names = []
        got = listings[(folder, spec)] = (stamp, names)
    return got[1]


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _inside(run_dir: Path, rel: str) -> tuple[str, Path] | None:
    """(rel, the resolved file) when ``rel`` is a regular file inside the run folder, or outside it but inside the
    folder being scored; None otherwise."""
    inner = safe_join(run_dir, rel)
    if inner is not None:
        return (rel, inner) if inner.is_file() else None
    got = outside_join(run_dir, rel)
    return got if got is not None and got[1].is_file() else None


def load_results(path: Path) -> tuple[Any, list[str], str | None]:
    """A results file's value, the lines left out, and why it could not be read (None when it could): CSV (by
    its ``.csv`` or ``.tsv`` suffix: a list of rows by the header's names), else JSON or JSON Lines."""
    try:
        text = path.read_text("utf-8-sig", errors="replace")
    except OSError as exc:
        return None, [], f"cannot be read ({exc.strerror})"
    if path.suffix.lower() in (".csv", ".tsv"):
        try:
            rows = list(csv.DictReader(io.StringIO(text), delimiter="\t" if path.suffix.lower() == ".tsv" else ","))
        except csv.Error as exc:
            return None, [], f"is not CSV ({exc})"
        return [{k: v for k, v in r.items() if k is not None} for r in rows], [], None
    problems: list[Any] = []
    try:
        value = load_json_or_jsonl(text, run="", rel=path.name, problems=problems)
    except RecursionError:
        return None, [], "is nested too deeply to read"
    if value is None and problems:
        where = f"line {problems[0].line}: " if problems[0].line else ""
        return None, [], f"is not JSON, JSON Lines or CSV ({where}{problems[0].message})"
    return value, [(f"line {p.line}: " if p.line else "") + f"{p.message} (left out)" for p in problems], None
