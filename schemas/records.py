"""Typed records of the run-directory format trajcheck.run/1.

The JSON Schema files beside this module are the contract; these dataclasses are
what the rest of trajcheck works with once a run has passed that schema. Unknown
properties are kept in ``extra`` so nothing a harness wrote is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from .version import RUN_FORMAT as RUN_FORMAT  # noqa: E402  (re-exported)

#: Action types of format v1. Anything else is accepted and reported as unknown. READ is the agent looking without
#: acting (reading the page, a zoom, the cursor's position): the analyzers count it as an observation, never
#: high-risk (analyzers/reward.py OBSERVATION_TYPES, analyzers/evidence.py NON_ACTING), and readers write it
#: (the Anthropic computer tool's zoom and cursor_position).
KNOWN_ACTION_TYPES = frozenset(
    {"CLICK", "DOUBLE_CLICK", "KEY_PRESS", "TYPE", "SCROLL", "WAIT", "DONE", "NAVIGATE", "READ"}
)


def _pop_extra(data: dict[str, Any], known: set[str]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in known}


@dataclass(frozen=True)
class Action:
    type: str
    x: float | None = None
    y: float | None = None
    keys: str | None = None
    text: str | None = None
    url: str | None = None
    element: str | None = None  # the element the action names (id, selector, harness index), if any
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def known(self) -> bool:
        return self.type in KNOWN_ACTION_TYPES

    @property
    def has_point(self) -> bool:
        return self.x is not None and self.y is not None

    @property
    def point(self) -> tuple[float, float] | None:
        """(x, y) where the action aims, None without one: ``has_point`` that a type checker can follow."""
        return None if self.x is None or self.y is None else (self.x, self.y)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Action":
        known = {"type", "x", "y", "keys", "text", "url", "element"}
        el = d.get("element")
        return cls(
            type=str(d["type"]).upper(),
            x=d.get("x"),
            y=d.get("y"),
            keys=d.get("keys"),
            text=d.get("text"),
            url=d.get("url"),
            element=None if el is None else str(el),
            extra=_pop_extra(d, known),
        )


@dataclass(frozen=True)
class Page:
    url_before: str | None = None
    url_after: str | None = None
    dom_before: str | None = None
    dom_after: str | None = None
    focus_before: str | None = None
    focus_after: str | None = None
    title_before: str | None = None
    title_after: str | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> "Page | None":
        if d is None:
            return None
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Client:
    did_network_occur: bool | None = None
    did_dom_mutate: bool | None = None
    did_url_change: bool | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> "Client | None":
        if d is None:
            return None
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Semantic:
    action_succeeded: bool | None = None
    task_completed: bool | None = None
    confidence: float | None = None
    reason: str | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> "Semantic | None":
        if d is None:
            return None
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__})


def _count(v: Any) -> int | None:
    """A token count as a log writes it: a whole number, 0 or more; None for anything else."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _amount(v: Any) -> float | None:
    """A cost or a duration: a finite number, 0 or more; None for anything else."""
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < float("inf")
    return float(v) if ok else None


def _add(a: Any, b: Any) -> Any:
    """The sum of two figures, where either is known (a figure the log left out adds nothing)."""
    return b if a is None else a if b is None else a + b


@dataclass(frozen=True)
class Usage:
    """What a model call (a step's, or a run's in all) used, as the log records it; None where it does not say.

    ``tokens_input`` counts every input token, those read from a cache included (``tokens_cached`` says how
    many of them were); ``tokens_output`` counts every output token, reasoning included (``tokens_reasoning``
    says how many). ``cost_usd`` is the cost the log recorded, never an estimate; ``model`` the model that
    answered, when the log names it at this level. Two usages add up field by field (``a + b``)."""

    tokens_input: int | None = None
    tokens_output: int | None = None
    tokens_cached: int | None = None
    tokens_reasoning: int | None = None
    cost_usd: float | None = None
    model: str | None = None

    FIGURES = ("tokens_input", "tokens_output", "tokens_cached", "tokens_reasoning", "cost_usd")

    def __add__(self, other: "Usage") -> "Usage":
        model = self.model if self.model == other.model or other.model is None else \
            other.model if self.model is None else None  # two models: the sum is neither's
        return Usage(_add(self.tokens_input, other.tokens_input), _add(self.tokens_output, other.tokens_output),
                     _add(self.tokens_cached, other.tokens_cached), _add(self.tokens_reasoning, other.tokens_reasoning),
                     _add(self.cost_usd, other.cost_usd), model)

    @property
    def empty(self) -> bool:
        """Says nothing: no figure is known."""
        return all(getattr(self, f) is None for f in self.FIGURES)

    @classmethod
    def from_json(cls, d: Any) -> "Usage | None":
        """The native format's ``usage`` object (the ledger's column names); None for anything else."""
        if not isinstance(d, dict):
            return None
        u = cls(_count(d.get("tokens_input")), _count(d.get("tokens_output")), _count(d.get("tokens_cached")),
                _count(d.get("tokens_reasoning")), _amount(d.get("cost_usd")),
                d["model"] if isinstance(d.get("model"), str) and d["model"] else None)
        return None if u.empty and u.model is None else u


@dataclass(frozen=True)
class Step:
    """One step of a run. ``line`` is where it was read (1-based line of steps.jsonl,
    or None for steps/<n>.json), ``source`` the file relative to the run directory."""

    index: int
    action: Action
    reasoning: str | None = None
    frame_pre: str | None = None
    frame_post: str | None = None
    executor_ok: bool | None = None
    executor_error: str | None = None
    page: Page | None = None
    client: Client | None = None
    recorded_effect: bool | None = None
    recorded_feedback: str | None = None
    semantic: Semantic | None = None
    contract_name: str | None = None
    contract_passed: bool | None = None
    predict: str | None = None
    expected: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    source: str = "steps.jsonl"
    line: int | None = None
    #: What the step's model call used (tokens, the recorded cost), and the step's elapsed seconds; None where
    #: the log does not say. A call that issued several actions has its usage on one of them (the readers say
    #: which), so that a run's totals count it once.
    usage: Usage | None = None
    wall_seconds: float | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any], source: str, line: int | None) -> "Step":
        frames = d.get("frames") or {}
        executor = d.get("executor") or {}
        recorded = d.get("recorded") or {}
        contract = d.get("contract") or {}
        known = {
            "index", "action", "reasoning", "frames", "executor", "page", "client",
            "recorded", "semantic", "contract", "predict", "expected", "usage", "wall_seconds",
        }
        return cls(
            index=int(d["index"]),
            action=Action.from_json(d["action"]),
            reasoning=d.get("reasoning"),
            frame_pre=frames.get("pre"),
            frame_post=frames.get("post"),
            executor_ok=executor.get("ok"),
            executor_error=executor.get("error"),
            page=Page.from_json(d.get("page")),
            client=Client.from_json(d.get("client")),
            recorded_effect=recorded.get("action_effect_observed"),
            recorded_feedback=recorded.get("feedback"),
            semantic=Semantic.from_json(d.get("semantic")),
            contract_name=contract.get("name"),
            contract_passed=contract.get("passed"),
            predict=d.get("predict"),
            expected=d.get("expected"),
            usage=Usage.from_json(d.get("usage")),
            wall_seconds=_amount(d.get("wall_seconds")),
            extra=_pop_extra(d, known),
            source=source,
            line=line,
        )


@dataclass(frozen=True)
class RecordedJudge:
    model: str | None = None
    verdict: str | None = None
    score: float | None = None
    confidence: float | None = None
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Run:
    """A run directory read into memory (frames are referenced, not loaded)."""

    run_id: str
    path: str  # the run directory as given on the command line (display only)
    source_format: str
    steps: tuple[Step, ...]
    task_id: str | None = None
    trial: int | None = None
    goal: str | None = None
    agent_name: str | None = None
    agent_model: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    screen_width: int | None = None
    screen_height: int | None = None
    started_at: str | None = None
    outcome_status: str | None = None
    outcome_score: float | None = None
    judge: RecordedJudge | None = None
    reference_answers: tuple[str, ...] = ()
    reference_steps: int | None = None  # the task's reference step count (a human's or the optimal one)
    extra: dict[str, Any] = field(default_factory=dict)
    #: The space the log's action points were in (screen, screenshot, relative-1000, smart-resize) and how
    #: the reader decided it (declared, default, data: ..., ambiguous: ...); the stored points are in the
    #: ``screen`` space whatever it was. None: the reader's format has one space (``screen``).
    coord_space: str | None = None
    coord_space_source: str | None = None
    #: The run's own totals where the log records them for the whole run and not per step (a browser-use
    #: history's usage summary); a total of the steps' figures stands where these are None.
    usage: Usage | None = None
    wall_seconds: float | None = None
    #: Frames carried inside the run's own files (e.g. base64 screenshots), by the name steps use for them.
    inline_frames: Mapping[str, bytes] = field(default_factory=dict, repr=False)
    #: Files outside the run's folder but inside the folder being scored that its screenshots come from (or
    #: were looked for at), by their path relative to the run's folder (``../screenshots/a.png``, the name steps
    #: use for them) -> the resolved path. They are part of the run's input digest.
    outside_files: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: How the harness ends a run, as the run itself declares it (run.json ``ends``: ``answer`` or
    #: ``external``); None: the run does not say, and its reader's declaration stands.
    ends: str | None = None

    @property
    def perceptual_verifier_recorded(self) -> bool | None:
        v = self.config.get("perceptual_verifier")
        return v if isinstance(v, bool) else None

    @classmethod
    def from_json(cls, meta: dict[str, Any], steps: tuple[Step, ...], path: str) -> "Run":
        agent = meta.get("agent") or {}
        screen = meta.get("screen") or {}
        outcome = meta.get("outcome") or {}
        j = outcome.get("judge")
        judge = None
        if j:
            judge = RecordedJudge(
                model=j.get("model"),
                verdict=j.get("verdict"),
                score=j.get("score"),
                confidence=j.get("confidence"),
                reasons=tuple(j.get("reasons") or ()),
            )
        ref = meta.get("reference_answer")
        refs = tuple(str(r) for r in (ref if isinstance(ref, list) else [ref]) if r not in (None, ""))
        known = {"format", "run_id", "task_id", "trial", "goal", "agent", "config", "screen", "started_at", "outcome",
                 "reference_answer", "reference_steps", "usage", "wall_seconds", "ends"}
        steps_ref = meta.get("reference_steps")
        return cls(
            run_id=meta["run_id"],
            path=path,
            source_format=meta["format"],
            steps=steps,
            task_id=meta.get("task_id"),
            trial=meta.get("trial"),
            goal=meta.get("goal"),
            agent_name=agent.get("name"),
            agent_model=agent.get("model"),
            config=dict(meta.get("config") or {}),
            screen_width=screen.get("width"),
            screen_height=screen.get("height"),
            started_at=meta.get("started_at"),
            outcome_status=outcome.get("status"),
            outcome_score=outcome.get("score"),
            judge=judge,
            reference_answers=refs,
            reference_steps=steps_ref if isinstance(steps_ref, int) and not isinstance(steps_ref, bool) else None,
            usage=Usage.from_json(meta.get("usage")),
            wall_seconds=_amount(meta.get("wall_seconds")),
            extra=_pop_extra(meta, known),
            ends=meta["ends"] if meta.get("ends") in ("answer", "external") else None,
        )
