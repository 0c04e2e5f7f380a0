"""BrowserGym / AgentLab experiment directories.

One directory per episode: ``summary_info.json``, ``exp_args.pkl``, ``goal_object.pkl.gz``, ``step_N.pkl.gz``
(a pickled ``StepInfo``) and ``screenshot_step_N.png``. The pickles are untrusted and are read only with
:mod:`trajcheck.readers.kit.safe_pickle` (nothing they name is imported or run).

BrowserGym's loop saves ``StepInfo`` N holding observation N and the action the agent chose on it; the
environment's answer to that action (next observation, ``last_action_error``, reward, terminated, truncated)
is in ``StepInfo`` N+1. The last ``StepInfo`` holds the final observation and no action. So trajcheck step N
is: action of ``step_N``, pre frame ``screenshot_step_N.png``, post frame ``screenshot_step_{N+1}.png``, URL
before from ``step_N``'s observation and URL after, error, reward from ``step_{N+1}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...kit.claiming import by_names
from ...kit.reader import FolderClaim, FormatDoc, Reader, Table
from ....base.errors import Problem
from ....base.problems import Slug
from ....schemas.records import Page, Run, Step

from ...kit import safe_pickle
from .actions import (ACTION_ROWS, DONE_CALLS, PARAMS, ActionParseError, class_of, map_call, parse_calls, read_action,
                      split_action)
from .stepinfo import obs_page, step_seconds, step_usage
from ...kit.reading import Problems, first_file, png_size, read_json_file, run_id_of

__all__ = ["DOC", "DONE_CALLS", "NAME", "PARAMS", "READER", "ActionParseError", "map_call", "parse_calls",
           "read_browsergym", "split_action"]

NAME = "browsergym"
SUMMARY = "summary_info.json"
EXP_ARGS = "exp_args.pkl"
GOAL = "goal_object.pkl.gz"
_STEP_RE = re.compile(r"step_(\d+)\.pkl\.gz")
_FRAME_EXTS = (".png", ".jpg", ".jpeg", ".webp")
_DIR_RE = re.compile(r"^\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_(?P<agent>.+?)_on_(?P<task>.+)_(?P<seed>\d+)$")


def _frame_name(run_dir: Path, n: int) -> str | None:
    return first_file(run_dir, (f"screenshot_step_{n}{ext}" for ext in _FRAME_EXTS))


def _load(run_dir: Path, rel: str, run: str, problems: list[Problem], *, required: bool) -> Any:
    path = run_dir / rel
    if not path.is_file():
        if required:
            problems.append(Problem(Slug.FILE_MISSING, "file not found", run=run, file=rel,
                                    hint="copy the whole experiment directory"))
        return None
    try:
        return safe_pickle.load_plain(path, source=rel)
    except safe_pickle.UnsafePickleError as exc:
        problems.append(Problem(Slug.PICKLE_UNREADABLE, str(exc), run=run, file=rel,
                                hint="pickles are read as plain data only; re-export the run, or remove a "
                                     "file that is not BrowserGym's"))
        return None


def _goal_text(goal: Any) -> str | None:
    if isinstance(goal, str):
        return goal
    if isinstance(goal, list):
        texts = [g.get("text") for g in goal if isinstance(g, dict) and g.get("type") == "text"]
        parts = [p for p in texts if isinstance(p, str)]
        return "\n".join(parts) if parts else None
    return None


# --- parse ------------------------------------------------------------------------------------------------

@dataclass
class _Episode:
    """What an experiment directory holds, read as plain data."""

    summary: dict[str, Any] | None
    exp: dict[str, Any] | None
    goal_obj: Any
    step_files: dict[int, str] = field(default_factory=dict)  # step number -> file name
    records: dict[int, dict[str, Any]] = field(default_factory=dict)  # step number -> StepInfo
    unfinished: bool = False


def _parse(run_dir: Path, problems: Problems) -> _Episode:
    """summary_info.json, exp_args.pkl, goal_object.pkl.gz and every step_N.pkl.gz; raises when one of them
    cannot be read or is not what BrowserGym writes."""
    summary = None
    if (run_dir / SUMMARY).is_file():
        summary = read_json_file(run_dir / SUMMARY, run=problems.run, rel=SUMMARY, problems=problems)
        if summary is not None and not isinstance(summary, dict):
            problems.error(Slug.SCHEMA, f"expected a JSON object, got {type(summary).__name__}", file=SUMMARY, line=1,
                           field="(record)", hint="summary_info.json is BrowserGym's episode summary")
            summary = None
    exp = _load(run_dir, EXP_ARGS, problems.run, problems, required=False)
    if exp is not None and not (isinstance(exp, dict) and isinstance(exp.get("env_args"), dict)):
        problems.error(Slug.PICKLE_UNEXPECTED, f"expected an ExpArgs object with env_args, found {class_of(exp)}",
                       file=EXP_ARGS, field="env_args", hint="this does not look like BrowserGym's exp_args.pkl")
        exp = None
    ep = _Episode(summary, exp, _load(run_dir, GOAL, problems.run, problems, required=False))
    for p in run_dir.iterdir():
        m = _STEP_RE.fullmatch(p.name)
        if m and p.is_file():
            ep.step_files[int(m.group(1))] = p.name
    if not ep.step_files:
        problems.error(Slug.STEPS_MISSING, "no step_N.pkl.gz files", file="step_0.pkl.gz",
                       hint="the episode saved no steps (did it fail at reset?)")
    for n in sorted(ep.step_files):
        rel = ep.step_files[n]
        v = _load(run_dir, rel, problems.run, problems, required=True)
        if v is None:
            continue
        if not isinstance(v, dict) or "action" not in v or "obs" not in v:
            problems.error(Slug.PICKLE_UNEXPECTED, f"expected a StepInfo with obs and action, found {class_of(v)}",
                           file=rel, field="(record)", hint="this does not look like a BrowserGym step file")
            continue
        if isinstance(v.get("step"), int) and v["step"] != n:
            problems.warn(Slug.STEP_NUMBER_MISMATCH, f"the file says step {v['step']}; its name says {n}", file=rel,
                          field="step", hint="the file name is used")
        ep.records[n] = v
    problems.raise_errors()
    _check_complete(ep, problems)
    return ep


def _check_complete(ep: _Episode, problems: Problems) -> None:
    """Warn about missing step files and an episode that did not finish (``ep.unfinished``)."""
    last_n = max(ep.records)
    missing = [n for n in range(last_n + 1) if n not in ep.records]
    if missing:
        problems.warn(Slug.STEPS_GAP, f"step files missing for step(s) {missing}", file=f"step_{missing[0]}.pkl.gz",
                      hint="the steps around the gap have no before/after state")
    final_has_action = ep.records[last_n].get("action") is not None
    ep.unfinished = ep.summary is None or final_has_action
    if ep.unfinished:
        why = []
        if ep.summary is None:
            why.append(f"{SUMMARY} is missing")
        if final_has_action:
            why.append(f"the last step file (step_{last_n}.pkl.gz) still has an action, so step_{last_n + 1}.pkl.gz "
                       "(the episode's final observation) is missing")
        problems.warn(Slug.RUN_UNFINISHED, "the episode did not finish: " + "; ".join(why),
                      file=SUMMARY if ep.summary is None else f"step_{last_n + 1}.pkl.gz",
                      hint="scored as far as it goes; outcome.status is null")


# --- align ------------------------------------------------------------------------------------------------

def _executor(n: int, raw: Any, nobs: Any, problems: Problems) -> tuple[bool | None, str | None]:
    """Whether step N's action ran, from step N+1's ``last_action_error`` (which must be about that action)."""
    if not (isinstance(nobs, dict) and "last_action_error" in nobs):
        return None, None
    err = nobs.get("last_action_error")
    message = err.strip() if isinstance(err, str) else ""  # a blank error means the action ran
    ok = not message
    last = nobs.get("last_action")
    if isinstance(last, str) and isinstance(raw, str) and last.strip() != raw.strip():
        problems.warn(Slug.STEP_ALIGNMENT, f"step_{n + 1}.pkl.gz obs.last_action is not the action of step {n}; its "
                      "last_action_error may belong to another action", file=f"step_{n + 1}.pkl.gz",
                      field="obs.last_action", hint="check that the step files belong to one episode")
    return ok, (message if not ok else None)


def _frames(run_dir: Path, n: int, has_next: bool) -> tuple[str, str | None]:
    """Step N's frames: the screenshot saved with observation N, and with observation N+1."""
    pre = _frame_name(run_dir, n) or f"screenshot_step_{n}.png"
    post = _frame_name(run_dir, n + 1)
    if post is None and has_next:
        post = f"screenshot_step_{n + 1}.png"
    return pre, post  # a file that is not there is reported where the step uses it (frames_missing)


def _step(run_dir: Path, ep: _Episode, n: int, problems: Problems) -> Step | None:
    """Trajcheck step N: the action of step_N, the environment's answer to it in step_{N+1}."""
    rec, rel = ep.records[n], ep.step_files[n]
    raw = rec.get("action")
    if raw is None:
        if n != max(ep.records):
            problems.warn(Slug.STEP_WITHOUT_ACTION, "a step in the middle of the run has no action", file=rel,
                          field="action", hint="the step is skipped")
        return None
    nxt = ep.records.get(n + 1)
    obs, nobs = rec.get("obs"), (nxt or {}).get("obs")
    extra: dict[str, Any] = {}
    action, reasoning = read_action(raw, rel, extra, problems)
    agent_info = rec.get("agent_info")
    think = agent_info.get("think") if isinstance(agent_info, dict) else None
    if isinstance(think, str) and think.strip():
        reasoning = think.strip() + ("\n\n" + reasoning if reasoning else "")
    url_b, title_b = obs_page(obs)
    url_a, title_a = obs_page(nobs)
    ok, error = _executor(n, raw, nobs, problems)
    pre, post = _frames(run_dir, n, nxt is not None)
    if nxt is not None:
        for k in ("reward", "raw_reward", "terminated", "truncated", "task_info"):
            if nxt.get(k) not in (None, {}, ""):
                extra[k] = nxt[k]
    stats = rec.get("stats")
    if isinstance(stats, dict):
        extra["agent_stats"] = stats
    if isinstance(nobs, dict) and isinstance(nobs.get("open_pages_urls"), list):
        extra["open_pages_after"] = len(nobs["open_pages_urls"])
    model = ((ep.exp or {}).get("agent_args") or {}).get("model_name")
    return Step(index=n, action=action, reasoning=reasoning, frame_pre=pre, frame_post=post, executor_ok=ok,
                executor_error=error, page=Page(url_before=url_b, url_after=url_a, title_before=title_b,
                                                title_after=title_a),
                usage=step_usage(rec, model if isinstance(model, str) else None), wall_seconds=step_seconds(rec, nxt),
                extra=extra, source=rel, line=None)


def _align(run_dir: Path, ep: _Episode, problems: Problems) -> list[Step]:
    steps = [s for n in sorted(ep.records) if (s := _step(run_dir, ep, n, problems)) is not None]
    if not steps:
        problems.error(Slug.STEPS_EMPTY, "no step holds an action", file=ep.step_files[max(ep.records)],
                       hint="the agent never acted (see err_msg in summary_info.json)")
    problems.raise_errors()
    return steps


# --- outcome ----------------------------------------------------------------------------------------------

def _status(ep: _Episode, steps: list[Step], env: dict[str, Any]) -> str | None:
    """How the episode ended: the agent's answer, the environment's error, truncation (the step limit),
    termination without an answer; null for an unfinished episode."""
    s = ep.summary or {}
    final = ep.records[max(ep.records)]
    if ep.unfinished:
        return None
    if steps[-1].action.extra.get("function") in DONE_CALLS:
        return "done"
    if s.get("err_msg"):
        return "error"
    if s.get("truncated") or final.get("truncated"):
        return "max_steps"
    if s.get("terminated") or final.get("terminated"):
        return "failed"  # the environment ended the episode without the agent answering
    max_steps = env.get("max_steps")
    return "max_steps" if isinstance(max_steps, int) and len(steps) >= max_steps else None


def _score(ep: _Episode) -> float | None:
    """The task validator's reward (summary_info.json cum_reward)."""
    score = (ep.summary or {}).get("cum_reward")
    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None


def _run_extra(run_dir: Path, ep: _Episode) -> dict[str, Any]:
    """What the summary and the experiment say beyond trajcheck's run fields, and the frames' sizes (the
    device scale is recorded nowhere)."""
    s, exp = ep.summary or {}, ep.exp or {}
    extra_run: dict[str, Any] = {}
    if ep.unfinished:
        extra_run["unfinished"] = True
    for k in ("err_msg", "n_steps", "cum_raw_reward", "terminated", "truncated"):
        if s.get(k) is not None:
            extra_run[k] = s[k]
    if isinstance(s.get("stack_trace"), str):
        extra_run["stack_trace"] = s["stack_trace"][-4000:]
    stats = {k: v for k, v in s.items() if k.startswith("stats.")}
    if stats:
        extra_run["stats"] = stats
    for k in ("exp_id", "exp_name"):
        if isinstance(exp.get(k), str):
            extra_run[k] = exp[k]
    last_n = max(ep.records)
    sizes = sorted({sz for n in range(last_n + 2) if (f := _frame_name(run_dir, n)) and (sz := png_size(run_dir / f))})
    if sizes:
        extra_run["frame_sizes"] = [list(sz) for sz in sizes]
    return extra_run


def read_browsergym(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one BrowserGym / AgentLab experiment directory (see the module's docstring and :data:`DOC`)."""
    run_id = run_id_of(run_dir, display)
    problems = Problems(run_id)
    ep = _parse(run_dir, problems)
    steps = _align(run_dir, ep, problems)
    env = (ep.exp or {}).get("env_args") or {}
    agent = (ep.exp or {}).get("agent_args") or {}
    dm = _DIR_RE.match(run_id)  # without exp_args.pkl, the directory name says the task and the seed
    task_id = env.get("task_name") if isinstance(env.get("task_name"), str) else (dm.group("task") if dm else None)
    seed = env.get("task_seed")
    trial = seed if isinstance(seed, int) and not isinstance(seed, bool) else (int(dm.group("seed")) if dm else None)
    goal = _goal_text(ep.goal_obj)
    if goal is None:
        first_obs = ep.records[min(ep.records)].get("obs") or {}
        goal = _goal_text(first_obs.get("goal_object")) or (first_obs.get("goal") if isinstance(
            first_obs.get("goal"), str) else None)
    config = {k: agent[k] for k in ("use_html", "use_axtree", "use_screenshot", "chat_mode", "demo_mode")
              if k in agent}
    if isinstance(env.get("max_steps"), int):
        config["max_steps"] = env["max_steps"]
    vp = env.get("viewport")
    width, height = (vp["width"], vp["height"]) if isinstance(vp, dict) and isinstance(vp.get("width"), int) \
        and isinstance(vp.get("height"), int) else (None, None)
    started = (ep.exp or {}).get("exp_date")
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps), task_id=task_id, trial=trial,
              goal=goal, agent_name=agent.get("agent_name") if isinstance(agent.get("agent_name"), str) else None,
              agent_model=agent.get("model_name") if isinstance(agent.get("model_name"), str) else None,
              config=config, screen_width=width, screen_height=height,
              started_at=started if isinstance(started, str) else None, outcome_status=_status(ep, steps, env),
              outcome_score=_score(ep), extra=_run_extra(run_dir, ep))
    return run, problems.warnings()


def _claim(p: Path) -> FolderClaim:
    if (p / EXP_ARGS).is_file() or not (p / SUMMARY).is_file() or not (p / "step_0.pkl.gz").is_file():
        return by_names(EXP_ARGS)(p)
    return by_names(SUMMARY)(p) if not (p / "run.json").exists() else by_names()(p)


DOC = FormatDoc(
    ends=("BrowserGym's `env.step` ends an episode when the task's own `validate()` says done (`terminated = "
          "done`): WorkArena's tasks say so as soon as their state check passes, so a solved episode may end "
          "without the agent's `send_msg_to_user` or report."),
    title="BrowserGym / AgentLab",
    claims=("Claims a directory holding `exp_args.pkl`, or `summary_info.json` and `step_0.pkl.gz` (one "
            "experiment = one episode)."),
    example="trajcheck score results/ --out ledger --input-format browsergym",
    about=(
        ("**The pickles are untrusted and are never unpickled.** They are read by "
         "`trajcheck.readers.kit.safe_pickle`, whose `find_class` imports nothing and hands back inert "
         "stand-ins: a class or function named by the pickle only records the arguments and state it is "
         "given. Names that can only mean code (`os`, `posix`, `subprocess`, `builtins.eval`, ...) are "
         "refused outright with a clear message. Known data shapes are decoded from their bytes, without "
         "their libraries: `pathlib` paths to strings, `datetime` to ISO strings, numpy scalars to numbers, "
         "small 1-d numeric numpy arrays (e.g. `active_page_index`) to lists; larger arrays become "
         '`{"__ndarray__": true, "shape", "dtype"}`. A pickle that cannot be read this way (truncated, '
         "persistent ids, refused names) makes the run invalid with a `pickle_unreadable` problem naming "
         "the file."),
        ("BrowserGym saves `StepInfo` N with observation N and the action chosen on it; the environment's "
         "answer to that action (next observation, `last_action_error`, reward, terminated, truncated) is "
         "in `StepInfo` N+1, whose `obs.last_action` is step N's action (checked; a mismatch is a "
         "`step_alignment` warning). The last `StepInfo` holds the final observation and no action."),
    ),
    tables=(
        Table(head=("BrowserGym", "trajcheck"), rows=(
            ("experiment directory name", "`run_id`"),
            ("`exp_args.pkl` `env_args.task_name`, `env_args.task_seed`",
             "`task_id`, `trial` (from the directory name `..._on_<task>_<seed>` without `exp_args.pkl`)"),
            ("`exp_args.pkl` `agent_args.agent_name`, `model_name`", "`agent.name`, `agent.model`"),
            (("`exp_args.pkl` `agent_args.use_html/use_axtree/use_screenshot/chat_mode/demo_mode`, "
              "`env_args.max_steps`"),
             "`config`"),
            ("`exp_args.pkl` `exp_date`, `exp_id`, `exp_name`", "`started_at`, `extra.exp_id`, `extra.exp_name`"),
            ("`goal_object.pkl.gz` `[{type: text, text}]` (else `obs.goal_object`)", "`goal`"),
            ("`env_args.viewport {width, height}` when recorded", "`screen` (else omitted: see below)"),
            (("`step_N.pkl.gz` `action`: the last fenced block, parsed with `ast` (literals only, never "
              "evaluated)"),
             "`steps[N].action`"),
            ("text around the fenced block; `agent_info.think` (AgentLab)", "`steps[N].reasoning`"),
            *ACTION_ROWS,
            ("`screenshot_step_N.png`, `screenshot_step_{N+1}.png`", "`steps[N].frames.pre`, `frames.post`"),
            ("`step_N` `obs.open_pages_urls[obs.active_page_index]` (and titles)",
             "`steps[N].page.url_before` (`title_before`)"),
            ("`step_{N+1}` `obs.open_pages_urls[obs.active_page_index]`",
             "`steps[N].page.url_after` (`title_after`)"),
            ("`step_{N+1}` `obs.last_action_error`", "`steps[N].executor.ok` (false when set), `executor.error`"),
            ("`step_{N+1}` `reward`, `raw_reward`, `terminated`, `truncated`, `task_info`; `step_N` `stats`",
             "`steps[N].extra`"),
            (("`step_N` `profiling.agent_start`..`agent_stop` (else `stats.agent_elapsed`) and `step_{N+1}` "
              "`profiling.env_start`..`env_stop` (else `stats.step_elapsed`)"),
             ("`steps[N].wall_seconds`: the agent choosing action N and the environment running it; the run's, "
              "their sum")),
            ("`step_N` `stats.input_tokens`, `output_tokens`, `cost` (AgentLab's LLM tracker)",
             ("`steps[N]` `tokens_input`, `tokens_output`, `cost_usd` (`cost_source = log`; a cost of 0 beside "
              "tokens is AgentLab's \"no price for this model\": null)")),
            ("`summary_info.json` `cum_reward` (the WebArena/WorkArena evaluator's reward)",
             "`outcome.score`: the evaluator verdict source"),
            ("last action `send_msg_to_user` / `report_infeasible`", "`outcome.status = done`"),
            ("`err_msg` set", "`outcome.status = error`; `extra.err_msg`, `extra.stack_trace` (tail)"),
            ("truncated / terminated without an answer", "`outcome.status = max_steps` / `failed`"),
            ("no `summary_info.json`, or the last step file still has an action (final observation missing)",
             "valid run, warning `run_unfinished`, `outcome.status = null`, `extra.unfinished = true`"),
            ("`summary_info.json` `n_steps`, `cum_raw_reward`, `stats.*`", "`extra`"),
            ("sizes of the screenshots", "`extra.frame_sizes`"),
        )),
    ),
    lost=(
        ("Screen size. Frames may be at device scale 2 (e.g. 2564x1426 for a 1282x713 viewport) and nothing "
         "in the experiment records the scale; since the actions have no coordinates, `screen` is only set "
         "when `env_args.viewport` is recorded, and the frame sizes are kept in `extra.frame_sizes`."),
        ("`obs.axtree_txt`, `obs.pruned_html`, `obs.chat_messages`, the element properties and any "
         "screenshot arrays inside the pickles are not kept (no DOM files; the bids are only meaningful "
         "against them). `package_versions.txt` is not kept."),
        ("`stats.n_token_*` count the tokens of the observation's texts, not what the model used: they are no "
         "token columns. The reset (step_0's environment time: opening the task, logging in) is no step, and a "
         "run's `wall_seconds` leaves it out; `summary_info.json`'s `stats.cum_step_elapsed` counts it and not "
         "the last action's."),
        ("A step with several action calls keeps the first as its action and lists all in `extra.calls` "
         "(warning `multi_action`)."),
        ("`cum_reward` is the task validator's score; it is kept as `outcome.score`, not as a judge "
         "verdict. A run can end with `report_infeasible` and still get reward 1 (one WorkArena run in the "
         "sample data does)."),
        ("`send_msg_to_user` always maps to `DONE`; in chat-mode tasks a message in the middle of an "
         "episode is not an end."),
    ),
    brief=("an AgentLab experiment folder (`summary_info.json`, `step_N.pkl.gz`, `screenshot_step_N.png`), "
           "pickles read by a restricted unpickler that imports nothing",
           "`click(\"bid\")`, `fill(...)`, `send_msg_to_user(...)`, ...; element ids, no coordinates",
           "axtree/HTML not kept; device scale unknown; a missing last step is `unfinished`"),
)


READER = Reader(
    name=NAME,
    claims=lambda p: _claim(p).claimed,
    claim=_claim,
    read=read_browsergym,
    summary="BrowserGym / AgentLab experiment dir: summary_info.json, exp_args.pkl, step_N.pkl.gz "
            "(read as plain data, never unpickled), screenshot_step_N.png",
    ends="external",  # how the harness ends a run: DOC.ends says why
    doc=DOC,
)
