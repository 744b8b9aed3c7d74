"""Property tests: every curve the library produces is a valid trade-off function.

Proposition 1 of Dong, Roth & Su: f is a trade-off function iff it is convex,
continuous, non-increasing and f(α) ≤ 1 − α. Checked on a fine grid (second
differences, first differences, the cap) for curves drawn by hypothesis from
every constructor and operator, and symmetry wherever it is promised.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gaussdp import curves as C

GRID = np.linspace(0.0, 1.0, 4001)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

mus = st.floats(min_value=0.0, max_value=8.0, allow_nan=False)
epsilons = st.floats(min_value=0.0, max_value=6.0, allow_nan=False)
deltas = st.floats(min_value=0.0, max_value=0.5, allow_nan=False)
probabilities = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@st.composite
def point_sets(draw):
    """Arbitrary sorted points with β ≤ 1 − α and β non-increasing."""
    n = draw(st.integers(min_value=1, max_value=8))
    alphas = sorted(draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n)))
    betas = []
    previous = 1.0
    for a in alphas:
        b = draw(st.floats(0.0, 1.0)) * min(previous, 1.0 - a)
        betas.append(b)
        previous = b
    return alphas, betas


@st.composite
def privacy_losses(draw):
    n = draw(st.integers(min_value=1, max_value=6))
    losses = draw(st.lists(st.floats(-4.0, 4.0), min_size=n, max_size=n))
    weights = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n)))
    masses = weights / weights.sum()
    # Scale so that the Q-masses p·e^{−l} sum to at most 1.
    q_total = float(np.sum(masses * np.exp(-np.array(losses))))
    scale = min(1.0, 1.0 / q_total) * draw(st.floats(0.8, 1.0))
    infinity = draw(st.floats(0.0, 0.2)) * (1.0 - scale)
    return losses, masses * scale, infinity


base_curves = st.one_of(
    mus.map(C.gaussian),
    mus.map(C.laplace),
    st.builds(C.epsilon_delta, epsilons, deltas),
    st.builds(C.randomized_response, epsilons, st.integers(2, 6)),
    point_sets().map(lambda pts: C.from_points(*pts)),
    privacy_losses().map(lambda pld: C.from_privacy_loss(*pld)),
    st.lists(st.tuples(epsilons, deltas), min_size=1, max_size=4).map(C.from_epsilon_deltas),
)


def assert_valid(curve, tolerance=1e-12):
    beta = curve.beta(GRID)
    assert np.all((beta >= 0.0) & (beta <= 1.0))
    assert np.all(beta <= 1.0 - GRID + tolerance), "f(α) ≤ 1 − α"
    assert np.all(np.diff(beta) <= tolerance), "non-increasing"
    assert np.all(np.diff(beta, 2) >= -tolerance), "convex"
    curve.validate(tolerance=1e-10)


def assert_symmetric(curve, tolerance=1e-9):
    inverse = curve.inverse()
    assert np.max(np.abs(curve.beta(GRID) - inverse.beta(GRID))) <= tolerance


@SETTINGS
@given(base_curves)
def test_constructed_curves_are_valid(curve):
    assert_valid(curve)
    assert_valid(curve.inverse())


@SETTINGS
@given(base_curves)
def test_symmetrisation_is_valid_symmetric_and_above(curve):
    s = curve.symmetrize()
    assert_valid(s)
    assert_symmetric(s)
    assert np.all(s.beta(GRID) >= curve.beta(GRID) - 1e-12)


@SETTINGS
@given(base_curves, base_curves)
@example(C.gaussian(0.0), C.gaussian(0.25))  # closed forms linearised within 1e-9: f⁻¹ off by 3e-9
def test_from_directions_is_valid_symmetric_and_below_both(first, second):
    f = C.from_directions(first, second)
    assert_valid(f)
    # Symmetric by construction (an envelope of a set closed under inversion); closed
    # forms enter as piecewise-linear curves within 1e-9 below them, and inverting those
    # where they are steep moves β by a few times that.
    assert_symmetric(f, tolerance=1e-8)
    assert np.all(f.beta(GRID) <= np.minimum(first.beta(GRID), second.beta(GRID)) + 1e-8)


@SETTINGS
@given(base_curves, probabilities)
# a vertex at α below 1e-300: symmetrize() once returned a curve its own inverse was not
@example(C.from_points([1.9860181207132974e-300, 0.5, 0.75], [0.5, 0.5, 0.0]), 0.0)
# a near-vertical segment: its two computed halves differed by 1.2e-9 of β (a random draw)
@example(C.from_points([1e-08, 0.875], [0.499999995, 0.0]), 0.0)
def test_subsampling_is_valid_and_between_f_and_id(curve, p):
    f = curve.symmetrize()
    c = f.subsample(p)
    assert_valid(c)
    assert_symmetric(c)
    assert np.all(c.beta(GRID) >= f.beta(GRID) - 2e-8)  # C_p(f) ≥ C_1(f) = f
    assert np.all(c.beta(GRID) <= 1.0 - GRID + 1e-12)


@SETTINGS
@given(base_curves, st.integers(1, 4))
# slopes of 1e297: vertices near the 1e-300 snap once made f^{∘5} above f^{∘4} at α = 0
@example(
    C.from_points(
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0625], [1.0, 1.0, 1.0, 0.5, 0.25, 3.3890540940469383e-298]
    ),
    4,
)
def test_group_privacy_is_valid_and_decreasing_in_k(curve, k):
    f = curve.symmetrize()
    g = f.group(k)
    assert_valid(g)
    assert np.all(g.beta(GRID) <= f.beta(GRID) + 1e-12)
    assert np.all(f.group(k + 1).beta(GRID) <= g.beta(GRID) + 1e-9)


@SETTINGS
@given(base_curves, st.floats(0.0, 0.9))
def test_with_failure_is_valid(curve, delta):
    g = curve.with_failure(delta)
    assert_valid(g)
    assert g.beta(0.0) <= (1.0 - delta) + 1e-15
    assert g.delta(5.0) >= delta - 1e-15


@SETTINGS
@given(st.lists(st.tuples(epsilons, deltas), min_size=1, max_size=5))
def test_composition_of_approximate_dp_is_valid_and_order_free(pairs):
    parts = [C.epsilon_delta(e, d) for e, d in pairs]
    f = C.compose(parts)
    assert_valid(f)
    assert_symmetric(f)
    g = C.compose(parts[::-1])
    assert np.max(np.abs(f.beta(GRID) - g.beta(GRID))) < 1e-12
    # Composition only loses privacy: below each factor.
    for part in parts:
        assert np.all(f.beta(GRID) <= part.beta(GRID) + 1e-12)


@SETTINGS
@given(base_curves)
def test_profile_is_a_valid_profile(curve):
    eps = np.linspace(0.0, 10.0, 201)
    delta = curve.delta(eps)
    assert np.all((delta >= 0) & (delta <= 1))
    assert np.all(np.diff(delta) <= 1e-15), "δ(ε) is non-increasing"
    assert curve.advantage() == pytest.approx(delta[0], rel=1e-12, abs=1e-15)
    assert 0.0 <= curve.bayes_error(0.5) <= 0.5
    target = float(np.clip(delta[40], 1e-12, 1.0))
    e = curve.epsilon(target)
    if math.isfinite(e):
        assert curve.delta(e) <= target + 1e-15


@settings(SETTINGS, max_examples=20)
@given(mus, probabilities, st.integers(1, 3))
def test_operators_of_gaussians_stay_valid(mu, p, k):
    f = C.gaussian(mu).subsample(p).group(k)
    assert_valid(f)
    g = C.lower_envelope([C.gaussian(mu), C.laplace(mu)])
    assert_valid(g)


# --- curves from the numerical engine ---------------------------------------------

# Derandomised: the same examples on every run, so that the suite's cost does not
# depend on the draw (a run of large-μ draws cost 14 s against 5 s for a typical one).
ENGINE_SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


@settings(ENGINE_SETTINGS, max_examples=8)
@given(
    sigma=st.floats(min_value=0.5, max_value=5.0),
    q=st.floats(min_value=0.001, max_value=1.0),
    steps=st.integers(min_value=1, max_value=50),
)
def test_the_accountants_curves_are_valid_symmetric_and_ordered(sigma, q, steps):
    from gaussdp import DPSGD, account

    accounting = account(DPSGD(sigma, q, steps))
    low, high = accounting.tradeoff(), accounting.tradeoff("optimistic")
    for curve in (low, high):
        assert_valid(curve, tolerance=1e-10)
        assert_symmetric(curve, tolerance=1e-10)
    assert np.all(low.beta(GRID) <= high.beta(GRID) + 1e-12)


# Factors up to μ = 4 here: the composed curve of two μ = 8 factors has millions of
# vertices, whose hull (not what this property tests) costs seconds per example.
composed_mus = st.floats(min_value=0.0, max_value=4.0, allow_nan=False)


@ENGINE_SETTINGS
@given(
    st.lists(
        st.one_of(composed_mus.map(C.gaussian), composed_mus.map(C.laplace)),
        min_size=2,
        max_size=3,
    )
)
def test_numerical_composition_is_valid_symmetric_and_below_each_factor(factors):
    f = C.compose(factors)
    assert_valid(f, tolerance=1e-10)
    assert_symmetric(f, tolerance=1e-10)
    for factor in factors:  # composing never helps: f ≤ each factor (tensor product)
        assert np.all(f.beta(GRID) <= factor.beta(GRID) + 1e-8)


@SETTINGS
@given(base_curves)
def test_from_profile_of_a_curve_is_valid_and_below_it(curve):
    f = curve.symmetrize()
    back = C.from_profile(C.PrivacyProfile.from_tradeoff(f))
    assert_valid(back, tolerance=1e-10)
    assert np.all(back.beta(GRID) <= f.beta(GRID) + 1e-8)
