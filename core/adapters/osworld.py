"""OSWorld result directories (``results/<action_space>/<observation_type>/<model>/<domain>/<example_id>/``).

What OSWorld's ``lib_run_single.run_single_example`` writes, per action the agent
returned: the screenshot after the action as ``step_{n}_{%Y%m%d@%H%M%S}.png``
(``n`` = step_idx + 1, shared by the actions of one prediction) and one
``traj.jsonl`` line ``{step_num, action_timestamp, action, reward, done, info,
screenshot_file}`` (some runners add ``response``, ``natural_language_action``,
``action_index``, ``step_info``, or put microseconds or the action index in the
file name); then ``result.txt`` with the evaluator's score. ``run.py`` appends a
sentinel line ``{"Error": "..."}`` when a task crashes or times out. Some runners
save the initial observation as ``step_0.png``.

Actions are pyautogui code strings (``pyautogui.click(512, 300)``, several calls
per string allowed), the special strings ``DONE``, ``FAIL`` and ``WAIT``, or, in
the ``computer_13`` action space, dicts ``{action_type, x, y, ...}``. The code is
parsed with :mod:`ast`, never evaluated: the step's action is its first call that
is not a pointer move, with literal coordinates only (``moveTo(x, y)`` before a
coordinate-less ``click()`` gives the click its point).

Frames: a step's post frame is its own screenshot, its pre frame the previous
step's post (``step_0.png`` for the first, when saved). When two consecutive lines
resolve to one file (two actions within one second share
``step_{n}_{%Y%m%d@%H%M%S}.png``; runners writing ``step_{n}.png`` overwrite it per
action), the file shows the state after the later action only: the earlier step
gets no post frame (warning ``screenshot_overwritten``) and the later one is
compared with the frame before the earlier one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from trajcheck.discovery import Reader
from trajcheck.errors import Problem, RunFormatError
from trajcheck.inputs import open_regular
from trajcheck.jsonio import parse_json_text
from trajcheck.schemas.records import Action, Run, Step

from trajcheck.rundir import read_text_file

from .webvoyager import claims_plain_dir, raise_errors

NAME = "osworld"
TRAJ = "traj.jsonl"
RESULT = "result.txt"
MAX_TRAJ_BYTES = 64 * 1024 * 1024

#: pyautogui calls and the trajcheck action type each maps to (``click`` with ``clicks=2`` / ``button='right'``
#: is a DOUBLE_CLICK / RIGHT_CLICK).
PYAUTOGUI = {
    "click": "CLICK", "leftClick": "CLICK", "doubleClick": "DOUBLE_CLICK", "tripleClick": "TRIPLE_CLICK",
    "rightClick": "RIGHT_CLICK", "middleClick": "MIDDLE_CLICK", "moveTo": "MOVE", "moveRel": "MOVE",
    "dragTo": "DRAG", "dragRel": "DRAG", "press": "KEY_PRESS", "hotkey": "KEY_PRESS", "keyDown": "KEY_DOWN",
    "keyUp": "KEY_UP", "typewrite": "TYPE", "write": "TYPE", "scroll": "SCROLL", "hscroll": "SCROLL",
    "vscroll": "SCROLL", "mouseDown": "MOUSE_DOWN", "mouseUp": "MOUSE_UP",
}
SPECIAL = {"DONE": "DONE", "FAIL": "FAIL", "WAIT": "WAIT"}
#: computer_13 action types that are already trajcheck's.
COMPUTER_13 = {"CLICK": "CLICK", "DOUBLE_CLICK": "DOUBLE_CLICK", "RIGHT_CLICK": "RIGHT_CLICK", "TYPING": "TYPE",
               "PRESS": "KEY_PRESS", "HOTKEY": "KEY_PRESS", "SCROLL": "SCROLL", "MOVE_TO": "MOVE",
               "DRAG_TO": "DRAG", "MOUSE_DOWN": "MOUSE_DOWN", "MOUSE_UP": "MOUSE_UP", "KEY_DOWN": "KEY_DOWN",
               "KEY_UP": "KEY_UP", "WAIT": "WAIT", "DONE": "DONE", "FAIL": "FAIL"}
_STEP_FILE = re.compile(r"^step_(\d+)(?:_(.*))?\.png$")


def _const(node: ast.AST) -> Any:
    """A literal argument (number, string, negative number, list of strings), else None."""
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _point(args: list[Any], kw: dict[str, Any], i: int = 0) -> tuple[float | None, float | None]:
    """Literal x, y at positional ``i``/``i+1`` or keywords x=/y= (also a pair ``(x, y)`` as x); a computed
    coordinate (a variable, an expression) gives no point rather than half of one."""
    xa = kw.get("x", args[i] if len(args) > i else None)
    if isinstance(xa, (tuple, list)) and len(xa) == 2 and "y" not in kw:
        x, y = _num(xa[0]), _num(xa[1])
    else:
        x, y = _num(xa), _num(kw.get("y", args[i + 1] if len(args) > i + 1 else None))
    return (x, y) if x is not None and y is not None else (None, None)


def _has_coords(call: ast.Call, i: int = 0) -> bool:
    """The call passes a coordinate at all (literal or computed)."""
    return len(call.args) > i or any(k.arg in ("x", "y") for k in call.keywords)


def parse_pyautogui(code: str) -> tuple[Action | None, list[str]]:
    """The action of ``code`` (None when it has none) and the names of every pyautogui call.

    The action is the first call that is not a pointer move (click, key, typing, scroll, drag, ...); a
    ``moveTo(x, y)`` before it gives a click, scroll or mouseDown without coordinates its point (and a drag its
    start). Code that only moves the pointer is a MOVE."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, []
    calls: list[tuple[str, ast.Call]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "pyautogui":
            calls.append((node.func.attr, node))
    calls.sort(key=lambda c: (c[1].lineno, c[1].col_offset))
    names = [n for n, _ in calls]
    mouse: tuple[float | None, float | None] | None = None  # where the code's moveTo calls put the pointer
    move: Action | None = None
    for name, call in calls:
        typ = PYAUTOGUI.get(name)
        if typ is None:
            continue
        args = [_const(a) for a in call.args]
        kw = {k.arg: _const(k.value) for k in call.keywords if k.arg}
        extra: dict[str, Any] = {"call": name}
        if typ == "MOVE":
            if name == "moveTo":
                x, y = _point(args, kw)
                mouse = (x, y) if x is not None else None
                move = move or Action(type=typ, x=x, y=y, extra=extra)
            else:  # moveRel: relative to a position the code does not state
                mouse = None
                move = move or Action(type=typ, extra=dict(extra, offset=[_num(a) for a in args[:2]]))
            continue
        x, y = _point(args, kw)
        if typ in ("CLICK", "DOUBLE_CLICK", "TRIPLE_CLICK", "RIGHT_CLICK", "MIDDLE_CLICK", "MOUSE_DOWN",
                   "MOUSE_UP") and not _has_coords(call) and mouse is not None:
            (x, y), extra["point_from"] = mouse, "moveTo"
        if name == "click":  # click(x, y, clicks=1, interval=0.0, button='primary', ...)
            clicks = _num(kw.get("clicks", args[2] if len(args) > 2 else None))
            button = kw.get("button", args[4] if len(args) > 4 else None)
            if button in ("right", "secondary"):
                typ = "RIGHT_CLICK"
            elif button == "middle":
                typ = "MIDDLE_CLICK"
            elif clicks == 2:
                typ = "DOUBLE_CLICK"
            elif clicks == 3:
                typ = "TRIPLE_CLICK"
        if typ == "KEY_PRESS":
            keys = [a for a in (args if name == "hotkey" else args[:1]) if isinstance(a, str)]
            if name == "press" and args and isinstance(args[0], list):
                keys = [k for k in args[0] if isinstance(k, str)]
            keys = keys or ([kw["keys"]] if isinstance(kw.get("keys"), str) else [])
            return Action(type=typ, keys="+".join(keys) or None, extra=extra), names
        if typ == "TYPE":
            text = args[0] if args and isinstance(args[0], str) else kw.get("message")
            if isinstance(text, list):
                text = "".join(t for t in text if isinstance(t, str))
            text = text if isinstance(text, str) else None
            if any(_submits(n, c) for n, c in calls):
                # typewrite(...) then press('enter'): the step submits; the key decides the check
                return Action(type="KEY_PRESS", keys="enter", text=text, extra=extra), names
            return Action(type=typ, text=text, extra=extra), names
        if typ == "SCROLL":  # scroll(clicks, x=None, y=None)
            extra["clicks"] = _num(kw.get("clicks", args[0] if args else None))
            x, y = _point(args, kw, 1)
            if not _has_coords(call, 1) and mouse is not None:
                (x, y), extra["point_from"] = mouse, "moveTo"
            return Action(type=typ, x=x, y=y, extra=extra), names
        if name == "dragTo" and mouse is not None:
            extra["from"] = list(mouse)
        if name == "dragRel":
            extra["offset"] = [x, y]
            x = y = None
        return Action(type=typ, x=x, y=y, extra=extra), names
    return move, names


def _submits(name: str, call: ast.Call) -> bool:
    """A press('enter') / press('return') call (the key that submits a form)."""
    if name != "press" or not call.args:
        return False
    key = _const(call.args[0])
    return isinstance(key, str) and key.lower() in ("enter", "return")


def _computer13(d: dict[str, Any]) -> Action:
    t = str(d.get("action_type", "")).upper()
    typ = COMPUTER_13.get(t, t or "UNKNOWN")
    params = d.get("parameters") if isinstance(d.get("parameters"), dict) else d
    keys = params.get("keys") if isinstance(params.get("keys"), list) else None
    key = params.get("key")
    return Action(type=typ, x=_num(params.get("x")), y=_num(params.get("y")),
                  keys="+".join(str(k) for k in keys) if keys else (str(key) if key else None),
                  text=params.get("text") if isinstance(params.get("text"), str) else None,
                  extra={"raw": d})


def _find_frame(run_dir: Path, entry: dict[str, Any], files: dict[int, list[str]]) -> str | None:
    """The screenshot of a traj line: the file it names, else the step's file with its timestamp,
    else the step's only file."""
    named = entry.get("screenshot_file")
    if isinstance(named, str) and "/" not in named and "\\" not in named and (run_dir / named).is_file():
        return named
    n = entry.get("step_num")
    candidates = files.get(n, []) if isinstance(n, int) else []
    ts = entry.get("action_timestamp")
    if isinstance(ts, str):
        hit = [c for c in candidates if ts in c]
        if len(hit) == 1:
            return hit[0]
    idx = entry.get("action_index")
    if isinstance(idx, int):
        hit = [c for c in candidates if re.match(rf"^step_{n}_{idx}_", c)]
        if len(hit) == 1:
            return hit[0]
    return candidates[0] if len(candidates) == 1 else None


def read_osworld(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    problems: list[Problem] = []
    text = read_text_file(run_dir / TRAJ, run=display, rel=TRAJ, problems=problems, limit=MAX_TRAJ_BYTES)
    if text is None:
        raise RunFormatError(problems)
    files: dict[int, list[str]] = {}
    for f in sorted(p.name for p in run_dir.iterdir() if p.is_file()):
        m = _STEP_FILE.match(f)
        if m:
            files.setdefault(int(m.group(1)), []).append(f)
    entries: list[tuple[int, dict[str, Any]]] = []
    error: str | None = None
    lines = text.splitlines()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        d, problem = parse_json_text(line, run=display, file=TRAJ, line=lineno)
        if problem is not None:
            problems.append(problem)
            continue
        if not isinstance(d, dict):
            problems.append(Problem("wrong_type", "a traj.jsonl line must be a JSON object", run=display,
                                    file=TRAJ, line=lineno, hint="repair or remove the line"))
            continue
        if "Error" in d and "action" not in d:
            error = str(d["Error"])
            continue
        entries.append((lineno, d))
    raise_errors(problems, display)

    # One file for two consecutive lines: the runner overwrote the first screenshot (two actions of one
    # prediction within the same second share step_{n}_{%Y%m%d@%H%M%S}.png; runners writing step_{n}.png
    # overwrite it per action). The file shows the state after the later action only.
    posts = [_find_frame(run_dir, d, files) for _, d in entries]
    overwritten = [p is not None and i + 1 < len(posts) and posts[i + 1] == p for i, p in enumerate(posts)]

    steps: list[Step] = []
    prev = "step_0.png" if (run_dir / "step_0.png").is_file() else None
    status = "max_steps"
    for i, (lineno, d) in enumerate(entries, start=1):
        raw = d.get("action")
        names: list[str] = []
        if isinstance(raw, str) and raw.strip().upper() in SPECIAL:
            action: Action | None = Action(type=SPECIAL[raw.strip().upper()])
        elif isinstance(raw, dict):
            action = _computer13(raw)
        elif isinstance(raw, str):
            action, names = parse_pyautogui(raw)
            if action is not None and len(names) > 1:
                action.extra["calls"] = names
        else:
            action = None
        if action is None:
            problems.append(Problem("action_unparsed", f"no pyautogui action in {str(raw)[:80]!r}", run=display,
                                    file=TRAJ, line=lineno, field="action", severity="warning",
                                    hint="the step is scored as action type UNKNOWN"))
            action = Action(type="UNKNOWN", extra={})
        if isinstance(raw, str):
            action.extra.setdefault("raw", raw)
        post = posts[i - 1]
        if overwritten[i - 1]:
            problems.append(Problem("screenshot_overwritten", f"{post} is also the screenshot of the next line: "
                                    "the runner overwrote this action's screenshot", run=display, file=TRAJ,
                                    line=lineno, field="screenshot_file", severity="warning",
                                    hint="the step is scored without its post frame; the next step is compared "
                                         "with the frame before this one"))
            post = None
        elif post is None:
            problems.append(Problem("screenshot_missing", f"no screenshot for step_num {d.get('step_num')!r} "
                                    f"(named {d.get('screenshot_file')!r})", run=display, file=TRAJ, line=lineno,
                                    field="screenshot_file", severity="warning",
                                    hint="the step is scored without its post frame"))
        if action.type == "DONE":
            status = "done"
        elif action.type == "FAIL":
            status = "failed"
        reasoning = d.get("response") if isinstance(d.get("response"), str) else None
        if reasoning is None and isinstance(d.get("natural_language_action"), str):
            reasoning = d["natural_language_action"]
        extra = {k: d[k] for k in ("step_num", "action_timestamp", "reward", "done", "info", "action_index",
                                   "step_info", "natural_language_action") if k in d}
        steps.append(Step(index=i, action=action, reasoning=reasoning, frame_pre=prev, frame_post=post,
                          extra=extra, source=TRAJ, line=lineno))
        prev = post if post is not None else prev
    if error is not None:
        status = "error"
    score: float | None = None
    raw_score = read_text_file(run_dir / RESULT, run=display, rel=RESULT, problems=[], limit=4096) \
        if (run_dir / RESULT).is_file() else None
    if raw_score is not None:
        raw_score = raw_score.strip()
        try:
            score = float(raw_score)
        except ValueError:
            problems.append(Problem("wrong_type", f"result.txt holds {raw_score[:40]!r}, not a number",
                                    run=display, file=RESULT, severity="warning", hint="the score is left empty"))
    parts = Path(display).parts
    task_id = run_dir.name
    domain = parts[-2] if len(parts) >= 2 else None
    model = parts[-3] if len(parts) >= 3 else None
    config: dict[str, Any] = {}
    if len(parts) >= 5:
        config = {"action_space": parts[-5], "observation_type": parts[-4]}
    width = height = None
    first = next((s.frame_post or s.frame_pre for s in steps if s.frame_post or s.frame_pre), prev)
    if first:
        from PIL import Image

        try:
            with open(open_regular(run_dir / first), "rb", closefd=True) as f, Image.open(f) as img:  # never a FIFO
                width, height = img.size
        except OSError:
            pass
    extra_run: dict[str, Any] = {"domain": domain} if domain else {}
    if error is not None:
        extra_run["error"] = error
    run = Run(run_id=display, path=display, source_format=NAME, steps=tuple(steps), task_id=task_id,
              agent_name="OSWorld", agent_model=model, config=config, screen_width=width, screen_height=height,
              outcome_status=status, outcome_score=score, extra=extra_run)
    return run, [p for p in problems if p.severity != "error"]


READER = Reader(
    name=NAME,
    claims=lambda p: claims_plain_dir(p, TRAJ),
    read=read_osworld,
    summary="OSWorld result directory: traj.jsonl (pyautogui code actions, parsed with ast), "
            "step_{n}_{timestamp}.png screenshots, result.txt",
    mapping=(
        ("path results/<action_space>/<observation_type>/<model>/<domain>/<example_id>",
         "run_id = the path below the argument; task_id = example_id; agent.model = model; "
         "config {action_space, observation_type}; extra.domain"),
        ("traj.jsonl line k", "step k (lines in order; step_num, action_timestamp, reward, done, info in extra)"),
        ("action 'pyautogui.click(x, y)' (ast, never eval)", ("CLICK x, y (doubleClick or click(clicks=2) "
         "DOUBLE_CLICK, rightClick or click(button='right') RIGHT_CLICK, dragTo DRAG, scroll SCROLL with "
         "extra.clicks; the first call that is not a move; moveTo(x, y) then click() is a CLICK at x, y; "
         "moveTo alone MOVE); extra.raw = the code")),
        ("pyautogui.press('enter') / hotkey('ctrl', 's')", "KEY_PRESS keys 'enter' / 'ctrl+s'"),
        ("pyautogui.typewrite('text') / write", "TYPE text; followed by press('enter') in the same action: "
         "KEY_PRESS keys 'enter' with the text kept"),
        ("'DONE' / 'FAIL' / 'WAIT'", "DONE (outcome done) / FAIL (outcome failed) / WAIT"),
        ("computer_13 dict {action_type, x, y, ...}", "the same action types"),
        ("response / natural_language_action", "reasoning"),
        ("screenshot_file (else step_{n}_*<timestamp>*.png)", ("frames.post; frames.pre = the previous step's "
         "post (step_0.png for the first, when present); a file shared by two consecutive lines was overwritten: "
         "the earlier step has no post frame (warning screenshot_overwritten)")),
        ("{'Error': ...} line", "outcome.status error; extra.error"),
        ("result.txt (the OSWorld evaluator's score)",
         "outcome.score: the evaluator verdict source (partial credit: lower score --evaluator-pass)"),
    ),
)
