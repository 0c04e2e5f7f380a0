"""The no_log rule (readers/nolog.py) costs a walk of each folder it decides, not one per folder below it: beside
a run, a folder with N subfolders of images is looked at once (issue 50 review, item 3). Directory visits are
counted (``os.scandir``, which ``os.walk`` calls too), never timed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trajcheck.readers import nolog
from trajcheck.readers.discovery import discover

from conftest import SAMPLES, copy_run


def _visits(tmp_path: Path, n: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str]]:
    """Directory visits of discovering a batch: a run, and a folder of ``n`` subfolders each with one image."""
    batch = tmp_path / f"batch{n}"
    copy_run(SAMPLES / "terms-checkbox-off", batch / "a")
    png = (SAMPLES / "terms-checkbox-on" / "frames" / "001.png").read_bytes()
    for i in range(n):
        (batch / "many" / f"{i:04d}").mkdir(parents=True)
        (batch / "many" / f"{i:04d}" / "1.png").write_bytes(png)
    real = os.scandir
    calls = [0]

    def counted(path: object = ".") -> object:
        calls[0] += 1
        return real(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", counted)
    refs, problems = discover([batch])
    monkeypatch.setattr(os, "scandir", real)
    return calls[0], [r.reader for r in refs]


def test_deciding_the_folders_below_a_folder_of_images_is_linear(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    base, _ = _visits(tmp_path, 0, monkeypatch)
    small, readers = _visits(tmp_path, 30, monkeypatch)
    large, _ = _visits(tmp_path, 120, monkeypatch)
    assert readers == ["trajcheck.run/1"]  # a folder of runs' images (several subfolders) is no run
    # 4 times the subfolders: about 4 times the visits they add (the readers' claims and discovery's walk visit
    # each once or a few times, the rule's look once), never 16 times as a walk per subfolder would give
    per_small, per_large = (small - base) / 30, (large - base) / 120
    assert 0 < per_small and per_large <= 1.1 * per_small, (base, small, large)


def test_a_look_stops_after_its_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder with more entries than the cap is no one run: the walk stops there, and says so."""
    for i in range(12):
        (tmp_path / f"{i:02d}.png").write_bytes(b"")
    monkeypatch.setattr(nolog, "MAX_ENTRIES", 10)
    assert nolog.look(tmp_path).whole is False
    monkeypatch.setattr(nolog, "MAX_ENTRIES", 12)
    found = nolog.look(tmp_path)
    assert found.whole is True and found.shots == tuple(f"{i:02d}.png" for i in range(12))
