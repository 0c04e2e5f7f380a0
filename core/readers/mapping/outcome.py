"""A mapping's ``[outcome]``: the success flag, score or evaluator result a harness or benchmark recorded for a
run, from the log or from a results file beside the runs. It becomes the run's ``outcome_score`` (a success
flag is 1 or 0), which the referee takes as the benchmark's own evaluator (verdict source ``evaluator``)::

    [outcome]
    success = "success"             # a flag (true/false, "success"/"fail", 1/0) ...
    score = "reward"                # ... or a score (1 passes; `score --evaluator-pass` lowers it)
    file = "results.json"           # optional: a results file in a folder above the run (nearest first)
    records = "runs"                # the list of records in it (or an object keyed by the run's name)
    key = "{task}/{condition}"      # a record's name: JMESPath, or a template of its fields (omitted: the
                                    # member names of an object of records)
    joins = "path"                  # folder (the run folder's name, default), path (under the scored folder),
                                    # run_id, task_id or goal

Without ``file``, ``success`` and ``score`` are read from the log itself. The agent's own words (a DONE, "task
completed") are never an outcome: only what the harness or benchmark checked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ...base.errors import UsageError
from ...base.runfiles import current_root
from ..kit.reading import num
from .fields import Field, compile_fields, fill

_TRUE = {"true", "yes", "success", "succeeded", "successful", "pass", "passed", "ok", "1", "completed", "done"}
_FALSE = {"false", "no", "fail", "failed", "failure", "0", "error", "incomplete", "timeout"}
JOINS = ("folder", "path", "run_id", "task_id", "goal")
MAX_RESULTS_BYTES = 256 * 1024 * 1024
_CACHE: dict[tuple[str, float, int], Any] = {}


class Outcome:
    """The ``[outcome]`` table of a mapping, compiled."""

    def __init__(self, table: dict[str, Any], where: str):
        self.fields: dict[str, Field] = compile_fields(table, ("success", "score", "records"), "", where + " [outcome]")
        self.file = str(table["file"]) if isinstance(table.get("file"), str) else None
        if self.file is not None and (not self.file.strip() or any(c in self.file for c in "/\\:") or
                                      self.file in (".", "..")):
            raise UsageError(f"{where} [outcome] file = {self.file!r} must be a file name (it is looked for in the "
                             "run's folder and the folders above it), not a path")
        key = table.get("key")
        self.key_template = str(key) if isinstance(key, str) and "{" in key else None
        self.key = Field("key", key, where + " [outcome] key") if isinstance(key, str) and "{" not in key else None
        self.joins = str(table.get("joins", "folder"))
        if self.joins not in JOINS:
            raise UsageError(f"{where} [outcome] joins = {self.joins!r}: one of {', '.join(JOINS)}")

    @property
    def empty(self) -> bool:
        return not self.fields.get("success") and not self.fields.get("score")

    def score(self, log: Any, run_dir: Path, names: dict[str, str | None]) -> tuple[float | None, str | None]:
        """The run's recorded score (1/0 for a success flag) and where it came from (``log`` or the results
        file's path); None, None when nothing is recorded for it. ``names``: the run's folder, path, run_id,
        task_id and goal, one of which a results record joins on."""
        if self.empty:
            return None, None
        source: Any = log
        where = "log"
        if self.file is not None:
            found = self._record(run_dir, names.get(self.joins))
            if found is None:
                return None, None
            source, where = found
        return _score_of(self.fields["success"].value(source) if "success" in self.fields else None,
                         self.fields["score"].value(source) if "score" in self.fields else None), where

    def _record(self, run_dir: Path, name: str | None) -> tuple[Any, str] | None:
        if name is None or self.file is None:
            return None
        for path in _above(run_dir, self.file):
            records = _load(path)
            if records is None:
                continue
            if "records" in self.fields:
                records = self.fields["records"].value(records)
            if isinstance(records, dict):
                rows = [({**v, "__key__": k} if isinstance(v, dict) else {"value": v, "__key__": k})
                        for k, v in records.items()]
            else:
                rows = [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []
            for r in rows:
                k = fill(self.key_template, r) if self.key_template else \
                    (self.key.value(r) if self.key is not None else None)
                if k is None and "__key__" in r:
                    k = r["__key__"]
                if k is not None and str(k).strip("/") == name.strip("/"):
                    return r, path.name
        return None


def _above(run_dir: Path, name: str) -> list[Path]:
    """``name`` in the run's folder and each folder above it, nearest first, up to the folder being scored."""
    root = current_root()
    out = []
    here = run_dir.resolve()
    for _ in range(32):
        p = here / name
        if p.is_file():
            out.append(p)
        if root is None or os.path.realpath(here) == root or here.parent == here:
            break
        here = here.parent
    return out


def _load(path: Path) -> Any:
    try:
        st = path.stat()
        if st.st_size > MAX_RESULTS_BYTES:
            return None
        key = (str(path), st.st_mtime, st.st_size)
        if key not in _CACHE:
            if len(_CACHE) > 16:
                _CACHE.clear()
            text = path.read_text("utf-8", errors="replace")
            try:
                _CACHE[key] = json.loads(text)
            except ValueError:  # JSON lines
                _CACHE[key] = [json.loads(ln) for ln in text.splitlines() if ln.strip().startswith("{")]
        return _CACHE[key]
    except (OSError, ValueError, RecursionError):
        return None


def _score_of(success: Any, score: Any) -> float | None:
    """A success flag as 1 or 0, else a score as a number (a numeric string too)."""
    if isinstance(success, bool):
        return 1.0 if success else 0.0
    if isinstance(success, (int, float)):
        return 1.0 if success > 0 else 0.0
    if isinstance(success, str) and success.strip().lower() in _TRUE | _FALSE:
        return 1.0 if success.strip().lower() in _TRUE else 0.0
    got = num(score)
    if got is None and isinstance(score, str):
        try:
            got = float(score.strip())
        except ValueError:
            return None
    return got
