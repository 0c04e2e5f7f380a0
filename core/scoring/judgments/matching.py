"""Matching judgments to runs: by run id, by the run's folder (its name, or its last folders), or by task id.

A judge names a run as its own files do: AgentRewardBench by the trajectory file's name, OSWorld by the example's
folder, Agent-Eval-Refine by the trajectory's name, cube-harness by the trajectory id or the task. Each id a
judgment gives (its ``run_id``, then its ``keys``) is tried against the runs' ids first, then against their
folders (``run_path``: the last folder's name, or as many last folders as the id has parts, ``domain/example``),
then against their task ids; a task id with several runs (trials) matches none of them (``ambiguous``: the
judge must name the run). Every judgment is matched once, and the report says how.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from .model import Judgment

#: How a judgment was matched, in the order tried.
HOW = ("run_id", "path", "task_id")


@dataclass(frozen=True)
class JudgedRun:
    """What a run is known by: its id, its folder and its task."""

    run_id: str
    path: str | None
    task_id: str | None


@dataclass
class Matching:
    """Judgments matched to runs (``matched``: each judgment with its run's id and how it matched), and what
    matched none (``unmatched``), and the task ids that name several runs (``ambiguous``)."""

    matched: list[tuple[Judgment, str, str]] = field(default_factory=list)
    unmatched: list[Judgment] = field(default_factory=list)
    ambiguous: dict[str, int] = field(default_factory=dict)  # task id -> how many runs it names

    def to_json(self) -> dict[str, Any]:
        how = {h: sum(1 for _, _, x in self.matched if x == h) for h in HOW}
        ids = sorted({j.run_id for j in self.unmatched})
        return {"matched": len(self.matched), "by": how, "unmatched": len(self.unmatched),
                "unmatched_ids": ids[:10], "ambiguous_tasks": dict(sorted(self.ambiguous.items())[:10])}


def _tails(path: str) -> list[str]:
    parts = [p for p in PurePath(path.replace("\\", "/")).parts if p not in ("/", "")]
    return ["/".join(parts[-n:]) for n in range(1, min(len(parts), 4) + 1)]


def match(judgments: list[Judgment], runs: list[JudgedRun]) -> Matching:
    """Each judgment's run (module docstring)."""
    by_id = {r.run_id: r for r in runs}
    by_path: dict[str, list[JudgedRun]] = {}
    by_task: dict[str, list[JudgedRun]] = {}
    for r in runs:
        for t in _tails(r.path) if r.path else []:
            by_path.setdefault(t, []).append(r)
        if r.task_id:
            by_task.setdefault(r.task_id, []).append(r)
    out = Matching()
    for j in judgments:
        ids = [j.run_id, *j.keys]
        got: tuple[str, str] | None = None
        for k in ids:
            if k in by_id:
                got = (k, "run_id")
                break
        if got is None:
            for k in ids:
                hits = by_path.get(k.strip("/"), [])
                if len(hits) == 1:
                    got = (hits[0].run_id, "path")
                    break
        if got is None:
            for k in ids:
                hits = by_task.get(k, [])
                if len(hits) == 1:
                    got = (hits[0].run_id, "task_id")
                    break
                if len(hits) > 1:
                    out.ambiguous[k] = len(hits)
        if got is None:
            out.unmatched.append(j)
        else:
            out.matched.append((j, got[0], got[1]))
    return out


def why_none(path: str, judgments: list[Judgment], runs: list[JudgedRun], m: Matching) -> str:
    """Why no judgment of ``path`` matched a run: the ids it gives, and what the runs are known by."""
    if not judgments:
        return f"{path}: holds no judgments"
    ids = sorted({k for j in judgments for k in (j.run_id, *j.keys)})
    some = ", ".join(repr(i) for i in ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    known = ", ".join(repr(r.run_id) for r in sorted(runs, key=lambda r: r.run_id)[:3])
    text = (f"{path}: none of its {len(judgments)} judgments names a run of the ledger: it names {some}; the "
            f"ledger's {len(runs)} runs are known by their run_id ({known}...), their folder's name and their "
            "task_id")
    if m.ambiguous:
        task, n = sorted(m.ambiguous.items())[0]
        text += f"; task {task!r} has {n} runs, so a judgment naming it must name the run"
    return text
