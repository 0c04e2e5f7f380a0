"""cube-harness / AgentLab-style judge records (The-AI-Alliance/cube-harness, ``src/cube_harness/eval_log.py`` and
``src/cube_harness/analyze/judge/core.py``, commit 02af9efb).

The judge writes its output into the episode's ``episodes/<trajectory_id>/episode_record.json``
(``EpisodeRecord``: ``trajectory_id``, ``sample_id`` (the task), ``score``, ``judge_output``, ``judge_metadata``),
or, for an episode without a record, a sidecar ``judge_output.json`` (``{judge_output, judge_metadata}``).
``judge_output`` (``BaseJudgeOutput``): ``analysis``, ``outcome`` (success, success_lucky, almost, failure,
should_have_been_rewarded), ``summary``, ``primary_blame``, ``primary_blame_confidence`` (0-5), ``other_blames``,
``evidence`` ([{step, quote}]), ``hypothesis``; ``judge_metadata``: ``model``, ``prompt_tokens``,
``completion_tokens``, ``cost_usd``, ``duration_s``.

An outcome of success, success_lucky or should_have_been_rewarded (the agent did the task; the reward missed it)
is a pass; almost and failure a fail. The summary is the reason, with the primary blame; the evidence is the
cited steps. An episode record with no ``judge_output`` is not judged (a note).
"""

from __future__ import annotations

from pathlib import Path

from .files import dig, json_value, read_text
from .model import FileJudgments, Judgment, JudgmentFormat, cited, count, number, optional_text, text, verdict


def read(path: Path) -> FileJudgments:
    where = f"{path.parent.name}/{path.name}"
    d = json_value(path, read_text(path))
    if not isinstance(d, dict):
        raise ValueError(f"{where}: expected a JSON object")
    out = FileJudgments()
    jo, meta = d.get("judge_output"), d.get("judge_metadata")
    if not isinstance(jo, dict):
        out.notes.append(f"{where}: no judge_output (the episode was not judged)")
        return out
    ids = [d.get("trajectory_id"), path.parent.name, d.get("sample_id")]
    keys = tuple(dict.fromkeys(text(k) for k in ids if isinstance(k, str) and k.strip()))
    outcome = jo.get("outcome")
    reason = optional_text(jo.get("summary"))
    blame = optional_text(jo.get("primary_blame"), 100)
    if blame and blame != "none":
        reason = f"{reason or ''} (primary blame: {blame})".strip()
    tokens = None
    if isinstance(meta, dict):
        parts = [count(meta.get(k), where, k) for k in ("prompt_tokens", "completion_tokens")]
        tokens = sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None
    model = optional_text(dig(meta, "model"), 200)
    out.judgments.append(Judgment(
        keys[0], f"cube-harness judge ({model})" if model else "cube-harness judge",
        verdict(outcome, f"{where}: judge_output.outcome"), None, reason, where,
        cited=cited(jo.get("evidence"), where),
        cost_usd=number(dig(meta, "cost_usd"), where, "cost_usd", 0.0), tokens=tokens, keys=keys[1:],
        format="cube-harness"))
    return out


def claims(name: str, head: str) -> bool:
    return name in ("episode_record.json", "judge_output.json") and '"judge_output"' in head


FORMAT = JudgmentFormat(
    "cube-harness", "cube-harness / AgentLab-style judge records (episode_record.json or judge_output.json: "
    "outcome, primary_blame, evidence[{step, quote}])",
    "The-AI-Alliance/cube-harness src/cube_harness/eval_log.py, src/cube_harness/analyze/judge/core.py "
    "(commit 02af9efbb533df9f70857ba2051caaf92402a94a)", claims, read)
