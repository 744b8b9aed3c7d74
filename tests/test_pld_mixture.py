"""GaussianMixture against closed forms, mpmath and dp_accounting."""

import math

import mpmath
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as dp_pld
from hypothesis import given, settings
from hypothesis import strategies as st

from gaussdp import GaussianMixture, Neighbouring, PoissonSubsampled, Repeated, account
from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError
from gaussdp.pld.losses import GaussianLoss, SubsampledLoss
from gaussdp.pld.mixture import GaussianMixtureLoss

DELTA = 1e-5


def test_two_atoms_reproduce_the_poisson_subsampled_gaussian_loss():
    # The closed-form inverse against SubsampledLoss's own transform, on both sides.
    q, mu = 0.03, 1.3
    for direction, x in (("remove", np.linspace(-0.03, 9, 41)), ("add", np.linspace(-9, 0.03, 41))):
        mine = GaussianMixtureLoss((0.0, mu), (1 - q, q), direction).tails(x)
        poisson = SubsampledLoss(GaussianLoss(mu), q, direction).tails(x)
        np.testing.assert_allclose(np.array(mine), np.array(poisson), rtol=1e-12, atol=1e-300)


def test_two_atoms_give_the_poisson_bounds_to_roundoff():
    sigma, q, steps = 0.8, 0.02, 40
    mixture = account(Repeated(GaussianMixture(sigma, [0.0, 1.0], [1 - q, q]), steps))
    poisson = account(Repeated(PoissonSubsampled(m.Gaussian(sigma), q), steps))
    mine, theirs = mixture.epsilon_bounds(DELTA), poisson.epsilon_bounds(DELTA)
    np.testing.assert_allclose(mine, theirs, rtol=1e-9)


SHIFTS, WEIGHTS = (0.0, 0.5, 1.0, 2.0), (0.9, 0.05, 0.03, 0.02)


def _mp_delta(sigma, shifts, weights, epsilon, direction):
    """δ(ε) of the pair from mpmath: the threshold by findroot, the tails by erfc."""
    mpmath.mp.dps = 40
    mus = [mpmath.mpf(c) / sigma for c in shifts]
    ws = [mpmath.mpf(w) for w in weights]

    def loss(z):  # remove loss at standardised output z
        return mpmath.log(
            sum(w * mpmath.exp(mu * z - mu**2 / 2) for w, mu in zip(ws, mus, strict=True))
        )

    def mixture_above(z):
        return sum(w * mpmath.ncdf(mu - z) for w, mu in zip(ws, mus, strict=True))

    eps = mpmath.mpf(epsilon)
    if direction == "remove":  # L(z) > ε ⟺ z > z*
        z = mpmath.findroot(lambda t: loss(t) - eps, 1.0)
        return mixture_above(z) - mpmath.exp(eps) * mpmath.ncdf(-z)
    # add: first N(0, 1), loss −L(z) > ε ⟺ z < z*, L(z*) = −ε
    if -eps <= mpmath.log(sum(w for w, mu in zip(ws, mus, strict=True) if mu == 0)):
        return mpmath.mpf(0)
    z = mpmath.findroot(lambda t: loss(t) + eps, -1.0)
    return mpmath.ncdf(z) - mpmath.exp(eps) * (1 - mixture_above(z))


def test_one_step_sandwiches_the_mpmath_hockey_stick():
    sigma, epsilons = 0.7, [0.05, 0.5, 2.0]
    lower, upper = account(GaussianMixture(sigma, SHIFTS, WEIGHTS), grid_spacing=2e-4).delta_bounds(
        epsilons
    )
    for index, epsilon in enumerate(epsilons):
        exact = max(float(_mp_delta(sigma, SHIFTS, WEIGHTS, epsilon, d)) for d in ("remove", "add"))
        assert lower[index] <= exact <= upper[index]
        assert upper[index] - lower[index] <= 1e-2 * exact


def test_newton_inverse_is_the_inverse():
    loss = GaussianMixtureLoss((0.5, 1.0, 2.0, 3.0), (0.6, 0.2, 0.15, 0.05), "remove")
    y = np.linspace(-3.0, 25.0, 57)
    z = loss._inverse(y)
    np.testing.assert_allclose(loss.remove_loss(z), y, rtol=1e-12, atol=1e-12)


def test_agrees_with_dp_accounting_within_both_bounds():
    # dp_accounting's mixture PLD is slow to build: a large σ and a 1e-3 grid keep it ~1.5 s.
    sigma, steps, shifts, weights = 3.0, 20, [0.0, 1.0, 2.0], [0.9, 0.07, 0.03]
    event_pld = dp_pld.from_mixture_gaussian_mechanism(
        sigma, shifts, weights, value_discretization_interval=1e-3
    ).self_compose(steps)
    theirs = event_pld.get_epsilon_for_delta(DELTA)
    mixture = Repeated(GaussianMixture(sigma, shifts, weights), steps)
    lower, upper = account(mixture, accuracy=1e-4).epsilon_bounds(DELTA)
    assert lower <= upper <= theirs  # their pessimistic ε is an upper bound too
    assert theirs - upper <= 1e-4 * upper  # and close: the same pair


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"sensitivities": [0.0, 1.0], "probabilities": [0.5, 0.6]},
            r"^probabilities must sum to 1, got a sum of 1\.1",
        ),
        ({"sensitivities": [0.0, -1.0], "probabilities": [0.5, 0.5]}, r"^sensitivities"),
        ({"sensitivities": [0.0, 1.0], "probabilities": [1.0]}, r"^sensitivities and prob"),
    ],
)
def test_bad_mixtures_are_refused_in_one_line(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message) as caught:
        GaussianMixture(1.0, **kwargs)
    assert "\n" not in str(caught.value)


def test_replace_neighbouring_is_refused_in_one_line():
    with pytest.raises(InvalidParameterError, match=r"add/remove neighbouring only") as caught:
        account(GaussianMixture(1.0, [0.0, 1.0], [0.5, 0.5]), neighbouring=Neighbouring.REPLACE)
    assert "\n" not in str(caught.value)


def test_a_mixture_without_shift_is_perfect_privacy():
    result = account(GaussianMixture(1.0, [0.0, 3.0], [1.0, 0.0]))
    assert result.epsilon(DELTA) == 0.0
    assert math.isfinite(account(GaussianMixture(1.0, [2.0], [1.0])).epsilon(DELTA))


def test_pipeline_files_round_trip():
    from gaussdp.mechanisms import dumps, loads

    run = Repeated(GaussianMixture(1.5, [0.0, 1.0, 2.0], [0.9, 0.06, 0.04]), 7)
    assert loads(dumps(run)).mechanism == run


@settings(max_examples=3, deadline=None)
@given(
    sigma=st.floats(0.8, 3.0),
    factor=st.floats(1.1, 2.0),
    steps=st.integers(1, 10),
    weight=st.floats(0.01, 0.3),
)
def test_monotone_in_sigma_and_steps(sigma, factor, steps, weight):
    def bounds(s, t):
        mixture = GaussianMixture(s, [0.0, 1.0, 2.0], [1 - weight, weight / 2, weight / 2])
        return account(Repeated(mixture, t), grid_spacing=2e-3).epsilon_bounds(DELTA)

    lower, upper = bounds(sigma, steps)
    assert lower <= upper
    noisier, longer = bounds(sigma * factor, steps), bounds(sigma, steps + 3)
    assert noisier[0] <= lower + 1e-9 and noisier[1] <= upper + 1e-9
    assert longer[0] >= lower - 1e-9 and longer[1] >= upper - 1e-9


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_a_mixture_grid_lies_on_its_own_tails(direction):
    """The cheap support charges the largest shift's tail at full weight: with 1e-6 of the
    mass at shift 3 the grid for 1e-30 reached its tail as if it held all of it. The tight
    support leaves at most the tail beyond each end by mpmath (z solved from the loss), and
    is narrower."""
    shifts, weights, tail = (0.0, 0.5, 3.0), (0.6, 0.399999, 1e-6), 1e-30
    loss = GaussianMixtureLoss(shifts, weights, direction)
    low, high = loss.tight_support(tail)
    cheap_low, cheap_high = loss.support(tail)
    assert cheap_low <= low < high <= cheap_high
    assert (high - low) < 0.9 * (cheap_high - cheap_low)

    def tails_at(y):  # the remove pair's P(L > y), Q(L > y), P(L < y), Q(L < y)
        with mpmath.workdps(40):

            def loss_at(z):
                return mpmath.log(
                    sum(
                        w * mpmath.exp(m * z - m**2 / 2)
                        for m, w in zip(shifts, weights, strict=True)
                    )
                )

            z = mpmath.findroot(lambda z: loss_at(z) - y, 0.0)
            above_p = sum(w * mpmath.ncdf(m - z) for m, w in zip(shifts, weights, strict=True))
            below_p = sum(w * mpmath.ncdf(z - m) for m, w in zip(shifts, weights, strict=True))
            return [float(v) for v in (above_p, mpmath.ncdf(-z), below_p, mpmath.ncdf(z))]

    if direction == "remove":
        beyond = tails_at(high)[:2] + tails_at(low)[2:]
    else:  # add: (P, Q) swapped and L negated
        above, below = tails_at(-high), tails_at(-low)
        beyond = [above[3], above[2], below[1], below[0]]
    assert max(beyond) <= tail * (1 + 1e-6)
