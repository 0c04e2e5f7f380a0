"""The join report of a mapping's results file (``[outcome] file``) over the runs it reads: runs joined, runs
without a record (those whose path ``[run] path`` does not match among them), records without a run, with a few
of each named. ``score`` and ``validate`` print it in their summary and give it as JSON (``join``); a join that
joins no run is an error that says why (:attr:`JoinReport.why`).

The report is made from the runs' paths alone (the log is not read), so it is there for joins whose key comes
from the path: ``[outcome.join]`` (the groups of ``[run] path``), ``joins = "folder"`` and ``joins = "path"``. A
join on a value of the log (run_id, task_id, goal) has none.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from ...base.runfiles import scoring_root
from .join import MAX_EXAMPLES, Join, ResultsTable
from .paths import PathPattern
from .schema import Mapping

if TYPE_CHECKING:
    from ..discovery import RunRef


@dataclass
class JoinReport:
    """How a mapping's runs joined its results file. Lists hold every item; :meth:`to_json` and :meth:`lines`
    name at most :data:`~trajcheck.readers.mapping.join.MAX_EXAMPLES` of each."""

    file: str  # the mapping's ``[outcome] file``
    runs: int = 0
    joined: int = 0
    without_record: list[str] = field(default_factory=list)  # run paths
    path_unmatched: list[str] = field(default_factory=list)  # the runs among them whose path [run] path misses
    several: int = 0  # joined runs that more than one record has the key of (the first is used)
    files: list[str] = field(default_factory=list)  # results files read (relative to the folder scored)
    records: int = 0  # records in the files that joined a run (in every file read, when none did)
    without_run: list[str] = field(default_factory=list)  # those no run joined: their key values as written
    unreadable: list[str] = field(default_factory=list)  # results files not read, and lines left out: why
    #: why nothing joined (empty when a run did): a run's path, its groups, a record's key values
    why: str = ""

    @property
    def nothing_joined(self) -> bool:
        """True when there are runs and none of them joined a record: the join is wrong, or the file absent."""
        return self.runs > 0 and self.joined == 0

    def to_json(self) -> dict[str, Any]:
        """The report as ``--format json`` gives it: counts, and a few examples of each kind."""
        return {"file": self.file, "files": self.files[:MAX_EXAMPLES], "runs": self.runs, "joined": self.joined,
                "runs_without_record": len(self.without_record),
                "runs_path_not_matched": len(self.path_unmatched), "runs_with_several_records": self.several,
                "records": self.records, "records_without_run": len(self.without_run),
                "examples": {"runs_without_record": self.without_record[:MAX_EXAMPLES],
                             "records_without_run": self.without_run[:MAX_EXAMPLES]},
                "unreadable": self.unreadable[:MAX_EXAMPLES], "why": self.why or None}

    def lines(self) -> list[str]:
        """The report for people: one line of counts, then one for each kind of miss, with examples."""
        where = ", ".join(self.files[:MAX_EXAMPLES]) or "no file found"
        out = [f"results joined: {self.joined} of {self.runs} runs have a record in [outcome] file "
               f"{self.file!r} ({where}); {len(self.without_record)} without a record, "
               f"{len(self.without_run)} of {self.records} records without a run"]
        if self.without_record:
            unmatched = f" ({len(self.path_unmatched)} whose path [run] path does not match)" \
                if self.path_unmatched else ""
            out.append(f"  runs without a record{unmatched}, e.g. " + ", ".join(self.without_record[:MAX_EXAMPLES]))
        if self.without_run:
            out.append("  records without a run, e.g. " + "; ".join(self.without_run[:MAX_EXAMPLES]))
        if self.several:
            out.append(f"  {self.several} runs match several records (the first in the file is used)")
        for u in self.unreadable[:MAX_EXAMPLES]:
            out.append(f"  not read: {u}")
        return out


def of_refs(m: Mapping, refs: Iterable["RunRef"]) -> JoinReport | None:
    """The join report of mapping ``m`` over the runs of ``refs`` it reads; None when it joins no results file,
    or joins on a value of the log."""
    join = m.outcome.join
    if not has_report(m) or join is None:
        return None
    return report(join, m.run_path, [(r.run_dir, r.display, r.root) for r in refs if r.reader == m.name])


def has_report(m: Mapping) -> bool:
    """Whether mapping ``m`` joins a results file on a key its runs' paths give."""
    return m.outcome.join is not None and m.outcome.join.by_path and not m.outcome.empty


def for_paths(mapping: str | os.PathLike[str], paths: list[str], input_format: str | None) -> JoinReport | None:
    """:func:`of_refs` over the runs the mapping's reader finds under ``paths``; None, without looking for runs,
    when the mapping has no report to give."""
    from ..discovery import discover
    from .reader import reader_of

    m = Mapping(Path(mapping))
    if not has_report(m):
        return None
    refs, _ = discover(paths, input_format, extra=[reader_of(m)])
    return of_refs(m, refs)


def report(join: Join, pattern: PathPattern | None, runs: list[tuple[Path, str, str | None]]) -> JoinReport:
    """How each run of ``runs`` (run folder, path under the folder scored, that folder) joins its record."""
    out = JoinReport(join.spec, runs=len(runs))
    used: dict[Path, set[int]] = {}  # file -> the records that joined a run
    seen: dict[Path, str] = {}  # every file read -> its name relative to the folder scored
    first: tuple[str, dict[str, str] | None, tuple[str, ...] | None] | None = None  # a run, for the why
    for run_dir, display, root in runs:
        groups = pattern.groups(display) if pattern is not None else None
        with scoring_root(root):
            found = join.find(run_dir, {"folder": run_dir.name, "path": display}, groups)
        if first is None or first[2] is None and found.key is not None:  # a run with a key shows the keys best
            first = (display, groups, found.key)
        for _rel, path in found.files:
            seen.setdefault(path, os.path.relpath(path, os.path.realpath(root)).replace(os.sep, "/") if root
                            else path.name)
        if found.file is None or found.at is None:
            out.without_record.append(display)
            if pattern is not None and groups is None:
                out.path_unmatched.append(display)
            continue
        out.joined += 1
        out.several += found.matches > 1
        used.setdefault(found.file, set()).add(found.at)
    out.files = [seen[p] for p in seen]
    tables = {p: join.table(p) for p in seen}
    out.unreadable = [f"{seen[p]} {t.error}" for p, t in tables.items() if t.error is not None] + [
        f"{seen[p]}: {n}" for p, t in tables.items() for n in t.notes]
    counted = [p for p in seen if p in used] or list(seen)
    for p in counted:
        t = tables[p]
        out.records += len(t.rows)
        out.without_run += [join.shown(r) for i, r in enumerate(t.rows) if i not in used.get(p, set())]
    if out.nothing_joined:
        out.why = _why(join, pattern, out, first, [(seen[p], tables[p]) for p in counted])
    return out


def _why(join: Join, pattern: PathPattern | None, rep: JoinReport,
         first: tuple[str, dict[str, str] | None, tuple[str, ...] | None] | None, tables: list[tuple[str, ResultsTable]]
         ) -> str:
    """Why no run joined a record: the pattern matches no path, no results file was found, it holds no record,
    or the keys differ (a run's path, its groups and key; a record's key values and key)."""
    head = f"[outcome] file {join.spec!r} joins none of the {rep.runs} runs to a record: "
    if first is None:
        return head + "no run"
    display, groups, key = first
    if pattern is not None and len(rep.path_unmatched) == rep.runs:
        return head + (f"[run] path {pattern.text!r} matches no run's path (e.g. {display!r}, its path relative to "
                       "the folder given); check the expression against that path")
    if not rep.files:
        return head + (f"no run finds the file (e.g. {display!r}); a name or glob is looked for in the run folder and "
                       "each folder above it up to the folder given to score, a path with / is relative to the run "
                       "folder: score the folder that holds it, or correct the file")
    rows = [(name, r) for name, t in tables for r in t.rows]
    if not rows:
        bad = "; ".join(rep.unreadable[:MAX_EXAMPLES])
        return head + f"{', '.join(n for n, _ in tables)} holds no record" + (f" ({bad})" if bad else
                                                                              " (check [outcome] records)")
    name, rec = rows[0]
    got = ", ".join(f"{k}={v!r}" for k, v in (groups or {}).items())
    return head + (f"run {display!r} gives {got or 'no groups'} (compared as {key!r}); the first record of "
                   f"{name} has {join.shown(rec)} (compared as {join.record_key(rec)!r}); check "
                   "[outcome.join] (the record field each group matches, prefix, pattern) against them"
                   if join.keys is not None else
                   f"run {display!r} is named {key!r} ({join.joins}); the first record of {name} has "
                   f"{join.shown(rec)} (compared as {join.record_key(rec)!r}); check [outcome] key and joins")
