"""A drafted mapping's guesses checked against the sampled runs themselves, and written into the draft with their
evidence: which screenshot is each step's (``screenshot_is``), the space of the points (``coordinates``), and
whether an action name drafted as DONE ends the runs it appears in.

The draft is read as a mapping (the points as logged), each sampled run through it, and
:func:`trajcheck.analyzers.readings.weigh` says which alignment and space the clicks support. A choice is written
with its counts as a comment; where the counts do not separate the readings, the line says UNSURE with them, and
``[run] unsure`` names the reading, so that the runs read through the draft get no verdict of their own until a
person has looked (docs/formats.md, "Mapping files")."""

from __future__ import annotations

import re
from pathlib import Path

from ..meaning import weigh_runs
from ..read import read_mapped
from ..schema import Mapping
from ....analyzers.readings import Choice
from ....base.errors import RunFormatError, UsageError
from ....base.runfiles import scoring_root
from ....schemas.records import Run

_IS = re.compile(r"^screenshot_is = '(pre|post)'.*$", re.M)
#: The answer it left out: a screenshot_is guess (files.shot_lines) the evidence now decides.
_ASKED = "screenshots: before or after each action? (screenshot_is)"


def _runs(text: str, run_dirs: list[Path], root: Path) -> tuple[Mapping, list[tuple[Run, Path]]] | None:
    """The draft compiled with its points as logged, and the sampled runs read through it."""
    try:
        m = Mapping(Path("drafted.toml"), text.encode())
    except UsageError:
        return None
    m.coordinates, m.model_scale, m.model_size, m.unsure = "screenshot", None, None, ()
    out = []
    with scoring_root(root):
        for d in run_dirs:
            try:
                run, _ = read_mapped(m, d, d.relative_to(root).as_posix() if d != root else d.name)
            except (RunFormatError, UsageError, OSError, ValueError, RecursionError):
                continue
            out.append((run, d))
    return m, out


#: Each alignment a draft tries: (screenshot_is, screenshots_offset). A step's screenshot taken before it, or
#: after it, or one step further off than either: ``('pre', 1)`` reads each step's screenshot from the step
#: after (named one step early), ``('post', -1)`` from the step before (named one step late). ``('pre', -1)`` is
#: ``('post', 0)`` and ``('post', 1)`` is ``('pre', 0)``: the four are every pairing within one step of pre or post.
ALIGNMENTS = (("pre", 0), ("post", 0), ("pre", 1), ("post", -1))


def _name(side: str, offset: int) -> str:
    return side if not offset else f"{side}, offset {offset:+d}"


def _offsets(pre: bool) -> dict[str, int]:
    """The alignments tried, the draft's own first: which step's change map (as drafted) each pairs a step with.
    With ``pre`` drafted, step i acts between screenshots i and i+1; ``post`` pairs it with the step before's
    (-1), ``('pre', 1)`` with the step after's, ``('post', -1)`` two before. With ``post`` drafted, the same one
    step later."""
    base = 0 if pre else 1  # the change-map offset of ('pre', 0) from the drafted pairing
    out = {_name(side, k): base + k - (side == "post") for side, k in ALIGNMENTS}
    first = "pre" if pre else "post"
    return {first: out.pop(first), **out}


def _alignment(lines: list[str], c: Choice, unsure: list[str], held: list[str]) -> None:
    i = next((k for k, ln in enumerate(lines) if _IS.match(ln)), None)
    if i is None or not c.tallies:
        return
    drafted = _IS.match(lines[i]).group(1)  # type: ignore[union-attr]  # matched above
    paired = any(ln.startswith("screenshot_after = ") for ln in lines)  # each step names its before and after
    if c.chosen is not None and (not paired or c.chosen == "pre"):
        side, _, off = c.chosen.partition(", offset ")
        lines[i] = f"screenshot_is = '{side}'   # {c.evidence()}"
        if off:
            lines.insert(i + 1, f"screenshots_offset = {int(off)}   # each step's screenshot is the one the step "
                                f"{'after' if int(off) > 0 else 'before'} it names: {c.why}")
        if _ASKED in unsure:
            unsure.remove(_ASKED)
        return
    lines[i] = f"screenshot_is = '{drafted}'   # UNSURE: {c.evidence()}"
    unsure[:] = [u for u in unsure if u != _ASKED]
    why = c.why if c.chosen is None else "the clicks choose a step's neighbour's screens, not the two it names"
    unsure.append(f"alignment: {c.evidence()}; {why}")
    held.append("alignment")


def _coordinates(c: Choice, unsure: list[str], held: list[str]) -> list[str]:
    """The ``[run]`` lines of the space chosen (with its evidence), or the UNSURE comment."""
    if not c.tallies:
        return []
    if c.chosen is None:
        unsure.append(f"coordinates: {c.evidence()}; {c.why}")
        held.append("coordinates")
        return [f"# UNSURE: coordinates: {c.evidence()}"]
    if c.chosen.startswith("model_scale "):
        return ["coordinates = 'model'", f"model_scale = {float(c.chosen.split()[1]):.6g}   # {c.evidence()}"]
    return [f"coordinates = '{c.chosen}'   # {c.evidence()}"]


def _answers(lines: list[str], runs: list[tuple[Run, Path]], unsure: list[str]) -> None:
    """An action name drafted as DONE that most runs it appears in go on after is not their answer (a harness's
    ``exit`` that goes back to the home screen): its line is left out with why."""
    seen: dict[str, list[bool]] = {}
    for run, _ in runs:
        last = len(run.steps) - 1
        for s in run.steps:
            if s.action.type == "DONE":
                seen.setdefault(str(s.action.extra.get("log_type") or ""), []).append(s.index < last)
    for name, followed in seen.items():
        n = sum(followed)
        if not name or 2 * n <= len(followed):
            continue
        why = f"followed by more actions in {n} of the {len(followed)} runs it appears in: not their answer"
        for k, ln in enumerate(lines):
            if re.match(rf"^['\"]{re.escape(name)}['\"] = 'DONE'", ln):
                lines[k] = f"# {ln.split('#')[0].rstrip()}    UNSURE: {why}"
        unsure.append(f"action {name!r}: drafted as DONE, but {why} (it is read as UNKNOWN)")


#: Words of a name that says it concludes (``Print_Assert_Result``): with one sampled run, its place is not
#: evidence enough without one of them.
_CLOSING = re.compile(r"(?i)(?:^|[^a-z])(?:results?|asserts?|answers?|reports?|conclu\w*|final\w*|verdict|summary|"
                      r"submit\w*)(?:$|[^a-z])")
#: The comment of an action drafted as DONE by its place alone (:func:`closing`): its runs' verdicts are held.
BY_PLACE = "UNSURE: drafted as DONE by its place alone"


def closing(text: str, run_dirs: list[Path], root: Path) -> dict[str, tuple[int, int]]:
    """The action names no type was guessed for that end the sampled runs: each is the last action of every run
    it appears in, of at least half the runs (of one run, only a name that says it concludes: ``result``,
    ``assert``, ``report``...), and no run holds another answer (DONE, FAIL). A harness's closing
    call by its own name (``Print_Assert_Result``): name -> (runs it ends, runs read). Its place is its only
    evidence: the draft marks it UNSURE and holds the runs' verdicts."""
    got = _runs(text, run_dirs, root)
    if got is None or not got[1]:
        return {}
    runs = [run for run, _ in got[1]]
    if any(s.action.type in ("DONE", "FAIL") for run in runs for s in run.steps):
        return {}
    places: dict[str, list[bool]] = {}
    for run in runs:
        for k, s in enumerate(run.steps):
            if s.action.type == "UNKNOWN" and s.action.extra.get("log_type"):
                places.setdefault(str(s.action.extra["log_type"]), []).append(k == len(run.steps) - 1)
    def says(name: str) -> bool:  # CamelCase words apart: ReportResult
        return _CLOSING.search(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)) is not None

    return {name: (len(last), len(runs)) for name, last in places.items()
            if all(last) and 2 * len(last) >= len(runs) and (len(runs) > 1 or says(name))}


def checked(text: str, run_dirs: list[Path], root: Path, unsure: list[str]) -> str:
    """``text``, a drafted mapping, with its alignment, coordinate space and answer actions checked against the
    runs in ``run_dirs`` (their evidence as comments, what stays unsure added to ``unsure`` and to
    ``[run] unsure``)."""
    got = _runs(text, run_dirs, root)
    if got is None or not got[1]:
        return text
    m, runs = got
    lines = text.split("\n")
    held: list[str] = ["actions"] if BY_PLACE in text else []
    _answers(lines, runs, unsure)
    has_is = any(_IS.match(ln) for ln in lines)
    align, space = weigh_runs(runs, _offsets(m.pre) if has_is else {"as drafted": 0}, relative=False)
    if has_is:
        _alignment(lines, align, unsure, held)
    run_lines = _coordinates(space, unsure, held)
    if held:
        run_lines.append(f"unsure = [{', '.join(repr(h) for h in held)}]   # the runs get no verdict of their own "
                         "until these are checked by eye (then remove them)")
    at = lines.index("[step]") - 1 if "[step]" in lines else len(lines)
    lines[at:at] = run_lines
    start = lines.index("[run]") if "[run]" in lines else 2
    header = [ln for ln in lines[:start] if not ln.startswith("# UNSURE: ")]
    top = ["# UNSURE: " + "".join(c if c.isprintable() else "?" for c in u) for u in unsure]
    return "\n".join(header[:2] + top + header[2:] + lines[start:])
