"""Drafting a mapping, the files around the log: the log file among a run folder's files, the screenshots
beside it (a template from the step's key, position or a number in its line, before and after, or a glob),
and a results file beside the runs that records each run's outcome."""

from __future__ import annotations

import itertools
import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...kit.reading import natural
from ..steps import IMAGE_SUFFIXES
from .vocab import GOAL_KEYS, SCORE_KEYS, SUCCESS_KEYS, jkey, pick

LOG_SUFFIXES = (".json", ".jsonl", ".log", ".txt", ".csv", ".tsv", ".md", ".markdown", ".html", ".htm")
#: Most folders a draft walks, and most images it lists in one run folder.
MAX_DIRS = 200_000
MAX_IMAGES = 5000
_AFTER = re.compile(r"(after|action|post|end|next|result)", re.I)
_NUM = re.compile(r"\d+")


@dataclass
class Folder:
    path: Path
    logs: list[str]


def scan(root: Path) -> list[Folder]:
    """The folders under ``root`` (itself included) that hold a possible log file, in sorted order."""
    out: list[Folder] = []
    for n, (dirpath, dirnames, files) in enumerate(os.walk(root)):
        if n >= MAX_DIRS:
            break
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "node_modules")
        logs = sorted(f for f in files if f.lower().endswith(LOG_SUFFIXES) and not f.startswith("."))
        if logs:
            out.append(Folder(Path(dirpath), logs))
    return out


def log_names(folders: list[Folder]) -> list[tuple[str, str, int]]:
    """The candidate logs, best first: (kind, glob, folders holding it), kind ``file`` (one log a run) or ``steps``
    (three or more files of one numbered name in a folder: one file per step)."""
    exact: Counter[str] = Counter()
    pattern: Counter[str] = Counter()
    per_step: Counter[str] = Counter()
    for f in folders:
        exact.update(f.logs)
        pats = Counter(_NUM.sub("*", name) for name in f.logs)
        pattern.update(pats.keys())
        per_step.update(p for p, c in pats.items() if c >= 3 and "*" in p)
    rank = {s: i for i, s in enumerate(LOG_SUFFIXES)}
    cands = [("steps", p, c) for p, c in per_step.items()]
    cands += [("file", n, c) for n, c in exact.items()]
    cands += [("file", p, c) for p, c in pattern.items() if "*" in p and c > exact.get(p, 0) and p not in per_step]
    return sorted(cands, key=lambda t: (-t[2], t[0] != "steps", rank.get(Path(t[1]).suffix.lower(), 9), t[1]))


def images(run_dir: Path) -> list[str]:
    """The image files in a run folder and its subfolders (two levels), as paths relative to it."""
    out: list[str] = []
    for dirpath, dirnames, files in itertools.islice(os.walk(run_dir), 200):
        depth = len(Path(dirpath).relative_to(run_dir).parts)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if depth < 2 else []
        rel = Path(dirpath).relative_to(run_dir).as_posix()
        out += [(f if rel == "." else f"{rel}/{f}") for f in files if f.lower().endswith(IMAGE_SUFFIXES)]
        if len(out) > MAX_IMAGES:
            break
    return sorted(out, key=natural)


def _groups(names: list[str]) -> dict[tuple[str, str], list[str]]:
    """Image names by their shape around the last number in them: (before, after) -> the numbers as written."""
    out: dict[tuple[str, str], list[str]] = {}
    for name in names:
        nums = list(_NUM.finditer(name))
        if nums:
            m = nums[-1]
            out.setdefault((name[:m.start()], name[m.end():]), []).append(m.group(0))
    return out


def _width(nums: list[str]) -> int:
    return len(nums[0]) if all(len(n) == len(nums[0]) for n in nums) and any(n.startswith("0") for n in nums) \
        and len(nums) > 1 and len(nums[0]) > 1 else 0


def shot_lines(runs: list[tuple[list[str], int, list[str], dict[str, list[str]]]]) -> tuple[list[str], list[str]]:
    """The ``[step]`` screenshot lines for runs given as (image names, step count, member keys, numeric line
    groups' values), and what the draft is unsure of."""
    votes: Counter[tuple[str, ...]] = Counter()
    for names, n, keys, groups in runs:
        votes.update([_one_run(names, n, keys, groups)])
    if not votes:
        return [], []
    best, count = votes.most_common(1)[0]
    unsure = [] if count == len(runs) else [f"screenshots: this naming fits {count} of {len(runs)} sampled runs"]
    if best and best[0] == "unsure":
        return list(best[1:]), unsure + ["screenshots: before or after each action? (screenshot_is)"]
    return list(best), unsure


def _one_run(names: list[str], n: int, keys: list[str], groups: dict[str, list[str]]) -> tuple[str, ...]:
    if not names or not n:
        return ()
    shapes = sorted(_groups(names).items(), key=lambda kv: -len(kv[1]))
    big = [(k, v) for k, v in shapes if len(v) >= max(2, n - 1)]
    if len(big) >= 2 and big[0][0][0] == big[1][0][0]:  # step_01.png and step_01_action.png
        (a, an), (b, bn) = big[0], big[1]
        pre, post = (a, b) if not _AFTER.search(a[1]) else (b, a)
        var = _variable(sorted(set(an) & set(bn), key=natural) or an, n, keys, groups)
        w = _width(an)
        return ("screenshot_file = " + _q(pre[0] + var(w) + pre[1]), "screenshot_after_file = " + _q(post[0] + var(w)
                                                                                                    + post[1]))
    if not big:
        return ()
    (before, after), nums = big[0]
    w = _width(nums)
    ints = sorted(int(x) for x in nums)
    if ints != list(range(ints[0], ints[0] + len(ints))):  # gaps: pair the files with the steps by position
        star = before.rsplit("/", 1)[0] + "/*" + after if "/" in before else "*" + after
        return ("screenshots = " + _q(star), "screenshot_is = 'pre'")
    var = _variable(nums, n, keys, groups)
    side = "pre" if len(nums) >= n + 1 or _AFTER.search(before + after) is None else "post"
    out = ("screenshot_file = " + _q(before + var(w) + after), f"screenshot_is = '{side}'")
    return out if len(nums) != n or side == "post" else ("unsure", *out)


def _variable(nums: list[str], n: int, keys: list[str], groups: dict[str, list[str]]) -> Any:
    """What names a step's file: its key, a numbered group of its line, or its position (from 0 or 1)."""
    have = {int(x) for x in nums}
    if keys and all(k.isdigit() for k in keys) and {int(k) for k in keys} <= have:
        return lambda w: "{key" + (f":0{w}" if w else "") + "}"
    for g, vals in groups.items():
        if vals and {int(v) for v in vals} <= have:
            return lambda w, g=g: "{" + g + (f":0{w}" if w else "") + "}"
    name = "index" if min(have) == 0 else "index1"
    return lambda w: "{" + name + (f":0{w}" if w else "") + "}"


def _q(s: str) -> str:
    return "'" + s + "'" if "'" not in s else json.dumps(s)


def outcome_lines(root: Path, run_dirs: list[Path], log: str) -> tuple[list[str], list[str]]:
    """An ``[outcome]`` table from a JSON file beside the runs (in a folder above them, inside ``root``) whose
    records name the runs by their folder (or their path) and record a success flag or a score."""
    seen: set[Path] = set()
    names = {d.name for d in run_dirs}
    paths = {d.relative_to(root).as_posix() for d in run_dirs if d != root}
    for d in run_dirs:
        for up in itertools.islice(itertools.chain([d], d.parents), 8):
            if up in seen or (up != root and root not in up.parents):
                break
            seen.add(up)
            for f in sorted(up.glob("*.json*"))[:50]:
                if f.name == log or f.stat().st_size > 64 * 1024 * 1024:
                    continue
                got = _records_in(f, names, paths)
                if got:
                    return [f"file = {_q(f.name)}"] + got, []
    return [], []


def _records_in(f: Path, names: set[str], paths: set[str]) -> list[str]:
    try:
        value = json.loads(f.read_text("utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return []
    where = "@"
    if isinstance(value, dict) and not _rows(value):
        inner = next(((k, v) for k, v in value.items() if isinstance(v, (list, dict)) and _rows(v)), None)
        if inner is None:
            return []
        where, value = jkey(inner[0]), inner[1]
    rows = _rows(value)
    if not rows:
        return []
    keyed = isinstance(value, dict)
    for joins, pool in (("folder", names), ("path", paths)):
        if keyed and sum(k in pool for k in value) * 2 >= min(len(value), len(pool)):
            flag = _flag(rows)
            return [f"records = {_q(where)}", f"joins = '{joins}'"] + flag if flag else []
        for k in {k for r in rows for k, v in r.items() if isinstance(v, str)}:
            hits = sum(str(r.get(k)) in pool for r in rows)
            if hits and hits * 2 >= min(len(rows), len(pool)):
                flag = _flag(rows)
                return [f"records = {_q(where)}", f"key = {_q(jkey(k))}", f"joins = '{joins}'"] + flag if flag else []
    return []


def _rows(value: Any) -> list[dict[str, Any]]:
    rows = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else []
    rows = [r for r in rows if isinstance(r, dict)]
    return rows if rows and all(pick(r, SUCCESS_KEYS + SCORE_KEYS) for r in rows[:20]) else []


def _flag(rows: list[dict[str, Any]]) -> list[str]:
    k = pick(rows[0], SUCCESS_KEYS)
    if k is not None:
        return [f"success = {_q(jkey(k))}"]
    k = pick(rows[0], SCORE_KEYS)
    return [f"score = {_q(jkey(k))}"] if k is not None else []


def goal_key(root: Any) -> str | None:
    """The run-level key of the task's goal, when the log is an object that has one."""
    if not isinstance(root, dict):
        return None
    k = pick({k: v for k, v in root.items() if isinstance(v, str)}, GOAL_KEYS)
    return jkey(k) if k else None
