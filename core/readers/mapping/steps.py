"""The shapes a mapping reads steps from, and the screenshots it pairs with them.

Steps come from a list (``[run] steps``), an object's members in natural key order (``{"1": ..., "2": ...}``:
the member's key is the step's ``{key}``), a chat message list (``[run] chat``: the turns of one role are
the steps; images in the other turns are their frames), the lines of a text log that match a regular
expression (``[run] lines``: each match's named groups are the step), or one file per step. Every step
knows its place (``index``, ``index1``, ``n``, ``key``, ``stem``), which screenshot templates and ``value``
fields use.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kit.reading import MAX_STEP_FILES, natural, safe_join
from ..kit.screenshots import looks_like_base64
from .fields import MAX_FIELD_CHARS, fill
from ...base.inputs import exists_not_dir

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
#: Most values looked at in one chat message for its images (a bounded walk).
MAX_WALK = 5000
#: Most lines of a text log looked at.
MAX_LINES = 1_000_000


@dataclass
class Rec:
    """One step as the mapping found it: the value its fields read, its place, the folder (relative to the
    run, ``""`` or ``"sub/"``) its screenshot paths are relative to, and frames the shape itself gave it."""

    value: Any
    ctx: dict[str, Any]
    folder: str = ""
    line: int | None = None
    pre: str | None = None
    post: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def context(i: int, key: str | None, stem: str | None, value: Any) -> dict[str, Any]:
    """What a template may name: the step's members (a line's named groups, an object's keys) and its place."""
    ctx: dict[str, Any] = {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, (str, int, float))
                           and not isinstance(v, bool)} if isinstance(value, dict) else {}
    ctx.update(index=i, index1=i + 1, n=i + 1, key=key if key is not None else i + 1, stem=stem)
    return ctx


def members(value: dict[str, Any], keys: re.Pattern[str] | None) -> list[tuple[str, Any]]:
    """An object's members that are steps (objects, or strings; keys matching ``keys`` when given), in natural
    key order (``"10"`` after ``"9"``)."""
    got = [(str(k), v) for k, v in value.items()
           if isinstance(v, (dict, str)) and (keys is None or keys.search(str(k)))]
    return sorted(got, key=lambda kv: natural(kv[0]))


def from_lines(text: str, pattern: re.Pattern[str]) -> list[tuple[dict[str, Any], int]]:
    """Each line of a text log matching ``pattern``: its named groups (and ``line``: the whole line) and its
    line number."""
    out = []
    for no, line in enumerate(itertools.islice(text.splitlines(), MAX_LINES), 1):
        m = pattern.search(line[:MAX_FIELD_CHARS])
        if m:
            out.append(({**{k: v for k, v in m.groupdict().items() if v is not None}, "line": line.strip()}, no))
    return out


def message_text(msg: Any) -> str:
    """A chat message's text: its content string, or its text parts joined."""
    content = msg.get("content") if isinstance(msg, dict) else msg
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text")) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def images_in(msg: Any, name: re.Pattern[str]) -> list[str]:
    """The images a chat message holds or names, in order: strings matching ``name`` (an image referenced by
    name, ``image_0002``), inline images (a data: URL, base64), and paths ending in an image suffix."""
    out: list[str] = []
    todo, seen = [msg], 0
    while todo and seen < MAX_WALK:
        v = todo.pop(0)
        seen += 1
        if isinstance(v, dict):
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
        elif isinstance(v, str):
            if looks_like_base64(v) or v.startswith("data:image"):
                out.append(v)
            elif len(v) < 4096:
                out += [m.group(0) for m in name.finditer(v)]
                if not out or out[-1] != v:
                    if v.lower().endswith(IMAGE_SUFFIXES) and "\n" not in v and len(v) < 1024:
                        out.append(v)
    return out


def chat_records(messages: list[Any], role_of: Any, step_role: str, image_name: re.Pattern[str],
                 folder: str) -> list[Rec]:
    """The turns of ``step_role`` as steps; the last image of the other turns before a step is its pre frame,
    the first one after it its post frame. Each step's value is its message plus ``content_text``."""
    recs: list[Rec] = []
    last: str | None = None
    for pos, msg in enumerate(messages):
        if role_of(msg) == step_role:
            value = {**msg, "content_text": message_text(msg)} if isinstance(msg, dict) else \
                {"content": msg, "content_text": message_text(msg)}
            recs.append(Rec(value, context(len(recs), str(pos), None, value), folder, pre=last,
                            extra={"message": pos}))
            continue
        for img in images_in(msg, image_name):
            last = img
            for r in reversed(recs):  # the first image after a step is its post frame
                if r.post is not None:
                    break
                r.post = img
    return recs


def image_file(run_dir: Path, folder: str, name: str, template: str | None) -> str:
    """An image named in a chat (``image_0002``) as a file beside the log: the template's file, else the name
    with the first image suffix that exists (the name itself when it has one)."""
    if looks_like_base64(name) or name.startswith("data:"):
        return name
    if template:
        return folder + (fill(template, {"name": name}) or name)
    if name.lower().endswith(IMAGE_SUFFIXES):
        return folder + name
    for suffix in IMAGE_SUFFIXES:
        target = safe_join(run_dir, folder + name + suffix)
        if target is not None and exists_not_dir(target):
            return folder + name + suffix
    return folder + name + ".png"


def glob_images(run_dir: Path, pattern: str) -> list[str]:
    """The files of ``pattern`` (a glob relative to the run folder) in natural order (``10.png`` after ``9.png``)."""
    try:
        found = [p.relative_to(run_dir).as_posix() for p in itertools.islice(run_dir.glob(pattern), MAX_STEP_FILES + 1)
                 if exists_not_dir(p)]
    except (OSError, ValueError, NotImplementedError):
        return []
    return sorted(found, key=natural)[:MAX_STEP_FILES]


def exists(run_dir: Path, rel: str) -> bool:
    target = safe_join(run_dir, rel)
    return target is not None and exists_not_dir(target)


def _next_ctx(ctx: dict[str, Any], step: int) -> dict[str, Any]:
    """The place one step later (or earlier): index, index1, n and a numeric key moved by ``step``."""
    out = dict(ctx)
    for k in ("index", "index1", "n"):
        out[k] = int(ctx[k]) + step
    key = str(ctx.get("key", ""))
    if key.isdigit():
        out["key"] = str(int(key) + step).zfill(len(key))
    return out


def template_frames(run_dir: Path, recs: list[Rec], pre_t: str | None, post_t: str | None,
                    pre: bool, offset: int = 0) -> tuple[list[str | None], list[str | None], list[str]]:
    """Each step's pre and post frame from the screenshot templates, and the names that are not files. With one
    template, a step's other frame is its neighbour's (a screenshot before each step is the previous step's
    after); the screen after the last step (or before the first) is used when it exists. ``offset``
    (``screenshots_offset``): a step's files are those the templates name for the step ``offset`` later."""
    def name(r: Rec, t: str, ctx: dict[str, Any] | None = None) -> str | None:
        ctx = ctx if ctx is not None else r.ctx
        got = fill(t, _next_ctx(ctx, offset) if offset else ctx)
        return None if got is None else r.folder + got

    n = len(recs)
    pres: list[str | None] = [None] * n
    posts: list[str | None] = [None] * n
    missing: list[str] = []
    one = pre_t if pre_t is not None else post_t
    for i, r in enumerate(recs):
        if pre_t is not None and post_t is not None:
            pres[i], posts[i] = name(r, pre_t), name(r, post_t)
        elif one is not None:
            shot = name(r, one)
            (pres if pre else posts)[i] = shot
    if (pre_t is None) != (post_t is None) and n and one is not None:
        shots = pres if pre else posts
        edge = name(recs[-1], one, _next_ctx(recs[-1].ctx, 1)) if pre else \
            name(recs[0], one, _next_ctx(recs[0].ctx, -1))
        for i in range(n):
            if pre:
                posts[i] = shots[i + 1] if i + 1 < n else (edge if edge and exists(run_dir, edge) else None)
            else:
                pres[i] = shots[i - 1] if i else (edge if edge and exists(run_dir, edge) else None)
    for lst in (pres, posts):
        for i, s in enumerate(lst):
            if s is not None and not exists(run_dir, s):
                missing.append(s)
                lst[i] = None
    return pres, posts, sorted(set(missing), key=natural)


#: The name of a harness's marked-up copy of a screenshot (set-of-marks labels, boxes) beside the screenshot.
_ANNOTATED = re.compile(r"^(?P<stem>.+?)[_-](?:labell?ed|annotated|marked|som|tagged|boxe[sd]|highlighted|drawn)"
                        r"(?P<ext>\.[A-Za-z]+)$", re.I)
_LAST_NUM = re.compile(r"(\d+)(?=\D*$)")


def plain_twin(run_dir: Path, rel: str) -> str:
    """The screenshot an annotated copy was made from, when it is beside it (``3_labeled.png`` -> ``3.png``): the
    screen as it was, without the harness's marks; else ``rel``."""
    m = _ANNOTATED.match(rel)
    if m is None:
        return rel
    plain = m.group("stem") + m.group("ext")
    return plain if exists(run_dir, plain) else rel


def next_numbered(run_dir: Path, rel: str, step: int = 1) -> str | None:
    """The file named like ``rel`` with its last number one higher (``x_2.png`` -> ``x_3.png``; ``step`` -1: one
    lower), when it exists: the screen after the last step of a log that names only the screens before each step."""
    m = _LAST_NUM.search(rel)
    if m is None or int(m.group(1)) + step < 0:
        return None
    digits = m.group(1)
    nxt = rel[:m.start()] + str(int(digits) + step).zfill(len(digits)) + rel[m.end():]
    return nxt if exists(run_dir, nxt) else None


def screen_of(name: str, names: set[str]) -> str:
    """The screenshot a file shows: itself, or for an annotated copy the screenshot beside it in ``names``."""
    m = _ANNOTATED.match(name)
    return name if m is None or m.group("stem") + m.group("ext") not in names else m.group("stem") + m.group("ext")
