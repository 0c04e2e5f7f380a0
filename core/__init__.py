"""trajcheck: what did the agent really do?

Offline analysis of recorded computer-use and web-agent runs: perceptual diffs of
high-risk actions, evidence reward scores, referee verdicts, and Parquet ledgers
that DuckDB can query.
"""

from typing import TYPE_CHECKING, Any

from .api import NoRunsFound, ScoreResult, connect, runs, score, steps  # (light: no pyarrow)
from .base.version import __version__

if TYPE_CHECKING:
    from .commands import (agree, best_of, check, columns, compact, compare, diff, draft_contract, draft_mapping,
                           export_table, failures, flaky, formats, judges, query, redo, report, timeline, validate)
    from .queries.phases import phases
    from .live import LiveState, StepCheck, verify_step
    from .writer import RunWriter

#: The library call behind each command but score (docs/api.md).
COMMANDS = ("validate", "query", "compare", "failures", "check", "agree", "judges", "flaky", "redo",
            "export_table", "report", "best_of", "timeline", "diff", "compact", "columns", "formats", "draft_contract",
            "draft_mapping")
#: Names imported from their module on first use (PEP 562): `trajcheck score` uses none of these modules.
_LIVE = ("verify_step", "LiveState", "StepCheck")


def __getattr__(name: str) -> Any:
    # plain imports, not importlib with a name: the import graph (devtools.imports) sees them
    if name in _LIVE:
        from . import live

        value = getattr(live, name)
    elif name == "RunWriter":
        from . import writer

        value = writer.RunWriter
    elif name == "phases":  # the library call of `timeline --phases`, kept in its query module
        from .queries import phases as _phases

        value = _phases.phases
    elif name in COMMANDS:
        from . import commands

        value = getattr(commands, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = ["__version__", "score", "connect", "runs", "steps", "ScoreResult", "NoRunsFound", "validate", "query",
           "compare", "failures", "check", "agree", "judges", "flaky", "redo", "export_table", "report", "best_of",
           "timeline", "phases", "diff", "compact", "columns", "formats", "draft_contract", "draft_mapping",
           "verify_step", "LiveState", "StepCheck", "RunWriter"]
