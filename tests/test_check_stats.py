"""The statistics the CI gate (``trajcheck check``) judges with, against scipy and their closed forms: Wilson's
interval and McNemar's exact test in closed form (scipy's figures, without its cost a call), Newcombe's interval
from a 2x2 table and for two independent samples, and the delta-method interval of a ratio of means."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from trajcheck.base import stats


@pytest.mark.slow
def test_wilson_is_scipys_wilson() -> None:
    for confidence in (0.9, 0.95, 0.99):
        for n in range(1, 41):
            for k in range(n + 1):
                ci = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
                low, high = stats._wilson_bounds(k, n, confidence)
                assert low == pytest.approx(float(ci.low), abs=1e-14) and high == pytest.approx(float(ci.high),
                                                                                              abs=1e-14)
    assert stats.wilson(0, 5).low == 0.0 and stats.wilson(5, 5).high == 1.0  # the closed ends, exactly
    assert stats.wilson(0, 0) == stats.Rate(0, 0, None, None)


@pytest.mark.slow
def test_mcnemar_is_scipys_binomial_test() -> None:
    for n in range(1, 80):
        for b in range(n + 1):
            want = float(scipy_stats.binomtest(b, n, 0.5).pvalue)
            assert stats.mcnemar_exact(b, n - b) == pytest.approx(want, rel=1e-12), (b, n - b)
    assert stats.mcnemar_exact(0, 0) is None
    # large counts stay exact and quick: 5,000 against 4,800 discordant pairs
    assert stats.mcnemar_exact(5000, 4800) == pytest.approx(float(scipy_stats.binomtest(5000, 9800).pvalue),
                                                            rel=1e-9)


def test_newcombe_from_the_table_is_newcombe_from_the_pairs() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        a, b = rng.integers(0, 2, 12).astype(bool), rng.integers(0, 2, 12).astype(bool)
        table = (int((a & b).sum()), int((a & ~b).sum()), int((~a & b).sum()), int((~a & ~b).sum()))
        assert stats.newcombe_table(*table) == stats.newcombe_paired(a, b)
    assert stats.newcombe_table(0, 0, 0, 0)[1:] == (None, None)


def test_newcombe_unpaired_by_hand() -> None:
    # 18 of 20 against 6 of 10: p_b - p_a = 0.6 - 0.9, bounds from the two Wilson intervals (Newcombe's method 10)
    ra, rb = stats.wilson(18, 20), stats.wilson(6, 10)
    diff, low, high = stats.newcombe_unpaired(18, 20, 6, 10)
    assert diff == pytest.approx(-0.3)
    assert low == pytest.approx(-0.3 - math.hypot(0.6 - rb.low, ra.high - 0.9))
    assert high == pytest.approx(-0.3 + math.hypot(rb.high - 0.6, 0.9 - ra.low))
    assert stats.newcombe_unpaired(1, 2, 0, 0)[1:] == (None, None)


def test_ratio_of_means_by_the_delta_method() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0])
    b = np.array([2.0, 2.5, 5.0, 6.5])
    z = 1.959963984540054
    ratio = b.mean() / a.mean()  # 16 / 10
    unpaired = a.var(ddof=1) / (4 * a.mean() ** 2) + b.var(ddof=1) / (4 * b.mean() ** 2)
    paired = unpaired - 2 * np.cov(a, b)[0, 1] / (4 * a.mean() * b.mean())
    for is_paired, var in ((False, unpaired), (True, paired)):
        r, low, high = stats.ratio_of_means(a, b, is_paired)
        assert r == pytest.approx(1.6)
        assert low == pytest.approx(ratio * math.exp(-z * math.sqrt(var)))
        assert high == pytest.approx(ratio * math.exp(z * math.sqrt(var)))
    # pairs that move together give the narrower interval
    _, p_low, p_high = stats.ratio_of_means(a, b, True)
    _, u_low, u_high = stats.ratio_of_means(a, b, False)
    assert p_high - p_low < u_high - u_low
    assert stats.ratio_of_means(np.array([1.0]), np.array([2.0]), False) == (2.0, None, None)
    assert math.isnan(stats.ratio_of_means(np.array([0.0, 0.0]), b, False)[0])
