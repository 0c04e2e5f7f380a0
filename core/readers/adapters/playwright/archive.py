"""Reading a Playwright ``trace.zip`` in place: limits, safe member names, streamed event lines, and
screencast frames unpacked on demand within a byte budget.

The archive is never extracted. ``trace.zip`` must be a regular file inside the run folder (not a FIFO, not a
link out); it may hold at most MAX_MEMBERS members, MAX_MEMBER_BYTES per member and MAX_TOTAL_BYTES in all,
and a member named with ``..``, an absolute path, a drive letter or a backslash is refused. Event files are
streamed line by line (a line over MAX_EVENT_LINE_BYTES is skipped). A frame is unpacked in CHUNK pieces with
``frames.MAX_FRAME_BYTES`` counted on the bytes the decompressor produces, whatever the member's header
claims, so a small archive of members that unpack to hundreds of MB costs neither the memory nor the time.
"""

from __future__ import annotations

import re
import weakref
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import IO

from ....base.errors import Problem, RunFormatError
from ....base.problems import Slug
from ....base.inputs import NotRegularFile, open_regular

from ...kit.reading import safe_join

__all__ = ["CHUNK", "MAX_EVENT_LINE_BYTES", "MAX_MEMBERS", "MAX_MEMBER_BYTES", "MAX_TOTAL_BYTES", "READ_ERRORS",
           "TRACE_ZIP", "TraceFrames", "event_lines", "open_zip", "unpack"]

TRACE_ZIP = "trace.zip"
#: Zip limits: members, bytes of one member, bytes in all.
MAX_MEMBERS = 20_000
MAX_MEMBER_BYTES = 256 * 1024 * 1024
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024
#: An event line longer than this is skipped with a warning (frame snapshots of big pages are a few MB).
MAX_EVENT_LINE_BYTES = 16 * 1024 * 1024
#: Unpacked in chunks of this size.
CHUNK = 1 << 20
#: What unpacking one member can raise on a damaged archive (bad CRC, truncated deflate stream, ...).
READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError)


def _safe_member(name: str) -> bool:
    """Relative, without ``..``, backslashes, a drive letter or NUL (the archive is never extracted, but a
    member named like that is not something Playwright writes)."""
    p = PurePosixPath(name)
    return bool(name) and not p.is_absolute() and ".." not in p.parts and "\\" not in name and "\0" not in name \
        and not re.match(r"^[A-Za-z]:", name)


def open_zip(path: Path, run: str) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    """The archive and its members by name, checked (a regular file inside the run, within the member, size
    and total limits, no member named out of the archive); raises :class:`RunFormatError` otherwise."""
    def bad(slug: Slug, msg: str, hint: str) -> RunFormatError:
        return RunFormatError([Problem(slug, msg, run=run, file=TRACE_ZIP, hint=hint)])

    if safe_join(path.parent, path.name) is None:
        raise bad(Slug.PATH_ESCAPES_RUN, f"{TRACE_ZIP} is a link to a file outside the run directory; it is not read",
                  "copy the trace into the run directory instead of linking to it")
    try:
        fp: IO[bytes] = open(open_regular(path), "rb", closefd=True)
    except NotRegularFile as exc:
        raise bad(Slug.NOT_A_REGULAR_FILE, f"{exc.kind}, not a regular file; it is never opened",
                  "replace it with the trace Playwright wrote") from None
    except OSError as exc:
        raise bad(Slug.FILE_UNREADABLE, f"cannot read ({exc.strerror or exc})", "re-export the trace") from None
    try:
        z = zipfile.ZipFile(fp)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        fp.close()
        raise bad(Slug.FILE_UNREADABLE, f"not a readable zip ({exc})", "re-export the trace") from None
    weakref.finalize(z, fp.close)  # ZipFile does not close a file it was given
    infos = z.infolist()
    if len(infos) > MAX_MEMBERS:
        z.close()
        raise bad(Slug.TRACE_TOO_LARGE, f"{len(infos)} members (limit {MAX_MEMBERS})", "split the trace")
    total = 0
    members: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        if not _safe_member(info.filename):
            z.close()
            raise bad(Slug.PATH_ESCAPES_RUN, f"member {info.filename!r} points outside the archive",
                      "re-export the trace with Playwright")
        if info.file_size > MAX_MEMBER_BYTES:
            z.close()
            raise bad(Slug.TRACE_TOO_LARGE, f"member {info.filename!r} unpacks to {info.file_size} bytes "
                      f"(limit {MAX_MEMBER_BYTES})", "split the trace")
        total += info.file_size
        members[info.filename] = info
    if total > MAX_TOTAL_BYTES:
        z.close()
        raise bad(Slug.TRACE_TOO_LARGE, f"the archive unpacks to {total} bytes (limit {MAX_TOTAL_BYTES})",
                  "split the trace")
    return z, members


def event_lines(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) of each line of an event file, streamed; None for a line over
    MAX_EVENT_LINE_BYTES (its bytes are read and dropped). Raises a READ_ERRORS error on a damaged member."""
    produced = 0
    with z.open(info) as f:
        lineno = 0
        while True:
            line = f.readline(MAX_EVENT_LINE_BYTES + 1)
            if not line:
                return
            lineno += 1
            produced += len(line)
            if len(line) > MAX_EVENT_LINE_BYTES and not line.endswith(b"\n"):
                while (rest := f.readline(CHUNK)) and not rest.endswith(b"\n"):
                    produced += len(rest)
                produced += len(rest)
                yield lineno, None
            else:
                yield lineno, line
            if produced > MAX_MEMBER_BYTES:  # what zipfile checks against the header, counted on real bytes
                raise zipfile.BadZipFile(f"unpacks past {MAX_MEMBER_BYTES} bytes")


def unpack(z: zipfile.ZipFile, info: zipfile.ZipInfo, keep: bool) -> bytes:
    """A screencast member's bytes (``keep``) or just its check, unpacked in chunks with the frame byte
    budget counted on the bytes produced. Raises FrameError (frame_too_large, frame_unreadable)."""
    from ....media.frames import MAX_FRAME_BYTES, FrameError  # numpy and Pillow: not at import (warm `score`)

    parts: list[bytes] = []
    produced = 0
    try:
        with z.open(info) as f:
            while chunk := f.read(CHUNK):
                produced += len(chunk)
                if produced > MAX_FRAME_BYTES:
                    raise FrameError(Slug.FRAME_TOO_LARGE, f"screencast frame {info.filename!r} unpacks past the "
                                     f"{MAX_FRAME_BYTES} byte frame budget (refused without unpacking the rest)")
                if keep:
                    parts.append(chunk)
    except READ_ERRORS as exc:
        raise FrameError(Slug.FRAME_UNREADABLE,
                         f"screencast frame {info.filename!r} cannot be unpacked ({exc})") from None
    return b"".join(parts)


class TraceFrames(Mapping[str, bytes]):
    """The screencast frames steps use, by member name, unpacked from the open archive on each access
    (the scorer decodes a frame once and drops it after its last use, so at most a step's frames are held).
    A frame that fails now (the archive changed since it was read) raises :class:`FrameError`."""

    def __init__(self, z: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo]):
        self._zip = z
        self._infos = infos

    def __getitem__(self, name: str) -> bytes:
        return unpack(self._zip, self._infos[name], keep=True)

    def __iter__(self) -> Iterator[str]:
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)

    def __contains__(self, name: object) -> bool:
        return name in self._infos
