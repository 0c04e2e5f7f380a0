"""trajcheck: what did the agent really do?

Offline analysis of recorded computer-use and web-agent runs: perceptual diffs of
high-risk actions, evidence reward scores, referee verdicts, and Parquet ledgers
that DuckDB can query.
"""

__version__ = "0.1.0"

from .api import NoRunsFound, ScoreResult, connect, runs, score, steps  # noqa: E402  (light: no pyarrow)
from .live import LiveState, StepCheck, verify_step  # noqa: E402  (light: imports on first call)
from .writer import RunWriter  # noqa: E402

__all__ = ["__version__", "score", "connect", "runs", "steps", "ScoreResult", "NoRunsFound", "verify_step",
           "LiveState", "StepCheck", "RunWriter"]
