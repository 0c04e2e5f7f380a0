"""Runs stored behind fsspec URLs (``s3://bucket/prefix``, ``gcs://...``, ``memory://...``).

Discovery lists the store for ``run.json`` files (the native format; format
adapters read local directories only). A worker scores a remote run by copying
its directory into a private temporary directory, scoring that copy exactly as a
local run, and reporting the URL as the run's path: the ledger rows are the same
as for a local copy of the run, but for ``run_path`` and ``inputs``. Remote runs
are always scored again (their digest is not compared with the ledger's).

Credentials and endpoints come from fsspec's usual configuration, e.g.
``FSSPEC_S3_ENDPOINT_URL`` / ``AWS_ACCESS_KEY_ID`` for an S3-compatible store.
``file://`` URLs are plain local paths.
"""

from __future__ import annotations

import posixpath
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from .errors import Problem
from .problems import Slug

RUN_FILE = "run.json"
#: Largest remote run directory copied for scoring (bytes).
MAX_RUN_BYTES = 2 << 30


def is_url(arg: object) -> bool:
    return isinstance(arg, str) and "://" in arg


def local_path(url: str) -> str | None:
    """The local path of a file:// URL, None for other schemes."""
    return url[len("file://"):] if url.startswith("file://") else None


def _fs(url: str) -> tuple[Any, str]:  # Any: fsspec ships no types (an AbstractFileSystem)
    try:
        import fsspec
    except ImportError as exc:  # pragma: no cover - fsspec ships with the dask extra
        raise RuntimeError("reading runs from URLs needs fsspec: pip install 'trajcheck[dask]'") from exc
    return fsspec.core.url_to_fs(url)


def discover_url(url: str) -> tuple[list[tuple[str, str]], list[Problem]]:
    """(run URL, display) for every run directory (holding run.json) under ``url``."""
    try:
        fs, root = _fs(url)
        protocol = url.split("://", 1)[0]
        root = root.rstrip("/")
        if not fs.exists(root):
            return [], [Problem(Slug.PATH_NOT_FOUND, f"{url} does not exist", file=url,
                                hint="check the bucket and prefix, and the store's credentials")]
        found = sorted(p for p in fs.find(root) if posixpath.basename(p) == RUN_FILE)
    except Exception as exc:  # noqa: BLE001  (any store error is a located problem, never a traceback)
        return [], [Problem(Slug.STORE_UNREADABLE, f"{url}: {type(exc).__name__}: {exc}", file=url,
                            hint="check the URL, the credentials and the endpoint (FSSPEC_<PROTOCOL>_* variables)")]
    out = []
    for f in found:
        d = posixpath.dirname(f)
        rel = posixpath.relpath(d, root) if d != root else posixpath.basename(d)
        out.append((f"{protocol}://{d}", rel))
    return out, []


@contextmanager
def staged(url: str) -> Iterator[Path]:
    """Copy the run directory at ``url`` into a private temporary directory for scoring."""
    fs, root = _fs(url)
    root = root.rstrip("/")
    size = sum(fs.du(root, total=False).values()) if hasattr(fs, "du") else 0
    if size > MAX_RUN_BYTES:
        raise OSError(f"{url}: {size} bytes is more than the {MAX_RUN_BYTES} bytes a remote run may hold")
    tmp = Path(tempfile.mkdtemp(prefix="trajcheck-run-"))
    try:
        dest = tmp / "run"
        dest.mkdir()
        for f in fs.find(root):
            rel = posixpath.relpath(f, root)
            if rel.startswith("..") or posixpath.isabs(rel):
                continue
            target = dest.joinpath(*rel.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            fs.get_file(f, str(target))
        yield dest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
