"""What a harness's own prompt says its actions do, when the prompt sits beside its runs: a drafted action name
typed by its meaning there, with the prompt's line quoted as the evidence.

A name alone misleads: Mobile-Agent's ``exit`` reads as an answer and goes back to the home screen ("7. exit.
Exit the app and go back to the desktop."); AppAgent's answer is ``FINISH``, which its runs may never reach
("If you believe the task is completed ..., you should output FINISH."). The prompt that defined the actions
to the model says which is which. It is looked for in text files whose names say they are a prompt or a
README (``prompt.txt``, ``system_prompt.md``, ``README.md``) in the sampled run folders and the folders above
them up to the drafted folder, and in the logs' own members that hold a prompt (``prompt``, ``system_prompt``,
a chat's ``system`` turn). A line that defines an action (``exit: go back to the home screen``, ``- stop(answer):
...``, ``8. stop. If you think you have completed the instruction, ...``, or a call alone on its line with its
description on the next) and a sentence that tells the model to output a name when the task is complete are
read; a description that sends the screen home or back makes a name drafted as DONE a NAVIGATE, one that ends
the task makes it DONE. A description that says both decides nothing.

The prompt's text is data: read in bounded amounts, never run, and quoted in a TOML comment with every
character that is not printable replaced."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .vocab import norm, toml_str, type_of

#: File names that hold a harness's prompt or its docs.
PROMPT_FILE = re.compile(r"(?i)^(?:[\w.-]*prompt[\w.-]*|readme|system[\w.-]*|instructions?|actions?)"
                         r"\.(?:txt|md|markdown|rst|prompt)$")
#: Members of a log that hold a prompt.
PROMPT_KEYS = frozenset({"prompt", "system_prompt", "system", "system_message", "instructions", "instruction_prompt",
                         "sys_prompt"})
MAX_BYTES = 256 * 1024  # of one prompt file, and of one prompt member
MAX_SOURCES = 8  # distinct prompt texts read
MAX_LINE = 2000
MAX_QUOTE = 160

_DEF = re.compile(r"^\s*(?:[-*+\u2022]\s*|\d{1,2}[.)]\s*)?[`'\"]?(?P<name>[A-Za-z_]\w*(?: [A-Za-z_]\w*){0,2}?)[`'\"]?"
                  r"\s*(?:\((?P<args>[^()]{0,80})\))?[`'\"]?\s*(?:(?P<sep>[:.\u2013\u2014-])\s+|(?P<end>[:.]?\s*$))"
                  r"(?P<desc>.*)$")
_TOLD = re.compile(r"\b(?:output|call|use|respond\s+with|reply\s+with|return|answer\s+with|say|issue|emit)\s+"
                   r"(?:`(?P<tick>[A-Za-z_]\w*)(?:\([^)`]*\))?`|(?P<caps>[A-Z][A-Z_]{2,})\b)")
#: A description that sends the screen home or back: a navigation, not an answer.
_HOME = re.compile(r"(?i)\b(?:home\s*screen|home\s*page|desktop|launcher|go(?:es|ing)?\s+back|returns?\s+to|"
                   r"back\s+to|previous\s+(?:page|screen)|navigat\w*)\b")
#: A description that ends the task: the agent's answer.
_ENDS = re.compile(r"(?i)\b(?:(?:task|instruction|goal|objective)\b[^.]{0,40}?\b(?:complete[ds]?|finished|done|"
                   r"accomplished)|complete[ds]?\s+the\s+(?:whole\s+)?(?:task|instruction|goal)|finish(?:es)?\s+the\s+"
                   r"(?:task|instruction)|stop\s+the\s+(?:whole\s+)?process|(?:give|provide|submit|return)s?\s+(?:the\s+|"
                   r"your\s+)?(?:final\s+)?answer|final\s+answer)")


@dataclass(frozen=True)
class Meaning:
    """What one action name means in a prompt: ``DONE`` or ``NAVIGATE``, and the line that says so, and where."""

    name: str
    type: str
    quote: str
    source: str
    told: bool = False  # from a sentence that tells the model to output the name (not a definition line)


def _read(path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        with path.open("rb") as f:
            return f.read(MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def _files(root: Path, run_dirs: Iterable[Path]) -> list[tuple[str, str]]:
    """The prompt files in the run folders and the folders above them up to ``root``: (name, text)."""
    folders: list[Path] = []
    for d in run_dirs:
        while d not in folders:
            folders.append(d)
            if d == root or root not in d.parents:
                break
            d = d.parent
    out = []
    for f in folders:
        try:
            names = sorted(p for p in f.iterdir() if PROMPT_FILE.match(p.name))
        except OSError:
            continue
        for p in names[:MAX_SOURCES]:
            text = _read(p)
            if text:
                out.append((p.relative_to(root).as_posix() if p.is_relative_to(root) else p.name, text))
    return out


def _members(value: Any, found: list[tuple[str, str]], depth: int = 0) -> None:
    """The prompt members of a parsed log (bounded depth and count), as (key, text)."""
    if depth > 4 or len(found) >= 50:
        return
    if isinstance(value, dict):
        if value.get("role") == "system" and isinstance(value.get("content"), str):
            found.append(("a system turn", value["content"][:MAX_BYTES]))
        for k, v in list(value.items())[:200]:
            if isinstance(v, str) and str(k).lower() in PROMPT_KEYS and len(v) > 40:
                found.append((f"its {k!r} member", v[:MAX_BYTES]))
            elif isinstance(v, (dict, list)):
                _members(v, found, depth + 1)
    elif isinstance(value, list):
        for v in value[:50]:
            _members(v, found, depth + 1)


def sources(root: Path, run_dirs: Iterable[Path], logs: Iterable[Any]) -> list[tuple[str, str]]:
    """The distinct prompt texts beside the runs and inside their sampled logs: (where, text), at most
    :data:`MAX_SOURCES`."""
    found = _files(root, run_dirs)
    for v in logs:
        members: list[tuple[str, str]] = []
        _members(v, members)
        found += [(f"the log's {k[4:] if k.startswith('its ') else k}", t) for k, t in members]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for where, text in found:
        key = re.sub(r"\s+", " ", text)[:4000]
        if key not in seen:
            seen.add(key)
            out.append((where, text))
        if len(out) >= MAX_SOURCES:
            break
    return out


def _kind(desc: str) -> str | None:
    home, ends = _HOME.search(desc), _ENDS.search(desc)
    if bool(home) == bool(ends):
        return None
    return "NAVIGATE" if home else "DONE"


def quote(text: str) -> str:
    """A prompt's words as a one-line comment: blanks as one space, no character that is not printable, cut."""
    s = "".join(c if c.isprintable() else "?" for c in re.sub(r"\s+", " ", text).strip())
    return s if len(s) <= MAX_QUOTE else s[:MAX_QUOTE - 3] + "..."


def meanings(texts: list[tuple[str, str]]) -> dict[str, Meaning]:
    """Each action name (as :func:`~.vocab.norm` keys it) a prompt describes as going home or back
    (``NAVIGATE``) or as ending the task (``DONE``); the first source that decides a name wins."""
    out: dict[str, Meaning] = {}
    for where, text in texts:
        # runs of blanks collapsed to one: the definition pattern has several optional blanks in a row, and on a
        # line padded with blanks its matching would take cubic time (0.06 s at 400 blanks, 7 s at 2000)
        lines = [" ".join(ln[:MAX_LINE].split()) for ln in text.splitlines()[:20_000]]
        for i, ln in enumerate(lines):
            m = _DEF.match(ln)
            if m is None:
                continue
            desc, said = m.group("desc").strip(), ln.strip()
            if not desc and m.group("args") is not None:  # a call alone on its line: its description is the next
                nxt = next((x.strip() for x in lines[i + 1:i + 3] if x.strip()), "")
                desc, said = nxt, f"{ln.strip()} {nxt}"
            kind = _kind(desc) if desc else None
            key = norm(m.group("name"))
            if kind and key and key not in out:
                out[key] = Meaning(m.group("name"), kind, quote(said), where)
        flat = re.sub(r"\s+", " ", text[:MAX_BYTES])
        for sentence in re.split(r"(?<=[.!?])\s+", flat):
            if not _ENDS.search(sentence) or _HOME.search(sentence):
                continue
            for t in _TOLD.finditer(sentence):
                name = t.group("tick") or t.group("caps")
                if norm(name) not in out:
                    out[norm(name)] = Meaning(name, "DONE", quote(sentence), where, told=True)
    return out


def apply(types: dict[str, tuple[str, str]], texts: list[tuple[str, str]]) -> list[str]:
    """``types`` (a draft's ``[step.types]``: the log's name -> (type, comment)) typed by what the prompts in
    ``texts`` say: a name drafted DONE (or not guessed) that the prompt sends home is NAVIGATE; a name drafted
    DONE or not guessed, or one the sampled runs never used, that it describes as ending the task is DONE. A name
    drafted as another action (a click, a scroll) is left as drafted; a name the sampled runs never used is added
    only when the vocabulary knows it as an answer or the prompt tells the model to output it (a heading such as
    ``Action: <...>`` is not an action). Returns what changed, in words."""
    said = meanings(texts)
    if not said:
        return []
    drafted = {norm(k): k for k in types}
    changed = []
    for key, m in said.items():
        name = drafted.get(key)
        now = types[name][0] if name is not None else None
        guess = type_of(m.name)[0]
        if m.type == "NAVIGATE" and not (now in ("DONE", "") or name is None and guess == "DONE"):
            continue
        if m.type == "DONE" and now not in (None, "DONE", ""):
            continue
        if m.type == "DONE" and name is None and not (guess == "DONE" or guess is None and m.told):
            continue  # a name the runs never used: an answer word, or one the prompt tells the model to output
        where = f" ({m.source})"
        types[name or m.name] = (m.type, f"    # the harness's prompt{where}: {toml_str(m.quote)}")
        if now != m.type:
            changed.append(f"action {m.name!r}: {m.type} by the harness's prompt{where} ({m.quote!r})")
    return changed


__all__ = ["Meaning", "apply", "meanings", "quote", "sources"]
