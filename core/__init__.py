"""trajcheck: what did the agent really do?

Offline analysis of recorded computer-use and web-agent runs: perceptual diffs of
high-risk actions, evidence reward scores, referee verdicts, and Parquet ledgers
that DuckDB can query.
"""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from .api import NoRunsFound, ScoreResult, connect, runs, score, steps  # noqa: E402  (light: no pyarrow)

if TYPE_CHECKING:
    from .commands import (agree, best_of, columns, compact, compare, export_table, formats, query, report, timeline,
                           validate)
    from .live import LiveState, StepCheck, verify_step
    from .writer import RunWriter

#: The library call behind each command but score (docs/api.md).
COMMANDS = ("validate", "query", "compare", "agree", "export_table", "report", "best_of", "timeline", "compact",
            "columns", "formats")
#: Names imported from their module on first use (PEP 562): `trajcheck score` uses none of them.
_LAZY = {"verify_step": "live", "LiveState": "live", "StepCheck": "live", "RunWriter": "writer",
         **{name: "commands" for name in COMMANDS}}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


__all__ = ["__version__", "score", "connect", "runs", "steps", "ScoreResult", "NoRunsFound", "validate", "query",
           "compare", "agree", "export_table", "report", "best_of", "timeline", "compact", "columns", "formats",
           "verify_step", "LiveState", "StepCheck", "RunWriter"]
