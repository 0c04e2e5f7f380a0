"""``trajcheck draft-mapping FOLDER``: a mapping file drafted from a sample of the runs under a folder.

The draft finds the log (one file a run, or one file a step), the steps in it (a list, an object's members,
chat turns, or the lines of a text log), the action (a field and its vocabulary mapped to trajcheck's types,
or a grammar trajcheck parses: UI-TARS replies, tool calls, pyautogui code), its point, text and keys, the
reasoning, the screenshots (a field, or files named from the step's key, position or line), the goal, and an
outcome recorded in the log or in a results file beside the runs. What it is unsure of is a comment in the
draft. It reads at most ``sample`` runs, spread over the folder, so a folder of any size drafts in seconds.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...kit.screenshots import looks_like_base64
from . import endings, imagerefs, nested, prompt
from .check import BY_PLACE, checked, closing
from .pathjoin import join_lines, path_pattern
from .. import text as textlog
from .blocks import draft_blocks
from .builtin import reader_for
from .files import LOG_SUFFIXES, Folder, goal_key, images, log_names, outcome_lines, scan, shot_lines
from .steps import StepDraft, draft_steps
from ..steps import IMAGE_SUFFIXES, from_lines, members
from .vocab import SCORE_KEYS, SUCCESS_KEYS, jkey, pick, toml_str
from ....base.errors import UsageError

MAX_SAMPLE_BYTES = 64 * 1024 * 1024
#: Most run folders' names a path pattern is drafted from (all must share its structure).
MAX_NAMES = 100_000
_LINE = re.compile(r"^\s*(?P<head>[A-Za-z][A-Za-z _-]{0,20}?)[ #:]*(?P<num>\d+)\s*[:.)\]-]+\s*"
                   r"(?P<word>[A-Za-z_][\w.-]*)")


@dataclass
class MappingDraft:
    """A drafted mapping: its TOML text, what the draft is unsure of, the folders holding the log and those read."""

    text: str
    unsure: list[str] = field(default_factory=list)
    runs: int = 0
    sampled: int = 0
    #: the reader trajcheck has that reads every run under the folder: no mapping is needed (``text`` says so)
    reader: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"mapping": self.text, "unsure": self.unsure, "runs": self.runs, "sampled": self.sampled,
                "reader": self.reader}


def _spread(items: list[Any], n: int) -> list[Any]:
    if len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def _read(path: Path) -> tuple[str, Any]:
    try:
        if path.stat().st_size > MAX_SAMPLE_BYTES:
            return "", None
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return "", None
    if path.suffix.lower() in textlog.CSV_SUFFIXES:  # a CSV log: its rows are the steps
        return text, textlog.load(text, path.name, run="", problems=[])
    if textlog.is_html(path.name, text):  # an HTML log: its text, images as ![alt](src) lines
        return textlog.html_text(text), None
    value = textlog.load(text, path.name, run="", problems=[]) if path.suffix.lower() in (
        ".json", ".jsonl") or text.lstrip("\ufeff \t\r\n")[:1] in "[{" else None
    return text, value


def _container(value: Any, depth: int = 0, path: str = "@") -> list[tuple[int, str, str, Any]]:
    """Where steps may be in a parsed log: (score, kind, JMESPath, value) for lists, chats and keyed objects."""
    out: list[tuple[int, str, str, Any]] = []
    if isinstance(value, list) and value:
        dicts = [v for v in value if isinstance(v, dict)]
        if dicts and sum("role" in d and "content" in d for d in dicts) * 2 >= len(dicts) and \
                any(d.get("role") == "assistant" for d in dicts):
            out.append((10_000 + len(value), "chat", path, value))
        elif all(isinstance(v, (dict, str)) for v in value[:50]):
            out.append((len(value) * (2 if dicts else 1) + 5, "list", path, value))
            out += nested.flattened(value, path)  # a few records each holding a list of steps
    if isinstance(value, dict):
        numbered = [k for k, v in value.items() if str(k).isdigit() and isinstance(v, (dict, str))]
        if len(numbered) >= 1 and len(numbered) * 2 >= len(value):
            out.append((len(numbered) * 2 + 4, "members", path, value))
        if depth < 3:
            for k, v in value.items():
                sub = jkey(str(k)) if path == "@" else f"{path}.{jkey(str(k))}"
                out += _container(v, depth + 1, sub)
    return out


def _steps_of(values: list[Any]) -> tuple[str, str, list[list[Any]], list[list[str]]] | None:
    """The steps' container common to the sampled logs: (kind, JMESPath, each log's steps, each log's keys)."""
    votes: Counter[tuple[str, str]] = Counter()
    for v in values:
        c = _container(v)
        if c:
            best = max(c, key=lambda t: (t[0], -len(t[2])))
            votes[(best[1], best[2])] += 1
    if not votes:
        return None
    (kind, expr), _ = votes.most_common(1)[0]
    import jmespath

    steps, keys = [], []
    for v in values:
        got = jmespath.search(expr, v) if expr != "@" else v
        if kind == "members" and isinstance(got, dict):
            pairs = members(got, None)
            steps.append([s for _, s in pairs])
            keys.append([k for k, _ in pairs])
        elif isinstance(got, list):
            steps.append(got)
            keys.append([])
    return kind, expr, steps, keys


def _line_pattern(texts: list[str]) -> str | None:
    """A regular expression for a text log's step lines (``Step 02: left_click - at (251, 37)``): the most
    common head word before a number, then the action word and the rest."""
    heads: Counter[str] = Counter()
    for t in texts:
        for line in t.splitlines()[:5000]:
            m = _LINE.match(line)
            if m:
                heads[m.group("head").strip()] += 1
    if not heads:  # no numbered step lines: lines that start with the action in brackets ("[Click] at (1, 2)")
        lines = [ln for t in texts for ln in t.splitlines()[:5000] if ln.strip()]
        bracket = r"^\s*\[(?P<action>[A-Za-z_][\w .-]{0,30})\]\s*(?P<rest>.*)$"
        return bracket if lines and sum(bool(re.match(bracket, ln)) for ln in lines) * 2 >= len(lines) else None
    head = re.escape(heads.most_common(1)[0][0])
    return rf"^\s*{head}[ #:]*(?P<step>\d+)\s*[:.)\]-]+\s*(?P<action>[A-Za-z_][\w.-]*)\W*?(?P<rest>.*)$"


def draft(folder: Path, sample: int = 20) -> MappingDraft:
    """A mapping for the runs under ``folder``, drafted from at most ``sample`` of them."""
    if not folder.is_dir():
        raise UsageError(f"{folder} does not exist or is not a folder")
    builtin = reader_for(folder, sample)
    if builtin is not None:
        name, runs = builtin
        return MappingDraft(f"# No mapping is needed: the {name} reader reads these runs (trajcheck formats {name}).\n"
                     f"# Score them as they are: trajcheck score {_printable(str(folder))} --out LEDGER\n",
                     [], runs, 0, reader=name)
    folders = scan(folder)
    cands = log_names(folders)
    if not cands:
        raise UsageError(f"{folder}: no log file ({', '.join(LOG_SUFFIXES)}) under it; nothing to draft from")
    tied = [c for c in cands if c[2] == cands[0][2]][:8]
    first_error: UsageError | None = None
    for cand in tied:  # of logs in as many folders, the first the draft reads steps from
        try:
            return _draft_from(folder, folders, cand, [c for c in tied if c is not cand], sample)
        except UsageError as exc:
            first_error = first_error or exc
    assert first_error is not None
    raise first_error


def _draft_from(folder: Path, folders: list[Folder], cand: tuple[str, str, int], tied: list[tuple[str, str, int]],
                sample: int) -> MappingDraft:
    """The draft of the runs whose log is ``cand`` (kind, glob, folders holding it); UsageError when no step is
    found in it. ``tied``: the other logs in as many folders (named as unsure)."""
    unsure: list[str] = []
    kind, glob, count = cand
    if tied:
        unsure.append(f"log: {glob!r} and {tied[0][1]!r} are both in {count} folders; {glob!r} is used")
    import fnmatch

    run_dirs = [f.path for f in folders if any(fnmatch.fnmatch(n, glob) for n in f.logs)]
    picked = _spread(run_dirs, sample)
    logs = [sorted(p for p in d.iterdir() if fnmatch.fnmatch(p.name, glob)) for d in picked]
    run_lines = [f"files = {toml_str(glob)}"] if kind == "file" else [f"step_files = {toml_str(glob)}"]
    others = _other_step_files(logs, glob) if kind == "steps" else None
    if others:
        unsure[:] = [u for u in unsure if not u.startswith("log: ")]
        run_lines.append(f"step_files_not = {toml_str(others)}   # files of another name pattern: not steps")
        logs = [[p for p in ls if not fnmatch.fnmatch(p.name, others)] for ls in logs]
    read = [_read(ls[0]) for ls in logs if ls] if kind == "file" else \
        [_read(p) for ls in logs for p in ls[:50]]
    texts, values = [t for t, _ in read], [v for _, v in read]
    body = _body(kind, texts, values, logs, picked, unsure, run_lines)
    prompt.apply(body.types, prompt.sources(folder, picked, values))  # the harness's own words for its actions
    out = outcome_lines(folder, run_dirs, Path(glob).name)[0]
    path = path_pattern([d.name for d in run_dirs[:MAX_NAMES]]) if folder not in run_dirs else None
    if path is not None:  # values in the run folders' names, and a results file they find records in
        run_lines.append(f"path = {toml_str(path)}   # the {len(run_dirs)} run folders' names share this structure")
        if not out:
            out, more = join_lines(folder, run_dirs, path)
            unsure += more
    if not out and values and isinstance(values[0], dict):
        out = _log_outcome(values[0])
    text = _render(run_lines, body, out, unsure, folder, len(run_dirs), len(picked))
    for name, (n, of) in closing(text, picked, folder).items():  # a harness's closing call, by its place
        body.types[name] = ("DONE", f"    # {BY_PLACE}: the last action of each run it is in ({n} of {of})")
        unsure[:] = [u for u in unsure if not u.startswith(f"action {name!r}: no trajcheck type")]
        unsure.append(f"action {name!r}: no type known; drafted as DONE because it ends {n} of the {of} sampled "
                      "runs (always their last action): check it against the harness's docs")
    text = _render(run_lines, body, out, unsure, folder, len(run_dirs), len(picked))
    step_lines, more, comments = endings.drafted(text, picked)  # harness_stop, and ends with its evidence
    body.lines += step_lines
    unsure += more
    body.run_comments += comments
    text = _render(run_lines, body, out, unsure, folder, len(run_dirs), len(picked))
    text = checked(text, picked, folder, unsure)  # the guesses tested against the runs' own screenshots
    return MappingDraft(text, unsure, len(run_dirs), len(picked))


def _body(kind: str, texts: list[str], values: list[Any], logs: list[list[Path]], picked: list[Path],
          unsure: list[str], run_lines: list[str]) -> StepDraft:
    """The ``[run]`` shape lines (added to ``run_lines``) and the drafted ``[step]`` of the sampled logs."""
    groups: list[dict[str, list[str]]] = []
    if all(v is None for v in values):  # a text log: a step a block of lines, or one a matching line
        pattern = _line_pattern(texts)
        more: list[str] = []
        blocks = draft_blocks(texts, more)
        if blocks is not None and (pattern is None or blocks.step.has_shot or
                                   any(ln.startswith("reasoning") for ln in blocks.step.lines)):
            run_lines += blocks.run_lines
            unsure += more
            sd = blocks.step
            if not sd.has_shot:
                runs: list[tuple[list[str], int, list[str], dict[str, list[str]]]] = \
                    [(images(d), blocks.blocks // max(1, len(picked)), [], {}) for d in picked]
                lines, extra = shot_lines(runs)
                sd.lines += lines
                unsure += extra
            return sd
        if pattern is None:
            raise UsageError("the logs are neither JSON nor text with numbered step lines or blocks of lines that "
                             "hold actions; write the mapping by hand (docs/formats.md)")
        run_lines.append(f"lines = {toml_str(pattern)}")
        rx = re.compile(pattern)
        steps = [[v for v, _ in from_lines(t, rx)] for t in texts]
        keys: list[list[str]] = [[] for _ in steps]
        groups = [{"step": [str(s["step"]) for s in st if s.get("step")]} for st in steps]
        sd = draft_steps("lines", steps, unsure)
    elif kind == "steps":  # one file per step: each file is a step
        per_run = [sum(1 for _ in ls[:50]) for ls in logs]
        it = iter(values)
        steps = [[next(it) for _ in range(n)] for n in per_run]
        keys = [[] for _ in steps]
        sd = draft_steps("list", steps, unsure)
        if isinstance(values[0], dict) and (g := goal_key(values[0])):
            run_lines.append(f"goal = {toml_str(g)}")
        if sd.only is not None:
            run_lines.append(f"steps = {toml_str(f'[@][?{jkey(sd.only[0])}==' + repr(sd.only[1]) + ']')}")
    else:
        found = _steps_of([v for v in values if v is not None])
        if found is None:
            raise UsageError("no list of steps, keyed object or chat found in the sampled logs; write the mapping "
                             "by hand (docs/formats.md)")
        shape, expr, steps, keys = found
        run_lines.append(f"steps = {toml_str(expr)}")
        if shape == "chat":
            run_lines.append("chat = true            # the assistant turns are the steps; images of the others, frames")
            run_lines += _chat_goal(steps[0] if steps else [])
        if isinstance(values[0], dict) and (g := goal_key(values[0])):
            run_lines.append(f"goal = {toml_str(g)}")
        sd = draft_steps(shape, steps, unsure)
        if sd.only is not None and shape == "list":
            i = next(i for i, ln in enumerate(run_lines) if ln.startswith("steps = "))
            keep = f"[?{jkey(sd.only[0])}==" + repr(sd.only[1]) + "]"  # after a flatten, a filter of its result
            run_lines[i] = f"steps = {toml_str(expr + (' | ' if expr.endswith('[]') else '') + keep)}"
        if not sd.has_shot:  # screenshots named by id in a map of images elsewhere in the log
            acting = [[s for s in st if sd.only is None or isinstance(s, dict) and str(s.get(sd.only[0])) == sd.only[1]]
                      for st in steps]
            refs = imagerefs.drafted([v for v in values if v is not None], acting)
            if refs is not None:
                run_lines += refs[0]
                sd.lines += refs[1]
                unsure += refs[2]
                sd.has_shot = True
    if not sd.has_shot and kind != "steps":
        runs = [(images(d), len(st), k, g) for d, st, k, g in zip(picked, steps, keys, groups or [{}] * len(steps))]
        lines, more = shot_lines(runs)
        sd.lines += lines
        unsure += more
        if not lines and any(r[0] for r in runs):
            unsure.append("screenshots: image files are in the runs, but none is named by a step's key or "
                          "position; set screenshot_file or screenshots by hand")
    return sd


def _other_step_files(logs: list[list[Path]], glob: str) -> str | None:
    """Another numbered file name pattern in the runs' folders whose files the step files' glob also matches
    (``x_neg_eval.json`` beside ``x.json``): what ``step_files_not`` leaves out."""
    import fnmatch

    names = [p.name for ls in logs for p in (ls[0].parent.iterdir() if ls else []) if p.is_file()]
    for kind, pattern, _ in log_names([Folder(Path("."), sorted(set(names)))]):
        if kind == "steps" and pattern != glob and any(fnmatch.fnmatch(n, glob) and fnmatch.fnmatch(n, pattern)
                                                        for n in names):
            return pattern
    return None


def _chat_goal(messages: list[Any]) -> list[str]:
    """The goal of a chat: the text of its first user turn (a string, or its first text part)."""
    first = next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
    if first is None:
        return []
    if isinstance(first.get("content"), str):
        return ["goal = \"[?role=='user'] | [0].content\""]
    if isinstance(first.get("content"), list) and any(isinstance(p, dict) and p.get("type") == "text"
                                                      for p in first["content"]):
        return ["goal = \"[?role=='user'] | [0].content[?type=='text'] | [0].text\""]
    return []


def _log_outcome(root: dict[str, Any]) -> list[str]:
    for holder, prefix in [(root, "")] + [(v, jkey(k) + ".") for k, v in root.items() if isinstance(v, dict)]:
        k = pick({k: v for k, v in holder.items() if isinstance(v, (bool, int, float, str))}, SUCCESS_KEYS)
        if k is not None and isinstance(holder[k], (bool, str)) and not (isinstance(holder[k], str) and
                                                                          len(holder[k]) > 20):
            return [f"success = {toml_str(prefix + jkey(k))}"]
        k = pick({k: v for k, v in holder.items() if isinstance(v, (int, float)) and not isinstance(v, bool)},
                 SCORE_KEYS)
        if k is not None:
            return [f"score = {toml_str(prefix + jkey(k))}"]
    return []


def _render(run_lines: list[str], sd: StepDraft, outcome: list[str], unsure: list[str], folder: Path, runs: int,
            sampled: int) -> str:
    out = [f"# A mapping drafted by `trajcheck draft-mapping` from {sampled} of the {runs} runs under "
           f"{_printable(folder.name)}/.",
           "# Check it with: trajcheck draft-mapping FOLDER --check (or trajcheck validate FOLDER --mapping THIS)."]
    out += [f"# UNSURE: {_printable(u)}" for u in unsure]
    out += ["", "[run]", *run_lines]
    out += [f"# {c}" for c in sd.run_comments]
    out += ["", "[step]", *sd.lines]
    if sd.types:
        out += ["", "[step.types]            # the log's action names -> trajcheck's types"]
        out += [f"{toml_str(k)} = {toml_str(v)}{c}" if v else f"# {toml_str(k)} = ?    UNSURE: no type guessed"
                for k, (v, c) in sorted(sd.types.items())]
    if outcome:
        out += ["", "[outcome]               # recorded by the harness or benchmark: evaluator evidence", *outcome]
    return "\n".join(out) + "\n"


def _printable(s: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in s)


def image_like(v: Any) -> bool:
    """A value that is a screenshot: a path ending in an image suffix, a data: URL, or base64."""
    return isinstance(v, str) and (v.lower().endswith(IMAGE_SUFFIXES) or v.startswith("data:image")
                                   or looks_like_base64(v))


__all__ = ["MappingDraft", "draft", "image_like"]
