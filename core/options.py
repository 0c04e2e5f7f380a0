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
