"""BrowserGym / AgentLab experiment directories.

One directory per episode: ``summary_info.json``, ``exp_args.pkl``,
``goal_object.pkl.gz``, ``step_N.pkl.gz`` (a pickled ``StepInfo``) and
``screenshot_step_N.png``. The pickles are untrusted and are read only with
:mod:`trajcheck.adapters.safe_pickle` (nothing they name is imported or run).

BrowserGym's loop saves ``StepInfo`` N holding observation N and the action the
agent chose on it; the environment's answer to that action (next observation,
``last_action_error``, reward, terminated, truncated) is in ``StepInfo`` N+1. The
last ``StepInfo`` holds the final observation and no action. So trajcheck step N
is: action of ``step_N``, pre frame ``screenshot_step_N.png``, post frame
``screenshot_step_{N+1}.png``, URL before from ``step_N``'s observation and URL
after, error, reward from ``step_{N+1}``.
"""

from __future__ import annotations

import ast
import re
import struct
from pathlib import Path
from typing import Any

from trajcheck.discovery import Reader
from trajcheck.errors import Problem
from trajcheck.inputs import open_regular
from trajcheck.schemas.records import Action, Page, Run, Step

from . import safe_pickle
from .webvoyager import raise_errors, read_json_file

NAME = "browsergym"
SUMMARY = "summary_info.json"
EXP_ARGS = "exp_args.pkl"
GOAL = "goal_object.pkl.gz"
_STEP_RE = re.compile(r"step_(\d+)\.pkl\.gz")
_FRAME_EXTS = (".png", ".jpg", ".jpeg", ".webp")
_DIR_RE = re.compile(r"^\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_(?P<agent>.+?)_on_(?P<task>.+)_(?P<seed>\d+)$")

#: Positional parameters of BrowserGym's high-level action set (browsergym/core/action/functions.py).
PARAMS: dict[str, tuple[str, ...]] = {
    "noop": ("wait_ms",), "send_msg_to_user": ("text",), "report_infeasible": ("reason",),
    "scroll": ("delta_x", "delta_y"), "fill": ("bid", "value"), "select_option": ("bid", "options"),
    "click": ("bid", "button", "modifiers"), "dblclick": ("bid", "button", "modifiers"), "hover": ("bid",),
    "press": ("bid", "key_comb"), "focus": ("bid",), "clear": ("bid",), "drag_and_drop": ("from_bid", "to_bid"),
    "upload_file": ("bid", "file"), "mouse_move": ("x", "y"), "mouse_up": ("x", "y", "button"),
    "mouse_down": ("x", "y", "button"), "mouse_click": ("x", "y", "button"), "mouse_dblclick": ("x", "y", "button"),
    "mouse_drag_and_drop": ("from_x", "from_y", "to_x", "to_y"), "mouse_upload_file": ("x", "y", "file"),
    "keyboard_down": ("key",), "keyboard_up": ("key",), "keyboard_press": ("key",), "keyboard_type": ("text",),
    "keyboard_insert_text": ("text",), "goto": ("url",), "go_back": (), "go_forward": (), "new_tab": (),
    "tab_close": (), "tab_focus": ("index",),
}
DONE_CALLS = ("send_msg_to_user", "report_infeasible")


class ActionParseError(ValueError):
    pass


def split_action(text: str) -> tuple[str, str | None]:
    """(code, reasoning): the last fenced block of ``text`` and the text around it; a text
    without a fence is taken as code (AgentLab keeps the reasoning in agent_info.think)."""
    fences = list(re.finditer(r"```(?:[A-Za-z0-9_+-]*[ \t]*\n)?(.*?)```", text, re.S))
    if not fences:
        return text.strip(), None
    m = fences[-1]
    reasoning = (text[:m.start()] + text[m.end():]).strip()
    return m.group(1).strip(), reasoning or None


def parse_calls(code: str) -> list[tuple[str, dict[str, Any]]]:
    """Parse BrowserGym action code with :mod:`ast` (never eval): a sequence of calls of plain
    functions on literal arguments. Returns [(function, {param: value})]."""
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        raise ActionParseError(f"not Python: {exc.msg}") from None
    out = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call) \
                or not isinstance(stmt.value.func, ast.Name):
            raise ActionParseError(f"not a call of an action function: {ast.unparse(stmt)[:80]!r}")
        call = stmt.value
        name = call.func.id  # type: ignore[attr-defined]
        try:
            args = [ast.literal_eval(a) for a in call.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
        except (ValueError, SyntaxError, TypeError):
            raise ActionParseError(f"{name}(...) has an argument that is not a literal") from None
        if any(k.arg is None for k in call.keywords):
            raise ActionParseError(f"{name}(**...) is not a literal call")
        names = PARAMS.get(name, ())
        bound: dict[str, Any] = {}
        for i, v in enumerate(args):
            bound[names[i] if i < len(names) else f"arg{i}"] = v
        bound.update(kwargs)
        out.append((name, bound))
    if not out:
        raise ActionParseError("no action call")
    return out


def map_call(name: str, a: dict[str, Any]) -> Action:
    """One BrowserGym call as a trajcheck action."""
    bid = a.get("bid")
    el = None if bid is None else str(bid)
    extra: dict[str, Any] = {"function": name, "args": a}
    if el is not None:
        extra["element"] = el

    def s(v: Any) -> str | None:
        return None if v is None else str(v)

    if name == "click":
        return Action("CLICK", element=el, extra=extra)
    if name == "dblclick":
        return Action("DOUBLE_CLICK", element=el, extra=extra)
    if name == "fill":
        return Action("TYPE", text=s(a.get("value")), element=el, extra=extra)
    if name in ("keyboard_type", "keyboard_insert_text"):
        return Action("TYPE", text=s(a.get("text")), extra=extra)
    if name == "press":
        return Action("KEY_PRESS", keys=s(a.get("key_comb")), element=el, extra=extra)
    if name == "keyboard_press":
        return Action("KEY_PRESS", keys=s(a.get("key")), extra=extra)
    if name == "scroll":
        dy = a.get("delta_y")
        if isinstance(dy, (int, float)) and dy:
            extra["direction"] = "down" if dy > 0 else "up"
        return Action("SCROLL", extra=extra)
    if name == "goto":
        return Action("NAVIGATE", url=s(a.get("url")), extra=extra)
    if name == "go_back":
        return Action("NAVIGATE", extra={**extra, "navigation": "back"})
    if name == "go_forward":
        return Action("NAVIGATE", extra={**extra, "navigation": "forward"})
    if name == "new_tab":
        return Action("NAVIGATE", url="about:blank", extra={**extra, "navigation": "new_tab"})
    if name == "send_msg_to_user":
        return Action("DONE", text=s(a.get("text")), extra=extra)
    if name == "report_infeasible":
        return Action("DONE", text=s(a.get("reason")), extra={**extra, "infeasible": True})
    if name == "noop":
        return Action("WAIT", extra=extra)
    if name in ("mouse_click", "mouse_dblclick"):
        x, y = a.get("x"), a.get("y")
        ok = isinstance(x, (int, float)) and isinstance(y, (int, float))
        return Action("CLICK" if name == "mouse_click" else "DOUBLE_CLICK",
                      x=float(x) if ok else None, y=float(y) if ok else None, extra=extra)  # type: ignore[arg-type]
    return Action(name.upper(), element=el, extra=extra)


def _png_size(path: Path) -> tuple[int, int] | None:
    try:
        with open(open_regular(path), "rb", closefd=True) as f:  # never a FIFO
            head = f.read(24)
    except OSError:
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    return None


def _frame_name(run_dir: Path, n: int) -> str | None:
    for ext in _FRAME_EXTS:
        name = f"screenshot_step_{n}{ext}"
        if (run_dir / name).is_file():
            return name
    return None


def _obs_page(obs: Any) -> tuple[str | None, str | None]:
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


def _load(run_dir: Path, rel: str, run: str, problems: list[Problem], *, required: bool) -> Any:
    path = run_dir / rel
    if not path.is_file():
        if required:
            problems.append(Problem("file_missing", "file not found", run=run, file=rel,
                                    hint="copy the whole experiment directory"))
        return None
    try:
        return safe_pickle.load_plain(path, source=rel)
    except safe_pickle.UnsafePickleError as exc:
        problems.append(Problem("pickle_unreadable", str(exc), run=run, file=rel,
                                hint="pickles are read as plain data only; re-export the run, or remove a "
                                     "file that is not BrowserGym's"))
        return None


def _class_of(v: Any) -> str:
    if isinstance(v, dict) and isinstance(v.get("__class__"), str):
        return v["__class__"]
    return type(v).__name__


def _goal_text(goal: Any) -> str | None:
    if isinstance(goal, str):
        return goal
    if isinstance(goal, list):
        parts = [g.get("text") for g in goal if isinstance(g, dict) and g.get("type") == "text"]
        parts = [p for p in parts if isinstance(p, str)]
        return "\n".join(parts) if parts else None
    return None


def read_browsergym(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    run_id = run_dir.resolve().name or display
    problems: list[Problem] = []
    loc = {"run": run_id}

    summary = None
    if (run_dir / SUMMARY).is_file():
        summary = read_json_file(run_dir / SUMMARY, run=run_id, rel=SUMMARY, problems=problems)
        if summary is not None and not isinstance(summary, dict):
            problems.append(Problem("schema", f"expected a JSON object, got {type(summary).__name__}",
                                    file=SUMMARY, line=1, field="(record)",
                                    hint="summary_info.json is BrowserGym's episode summary", **loc))
            summary = None

    exp = _load(run_dir, EXP_ARGS, run_id, problems, required=False)
    if exp is not None and not (isinstance(exp, dict) and isinstance(exp.get("env_args"), dict)):
        problems.append(Problem("pickle_unexpected", f"expected an ExpArgs object with env_args, found "
                                f"{_class_of(exp)}", file=EXP_ARGS, field="env_args",
                                hint="this does not look like BrowserGym's exp_args.pkl", **loc))
        exp = None
    goal_obj = _load(run_dir, GOAL, run_id, problems, required=False)

    step_files: dict[int, str] = {}
    for p in run_dir.iterdir():
        m = _STEP_RE.fullmatch(p.name)
        if m and p.is_file():
            step_files[int(m.group(1))] = p.name
    if not step_files:
        problems.append(Problem("steps_missing", "no step_N.pkl.gz files", file="step_0.pkl.gz",
                                hint="the episode saved no steps (did it fail at reset?)", **loc))
    records: dict[int, dict[str, Any]] = {}
    for n in sorted(step_files):
        rel = step_files[n]
        v = _load(run_dir, rel, run_id, problems, required=True)
        if v is None:
            continue
        if not isinstance(v, dict) or "action" not in v or "obs" not in v:
            problems.append(Problem("pickle_unexpected", f"expected a StepInfo with obs and action, found "
                                    f"{_class_of(v)}", file=rel, field="(record)",
                                    hint="this does not look like a BrowserGym step file", **loc))
            continue
        if isinstance(v.get("step"), int) and v["step"] != n:
            problems.append(Problem("step_number_mismatch", f"the file says step {v['step']}; its name says {n}",
                                    file=rel, field="step", severity="warning",
                                    hint="the file name is used", **loc))
        records[n] = v
    raise_errors(problems, run_id)

    numbers = sorted(records)
    last_n = numbers[-1]
    missing = [n for n in range(last_n + 1) if n not in records]
    if missing:
        problems.append(Problem("steps_gap", f"step files missing for step(s) {missing}", file=f"step_{missing[0]}.pkl.gz",
                                severity="warning", hint="the steps around the gap have no before/after state",
                                **loc))
    final_has_action = records[last_n].get("action") is not None
    unfinished = summary is None or final_has_action
    if unfinished:
        why = []
        if summary is None:
            why.append(f"{SUMMARY} is missing")
        if final_has_action:
            why.append(f"the last step file (step_{last_n}.pkl.gz) still has an action, so step_{last_n + 1}.pkl.gz "
                       "(the episode's final observation) is missing")
        problems.append(Problem("run_unfinished", "the episode did not finish: " + "; ".join(why),
                                file=SUMMARY if summary is None else f"step_{last_n + 1}.pkl.gz", severity="warning",
                                hint="scored as far as it goes; outcome.status is null", **loc))

    steps: list[Step] = []
    for n in numbers:
        rec = records[n]
        rel = step_files[n]
        raw = rec.get("action")
        if raw is None:
            if n != last_n:
                problems.append(Problem("action_missing", "a step in the middle of the run has no action",
                                        file=rel, field="action", severity="warning",
                                        hint="the step is skipped", **loc))
            continue
        nxt = records.get(n + 1)
        obs, nobs = rec.get("obs"), (nxt or {}).get("obs")
        extra: dict[str, Any] = {}
        reasoning = None
        agent_info = rec.get("agent_info")
        think = agent_info.get("think") if isinstance(agent_info, dict) else None
        if not isinstance(raw, str):
            problems.append(Problem("action_unparsed", f"the action is a {_class_of(raw)}, not text", file=rel,
                                    field="action", severity="warning",
                                    hint="the step is scored as an UNKNOWN action", **loc))
            action = Action("UNKNOWN", extra={"raw": str(raw)[:2000]})
        else:
            code, reasoning = split_action(raw)
            try:
                calls = parse_calls(code)
                fn, args = calls[0]
                action = map_call(fn, args)
                action = Action(action.type, action.x, action.y, action.keys, action.text, action.url,
                                action.element, {**action.extra, "call": code})
                if len(calls) > 1:
                    extra["calls"] = [{"function": f, "args": a} for f, a in calls]
                    problems.append(Problem("multi_action", f"{len(calls)} action calls in one step; the first "
                                            f"({fn}) is the step's action, all are kept in extra.calls",
                                            file=rel, field="action", severity="warning",
                                            hint="trajcheck scores one action per step", **loc))
            except ActionParseError as exc:
                problems.append(Problem("action_unparsed", f"cannot read the action {code[:100]!r}: {exc}",
                                        file=rel, field="action", severity="warning",
                                        hint="the step is scored as an UNKNOWN action", **loc))
                action = Action("UNKNOWN", extra={"raw": raw})
        if isinstance(think, str) and think.strip():
            reasoning = think.strip() + ("\n\n" + reasoning if reasoning else "")

        url_b, title_b = _obs_page(obs)
        url_a, title_a = _obs_page(nobs)
        ok = error = None
        if isinstance(nobs, dict) and "last_action_error" in nobs:
            err = nobs.get("last_action_error")
            ok = not (isinstance(err, str) and err.strip())
            error = err.strip() if not ok else None
            last = nobs.get("last_action")
            if isinstance(last, str) and isinstance(raw, str) and last.strip() != raw.strip():
                problems.append(Problem("step_alignment", f"step_{n + 1}.pkl.gz obs.last_action is not the action of "
                                        f"step {n}; its last_action_error may belong to another action",
                                        file=f"step_{n + 1}.pkl.gz", field="obs.last_action", severity="warning",
                                        hint="check that the step files belong to one episode", **loc))
        pre = _frame_name(run_dir, n) or f"screenshot_step_{n}.png"
        post = _frame_name(run_dir, n + 1)
        if post is None and nxt is not None:
            post = f"screenshot_step_{n + 1}.png"
        for name, field_name, owner in ((pre, "frames.pre", rel), (post, "frames.post", f"step_{n + 1}.pkl.gz")):
            if name is not None and not (run_dir / name).is_file():
                problems.append(Problem("screenshot_missing", f"{name} is missing", file=owner, field=field_name,
                                        severity="warning", hint="copy the experiment's screenshots with it; the "
                                        "step's frames are not checked (frames_missing)", **loc))
        if nxt is not None:
            for k in ("reward", "raw_reward", "terminated", "truncated", "task_info"):
                if nxt.get(k) not in (None, {}, ""):
                    extra[k] = nxt[k]
        stats = rec.get("stats")
        if isinstance(stats, dict):
            extra["agent_stats"] = stats
        if isinstance(nobs, dict) and isinstance(nobs.get("open_pages_urls"), list):
            extra["open_pages_after"] = len(nobs["open_pages_urls"])
        steps.append(Step(
            index=n, action=action, reasoning=reasoning, frame_pre=pre, frame_post=post, executor_ok=ok,
            executor_error=error, page=Page(url_before=url_b, url_after=url_a, title_before=title_b,
                                            title_after=title_a),
            extra=extra, source=rel, line=None))
    if not steps:
        problems.append(Problem("steps_empty", "no step holds an action", file=step_files[last_n],
                                hint="the agent never acted (see err_msg in summary_info.json)", **loc))
    raise_errors(problems, run_id)

    # identity
    env = (exp or {}).get("env_args") or {}
    agent = (exp or {}).get("agent_args") or {}
    dm = _DIR_RE.match(run_id)
    task_id = env.get("task_name") if isinstance(env.get("task_name"), str) else (dm.group("task") if dm else None)
    seed = env.get("task_seed")
    trial = seed if isinstance(seed, int) and not isinstance(seed, bool) else (int(dm.group("seed")) if dm else None)
    goal = _goal_text(goal_obj)
    if goal is None:
        first_obs = records[numbers[0]].get("obs") or {}
        goal = _goal_text(first_obs.get("goal_object")) or (first_obs.get("goal") if isinstance(
            first_obs.get("goal"), str) else None)

    # outcome
    s = summary or {}
    last_step = steps[-1]
    final = records[last_n]
    status: str | None
    fn = last_step.action.extra.get("function")
    if unfinished:
        status = None
    elif fn in DONE_CALLS:
        status = "done"
    elif s.get("err_msg"):
        status = "error"
    elif s.get("truncated") or final.get("truncated"):
        status = "max_steps"
    elif s.get("terminated") or final.get("terminated"):
        status = "failed"  # the environment ended the episode without the agent answering
    else:
        max_steps = env.get("max_steps")
        status = "max_steps" if isinstance(max_steps, int) and len(steps) >= max_steps else None
    score = s.get("cum_reward")
    score = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None

    config = {k: agent[k] for k in ("use_html", "use_axtree", "use_screenshot", "chat_mode", "demo_mode")
              if k in agent}
    if isinstance(env.get("max_steps"), int):
        config["max_steps"] = env["max_steps"]
    extra_run: dict[str, Any] = {}
    if unfinished:
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
        if isinstance((exp or {}).get(k), str):
            extra_run[k] = exp[k]  # type: ignore[index]
    sizes = sorted({sz for n in range(last_n + 2) if (f := _frame_name(run_dir, n)) and (sz := _png_size(run_dir / f))})
    if sizes:
        extra_run["frame_sizes"] = [list(sz) for sz in sizes]
    width = height = None
    vp = env.get("viewport")
    if isinstance(vp, dict) and isinstance(vp.get("width"), int) and isinstance(vp.get("height"), int):
        width, height = vp["width"], vp["height"]
    started = (exp or {}).get("exp_date")
    run = Run(run_id=run_id, path=display, source_format=NAME, steps=tuple(steps), task_id=task_id, trial=trial,
              goal=goal, agent_name=agent.get("agent_name") if isinstance(agent.get("agent_name"), str) else None,
              agent_model=agent.get("model_name") if isinstance(agent.get("model_name"), str) else None,
              config=config, screen_width=width, screen_height=height,
              started_at=started if isinstance(started, str) else None, outcome_status=status,
              outcome_score=score, extra=extra_run)
    return run, [p for p in problems if p.severity != "error"]


def _claims(p: Path) -> bool:
    if (p / "run.json").exists():
        return False
    return (p / EXP_ARGS).is_file() or ((p / SUMMARY).is_file() and (p / "step_0.pkl.gz").is_file())


READER = Reader(
    name=NAME,
    claims=_claims,
    read=read_browsergym,
    summary="BrowserGym / AgentLab experiment dir: summary_info.json, exp_args.pkl, step_N.pkl.gz "
            "(read as plain data, never unpickled), screenshot_step_N.png",
    mapping=(
        ("experiment directory name", "run_id"),
        ("exp_args.pkl env_args.task_name / task_seed", "task_id / trial"),
        ("exp_args.pkl agent_args.agent_name / model_name", "agent.name / agent.model"),
        ("exp_args.pkl agent_args.use_* , env_args.max_steps", "config"),
        ("exp_args.pkl exp_date", "started_at"),
        ("goal_object.pkl.gz [{type: text, text}]", "goal"),
        ("env_args.viewport {width, height} (when set)", "screen"),
        ("step_N.pkl.gz action: ```call(...)``` (parsed with ast)", "steps[N].action"),
        ("step_N.pkl.gz action: text around the call; agent_info.think", "steps[N].reasoning"),
        ("click(bid) / dblclick(bid)", "CLICK / DOUBLE_CLICK, element bid"),
        ("fill(bid, value), keyboard_type(text)", "TYPE, text"),
        ("press(bid, key_comb), keyboard_press(key)", "KEY_PRESS, keys"),
        ("scroll(dx, dy)", "SCROLL, extra.args"),
        ("goto(url) / go_back() / go_forward() / new_tab()", "NAVIGATE url / extra.navigation"),
        ("send_msg_to_user(text)", "DONE, text"),
        ("report_infeasible(reason)", "DONE, text, extra.infeasible = true"),
        ("noop()", "WAIT"),
        ("mouse_click(x, y)", "CLICK, x, y"),
        ("other calls (select_option, focus, hover, ...)", "their name upper-cased, extra.args"),
        ("screenshot_step_N.png / screenshot_step_{N+1}.png", "steps[N].frames.pre / frames.post"),
        ("step_N obs.open_pages_urls[active_page_index]", "steps[N].page.url_before (title_before)"),
        ("step_{N+1} obs.open_pages_urls[active_page_index]", "steps[N].page.url_after (title_after)"),
        ("step_{N+1} obs.last_action_error", "steps[N].executor.ok / error"),
        ("step_{N+1} reward, terminated, truncated, task_info", "steps[N].extra"),
        ("summary_info.json cum_reward (the WebArena/WorkArena evaluator's reward)",
         "outcome.score: the evaluator verdict source"),
        ("last action send_msg_to_user / report_infeasible", "outcome.status done"),
        ("summary_info.json err_msg", "outcome.status error; extra.err_msg"),
        ("truncated / terminated without an answer", "outcome.status max_steps / failed"),
        ("no summary_info.json or no final step file", "outcome.status null, extra.unfinished (warning)"),
    ),
)
