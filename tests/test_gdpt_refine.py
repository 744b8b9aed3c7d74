"""Refined profiles (Appendix B), privacy-utility equations, and refined noise (Appendix C)."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gaussdp import GaussianDP, InvalidParameterError, gdp, gdpt
from gaussdp.gdpt import examples
from tests import test_gdpt_references as ref

EPSILONS = [0.0, 0.25, 0.5, 1.0, 1.15, 1.2, 1.5, 2.0, 5.0, 12.0]


def sgd_noise(epsilon, delta):
    """σ = A·√(log(B/δ))/ε with A = 2, B = 1."""
    return 2.0 * np.sqrt(np.log(1.0 / delta)) / epsilon


def sgd_noise_log(epsilon, log_delta):
    return 2.0 * np.sqrt(-log_delta) / epsilon


def encoder_noise_log(epsilon, log_delta):
    """m = 10·log(n/(εδ)) with n = 4, in log δ."""
    return 10.0 * (np.log(4.0) - np.log(epsilon) - log_delta)


@pytest.fixture(scope="module")
def sgd_reference():
    anchor = ref.anchor(ref.sgd_naive, 1.2)
    return anchor, {e: ref.refined(ref.sgd_naive, anchor, e) for e in EPSILONS}


@pytest.fixture(scope="module")
def encoder_reference():
    anchor = ref.anchor(ref.encoder_naive, 1.2)
    return anchor, {e: ref.refined(ref.encoder_naive, anchor, e) for e in EPSILONS}


@pytest.mark.parametrize(
    "profile",
    [
        examples.noisy_sgd(),
        gdpt.from_noise_equation(sgd_noise, 2.0),
        gdpt.from_noise_equation(sgd_noise_log, 2.0, log_delta=True),
    ],
    ids=["closed-form", "equation", "equation-log"],
)
def test_refined_noisy_sgd_against_mpmath(profile, sgd_reference):
    anchor, expected = sgd_reference
    assert profile.anchor_epsilon == pytest.approx(float(anchor), abs=1e-7)
    for epsilon, value in expected.items():
        computed = profile.delta(epsilon)
        assert computed == pytest.approx(float(value), rel=1e-10), epsilon
        assert computed >= float(value) * (1 - 1e-12)  # never below the exact refinement
        assert profile.delta_lower(epsilon) <= float(value) * (1 + 1e-12)


@pytest.mark.parametrize(
    "profile",
    [examples.encoder(), gdpt.from_noise_equation(encoder_noise_log, 20.0, log_delta=True)],
    ids=["closed-form", "equation-log"],
)
def test_refined_encoder_against_mpmath(profile, encoder_reference):
    anchor, expected = encoder_reference
    assert profile.anchor_epsilon == pytest.approx(float(anchor), abs=1e-7)
    assert profile.anchor_delta == pytest.approx(float(ref.encoder_naive(anchor)), rel=1e-7)
    for epsilon, value in expected.items():
        assert profile.delta(epsilon) == pytest.approx(float(value), rel=1e-10), epsilon
        assert profile.delta_lower(epsilon) <= float(value) * (1 + 1e-12)


def test_refinement_matters_only_left_of_the_anchor(sgd_reference):
    # The paper's Figure 1: refined and naive differ near 0 and agree beyond ε₂.
    profile = examples.noisy_sgd()
    assert profile.delta(0.0) < 0.65 < profile.naive.delta(0.0) == 1.0
    for epsilon in [1.2, 2.0, 5.0]:
        assert profile.delta(epsilon) == profile.naive.delta(epsilon)


@pytest.mark.parametrize("epsilon", [2.0, 3.0, 5.0, 20.0])
def test_lower_bound_gap_is_slope_times_piece_width(epsilon):
    # Where the refined profile is the naive one, the certified lower bound falls
    # short by about |d log δ̂/dε| = 2ε times the width of the first piece: the grid
    # spacing (1/256 below 16) or the window [ε, w] (≈ 2δ̂ wide), whichever is smaller.
    profile = examples.noisy_sgd()
    upper, lower = profile.delta(epsilon), profile.delta_lower(epsilon)
    naive = math.exp(-(epsilon**2))
    window = math.log1p(naive * math.exp(-epsilon)) - math.log1p(-naive)
    spacing = 1 / 256 if epsilon < 16 else 0.2
    assert upper == pytest.approx(naive, rel=1e-12)
    assert lower <= upper
    assert (upper - lower) / upper <= 1.05 * 2 * epsilon * min(spacing, window)


@pytest.mark.parametrize(
    "exact",
    [examples.laplace(), GaussianDP(0.8), gdpt.implied_profile(1.0, 1e-3)],
    ids=["laplace", "gaussian", "implied"],
)
def test_an_exact_profile_is_its_own_refinement(exact):
    epsilons = np.array([0.0, 0.3, 1.0, 1.9, 3.0])
    np.testing.assert_allclose(
        gdpt.refine(exact).delta(epsilons), exact.delta(epsilons), rtol=1e-12
    )


def step_naive(epsilon):
    e = np.asarray(epsilon, dtype=float)
    return np.where(e < 2.0, 0.3, np.where(e < 4.0, 0.05, 0.0))


def step_refined_mp(epsilon):
    # For a step profile g(ε, ·) increases along each step, so the infimum is at ε or at a jump.
    epsilon = mpmath.mpf(epsilon)
    values = [mpmath.mpf(float(step_naive(float(epsilon))))]
    for jump, level in [(2, mpmath.mpf("0.05")), (4, mpmath.mpf(0))]:
        if jump >= epsilon:
            values.append(ref.implied(jump, level, epsilon))
    return min(values)


@pytest.mark.parametrize("epsilon", [0.0, 1.0, 1.9, 1.99, 2.0, 3.0, 3.9, 3.999, 4.0, 6.0])
def test_refine_a_discontinuous_naive_profile(epsilon):
    profile = gdpt.refine(step_naive)
    expected = float(step_refined_mp(epsilon))
    assert profile.delta(epsilon) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert profile.delta_lower(epsilon) <= expected * (1 + 1e-12)


@settings(max_examples=12, deadline=None)
@example(sigma=0.5, constant_a=0.5, constant_b=0.5, epsilon=0.5)  # h has two maxima
@given(
    sigma=st.floats(0.5, 4.0),
    constant_a=st.floats(0.5, 4.0),
    constant_b=st.floats(0.5, 3.0),
    epsilon=st.floats(0.0, 3.0),
)
def test_refined_sgd_family(sigma, constant_a, constant_b, epsilon):
    def naive(e):
        return ref.sgd_naive(e, sigma, constant_a, constant_b)

    # h can have two maxima here (at 0 when B < 1, and inside): search directly.
    with mpmath.workdps(30):
        expected = float(ref.refined_brute(naive, epsilon))
    profile = examples.noisy_sgd(sigma, constant_a, constant_b)
    assert profile.delta(epsilon) == pytest.approx(expected, rel=1e-9)
    assert profile.delta_lower(epsilon) <= expected * (1 + 1e-12)


def test_noise_equation_naive_profile_matches_inversion():
    naive = gdpt.from_noise_equation(sgd_noise, 2.0).naive
    epsilons = np.array([0.0, 0.5, 1.0, 3.0, 10.0])
    expected = np.exp(-(epsilons**2))
    np.testing.assert_allclose(naive.delta(epsilons), expected, rtol=1e-13)
    # Without log δ the tail is lost (here 1/δ overflows first: δ̂ stops near 5.6e-309,
    # an overstatement of e^{-900}); with log δ, log δ̂ = −ε² is kept.
    assert 0.0 < naive.delta(30.0) < 1e-300
    log_naive = gdpt.from_noise_equation(sgd_noise_log, 2.0, log_delta=True).naive
    assert log_naive.log_delta(30.0) == pytest.approx(-900.0, rel=1e-13)
    assert log_naive.log_delta(1000.0) == pytest.approx(-1e6, rel=1e-13)


def test_noise_equation_edge_cases():
    # δ-free equation (Laplace, σ = 1/ε): δ̂ = 0 where σ ≥ 1/ε, 1 where not.
    naive = gdpt.NoiseEquationProfile(lambda e, d: 1.0 / e + 0.0 * d, 0.5)
    assert naive.delta(3.0) == 0.0
    assert naive.delta(1.0) == 1.0


def test_noise_equation_never_understates_delta():
    naive = gdpt.NoiseEquationProfile(sgd_noise, 2.0)
    for epsilon in [0.3, 1.0, 2.5]:
        delta = naive.delta(epsilon)
        assert sgd_noise(epsilon, delta) <= 2.0  # the noise suffices at the returned δ


def test_refine_noise_paper_example():
    # §5.2: projected noisy SGD, σ = −C·log(δ)/ε, target (0.2, e⁻²): σ ≈ 8.086C < 10C
    # with (ε₀, δ₀) ≈ (0.334, 0.067).
    result = gdpt.refine_noise(lambda e, d: -np.log(d) / e, 0.2, math.exp(-2.0))
    target = mpmath.exp(-2)

    def sigma_of(e0):
        d0 = 1 - (1 - target) * (1 + mpmath.exp(e0)) / (1 + mpmath.exp(mpmath.mpf("0.2")))
        return -mpmath.log(d0) / e0

    best, smallest = ref.golden_max(lambda e0: -sigma_of(e0), 0.25, 0.4, iterations=120)
    assert result.sigma == pytest.approx(float(-smallest), rel=1e-9)
    assert result.sigma >= float(-smallest) * (1 - 1e-15)
    assert result.epsilon0 == pytest.approx(float(best), rel=1e-4)
    assert round(result.sigma, 3) == 8.086
    assert (round(result.epsilon0, 3), round(result.delta0, 3)) == (0.334, 0.067)
    assert result.sigma_naive == pytest.approx(10.0, rel=1e-14)
    assert result.saving == pytest.approx(1 - result.sigma / 10.0)
    # The guarantee used really implies the target, checked at 50 digits.
    assert ref.implied(result.epsilon0, result.delta0, 0.2) <= target


def test_refine_noise_for_a_delta_free_equation():
    # Laplace: σ = 1/ε. The (ε_end, 0) guarantee implies (ε, δ), ε_end = log((e^ε + δ)/(1 − δ)).
    result = gdpt.refine_noise(lambda e, d: 1.0 / e, 1.0, 0.1)
    epsilon_end = math.log((math.e + 0.1) / 0.9)
    assert result.sigma == pytest.approx(1.0 / epsilon_end, rel=1e-10)
    assert result.delta0 == 0.0
    assert ref.implied(result.epsilon0, 0, 1.0) <= mpmath.mpf("0.1")


def test_refine_noise_is_never_worse_than_naive():
    # An equation that only gets worse with larger ε₀ keeps the naive choice.
    result = gdpt.refine_noise(lambda e, d: e + 1.0 / d, 1.0, 0.5)
    assert result.sigma == result.sigma_naive == pytest.approx(3.0)
    assert (result.epsilon0, result.delta0) == (1.0, 0.5)


def test_refined_profile_tail_in_log_space():
    profile = gdpt.from_noise_equation(sgd_noise_log, 2.0, log_delta=True)
    assert profile.log_delta(100.0) == pytest.approx(-1e4, rel=1e-12)
    assert profile.log_delta(1e5) == pytest.approx(-1e10, rel=1e-12)


def test_refined_profile_vectorises():
    profile = examples.noisy_sgd()
    values = profile.delta(np.array([[0.0, 1.0], [2.0, 3.0]]))
    assert values.shape == (2, 2)
    assert isinstance(profile.delta(1.0), float)
    assert np.all(np.diff(profile.delta(np.linspace(0, 5, 101))) <= 0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gdpt.refine(lambda e: np.minimum(1.0, 0.1 + np.asarray(e))), "non-increasing"),
        (lambda: gdpt.refine((GaussianDP(1.0), GaussianDP(2.0))), "single profile"),
        (lambda: gdpt.refine(GaussianDP(1.0), grid=[1.0]), "at least 2"),
        (lambda: gdpt.refine(GaussianDP(1.0), grid=[-1.0, 1.0]), "grid must be in"),
        (lambda: gdpt.from_noise_equation(sgd_noise, 0.0), "sigma must be in"),
        (lambda: gdpt.from_noise_equation("sigma", 1.0), "noise_fn must be a callable"),
        (lambda: gdpt.from_noise_equation(lambda e, d: np.nan * e, 1.0), "noise_fn returned nan"),
        (lambda: gdpt.refine_noise(sgd_noise, -1.0, 0.1), "epsilon must be in"),
        (lambda: gdpt.refine_noise(sgd_noise, 1.0, 0.0), "delta must be in"),
        (lambda: gdpt.refine_noise(sgd_noise, 1.0, 1.0), "delta must be in"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call()


def test_gdp_profile_refinement_lower_bound_brackets():
    profile = gdpt.refine(lambda e: gdp.delta(1.0, e))
    epsilons = np.linspace(0, 4, 9)
    exact = gdp.delta(1.0, epsilons)
    assert np.all(profile.delta_lower(epsilons) <= exact * (1 + 1e-12))


def test_plain_python_noise_equations_singular_at_delta_zero():
    # Written with math, these raise at δ = 0, which the refinement probes; there
    # no finite noise suffices (σ = ∞), the pessimistic reading.
    noisy_sgd = gdpt.from_noise_equation(lambda e, d: 2 * math.sqrt(math.log(1 / d)) / e, 2)
    for epsilon in (0.5, 1.0, 2.0):
        assert noisy_sgd.delta(epsilon) == pytest.approx(
            gdpt.example("noisy-sgd").delta(epsilon), rel=1e-9
        )
    encoder = gdpt.from_noise_equation(lambda e, d: 10 * math.log(4 / (e * d)), 20)
    assert encoder.anchor_epsilon == pytest.approx(1.1566, abs=1e-3)
    refined = gdpt.refine_noise(lambda e, d: -math.log(d) / e, 0.2, math.exp(-2))
    assert refined.sigma == pytest.approx(8.0857, abs=1e-3)
