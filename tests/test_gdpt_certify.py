"""Certified head measurement (Theorem 4.6, Appendix D) and clip-and-rectify (Theorem 4.7)."""

import dataclasses
import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gaussdp import GaussianDP, InvalidParameterError, gdp, gdpt
from gaussdp.gdpt import examples
from tests import test_gdpt_references as ref


def laplace_mp(epsilon):
    return max(1 - mpmath.exp((mpmath.mpf(epsilon) - 2) / 2), 0)


def check_bracket(certificate, exact_sup, tolerance):
    assert certificate.mu_lower <= exact_sup <= certificate.mu_upper
    assert certificate.width <= tolerance
    assert certificate.tolerance_met


@pytest.mark.parametrize("tolerance", [1e-2, 1e-3, 1e-5])
def test_laplace_sup_is_at_zero(tolerance):
    # The GDPT of the Laplace mechanism decreases: its sup is G(0) = 2√2·erfinv(1 − e^{−1}).
    exact = float(2 * mpmath.sqrt(2) * mpmath.erfinv(1 - mpmath.exp(-1)))
    certificate = gdpt.certify(examples.laplace(), 4.0, tolerance, tail=False)
    check_bracket(certificate, exact, tolerance)
    assert certificate.argmax_epsilon == 0.0


def test_noisy_sgd_against_brute_force():
    anchor = ref.anchor(ref.sgd_naive, 1.2)

    def profile(e):
        return ref.refined(ref.sgd_naive, anchor, e)

    exact = float(ref.brute_force_sup(profile, 6.0))
    certificate = gdpt.certify(examples.noisy_sgd(), 6.0, 1e-4, tail=False)
    check_bracket(certificate, exact, 1e-4)


def test_encoder_sup_is_at_the_end_of_the_head():
    # The encoder's GDPT keeps growing (it is not GDP): the head sup is G(ε_max).
    anchor = ref.anchor(ref.encoder_naive, 1.2)
    exact = float(ref.gdpt(lambda e: ref.refined(ref.encoder_naive, anchor, e), 20))
    certificate = gdpt.certify(examples.encoder(), 20.0, 1e-3)
    check_bracket(certificate, exact, 1e-3)
    assert certificate.argmax_epsilon == 20.0
    assert certificate.tail.verdict == "not-gdp"
    assert "clip and rectify" in str(certificate)


@pytest.mark.parametrize("mu", [0.1, 1.0, 4.0])
def test_gdp_profile_certifies_mu(mu):
    certificate = gdpt.certify(GaussianDP(mu), 10.0, 1e-3, tail=False)
    check_bracket(certificate, mu, 1e-3)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_theorem_5_1_through_certify(epsilon):
    # The worst ε-DP profile has sup G = −2Φ⁻¹(1/(1 + e^ε)), attained at 0.
    exact = float(-2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(epsilon)) - 1))
    certificate = gdpt.certify(gdpt.pure_dp_profile(epsilon), 2 * epsilon, 1e-4)
    check_bracket(certificate, exact, 1e-4)
    assert certificate.tail.verdict == "pure-dp"
    assert certificate.mu_lower <= gdp.from_pure_dp(epsilon) <= certificate.mu_upper


def test_search_count_is_logarithmic():
    # The shuffled scan runs ~2·ln(n) searches in expectation, not 2n.
    certificate = gdpt.certify(examples.noisy_sgd(), 50.0, 1e-3, tail=False)
    assert certificate.steps > 60_000
    assert certificate.evaluations == certificate.steps + 1
    assert certificate.searches < 60


def test_optimised_scan_equals_the_naive_maximum():
    # The paper's optimisation changes the work, not the answer: μ⁺ is the largest step of
    # the upper staircase on the same grid, whatever the shuffle.
    profile = examples.noisy_sgd()
    tolerance = 0.05
    results = [gdpt.certify(profile, 3.0, tolerance, tail=False, seed=s) for s in (0, 1, 2)]
    steps = results[0].steps
    stairs = gdpt.staircases(profile, 3.0, steps)
    for result in results:
        assert result.mu_upper == pytest.approx(float(np.max(stairs.upper)), rel=1e-14)
        assert result.mu_lower == results[0].mu_lower


def test_bounds_are_measured_honestly():
    # A profile known only between δ_{0.9} and δ_{1.1}: the interval covers both ends.
    certificate = gdpt.certify((GaussianDP(0.9), GaussianDP(1.1)), 5.0, 1e-3, tail=False)
    assert certificate.from_bounds
    assert certificate.mu_lower <= 0.9 + 1e-12
    assert certificate.mu_upper >= 1.1
    assert not certificate.tolerance_met
    assert certificate.evaluations == 2 * (certificate.steps + 1)
    assert "wider than requested" in str(certificate)


class Bounds:
    """An accountant-like object: delta_bounds(epsilon) -> (lower, upper)."""

    calls = 0

    def delta_bounds(self, epsilon):
        Bounds.calls += 1
        return gdp.delta(0.999, epsilon), gdp.delta(1.0, epsilon)


def test_delta_bounds_objects_are_duck_typed():
    certificate = gdpt.certify(Bounds(), 5.0, 1e-3, tail=False)
    assert certificate.from_bounds
    assert certificate.mu_lower <= 0.999 + 1e-12 and certificate.mu_upper >= 1.0
    assert certificate.width <= 1e-3 + 1e-3  # the bracket adds its own 0.001
    assert Bounds.calls == 1  # one call gives both sides


def test_head_only_statement_and_tail_delta():
    certificate = gdpt.certify(examples.noisy_sgd(), 20.0, 1e-3)
    text = str(certificate)
    assert "head GDP" in text and "for eps <= 20 only" in text
    assert "not a bound" in text
    assert certificate.tail_delta == pytest.approx(math.exp(-400.0), rel=1e-12)
    deep = gdpt.certify(examples.noisy_sgd(), 40.0, 1e-2, tail=False)
    assert deep.tail_delta == 0.0
    assert deep.log_tail_delta == pytest.approx(-1600.0, rel=1e-13)
    assert "exp(-1600)" in str(deep)


def test_certificate_is_immutable_and_unpacks_as_an_interval():
    certificate = gdpt.certify(GaussianDP(1.0), 1.0, 0.1, tail=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        certificate.mu_upper = 0.0
    mu_lower, mu_upper = certificate
    assert (mu_lower, mu_upper) == (certificate.mu_lower, certificate.mu_upper)


def test_no_guarantee_at_zero_gives_infinite_mu():
    certificate = gdpt.certify(examples.noisy_sgd().naive, 5.0, 1e-2, tail=False)
    assert certificate.mu_upper == math.inf
    assert certificate.mu_lower == math.inf  # δ(0) = 1: no finite μ at all
    assert certificate.width == 0.0 and certificate.tolerance_met
    assert "inf" in str(certificate)


# ---------------------------------------------------------------------------
# Property: certify brackets the true supremum for compositions of GDP and pure-DP pieces
# ---------------------------------------------------------------------------


def composed_float(mu, pure_epsilons):
    """Float profile of μ-GDP ⊗ RR(ε_1) ⊗ …: Σ_s P(s)·H_{ε − ℓ(s)}(N(μ,1)‖N(0,1))."""
    atoms = []
    for signs in itertools.product((1, -1), repeat=len(pure_epsilons)):
        weight, loss = 1.0, 0.0
        for sign, e in zip(signs, pure_epsilons, strict=True):
            p = 1.0 / (1.0 + math.exp(-e))
            weight *= p if sign > 0 else 1.0 - p
            loss += sign * e
        atoms.append((weight, loss))

    def hockey(x):
        # H_x(N(μ,1)‖N(0,1)); for x < 0 it is 1 − e^x + e^x·δ_μ(−x).
        if mu == 0.0:
            return np.maximum(0.0, -np.expm1(np.minimum(x, 0.0)))
        positive = gdp.delta(mu, np.maximum(x, 0.0))
        negative = -np.expm1(np.minimum(x, 0.0)) + np.exp(np.minimum(x, 0.0)) * gdp.delta(
            mu, np.maximum(-x, 0.0)
        )
        return np.where(x >= 0, positive, negative)

    def profile(epsilon):
        e = np.asarray(epsilon, dtype=float)
        return np.clip(sum(w * hockey(e - loss) for w, loss in atoms), 0.0, 1.0)

    return profile


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    gaussian_mus=st.lists(st.floats(0.2, 1.5), min_size=0, max_size=3),
    pure_epsilons=st.lists(st.floats(0.1, 1.5), min_size=0, max_size=2),
    epsilon_max=st.floats(1.0, 5.0),
)
def test_certify_brackets_the_true_supremum(gaussian_mus, pure_epsilons, epsilon_max):
    mu = gdp.compose(gaussian_mus) if gaussian_mus else 0.0
    if mu == 0.0 and not pure_epsilons:
        pure_epsilons = [0.5]
    tolerance = 1e-2
    certificate = gdpt.certify(
        composed_float(mu, pure_epsilons), epsilon_max, tolerance, tail=False
    )
    if not pure_epsilons:
        exact = mu  # the GDPT of a GDP(μ) profile is the constant μ
    else:
        exact = float(
            ref.brute_force_sup(lambda e: ref.composed_delta(mu, pure_epsilons, e), epsilon_max)
        )
    assert certificate.mu_lower <= exact + 1e-9
    assert certificate.mu_upper >= exact
    assert certificate.width <= tolerance


# ---------------------------------------------------------------------------
# Clip and rectify
# ---------------------------------------------------------------------------


def test_clip_and_rectify_scale():
    assert gdpt.clip_and_rectify(50.0, -1.0, 1.0) == pytest.approx(0.04)
    np.testing.assert_allclose(gdpt.clip_and_rectify([1.0, 2.0], 0.0, 3.0), [3.0, 1.5])


def test_rectified_mechanism_is_epsilon_h_dp():
    # R∘C∘A is a Laplace mechanism with sensitivity y⁺ − y⁻ and scale b: exactly ε_h-DP,
    # so its profile is 0 from ε_h on and its GDPT vanishes there.
    scale = gdpt.clip_and_rectify(8.0, -2.0, 3.0)
    laplace = examples.laplace(scale=scale, sensitivity=5.0)
    assert laplace.epsilon0 == pytest.approx(8.0, rel=1e-15)
    assert laplace.delta(8.0) == 0.0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((0.0, 0.0, 1.0), "epsilon_h must be in"),
        ((1.0, 1.0, 1.0), "upper must exceed lower"),
        ((1.0, 0.0, math.inf), "upper must be in"),
        ((1.0, math.nan, 1.0), "lower must be in"),
    ],
)
def test_clip_and_rectify_bad_input(arguments, message):
    with pytest.raises(InvalidParameterError, match=message):
        gdpt.clip_and_rectify(*arguments)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon_max": 0.0}, "epsilon_max must be in"),
        ({"epsilon_max": -1.0}, "epsilon_max must be in"),
        ({"epsilon_max": math.inf}, "epsilon_max must be in"),
        ({"tolerance": 0.0}, "tolerance must be in"),
        ({"tolerance": -1e-3}, "tolerance must be in"),
        ({"tolerance": 1e-9}, "needs .* grid cells"),
    ],
)
def test_bad_parameters(kwargs, message):
    arguments = {"epsilon_max": 5.0, "tolerance": 1e-2} | kwargs
    with pytest.raises(InvalidParameterError, match=message):
        gdpt.certify(GaussianDP(1.0), **arguments)


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        (lambda e: np.where(np.asarray(e) > 2.5, np.nan, 0.1), r"returned nan at epsilon=2\.5"),
        (lambda e: np.where(np.asarray(e) > 3.0, 0.5, 0.1), "non-increasing"),
        (lambda e: np.where(np.asarray(e) > 1.0, -1e-3, 0.1), "negative delta"),
        (lambda e: np.where(np.asarray(e) < 1.0, 1.2, 0.1), "above 1"),
        ((GaussianDP(2.0), GaussianDP(1.0)), "lower bound exceeds its upper bound"),
        ((GaussianDP(1.0),), "pair"),
    ],
)
def test_bad_profiles(profile, message):
    with pytest.raises(InvalidParameterError, match=message):
        gdpt.certify(profile, 5.0, 1e-2, tail=False)


def test_a_profile_that_fails_in_the_far_tail_is_certified_without_the_tail():
    # Laplace(1/2)-style profile written with math.exp: overflows at epsilon ~ 2048.
    def laplace(epsilon):
        return max(0.0, 1.0 - math.exp(epsilon / 2.0 - 1.0))

    with pytest.raises(InvalidParameterError, match="tail=False"):
        gdpt.certify(laplace, 10.0, 1e-3)
    certificate = gdpt.certify(laplace, 10.0, 1e-3, tail=False)
    # sup of the GDPT at epsilon = 0: mu with delta_mu(0) = 1 - e^{-1}
    exact = gdp.mu(0.0, 1.0 - math.exp(-1.0))
    assert certificate.mu_lower <= exact <= certificate.mu_upper
    assert certificate.tail is None


def test_search_count_is_logarithmic_for_a_flat_gdpt():
    # The GDPT of a GDP profile is flat: points that tie the running maximum at
    # rounding level must not each trigger a search (once 44,000 searches, 2 min).
    certificate = gdpt.certify(GaussianDP(1.3), 50.0, 1e-4, tail=False)
    assert certificate.mu_lower <= 1.3 <= certificate.mu_upper
    assert certificate.width <= 1e-4
    assert certificate.searches < 100


def test_profile_undefined_at_zero_is_a_clear_error():
    with pytest.raises(ValueError, match=r"epsilon=0\.0"):
        gdpt.certify(lambda e: min(1.0, 0.54 / e), 5.0, 1e-2, tail=False)
