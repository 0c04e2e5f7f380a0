"""Options of the observation verifier, apart from the analyzer so that the CLI and the incremental planner
(which put them in every run digest) do not load the DOM parser (selectolax) with it."""

from __future__ import annotations

from dataclasses import dataclass

#: The seed's thresholds (options of `trajcheck score`).
SUCCESS_THRESHOLD = 0.70
GOAL_THRESHOLD = 0.70
LOW_CONFIDENCE_BELOW = 0.85


@dataclass(frozen=True)
class ObservationOptions:
    success_threshold: float = SUCCESS_THRESHOLD
    goal_threshold: float = GOAL_THRESHOLD
    low_confidence_below: float = LOW_CONFIDENCE_BELOW
