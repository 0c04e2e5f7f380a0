"""Predictions an agent recorded before acting, checked against what happened.

* ``predict``: the perceptual seed's predicate grammar, ``frame_changed`` or
  ``frame_stable``, checked with the same frame comparison as the verifier
  (content change on screen, outlines, carets and ambient change discounted).
* ``expected``: the verification seed's expected outcome, checked against the
  DOM after the action with CSS selectors, and its confidence rules.
* the seed's action-type classification: navigation, dropdown or generic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from selectolax.lexbor import LexborHTMLParser

#: The seed's confidence rules for the prediction path.
MISSING_ELEMENT_CAP = 0.60
NAVIGATION_FLOOR = 0.75


@dataclass(frozen=True)
class PredictionFinding:
    prediction: str | None  # what was predicted: frame_changed | frame_stable | expected
    held: bool | None
    failed_checks: tuple[str, ...]
    checks: int
    confidence: float | None
    action_kind: str  # navigation | dropdown | generic


def _select(tree: LexborHTMLParser | None, selector: str) -> list[Any] | None:
    if tree is None:
        return None
    try:
        return tree.css(selector)
    except Exception:  # selectolax raises on a selector it cannot parse  # noqa: BLE001
        return None


def _as_list(v: Any) -> list[Any]:
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


def _text_of(node: Any) -> str:
    return " ".join((node.text(deep=True, separator=" ") or "").split())


def check_expected(expected: dict[str, Any], before: LexborHTMLParser | None, after: LexborHTMLParser | None,
                   url_before: str | None, url_after: str | None) -> tuple[list[str], list[str], bool | None]:
    """(checks run, checks failed, url changed as expected) for an expected-outcome block."""
    ran: list[str] = []
    failed: list[str] = []

    def check(name: str, ok: bool | None) -> None:
        if ok is None:
            return
        ran.append(name)
        if not ok:
            failed.append(name)

    url_ok: bool | None = None
    if "url_should_change" in expected and url_before is not None and url_after is not None:
        url_ok = (url_before != url_after) == bool(expected["url_should_change"])
        check("url_should_change", url_ok)
    for sel in _as_list(expected.get("element_should_exist")):
        found = _select(after, str(sel))
        check(f"element_should_exist:{sel}", None if found is None else bool(found))
    for sel in _as_list(expected.get("element_should_not_exist")):
        found = _select(after, str(sel))
        check(f"element_should_not_exist:{sel}", None if found is None else not found)
    for item in _as_list(expected.get("element_should_have_text")):
        if not isinstance(item, dict) or "selector" not in item:
            continue
        found = _select(after, str(item["selector"]))
        if found is None:
            continue
        want = str(item.get("text", ""))
        ok = any(re.search(want, _text_of(n), re.I) if item.get("regex") else want.lower() in _text_of(n).lower()
                 for n in found)
        check(f"element_should_have_text:{item['selector']}", ok)
    for item in _as_list(expected.get("attribute_changes")):
        if not isinstance(item, dict) or "selector" not in item or "attribute" not in item:
            continue
        found = _select(after, str(item["selector"]))
        if found is None:
            continue
        value = item.get("value")
        attr = str(item["attribute"])
        ok = any((n.attributes.get(attr) == (None if value is None else str(value).lower() if isinstance(value, bool)
                                              else str(value))) for n in found) if found else False
        check(f"attribute_changes:{item['selector']}[{attr}]", ok)
    for sel in _as_list(expected.get("elements_to_appear")):
        now = _select(after, str(sel))
        was = _select(before, str(sel)) if before is not None else []
        if now is None:
            continue
        check(f"elements_to_appear:{sel}", bool(now) and not was)
    for role in _as_list(expected.get("roles_exist")):
        found = _select(after, f'[role="{role}"]')
        check(f"roles_exist:{role}", None if found is None else bool(found))
    return ran, failed, url_ok


def expected_confidence(ran: list[str], failed: list[str], url_ok: bool | None, kind: str) -> float | None:
    """The seed's prediction-path confidence: the share of DOM checks that held, capped at
    0.60 when an expected element is missing (unless navigation happened as expected),
    lifted to 0.75 when navigation happened as expected."""
    if not ran:
        return None
    score = 1 - len(failed) / len(ran)
    element_missing = any(f.startswith(("element_should_exist", "elements_to_appear")) for f in failed)
    nav_ok = kind == "navigation" and url_ok is True
    if element_missing and not nav_ok:
        score = min(score, MISSING_ELEMENT_CAP)
    if nav_ok:
        score = max(score, NAVIGATION_FLOOR)
    return round(score, 4)


def element_at(tree: LexborHTMLParser | None, x: float, y: float) -> Any | None:
    """The smallest element whose recorded box (``data-bbox="x y w h"``, CSS pixels of
    the viewport) contains the point; None when the snapshot carries no boxes."""
    if tree is None:
        return None
    best = None
    best_area = None
    for node in tree.css("[data-bbox]"):
        try:
            bx, by, bw, bh = (float(v) for v in (node.attributes.get("data-bbox") or "").replace(",", " ").split())
        except ValueError:
            continue
        if bx <= x < bx + bw and by <= y < by + bh:
            area = bw * bh
            if best_area is None or area < best_area:
                best, best_area = node, area
    return best


def action_kind(action_type: str, url: str | None, node: Any | None,
                element_attrs: dict[str, Any] | None = None) -> str:
    """The seed's action-type classification."""
    t = action_type.upper()
    if t in ("NAVIGATE", "GO_BACK", "BACK"):
        return "navigation"
    attrs: dict[str, Any] = {}
    tag = None
    if node is not None:
        # walk up to the nearest interactive ancestor (the click may land on a <span> inside a link)
        cur = node
        while cur is not None and cur.tag not in ("a", "button", "input", "select") and \
                not cur.attributes.get("role") and "aria-haspopup" not in cur.attributes:
            cur = cur.parent
        cur = cur or node
        attrs = dict(cur.attributes)
        tag = cur.tag
    elif element_attrs:
        attrs = element_attrs
        tag = element_attrs.get("tag")
    if t in ("CLICK", "DOUBLE_CLICK") and (attrs or tag):
        if attrs.get("aria-haspopup") not in (None, "false"):
            return "dropdown"
        if tag == "a" or attrs.get("href") is not None or attrs.get("role") == "link":
            return "navigation"
    return "generic"


def check_frame_predicate(predict: str, content_changed: bool | None) -> bool | None:
    if content_changed is None:
        return None
    return content_changed if predict == "frame_changed" else not content_changed


def step_prediction(predict: str | None, expected: dict[str, Any] | None, content_changed: bool | None,
                    expected_ran: tuple[str, ...], expected_failed: tuple[str, ...], url_as_expected: bool | None,
                    kind: str) -> PredictionFinding:
    """A step's prediction finding: a ``predict`` predicate checked against the screen's content change, else
    an ``expected`` block's checks (already run against the DOM: ``expected_ran``/``expected_failed``)."""
    if predict in ("frame_changed", "frame_stable"):
        held = check_frame_predicate(predict, content_changed)
        failed = () if held is not False else (predict,)
        return PredictionFinding(predict, held, failed, 1 if held is not None else 0, None, kind)
    if expected:
        ran, failed_l = list(expected_ran), list(expected_failed)
        conf = expected_confidence(ran, failed_l, url_as_expected, kind)
        return PredictionFinding("expected", None if not ran else not failed_l, tuple(failed_l), len(ran), conf, kind)
    return PredictionFinding(None, None, (), 0, None, kind)
