"""Drafting a mapping's ``[step]``: from sampled steps (objects, strings, chat turns or a text log's lines),
where the action is (a field and its vocabulary, or a grammar trajcheck parses), its point, text and keys,
the reasoning, a screenshot field and a URL."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ...kit.screenshots import looks_like_base64
from ..grammars import parse_all
from ..fields import parse_embedded
from ..steps import IMAGE_SUFFIXES, message_text
from . import deep
from .vocab import (ACTION_KEYS, KEYS_KEYS, POINT_KEYS, SHOT_KEYS, TEXT_KEYS, THOUGHT_KEYS, URL_KEYS, X_KEYS, Y_KEYS,
                    jkey, pick, toml_str, type_of)

_TAG = re.compile(r"<(\w+)>\s*([\[{].*?)\s*</\1>", re.S)
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)
_UITARS = re.compile(r"\bAction\s*[:：]\s*[A-Za-z_]\w*\(")
_PAREN_POINT = re.compile(r"\(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*\)")
_OPENAI = {"click", "double_click", "scroll", "type", "keypress", "move", "drag", "wait", "screenshot"}
#: Longest sampled string a draft's patterns look at (they run on a bounded text).
MAX_SAMPLE_CHARS = 100_000
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
    #: (field, value): only the steps whose field has this value act (the others are planning or judging calls)
    only: tuple[str, str] | None = None
    type_fields: tuple[str, bool, list[str]] | None = None
    named_by: str | None = None  # the step's string field that names its action (its vocabulary in ``types``)


def _grammar_of(v: Any) -> str | None:
    items = v if isinstance(v, list) else [v]
    d = next((i for i in items if isinstance(i, dict)), None)
    if d is None:
        return None
    if ("name" in d and isinstance(d.get("input"), dict)) or isinstance(d.get("action"), str):
        return "anthropic"
    if "action_type" in d and isinstance(d.get("action_inputs"), dict):
        return "ui-tars"
    if isinstance(d.get("action"), dict) and d["action"].get("type") in _OPENAI or d.get("type") in _OPENAI \
            and ("x" in d or "keys" in d or "text" in d or "scroll_y" in d):
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
        _unknown_calls(d, samples, unsure)
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


def _unknown_calls(d: StepDraft, samples: list[str], unsure: list[str]) -> None:
    """The calls in the sampled replies that the grammar does not know (``tap(6)``, ``FINISH``), named in
    ``[step.types]`` by the vocabulary of action names."""
    names: Counter[str] = Counter()
    for s in samples[:500]:
        for act in parse_all(d.grammar or "", s)[0]:
            if act.type == "UNKNOWN" and act.extra.get("tool_action"):
                names[str(act.extra["tool_action"])] += 1
    _types(d, sorted(names), unsure)


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


def _dict_action(d: StepDraft, flat: dict[str, list[Any]], unsure: list[str]) -> tuple[str | None, list[Any]]:
    """The action of steps that are objects; returns the JMESPath of the action's object and its sampled values
    (for its point, text and keys), if there is one."""
    top = {k: v for k, v in flat.items() if "." not in k}
    key = pick(top, ACTION_KEYS)
    if key is None:  # a reply holding the action in a grammar, under another name
        for k, vals in top.items():
            strs = [v for v in vals if isinstance(v, str)]
            if _most(strs, lambda s: _UITARS.search(s) is not None or "pyautogui." in s or _TAG.search(s)):
                _strings(d, [s[:MAX_SAMPLE_CHARS] for s in strs], jkey(k), unsure)
                return None, []
        unsure.append("no field that names the action: set [step] type by hand")
        d.lines.append("type = 'action'          # UNSURE: no action field found")
        return None, []
    key = _namer(top, key)
    vals = [v for v in flat[key] if v is not None]
    path = jkey(key)
    if vals and all(isinstance(v, str) for v in vals):
        _strings(d, [v[:MAX_SAMPLE_CHARS] for v in vals], path, unsure)
        d.named_by = key if d.grammar is None else None
        return None, []
    grammar = _grammar_of(vals[0]) if vals else None
    if grammar is not None:
        d.grammar = grammar
        d.lines += [f"grammar = '{grammar}'", f"action = {toml_str(path)}"]
        return None, []
    objs = [v for v in vals if isinstance(v, dict)]
    if not objs:  # a list of action objects: the step's first one
        objs = [v[0] for v in vals if isinstance(v, list) and v and isinstance(v[0], dict)]
        path += "[0]"
        if any(isinstance(v, list) and len(v) > 1 for v in vals):
            unsure.append(f"steps hold several actions in {key!r}: the first of each is read")
    fields = _type_fields(objs)
    d.type_fields = (key, path.endswith("[0]"), fields)
    if not fields:
        unsure.append(f"the action object {key!r} has no name field: set [step] type by hand")
        return path, objs
    d.lines.append("type = " + toml_str(" || ".join(f"{path}.{jkey(f)}" for f in fields)))
    _types(d, sorted({str(o[f]) for o in objs for f in fields if isinstance(o.get(f), (str, int))}), unsure)
    return path, objs


def _namer(top: dict[str, list[Any]], key: str) -> str:
    """The step field that names the action: ``key``, unless its values are strings none of which is an action
    name trajcheck knows and another field's are (``type: 'Action Space'`` beside ``subType: 'Tap'``)."""
    def share(k: str) -> float:
        vals = [v for v in top[k] if v is not None]
        if not vals or not all(isinstance(v, str) and len(v) < 60 for v in vals):
            return -1.0
        return sum(type_of(v)[0] is not None for v in vals) / len(vals)

    if share(key) != 0.0:
        return key
    named = {k: share(k) for k in top if len({v for v in top[k] if isinstance(v, str)}) > 1}  # a vocabulary
    best = max(named, key=lambda k: (named[k], bool(re.search(r"type|action|name|kind|op|command|event", k, re.I))),
               default=key)
    return best if named.get(best, 0.0) > 0 else key


def _type_fields(objs: list[dict[str, Any]]) -> list[str]:
    """The string fields of action objects that name the action, best first: those whose values are known action
    names (``mouse_action_type: click``), then the generic name field (``action_type: MouseAction``)."""
    names: dict[str, list[str]] = {}
    for o in objs:
        for k, v in o.items():
            if isinstance(v, str) and re.search(r"type|action|name|kind|op|command|event", k, re.I) and len(v) < 60:
                names.setdefault(k, []).append(v)
    share = {k: sum(type_of(v)[0] is not None for v in vs) / len(vs) for k, vs in names.items()}
    best = sorted((k for k in share if share[k] > 0), key=lambda k: -share[k])
    generic = pick(names, ACTION_KEYS)
    return best + [generic] if generic is not None and generic not in best else best


def _point(d: StepDraft, keys: dict[str, list[Any]], prefix: str) -> bool:
    """x and y from a pair (``coordinate: [x, y]``), x/y members, or an object of two numbers
    (``mouse_position: {width, height}``)."""
    pk = pick(keys, POINT_KEYS)
    if pk is not None and any(isinstance(v, list) and len(v) >= 2 for v in keys[pk]):
        p = prefix + jkey(pk)
        d.lines += [f"x = {toml_str(p + '[0]')}", f"y = {toml_str(p + '[1]')}"]
        return True
    xk, yk = pick(keys, X_KEYS), pick(keys, Y_KEYS)
    if xk and yk:
        d.lines += [f"x = {toml_str(prefix + jkey(xk))}", f"y = {toml_str(prefix + jkey(yk))}"]
        return True
    for k, vs in keys.items():
        pair = next((v for v in vs if isinstance(v, dict)), None)
        nums = [m for m, x in pair.items() if isinstance(x, (int, float)) and not isinstance(x, bool)] if pair else []
        if pair and len(pair) == 2 and len(nums) == 2 and re.search(r"pos|point|coord|loc|xy", k, re.I):
            d.lines += [f"x = {toml_str(prefix + jkey(k) + '.' + jkey(nums[0]))}",
                        f"y = {toml_str(prefix + jkey(k) + '.' + jkey(nums[1]))}"]
            return True
    return False


def _others(d: StepDraft, flat: dict[str, list[Any]], action: str | None, objs: list[Any]) -> None:
    """Point, text, keys (in the action's object, else the step), reasoning, screenshot and URL fields."""
    if d.grammar is None:
        scopes: list[tuple[dict[str, list[Any]], str]] = []
        if action is not None:
            scopes.append((_flat([o for o in objs if isinstance(o, dict)]), action + "."))
        scopes.append(({k: v for k, v in flat.items() if "." not in k}, ""))
        any(_point(d, {k: v for k, v in sc.items() if "." not in k}, p) for sc, p in scopes)
        for names, f in ((TEXT_KEYS, "text"), (KEYS_KEYS, "keys")):
            for sc, p in scopes:
                keys = {k: v for k, v in sc.items() if "." not in k and any(isinstance(x, str) for x in v)}
                k = pick(keys, names) or next((k for k in keys if re.search(f"_{f.rstrip('s')}s?$|^{f}_", k)), None)
                if k is not None and not (p == "" and action is not None and k == action.split("[")[0]):
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


_B64 = re.compile(r"[A-Za-z0-9+/=\s]{200,}")


def _image(v: Any) -> bool:
    """A value that is a screenshot: a path ending in an image suffix (no newline), a data: URL, or base64."""
    if not isinstance(v, str):
        return False
    return (v.lower().endswith(IMAGE_SUFFIXES) and "\n" not in v and len(v) < 1024) or v.startswith("data:image") \
        or (looks_like_base64(v) and bool(_B64.fullmatch(v[:4096])))


def _acting(d: StepDraft, steps: list[dict[str, Any]]) -> tuple[str, str] | None:
    """A field of the steps (``status``) one of whose values marks exactly the steps whose action is understood,
    when the others have none: a log that records every model call (plan, act, judge) as a step. Failing that, a
    kind (``type: 'Action Space'``) that marks every understood step and more of its steps than not, the others
    none: some of the acting steps' names are not yet typed (``ClearInput``), the others are planning calls."""
    if d.type_fields is None and d.named_by is None or len(steps) < 3:
        return None
    ok = [_understood(d, s) for s in steps]
    if all(ok) or not any(ok):
        return None
    fields = sorted({k for s in steps for k, v in s.items() if isinstance(v, str) and len(v) < 40} - {d.named_by})
    for exact in (True, False):  # a value held by exactly the understood steps; else by all of them and few others
        for f in fields:
            vals = [s.get(f) for s in steps]
            if len(set(vals)) > 6:
                continue
            acting = {v for v, good in zip(vals, ok) if good}
            if len(acting) != 1:
                continue
            v = next(iter(acting))
            mine = [good for x, good in zip(vals, ok) if x == v]
            # relaxed, or beside a naming field: a kind every step is marked with, a few values that repeat
            marks = exact and d.named_by is None or all(isinstance(x, str) for x in vals) and 3 * len(set(vals)) <= \
                len(steps)
            if len(mine) < len(steps) and marks and (all(mine) if exact else 2 * sum(mine) >= len(mine)):
                return f, str(v)
    return None


def _understood(d: StepDraft, s: dict[str, Any]) -> bool:
    """A step whose action the draft types (by the action object's name field, or the step's naming field)."""
    if d.type_fields is None:
        m = re.search(_TYPE_RX, str(s.get(d.named_by or "", "")))
        return m is not None and d.types.get(m.group("type"), ("", ""))[0] != ""
    key, first, fields = d.type_fields
    a = s.get(key)
    a = a[0] if first and isinstance(a, list) and a else a
    if not isinstance(a, dict):
        return False
    name = next((a[f] for f in fields if isinstance(a.get(f), str)), None)
    return name is not None and (d.types.get(name, ("", ""))[0] != "")


def draft_steps(shape: str, runs: list[list[Any]], unsure: list[str]) -> StepDraft:
    """The ``[step]`` of steps of ``shape`` (list, members, chat or lines), sampled from several runs."""
    d = StepDraft()
    steps: list[Any] = [s[:MAX_SAMPLE_CHARS] if isinstance(s, str) else s for run in runs for s in run][:2000]
    if shape == "chat":
        texts = [message_text(s)[:MAX_SAMPLE_CHARS] for s in steps
                 if isinstance(s, dict) and s.get("role") == "assistant"]
        _strings(d, texts, "content_text", unsure)
        d.has_shot = True
        if d.grammar == "ui-tars":
            d.run_comments.append(_UITARS_SPACE)
        return d
    if shape == "lines":
        d.lines.append("type = 'action'")
        _types(d, sorted({str(s["action"]) for s in steps if s.get("action")}), unsure)
        rests = [str(s.get("rest", "")) for s in steps]
        if any(len(_PAREN_POINT.findall(r)) > 1 for r in rests):  # "Resolution (320, 720), Position (204, 170)"
            unsure.append("lines hold several (x, y) pairs: the last is read as the point")
            d.lines += ["x = " + _field("rest", regex=r"^.*\(\s*(?P<x>-?\d+(?:\.\d+)?)\s*,"),
                        "y = " + _field("rest", regex=r",\s*(?P<y>-?\d+(?:\.\d+)?)\s*\)[^()]*$")]
        elif any(_PAREN_POINT.search(r) for r in rests):
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
    first: list[str] = []
    action, objs = _dict_action(d, flat, first)
    _others(d, flat, action, objs)
    d.only = _acting(d, dicts)
    if d.only is not None and d.named_by is not None:  # drafted again from the acting steps alone
        f, v = d.only
        first = []  # what the first draft was unsure of is of the steps left out too
        d = draft_steps(shape, [[s for s in run if isinstance(s, dict) and str(s.get(f)) == v] for run in runs], first)
        d.only = (f, v)  # one filter: a second one found among the acting steps is not written
        first = [u for u in first if not u.startswith("only the steps with ")]
    unsure += first
    if d.grammar is None and not any(ln.startswith("x = ") for ln in d.lines):
        d.lines += deep.point_and_text(dicts if d.only is None else
                                       [s for s in dicts if str(s.get(d.only[0])) == d.only[1]], d.lines)
    if d.only is not None:
        unsure.append(f"only the steps with {d.only[0]} = {d.only[1]!r} hold actions trajcheck knows; the others "
                      "(planning or judging calls, by their actions) are left out")
    if d.grammar == "ui-tars":
        d.run_comments.append(_UITARS_SPACE)
    return d


__all__ = ["StepDraft", "draft_steps"]
