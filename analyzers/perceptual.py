"""The perceptual diff verifier: did a high-risk action visibly change the screen?

Two verdicts per step:

* ``action_effect_observed_seed`` is the seed's rule read literally: the pHash of
  the whole frame changed OR the pHash of the 200x200 region around the action
  point changed ("changed" = Hamming distance above ``threshold``).
* ``action_effect_observed`` is trajcheck's verdict. It looks at the exact pixel
  difference of the same two frames, grouped into blobs, and counts only
  *content* change: it discards a thin outline (a focus ring drawn or removed), a
  caret-sized line (a blinking cursor), and change in cells the run shows to be
  ambient (a clock, a spinner: see :mod:`trajcheck.analyzers.ambient`). Content
  anywhere on the screen counts, so a toast far from the click is an effect while
  a clock ticking over during a dead click is not.

Both are None when the check does not apply; ``reason`` says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base.reasons import EffectReason

from .ambient import is_ambient
# re-exported (`X as X`): the perceptual verifier's options and evidence, where its callers look for them
from .effect_options import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD, PerceptualOptions as PerceptualOptions
from .highrisk import HighRisk
from .image_evidence import ImageEvidence as ImageEvidence
from .pixeldiff import boxes_intersect

#: Reasons for a None verdict.
SKIP_REASONS = (EffectReason.VERIFIER_OFF, EffectReason.NOT_HIGH_RISK, EffectReason.FRAMES_MISSING,
                EffectReason.FRAME_UNREADABLE, EffectReason.FRAME_TOO_LARGE)


@dataclass(frozen=True)
class EffectFinding:
    action_effect_observed: bool | None
    reason: EffectReason
    action_effect_observed_seed: bool | None
    seed_reason: EffectReason
    content_changed: bool | None  # trajcheck's change test, whether or not the step is high-risk
    content_px: int | None
    filtered: tuple[str, ...]  # kinds of change discounted: outline, caret, ambient
    feedback: str | None  # the WARNING line the runner injects after a False verdict
    feedback_seed: str | None

    @property
    def checked(self) -> bool:
        return self.action_effect_observed is not None


def feedback_line(action_type: str, keys: str | None, reason: str) -> str:
    """The runner's feedback after a high-risk action with no observed effect, in the seed's wording."""
    verb = f"pressed {keys}" if action_type == "KEY_PRESS" and keys else "clicked"
    return f"{verb} (no visible change); WARNING: high-risk action had no observed effect ({reason})"


def content_change(ev: ImageEvidence, ambient: np.ndarray | None,
                   use_ambient: bool = True) -> tuple[bool, int, tuple[str, ...], bool]:
    """(content changed, content pixels, kinds discounted, any content in the region)."""
    cm = ev.change
    assert cm is not None
    if cm.size_changed:
        return True, cm.changed_px, (), True
    filtered: set[str] = set()
    px = 0
    in_region = False
    for blob in cm.blobs:
        if blob.kind != "content":
            filtered.add(blob.kind)
            continue
        if use_ambient and is_ambient(blob.box, cm, ambient):
            filtered.add("ambient")
            continue
        px += blob.px
        if ev.region is not None and boxes_intersect(blob.box, ev.region):
            in_region = True
    return px > 0, px, tuple(sorted(filtered)), in_region


def _seed_verdict(ev: ImageEvidence, threshold: int) -> tuple[bool, EffectReason]:
    g = ev.global_distance
    r = ev.region_distance
    g_changed = g is not None and g > threshold
    r_changed = r is not None and r > threshold
    if g_changed and r_changed:
        return True, EffectReason.GLOBAL_AND_REGION_CHANGED
    if g_changed:
        return True, EffectReason.GLOBAL_CHANGED
    if r_changed:
        return True, EffectReason.REGION_CHANGED
    return False, EffectReason.GLOBAL_AND_REGION_STABLE if r is not None else EffectReason.GLOBAL_STABLE


def seed_changed(ev: ImageEvidence, threshold: int) -> bool | None:
    """The seed's literal test on any step's two frames, high-risk or not (None without them): what a retry
    that is not itself high-risk did, under the seed's rule."""
    if ev.problem or ev.global_distance is None:
        return None
    return _seed_verdict(ev, threshold)[0]


_FALSE_REASONS = {"outline": EffectReason.ONLY_FOCUS_OUTLINE, "caret": EffectReason.ONLY_CARET,
                  "ambient": EffectReason.ONLY_AMBIENT_CHANGE, "restyle": EffectReason.ONLY_POINTER_RESTYLE,
                  "noise": EffectReason.ONLY_RENDER_NOISE}


def assess(action_type: str, keys: str | None, risk: HighRisk, ev: ImageEvidence,
           ambient: np.ndarray | None, opts: PerceptualOptions) -> EffectFinding:
    """The verifier's finding for one step."""
    content: bool | None = None
    px: int | None = None
    filtered: tuple[str, ...] = ()
    in_region = False
    if ev.change is not None:
        content, px, filtered, in_region = content_change(ev, ambient, opts.ambient)

    def skip(reason: EffectReason) -> EffectFinding:
        return EffectFinding(None, reason, None, reason, content, px, filtered, None, None)

    if not opts.enabled:
        return skip(EffectReason.VERIFIER_OFF)
    if not risk.high_risk:
        return skip(EffectReason.NOT_HIGH_RISK)
    if ev.problem or ev.change is None or ev.global_distance is None:  # a frame problem's slug is its reason
        return skip(EffectReason(ev.problem) if ev.problem else EffectReason.FRAMES_MISSING)

    seed, seed_reason = _seed_verdict(ev, opts.threshold)
    assert ev.change is not None
    if ev.change.size_changed:
        verdict, reason = True, EffectReason.FRAME_SIZE_CHANGED
    elif content:
        if ev.region is None:
            verdict, reason = True, EffectReason.CONTENT_CHANGED
        elif in_region:
            verdict, reason = True, EffectReason.CONTENT_CHANGED_IN_REGION
        else:
            verdict, reason = True, EffectReason.CONTENT_CHANGED_OUTSIDE_REGION
    elif not ev.change.changed:
        verdict, reason = False, EffectReason.NO_PIXEL_CHANGE
    elif len(filtered) == 1:
        verdict, reason = False, _FALSE_REASONS[filtered[0]]
    else:
        verdict, reason = False, EffectReason.ONLY_COSMETIC_CHANGE
    return EffectFinding(
        action_effect_observed=verdict,
        reason=reason,
        action_effect_observed_seed=seed,
        seed_reason=seed_reason,
        content_changed=content,
        content_px=px,
        filtered=filtered,
        feedback=None if verdict else feedback_line(action_type, keys, reason),
        feedback_seed=None if seed else feedback_line(action_type, keys, seed_reason),
    )


def agrees_with_recorded(found: Any) -> bool | None:
    """Does trajcheck's verdict for a step equal the one its runner recorded (``recorded.action_effect_observed``)?
    None when either is missing. ``found`` is the step's findings (:class:`trajcheck.scoring.analysis.StepFindings`)."""
    recorded, observed = found.step.recorded_effect, found.effect.action_effect_observed
    return None if recorded is None or observed is None else bool(recorded == observed)


def perceptual_summary(findings: list[EffectFinding], seed: bool = False) -> dict[str, int]:
    """The seed's per-run summary: {} when the verifier never fired, else {checked, no_effect}."""
    values = [f.action_effect_observed_seed if seed else f.action_effect_observed for f in findings]
    checked = [v for v in values if v is not None]
    if not checked:
        return {}
    return {"checked": len(checked), "no_effect": sum(1 for v in checked if v is False)}
