"""Statistics for comparisons and agreement, on scipy where scipy has them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: Seed of every bootstrap, so the same ledger gives the same interval.
BOOTSTRAP_SEED = 20261122
BOOTSTRAP_RESAMPLES = 9999


@dataclass(frozen=True)
class Rate:
    k: int
    n: int
    low: float | None
    high: float | None

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None

    def to_json(self) -> dict[str, float | int | None]:
        v = self.value
        return {"k": self.k, "n": self.n, "rate": None if v is None else round(v, 6),
                "low": None if self.low is None else round(self.low, 6),
                "high": None if self.high is None else round(self.high, 6)}


def wilson(k: int, n: int, confidence: float = 0.95) -> Rate:
    """k of n with its Wilson score interval (scipy.stats.binomtest)."""
    if n == 0:
        return Rate(0, 0, None, None)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Rate(k, n, float(ci.low), float(ci.high))


def mcnemar_exact(b: int, c: int) -> float | None:
    """Exact McNemar p-value from the discordant pairs: b (A succeeded, B failed) and c
    (B succeeded, A failed); a two-sided binomial test of b against b + c at 1/2."""
    if b + c == 0:
        return None
    return float(stats.binomtest(b, b + c, 0.5).pvalue)


def paired_difference(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> tuple[float, float | None, float | None]:
    """Mean of b - a over pairs with a seeded percentile bootstrap interval (scipy.stats.bootstrap)."""
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if d.size == 0:
        return float("nan"), None, None
    mean = float(d.mean())
    if d.size < 2 or np.all(d == d[0]):
        return mean, mean, mean
    res = stats.bootstrap((d,), np.mean, confidence_level=confidence, n_resamples=BOOTSTRAP_RESAMPLES,
                          method="percentile", random_state=np.random.default_rng(BOOTSTRAP_SEED))
    return mean, float(res.confidence_interval.low), float(res.confidence_interval.high)


def cohen_kappa(x: list[str], y: list[str]) -> float | None:
    """Cohen's kappa between two raters over the same items: (p_o - p_e) / (1 - p_e)."""
    if not x or len(x) != len(y):
        return None
    labels = sorted(set(x) | set(y))
    n = len(x)
    po = sum(1 for a, b in zip(x, y) if a == b) / n
    pe = sum((x.count(lab) / n) * (y.count(lab) / n) for lab in labels)
    if pe == 1:
        return 1.0 if po == 1 else None
    return (po - pe) / (1 - pe)


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Chance that at least one of k trials drawn from n (c of them passing) passes."""
    if k > n or n == 0:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """pass^k: chance that all of k trials drawn from n (c passing) pass."""
    if k > n or n == 0:
        return None
    return math.comb(c, k) / math.comb(n, k)
