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
from typing import Any, Sequence

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


# --- the noise floor of a difference of success rates (docs/analysis.md, "Repeats and the noise floor") ---

#: The noise floor's test: two-sided at ALPHA, with POWER to detect a difference of the floor's size.
ALPHA = 0.05
POWER = 0.8


def noise_z() -> float:
    """z_{1-alpha/2} + z_{1-beta}: 1.959964 + 0.841621 = 2.801585 at alpha 0.05 and power 0.8."""
    return _z(1 - ALPHA) + NormalDist().inv_cdf(POWER)


def icc_oneway(groups: Sequence[Sequence[float]]) -> float | None:
    """The intraclass correlation of values within groups, one-way ANOVA estimator (Fleiss 1981; for 0/1
    verdicts, Ridout, Demetrio & Firth 1999, "the ANOVA estimator"): (MSB - MSW) / (MSB + (n0 - 1) MSW), with
    MSB = sum n_i (mean_i - mean)^2 / (k - 1), MSW = sum (y_ij - mean_i)^2 / (N - k) and
    n0 = (N - sum n_i^2 / N) / (k - 1), over the groups of 2 values or more (a task run once says nothing of how
    alike its repeats are, and a few such groups among many singletons make the estimate swing to -n). None with
    fewer than 2 such groups, or no variation at all (0/0). May be negative (less alike within groups than
    across them)."""
    gs = [list(map(float, g)) for g in groups if len(g) > 1]
    k, n = len(gs), sum(len(g) for g in gs)
    if k < 2 or n <= k:
        return None
    grand = sum(map(sum, gs)) / n
    ssb = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in gs)
    ssw = sum((y - sum(g) / len(g)) ** 2 for g in gs for y in g)
    msb, msw = ssb / (k - 1), ssw / (n - k)
    n0 = (n - sum(len(g) ** 2 for g in gs) / n) / (k - 1)
    denom = msb + (n0 - 1) * msw
    return None if denom <= 0 else (msb - msw) / denom


@dataclass(frozen=True)
class Cluster:
    """One side's share of the variance of a difference: ``runs`` values in ``tasks`` tasks (the clusters), each
    value of variance ``variance``, correlated ``icc`` within a task (None: unknown, taken as 0; a negative
    estimate is taken as 0, as is usual for a design effect: Donner & Klar 2000)."""

    variance: float
    icc: float | None
    runs: int
    tasks: int

    @property
    def rho(self) -> float:
        return max(0.0, self.icc or 0.0)

    @property
    def repeats(self) -> float:
        """The mean repeats per task, m = runs / tasks."""
        return self.runs / self.tasks

    @property
    def design_effect(self) -> float:
        """Kish's design effect of clustered repeats: 1 + (m - 1) * ICC."""
        return 1 + (self.repeats - 1) * self.rho

    def var_of_mean(self, m: float | None = None) -> float:
        """The variance of the mean: variance * DE / runs = variance / tasks * (ICC + (1 - ICC) / m), at ``m``
        repeats per task (default: the current mean)."""
        m = self.repeats if m is None else m
        return self.variance / self.tasks * (self.rho + (1 - self.rho) / m)


@dataclass(frozen=True)
class NoiseFloor:
    """Whether a difference clears the noise floor, the minimum detectable difference at the current runs:
    MDD = (z_{1-alpha/2} + z_{1-beta}) * SE (Cohen 1988; Bloom 1995), SE the square root of the sum of the
    clusters' variances of the mean. ``significant`` when |difference| >= MDD > 0, else ``inconclusive``, with
    the repeats per task (the same tasks) that would bring the MDD down to |difference|: the smallest m with
    z^2 * sum var_of_mean(m) <= difference^2, or None with ``reason`` when none would."""

    method: str  # paired | unpaired
    difference: float
    se: float
    mdd: float | None  # None: no variation to measure the noise by
    verdict: str  # significant | inconclusive
    repeats_per_task: int | None  # inconclusive: the repeats each task needs; None: see reason
    more_repeats_per_task: int | None  # that, less the repeats the tasks have now (their mean, rounded down)
    reason: str | None  # why no number of repeats is given: no_difference | no_variation | needs_more_tasks
    clusters: tuple[Cluster, ...]

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "difference": round(self.difference, 6), "se": round(self.se, 6),
                "mdd": None if self.mdd is None else round(self.mdd, 6), "verdict": self.verdict,
                "repeats_per_task": self.repeats_per_task, "more_repeats_per_task": self.more_repeats_per_task,
                "reason": self.reason,
                "icc": [None if c.icc is None else round(c.icc, 6) for c in self.clusters],
                "design_effect": [round(c.design_effect, 6) for c in self.clusters]}


def noise_floor(difference: float, clusters: Sequence[Cluster], method: str) -> NoiseFloor:
    """:class:`NoiseFloor` of ``difference`` whose variance is the sum of the ``clusters``' variances of the mean."""
    z = noise_z()
    se = math.sqrt(sum(c.var_of_mean() for c in clusters))
    mdd = z * se if se > 0 else None
    if mdd is not None and abs(difference) >= mdd - 1e-12:
        return NoiseFloor(method, difference, se, mdd, "significant", None, None, None, tuple(clusters))
    # var(m) = C + D / m; the smallest m with z^2 var(m) <= d^2 is D / (d^2 / z^2 - C)
    c = sum(cl.variance * cl.rho / cl.tasks for cl in clusters)
    d = sum(cl.variance * (1 - cl.rho) / cl.tasks for cl in clusters)
    room = difference ** 2 / z ** 2 - c
    reason = ("no_variation" if mdd is None else "no_difference" if abs(difference) < 1e-12 else
              "needs_more_tasks" if room <= 0 else None)
    if reason is not None:
        return NoiseFloor(method, difference, se, mdd, "inconclusive", None, None, reason, tuple(clusters))
    need = max(1, math.ceil(d / room - 1e-9))
    now = math.floor(min(cl.repeats for cl in clusters))
    return NoiseFloor(method, difference, se, mdd, "inconclusive", need, max(1, need - now), None, tuple(clusters))


def paired_noise(pairs: Sequence[tuple[str, bool, bool]]) -> NoiseFloor | None:
    """The noise floor of a paired difference of success rates, over (task, a's success, b's success) pairs:
    d = b - a per pair, its variance under no difference psi = mean(d^2) (the share of discordant pairs;
    Connor 1987), the ICC of d within tasks. None without pairs."""
    if not pairs:
        return None
    by_task: dict[str, list[float]] = {}
    for task, a, b in pairs:
        by_task.setdefault(task, []).append(float(b) - float(a))
    ds = [d for g in by_task.values() for d in g]
    psi = sum(d * d for d in ds) / len(ds)
    cl = Cluster(psi, icc_oneway(list(by_task.values())), len(ds), len(by_task))
    return noise_floor(sum(ds) / len(ds), [cl], "paired")


def unpaired_noise(a: Sequence[tuple[str, bool]], b: Sequence[tuple[str, bool]]) -> NoiseFloor | None:
    """The noise floor of the difference of two arms' success rates, each a list of (task, success) runs: the
    pooled rate's variance p(1 - p) on both sides (the variance under no difference), each arm's ICC of verdicts
    within its tasks. None when an arm has no run."""
    if not a or not b:
        return None
    pooled = (sum(s for _, s in a) + sum(s for _, s in b)) / (len(a) + len(b))
    clusters = []
    for side in (a, b):
        by_task: dict[str, list[float]] = {}
        for task, s in side:
            by_task.setdefault(task, []).append(float(s))
        clusters.append(Cluster(pooled * (1 - pooled), icc_oneway(list(by_task.values())), len(side), len(by_task)))
    diff = sum(s for _, s in b) / len(b) - sum(s for _, s in a) / len(a)
    return noise_floor(diff, clusters, "unpaired")
