"""The compiled JSON Schema validators (trajcheck.readers.rundir._fast_check) kept in the on-disk cache
(trajcheck.base.diskcache): compiled once per machine, read back in any other process, and anything wrong with
the cache only means compiling again."""

from __future__ import annotations

import base64
import copy
import json
import marshal
import random
from pathlib import Path
from typing import Any, Callable

import fastjsonschema
import pytest

from trajcheck.base import diskcache
from trajcheck.readers import rundir
from trajcheck import schemas
from trajcheck.schemas import load_json_schema

from conftest import SAMPLES


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAJCHECK_NO_CACHE", raising=False)
    rundir._fast_check.cache_clear()
    yield tmp_path / "cache"
    rundir._fast_check.cache_clear()


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A new process as far as the validators go (nothing in memory), counting the schemas compiled."""
    rundir._fast_check.cache_clear()
    calls: list[str] = []
    real = fastjsonschema.compile_to_code
    monkeypatch.setattr(fastjsonschema, "compile_to_code", lambda s, **kw: calls.append(s["$id"]) or real(s, **kw))
    return calls


def _steps() -> list[Any]:
    return [json.loads(line) for f in sorted(SAMPLES.glob("*/steps.jsonl")) for line in f.read_text().splitlines()
            if line]


def _accepts(validate: Callable[[Any], Any], record: Any) -> bool:
    try:
        validate(record)
        return True
    except fastjsonschema.JsonSchemaException:
        return False


def _mutated(records: list[Any], n: int) -> list[Any]:
    """Records with a value swapped for another type, or a key removed or added."""
    rng = random.Random(3)
    values = [None, True, 0, -1, 1.5, 2**70, "", "CLICK", [], [1], {}, {"a": 1}]
    out = []
    for _ in range(n):
        r = copy.deepcopy(rng.choice(records))
        parent = r
        while True:
            key = rng.choice(list(parent))
            if isinstance(parent[key], dict) and parent[key] and rng.random() < 0.5:
                parent = parent[key]
                continue
            break
        op = rng.random()
        if op < 0.7:
            parent[key] = rng.choice(values)
        elif op < 0.85:
            parent.pop(key)
        else:
            parent["unknown_" + key] = 1
        out.append(r)
    return out


def test_a_validator_is_compiled_once_per_machine(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _compiles(monkeypatch)
    first = rundir._fast_check("step")
    assert len(calls) == 1 and (cache / "validator-step.json").is_file()
    calls = _compiles(monkeypatch)
    again = rundir._fast_check("step")
    assert calls == [] and again is not first  # read back, not compiled again
    records = _steps()
    for r in records + _mutated(records, 400):
        assert _accepts(first, r) == _accepts(again, r), r
    assert all(rundir.valid_fast("step", r) for r in records)


@pytest.mark.slow
def test_the_validator_is_fastjsonschemas_own(cache: Path) -> None:
    """The validator made from fastjsonschema's code (compile_to_code) accepts exactly what the function
    fastjsonschema.compile returns accepts, compiled or read back."""
    own = fastjsonschema.compile(copy.deepcopy(load_json_schema("step")), use_default=False, use_formats=False)
    records = _steps()
    for fast in (rundir._fast_check("step"), _fresh(rundir._fast_check, "step")):
        assert fast.__name__ == own.__name__
        for r in records + _mutated(records, 1500):
            assert _accepts(fast, r) == _accepts(own, r), r


def _fresh(check: Callable[[str], Any], name: str) -> Any:
    check.cache_clear()  # type: ignore[attr-defined]
    return check(name)


def test_without_compile_to_code_fastjsonschemas_compile_serves(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> str:
        raise RuntimeError("another fastjsonschema")

    rundir._fast_check.cache_clear()
    monkeypatch.setattr(fastjsonschema, "compile_to_code", broken)
    fast = rundir._fast_check("step")
    assert fast is not None and all(_accepts(fast, r) for r in _steps())
    assert not (cache / "validator-step.json").exists()


@pytest.mark.parametrize("name", ["run", "step", "contract"])
def test_every_schema_is_cached_and_read_back(cache: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    packaged = json.loads((Path(schemas.__file__).parent / f"{name}.schema.json").read_text())
    assert rundir._fast_check(name) is not None
    assert load_json_schema(name) == packaged  # fastjsonschema rewrites $refs in place: it compiled a copy
    calls = _compiles(monkeypatch)
    fast = rundir._fast_check(name)
    assert calls == [] and fast.__name__ == fastjsonschema.compile(load_json_schema(name), use_default=False,
                                                                   use_formats=False).__name__


def _garbage_with_its_checksum(entry: dict[str, Any]) -> None:
    data = b"\xe3" + bytes(range(256)) * 3
    entry["marshal"], entry["checksum"] = base64.b64encode(data).decode(), diskcache._checksum(data)


def _code_with_its_checksum(source: str) -> Callable[[dict[str, Any]], None]:
    def damage(entry: dict[str, Any]) -> None:
        data = marshal.dumps(compile(source, "<x>", "exec"))
        entry["marshal"], entry["checksum"] = base64.b64encode(data).decode(), diskcache._checksum(data)
    return damage


@pytest.mark.parametrize("damage", [
    lambda e: e.__setitem__("marshal", e["marshal"][:-40]),  # cut short
    lambda e: e.__setitem__("marshal", "A" + e["marshal"][1:]),  # a byte changed: the checksum differs
    lambda e: e.__setitem__("marshal", "not base64!"),
    lambda e: e.pop("checksum"),
    lambda e: e.__setitem__("marshal", 7),
    _garbage_with_its_checksum,  # not marshal data, though its checksum matches
    _code_with_its_checksum("x = 1"),  # no VALIDATE
    _code_with_its_checksum("VALIDATE = 7"),  # not a function
    _code_with_its_checksum("raise ValueError('no')"),
])
def test_a_damaged_cached_validator_is_compiled_again(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                       damage: Callable[[dict[str, Any]], None]) -> None:
    rundir._fast_check("step")
    path = cache / "validator-step.json"
    data = json.loads(path.read_text())
    [key] = data
    damage(data[key])
    path.write_text(json.dumps(data))
    calls = _compiles(monkeypatch)
    fast = rundir._fast_check("step")
    assert len(calls) == 1 and fast is not None
    assert all(_accepts(fast, r) for r in _steps())
    assert path.read_text() != json.dumps(data)
    calls = _compiles(monkeypatch)
    assert rundir._fast_check("step") is not None and calls == []  # written anew, and read back


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe", b"[" * 200_000])
def test_a_corrupt_cache_file_is_compiled_again(cache: Path, monkeypatch: pytest.MonkeyPatch, content: bytes) -> None:
    cache.mkdir()
    (cache / "validator-step.json").write_bytes(content)
    calls = _compiles(monkeypatch)
    assert rundir._fast_check("step") is not None and len(calls) == 1


def test_another_fastjsonschema_schema_or_python_is_not_read(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rundir._fast_check("step")
    path = cache / "validator-step.json"
    [(key, entry)] = json.loads(path.read_text()).items()
    for other in (key.replace(fastjsonschema.VERSION, "0.0.1"), key.replace(", schema ", ", schema 0"),
                  key.replace("marshal ", "marshal 9")):
        assert other != key
        path.write_text(json.dumps({other: entry}))
        calls = _compiles(monkeypatch)
        assert rundir._fast_check("step") is not None and len(calls) == 1
        assert list(json.loads(path.read_text())) == [key]  # the stale entry is dropped


def test_no_cache_compiles_in_every_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRAJCHECK_NO_CACHE", "1")
    for _ in range(2):
        calls = _compiles(monkeypatch)
        assert rundir._fast_check("run") is not None and len(calls) == 1
    assert not (tmp_path / "cache").exists()
    rundir._fast_check.cache_clear()


def test_a_cache_file_others_can_write_is_not_run(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Code read back from the cache runs, so a cache file another user could have written is not read:
    the validator is compiled again (and the file rewritten, private)."""
    rundir._fast_check("run")
    path = cache / "validator-run.json"
    path.chmod(0o666)
    calls = _compiles(monkeypatch)
    assert rundir._fast_check("run") is not None and len(calls) == 1  # compiled again, not read
    assert path.stat().st_mode & 0o022 == 0  # written again by this process, private
    calls = _compiles(monkeypatch)
    rundir._fast_check("run")
    assert calls == []
