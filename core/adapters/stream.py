"""Reading a large JSON log one item at a time, with ijson's C parser (yajl): a transcript whose screenshots are
inline (base64) is never held whole, only the item being read. A reader decodes each item's screenshots as it
goes (:class:`~trajcheck.adapters.kit.Frames`) and drops the text."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajcheck.inputs import open_regular
from trajcheck.runfiles import safe_join

#: Logs at least this large are streamed; smaller ones are read whole (the same result, with a JSON error's
#: line and column in the problem).
STREAM_BYTES = 32 * 1024 * 1024


def streams(run_dir: Path, rel: str, limit: int) -> bool:
    """Whether the log ``rel`` is read streamed: a JSON file from STREAM_BYTES up to ``limit`` bytes, a regular
    file inside the run (else it is read whole, whose checks report the file that is too large, not regular, or
    a link out of the run)."""
    path = safe_join(run_dir, rel)
    if path is None or not rel.endswith(".json"):
        return False
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and STREAM_BYTES <= st.st_size <= limit


class StreamError(ValueError):
    """The file is not JSON (or not readable) past some point; read it whole to locate the problem."""


def stream_items(path: Path, key: str, meta: dict[str, Any]) -> Iterator[Any]:
    """The items of the array under top-level ``key`` of a JSON object (or of the top-level array itself), one
    at a time. The object's other top-level values are put in ``meta`` as they are read, so ``meta`` is whole
    once the items are. Raises :class:`StreamError` where the JSON breaks."""
    import ijson
    from ijson.common import ObjectBuilder

    items = {f"{key}.item"}
    builder: ObjectBuilder | None = None
    into: str | None = None  # None: the item being built is one of the array's, else the meta key it fills
    top_key = ""
    try:
        with open(open_regular(path), "rb", closefd=True) as f:
            for prefix, event, value in ijson.parse(f, use_float=True):
                if builder is None:
                    if prefix == "" and event == "start_array":
                        items = {"item"}  # a top-level array: its items are the ones wanted
                    if prefix == "" and event == "map_key":
                        top_key = value
                        continue
                    if prefix in items:
                        builder, into = ObjectBuilder(), None
                    elif prefix == top_key and top_key != key and prefix:
                        builder, into = ObjectBuilder(), top_key
                    else:
                        continue
                builder.event(event, value)
                if not builder.containers:  # the value is whole
                    done, builder = builder.value, None
                    if into is None:
                        yield done
                    else:
                        meta[into] = done
    except (OSError, ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError) as exc:
        raise StreamError(str(exc)) from None
