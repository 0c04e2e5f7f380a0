"""AgentRewardBench's judgment files (McGill-NLP/agent-reward-bench, ``scripts/run_judge.py``, commit ea58fb5b).

``run_judge.py`` writes one file a trajectory, ``judgments/<benchmark>/<agent>/<judge>/<trajectory>.json``: an
object with ``benchmark``, ``agent``, ``judge``, ``judge_model_name``, ``cost`` (``{input_price, output_price,
cached_price, total_price}``, or 0), ``response`` (the OpenAI chat completion's ``model_dump()``: the reply in
``choices[0].message.content``, tokens in ``usage``) and ``trajectory_info`` (``trajectory_dir``, ``seed``,
``summary_info.cum_reward``...). A call that failed writes ``<trajectory>_error.json`` (``error``, no response).

The reply is parsed as ``agent_reward_bench/judge/__init__.py`` parses it: ``<success>`` (Successful or
Unsuccessful) and ``<reasoning>`` tags (``parse_judgment``); for the AER judges (``judge`` ``aer`` or ``aerv``) the
``Status:`` and ``Thoughts:`` lines (``parse_aer_judgment``). The ``functional`` judge (no reply) is the
benchmark's reward: ``cum_reward`` above 0.5 a success, as ``scripts/score_judgments.py`` counts it. A reply
with no verdict in it (ARB's "n/a") is a note, not a judgment.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .files import dig, json_value, read_text
from .model import FileJudgments, Judgment, JudgmentFormat, count, number, optional_text, text, verdict_of

_TAG = {name: re.compile(f"<{name}>(.*?)</{name}>", re.S) for name in ("success", "reasoning")}


def _tag(name: str, reply: str) -> str | None:
    m = _TAG[name].search(reply)
    return m.group(1) if m else None


def _line(prefix: str, reply: str) -> str | None:
    """The rest of the first line that starts with ``prefix`` (``Status:``), as ARB's AER parser reads it."""
    for line in reply.split("\n"):
        if line.startswith(prefix):
            return line.split(":", 1)[1].strip()
    return None


def _cost(value: Any, where: str) -> float | None:
    if isinstance(value, dict):
        value = value.get("total_price")
    return number(value, where, "cost", 0.0)


def read(path: Path) -> FileJudgments:
    """One judgment file of AgentRewardBench (module docstring)."""
    where = f"{path.parent.name}/{path.name}"
    d = json_value(path, read_text(path))
    out = FileJudgments()
    if not isinstance(d, dict):
        raise ValueError(f"{where}: expected a JSON object (an AgentRewardBench judgment)")
    run = path.stem.removesuffix("_error")
    trajectory = dig(d, "trajectory_info", "trajectory_dir")
    keys = (text(Path(str(trajectory)).name),) if isinstance(trajectory, str) and trajectory.strip() else ()
    judge = optional_text(d.get("judge"), 200) or text(path.parent.name)
    model = optional_text(d.get("judge_model_name"), 200)
    if "error" in d and d.get("response") is None:
        out.notes.append(f"{where}: judge {judge!r} failed on {run!r} ({optional_text(d.get('error'), 200)})")
        return out
    reward = number(dig(d, "trajectory_info", "summary_info", "cum_reward"), where, "cum_reward")
    said: str | None
    reason: str | None
    if judge == "functional":
        if reward is None:
            out.notes.append(f"{where}: the functional judge's cum_reward is missing")
            return out
        said, reason = ("pass" if reward > 0.5 else "fail"), None
    else:
        reply = dig(d, "response", "choices", 0, "message", "content")
        if not isinstance(reply, str):
            out.notes.append(f"{where}: judge {judge!r} gave no reply on {run!r}")
            return out
        if judge in ("aer", "aerv"):
            said, reason = verdict_of(_line("Status:", reply) or ""), _line("Thoughts:", reply)
        else:
            said, reason = verdict_of(_tag("success", reply) or ""), _tag("reasoning", reply)
        if said is None:
            out.notes.append(f"{where}: judge {judge!r} gave no verdict on {run!r} (no <success> or Status:)")
            return out
    usage = dig(d, "response", "usage")
    tokens = None
    if isinstance(usage, dict):
        parts = [count(usage.get(k), where, k) for k in ("prompt_tokens", "completion_tokens")]
        tokens = sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None
    name = f"{judge} ({model})" if model and model != "judge" and model != judge else judge
    out.judgments.append(Judgment(text(run), name, said, None, optional_text(reason), where, score=reward
                                  if judge == "functional" else None, cost_usd=_cost(d.get("cost"), where),
                                  tokens=tokens, keys=keys, format="agentrewardbench"))
    return out


def claims(name: str, head: str) -> bool:
    """A ``.json`` file whose object has ARB's keys (``orjson`` writes them in order: ``judge_model_name`` near the
    top; an error file starts with ``error`` and ends with ``trajectory_info``)."""
    if not name.endswith(".json") or not head.lstrip().startswith("{"):
        return False
    if name.endswith("_error.json"):
        return head.lstrip()[:20].replace(" ", "").startswith('{"error"')
    return '"judge_model_name"' in head and '"judge"' in head


FORMAT = JudgmentFormat(
    "agentrewardbench", "AgentRewardBench's judgments/<benchmark>/<agent>/<judge>/<trajectory>.json",
    "McGill-NLP/agent-reward-bench scripts/run_judge.py, agent_reward_bench/judge/__init__.py "
    "(commit ea58fb5b17cd0d8b28b89918a9a02953b51ae59c)", claims, read)
