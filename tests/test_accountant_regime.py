"""The engine where large datasets put DP-SGD: small sampling rates, long runs, small ε.

References are independent of the code under test: dp_accounting's connect-the-dots
PLD at a grid of 1e-5 (an upper bound: ours must be at least as tight), the
definition of the binned (dominated) pair for the optimistic side, and δ(ε) by
Laplace inversion of the exact moment generating function (no grid, no FFT:
tests/contour_reference.py).
"""

import functools
import itertools
import math
import re
import warnings
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gaussdp as g
from gaussdp import accountant as A
from gaussdp.accountant import grids, guarantees, numerical
from gaussdp.pld import GaussianLoss, discretise
from gaussdp.pld.grid import OPTIMISTIC
from gaussdp.pld.query import from_zero, profile_of
from tests import contour_reference

# (noise multiplier, sampling probability, steps, δ): ε from 0.05 to 0.07
RUNS = [
    (1.0, 1e-5, 10**6, 1e-6),
    (2.0, 1e-4, 10**5, 1e-7),
]


def _dp_accounting_upper(sigma, q, steps, delta):
    return _dp_accounting_composed(sigma, q, steps).get_epsilon_for_delta(delta)


@functools.cache
def _dp_accounting_composed(sigma, q, steps):
    """dp_accounting's composition at a grid of 1e-5, made once per run (read at several δ)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    return pld.from_gaussian_mechanism(
        sigma, sampling_prob=q, value_discretization_interval=1e-5
    ).self_compose(steps)


@pytest.mark.parametrize(
    ("sigma", "q", "steps", "epsilon"),
    [
        # dp_accounting's pessimistic ε at δ = 7e-9 is 7.17206 at grid 1e-5 and 7.17280 at
        # 1e-4, both below the true 7.172891 (regime benchmark, seed 1127, run 16)
        (0.59, 3.2e-4, 700_000, 7.17),
        (0.8, 1e-3, 10_000, 1.17),
    ],
)
def test_certified_delta_bounds_hold_the_exact_delta_of_long_small_q_runs(sigma, q, steps, epsilon):
    exact = _exact_delta(sigma, q, steps, epsilon)
    lower, upper = g.account(g.DPSGD(sigma, q, steps)).delta_bounds(epsilon)
    assert lower <= exact <= upper
    assert upper - lower <= 1e-3 * exact  # and they are close to it


@functools.cache
def _exact_delta(sigma, q, steps, epsilon):
    """δ(ε) by Laplace inversion, max over directions (cached: two tests read δ(1.17))."""
    return max(
        contour_reference.delta(sigma, q, steps, epsilon, direction)
        for direction in ("remove", "add")
    )


@pytest.fixture(scope="module")
def exact_delta_at_1_17():
    """δ(1.17) of σ = 0.8, q = 1e-3, T = 10⁴ by Laplace inversion (1.00653e-7)."""
    return _exact_delta(0.8, 1e-3, 10_000, 1.17)


@pytest.mark.parametrize("accuracy", [3e-2, 1e-3, 5e-5, 1e-5])
def test_every_accuracy_brackets_the_exact_epsilon_within_what_it_promises(
    accuracy, exact_delta_at_1_17
):
    # The grid the error law chooses and the refinements it triggers, at each accuracy:
    # both queries hold the exact value, and the bracket is as narrow as promised.
    accounting = g.account(g.DPSGD(0.8, 1e-3, 10_000), accuracy=accuracy)
    with warnings.catch_warnings():
        warnings.simplefilter("error", g.AccuracyWarning)
        lower, upper = accounting.epsilon_bounds(exact_delta_at_1_17)
    assert lower <= 1.17 <= upper
    assert upper - lower <= accuracy * max(upper, 1.0)
    delta_lower, delta_upper = accounting.delta_bounds(1.17)
    assert delta_lower <= exact_delta_at_1_17 <= delta_upper


@pytest.mark.parametrize("run", RUNS)
def test_small_sampling_rates_meet_the_accuracy_and_are_at_least_as_tight(run):
    sigma, q, steps, delta = run
    accounting = g.account(g.DPSGD(sigma, q, steps))
    with warnings.catch_warnings():
        warnings.simplefilter("error", g.AccuracyWarning)
        lower, upper = accounting.epsilon_bounds(delta)
    # below ε = 1 the accuracy is absolute: upper − lower ≤ 5e-5
    assert 0.0 < lower <= upper
    assert upper - lower <= A.DEFAULT_ACCURACY * max(upper, 1.0)
    reference = _dp_accounting_upper(sigma, q, steps, delta)
    assert lower <= reference
    assert upper <= reference * (1 + 1e-7)


def test_a_relative_accuracy_at_every_epsilon_on_request():
    sigma, q, steps, _ = RUNS[1]
    delta = 1e-6  # (at 1e-7 the lower bound's rounding allowance decides: a warning says so)
    default = g.account(g.DPSGD(sigma, q, steps))
    relative = g.account(g.DPSGD(sigma, q, steps), epsilon_scale=0.0)
    assert relative.grid_spacing < default.grid_spacing
    lower, upper = relative.epsilon_bounds(delta)
    assert upper - lower <= A.DEFAULT_ACCURACY * upper
    wide = default.epsilon_bounds(delta)
    assert wide[0] <= upper and lower <= wide[1]  # both certified: the intervals meet


def _composed_points(sigma, q, steps, delta, accuracy):
    """Grid points composed for both bounds, read from the progress messages."""
    messages = []
    accounting = g.account(g.DPSGD(sigma, q, steps), accuracy=accuracy, progress=messages.append)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", g.AccuracyWarning)
        lower, upper = accounting.epsilon_bounds(delta)
    points = sum(
        int(found.group(1).replace(",", ""))
        for found in (re.search(r"\(([\d,]+) points\)", text) for text in messages)
        if found
    )
    return points, lower, upper, caught


def test_the_cost_follows_the_accuracy_asked():
    """A coarser accuracy never composes more; each delivers its gap or says why not."""
    sigma, q, steps, delta = RUNS[1]
    previous = math.inf
    for accuracy in (1e-5, 5e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2):
        points, lower, upper, caught = _composed_points(sigma, q, steps, delta, accuracy)
        assert points <= previous, accuracy
        previous = points
        within = upper - lower <= accuracy * max(upper, 1.0)
        assert within or any("not reached" in str(w.message) for w in caught)


def test_grid_refinement_takes_at_most_two_steps(monkeypatch):
    """An optimistic law is corrected from the measured gap, without a cascade."""
    monkeypatch.setattr(grids, "_ACCURACY_SHARE", 12.0)
    accounting = g.account(g.DPSGD(1.1, 0.01, 5000))
    accounting.epsilon_bounds(1e-6)
    refined = accounting._guarantee._refined
    steps = [key for key in refined if key[0] == "grid"]
    assert 1 <= len(steps) <= guarantees._GRID_REFINEMENTS
    for key in steps:
        assert refined[key].refine_grid is None  # the finer accounting refines no further


def test_a_gap_just_above_the_accuracy_asks_for_an_upper_grid_a_little_finer(monkeypatch):
    """At δ = 1e-9, ε is 1.28 times the ε the grids were chosen at, and so is the gap.

    With grids chosen for 80% of the accuracy (the share until grids were chosen for 75%,
    which now reaches it at once: the next test) the first grids miss the accuracy
    there by 2.5%; the upper bound alone is composed
    again on a grid chosen for 80% of it at that gap (1.13 times the points, not the
    1.41 of half the accuracy), and that reaches it: neither the lower compositions
    nor its tails are made again. The bounds are checked against dp_accounting's
    pessimistic ε at a grid of 1e-5 (5% above ours here). The upper-first step is a
    shortcut: where it leaves the gap (here an upper grid that narrows nothing), both
    grids are refined. (Composed in blocks, gaussdp.pld.blocks, the upper bound is 13
    times nearer and the first grids reach the accuracy: blocks are left out here, to
    test the refinement itself.)
    """
    monkeypatch.setattr(grids, "_ACCURACY_SHARE", 0.8)
    monkeypatch.setattr(numerical, "blocked_items", lambda *args: None)
    sigma, q, steps, _ = RUNS[0]
    accounting = g.account(g.DPSGD(sigma, q, steps))
    guarantee = accounting._guarantee
    lower, upper = accounting.epsilon_bounds(1e-9)
    refined = dict(guarantee._refined)
    assert [key[1:] for key in refined if key[0] == "upper grid"] == [(2.0**-0.375, (0,))]
    assert [key for key in refined if key[0] == "grid"] == []
    assert upper - lower <= A.DEFAULT_ACCURACY * max(upper, 1.0)
    assert lower <= upper <= _dp_accounting_upper(sigma, q, steps, 1e-9)
    # Only the remove direction is composed again: the add direction's bound is further
    # below the lower bound than the accuracy (its ε is the smaller), and stays.
    (finer,) = [v for key, v in refined.items() if key[0] == "upper grid"]
    assert len(finer.upper) == 1
    add_upper = guarantee._upper_by_direction(1e-9)[1]
    assert add_upper <= lower + A.DEFAULT_ACCURACY * max(upper, 1.0)
    # Nor is its lower tail composed: its (tilted) upper bound lies below the lower bound
    # the remove direction's tail reached.
    assert add_upper < lower
    assert [key[2] for key in refined if key[0] == "tail"] == [0]

    stuck = replace(guarantee, refine_upper_grid=lambda finer, _: guarantee, _refined={})
    lower, upper = stuck.epsilon_bounds(1e-9)
    kinds = [key[0] for key in stuck._refined if key[0] in ("grid", "upper grid")]
    assert kinds == ["upper grid", "grid"]
    assert upper - lower <= A.DEFAULT_ACCURACY * max(upper, 1.0)


def test_the_reports_smallest_delta_is_reached_on_the_first_grids():
    """The same run's report at the default δ's: every row within the accuracy, no grid again.

    Grids chosen for 75% of the accuracy leave room for the 1.28 times larger gap
    at δ = 1e-9: the report composes no finer grid (at 80% its second upper grid
    took 40% of its time and set its peak memory).
    """
    sigma, q, steps, _ = RUNS[0]
    accounting = g.account(g.DPSGD(sigma, q, steps))
    report = accounting.gdp()
    for row in report.epsilons:
        assert row.epsilon - row.epsilon_lower <= A.DEFAULT_ACCURACY * max(row.epsilon, 1.0)
    floored = report.accounting._guarantee
    assert not [key for key in floored._refined if key[0] in ("grid", "upper grid")]


def test_a_near_miss_of_every_direction_refines_both_and_says_why_it_stays(monkeypatch):
    """A Laplace mechanism at δ = 8.3e-11: its exact ε is 1/b + 2·log(1 − δ), an atom of
    its loss, which a grid of spacing h rounds up by up to h (not h², as the error law
    says). Both directions miss the accuracy a little: the upper-first step refines both
    (it failed with a TypeError when no direction was left out), the finer grids do not
    close the gap, and the warning says so (not that memory refused them). (Its
    compositions are short, so the upper grid would be the cheap fine one, which reaches
    the accuracy at once; here the upper grid is the accuracy's, as on long runs.)
    """
    monkeypatch.setattr(grids, "CHEAP_UPPER_POINTS", 0)
    b = 8.381521003401502
    exact = 1.0 / b + 2.0 * math.log1p(-8.3e-11)
    accounting = g.account(g.Laplace(b))
    with pytest.warns(g.AccuracyWarning, match="finer grids tried did not narrow it"):
        lower, upper = accounting.epsilon_bounds(8.3e-11)
    assert lower <= exact <= upper
    refined = accounting._guarantee._refined
    assert [key[2] for key in refined if key[0] == "upper grid"] == [(0, 1)]
    assert not accounting._guarantee.finer_grids_refused()
    narrow = g.account(g.Laplace(b), grid_spacing=1e-6)  # a finer grid narrows it
    lower, upper = narrow.epsilon_bounds(8.3e-11)
    assert lower <= exact <= upper <= exact + 1e-6


def test_refinement_stops_when_a_finer_grid_does_not_narrow_the_gap():
    """A far gap (20 accuracies) asks first for a grid for 1/16 of the accuracy; when that
    grid leaves the gap as it was (it is not the grid's), no second grid is composed.
    """
    accounting = g.account(g.DPSGD(2.0, 0.01, 50))
    guarantee = accounting._guarantee
    asked = []

    class Same:  # a finer accounting whose bounds are no tighter
        def epsilon_bounds(self, delta):
            return lower, upper

    def refine_grid(finer):
        asked.append(finer / guarantee.accuracy)
        return Same()

    guarantee = replace(guarantee, refine_grid=refine_grid, refine_upper_grid=None, _refined={})
    lower = 1.0
    upper = lower + 20 * guarantee.accuracy
    assert guarantee._on_a_finer_grid(1e-6, lower, upper) == (lower, upper)
    assert asked == [pytest.approx(1 / 16)]


def test_random_allocation_is_not_refined_where_its_own_pairs_keep_the_bounds_apart(
    monkeypatch,
):
    """Random allocation whose laws are coarse: the gap is the pairs', not the grid's.

    The pairs of random allocation are as fine as the grid of the laws of its sums,
    which the accuracy sets (at the default they now meet it down to δ = 1e-13 on this
    run); on the coarsest such grid (h = 0.05) the gap at δ = 1e-11 is many accuracies,
    and every finer grid of the accountant would build the pairs again for the same
    bounds (10 epochs of 100 steps: 9.9 s). No finer grid is composed, and the
    warning says why.
    """
    from gaussdp.pld import allocation

    monkeypatch.setattr(allocation, "spacing_for", lambda *args: 0.05)
    mechanism = g.Repeated(g.RandomAllocation(g.Gaussian(5.2), 17, 1), 50)
    accounting = g.account(mechanism)
    with pytest.warns(g.AccuracyWarning, match="known only between two computed pairs"):
        lower, upper = accounting.epsilon_bounds(1e-11)
    assert 0.0 < lower < upper
    assert (upper - lower) / upper > 2 * A.DEFAULT_ACCURACY  # the pairs' gap, not the grid's
    assert not [key for key in accounting._guarantee._refined if key[0] == "grid"]


def test_a_lower_floor_starts_from_the_tilted_composition_a_query_made(monkeypatch):
    """with_delta_floor (the report's first step) does not compose again what a query tilted.

    At δ = 1e-12 on 20,000 steps the plain rounding allowance decides, so the query
    composes the upper bound tilted at the default; an accounting asked for a floor
    of 1e-14 on the same grid starts from it (it reaches 5e-20), and its bounds are
    the tilted ones.
    """
    accounting = g.account(g.DPSGD(1.1, 0.01, 20000))
    _, upper = accounting.epsilon_bounds(1e-12)
    # (composed tilted at once: the plain allowance, 2.2e-12, is above a tenth of 1e-12)
    tilted = accounting.privacy_loss_distributions("pessimistic")
    assert all(pld.cut_index is not None for pld in tilted.values())
    composed = []
    compose_all = numerical._compose_all

    def recorded(*args, **kwargs):
        composed.append(args[3])
        return compose_all(*args, **kwargs)

    monkeypatch.setattr(numerical, "_compose_all", recorded)
    floored = accounting.with_delta_floor(1e-14)
    assert floored.upper_floor() <= 1e-14
    kept = floored.privacy_loss_distributions("pessimistic")
    assert composed == []  # nothing composed again
    assert all(pld.cut_index is not None for pld in kept.values())
    assert floored.epsilon(1e-12) == upper
    fresh = g.account(g.DPSGD(1.1, 0.01, 20000)).with_delta_floor(1e-14)
    assert fresh.epsilon(1e-12) == pytest.approx(upper, rel=1e-12)


def test_a_query_below_the_plain_floor_composes_tilted_at_once(monkeypatch):
    """A long run queried at a δ its plain rounding allowance would decide is composed
    tilted from the start: the plain composition, which the query would not use, is not
    made, and the bound is the one the plain-then-tilted path gives.

    On 20,000 steps the plain allowance is u·(4T + 16 log₂ N) ≈ 9e-12: at δ = 1e-9 it is
    below a tenth of δ (plain first, as before), at δ = 1e-11 above.
    """
    kinds = []
    compose_all = numerical._compose_all

    def recorded(*args, **kwargs):
        kinds.append((args[3], args[5]))  # kind, floor (None: plain first; 0.0: tilted)
        return compose_all(*args, **kwargs)

    monkeypatch.setattr(numerical, "_compose_all", recorded)
    mechanism = g.DPSGD(1.1, 0.01, 20000)
    direct = g.account(mechanism)
    lower, upper = direct.epsilon_bounds(1e-11)
    assert ("pessimistic", None) not in kinds and ("pessimistic", 0.0) in kinds
    kinds.clear()
    plain_first = g.account(mechanism)
    plain_first.epsilon(1e-5)  # composes plain first
    assert kinds == [("pessimistic", None)]
    other_lower, other_upper = plain_first.epsilon_bounds(1e-11)
    assert other_upper == upper
    # (the lower tail's window is set from the upper bound's δ: plain or tilted, both certified)
    assert other_lower == pytest.approx(lower, rel=1e-9)
    kinds.clear()
    g.account(mechanism).epsilon_bounds(1e-9)
    assert kinds[0] == ("pessimistic", None)


def test_a_tilt_leaves_alone_a_direction_below_what_the_other_computes():
    """Directions are tilted only where their bound is above what the largest one
    computes without allowances: a tilt cannot take ε below that.

    On σ = 0.8, q = 1e-3, T = 5,000 at δ = 2e-11 the plain allowance (4.5e-12) is
    between a tenth and a half of δ: a first query tilts the remove direction at once
    and composes the add direction plain, whose ε (0.72) is far below the remove
    direction's (2.27), and no tilt of it follows. Composed plain first, the query
    tilts the remove direction alone; both give the same bound. (From 10,000 steps on
    both directions are composed tilted at once, in blocks: gaussdp.pld.blocks.)
    """
    mechanism = g.DPSGD(0.8, 1e-3, 5_000)
    at_once = g.account(mechanism)
    _, upper = at_once.epsilon_bounds(2e-11)
    composed = at_once.privacy_loss_distributions("pessimistic")
    assert composed["remove"].cut_index is not None and composed["add"].cut_index is None
    assert [key for key in at_once._guarantee._refined if key[0] == "upper"] == []
    add_upper = float(at_once._guarantee.upper[1].epsilon(2e-11))
    assert add_upper < upper / 1.5
    plain_first = g.account(mechanism)
    plain_first.epsilon(1e-5)
    _, other_upper = plain_first.epsilon_bounds(2e-11)
    refined = [key for key in plain_first._guarantee._refined if key[0] == "upper"]
    assert refined == [("upper", None, (0,))]  # the remove direction only
    assert other_upper == upper
    # δ(ε) on an array reads a tilted and a plain direction side by side (their
    # allowances, one position-dependent and one constant, have one shape)
    epsilons = np.array([1.0, 2.0, upper])
    lower_split, upper_split = at_once.delta_bounds(epsilons)
    lower_plain, upper_plain = plain_first.delta_bounds(epsilons)
    assert np.all(lower_split <= upper_plain) and np.all(lower_plain <= upper_split)
    assert upper_split[-1] <= 2e-11 * (1 + 1e-9)


def test_queries_that_miss_a_little_share_one_finer_grid():
    """Finer grids are taken on a ladder of accuracies, and a finer one made is reused."""
    guarantee = g.account(g.DPSGD(1.1, 0.01, 500))._guarantee
    factors = {guarantee._finer_factor(wanted) for wanted in (0.80, 0.79, 0.775)}
    assert factors == {2.0**-0.375}
    guarantee._refined[("grid", 0.5)] = guarantee
    assert guarantee._finer_factor(0.6) == 0.5  # at least as fine as wanted: reused
    assert guarantee._finer_factor(0.45) == 2.0**-1.25
    guarantee._refined[("grid", 0.5)] = None  # memory did not allow it: not reused
    assert guarantee._finer_factor(0.6) == 2.0**-0.75


def test_optimistic_atoms_are_kept_by_their_true_loss():
    """Binned labels may drift far from the merged atoms' true losses after T steps.

    The dominated pair's δ(ε) = Σ_k (P_k − e^ε Q_k)_+ is read at the atoms' true
    losses log(P_k/Q_k); relabelling atoms (here every label 0.1 nats too low, as
    binning a spike narrower than h does to T-fold compositions) must not change
    what δ(ε ≥ 0) reads, and from_zero must not drop atoms whose true loss is ≥ 0.
    """
    pld = discretise(GaussianLoss(1.0), 1e-3, OPTIMISTIC, 1e-30)
    shift = 100  # labels 0.1 nats below the true losses
    drifted = replace(
        pld,
        offset=pld.offset - shift,
        tilted_q_masses=pld.tilted_q_masses * math.exp(-shift * pld.spacing),
    )
    epsilons = np.array([0.0, 0.02, 0.05, 0.09, 0.3, 1.0])
    truth = profile_of(pld).delta(epsilons)
    assert np.allclose(profile_of(drifted).delta(epsilons), truth, rtol=1e-9, atol=1e-15)
    assert np.allclose(profile_of(from_zero(drifted)).delta(epsilons), truth, rtol=1e-9)


@settings(max_examples=3, deadline=None)
@given(
    st.floats(min_value=0.7, max_value=3.0),
    st.floats(min_value=1e-5, max_value=1e-3),
    st.integers(min_value=1_000, max_value=50_000),
)
def test_monotone_at_small_sampling_rates(sigma, q, steps):
    # At the default accuracy: the grids users get, and bounds close enough that an
    # ordering broken by more than a few 1e-5 shows.
    delta = 1e-6

    def bounds(sigma, q, steps):
        return g.account(g.DPSGD(sigma, q, steps)).epsilon_bounds(delta)

    base = bounds(sigma, q, steps)
    noisier = bounds(sigma * 1.3, q, steps)
    sparser = bounds(sigma, q / 1.5, steps)
    shorter = bounds(sigma, q, steps // 2)
    for less_private_lower_bound in (noisier[0], sparser[0], shorter[0]):
        assert less_private_lower_bound <= base[1]
    assert base[0] <= base[1]


def test_a_lower_bound_near_the_rounding_noise_stays_below_the_upper_bound():
    """Binned atoms whose masses are FFT rounding noise are left out of the lower bound.

    After 10⁵ steps at q = 1e-6 the composed rows carry rounding noise, clipped at 0,
    over millions of atoms; read at their computed losses, those atoms put the lower
    bound on ε(1e-10) at 0.81, above gaussdp's certified (tilted) upper bound 0.566 and
    above dp_accounting's pessimistic ε, 0.559 (its default grid, an upper bound).
    """
    accounting = g.account(g.DPSGD(0.5, 1e-6, 10**5))
    guarantee = accounting._guarantee
    lower = max(profile.epsilon(1e-10) for profile in guarantee.lower)
    from dp_accounting.pld import privacy_loss_distribution as pld

    composed = pld.from_gaussian_mechanism(0.5, sampling_prob=1e-6).self_compose(10**5)
    assert 0.0 < lower <= composed.get_epsilon_for_delta(1e-10)
    for composed in accounting.privacy_loss_distributions("optimistic").values():
        assert composed.noise_p > 0.0  # the noise the profile leaves out is measured


@pytest.mark.parametrize("bad", [-1.0, math.inf, math.nan])
def test_a_bad_epsilon_scale_is_one_clear_error(bad):
    with pytest.raises(g.InvalidParameterError, match=r"^epsilon_scale must be in \[0, inf\)"):
        g.account(g.DPSGD(1.0, 0.01, 10), epsilon_scale=bad)


class _FakeTail:
    """A lower tail whose ε(δ) is given (the decision, not the tail, is tested)."""

    def __init__(self, epsilon: float):
        self.value = epsilon

    def epsilon(self, delta: float) -> float:
        return self.value


@pytest.mark.parametrize(
    ("gaps", "composed"),
    [
        ({4: 20.0}, [4]),  # more than 16 accuracies: the coarse tail's error cannot decide it
        ({4: 0.5}, [4]),  # within the accuracy
        ({4: 5.0, 2: 0.5}, [4, 2]),
        ({4: 5.0, 2: 3.0, 1: 0.5}, [4, 2, 1]),
        ({4: 5.0, 2: 4.5}, [4, 2]),  # more than 4 accuracies after the tail twice as fine
    ],
)
def test_lower_tails_go_finer_only_while_their_grid_error_can_decide_the_gap(
    gaps, composed, monkeypatch
):
    """Lower tails are composed on grids 4, 2, 1 times the lower bound's (c² the error).

    After a tail c times coarser, a gap over c² accuracies is kept (its binning error is
    at most half of it), one within the accuracy too; else the tail twice as fine follows.
    (Only where the lower profiles are long: here made so by lowering the threshold.)
    """
    monkeypatch.setattr(guarantees, "_COARSE_TAILS_FROM", 0)
    accounting = g.account(g.DPSGD(1.0, 0.01, 100))
    guarantee = accounting._guarantee
    upper, delta = 0.5, 1e-6
    scale = guarantee.accuracy * 1.0  # ε below 1: the accuracy is absolute
    calls = []

    def refine_lower(target, smallest, tolerance, index, coarseness=1, reach=None):
        calls.append(coarseness)
        return _FakeTail(upper - gaps[coarseness] * scale)

    fake = replace(guarantee, refine_lower=refine_lower, _refined={})
    bin_number = int(guarantees._tail_bins(np.array([upper]))[0])
    lower = fake._tail_lower(bin_number, 0, delta, 0.0, upper)
    assert calls == composed
    assert lower == pytest.approx(upper - gaps[composed[-1]] * scale, rel=1e-12)


def test_short_lower_profiles_compose_their_tail_fine_at_once():
    """Below _COARSE_TAILS_FROM points a coarse tail costs more than it can save."""
    guarantee = g.account(g.DPSGD(1.0, 0.01, 100))._guarantee
    assert max(len(p.losses) for p in guarantee.lower) <= guarantees._COARSE_TAILS_FROM
    calls = []

    def refine_lower(target, smallest, tolerance, index, coarseness=1, reach=None):
        calls.append(coarseness)
        return _FakeTail(0.5 - 5.0 * guarantee.accuracy)

    fake = replace(guarantee, refine_lower=refine_lower, _refined={})
    bin_number = int(guarantees._tail_bins(np.array([0.5]))[0])
    fake._tail_lower(bin_number, 0, 1e-6, 0.0, 0.5)
    assert calls == [1]


def test_crossed_certified_bounds_are_said_not_only_clamped():
    # Both bounds are certified, so a lower bound above the upper one is a defect (as the
    # mass at +∞ lost below the roundoff of 1 was); the clamp keeps lower ≤ upper for
    # the caller, and a RuntimeWarning says so (the suite makes it an error).
    with pytest.warns(RuntimeWarning, match=r"delta=1e-14 cross \(lower 3\.01386055"):
        assert guarantees._ordered(3.01386055, 3.0138605, 1e-14) == 3.0138605
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # within the bounds' own rounding margins: no word
        assert guarantees._ordered(1.0 + 1e-12, 1.0, 1e-5) == 1.0
        assert guarantees._ordered(0.5, 1.0, 1e-5) == 0.5


def test_on_the_coarsest_grid_short_runs_keep_almost_no_rounding_allowance():
    # σ = 1, q = 0.01, T = 1000: the accuracy's grid is capped at dp_accounting's default
    # (1e-4), where the plain allowance cost ε 6e-9 and left the upper bound above that
    # accountant's figure for truncated Poisson at B = 1500 (1.8282436464): the upper bound
    # is tilted until the allowance costs at most 1e-9 of ε. A coarser accuracy is not.
    mechanism = g.DPSGD(1.0, 0.01, 1000)
    accounting = g.account(mechanism)
    assert accounting.grid_spacing == g.accountant.MAXIMUM_GRID_SPACING
    lower, upper = accounting.epsilon_bounds(1e-5)
    plain = max(p.epsilon(1e-5) for p in accounting.profiles("upper"))
    computed = max(
        guarantees._without_allowance(p).epsilon(1e-5) for p in accounting.profiles("upper")
    )
    assert plain - computed > 5e-9  # what the plain allowance costs
    assert upper < 1.8282436464 < plain
    assert lower < upper and upper - computed < 1e-9 * upper
    coarse = g.account(mechanism, accuracy=1e-3)
    assert coarse.epsilon_bounds(1e-5)[1] == max(p.epsilon(1e-5) for p in coarse.profiles("upper"))


def test_a_pair_with_no_finite_loss_adds_nothing_to_the_error_law():
    # Found by the fuzzer: a random allocation with too little noise for its grid (σ = 0.48
    # in a group of three) has an upper pair with every loss at +∞, and its moments read
    # 0/0, so every grid spacing was NaN. Such a pair adds nothing to the composed loss's
    # moments (its mass at +∞ is a floor under every δ).
    from gaussdp.pld.losses import AtomicLoss, GaussianLoss

    vacuous = AtomicLoss(np.array([]), np.array([]), np.array([]), 1.0)
    gaussian = GaussianLoss(1.0)
    law = grids.error_law({"a": (vacuous, vacuous), "b": (gaussian, gaussian)}, {"a": 1, "b": 10})
    alone = grids.error_law({"b": (gaussian, gaussian)}, {"b": 10})
    assert (law.mean, law.variance) == (alone.mean, alone.variance)
    assert math.isfinite(law.mean) and law.variance > 0.0


def test_a_coarse_accuracy_may_have_a_coarser_grid_and_keeps_its_promise():
    # At the default accuracy the grid is never coarser than dp_accounting's default
    # (1e-4); a coarser accuracy may go up to 8e-4, so that asking for fewer digits buys
    # time (a composition reaching ε = 549 took 28 s at any accuracy).
    mechanism = g.DPSGD(7.2, 0.085, 30000)
    assert g.account(mechanism).grid_spacing <= g.accountant.MAXIMUM_GRID_SPACING
    for accuracy in (3e-2, 1e-3, 1e-4):
        accounting = g.account(mechanism, accuracy=accuracy)
        assert 1e-4 < accounting.grid_spacing <= 8e-4
        lower, upper = accounting.epsilon_bounds(3e-7)
        assert 0.0 < upper - lower <= accuracy * max(upper, 1.0)
    # with an (ε, δ)-DP part at a round ε (off the grid's points) too
    part = g.Composition((g.ApproxDP(0.5, 1e-6), g.DPSGD(7.2, 0.085, 30000)))
    lower, upper = g.account(part, accuracy=1e-2).epsilon_bounds(1e-5)
    assert upper - lower <= 1e-2 * max(upper, 1.0)


def test_coarse_grids_follow_the_accuracy_continuously_so_fewer_steps_never_cost_epsilon():
    # Snapped to a ladder 1e-4·2^k, the grid of σ = 1, q = 0.0017 at accuracy 3e-3 went
    # from 2e-4 to 4e-4 between 3,691 and 3,690 steps, and the upper bound rose with one
    # step fewer (0.50706 to 0.50792): the grid error jumped fourfold. Continuous in the
    # run, it does not.
    uppers = [
        g.account(g.DPSGD(1.0, 0.0017, steps), accuracy=3e-3).epsilon_bounds(1e-5)[1]
        for steps in (3680, 3690, 3691, 3700)
    ]
    assert uppers == sorted(uppers)


@pytest.mark.parametrize(
    ("sigma", "q", "steps", "delta"),
    [
        (3.5642052646517, 0.0017, 5_000, 3e-9),  # single steps
        (8.4238656774171, 0.0017, 17_000, 1e-8),  # in blocks, composed plain first
    ],
)
def test_the_upper_bound_does_not_jump_up_with_more_noise_at_the_tilt_threshold(
    sigma, q, steps, delta
):
    """Where more noise takes the plain allowance's cost below its budget (a tenth of the
    accuracy) the upper bound stops being tilted. It used to jump up there by about that
    budget (5.0e-6 and 4.97e-6 of ε between σ − 4e-15 and σ); now it moves continuously
    from the tilted bound to the plain one, and falls with σ up to rounding (1e-7)."""
    sigmas = [sigma - 1e-6, sigma - 4e-15, sigma, sigma + 4e-15, sigma + 1e-6]
    uppers = [g.account(g.DPSGD(s, q, steps)).epsilon_bounds(delta)[1] for s in sigmas]
    for before, after in itertools.pairwise(uppers):
        assert after <= before * (1 + 1e-7), uppers


def test_one_step_more_never_crosses_into_blocks_and_a_smaller_epsilon():
    """The accuracy's grid gets finer as T grows; judged on the run's own grid, one step
    more crossed the blocks' ceiling (5e-5) and read a smaller ε (3.5500178 at T =
    74,738, 3.5499606 at 74,739: 1.6e-5 of ε). Judged on the grid at 10,000 steps
    (grids.blocks_allowed), the decision no longer changes along T; and a run whose grid
    at 10,000 steps is already below the ceiling keeps its blocks."""
    uppers = [g.account(g.DPSGD(1.0, 0.0023, t)).epsilon(1e-5) for t in (74_738, 74_739, 74_740)]
    assert uppers[0] <= uppers[1] <= uppers[2], uppers
    calls = []
    original = numerical.blocked_items

    def spy(*args, **kwargs):
        found = original(*args, **kwargs)
        calls.append(found is not None)
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(numerical, "blocked_items", spy)
        g.account(g.DPSGD(14.0, 0.027, 23_000)).epsilon(2e-6)  # grid 3.7e-5 at 10,000 steps
    assert calls and all(calls)
