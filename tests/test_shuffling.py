"""Shuffling: upper bounds without amplification, Chua et al.'s certified lower bound.

References: the closed-form Gaussian (the upper bound is one Gaussian per epoch),
the ``ShuffleAccountant`` of Google's dpsgd_batch_sampler_accounting as vendored in
the ``random-allocation`` package (Chua et al.'s lower bound, computed by their
code), and its cube test (a coarser post-processing of the same pair, so a lower
bound on ours).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaussdp import (
    Gaussian,
    Neighbouring,
    PoissonSubsampled,
    Repeated,
    Shuffled,
    account,
    gdp,
)
from gaussdp.mechanisms import as_if_poisson
from gaussdp.pld.losses import BracketedLoss, GaussianLoss
from gaussdp.pld.shuffling import max_statistic_loss, shuffled_losses

# Chua et al.'s own code (random-allocation 1.0.5, ShuffleAccountant, their optimistic PLD
# at discretisation 1e-3), as computed by benchmarks/shuffling_reference.py. The package
# is not a test extra: it pins numpy < 2.2.
CHUA_EPSILONS = {  # (σ, steps per epoch, epochs) -> their ε at δ = 1e-5
    (1.0, 100, 1): 4.063149765133858,
    (2.0, 10, 1): 1.4888225495815277,
    (1.0, 10, 3): 7.865856127782133,
}
# Their single-epoch δ lower bound (the best test {max_s x_s > C}) at σ = 1, 100 steps,
# for ε = 1, 2, 4.
CHUA_CUBE_DELTAS = [0.016705100587379076, 0.0023576482422469703, 1.2390265525404176e-05]


def _bounds(sigma, steps, epochs, delta=1e-5, neighbouring=None):
    result = account(Repeated(Shuffled(Gaussian(sigma), steps), epochs), neighbouring=neighbouring)
    return result, result.epsilon_bounds(delta)


def test_the_pair_is_a_bracket_of_the_gaussian_and_chua_et_al():
    remove, add = shuffled_losses(Shuffled(Gaussian(2.0), 10), Neighbouring.ADD_REMOVE)
    for loss in (remove, add):
        assert isinstance(loss, BracketedLoss)
        assert loss.upper == GaussianLoss(0.5)
        assert "Chua" in loss.caveat
    # the lower pair's masses are probability distributions, and log(p/q) their loss
    lower = remove.lower
    assert math.isclose(lower.p_masses.sum(), 1.0, rel_tol=1e-12)
    assert math.isclose(lower.q_masses.sum(), 1.0, rel_tol=1e-12)
    both = (lower.p_masses > 1e-300) & (lower.q_masses > 1e-300)  # (not subnormal)
    ratio = np.log(lower.p_masses[both]) - np.log(lower.q_masses[both])
    np.testing.assert_allclose(ratio, lower.losses[both], atol=1e-9)
    # add is remove swapped
    np.testing.assert_allclose(add.lower.losses, -remove.lower.losses[::-1])


def test_upper_bound_is_the_plain_gaussian_once_per_epoch():
    _, (lower, upper) = _bounds(1.0, 10, 4)
    exact = gdp.epsilon(math.sqrt(4) / 1.0, 1e-5)  # μ = √E/σ, closed form
    assert lower <= upper
    assert upper >= exact
    assert upper == pytest.approx(exact, rel=1e-3)


def test_lower_bound_agrees_with_chua_et_al_code():
    for (sigma, steps, epochs), theirs in CHUA_EPSILONS.items():
        _, (lower, upper) = _bounds(sigma, steps, epochs)
        # Their optimistic PLD (discretisation 1e-3) of the same pair: ours is at least it
        # (finer slices, and the larger of the two directions) and close to it.
        assert lower >= theirs - 1e-6
        assert lower == pytest.approx(theirs, rel=2e-3)
        assert lower <= upper


def test_lower_bound_dominates_chua_et_al_cube_test():
    # Their single-epoch δ lower bound (the best test {max_s x_s > C}) is a post-processing of
    # the max statistic our pair is made of: our δ lower bound must be at least it.
    result, _ = _bounds(1.0, 100, 1)
    epsilons = np.array([1.0, 2.0, 4.0])
    ours, _ = result.delta_bounds(epsilons)
    assert np.all(ours >= np.asarray(CHUA_CUBE_DELTAS) * (1 - 1e-6))


def test_lower_bound_exceeds_poisson_where_chua_et_al_say_it_does():
    # One epoch of 1000 steps at σ = 0.8, δ = 1e-6 (the single-epoch regime of Chua et al.
    # 2024): the shuffled run is certainly far less private than its Poisson accounting.
    result, (lower, upper) = _bounds(0.8, 1000, 1, delta=1e-6)
    poisson = result.as_if_poisson().epsilon(1e-6)
    assert lower > 5 * poisson
    assert lower <= upper
    report = result.gdp(deltas=[1e-6])
    assert any("Chua" in line for line in report.caveats)
    assert any("exceeds" in line and "Poisson" in line for line in report.caveats)
    assert "understates" in report.to_text()
    assert report.to_dict()["caveats"] == list(report.caveats)
    assert "**Caveat:**" in report.to_markdown()


def test_as_if_poisson_is_poisson_with_the_same_expected_batch():
    run = Repeated(Shuffled(Gaussian(1.0), 100), 10)
    poisson = Repeated(Repeated(PoissonSubsampled(Gaussian(1.0), 0.01), 100), 10)
    assert as_if_poisson(run) == poisson
    assert as_if_poisson(Gaussian(1.0)) is None


def test_replace_doubles_the_upper_bound_and_keeps_the_bracket():
    result, (lower, upper) = _bounds(2.0, 10, 1, neighbouring=Neighbouring.REPLACE)
    assert upper == pytest.approx(gdp.epsilon(1.0, 1e-5), rel=1e-3)  # μ = 2Δ/σ
    assert 0.0 < lower <= upper
    assert result.as_if_poisson() is None  # Poisson is accounted under add/remove only


def test_no_accuracy_warning_for_a_gap_that_is_science():
    result, _ = _bounds(1.0, 10, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result.epsilon_bounds(1e-5)
    assert result.caveats and "no amplification" in result.caveats[0]


def test_a_non_gaussian_inner_mechanism_is_refused_in_one_line():
    from gaussdp import InvalidParameterError, Laplace

    with pytest.raises(InvalidParameterError, match="Gaussian inner mechanism") as error:
        account(Shuffled(Laplace(1.0), 10))
    assert "\n" not in str(error.value)


def test_max_statistic_loss_is_exact_for_one_step():
    # t = 1: M is one normal, so the pair is N(2, 1) vs N(1, 1): a Gaussian of μ = 1.
    loss = max_statistic_loss(2.0, 1.0, 1)
    (lower_sf_p, lower_sf_q) = loss.sf(np.array([0.5]))
    exact_p, exact_q = GaussianLoss(1.0).sf(np.array([0.5]))
    assert lower_sf_p[0] == pytest.approx(exact_p[0], abs=2e-4)
    assert lower_sf_q[0] == pytest.approx(exact_q[0], abs=2e-4)


@settings(max_examples=2, deadline=None)
@given(sigma=st.sampled_from([0.8, 1.0, 1.5]), factor=st.sampled_from([1.25, 2.0]))
def test_monotone_in_sigma_and_epochs(sigma, factor):
    _, (lower, upper) = _bounds(sigma, 5, 1)
    _, (lower_noisier, upper_noisier) = _bounds(sigma * factor, 5, 1)
    _, (lower_longer, upper_longer) = _bounds(sigma, 5, 2)
    assert lower_noisier <= lower + 1e-9 and upper_noisier <= upper + 1e-9
    assert lower_longer >= lower - 1e-9 and upper_longer >= upper - 1e-9


def test_slice_masses_of_the_maximum_against_mpmath():
    # F_m(c) = Φ(c − m)·Φ(c)^{t−1}; slice masses F(c2) − F(c1) at 50 digits, in both tails.
    mpmath = pytest.importorskip("mpmath")
    from gaussdp.pld import shuffling

    mpmath.mp.dps = 50

    def cdf(c, m, t):
        return mpmath.ncdf(mpmath.mpf(c) - m) * mpmath.ncdf(mpmath.mpf(c)) ** (t - 1)

    for m, t in [(1.6, 3), (2.0, 100)]:
        for c1 in (-2.0, 0.5, 3.0, 9.0):
            c2 = c1 + 1e-3
            log_cdf = shuffling._log_cdf_of_maximum(np.array([c1, c2]), m, t)
            mass = float(np.exp(shuffling._slice_log_masses(log_cdf))[0])
            exact = cdf(c2, mpmath.mpf(m), t) - cdf(c1, mpmath.mpf(m), t)
            assert mass == pytest.approx(float(exact), rel=1e-9)


def test_the_tail_limit_is_the_inner_gaussians():
    # Both pairs have the inner Gaussian's tail: the lower bound's μ at tiny δ meets it.
    from gaussdp.report.tail import tail_mu

    result, _ = _bounds(1.0, 10, 1)
    assert tail_mu(result.mechanism) == 1.0
    lower, _ = result.epsilon_bounds(1e-12, warn=False)
    assert 0.999 < gdp.mu(float(lower), 1e-12) <= 1.0
