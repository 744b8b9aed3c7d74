"""Reuse along steps: one transform, every T certified like compose_many, equal to single calls."""

import math

import numpy as np
import pytest

from gaussdp import DPSGD, Laplace, Neighbouring, Pipeline, PoissonSubsampled, account
from gaussdp.pld import composition, profile_of, self_compose
from gaussdp.pld.checkpoints import self_compose_checkpoints
from gaussdp.pld.dominating_pairs import dominating_losses
from gaussdp.pld.grid import GridPLD, discretise
from gaussdp.sweeps.steps import account_steps, group_by_steps, step_key


@pytest.mark.parametrize("kind", ["pessimistic", "optimistic"])
@pytest.mark.parametrize("direction", [0, 1])
def test_checkpoints_equal_self_compose(kind, direction):
    loss = dominating_losses(PoissonSubsampled(Laplace(2.0), 0.05), Neighbouring.ADD_REMOVE)
    step = discretise(loss[direction], 1e-3, kind, 1e-30)
    counts = [1, 3, 50, 400, 1000]
    exact = dict(self_compose_checkpoints(step, counts, shared_lengths=False))
    for t, reused in self_compose_checkpoints(step, counts[::-1]):
        direct = self_compose(step, t)
        assert np.array_equal(exact[t].p_masses, direct.p_masses)  # bit for bit
        assert exact[t].offset == direct.offset and exact[t].slack == direct.slack
        assert reused.kind == direct.kind
        assert reused.infinity_mass == pytest.approx(direct.infinity_mass, rel=1e-12, abs=1e-300)
        # Same certified slack, up to the allowance for a longer transform.
        assert reused.slack >= direct.slack * (1 - 1e-12)
        assert reused.slack <= direct.slack * 1.5 + 1e-300
        a, b = profile_of(reused), profile_of(direct)
        for delta in (1e-3, 1e-6):
            assert a.epsilon(delta) == pytest.approx(b.epsilon(delta), rel=1e-8)
    assert [t for t, _ in self_compose_checkpoints(step, [5, 2, 5])] == [2, 5]


def test_trim_cuts_where_the_whole_cumulative_sums_say():
    """trim finds its cut points over growing prefixes; the whole cumulative sums agree."""
    loss = dominating_losses(PoissonSubsampled(Laplace(1.0), 0.1), Neighbouring.ADD_REMOVE)[0]
    for kind in ("pessimistic", "optimistic"):
        step = discretise(loss, 1e-3, kind, 1e-30)
        plan = composition.plan_self_composition(step, 300)
        raw = composition.compose_many([(step, 300)], tail=1e-300, plan=plan)  # barely trimmed
        p = raw.p_masses
        for tail in (1e-30, 1e-12, 1e-3):
            threshold = tail * float(p.sum())
            start = int(np.searchsorted(np.cumsum(p), threshold, side="right"))
            stop = p.size - int(np.searchsorted(np.cumsum(p[::-1]), threshold, side="right"))
            trimmed = composition.trim(raw, tail)
            assert trimmed.offset == raw.offset + start
            assert trimmed.p_masses.size == stop - start
            assert math.isclose(
                trimmed.p_masses.sum() + trimmed.infinity_mass,
                p.sum() + raw.infinity_mass,
                rel_tol=1e-12,
            )
    tiny = GridPLD(0.1, 0, np.array([0.5, 0.5]), None, 0.0, "pessimistic")
    assert composition.trim(tiny, 1e-30) is tiny


def test_account_steps_is_account_bit_for_bit():
    leaf = DPSGD(9.4, 0.32768, 1).expand().mechanism
    steps = [20, 200, 1000]
    runs = {t: DPSGD(9.4, 0.32768, t) for t in steps}
    seen = []
    for t, result in account_steps(leaf, Neighbouring.ADD_REMOVE, runs):
        seen.append(t)
        single = account(runs[t])
        assert result.mechanism == runs[t] and result.method == single.method
        for delta in (1e-5, 1e-9):
            assert result.epsilon_bounds(delta) == single.epsilon_bounds(delta)
        assert result.delta_bounds(1.0) == single.delta_bounds(1.0)
        if t == 1000:
            report, expected = result.gdp(), single.gdp()
            assert (report.mu, report.regret, report.delta_tail, report.tier) == (
                expected.mu, expected.regret, expected.delta_tail, expected.tier
            )  # fmt: skip
    assert seen == steps


def test_bounds_only_shares_transforms_and_equals_account_up_to_rounding():
    leaf = DPSGD(9.4, 0.32768, 1).expand().mechanism
    steps = [20, 200, 1000, 2000]
    runs = {t: DPSGD(9.4, 0.32768, t) for t in steps}
    for t, result in account_steps(leaf, Neighbouring.ADD_REMOVE, runs, bounds_only=True):
        single = account(runs[t])
        lower, upper = result.epsilon_bounds(1e-5)
        single_lower, single_upper = single.epsilon_bounds(1e-5)
        assert lower == pytest.approx(single_lower, rel=1e-8)
        assert upper == pytest.approx(single_upper, rel=1e-8)
        # Both pairs bracket the true ε: each lower bound lies below the other upper bound.
        assert lower <= upper and lower <= single_upper and single_lower <= upper
        d_lower, d_upper = result.delta_bounds(1.0)
        assert d_upper == pytest.approx(single.delta(1.0), rel=1e-7)
        assert d_lower <= d_upper
        assert result.delta_bounds(0.0)[1] == pytest.approx(single.delta(0.0), rel=1e-9)
        # The lower bound skips a direction only where it cannot be the larger one.
        both = result._guarantee.lower  # every direction's lower profile
        assert lower == max(profile.epsilon(1e-5) for profile in both)
        epsilons = np.array([0.0, 0.5, 2.0, 6.0])
        assert np.array_equal(
            result._guarantee.delta_lower(epsilons),
            np.max([profile.delta(epsilons) for profile in both], axis=0),
        )


def test_step_key_and_grouping():
    assert step_key(Pipeline(DPSGD(1.0, 0.01, 1))) is None  # one step: nothing to share
    assert step_key(Pipeline(DPSGD(1.0, 0.01, 20_000))) is None  # tilted: account() itself
    (_, relation), t = step_key(Pipeline(DPSGD(1.0, 0.01, 300)))
    assert t == 300 and relation is Neighbouring.ADD_REMOVE
    points = [(i, Pipeline(DPSGD(sigma, 0.01, t))) for i, (sigma, t) in enumerate(
        [(1.0, 100), (1.0, 200), (2.0, 100), (1.0, 50_000)]
    )]  # fmt: skip
    groups, rest = group_by_steps(points)
    assert [[p for p, _ in members] for members in groups] == [[0, 1]]
    assert sorted(p for p, _ in rest) == [2, 3]
