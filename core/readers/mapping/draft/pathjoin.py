"""Drafting ``[run] path`` and ``[outcome.join]``: values the harness wrote into its run folders' names, and the
results file beside (or above) the runs whose records they find.

The run folders' names are cut at ``_`` into fields, a time stamp kept whole (``2025-03-01_12-30-05``,
``20250301T123005``). Only when every run folder's name has the same number of fields is there a structure: a
field equal in all of them is written as it is; a field of digits after the same word in all of them
(``task-17``, ``run2``) is that word and a group named after it (``task``, ``run``); the time stamp is ``time``;
another field that varies is ``condition`` (then ``condition2``...). The draft writes the expression only when
it matches every run folder's name and at least one group varies.

Then, for a results file (CSV, TSV, JSON, JSON Lines) in a folder above the runs whose records hold a success
flag or a score, each group is matched to the record field whose values are the group's (compared as
``[outcome.join]`` compares them, a prefix such as ``task-`` found when every matching value carries the same
one). The join is written with its counts; groups no field matches (the time stamp, most often) are left out
and named; what the records and the runs do not share is UNSURE."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..join import canonical, load_results
from .vocab import SCORE_KEYS, SUCCESS_KEYS, jkey, pick, toml_str

#: A time stamp in a folder's name: a date (with or without dashes), then optionally a time.
_TIME = re.compile(r"\d{4}-?\d{2}-?\d{2}(?:[T_ -]?\d{2}[-:.h]?\d{2}(?:[-:.m]?\d{2}(?:\.\d+)?)?)?")
_NUMBERED = re.compile(r"^(?P<word>[A-Za-z]+[-.]?)(?P<num>\d+)$")
_RESULTS = ("*.csv", "*.tsv", "*.json", "*.jsonl")
MAX_RESULTS_BYTES = 64 * 1024 * 1024


def _fields(name: str) -> list[str] | None:
    """A folder's name cut at ``_`` into fields, its time stamp (at most one) kept whole as ``\\0`` + the stamp."""
    m = _TIME.search(name)
    if m is not None and (m.start() == 0 or name[m.start() - 1] == "_") and \
            (m.end() == len(name) or name[m.end()] == "_"):
        before, after = name[:m.start()].rstrip("_"), name[m.end():].lstrip("_")
        return ([*before.split("_")] if before else []) + ["\0" + m.group(0)] + (after.split("_") if after else [])
    return name.split("_")


def _time_regex(stamps: list[str]) -> str:
    """An expression for the time stamps seen: digits as ``\\d``, the rest as it is."""
    shapes = {re.sub(r"\d", "0", s) for s in stamps}
    if len(shapes) != 1:
        return r"[0-9][0-9T_:.-]*[0-9]"
    return re.sub(r"0+", lambda m: rf"\d{{{len(m.group(0))}}}" if len(m.group(0)) > 1 else r"\d",
                  _esc(shapes.pop()))


def _esc(text: str) -> str:
    """``text`` as a regular expression, without the escapes a reader does not need (``-``, ``_``)."""
    return re.escape(text).replace("\\-", "-").replace("\\_", "_")


def _group_name(word: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z]", "", word.lower()) or "n"
    name, k = base, 2
    while name in taken:
        name, k = f"{base}{k}", k + 1
    taken.add(name)
    return name


def path_pattern(names: list[str]) -> str | None:
    """The ``[run] path`` expression of the run folders' ``names`` (see the module's doc), or None when they
    share no structure or nothing in them varies."""
    cut = [_fields(n) for n in names]
    if len(names) < 2 or any(c is None for c in cut) or len({len(c) for c in cut if c}) != 1:
        return None
    rows = [c for c in cut if c is not None]
    parts: list[str] = []
    taken: set[str] = set()
    varying = False
    for values in zip(*rows):
        if values[0].startswith("\0"):
            if not all(v.startswith("\0") for v in values):
                return None
            parts.append(f"(?P<{_group_name('time', taken)}>{_time_regex([v[1:] for v in values])})")
            varying = varying or len(set(values)) > 1
        elif len(set(values)) == 1:
            parts.append(_esc(values[0]))
        elif all(v.isdigit() for v in values):
            parts.append(rf"(?P<{_group_name('n', taken)}>\d+)")
            varying = True
        elif (ms := [_NUMBERED.match(v) for v in values]) and all(ms) and \
                len({m.group("word") for m in ms if m}) == 1:
            word = ms[0].group("word") if ms[0] else ""
            parts.append(_esc(word) + rf"(?P<{_group_name(word, taken)}>\d+)")
            varying = True
        else:
            parts.append(rf"(?P<{_group_name('condition', taken)}>[^_/]+)")
            varying = True
    text = "(?:^|/)" + "_".join(parts) + "$"
    if not varying or not all(re.search(text, n) for n in names):
        return None
    return text


def _records(path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """A results file's records that record a success or a score, and the member of the file holding them."""
    try:
        if path.stat().st_size > MAX_RESULTS_BYTES:
            return [], None
    except OSError:
        return [], None
    value, _, error = load_results(path)
    member = None
    if isinstance(value, dict):  # an object whose member holds the list
        member = next((k for k, v in value.items() if isinstance(v, list)), None)
        value = value[member] if member is not None else None
    rows = [r for r in value if isinstance(r, dict)] if isinstance(value, list) and error is None else []
    return (rows, member) if rows and all(pick(r, SUCCESS_KEYS + SCORE_KEYS) for r in rows[:20]) else ([], None)


def _match(group: list[str], rows: list[dict[str, Any]], key: str) -> tuple[int, str]:
    """How many of a group's values (one a run) a record field's values hold, and the prefix they carry."""
    record = {c for r in rows if (c := canonical(r.get(key))) is not None}
    prefixes: Counter[str] = Counter()
    for g in group:
        cg = canonical(g)
        if cg is None or cg in record:
            continue
        for rv in record:
            if rv.endswith(cg) and len(rv) > len(cg) and re.fullmatch(r"[^\W\d]+[ _.:#-]?", rv[:-len(cg)]):
                prefixes[rv[:-len(cg)]] += 1  # a word before the value ("task-", "run"), never digits
    prefix = prefixes.most_common(1)[0][0] if prefixes else ""
    return sum(canonical(g, (prefix,)) in {canonical(r.get(key), (prefix,)) for r in rows} for g in group), prefix


def join_lines(root: Path, run_dirs: list[Path], pattern: str) -> tuple[list[str], list[str]]:
    """The ``[outcome]`` lines joining the runs to a results file above them by the groups of ``pattern``, and
    what the draft is unsure of; ([], []) when no results file shares a value with the runs' paths."""
    rx = re.compile(pattern)
    groups = [{k: v for k, v in m.groupdict().items() if v is not None} for d in run_dirs if (m := rx.search(d.name))]
    seen: set[Path] = set()
    for up in dict.fromkeys(p for d in run_dirs for p in [d.parent, *d.parent.parents][:4]
                            if p == root or root in p.parents):
        for f in sorted(p for g in _RESULTS for p in up.glob(g))[:50]:
            if f in seen or not (got := _records(f))[0]:
                continue
            seen.add(f)
            joined = _join(f, got[0], groups)
            if joined is not None:
                return [*joined[0][:1], *([f"records = {toml_str(jkey(got[1]))}"] if got[1] else []),
                        *joined[0][1:]], joined[1]
    return [], []


def _join(f: Path, rows: list[dict[str, Any]], groups: list[dict[str, str]]) -> tuple[list[str], list[str]] | None:
    """The join of the runs' ``groups`` to the records ``rows`` of ``f``: each group matched to the field holding
    most of its values (at least half); None when no group matches, or when the fields matched leave two runs
    one record (a join by chance, or one not specific enough: a person writes it)."""
    keys = [k for k in rows[0] if isinstance(k, str) and k not in SUCCESS_KEYS + SCORE_KEYS]
    chosen: dict[str, tuple[str, str]] = {}
    for g in (groups[0] if groups else {}):
        values = [d[g] for d in groups if d.get(g) is not None]
        best = max(((*_match(values, rows, k), k) for k in keys), default=(0, "", ""))
        if best[0] * 2 >= len(values) > 0 and best[2] not in {k for k, _ in chosen.values()}:
            chosen[g] = (best[2], best[1])
    if not chosen:
        return None
    left = [g for g in groups[0] if g not in chosen]

    def key(d: dict[str, Any], of_record: bool) -> tuple[str | None, ...]:
        return tuple(canonical(d.get(k) if of_record else d.get(g), (p,) if p else ()) for g, (k, p) in
                     chosen.items())
    have = {key(r, True) for r in rows}
    joined = sum(key(d, False) in have for d in groups)
    runs_keys = {key(d, False) for d in groups}
    if len(runs_keys) < len(groups):
        return None
    lonely = sum(key(r, True) not in runs_keys for r in rows)
    flag = pick(rows[0], SUCCESS_KEYS)
    out = [f"file = {toml_str(f.name)}", f"{'success' if flag else 'score'} = "
           f"{toml_str(jkey(flag or pick(rows[0], SCORE_KEYS) or 'score'))}", "",
           f"[outcome.join]          # {joined} of {len(groups)} runs find their record in {f.name} by the "
           "groups of [run] path" + (f"; no field holds {', '.join(left)} (left out)" if left else "")]
    for g, (k, p) in chosen.items():
        spec = toml_str(k) if not p else f"{{ field = {toml_str(k)}, prefix = {toml_str(p)} }}"
        out.append(f"{g} = {spec}")
    unsure = []
    if joined < len(groups) or lonely:
        unsure.append(f"outcome.join: {len(groups) - joined} of {len(groups)} runs without a record in {f.name}, "
                      f"{lonely} of {len(rows)} records without a run; check the fields and prefixes against both")
    return out, unsure
