"""Reading the native run-directory format (trajcheck.run/1).

Everything a run directory says is untrusted: files are size-limited, JSON is
parsed strictly, every record is checked against the packaged JSON Schema, and
every path it names must stay inside the run directory (symlinks included).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

from ..base.errors import Problem
from ..base.inputs import exists_not_dir
from ..base.jsonio import Where, iter_jsonl, parse_json_text, short_number
from ..base.runfiles import raise_errors, read_text_file, safe_join
from ..base.problems import Slug
from ..schemas import load_json_schema
from ..schemas.records import KNOWN_ACTION_TYPES, Run, Step

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

#: fastjsonschema's options: no defaults written into the record, formats as annotations (as jsonschema reads them).
_FAST_OPTIONS: dict[str, Any] = {"use_default": False, "use_formats": False}


@lru_cache(maxsize=None)
def _fast_check(name: str) -> Any:
    """A compiled validator (fastjsonschema) for the common case of a valid record, 40x faster than
    jsonschema's (11 vs 408 us a step record). It only ever says "valid": any record it refuses, and any
    error of its own, goes to jsonschema, which writes the messages with field paths. On these schemas
    (no keyword beside a $ref but description) the two agree: tests/test_bad_input.py compares their
    verdicts on mutated records. None when it cannot compile the schema.

    Generating and compiling the code costs 5-12 ms a schema (run 5, step 10, contract 12 on this machine),
    in every process that reads runs, worker processes included. The compiled code is kept in the on-disk
    cache (:mod:`trajcheck.base.diskcache`) under fastjsonschema's version, these options and the schema's
    digest, and read back in under a millisecond."""
    try:
        import fastjsonschema

        schema = load_json_schema(name)
        key = (f"fastjsonschema {fastjsonschema.VERSION} {sorted(_FAST_OPTIONS.items())}, schema {_digest(schema)}, "
               f"rundir {_own_digest()}")
    except Exception:  # noqa: BLE001  (not installed: jsonschema alone)
        return None
    from ..base import diskcache

    fast = _validator(diskcache.read_code(f"validator-{name}", key))
    if fast is None:
        code = _compiled(name, schema)
        fast = _validator(code)
        if code is not None and fast is not None:
            diskcache.write_code(f"validator-{name}", key, code)
    if fast is None:  # fastjsonschema's code could not be had (another version's API?): its own compile
        try:
            fast = fastjsonschema.compile(_copy(schema), **_FAST_OPTIONS)
        except Exception:  # noqa: BLE001  (not compilable: jsonschema alone)
            return None
    return fast


@lru_cache(maxsize=1)
def _own_digest() -> str:
    """This module's code, in the cached validators' key: a change to how they are compiled compiles anew."""
    import hashlib

    try:
        return hashlib.blake2b(Path(__file__).read_bytes(), digest_size=8).hexdigest()
    except OSError:  # an install without sources: the version stands for the code
        from ..base.version import __version__

        return __version__


def _copy(schema: Any) -> Any:
    """A copy of ``schema`` for fastjsonschema, which rewrites the $refs of the schema it compiles in place:
    the digest and jsonschema's :func:`validator` read the packaged schema as it is."""
    import copy

    return copy.deepcopy(schema)


def _digest(schema: Any) -> str:
    import hashlib
    import json

    return hashlib.blake2b(json.dumps(schema, sort_keys=True).encode(), digest_size=16).hexdigest()


def _compiled(name: str, schema: Any) -> CodeType | None:
    """fastjsonschema's validator of ``schema`` as Python source (``compile_to_code``), compiled, with its
    entry function also named VALIDATE (the function ``fastjsonschema.compile`` returns: the one named after
    the schema's scope). None when fastjsonschema fails."""
    try:
        import fastjsonschema
        from fastjsonschema.ref_resolver import RefResolver

        entry = RefResolver.from_schema(_copy(schema), handlers={}, store={}).get_scope_name()  # as compile() does
        if not isinstance(entry, str) or not entry.isidentifier():
            return None
        source = fastjsonschema.compile_to_code(_copy(schema), **_FAST_OPTIONS) + f"\n\nVALIDATE = {entry}\n"
        return compile(source, f"<fastjsonschema: {name}.schema.json>", "exec")
    except Exception:  # noqa: BLE001  (fastjsonschema's own compile is tried next)
        return None


def _validator(code: CodeType | None) -> Any:
    """The VALIDATE function of ``code`` (from :func:`_compiled`, or the cache), or None."""
    if code is None:
        return None
    scope: dict[str, Any] = {}
    try:
        exec(code, scope)  # the code fastjsonschema generated for trajcheck's schema (cached with a checksum)
    except Exception:  # noqa: BLE001  (a cached entry that does not run: compiled again)
        return None
    fast = scope.get("VALIDATE")
    return fast if callable(fast) else None


def valid_fast(schema: str, value: Any) -> bool:
    """True when the compiled validator accepts ``value``; False means "ask jsonschema" (:func:`validator`)."""
    fast = _fast_check(schema)
    if fast is None:
        return False
    try:
        fast(value)
        return True
    except Exception:  # noqa: BLE001  (refused, or fastjsonschema failed: jsonschema decides)
        return False


#: JSON Schema keywords whose failure is a number out of range (``value_out_of_range``), not a wrong type.
_RANGE_KEYWORDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


def _schema_problems(schema: str, value: Any, *, run: str, file: str, line: int | None,
                     prefix: str = "") -> list[Problem]:
    """What is wrong with ``value`` against ``schemas/<schema>.schema.json``: nothing for a valid record
    (told by the compiled validator, without loading jsonschema), else jsonschema's errors with field paths."""
    if valid_fast(schema, value):
        return []
    out = []
    errors = validator(schema).iter_errors(value)
    for err in sorted(errors, key=lambda e: list(map(str, e.absolute_path))):
        field = ".".join(str(p) for p in err.absolute_path)
        msg = err.message if len(err.message) <= 160 else err.message[:157] + "..."
        if err.validator in _RANGE_KEYWORDS:  # a number outside what its field (and its ledger column) holds
            side = "under the minimum" if "inimum" in str(err.validator) else "over the maximum"
            msg = f"{short_number(err.instance)} is {side} of {short_number(err.validator_value)}"
            out.append(Problem(Slug.VALUE_OUT_OF_RANGE, msg, run=run, file=file, line=line,
                               field=(prefix + field) or "(record)",
                               hint="the run format bounds every number to what the ledger stores "
                                    "(schemas/*.schema.json)"))
            continue
        out.append(Problem(Slug.SCHEMA, msg, run=run, file=file, line=line, field=(prefix + field) or "(record)",
                           hint="see the run format in docs/run-format.md (schemas/*.schema.json)"))
    return out


@lru_cache(maxsize=None)
def validator(schema: str) -> Draft202012Validator:
    """jsonschema's validator of ``schemas/<schema>.schema.json``: loaded only for a record the compiled
    validator refuses (importing jsonschema costs 0.04-0.15 s, a tenth of scoring one short run)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_json_schema(schema))


def _step_files(run_dir: Path) -> list[tuple[int, Path]]:
    out = []
    for p in (run_dir / "steps").iterdir():
        m = re.fullmatch(r"0*(\d+)\.json", p.name)
        if m and not p.is_dir():  # a FIFO or device there is reported (not_a_regular_file), never opened
            out.append((int(m.group(1)), p))
    return sorted(out)


def _read_meta(run_dir: Path, display: str, problems: list[Problem]) -> tuple[Any, str]:
    """run.json, checked against its schema, and the run's label: its run_id when it has one (the problems
    found so far are relabelled), else ``display``."""
    label = display
    text = read_text_file(run_dir / "run.json", run=label, rel="run.json", problems=problems)
    meta: Any = None
    if text is not None:
        meta, p = parse_json_text(text, run=label, file="run.json")
        if p:
            problems.append(p)
        else:
            problems += _schema_problems("run", meta, run=label, file="run.json", line=None)
    if isinstance(meta, dict) and isinstance(meta.get("run_id"), str) and meta["run_id"]:
        label = meta["run_id"]
        for p in problems:
            p.run = label
    return meta, label


def _read_step_records(run_dir: Path, label: str, problems: list[Problem]) -> list[tuple[Any, str, int | None]]:
    """Every step record as (value, file, line): the lines of steps.jsonl, else the files of steps/."""
    raw_steps: list[tuple[Any, str, int | None]] = []
    jsonl = run_dir / "steps.jsonl"
    step_dir = run_dir / "steps"
    if exists_not_dir(jsonl):  # a FIFO or a device named steps.jsonl is reported, never opened
        if step_dir.is_dir():
            problems.append(Problem(Slug.STEPS_AMBIGUOUS, "both steps.jsonl and steps/ exist; steps.jsonl is used",
                                    run=label, file="steps/", severity="warning",
                                    hint="remove one of them"))
        text = read_text_file(jsonl, run=label, rel="steps.jsonl", problems=problems)
        if text is not None:
            for n, value, p in iter_jsonl(text, run=label, file="steps.jsonl"):
                if p:
                    problems.append(p)
                else:
                    raw_steps.append((value, "steps.jsonl", n))
    elif step_dir.is_dir():
        for _n, path in _step_files(run_dir):
            rel = f"steps/{path.name}"
            text = read_text_file(path, run=label, rel=rel, problems=problems)
            if text is None:
                continue
            value, p = parse_json_text(text, run=label, file=rel)
            if p:
                problems.append(p)
            else:
                raw_steps.append((value, rel, None))
    else:
        problems.append(Problem(Slug.STEPS_MISSING, "no steps.jsonl and no steps/ folder", run=label,
                                file="steps.jsonl", hint="write one JSON object per step to steps.jsonl"))
    return raw_steps


def _steps(raw_steps: list[tuple[Any, str, int | None]], run_dir: Path, label: str,
           problems: list[Problem]) -> list[Step]:
    """The records that pass the step schema, as steps, each index once; with the checks beyond the schema."""
    steps: list[Step] = []
    seen: dict[int, tuple[str, int | None]] = {}
    for value, rel, line in raw_steps:
        errs = _schema_problems("step", value, run=label, file=rel, line=line)
        if errs:
            problems += errs
            continue
        step = Step.from_json(value, rel, line)
        if step.index in seen:
            first = seen[step.index]
            where = first[0] + (f":{first[1]}" if first[1] is not None else "")
            problems.append(Problem(Slug.DUPLICATE_STEP_INDEX, f"step index {step.index} already used at {where}",
                                    run=label, file=rel, line=line, field="index",
                                    hint="give every step its own index, in order"))
            continue
        seen[step.index] = (rel, line)
        steps.append(step)
        problems += _check_step(step, run_dir, label)
    return steps


def read_native_run(run_dir: Path, display: str) -> tuple[Run, list[Problem]]:
    """Read and check a trajcheck.run/1 directory.

    Returns the run and its warnings; raises :class:`RunFormatError` carrying
    every error when the run cannot be scored.
    """
    problems: list[Problem] = []
    meta, label = _read_meta(run_dir, display, problems)
    raw_steps = _read_step_records(run_dir, label, problems)
    steps = _steps(raw_steps, run_dir, label, problems)
    if not raw_steps and not any(p.severity == "error" for p in problems):
        problems.append(Problem(Slug.STEPS_EMPTY, "the run has no steps", run=label,
                                file="steps.jsonl" if exists_not_dir(run_dir / "steps.jsonl") else "steps/",
                                hint="a run needs at least one step record"))

    raise_errors(problems, label)
    if [s.index for s in steps] != sorted(s.index for s in steps):
        problems.append(Problem(Slug.STEPS_OUT_OF_ORDER, "step indices are not in increasing order; sorted by index",
                                run=label, file=steps[0].source, severity="warning",
                                hint="write steps in the order they ran"))
        steps.sort(key=lambda s: s.index)
    run = Run.from_json(meta, tuple(steps), display)
    return run, [p for p in problems if p.severity != "error"]


def _check_step(step: Step, run_dir: Path, run: str) -> list[Problem]:
    """Checks beyond the schema: paths stay inside the run, coordinates are usable."""
    out: list[Problem] = []
    loc: Where = {"run": run, "file": step.source, "line": step.line}
    for name, rel in (("frames.pre", step.frame_pre), ("frames.post", step.frame_post),
                      ("page.dom_before", step.page.dom_before if step.page else None),
                      ("page.dom_after", step.page.dom_after if step.page else None)):
        if rel is None:
            continue
        if safe_join(run_dir, rel) is None:
            out.append(Problem(Slug.PATH_ESCAPES_RUN, f"path {rel!r} points outside the run directory",
                               field=name, hint="reference files inside the run directory by relative path",
                               **loc))
    a = step.action
    if not a.known:
        out.append(Problem(Slug.UNKNOWN_ACTION_TYPE,
                           f"action type {a.type!r} is not one of {', '.join(sorted(KNOWN_ACTION_TYPES))}; "
                           "it is scored as unknown (never high-risk)",
                           field="action.type", severity="warning", hint="map it to a v1 action type", **loc))
    if (a.x is None) != (a.y is None):
        out.append(Problem(Slug.HALF_COORDINATE, "only one of action.x / action.y is set; the region check is skipped",
                           field="action.x" if a.x is None else "action.y", severity="warning",
                           hint="record both coordinates or neither", **loc))
    return out
