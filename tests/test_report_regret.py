"""The regret (Δ-divergence): known answers, brute force, gdpnum, Proposition 4.2."""

import itertools
import math

import mpmath
import numpy as np
import pytest
from gdpnum.converter import get_worst_case_regret
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import special, stats

from gaussdp import PureDP, Repeated, curves, gdp
from gaussdp.report import (
    advantage_gap_bound,
    failure_probability,
    profile_regret,
    regret,
    report,
    tight_mu,
)
from gaussdp.report.regret import ROUNDING_MARGIN


def target_beta(mu, delta, x):
    """(1 − δ)·G_μ(x/(1 − δ)) with scipy's normal (not gaussdp's), 0 beyond 1 − δ."""
    x = np.asarray(x, dtype=float)
    scale = 1.0 - delta
    out = np.zeros(x.shape)
    inside = (x >= 0.0) & (x < scale)
    out[inside] = scale * special.ndtr(-special.ndtri(x[inside] / scale) - mu)
    out[x < 0.0] = 1.0
    return out


def diagonal_distances(alphas, betas, mu, delta, points):
    """min(κ_a, a) at each a: κ_a solves h(a − κ) + κ = f(a), by bisection to 1e-18."""
    f = np.interp(points, alphas, betas)
    low = points - 1.0
    high = points.copy()
    for _ in range(64):
        middle = 0.5 * (low + high)
        above = target_beta(mu, delta, points - middle) + middle - f >= 0.0
        high = np.where(above, middle, high)
        low = np.where(above, low, middle)
    return np.minimum(high, points)


def brute_force_regret(alphas, betas, mu, delta=0.0):
    """Definition 2.10 evaluated densely, then refined around the worst point of each segment.

    Every segment is zoomed into separately: on a steep segment near α = 0 the
    distance changes fast, and its maximum can exceed the global grid's best
    point (elsewhere) while falling between grid points.
    """
    grid = np.unique(
        np.concatenate((np.linspace(0.0, 1.0, 4001), np.logspace(-12, 0, 1001), alphas))
    )
    kappa = diagonal_distances(alphas, betas, mu, delta, grid)
    coarse = fine = max(float(np.max(kappa)), 0.0)
    for left, right in itertools.pairwise(alphas):
        if right <= left:
            continue
        local = np.linspace(left, right, 2001)
        for _ in range(6):  # zoom in on this segment's worst point (1e-13 of it at the end)
            kappa = diagonal_distances(alphas, betas, mu, delta, local)
            k = int(np.argmax(kappa))
            fine = max(fine, float(kappa[k]))
            local = np.linspace(local[max(k - 1, 0)], local[min(k + 1, local.size - 1)], 201)
    return coarse, fine


# ---------------------------------------------------------------------------
# Known answers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.5, 6.0])
def test_regret_from_perfect_privacy_is_half_the_advantage(mu):
    """Lemma C.1: Δ(Id, G_μ) = adv(G_μ)/2 = (2Φ(μ/2) − 1)/2."""
    expected = float(mpmath.ncdf(mpmath.mpf(mu) / 2) - mpmath.mpf("0.5"))
    value = regret(curves.identity(), mu)
    assert expected <= value <= expected + 2 * ROUNDING_MARGIN


def kinked_curve_regret(c, mu):
    """Exact regret of the curve through (0, 1), (c, c), (1, 0) against G_μ, in mpmath.

    The worst point of the segment from (0, 1) to (c, c), of slope s = (c − 1)/c,
    is reached from the point of G_μ with slope s: there z* = (log(−s) + μ²/2)/μ,
    x* = Φ(−z*), y* = Φ(z* − μ), and the diagonal through it meets the segment's
    line 1 + sα after κ = (1 + s x* − y*)/(1 − s). The other segment is its mirror.
    """
    c, mu = mpmath.mpf(c), mpmath.mpf(mu)
    s = (c - 1) / c
    z = (mpmath.log(-s) + mu**2 / 2) / mu
    x, y = mpmath.ncdf(-z), mpmath.ncdf(z - mu)
    return float((1 + s * x - y) / (1 - s))


@pytest.mark.parametrize(("c", "extra"), [(0.3, 0.0), (0.1, 0.0), (0.45, 0.0), (0.2, 0.3)])
def test_a_curve_with_a_known_worst_point_gives_the_known_regret(c, extra):
    f = curves.from_points([0.0, c, 1.0], [1.0, c, 0.0])
    mu = tight_mu(f) + extra
    expected = kinked_curve_regret(c, mu)
    value = regret(f, mu)
    assert expected <= value <= expected + 2 * ROUNDING_MARGIN
    coarse, fine = brute_force_regret(f.alphas, f.betas, mu)
    assert coarse <= value
    assert fine == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_pure_dp_report_regret_matches_the_kinked_curve(epsilon):
    c = 1.0 / (1.0 + math.exp(epsilon))
    r = report(PureDP(epsilon))
    expected = kinked_curve_regret(c, r.mu)
    assert expected <= r.regret <= expected + 2 * ROUNDING_MARGIN
    assert r.tier == (1 if expected <= 0.01 else 2)


# ---------------------------------------------------------------------------
# Random curves: brute force and gdpnum
# ---------------------------------------------------------------------------


@st.composite
def convex_curves(draw):
    n = draw(st.integers(min_value=1, max_value=7))
    alphas = sorted(draw(st.lists(st.floats(1e-7, 0.999), min_size=n, max_size=n)))
    betas = sorted((draw(st.floats(0.0, 1.0)) * (1.0 - a) for a in alphas), reverse=True)
    return curves.from_points([0.0, *alphas, 1.0], [1.0, *betas, 0.0])


@settings(max_examples=25, deadline=None)
@given(convex_curves(), st.floats(0.0, 1.0))
# A steep first segment whose worst point beats the rest by 3.7e-9 between grid points.
@example(curves.from_points([0.0, 6.10351562e-05, 1.0], [1.0, 6.1031431e-05, 0.0]), 0.0)
def test_regret_is_exact_against_a_dense_brute_force(curve, extra):
    mu = tight_mu(curve) + extra
    value = regret(curve, mu)
    coarse, fine = brute_force_regret(curve.alphas, curve.betas, mu)
    assert value >= coarse
    assert value == pytest.approx(fine, abs=1e-9)


# 30 curves (gdpnum's search is the cost); the dense brute force above checks the same
# regrets for exactness.
@settings(max_examples=30, deadline=None)
@given(convex_curves(), st.floats(0.0, 0.5))
def test_regret_is_never_below_gdpnum(curve, extra):
    mu = tight_mu(curve) + extra
    theirs = get_worst_case_regret(curve.alphas, curve.betas, mu, tol=1e-12)
    assert regret(curve, mu) >= theirs


@settings(max_examples=60, deadline=None)
@given(convex_curves())
def test_proposition_4_2_advantage_gap(curve):
    """adv(G_μ) − adv(f) ≤ 2·Δ(f, G_μ), equality for f = Id."""
    mu = tight_mu(curve)
    advantage_f = float(np.max(1.0 - curve.alphas - curve.betas))
    advantage_mu = float(stats.norm.cdf(mu / 2) - stats.norm.cdf(-mu / 2))
    assert advantage_mu - advantage_f <= advantage_gap_bound(regret(curve, mu)) + 1e-12


def test_proposition_4_2_constant_is_tight():
    mu = 1.3
    assert gdp.advantage(mu) == pytest.approx(
        advantage_gap_bound(regret(curve_id(), mu)), abs=1e-11
    )


def curve_id():
    return curves.from_points([0.0, 1.0], [1.0, 0.0])


# ---------------------------------------------------------------------------
# The profile form used by the report
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "curve",
    [curves.epsilon_delta(1.0), curves.from_points([0, 0.1, 0.5, 0.9, 1], [1, 0.5, 0.1, 0.01, 0])],
)
def test_profile_form_equals_segment_form_on_symmetric_curves(curve):
    symmetric = curve.piecewise_linear().symmetrize()
    slopes = np.diff(symmetric.betas) / np.diff(symmetric.alphas)
    epsilons = np.unique(np.abs(np.log(-slopes[slopes < 0])))
    epsilons = np.concatenate(([0.0], epsilons))
    mu = tight_mu(symmetric)
    by_profile = profile_regret(epsilons, symmetric.delta(epsilons), mu)
    assert by_profile == pytest.approx(regret(symmetric, mu) - ROUNDING_MARGIN, abs=1e-12)


def test_profile_form_with_failure_probability():
    f = curves.epsilon_delta(1.0, 1e-3).piecewise_linear()
    delta = failure_probability(f)
    mu = tight_mu(f)
    eps = np.array([0.0, 1.0])
    _, fine = brute_force_regret(f.alphas, f.betas, mu, delta)
    assert profile_regret(eps, f.delta(eps), mu, delta) == pytest.approx(fine, abs=1e-9)
    assert regret(f, mu, delta=delta) == pytest.approx(fine, abs=1e-9)


def test_extreme_mu():
    f = curves.epsilon_delta(1.0)
    assert regret(f, math.inf) == pytest.approx(1.0 / (1.0 + math.e), abs=1e-11)  # f(a) = a
    assert regret(curve_id(), 0.0) == pytest.approx(0.0, abs=2 * ROUNDING_MARGIN)


def test_report_regret_brackets_a_composed_pure_dp_curve():
    """The exact atoms path: the report's regret is the brute force on the exact curve."""
    r = report(Repeated(PureDP(0.5), 4))
    e = mpmath.exp(mpmath.mpf("0.5"))
    p = [float(mpmath.binomial(4, j) * e**j / (1 + e) ** 4) for j in range(4, -1, -1)]
    q = [float(mpmath.binomial(4, j) * e ** (4 - j) / (1 + e) ** 4) for j in range(4, -1, -1)]
    alphas = np.concatenate(([0.0], np.cumsum(q)))
    betas = np.concatenate(([1.0], 1.0 - np.cumsum(p)))
    alphas[-1], betas[-1] = 1.0, 0.0
    _, fine = brute_force_regret(alphas, np.maximum(betas, 0.0), r.mu)
    assert fine - 1e-9 <= r.regret <= fine + 1e-9


def test_bad_input():
    with pytest.raises(ValueError, match="mu must be in"):
        regret(curves.identity(), -1.0)
    with pytest.raises(ValueError, match="delta must be in"):
        regret(curves.identity(), 1.0, delta=1.0)


@pytest.mark.parametrize("seed", range(4))
def test_profile_regret_skipping_large_epsilons_is_the_full_maximum(seed):
    # profile_regret skips ε's whose distance cannot reach one already known; on long
    # grids (δ_f a hair below 0 by rounding included) it must equal the plain formula.
    rng = np.random.default_rng(seed)
    mu = float(rng.uniform(0.3, 3.0))
    eps = np.sort(rng.uniform(0.0, 30.0, 20_000))[::-1]
    target_mu = np.maximum(
        special.ndtr(0.5 * mu - eps / mu) - np.exp(eps + special.log_ndtr(-(eps / mu + 0.5 * mu))),
        0.0,
    )
    values = target_mu * rng.uniform(0.9, 1.0, eps.size) - rng.uniform(0.0, 1e-16, eps.size)
    full = max(float(np.max((target_mu - values) / (1.0 + np.exp(eps)))), 0.0)
    assert profile_regret(eps, values, mu) == full


def test_two_breakpoints_an_ulp_apart_at_the_kink_do_not_count_as_a_flat_line():
    """Found by hypothesis: a symmetric curve sampled on both sides of its diagonal kink.

    The two middle points are an ulp apart and 1 − β rounds their rise to 0, which read as
    a horizontal line at β ≈ 0.274. The same curve's regret by the profile form (the
    report's) is 0.1255292352606.
    """
    alphas = np.array([
        0.0, 0.00212144872094752, 0.05481099862197257, 0.15254017799558794,
        0.18095238095238098, 0.271984521234547, 0.27389147622231674, 0.2738914762223168,
        0.2761904761904762, 0.3509818084269318, 0.473015873015873, 0.6444444444444444,
        0.7968253968253969, 1.0,
    ])  # fmt: skip
    betas = np.array([
        1.0, 0.7968253968253969, 0.6444444444444444, 0.473015873015873, 0.42619705372305206,
        0.2761904761904762, 0.2738914762223168, 0.27389147622231674, 0.271984521234547,
        0.2265970778302031, 0.15254017799558794, 0.05481099862197261, 0.00212144872094752, 0.0,
    ])  # fmt: skip
    value = regret(curves.from_points(alphas, betas), 2.029179355936878)
    assert value == pytest.approx(0.12552923526062465, abs=1e-11)
