"""A mapping's ``[run] path``: values a harness writes into its run folders' names, taken with a regular
expression whose named groups are the values::

    [run]
    path = '(?P<time>[^_]+_[^_]+)_(?P<condition>[^_]+)_task-(?P<task>\\d+)_run(?P<run>\\d+)'
    task_id = { value = "task-{task}" }      # a run field from the groups (a template)

    [run.config]
    condition = { value = "{condition}" }    # runs.config: `--by config.condition`

The expression is searched (not matched whole: anchor it with ``^`` and ``$`` for that) in the run folder's path
relative to the folder given to ``score``, with ``/`` between folders: ``2025-03-01_12-30-05_gpt4o_task-17_run2``
when the folder of runs is given, ``results/2025-...`` when the folder above it is, the folder's own name when the
run folder itself is. The groups are the names the run fields' templates (``{ value = ... }``) and
``[outcome.join]`` use; a group that took nothing is no value.
"""

from __future__ import annotations

import re
from typing import Any

from ...base.errors import UsageError


class PathPattern:
    """``[run] path``, compiled: :meth:`groups` gives a run's values from its path."""

    def __init__(self, text: Any, where: str):
        if not isinstance(text, str) or not text.strip():
            raise UsageError(f"{where}: [run] path must be a regular expression with named groups, searched in "
                             "the run folder's path (e.g. '_task-(?P<task>\\d+)_run(?P<run>\\d+)$')")
        try:
            self.regex = re.compile(text)
        except re.error as exc:
            raise UsageError(f"{where}: [run] path = {text!r} is not a regular expression ({exc})") from None
        if not self.regex.groupindex:
            raise UsageError(f"{where}: [run] path = {text!r} has no named group: name each value it takes, as in "
                             "(?P<task>\\d+)")
        self.text = text
        self.names: tuple[str, ...] = tuple(self.regex.groupindex)

    def groups(self, rel: str) -> dict[str, str] | None:
        """The named groups the expression takes from a run folder's path (``rel``, relative to the folder
        being scored); None when it does not match. A group that took nothing is left out."""
        m = self.regex.search(rel.replace("\\", "/"))
        if m is None:
            return None
        return {k: v for k, v in m.groupdict().items() if v is not None}
