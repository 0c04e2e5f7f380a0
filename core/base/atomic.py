"""Atomic replacement: a reader sees the old file (or folder) or the new one, never half of either.

What is written goes to a temporary sibling (same folder, so the rename never crosses file systems; a
name unique to the call, so concurrent writers never share one), then is renamed over the target. On an
error the temporary sibling is removed and the target is left as it was::

    with atomic_write(path, "w") as f:          # a file object
        f.write(text)
    with atomic_path(path, sync=True) as tmp:   # a path, for writers that take one (pyarrow)
        pq.write_table(table, tmp)

A write whose temporary file must outlive one block (the ledger's parts, written batch by batch and
renamed at its commit) takes the two steps itself: ``tmp = temp_name(path)`` ... ``commit(tmp, path)``.

The folders above the target are made if missing, and an OSError names the target, never the temporary
name (a message shows the path the user gave).

``sync=True`` flushes the data to disk before the rename, for files a later commit point names; the
folder's entry (the rename itself) is flushed by the caller's :func:`fsync_dir`, where it orders commits.
This module imports nothing of trajcheck's: any module may use it without making an import loop.
"""

from __future__ import annotations

import errno
import os
import shutil
import uuid
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Any, Iterator, Literal, overload


def temp_name(path: str | os.PathLike[str], *, hidden: bool = False) -> Path:
    """A new name beside ``path``: ``NAME.<32 hex>.tmp``, or ``.NAME.<32 hex>.tmp`` when ``hidden`` (a
    folder's listing, discovery and globs skip it). Nothing is created."""
    p = Path(path)
    return p.with_name(f"{'.' if hidden else ''}{p.name}.{uuid.uuid4().hex}.tmp")


def fsync_file(path: str | os.PathLike[str]) -> None:
    """Flush a file's data to disk (before a rename makes it part of a commit)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flush a folder's entries (the renames into it) to disk; a no-op where folders cannot be opened
    or synced (Windows, some network file systems)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def commit(temp: str | os.PathLike[str], path: str | os.PathLike[str], *, sync: bool = False) -> None:
    """Rename ``temp`` over ``path`` in one step (``os.replace``); with ``sync``, ``temp``'s data is flushed
    to disk first. A folder replaces only a missing or empty folder this way (see :func:`atomic_path`)."""
    if sync:
        fsync_file(temp)
    os.replace(temp, path)


def discard(temp: str | os.PathLike[str]) -> None:
    """Remove a temporary file or folder, if it is there (a folder above it may be missing, or a file)."""
    p = Path(temp)
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        try:
            p.unlink()
        except (FileNotFoundError, NotADirectoryError):
            pass


def _swap_folder(temp: Path, path: Path) -> None:
    """Put the folder ``temp`` in place of the existing ``path``: the old one is renamed aside
    (``.NAME.<hex>.old``), the new one renamed in, then the old one removed. A rename cannot replace a
    folder that has files in it, so a reader may find nothing at ``path`` between the two renames."""
    old = path.with_name(f".{path.name}.{uuid.uuid4().hex}.old")
    os.replace(path, old)
    try:
        os.replace(temp, path)
    except BaseException:
        os.replace(old, path)  # the old folder back where it was
        raise
    shutil.rmtree(old, ignore_errors=True)


def _as_target(exc: OSError, temp: Path, target: Path) -> OSError:
    """``exc`` naming ``target`` where it named the temporary ``temp``: the name the user gave, never one
    made for the write. The same class (PermissionError...), errno and text; other errors unchanged."""
    names = (exc.filename, exc.filename2)
    if os.fspath(temp) not in {os.fspath(n) for n in names if isinstance(n, (str, os.PathLike))}:
        return exc
    return type(exc)(exc.errno, exc.strerror, os.fspath(target))


@contextmanager
def atomic_path(path: str | os.PathLike[str], *, sync: bool = False, hidden: bool = False) -> Iterator[Path]:
    """A temporary path beside ``path`` (see :func:`temp_name`; nothing is created there) for the block to
    write a file or a folder at; when the block ends without an error it is renamed over ``path`` (a
    folder replacing an existing ``path`` is swapped in, see :func:`_swap_folder`). The folders above
    ``path`` are made if missing. On an error whatever the block wrote there is removed and ``path`` is
    untouched; an OSError that names the temporary path is raised naming ``path`` instead. ``sync`` flushes
    a file's data before the rename."""
    target = Path(path)
    temp = temp_name(target, hidden=hidden)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:  # a file where one of the folders should be: say so, not "File exists"
        raise NotADirectoryError(errno.ENOTDIR, "a file is where a folder of the path should be",
                                 exc.filename) from exc
    try:
        yield temp
        if temp.is_dir() and target.exists():
            _swap_folder(temp, target)
        else:
            commit(temp, target, sync=sync)
    except OSError as exc:
        discard(temp)
        named = _as_target(exc, temp, target)
        if named is exc:
            raise
        raise named from exc
    except BaseException:
        discard(temp)
        raise


@overload
def atomic_write(path: str | os.PathLike[str], mode: Literal["w"], *, sync: bool = ..., hidden: bool = ...,
                 private: bool = ...) -> AbstractContextManager[IO[str]]: ...
@overload
def atomic_write(path: str | os.PathLike[str], mode: Literal["wb"] = ..., *, sync: bool = ..., hidden: bool = ...,
                 private: bool = ...) -> AbstractContextManager[IO[bytes]]: ...
def atomic_write(path: str | os.PathLike[str], mode: Literal["w", "wb"] = "wb", *, sync: bool = False,
                 hidden: bool = False, private: bool = False) -> AbstractContextManager[IO[Any]]:
    """A new file object (text in UTF-8 for ``"w"``, bytes for ``"wb"``) on a temporary file beside ``path``,
    renamed over ``path`` when the block ends without an error, removed when it raises (see
    :func:`atomic_path`; ``sync`` flushes the data to disk before the rename). A ``private`` file is made
    readable and writable by its owner only (mode 0600, whatever the umask), as files in a shared cache."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes a new file: mode 'w' or 'wb', not {mode!r}")
    return _atomic_write(Path(path), mode, sync, hidden, 0o600 if private else 0o666)


@contextmanager
def _atomic_write(path: Path, mode: str, sync: bool, hidden: bool, perms: int) -> Iterator[IO[Any]]:
    def create(name: str, flags: int) -> int:
        return os.open(name, flags, perms)  # the umask still applies, and can only take permissions away

    with atomic_path(path, sync=sync, hidden=hidden) as temp:
        # "x": the temporary name is this call's own; created, never opened over another writer's file
        with open(temp, mode.replace("w", "x"), encoding="utf-8" if mode == "w" else None, opener=create) as f:
            yield f
