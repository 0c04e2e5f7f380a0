"""A small on-disk cache of facts about this machine's libraries, shared by every trajcheck process.

Some facts cost tens of milliseconds to establish and never change while the libraries stay the same:
which pass order of trajcheck's LANCZOS resize gives the installed Pillow's bytes for a frame size (a
probe resize of a noise image, 26 ms for 1280x800, 38 ms for 2560x1600). A command that scores one short
run pays that in every process; here it is established once per machine and read back (under 1 ms).

The cache is a folder of JSON files: ``$TRAJCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/trajcheck``, else
``~/.cache/trajcheck``; ``TRAJCHECK_NO_CACHE=1`` turns it off. Every key names the versions it depends
on, so an upgrade never reads a stale fact. Anything wrong with the cache (missing, unreadable, corrupt,
read-only) only means the fact is established again: the cache can never change a result.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

#: The largest cache file read (a file this small holds thousands of facts).
MAX_BYTES = 1 << 20


def cache_dir() -> Path | None:
    """The cache folder, or None when caching is turned off."""
    if os.environ.get("TRAJCHECK_NO_CACHE") == "1":
        return None
    explicit = os.environ.get("TRAJCHECK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "trajcheck"


def read(name: str) -> dict[str, Any]:
    """The cache file ``name`` (a JSON object), or an empty dict when there is none or it is unusable."""
    folder = cache_dir()
    if folder is None:
        return {}
    try:
        path = folder / f"{name}.json"
        if path.stat().st_size > MAX_BYTES:
            return {}
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # unreadable, not JSON, or nested past the parser's depth
        return {}
    return data if isinstance(data, dict) else {}


def write(name: str, data: dict[str, Any]) -> bool:
    """Replace the cache file ``name`` atomically (a temporary file, then a rename); False when it cannot
    be written (no cache folder, read-only, full disk): the caller carries on without the cache."""
    folder = cache_dir()
    if folder is None:
        return False
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, sort_keys=True)
            os.replace(tmp, folder / f"{name}.json")
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True
