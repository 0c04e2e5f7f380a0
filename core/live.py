"""The perceptual verifier, live: one step at a time, inside a runner's loop.

The seeds' verifier runs while the agent acts: after a high-risk action the runner compares the pre and
post frames and, when nothing visibly changed, puts the WARNING line into the agent's next turn.
:func:`verify_step` is that call, with trajcheck's rule (focus rings, carets, hover restyles, render
noise, ambient change) and exactly the code the offline scorer runs (:mod:`trajcheck.scoring.loading` builds
each step's evidence and ambient transitions with the same functions), so a step gets here the verdict
it will get in the ledger when the run is scored, as far as the run so far can tell: the offline
scorer also learns ambient change from the steps after this one (a WAIT that shows a clock ticking),
which a live call cannot know yet.

    state = trajcheck.LiveState(screen=(1280, 800))
    for step in episode:
        check = trajcheck.verify_step(pre_png, post_png, {"type": "CLICK", "x": 412, "y": 230},
                                      reasoning=thought, previous=state)
        if check.action_effect_observed is False:
            feedback.append(check.feedback)
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image

    from .analyzers.ambient import Transition
    from .analyzers.effect_options import PerceptualOptions
    from .media.frames import Frame

    FrameInput = Union[bytes, str, os.PathLike[str], np.ndarray, Image.Image]


@dataclass(frozen=True)
class StepCheck:
    """The verifier's finding for one step, with the values the ledger's step row holds under the names
    in brackets."""

    high_risk: bool  # [effect_high_risk]
    rule: str | None  # [effect_rule] which high-risk rule matched
    action_effect_observed: bool | None  # [action_effect_observed] None: not checked (see reason)
    reason: str  # [effect_reason]
    feedback: str | None  # [effect_feedback] the WARNING line for the agent's next turn, after a False verdict
    region_box: tuple[int, int, int, int] | None  # [effect_region_box] left, top, right, bottom, frame pixels
    global_distance: int | None  # [effect_global_distance]
    region_distance: int | None  # [effect_region_distance]
    content_changed: bool | None  # [effect_content_changed]
    content_px: int | None  # [effect_content_px]
    filtered: tuple[str, ...]  # [effect_filtered]
    action_effect_observed_seed: bool | None  # [action_effect_observed_seed] the seeds' literal rule
    seed_reason: str  # [effect_seed_reason]
    problem: str | None = None  # a frame that could not be read: frames_missing, frame_unreadable, ...


@dataclass
class LiveState:
    """What the offline scorer learns across a run's steps, carried from one :func:`verify_step` call to
    the next: the frame pairs that teach ambient change, per page, and the last post frame (a new pre
    frame that differs from it is a gap in which the agent did nothing)."""

    screen: tuple[int, int] | None = None  # the coordinate space of action points (run.json's screen)
    options: "PerceptualOptions | None" = None  # threshold, ambient on/off, the ablation toggle
    pixel_tolerance: int = 0  # a pixel changed when a channel differs by more than this (score --pixel-tolerance)
    transitions: list["Transition"] = field(default_factory=list)
    steps: int = 0
    # the last post frame: digest, frame, the page after, byte length
    _last: tuple[str, "Frame", str | None, int] | None = field(default=None, repr=False)

    def opts(self) -> "PerceptualOptions":
        from .analyzers.effect_options import PerceptualOptions

        if self.options is None:
            self.options = PerceptualOptions()
        return self.options


def _frame(value: "FrameInput", name: str) -> tuple[str | None, "Frame"]:
    """Decode a frame given as PNG/JPEG/WebP bytes, a path, an (H, W[, 3|4]) uint8 array or a PIL image,
    with its content digest (None for arrays and images, which are not compared by bytes)."""
    import numpy as np
    from PIL import Image

    from .media.frames import FrameError, decode, from_array, read_frame_file
    from .base.problems import Slug

    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return hashlib.blake2b(data, digest_size=16).hexdigest(), decode(Path(f"<{name}>"), data)
    if isinstance(value, (str, os.PathLike)):
        try:
            data = read_frame_file(Path(value))  # a FIFO is refused, never opened
        except FileNotFoundError:
            raise FrameError(Slug.FRAMES_MISSING, f"{value}: file not found") from None
        except OSError as exc:
            raise FrameError(Slug.FRAME_UNREADABLE, f"{value}: {exc.strerror or exc}") from None
        return hashlib.blake2b(data, digest_size=16).hexdigest(), decode(Path(value), data)
    if isinstance(value, Image.Image):
        value = np.asarray(value if value.mode in ("L", "RGB", "RGBA") else value.convert("RGB"))
    if isinstance(value, np.ndarray):
        return None, from_array(value, Path(f"<{name}>"))
    raise TypeError(f"{name}: a frame is PNG/JPEG bytes, a path, a numpy array or a PIL image, not "
                    f"{type(value).__name__}")


def verify_step(pre: "FrameInput", post: "FrameInput", action: dict[str, Any] | str, *, reasoning: str | None = None,
                screen: tuple[int, int] | None = None, previous: LiveState | None = None,
                page: dict[str, str | None] | None = None, client: dict[str, bool | None] | None = None) -> StepCheck:
    """Check one step's frames as the ledger will: was a high-risk action followed by a visible change?

    ``action`` is a step's action in the run format (``{"type": "CLICK", "x": 412, "y": 230}``, or just
    ``"KEY_PRESS"``-style type names for actions without fields); ``reasoning`` is the agent's text for the
    step (high-risk keywords are read there); ``screen`` the (width, height) of the action's coordinate
    space when frames are captured at another scale; ``page`` and ``client`` are the step's ``page``
    (``url_before``, ``url_after``, ``focus_before``, ``focus_after``: ambient change is learned per page)
    and ``client`` witness (``did_dom_mutate``, ``did_network_occur``, ``did_url_change``) as the run
    format records them. Pass the same ``previous`` state on every call of a run:
    it learns ambient change as the offline scorer does. Bad frames give a ``problem`` and a null
    verdict, never an exception; a value of the wrong type raises ``TypeError``.
    """
    from .analyzers import highrisk, perceptual
    from .analyzers.ambient import learn_ambient, transition_of
    from .media.frames import FrameError
    from .scoring.loading import gap_transition, step_evidence
    from .schemas.records import Action, Client, Page, Run, Step

    state = previous if previous is not None else LiveState(screen=screen)
    if screen is not None:
        state.screen = screen
    opts = state.opts()
    act = Action.from_json({"type": action} if isinstance(action, str) else dict(action))
    pg = Page(**{k: page.get(k) for k in ("url_before", "url_after", "focus_before", "focus_after")}) \
        if page else None
    cl = Client(**{k: client.get(k) for k in ("did_network_occur", "did_dom_mutate", "did_url_change")}) \
        if client else None
    state.steps += 1
    step = Step(index=state.steps, action=act, reasoning=reasoning, frame_pre="pre", frame_post="post", page=pg,
                client=cl)
    run = Run(run_id="live", path="", source_format="live", steps=(step,),
              screen_width=state.screen[0] if state.screen else None,
              screen_height=state.screen[1] if state.screen else None)
    frames: dict[str, Any] = {}
    for name, value in (("pre", pre), ("post", post)):
        last = state._last
        if last is not None and isinstance(value, (bytes, bytearray)) and len(value) == last[3] and \
                hashlib.blake2b(bytes(value), digest_size=16).hexdigest() == last[0]:
            frames[name] = (last[0], last[1])  # the previous step's post frame: decoded once
            continue
        try:
            frames[name] = _frame(value, name)
        except FrameError as exc:
            frames[name] = (None, exc)
    (pre_digest, pre_f), (post_digest, post_f) = frames["pre"], frames["post"]
    if pre_digest is not None and pre_digest == post_digest:
        step = Step(index=step.index, action=act, reasoning=reasoning, frame_pre="same", frame_post="same",
                    page=pg, client=cl)
    last = state._last
    if last is not None and pre_digest is not None and last[0] != pre_digest:  # the screen moved on in between
        gap = gap_transition(last[1], pre_f, state.pixel_tolerance, last[2])
        if gap is not None:
            state.transitions.append(gap)
    ev = step_evidence(run, step, pre_f, post_f, state.pixel_tolerance, [])
    t = transition_of(step, ev)
    if t is not None:
        state.transitions.append(t)
    if post_digest is not None and not isinstance(post_f, FrameError):
        state._last = (post_digest, post_f, pg.url_after if pg else None,
                       len(post) if isinstance(post, (bytes, bytearray)) else -1)
    key = pg.url_before if pg else None
    ambient = learn_ambient([x for x in state.transitions if x.page == key]) if opts.ambient else None
    risk = highrisk.classify(act.type, act.keys, reasoning, act.text, act.extra)
    f = perceptual.assess(act.type, act.keys, risk, ev, ambient, opts)
    return StepCheck(
        high_risk=risk.high_risk, rule=risk.rule, action_effect_observed=f.action_effect_observed, reason=f.reason,
        feedback=f.feedback, region_box=ev.region, global_distance=ev.global_distance,
        region_distance=ev.region_distance, content_changed=f.content_changed, content_px=f.content_px,
        filtered=f.filtered, action_effect_observed_seed=f.action_effect_observed_seed, seed_reason=f.seed_reason,
        problem=ev.problem)
