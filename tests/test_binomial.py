"""Binomial probabilities without scipy.stats (gaussdp._binomial) against exact sums in mpmath."""

import math
import warnings

import mpmath
import numpy as np
import pytest

from gaussdp._binomial import (
    binomial_cdf,
    binomial_lower_quantile,
    binomial_pmf,
    binomial_sf,
    binomial_upper_quantile,
)

CASES = [(1, 0.3), (2, 0.5), (17, 0.01), (200, 0.3), (99_999, 0.01), (100_000, 1e-6), (1000, 0.999)]


def _exact_pmf(k: int, n: int, p: float):
    p = mpmath.mpf(p)
    return mpmath.binomial(n, k) * p**k * (1 - p) ** (n - k)


def _exact_tail_sum(n: int, p: float, start: int, stop: int):
    """Σ P(X = j) for start ≤ j ≤ stop (clipped to [0, n]), by the ratio of consecutive terms."""
    start, stop = max(start, 0), min(stop, n)
    if start > stop:
        return mpmath.mpf(0)
    term, ratio = _exact_pmf(start, n, p), mpmath.mpf(p) / (1 - mpmath.mpf(p))
    terms = [term]
    for j in range(start, stop):
        term = term * (n - j) / (j + 1) * ratio
        terms.append(term)
    return mpmath.fsum(terms)


def _counts(n: int, p: float) -> list[int]:
    mean = int(n * p)
    picks = {0, 1, n // 3, mean - 3, mean, mean + 1, mean + 50, n - 1, n}
    return sorted(k for k in picks if 0 <= k <= n)


@pytest.mark.parametrize(("n", "p"), CASES)
def test_pmf_to_a_few_units_of_roundoff(n, p):
    # Loader's saddle-point form; log-gamma differences lose about 1e-10 at n = 1e5
    with mpmath.workdps(40):
        for k in _counts(n, p):
            exact = _exact_pmf(k, n, p)
            if exact < 1e-290:  # exp() of such a number has only its few subnormal digits
                continue
            # relative error about u·|log P(X = k)| (the exponent's own rounding)
            tolerance = 8e-16 * max(1.0, -float(mpmath.log(exact)))
            assert float(binomial_pmf(k, n, p)) == pytest.approx(float(exact), rel=tolerance)
    assert binomial_pmf(-1, n, p) == 0.0 and binomial_pmf(n + 1, n, p) == 0.0


@pytest.mark.parametrize(("n", "p"), CASES[:5])
def test_tails_against_exact_sums(n, p):
    with mpmath.workdps(40):
        for k in _counts(n, p):
            upper = _exact_tail_sum(n, p, k + 1, k + 2500)
            lower = _exact_tail_sum(n, p, k - 2500, k)
            for value, exact in ((binomial_sf(k, n, p), upper), (binomial_cdf(k, n, p), lower)):
                if exact > 1e-290:
                    assert float(value) == pytest.approx(float(exact), rel=1e-12)
    assert binomial_sf(-1, n, p) == 1.0 and binomial_sf(n, n, p) == 0.0
    assert binomial_cdf(-1, n, p) == 0.0 and binomial_cdf(n, n, p) == 1.0


def test_a_far_tail_is_not_one_minus_the_bulk():
    # P(X > 1500) for Binomial(99 999, 0.01) is 5.8e-50: a difference from 1 would read 0
    with mpmath.workdps(40):
        exact = _exact_tail_sum(99_999, 0.01, 1501, 4000)
        low = _exact_tail_sum(99_999, 0.01, 0, 500)
    assert float(binomial_sf(1500, 99_999, 0.01)) == pytest.approx(float(exact), rel=1e-12)
    assert float(binomial_cdf(500, 99_999, 0.01)) == pytest.approx(float(low), rel=1e-12)


@pytest.mark.parametrize(
    ("n", "p", "tail"), [(99_999, 0.01, 1e-30), (500, 0.2, 1e-6), (10, 0.5, 0.1)]
)
def test_quantiles_are_the_smallest_counts_that_hold(n, p, tail):
    high = binomial_upper_quantile(n, p, tail)
    assert binomial_sf(high, n, p) <= tail < binomial_sf(high - 1, n, p)
    low = binomial_lower_quantile(n, p, tail)
    assert binomial_cdf(low - 1, n, p) < tail <= binomial_cdf(low, n, p)


def test_degenerate_probabilities():
    assert np.array_equal(binomial_pmf([0, 1, 3], 3, 0.0), [1.0, 0.0, 0.0])
    assert np.array_equal(binomial_pmf([0, 2, 3], 3, 1.0), [0.0, 0.0, 1.0])
    assert math.isclose(float(np.sum(binomial_pmf(np.arange(31), 30, 0.37))), 1.0, rel_tol=1e-14)


def test_no_trials():
    # a data set of one record: Binomial(N − 1 = 0, q) is 0, without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(binomial_pmf([0, 1], 0, 0.3), [1.0, 0.0])
        assert binomial_sf(0, 0, 0.3) == 0.0 and binomial_cdf(0, 0, 0.3) == 1.0
        assert binomial_upper_quantile(0, 0.3, 1e-30) == binomial_lower_quantile(0, 0.3, 1e-30) == 0
