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


@dataclass(frozen=True)
class Mean:
    """A mean over ``n`` values with its interval (``method``: ``t``, Student's t on the mean); no interval
    below 2 values."""

    value: float
    n: int
    low: float | None
    high: float | None
    method: str = "t"

    def to_json(self) -> dict[str, float | int | str | None]:
        return {"mean": round(self.value, 6), "n": self.n, "low": None if self.low is None else round(self.low, 6),
                "high": None if self.high is None else round(self.high, 6), "method": self.method}


def mean_interval(values: list[float], confidence: float = 0.95, floor: float | None = 0.0) -> Mean | None:
    """The mean of ``values`` with Student's t interval on it (scipy.stats.t): mean +- t(n-1) * s / sqrt(n),
    its low end raised to ``floor`` (costs and seconds are never negative; None: no floor). None without
    values; no interval for one value; a point interval when they are all equal."""
    if not values:
        return None
    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    if x.size < 2:
        return Mean(mean, 1, None, None)
    sem = float(x.std(ddof=1)) / math.sqrt(x.size)
    if sem == 0:
        return Mean(mean, int(x.size), mean, mean)
    low, high = stats.t.interval(confidence, x.size - 1, loc=mean, scale=sem)
    return Mean(mean, int(x.size), float(low) if floor is None else max(floor, float(low)), float(high))


def _wilson_bounds(k: int, n: int, confidence: float) -> tuple[float, float]:
    """The Wilson score interval of k of n, n > 0 (scipy.stats.binomtest)."""
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def wilson(k: int, n: int, confidence: float = 0.95) -> Rate:
    """k of n with its Wilson score interval (scipy.stats.binomtest)."""
    if n == 0:
        return Rate(0, 0, None, None)
    return Rate(k, n, *_wilson_bounds(k, n, confidence))


def mcnemar_exact(b: int, c: int) -> float | None:
    """Exact McNemar p-value from the discordant pairs: b (A succeeded, B failed) and c
    (B succeeded, A failed); a two-sided binomial test of b against b + c at 1/2."""
    if b + c == 0:
        return None
    return float(stats.binomtest(b, b + c, 0.5).pvalue)


def paired_difference(a: np.ndarray, b: np.ndarray, confidence: float = 0.95
                      ) -> tuple[float, float | None, float | None]:
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


#: Fewer pairs than this get Newcombe's score interval instead of the bootstrap: a percentile bootstrap
#: of a handful of 0/1 differences collapses onto the sample (5 pairs that all moved one way give
#: [+100, +100] pp) and says more than the data can.
BOOTSTRAP_MIN_PAIRS = 30


def newcombe_paired(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> tuple[float, float | None, float | None]:
    """Success rate of ``b`` minus that of ``a`` over paired 0/1 outcomes, with Newcombe's hybrid score
    interval for a paired difference of proportions (Newcombe 1998, method 10): Wilson intervals of
    the two marginal rates, combined with the correlation of the pairs. Valid at any n, and never
    narrower than the data allow."""
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    n = int(a.size)
    if n == 0:
        return float("nan"), None, None
    both = int((a & b).sum())
    only_a = int((a & ~b).sum())
    only_b = int((~a & b).sum())
    neither = n - both - only_a - only_b
    p_b, p_a = (both + only_b) / n, (both + only_a) / n
    # n > 0 here, so both marginal rates have their two bounds
    b_low, b_high = _wilson_bounds(both + only_b, n, confidence)
    a_low, a_high = _wilson_bounds(both + only_a, n, confidence)
    denom = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (both * neither - only_a * only_b) / math.sqrt(denom) if denom > 0 else 0.0
    diff = p_b - p_a
    low = diff - math.sqrt(max(0.0, (p_b - b_low) ** 2 - 2 * phi * (p_b - b_low) * (a_high - p_a)
                               + (a_high - p_a) ** 2))
    high = diff + math.sqrt(max(0.0, (b_high - p_b) ** 2 - 2 * phi * (b_high - p_b) * (p_a - a_low)
                                + (p_a - a_low) ** 2))
    return diff, max(-1.0, low), min(1.0, high)


def paired_interval(a: np.ndarray, b: np.ndarray, confidence: float = 0.95
                    ) -> tuple[float, float | None, float | None, str]:
    """The paired difference b - a with the interval that holds for these pairs, and its method's name:
    ``bootstrap`` (percentile) from :data:`BOOTSTRAP_MIN_PAIRS` pairs on, ``newcombe`` below that and
    whenever every pair differs by the same amount (all moved one way, or none moved): a resample of
    identical differences is the sample again, so the percentile bootstrap collapses onto it (30 pairs
    that all improved give [+100, +100] pp) whatever the number of pairs, while Newcombe's interval
    still says how far a true difference could be."""
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if len(d) < BOOTSTRAP_MIN_PAIRS or bool(np.all(d == d[0])):
        return (*newcombe_paired(a, b, confidence), "newcombe")
    return (*paired_difference(a, b, confidence), "bootstrap")


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
