from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_runs"
REALRUNS = ROOT.parent / "shared" / "realruns"

# Slow tests (STYLE.md 17): `pytest -m "not slow"` is the loop while working, the full suite is the gate. A slow
# test is marked with what makes it slow (a cause), or with `slow` alone when it is only long; every cause implies
# `slow`. The markers are registered in pyproject.toml ([tool.pytest.ini_options], with --strict-markers).
CAUSES = ("browser", "latex", "s3", "dask", "realruns")
# Fixtures that bring a cause: a test that uses one is marked from it, with no marker line of its own.
FIXTURE_CAUSES = {"s3_store": "s3"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, cause in FIXTURE_CAUSES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(cause)
        if any(item.get_closest_marker(c) for c in CAUSES):
            item.add_marker("slow")


# The guard: a test that meets a cause it is not marked with fails at teardown, so the fast loop cannot grow slow
# unseen. What a test meets is seen by an audit hook (reading real runs, starting a program) and, for Dask, by a
# wrapper of the engine's entry point: the cluster's workers are spawned by multiprocessing, which raises no event.
_REALRUNS = str(REALRUNS)
_AUDITED = frozenset({"open", "os.listdir", "os.scandir", "subprocess.Popen"})
_met: set[str] | None = None  # the causes the running test met; None between tests


def cause_met(event: str, args: tuple[Any, ...]) -> str | None:
    """The cause an audit event shows a test meeting, if any. Reading real runs opens or lists REALRUNS or a path
    below it (``is_dir()``, to decide on a skip, does not count)."""
    if event in ("open", "os.listdir", "os.scandir"):
        path = args[0] if args else None
        if isinstance(path, (str, bytes, os.PathLike)):
            full = os.path.abspath(os.fsdecode(path))
            if full == _REALRUNS or full.startswith(_REALRUNS + os.sep):
                return "realruns"
    elif event == "subprocess.Popen":  # (executable, args, cwd, env)
        argv = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
        words = [os.fsdecode(a) if isinstance(a, (str, bytes, os.PathLike)) else str(a) for a in argv]
        line = " ".join(words)
        if "run-driver" in words:  # Playwright's driver, which starts Chromium
            return "browser"
        if words and os.path.basename(words[0]) == "pdflatex":
            return "latex"
        if "moto.server" in words or "moto_server" in line:
            return "s3"
        if "--engine dask" in line or "--engine=dask" in words:  # trajcheck score on a Dask cluster, in a process
            return "dask"
        if _REALRUNS in line:  # a command run on real runs
            return "realruns"
    return None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _met is not None and event in _AUDITED:
        cause = cause_met(event, args)
        if cause:
            _met.add(cause)


def pytest_configure(config: pytest.Config) -> None:
    sys.addaudithook(_audit)  # for the life of the process (a hook cannot be removed); it records only in a test
    from trajcheck.scoring import engine_dask

    ordered = engine_dask.dask_ordered

    def dask_ordered(*args: Any, **kwargs: Any) -> Any:
        if _met is not None:
            _met.add("dask")
        return ordered(*args, **kwargs)

    engine_dask.dask_ordered = dask_ordered  # the pipeline imports it when it scores


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    global _met
    _met = set()
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    global _met
    try:
        result = yield
    finally:
        seen, _met = _met or set(), None
    missing = sorted(c for c in seen if not item.get_closest_marker(c))
    if missing:
        pytest.fail(f"this test meets {', '.join(missing)} and is not marked so: add "
                    + " ".join(f"@pytest.mark.{c}" for c in missing) + " (tests/conftest.py, STYLE.md 17)",
                    pytrace=False)
    return result


def sample_run_dirs() -> list[Path]:
    return sorted(p.parent for p in SAMPLES.glob("*/run.json"))


def sample_frames() -> list[Path]:
    out: list[Path] = []
    for run in sample_run_dirs():
        out += sorted(p for p in (run / "frames").iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg", ".webp"))
    return out


@pytest.fixture(autouse=True)
def own_cache_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test has a cache folder of its own (``TRAJCHECK_CACHE_DIR``, inherited by the commands it runs):
    no test reads what another one cached, and none writes to the user's ~/.cache."""
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("TRAJCHECK_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def samples() -> Path:
    assert sample_run_dirs(), "sample_runs/ holds no recorded runs (re-record them: sample_runs/recorder/README.md)"
    return SAMPLES


@pytest.fixture(scope="session")
def labels() -> dict:
    return json.loads((SAMPLES / "labels.json").read_text())


@pytest.fixture(scope="session")
def sample_ledger(tmp_path_factory, samples) -> Path:
    """sample_runs/ scored once for the whole session (in-process)."""
    from trajcheck.store import ledger
    from trajcheck.scoring.pipeline import score_paths

    out = tmp_path_factory.mktemp("ledger")
    report = score_paths([samples], jobs=1)
    ledger.write(out, [r.run for r in report.results], [s for r in report.results for s in r.steps])
    return out


def copy_samples(dst: Path, dom: bool = True, evaluator: bool = True, contract: dict[str, Any] | None = None,
                 only: str | None = None) -> Path:
    """The sample runs (or the one named ``only``) copied to ``dst``, without their DOM snapshots (files and
    references) when ``dom`` is False, without their recorded evaluator result (``outcome.score``) when
    ``evaluator`` is False, and with ``contract`` as each run's contract.json when one is given."""
    for run in sample_run_dirs():
        if only and run.name != only:
            continue
        out = dst / run.name
        shutil.copytree(run, out, ignore=None if dom else shutil.ignore_patterns("dom"))
        if not evaluator:
            meta = json.loads((out / "run.json").read_text())
            (meta.get("outcome") or {}).pop("score", None)
            (out / "run.json").write_text(json.dumps(meta))
        if contract is not None:
            (out / "contract.json").write_text(json.dumps(contract))
        if not dom:
            steps = [json.loads(x) for x in (out / "steps.jsonl").read_text().splitlines()]
            for s in steps:
                for k in ("dom_before", "dom_after"):
                    (s.get("page") or {}).pop(k, None)
            (out / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    return dst


def copy_run(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def write_steps(run_dir: Path, lines: list[object]) -> None:
    (run_dir / "steps.jsonl").write_text(
        "".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines))


def read_steps(run_dir: Path) -> list[dict]:
    return [json.loads(l) for l in (run_dir / "steps.jsonl").read_text().splitlines() if l.strip()]


def run_json(*args: str) -> Any:
    """The parsed stdout of a trajcheck command run with --format json (which must succeed)."""
    from typer.testing import CliRunner

    from trajcheck.cli.main import app

    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture
def width(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """Call with a width: tables rendered that wide whatever the terminal. Every cli module's stdout console is
    replaced by one of fixed width (it writes to sys.stdout when it prints, so CliRunner still captures it)."""
    import sys

    from rich.console import Console

    from trajcheck.cli import common

    import importlib
    import pkgutil

    import trajcheck.cli

    # every cli module imported first: one imported while the patch is on would keep the fixed console for good
    for info in pkgutil.iter_modules(trajcheck.cli.__path__, "trajcheck.cli."):
        importlib.import_module(info.name)

    def fix(columns: int) -> None:
        fixed = Console(width=columns, color_system=None, soft_wrap=True)
        original = common.out  # before the loop replaces common's own
        for name, module in list(sys.modules.items()):
            if name.startswith("trajcheck.cli") and getattr(module, "out", None) is original:
                monkeypatch.setattr(module, "out", fixed)

    return fix


@pytest.fixture
def width100(width: Callable[[int], None]) -> None:
    """Tables rendered 100 columns wide whatever the terminal."""
    width(100)
