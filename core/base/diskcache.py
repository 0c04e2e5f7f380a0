"""A small on-disk cache of facts about this machine's libraries, shared by every trajcheck process.

Some facts cost tens of milliseconds to establish and never change while the libraries stay the same:
which pass order of trajcheck's LANCZOS resize gives the installed Pillow's bytes for a frame size (a
probe resize of a noise image, 26 ms for 1280x800, 38 ms for 2560x1600). A command that scores one short
run pays that in every process; here it is established once per machine and read back (under 1 ms).

The cache is a folder of JSON files: ``$TRAJCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/trajcheck``, else
``~/.cache/trajcheck``; ``TRAJCHECK_NO_CACHE=1`` turns it off. Every key names the versions it depends
on, so an upgrade never reads a stale fact. Anything wrong with the cache (missing, unreadable, corrupt,
read-only) only means the fact is established again: the cache can never change a result.

Facts that are run, or that decide a result directly, are stored with a checksum (:func:`checked_entry`)
and read only from a regular file this user owns and nobody else can write (:func:`read_private`): the
LANCZOS weights of each axis size (:mod:`trajcheck.base.resample`, 4-11 ms each to compute), and compiled
Python code (:func:`read_code`, :func:`write_code`): the JSON Schema validators fastjsonschema generates
(:mod:`trajcheck.readers.rundir`) take 5-12 ms each to generate and compile, in every process that reads runs, and
under a millisecond to read back. Code is kept under the interpreter's bytecode version: a damaged or
foreign entry is never loaded, only compiled again.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from types import CodeType
from typing import Any

from .atomic import atomic_write

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
        path = folder / f"{name}.json"  # a name may hold one folder: "ocr/<digest>"
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path, "w", hidden=True, private=True) as f:
            json.dump(data, f, sort_keys=True)
    except OSError:
        return False
    return True


#: Files kept in one folder of the cache (the OCR's reads, ``ocr/`` and ``ocrcrop/``): past it, :func:`prune`
#: removes the least recently written down to nine tenths of it. A read is 1-2 KB: 20,000 are about 40 MB.
MAX_FILES = 20_000


def prune(folder_name: str, keep: int = MAX_FILES, nested: bool = False) -> int:
    """Bound the cache folder ``folder_name`` to ``keep`` files (``nested``: those of its subfolders, one level
    down, as the thumbnails are kept): past it, the least recently written go, down to nine tenths of ``keep``
    (so that a prune is rare). Returns how many files were removed; a file that cannot be removed is left
    (another process may hold it), and nothing is raised."""
    folder = cache_dir()
    if folder is None:
        return 0
    files: list[tuple[float, str]] = []
    try:
        with os.scandir(folder / folder_name) as it:
            for e in it:
                if e.is_file(follow_symlinks=False):
                    files.append((e.stat(follow_symlinks=False).st_mtime, e.path))
                elif nested and e.is_dir(follow_symlinks=False):
                    with os.scandir(e.path) as sub:
                        files += [(f.stat(follow_symlinks=False).st_mtime, f.path) for f in sub
                                  if f.is_file(follow_symlinks=False)]
    except OSError:
        return 0
    if len(files) <= keep:
        return 0
    files.sort()
    removed = 0
    for _mtime, path in files[:len(files) - keep * 9 // 10]:
        try:
            os.unlink(path)
            removed += 1
        except OSError:
            pass
    return removed


def _code_key(key: str) -> str:
    """``key`` and what bytecode depends on: the interpreter and its bytecode and marshal formats."""
    import importlib.util
    import marshal
    import sys

    return f"{key}, {sys.implementation.cache_tag} {importlib.util.MAGIC_NUMBER.hex()} marshal {marshal.version}"


def _checksum(data: bytes) -> str:
    import hashlib

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def read_private(name: str) -> dict[str, Any]:
    """Like :func:`read`, for facts that are run or that decide a result: only from a regular file this user
    owns and nobody else can write (as Jinja's bytecode cache asks), checked on the open file (no symlink
    followed, no swap between the check and the read); an empty dict otherwise, and on systems without file
    owners (Windows)."""
    folder = cache_dir()
    getuid = getattr(os, "getuid", None)
    nofollow = getattr(os, "O_NOFOLLOW", None)
    if folder is None or getuid is None or nofollow is None:
        return {}
    try:
        fd = os.open(folder / f"{name}.json", os.O_RDONLY | nofollow)
    except OSError:
        return {}
    try:
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_uid != getuid() or st.st_mode & 0o022 \
                    or st.st_size > MAX_BYTES:
                return {}
            data = json.loads(f.read(MAX_BYTES + 1))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def checked_entry(value: Any) -> dict[str, Any]:
    """``value`` wrapped with the checksum of its JSON text, for :func:`entry_value`."""
    return {"value": value, "checksum": _checksum(json.dumps(value, sort_keys=True).encode())}


def entry_value(entry: Any) -> Any:
    """The value :func:`checked_entry` wrapped, or None when the entry is not one or its checksum does not
    match (a damaged file)."""
    if not isinstance(entry, dict) or "value" not in entry:
        return None
    try:
        text = json.dumps(entry["value"], sort_keys=True).encode()
    except (TypeError, ValueError, RecursionError):
        return None
    return entry["value"] if entry.get("checksum") == _checksum(text) else None


def read_code(name: str, key: str) -> CodeType | None:
    """The code :func:`write_code` kept as ``name`` under ``key`` for this interpreter, or None (none, another
    key or interpreter, a file another user owns or can write, or an entry whose checksum does not match:
    marshal must never read damaged bytes)."""
    entry = read_private(name).get(_code_key(key))
    if not isinstance(entry, dict) or not isinstance(entry.get("marshal"), str):
        return None
    import base64
    import binascii
    import marshal

    try:
        data = base64.b64decode(entry["marshal"], validate=True)
    except (binascii.Error, ValueError):
        return None
    if entry.get("checksum") != _checksum(data):
        return None
    try:
        code = marshal.loads(data)
    except Exception:  # noqa: BLE001  (not marshal data of this interpreter: EOFError, ValueError, TypeError...)
        return None
    return code if isinstance(code, CodeType) else None


def write_code(name: str, key: str, code: CodeType) -> bool:
    """Keep ``code`` as the cache file ``name`` under ``key`` (and this interpreter's bytecode version); the
    file's other entries are dropped (stale: another key or interpreter). False when it cannot be written."""
    import base64
    import marshal

    data = marshal.dumps(code)
    return write(name, {_code_key(key): {"marshal": base64.b64encode(data).decode("ascii"),
                                         "checksum": _checksum(data)}})
