"""Statistics for comparisons, agreement and the CI gate.

Wilson's interval and McNemar's exact test are computed here, in closed form, to scipy's figures (the tests
compare them): scipy takes 0.7-0.8 ms a call, and importing scipy.stats 0.5-2.5 s, more than the whole of a
``check`` of 10,000 runs. scipy.stats is imported where it is used (the bootstrap).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

import numpy as np

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
    from scipy import stats  # only here and for the bootstrap: importing scipy.stats takes up to a second

    low, high = stats.t.interval(confidence, x.size - 1, loc=mean, scale=sem)
    return Mean(mean, int(x.size), float(low) if floor is None else max(floor, float(low)), float(high))


@functools.lru_cache(maxsize=8)
def _z(confidence: float) -> float:
    """The standard normal quantile of a two-sided interval at ``confidence`` (1.96 at 0.95)."""
    return NormalDist().inv_cdf(0.5 + 0.5 * confidence)


def _wilson_bounds(k: int, n: int, confidence: float) -> tuple[float, float]:
    """The Wilson score interval of k of n, n > 0: scipy.stats.binomtest(k, n).proportion_ci(method="wilson")'s
    expression, term for term (its z from the standard library, equal to scipy's to the last bit or two:
    tests/test_check_stats.py), without its 0.8 ms a call: a check of 10,000 tasks needs tens of thousands."""
    z = _z(confidence)
    p = k / n
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    return (0.0 if k == 0 else center - delta), (1.0 if k == n else center + delta)


def wilson(k: int, n: int, confidence: float = 0.95) -> Rate:
    """k of n with its Wilson score interval."""
    if n == 0:
        return Rate(0, 0, None, None)
    return Rate(k, n, *_wilson_bounds(k, n, confidence))


def mcnemar_exact(b: int, c: int) -> float | None:
    """Exact McNemar p-value from the discordant pairs: b (A succeeded, B failed) and c
    (B succeeded, A failed); a two-sided binomial test of b against b + c at 1/2, as
    scipy.stats.binomtest gives it (tests/test_check_stats.py), summed here in integers: twice the
    smaller tail, at most 1. scipy takes 0.7 ms a call, and a check of 10,000 tasks makes one per task."""
    n = b + c
    if n == 0:
        return None
    term = tail = 1  # C(n, 0), then C(n, i) for i up to min(b, c)
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / 2**n)


def paired_difference(a: np.ndarray, b: np.ndarray, confidence: float = 0.95
                      ) -> tuple[float, float | None, float | None]:
    """Mean of b - a over pairs with a seeded percentile bootstrap interval (scipy.stats.bootstrap)."""
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if d.size == 0:
        return float("nan"), None, None
    mean = float(d.mean())
    if d.size < 2 or np.all(d == d[0]):
        return mean, mean, mean
    from scipy import stats

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
    return newcombe_table(both, only_a, only_b, n - both - only_a - only_b, confidence)


def newcombe_table(both: int, only_a: int, only_b: int, neither: int, confidence: float = 0.95
                   ) -> tuple[float, float | None, float | None]:
    """:func:`newcombe_paired` from the pairs' 2x2 table: how many pairs succeeded on both sides, on ``a``'s
    only, on ``b``'s only, on neither (a check of 10,000 tasks counts these without an array per task)."""
    n = both + only_a + only_b + neither
    if n == 0:
        return float("nan"), None, None
    denom = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (both * neither - only_a * only_b) / math.sqrt(denom) if denom > 0 else 0.0
    return _hybrid(both + only_a, n, both + only_b, n, phi, confidence)


def newcombe_unpaired(k_a: int, n_a: int, k_b: int, n_b: int, confidence: float = 0.95
                      ) -> tuple[float, float | None, float | None]:
    """Success rate ``k_b / n_b`` minus ``k_a / n_a`` of two independent samples, with Newcombe's hybrid score
    interval (Newcombe 1998, method 10: the paired interval without the correlation term). Valid at any n."""
    if not n_a or not n_b:
        return float("nan"), None, None
    return _hybrid(k_a, n_a, k_b, n_b, 0.0, confidence)


def _hybrid(k_a: int, n_a: int, k_b: int, n_b: int, phi: float, confidence: float) -> tuple[float, float, float]:
    """Newcombe's hybrid score interval of p_b - p_a from the two Wilson intervals and the correlation ``phi``."""
    p_a, p_b = k_a / n_a, k_b / n_b
    # n > 0 here, so both rates have their two bounds
    b_low, b_high = _wilson_bounds(k_b, n_b, confidence)
    a_low, a_high = _wilson_bounds(k_a, n_a, confidence)
    diff = p_b - p_a
    low = diff - math.sqrt(max(0.0, (p_b - b_low) ** 2 - 2 * phi * (p_b - b_low) * (a_high - p_a)
                               + (a_high - p_a) ** 2))
    high = diff + math.sqrt(max(0.0, (b_high - p_b) ** 2 - 2 * phi * (b_high - p_b) * (p_a - a_low)
                                + (p_a - a_low) ** 2))
    return diff, max(-1.0, low), min(1.0, high)


def ratio_of_means(a: Sequence[float], b: Sequence[float], paired: bool, confidence: float = 0.95
                   ) -> tuple[float, float | None, float | None]:
    """mean(b) / mean(a) with a delta-method interval on its logarithm (so it stays positive): the variances
    of the two means, less twice their covariance when ``a`` and ``b`` are pairs (their i-th values belong
    together). No interval with fewer than 2 values a side, or a mean that is not positive; nan without a
    positive mean of ``a``. In plain Python: a check calls it once per task, mostly on one or two values,
    where numpy's overhead a call is most of the time."""
    na, nb = len(a), len(b)
    ma, mb = (sum(a) / na if na else 0.0), (sum(b) / nb if nb else 0.0)
    if ma <= 0:
        return float("nan"), None, None
    ratio = mb / ma
    if na < 2 or nb < 2 or mb <= 0:
        return ratio, None, None
    var = sum((x - ma) ** 2 for x in a) / (na - 1) / (na * ma * ma) + \
        sum((y - mb) ** 2 for y in b) / (nb - 1) / (nb * mb * mb)
    if paired:
        var -= 2 * sum((x - ma) * (y - mb) for x, y in zip(a, b)) / (na - 1) / (na * ma * mb)
    half = _z(confidence) * math.sqrt(max(0.0, var))
    return ratio, ratio * math.exp(-half), ratio * math.exp(half)


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
