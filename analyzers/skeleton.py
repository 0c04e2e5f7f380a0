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
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

INTERACTIVE = "button, a, input, select, textarea, [role=button], [role=link], [role=menuitem]"
ALERTS = "[role=alert], .toast, .error, .success, .alert, [data-toast]"
TEXT_CHARS = 50

_WS = re.compile(r"\s+")

Skeleton = dict[str, dict[str, Any]]


def dom_digest(html: str) -> bytes:
    """SHA-256 of the snapshot as recorded (UTF-8); :func:`dom_hash` is its first 16 hex digits."""
    return hashlib.sha256(html.encode("utf-8", "surrogatepass")).digest()


def dom_hash(html: str) -> str:
    """Hash of the snapshot as recorded (the seed's domHash)."""
    return dom_digest(html).hex()[:16]


def skeleton_key(sk: Skeleton) -> str:
    """A short digest of a skeleton: two snapshots whose interactive elements and alerts read the same (values,
    checked, expanded, hidden, texts) have one key, whatever else differs in their HTML."""
    return hashlib.sha256(json.dumps(sk, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
                          ).hexdigest()[:16]


def parse(html: str) -> LexborHTMLParser:
    return LexborHTMLParser(html)


def _text(node: LexborNode, limit: int | None = TEXT_CHARS) -> str:
    return _collapse(node.text(deep=True, separator=" ") or "", limit)


def _collapse(t: str, limit: int | None) -> str:
    """``_WS.sub(" ", t).strip()[:limit]`` (uncut when ``limit`` is 0 or None). A long ``t`` is collapsed
    a prefix at a time (4x the limit, then 4x longer) until the prefix gives more than ``limit``
    characters, as the collapsed prefix begins the collapsed whole (a link around a whole page was
    collapsed whole for its 50 characters)."""
    if limit:
        k = 4 * limit
        while k < len(t):
            head = _WS.sub(" ", t[:k]).lstrip()
            if len(head) > limit:
                return head[:limit]
            k *= 4
        return _WS.sub(" ", t).strip()[:limit]
    return _WS.sub(" ", t).strip()


def _hidden(attrs: dict[str, str | None]) -> bool:
    """Hidden by the element's own attributes (``attrs``: its ``node.attributes``)."""
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return True
    style = attrs.get("style")
    if not style:
        return False
    style = style.replace(" ", "").lower()
    return "display:none" in style or "visibility:hidden" in style


def _each_once(nodes: list[LexborNode]) -> list[LexborNode]:
    """``nodes`` without repeats, in document order: lexbor gives a node once for each selector of a list
    that matches it (a ``<div role=alert class=toast>`` twice), which made one toast two messages and one
    ``<button role=button>`` two elements."""
    seen: set[int] = set()
    out = []
    for node in nodes:
        if node.mem_id not in seen:
            seen.add(node.mem_id)
            out.append(node)
    return out


def extract(tree: LexborHTMLParser) -> Skeleton:
    """The skeleton: ``{key: descriptor}`` for interactive elements and alerts.

    Interactive elements are keyed by id, else name, else tag and position among
    the unnamed ones; alerts by position. Descriptors hold only short strings
    and booleans, so skeletons compare cheaply and serialize as JSON.
    """
    sk: Skeleton = {}
    unnamed = 0
    # The keys of sk by their part before any "~", counted from the first key given twice on (counting
    # them anew for each took 17 s for 20,000 links with one id)
    bases: Counter[str] | None = None
    for node in _each_once(tree.css(INTERACTIVE)):
        a = node.attributes
        tag = node.tag
        key = a.get("id") or (f"{tag}[name={a['name']}]" if a.get("name") else None)
        if key is None:
            unnamed += 1
            key = f"{tag}#{unnamed}"
        elif key in sk:
            if bases is None:
                bases = Counter(k.split("~", 1)[0] for k in sk)
            key = f"{key}~{bases[key]}"  # keys whose part before the first "~" is key (none if it holds one)
        d: dict[str, Any] = {"tag": tag}
        text = _text(node) or (a.get("aria-label") or a.get("title") or a.get("placeholder") or "")[:TEXT_CHARS]
        if text:
            d["text"] = text
        if tag in ("input", "textarea", "select"):
            if a.get("type") in ("checkbox", "radio"):
                d["checked"] = "checked" in a
            elif (value := a.get("value")) is not None:
                d["value"] = value[:TEXT_CHARS]
        if "disabled" in a or a.get("aria-disabled") == "true":
            d["disabled"] = True
        if (expanded := a.get("aria-expanded")) is not None:
            d["aria-expanded"] = expanded
        if (href := a.get("href")) is not None:
            d["href"] = href
        if role := a.get("role"):
            d["role"] = role
        if _hidden(a):
            d["hidden"] = True
        if bases is not None and key not in sk:
            bases[key.split("~", 1)[0]] += 1
        sk[key] = d
    for i, node in enumerate(_each_once(tree.css(ALERTS)), start=1):
        d = {"alert": True, "text": _text(node, 200)}
        if _hidden(node.attributes):
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


#: Snapshots up to this size have their body text read whole, in C, and cut: on 68 real WebArena and
#: WorkArena pages, 0.5 ms a page against 1.5 ms for walking the text nodes in Python (``_leading_text``),
#: 1.2 ms against 7.5 ms on one of 0.9 MB with 630,000 characters of indented text. A larger one is walked
#: only as far as the cut needs: its whole text may be tens of MB, and on a page of paragraphs the walk
#: stops early (1 MB: 2.6 ms whole, 0.4 ms walked; 4 MB: 5.7 ms whole).
WHOLE_TEXT_BYTES = 1024 * 1024


def page_text(tree: LexborHTMLParser) -> PageText:
    """Title and body text. Removes script, style, noscript and template nodes from
    ``tree`` (their text is not on the page), so extract the skeleton first."""
    title_node = tree.css_first("title")
    title = _text(title_node, 200) if title_node else ""
    body = drop_unrendered(tree)
    text = ""
    if body is not None:
        text = _text(body, 5000) if len(tree.raw_html) <= WHOLE_TEXT_BYTES else _leading_text(body, 5000)
    return PageText(title, text)


def drop_unrendered(tree: LexborHTMLParser) -> LexborNode | None:
    """Remove the script, style, noscript and template nodes of the body (what :func:`page_text` does to
    the tree); the body, if any."""
    body = tree.body
    if body is not None:
        for bad in body.css("script, style, noscript, template"):
            bad.decompose()
    return body


def _leading_text(node: LexborNode, limit: int) -> str:
    """``_text(node, limit)`` without building the whole text: the text nodes are read in document order
    only until their collapsed text is longer than ``limit`` (a 31 MB snapshot of paragraphs held its
    whole text several times over, 430 MB, for 5,000 characters). Text nodes of ASCII whitespace alone
    are passed over (in C): between the separators they would only lengthen a run of whitespace."""
    parts: list[str] = []
    size = 0
    checked = 0
    for n in node.traverse(include_text=True, skip_empty=True):
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
