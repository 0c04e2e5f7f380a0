"""The observation verifier (the verification seed's Step 5, without the model call).

From what a step recorded about the page (URLs, DOM snapshots, focus, the client
witness) rebuild the observation list and decide whether *something changed*.
No change fails the step with confidence 0.2, as the seed does before it would
call a model. A semantic verdict the runner recorded (action_succeeded,
task_completed, confidence) is then applied with the seed's thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.reasons import ObservationReason

from . import skeleton as sk
# the seed's thresholds and the options that carry them (re-exported: observation.ObservationOptions)
from .observation_options import (GOAL_THRESHOLD as GOAL_THRESHOLD, LOW_CONFIDENCE_BELOW as LOW_CONFIDENCE_BELOW,
                                  SUCCESS_THRESHOLD as SUCCESS_THRESHOLD, ObservationOptions as ObservationOptions)

NO_CHANGE_CONFIDENCE = 0.2


@dataclass(frozen=True)
class PageEvidence:
    """What one step recorded about the page. DOMs are the snapshot texts (already read)."""

    url_before: str | None = None
    url_after: str | None = None
    dom_before: str | None = None
    dom_after: str | None = None
    skeleton_before: sk.Skeleton | None = None
    skeleton_after: sk.Skeleton | None = None
    focus_before: str | None = None
    focus_after: str | None = None
    did_network_occur: bool | None = None
    did_dom_mutate: bool | None = None
    did_url_change: bool | None = None
    action_succeeded: bool | None = None
    task_completed: bool | None = None
    confidence: float | None = None

    @property
    def has_page_evidence(self) -> bool:
        return any(v is not None for v in (self.url_before, self.url_after, self.dom_before, self.dom_after,
                                           self.did_network_occur, self.did_dom_mutate, self.did_url_change))


@dataclass(frozen=True)
class ObservationFinding:
    observations: tuple[str, ...]
    url_changed: bool | None
    dom_changed: bool | None
    meaningful_change: bool | None
    something_changed: bool | None
    success: bool | None
    goal_achieved: bool | None
    low_confidence_completion: bool | None
    confidence: float | None
    reason: ObservationReason


NOT_APPLICABLE = ObservationFinding((), None, None, None, None, None, None, None, None,
                                  ObservationReason.NO_PAGE_EVIDENCE)


_DEFAULTS = ObservationOptions()


def verify(ev: PageEvidence, opts: ObservationOptions = _DEFAULTS) -> ObservationFinding:
    """The observation verifier's finding for one step."""
    if not ev.has_page_evidence:
        return NOT_APPLICABLE
    obs: list[str] = []
    url_changed: bool | None = None
    if ev.url_before is not None and ev.url_after is not None:
        url_changed = ev.url_before != ev.url_after
        obs.append(f"Navigation occurred: URL changed from {ev.url_before} to {ev.url_after}" if url_changed
                   else "URL did not change")

    dom_changed: bool | None = None
    meaningful: bool | None = None
    if ev.dom_before is not None and ev.dom_after is not None:
        dom_changed = sk.dom_hash(ev.dom_before) != sk.dom_hash(ev.dom_after)
        if ev.skeleton_before is not None and ev.skeleton_after is not None:
            items = sk.diff(ev.skeleton_before, ev.skeleton_after)
            if items:
                obs += items
                meaningful = True
            elif dom_changed:
                obs.append("Page content updated (DOM changed; no interactive element changes detected)")
                meaningful = False
            else:
                obs.append("Page content did not change (no interactive element or alert changes)")
                meaningful = False
        else:  # the hash-only path
            meaningful = dom_changed
            obs.append("Page content updated (DOM changed)" if dom_changed
                       else "Page content did not change (DOM hash identical)")

    if ev.focus_before is not None and ev.focus_after is not None and ev.focus_before != ev.focus_after:
        obs.append(f"Focus moved from {ev.focus_before} to {ev.focus_after}")

    if ev.did_network_occur:
        obs.append("Background network activity detected")
    if ev.did_dom_mutate:
        obs.append("DOM was mutated")
    if ev.did_url_change is not None:
        obs.append(f"Extension reported URL changed: {'true' if ev.did_url_change else 'false'}")
    client = bool(ev.did_network_occur or ev.did_dom_mutate or ev.did_url_change)

    something = bool(url_changed or meaningful or client)
    if not something:
        return ObservationFinding(tuple(obs), url_changed, dom_changed, meaningful, False, False, None, None,
                                  NO_CHANGE_CONFIDENCE, ObservationReason.NO_CHANGE)
    if ev.confidence is None or (ev.action_succeeded is None and ev.task_completed is None):
        reason = ObservationReason.CLIENT_WITNESS_ONLY if client and not (url_changed or meaningful) \
            else ObservationReason.CHANGED_NO_SEMANTIC_VERDICT
        return ObservationFinding(tuple(obs), url_changed, dom_changed, meaningful, True, None, None, None, None,
                                  reason)
    c = float(ev.confidence)
    success = bool(ev.action_succeeded) and c >= opts.success_threshold
    goal = bool(ev.task_completed) and c >= opts.goal_threshold
    low = goal and c < opts.low_confidence_below
    reason = ObservationReason.SEMANTIC_GOAL_ACHIEVED if goal else ObservationReason.SEMANTIC_SUCCESS if success \
        else ObservationReason.SEMANTIC_FAILURE
    return ObservationFinding(tuple(obs), url_changed, dom_changed, meaningful, True, success, goal, low, c, reason)
