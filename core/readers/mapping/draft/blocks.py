"""Drafting a mapping for a text log whose steps span several lines (HTML and Markdown logs, and plain text):
the line that starts each step (``[run] blocks``), and in each block the action (a labelled line, ``Action:
click(3)``, or the last line that is a call of a known action), the image (``![alt](src)``: an HTML ``<img>`` or
a Markdown image; a labelled path), the thought, the URL, the time and the target, and in the text before the
first block the goal, task and model.

Every pattern drafted here is anchored to a line (``(?m)^...$``) or bounded by a literal that follows it, so it
runs in time linear in the text; the reader matches it under a time limit all the same."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..grammars import WEBARENA, parse_all
from .steps import StepDraft, _types
from .vocab import GOAL_KEYS, SHOT_KEYS, SYNONYMS, THOUGHT_KEYS, URL_KEYS, norm, toml_str

#: How much of each sampled text, and how many of its lines, the draft looks at.
MAX_TEXT_CHARS = 8 * 1024 * 1024
MAX_TEXT_LINES = 50_000
#: Longest line that may start a block (a heading, a separator), and most candidates tried.
MAX_SEPARATOR_CHARS = 80
MAX_CANDIDATES = 40
_IMAGE = re.compile(r"!\[[^\]\n]*\]\(([^)\n]+)\)")
_IMAGE_RX = r"!\[[^\]\n]*\]\((?P<screenshot>[^)\n]+)\)"
#: A labelled line: ``Action: click(3)``, ``**Thought:** ...``, ``- URL: https://...``.
_LABEL = re.compile(r"^[ \t>*_#-]{0,6}(?P<label>[A-Za-z][A-Za-z _]{0,24}?)[ \t*_]{0,3}[:：][ \t*_]*(?P<value>.*)$")
_LABEL_PREFIX = r"^[ \t>*_#-]{0,6}"
_LABEL_SUFFIX = r"[ \t*_]{0,3}[:：][ \t*_]*"
_PATH_SHOT = re.compile(r"\S+\.(?:png|jpe?g|webp)\b", re.I)
_CALL_START = re.compile(r"^\s*(?P<name>[A-Za-z_][\w.]*)\s*(?:$|[\[(]|\s)")
_TIME_KEYS = ("time", "timestamp", "date", "datetime", "at")
_TARGET_KEYS = ("target", "element", "element_id", "selector", "bid")
_ACTION_LABELS = ("action", "actions", "act", "operation", "command", "step_action", "next_action")
_RUN_LABELS = {"goal": GOAL_KEYS, "task_id": ("task_id",), "model": ("model", "model_name", "llm")}


@dataclass
class BlockDraft:
    """A drafted block pattern, the run lines and the ``[step]`` it reads."""

    run_lines: list[str] = field(default_factory=list)
    step: StepDraft = field(default_factory=StepDraft)
    blocks: int = 0
    acting: int = 0


def _lines(text: str) -> list[str]:
    return text[:MAX_TEXT_CHARS].splitlines()[:MAX_TEXT_LINES]


def _esc(text: str) -> str:
    """``text`` as a literal pattern (a space stays a space: the pattern reads as the line)."""
    return re.escape(text).replace("\\ ", " ").replace("\\#", "#")


def _shape(line: str) -> str:
    """A line as a pattern: its numbers as ``\\d+``, the rest literal."""
    return r"\d+".join(_esc(p) for p in re.split(r"\d+", line.strip()))


def _split(lines: list[str], rx: re.Pattern[str]) -> tuple[list[str], list[list[str]]]:
    """The lines before the first separator, and each block (from a separator to the next)."""
    head: list[str] = []
    blocks: list[list[str]] = []
    for ln in lines:
        if rx.fullmatch(ln.strip()):
            blocks.append([ln])
        elif blocks:
            blocks[-1].append(ln)
        else:
            head.append(ln)
    return head, blocks


def _label(line: str) -> tuple[str, str] | None:
    m = _LABEL.match(line)
    if m is None or len(line) > 100_000:
        return None
    return norm(m.group("label")), m.group("value").strip()


def _call_line(line: str) -> bool:
    """A line that is an action call: it starts with a known action name, followed by nothing, a bracket, a
    parenthesis or a space, and is no sentence (``click [8] where [8]``, ``go_back``, ``click(120, 40)``)."""
    m = _CALL_START.match(line)
    if m is None or len(line) > 2000:
        return False
    name = norm(m.group("name"))
    if name not in SYNONYMS and name not in WEBARENA and not name.startswith("pyautogui."):
        return False
    rest = line[m.end("name"):].strip()
    return not rest or rest[0] in "[(" or name in WEBARENA and len(rest.split()) <= 3


def _action_of(block: list[str], label: str | None) -> tuple[int, str] | None:
    """The block's action line (its index) and the action: the labelled line, else the last call line."""
    if label is not None:
        for i, ln in enumerate(block):
            got = _label(ln)
            if got and got[0] == label:
                return i, got[1]
        return None
    for i in range(len(block) - 1, 0, -1):
        if _call_line(block[i]):
            return i, block[i].strip()
    return None


def _labels(blocks: list[list[str]]) -> dict[str, int]:
    """The labels found once in a block, in how many blocks each is."""
    seen: Counter[str] = Counter()
    for b in blocks:
        here = Counter(got[0] for ln in b[1:] if (got := _label(ln)))
        seen.update(k for k, n in here.items() if n == 1)
    return dict(seen)


def _candidates(texts: list[list[str]]) -> list[str]:
    """Lines that may start each step: short lines (no image) whose shape repeats in every sampled text."""
    per_text = []
    for lines in texts:
        c = Counter(_shape(ln) for ln in lines if ln.strip() and len(ln.strip()) <= MAX_SEPARATOR_CHARS
                    and not _IMAGE.search(ln))
        per_text.append(c)
    common = set.intersection(*(set(k for k, n in c.items() if n >= 2 or len(texts) > 1 and n >= 1)
                                for c in per_text)) if per_text else set()
    total = Counter[str]()
    for c in per_text:
        total.update({k: c[k] for k in common})
    return [k for k, n in total.most_common(MAX_CANDIDATES) if n >= 2]


def _score(texts: list[list[str]], shape: str, labels_wanted: bool) -> tuple[int, int, int, int]:
    """How well ``shape`` splits the texts into steps: blocks with an action, blocks with one image, whether the
    shape names a step number, and (negated) the lines before the first block."""
    rx = re.compile(shape)
    acting = images = head_lines = 0
    for lines in texts:
        head, blocks = _split(lines, rx)
        head_lines += len(head)
        label = _action_label(blocks) if labels_wanted else None
        acting += sum(_action_of(b, label) is not None for b in blocks)
        images += sum(sum(len(_IMAGE.findall(ln)) for ln in b) == 1 for b in blocks)
    return acting, images, int(r"\d+" in shape), -head_lines


def _action_label(blocks: list[list[str]]) -> str | None:
    labels = _labels(blocks)
    found = [k for k in _ACTION_LABELS if labels.get(k, 0) * 2 >= len(blocks) > 0]
    return found[0] if found else None


def _pick(labels: dict[str, int], names: tuple[str, ...], n: int) -> str | None:
    return next((k for k in names if labels.get(k, 0) * 2 >= n > 0), None)


def draft_blocks(texts: list[str], unsure: list[str]) -> BlockDraft | None:
    """A block pattern and ``[step]`` for the sampled texts (an HTML log's text, Markdown, plain text); None when no
    repeated line splits them into blocks that hold actions."""
    sampled = [_lines(t) for t in texts if t.strip()]
    if not sampled:
        return None
    scored = [(_score(sampled, s, True), s) for s in _candidates(sampled)]
    scored = [(sc, s) for sc, s in scored if sc[0] >= 2]
    if not scored:
        return None
    (acting, _imgs, _num, _head), shape = max(scored, key=lambda t: t[0])
    rx = re.compile(shape)
    heads, blocks = [], []
    for lines in sampled:
        head, bl = _split(lines, rx)
        heads.append(head)
        blocks += bl
    if acting * 2 < len(blocks):
        return None
    sep = r"^[ \t]*" + shape + r"[ \t]*$"
    first = sep.replace(r"\d+", r"(?P<step>\d+)", 1)
    d = BlockDraft(blocks=len(blocks), acting=acting)
    pattern = "(?ms)" + first + ".*?(?=" + sep + "|\\Z)"
    d.run_lines.append(f"blocks = {toml_str(pattern)}   # a step: from each line like {_example(blocks)!r} to the next")
    d.run_lines += _run_fields(heads)
    _step(d, blocks, unsure)
    return d


def _example(blocks: list[list[str]]) -> str:
    return blocks[0][0].strip()[:60] if blocks else ""


def _run_fields(heads: list[list[str]]) -> list[str]:
    """The goal, task id and model from labelled lines before the first block (a log's header)."""
    labels: dict[str, str] = {}
    for head in heads[:1]:
        for ln in head:
            got = _label(ln)
            if got and got[0] not in labels:
                labels[got[0]] = ln
    out = []
    for key, names in _RUN_LABELS.items():
        k = next((n for n in names if n in labels), None)
        if k is not None:
            out.append(f"{key} = {{ path = 'text', regex = {toml_str('(?m)' + _label_rx(labels[k], key))} }}")
    return out


def _label_rx(line: str, group: str, multiline_until: list[str] | None = None) -> str:
    """A pattern for the labelled line ``line`` (its label as written), the value in the named group ``group``;
    with ``multiline_until``, the value runs over the next lines up to a line with one of those labels, an
    image line or the block's end."""
    m = _LABEL.match(line)
    assert m is not None
    label = _esc(m.group("label"))
    if multiline_until is None:
        return f"{_LABEL_PREFIX}{label}{_LABEL_SUFFIX}(?P<{group}>.*)$"
    stops = "|".join([f"{_LABEL_PREFIX}{_esc(s)}{_LABEL_SUFFIX}" for s in multiline_until] + [r"!\["])
    return f"(?ms){_LABEL_PREFIX}{label}{_LABEL_SUFFIX}(?P<{group}>.*?)\\s*(?=^(?:{stops})|\\Z)"


def _written(blocks: list[list[str]], label: str) -> str | None:
    """The first line carrying ``label`` as the log writes it."""
    for b in blocks:
        for ln in b:
            got = _label(ln)
            if got and got[0] == label:
                return ln
    return None


def _field(rx: str, *more: str) -> str:
    return "{ path = 'block', regex = " + toml_str(rx) + "".join(", " + m for m in more) + " }"


def _step(d: BlockDraft, blocks: list[list[str]], unsure: list[str]) -> None:
    sd = d.step
    n = len(blocks)
    labels = _labels(blocks)
    label = _action_label(blocks)
    found = [_action_of(b, label) for b in blocks]
    actions = [f[1] for f in found if f is not None]
    written = {k: _written(blocks, k) or "" for k in labels}
    as_written = sorted({m.group("label") for w in written.values() if (m := _LABEL.match(w))})
    if label is not None:  # where the action starts: after its label ...
        m = _LABEL.match(written[label])
        assert m is not None
        at = f"(?m){_LABEL_PREFIX}{_esc(m.group('label'))}{_LABEL_SUFFIX}"
    else:  # ... or at the last line of the block that starts with an action's name (greedy .* before it)
        names = sorted({norm(m.group("name")) for a in actions if (m := _CALL_START.match(a))})
        if names and all(w in WEBARENA for w in names):  # every name of the grammar, not just those sampled
            names = sorted(WEBARENA)
        at = r"(?ms).*^[ \t]*(?=(?:" + "|".join(_esc(w) for w in names) + r")\b)"
        unsure.append(f"no labelled action line: the last line of each block that starts with an action name "
                      f"({', '.join(names[:8])}) is read as its action")
    _action(sd, actions, at, unsure)
    _image(sd, blocks, found, labels, n, unsure)
    thought = _pick(labels, THOUGHT_KEYS, n)
    if thought is not None:
        stops = [s for s in as_written if norm(s) != thought]
        sd.lines.append("reasoning = " + _field(_label_rx(written[thought], "reasoning", stops)))
    else:
        unsure.append("no labelled thought in the blocks: set [step] reasoning by hand (a regex over 'block')")
    for names_, key in ((URL_KEYS, "url_before"), (_TIME_KEYS, "timestamp"), (_TARGET_KEYS, "target")):
        k = _pick(labels, names_, n)
        if k is not None:
            rx = "(?m)" + _label_rx(written[k], key)
            if key == "url_before":
                rx = rx.replace("(?P<url_before>.*)", r"(?P<url_before>\S+)")
            sd.lines.append(f"{key} = " + _field(rx) + ("   # the page the step saw; its URL after is the next "
                                                          "step's" if key == "url_before" else ""))


def _action(sd: StepDraft, actions: list[str], at: str, unsure: list[str]) -> None:
    """The action (``at``: a pattern that ends where it starts): a grammar that parses most of them (WebArena's
    ids, pyautogui, UI-TARS calls), else a vocabulary of names, with a point in parentheses and a quoted text."""
    field = _field(at + r"(?P<action>[^\n]*)")

    def parsed(g: str, a: str) -> bool:
        acts = parse_all(g, a)[0]
        return bool(acts) and acts[0].type != "UNKNOWN"

    for g in ("webarena", "pyautogui", "ui-tars"):
        ok = sum(parsed(g, a) for a in actions)
        own = {"pyautogui": r"pyautogui\.", "ui-tars": r"\b(?:start_box|start_point|point)\s*="}.get(g)
        if actions and ok * 2 >= len(actions) and (own is None or any(re.search(own, a) for a in actions)):
            sd.grammar = g
            note = "   # click [id], type [id] [text] [1], scroll [down], stop [answer]..." if g == "webarena" else ""
            sd.lines += [f"grammar = '{g}'{note}", f"action = {field}"]
            _types(sd, sorted({a.split("[")[0].split("(")[0].strip()[:40] for a in actions if not parsed(g, a)}),
                   unsure)
            return
    sd.lines.append("type = " + _field(at + r"(?P<type>[A-Za-z_][\w.-]*)"))
    _types(sd, sorted({m.group(0) for a in actions if (m := re.match(r"[A-Za-z_][\w.-]*", a))}), unsure)
    if any(re.search(r"\(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*\)", a) for a in actions):
        sd.lines += ["x = " + _field(at + r"[^\n(]*\(\s*(?P<x>-?\d+(?:\.\d+)?)"),
                     "y = " + _field(at + r"[^\n(]*\(\s*-?\d+(?:\.\d+)?\s*,\s*(?P<y>-?\d+(?:\.\d+)?)")]
    if any(re.search(r"[\"'][^\"'\n]*[\"']", a) for a in actions):
        sd.lines.append("text = " + _field(at + r"[^\n\"']*[\"'](?P<text>[^\"'\n]*)",
                                           'for = ["TYPE", "NAVIGATE", "DONE"]'))


def _image(sd: StepDraft, blocks: list[list[str]], found: list[tuple[int, str] | None], labels: dict[str, int],
           n: int, unsure: list[str]) -> None:
    """The block's image (``![alt](src)``, else a labelled path) as the step's screenshot, and whether it is the
    screen before the action (it comes before the action line) or after it."""
    where = [next((i for i, ln in enumerate(b) if _IMAGE.search(ln)), None) for b in blocks]
    shot_label = _pick(labels, SHOT_KEYS + ("screenshot_path", "image_file", "screen_shot"), n)
    if sum(w is not None for w in where) * 2 >= n > 0:
        sd.lines.append("screenshot = " + _field(_IMAGE_RX))
        if any(sum(len(_IMAGE.findall(ln)) for ln in b) > 1 for b in blocks):
            unsure.append("some blocks hold several images: the first of each is read as its screenshot")
    elif shot_label is not None:
        line = _written(blocks, shot_label) or ""
        where = [next((i for i, ln in enumerate(b) if (got := _label(ln)) and got[0] == shot_label), None)
                 for b in blocks]
        sd.lines.append("screenshot = " + _field("(?m)" + _label_rx(line, "screenshot").replace(
            "(?P<screenshot>.*)", r"(?P<screenshot>\S+)")))
    else:
        return
    sd.has_shot = True
    before = sum(1 for w, f in zip(where, found) if w is not None and f is not None and w < f[0])
    after = sum(1 for w, f in zip(where, found) if w is not None and f is not None and w > f[0])
    pre = before >= after
    sd.lines.append(f"screenshot_is = '{'pre' if pre else 'post'}'   # the image comes {'before' if pre else 'after'} "
                    f"the action line in {max(before, after)} of {before + after} blocks")
    if before and after:
        unsure.append(f"the image comes before the action in {before} blocks and after it in {after}: "
                      "screenshot_is is a guess")
