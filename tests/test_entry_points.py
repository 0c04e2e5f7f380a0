"""Issue 38 part 4: readers from outside. A harness's package registers a reader through the entry point group
`trajcheck.readers` with the kit the built-in readers use, and `trajcheck score` reads its runs; the built-in
readers are declared in the same group; an entry point that fails to load is a warning naming it, never a crash.

The package installed here is docs/formats.md's example (trajcheck.readers.plugins.EXAMPLE_MODULE), as an
importlib.metadata distribution: a module and its .dist-info folder in a directory put on PYTHONPATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from PIL import Image

from trajcheck.readers import plugins
from trajcheck.readers.adapters import ALL

from conftest import ROOT


def _install(target: Path, name: str, module: str | None, entry_points: str) -> None:
    """A distribution ``name`` in ``target``: its module (when given) and its metadata with ``entry_points``."""
    target.mkdir(parents=True, exist_ok=True)
    if module is not None:
        (target / f"{name}.py").write_text(module)
    info = target / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    (info / "RECORD").write_text("")


def _acme_run(d: Path, steps: list[dict]) -> None:
    d.mkdir(parents=True)
    for i in range(len(steps) + 1):
        Image.new("RGB", (320, 200), (40 * i, 80, 120)).save(d / f"{i}.png")
    (d / "acme_log.json").write_text(json.dumps({"task": "Save the note", "score": 1.0, "acme_steps": steps}))


def _trajcheck(*args: str, path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(path)}
    code = "import sys\nfrom trajcheck.cli.main import main\nsys.argv[0] = 'trajcheck'\nmain()\n"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)


@pytest.mark.slow
def test_a_reader_registered_by_an_entry_point_reads_its_runs_through_score(tmp_path):
    site = tmp_path / "site"
    _install(site, "acme_trajcheck", plugins.EXAMPLE_MODULE, "[trajcheck.readers]\nacme = acme_trajcheck:READER\n")
    runs = tmp_path / "runs"
    _acme_run(runs / "note-1", [{"do": "click", "x": 100, "y": 50, "before": "0.png", "after": "1.png"},
                                {"do": "type", "text": "hello", "before": "1.png", "after": "2.png"},
                                {"do": "done", "text": "Saved the note."}])
    _acme_run(runs / "note-2", [{"do": "click", "x": 10, "y": 20, "before": "0.png", "after": "1.png"},
                                {"do": "teleport", "before": "1.png", "after": "2.png"}])
    listed = _trajcheck("formats", "--format", "json", path=site)
    assert listed.returncode == 0, listed.stderr
    assert "acme" in [r["format"] for r in json.loads(listed.stdout)]
    res = _trajcheck("score", str(runs), "--out", str(tmp_path / "L"), "--format", "json", "--jobs", "1", path=site)
    assert res.returncode == 0, res.stderr
    rows = {r["run_id"]: r for r in json.loads(res.stdout)["runs"]}
    assert set(rows) == {"note-1", "note-2"} and {r["status"] for r in rows.values()} == {"ok"}
    assert rows["note-1"]["n_steps"] == 3 and rows["note-1"]["eval_final_verdict"] == "pass"  # its recorded score
    assert "read by: acme 2" in res.stderr
    warned = [w for w in rows["note-2"]["warnings"] if "[action_unparsed]" in w]
    assert warned and "(read by acme)" in warned[0] and "'teleport' is no Acme action" in warned[0]
    detect = _trajcheck("formats", "--detect", str(runs), "--format", "json", path=site)
    reads = [(r["folder"], r["reader"], r["why"]) for r in json.loads(detect.stdout) if r["reads"]]
    why = "acme_log.json is an Acme log"
    assert reads == [("note-1", "acme", why), ("note-2", "acme", why)]
    # without the package, nothing reads them, and the folders are named
    bare = _trajcheck("score", str(runs), "--out", str(tmp_path / "L2"), path=tmp_path / "nothing")
    assert bare.returncode == 3 and "no_reader_claims" in bare.stderr


@pytest.mark.slow
def test_an_entry_point_that_fails_to_load_is_a_warning_naming_it(tmp_path):
    site = tmp_path / "site"
    _install(site, "broken_reader", None, "[trajcheck.readers]\nbroken = no_such_module_here:READER\n")
    _install(site, "not_a_reader", "READER = 42\n", "[trajcheck.readers]\nnumber = not_a_reader:READER\n")
    _install(site, "clash", "from trajcheck.readers.adapters.ui_tars.reader import READER\n",
             "[trajcheck.readers]\nmine = clash:READER\n")
    res = _trajcheck("formats", path=site)
    assert res.returncode == 0, res.stderr
    assert "'broken'" in res.stderr and "no_such_module_here:READER failed to load: ModuleNotFoundError" in res.stderr
    assert "'number'" in res.stderr and "is a int, not a trajcheck.readers.kit.reader.Reader" in res.stderr
    assert "'mine'" in res.stderr and "is named 'ui-tars', as a reader already is" in res.stderr
    assert res.stderr.count("[reader_not_loaded]") == 3
    other = _trajcheck("validate", str(ROOT / "tests" / "fixtures" / "ui_tars"), "--format", "json", path=site)
    report = json.loads(other.stdout)
    assert other.returncode == 0 and report["runs"] == 3  # the built-in readers still read
    assert [p["file"] for p in report["problems"] if p["slug"] == "reader_not_loaded"] == ["broken", "mine", "number"]


def test_the_built_in_readers_are_declared_in_the_same_entry_point_group():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][plugins.GROUP]
    assert list(declared) == [r.name for r in ALL]
    for name, value in declared.items():
        module, attr = value.split(":")
        assert getattr(__import__(module, fromlist=[attr]), attr) is next(r for r in ALL if r.name == name)


def test_the_example_in_the_docs_is_the_one_installed_here():
    text = (ROOT / "docs" / "formats.md").read_text()
    assert plugins.EXAMPLE_MODULE.rstrip() in text and plugins.EXAMPLE_TOML in text
    assert 35 <= len(plugins.EXAMPLE_MODULE.splitlines()) <= 50


@pytest.mark.slow
def test_reading_a_built_in_format_by_name_never_reads_the_entry_points():
    """A worker process gets its run's reader by name: a built-in one is found without importlib.metadata (the
    scan of the installed packages); every reader, as discovery asks them, reads the group once."""
    code = ("import sys\nfrom trajcheck.readers.discovery import get_reader, readers\n"
            "get_reader('ui-tars')\nprint('importlib.metadata' in sys.modules)\n"
            "readers()\nprint('importlib.metadata' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.split() == ["False", "True"]
