"""Options of the perceptual effect check, apart from the analyzer so that the CLI and the
incremental planner (which put them in every run digest) do not load numpy and the image code."""

from __future__ import annotations

from dataclasses import dataclass

#: Default pHash threshold of the seed rule: a distance above it counts as "changed".
#: Measured on sample_runs/ (docs/perceptual.md, "Choosing the threshold").
DEFAULT_THRESHOLD = 2


@dataclass(frozen=True)
class PerceptualOptions:
    enabled: bool = True  # the seed's ablation toggle, applied offline
    threshold: int = DEFAULT_THRESHOLD
    ambient: bool = True  # discount change in cells learned as ambient
