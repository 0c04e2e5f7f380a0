"""The options of a score call, declared once: :class:`ScoreArgs`.

``trajcheck score``'s options (``cli/score.py`` builds them from these fields: flag, help, bounds),
:func:`trajcheck.score`'s keyword arguments (checked against these fields) and the pipeline's
:class:`~trajcheck.scoring.options.ScoreOptions` (made from them by ``trajcheck.api``) all come from here: a new
option is one field. A mode with fixed values is a :class:`~enum.StrEnum` (:class:`OcrMode`, :class:`Engine`):
its values are spelled once, and the command lists them as choices.

Light on purpose: the command's start imports it (it imports only the threshold's default).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from ..analyzers.effect_options import DEFAULT_THRESHOLD

#: How long a writer waits for the ledger's lock by default (seconds): a few minutes, longer than a typical
#: `score` of a shard, shorter than a CI job's patience (trajcheck.store.lock takes it from here).
DEFAULT_WAIT = 300.0


class OcrMode(StrEnum):
    """When scoring reads the screen's text with OCR (docs/referee.md, "Screen text")."""

    AUTO = "auto"  # where no DOM snapshot says what the page showed
    ALWAYS = "always"  # also beside the DOM, recording whether the two agree
    OFF = "off"


class Engine(StrEnum):
    """Where runs are scored."""

    LOCAL = "local"  # worker processes on this machine
    DASK = "dask"  # a dask.distributed cluster




@dataclass(frozen=True)
class Flag:
    """How the command spells an option: its flags (``("--jobs", "-j")``; a bool's ``--x/--no-x``), its help,
    and the bounds Typer checks (``min``, ``max``)."""

    names: tuple[str, ...]
    help: str
    min: float | None = None
    max: float | None = None


def _opt(default: Any, *names: str, help: str, min: float | None = None, max: float | None = None) -> Any:
    return field(default=default, metadata={"flag": Flag(names, help, min, max)})


PathLike = str | os.PathLike[str]


@dataclass(frozen=True, kw_only=True)
class ScoreArgs:
    """The options of one score call, as ``trajcheck score`` and :func:`trajcheck.score` take them."""

    jobs: int | None = _opt(None, "--jobs", "-j", min=1, help=(
        "Worker processes (default: all cores). Workers start only for 2 runs or more per worker: fewer are "
        "scored in this process, which is faster than starting one."))
    threshold: int = _opt(DEFAULT_THRESHOLD, "--threshold", min=0, max=64, help=(
        "pHash Hamming distance above which the seed rule counts a frame or region as changed."))
    verifier: bool = _opt(True, "--verifier/--no-verifier", help=(
        "Run the perceptual verifier (--no-verifier is the seed's ablation toggle: verdicts are null with reason "
        "verifier_off)."))
    ambient: bool = _opt(True, "--ambient/--no-ambient", help=(
        "Discount change the run shows happening on its own (clocks, spinners)."))
    pixel_tolerance: int = _opt(0, "--pixel-tolerance", min=0, max=255, help=(
        "A pixel counts as changed when a channel differs by more than this."))
    contracts: PathLike | None = _opt(None, "--contracts", help=(
        "Folder of outcome contracts: <task_id>.json, or a contract whose match names the run's task id, goal "
        "or path (a run's own contract.json wins)."))
    mapping: PathLike | None = _opt(None, "--mapping", help=(
        "A mapping file (TOML, JMESPath) that reads logs of another shape; see docs/mappings/."))
    tasks: PathLike | None = _opt(None, "--tasks", help=(
        "Reference step counts per task (a person's or the optimal count), for runs.efficiency: JSON "
        "{task_id: N} or a CSV with the columns task_id and reference_steps."))
    ocr: OcrMode = _opt(OcrMode.AUTO, "--ocr", help=(
        "Read the text on screen with OCR where a high-risk step changed it, and on a claiming run's final frame: "
        "auto (where no DOM snapshot says it), always (also beside the DOM, recording whether they agree) or off. "
        "Needs 'trajcheck\\[ocr]' installed (the ocr extra)."))
    prices: PathLike | None = _opt(None, "--prices", help=(
        "A price list (USD per million tokens, per model): runs whose logs record tokens and the model but no "
        "cost get tokens x price (cost_source prices): a CSV or TOML file of input, output and cached prices per "
        "model (its columns: README, \"Cost and time\"). Nothing is priced without it."))
    judgments: tuple[PathLike, ...] = _opt((), "--judgments", help=(
        "Verdicts of a judge you run (repeatable): a file or a folder in the judge's own format (the formats: "
        "docs/judges.md) or CSV or JSONL with run_id, verdict (pass|fail) and optionally confidence, judge, reason. "
        "Each judgment is a judge of the run its run_id names (docs/referee.md, \"Judges you run\")."))
    input_format: str | None = _opt(None, "--input-format", help=(
        "Read every run as this format instead of detecting it (see `trajcheck formats`)."))
    engine: Engine = _opt(Engine.LOCAL, "--engine", help=(
        "Where runs are scored: local worker processes, or a dask.distributed cluster (trajcheck's dask extra)."))
    scheduler: str | None = _opt(None, "--scheduler", help=(
        "Dask scheduler address, e.g. 10.0.0.5:8786 (default: a local cluster of --jobs workers)."))
    evaluator_pass: float = _opt(1.0, "--evaluator-pass", help=(
        "A recorded evaluator score (outcome.score) at or above this is a pass, below it a fail (lower it for "
        "partial credit, as OSWorld gives)."))
    force: bool = _opt(False, "--force", help=(
        "Score every run again, even those whose files, options and trajcheck version are unchanged since the "
        "ledger scored them."))
    wait: float = _opt(DEFAULT_WAIT, "--wait", min=0, help=(
        "Seconds to wait for another writer of the same ledger to finish (one writer at a time); then exit 4."))

    @classmethod
    def of(cls, values: dict[str, Any]) -> "ScoreArgs":
        """The arguments named in ``values``; a ValueError naming any other name, or a mode's value it does not
        know, with the values it does."""
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown option{'s' * (len(unknown) > 1)} {', '.join(unknown)}: the options are "
                             + ", ".join(known))
        checked = {}
        for name, value in values.items():
            kind = _MODES.get(name)
            if kind is not None and not isinstance(value, kind):
                try:
                    value = kind(value)
                except ValueError:
                    raise ValueError(f"unknown {name} mode {value!r}: " + ", ".join(m.value for m in kind)) from None
            checked[name] = value
        return cls(**checked)


#: The options whose values are a mode's (checked, and listed as choices).
_MODES: dict[str, type[StrEnum]] = {"ocr": OcrMode, "engine": Engine}


def flag(name: str) -> Flag:
    """The flag of one option (a command that shares it, such as ``compact``'s ``--wait``, takes its help)."""
    return next(f.metadata["flag"] for f in fields(ScoreArgs) if f.name == name)


def flags() -> list[tuple[str, Any, Flag, Any]]:
    """Each option as the command declares it: (name, type, flag, default), in declaration order."""
    from typing import get_type_hints

    hints = get_type_hints(ScoreArgs)
    return [(f.name, hints[f.name], f.metadata["flag"], f.default) for f in fields(ScoreArgs)]
