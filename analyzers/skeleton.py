"""The semantic skeleton of a DOM snapshot and the diff of two skeletons.

The skeleton keeps what a person acting on the page would notice: interactive
elements (their text, value, disabled and expanded state, link, role) and
alerts/messages. A ticker or an ad rotating changes the DOM but not the
skeleton, so a skeleton diff with items is a *meaningful* change.

Parsed with selectolax (the lexbor HTML5 parser): on 68 real WebArena/WorkArena
pages from ../shared/realruns it took 1.8 ms per page against 6.4 ms for
lxml + cssselect, and both found the same alerts.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

INTERACTIVE = "button, a, input, select, textarea, [role=button], [role=link], [role=menuitem]"
ALERTS = "[role=alert], .toast, .error, .success, .alert, [data-toast]"
TEXT_CHARS = 50

_WS = re.compile(r"\s+")

Skeleton = dict[str, dict[str, Any]]


def dom_hash(html: str) -> str:
    """Hash of the snapshot as recorded (the seed's domHash)."""
    return hashlib.sha256(html.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def parse(html: str) -> LexborHTMLParser:
    return LexborHTMLParser(html)


def _text(node: LexborNode, limit: int | None = TEXT_CHARS) -> str:
    t = _WS.sub(" ", node.text(deep=True, separator=" ") or "").strip()
    return t[:limit] if limit else t


def _hidden(node: LexborNode) -> bool:
    attrs = node.attributes
    style = (attrs.get("style") or "").replace(" ", "").lower()
    return ("hidden" in attrs or attrs.get("aria-hidden") == "true"
            or "display:none" in style or "visibility:hidden" in style)


def _bool_attr(attrs: dict[str, str | None], name: str) -> bool:
    return name in attrs


def extract(tree: LexborHTMLParser) -> Skeleton:
    """The skeleton: ``{key: descriptor}`` for interactive elements and alerts.

    Interactive elements are keyed by id, else name, else tag and position among
    the unnamed ones; alerts by position. Descriptors hold only short strings
    and booleans, so skeletons compare cheaply and serialize as JSON.
    """
    sk: Skeleton = {}
    unnamed = 0
    for node in tree.css(INTERACTIVE):
        a = node.attributes
        key = a.get("id") or (f"{node.tag}[name={a['name']}]" if a.get("name") else None)
        if key is None:
            unnamed += 1
            key = f"{node.tag}#{unnamed}"
        elif key in sk:
            key = f"{key}~{sum(1 for k in sk if k.split('~')[0] == key)}"
        d: dict[str, Any] = {"tag": node.tag}
        text = _text(node) or (a.get("aria-label") or a.get("title") or a.get("placeholder") or "")[:TEXT_CHARS]
        if text:
            d["text"] = text
        if node.tag in ("input", "textarea", "select"):
            if a.get("type") in ("checkbox", "radio"):
                d["checked"] = _bool_attr(a, "checked")
            elif a.get("value") is not None:
                d["value"] = (a.get("value") or "")[:TEXT_CHARS]
        if _bool_attr(a, "disabled") or a.get("aria-disabled") == "true":
            d["disabled"] = True
        if a.get("aria-expanded") is not None:
            d["aria-expanded"] = a.get("aria-expanded")
        if a.get("href") is not None:
            d["href"] = a.get("href")
        if a.get("role"):
            d["role"] = a.get("role")
        if _hidden(node):
            d["hidden"] = True
        sk[key] = d
    for i, node in enumerate(tree.css(ALERTS), start=1):
        d = {"alert": True, "text": _text(node, 200)}
        if _hidden(node):
            d["hidden"] = True
        sk[f"message#{i}"] = d
    return sk


def _label(key: str, d: dict[str, Any]) -> str:
    text = d.get("text")
    return f"'{text}'" if text else f"'{key}'"


def diff(before: Skeleton, after: Skeleton) -> list[str]:
    """Readable observations of what changed between two skeletons, in a stable order."""
    out: list[str] = []
    for key, d in after.items():
        if key not in before:
            if d.get("alert"):
                if d.get("text") and not d.get("hidden"):
                    out.append(f"New message appeared: {d['text']}")
            else:
                out.append(f"New element appeared: {d['tag']} {_label(key, d)}")
    for key, d in before.items():
        if key not in after:
            if d.get("alert"):
                if d.get("text") and not d.get("hidden"):
                    out.append(f"Message disappeared: {d['text']}")
            else:
                out.append(f"Element disappeared: {d['tag']} {_label(key, d)}")
    for key, d in after.items():
        old = before.get(key)
        if old is None:
            continue
        if d.get("alert"):
            if old.get("text") != d.get("text") or old.get("hidden") != d.get("hidden"):
                if d.get("text") and not d.get("hidden"):
                    out.append(f"New message appeared: {d['text']}")
                elif old.get("text") and not old.get("hidden"):
                    out.append(f"Message disappeared: {old['text']}")
            continue
        for attr in sorted(set(old) | set(d)):
            if attr == "tag" or old.get(attr) == d.get(attr):
                continue
            out.append(f"Element '{key}' changed '{attr}' from {_fmt(old.get(attr))} to {_fmt(d.get(attr))}")
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return "(none)"
    if isinstance(v, bool):
        return "true" if v else "false"
    return f"'{v}'"


@dataclass(frozen=True)
class PageText:
    """Visible-ish text signals of a page for the blocking/CAPTCHA rules."""

    title: str
    text: str  # body text, whitespace-collapsed, first 5000 characters


def page_text(tree: LexborHTMLParser) -> PageText:
    """Title and body text. Removes script, style, noscript and template nodes from
    ``tree`` (their text is not on the page), so extract the skeleton first."""
    title_node = tree.css_first("title")
    title = _text(title_node, 200) if title_node else ""
    body = tree.body
    text = ""
    if body is not None:
        for bad in body.css("script, style, noscript, template"):
            bad.decompose()
        text = _leading_text(body, 5000)
    return PageText(title, text)


def _leading_text(node: LexborNode, limit: int) -> str:
    """``_text(node, limit)`` without building the whole text: the text nodes are read in document order
    only until their collapsed text is longer than ``limit`` (a 31 MB snapshot of paragraphs held its
    whole text several times over, 430 MB, for 5,000 characters)."""
    parts: list[str] = []
    size = 0
    checked = 0
    for n in node.traverse(include_text=True):
        if n.tag != "-text":
            continue
        t = n.text_content or ""
        parts.append(t)
        size += len(t) + 1
        if size - checked > 2 * limit:  # enough raw text to have grown: see whether it suffices
            checked = size
            head = _WS.sub(" ", " ".join(parts)).lstrip()
            if len(head) > limit:
                return head[:limit]
    return _WS.sub(" ", " ".join(parts)).strip()[:limit]
