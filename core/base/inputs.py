"""Opening the files of a run: regular files only, never a FIFO, a socket or a device.

A run folder comes from someone else. Opening a named pipe for reading blocks until a writer appears
(forever, in CI), and reading a character device such as ``/dev/zero`` never ends; so every input file
is checked with ``stat`` before it is opened (``S_ISREG``), and opened with ``O_NONBLOCK`` and checked
again with ``fstat``, so a file swapped for a pipe between the two calls still cannot block. ``O_NONBLOCK``
changes nothing for a regular file.
"""

from __future__ import annotations

import os
import stat

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class NotRegularFile(OSError):
    """The path exists and is not a regular file (a FIFO, a socket, a device, a directory). An
    ``OSError``, so code that treats any OSError as "cannot read" stays safe; callers that can name
    the problem catch it first (slug ``not_a_regular_file``)."""

    def __init__(self, path: str | os.PathLike[str], mode: int):
        self.kind = kind_of(mode)
        self.message = f"{self.kind}, not a regular file; it is never opened"
        super().__init__(self.message)
        self.filename = os.fspath(path)

    def __str__(self) -> str:
        return self.message


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, for messages."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def regular_stat(path: str | os.PathLike[str], st: os.stat_result | None = None) -> os.stat_result:
    """``os.stat(path)`` (or ``st``, a stat the caller already made), raising :class:`NotRegularFile`
    for anything but a regular file (links are followed: callers resolve them inside the run first)."""
    st = st if st is not None else os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(path, st.st_mode)
    return st


def open_regular(path: str | os.PathLike[str], st: os.stat_result | None = None) -> int:
    """A read-only file descriptor of ``path``, a regular file (see :func:`regular_stat`)."""
    regular_stat(path, st)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        regular_stat(path, os.fstat(fd))  # swapped for a FIFO since the stat: still never read
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str | os.PathLike[str], st: os.stat_result | None = None, limit: int | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file, at most ``limit + 1`` of them when ``limit`` is set
    (so the caller can tell "over the limit"). Raises :class:`NotRegularFile`, ``FileNotFoundError`` or
    another ``OSError``."""
    fd = open_regular(path, st)
    with open(fd, "rb", closefd=True) as f:
        return f.read() if limit is None else f.read(limit + 1)


def is_regular(path: str | os.PathLike[str]) -> bool:
    """True for a regular file (links followed), False for anything else or nothing."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def exists_not_dir(path: str | os.PathLike[str]) -> bool:
    """Something that is not a directory is at ``path`` (a file, a FIFO, a device; links followed): a
    reader that finds its file name there claims the folder and reports what is wrong with it."""
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def image_ext(data: bytes) -> str | None:
    """The file extension of PNG, JPEG or WebP bytes, from their signature; None for anything else."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:3] == b"\xff\xd8\xff":
        return "jpg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None
