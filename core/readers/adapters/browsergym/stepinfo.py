"""What a BrowserGym StepInfo says beside its action: the page its observation shows, the seconds of its
``profiling`` (or its ``stats``), and the tokens and cost AgentLab's LLM tracker adds to its ``stats``
(agentlab ``llm/tracking.py``, ``cost_tracker_decorator``).

BrowserGym's loop (browsergym/experiments ``loop.py``, ``StepInfo.make_stats``) times each StepInfo: the
environment producing its observation (``env_start`` to ``env_stop``: the reset, or the previous action run)
and the agent choosing its action (``agent_start`` to ``agent_stop``). Its ``stats`` hold the same spans as
``step_elapsed`` and ``agent_elapsed``, beside ``n_token_*``, the token counts of the observation's texts
(not the model's usage, and not read as such).
"""

from __future__ import annotations

from typing import Any

from ....schemas.records import Usage

from ...kit.reading import num
from ...kit.usage import amount, count, elapsed

__all__ = ["obs_page", "step_seconds", "step_usage"]


def obs_page(obs: Any) -> tuple[str | None, str | None]:
    """(url, title) of the active page of an observation."""
    if not isinstance(obs, dict):
        return None, None
    urls, titles = obs.get("open_pages_urls"), obs.get("open_pages_titles")
    idx = obs.get("active_page_index")
    if isinstance(idx, list) and len(idx) == 1:
        idx = idx[0]
    if not isinstance(idx, int) or isinstance(idx, bool):
        idx = 0 if isinstance(urls, list) and len(urls) == 1 else None
    url = urls[idx] if isinstance(urls, list) and idx is not None and 0 <= idx < len(urls) else None
    title = titles[idx] if isinstance(titles, list) and idx is not None and 0 <= idx < len(titles) else None
    if url is None and isinstance(obs.get("url"), str):
        url = obs["url"]
    return (url if isinstance(url, str) else None), (title if isinstance(title, str) else None)


def _span(rec: dict[str, Any] | None, start: str, stop: str, stat: str) -> float | None:
    """Seconds between two of a StepInfo's ``profiling`` times, else its ``stats`` figure of the same span."""
    if rec is None:
        return None
    prof = given if isinstance(given := rec.get("profiling"), dict) else {}
    a, b = num(prof.get(start)), num(prof.get(stop))
    if a and b:  # 0 is BrowserGym's "never set" (the final StepInfo's agent times)
        return elapsed(a, b)
    stats = given if isinstance(given := rec.get("stats"), dict) else {}
    return amount(stats.get(stat))


def step_seconds(rec: dict[str, Any], nxt: dict[str, Any] | None) -> float | None:
    """Step N's elapsed seconds: the agent choosing action N (``step_N``'s agent_start to agent_stop, its
    ``stats.agent_elapsed``) and the environment running it up to observation N+1 (``step_{N+1}``'s
    env_start to env_stop, its ``stats.step_elapsed``); None without both."""
    agent = _span(rec, "agent_start", "agent_stop", "agent_elapsed")
    env = _span(nxt, "env_start", "env_stop", "step_elapsed")
    return None if agent is None or env is None else round(agent + env, 6)


def step_usage(rec: dict[str, Any], model: str | None) -> Usage | None:
    """What AgentLab's LLM tracker recorded of step N's calls (``stats`` ``input_tokens``, ``output_tokens``,
    ``cost``). A cost of 0 beside tokens is AgentLab's "no price for this model", not a free call: null."""
    stats = given if isinstance(given := rec.get("stats"), dict) else {}
    inp, out, cost = count(stats.get("input_tokens")), count(stats.get("output_tokens")), amount(stats.get("cost"))
    if cost == 0 and (inp or out):
        cost = None
    u = Usage(tokens_input=inp, tokens_output=out, cost_usd=cost, model=model)
    return None if u.empty else u
