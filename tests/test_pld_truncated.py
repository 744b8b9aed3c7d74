"""TruncatedPoisson of a Gaussian: its two pairs against mpmath, an attack and dp_accounting."""

import math

import dp_accounting
import mpmath
import numpy as np
import pytest
from dp_accounting import pld
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from gaussdp import (
    Gaussian,
    Laplace,
    Neighbouring,
    PoissonSubsampled,
    Repeated,
    TruncatedPoisson,
    account,
)
from gaussdp._validation import InvalidParameterError
from gaussdp.mechanisms import dumps, loads
from gaussdp.pld.dominating_pairs import dominating_losses
from gaussdp.pld.losses import BracketedLoss
from gaussdp.pld.truncated import inclusion_probability
from gaussdp.pld.truncated_attack import attack_losses

DELTA = 1e-5


def _binomial_sums(n, q, b):
    """mpmath: P(K ≥ B), E[qB/(K + 1); K ≥ B] and P(x* in the batch), K ~ Binomial(N − 1, q)."""
    mpmath.mp.dps = 40
    q = mpmath.mpf(q)
    pmf = [mpmath.binomial(n - 1, k) * q**k * (1 - q) ** (n - 1 - k) for k in range(n)]
    cut = sum(pmf[b:])
    swapped = sum(pmf[k] * q * b / (k + 1) for k in range(b, n))
    kept = q * sum(pmf[:b])
    return cut, swapped / cut, kept + swapped


def _subsampled_delta(mu, rate, epsilon):
    """max over directions of δ(ε) for (1 − r)N(0, 1) + r N(μ, 1) against N(0, 1), by mpmath."""
    mpmath.mp.dps = 40
    mu, rate, eps = mpmath.mpf(mu), mpmath.mpf(rate), mpmath.mpf(epsilon)
    # remove: loss log(1 − r + r e^{μz − μ²/2}) > ε ⟺ z > z₁
    z1 = (mpmath.log((mpmath.exp(eps) - 1 + rate) / rate) + mu**2 / 2) / mu
    remove = (1 - rate) * mpmath.ncdf(-z1) + rate * mpmath.ncdf(mu - z1)
    remove -= mpmath.exp(eps) * mpmath.ncdf(-z1)
    # add: −loss > ε ⟺ 1 − r + r e^{μz − μ²/2} < e^{−ε}
    inside = (mpmath.exp(-eps) - 1 + rate) / rate
    add = mpmath.mpf(0)
    if inside > 0:
        z2 = (mpmath.log(inside) + mu**2 / 2) / mu
        mixture_below = (1 - rate) * mpmath.ncdf(z2) + rate * mpmath.ncdf(z2 - mu)
        add = mpmath.ncdf(z2) - mpmath.exp(eps) * mixture_below
    return remove, add


N, Q, B, SIGMA = 30, 0.2, 5, 1.0


def test_probabilities_against_mpmath_sums():
    sampler = TruncatedPoisson(Gaussian(SIGMA), Q, B, N)
    cut, q_bar, q_eff = (float(v) for v in _binomial_sums(N, Q, B))
    assert sampler.truncation_probability == pytest.approx(cut, rel=1e-12)
    remove, _ = dominating_losses(sampler, Neighbouring.ADD_REMOVE)
    assert isinstance(remove, BracketedLoss)
    assert remove.upper.weights[1] == pytest.approx(cut, rel=1e-12)
    assert remove.upper.components[1].probabilities[1] == pytest.approx(q_bar, rel=1e-12)
    assert inclusion_probability(sampler) == pytest.approx(q_eff, rel=1e-12)


def _instance_deltas(n, q, b, sigma, epsilons, against=1.0):
    """δ(ε) at each ε of an actual pair of data sets by quadrature on a grid (max over
    directions); the two densities on the grid are computed once for all the ε.

    The other records contribute u, the record −a u + √(1 − a²) w (w ⊥ u); output in 2-D.
    """
    across = math.sqrt(1.0 - against**2)
    k = np.arange(n)
    pi = stats.binom.pmf(k, n - 1, q)
    y = np.linspace(-10 * sigma - 2, b + 10 * sigma, 6001)
    w = np.linspace(-10 * sigma, 1 + 10 * sigma, 1201 if across > 0 else 1)

    def density(centres, weights):
        return stats.norm.pdf(y[:, None] - centres[None, :], scale=sigma) @ weights

    def normal_w(centre):
        return stats.norm.pdf(w, loc=centre, scale=sigma) if across > 0 else np.ones(1)

    keep = np.where(k >= b, b / (k + 1), 1.0)
    without_u = density(np.minimum(k, b).astype(float), pi)
    moved = np.where(k <= b - 1, k - against, b - 1 - against).astype(float)
    without = np.outer(without_u, normal_w(0.0))
    with_record = (
        (1 - q) * without
        + q * np.outer(density(moved, pi * keep), normal_w(across))
        + q * np.outer(density(np.full(n, float(b)), pi * (1 - keep)), normal_w(0.0))
    )

    def integral(values):
        inner = np.trapezoid(values, w, axis=1) if across > 0 else values[:, 0]
        return np.trapezoid(inner, y)

    deltas = []
    for epsilon in epsilons:
        e = math.exp(epsilon)
        remove = integral(np.maximum(with_record - e * without, 0))
        add = integral(np.maximum(without - e * with_record, 0))
        deltas.append(max(remove, add))
    return deltas


@pytest.mark.parametrize("against", [1.0, 0.3])
def test_attack_pairs_are_the_binned_instance(against):
    # The binned pair is a post-processing of the instance: below its δ, and close to it.
    remove, add = attack_losses(N, Q, B, 1.0 / SIGMA, against, spacing=0.05)
    epsilons = (0.1, 0.5)
    exacts = _instance_deltas(N, Q, B, SIGMA, epsilons, against)
    for epsilon, exact in zip(epsilons, exacts, strict=True):
        binned = max(
            float(np.sum(np.maximum(p.p_masses - math.exp(epsilon) * p.q_masses, 0)))
            for p in (remove, add)
        )
        assert binned <= exact * (1 + 1e-6)
        assert binned >= exact * 0.98


def test_one_step_bounds_are_the_two_pairs_and_bracket_an_attack():
    epsilons = [0.1, 1.0]
    cut, q_bar, q_eff = _binomial_sums(N, Q, B)
    lower, upper = account(
        TruncatedPoisson(Gaussian(SIGMA), Q, B, N), grid_spacing=1e-4
    ).delta_bounds(epsilons)
    instances = [_instance_deltas(N, Q, B, SIGMA, epsilons, a) for a in (0.0, 0.3)]
    for index, epsilon in enumerate(epsilons):
        kept = _subsampled_delta(1 / SIGMA, Q, epsilon)
        swapped = _subsampled_delta(2 / SIGMA, q_bar, epsilon)
        revealed = float(max((1 - cut) * a + cut * b for a, b in zip(kept, swapped, strict=True)))
        assert revealed <= upper[index] <= revealed * (1 + 1e-3)
        assert lower[index] <= upper[index]
        # pairs of actual neighbouring data sets are dominated by the upper pair
        zero_others = float(max(_subsampled_delta(1 / SIGMA, q_eff, epsilon)))
        assert zero_others <= upper[index]
        attacks = [deltas[index] for deltas in instances]
        assert max(attacks) <= upper[index]
        # the lower pair is one of these attacks (binned) or the zero-others pair
        assert lower[index] <= max(zero_others, *attacks)


def test_no_cut_is_plain_poisson_exactly():
    sampler = TruncatedPoisson(Gaussian(0.9), 0.05, 200, 200)  # B = N: nothing is ever cut
    assert sampler.truncation_probability == 0.0
    mine = account(Repeated(sampler, 30)).epsilon_bounds(DELTA)
    poisson = account(Repeated(sampler.untruncated, 30)).epsilon_bounds(DELTA)
    np.testing.assert_allclose(mine, poisson, rtol=1e-9)


@pytest.mark.parametrize("batch", [40, 70])
def test_at_least_as_tight_as_dp_accounting(batch):
    n, q, sigma, steps = 1000, 0.05, 1.0, 20
    # Their 1e-3 grid (0.3 s; 5 s at their default 1e-4, within 1e-5 of it here): the
    # benchmark compares at their defaults.
    accountant = pld.PLDAccountant(value_discretization_interval=1e-3)
    accountant.compose(
        dp_accounting.SelfComposedDpEvent(
            dp_accounting.TruncatedSubsampledGaussianDpEvent(n, q, batch, sigma), steps
        )
    )
    theirs = accountant.get_epsilon(DELTA)
    lower, upper = account(
        Repeated(TruncatedPoisson(Gaussian(sigma), q, batch, n), steps)
    ).epsilon_bounds(DELTA)
    assert lower <= upper <= theirs


@settings(max_examples=4, deadline=None)
@given(
    sigma=st.floats(0.8, 3.0),
    factor=st.floats(1.1, 2.0),
    steps=st.integers(1, 8),
    batch=st.integers(5, 30),
)
def test_monotone_in_sigma_and_steps(sigma, factor, steps, batch):
    def bounds(s, t):
        run = Repeated(TruncatedPoisson(Gaussian(s), 0.2, batch, 60), t)
        return account(run, grid_spacing=2e-3).epsilon_bounds(DELTA)

    base_lower, base_upper = bounds(sigma, steps)
    assert base_lower <= base_upper
    noisier = bounds(sigma * factor, steps)
    longer = bounds(sigma, steps + 3)
    # The upper pair is monotone in σ; the lower pair is the most revealing of a few
    # attacks, chosen per σ, so only what certification implies is asserted for it.
    assert noisier[1] <= base_upper + 1e-9 and noisier[0] <= base_upper
    assert longer[0] >= base_lower - 1e-9 and longer[1] >= base_upper - 1e-9


def test_pipeline_files_round_trip():
    run = Repeated(TruncatedPoisson(Gaussian(1.0, 0.5), 0.01, 1100, 100000), 1000)
    assert loads(dumps(run)).mechanism == run


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: TruncatedPoisson(Gaussian(1.0), 0.01, 0, 100), r"^max_batch_size must be"),
        (lambda: TruncatedPoisson(Gaussian(1.0), 0.01, 101, 100), r"^max_batch_size must be in"),
        (lambda: TruncatedPoisson(Gaussian(1.0), 1.5, 10, 100), r"^sampling_probability must be"),
        (
            lambda: account(TruncatedPoisson(Laplace(1.0), 0.01, 10, 100)),
            r"Gaussian inner mechanism only, got Laplace$",
        ),
        (
            lambda: account(
                TruncatedPoisson(Gaussian(1.0), 0.01, 10, 100), neighbouring=Neighbouring.REPLACE
            ),
            r"add/remove neighbouring only",
        ),
    ],
)
def test_bad_input_is_refused_in_one_line(build, message):
    with pytest.raises(InvalidParameterError, match=message) as caught:
        build()
    assert "\n" not in str(caught.value)


def test_the_binomial_range_of_the_attacks_is_its_1e30_quantiles():
    # scipy's isf(1e-30) forms 1 − 1e-30 = 1 and returns the largest k: bisected on sf instead
    from gaussdp._binomial import binomial_lower_quantile, binomial_upper_quantile

    high = binomial_upper_quantile(99_999, 0.01, 1e-30)
    assert stats.binom.sf(high, 99_999, 0.01) <= 1e-30 < stats.binom.sf(high - 1, 99_999, 0.01)
    low = binomial_lower_quantile(99_999, 0.01, 1e-30)
    assert low == int(stats.binom.ppf(1e-30, 99_999, 0.01))
    assert stats.binom.cdf(low - 1, 99_999, 0.01) < 1e-30 <= stats.binom.cdf(low, 99_999, 0.01)


def test_a_small_batch_is_more_private_than_poisson():
    # ε is not monotone in B: B = 1 keeps a record with probability about 1/N, not q.
    n, q, steps = 1000, 0.05, 20
    _, small = account(Repeated(TruncatedPoisson(Gaussian(1.0), q, 1, n), steps)).epsilon_bounds(
        DELTA
    )
    poisson_lower, _ = account(Repeated(PoissonSubsampled(Gaussian(1.0), q), steps)).epsilon_bounds(
        DELTA
    )
    assert small < poisson_lower
