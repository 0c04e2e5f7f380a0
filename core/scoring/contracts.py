"""Finding and reading outcome contracts and their reference images.

A run's own ``contract.json`` wins. Else a contract of the ``--contracts`` folder applies to it, found by the
first of: the file named ``<task_id>.json``; a contract whose ``task_id`` (or ``match.task_id``) is the run's;
one whose ``match.goal`` equals the run's goal after case and whitespace are normalised, or whose
``match.goal_pattern`` is found in it; one whose ``match.path`` glob (or ``match.path_pattern``) matches the
run's path under the scored folder. Two contracts that match a run at the same step apply to none: which one
is meant cannot be told (a warning names them).
"""

from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..analyzers import patterns
from ..analyzers.rubric import tree_problems
from ..base.errors import Problem, RunFormatError
from ..base.problems import Slug
from ..base.inputs import NotRegularFile, exists_not_dir, read_regular
from ..base.jsonio import decode_utf8, parse_json_text
from ..readers.rundir import valid_fast, validator
from ..base.runfiles import safe_join


@dataclass(frozen=True)
class LoadedContract:
    data: dict[str, Any]
    base: Path  # references resolve inside this directory
    source: str  # where it came from, for messages


def normal_goal(goal: str) -> str:
    """A goal as contracts compare it: case folded, runs of whitespace one space, no space at the ends."""
    return " ".join(goal.casefold().split())


def _strs(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


@dataclass(frozen=True)
class ContractEntry:
    """One contract of a ``--contracts`` folder and what it matches runs on."""

    label: str  # its path, as runs.contract_source names it
    task_ids: frozenset[str] = frozenset()
    goals: frozenset[str] = frozenset()  # normalised (:func:`normal_goal`)
    goal_pattern: str | None = None  # searched case-insensitively, in bounded time (analyzers.patterns)
    paths: tuple[str, ...] = ()  # globs over the run's path under the scored folder
    path_pattern: str | None = None

    def on(self) -> list[str]:
        """What it matches on, in words (for the error of a folder that matched no run)."""
        out = [f"task id {', '.join(sorted(self.task_ids))}"] if self.task_ids else []
        out += [f"goal {g!r}" for g in sorted(self.goals)][:2]
        out += [f"goal pattern {self.goal_pattern!r}"] if self.goal_pattern else []
        out += [f"path {', '.join(self.paths)}"] if self.paths else []
        out += [f"path pattern {self.path_pattern!r}"] if self.path_pattern else []
        return out


@dataclass(frozen=True)
class ContractDir:
    """The contracts of a ``--contracts`` folder, read once per process, and the problems of their ``match``."""

    root: Path
    entries: tuple[ContractEntry, ...]
    problems: tuple[str, ...] = field(default_factory=tuple)

    def match(self, task_id: str | None, goal: str | None, rel_path: str | None
              ) -> tuple[ContractEntry | None, list[ContractEntry]]:
        """The contract that applies to a run (task id, then goal, then path: the first step at which one
        matches), or None and the several that matched at that step (ambiguous: none applies)."""
        g = normal_goal(goal) if goal else None
        rel = rel_path.replace(os.sep, "/") if rel_path else None
        def by_task(e: ContractEntry) -> bool:
            return task_id is not None and task_id in e.task_ids

        def by_goal(e: ContractEntry) -> bool:
            return g is not None and (g in e.goals or _found(e.goal_pattern, goal or ""))

        def by_path(e: ContractEntry) -> bool:
            return rel is not None and (any(fnmatch.fnmatchcase(rel, p) for p in e.paths) or
                                        _found(e.path_pattern, rel))

        for test in (by_task, by_goal, by_path):
            found = [e for e in self.entries if test(e)]
            if len(found) == 1:
                return found[0], []
            if found:
                return None, found
        return None, []


def _found(pattern: str | None, text: str) -> bool:
    """Is ``pattern`` found in ``text`` (case aside)? A search past its time limit finds nothing: the pattern is
    the contract author's to fix, the text is the run's."""
    if pattern is None:
        return False
    try:
        return patterns.search("(?i)" + pattern, text) is not None
    except (patterns.PatternError, patterns.PatternTimeout):
        return False


def _pattern(value: Any, where: str, problems: list[str]) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        patterns.compiled("(?i)" + value)
    except patterns.PatternError as exc:
        problems.append(f"{where} = {value!r} is not a regular expression ({exc})")
        return None
    return value


def contract_dir(root: Path) -> ContractDir:
    """The contracts of the folder ``root`` (its ``*.json`` files) and what each matches on; a file that is not
    a JSON object is left to :func:`find_contract`, which names it when a run's task id names it."""
    listing = tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in root.glob("*.json")
                           if p.is_file())) if root.is_dir() else ()
    return _contract_dir(root, listing)


@lru_cache(maxsize=4)
def _contract_dir(root: Path, listing: tuple[tuple[str, int, int], ...]) -> ContractDir:
    entries: list[ContractEntry] = []
    problems: list[str] = []
    for name, _, _ in listing:
        path = safe_join(root, name)
        if path is None:
            continue
        try:
            data = json.loads(read_regular(path).decode("utf-8"))
        except (OSError, ValueError, NotRegularFile):
            continue
        if not isinstance(data, dict):
            continue
        raw = data.get("match")
        m: dict[str, Any] = raw if isinstance(raw, dict) else {}
        tid = data.get("task_id")
        ids = frozenset((Path(name).stem, *([tid] if isinstance(tid, str) else []), *_strs(m.get("task_id"))))
        entries.append(ContractEntry(
            str(path), ids, frozenset(normal_goal(g) for g in _strs(m.get("goal"))),
            _pattern(m.get("goal_pattern"), f"{name}: match.goal_pattern", problems), _strs(m.get("path")),
            _pattern(m.get("path_pattern"), f"{name}: match.path_pattern", problems)))
    return ContractDir(root, tuple(entries), tuple(problems))


def find_contract(run_dir: Path, task_id: str | None, contracts_dir: Path | None, run: str,
                  goal: str | None = None, rel_path: str | None = None
                  ) -> tuple[LoadedContract | None, list[Problem]]:
    """The run's ``contract.json``, else the contract of ``contracts_dir`` that applies to it (by its task id,
    its ``goal`` or its path under the scored folder, ``rel_path``: the module docstring); None when none
    does."""
    candidates = [(run_dir / "contract.json", run_dir, "contract.json")]
    notes: list[Problem] = []
    if contracts_dir is not None and not exists_not_dir(run_dir / "contract.json"):
        by_task = safe_join(contracts_dir, f"{task_id}.json") if task_id else None
        if by_task is not None and exists_not_dir(by_task):
            candidates.append((by_task, contracts_dir, str(by_task)))
        else:
            entry, several = contract_dir(contracts_dir).match(task_id, goal, rel_path)
            if entry is not None:
                candidates.append((Path(entry.label), contracts_dir, entry.label))
            elif several:
                notes.append(Problem(Slug.CONTRACT_INVALID, f"{len(several)} contracts match this run at once: "
                                     + ", ".join(Path(e.label).name for e in several[:5]) + "; none is applied",
                                     run=run, file=str(contracts_dir), severity="warning",
                                     hint="narrow their match (docs/referee.md, Which runs a contract applies to)"))
    for path, base, label in candidates:
        if not exists_not_dir(path):
            continue
        if base == run_dir and safe_join(run_dir, "contract.json") is None:  # the rule every run file follows
            raise RunFormatError([Problem(Slug.PATH_ESCAPES_RUN, "contract.json is a link to a file outside the run "
                                          "directory; it is not read", run=run, file=label,
                                          hint="copy the contract into the run directory instead of linking it")])
        problems: list[Problem] = []
        try:
            raw = read_regular(path)
        except NotRegularFile as exc:
            return None, [Problem(Slug.NOT_A_REGULAR_FILE, f"{exc.kind}, not a regular file; it is never opened",
                                  run=run, file=label, severity="warning",
                                  hint="the run is scored without a contract")]
        except OSError as exc:
            return None, [Problem(Slug.CONTRACT_INVALID, f"cannot read: {exc}", run=run, file=label, severity="warning",
                                  hint="the run is scored without a contract")]
        text, p = decode_utf8(raw, run=run, file=label)
        if p:
            p.slug, p.severity = Slug.CONTRACT_INVALID, "warning"
            return None, [p]
        data, p = parse_json_text(text or "", run=run, file=label)
        if p and p.slug == Slug.VALUE_OUT_OF_RANGE and base == run_dir:  # NaN or 1e999 in a run's own file
            raise RunFormatError([p])
        if p:
            p.slug, p.severity = Slug.CONTRACT_INVALID, "warning"
            return None, [p]
        errors = [] if valid_fast("contract", data) else validator("contract").iter_errors(data)
        for err in errors:
            field = ".".join(str(x) for x in err.absolute_path) or "(contract)"
            problems.append(Problem(Slug.CONTRACT_INVALID, err.message[:160], run=run, file=label, field=field,
                                    severity="warning", hint="see the contract format in docs/referee.md; "
                                    "the run is scored without a contract"))
        if not problems:  # the rubric's names, once the shape is right
            problems = [Problem(Slug.CONTRACT_INVALID, msg, run=run, file=label, field=where, severity="warning",
                                hint="see Rubric trees in docs/referee.md; the run is scored without a contract")
                        for where, msg in tree_problems(data)]
        if problems:
            return None, problems
        return LoadedContract(data, base, label), []
    return None, notes


def reference_paths(contract: dict[str, Any]) -> list[str]:
    """Every image the contract refers to, in a stable order."""
    out: list[str] = []
    for c in contract.get("checks", []):
        if c.get("type") == "region_matches" and c["reference"] not in out:
            out.append(c["reference"])
    for r in contract.get("reference_screenshots", []) or []:
        if r not in out:
            out.append(r)
    return out


@dataclass(frozen=True)
class ContractUse:
    """How the contracts of a ``--contracts`` folder applied to the runs one ``score`` call scored."""

    folder: str
    runs: int  # runs scored and read
    matched: int  # of them, runs a contract of the folder applied to
    contracts: int  # the folder's contracts
    unused: tuple[str, ...] = ()  # its contracts that applied to none of them (file names)

    def text(self) -> str:
        """``contracts: 12 of 40 runs matched; 3 contracts matched no run``."""
        n = len(self.unused)
        return (f"contracts: {self.matched} of {self.runs} run{'s' * (self.runs != 1)} matched"
                + (f"; {n} contract{'s' * (n != 1)} matched no run" if n else ""))

    def to_json(self) -> dict[str, Any]:
        return {"folder": self.folder, "runs": self.runs, "matched": self.matched, "contracts": self.contracts,
                "unused": list(self.unused)}


def contract_use(root: Path, runs: list[tuple[str, str | None, str | None, str | None]]) -> ContractUse:
    """How the contracts of ``root`` applied to ``runs`` ((path, task_id, goal, contract_source) of each run
    scored and read)."""
    labels = {e.label for e in contract_dir(root).entries}
    used = {src for *_, src in runs if src in labels}
    return ContractUse(str(root), len(runs), sum(1 for *_, src in runs if src in labels), len(labels),
                       tuple(sorted(Path(lb).name for lb in labels - used)))


def why_none_applied(use: ContractUse, runs: list[tuple[str, str | None, str | None, str | None]]) -> str:
    """The error of a ``--contracts`` folder whose contracts applied to none of the runs: what the runs have to be
    matched on, and what the contracts match on."""
    cdir = contract_dir(Path(use.folder))
    ids = sorted({t for _, t, _, _ in runs if t})
    goals = sorted({g for _, _, g, _ in runs if g})
    own = sum(1 for *_, src in runs if src == "contract.json")
    said = [f"--contracts {use.folder}: none of its {use.contracts} contracts applied to any of the {use.runs} "
            "runs scored"]
    if own:
        said.append(f"{own} of the runs have their own contract.json, which wins")
    said.append("the runs' task ids: " + (", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "") if ids else
                                          "none (runs read from transcripts have none)"))
    if goals:
        said.append("their goals: " + "; ".join(repr(g[:80]) for g in goals[:3]) + (" ..." if len(goals) > 3 else ""))
    said.append("their paths: " + ", ".join(p for p, *_ in runs[:3]) + (" ..." if len(runs) > 3 else ""))
    ons = [f"{Path(e.label).name} ({'; '.join(e.on())})" for e in cdir.entries[:5]]
    said.append("the contracts match on: " + (", ".join(ons) if ons else "nothing (no *.json contract there)"))
    said += list(cdir.problems)
    return "; ".join(said) + ". Name a contract <task_id>.json, or give it a \"match\" by task_id, goal or path " \
        "(docs/referee.md, Which runs a contract applies to)"
