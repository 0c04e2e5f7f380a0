"""Scoring options: what every analyzer is told, and what every run digest covers.

Kept apart from the pipeline so that deciding what needs scoring (``incremental``)
does not load the analyzers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from trajcheck.analyzers.observation_options import ObservationOptions
from trajcheck.analyzers.effect_options import PerceptualOptions


@dataclass(frozen=True)
class ScoreOptions:
    """What every analyzer of a :func:`trajcheck.score` call is told; part of every run's digest."""

    perceptual: PerceptualOptions = field(default_factory=PerceptualOptions)
    pixel_tolerance: int = 0  # a pixel changed when a channel differs by more than this
    observation: ObservationOptions = field(default_factory=ObservationOptions)
    contracts_dir: Path | None = None  # DIR/<task_id>.json contracts (a run's own contract.json wins)
    evaluator_pass: float = 1.0  # an evaluator score (outcome.score) at or above this is a pass
    #: Reference step counts by task_id, from a tasks file (:func:`read_tasks`): runs.efficiency.
    reference_steps: tuple[tuple[str, int], ...] = ()
    #: Read the screen with OCR (docs/referee.md, "Screen text"): ``auto`` where no DOM snapshot says what the
    #: page showed, ``always`` also where one does (recording whether the two agree), ``off`` never.
    ocr: str = "auto"

    def reference_steps_of(self, task_id: str | None) -> int | None:
        """The tasks file's reference step count of ``task_id`` (None: not listed)."""
        return dict(self.reference_steps).get(task_id) if task_id is not None else None


#: The most tasks a tasks file may list (a benchmark has hundreds to a few thousand).
MAX_TASKS = 100_000


def read_tasks(path: Path) -> tuple[tuple[str, int], ...]:
    """A tasks file's reference step counts, sorted by task: JSON ``{task_id: N}`` or ``{task_id:
    {"reference_steps": N, ...}}``, or CSV with the columns ``task_id`` and ``reference_steps`` (as
    OSWorld-Human publishes per-task step counts). ValueError naming the line or key of anything else."""
    import csv
    import json

    from .inputs import read_regular

    limit = 64 * 1024 * 1024
    data_bytes = read_regular(path, limit=limit)
    if len(data_bytes) > limit:
        raise ValueError(f"{path}: over the {limit} byte limit of a tasks file")
    raw = data_bytes.decode("utf-8-sig")
    pairs: list[tuple[str, object, str]] = []
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(raw.splitlines()))
        if rows and not {"task_id", "reference_steps"} <= set(rows[0]):
            raise ValueError(f"{path}: a CSV tasks file needs the columns task_id and reference_steps")
        pairs = [(r["task_id"], r["reference_steps"], f"line {i}") for i, r in enumerate(rows, start=2)]
    else:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a JSON tasks file is an object {{task_id: reference_steps}}")
        for k, v in data.items():
            pairs.append((k, v.get("reference_steps") if isinstance(v, dict) else v, f"key {k!r}"))
    if len(pairs) > MAX_TASKS:
        raise ValueError(f"{path}: {len(pairs)} tasks, over the limit of {MAX_TASKS}")
    out: dict[str, int] = {}
    for task, steps, where in pairs:
        try:
            n = int(str(steps).strip()) if not isinstance(steps, bool) else 0
        except ValueError:
            n = 0
        if n < 1 or (isinstance(steps, float) and steps != n):
            raise ValueError(f"{path}, {where}: reference_steps must be a whole number of steps, 1 or more "
                             f"(got {steps!r})")
        out[str(task)] = n
    return tuple(sorted(out.items()))
