"""What a step's page evidence says: the observation verdict, the clicked element's kind, the expected-outcome
checks, the page's title, text and messages. Computed while the step's DOM trees are in memory, so that
only these small facts outlive them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..schemas.records import Step

from . import messages, observation, overlays, predictions
from .messages import PageMessages
from .skeleton import skeleton_key
from .observation import ObservationFinding, ObservationOptions, PageEvidence


class SnapshotLike(Protocol):
    """A parsed DOM snapshot (:class:`trajcheck.media.dom.Snapshot`): its hash, skeleton, text, tree and messages."""

    hash: str
    skeleton: Any
    text: Any
    tree: Any
    messages: PageMessages


@dataclass
class PageFacts:
    """The small facts of a step's page evidence that later analyzers and the ledger read."""

    obs: ObservationFinding
    dom_after_hash: str | None = None
    title: str | None = None
    text: str | None = None
    expected_ran: tuple[str, ...] = ()
    expected_failed: tuple[str, ...] = ()
    url_as_expected: bool | None = None
    kind: str = "generic"
    messages_before: PageMessages | None = None  # None: no DOM snapshot
    messages_after: PageMessages | None = None
    login_form_after: bool | None = None  # exactly one password field after (None: no DOM snapshot)
    skeleton_before: str | None = None  # digests of the skeletons (analyzers/skeleton.py skeleton_key): what the
    skeleton_after: str | None = None  # run's states are told apart by besides the screen (None: no snapshot)
    overlay_before: str | None = None  # a modal overlay open before the action, not where it acts (overlays.py)


def page_evidence(s: Step, before: SnapshotLike | None, after: SnapshotLike | None) -> PageEvidence:
    """The observation verifier's input: URLs, DOM hashes and skeletons, focus, client witness, semantics."""
    p, sem, c = s.page, s.semantic, s.client
    return PageEvidence(
        url_before=p.url_before if p else None, url_after=p.url_after if p else None,
        dom_before=before.hash if before else None, dom_after=after.hash if after else None,
        skeleton_before=before.skeleton if before else None, skeleton_after=after.skeleton if after else None,
        focus_before=p.focus_before if p else None, focus_after=p.focus_after if p else None,
        did_network_occur=c.did_network_occur if c else None, did_dom_mutate=c.did_dom_mutate if c else None,
        did_url_change=c.did_url_change if c else None,
        action_succeeded=sem.action_succeeded if sem else None, task_completed=sem.task_completed if sem else None,
        confidence=sem.confidence if sem else None)


def page_facts(s: Step, before: SnapshotLike | None, after: SnapshotLike | None,
               options: ObservationOptions) -> PageFacts:
    """Every page fact of step ``s`` from its DOM snapshots before and after (either may be None)."""
    p = s.page
    a = s.action
    obs = observation.verify(page_evidence(s, before, after), options)
    node = None
    at = a.point
    if before is not None and before.tree is not None and at is not None:
        node = predictions.element_at(before.tree, float(at[0]), float(at[1]))
    facts = PageFacts(obs, after.hash if after else None,
                      (p.title_after if p and p.title_after else after.text.title if after else None),
                      after.text.text if after else None, kind=predictions.action_kind(a.type, a.url, node),
                      messages_before=before.messages if before else None,
                      messages_after=after.messages if after else None,
                      login_form_after=messages.login_form(after.tree) if after else None,
                      skeleton_before=skeleton_key(before.skeleton) if before else None,
                      skeleton_after=skeleton_key(after.skeleton) if after else None,
                      overlay_before=overlays.modal_overlay(before.tree, at) if before else None)
    if s.expected:
        ran, failed, url_ok = predictions.check_expected(
            s.expected, before.tree if before else None, after.tree if after else None,
            p.url_before if p else None, p.url_after if p else None)
        facts.expected_ran, facts.expected_failed, facts.url_as_expected = tuple(ran), tuple(failed), url_ok
    return facts
