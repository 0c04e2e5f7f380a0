"""Messages a page shows its user: errors (validation, failure) and successes (saved, sent, created).

Pure: a parsed DOM snapshot in, two small sets of normalised message texts out. The evidence
referee (:mod:`trajcheck.analyzers.evidence`) compares the sets before and after an action, so a
message that was already on the page before the action is never read as its response.

A message is found two ways:

1. **Message elements**: an element a page uses to speak to its user (``MESSAGE_SELECTOR``: ARIA
   live regions and alerts, toasts, framework alert and feedback classes) that is not hidden by an
   attribute. Its kind comes from its class or role first (``ERROR_CLASS`` / ``SUCCESS_CLASS``),
   then from its words (``ERROR_TEXT`` / ``SUCCESS_TEXT``); an element with neither says nothing.
   A field marked invalid (``aria-invalid="true"``, ``.is-invalid``) is an error of its own, named
   ``invalid field: <name or id>``.
2. **Page text**: a sentence of the body text that matches ``ERROR_SENTENCE`` or ``SUCCESS_SENTENCE``
   (pages that print "This field is required." or "Thank you for your order" in plain markup).

Class names and words are data here, in one place; docs/referee.md's evidence table lists them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

#: Elements that carry messages to the user.
MESSAGE_SELECTOR = ("[role=alert], [role=status], [aria-live=assertive], [aria-live=polite], .toast, .alert, "
                    ".notification, .flash, .flash-message, .messages li, .message, .notice, .error, .errors, "
                    ".errorlist, .error-message, .field-error, .form-error, .invalid-feedback, .text-danger, "
                    ".help-block.error, .success, .success-message, .text-success, #error_explanation, "
                    "[class*=error], [class*=invalid], [class*=danger]")

#: Elements that are controls, not messages, whatever their classes say (a `btn-danger` Delete button).
NOT_MESSAGES = frozenset({"button", "a", "input", "select", "option", "label", "textarea", "form", "body", "html"})

#: Fields a page marks as invalid.
INVALID_FIELD_SELECTOR = ("[aria-invalid=true], .is-invalid, input.error, select.error, textarea.error, "
                          ".field_with_errors input, .field_with_errors select, .field_with_errors textarea")

#: Class (or role) words that make a message element an error or a success whatever its text says.
ERROR_CLASS = re.compile(r"(?:^|[\s_-])(?:error|errors|errorlist|danger|invalid|failure|fail|failed)(?:$|[\s_-])",
                         re.I)
SUCCESS_CLASS = re.compile(r"(?:^|[\s_-])(?:success|successful|succeeded|confirmation|confirmed)(?:$|[\s_-])", re.I)

#: Words of an error: input that was wrong or missing, or an action that failed.
ERROR_TEXT = re.compile(
    r"\b(?:is|are) required\b|\brequired field|\bfield is required|\bplease (?:enter|provide|fill|select|choose|"
    r"correct|check|fix|complete)\b|\b(?:is|are|was|were) (?:invalid|not valid|incorrect|wrong|too (?:short|long))\b|"
    r"\binvalid\b|\bnot a valid\b|\bmust (?:be|contain|include|match|have|not)\b|\bdo(?:es)?(?:n't| not) match\b|"
    r"\btry again\b|\ban? (?:unexpected )?error\b|\berror(?: occurred|:)|\bfailed to\b|\bcould not be\b|"
    r"\bcannot be (?:empty|blank)\b|\bcan't be (?:empty|blank)\b|\bsomething went wrong\b|\bunable to (?:save|send|"
    r"submit|process|complete)\b|\bprohibited this\b|\bis (?:already taken|not available)\b", re.I)

#: Words of a success message (in a message element).
SUCCESS_TEXT = re.compile(
    r"\b(?:saved|sent|created|submitted|updated|added|deleted|removed|placed|booked|received|confirmed|"
    r"published|posted|subscribed|registered|completed|scheduled|success(?:ful(?:ly)?)?|thank you|thanks)\b", re.I)

#: A success stated as a sentence in plain page text (stricter than SUCCESS_TEXT: "Saved searches" is a link).
SUCCESS_SENTENCE = re.compile(
    r"\b(?:has|have) been (?:successfully )?(?:saved|sent|submitted|created|updated|placed|booked|received|"
    r"confirmed|published|posted|scheduled|registered|added)\b|\bsuccessfully\b|\bthank you for (?:your|the)\b|"
    r"\bthanks for (?:your|the)\b|\byour (?:order|booking|reservation|message|request|application) "
    r"(?:is|was) (?:confirmed|received|placed|sent|complete)\b", re.I)

#: An error stated as a sentence in plain page text (stricter than ERROR_TEXT: instructions such as
#: "Please enter your email" are on many pages before anything went wrong).
ERROR_SENTENCE = re.compile(
    r"\b(?:is|are) required\b|\bfield is required|\brequired field|"
    r"\b(?:is|are|was|were) (?:invalid|not valid|incorrect)\b|"
    r"\bnot a valid\b|\bdo(?:es)?(?:n't| not) match\b|\bplease try again\b|\ban? (?:unexpected )?error (?:occurred|has "
    r"occurred)\b|\bsomething went wrong\b|\bcould not be (?:saved|sent|submitted|processed|completed)\b|"
    r"\b(?:cannot|can't) be (?:empty|blank)\b", re.I)

#: Longest message text kept (characters); messages are compared by this prefix.
TEXT_CHARS = 120

_WS = re.compile(r"\s+")
_SENTENCE = re.compile(r"[^.!?\n]{1,300}[.!?]?")
#: Matches where ERROR_SENTENCE or SUCCESS_SENTENCE does (the same flags), in one search.
_ANY_SENTENCE = re.compile(f"(?:{ERROR_SENTENCE.pattern})|(?:{SUCCESS_SENTENCE.pattern})", re.I)


@dataclass(frozen=True)
class PageMessages:
    errors: frozenset[str]  # every error found, by mark or by words
    successes: frozenset[str]
    worded_errors: frozenset[str] = frozenset()  # the errors whose own text reads as an error (ERROR_TEXT)
    source: str = "dom"  # where the words were read: dom, or screen_text (OCR, analyzers/screentext.py)


NO_MESSAGES = PageMessages(frozenset(), frozenset())


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().lower()[:TEXT_CHARS]


#: Classes that hide an element in the common CSS frameworks (a snapshot has no style sheets to ask).
HIDDEN_CLASSES = frozenset({"d-none", "hidden", "hide", "invisible", "is-hidden", "visually-hidden", "sr-only"})
#: Classes that hide an element until the framework adds ``show`` (Bootstrap toasts, fades, collapses).
NEEDS_SHOW = frozenset({"toast", "fade", "collapse"})


def _hidden(node: LexborNode) -> bool:
    """Hidden by an attribute or a framework class of the node or of an ancestor, or recorded with a
    zero-size box (``data-bbox="x y 0 0"``, as trajcheck's recorder writes it)."""
    n: LexborNode | None = node
    depth = 0
    while n is not None and depth < 64:  # bounded: a message sits a few levels under its container
        attrs = n.attributes
        style = (attrs.get("style") or "").replace(" ", "").lower()
        classes = set((attrs.get("class") or "").split())
        if "hidden" in attrs or attrs.get("aria-hidden") == "true" or "display:none" in style \
                or "visibility:hidden" in style or classes & HIDDEN_CLASSES \
                or (classes & NEEDS_SHOW and "show" not in classes):
            return True
        box = (attrs.get("data-bbox") or "").split()
        if len(box) == 4 and box[2] in ("0", "-0") and box[3] in ("0", "-0"):
            return True
        n = n.parent
        depth += 1
    return False


def _kind(node: LexborNode, text: str) -> str | None:
    attrs = node.attributes
    marks = f"{attrs.get('class') or ''} {attrs.get('role') or ''} {attrs.get('id') or ''}"
    if ERROR_CLASS.search(marks):
        return "error"
    if SUCCESS_CLASS.search(marks):
        return "success"
    if ERROR_TEXT.search(text):
        return "error"
    if SUCCESS_TEXT.search(text):
        return "success"
    return None


def _feedback_shown(node: LexborNode) -> bool:
    """Bootstrap-style ``.invalid-feedback`` is shown by CSS only beside an invalid field (or with d-block)."""
    cls = (node.attributes.get("class") or "").split()
    if "invalid-feedback" not in cls or "d-block" in cls:
        return True
    parent = node.parent
    return parent is not None and bool(parent.css_first(".is-invalid, [aria-invalid=true]"))


def message_elements(tree: LexborHTMLParser) -> Iterator[tuple[LexborNode, str, str | None]]:
    """The message elements a snapshot shows, as (node, normalised text, kind: error, success or None): the
    elements :func:`page_messages` reads, with its filters (hidden ones, empty or wordless ones, feedback
    the page keeps hidden are left out)."""
    for node in tree.css(MESSAGE_SELECTOR):
        if node.tag in NOT_MESSAGES:
            continue
        text = _norm(node.text(deep=True, separator=" ") or "")
        if len(text) < 3 or not any(c.isalpha() for c in text) or _hidden(node) or not _feedback_shown(node):
            continue
        yield node, text, _kind(node, text)


def page_messages(tree: LexborHTMLParser | None, body_text: str | None = None) -> PageMessages:
    """The error and success messages a snapshot shows (see the module docstring)."""
    errors: set[str] = set()
    worded: set[str] = set()
    successes: set[str] = set()
    if tree is not None:
        for _node, text, kind in message_elements(tree):
            if kind == "error":
                errors.add(text)
                if ERROR_TEXT.search(text):
                    worded.add(text)
            elif kind == "success":
                successes.add(text)
        for node in tree.css(INVALID_FIELD_SELECTOR):
            if node.tag in ("input", "select", "textarea") and not _hidden(node):
                a = node.attributes
                mark = f"invalid field: {a.get('name') or a.get('id') or node.tag}"
                errors.add(mark)
                if a.get("aria-invalid") == "true":  # set by a page only on a field it found invalid
                    worded.add(mark)
    for sentence in _SENTENCE.findall(body_text or ""):
        s = _norm(sentence)
        if len(s) < 4 or not _ANY_SENTENCE.search(s):  # most sentences are neither: one search, not two
            continue
        if ERROR_SENTENCE.search(s):
            errors.add(s)
            worded.add(s)
        elif SUCCESS_SENTENCE.search(s):
            successes.add(s)
    return PageMessages(frozenset(errors), frozenset(successes), frozenset(worded))


def login_form(tree: LexborHTMLParser) -> bool:
    """The page shows a sign-in form: exactly one password field (a registration or add-user form asks
    for the password twice, a change-password form three times)."""
    fields = tree.css('input[type="password" i]')
    return len(fields) == 1 and not _hidden(fields[0])


#: Whether an element is hidden (by an attribute, a framework class or a zero-size box), for the other analyzers.
is_hidden = _hidden
