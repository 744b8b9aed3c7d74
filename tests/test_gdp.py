"""μ-GDP closed forms against 50-digit mpmath references and their properties."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaussdp import GaussianDP, InvalidParameterError, gdp
from tests import references

RNG = np.random.default_rng(20261122)


def _sampled_profile_points(count=300):
    """(μ, ε) pairs over μ ∈ [1e-3, 50], ε ∈ [0, 1000], biased to where δ lives."""
    points = []
    for _ in range(count):
        mu = 10 ** RNG.uniform(-3, math.log10(50))
        choice = RNG.integers(4)
        if choice == 0:
            epsilon = 0.0
        elif choice == 1:
            epsilon = mu * mu / 2 * RNG.uniform(0, 2)  # around the head/tail switch
        elif choice == 2:
            epsilon = 10 ** RNG.uniform(-4, 3)
        else:
            epsilon = RNG.uniform(0, 40 * mu)  # δ from 1 down to ~1e-300
        points.append((mu, epsilon))
    points += [(1e-3, 0.0), (1e-3, 0.037), (50.0, 0.0), (50.0, 1000.0), (1.0, 37.0), (0.05, 1.8)]
    return points


@pytest.mark.parametrize(("mu", "epsilon"), _sampled_profile_points())
def test_delta_matches_mpmath(mu, epsilon):
    reference = references.gaussian_delta(mu, epsilon)
    value = gdp.delta(mu, epsilon)
    if reference >= mpmath.mpf("1e-300"):
        assert abs(value - float(reference)) <= 1e-10 * float(reference)
    else:
        assert 0.0 <= value <= 1e-300


def test_the_profile_of_one_point_matches_mpmath_beyond_underflow():
    # the root searches of epsilon() and mu() evaluate log δ one float at a time, by the
    # same branches as the array path; checked against mpmath where δ underflows too
    for mu, epsilon in [*_sampled_profile_points(120), (1.0, 50.0), (3.0, 500.0)]:
        reference = references.gaussian_delta(mu, epsilon)
        if reference == 0:
            continue
        value = gdp._log_delta_of_floats(mu, epsilon)
        assert value == pytest.approx(float(mpmath.log(reference)), rel=1e-10, abs=1e-12)


def test_a_subnormal_mu_gives_delta_zero_not_nan():
    # ε/μ overflows to ∞: the series of the Mills-ratio difference must not form 0·∞
    for mu in (2.225073858507203e-309, 5e-324):
        assert gdp.delta(mu, 5.0) == 0.0
        assert gdp._log_delta_of_floats(mu, 5.0) == -math.inf
        assert gdp.epsilon(mu, 1e-5) < 1e-300


def test_delta_underflows_to_zero_not_nan():
    values = gdp.delta(0.1, np.array([10.0, 100.0, 1000.0]))
    assert np.all(values == 0.0)
    assert gdp.delta(1e-3, 1000.0) == 0.0


@pytest.mark.parametrize(("mu", "epsilon"), [(1.0, 50.0), (0.01, 2.0), (3.0, 500.0), (1e-3, 10)])
def test_log_delta_beyond_underflow(mu, epsilon):
    reference = mpmath.log(references.gaussian_delta(mu, epsilon))
    assert gdp.log_delta(mu, epsilon) == pytest.approx(float(reference), rel=1e-10)


@pytest.mark.parametrize(
    ("mu", "delta"),
    [
        (1.0, 1e-5),
        (0.5, 1e-6),
        (2.0, 1e-9),
        (1e-3, 1e-12),
        (1e-3, 1e-300),
        (50.0, 1e-300),
        (10.0, 1e-100),
        (0.1, 0.01),
        (5.0, 0.3),
    ],
)
def test_epsilon_matches_mpmath_and_is_safe(mu, delta):
    reference = references.solve_epsilon(mu, delta)
    value = gdp.epsilon(mu, delta)
    assert value == pytest.approx(float(reference), rel=1e-9)
    assert value >= float(reference)  # never below the exact root
    assert references.gaussian_delta(mu, value) <= delta


@pytest.mark.parametrize(
    ("epsilon", "delta"),
    [
        (0.1, 1e-5),
        (1.0, 1e-5),
        (8.0, 1e-5),
        (10.0, 1e-9),
        (0.0, 1e-5),
        (100.0, 1e-300),
        (500.0, 1e-10),
        (1e-6, 1e-6),
        (3.0, 0.2),
        (0.0, 1e-300),
    ],
)
def test_mu_matches_mpmath(epsilon, delta):
    reference = float(references.solve_mu(epsilon, delta))
    assert gdp.mu(epsilon, delta) == pytest.approx(reference, rel=1e-10)


def test_mu_and_epsilon_are_inverse():
    mus = np.array([0.01, 0.3, 1.0, 4.0, 20.0])
    epsilons = gdp.epsilon(mus, 1e-7)
    assert gdp.mu(epsilons, 1e-7) == pytest.approx(mus, rel=1e-10)


@pytest.mark.parametrize("mu", [1e-3, 0.5, 1.0, 5.0, 50.0])
@pytest.mark.parametrize(
    "alpha", [1e-300, 1e-100, 1e-10, 1e-3, 0.3, 0.5, 0.9, 1 - 1e-10, 1 - 1e-16]
)
def test_beta_matches_mpmath(mu, alpha):
    reference = references.gaussian_beta(mu, alpha)
    value = gdp.beta(mu, alpha)
    if reference >= mpmath.mpf("1e-300"):
        assert value == pytest.approx(float(reference), rel=1e-10)
    else:
        assert value <= 1e-300


def test_beta_edges():
    assert gdp.beta(1.0, 0.0) == 1.0
    assert gdp.beta(1.0, 1.0) == 0.0
    assert gdp.beta(0.0, 0.3) == pytest.approx(0.7, rel=1e-15)
    assert gdp.beta(math.inf, 0.3) == 0.0


def test_vectorised_shapes():
    assert isinstance(gdp.delta(1.0, 1.0), float)
    assert gdp.delta([1.0, 2.0], [[0.0], [1.0]]).shape == (2, 2)
    assert gdp.beta(np.ones((3, 1)), np.linspace(0, 1, 4)).shape == (3, 4)
    assert gdp.epsilon([0.5, 1.0], 1e-5).shape == (2,)


@pytest.mark.parametrize("epsilon", [0.0, 1e-12, 1e-8, 1e-4, 0.01, 0.999, 1.0, 5.0, 40.0, 700.0])
def test_from_pure_dp_matches_mpmath(epsilon):
    probability = 1 / (1 + mpmath.exp(mpmath.mpf(epsilon)))
    reference = 2 * references.normal_quantile_of_complement(probability)
    value = gdp.from_pure_dp(epsilon)
    assert value == pytest.approx(float(reference), rel=1e-13, abs=1e-40)


@pytest.mark.parametrize("mu", [1e-3, 0.1, 1.0, 3.0, 50.0])
def test_advantage_is_max_of_one_minus_alpha_minus_beta(mu):
    reference = 2 * mpmath.ncdf(mpmath.mpf(mu) / 2) - 1
    assert gdp.advantage(mu) == pytest.approx(float(reference), rel=1e-12)
    alphas = np.linspace(0, 1, 20001)
    assert np.max(1 - alphas - gdp.beta(mu, alphas)) <= gdp.advantage(mu) + 1e-12


def test_compose_group_and_gaussian():
    assert gdp.compose([0.3, 0.4]) == pytest.approx(0.5)
    assert gdp.compose([1e200, 1e200]) == pytest.approx(math.sqrt(2) * 1e200)
    assert gdp.compose([0.0, 0.0]) == 0.0
    assert gdp.group(0.5, 3) == pytest.approx(1.5)
    assert gdp.from_gaussian(4.0, sensitivity=2.0) == 0.5
    # Ten (1/√10)-GDP mechanisms compose to 1-GDP.
    assert gdp.compose([1 / math.sqrt(10)] * 10) == pytest.approx(1.0, rel=1e-15)


def test_composition_of_gaussian_mechanisms_matches_profile_of_single():
    # σ = 2 applied 16 times is a single Gaussian with σ = 2/4: μ = 2.
    mu = gdp.compose([gdp.from_gaussian(2.0)] * 16)
    reference = references.gaussian_delta(2.0, 1.0)
    assert gdp.delta(mu, 1.0) == pytest.approx(float(reference), rel=1e-12)


def test_gaussian_dp_object():
    guarantee = GaussianDP(0.3) + GaussianDP(0.4)
    assert guarantee == GaussianDP(0.5)
    assert guarantee.delta(1.0) == gdp.delta(0.5, 1.0)
    assert guarantee.epsilon(1e-5) == gdp.epsilon(0.5, 1e-5)
    assert guarantee.beta(0.1) == gdp.beta(0.5, 0.1)
    assert guarantee.log_delta(300.0) == gdp.log_delta(0.5, 300.0)
    assert guarantee.group(2).mu == 1.0
    assert GaussianDP(1).compose(GaussianDP(1), GaussianDP(1)).mu == pytest.approx(math.sqrt(3))
    with pytest.raises(AttributeError):
        guarantee.mu = 2.0  # frozen


# --- edge values with defined answers ---------------------------------------------------


def test_meaningful_edges():
    assert gdp.delta(0.0, 0.0) == 0.0  # perfect privacy
    assert gdp.delta(math.inf, 3.0) == 1.0
    assert gdp.delta(1.0, math.inf) == 0.0
    assert gdp.epsilon(1.0, 0.0) == math.inf
    assert gdp.epsilon(1.0, 1.0) == 0.0
    assert gdp.epsilon(0.0, 1e-9) == 0.0
    assert gdp.mu(1.0, 0.0) == 0.0
    assert gdp.mu(1.0, 1.0) == math.inf
    assert gdp.mu(math.inf, 1e-5) == math.inf


# --- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gdp.delta(-1.0, 1.0), r"mu must be in \[0, inf\], got -1.0"),
        (lambda: gdp.delta(1.0, -0.5), r"epsilon must be in \[0, inf\], got -0.5"),
        (lambda: gdp.delta(math.nan, 1.0), "mu .* got nan"),
        (lambda: gdp.epsilon(1.0, 1.5), r"delta must be in \[0, 1\], got 1.5"),
        (lambda: gdp.epsilon(1.0, -1e-9), "delta must be in"),
        (lambda: gdp.mu(1.0, math.nan), "delta .* got nan"),
        (lambda: gdp.beta(1.0, 1.2), r"alpha must be in \[0, 1\], got 1.2"),
        (lambda: gdp.beta(1.0, [0.1, -0.1]), r"alpha .* got -0.1 \(at index 1\)"),
        (lambda: gdp.group(1.0, 0), "k must be an integer >= 1, got 0"),
        (lambda: gdp.group(1.0, 1.5), "k must be an integer >= 1, got 1.5"),
        (lambda: gdp.from_gaussian(0.0), r"sigma must be in \(0, inf\], got 0.0"),
        (lambda: gdp.compose([]), "at least one"),
        (lambda: gdp.from_pure_dp(-1), "epsilon must be in"),
        (lambda: GaussianDP(-0.1), "mu must be in"),
        (lambda: gdp.delta("abc", 1.0), "mu must be a real number"),
        # Python numbers take a fast path; its edges give the same errors
        (lambda: gdp.from_gaussian(0), r"sigma must be in \(0, inf\], got 0.0"),
        (lambda: gdp.epsilon(1.0, 2), r"delta must be in \[0, 1\], got 2.0"),
        (lambda: gdp.delta(-math.inf, 1.0), r"mu must be in \[0, inf\], got -inf"),
        (lambda: gdp.delta(10**400, 1.0), "mu must be a real number of magnitude at most"),
        (lambda: gdp.delta(True, -1), r"epsilon must be in \[0, inf\], got -1.0"),
    ],
)
def test_bad_input_names_parameter_and_range(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call()


def test_invalid_parameter_error_is_value_error():
    assert issubclass(InvalidParameterError, ValueError)


# --- properties -----------------------------------------------------------------------

mus = st.floats(min_value=1e-3, max_value=50.0)
unit = st.floats(min_value=0.0, max_value=1.0)


@settings(max_examples=200, deadline=None)
@given(mus, st.floats(min_value=0.0, max_value=200.0), st.floats(min_value=1.001, max_value=3.0))
def test_delta_increasing_in_mu_decreasing_in_epsilon(mu, epsilon, factor):
    # Up to one rounding of a value near 1 (μ = 15, ε = 0 → 1e-3 differed by one ulp).
    assert gdp.delta(mu * factor, epsilon) >= gdp.delta(mu, epsilon) * (1 - 2**-52)
    assert gdp.delta(mu, epsilon * factor + 1e-3) <= gdp.delta(mu, epsilon) * (1 + 2**-52)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-3, max_value=8.0), unit, unit)
def test_beta_is_a_symmetric_convex_tradeoff(mu, a, b):
    low, high = sorted((a, b))
    # non-increasing and below 1 - α
    assert gdp.beta(mu, high) <= gdp.beta(mu, low) + 1e-15
    assert gdp.beta(mu, low) <= 1 - low + 1e-15
    # convex: the chord lies above the curve
    middle = 0.5 * (low + high)
    chord = 0.5 * (gdp.beta(mu, low) + gdp.beta(mu, high))
    assert gdp.beta(mu, middle) <= chord + 1e-12
    # symmetric: G_μ is its own inverse, G_μ(G_μ(α)) = α
    assert gdp.beta(mu, gdp.beta(mu, low)) == pytest.approx(low, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(mus, st.floats(min_value=1e-12, max_value=0.5))
def test_epsilon_is_safe_side_of_profile(mu, delta):
    value = gdp.epsilon(mu, delta)
    assert gdp.delta(mu, value) <= delta
    if value > 1e-6:  # and close: a little less privacy loss already breaks δ
        assert gdp.delta(mu, value * (1 - 1e-7)) > delta


# Table 3 of the reporting paper (002_f306a1b3106375e0, §5): mu for each (epsilon, delta),
# printed to two decimals, columns delta = 1e-5, 1e-6, 1e-9.
REPORTING_PAPER_TABLE_3 = {
    0.1: (0.03, 0.03, 0.02),
    0.5: (0.14, 0.12, 0.09),
    1.0: (0.27, 0.24, 0.18),
    2.0: (0.50, 0.45, 0.35),
    4.0: (0.92, 0.84, 0.67),
    6.0: (1.31, 1.20, 0.97),
    8.0: (1.67, 1.53, 1.26),
    10.0: (2.00, 1.85, 1.54),
}


@pytest.mark.parametrize("epsilon", sorted(REPORTING_PAPER_TABLE_3))
def test_mu_reproduces_the_reporting_papers_conversion_table(epsilon):
    for delta, printed in zip((1e-5, 1e-6, 1e-9), REPORTING_PAPER_TABLE_3[epsilon], strict=True):
        assert round(gdp.mu(epsilon, delta), 2) == pytest.approx(printed, abs=1e-9)
