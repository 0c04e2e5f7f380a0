"""One writer at a time per ledger.

``score`` and ``compact`` hold an exclusive lock on ``LEDGER/.trajcheck-lock`` from before they read
what the ledger holds until their commit is over; readers (``query``, ``export``, ``report``,
:func:`trajcheck.connect`) never take it and always see the last committed manifest.

The lock is a POSIX record lock (``fcntl.lockf``) on that file, not ``flock``: a record lock belongs to
the process, so the worker processes ``score`` forks do not inherit it, and the kernel drops it the
moment its process dies, ``kill -9`` included. The file also says who holds the lock (pid, host,
command, since when, as JSON): a second writer prints that while it waits, up to its ``wait`` seconds,
then gives up with :class:`LedgerBusy`. A file naming a process that is gone (its lock already dropped
by the kernel) is simply taken over, and the takeover is reported.

Within one process, POSIX locks do not exclude each other, so a registry keeps a second thread out
(and lets the thread that holds the lock take it again, as ``ledger.write`` inside ``score`` would).
On local disks and NFS (lockd, NFSv4) this excludes every writer; on a FUSE mount of object storage
(s3fs, gcsfuse) locks are only seen by the machine that takes them, so writers on two machines are not
excluded there: give such a ledger one writing machine. Where file locks are refused outright
(ENOLCK, EOPNOTSUPP), the writer stops with a :class:`~trajcheck.base.errors.LedgerError`.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ..base.errors import LedgerError
from ..scoring.scoreargs import DEFAULT_WAIT as _DEFAULT_WAIT


def _hostname() -> str:
    """This machine's name, as socket.gethostname() gives it (uname's node name on POSIX), without importing
    socket at every command's start (2 ms)."""
    try:
        return os.uname().nodename
    except AttributeError:  # pragma: no cover - Windows
        import socket

        return socket.gethostname()

#: The lock file, inside the ledger directory (hidden: readers and the ledger check ignore it).
LOCK_FILE = ".trajcheck-lock"
#: How long a writer waits for the lock by default (seconds): declared with score's options.
DEFAULT_WAIT = _DEFAULT_WAIT
#: A waiting writer reports at least this often (seconds), and whenever the holder changes.
REPORT_EVERY = 30.0


@dataclass(frozen=True)
class LockHolder:
    """Who holds (or last held) a ledger's lock, as its lock file says."""

    pid: int | None
    host: str
    command: str
    since: str  # ISO 8601, UTC

    def __str__(self) -> str:
        return f"pid {self.pid} on {self.host} ({self.command}) since {self.since}"

    def alive(self) -> bool | None:
        """Is the process still there: True or False on this host, None when it ran on another one."""
        if self.pid is None or self.host != _hostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # someone else's process: alive
            return True
        return True


@dataclass(frozen=True)
class LockWait:
    """What a writer reports while it waits for (or takes over) the lock: ``holder`` holds it (None when
    its file does not say); ``took_over`` is set once, when a lock left by a dead process was taken."""

    ledger: Path
    holder: LockHolder | None
    waited: float
    limit: float
    took_over: LockHolder | None = None


class LedgerBusy(LedgerError):
    """Another writer held the ledger's lock for longer than the caller would wait."""

    def __init__(self, ledger: Path, holder: LockHolder | None, waited: float):
        self.ledger, self.holder, self.waited = ledger, holder, waited
        who = str(holder) if holder else "another writer"
        super().__init__(f"{ledger} is being written by {who}; gave up after {waited:.0f}s")


def _me() -> dict[str, Any]:
    cmd = " ".join([os.path.basename(sys.argv[0] or "python"), *sys.argv[1:]])
    return {"pid": os.getpid(), "host": _hostname(), "command": cmd[:300],
            "since": datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")}


def _holder(data: bytes) -> LockHolder | None:
    try:
        d = json.loads(data.decode("utf-8"))
        pid = d.get("pid")
        return LockHolder(pid if isinstance(pid, int) else None, str(d.get("host", "?")), str(d.get("command", "?")),
                          str(d.get("since", "?")))
    except (ValueError, AttributeError, UnicodeDecodeError):
        return None


def _try_lock(fd: int) -> bool:
    """Take the lock on ``fd`` without waiting: True if taken, False if another process holds it."""
    try:
        import fcntl
    except ImportError:  # Windows: a byte-range lock far past the holder text
        import msvcrt

        os.lseek(fd, 1 << 30, os.SEEK_SET)
        try:
            # typeshed declares msvcrt's functions on Windows only, and the type check runs for Linux
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
            return True
        except OSError:
            return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EAGAIN):
            return False
        raise


class _Held:
    def __init__(self, fd: int, key: tuple[int, int], owner: int, created: bool):
        self.fd, self.key, self.owner, self.count, self.created = fd, key, owner, 1, created


_registry: dict[str, _Held] = {}  # realpath of the ledger -> the lock this process holds on it
_registry_lock = threading.Lock()


class LedgerLock:
    """A held ledger lock; :meth:`release` it (or use it as a context manager). ``created`` is True when
    taking it created the ledger directory."""

    def __init__(self, root: Path, held: _Held, name: str):
        self.root, self._held, self._name, self.released = root, held, name, False
        self._took_over: LockHolder | None = None  # the dead writer whose lock this one took over

    @property
    def created(self) -> bool:
        return self._held.created

    def __enter__(self) -> "LedgerLock":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def release(self) -> None:
        """Give the lock up (the holder text is cleared first). If taking it created the ledger directory
        and no generation was ever committed there, the directory goes too, when nothing else is in it."""
        if self.released:
            return
        self.released = True
        with _registry_lock:
            h = self._held
            h.count -= 1
            if h.count > 0:
                return
            _registry.pop(self._name, None)
            path = self.root / LOCK_FILE
            if not (self.root / "manifest.json").exists():
                # no ledger here (nothing committed, or a folder that is not a ledger): leave no lock file, and
                # no folder this writer created. A writer waiting on the file notices it is gone once it
                # takes it, and starts again with a new one.
                try:
                    os.unlink(path)
                except OSError:
                    pass
            try:
                os.ftruncate(h.fd, 0)
            except OSError:
                pass
            os.close(h.fd)  # drops the lock
            if h.created:
                try:
                    self.root.rmdir()  # only when empty
                except OSError:
                    pass


def acquire(ledger: str | os.PathLike[str], wait: float = DEFAULT_WAIT,
            on_wait: Callable[[LockWait], None] | None = None, *, poll: float = 0.2) -> LedgerLock:
    """Take the writer lock of the ledger at ``ledger`` (creating the directory if needed), waiting up to
    ``wait`` seconds for another writer to finish; ``on_wait`` hears who holds it when the wait starts,
    when the holder changes and every REPORT_EVERY seconds, and once if a dead writer's lock is taken
    over. Raises :class:`LedgerBusy` when the wait runs out, LedgerError when the lock cannot be taken."""
    root = Path(ledger)
    if root.exists() and not root.is_dir():
        raise LedgerError(f"{root} exists and is not a directory")
    created = not root.exists()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LedgerError(f"cannot create {root}: {exc.strerror or exc}") from None
    name = os.path.realpath(root)
    path = root / LOCK_FILE
    start = time.monotonic()
    last: LockHolder | None = None
    reported_at: float | None = None
    me = threading.get_ident()
    while True:
        with _registry_lock:
            h = _registry.get(name)
            if h is not None and h.owner == me:  # this thread holds it already: take it again
                h.count += 1
                return LedgerLock(root, h, name)
        holder: LockHolder | None = None
        if h is not None:  # another thread of this process holds it
            holder = LockHolder(os.getpid(), _hostname(), "this process, another thread", "")
        else:
            got = _take(root, path, name, me, created)
            if isinstance(got, LedgerLock):
                if got._took_over is not None and on_wait:
                    on_wait(LockWait(root, None, time.monotonic() - start, wait, took_over=got._took_over))
                return got
            holder = got
        waited = time.monotonic() - start
        if waited >= wait:
            raise LedgerBusy(root, holder, waited)
        if on_wait and (reported_at is None or holder != last or waited - reported_at >= REPORT_EVERY):
            on_wait(LockWait(root, holder, waited, wait))
            reported_at, last = waited, holder
        time.sleep(min(poll, max(0.0, wait - waited)))
        poll = min(poll * 1.5, 1.0)


def _take(root: Path, path: Path, name: str, me: int, created: bool) -> "LedgerLock | LockHolder | None":
    """One attempt: the lock, or who holds it (None when its file does not say)."""
    try:
        root.mkdir(parents=True, exist_ok=True)  # a writer that created it may have removed it meanwhile
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        raise LedgerError(f"cannot open the lock file {path}: {exc.strerror or exc}") from None
    try:
        try:
            taken = _try_lock(fd)
        except OSError as exc:
            raise LedgerError(f"cannot lock {root}: file locks are not supported here ({exc.strerror or exc}); "
                              "write the ledger on a local disk") from None
        before = _holder(os.pread(fd, 4096, 0)) if hasattr(os, "pread") else None
        if not taken:
            os.close(fd)
            return before
        st, now = os.fstat(fd), None
        try:
            now = os.stat(path)
        except FileNotFoundError:
            pass
        if now is None or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            os.close(fd)  # the file was removed by the writer we waited for: take the new one
            return _take(root, path, name, me, created)
        data = json.dumps(_me(), sort_keys=True).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0) if hasattr(os, "pwrite") else os.write(fd, data)
    except BaseException:
        try:
            os.close(fd)
        except OSError:
            pass
        raise
    held = _Held(fd, (st.st_dev, st.st_ino), me, created)
    with _registry_lock:
        _registry[name] = held
    lock = LedgerLock(root, held, name)
    # a holder text naming another process means its writer died holding the lock (the kernel dropped it)
    lock._took_over = before if before is not None and (before.pid != os.getpid() or before.host !=
                                                         _hostname()) else None
    return lock
