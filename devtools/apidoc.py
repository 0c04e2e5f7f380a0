"""docs/api.md, generated from the public names of ``trajcheck`` (``__all__``) and their docstrings.

    python -m devtools.apidoc > docs/api.md

``tests/test_api_commands.py`` fails when the page is stale, and imports every name it lists.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import trajcheck

#: The page's sections: a heading, one sentence, and the public names it holds, in reading order.
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Scoring", "Score runs into a Parquet ledger: `trajcheck score`.", ("score", "ScoreResult", "NoRunsFound")),
    ("Reading a ledger", "DuckDB and pandas over the ledger's two tables: `trajcheck query`.",
     ("connect", "runs", "steps", "query")),
    ("The other commands", "One function per command; the command parses options, calls it and renders the "
     "result.", ("validate", "timeline", "phases", "diff", "best_of", "compare", "failures", "check", "agree", "judges",
                 "flaky", "redo", "export_table", "report", "compact", "columns", "formats", "draft_contract",
                 "draft_mapping")),
    ("While the agent runs", "Check each step as it happens, and record runs in trajcheck's own format.",
     ("verify_step", "LiveState", "StepCheck", "RunWriter")),
)

INTRO = """# Python API

Everything a command does is one call of a function here, and `--format json` prints exactly what that
function returns: its `to_json()` when it has one, else the value itself (`trajcheck.commands.plain`).
`tests/test_api_commands.py` checks this for every command, and that every name below imports.

```python
import trajcheck

result = trajcheck.score(["sample_runs/"], out="ledger/")
print(result.scored, result.ok)
best = trajcheck.best_of("ledger/")                  # [{"task_id": ..., "best_run": ..., "why": ...}, ...]
arms = trajcheck.compare(["ledger/"], by="config.perceptual_verifier").to_json()
```

Errors are exceptions of `trajcheck.errors` (`UsageError`, `LedgerError`, `QueryError`, `RunFormatError`);
bad input in a run never raises, it becomes a problem of that run. This page is generated:
`python -m devtools.apidoc > docs/api.md`.
"""


def _signature(fn: Any) -> str:
    """``fn``'s parameters with their defaults (no annotations: the docstring says what each is)."""
    parts, star = [], False
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        elif p.kind is p.VAR_POSITIONAL:
            star = True
        text = ("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else "") + p.name
        if p.default is not p.empty:
            text += f"={p.default!r}"
        parts.append(text)
    return ", ".join(parts)


def _returns(fn: Any) -> str:
    ann = inspect.signature(fn).return_annotation
    if ann is inspect.Signature.empty:
        return ""
    return " → " + (ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))).strip("'\"")


def _doc(obj: Any) -> str:
    return inspect.cleandoc(obj.__doc__ or "").strip()


def _entry(name: str) -> str:
    obj = getattr(trajcheck, name)
    if inspect.isclass(obj):
        head = f"### `trajcheck.{name}`\n\n" + ("An exception" if issubclass(obj, BaseException) else "A class")
        fields = [f.name for f in dataclasses.fields(obj)] if dataclasses.is_dataclass(obj) else []
        head += f" with the fields {', '.join(f'`{f}`' for f in fields)}." if fields else "."
        return f"{head}\n\n{_doc(obj)}\n"
    return f"### `trajcheck.{name}({_signature(obj)})`{_returns(obj)}\n\n{_doc(obj)}\n"


def page() -> str:
    """The text of docs/api.md."""
    listed = [n for _, _, names in SECTIONS for n in names]
    missing = sorted(set(trajcheck.__all__) - {"__version__"} - set(listed))
    if missing:
        raise ValueError(f"public names in no section of devtools.apidoc.SECTIONS: {', '.join(missing)}")
    parts = [INTRO]
    for title, what, names in SECTIONS:
        parts.append(f"## {title}\n\n{what}\n")
        parts += [_entry(n) for n in names]
    return "\n".join(parts)


if __name__ == "__main__":
    print(page(), end="")
