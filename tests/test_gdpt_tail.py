"""The identification criterion (Theorems 4.3–4.4): lim ε/√(−2 log δ(ε)), estimated."""

import math
import warnings

import numpy as np
import pytest

from gaussdp import InvalidParameterError, gdp, gdpt
from gaussdp.gdpt import examples


class LogProfile:
    """A profile given by its log δ (and δ = exp of it)."""

    def __init__(self, log_delta):
        self._log_delta = log_delta

    def log_delta(self, epsilon):
        with np.errstate(divide="ignore"):
            return np.minimum(self._log_delta(np.asarray(epsilon, dtype=float)), 0.0)

    def delta(self, epsilon):
        return np.exp(self.log_delta(epsilon))


def gaussian(mu):
    return LogProfile(lambda e: gdp.log_delta(mu, e))


def test_the_papers_three_examples():
    # GDPT paper §4: the limits are 0 (Laplace), √(1/2) (SGD) and +∞ (ICEA).
    laplace = gdpt.tail_estimate(examples.laplace())
    assert laplace.limit == 0.0
    assert laplace.verdict == "pure-dp"
    assert laplace.zero_epsilon == pytest.approx(2.0, rel=1e-12)
    sgd = gdpt.tail_estimate(examples.noisy_sgd())
    assert sgd.verdict == "gdp"
    assert sgd.limit == pytest.approx(math.sqrt(0.5), rel=1e-8)
    encoder = gdpt.tail_estimate(examples.encoder())
    assert encoder.verdict == "not-gdp"
    assert encoder.limit == math.inf
    assert not encoder.is_gdp and sgd.is_gdp and laplace.is_gdp


@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 3.0, 8.0])
def test_gdp_profiles_have_limit_mu(mu):
    assert gdpt.tail_limit(gaussian(mu)) == pytest.approx(mu, rel=1e-8)


@pytest.mark.parametrize(("mu", "pure"), [(1.0, 1.0), (0.5, 3.0)])
def test_composition_with_pure_dp_keeps_the_gaussian_limit(mu, pure):
    # μ-GDP ⊗ ε₀-DP (randomized response): δ(ε) = p δ_μ(ε − ε₀) + (1 − p) δ_μ(ε + ε₀) for
    # ε ≥ ε₀, p = e^{ε₀}/(1 + e^{ε₀}); the tail is that of δ_μ shifted, so the limit is μ.
    p = math.exp(pure) / (1 + math.exp(pure))

    def log_delta(e):
        e = np.maximum(e, pure)
        return np.logaddexp(
            math.log(p) + gdp.log_delta(mu, e - pure), math.log1p(-p) + gdp.log_delta(mu, e + pure)
        )

    assert gdpt.tail_limit(LogProfile(log_delta), epsilon_start=2 * pure) == pytest.approx(
        mu, rel=1e-4
    )


def test_mixture_takes_the_heavier_tail():
    profile = LogProfile(
        lambda e: np.logaddexp(
            math.log(0.9) + gdp.log_delta(0.5, e), math.log(0.1) + gdp.log_delta(2.0, e)
        )
    )
    assert gdpt.tail_limit(profile) == pytest.approx(2.0, rel=1e-4)


@pytest.mark.parametrize(
    "log_delta",
    [
        lambda e: -e,  # exponential tail (e.g. Laplace-like RDP): not GDP
        lambda e: -2.0 * np.log(e),  # polynomial tail
        lambda e: -(e**2) / np.log(e + 2.0),  # just too heavy: ε/√(−2 log δ) ~ √(log ε)
    ],
    ids=["exponential", "polynomial", "log-corrected"],
)
def test_heavy_tails_are_not_gdp(log_delta):
    estimate = gdpt.tail_estimate(LogProfile(log_delta))
    assert estimate.verdict == "not-gdp"
    assert estimate.limit == math.inf


def test_lighter_than_gaussian_tail_has_limit_zero():
    # δ = exp(−ε³): ε/√(2ε³) → 0 like ε^{−1/2}; extrapolated to well below the last value.
    estimate = gdpt.tail_estimate(LogProfile(lambda e: -(e**3)))
    assert estimate.verdict == "gdp"
    assert estimate.limit < 1e-4 < estimate.transforms[-1]


def test_subsampling_does_not_change_the_tail():
    # §5.3: (ε, δ) → (log(1 − γ + γe^ε), γδ) leaves lim ε/√(−2 log δ) unchanged.
    base = examples.noisy_sgd()
    for gamma in (0.5, 0.01):
        sub = gdpt.subsample_profile(base, gamma)
        assert gdpt.tail_limit(sub) == pytest.approx(math.sqrt(0.5), rel=1e-6)


def test_underflowing_callable_is_flagged():
    # exp(−ε²) underflows near ε = 27: a zero that is not a true zero.
    with pytest.warns(RuntimeWarning, match="underflows"):
        limit = gdpt.tail_limit(lambda e: np.exp(-(np.asarray(e) ** 2)))
    assert limit == pytest.approx(math.sqrt(0.5), rel=0.05)
    estimate = gdpt.tail_estimate(lambda e: np.exp(-(np.asarray(e) ** 2)))
    assert estimate.underflow and estimate.verdict == "gdp"
    assert estimate.zero_epsilon == pytest.approx(27.3, abs=0.1)
    assert "log_delta" in str(estimate)


def test_a_true_zero_is_not_flagged():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gdpt.tail_limit(lambda e: np.maximum(0.0, 0.3 - 0.1 * np.asarray(e))) == 0.0


def test_estimates_are_labelled():
    assert "not a bound" in str(gdpt.tail_estimate(examples.noisy_sgd()))
    assert "exact" in str(gdpt.tail_estimate(examples.laplace()))
    assert "not GDP" in str(gdpt.tail_estimate(examples.encoder()))


def test_too_few_values_is_undetermined_and_pessimistic():
    estimate = gdpt.tail_estimate(lambda e: np.ones_like(np.asarray(e, dtype=float)))
    assert estimate.verdict == "undetermined"
    assert estimate.limit == math.inf
    assert "undetermined" in str(estimate)


def test_evidence_is_returned():
    estimate = gdpt.tail_estimate(gaussian(1.0), epsilon_start=0.5, doublings=6)
    assert estimate.epsilons == tuple(0.5 * 2.0**k for k in range(7))
    np.testing.assert_allclose(estimate.transforms, 1.0, rtol=1e-9)
    assert estimate.evaluations == 7 + 3  # and the three checks of the head (0, 0.5)


def test_bad_input():
    with pytest.raises(InvalidParameterError, match="epsilon_start must be in"):
        gdpt.tail_limit(gaussian(1.0), epsilon_start=0.0)
    with pytest.raises(InvalidParameterError, match="doublings must be an integer >= 3"):
        gdpt.tail_limit(gaussian(1.0), doublings=2)
    with pytest.raises(InvalidParameterError, match="non-increasing"):
        gdpt.tail_limit(lambda e: np.minimum(1.0, 1e-3 * np.asarray(e)))


def test_a_profile_that_levels_off_is_reported_with_its_floor():
    # What a numerical accountant's pessimistic profile does with unresolved mass.
    profile = LogProfile(lambda e: np.maximum(gdp.log_delta(1.0, e), math.log(1e-14)))
    estimate = gdpt.tail_estimate(profile)
    assert estimate.verdict == "not-gdp"
    assert estimate.floor_delta == pytest.approx(1e-14, rel=1e-12)
    assert "levels off at 1e-14" in str(estimate)
    certificate = gdpt.certify(profile, 5.0, 1e-2)
    assert "except with probability" in str(certificate)


def test_a_profile_invalid_near_zero_is_rejected_not_extrapolated():
    def invalid_below_one(epsilon):
        return np.where(np.asarray(epsilon) < 0.3, 1.5, np.exp(-(np.asarray(epsilon) ** 2)))

    with pytest.raises(InvalidParameterError, match=r"delta above 1 \(1.5\) at epsilon=0.125"):
        gdpt.tail_limit(invalid_below_one)


def test_a_profile_undefined_at_zero_is_estimated_from_positive_epsilons():
    # The encoder's 1/ε tail written as a plain Python function: it raises at
    # ε = 0, where the tail limit never needs it (a CI run once failed on this).
    def one_over_epsilon(epsilon):
        return min(1.0, 0.54 / epsilon)

    assert gdpt.tail_limit(one_over_epsilon) == math.inf
    assert gdpt.tail_estimate(one_over_epsilon).verdict == "not-gdp"
