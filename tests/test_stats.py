"""Statistics against values computed by hand."""

import math

import numpy as np
import pytest

from trajcheck.base import stats


def test_wilson_interval_by_hand():
    # 7 of 10, z = 1.959964: centre (p + z^2/2n) / (1 + z^2/n), half-width z/(1+z^2/n) * sqrt(p(1-p)/n + z^2/4n^2)
    z = 1.959963984540054
    n, p = 10, 0.7
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    r = stats.wilson(7, 10)
    assert r.value == 0.7
    assert r.low == pytest.approx(centre - half, abs=1e-9) and r.high == pytest.approx(centre + half, abs=1e-9)
    assert r.low == pytest.approx(0.3968, abs=1e-4) and r.high == pytest.approx(0.8922, abs=1e-4)
    assert stats.wilson(0, 0).low is None


def test_exact_mcnemar_by_hand():
    # discordant pairs b=1, c=5: two-sided p = 2 * P(X <= 1), X ~ Bin(6, 1/2) = 2 * (1 + 6) / 64
    assert stats.mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert stats.mcnemar_exact(0, 4) == pytest.approx(2 / 16)
    assert stats.mcnemar_exact(3, 3) == pytest.approx(1.0)
    assert stats.mcnemar_exact(0, 0) is None


def test_paired_bootstrap_is_seeded_and_brackets_the_mean():
    a = np.array([0, 0, 1, 0, 1, 0, 0, 1, 0, 0], dtype=float)
    b = np.array([1, 1, 1, 0, 1, 1, 0, 1, 1, 0], dtype=float)
    m1 = stats.paired_difference(a, b)
    m2 = stats.paired_difference(a, b)
    assert m1 == m2  # reproducible
    mean, low, high = m1
    assert mean == pytest.approx(0.4) and low <= mean <= high and low >= -1 and high <= 1


def test_cohen_kappa_by_hand():
    # 2x2 table: both yes 20, both no 15, a-yes/b-no 5, a-no/b-yes 10 -> po = 0.7, pe = 0.5*0.6 + 0.5*0.4 = 0.5
    x = ["y"] * 20 + ["n"] * 15 + ["y"] * 5 + ["n"] * 10
    y = ["y"] * 20 + ["n"] * 15 + ["n"] * 5 + ["y"] * 10
    assert stats.cohen_kappa(x, y) == pytest.approx(0.4)
    assert stats.cohen_kappa(["a", "b"], ["a", "b"]) == 1.0


def test_pass_at_k():
    assert stats.pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert stats.pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert stats.pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)  # C(2,2)/C(5,2)
    assert stats.pass_at_k(3, 0, 2) == 0.0 and stats.pass_hat_k(3, 3, 3) == 1.0
    assert stats.pass_at_k(2, 1, 3) is None


def test_newcombe_paired_interval_by_hand():
    # 10 pairs: 4 both succeed, 1 only a, 3 only b, 2 neither. p_b = 0.7, p_a = 0.5, difference +0.2.
    a = np.array([1, 1, 1, 1, 1, 0, 0, 0, 0, 0])
    b = np.array([1, 1, 1, 1, 0, 1, 1, 1, 0, 0])
    diff, low, high = stats.newcombe_paired(a, b)
    ra, rb = stats.wilson(5, 10), stats.wilson(7, 10)
    phi = (4 * 2 - 1 * 3) / (5 * 5 * 7 * 3) ** 0.5  # (ad - bc) / sqrt of the four margins
    want_low = 0.2 - ((0.7 - rb.low) ** 2 - 2 * phi * (0.7 - rb.low) * (ra.high - 0.5) + (ra.high - 0.5) ** 2) ** 0.5
    want_high = 0.2 + ((rb.high - 0.7) ** 2 - 2 * phi * (rb.high - 0.7) * (0.5 - ra.low) + (0.5 - ra.low) ** 2) ** 0.5
    assert diff == pytest.approx(0.2) and low == pytest.approx(want_low) and high == pytest.approx(want_high)
    assert low < 0 < high  # 3 against 1 discordant pairs is not a significant difference


def test_paired_interval_switches_method_at_30_pairs():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
    assert stats.paired_interval(a[:29], b[:29])[3] == "newcombe"
    assert stats.paired_interval(a[:30], b[:30])[3] == "bootstrap"
    # all pairs moved one way: the bootstrap would give [+100, +100]; the score interval does not
    _, low, high, _ = stats.paired_interval(np.zeros(5), np.ones(5))
    assert 0.3 < low < 0.5 and high == 1.0
