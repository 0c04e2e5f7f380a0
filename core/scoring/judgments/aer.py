"""Agent-Eval-Refine's evaluator log (Berkeley-NLP/Agent-Eval-Refine, ``agent_eval/agent_eval/eval/evaluator.py``,
commit 0eef6eba).

``Evaluator.__call__`` appends one JSON object a line to ``<log_save_path>/outputs.jsons``: ``{"id": traj_name,
"eval_info": {"thoughts", "status"}}``, ``status`` the word after ``Status:`` in the reply (``success`` or
``failure``, quotes removed). The file is appended to, so a trajectory judged again is a second line: each line
of one id is a sample (1, 2, ...). The judge is named by the log folder. A line whose ``eval_info`` has no
status (the ``naive-last-frame-4v`` version keeps the reply's own JSON) is a note.
"""

from __future__ import annotations

from pathlib import Path

from .files import dig, first_object, json_lines, read_text
from .model import FileJudgments, Judgment, JudgmentFormat, optional_text, text, verdict_of


def read(path: Path) -> FileJudgments:
    out = FileJudgments()
    judge = f"agent-eval-refine:{text(path.parent.name) or 'outputs'}"
    seen: dict[str, int] = {}
    for d, where in json_lines(path, read_text(path)):
        rid = d.get("id")
        if rid is None or not str(rid).strip():
            raise ValueError(f"{where}: id is empty")
        status = dig(d, "eval_info", "status")
        said = verdict_of(status) if isinstance(status, str) else None
        if said is None:
            out.notes.append(f"{where}: no success or failure status for {text(rid)!r} (got {status!r})")
            continue
        n = seen[text(rid)] = seen.get(text(rid), 0) + 1
        out.judgments.append(Judgment(text(rid), judge, said, None, optional_text(dig(d, "eval_info", "thoughts")),
                                      where, sample=str(n), format="agent-eval-refine"))
    return out


def claims(name: str, head: str) -> bool:
    obj = first_object(head)
    return obj is not None and "id" in obj and isinstance(obj.get("eval_info"), dict)


FORMAT = JudgmentFormat(
    "agent-eval-refine", "Agent-Eval-Refine's outputs.jsons ({id, eval_info: {thoughts, status}} a line)",
    "Berkeley-NLP/Agent-Eval-Refine agent_eval/agent_eval/eval/evaluator.py "
    "(commit 0eef6eba80d91d99d99133c319f464d7adf47abe)", claims, read)
