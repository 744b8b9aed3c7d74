"""The lower hull behind every piecewise-linear curve, against a plain reference.

``lower_hull`` appends runs of points that already turn left in one step and
drops points above other chains before the hull; both must give the hull that
Andrew's monotone chain gives point by point.
"""

import numpy as np
import pytest

from gaussdp.curves import _geometry
from gaussdp.curves._tradeoff import PiecewiseLinear


def reference_hull(x, y, collinear):
    """Andrew's monotone chain, one point at a time (smallest y for repeated x)."""
    order = np.lexsort((y, x))
    hull = []
    for i in order.tolist():
        if hull and x[hull[-1]] == x[i]:
            continue
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = (x[hull[-2]], y[hull[-2]]), (x[hull[-1]], y[hull[-1]])
            left, right = (x2 - x1) * (y[i] - y1), (y2 - y1) * (x[i] - x1)
            if left - right > collinear * (abs(left) + abs(right)):
                break
            hull.pop()
        hull.append(i)
    return x[hull], y[hull]


def point_sets(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 400))
    x = rng.random(n)
    yield x, rng.random(n)  # mostly interior points
    yield x, (x - 0.5) ** 2 + 1e-3 * rng.standard_normal(n)  # convex with ripples
    yield x, np.round((x - 0.5) ** 2, 3)  # runs of collinear points
    yield np.round(x, 2), (x - 0.3) ** 2  # repeated x


@pytest.mark.parametrize("seed", range(40))
def test_lower_hull_is_the_point_by_point_chain(seed):
    for x, y in point_sets(seed):
        for collinear in (0.0, _geometry._COLLINEAR):
            expected = reference_hull(x, y, collinear)
            got = (
                _geometry.lower_hull(x, y)
                if collinear
                else tuple(v[_geometry._lower_hull_indices(x, y, 0.0)] for v in (x, y))
            )
            np.testing.assert_array_equal(got[0], expected[0])
            np.testing.assert_array_equal(got[1], expected[1])


def gaussian_like_chains(seed):
    """Convex chains that cross: trade-off curves 1 − Φ(Φ⁻¹(1 − α) − μ) sampled unevenly."""
    from scipy.stats import norm

    rng = np.random.default_rng(seed)
    chains = []
    for mu in rng.uniform(0.2, 3.0, size=int(rng.integers(2, 5))):
        alpha = np.sort(rng.random(int(rng.integers(5, 300))))
        beta = norm.sf(norm.isf(alpha) + mu)  # β = Φ(Φ⁻¹(1−α) − μ)
        chains.append((alpha, beta))
        chains.append((beta, alpha))
    return chains


@pytest.mark.parametrize("seed", range(20))
def test_dropping_points_above_other_chains_keeps_the_curve(seed):
    chains = gaussian_like_chains(seed)
    whole = PiecewiseLinear._from_vertices(
        np.concatenate([x for x, _ in chains]), np.concatenate([y for _, y in chains])
    )
    assert PiecewiseLinear._from_chains(chains) == whole
    kept = _geometry.drop_points_above_chains(chains)
    # It does drop: the chains of the larger μ lie above the smallest μ's.
    assert sum(x.size for x, _ in kept) < sum(x.size for x, _ in chains)


def tradeoff_point_sets(seed):
    """Candidate vertices of trade-off curves in [0, 1]², with (0, 1) and (1, 0).

    Decreasing convex chains with plateaus (β rounded, as 1 − S_P is where the
    masses fall below one ulp), repeated α, and scattered points above.
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 400))
    alpha = rng.random(n)
    beta = (1.0 - np.sqrt(alpha)) ** 2
    for x, y in (
        (alpha, np.round(beta, 2)),  # plateaus
        (np.round(alpha, 2), beta),  # repeated α
        (alpha, np.minimum(beta + rng.random(n) * rng.random(n), 1.0)),  # scattered above
        (np.round(alpha, 1), np.round(beta, 1)),  # both, with points at β = 0 before α = 1
    ):
        yield np.concatenate([[0.0, 1.0], x]), np.concatenate([[1.0, 0.0], y])


@pytest.mark.parametrize("seed", range(30))
def test_dropping_dominated_points_keeps_the_hull_of_tradeoff_points(seed):
    for x, y in tradeoff_point_sets(seed):
        kept_x, kept_y = _geometry.drop_dominated_points(x, y)
        expected = reference_hull(x, y, _geometry._COLLINEAR)
        got = reference_hull(kept_x, kept_y, _geometry._COLLINEAR)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
        # No kept point but the last, (1, 0), is dominated by another; the last stays.
        assert np.all(np.diff(kept_x) > 0) and np.all(np.diff(kept_y)[:-1] < 0)
        assert (kept_x[-1], kept_y[-1]) == (1.0, 0.0)
        # The curve built from these points is the plain hull's.
        curve = PiecewiseLinear._from_vertices(x, y)
        np.testing.assert_array_equal(curve.alphas, expected[0])
        np.testing.assert_array_equal(curve.betas, expected[1])


def test_dominated_points_are_dropped():
    x = np.array([0.0, 0.2, 0.3, 0.3, 0.5, 0.9, 1.0])
    y = np.array([1.0, 0.5, 0.5, 0.4, 0.6, 0.0, 0.0])
    kept_x, kept_y = _geometry.drop_dominated_points(x, y)
    np.testing.assert_array_equal(kept_x, [0.0, 0.2, 0.3, 0.9, 1.0])
    np.testing.assert_array_equal(kept_y, [1.0, 0.5, 0.4, 0.0, 0.0])
