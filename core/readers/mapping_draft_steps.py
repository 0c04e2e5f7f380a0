"""Drafting a mapping's ``[step]``: from sampled steps (objects, strings, chat turns or a text log's lines),
where the action is (a field and its vocabulary, or a grammar trajcheck parses), its point, text and keys,
the reasoning, a screenshot field and a URL."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .kit.screenshots import looks_like_base64
from .mapping_fields import parse_embedded
from .mapping_steps import IMAGE_SUFFIXES, message_text
from .mapping_vocab import (ACTION_KEYS, KEYS_KEYS, POINT_KEYS, SHOT_KEYS, TEXT_KEYS, THOUGHT_KEYS, URL_KEYS, X_KEYS,
                            Y_KEYS, jkey, pick, toml_str, type_of)

_TAG = re.compile(r"<(\w+)>\s*([\[{].*?)\s*</\1>", re.S)
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)
_UITARS = re.compile(r"\bAction\s*[:：]\s*[A-Za-z_]\w*\(")
_PAREN_POINT = re.compile(r"\(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*\)")
_OPENAI = {"click", "double_click", "scroll", "type", "keypress", "move", "drag", "wait", "screenshot"}
_UITARS_SPACE = ("coordinates = 'smart-resize'   # UNSURE: UI-TARS points are decided from the data (relative-1000 "
                 "or smart-resize); UI-TARS-1.5 writes smart-resize")
_TYPE_RX = r'^\s*(?P<type>[^(:]*?)\s*(?:[(:]|$)'


@dataclass
class StepDraft:
    lines: list[str] = field(default_factory=list)
    types: dict[str, tuple[str, str]] = field(default_factory=dict)
    run_comments: list[str] = field(default_factory=list)
    has_shot: bool = False
    grammar: str | None = None


def _grammar_of(v: Any) -> str | None:
    items = v if isinstance(v, list) else [v]
    d = next((i for i in items if isinstance(i, dict)), None)
    if d is None:
        return None
    if ("name" in d and isinstance(d.get("input"), dict)) or isinstance(d.get("action"), str):
        return "anthropic"
    if "action_type" in d:
        return "ui-tars"
    if isinstance(d.get("action"), dict) or d.get("type") in _OPENAI:
        return "openai"
    return None


def _field(path: str, **more: str) -> str:
    parts = [f"path = {toml_str(path)}"] + [f"{k} = {toml_str(v)}" for k, v in more.items()]
    return "{ " + ", ".join(parts) + " }"


def _most(samples: list[str], test: Any) -> bool:
    return bool(samples) and sum(1 for s in samples if test(s)) * 2 >= len(samples)


def _strings(d: StepDraft, samples: list[str], path: str, unsure: list[str]) -> None:
    """The action of steps that are (or whose action is) strings: a grammar, JSON or a Python literal embedded in
    tags, or a vocabulary of names with an argument in parentheses."""
    if _most(samples, lambda s: "pyautogui." in s):
        fenced = _most(samples, lambda s: _FENCE.search(s) is not None)
        d.grammar = "pyautogui"
        d.lines += ["grammar = 'pyautogui'", "action = " + (_field(path, regex=r"(?s)```(?:python|py)?\s*\n(.*?)```")
                                                            if fenced else toml_str(path))]
        return
    if _most(samples, lambda s: _UITARS.search(s) is not None):
        d.grammar = "ui-tars"
        d.lines += ["grammar = 'ui-tars'", f"action = {toml_str(path)}"]
        return
    tags = Counter(m.group(1) for s in samples for m in [_TAG.search(s)] if m and
                   isinstance(parse_embedded(m.group(2), "auto"), (list, dict)))
    if tags and tags.most_common(1)[0][1] * 2 >= len(samples):
        tag = tags.most_common(1)[0][0]
        inner = next(parse_embedded(m.group(2), "auto") for s in samples for m in [_TAG.search(s)] if m)
        d.grammar = _grammar_of(inner)
        d.lines += [f"grammar = '{d.grammar or 'anthropic'}'",
                    "action = " + _field(path, regex=f"(?s)<{tag}>(.*?)</{tag}>", parse="auto")]
        if d.grammar is None:
            unsure.append(f"the <{tag}> values are data, but not calls of a grammar trajcheck knows")
        if _most(samples, lambda s: bool(s.split(f"<{tag}>", 1)[0].strip())):
            d.lines.append("reasoning = " + _field(path, regex=f"(?s)^(.*?)<{tag}>"))
        return
    parsed = [parse_embedded(s, "auto") for s in samples]
    if _most(parsed, lambda p: isinstance(p, (list, dict)) and _grammar_of(p)):
        d.grammar = _grammar_of(next(p for p in parsed if isinstance(p, (list, dict)) and _grammar_of(p)))
        d.lines += [f"grammar = '{d.grammar}'", "action = " + _field(path, parse="auto")]
        return
    _vocabulary(d, samples, path, unsure)


def _vocabulary(d: StepDraft, samples: list[str], path: str, unsure: list[str]) -> None:
    rx = re.compile(_TYPE_RX)
    names = Counter(m.group("type") for s in samples for m in [rx.search(s)] if m and m.group("type"))
    d.lines.append("type = " + _field(path, regex=_TYPE_RX))
    if any("(" in s for s in samples):
        d.lines.append("text = " + _field(path, regex=r"\((?P<text>.*)\)\s*$") [:-2] + ', for = ["TYPE", "NAVIGATE"] }')
    if any(_PAREN_POINT.search(s) for s in samples):
        d.lines += ["x = " + _field(path, regex=r"\(\s*(?P<x>-?\d+(?:\.\d+)?)\s*,"),
                    "y = " + _field(path, regex=r",\s*(?P<y>-?\d+(?:\.\d+)?)\s*\)")]
    _types(d, list(names), unsure)


def _types(d: StepDraft, names: list[str], unsure: list[str]) -> None:
    for name in names[:200]:
        t, how = type_of(name)
        if t is None:
            d.types[name] = ("", "")
            unsure.append(f"action {name!r}: no trajcheck type guessed (it is read as UNKNOWN)")
        else:
            d.types[name] = (t, "    # guessed from its first word" if how == "word" else "")


def _flat(steps: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Each key of the steps (and ``key.inner`` of their objects) with its sampled values."""
    out: dict[str, list[Any]] = {}
    for s in steps[:500]:
        for k, v in s.items():
            out.setdefault(str(k), []).append(v)
            if isinstance(v, dict):
                for k2, v2 in v.items():
                    out.setdefault(f"{k}.{k2}", []).append(v2)
    return out


def _dict_action(d: StepDraft, flat: dict[str, list[Any]], unsure: list[str]) -> str | None:
    """The action of steps that are objects; returns the key of the action's object (for its point), if any."""
    top = {k: v for k, v in flat.items() if "." not in k}
    key = pick(top, ACTION_KEYS)
    if key is None:  # a reply holding the action in a grammar, under another name
        for k, vals in top.items():
            strs = [v for v in vals if isinstance(v, str)]
            if _most(strs, lambda s: _UITARS.search(s) is not None or "pyautogui." in s or _TAG.search(s)):
                _strings(d, strs, jkey(k), unsure)
                return None
        unsure.append("no field that names the action: set [step] type by hand")
        d.lines.append("type = 'action'          # UNSURE: no action field found")
        return None
    vals = [v for v in flat[key] if v is not None]
    path = jkey(key)
    if vals and all(isinstance(v, str) for v in vals):
        _strings(d, vals, path, unsure)
        return None
    if vals and all(isinstance(v, (list, dict)) for v in vals) and _grammar_of(vals[0]) and not (
            isinstance(vals[0], dict) and pick(vals[0], ("type", "name", "action_type")) and
            _grammar_of(vals[0]) == "openai" and "x" not in vals[0] and not isinstance(vals[0].get("action"), dict)
            and vals[0].get("type") not in _OPENAI):
        d.grammar = _grammar_of(vals[0])
        d.lines += [f"grammar = '{d.grammar}'", f"action = {toml_str(path)}"]
        return None
    inner = {k.split(".", 1)[1]: v for k, v in flat.items() if k.startswith(key + ".")}
    ik = pick(inner, ACTION_KEYS)
    if ik is None:
        unsure.append(f"the action object {key!r} has no name field: set [step] type by hand")
        return key
    d.lines.append(f"type = {toml_str(path + '.' + jkey(ik))}")
    _types(d, sorted({str(v) for v in inner[ik] if isinstance(v, (str, int))}), unsure)
    return key


def _point(d: StepDraft, flat: dict[str, list[Any]], prefix: str) -> bool:
    keys = {k[len(prefix):]: v for k, v in flat.items() if k.startswith(prefix) and "." not in k[len(prefix):]}
    pk = pick(keys, POINT_KEYS)
    if pk is not None and any(isinstance(v, list) and len(v) >= 2 for v in keys[pk]):
        p = prefix + jkey(pk)
        d.lines += [f"x = {toml_str(p + '[0]')}", f"y = {toml_str(p + '[1]')}"]
        return True
    xk, yk = pick(keys, X_KEYS), pick(keys, Y_KEYS)
    if xk and yk:
        d.lines += [f"x = {toml_str(prefix + jkey(xk))}", f"y = {toml_str(prefix + jkey(yk))}"]
        return True
    return False


def _others(d: StepDraft, flat: dict[str, list[Any]], action_key: str | None) -> None:
    """Point, text, keys (in the action's object, else the step), reasoning, screenshot and URL fields."""
    if d.grammar is None:
        prefixes = ([action_key + "."] if action_key else []) + [""]
        any(_point(d, flat, p) for p in prefixes)
        for names, f in ((TEXT_KEYS, "text"), (KEYS_KEYS, "keys")):
            for p in prefixes:
                keys = {k[len(p):]: v for k, v in flat.items() if k.startswith(p) and "." not in k[len(p):]}
                k = pick({k: v for k, v in keys.items() if k != action_key and any(isinstance(x, str) for x in v)},
                         names)
                if k is not None:
                    d.lines.append(f"{f} = {toml_str(p + jkey(k))}")
                    break
    top = {k: v for k, v in flat.items() if "." not in k}
    r = pick({k: v for k, v in top.items() if any(isinstance(x, str) for x in v)}, THOUGHT_KEYS)
    if r is not None and not any(ln.startswith("reasoning") for ln in d.lines):
        d.lines.append(f"reasoning = {toml_str(jkey(r))}")
    shots = {k: v for k, v in flat.items() if any(_image(x) for x in v)}
    s = pick(shots, SHOT_KEYS) or next(iter(shots), None)
    if s is not None:
        d.has_shot = True
        path = ".".join(jkey(p) for p in s.split("."))
        after = re.search(r"after|post|next", s, re.I)
        d.lines += [f"screenshot = {toml_str(path)}", f"screenshot_is = '{'post' if after else 'pre'}'"]
    u = pick({k: v for k, v in top.items() if any(isinstance(x, str) and x.startswith("http") for x in v)}, URL_KEYS)
    if u is not None:
        d.lines.append(f"url = {toml_str(jkey(u))}")


def _image(v: Any) -> bool:
    return isinstance(v, str) and (v.lower().endswith(IMAGE_SUFFIXES) or v.startswith("data:image")
                                   or looks_like_base64(v))


def draft_steps(shape: str, runs: list[list[Any]], unsure: list[str]) -> StepDraft:
    """The ``[step]`` of steps of ``shape`` (list, members, chat or lines), sampled from several runs."""
    d = StepDraft()
    steps = [s for run in runs for s in run]
    if shape == "chat":
        texts = [message_text(s) for s in steps if isinstance(s, dict) and s.get("role") == "assistant"]
        _strings(d, texts, "content_text", unsure)
        d.has_shot = True
        if d.grammar == "ui-tars":
            d.run_comments.append(_UITARS_SPACE)
        return d
    if shape == "lines":
        d.lines.append("type = 'action'")
        _types(d, sorted({str(s["action"]) for s in steps if s.get("action")}), unsure)
        rests = [str(s.get("rest", "")) for s in steps]
        if any(_PAREN_POINT.search(r) for r in rests):
            d.lines += ["x = " + _field("rest", regex=r"\(\s*(?P<x>-?\d+(?:\.\d+)?)\s*,"),
                        "y = " + _field("rest", regex=r",\s*(?P<y>-?\d+(?:\.\d+)?)\s*\)")]
        for name in ("text", "keys", "key"):
            if any(re.search(rf"\b{name}\s*[:=]", r) for r in rests):
                f = "keys" if name == "key" else name
                d.lines.append(f"{f} = " + _field("rest", regex=rf"\b{name}\s*[:=]\s*(?P<{f}>.*)"))
                if f == "keys":
                    break
        return d
    if steps and all(isinstance(s, str) for s in steps):
        _strings(d, steps, "@", unsure)
        return d
    dicts = [s for s in steps if isinstance(s, dict)]
    flat = _flat(dicts)
    action_key = _dict_action(d, flat, unsure)
    _others(d, flat, action_key)
    if d.grammar == "ui-tars":
        d.run_comments.append(_UITARS_SPACE)
    return d


__all__ = ["StepDraft", "draft_steps"]
