"""The one way the report writes a value into a page: made visible as the terminal shows it, then HTML-escaped.

Text from a run is data: :func:`trajcheck.base.safetext.clean` (the terminal's rule, shared) writes its control
characters and bidirectional marks, overrides and isolates as escapes (``\\u202e``), so a task id cannot make
"evil" display as "live" in the report any more than in a terminal; ``html.escape`` then keeps it from being
markup.
"""

from __future__ import annotations

import html
from typing import Any

from ..base.safetext import clean


def escape(v: Any) -> str:
    """``v`` (None: nothing) safe in an HTML page, in text or a quoted attribute."""
    return html.escape("" if v is None else clean(v), quote=True)
