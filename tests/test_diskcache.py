"""The on-disk cache of library facts (trajcheck.diskcache), as the resize pass order uses it: read back
instead of probed again, and anything wrong with it only means probing again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck import diskcache, resample


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAJCHECK_NO_CACHE", raising=False)
    monkeypatch.setattr(resample, "_orders", {})
    return tmp_path / "cache"


def _probes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    calls: list[tuple[int, int]] = []
    real = resample._probe
    monkeypatch.setattr(resample, "_probe", lambda w, h: calls.append((w, h)) or real(w, h))
    return calls


def test_a_pass_order_is_probed_once_per_machine(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _probes(monkeypatch)
    first = resample.pass_order(320, 200)
    assert calls == [(320, 200)] and first in ("h", "v")
    stored = json.loads((cache / "pass-order.json").read_text())
    assert stored == {resample._library_key(): {"320x200": first}}
    monkeypatch.setattr(resample, "_orders", {})  # a new process: nothing in memory
    assert resample.pass_order(320, 200) == first
    assert calls == [(320, 200)]  # read back, not probed again
    resample.pass_order(64, 48)
    assert calls == [(320, 200), (64, 48)]
    assert set(json.loads((cache / "pass-order.json").read_text())[resample._library_key()]) == {"320x200", "64x48"}


def test_another_pillow_or_resample_code_is_not_read(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.mkdir()
    (cache / "pass-order.json").write_text(json.dumps({"pillow 1.0, resample 0": {"320x200": "v"}}))
    calls = _probes(monkeypatch)
    resample.pass_order(320, 200)
    assert calls == [(320, 200)]
    assert list(json.loads((cache / "pass-order.json").read_text())) == [resample._library_key()]


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b'{"%s": {"320x200": "sideways"}}', b"\xff\xfe",
                                     b"[" * 200_000])
def test_a_corrupt_cache_is_probed_again(cache: Path, monkeypatch: pytest.MonkeyPatch, content: bytes) -> None:
    cache.mkdir()
    (cache / "pass-order.json").write_bytes(content.replace(b"%s", resample._library_key().encode()))
    calls = _probes(monkeypatch)
    assert resample.pass_order(320, 200) in ("h", "v")
    assert calls == [(320, 200)]


def test_an_unwritable_cache_or_none_at_all_costs_nothing_but_time(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(resample, "_orders", {})
    assert diskcache.write("x", {"a": 1}) is False
    assert resample.pass_order(320, 200) in ("h", "v")
    monkeypatch.setenv("TRAJCHECK_NO_CACHE", "1")
    assert diskcache.cache_dir() is None and diskcache.read("pass-order") == {}
    assert diskcache.write("x", {"a": 1}) is False


def test_the_default_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TRAJCHECK_CACHE_DIR", raising=False)
    monkeypatch.delenv("TRAJCHECK_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert diskcache.cache_dir() == tmp_path / "trajcheck"


def _fresh_weights(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """A new process as far as the weights go (nothing in memory), counting the sizes computed."""
    resample.coefficients.cache_clear()
    monkeypatch.setattr(resample, "_weights_read", None)
    calls: list[tuple[int, int]] = []
    real = resample._windows
    monkeypatch.setattr(resample, "_windows", lambda i, o: calls.append((i, o)) or real(i, o))
    return calls


def _matrix(in_size: int, out_size: int) -> list[list[float]]:
    m = [[0.0] * out_size for _ in range(in_size)]
    for xx, (xmin, weights) in enumerate(resample._windows(in_size, out_size)):
        for k, v in enumerate(weights):
            m[xmin + k][xx] = float(v)
    return m


def test_lanczos_weights_are_computed_once_per_machine(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    want = _matrix(640, 32)
    calls = _fresh_weights(monkeypatch)
    assert resample.coefficients(640, 32).tolist() == want and calls == [(640, 32)]
    stored = json.loads((cache / "lanczos-weights.json").read_text())[resample._library_key()]
    assert set(stored) == {"640>32"} and len(stored["640>32"]) == 32
    calls = _fresh_weights(monkeypatch)
    assert resample.coefficients(640, 32).tolist() == want and calls == []  # read back
    resample.coefficients.cache_clear()


@pytest.mark.parametrize("damage", [
    lambda e: e.__setitem__("640>32", e["640>32"][:-1]),  # a window missing
    lambda e: e["640>32"][3][1].__setitem__(0, e["640>32"][3][1][0] + 5000),  # a weight changed
    lambda e: e["640>32"][3].__setitem__(0, 639),  # a window past the axis
    lambda e: e["640>32"][3][1].__setitem__(0, "7"),  # not an integer
])
def test_damaged_lanczos_weights_are_computed_again(cache: Path, monkeypatch: pytest.MonkeyPatch, damage) -> None:
    want = _matrix(640, 32)
    _fresh_weights(monkeypatch)
    resample.coefficients(640, 32)
    path = cache / "lanczos-weights.json"
    data = json.loads(path.read_text())
    damage(data[resample._library_key()])
    path.write_text(json.dumps(data))
    calls = _fresh_weights(monkeypatch)
    assert resample.coefficients(640, 32).tolist() == want and calls == [(640, 32)]
    resample.coefficients.cache_clear()
