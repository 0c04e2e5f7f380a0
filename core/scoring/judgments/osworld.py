"""OSWorld's results: the per-task ``result.txt`` and the summary ``summary/results.json``.

- ``lib_run_single.py`` (xlang-ai/OSWorld) writes the evaluator's score, one number, to
  ``results/<action_space>/<observation_type>/<model>/<domain>/<example_id>/result.txt``. The id is the example's
  folder (its parent's name, the domain, is a second key, ``<domain>/<example_id>``).
- ``lib_results_logger.py`` (OSWorld-style harnesses, e.g. Untergang1/OSWorld at commit 38b54f13) appends each
  finished task to ``<result_dir>/summary/results.json``, a JSON array of ``{application, task_id, status,
  score, timestamp, err_message}``; ``status`` ``error`` is a task that raised (score 0.0, not a judgment: a
  note). The array is appended to, so a task run again is a second entry: each entry of one task is a sample.

The score is OSWorld's evaluator's, which gives partial credit: a score of 1.0 is a pass, anything below a
fail (as ``score --evaluator-pass`` defaults), and the score itself is kept.
"""

from __future__ import annotations

from pathlib import Path

from .files import json_value, read_text
from .model import FileJudgments, Judgment, JudgmentFormat, number, optional_text, text

JUDGE = "osworld"
#: A score at or above this is a pass.
PASS = 1.0


def read_result(path: Path) -> FileJudgments:
    where = f"{path.parent.name}/{path.name}"
    score = number(read_text(path, 1024).strip(), where, "the score")
    if score is None:
        raise ValueError(f"{where}: empty; OSWorld's result.txt holds the evaluator's score")
    example, domain = text(path.parent.name), text(path.parent.parent.name)
    return FileJudgments([Judgment(example, JUDGE, "pass" if score >= PASS else "fail", None, None, where,
                                   score=score, keys=(f"{domain}/{example}",), format="osworld")])


def claims_result(name: str, head: str) -> bool:
    if name != "result.txt":
        return False
    try:
        float(head.strip())
    except ValueError:
        return False
    return True


def read_summary(path: Path) -> FileJudgments:
    data = json_value(path, read_text(path))
    if not isinstance(data, list):
        raise ValueError(f"{path.name}: expected a JSON array of task results")
    out = FileJudgments()
    seen: dict[str, int] = {}
    for i, d in enumerate(data):
        where = f"{path.name}[{i}]"
        if not isinstance(d, dict) or d.get("task_id") in (None, ""):
            raise ValueError(f"{where}: expected an object with task_id, status and score")
        rid = text(d["task_id"])
        if d.get("status") == "error":
            out.notes.append(f"{where}: task {rid!r} raised ({optional_text(d.get('err_message'), 200)}): not "
                             "judged")
            continue
        score = number(d.get("score"), where, "score")
        if score is None:
            raise ValueError(f"{where}: score is missing")
        n = seen[rid] = seen.get(rid, 0) + 1
        app = optional_text(d.get("application"), 200)
        out.judgments.append(Judgment(rid, JUDGE, "pass" if score >= PASS else "fail", None, None, where,
                                      score=score, sample=str(n), keys=(f"{app}/{rid}",) if app else (),
                                      format="osworld-summary"))
    return out


def claims_summary(name: str, head: str) -> bool:
    h = head.lstrip()
    return name.endswith(".json") and h.startswith("[") and '"task_id"' in h and '"score"' in h \
        and '"application"' in h


RESULT = JudgmentFormat(
    "osworld", "OSWorld's per-task result.txt (the evaluator's score)",
    "xlang-ai/OSWorld lib_run_single.py (result.txt in each example's folder)", claims_result, read_result)
SUMMARY = JudgmentFormat(
    "osworld-summary", "an OSWorld-style summary/results.json ([{application, task_id, status, score}])",
    "Untergang1/OSWorld lib_results_logger.py (commit 38b54f13c8d2f645da55c6d1dc39c581a2b411de)",
    claims_summary, read_summary)
