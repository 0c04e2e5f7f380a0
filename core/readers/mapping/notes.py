"""What reading a run through a mapping says beside its steps: the fields that matched nothing, those whose regex
ran out of time, and the values ``[run] path`` and ``[run.config]`` take from the run's path (with a warning when
the path does not match)."""

from __future__ import annotations

from typing import Any

from ...analyzers import patterns
from ...base.errors import Problem
from ...base.problems import Slug
from .schema import Mapping
from .steps import Rec

#: The action types a step field applies to: a run with none of them does not warn that it matched nothing.
APPLIES = {"x": "POINTED", "y": "POINTED", "text": ("TYPE", "DONE", "ANSWER", "NAVIGATE"), "keys": ("KEY_PRESS",),
           "url": ("NAVIGATE",), "url_after": ("NAVIGATE",), "scroll_direction": ("SCROLL",),
           "scroll_amount": ("SCROLL",), "target": "POINTED"}
_UNPOINTED = frozenset({"TYPE", "KEY_PRESS", "KEY_DOWN", "KEY_UP", "WAIT", "DONE", "FAIL", "NAVIGATE", "ANSWER",
                        "TOOL", "READ", "CALL_USER"})


def unmatched(m: Mapping, recs: list[Rec], types: list[str], run: str, rel: str) -> list[Problem]:
    """A warning for each step field that matches nothing in any step, unless it applies to action types
    (its ``for``, or by its nature: a point to pointing actions, keys to key presses) the run has none of."""
    out = []
    have = set(types)
    for k, f in m.fields.items():
        if not k.startswith("step.") or any(f.value(r.value, r.ctx) is not None for r in recs):
            continue
        applies = f.only or APPLIES.get(k[5:])
        if applies == "POINTED" and not (have - _UNPOINTED - {"UNKNOWN"}):
            continue
        if isinstance(applies, tuple) and applies and not (have & set(applies)):
            continue
        out.append(Problem(Slug.MAPPING_MATCHES_NOTHING, f"{k} matches nothing in any of the {len(recs)} steps",
                           run=run, file=rel, field=k, severity="warning",
                           hint=f"check that expression in {m.path.name} against one step of the log"))
    return out




def slow_fields(m: Mapping, before: dict[str, int], run: str, rel: str) -> list[Problem]:
    """A warning for each field whose regex ran past its time limit on some of this run's values (they gave
    nothing): ``before``, each field's count of such values before the run was read."""
    out = []
    for k, f in m.fields.items():
        n = f.timeouts - before.get(k, 0)
        if n > 0:
            out.append(Problem(Slug.MAPPING_MATCHES_NOTHING, f"{k}: its regex took over {patterns.TIMEOUT:g} s on {n} "
                               "value(s), which give nothing", run=run, file=rel, field=k, severity="warning",
                               hint=f"rewrite the regex of {k} in {m.path.name}: overlapping repeats such as "
                                    "(a|aa)+ backtrack without end"))
    return out




def from_path(m: Mapping, display: str, value: Any, run: str, rel: str,
               problems: list[Problem]) -> tuple[dict[str, str] | None, dict[str, Any]]:
    """What ``[run] path`` takes from the run's path (None: it has none, or it does not match: a warning), and
    the run's ``[run.config]`` values (fields of the log, or templates of those groups)."""
    groups = m.run_path.groups(display) if m.run_path is not None else None
    if m.run_path is not None and groups is None:
        problems.append(Problem(Slug.MAPPING_MATCHES_NOTHING, f"[run] path of {m.path.name} does not match this "
                                f"run's path {display!r}", run=run, file=rel, field="run.path", severity="warning",
                                hint="the values it names (task_id, config, the results record) are missing; "
                                     "check the expression against the path"))
    config = {k: v for k, f in m.config.items() if (v := f.value(value, groups)) is not None}
    return groups, config
