"""Content digests of runs, so that an unchanged run is not scored twice.

A run's *input digest* covers every file under its directory (path and content
hash), the reader that reads it, the scoring options (and the contracts folder's
files when ``--contracts`` is given), the judgments of that run given with
``--judgments`` (:func:`judgments_entry`: a changed verdict or reason rescores the
runs it names, and only those), the trajcheck version and the ledger schema.
If any of these changes, the digest changes and the run is scored again; nothing
stale is ever reused. A run whose screenshots lie beside its directory (inside the
folder being scored) has those files in its manifest too, under ``../`` names
(:func:`outside_manifest`), with the places it looked for a missing one.

Hashing every byte of every frame on each re-score would cost a full read of the
corpus, so the ledger also keeps each file's (size, mtime_ns, content hash): a
file whose size and mtime are unchanged keeps its recorded hash, any other file is
read and hashed again (so a touched but identical file does not force a re-score).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any, Sequence

from ..schemas.version import SCHEMA_VERSION

from ..base.version import __version__
from ..base.inputs import kind_of, open_regular
from ..base.runfiles import outside_join, scoring_root

#: Files are hashed in chunks of this size.
CHUNK = 1 << 20
#: Directories never part of a run's input.
SKIP_DIRS = frozenset({"__pycache__", ".git", "node_modules"})

FileEntry = list[Any]  # [size, mtime_ns, blake2b hex]


def _hash_file(path: str, st: os.stat_result | None = None) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(open_regular(path, st), "rb", closefd=True) as f:  # a FIFO is never opened: it would block
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def file_manifest(root: Path, prior: dict[str, FileEntry] | None = None) -> dict[str, FileEntry]:
    """Every file under ``root`` (a run directory): relative path -> [size, mtime_ns, hash].

    Sub-directories that hold their own ``run.json`` are other runs and are left out.
    Symbolic links are recorded by their target text, never followed; a FIFO, a socket or a
    device by its kind, never opened (opening a FIFO blocks until someone writes to it).
    ``prior`` lends the hash of files whose size and mtime did not change.
    """
    prior = prior or {}
    out: dict[str, FileEntry] = {}
    base = str(root)
    if os.path.isfile(base):  # a run that is one file of a folder of transcripts
        name = os.path.basename(base)
        entry = _entry(base, prior.get(name))
        # gone or unreadable since isfile(): left out, as _scan leaves out such a file of a folder
        out = {} if entry is None else {name: entry}
        out[IMAGES_BESIDE] = _images_beside(os.path.dirname(base))
        return out
    _scan(base, "", prior, out)
    return out


def _scan(folder: str, prefix: str, prior: dict[str, FileEntry], out: dict[str, FileEntry]) -> None:
    """Add the files of ``folder`` (``prefix`` is its path relative to the run, with a trailing "/") and of
    its sub-folders, in name order. A link to a folder is neither followed nor recorded; an unreadable
    folder is skipped (as os.walk does)."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for e in entries:
        try:
            is_dir = e.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if e.is_symlink() or e.name in SKIP_DIRS or os.path.isfile(os.path.join(e.path, "run.json")):
                continue
            _scan(e.path, prefix + e.name + "/", prior, out)
            continue
        rel = prefix + e.name
        entry = _dir_entry(e, prior.get(rel))
        if entry is not None:
            out[rel] = entry


def _dir_entry(e: os.DirEntry[str], old: FileEntry | None) -> FileEntry | None:
    try:
        return _record(e.path, e.stat(follow_symlinks=False), e.is_symlink(), old)
    except OSError:
        return None


#: The manifest entry of a run that is one file, for the images in its folder (screenshots it may name): a
#: screenshot copied in, changed or removed later changes the run's digest.
IMAGES_BESIDE = "<images in the run's folder>"
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
_beside: dict[tuple[str, int], FileEntry] = {}


def forget_listings() -> None:
    """Drop the folder listings kept by :func:`_images_beside`: each scoring call lists folders afresh."""
    _beside.clear()


def _images_beside(folder: str) -> FileEntry:
    """[count, newest mtime_ns, digest of every image's relative path, size and mtime] under ``folder``, listed
    once per scoring call (a folder of many transcripts is listed once, not once per run; see
    :func:`forget_listings`)."""
    try:
        key = (folder, os.stat(folder).st_mtime_ns)
    except OSError:
        return [0, 0, "absent"]
    if key not in _beside:
        h = hashlib.blake2b(digest_size=16)
        n = newest = 0
        for dirpath, dirnames, files in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
            for f in sorted(files):
                if f.lower().endswith(_IMAGE_SUFFIXES):
                    try:
                        st = os.lstat(os.path.join(dirpath, f))
                    except OSError:
                        continue
                    n += 1
                    newest = max(newest, st.st_mtime_ns)
                    h.update(f"{os.path.relpath(os.path.join(dirpath, f), folder)}\0{st.st_size}\0{st.st_mtime_ns}\n"
                             .encode("utf-8", "surrogateescape"))
        if len(_beside) > 256:
            _beside.clear()
        _beside[key] = [n, newest, h.hexdigest()]
    return list(_beside[key])


#: A file outside the run's folder that is not there (or, read again, no longer inside the folder being scored).
ABSENT: FileEntry = [0, 0, "absent"]


def is_outside(rel: str) -> bool:
    """A manifest entry for a file outside the run's folder (``../screenshots/a.png``): the names of files
    inside it never start with ``../``."""
    return rel.startswith("../")


def outside_names(inputs: str | None) -> frozenset[str]:
    """The files outside a run's folder that scoring took its frames from (inside the folder scored then), from
    the runs row's ``inputs`` (its recorded manifest): their ``../`` names, which its steps use."""
    try:
        files = json.loads(inputs).get("files") if isinstance(inputs, str) else None
    except (ValueError, AttributeError):
        return frozenset()
    return frozenset(k for k in files if is_outside(k)) if isinstance(files, dict) else frozenset()


def outside_manifest(files: dict[str, str], prior: dict[str, FileEntry] | None = None) -> dict[str, FileEntry]:
    """The manifest entries of the files outside a run's folder that its frames come from or were looked for at
    (``Run.outside_files``: relative path -> resolved path inside the folder being scored), each as
    :func:`file_manifest` records a file, or :data:`ABSENT`: a screenshot copied there later, changed or removed
    changes the run's digest."""
    prior = prior or {}
    return {rel: _entry(full, prior.get(rel)) or list(ABSENT) for rel, full in sorted(files.items())}


def outside_again(run_dir: Path, old: dict[str, FileEntry], root: str | None) -> dict[str, FileEntry]:
    """The entries of a scored run's files outside its folder (the ``../`` names of its recorded manifest
    ``old``) as they are now: each resolved from the run's folder again, and :data:`ABSENT` when it is gone or
    no longer inside ``root``, the folder being scored (a link changed to lead out of it is never read)."""
    names = [k for k in old if is_outside(k)]
    if not names:
        return {}
    out: dict[str, FileEntry] = {}
    with scoring_root(root):
        for rel in names:
            got = outside_join(run_dir, rel)
            out[rel] = outside_manifest({rel: str(got[1])}, old)[rel] if got is not None else list(ABSENT)
    return out


def _entry(full: str, old: FileEntry | None) -> FileEntry | None:
    try:
        st = os.lstat(full)
        return _record(full, st, os.path.islink(full), old)
    except OSError:
        return None


def _record(full: str, st: os.stat_result, link: bool, old: FileEntry | None) -> FileEntry:
    """[size, mtime_ns, hash] of one file: a link by its target text, a file whose size and mtime match
    ``old`` by its recorded hash, anything else hashed anew ("unreadable" if it cannot be read)."""
    if link:
        digest = "link:" + os.readlink(full)
    elif not stat.S_ISREG(st.st_mode):
        digest = "special:" + kind_of(st.st_mode)
    elif old and old[0] == st.st_size and old[1] == st.st_mtime_ns:
        digest = old[2]
    else:
        try:
            digest = _hash_file(full, st)
        except OSError:
            digest = "unreadable"
    return [st.st_size, st.st_mtime_ns, digest]


def special_files(files: dict[str, FileEntry], run: str, warnings: Sequence[str] = ()) -> list[str]:
    """A warning (as the runs table's ``warnings`` hold them) for each FIFO, socket or device in a run's
    manifest (recorded by its kind, never opened) that none of ``warnings`` names already."""
    from ..base.errors import Problem
    from ..base.problems import Slug
    from .rowcheck import printable

    return [str(Problem(Slug.NOT_A_REGULAR_FILE, f"{e[2][len('special:'):]}, not a regular file; it is never opened",
                        run=run, file=printable(rel), severity="warning", hint="remove it from the run directory"))
            for rel, e in files.items() if isinstance(e[2], str) and e[2].startswith("special:")
            and not any(repr(rel) in w for w in warnings)]


def options_fingerprint(opts: Any, input_format: str | None) -> str:
    """What the scoring options (and the contracts they point at) contribute to every digest."""
    def plain(v: Any) -> Any:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return {f.name: plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
        if isinstance(v, Path):
            return str(v.resolve())
        return v

    options = plain(opts)
    if isinstance(options, dict):  # each run's own judgments are in its digest (judgments_entry), not every run's
        options.pop("judgments", None)
        # the mapping is in each mapped run's digest as its reader's name (mapping:<stem>@<hash of the file>); the
        # runs other readers read keep their digest whatever mapping the call has
        options.pop("mapping", None)
    data: dict[str, Any] = {"options": options, "input_format": input_format,
                            "trajcheck": __version__, "schema": SCHEMA_VERSION}
    if getattr(opts, "ocr", "off") != "off":  # installing OCR changes what is read: score again
        from ..media.ocrprobe import installed

        data["ocr"] = installed()
    contracts = getattr(opts, "contracts_dir", None)
    if contracts is not None and Path(contracts).is_dir():
        data["contracts"] = {k: v[2] for k, v in file_manifest(Path(contracts)).items()}
    return hashlib.blake2b(json.dumps(data, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()


#: The manifest entry of a run's judgments (``score --judgments``): [count, 0, digest of what they say].
JUDGMENTS = "<judgments of score --judgments>"


def judgments_entry(opts: Any, run_id: str | None) -> dict[str, FileEntry]:
    """The manifest entry of the judgments of ``run_id`` among the options' (none: no entry, so a run that no
    judge names keeps its digest whatever the judgments files say of other runs)."""
    given = opts.judgments_of(run_id) if run_id is not None and hasattr(opts, "judgments_of") else []
    if not given:
        return {}
    text = json.dumps([[j.judge, j.verdict, j.confidence, j.reason] for j in given], sort_keys=True)
    return {JUDGMENTS: [len(given), 0, hashlib.blake2b(text.encode(), digest_size=16).hexdigest()]}


def input_digest(files: dict[str, FileEntry], reader: str, fingerprint: str) -> str:
    """The run's digest: its files' paths and content hashes, its reader, the options' fingerprint."""
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps([reader, fingerprint, sorted((k, v[2]) for k, v in files.items())]).encode())
    return h.hexdigest()
