"""The exceptions trajcheck raises, under their documented public name (``trajcheck.errors``): one base class,
``TrajcheckError``, and a few subclasses (docs/api.md), and ``Problem``, what a run's reader found wrong. They are
declared in :mod:`trajcheck.base.errors`, the lowest layer, where every module that raises them can import them."""

from .base.errors import LedgerError, Problem, QueryError, RunFormatError, TrajcheckError, UsageError

__all__ = ["TrajcheckError", "RunFormatError", "LedgerError", "QueryError", "UsageError", "Problem"]
