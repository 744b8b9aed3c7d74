"""The shared stable primitives against mpmath and their contracts."""

import math

import mpmath
import numpy as np
import pytest

from gaussdp import _numerics
from tests import references


@pytest.mark.parametrize("t", [-20.0, -1.0, 0.0, 0.3, 5.0, 29.9, 30.0, 100.0, 1e4])
@pytest.mark.parametrize("h", [1e-9, 1e-3, 0.0099, 0.01, 0.5, 3.0, 40.0])
def test_mills_ratio_difference(t, h):
    def mills(x):
        return mpmath.ncdf(-x) / mpmath.npdf(x)

    reference = mills(mpmath.mpf(t)) - mills(mpmath.mpf(t) + mpmath.mpf(h))
    value = float(_numerics.mills_ratio_difference(t, h))
    assert value == pytest.approx(float(reference), rel=1e-11)


def test_log1m_exp_and_log_diff_exp():
    xs = np.array([-1e-20, -1e-5, -0.5, -1.0, -40.0, -800.0])
    reference = [float(mpmath.log(1 - mpmath.exp(mpmath.mpf(x)))) for x in xs]
    assert _numerics.log1m_exp(xs) == pytest.approx(reference, rel=1e-13)
    assert _numerics.log_diff_exp(0.0, 0.0) == -math.inf
    assert _numerics.log_diff_exp(-math.inf, -math.inf) == -math.inf
    value = _numerics.log_diff_exp(-700.0, -700.5)
    reference = mpmath.log(mpmath.exp(-700) - mpmath.exp(mpmath.mpf(-700.5)))
    assert value == pytest.approx(float(reference), rel=1e-14)


def test_log_sum_exp_rows_against_mpmath():
    """Rows spanning hundreds of nats, a row of −infs, a row holding +inf, one element."""
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(5, 40)) * 300.0
    rows[1, :] = -math.inf
    rows[2, 3] = math.inf
    rows[3, 1:] = -math.inf  # a single finite element
    values = _numerics.log_sum_exp_rows(rows)
    for row, value in zip(rows, values, strict=True):
        finite = row[np.isfinite(row)]
        if np.any(row == math.inf):
            assert value == math.inf
        elif finite.size == 0:
            assert value == -math.inf
        else:
            reference = mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(x)) for x in finite))
            assert value == pytest.approx(float(reference), rel=1e-14, abs=1e-13)


def test_normal_quantiles_for_tiny_probabilities():
    for p in (1e-300, 1e-20, 0.3):
        reference = float(references.normal_quantile_of_complement(p))
        assert _numerics.normal_quantile(p) == pytest.approx(-reference, rel=1e-12)
        assert _numerics.normal_quantile_of_complement(p) == pytest.approx(reference, rel=1e-12)
    reference = float(references.normal_quantile_of_complement(mpmath.exp(-2000)))
    assert _numerics.normal_quantile_from_log(-2000.0) == pytest.approx(-reference, rel=1e-10)
    assert _numerics.normal_log_cdf(-40.0) == pytest.approx(
        float(mpmath.log(mpmath.ncdf(-40))), rel=1e-14
    )


@pytest.mark.parametrize("side", ["low", "high"])
def test_monotone_root_returns_requested_side(side):
    root = math.sqrt(2)
    x = _numerics.monotone_root(lambda v: v * v - 2, 0.0, 5.0, side=side)
    if side == "high":
        assert x * x - 2 > 0 and x - root < 1e-14
    else:
        assert x * x - 2 <= 0 and root - x < 1e-14


def test_monotone_root_handles_infinities_and_decreasing():
    # log(x) - log(1e-300) crosses at 1e-300; the function is -inf at 0.
    def f(x):
        return math.inf if x == 0 else -(math.log(x) + 690.0)

    x = _numerics.monotone_root(f, 0.0, 1.0, side="low", rtol=1e-14)
    assert x == pytest.approx(math.exp(-690.0), rel=1e-12)
    assert f(x) > 0


def test_monotone_root_rejects_non_bracket():
    with pytest.raises(ValueError, match="does not bracket"):
        _numerics.monotone_root(lambda v: v + 1, 0.0, 1.0, side="low")
    with pytest.raises(ValueError, match="low < high"):
        _numerics.monotone_root(lambda v: v, 1.0, 0.0, side="low")


def test_expand_bracket():
    low, high = _numerics.expand_bracket(lambda v: v - 1000.0, 1.0, direction="up")
    assert low < 1000.0 <= high
    low, high = _numerics.expand_bracket(lambda v: v - 1e-9, 1.0, direction="down")
    assert low <= 1e-9 < high
    with pytest.raises(ValueError, match="unreachable"):
        _numerics.expand_bracket(lambda v: 1.0, 1.0, direction="up", max_steps=5)


@pytest.mark.parametrize(
    "items",
    [
        [(2.5e-21, 10)],  # each far below the roundoff of 1 − p: the direct form gives 0
        [(1e-300, 3), (4e-17, 1_000_000)],
        [(0.3, 2), (1e-12, 7)],
        [(1e-5, 10**6)],
    ],
)
def test_union_of_independent_against_mpmath(items):
    with mpmath.workdps(60):
        product = mpmath.mpf(1)
        for probability, count in items:
            product *= (1 - mpmath.mpf(probability)) ** count
        exact = float(1 - product)
    up = _numerics.union_of_independent(items, upward=True)
    down = _numerics.union_of_independent(items, upward=False)
    assert down <= exact <= up
    assert up == pytest.approx(exact, rel=1e-11) and down == pytest.approx(exact, rel=1e-11)
    assert _numerics.union_of_independent([*items, (1.0, 1)], upward=False) == 1.0
    assert _numerics.union_of_independent([(0.0, 5)], upward=True) == 0.0


def test_next_fast_length_is_scipys_real_fft_length():
    from scipy.fft import next_fast_len

    rng = np.random.default_rng(5)
    sizes = [*range(1, 3000), *rng.integers(1, 2**40, 3000).tolist(), 2**47 + 1]
    ours = [_numerics.next_fast_length(n) for n in sizes]
    assert ours == [next_fast_len(n, real=True) for n in sizes]
