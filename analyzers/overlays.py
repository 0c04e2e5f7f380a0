"""A modal overlay on the page before an action: a dialog that takes the page's input (a cookie banner that
disables the page, a modal left open), so an action on the page beneath it does nothing.

Pure: a parsed DOM snapshot and the action's point in, the overlay's name out (or None). An overlay is an
element with ``role=dialog`` or ``role=alertdialog`` and ``aria-modal="true"``, or an open ``<dialog>``, that is
not hidden (:func:`trajcheck.analyzers.messages.is_hidden`) and, when the snapshot records boxes
(``data-bbox``), has a box of its own on the screen: a modal mounted but never drawn (no box) covers nothing.
An action whose point falls inside the overlay's box acts on the overlay, not beneath it: no overlay then.
The failure modes (:mod:`trajcheck.analyzers.failuremodes`) read it on the step of a dead action: that action was
blocked by the overlay.
"""

from __future__ import annotations

from typing import Any

from .messages import is_hidden

#: Elements that take the page's input while they are open.
MODAL_SELECTOR = ('[role="dialog" i][aria-modal="true" i], [role="alertdialog" i][aria-modal="true" i], '
                  'dialog[open]')

#: The longest overlay name kept.
NAME_LIMIT = 60


def _box(node: Any) -> tuple[float, float, float, float] | None:
    try:
        x, y, w, h = (float(v) for v in (node.attributes.get("data-bbox") or "").replace(",", " ").split())
    except ValueError:
        return None
    return (x, y, w, h) if w > 0 and h > 0 else None


def _name(node: Any, tree: Any) -> str:
    """What the overlay says it is: its aria-label, the text of its aria-labelledby element, else its first
    words."""
    attrs = node.attributes
    label = attrs.get("aria-label")
    ref = attrs.get("aria-labelledby")
    if not label and ref:
        first = ref.split()[0] if ref.split() else ""
        # an id as an attribute selector (an id may start with a digit); only plain ids are looked up
        titled = tree.css_first(f'[id="{first}"]') if first.replace("-", "").replace("_", "").isalnum() else None
        label = titled.text(separator=" ") if titled is not None else None
    text = " ".join((label or node.text(separator=" ") or "dialog").split())
    return text if len(text) <= NAME_LIMIT else text[:NAME_LIMIT - 1] + "…"


def modal_overlay(tree: Any, point: tuple[float, float] | None) -> str | None:
    """The name of the modal overlay open on the page (``tree``, a parsed snapshot), or None when none is,
    or when the action's ``point`` lies inside it."""
    if tree is None:
        return None
    modals = tree.css(MODAL_SELECTOR)
    if not modals:  # most pages: no modal at all
        return None
    boxes = tree.css_first("[data-bbox]") is not None
    for node in modals:
        if is_hidden(node):
            continue
        box = _box(node)
        if boxes and box is None:
            continue  # recorded without a box of its own: not drawn on the screen
        if box is not None and point is not None and box[0] <= point[0] < box[0] + box[2] \
                and box[1] <= point[1] < box[1] + box[3]:
            return None  # the action is on the overlay itself
        return _name(node, tree)
    return None
