from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_runs"
REALRUNS = ROOT.parent / "shared" / "realruns"


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
