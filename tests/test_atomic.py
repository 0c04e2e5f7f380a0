"""The one atomic-write helper (trajcheck.base.atomic): a reader sees the old file or the new one, a failed write
leaves the old one and no temporary file, and concurrent writers never share a temporary name."""

from __future__ import annotations

import ast
import os
import threading
from pathlib import Path

import pytest

from trajcheck.base import atomic
from trajcheck.base.atomic import atomic_path, atomic_write, commit, temp_name

from conftest import ROOT


class Boom(Exception):
    pass


def test_text_and_binary_modes(tmp_path):
    text, data = tmp_path / "t.txt", tmp_path / "b.bin"
    with atomic_write(text, "w") as f:
        f.write("déjà vu\n")
    with atomic_write(data) as f:  # bytes by default
        f.write(b"\x00\xff")
    assert text.read_bytes() == "déjà vu\n".encode("utf-8")
    assert data.read_bytes() == b"\x00\xff"
    with pytest.raises(TypeError):
        with atomic_write(data, "wb") as f:
            f.write("text into a binary file")  # type: ignore[arg-type]
    assert data.read_bytes() == b"\x00\xff" and sorted(p.name for p in tmp_path.iterdir()) == ["b.bin", "t.txt"]
    with pytest.raises(ValueError):
        atomic_write(text, "a")  # type: ignore[call-overload]


@pytest.mark.parametrize("hidden", [False, True])
def test_a_failure_mid_write_leaves_the_old_file_and_no_temporary_file(tmp_path, hidden):
    path = tmp_path / "manifest.json"
    path.write_text("old")
    with pytest.raises(Boom):
        with atomic_write(path, "w", hidden=hidden, sync=True) as f:
            f.write("half of the new")
            f.flush()
            [temp] = [p for p in tmp_path.iterdir() if p != path]  # the new text is written beside, not over
            assert temp.read_text() == "half of the new" and temp.name.startswith("." * hidden + "manifest.json.")
            raise Boom
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_a_path_for_writers_that_take_one_is_renamed_or_removed(tmp_path):
    path = tmp_path / "part.parquet"
    with atomic_path(path) as temp:
        assert temp.parent == tmp_path and not temp.exists()
        temp.write_bytes(b"new")
    assert path.read_bytes() == b"new" and not temp.exists()
    with pytest.raises(Boom):
        with atomic_path(path) as temp:
            temp.write_bytes(b"newer, but failed")
            raise Boom
    assert [p.name for p in tmp_path.iterdir()] == ["part.parquet"] and path.read_bytes() == b"new"


def test_a_folder_replaces_a_folder_whole_and_a_failed_one_leaves_the_old(tmp_path):
    out = tmp_path / "report"
    for n in ("first", "second"):
        with atomic_path(out, hidden=True) as temp:
            (temp / "runs").mkdir(parents=True)
            (temp / "index.html").write_text(n)
            if n == "second":
                assert (out / "index.html").read_text() == "first"  # the old one is there until the end
    assert (out / "index.html").read_text() == "second" and [p.name for p in tmp_path.iterdir()] == ["report"]
    with pytest.raises(Boom):
        with atomic_path(out, hidden=True) as temp:
            (temp / "runs").mkdir(parents=True)
            (temp / "index.html").write_text("third")
            raise Boom
    assert (out / "index.html").read_text() == "second" and [p.name for p in tmp_path.iterdir()] == ["report"]


def test_a_folder_whose_rename_fails_puts_the_old_one_back(tmp_path, monkeypatch):
    out = tmp_path / "report"
    out.mkdir()
    (out / "index.html").write_text("old")
    calls: list[tuple[str, str]] = []
    real = os.replace

    def replace(src, dst):
        calls.append((Path(src).name, Path(dst).name))
        if len(calls) == 2:  # the old folder went aside; the new one cannot come in
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace)
    with pytest.raises(OSError):
        with atomic_path(out, hidden=True) as temp:
            temp.mkdir()
            (temp / "index.html").write_text("new")
    assert len(calls) == 3 and calls[2][1] == "report"
    assert (out / "index.html").read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["report"]


def test_sync_flushes_the_data_before_the_rename(tmp_path, monkeypatch):
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(atomic.os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    with atomic_write(tmp_path / "a", "w", sync=True) as f:
        f.write("x")
    with atomic_write(tmp_path / "b", "w") as f:
        f.write("x")
    temp = temp_name(tmp_path / "c")
    temp.write_text("x")
    commit(temp, tmp_path / "c", sync=True)
    assert events == ["fsync", "replace", "replace", "fsync", "replace"]


def test_two_steps_for_a_temporary_file_kept_until_a_commit(tmp_path):
    path = tmp_path / "steps" / "part-000001.parquet"
    path.parent.mkdir()
    names = {temp_name(path) for _ in range(100)}
    assert len(names) == 100  # unique per call: concurrent writers never share one
    temp = next(iter(names))
    assert temp.parent == path.parent and temp.name.startswith("part-000001.parquet.") and temp.suffix == ".tmp"
    assert temp_name(path, hidden=True).name.startswith(".part-000001.parquet.")
    temp.write_bytes(b"rows")
    assert not path.exists()
    commit(temp, path)
    assert path.read_bytes() == b"rows" and not temp.exists()


def test_a_private_file_is_its_owners_only(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "private.json", "w", private=True) as f:
            f.write("{}")
        with atomic_write(tmp_path / "shared.json", "w") as f:
            f.write("{}")
    finally:
        os.umask(old)
    assert (tmp_path / "private.json").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "shared.json").stat().st_mode & 0o777 == 0o644


@pytest.mark.slow
def test_concurrent_writers_and_a_reader_never_see_half_a_file(tmp_path):
    path = tmp_path / "shared.bin"
    path.write_bytes(b"0" * 200_000)
    size, rounds = 200_000, 30
    seen: set[bytes] = set()
    done = threading.Event()
    errors: list[BaseException] = []

    def write(mark: bytes) -> None:
        try:
            for _ in range(rounds):
                with atomic_write(path) as f:
                    for _ in range(size // 10_000):  # many small writes: a reader would catch half of them
                        f.write(mark * 10_000)
        except BaseException as exc:  # noqa: BLE001  (reported by the main thread)
            errors.append(exc)

    def read() -> None:
        while not done.is_set():
            data = path.read_bytes()
            seen.add(data[:1])
            if len(data) != size or data != data[:1] * size:
                errors.append(AssertionError(f"a reader saw {len(data)} bytes, mixed: {sorted(set(data))}"))
                return

    writers = [threading.Thread(target=write, args=(m,)) for m in (b"a", b"b", b"c", b"d")]
    reader = threading.Thread(target=read)
    reader.start()
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    reader.join()
    assert not errors, errors
    assert path.read_bytes() in {m * size for m in (b"a", b"b", b"c", b"d")}
    assert [p.name for p in tmp_path.iterdir()] == ["shared.bin"]  # every temporary file renamed
    assert seen - {b"0"}, "the reader never saw a writer's file: the test proved nothing"


def test_the_helper_imports_nothing_of_trajcheck():
    """A leaf: any module of trajcheck may write atomically without making an import loop."""
    tree = ast.parse((ROOT / "core" / "base" / "atomic.py").read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and not [m for m in imported if m.startswith("trajcheck") or m == ""], imported
    levels = [n.level for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not any(levels), "a relative import reaches into trajcheck"


@pytest.mark.slow
def test_every_atomic_replacement_goes_through_the_helper():
    """No module writes temp-then-rename by hand: os.replace and Path.rename appear in trajcheck.base.atomic only."""
    hits = []
    for folder in ("core", "cli", "analyzers", "schemas"):
        for p in sorted((ROOT / folder).rglob("*.py")):
            if p == ROOT / "core" / "base" / "atomic.py":
                continue
            for node in ast.walk(ast.parse(p.read_text())):
                if isinstance(node, ast.Attribute) and node.attr in ("replace", "rename") and \
                        isinstance(node.value, ast.Name) and node.value.id == "os":
                    hits.append(f"{p.relative_to(ROOT)}:{node.lineno}")
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr == "rename":
                    hits.append(f"{p.relative_to(ROOT)}:{node.lineno}")
    assert not hits, f"write through trajcheck.base.atomic instead: {hits}"
