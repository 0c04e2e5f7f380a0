"""Reading one run through a mapping (:func:`read_mapped`): its steps from the log's shape, each step's action
(by fields, a value map and an action grammar), screenshots, coordinate space and recorded outcome."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from ..adapters.anthropic import actions as anthropic_actions
from ..adapters.osworld import actions as osworld_actions
from ..adapters.ui_tars import actions as ui_tars_actions
from ..kit import coords
from ..kit.reading import Frames, num, raise_errors, read_text_file, safe_join
from ..kit.screenshots import frame_size
from ..kit.usage import amount, count, elapsed, seconds_of
from .extras import number, page_urls, run_spend, scroll_of, target_of
from .grammars import parse_all
from .images import ImageMap
from .notes import from_path, slow_fields, unmatched
from . import text as textlog
from .schema import MAX_LOG_BYTES, Mapping, _load, action_key
from .stops import HARNESS_STOP, harness_stops
from .steps import (Rec, chat_records, context, from_lines, glob_images, image_file, members, next_numbered, plain_twin,
                    template_frames)
from ...base.errors import Problem, RunFormatError
from ...base.inputs import exists_not_dir
from ...base.problems import Slug
from ...schemas.records import KNOWN_ACTION_TYPES, Action, Page, Run, Step, Usage

#: Every action type trajcheck's readers produce: a log's name that upper-cases to one of them is understood.
UNDERSTOOD = frozenset(KNOWN_ACTION_TYPES | set(ui_tars_actions.KINDS.values())
                       | set(osworld_actions.PYAUTOGUI.values()) | set(osworld_actions.COMPUTER_13.values())
                       | set(anthropic_actions.CLICKS.values()) | {HARNESS_STOP}
                       | {"READ", "TOOL", "FAIL", "ANSWER", "MOVE", "TRIPLE_CLICK", "KEY_DOWN"}) - {"UNKNOWN"}


def _str(v: Any) -> str | None:
    return None if v is None else v if isinstance(v, str) else str(v)


def _spent(m: Mapping, recs: list[Rec], model: str | None) -> list[tuple[Usage | None, float | None]]:
    """Each step's usage and seconds: ``wall_seconds`` as given, else the time since the previous step's
    ``timestamp``."""
    times = [seconds_of(m.get("step.timestamp", r.value, r.ctx)) for r in recs]
    out: list[tuple[Usage | None, float | None]] = []
    for i, r in enumerate(recs):
        def get(key: str, s: Any = r.value, c: dict[str, Any] = r.ctx) -> Any:  # "12" (a CSV cell) is a number
            return number(m.get("step." + key, s, c))

        u = Usage(count(get("tokens_input")), count(get("tokens_output")), count(get("tokens_cached")),
                  count(get("tokens_reasoning")), amount(get("cost_usd")), model)
        seconds = amount(get("wall_seconds"))
        if seconds is None and i:
            seconds = elapsed(times[i - 1], times[i])
        out.append((None if u.empty else u, seconds))
    return out


def _of_value(m: Mapping, value: Any, folder: str, stem: str | None, start: int) -> list[Rec]:
    """The steps one parsed log (or step file) holds: a list, an object's members, or a chat's turns."""
    got = m.steps_in(value)
    if m.chat and isinstance(got, list) and m.chat_image is not None:
        recs = chat_records(got, lambda msg: _str(m.chat_role.value(msg)), m.chat_steps, m.chat_image, folder)
        for i, r in enumerate(recs):
            r.ctx.update(index=start + i, index1=start + i + 1, n=start + i + 1)
        return recs
    pairs = members(got, m.members) if isinstance(got, dict) else [(None, v) for v in got or []]
    return [Rec(v, context(start + i, k, stem, v), folder) for i, (k, v) in enumerate(pairs)]


def _records(m: Mapping, run_dir: Path, run_name: str, problems: list[Problem]) -> tuple[str, Any, list[Rec]]:
    """The log's name, the value the run fields are read from, and the steps: one log (JSON, or a text log read
    line by line), or one file per step (``[run] step_files``)."""
    if m.step_files is None:
        log = m.log_of(run_dir)
        rel = log.name if log else m.files
        text = read_text_file(run_dir / rel, run=run_name, rel=rel, problems=problems, limit=MAX_LOG_BYTES)
        if m.lines is not None or m.blocks is not None:
            raise_errors(problems, run_name)
            body = textlog.text_of(rel, text or "")  # an HTML log: its text, images as ![alt](src) lines
            found = from_lines(body, m.lines) if m.lines is not None else _blocks(m, body, run_name, rel)
            return rel, {"text": body}, [Rec(v, context(i, None, None, v), "", line=no)
                                         for i, (v, no) in enumerate(found)]
        value = _load(text, rel, run_name, problems) if text is not None else None
        raise_errors(problems, run_name)
        return rel, value, _of_value(m, value, "", None, 0)
    first: Any = None
    out: list[Rec] = []
    files = m.step_paths(run_dir)
    for path in files:
        rel = path.relative_to(run_dir).as_posix()
        text = read_text_file(path, run=run_name, rel=rel, problems=problems, limit=MAX_LOG_BYTES)
        value = _load(text, rel, run_name, problems) if text is not None else None
        if value is None:
            continue
        first = value if first is None else first
        folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        got = _of_value(m, value, folder, path.name.rsplit(".", 1)[0], len(out))
        shot = _str(m.get("step.screenshot", value)) if not got and out and m.pre else None
        if shot and out[-1].post is None and len(shot) < 4096:
            out[-1].post = shot if shot.startswith(("/", "data:")) else folder + shot  # a file with no step (a
            # judging call) still shows the screen after the step before it
        out += got
    raise_errors(problems, run_name)
    return (files[0].relative_to(run_dir).as_posix() if files else m.step_files), first, out


def _blocks(m: Mapping, body: str, run_name: str, rel: str) -> list[tuple[dict[str, Any], int]]:
    """The steps of ``[run] blocks`` over a text log; a pattern past its time limit ends the read."""
    try:
        return textlog.blocks(body, m.blocks)
    except textlog.BlockTimeout as exc:
        raise RunFormatError([Problem(Slug.MAPPING_MATCHES_NOTHING, str(exc), run=run_name, file=rel,
                                      field="run.blocks", hint=f"rewrite [run] blocks of {m.path.name}")]) from None


def _frames(m: Mapping, run_dir: Path, recs: list[Rec], frames: Frames, problems: list[Problem],
            imgs: ImageMap) -> tuple[list[str | None], list[str | None]]:
    """Each step's pre and post frame: the ``screenshot`` field (an id of ``[run] images``, or the image), with
    ``screenshot_after``, the chat's images, the templates or the glob."""
    n = len(recs)
    shots: list[str | None] = [None] * n
    for i, r in enumerate(recs):
        shot = _str(m.get("step.screenshot", r.value, r.ctx))
        shots[i] = imgs.frame(shot, frames, f"steps[{i}].screenshot", r.folder) if shot else None
    if m.shot_file is not None or m.shot_after is not None:
        pres, posts, missing = template_frames(run_dir, recs, m.shot_file, m.shot_after, m.pre, m.shot_offset)
        if missing:
            problems.append(Problem(Slug.FRAMES_MISSING, f"{len(missing)} screenshot(s) the mapping names are not "
                                    f"files in the run (first: {missing[0]!r})", run=frames.run, file=frames.rel,
                                    field="step.screenshot_file", severity="warning",
                                    hint="the steps around them are not checked; check the template"))
        return [frames.from_path(p, "step.screenshot_file") if p else shots[i] for i, p in enumerate(pres)], \
            [frames.from_path(p, "step.screenshot_after_file") if p else None for p in posts]
    if m.shot_glob is not None:
        found = glob_images(run_dir, m.shot_glob)
        for i in range(n):
            j = i + m.shot_offset
            if shots[i] is None and 0 <= j < len(found):
                shots[i] = found[j]
        extra = found[n + m.shot_offset] if m.pre and 0 <= n + m.shot_offset < len(found) else None
        return _paired(shots, m.pre, extra)
    if m.chat:
        seen: dict[str, str | None] = {}  # an image is one frame, whichever steps use it

        def one(img: str | None, field: str, r: Rec) -> str | None:
            if img and img not in seen:
                seen[img] = frames.from_any(image_file(run_dir, r.folder, img, m.chat_image_file), field)
            return seen[img] if img else None
        return [one(r.pre, "chat.image", r) or shots[i] for i, r in enumerate(recs)], \
            [one(r.post, "chat.image", r) for r in recs]
    shots = [plain_twin(run_dir, s) if s and s not in frames.inline else s for s in shots]
    if m.shot_offset:
        shots = _shifted(run_dir, shots, m.shot_offset, frames.inline)
    last = shots[-1] if shots and m.pre else None
    pres, posts = _paired(shots, m.pre, next_numbered(run_dir, last) if last and last not in frames.inline else None)
    for i, r in enumerate(recs):
        if r.post is not None and m.step_files is not None:
            posts[i] = frames.from_any(r.post, f"steps[{i}].screenshot") or posts[i]
        after = _str(m.get("step.screenshot_after", r.value, r.ctx))  # the screen after, where the step names it
        if after:
            posts[i] = imgs.frame(after, frames, f"steps[{i}].screenshot_after", r.folder) or posts[i]
    return pres, posts


def _shifted(run_dir: Path, shots: list[str | None], offset: int, inline: dict[str, bytes]) -> list[str | None]:
    """``[step] screenshots_offset``: each step's screenshot is the one the step ``offset`` later names (-1: the
    one before names it). Past either end of the named ones, a file named like its neighbour with its last number
    one higher (lower), when it exists: the screens no step names."""
    n = len(shots)
    out = [shots[i + offset] if 0 <= i + offset < n else None for i in range(n)]
    edge = range(max(0, n - offset), n) if offset > 0 else range(min(n, -offset) - 1, -1, -1)
    for i in edge:
        near = out[i - 1] if offset > 0 and i else out[i + 1] if offset < 0 and i + 1 < n else None
        if out[i] is None and near and near not in inline:
            out[i] = next_numbered(run_dir, near, 1 if offset > 0 else -1)
    return out


def _paired(shots: list[str | None], pre: bool, last_post: str | None) -> tuple[list[str | None], list[str | None]]:
    """One screenshot per step as pre and post frames: taken before (``pre``), a step's post is the next one's
    pre (``last_post`` after the last); taken after, a step's pre is the previous one's post."""
    n = len(shots)
    if pre:
        return shots, [shots[i + 1] if i + 1 < n else last_post for i in range(n)]
    return [shots[i - 1] if i else None for i in range(n)], shots


def _action(m: Mapping, r: Rec) -> tuple[list[Action], str | None, str]:
    """A step's actions (one, or each call of a grammar's list; points in the log's space), the thought the grammar
    found, and the log's name for the first."""
    s, c = r.value, r.ctx
    calls: list[Action] = []
    thought = None
    if m.grammar is not None:
        src = m.get("step.action", s, c) if "step.action" in m.fields else \
            (s.get("content_text") if m.chat and isinstance(s, dict) else s)
        calls, thought = parse_all(m.grammar, src)
    parsed = calls[0] if calls else None
    kind = _str(m.get("step.type", s, c))
    if kind is not None:
        kind = kind.strip()
        t = _typed(m, kind) or action_key(kind).upper()
        t = t if t in UNDERSTOOD else "UNKNOWN"
        calls = calls[:1]  # the type field names one action: the step's
    elif parsed is not None:
        parsed, kind = _named(m, parsed)
        t = parsed.type
    else:
        t, kind = "UNKNOWN", ""
    base = parsed or Action(t)

    def get(name: str) -> Any:  # a field, where it applies to this step's type (its ``for``)
        f = m.fields.get("step." + name)
        return None if f is None or (f.only and t not in f.only) else f.value(s, c)

    x, y = num(_number(get("x"))), num(_number(get("y")))
    if x is None or y is None:
        x, y = base.x, base.y
    act = Action(t, x=x, y=y, keys=_str(get("keys")) or base.keys, text=_str(get("text")) or base.text,
                 url=_str(get("url")) or base.url, element=target_of(m, s, c) or base.element,
                 extra={**base.extra, **scroll_of(m, s, c), "log_type": kind})
    more = []
    for a in calls[1:]:
        a, k = _named(m, a)
        more.append(Action(a.type, a.x, a.y, a.keys, a.text, a.url, a.element, {**a.extra, "log_type": k}))
    return [act, *more], thought, kind


def _named(m: Mapping, a: Action) -> tuple[Action, str]:
    """A parsed call and the log's name for it; a call its grammar does not know, typed by ``[step.types]``."""
    kind = str(a.extra.get("tool_action") or a.extra.get("call") or a.type)
    named = _typed(m, kind)
    return (_retyped(a, named) if a.type == "UNKNOWN" and named in UNDERSTOOD else a), kind


def _typed(m: Mapping, kind: str) -> str | None:
    """The type ``[step.types]`` gives a log's action name: as spelt, in lower case, else by its
    :func:`~trajcheck.readers.mapping.schema.action_key` (``stop.`` as ``stop``, ``Click:`` as ``click``)."""
    return m.types.get(kind) or m.types.get(kind.lower()) or m.type_keys.get(action_key(kind))


def _retyped(a: Action, t: str) -> Action:
    """A parsed call of a name its grammar does not know, as the type ``[step.types]`` gives it: its text (a typed
    or opened name) from its first text argument."""
    got = a.extra.get("input")
    content = got.get("content") if isinstance(got, dict) else None
    text = a.text or (str(content) if t in ("TYPE", "NAVIGATE", "DONE") and content else None)
    return Action(t, a.x, a.y, a.keys, text, a.url, a.element, a.extra)


def _number(v: Any) -> Any:
    """A number written as a string (a line's group, ``"251"``) as a float; anything else as is."""
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return None
    return v


def _space(m: Mapping, acts: list[Action], value: Any, model: str | None, shot: tuple[int, int] | None,
           run: str, rel: str) -> tuple[coords.Space, list[Problem]]:
    """The space of the log's points: declared by the mapping (a model space by its scale or size), else
    decided from the points as the built-in readers decide it."""
    width = num(_number(m.get("run.screen_width", value))) or (m.screen[0] if m.screen else None)
    height = num(_number(m.get("run.screen_height", value))) or (m.screen[1] if m.screen else None)
    screen = (int(width), int(height)) if width and height else None
    size = screen or shot
    if m.coordinates == "model":
        if m.model_scale is not None:
            return coords.Space("model", f"declared: model_scale {m.model_scale:g}", size,
                                (m.model_scale, m.model_scale)), []
        assert m.model_size is not None
        if size is None:
            return coords.Space("model", "declared: model_size, no screen size to scale to", None, usable=False), []
        return coords.Space("model", f"declared: model_size {m.model_size[0]:g}x{m.model_size[1]:g}", size,
                            (size[0] / m.model_size[0], size[1] / m.model_size[1])), []
    pts = [a.point for a in acts if a.point is not None]
    if m.grammar == "ui-tars":
        default = "smart-resize" if model and "1.5" in model and "tars" in model.lower() else "relative-1000"
        cands: tuple[str, ...] = ("relative-1000", "smart-resize", "screen", "screenshot")
    else:  # a pixel harness: a relative grid is declared (coordinates = "relative-1000"), never guessed
        default, cands = "screen", ("screen", "screenshot")
    if default == "screen" and screen is None:
        default = "screenshot"
    return coords.decide(pts, default=default, candidates=cands, declared=m.coordinates, screen=screen, shot=shot,
                         run=run, file=rel)


def _goal(m: Mapping, run_dir: Path, value: Any, run_name: str, problems: list[Problem]) -> str | None:
    goal = _str(m.get("run.goal", value))
    if goal or m.goal_file is None:
        return goal
    try:
        names = sorted(p for p in itertools.islice(run_dir.glob(m.goal_file), 1000)
                       if exists_not_dir(p) and safe_join(run_dir, str(p.relative_to(run_dir))) is not None)
    except (OSError, ValueError, NotImplementedError):
        return None
    if not names:
        return None
    text = read_text_file(names[0], run=run_name, rel=names[0].name, problems=problems, limit=1024 * 1024)
    return text.strip() or None if text is not None else None


def _steps(m: Mapping, recs: list[Rec], acts: list[tuple[list[Action], str | None, str]], pres: list[str | None],
           posts: list[str | None], space: coords.Space, spent: list[tuple[Usage | None, float | None]],
           rel: str) -> list[Step]:
    """One trajcheck step per action, numbered from 1 as a native run's (``steps.jsonl``): a log step holding
    several actions gives several, in order, the first with the log step's screen before, the last with its
    screen after, its reasoning and cost on the first."""
    steps: list[Step] = []
    urls = page_urls(m, [(r.value, r.ctx) for r in recs])
    for i, (r, (calls, thought, _kind)) in enumerate(zip(recs, acts)):
        s, c = r.value, r.ctx
        err = _str(m.get("step.error", s, c))
        url, url_after = urls[i]
        n = len(calls)
        for j, a in enumerate(calls):
            x, y = space.convert(a.x, a.y)
            extra = {**a.extra, **r.extra, **({"log_step": i, "action_of": [j + 1, n]} if n > 1 else {})}
            act = Action(a.type, x, y, a.keys, a.text, a.url, a.element, extra)
            steps.append(Step(index=len(steps) + 1, action=act,
                              reasoning=(_str(m.get("step.reasoning", s, c)) or thought) if j == 0 else None,
                              frame_pre=pres[i] if j == 0 else None, frame_post=posts[i] if j == n - 1 else None,
                              executor_ok=None if err is None else False, executor_error=err,
                              page=Page(url_before=url if j == 0 else None, url_after=url_after if j == n - 1
                                        else None) if url or url_after else None,
                              usage=spent[i][0] if j == 0 else None, wall_seconds=spent[i][1] if j == 0 else None,
                              source=rel, line=r.line))
    return steps


def read_mapped(m: Mapping, run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read one run directory through mapping ``m`` (a reader's ``read``). Its run_id is the log's, else its
    path under the folder being scored (``Gmail/2``), so runs in nested folders never share one."""
    run_name = display or run_dir.resolve().name
    problems: list[Problem] = []
    timeouts = {k: f.timeouts for k, f in m.fields.items()}
    rel, value, recs = _records(m, run_dir, run_name, problems)
    if not recs:
        field = "run.lines" if m.lines else "run.blocks" if m.blocks is not None else \
            "run.step_files" if m.step_files is not None else "run.steps"
        raise RunFormatError([Problem(Slug.MAPPING_MATCHES_NOTHING, f"[{field.replace('.', '] ')} of {m.path.name} "
                                      "gives no step here", run=run_name, file=rel, field=field,
                                      hint="check the expression against the log (jmespath.org)")])
    frames = Frames(run_dir, run_name, rel, problems)
    imgs = ImageMap(m.get("run.images", value))
    pres, posts = _frames(m, run_dir, recs, frames, problems, imgs)
    model = _str(m.get("run.model", value))
    acts, stopped = harness_stops(m.harness_stop, recs, [_action(m, r) for r in recs])
    flat = [a for calls, _, _ in acts for a in calls]
    shot = next((sz for f in (*pres, *posts) if f and (sz := frame_size(frames, f))), None)
    space, notes = _space(m, flat, value, model, shot, run_name, rel)
    problems += notes + unmatched(m, recs, [calls[0].type for calls, _, _ in acts], run_name, rel)
    unknown = sorted({str(a.extra.get("log_type") or "(none)") for a in flat if a.type == "UNKNOWN"})
    if unknown:
        n = sum(a.type == "UNKNOWN" for a in flat)
        problems.append(Problem(Slug.ACTION_UNPARSED, f"{n} of {len(flat)} steps have an action the mapping does "
                                f"not map to a trajcheck type: {', '.join(repr(u) for u in unknown[:8])}",
                                run=run_name, file=rel, field="step.type", severity="warning",
                                hint=f"add them to [step.types] of {m.path.name}; they are scored as UNKNOWN"))
    steps = _steps(m, recs, acts, pres, posts, space, _spent(m, recs, model), rel)
    problems += slow_fields(m, timeouts, run_name, rel)
    raise_errors(problems, run_name)
    if m.unsure:  # the draft's evidence did not separate these readings: the run's own verdicts are held
        problems.append(Problem(Slug.READING_UNSURE, f"{m.path.name} marks its {', '.join(m.unsure)} unsure: the "
                                "run gets no verdict from its own evidence", run=run_name, file=rel,
                                field="run.unsure", severity="warning"))
    groups, config = from_path(m, display, value, run_name, rel, problems)
    names = {"folder": run_dir.name, "path": display, "run_id": _str(m.get("run.run_id", value, groups)),
             "task_id": _str(m.get("run.task_id", value, groups)), "goal": _str(m.get("run.goal", value, groups))}
    score, source, joined = m.outcome.score(value, run_dir, names, groups)
    outside = dict(frames.outside)
    if joined is not None:  # the results files it looked in are its input: a changed record rescores it
        outside.update((r, str(p)) for r, p in joined.files if r.startswith("../"))
        if joined.record is None and joined.errors:
            problems.append(Problem(Slug.FILE_UNREADABLE, f"no record of this run in [outcome] file; "
                                    f"{'; '.join(joined.errors[:3])}", run=run_name, file=joined.files[0][0]
                                    if joined.files else "", field="outcome.file", severity="warning",
                                    hint="fix the results file: the run has no recorded outcome"))
    usage, seconds = run_spend(m, value, model)
    last = steps[-1].action
    run = Run(run_id=names["run_id"] or run_name, path=display, source_format=m.name, steps=tuple(steps),
              task_id=names["task_id"], goal=names["goal"] or _goal(m, run_dir, value, run_name, problems),
              agent_model=model, config=config, screen_width=space.screen[0] if space.screen else None,
              screen_height=space.screen[1] if space.screen else None,
              outcome_status="done" if last.type == "DONE" and not last.extra.get("infeasible") else None,
              outcome_score=score, extra={**({"outcome_source": source} if source else {}),
                                          **({"unsure_readings": list(m.unsure)} if m.unsure else {}),
                                          **({"harness_stop": stopped} if stopped else {}),
                                          **({"images_named": imgs.named([r.value for r in recs])}
                                             if imgs.map else {})},
              usage=usage, wall_seconds=seconds,
              coord_space=space.name, coord_space_source=space.how, inline_frames=frames.inline,
              outside_files=outside)
    return run, [p for p in problems if p.severity != "error"]
