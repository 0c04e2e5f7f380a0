"""The markers of slow tests (STYLE.md 17) are registered, imply `slow`, come from the fixtures that bring a
cause, and a test that meets a cause unmarked fails, so `pytest -m "not slow"` cannot quietly grow slow."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib

import pytest

import conftest
from conftest import CAUSES, FIXTURE_CAUSES, REALRUNS, ROOT


def test_the_markers_are_registered_and_an_unregistered_one_is_an_error(request):
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert {m.split(":")[0] for m in ini["markers"]} == {"slow", *CAUSES}
    assert "--strict-markers" in ini["addopts"].split()
    assert request.config.option.strict_markers


def test_every_collected_test_with_a_cause_is_slow_and_marked_from_its_fixtures(request):
    """Whatever the selection (with `-m "not slow"` the selected tests must carry no cause at all)."""
    items = request.session.items
    assert request.node in items
    for item in items:
        for fixture, cause in FIXTURE_CAUSES.items():
            if fixture in item.fixturenames:
                assert item.get_closest_marker(cause), (item.nodeid, cause)
        if any(item.get_closest_marker(c) for c in CAUSES):
            assert item.get_closest_marker("slow"), item.nodeid


def test_the_cause_fixtures_exist():
    """A fixture renamed would leave its tests unmarked: each one named in FIXTURE_CAUSES is still defined."""
    defined = "\n".join(p.read_text() for p in (ROOT / "tests").glob("*.py"))
    for fixture in FIXTURE_CAUSES:
        assert f"def {fixture}(" in defined, fixture


@pytest.mark.parametrize("event, args, cause", [
    ("open", (str(REALRUNS / "webvoyager" / "x" / "run.json"), "r", 0), "realruns"),
    ("os.scandir", (REALRUNS / "browser-use",), "realruns"),
    ("os.listdir", (str(REALRUNS),), "realruns"),
    ("os.listdir", (str(REALRUNS) + "-not",), None),
    ("open", (str(ROOT / "sample_runs" / "labels.json"), "r", 0), None),
    ("open", (3, "r", 0), None),
    ("subprocess.Popen", ("pdflatex", ["pdflatex", "-interaction=nonstopmode", "doc.tex"], None, None), "latex"),
    ("subprocess.Popen", (sys.executable, [sys.executable, "-m", "moto.server", "-p", "5000"], None, None), "s3"),
    ("subprocess.Popen", ("/x/driver/node", ["/x/driver/node", "/x/cli.js", "run-driver"], None, None), "browser"),
    ("subprocess.Popen", (sys.executable, [sys.executable, "-m", "trajcheck", "score", str(REALRUNS)], None, None),
     "realruns"),
    ("subprocess.Popen", (sys.executable, [sys.executable, "-m", "trajcheck", "score", "sample_runs"], None, None),
     None),
    ("subprocess.Popen", ("trajcheck", ["trajcheck", "score", "runs", "--engine", "dask"], None, None), "dask"),
    ("subprocess.Popen", ("trajcheck", ["trajcheck", "score", "runs", "--engine=dask"], None, None), "dask"),
    ("subprocess.Popen", ("trajcheck", ["trajcheck", "score", "runs", "--engine", "local"], None, None), None),
])
def test_cause_met_reads_audit_events(event, args, cause):
    assert conftest.cause_met(event, args) == cause


def test_the_guard_records_what_the_running_test_meets():
    """The audit hook is installed and records while a test runs (here taken back, or the test would fail)."""
    from trajcheck.scoring import engine_dask

    try:
        open(REALRUNS / "no-such-run" / "run.json")
    except FileNotFoundError:
        pass
    engine_dask.dask_ordered([], None, "", 1, None)  # a generator: called, not iterated, so nothing starts
    assert conftest._met == {"realruns", "dask"}
    conftest._met.clear()


GUARDED = '''
import pytest
from conftest import REALRUNS


def _read():
    try:
        open(REALRUNS / "a-run" / "run.json")
    except FileNotFoundError:
        pass


def test_unmarked():
    _read()


@pytest.mark.realruns
def test_marked():
    _read()


def test_fast():
    pass
'''


@pytest.mark.slow  # two pytest runs in subprocesses
def test_an_unmarked_test_that_meets_a_cause_fails_and_a_marked_one_is_left_out(tmp_path):
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "test_guarded.py").write_text(GUARDED)

    def pytest_run(*args: str) -> str:
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
                              str(tmp_path), *args, str(tmp_path / "test_guarded.py")],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
        return run.stdout

    out = pytest_run()
    assert "3 passed, 1 error" in out, out  # test_unmarked passes its call and errs at its teardown
    assert "ERROR at teardown of test_unmarked" in out and "@pytest.mark.realruns" in out, out
    fast = pytest_run("-m", "not slow")
    assert "2 passed, 1 deselected, 1 error" in fast, fast
    assert "test_marked" not in fast, fast
