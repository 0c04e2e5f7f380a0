"""Readers from outside: a harness's own package registers a reader through the Python entry point group
``trajcheck.readers`` (its value: a :class:`~trajcheck.readers.kit.reader.Reader`, or a function of no argument
that returns one), and writes it with the kit the built-in readers use (:mod:`trajcheck.readers.kit`). The
built-in readers are declared in the same group (pyproject.toml); they are loaded from
:data:`trajcheck.readers.adapters.ALL` even when the package's metadata is not installed.

The group is read once, when the readers are first needed, and only then (a folder of native runs never reads
it). An entry point that fails to load, that is not a reader, or whose name a reader already has, is a
``reader_not_loaded`` warning naming it (:func:`load_problems`), never a crash.
"""

from __future__ import annotations


from ..base.errors import Problem
from ..base.problems import Slug
from .kit.reader import Reader

GROUP = "trajcheck.readers"
_problems: list[Problem] = []


def entry_readers(taken: set[str]) -> list[Reader]:
    """The readers the group's entry points name that are not the package's own and whose names are not in
    ``taken``, by entry point name; each failure is kept for :func:`load_problems`."""
    from ..base.entrypoints import load_group

    _problems.clear()
    out, failed = load_group(GROUP, Reader, lambda r: r.name, taken, "a reader")
    _problems.extend(_not_loaded(name, f"{value} {why}" if value else why) for name, value, why in failed)
    return out


def load_problems() -> list[Problem]:
    """The warnings of the entry points that did not load (empty until the readers are first needed)."""
    return list(_problems)


def _not_loaded(name: str, why: str) -> Problem:
    return Problem(Slug.READER_NOT_LOADED, f"the reader entry point {name!r} ({GROUP}): {why}; its runs are not "
                   "read", file=name, severity="warning", hint="fix or uninstall the package that declares it "
                   "(`pip show` names it); `trajcheck formats` lists the readers that loaded")


#: docs/formats.md's complete example: a harness package's reader module (``acme_trajcheck.py``) and the lines
#: of its pyproject.toml that register it. tests/test_entry_points.py installs it and scores its runs.
EXAMPLE_MODULE = '''\
"""A trajcheck reader for the Acme harness: acme_log.json beside its screenshots."""
from pathlib import Path
from typing import Any

from trajcheck.readers.kit.claiming import Sniffer
from trajcheck.readers.kit.reader import Reader
from trajcheck.readers.kit.reading import Problems, read_json_file, run_id_of
from trajcheck.schemas.records import Action, Run, Step

TYPES = {"click": "CLICK", "type": "TYPE", "key": "KEY_PRESS", "scroll": "SCROLL", "done": "DONE"}


def shape(value: Any) -> str | None:
    """An Acme log: an object whose acme_steps are objects with a "do" (claimed by its data, not its name)."""
    steps = value.get("acme_steps") if isinstance(value, dict) else None
    if isinstance(steps, list) and steps and all(isinstance(s, dict) and "do" in s for s in steps[:20]):
        return "an Acme log"
    return None


SNIFF = Sniffer(shape, "acme_log.json", what="an Acme log (acme_steps)")


def read(run_dir: Path, display: str) -> tuple[Run, list]:
    run_id = run_id_of(run_dir, display)
    rel = SNIFF.pick(run_dir, run_id, [])
    problems = Problems(run_id, rel)
    log = read_json_file(run_dir / rel, run=run_id, rel=rel, problems=problems)
    problems.raise_errors()
    steps = []
    for i, s in enumerate(log["acme_steps"]):
        kind = TYPES.get(s.get("do"), "UNKNOWN")
        if kind == "UNKNOWN":
            problems.warn("action_unparsed", f"{s.get('do')!r} is no Acme action", field=f"acme_steps[{i}]")
        action = Action(kind, x=s.get("x"), y=s.get("y"), text=s.get("text"))
        steps.append(Step(i + 1, action, frame_pre=s.get("before"), frame_post=s.get("after"), source=rel))
    run = Run(run_id, display, "acme", tuple(steps), goal=log.get("task"), outcome_score=log.get("score"))
    return run, problems.warnings()


READER = Reader(name="acme", claims=SNIFF.claims, claim=SNIFF.claim, read=read,
                summary="Acme harness logs: acme_log.json and its screenshots")
'''
EXAMPLE_TOML = '''\
[project.entry-points."trajcheck.readers"]
acme = "acme_trajcheck:READER"'''
