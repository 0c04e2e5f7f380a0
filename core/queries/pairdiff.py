"""Two runs of one task side by side (``trajcheck diff``): their steps aligned, and where they diverge.

    import trajcheck

    d = trajcheck.diff("ledger/", "consent-overlay-off", "consent-overlay-on")
    d = trajcheck.diff("ledger/", task="newsletter-subscribe", by="config.perceptual_verifier")
    d.to_json()["first_divergence"]   # {"pair": 2, "step_a": 2, "step_b": 2, "reason": "different_action", ...}

With ``task`` and ``by``, one run is taken from each of two arms of ``by`` for the task: A from the
``baseline`` arm (default: the first by name, as ``compare`` takes it), B from ``arm`` (default: the only
other one). When an arm has several runs of the task, ``pick`` chooses, and the result says which and why:

- ``first`` (default): the pair ``compare`` pairs: the lowest trial both arms ran, the first run of it by
  run_id in each; without a shared trial, each arm's first by trial, then run_id;
- ``best``: each arm's best rollout as ``best-of`` ranks them (verdict, reward, fewer steps, run_id);
- a trial number: that trial in both arms.

The alignment itself is pure: :mod:`trajcheck.analyzers.alignment`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, NoReturn, Sequence
from urllib.parse import urlsplit

from ..store import ledger
from .views import one_run
from ..analyzers.alignment import DEFAULTS, AlignOptions, Pair, Screen, StepSig, align, explain, first_divergence
from ..base.errors import UsageError
from .views import action_label, group_expr, rank_key

#: The step columns a diff reads (the report passes whole rows, which hold them).
#: A step's action as plain values, in the ledger's columns (``diff --format json`` and ``csv``).
ACTION_COLUMNS = ("action_type", "action_x", "action_y", "action_keys", "action_text", "action_url")
STEP_COLUMNS = ("step_index", "action_type", "action_x", "action_y", "action_keys", "action_text", "action_url",
                "action_extra", "frame_pre_phash", "frame_post_phash", "frame_width", "frame_height", "url_before",
                "url_after", "state_id", "state_kind", "state_returns_to", "effect_high_risk",
                "action_effect_observed", "effect_reason", "effect_feedback", "recorded_feedback", "reward_score",
                "reward_class")
RUN_COLUMNS = ("run_id", "task_id", "trial", "screen_width", "screen_height", "n_steps", "eval_final_verdict",
               "verdict_source", "claimed_success", "false_claim", "reward_total", "outcome_status")
#: The screen a run's points are measured against when it records no size (neither its screen nor frames).
DEFAULT_SCREEN = (1280, 800)
#: The ways of choosing a run in an arm with several runs of the task (or a trial number).
PICKS = ("first", "best")


@dataclass(frozen=True)
class Side:
    """One run of the pair: its row, its step rows by step index, its arm (the value of ``by``), and why it
    was chosen (None when it was named)."""

    run: dict[str, Any]
    steps: dict[int, dict[str, Any]]
    arm: str | None = None
    picked: str | None = None

    def to_json(self) -> dict[str, Any]:
        r = self.run
        return {"run_id": r["run_id"], "task_id": r["task_id"], "trial": r["trial"], "arm": self.arm,
                "verdict": r["eval_final_verdict"], "verdict_source": r["verdict_source"],
                "claimed_success": r["claimed_success"], "false_claim": r["false_claim"], "n_steps": r["n_steps"],
                "picked": self.picked}


@dataclass(frozen=True)
class PairDiff:
    """Two runs aligned: the pairs of steps (:class:`~trajcheck.analyzers.alignment.Pair`, in order) and the
    position of the first that does not match (None: the runs agree throughout)."""

    a: Side
    b: Side
    pairs: list[Pair]
    divergence: int | None
    by: str | None = None
    task: str | None = None
    pick: str | None = None
    options: AlignOptions = field(default_factory=AlignOptions)

    @property
    def first(self) -> Pair | None:
        """The first pair that does not match."""
        return None if self.divergence is None else self.pairs[self.divergence]

    def why(self) -> str | None:
        """The first divergence in a sentence."""
        return None if self.first is None else explain(self.first)

    def to_json(self) -> dict[str, Any]:
        first = self.first
        return {"a": self.a.to_json(), "b": self.b.to_json(), "by": self.by, "task": self.task, "pick": self.pick,
                "first_divergence": None if first is None or self.divergence is None else {
                    "pair": self.divergence + 1, "step_a": first.a.index if first.a else None,
                    "step_b": first.b.index if first.b else None, "reason": str(first.match), "why": self.why()},
                "pairs": [pair_json(i, p, self.a, self.b) for i, p in enumerate(self.pairs)],
                "options": {"screen_max": self.options.screen_max, "point_tolerance": self.options.point_tolerance}}


def pair_json(i: int, p: Pair, a: Side, b: Side) -> dict[str, Any]:
    """One aligned pair as plain data: its number (from 1), each run's step (None where it has none)."""
    return {"pair": i + 1, "match": str(p.match),
            "a": None if p.a is None else step_json(a.steps[p.a.index]),
            "b": None if p.b is None else step_json(b.steps[p.b.index]),
            "action": p.action, "screen_before": p.before.word, "screen_before_distance": p.before.distance,
            "screen_after": p.after.word, "screen_after_distance": p.after.distance}


def step_json(s: dict[str, Any]) -> dict[str, Any]:
    """A step of a pair: its action (its type and point, keys, text or URL: plain values; ``action_label``
    of trajcheck.queries.views reads them as ``CLICK (640, 316)``), its screens and state, and its verdict hint
    (the WARNING trajcheck computes, ``hint``, and the feedback the runner recorded, ``shown``)."""
    return {"step_index": s["step_index"], **{k: s[k] for k in ACTION_COLUMNS},
            "frame_pre_phash": s["frame_pre_phash"], "frame_post_phash": s["frame_post_phash"],
            "state_id": s["state_id"], "state_kind": s["state_kind"], "effect_observed": s["action_effect_observed"],
            "effect_reason": s["effect_reason"], "hint": s["effect_feedback"], "shown": s["recorded_feedback"],
            "reward_class": s["reward_class"]}


def _page(url: str | None) -> str | None:
    """The page a URL shows, across runs: its path. Not the host: runs of one task in two arms often ran
    against two instances of the site (another port); not the query: it often carries a session id."""
    if not url:
        return None
    try:
        return urlsplit(url).path or "/"
    except ValueError:  # an unparsable URL: as recorded, up to its query
        return url.split("?", 1)[0].split("#", 1)[0]


def _hash(text: str | None) -> int | None:
    """A pHash's bits from its hex (as Hash64.from_hex reads it), None for anything but 16 hex digits."""
    if not text or len(text) != 16:
        return None
    try:
        return int(text, 16)
    except ValueError:  # not hex (a ledger written by hand): no frame to compare
        return None


def _scroll(s: dict[str, Any]) -> str | None:
    """A scroll's direction (down, up, left, right) from its recorded extra, None when it records none."""
    try:
        extra = json.loads(s["action_extra"]) if s["action_extra"] else {}
    except ValueError:
        return None
    if not isinstance(extra, dict):
        return None
    if isinstance(extra.get("direction"), str):
        return str(extra["direction"]).lower()
    for key, neg, pos in (("dy", "up", "down"), ("scroll_y", "up", "down"), ("dx", "left", "right"),
                          ("scroll_x", "left", "right")):
        v = extra.get(key)
        if isinstance(v, (int, float)) and v:
            return pos if v > 0 else neg
    return None


def signature(s: dict[str, Any], screen: tuple[Any, Any]) -> StepSig:
    """What the alignment compares of a step row: its action (the point as shares of ``screen``, else of the
    frame, else of :data:`DEFAULT_SCREEN`) and its frames."""
    kind = str(s["action_type"] or "?")
    target = None
    if s["action_keys"]:
        target = "keys:" + str(s["action_keys"]).lower().replace(" ", "")
    elif s["action_text"] is not None:
        target = "text:" + str(s["action_text"]).strip()
    elif s["action_url"]:
        target = "url:" + str(s["action_url"])
    elif kind == "SCROLL":
        target = _scroll(s)
    point = None
    if s["action_x"] is not None and s["action_y"] is not None:
        w, h = screen if screen[0] and screen[1] else (s["frame_width"], s["frame_height"])
        w, h = (w, h) if w and h else DEFAULT_SCREEN
        point = (float(s["action_x"]) / w, float(s["action_y"]) / h)
    return StepSig(int(s["step_index"]), kind, target, point,
                   Screen(_hash(s["frame_pre_phash"]), _page(s["url_before"])),
                   Screen(_hash(s["frame_post_phash"]), _page(s["url_after"])), action_label(s))


def align_runs(run_a: dict[str, Any], steps_a: Sequence[dict[str, Any]], run_b: dict[str, Any],
               steps_b: Sequence[dict[str, Any]], options: AlignOptions = DEFAULTS
               ) -> tuple[list[Pair], int | None]:
    """Two runs' step rows (in order) aligned; the position of the first divergence."""
    sa = [signature(s, (run_a.get("screen_width"), run_a.get("screen_height"))) for s in steps_a]
    sb = [signature(s, (run_b.get("screen_width"), run_b.get("screen_height"))) for s in steps_b]
    pairs = align(sa, sb, options)
    return pairs, first_divergence(pairs)


@dataclass(frozen=True)
class Picked:
    """A run chosen from an arm: its id, the arm, and why it (of ``candidates`` runs of the task there)."""

    run_id: str
    arm: str
    candidates: int
    why: str


def _first(rows: list[dict[str, Any]], other: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    trials = sorted({r["trial"] for r in rows} & {r["trial"] for r in other}, key=lambda t: -1 if t is None else t)
    if trials:
        t = trials[0]
        run = min((r for r in rows if r["trial"] == t), key=lambda r: r["run_id"])
        return run, ("the pair compare makes: " + ("no trial recorded" if t is None else f"trial {t}, the lowest "
                                                    "both arms ran") + ", first by run_id")
    run = min(rows, key=lambda r: (r["trial"] is None, r["trial"] or 0, r["run_id"]))
    return run, "no trial both arms ran: first by trial, then run_id"


def _pick(rows: list[dict[str, Any]], other: list[dict[str, Any]], pick: str, arm: str, task: str) -> Picked:
    """One run of ``rows`` (an arm's runs of the task) by ``pick``; ``other`` is the other arm's."""
    if len(rows) == 1 and pick in PICKS:
        return Picked(rows[0]["run_id"], arm, 1, "the only run of the task in its arm")
    if pick == "first":
        run, why = _first(rows, other)
    elif pick == "best":
        run = min(rows, key=lambda r: rank_key(r["eval_final_verdict"], r["reward_total"], r["n_steps"], r["run_id"]))
        why = "the best as best-of ranks them: verdict, then reward, then fewer steps, then run_id"
    else:
        found = sorted((r for r in rows if str(r["trial"]) == pick), key=lambda r: r["run_id"])
        if not found:
            trials = sorted({"none recorded" if r["trial"] is None else str(r["trial"]) for r in rows})
            raise UsageError(f"--pick {pick}: arm {arm} has no run of task {task!r} with that trial; its trials: "
                             f"{', '.join(trials)}")
        run, why = found[0], f"trial {pick}" + (", first by run_id" if len(found) > 1 else "")
    return Picked(run["run_id"], arm, len(rows), why)


def _check_pick(pick: str | int) -> str:
    text = str(pick)
    if text not in PICKS and not text.lstrip("-").isdigit():
        raise UsageError(f"--pick {pick}: give {', '.join(PICKS)} or a trial number")
    return text


def _arm_runs(con: Any, by: str, task: str | None) -> list[dict[str, Any]]:
    """The scored runs with a task (of ``task`` only, if given) and a value of ``by``: task, run, trial, arm,
    and what best-of ranks by."""
    cols = ("task_id", "run_id", "trial", "eval_final_verdict", "reward_total", "n_steps")
    try:
        cur = con.execute(f"select {', '.join(cols)}, CAST({group_expr(by)} AS VARCHAR) from runs where "
                          "status = 'ok' and task_id is not null" + (" and task_id = ?" if task is not None else "")
                          + " order by task_id, run_id", [task] if task is not None else [])
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001  (duckdb binder error: unknown column)
        raise UsageError(f"--by {by}: {str(exc).splitlines()[0]}") from None
    return [dict(zip((*cols, "arm"), r)) for r in cur.fetchall() if r[-1] is not None]


def _arms_of(rows: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    arms: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        arms.setdefault(r["arm"], []).append(r)
    return dict(sorted(arms.items()))


def choose(arms: dict[str, list[dict[str, Any]]], task: str, by: str, pick: str = "first",
           baseline: str | None = None, arm: str | None = None) -> tuple[Picked, Picked]:
    """One run of ``task`` from the ``baseline`` arm and one from ``arm`` (``arms``: each arm's runs of the
    task, by name); UsageError when an arm is missing or ambiguous."""
    names = list(arms)
    if len(names) < 2:
        raise UsageError(f"task {task!r} has runs in {len(names)} arm{'s' * (len(names) != 1)} of {by}"
                         + (f" ({names[0]})" if names else "") + ": a diff needs a run in each of two arms")
    a = baseline if baseline is not None else names[0]
    others = [n for n in names if n != a]
    b = arm if arm is not None else (others[0] if len(others) == 1 else None)
    for given, opt in ((a, "--baseline"), (b, "--arm")):
        if given is not None and given not in arms:
            raise UsageError(f"{opt} {given}: task {task!r} has no run in that arm of {by}; its arms: "
                             f"{', '.join(names)}")
    if b is None:
        raise UsageError(f"task {task!r} has runs in {len(names)} arms of {by} ({', '.join(names)}): name the "
                         "second with --arm")
    if a == b:
        raise UsageError(f"--baseline and --arm are the same arm ({a}): a diff needs two")
    return _pick(arms[a], arms[b], pick, a, task), _pick(arms[b], arms[a], pick, b, task)


def report_pairs(ledger_dir: str | os.PathLike[str], by: str) -> list[tuple[str, Picked, Picked]]:
    """For the report: every task with runs in two arms of ``by``, and its pair (the baseline arm, the first
    by name, against each other arm; ``pick`` first), by task."""
    con = ledger.connect(ledger_dir)
    try:
        rows = _arm_runs(con, by, None)
    finally:
        con.close()
    tasks: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        tasks.setdefault(r["task_id"], []).append(r)
    out = []
    for task, runs in sorted(tasks.items()):
        arms = _arms_of(runs)
        for other in list(arms)[1:]:
            out.append((task, *choose(arms, task, by, "first", None, other)))
    return out


def _side(con: Any, run_id: str, arm: str | None = None, picked: str | None = None) -> Side:
    row = one_run(con, run_id, RUN_COLUMNS)
    steps = con.execute(f"select {', '.join(STEP_COLUMNS)} from steps where run_id = ? order by step_index",
                        [run_id]).fetchall()
    return Side(dict(zip(RUN_COLUMNS, row)), {int(s[0]): dict(zip(STEP_COLUMNS, s)) for s in steps}, arm, picked)


def _arm_of(con: Any, by: str, run_id: str) -> str | None:
    try:
        row = con.execute(f"select CAST({group_expr(by)} AS VARCHAR) from runs where run_id = ?", [run_id]).fetchone()
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001  (duckdb binder error: unknown column)
        raise UsageError(f"--by {by}: {str(exc).splitlines()[0]}") from None
    return None if row is None else row[0]


def _no_task(con: Any, task: str, by: str) -> NoReturn:
    """Say why the task has no run to diff: the ledger has none of it (and which tasks look like it), or none
    of its runs has a value of ``by``."""
    if con.execute("select count(*) from runs where task_id = ? and status = 'ok'", [task]).fetchone()[0]:
        raise UsageError(f"no scored run of task {task!r} has a value of {by}: it names no arm")
    near = [r[0] for r in con.execute("select distinct task_id from runs where task_id ilike ? order by 1 limit 5",
                                      [f"%{task}%"]).fetchall()]
    raise UsageError(f"no scored run of task {task!r} in the ledger" + (f"; did you mean {', '.join(near)}?" if near
                                                                       else ""))


def diff(ledger_dir: str | os.PathLike[str], run_a: str | None = None, run_b: str | None = None, *,
         task: str | None = None, by: str | None = None, pick: str | int = "first", baseline: str | None = None,
         arm: str | None = None, options: AlignOptions = DEFAULTS) -> PairDiff:
    """Two runs aligned step by step: ``run_a`` and ``run_b``, or with ``task`` and ``by`` one run of the task
    from each of two arms (see the module docstring). UsageError for a run, task or arm the ledger lacks."""
    if (run_a is None) != (run_b is None):
        raise UsageError("give two runs (RUN_A RUN_B), or --task and --by")
    if run_a is not None and task is not None:
        raise UsageError("give two runs (RUN_A RUN_B) or --task with --by, not both")
    if run_a is None and (task is None or by is None):
        raise UsageError("give two runs (RUN_A RUN_B), or --task T with --by config.KEY")
    how = _check_pick(pick)
    con = ledger.connect(ledger_dir)
    try:
        if run_a is not None and run_b is not None:
            arms = (None, None) if by is None else (_arm_of(con, by, run_a), _arm_of(con, by, run_b))
            a, b = _side(con, run_a, arms[0]), _side(con, run_b, arms[1])
            how_shown = None
        else:
            assert task is not None and by is not None  # checked above
            found = _arm_runs(con, by, task)
            if not found:
                _no_task(con, task, by)
            pa, pb = choose(_arms_of(found), task, by, how, baseline, arm)
            a, b = (_side(con, p.run_id, p.arm, p.why + (f" (of {p.candidates} runs)" if p.candidates > 1 else ""))
                    for p in (pa, pb))
            how_shown = how
    finally:
        con.close()
    pairs, first = align_runs(a.run, list(a.steps.values()), b.run, list(b.steps.values()), options)
    return PairDiff(a, b, pairs, first, by, task, how_shown, options)
