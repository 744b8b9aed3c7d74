"""The report's curve from the accountant's profiles: hull, crossings, regret, optimistic side."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaussdp import DPSGD, Composition, Gaussian, PureDP, account, curves
from gaussdp.pld.query import Profile
from gaussdp.report import _steep, failure_probability, profile_regret, regret, tight_mu
from gaussdp.report.core import DEFAULT_DELTA_TAIL
from gaussdp.report.tight_mu import mu_of_tests


def profile_from_atoms(losses, p_masses, infinity=0.0, shift=0.0):
    """A Profile (the accountant's query object) of explicit atoms."""
    order = np.argsort(losses)
    losses, p = np.asarray(losses, dtype=float)[order], np.asarray(p_masses, dtype=float)[order]
    q = p * np.exp(-losses)
    tail_p = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
    with np.errstate(divide="ignore"):
        log_tail_q = np.log(np.concatenate([np.cumsum(q[::-1])[::-1], [0.0]]))
    return Profile(losses, tail_p, log_tail_q, infinity, shift, 1)


def upper_hull(points):
    """Andrew's monotone chain: vertices of the upper concave hull, by increasing α."""
    hull = []
    for x, y in sorted(points):
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (y - y1) >= (y2 - y1) * (x - x1):
                hull.pop()
            else:
                break
        hull.append((x, y))
    return hull


def brute_force_steep(profiles, alphas):
    """S(α): hull of every test (loss ≥ 0 atoms) of every profile, then slope 1."""
    points = []
    for profile in profiles:
        offset = profile.infinity_mass + profile.shift
        for j in range(profile.losses.size + 1):
            if j < profile.losses.size and profile.losses[j] < 0.0:
                continue
            points.append((math.exp(profile.log_tail_q[j]), profile.tail_p[j] + offset))
    hull = upper_hull(points)
    xs = np.array([x for x, _ in hull])
    ys = np.array([y for _, y in hull])
    # continue with slope 1 from the vertex where the hull's slope drops below 1
    with np.errstate(divide="ignore"):
        slopes = np.diff(ys) / np.diff(xs)
    k = int(np.argmax(slopes < 1.0)) if np.any(slopes < 1.0) else xs.size - 1
    xs, ys = xs[: k + 1], ys[: k + 1]
    return np.where(alphas <= xs[-1], np.interp(alphas, xs, ys), ys[-1] + alphas - xs[-1])


@st.composite
def two_directions(draw):
    profiles = []
    for _ in range(2):
        n = draw(st.integers(2, 9))
        losses = draw(st.lists(st.floats(-3.0, 6.0), min_size=n, max_size=n, unique=True))
        weights = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n)))
        infinity = draw(st.sampled_from([0.0, 0.0, 1e-6, 0.01]))
        p = weights / weights.sum() * (1.0 - infinity)
        q_total = float(np.sum(p * np.exp(-np.asarray(losses))))
        if q_total > 1.0:  # keep the Q-masses a sub-probability
            losses = list(np.asarray(losses) + math.log(q_total) + 1e-9)
        profiles.append(profile_from_atoms(losses, p, infinity))
    return profiles


@settings(max_examples=60, deadline=None)
@given(two_directions())
def test_steep_curve_is_the_hull_of_both_directions(profiles):
    steep = _steep.steep_curve([_steep.direction(p) for p in profiles])
    alphas = np.concatenate((np.linspace(0.0, 1.0, 501), np.logspace(-6, 0, 100)))
    expected = np.minimum(brute_force_steep(profiles, alphas), 1.0)
    assert np.allclose(steep.tpr_at(alphas), expected, atol=1e-12)
    assert np.allclose(
        steep.deltas, np.max([p.delta(steep.epsilons) for p in profiles], axis=0), atol=1e-12
    )
    assert steep.advantage == pytest.approx(float(max(p.delta(np.zeros(1))[0] for p in profiles)))


@settings(max_examples=40, deadline=None)
@given(two_directions())
def test_profile_regret_equals_the_segment_regret_of_the_symmetric_curve(profiles):
    directions = [_steep.direction(p) for p in profiles]
    steep = _steep.steep_curve(directions)
    floor = steep.floor
    mu = float(max(np.max(mu_of_tests(steep.alpha, steep.log_alpha, steep.tpr, floor)), 0.0))
    if not math.isfinite(mu) or mu == 0.0:
        return
    # The symmetric curve max(F, F⁻¹) as explicit breakpoints, then the segment formula.
    # breakpoints: the hull's vertices, their mirror images, and the kink on the diagonal
    low, high = 0.0, 1.0
    for _ in range(100):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if steep.beta_at(middle) > middle else (low, middle)
    grid = np.unique(np.clip(np.concatenate(([low, high], steep.alpha, 1 - steep.tpr)), 0, 1))
    symmetric = curves.from_points(grid, steep.beta_at(grid))
    by_segments = regret(symmetric, mu, delta=floor)
    by_profile = profile_regret(steep.epsilons, steep.deltas, mu, floor)
    assert by_profile == pytest.approx(by_segments, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(two_directions())
def test_optimistic_side_by_golden_section_matches_the_hull(profiles):
    steep = _steep.steep_curve([_steep.direction(p) for p in profiles])
    alphas = np.concatenate((np.linspace(0.0, 1.0, 101), np.logspace(-8, 0, 50)))
    assert np.allclose(
        _steep.profile_curve_beta(profiles, alphas), steep.beta_at(alphas), atol=1e-9
    )


def test_lattice_and_rank_merges_agree_with_the_generic_merge():
    accounting = account(DPSGD(2.0, 0.05, 300))
    for kind in ("upper", "lower"):
        directions = [_steep.direction(p) for p in getattr(accounting._guarantee, kind)]
        grid = _steep._merge_descending([d.losses for d in directions] + [np.zeros(1)])
        generic = [d.index(grid) for d in directions]
        fast = _steep._lattice_grid(directions) if kind == "upper" else None
        if fast is None:
            fast = _steep._merged_pair(*directions)
        assert fast is not None
        assert np.allclose(fast[0], grid, rtol=0, atol=1e-9)
        for d, a, b in zip(directions, fast[1], generic, strict=True):
            # The lattice gives (shift, count): k_j = clip(j + shift, 0, n); _take slices.
            indices = (
                a
                if isinstance(a, np.ndarray)
                else np.clip(np.arange(a[1]) + a[0], 0, d.losses.size)
            )
            assert np.array_equal(indices, b)
            assert np.array_equal(_steep._take(d.tpr, a), d.tpr[b])


@pytest.mark.parametrize("shift", [-7, -3, 0, 2, 5, 9, 14])
@pytest.mark.parametrize("count", [0, 1, 4, 10, 20])
def test_take_by_slices_is_fancy_indexing_of_the_clipped_range(shift, count):
    values = np.arange(11.0) ** 2
    expected = values[np.clip(np.arange(count) + shift, 0, values.size - 1)]
    assert np.array_equal(_steep._take(values, (shift, count)), expected)


def test_report_curve_is_close_to_the_accountants_tradeoff():
    """The report's certified curve and Accounting.tradeoff() (four-curve envelope) agree."""
    accounting = account(Composition([Gaussian(1.0), PureDP(0.5)]))
    report = accounting.gdp()
    alphas = np.concatenate((np.linspace(0.0, 1.0, 201), np.logspace(-9, 0, 50)))
    theirs = accounting.tradeoff().beta(alphas)
    assert np.allclose(report.beta(alphas), theirs, atol=1e-8)
    # The report's μ is that curve's tight μ at the declared failure probability, far
    # above the curve's own (the floor).
    curve = accounting.tradeoff()
    assert report.delta_tail == DEFAULT_DELTA_TAIL
    assert failure_probability(curve) <= report.delta_tail / 100
    assert tight_mu(curve, delta=report.delta_tail) == pytest.approx(report.mu, abs=1e-8)


def _whole_arrays(profile):
    """A direction's (α, t) formed at once from its profile (the definition, eagerly)."""
    first = int(np.searchsorted(profile.losses, 0.0, side="left"))
    tail = profile.tail_p[first:][::-1]
    log_alpha = profile.log_tail_q[first:][::-1]
    lower_ends = np.append(profile.losses[first:][::-1], 0.0)
    allowance = np.broadcast_to(np.asarray(profile.allowance(lower_ends), dtype=float), tail.shape)
    offset = profile.infinity_mass + allowance
    # exp of a contiguous array: numpy may round a reversed view's exp differently
    return np.exp(np.ascontiguousarray(log_alpha)), np.maximum(tail + offset, 0.0), offset


@pytest.mark.parametrize("floor", [None, 1e-13])  # a floor this low composes tilted
def test_computed_directions_equal_their_whole_arrays(floor):
    accounting = account(DPSGD(1.0, 0.01, 300))
    if floor is not None:
        accounting = accounting.with_delta_floor(floor)
    rng = np.random.default_rng(0)
    for profile in accounting._guarantee.upper:
        d = _steep.direction(profile)
        alpha, tpr, offset = _whole_arrays(profile)
        assert np.array_equal(np.asarray(d.alpha), alpha)
        assert np.array_equal(np.asarray(d.tpr), tpr)
        n = tpr.size
        picks = rng.integers(-n, n, 50)
        mask = rng.random(n) < 0.01
        for key in (0, n - 1, -1, slice(3, 40), slice(None, None, 7), picks, mask):
            assert np.array_equal(d.tpr[key], tpr[key])
            assert np.array_equal(d.alpha[key], alpha[key])
        assert d.floor == max(float(offset[0]), 0.0)
        assert d.slack == max(float(np.max(offset)) - profile.infinity_mass, 0.0)
    tilted = accounting._guarantee.upper[0]
    assert (floor is not None) == (tilted.shift_at_cut > 0.0 or tilted.shift_below > 0.0)


def _mirrored_by_interp(steep, target):
    """F⁻¹ by np.interp over the vertices (first of equal t) and the final point (1, end)."""
    end_alpha, end_t = steep.alpha[-1], steep.tpr[-1]
    xs = np.append(steep.alpha, end_alpha + max(1.0 - end_t, 0.0))
    ys = np.append(steep.tpr, 1.0)
    first = np.ones(ys.size, dtype=bool)
    first[1:] = ys[1:] > ys[:-1]
    return np.interp(target, ys[first], xs[first], left=0.0, right=xs[-1])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8),
    st.lists(st.sampled_from([0.0, 0.2, 0.5, 0.7, 1.0, 0.33]), min_size=1, max_size=8),
    st.lists(st.floats(-0.5, 1.5), min_size=1, max_size=20),
)
def test_first_reaching_is_the_interpolation_over_distinct_vertices(alphas, tprs, targets):
    n = min(len(alphas), len(tprs))
    alpha = np.sort(np.array(alphas[:n]))
    tpr = np.sort(np.array(tprs[:n]))
    with np.errstate(divide="ignore"):
        steep = _steep.SteepCurve(np.zeros(1), np.zeros(1), alpha, np.log(alpha), tpr, 0, 0, 0)
    target = np.concatenate((targets, tpr, [0.0, 1.0]))
    assert np.array_equal(steep._first_reaching(target), _mirrored_by_interp(steep, target))
    # shapes as np.interp keeps them: a scalar stays a scalar, a matrix a matrix
    assert np.shape(steep._first_reaching(0.5)) == ()
    assert steep._first_reaching(target.reshape(-1, 1)).shape == (target.size, 1)
