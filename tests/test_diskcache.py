"""The on-disk cache of library facts (trajcheck.base.diskcache), as the resize pass order uses it: read back
instead of probed again, and anything wrong with it only means probing again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajcheck.base import diskcache, resample


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
    stored = json.loads((cache / "lanczos-640-32.json").read_text())
    assert list(stored) == [resample._library_key()] and len(stored[resample._library_key()]["value"]) == 32
    assert (cache / "lanczos-640-32.json").stat().st_mode & 0o077 == 0  # private
    calls = _fresh_weights(monkeypatch)
    assert resample.coefficients(640, 32).tolist() == want and calls == []  # read back
    resample.coefficients.cache_clear()


def _shift(weights: list[list]) -> None:
    """Move weight from one tap to the next in every window: every sum stays 2**22."""
    for _, w in weights:
        w[0] -= 2_000_000
        w[1] += 2_000_000


@pytest.mark.parametrize("damage", [
    lambda v: v.pop(),  # a window missing
    lambda v: v[3][1].__setitem__(0, v[3][1][0] + 5000),  # a weight changed
    lambda v: v[3].__setitem__(0, 639),  # a window past the axis
    lambda v: v[3][1].__setitem__(0, "7"),  # not an integer
    _shift,  # sums unchanged: only the checksum tells
    lambda v: (v[3][1].__setitem__(0, v[3][1][0] + 10**400), v[3][1].__setitem__(1, v[3][1][1] - 10**400)),
])
def test_damaged_lanczos_weights_are_computed_again(cache: Path, monkeypatch: pytest.MonkeyPatch, damage) -> None:
    """A damaged entry (its checksum no longer matches) is computed again: the hash is never changed by it,
    nor scoring stopped."""
    want = _matrix(640, 32)
    _fresh_weights(monkeypatch)
    resample.coefficients(640, 32)
    path = cache / "lanczos-640-32.json"
    data = json.loads(path.read_text())
    entry = data[resample._library_key()]
    damage(entry["value"])
    path.write_text(json.dumps(data))
    path.chmod(0o600)
    calls = _fresh_weights(monkeypatch)
    assert resample.coefficients(640, 32).tolist() == want and calls == [(640, 32)]
    resample.coefficients.cache_clear()


def test_lanczos_weights_others_can_write_are_not_read(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh_weights(monkeypatch)
    resample.coefficients(640, 32)
    path = cache / "lanczos-640-32.json"
    path.chmod(0o666)
    calls = _fresh_weights(monkeypatch)
    resample.coefficients(640, 32)
    assert calls == [(640, 32)]
    link = cache / "lanczos-640-32.json"
    target = cache / "elsewhere.json"
    link.rename(target)
    target.chmod(0o600)
    link.symlink_to(target)  # a link, even to this user's own private file, is not followed
    calls = _fresh_weights(monkeypatch)
    resample.coefficients(640, 32)
    assert calls == [(640, 32)]
    resample.coefficients.cache_clear()


def test_weights_out_of_range_are_refused_even_with_a_matching_checksum(cache: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from trajcheck.base import diskcache as dc

    want = _matrix(640, 32)
    _fresh_weights(monkeypatch)
    resample.coefficients(640, 32)
    path = cache / "lanczos-640-32.json"
    data = json.loads(path.read_text())
    value = data[resample._library_key()]["value"]
    value[3][1][0] += 10**400
    value[3][1][1] -= 10**400
    data[resample._library_key()] = dc.checked_entry(value)
    path.write_text(json.dumps(data))
    path.chmod(0o600)
    calls = _fresh_weights(monkeypatch)
    assert resample.coefficients(640, 32).tolist() == want and calls == [(640, 32)]
    resample.coefficients.cache_clear()
