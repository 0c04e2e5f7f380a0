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

import re
from pathlib import Path
from typing import Any

from ...kit.claiming import by_names
from ...kit.reader import FormatDoc, Reader, Table
from ....base.errors import Problem, RunFormatError
from ....base.problems import Slug
from ....base.jsonio import parse_json_text
from ....schemas.records import Action, Run, Step

from ...kit.reading import Problems, claims_plain_dir, image_size, read_text_file
from .actions import SPECIAL, computer13, parse_pyautogui

__all__ = ["NAME", "READER", "DOC", "parse_pyautogui", "read_osworld"]

NAME = "osworld"
TRAJ = "traj.jsonl"
RESULT = "result.txt"
MAX_TRAJ_BYTES = 64 * 1024 * 1024
_STEP_FILE = re.compile(r"^step_(\d+)(?:_(.*))?\.png$")


# --- parse ------------------------------------------------------------------------------------------------

def _parse(run_dir: Path, problems: Problems) -> tuple[list[tuple[int, dict[str, Any]]], str | None]:
    """The traj.jsonl lines that are actions (line number, record), and the error of a crashed task's
    ``{"Error": ...}`` line; raises on a line that is not JSON."""
    text = read_text_file(run_dir / TRAJ, run=problems.run, rel=TRAJ, problems=problems, limit=MAX_TRAJ_BYTES)
    if text is None:
        raise RunFormatError(list(problems))
    entries: list[tuple[int, dict[str, Any]]] = []
    error: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        d, problem = parse_json_text(line, run=problems.run, file=TRAJ, line=lineno)
        if problem is not None:
            problems.append(problem)
            continue
        if not isinstance(d, dict):
            problems.error(Slug.RECORD_NOT_OBJECT, "a traj.jsonl line must be a JSON object", line=lineno,
                           hint="repair or remove the line")
            continue
        if "Error" in d and "action" not in d:
            error = str(d["Error"])
            continue
        entries.append((lineno, d))
    problems.raise_errors()
    return entries, error


def _action(raw: Any, lineno: int, problems: Problems) -> Action:
    """A line's action: DONE / FAIL / WAIT, a computer_13 dict, or pyautogui code (UNKNOWN when it has no
    call), with the code in ``extra.raw`` and every call's name in ``extra.calls``."""
    names: list[str] = []
    action: Action | None
    if isinstance(raw, str) and raw.strip().upper() in SPECIAL:
        action = Action(type=SPECIAL[raw.strip().upper()])
    elif isinstance(raw, dict):
        action = computer13(raw)
    elif isinstance(raw, str):
        action, names = parse_pyautogui(raw)
        if action is not None and len(names) > 1:
            action.extra["calls"] = names
    else:
        action = None
    if action is None:
        problems.warn(Slug.ACTION_UNPARSED, f"no pyautogui action in {str(raw)[:80]!r}", line=lineno, field="action",
                      hint="the step is scored as action type UNKNOWN")
        action = Action(type="UNKNOWN", extra={})
    if isinstance(raw, str):
        action.extra.setdefault("raw", raw)
    return action


# --- align ------------------------------------------------------------------------------------------------

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


def _step_files(run_dir: Path) -> dict[int, list[str]]:
    """The run's ``step_{n}[_...].png`` files by step number, names sorted."""
    files: dict[int, list[str]] = {}
    for f in sorted(p.name for p in run_dir.iterdir() if p.is_file()):
        m = _STEP_FILE.match(f)
        if m:
            files.setdefault(int(m.group(1)), []).append(f)
    return files


def _align(run_dir: Path, entries: list[tuple[int, dict[str, Any]]],
           problems: Problems) -> tuple[list[Step], str | None]:
    """One step per action line: its screenshot is the post frame, the previous step's the pre frame. Also
    returns the last frame seen (``step_0.png`` when no step has one)."""
    files = _step_files(run_dir)
    # One file for two consecutive lines: the runner overwrote the first screenshot (two actions of one
    # prediction within the same second share step_{n}_{%Y%m%d@%H%M%S}.png; runners writing step_{n}.png
    # overwrite it per action). The file shows the state after the later action only.
    posts = [_find_frame(run_dir, d, files) for _, d in entries]
    overwritten = [p is not None and i + 1 < len(posts) and posts[i + 1] == p for i, p in enumerate(posts)]
    steps: list[Step] = []
    prev = "step_0.png" if (run_dir / "step_0.png").is_file() else None
    for i, (lineno, d) in enumerate(entries, start=1):
        action = _action(d.get("action"), lineno, problems)
        post = posts[i - 1]
        if overwritten[i - 1]:
            problems.warn(Slug.SCREENSHOT_OVERWRITTEN, f"{post} is also the screenshot of the next line: the runner "
                          "overwrote this action's screenshot", line=lineno, field="screenshot_file",
                          hint="the step is scored without its post frame; the next step is compared with the "
                               "frame before this one")
            post = None
        elif post is None:
            problems.warn(Slug.SCREENSHOT_MISSING, f"no screenshot for step_num {d.get('step_num')!r} (named "
                          f"{d.get('screenshot_file')!r})", line=lineno, field="screenshot_file",
                          hint="the step is scored without its post frame")
        reasoning = d.get("response") if isinstance(d.get("response"), str) else None
        if reasoning is None and isinstance(d.get("natural_language_action"), str):
            reasoning = d["natural_language_action"]
        extra: dict[str, Any] = {k: d[k] for k in ("step_num", "action_timestamp", "reward", "done", "info",
                                                   "action_index", "step_info", "natural_language_action") if k in d}
        steps.append(Step(index=i, action=action, reasoning=reasoning, frame_pre=prev, frame_post=post,
                          extra=extra, source=TRAJ, line=lineno))
        prev = post if post is not None else prev
    return steps, prev


# --- outcome ----------------------------------------------------------------------------------------------

def _status(steps: list[Step], error: str | None) -> str:
    """The last DONE or FAIL decides; a crashed task is an error (the runner failed, not the agent); else the
    run stopped at its step limit, as far as the folder says."""
    status = "max_steps"
    for s in steps:
        if s.action.type == "DONE":
            status = "done"
        elif s.action.type == "FAIL":
            status = "failed"
    return "error" if error is not None else status


def _score(run_dir: Path, problems: Problems) -> float | None:
    """The evaluator's score from result.txt (a warning when it is not a number)."""
    if not (run_dir / RESULT).is_file():
        return None
    raw = read_text_file(run_dir / RESULT, run=problems.run, rel=RESULT, problems=[], limit=4096)
    if raw is None:
        return None
    raw = raw.strip()
    try:
        return float(raw)
    except ValueError:
        problems.warn(Slug.SCORE_NOT_A_NUMBER, f"result.txt holds {raw[:40]!r}, not a number", file=RESULT,
                      hint="the score is left empty")
        return None


def read_osworld(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one OSWorld example folder (see the module's docstring and :data:`DOC`)."""
    problems = Problems(display, TRAJ)
    entries, error = _parse(run_dir, problems)
    steps, last_seen = _align(run_dir, entries, problems)
    status = _status(steps, error)
    score = _score(run_dir, problems)
    # the folder path says the rest: <action_space>/<observation_type>/<model>/<domain>/<example_id>
    parts = Path(display).parts
    domain = parts[-2] if len(parts) >= 2 else None
    model = parts[-3] if len(parts) >= 3 else None
    config: dict[str, Any] = {}
    if len(parts) >= 5:
        config = {"action_space": parts[-5], "observation_type": parts[-4]}
    # pyautogui coordinates are screen pixels: the screen is the first frame's size
    first = next((s.frame_post or s.frame_pre for s in steps if s.frame_post or s.frame_pre), last_seen)
    size = image_size(run_dir / first) if first else None
    extra_run: dict[str, Any] = {"domain": domain} if domain else {}
    if error is not None:
        extra_run["error"] = error
    run = Run(run_id=display, path=display, source_format=NAME, steps=tuple(steps), task_id=run_dir.name,
              agent_name="OSWorld", agent_model=model, config=config, screen_width=size[0] if size else None,
              screen_height=size[1] if size else None, outcome_status=status, outcome_score=score, extra=extra_run)
    return run, problems.warnings()


DOC = FormatDoc(
    ends=("OSWorld's `lib_run_single.run_single_example` loops until the environment reports done, which it "
          "does for the agent's `DONE` or `FAIL`, or until `max_steps`; a crash or time-out leaves the "
          '`{"Error"}` sentinel. The evaluator runs after the loop, never to stop it, so a run without '
          '`DONE`/`FAIL` was cut off.'),
    title="OSWorld",
    claims=("A run is an OSWorld result folder, "
            "`results/<action_space>/<observation_type>/<model>/<domain>/<example_id>/`, as "
            "`lib_run_single.run_single_example` writes it: one `traj.jsonl` line per action, the "
            "screenshot after each action as `step_{n}_{%Y%m%d@%H%M%S}.png`, and `result.txt` with the "
            "evaluator's score."),
    example=("trajcheck score results/ --out LEDGER      # every example folder under results/\n"
             "trajcheck formats osworld"),
    tables=(
        Table(head=("OSWorld", "trajcheck"), rows=(
            ("folder path below the argument",
             ("`run_id`; `task_id` = example id; `agent.model` = the model folder; `config` {action_space, "
              "observation_type}; `extra.domain`")),
            ("`traj.jsonl` line k",
             ("step k, in file order (several actions of one prediction share a `step_num`; it is kept in "
              "`extra.step_num` with `action_timestamp`, `reward`, `done`, `info`)")),
            ("`action` pyautogui code",
             ("parsed with `ast`, never run: `click` CLICK, `doubleClick` or `click(clicks=2)` "
              "DOUBLE_CLICK, `rightClick` or `click(button='right')` RIGHT_CLICK, `dragTo` DRAG "
              "(`extra.from` = a preceding `moveTo`), `scroll` SCROLL (`extra.clicks`), `press`/`hotkey` "
              "KEY_PRESS (`ctrl+s`), `typewrite`/`write` TYPE; literal x, y only, positional or `x=`/`y=` "
              "(a computed coordinate gives no point, and so does a bare `click()`); the step's action is "
              "the first call that is not a pointer move, and `moveTo(x, y)` before a coordinate-less "
              "`click()`/`scroll()` gives it x, y (`extra.point_from = moveTo`); code that only moves is "
              "MOVE; the code in `extra.raw`, every call in `extra.calls`; code with no pyautogui call is "
              "`UNKNOWN` (warning `action_unparsed`)")),
            ("`typewrite('q'); press('enter')` in one action",
             "KEY_PRESS `enter` with `text` = 'q' (the submit is what the perceptual check needs)"),
            ("`DONE` / `FAIL` / `WAIT`", "DONE (outcome done) / FAIL (outcome failed) / WAIT"),
            ("`computer_13` dict `{action_type, x, y, ...}`",
             "the same types (TYPING as TYPE, PRESS/HOTKEY as KEY_PRESS)"),
            ("`response` / `natural_language_action`", "`reasoning`"),
            ("`screenshot_file`",
             ("`frames.post`; when the named file does not exist, the step's file whose name holds the "
              "timestamp (runners that add microseconds), else the one named with `action_index` "
              "(`step_{n}_{action_index}_{ts}.png`), else the step's only file (`step_{n}.png`); "
              "`frames.pre` = the previous step's post, `step_0.png` for the first when present")),
            ("one file for two consecutive lines",
             ("the runner overwrote the first screenshot (two actions in one second share "
              "`step_{n}_{%Y%m%d@%H%M%S}.png`; `step_{n}.png` runners overwrite per action): the earlier "
              "step has no post frame (warning `screenshot_overwritten`), the later one is compared with "
              "the frame before the earlier one, never with itself")),
            ('`{"Error": ...}` line',
             "outcome `error`; `extra.error`"),
            ("`result.txt` (the OSWorld evaluator's score)",
             ("`outcome.score`: the evaluator verdict source (partial credit: lower `score "
              "--evaluator-pass`)")),
        )),
    ),
    notes=(
        "Screen size is the first frame's size; pyautogui coordinates are screen pixels.",
    ),
    lost=(
        ("No URLs, DOM or accessibility trees per step (OSWorld keeps them only in the agent's own logs), "
         "so the observation verifier has frames only."),
        ("Runners without `response` record no agent text: high-risk clicks cannot be found by keyword, "
         "only Enter presses."),
        "`recording.mp4`, `runtime.log` and the agent's own files are not read.",
        ("No tokens, cost or `wall_seconds`: `action_timestamp` is to the second and is taken after the model "
         "answered, before the action ran, so the time between two is one action and the next model call, "
         "not one step's."),
        ("A run that stopped at `max_steps` and one whose runner stopped for another reason without an "
         "`Error` line look the same (`max_steps`)."),
        ('A crashed task (`{"Error": ...}` line) has outcome `error`, not `failed`: the runner failed, not '
         "the agent (the same as the other readers' runner errors)."),
        ("One action per step: code with several calls is judged as its first non-move call (`typewrite` + "
         "`press('enter')` as the Enter); the other calls are only named in `extra.calls`. A missing "
         "screenshot makes the next step compare with the frame before the missing one."),
    ),
    bad_input=("a `traj.jsonl` line that is not JSON (a truncated last line) makes the run invalid with "
               "`traj.jsonl:<line>` (`json_invalid`); a step without its screenshot is a warning on its "
               "line (`screenshot_missing`); an action with no pyautogui call or unparseable code is "
               "`UNKNOWN` with the code in `extra.raw` (warning `action_unparsed`); a `result.txt` that is "
               "not a number is a warning and no score."),
    fixtures=("The test fixture was constructed by following that writer code, with real Chromium "
              "screenshots (`tests/fixtures/osworld/README.md`), not recorded by OSWorld; "
              "`tests/fixtures/real/osworld` holds a `traj.jsonl` OSWorld's runner wrote (an o3 rollout of "
              "OSWorld-Verified, MIT), without its screenshots, with its provenance."),
    brief=("a result folder `<action_space>/<observation_type>/<model>/<domain>/<example_id>/` with `traj.jsonl`, "
           "`step_{n}_{timestamp}.png`, `result.txt`",
           "pyautogui code parsed with `ast` (never run): click/doubleClick/rightClick/press/hotkey/typewrite/"
           "scroll with screen coordinates; `DONE`/`FAIL`/`WAIT`; `computer_13` dicts",
           "no DOM or URLs; agent text only where the runner adds `response`; `typewrite(...); press('enter')` "
           "becomes one Enter step with the text kept"),
)


READER = Reader(
    name=NAME,
    claims=lambda p: claims_plain_dir(p, TRAJ),
    claim=by_names(TRAJ),
    read=read_osworld,
    summary="OSWorld result directory: traj.jsonl (pyautogui code actions, parsed with ast), "
            "step_{n}_{timestamp}.png screenshots, result.txt",
    ends="answer",  # how the harness ends a run: DOC.ends says why
    doc=DOC,
)
