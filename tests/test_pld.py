"""The PLD engine's building blocks: discretisation, composition, queries."""

import math
from dataclasses import replace

import numpy as np
import pytest

from gaussdp import curves, gdp
from gaussdp.pld import (
    AtomicLoss,
    GaussianLoss,
    LaplaceLoss,
    SubsampledLoss,
    compose,
    compose_many,
    compose_tradeoffs,
    discretise,
    profile_of,
    self_compose,
)

LOSSES = [
    GaussianLoss(0.7),
    LaplaceLoss(0.5),
    SubsampledLoss(GaussianLoss(1.0), 0.1, "remove"),
    SubsampledLoss(GaussianLoss(1.0), 0.1, "add"),
    AtomicLoss.from_atoms(  # leaky randomized response: ε = 1, δ = 0.01
        [-1.0, 1.0],
        0.99 * np.array([1.0, math.e]) / (1 + math.e),
        0.99 * np.array([math.e, 1.0]) / (1 + math.e),
        infinity_mass=0.01,
    ),
]


@pytest.mark.parametrize("loss", LOSSES)
def test_discretisations_keep_mass(loss):
    pessimistic = discretise(loss, 1e-3, "pessimistic", 1e-30)
    optimistic = discretise(loss, 1e-3, "optimistic", 1e-30)
    assert pessimistic.p_masses.sum() + pessimistic.infinity_mass == pytest.approx(1.0, abs=1e-12)
    assert optimistic.p_masses.sum() + optimistic.infinity_mass == pytest.approx(1.0, abs=1e-12)
    # Connect-the-dots keeps the Q-mass of every cell; binning stores it exactly.
    q_total = loss.cdf(np.array([1e300]))[1][0]
    assert pessimistic.q_masses().sum() == pytest.approx(q_total, rel=1e-9)
    assert optimistic.q_masses().sum() == pytest.approx(q_total, rel=1e-9)


@pytest.mark.parametrize("loss", LOSSES[:3])
def test_one_step_bounds_bracket_the_exact_profile(loss):
    upper = profile_of(discretise(loss, 1e-3, "pessimistic", 1e-30))
    lower = profile_of(discretise(loss, 1e-3, "optimistic", 1e-30))
    for epsilon in (0.0, 0.05, 0.3):
        sf_p, sf_q = loss.sf(np.array([epsilon]))
        exact = sf_p[0] - math.exp(epsilon) * sf_q[0]
        assert lower.delta(epsilon) <= exact * (1 + 1e-12)
        assert exact <= upper.delta(epsilon) * (1 + 1e-12)
        assert upper.delta(epsilon) - lower.delta(epsilon) < 1e-3 * exact


def test_a_short_composition_is_computed_whole_with_no_slack():
    """Few possible sums: every one is kept (no Chernoff window), so nothing wraps or is cut."""
    from gaussdp.pld.composition import WHOLE_SUPPORT_POINTS, plan_composition

    single = discretise(
        SubsampledLoss(GaussianLoss(1 / 15), 5.1e-5, "remove"), 1e-6, "pessimistic", 1e-30
    )
    sums = 2 * (single.p_masses.size - 1) + 1
    assert single.p_masses.size < sums <= WHOLE_SUPPORT_POINTS
    plan = plan_composition([(single, 2)])
    assert (plan.low, plan.above, plan.below) == (0, 0.0, 0.0) and plan.length >= sums
    composed = self_compose(single, 2)
    direct = np.convolve(single.p_masses, single.p_masses)  # no FFT: relative rounding only
    assert composed.offset == 2 * single.offset
    np.testing.assert_allclose(composed.p_masses[: direct.size], direct, rtol=0, atol=1e-15)
    assert composed.slack <= 1e-13  # the rounding allowance alone


def test_self_composition_matches_repeated_convolution():
    single = discretise(GaussianLoss(0.3), 1e-2, "pessimistic", 1e-30)
    by_power = profile_of(self_compose(single, 8))
    by_convolution = single
    for _ in range(7):
        by_convolution = compose(by_convolution, single)
    by_convolution = profile_of(by_convolution)
    epsilons = np.array([0.0, 0.5, 1.0, 2.0, 3.0])
    assert by_power.delta(epsilons) == pytest.approx(by_convolution.delta(epsilons), rel=1e-9)


def test_compose_many_matches_pairwise():
    first = discretise(GaussianLoss(0.5), 1e-3, "optimistic", 1e-30)
    second = discretise(LaplaceLoss(0.3), 1e-3, "optimistic", 1e-30)
    together = profile_of(compose_many([(first, 3), (second, 2)]))
    pairwise = profile_of(
        compose(
            compose(self_compose(first, 3), self_compose(second, 2)),
            discretise(GaussianLoss(1e-9), 1e-3, "optimistic", 1e-30),
        )
    )
    for epsilon in (0.2, 1.0, 2.0):
        assert together.delta(epsilon) == pytest.approx(pairwise.delta(epsilon), rel=1e-6)


def test_gaussian_composition_sandwich_on_the_engine():
    mu, steps = 0.2, 50
    single_upper = discretise(GaussianLoss(mu), 1e-3, "pessimistic", 1e-30)
    single_lower = discretise(GaussianLoss(mu), 1e-3, "optimistic", 1e-30)
    upper = profile_of(self_compose(single_upper, steps))
    lower = profile_of(self_compose(single_lower, steps))
    total = mu * math.sqrt(steps)
    for delta in (1e-3, 1e-6, 1e-10):
        exact = gdp.epsilon(total, delta)
        assert lower.epsilon(delta) <= exact <= upper.epsilon(delta)
        assert upper.epsilon(delta) - lower.epsilon(delta) < 1e-3 * exact


def test_compose_tradeoffs_of_an_asymmetric_curve():
    # One-step Poisson-subsampled Gaussian curve (remove direction only: asymmetric).
    f = curves.from_privacy_loss(*_pair(SubsampledLoss(GaussianLoss(1.0), 0.2, "remove")))
    composed = compose_tradeoffs([f, f, f])
    # The composition of f with itself must lie below each factor's symmetrisation
    # and be a valid symmetric trade-off function.
    alphas = np.linspace(0, 1, 201)
    assert np.all(composed.beta(alphas) <= f.beta(alphas) + 1e-9)
    assert composed.is_symmetric


def _pair(loss):
    single = discretise(loss, 1e-3, "pessimistic", 1e-30)
    return single.losses, single.p_masses, single.infinity_mass


def test_compose_tradeoffs_equals_the_accountant():
    import gaussdp as g

    composed = curves.compose([curves.laplace(1.0)] * 5)
    accounting = g.account(g.Repeated(g.Laplace(1.0), 5))
    alphas = np.array([1e-6, 1e-3, 0.1, 0.5])
    low = accounting.tradeoff().beta(alphas)
    high = accounting.tradeoff("optimistic").beta(alphas)
    # compose_tradeoffs starts from a pessimistic piecewise-linear Laplace curve, so it
    # is below the accountant's optimistic (hence below the true) curve, and close.
    assert np.all(composed.beta(alphas) <= high + 1e-12)
    assert np.all(np.abs(composed.beta(alphas) - low) < 1e-4)


def test_profile_epsilon_inverts_delta():
    single = discretise(
        SubsampledLoss(GaussianLoss(1.0), 0.05, "remove"), 1e-4, "pessimistic", 1e-30
    )
    profile = profile_of(self_compose(single, 500))
    for delta in (1e-3, 1e-6, 1e-9):
        epsilon = profile.epsilon(delta)
        assert profile.delta(epsilon) <= delta * (1 + 1e-9)
        assert profile.delta(epsilon * (1 - 1e-6)) > delta


@pytest.mark.parametrize("tilt", [False, True])
def test_compositions_carry_mass_at_infinite_loss_below_the_roundoff_of_one(tilt):
    # Each step's grid sends 2.5e-21 of P-mass to +∞ (its tail above the grid); ten steps
    # carry 1 − (1 − 2.5e-21)^10 ≈ 2.5e-20, every δ's floor. Computed as 1 − Π(1 − p), it
    # rounded to 0 (1 − 2.5e-21 is 1 in double precision), and the tilted upper bound of
    # DP-SGD(1, 0.01, 10) fell below its certified lower bound at δ = 1e-14 (test_accountant).
    loss = SubsampledLoss(GaussianLoss(1.0), 0.01, "remove")
    single = discretise(loss, 1e-4, "pessimistic", 2.5e-21)
    assert 1e-21 < single.infinity_mass <= 2.5e-21
    expected = 10 * single.infinity_mass  # to 1e-20 relative
    composed = compose_many([(single, 10)], floor=0.0 if tilt else None, tilt=tilt)
    assert expected <= composed.infinity_mass <= expected * (1 + 1e-9)
    assert compose(single, single).infinity_mass >= 2 * single.infinity_mass
    optimistic = discretise(loss, 1e-4, "optimistic", 2.5e-21)
    doubled = replace(optimistic, infinity_mass=single.infinity_mass)
    assert compose_many([(doubled, 10)]).infinity_mass == pytest.approx(expected, rel=1e-9)


def test_tilted_composition_reaches_the_exact_gaussian_tail():
    # 400 Gaussian steps of μ = 0.05 are exactly 1-GDP; the plain composition's rounding
    # allowance (~4e-13) hides δ below it, the tilted one follows the closed form to 1e-27.
    # Each step's grid leaves 1e-32 above it, which goes to +∞: 400 of them carry 4e-30,
    # a thousandth of δ(11) (a grid leaving 1e-30 carries 4e-28, 11% of it).
    single = discretise(GaussianLoss(0.05), 1e-3, "pessimistic", 1e-32)
    tilted = profile_of(compose_many([(single, 400)], floor=1e-25))
    for epsilon in (1.0, 3.0, 5.0, 8.0, 10.0, 11.0):
        exact = float(gdp.delta(1.0, epsilon))
        assert exact <= tilted.delta(epsilon) <= exact * 1.01


def _record_row_lengths(monkeypatch) -> list[int]:
    """The FFT length of every row composed from now on (in order)."""
    from gaussdp.pld import composition

    lengths = []
    compose_row = composition._compose_row

    def recorded(items, row_of, length, *args, **kwargs):
        lengths.append(length)
        return compose_row(items, row_of, length, *args, **kwargs)

    monkeypatch.setattr(composition, "_compose_row", recorded)
    return lengths


def test_tilted_composition_of_a_rare_heavy_tail_is_short_and_certified(monkeypatch):
    # q = 6.5e-6, σ = 0.66, 1700 steps (the regime benchmark's run 9 on a coarser grid):
    # under a tilt the rare steps that sample the example weigh most, at the top of each
    # step's grid, and their tilted copies once made the tilted row 19 times the plain
    # window. Centred where the tail is 1e-10, without the atoms that only make sums of
    # P-mass below 1e-19, it is 3 times as long, and tighter.

    lengths = _record_row_lengths(monkeypatch)
    loss = SubsampledLoss(GaussianLoss(1 / 0.66), 6.5e-6, "remove")
    pessimistic = discretise(loss, 1e-4, "pessimistic", 1e-30)
    plain = profile_of(compose_many([(pessimistic, 1700)], tilt=False))
    (plain_length,) = lengths
    tilted = compose_many([(pessimistic, 1700)], floor=1e-14)
    assert tilted.cut_index is not None
    assert max(lengths[1:]) <= 4 * plain_length
    assert tilted.infinity_mass + tilted.slack <= 1e-14
    lower = profile_of(compose_many([(discretise(loss, 1e-4, "optimistic", 1e-30), 1700)]))
    tilted = profile_of(tilted)
    for epsilon in (0.01, 0.05, 0.1, 0.2):
        assert lower.delta(epsilon) <= tilted.delta(epsilon) <= plain.delta(epsilon)
    # beyond the plain floor (~4e-12) the tilted bound keeps falling: 9.5e-13 at 0.2
    assert tilted.delta(0.2) < 1e-12 and tilted.delta(0.5) < 1e-14


def test_a_tilted_composition_needs_no_grid_beyond_what_it_may_drop():
    """Discretised at the tail the drop budget allows, each step's grid is shorter.

    σ = 1, q = 1e-5, 10⁶ steps (issue 24's second run, at a coarser grid): the mass
    above the grid goes to +∞, at most a quarter of the drop budget over all steps;
    the bounds on δ are those of the 1e-30 grid (which the tilted composition cut
    to its reachable atoms anyway), and certified against the optimistic pair.
    """
    from gaussdp.pld import composition

    steps, spacing = 10**6, 1e-5
    loss = SubsampledLoss(GaussianLoss(1.0), 1e-5, "remove")
    cut = composition.tilted_discretisation_tail(steps)
    assert cut == pytest.approx(0.25 * composition.drop_budget() / steps)
    short = discretise(loss, spacing, "pessimistic", cut)
    long = discretise(loss, spacing, "pessimistic", 1e-30)
    assert short.p_masses.size < 0.6 * long.p_masses.size
    assert steps * short.infinity_mass <= 0.25 * composition.drop_budget() * (1 + 1e-9)
    tilted_short = profile_of(compose_many([(short, steps)], floor=1e-14))
    tilted_long = profile_of(compose_many([(long, steps)], floor=1e-14))
    lower = profile_of(compose_many([(discretise(loss, spacing, "optimistic", 1e-30), steps)]))
    epsilons = np.array([0.05, 0.07, 0.1, 0.15])
    assert np.allclose(tilted_short.delta(epsilons), tilted_long.delta(epsilons), rtol=1e-6)
    assert np.all(lower.delta(epsilons) <= tilted_short.delta(epsilons))
    assert tilted_short.delta(np.array([0.15]))[0] < 1e-13


def test_a_tilted_row_is_at_most_a_little_over_twice_the_plain_window(monkeypatch):
    """σ = 0.5, q = 1e-6, 10⁶ steps (issue 24's third run, on a coarser grid).

    The saddle point's tilt is steeper than each step's loss tail at the top
    of its grid, so the tilted masses pile up there and the tilted row ran to
    7 times the plain window; λ is lowered until it is at most 2.25 times. The
    bounds stay certified (above the optimistic composition's δ) and within
    0.1% in ε of the saddle point's at δ = 1e-9 and 1e-12.
    """
    from gaussdp.pld import composition

    lengths = _record_row_lengths(monkeypatch)
    steps, spacing = 10**6, 2e-5
    loss = SubsampledLoss(GaussianLoss(2.0), 1e-6, "remove")
    cut = composition.tilted_discretisation_tail(steps, floor=1e-14)
    single = discretise(loss, spacing, "pessimistic", cut)
    limited = compose_many([(single, steps)], floor=1e-14)
    plain_length, tilted_length = lengths
    assert tilted_length <= 2.35 * plain_length
    assert limited.infinity_mass + limited.slack <= 1e-14
    monkeypatch.setattr(composition, "_TILTED_ROW_RATIO", math.inf)
    lengths.clear()
    saddle = compose_many([(single, steps)], floor=1e-14)
    assert lengths[1] >= 5 * plain_length  # without the limit the row runs far
    limited, saddle = profile_of(limited), profile_of(saddle)
    for delta in (1e-9, 1e-12):
        assert limited.epsilon(delta) == pytest.approx(saddle.epsilon(delta), rel=1e-3)
    lower = profile_of(compose_many([(discretise(loss, spacing, "optimistic", 1e-30), steps)]))
    epsilons = np.array([0.03, 0.1, 0.3, 0.6, 1.0])
    assert np.all(lower.delta(epsilons) <= limited.delta(epsilons))


@pytest.mark.parametrize("direction", ["add", "remove"])
def test_tilted_rows_agree_with_the_plain_composition(direction):
    # q = 0.0078, 17 steps: the add direction's tilted window is shorter than one step's
    # grid (its rows are folded), the remove direction's switch lies low in the window.
    loss = SubsampledLoss(GaussianLoss(1.0), 0.0078, direction)
    single = discretise(loss, 1e-4, "pessimistic", 1e-30)
    plain = compose_many([(single, 17)])
    tilted = compose_many([(single, 17)], floor=1e-20)
    assert tilted.cut_index is not None
    shift = tilted.offset - plain.offset
    x, y = plain.p_masses[max(shift, 0) :], tilted.p_masses[max(-shift, 0) :]
    size = min(x.size, y.size)
    x, y = x[:size], y[:size]
    resolved = x > 1e-10
    assert np.max(np.abs(x[resolved] - y[resolved]) / x[resolved]) < 1e-6
    assert math.fsum(tilted.p_masses) == pytest.approx(1.0, abs=1e-12)
    plain_profile, tilted_profile = profile_of(plain), profile_of(tilted)
    for epsilon in (0.1, 0.5, 1.0):
        if plain_profile.delta(epsilon) > 1e-9:
            assert tilted_profile.delta(epsilon) == pytest.approx(
                plain_profile.delta(epsilon), rel=1e-4
            )


def test_plain_windows_cut_at_the_window_tail_keep_the_bounds():
    # plain_plan cuts both window ends where a thousandth of the rounding allowance
    # lies beyond: the bounds still bracket the closed form, and the floor (what every
    # upper δ carries) grows by at most that share of the allowance.
    from gaussdp.pld.composition import (
        plain_plan,
        plan_composition,
        rounding_allowance,
        window_tail,
    )

    steps = 400
    for kind in ("pessimistic", "optimistic"):
        single = discretise(GaussianLoss(0.05), 1e-3, kind, 1e-30)
        plan, tail = plain_plan([(single, steps)])
        assert tail == window_tail(steps) > 1e-30
        assert plan.length < plan_composition([(single, steps)]).length  # cut at 1e-30
        composed = compose_many([(single, steps)], tail, plan=plan)
        profile = profile_of(composed)
        for epsilon in (0.5, 2.0, 4.0, 6.0):
            exact = float(gdp.delta(1.0, epsilon))
            if kind == "pessimistic":
                assert exact <= profile.delta(epsilon) <= exact * 1.01 + 1e-11
            else:
                assert profile.delta(epsilon) <= exact
        if kind == "pessimistic":
            allowance = rounding_allowance(plan.length, steps)
            assert composed.slack + composed.infinity_mass <= allowance * (1 + 3e-3)


@pytest.mark.parametrize("seed", range(4))
def test_a_lattice_is_its_array(seed):
    """Profiles of grid distributions hold their losses as a Lattice: every read equals
    the array (first + j)·h's, and searchsorted equals numpy's on it, ties and ulps included."""
    from gaussdp.pld.query import Lattice

    rng = np.random.default_rng(seed)
    for _ in range(50):
        first = int(rng.integers(-(10**6), 10**6))
        h = float(rng.choice([1e-4, 9.42e-5, 2.0**-11.5, 0.1, 1 / 3]))
        n = int(rng.integers(1, 3000))
        lattice, array = Lattice(first, h, n), (first + np.arange(n)) * h
        assert np.array_equal(np.asarray(lattice), array)
        picks = array[rng.integers(0, n, 20)]
        x = np.concatenate(
            (picks, np.nextafter(picks, np.inf), np.nextafter(picks, -np.inf),
             picks + rng.normal(0.0, h, 20), [np.inf, -np.inf, np.nan, array[0] - h, array[-1] + h])
        )  # fmt: skip
        for side in ("left", "right"):
            assert np.array_equal(
                np.searchsorted(lattice, x, side=side), array.searchsorted(x, side)
            )
        a, b = sorted(int(v) for v in rng.integers(0, n + 1, 2))
        index = rng.integers(-n, n, 10)
        for part, whole in ((lattice[a:b], array[a:b]), (lattice[::-1], array[::-1])):
            assert np.array_equal(np.asarray(part), whole)
        assert np.array_equal(lattice[::-1][index], array[::-1][index])
        assert lattice[-1] == array[-1] and lattice[::-1][0] == array[-1]
    profile = profile_of(discretise(GaussianLoss(1.0), 1e-3, "pessimistic", 1e-30))
    assert isinstance(profile.losses, Lattice)


@pytest.mark.parametrize("mu", [60.0, 75.0])
def test_a_gaussian_with_losses_of_thousands_of_nats_discretises_without_overflow(mu):
    """μ = 75 has losses up to ~3,000 nats: e^l overflows there, and the grid's split
    (P − e^l·Q)/(1 − e^{−h}) read inf·0 = NaN (an account() of 1,201 composed Gaussians
    and Laplaces failed on it). The pessimistic grid stays an upper bound, within h.
    """
    pld = discretise(GaussianLoss(mu), 1e-2, "pessimistic", 1e-30)
    assert np.all(np.isfinite(pld.p_masses))
    assert math.isclose(math.fsum(pld.p_masses) + pld.infinity_mass, 1.0, rel_tol=1e-12)
    exact = float(gdp.epsilon(mu, 1e-5))
    assert exact <= profile_of(pld).epsilon(1e-5) <= exact + 1e-2
    binned = profile_of(discretise(GaussianLoss(mu), 1e-2, "optimistic", 1e-30))
    # a lower bound, within h: Q's masses there (below 1e-308) are taken from log-tails
    # (computed as differences of tails they were 0 and the cells left out: 0 was read)
    assert exact - 1e-2 <= binned.epsilon(1e-5) <= exact


def _subsampled_gaussian_tails_mp(mu, gamma, direction, y):
    """P'(L' > y), Q'(L' > y), P'(L' < y), Q'(L' < y) of the subsampled Gaussian, in mpmath.

    Remove: P' = (1 − γ)N(0, 1) + γN(μ, 1), Q' = N(0, 1), L' = log(1 − γ + γe^{μz − μ²/2});
    add is the remove pair swapped, with L'' = −L'. Written from the definitions.
    """
    import mpmath as mp

    with mp.workdps(60):
        return _subsampled_gaussian_tails_at_60_digits(mp, mp.mpf(mu), mp.mpf(gamma), direction, y)


def _subsampled_gaussian_tails_at_60_digits(mp, mu, gamma, direction, y):

    def above(threshold):  # P'(L' > threshold), Q'(L' > threshold) for the remove pair
        inside = mp.exp(mp.mpf(threshold)) - (1 - gamma)
        if inside <= 0:
            return mp.mpf(1), mp.mpf(1)
        t = (mp.log(inside / gamma) + mu**2 / 2) / mu  # L' > threshold ⟺ z > t
        q = mp.erfc(t / mp.sqrt(2)) / 2
        return (1 - gamma) * q + gamma * mp.erfc((t - mu) / mp.sqrt(2)) / 2, q

    if direction == "remove":
        p_above, q_above = above(y)
        # a continuous loss: P'(L' < y) = 1 − P'(L' > y), computed as the other tail
        inside = mp.exp(mp.mpf(y)) - (1 - gamma)
        if inside <= 0:
            return p_above, q_above, mp.mpf(0), mp.mpf(0)
        t = (mp.log(inside / gamma) + mu**2 / 2) / mu
        q_below = mp.erfc(-t / mp.sqrt(2)) / 2
        p_below = (1 - gamma) * q_below + gamma * mp.erfc(-(t - mu) / mp.sqrt(2)) / 2
        return p_above, q_above, p_below, q_below
    # add: (P'', Q'') = (Q', P'), L'' = −L': L'' > y ⟺ L' < −y
    p_above, q_above, p_below, q_below = _subsampled_gaussian_tails_at_60_digits(
        mp, mu, gamma, "remove", -y
    )
    return q_below, p_below, q_above, p_above


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize(
    "sigma, gamma, tail",
    [
        (1.0, 1e-5, 2.5e-26),
        (1.0, 1e-5, 4.4e-19),
        (0.5, 1e-6, 1e-30),
        (2.0, 0.3, 1e-12),
        (20.0, 0.5, 1e-30),
    ],
)
def test_a_subsampled_support_leaves_at_most_the_tail_outside_and_little_more(
    sigma, gamma, tail, direction
):
    """The support is narrowed to the mixture's own tails (the inner support charges
    the mixture its γ-weighted component's tail: σ = 1, q = 1e-5 reached a loss of
    0.49 where 0.21 leaves 2.5e-26): still at most ``tail`` outside, by mpmath, and
    within 1/2000 of the inner support's width (mapped) of the tightest end. (At a
    subsampled loss's bounded end, y = log(1 − γ) + η, a double y resolves η to about
    1e-22 while the inner loss depends on log η: the tails there, the code's and so the
    ends found, are accurate to about 1e-4 relative; the grid keeps whatever mass lies
    beyond its ends, computed, so nothing depends on this.)"""
    loss = SubsampledLoss(GaussianLoss(1.0 / sigma), gamma, direction)
    low, high = loss.tight_support(tail)
    p_above, q_above, _, _ = _subsampled_gaussian_tails_mp(1.0 / sigma, gamma, direction, high)
    _, _, p_below, q_below = _subsampled_gaussian_tails_mp(1.0 / sigma, gamma, direction, low)
    assert max(p_above, q_above, p_below, q_below) <= tail * (1 + 1e-3)
    inner = [math.log(1 - gamma + gamma * math.exp(end)) for end in loss.inner.support(tail)]
    step = (inner[1] - inner[0]) / 2000.0
    p_above, q_above, _, _ = _subsampled_gaussian_tails_mp(
        1.0 / sigma, gamma, direction, high - step
    )
    _, _, p_below, q_below = _subsampled_gaussian_tails_mp(
        1.0 / sigma, gamma, direction, low + step
    )
    assert max(p_above, q_above) > tail and max(p_below, q_below) > tail
    # and a long grid is laid over these ends, a short one over the cheap support's
    spacing = (high - low) / 10_000
    grid = discretise(loss, spacing, "pessimistic", tail)
    assert grid.losses[-1] <= high + spacing and grid.losses[0] >= low - spacing
    short = discretise(loss, (high - low) / 100, "pessimistic", tail)
    assert short.losses[-1] >= loss.support(tail)[1]


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_a_subsampled_support_keeps_its_atoms(direction):
    """A subsampled Laplace has atoms at both ends: the ends stay on them (the mass at
    an end is inside; only the mass strictly beyond it counts)."""
    gamma, ratio = 0.05, 2.0
    loss = SubsampledLoss(LaplaceLoss(ratio), gamma, direction)
    ends = [math.log(1 - gamma + gamma * math.exp(r)) for r in (-ratio, ratio)]
    expected = ends if direction == "remove" else [-ends[1], -ends[0]]
    assert loss.tight_support(1e-30) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_subsampled_tails_beyond_709_nats(direction):
    """σ = 0.02 makes losses of 1,800 nats: e^y overflowed in the inverse map, and every
    tail above 709 nats read 0 (the mass there was rounded down to 709 nats)."""
    mu, gamma = 50.0, 0.01
    loss = SubsampledLoss(GaussianLoss(mu), gamma, direction)
    for y in (100.0, 708.0, 712.0, 800.0, 1200.0):
        y = y if direction == "remove" else -y
        (sf_p, sf_q), (cdf_p, cdf_q) = loss.tails(np.array([y]))
        reference = _subsampled_gaussian_tails_mp(mu, gamma, direction, y)
        for value, exact in zip((sf_p[0], sf_q[0], cdf_p[0], cdf_q[0]), reference, strict=True):
            assert value == pytest.approx(float(exact), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("gamma", [1e-12, 5.1e-5, 0.3, 0.999, 1.0])
def test_the_subsampled_loss_map_against_mpmath(gamma):
    import mpmath as mp

    from gaussdp.pld.losses import subsampled_loss

    for inner in (-1e5, -30.0, -1.0, -1e-9, 0.0, 1e-9, 1.0, 30.0, 800.0, 1e5):
        with mp.workdps(50):
            exact = mp.log(1 - mp.mpf(gamma) + mp.mpf(gamma) * mp.exp(mp.mpf(inner)))
        assert subsampled_loss(inner, gamma) == pytest.approx(float(exact), rel=1e-13, abs=1e-15)


def test_a_subsampled_gaussian_with_losses_beyond_709_nats_keeps_its_upper_bound():
    """σ = 0.03, q = 0.01, one step: ε at δ = 1e-20 is 841.97 (the remove pair, in mpmath).
    The inverse map overflowed at 709 nats, every tail above read 0 and the grid rounded
    that mass down to 709 nats: the upper bound read 709.78 (so did account()'s, on a grid
    of 1e-4 in 30 s; here 1e-2)."""
    import mpmath as mp

    def log_delta(epsilon):  # P' = (1 − q)N(0, 1) + qN(μ, 1) against Q' = N(0, 1)
        t = (mp.log((mp.exp(epsilon) - (1 - q)) / q) + mu**2 / 2) / mu  # L' > ε ⟺ z > t
        q_tail = mp.erfc(t / mp.sqrt(2)) / 2
        p_tail = (1 - q) * q_tail + q * mp.erfc((t - mu) / mp.sqrt(2)) / 2
        return mp.log(p_tail - mp.exp(epsilon) * q_tail)

    with mp.workdps(60):
        mu, q = 1 / mp.mpf("0.03"), mp.mpf("0.01")
        exact = mp.findroot(lambda e: log_delta(e) - mp.log(mp.mpf("1e-20")), (800, 900))
    assert float(exact) == pytest.approx(841.9723, abs=1e-3)
    loss = SubsampledLoss(GaussianLoss(float(mu)), float(q), "remove")
    upper = profile_of(discretise(loss, 1e-2, "pessimistic", 1e-30)).epsilon(1e-20)
    assert float(exact) <= upper <= float(exact) + 1e-2
    # the binned lower bound too: its Q-masses above ~700 nats underflowed, the cells were
    # left out and the lower bound stopped at 695.7; they come from log-tails now
    lower = profile_of(discretise(loss, 1e-2, "optimistic", 1e-30)).epsilon(1e-20)
    assert float(exact) - 1e-2 <= lower <= float(exact)


def test_log_q_tails_against_mpmath():
    """log Q(L > x) where Q(L > x) underflows: the Gaussian's and the subsampled remove
    direction's (whose Q is the inner Q), against mpmath; the add direction has none."""
    import mpmath as mp

    mu, gamma = 50.0, 0.01
    gaussian = GaussianLoss(mu)
    remove = SubsampledLoss(gaussian, gamma, "remove")
    xs = np.array([10.0, 700.0, 900.0, 2000.0])
    with mp.workdps(40):
        for x, got in zip(xs, gaussian.log_q_above(xs), strict=True):
            z = (mp.mpf(x) + mp.mpf(mu) ** 2 / 2) / mu
            assert got == pytest.approx(float(mp.log(mp.ncdf(-z))), rel=1e-12)
        for x, got in zip(xs, remove.log_q_above(xs), strict=True):
            inner = mp.log((mp.exp(mp.mpf(x)) - (1 - mp.mpf(gamma))) / gamma)
            z = (inner + mp.mpf(mu) ** 2 / 2) / mu
            assert got == pytest.approx(float(mp.log(mp.ncdf(-z))), rel=1e-12)
    assert SubsampledLoss(gaussian, gamma, "add").log_q_above(xs) is None
    assert remove.log_q_above(np.array([-1.0]))[0] == 0.0  # below log(1 − γ): all of Q
    # γ = 1 (no subsampling): the inner loss's own tail, with no bottom to the loss
    whole = SubsampledLoss(gaussian, 1.0, "remove").log_q_above(xs)
    np.testing.assert_allclose(whole, gaussian.log_q_above(xs), rtol=1e-12)


@pytest.mark.parametrize(
    ("offset", "spacing", "fill"),
    [
        (-40, 0.05, "random"),  # within 700 nats: one chunk
        (-1200, 1.0, "random"),  # 2,500 nats: four chunks joined on the chunk's scale
        (-100, 1.0, "tiny top"),  # the tail above a chunk below e^{-700} of its scale
        (-1000, 1.0, "subnormal"),  # a mass of 5e-324 at the top
    ],
)
def test_pessimistic_q_tails_are_certified_below_a_60_digit_sum(offset, spacing, fill):
    """S_Q(j) = Σ_{i ≥ j} Q_i = Σ_{i ≥ j} P_i e^{−λ_i}, summed in chunks of 700 nats and
    moved down by its error bound: never above the exact sum, and within 1e-11 of it
    except where a subnormal term is left out (which only lowers it)."""
    import mpmath as mp

    from gaussdp.pld.grid import GridPLD

    n = 2500  # the first and last masses positive: the profile keeps every atom
    rng = np.random.default_rng(7)
    if fill == "random":
        p = rng.random(n) ** 8
        p[rng.random(n) < 0.3] = 0.0
    else:
        p = np.zeros(n)
        p[5:1400] = 1e-3
        p[1400:] = 1e-300 if fill == "tiny top" else 0.0
        p[2000:2100] = 0.0
    p[0] = 0.5
    p[-1] = {"random": 0.5, "tiny top": 1e-300, "subnormal": 5e-324}[fill]
    pld = GridPLD(spacing, offset, p, None, infinity_mass=0.0, kind="pessimistic")
    profile = profile_of(pld)
    losses = np.asarray(profile.losses)
    assert losses.size == n
    exact = mp.mpf(0)
    with mp.workdps(60):  # the losses (offset + j)·h exactly, h the double given
        for j in range(n - 1, -1, -1):
            exact += mp.mpf(float(p[j])) * mp.exp(-mp.mpf(offset + j) * spacing)
            computed = profile.log_tail_q[j]
            if exact == 0:
                assert computed == -np.inf
                continue
            ratio = mp.exp(mp.mpf(float(computed)) - mp.log(exact))
            assert ratio <= 1, (j, ratio)
            if not (fill == "subnormal" and j >= 1400):  # the subnormal term alone
                assert ratio >= 1 - 1e-11, (j, ratio)
