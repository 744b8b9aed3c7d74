"""Guarantees and transformers: GDP, ZCDP, RenyiDP, Profile, NoiseEquation, Group, Parallel.

References: μ-GDP closed forms in mpmath; the Canonne-Kamath-Steinke RDP → (ε, δ)
conversion (a valid upper bound for the zCDP class, 2020, Proposition 12); the
published randomized-response example of the lecture (file 003: a 1/2-zCDP
mechanism that is not (ε, 0.3)-DP for ε < 0.471); the Laplace privacy profile in
closed form; the binomial form of pure-DP compositions.
"""

import functools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaussdp import account, gdp
from gaussdp import mechanisms as m
from gaussdp.pld import compose_many, discretise, profile_of
from gaussdp.pld import guarantees as pld_guarantees
from gaussdp.pld.dominating_pairs import dominating_losses
from gaussdp.pld.guarantees import (
    ComposedZCDP,
    expand_group,
    rdp_tradeoff,
    simplify_leaves,
    zcdp_tradeoff,
)
from tests import references


@functools.cache  # several tests compare with the same (μ, δ)
def epsilon_of(mu, delta):
    """ε with δ_μ(ε) = δ, by mpmath bisection."""
    return float(references.bisect(lambda e: references.gaussian_delta(mu, e) - delta, 0, 200, 200))


def cks_epsilon(orders, epsilons, delta):
    """Canonne, Kamath & Steinke 2020, Prop. 12, minimised over the given orders."""
    orders = np.asarray(orders, dtype=float)
    epsilons = np.asarray(epsilons, dtype=float)
    values = epsilons + (
        math.log(1 / delta) + (orders - 1) * np.log1p(-1 / orders) - np.log(orders)
    ) / (orders - 1)
    return float(values.min())


# --------------------------------------------------------------------------- GDP


def test_gdp_is_closed_form_and_composes_with_gaussians():
    result = account(m.Composition([m.GDP(0.6), m.Gaussian(1.25)]))
    assert result.mu == pytest.approx(1.0, rel=1e-14)  # √(0.36 + 0.64)
    assert result.epsilon(1e-5) == pytest.approx(epsilon_of(1.0, 1e-5), rel=1e-9)


def test_gdp_is_taken_as_stated_under_replace():
    replace = account(m.GDP(1.0), neighbouring=m.Neighbouring.REPLACE)
    assert replace.mu == pytest.approx(1.0, rel=1e-14)
    # whereas a Gaussian mechanism's shift doubles under replacement
    assert account(m.Gaussian(1.0), neighbouring=m.Neighbouring.REPLACE).mu == 2.0
    assert account(m.GDP(0.0)).epsilon(1e-5) == 0.0


# --------------------------------------------------------------------------- ZCDP, RenyiDP


@pytest.mark.parametrize("rho", [0.01, 0.5, 5.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_zcdp_between_gaussian_and_cks(rho, delta):
    ours = account(m.ZCDP(rho)).epsilon(delta)
    # The Gaussian mechanism with μ = √(2ρ) is ρ-zCDP: the class is no more private.
    assert ours >= epsilon_of(math.sqrt(2 * rho), delta)
    # CKS is a valid conversion of ρα for every α: the optimal one is at most it.
    alphas = 1 + np.geomspace(1e-4, 1e4, 400_000)
    assert ours <= cks_epsilon(alphas, rho * alphas, delta) * (1 + 1e-4)


def test_zcdp_published_randomized_response_example():
    # File 003: RR with ε(α) = α/2 is not (ε, 0.3)-DP for ε < 0.471; GM is (0.277, 0.3)-DP.
    epsilon = account(m.ZCDP(0.5)).epsilon(0.3)
    assert epsilon >= 0.471
    assert account(m.Gaussian(1.0)).epsilon(0.3) == pytest.approx(0.277, abs=1e-3)


def test_zcdp_composes_by_adding_rho():
    (merged,) = simplify_leaves({m.ZCDP(0.01): 30, m.ZCDP(0.2): 1}, m.Neighbouring.ADD_REMOVE)
    assert isinstance(merged, ComposedZCDP) and merged.rho == pytest.approx(0.5, rel=1e-12)
    repeated = account(m.Repeated(m.ZCDP(0.01), 50)).epsilon(1e-5)
    assert repeated == pytest.approx(account(m.ZCDP(0.5)).epsilon(1e-5), rel=1e-9)


def test_composed_zcdp_lower_bounds_stay_below_the_composed_parts():
    """13 × ZCDP(0.181): the Σρ class bounds the composition from above, but its curve is
    no lower bound (its δ(0) is 0.874, and composing the parts' own curves, which bounds
    every composition of them, gives 0.818: the lower bound read 0.881). From below:
    the Gaussian of μ = √(2Σρ), a composition of members; said in a caveat."""
    rho, steps = 0.18108077593208086, 13
    accounting = account(m.Repeated(m.ZCDP(rho), steps))
    (remove, _) = dominating_losses(m.ZCDP(rho), m.Neighbouring.ADD_REMOVE)
    part = discretise(remove, 1e-3, "pessimistic", 1e-30)
    composed_parts = profile_of(compose_many([(part, steps)]))
    epsilons = np.array([0.0, 0.5, 1.0, 2.0])
    lower, _ = accounting.delta_bounds(epsilons)
    assert np.all(lower <= composed_parts.delta(epsilons))
    gaussian = gdp.delta(math.sqrt(2 * rho * steps), epsilons)
    np.testing.assert_allclose(lower, gaussian, rtol=1e-3)
    assert any("zCDP or Renyi-DP guarantees composed" in c for c in accounting.caveats)


def test_a_zcdp_guarantee_composed_with_a_gaussian_is_bounded_below_by_a_member():
    """A class's curve bounds it from below alone (each point is attained by some member),
    not composed: ZCDP(ρ) with a Gaussian is bounded below by the Gaussian member, GDP of
    μ² = 2ρ + 1/σ² (closed form), and above by the class curve composed with it."""
    rho, sigma = 0.18108077593208086, 2.0
    accounting = account(m.Composition([m.ZCDP(rho), m.Gaussian(sigma)]))
    epsilons = np.array([0.0, 1.0, 2.0, 3.0])
    lower, upper = accounting.delta_bounds(epsilons)
    member = gdp.delta(math.sqrt(2 * rho + 1 / sigma**2), epsilons)
    np.testing.assert_allclose(lower, member, rtol=1e-3)
    assert np.all(member <= upper)
    alone = account(m.ZCDP(rho))
    assert not alone.caveats and alone.epsilon_bounds(1e-5)[0] > gdp.epsilon(
        math.sqrt(2 * rho), 1e-5
    )


def test_a_group_of_a_zcdp_guarantee_is_bounded_from_below_by_the_gaussian_members_group():
    """Group(ZCDP(ρ), 4) is 16ρ-zCDP from above; the 16ρ class is no group of the ρ class
    (its lower bound read δ(ε) 0.012 above its own upper bound at ε = 5, composed with
    two Gaussians). From below: the Gaussian member's group, μ = 4·√(2ρ)."""
    rho = 0.3769201749114908
    mechanism = m.Group(m.Composition([m.Gaussian(1.85), m.Gaussian(3.29), m.ZCDP(rho)]), 4)
    accounting = account(mechanism)
    epsilons = np.linspace(0.0, 5.0, 11)
    lower, upper = accounting.delta_bounds(epsilons)
    mu = 4 * math.sqrt(1 / 1.85**2 + 1 / 3.29**2 + 2 * rho)
    np.testing.assert_allclose(lower, gdp.delta(mu, epsilons), rtol=1e-3)
    # (delta_bounds returns min(lower, upper): the lower profiles' own values are read)
    guarantee = accounting._guarantee
    raw_lower = np.max([profile.delta(epsilons) for profile in guarantee.lower], axis=0)
    assert np.all(raw_lower <= upper)


def test_renyi_dp_of_a_gaussian():
    sigma = 2.0
    orders = [1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
    epsilons = [a / (2 * sigma**2) for a in orders]  # the Gaussian's RDP
    ours = account(m.RenyiDP(orders, epsilons)).epsilon(1e-5)
    assert epsilon_of(1 / sigma, 1e-5) <= ours <= cks_epsilon(orders, epsilons, 1e-5) * (1 + 1e-4)


def test_renyi_and_zcdp_merge_on_common_orders():
    leaves = simplify_leaves(
        {m.RenyiDP([2, 4], [0.1, 0.3]): 2, m.ZCDP(0.05): 1, m.RenyiDP([4, 8], [0.2, 0.5]): 1},
        m.Neighbouring.ADD_REMOVE,
    )
    ((leaf, count),) = leaves.items()
    assert count == 1
    assert leaf.orders == (4.0,)
    assert leaf.epsilons == pytest.approx((2 * 0.3 + 0.05 * 4 + 0.2,))


@functools.cache  # the two tests below share their constraints and most of their x
def exact_rdp_tpr(x, constraints):
    """Largest t with D_α(Bern(t) ‖ Bern(x)), D_α(Bern(x) ‖ Bern(t)) ≤ ε (mpmath)."""
    x = mpmath.mpf(x)

    def feasible(t):
        for alpha, epsilon in constraints:
            bound = mpmath.exp((alpha - 1) * epsilon)
            g = t**alpha * x ** (1 - alpha) + (1 - t) ** alpha * (1 - x) ** (1 - alpha)
            swapped = x**alpha * t ** (1 - alpha) + (1 - x) ** alpha * (1 - t) ** (1 - alpha)
            if g > bound or swapped > bound:
                return False
        return True

    low, high = x, mpmath.mpf(1) - mpmath.mpf(10) ** -40
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if feasible(middle) else (low, middle)
    return float(low)


def test_rdp_curve_against_mpmath():
    constraints = ((2.0, 0.3), (8.0, 1.0))
    curve = rdp_tradeoff([2.0, 8.0], [0.3, 1.0])
    for x in (1e-12, 1e-6, 1e-3, 0.05, 0.3, 0.7):
        exact = exact_rdp_tpr(x, constraints)
        bound = 1 - float(curve.beta(x))
        assert bound >= exact - 1e-12  # pessimistic: at least the exact TPR
        assert bound == pytest.approx(exact, rel=1e-4, abs=1e-12)
    alphas = np.linspace(0.0, 1.0, 2001)
    betas = curve.beta(alphas)
    assert np.all(np.diff(betas) <= 1e-15)
    assert np.all(betas <= 1 - alphas + 1e-12)
    assert zcdp_tradeoff(0.5).beta(0.0) == pytest.approx(1.0, abs=1e-12)


def test_rdp_lower_bounds_read_a_curve_above_the_exact_one():
    # The lower bounds read the chords of attained points (above the class's curve,
    # which is convex); they once read the same tangent curve as the upper bounds,
    # which lies below it: a lower bound above the truth, by the discretisation.
    from gaussdp.pld.guarantees import _rdp_tradeoff_cached

    constraints = ((2.0, 0.3), (8.0, 1.0))
    optimistic = _rdp_tradeoff_cached((2.0, 8.0), (0.3, 1.0), True)
    for x in (1e-12, 3.3e-9, 1e-6, 2.2e-4, 1e-3, 0.05, 0.17, 0.3, 0.7):
        exact = exact_rdp_tpr(x, constraints)
        assert 1 - float(optimistic.beta(x)) <= exact * (1 + 1e-12) + 1e-15
        assert 1 - float(optimistic.beta(x)) == pytest.approx(exact, rel=1e-3, abs=1e-12)


def test_zcdp_lower_bound_is_below_the_class_curve_computed_finer(monkeypatch):
    # the class's ε is at most what its tangent curve gives on a 4-times finer grid of
    # false-positive rates; the lower bound was above it (4.728395 against 4.728388 at
    # δ = 1e-5 for ρ = 0.5), read from the coarser tangent curve itself
    from gaussdp.pld import guarantees

    accounting = account(m.ZCDP(0.5))
    grid = guarantees._log_fpr_grid()
    finer = np.sort(
        np.concatenate([grid, *(t * grid[1:] + (1 - t) * grid[:-1] for t in (0.25, 0.5, 0.75))])
    )
    monkeypatch.setattr(guarantees, "_log_fpr_grid", lambda: finer)
    guarantees._zcdp_tradeoff_cached.cache_clear()
    try:
        fine = guarantees.zcdp_tradeoff(0.5)
    finally:
        guarantees._zcdp_tradeoff_cached.cache_clear()
    for delta in (1e-3, 1e-5, 1e-9):
        lower, upper = accounting.epsilon_bounds(delta)
        assert lower >= epsilon_of(1.0, delta)  # the Gaussian of μ = √(2ρ) is in the class
        assert lower <= float(fine.epsilon(delta)) <= upper


# --------------------------------------------------------------------------- Profile, NoiseEquation


@functools.cache
def gaussian_profile_accounting():
    """The accounting of G_1's privacy profile as a Profile, shared by the tests below."""
    return account(m.Profile(lambda eps: gdp.delta(1.0, eps)))


def test_profile_of_a_gaussian():
    result = gaussian_profile_accounting()
    exact = epsilon_of(1.0, 1e-5)
    assert exact <= result.epsilon(1e-5) <= exact * (1 + 1e-4)


def test_profile_bounds_bracket_the_exact_epsilon():
    # the lower bounds read a curve above the exact one (the profile is convex in e^ε:
    # secants bound it between its grid points); they read the upper bounds' curve once,
    # and were above the exact ε: 4.3771791 against 4.3771781 at 1e-5, 6.173969 against
    # 6.173935 at 1e-9 (and 7.9037 against 7.8687 at 1e-14)
    accounting = gaussian_profile_accounting()
    for delta in (1e-5, 1e-9):
        lower, upper = accounting.epsilon_bounds(delta)
        exact = epsilon_of(1.0, delta)
        assert lower <= exact <= upper
        assert upper - lower <= 1e-4 * exact


def test_noise_equation_between_truth_and_claim():
    sigma, delta = 4.0, 1e-5

    def classical(epsilon, d):  # Dwork & Roth, Theorem A.1: σ = √(2 log(1.25/δ))/ε
        return np.sqrt(2 * np.log(1.25 / d)) / epsilon

    ours = account(m.NoiseEquation(classical, sigma)).epsilon(delta)
    claimed = math.sqrt(2 * math.log(1.25 / delta)) / sigma
    # the equation's guarantee (refined, so never worse than claimed, up to the
    # accountant's discretisation) ...
    assert ours <= claimed * (1 + 1e-4)
    # ... cannot be better than the Gaussian mechanism it describes.
    assert ours >= epsilon_of(1 / sigma, delta)


# --------------------------------------------------------------------------- Group


def test_group_of_gaussian_and_pure_dp_closed_forms():
    assert account(m.Group(m.Repeated(m.Gaussian(4.0), 4), 3)).mu == pytest.approx(1.5)
    expanded = expand_group(m.Group(m.Composition([m.Gaussian(2.0), m.PureDP(0.5)]), 3))
    assert expanded == m.Composition([m.Gaussian(2.0, 3.0), m.PureDP(1.5)])
    # Group(PureDP(ε), k) is kε-DP: δ(ε') = (e^{kε} − e^{ε'})/(1 + e^{kε}).
    result = account(m.Group(m.PureDP(0.5), 2))
    assert result.delta(0.3) == pytest.approx((math.e - math.exp(0.3)) / (1 + math.e), rel=1e-12)
    grouped = expand_group(m.Group(m.Group(m.ZCDP(0.1), 2), 3))
    assert isinstance(grouped, m.ZCDP) and grouped.rho == pytest.approx(3.6, rel=1e-12)


def test_group_of_subsampled_mechanism_uses_theorem_2_14():
    step = m.PoissonSubsampled(m.Gaussian(2.0), 0.05)
    single = account(m.Repeated(step, 50)).epsilon(1e-5)
    group = account(m.Group(m.Repeated(step, 50), 2))
    assert group.epsilon(1e-5) > single
    # Theorem 2.14 through G_μ: a group of 2 of the unsubsampled Gaussian composition
    # is 2·√50/2-GDP, which the subsampled group can only improve on.
    assert group.epsilon(1e-5) <= epsilon_of(2 * math.sqrt(50) / 2, 1e-5)


def test_a_group_by_theorem_2_14_has_no_lower_bound_claimed_for_it():
    # 1 − (1 − f)^{∘k} bounds group privacy from above only: a lower bound computed from
    # it would not be certified, so the group is left out of the lower bounds, and said so.
    step = m.PoissonSubsampled(m.Gaussian(1.0), 0.1)
    alone = account(m.Group(step, 2))
    lower, upper = alone.epsilon_bounds(1e-5)
    assert lower == 0.0 < upper
    assert any("Theorem 2.14" in line for line in alone.caveats)
    with_gaussian = account(m.Composition([m.Group(step, 2), m.Gaussian(3.0)]))
    lower, upper = with_gaussian.epsilon_bounds(1e-5)
    assert lower <= epsilon_of(1 / 3, 1e-5) * (1 + 1e-9) and upper > lower
    # a group with an exact pair (Gaussians) keeps both bounds, and no caveat
    exact = account(m.Group(m.Gaussian(2.0), 3))
    assert exact.caveats == () and exact.epsilon_bounds(1e-5)[0] > 0


def test_group_of_approx_dp_matches_group_privacy_lemma():
    # (ε, δ)-DP for groups of k: (kε, δ·(e^{kε} − 1)/(e^ε − 1)) (the lecture, file 003,
    # Lemma 3); Theorem 2.14 on f_{ε,δ} gives at least that.
    epsilon, delta, k = 0.5, 1e-6, 3
    result = account(m.Group(m.ApproxDP(epsilon, delta), k))
    lemma_delta = delta * (math.exp(k * epsilon) - 1) / (math.exp(epsilon) - 1)
    assert result.delta(k * epsilon) <= lemma_delta * (1 + 1e-6)


# --------------------------------------------------------------------------- Parallel


def test_parallel_claims_no_lower_bound_it_cannot_certify():
    # Its pair comes from the parts' upper-bound curves: the lower bound read from it was
    # above the exact ε (Gaussians: 1.99309146 against 1.99309140), so there is none.
    result = account(m.Parallel([m.Gaussian(2.0), m.Gaussian(3.0)]))
    lower, upper = result.epsilon_bounds(1e-5)
    assert lower == 0.0
    assert upper >= epsilon_of(0.5, 1e-5) and upper == pytest.approx(epsilon_of(0.5, 1e-5))
    assert any("parallel" in line for line in result.caveats)


def test_parallel_is_the_worst_part():
    mu = 1.0  # Laplace(1): δ(ε) = 1 − e^{(ε − 1)/2} for ε < 1
    result = account(m.Parallel([m.Gaussian(2.0), m.Laplace(1.0), m.PureDP(0.2)]))
    for epsilon in (0.0, 0.3, 0.6, 0.9):
        laplace = 1 - math.exp((epsilon - mu) / 2)
        gaussian = float(references.gaussian_delta(0.5, epsilon))
        pure = max(math.exp(0.2) - math.exp(epsilon), 0.0) / (1 + math.exp(0.2))
        worst = max(laplace, gaussian, pure)
        assert result.delta(epsilon) >= worst * (1 - 1e-9)
        assert result.delta(epsilon) == pytest.approx(worst, rel=1e-3)


def test_parallel_composes_with_other_mechanisms():
    parallel = m.Parallel([m.Gaussian(2.0), m.Gaussian(3.0)])
    composed = account(m.Composition([parallel, m.Gaussian(2.0)]))
    exact = epsilon_of(math.sqrt(0.5), 1e-6)  # worst part σ=2, composed with σ=2
    assert exact <= composed.epsilon(1e-6) <= exact * (1 + 1e-3)


def test_new_descriptions_validate_and_serialise():
    with pytest.raises(ValueError, match=r"orders\[0\] must be in \(1, inf\)"):
        m.RenyiDP([1.0], [0.1])
    with pytest.raises(ValueError, match="same length"):
        m.RenyiDP([2.0, 3.0], [0.1])
    with pytest.raises(ValueError, match="rho must be in"):
        m.ZCDP(-1.0)
    with pytest.raises(ValueError, match="group_size must be an integer >= 1"):
        m.Group(m.Gaussian(1.0), 0)
    with pytest.raises(ValueError, match="Parallel needs at least one mechanism"):
        m.Parallel([])
    with pytest.raises(ValueError, match="delta must be a callable"):
        m.Profile(0.1)
    with pytest.raises(ValueError, match="cannot be written"):
        m.dumps(m.Profile(lambda e: 0.0))
    pipeline = m.Pipeline(
        m.Composition([m.Group(m.DPSGD(1.0, 0.01, 10), 2), m.Parallel([m.ZCDP(0.1), m.GDP(1.0)])])
    )
    assert m.loads(m.dumps(pipeline)) == pipeline
    assert m.from_dict(m.RenyiDP([8, 2], [0.5, 0.1]).to_dict()) == m.RenyiDP([2, 8], [0.1, 0.5])
    with pytest.raises(ValueError, match=r"orders must be an array of numbers"):
        m.from_dict({"type": "renyi_dp", "orders": 2, "epsilons": [0.1]})
    assert mpmath.mp.dps >= 50


# --------------------------------------------------------------------------- properties


@settings(max_examples=15, deadline=None)
@given(
    sigmas=st.lists(st.floats(0.5, 20.0), min_size=1, max_size=3),
    epsilon=st.floats(0.0, 5.0),
)
def test_property_parallel_is_at_least_every_part_and_at_most_their_composition(sigmas, epsilon):
    parts = [m.Gaussian(s) for s in sigmas]
    parallel = account(m.Parallel(parts)).delta(epsilon)
    worst = max(float(references.gaussian_delta(1 / s, epsilon)) for s in sigmas)
    assert parallel >= worst * (1 - 1e-9)
    mu_all = math.sqrt(sum(1 / s**2 for s in sigmas))
    assert parallel <= float(references.gaussian_delta(mu_all, epsilon)) * (1 + 1e-3) + 1e-12


@settings(max_examples=10, deadline=None)
@given(k=st.integers(1, 6), epsilon=st.floats(0.05, 1.0))
def test_property_group_privacy_weakens_with_group_size(k, epsilon):
    step = m.PoissonSubsampled(m.PureDP(epsilon), 0.3)
    smaller = account(m.Group(step, k)).delta(0.1)
    larger = account(m.Group(step, k + 1)).delta(0.1)
    assert larger >= smaller - 1e-12


@pytest.mark.parametrize(
    ("delta", "epsilon"),
    [(0.5, 0.3), (1e-3, 1e-3), (1e-20, 1e-4), (0.2, 0.2231435513142097), (1.0 - 1e-12, 3.0)],
)
def test_reflected_lines_delta_is_bracketed_against_mpmath(delta, epsilon):
    # A tangent of slope in (−1, 0) reflected across the diagonal is the (ε, δ') line with
    # δ' = 1 − (1 − δ)e^ε, computed as δe^ε − (e^ε − 1) and moved by its rounding error
    # (the direct form rounds 1 − δ to 1 below δ = 1.1e-16), up for upper curves.
    with mpmath.workdps(50):
        exact = 1 - (1 - mpmath.mpf(delta)) * mpmath.exp(mpmath.mpf(epsilon))
    up = float(pld_guarantees._reflected_delta(delta, epsilon, upward=True))
    down = float(pld_guarantees._reflected_delta(delta, epsilon, upward=False))
    assert down <= exact <= up
    assert up - down <= 1e-8 * abs(float(exact)) + 1e-14
