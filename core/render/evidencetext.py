"""Evidence as a sentence a person reads: one renderer for ``failures``, ``timeline`` and the report.

A contract check's evidence is stored as data (``runs.contract_checks``: ``{"pattern": "Subscribed",
"selector": "[role=alert]", "texts": []}``); people read it as a sentence ("no line matched `Subscribed` in
`[role=alert]`"), written here once per check kind. The raw values stay in ``--format json`` (and csv); a
kind this module does not know is named plainly, and its evidence is never dumped as JSON. Values quoted
from a run are cut at :data:`QUOTE` characters (the whole value is in the JSON); the renderers escape them
for their medium (the terminal's ``clean``, the report's ``escape``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: The longest value quoted whole in a sentence; a longer one is cut, with "..." (the JSON has it whole).
QUOTE = 80
#: How many texts read from a selector's elements a sentence quotes.
TEXTS = 3


def quote(v: Any, limit: int = QUOTE) -> str:
    """A value from a run in backquotes, cut to ``limit`` characters."""
    text = " ".join(str(v).split())
    return f"`{text if len(text) <= limit else text[:limit - 3] + '...'}`"


def _n(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def _steps(steps: Sequence[Any]) -> str:
    return ("step " if len(steps) == 1 else "steps ") + ", ".join(map(str, steps))


def _on(ev: Mapping[str, Any]) -> str:
    return "on screen (OCR)" if ev.get("source") == "screen_text" else "on the page"


def _element_text(ok: bool, ev: Mapping[str, Any]) -> str:
    where = f" in {quote(ev.get('selector'))}" if ev.get("selector") else ""
    if ok:
        return f"a line{where} matched {quote(ev.get('pattern'))}" + (" (on screen, OCR)" if ev.get("source") ==
                                                                       "screen_text" else "")
    texts = ev.get("texts") or []
    read = "; it reads " + ", ".join(quote(t, 40) for t in texts[:TEXTS]) + (
        f" and {len(texts) - TEXTS} more" if len(texts) > TEXTS else "") if texts else ""
    return f"no line matched {quote(ev.get('pattern'))}{where}{read}"


def _elements(ok: bool, ev: Mapping[str, Any], absent: bool) -> str:
    n = int(ev.get("matches") or 0)
    sel = quote(ev.get("selector"))
    if n == 0:
        return f"no element matches {sel}"
    return f"{_n(n, 'element')} {'match' if n != 1 else 'matches'} {sel}" + (", which should be absent"
                                                                               if absent and not ok else "")


def _text(ok: bool, ev: Mapping[str, Any], present: bool) -> str:
    there = ok if present else not ok
    return f"{quote(ev.get('text'))} is {'' if there else 'not '}{_on(ev)}"


def _text_matches(ok: bool, ev: Mapping[str, Any]) -> str:
    if ok and ev.get("match") is not None:
        return f"{quote(ev.get('match'))} {_on(ev)} matches {quote(ev.get('pattern'))}"
    return f"nothing {_on(ev)} matches {quote(ev.get('pattern'))}"


def _url(ok: bool, ev: Mapping[str, Any]) -> str:
    return f"the URL {quote(ev.get('url'))} {'matches' if ok else 'does not match'} {quote(ev.get('pattern'))}"


def _box(ev: Mapping[str, Any]) -> str:
    return "region " + ("[" + ", ".join(map(str, ev["region"])) + "]" if ev.get("region") else "(none)")


def _region_matches(ok: bool, ev: Mapping[str, Any]) -> str:
    return (f"{_box(ev)} is {_n(int(ev.get('distance') or 0), 'bit')} from reference {quote(ev.get('reference'))}"
            f" ({'within' if ok else 'more than'} the {ev.get('max_distance')} allowed)")


def _region_changed(ok: bool, ev: Mapping[str, Any]) -> str:
    px = int(ev.get("changed_px") or 0)
    since = f"since step {ev.get('since_step')}"
    return f"{_box(ev)} changed {since} ({_n(px, 'pixel')})" if px else f"{_box(ev)} did not change {since}"


def _grid(ok: bool, ev: Mapping[str, Any]) -> str:
    active = ev.get("active_steps") or []
    parts = []
    for steps, what in ((ev.get("missing_required") or [], "required but not active"),
                        (ev.get("forbidden_active") or [], "active but forbidden")):
        if steps:
            parts.append(f"{_steps(steps)} {'is' if len(steps) == 1 else 'are'} {what}")
    margin, least = ev.get("margin"), ev.get("min_margin")
    if margin is not None and least is not None and margin < least:
        parts.append(f"the active and inactive cells differ by a margin of {margin}, under the {least} needed")
    seen = f"active: {', '.join(map(str, active))}" if active else "no step active"
    if ok or not parts:
        return f"{_steps(active) if active else 'no step'} active, as required (margin {margin})"
    return "; ".join(parts) + f" ({seen})"


def _answer(ok: bool, ev: Mapping[str, Any]) -> str:
    want = f"match {quote(ev['pattern'])}" if "pattern" in ev else f"equal {quote(ev.get('value'))}"
    return f"the answer {quote(ev.get('answer'))} {'does' if ok else 'does not'} {want}"


#: Each check kind's sentence, from whether it held and its evidence.
SENTENCES: dict[str, Callable[[bool, Mapping[str, Any]], str]] = {
    "element_text": _element_text,
    "element_exists": lambda ok, ev: _elements(ok, ev, absent=False),
    "element_absent": lambda ok, ev: _elements(ok, ev, absent=True),
    "text_present": lambda ok, ev: _text(ok, ev, present=True),
    "text_absent": lambda ok, ev: _text(ok, ev, present=False),
    "text_matches": _text_matches,
    "url_matches": _url,
    "region_matches": _region_matches,
    "region_changed": _region_changed,
    "region_unchanged": _region_changed,
    "grid": _grid,
    "answer_matches": _answer,
}


def check_sentence(check: Mapping[str, Any]) -> str:
    """A contract check (``{"type", "name", "passed", "evidence"}``, as ``runs.contract_checks`` holds it)
    in words: what its evidence shows. An undecided check says what was missing; a kind not known here is
    named, with where its evidence is."""
    kind, passed, ev = str(check.get("type")), check.get("passed"), check.get("evidence") or {}
    if not isinstance(ev, Mapping):
        ev = {}
    if passed is None or ev.get("undecided"):
        return f"undecided: {ev.get('undecided') or 'no evidence'}"
    say = SENTENCES.get(kind)
    if say is None:
        return f"a {kind} check {'held' if passed else 'failed'} (its evidence: --format json)"
    try:
        return say(bool(passed), ev)
    except (KeyError, TypeError, ValueError):  # evidence of another shape (an older or a plugin's check)
        return f"a {kind} check {'held' if passed else 'failed'} (its evidence: --format json)"


def failure_sentence(evidence: str | None, check: Mapping[str, Any] | None = None) -> str:
    """A run's failure evidence (``runs.failure_evidence``) for people: a failed contract check (``check``,
    found by :func:`trajcheck.queries.failuremodes.failed_check`) as its sentence, any other evidence as the
    analyzer worded it."""
    if check is not None:
        return f"contract check {quote(check.get('name'))} failed: {check_sentence(check)}"
    return evidence or ""


#: The process score's parts (runs.process_evidence), in the order they are said.
PROCESS_PARTS = (("effective", "effective actions"), ("progress", "progress"), ("recovery", "recovery"))


def process_sentence(score: float | None, evidence: str | Mapping[str, Any] | None) -> str:
    """The process score with its parts: '0.89: effective actions 2/3, progress 2/2, recovery 1/1 (recovered 1)';
    the steps left out as blocked; 'none' for a run none of whose steps could be judged (docs/failures.md)."""
    import json

    ev: Mapping[str, Any] = json.loads(evidence) if isinstance(evidence, str) else (evidence or {})
    if not ev:
        return "-"
    head = "none (no step could be judged)" if score is None else f"{score:.2f}"
    parts = []
    for key, words in PROCESS_PARTS:
        part = ev.get(key) or {}
        if not part.get("n"):
            continue
        kinds = [f"{k.replace('_', ' ')} {n}" for k, n in sorted(part.items()) if k not in ("k", "n")]
        parts.append(f"{words} {part['k']:g}/{part['n']}" + (f" ({', '.join(kinds)})" if kinds else ""))
    blocked = ev.get("blocked")
    if blocked:
        parts.append(f"{_n(blocked['steps'], 'step')} on an uncontrollable block from step {blocked['from']} "
                     f"({quote(blocked['by'])}) left out")
    return f"{head}: {'; '.join(parts)}" if parts else head
