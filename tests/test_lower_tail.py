"""The tilted lower tail (gaussdp.pld.lower_tail), against closed forms far into the tail.

A composition of Gaussian mechanisms is exactly μ-GDP (Dong, Roth & Su 2022,
Corollary 2), so the binned composition of a Gaussian's privacy loss has a
known truth to be below: δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), computed by
:mod:`gaussdp.gdp` independently of the grid engine (and checked there against
mpmath). The plain binned composition cannot see δ below its rounding allowance
u·(4T + 16 log₂ N); the tilted tail must, down to 1e-80, without ever crossing
the truth.
"""

import math

import numpy as np
import pytest

from gaussdp import gdp
from gaussdp.pld import GaussianLoss, discretise, profile_of
from gaussdp.pld.composition import compose_many, plain_plan
from gaussdp.pld.lower_tail import compose_lower_tail

SPACING = 1e-3
CASES = [(0.05, 400), (0.02, 10_000)]  # μ = 1 and μ = 2


def _items(per_step_mu: float, steps: int, kind: str = "optimistic"):
    return [(discretise(GaussianLoss(per_step_mu), SPACING, kind, 1e-30), steps)]


def _law(steps: int, mu: float, epsilon: float) -> float:
    """The connect-the-dots error law (about twice binning's), relative to ε."""
    return steps * SPACING**2 * (1.0 + (epsilon - mu**2 / 2) / mu**2) / (12.0 * epsilon)


@pytest.mark.parametrize("per_step_mu, steps", CASES)
@pytest.mark.parametrize("delta", [1e-6, 1e-12, 1e-30, 1e-80])
def test_the_tail_bounds_epsilon_from_below_and_tightly(per_step_mu, steps, delta):
    mu = per_step_mu * math.sqrt(steps)
    exact = float(gdp.epsilon(mu, delta))
    tail = compose_lower_tail(_items(per_step_mu, steps), exact, delta, 1e-8)
    lower = tail.epsilon(delta)
    assert lower <= exact
    # binning's error is about half the connect-the-dots law T·h²(1 + (ε − m)/V)/(12ε)
    # (gaussdp.accountant.grids._relative_error_coefficient); the law itself is the tolerance
    assert lower >= exact * (1.0 - _law(steps, mu, exact))


@pytest.mark.parametrize("per_step_mu, steps", CASES)
@pytest.mark.parametrize("delta", [1e-10, 1e-20, 1e-40])
def test_the_tail_bounds_delta_from_below(per_step_mu, steps, delta):
    mu = per_step_mu * math.sqrt(steps)
    epsilon = float(gdp.epsilon(mu, delta))
    exact = float(gdp.delta(mu, epsilon))
    tail = compose_lower_tail(_items(per_step_mu, steps), epsilon, delta, 1e-8)
    lower = float(tail.delta(np.array([epsilon]))[0])
    assert lower <= exact
    # within the error law: at least the true δ a relative law further out
    assert lower >= float(gdp.delta(mu, epsilon * (1.0 + _law(steps, mu, epsilon))))


def test_the_plain_composition_cannot_see_that_far():
    """What the tail adds: the plain lower bound gives up u·4T of every δ."""
    items = _items(0.02, 10_000)
    plan, tail_level = plain_plan(items)
    plain = profile_of(compose_many(items, tail_level, plan=plan))
    exact = float(gdp.epsilon(2.0, 1e-15))
    assert plain.epsilon(1e-15) < 0.9 * exact
    tail = compose_lower_tail(items, exact, 1e-15, 1e-8)
    assert tail.epsilon(1e-15) > (1 - _law(10_000, 2.0, exact)) * exact


def test_the_uncertified_reading_is_above_the_certified_one_by_a_hair():
    items = _items(0.05, 400)
    exact = float(gdp.epsilon(1.0, 1e-30))
    tail = compose_lower_tail(items, exact, 1e-30, 1e-8)
    certified, computed = tail.epsilon(1e-30), tail.epsilon(1e-30, certified=False)
    assert certified <= computed <= certified * (1 + 1e-9)


def test_no_tail_in_the_bulk_and_none_beyond_memory():
    items = _items(0.05, 400)
    assert compose_lower_tail(items, 0.1, 0.3, 1e-8) is None  # below the tilt's start
    exact = float(gdp.epsilon(1.0, 1e-12))
    assert compose_lower_tail(items, exact, 1e-12, 1e-8, longest=16) is None


def test_pessimistic_distributions_are_refused():
    with pytest.raises(ValueError, match="optimistic"):
        compose_lower_tail(_items(0.05, 400, "pessimistic"), 5.0, 1e-10, 1e-8)


def test_a_rare_heavy_tail_is_composed_on_a_short_window_and_stays_below():
    # q = 6.5e-6, σ = 0.66, 1700 steps (the regime benchmark's run 9 on a coarser grid):
    # tilted at ε, the rare steps that sample the example weigh most at the top of each
    # step's grid. Rows without the atoms that hold at most 1e-3·tolerance·δ of P-mass
    # (and b raised by their Q-mass) keep the window 150k–290k points long; with them it
    # was 630k–1.6M, and the bounds were looser (0.190 against 0.1956 at δ = 9.5e-13).
    from gaussdp.pld import SubsampledLoss

    loss = SubsampledLoss(GaussianLoss(1 / 0.66), 6.5e-6, "remove")
    items = [(discretise(loss, 1e-4, "optimistic", 1e-30), 1700)]
    upper = profile_of(
        compose_many([(discretise(loss, 1e-4, "pessimistic", 1e-30), 1700)], floor=1e-14)
    )
    plain = profile_of(compose_many(items))
    for epsilon, delta, at_least in [(0.05, 2.9e-10, 0.0499), (0.2, 9.5e-13, 0.195)]:
        tail = compose_lower_tail(items, epsilon, delta, 1e-6)
        assert tail.tail_p.size <= 300_000
        assert tail.dropped_q > 0.0  # atoms were left out, and their Q-mass counted
        lower = float(tail.delta(np.array([epsilon]))[0])
        assert plain.delta(epsilon) <= lower <= upper.delta(epsilon)
        assert at_least <= tail.epsilon(delta) <= upper.epsilon(delta)


def test_a_tail_is_tilted_where_the_labels_of_the_deciding_atoms_are():
    """Binned labels drift from the true losses over many steps; the window follows them.

    Each step: an atom labelled 0 whose true loss is c = 2e-6 (a spike off its grid
    point, as binning leaves one), and a rare atom at loss 1 (P-mass 1e-11). After
    10⁵ steps the labels lie 0.2 nats below the true losses, and δ(ε) is exactly a
    binomial sum over the number N of rare atoms: P(N)·(1 − e^{ε − N − (T − N)c})_+.
    A window started at the label of the queried loss held none of the atoms that
    decide δ there (the lower bound was 0; on σ = 0.5, q = 1e-6, T = 10⁶ it was 0.40
    for an ε of 0.56).
    """
    from scipy import stats

    from gaussdp.pld.grid import GridPLD
    from gaussdp.pld.lower_tail import compose_lower_tail, label_drift

    spacing, offset_loss, rare, steps = 1e-4, 2e-6, 1e-11, 10**5
    top = round(1.0 / spacing)
    p = np.zeros(top + 1)
    r = np.zeros(top + 1)
    p[0], r[0] = 1.0 - rare, (1.0 - rare) * math.exp(-offset_loss)
    p[top], r[top] = rare, rare  # true loss 1 = its label
    step = GridPLD(spacing, 0, p, r, 0.0, "optimistic")
    assert label_drift([(step, steps)]) == pytest.approx(-0.2, rel=1e-9)

    def exact_delta(epsilon):
        count = np.arange(6)
        loss = count * 1.0 + (steps - count) * offset_loss
        chance = np.exp(stats.binom.logpmf(count, steps, rare))
        return float(np.sum(chance * np.maximum(-np.expm1(epsilon - loss), 0.0)))

    delta, low, high = 1e-7, 0.0, 5.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if exact_delta(middle) > delta else (low, middle)
    tail = compose_lower_tail([(step, steps)], low, delta, 1e-8)
    assert tail is not None
    assert low - 1e-8 <= tail.epsilon(delta) <= high  # 1.0946377 (0 with the window at the label)


def test_a_tail_needs_no_grid_beyond_what_it_leaves_out():
    """Binned at a tenth of the truncation budget per step, the grid is shorter, same bound.

    Folding the outcomes above the grid into its top atom is post-processing; that atom
    then holds at most the budget and is among those the tail leaves out anyway. Same
    run as above: the bound on ε(9.5e-13) is that of the 1e-30 grid to 1e-9.
    """
    from gaussdp.pld import SubsampledLoss
    from gaussdp.pld.lower_tail import _DROP_SHARE, lower_tail_discretisation_tail

    loss = SubsampledLoss(GaussianLoss(1 / 0.66), 6.5e-6, "remove")
    epsilon, delta, tolerance, steps = 0.2, 9.5e-13, 1e-6, 1700
    cut = lower_tail_discretisation_tail(steps, tolerance, delta)
    assert 1e-30 < cut <= 0.1 * _DROP_SHARE * tolerance * delta / steps
    short = discretise(loss, 1e-4, "optimistic", cut)
    long = discretise(loss, 1e-4, "optimistic", 1e-30)
    assert short.p_masses.size < 0.8 * long.p_masses.size
    bounds = [
        compose_lower_tail([(pld, steps)], epsilon, delta, tolerance).epsilon(delta)
        for pld in (short, long)
    ]
    assert bounds[0] == pytest.approx(bounds[1], rel=1e-9)


@pytest.mark.parametrize("per_step_mu, steps", CASES)
def test_a_tail_for_losses_up_to_a_reach_keeps_only_the_suffixes_that_decide_there(
    per_step_mu, steps
):
    """Suffixes starting above the reach (and a margin) decide no query up to it: the
    tail keeps fewer of them and answers every query up to the reach as the whole one."""
    mu = per_step_mu * math.sqrt(steps)
    epsilon = float(gdp.epsilon(mu, 1e-12))
    reach = 1.25 * epsilon
    items = _items(per_step_mu, steps)
    whole = compose_lower_tail(items, epsilon, 1e-12, 1e-8)
    kept = compose_lower_tail(items, epsilon, 1e-12, 1e-8, reach=reach)
    assert kept.tail_p.size == kept.tail_q.size == len(kept.losses) < whole.tail_p.size
    # the suffixes kept start where the whole tail's do, and reach past the margin
    assert kept.losses[0] == whole.losses[0]
    assert reach + (reach - epsilon) < kept.losses[-1] < reach + 2 * (reach - epsilon)
    np.testing.assert_array_equal(kept.tail_p, whole.tail_p[: kept.tail_p.size])
    for delta in (1e-11, 1e-12, float(gdp.delta(mu, reach))):
        assert kept.epsilon(delta) == whole.epsilon(delta)
    losses = np.linspace(epsilon, reach, 7)
    np.testing.assert_array_equal(kept.delta(losses), whole.delta(losses))


@pytest.mark.parametrize("delta", [1e-3, 1e-10, 1e-30])
def test_the_binned_profile_stays_below_the_truth_at_losses_of_thousands(delta):
    """100 binned steps of μ = 5 compose to μ = 50, with losses from 750 to 1650 nats.

    Their Q-masses R·e^{−l} underflow there; summed as such, S_Q was lost and the
    lower bound on δ(ε) read 1.07e-3 where the truth is 1e-3 (ε(1e-3): 1404.50 against
    1403.54; 497,252 Laplace steps put their lower bound 1 nat above the upper one).
    """
    mu = 50.0
    composed = compose_many([(discretise(GaussianLoss(mu / 10.0), 1e-2, "optimistic", 1e-30), 100)])
    assert composed.losses[0] > 745.0  # every e^{−l} underflows
    profile = profile_of(composed)
    exact = float(gdp.epsilon(mu, delta))
    lower = profile.epsilon(delta)
    assert lower <= exact
    assert float(profile.delta(np.array([exact]))[0]) <= float(gdp.delta(mu, exact))
    if delta >= 1e-10:  # within the window: tight (binning's error law, 100 steps of 1e-2)
        assert lower >= exact * (1.0 - 1e-5)
