"""Tight μ: closed forms, Proposition 6.1, every breakpoint, and the failure probability."""

import functools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from gaussdp import (
    GDP,
    ApproxDP,
    Composition,
    Gaussian,
    Laplace,
    PureDP,
    RandomizedResponse,
    Repeated,
    account,
    curves,
    gdp,
)
from gaussdp.report import failure_probability, mu_of_breakpoints, regret, report, tight_mu
from tests import references


@functools.cache  # several tests compare with the same ε
def prop_6_1(epsilon):
    """−2Φ⁻¹(1/(1 + e^ε)) at 50 digits (Gomez et al. 2025, Proposition 6.1)."""
    p = 1 / (1 + mpmath.exp(mpmath.mpf(epsilon)))
    return float(2 * references.normal_quantile_of_complement(p))


def guarantee_delta(mu, delta_tail, epsilon):
    """Profile of G_μ ⊗ f_{0,δ}: δ + (1 − δ)δ_μ(ε), from the closed form in gaussdp.gdp."""
    return delta_tail + (1.0 - delta_tail) * np.asarray(gdp.delta(mu, epsilon))


# ---------------------------------------------------------------------------
# Closed forms
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("sigma", "steps"), [(1.0, 1), (4.0, 16), (9.4, 2000), (0.5, 3)])
def test_gaussian_composition_is_exactly_sqrt_t_over_sigma(sigma, steps):
    r = report(Repeated(Gaussian(sigma), steps))
    assert r.mu == pytest.approx(math.sqrt(steps) / sigma, rel=1e-14)
    assert r.regret == 0.0
    assert r.delta_tail == 0.0
    assert r.tier == 1
    assert r.mu_tail == pytest.approx(r.mu, rel=1e-14)


def test_gdp_description_reports_its_mu():
    r = report(Composition([GDP(0.6), GDP(0.8)]))
    assert r.mu == pytest.approx(1.0, rel=1e-14)
    assert r.regret == 0.0


def test_numerical_path_on_a_nearly_gaussian_mechanism():
    """A Laplace piece with a huge scale forces the numerical path; μ stays √Σμ²."""
    r = report(Composition([Repeated(Gaussian(2.0), 4), Laplace(scale=1e9)]))
    assert not r.exact
    assert 1.0 <= r.mu <= 1.0 + 1e-5
    assert r.regret < 1e-6
    assert 0.0 < r.delta_floor <= r.delta_tail / 100 and r.delta_tail == 1e-10


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 5.0])
def test_pure_dp_gives_proposition_6_1(epsilon):
    r = report(PureDP(epsilon))
    assert r.mu == pytest.approx(prop_6_1(epsilon), rel=1e-12)
    assert r.delta_tail == 0.0
    assert r.mu_tail == 0.0


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_tight_mu_of_the_pure_dp_curve_is_proposition_6_1(epsilon):
    assert tight_mu(curves.epsilon_delta(epsilon)) == pytest.approx(prop_6_1(epsilon), rel=1e-12)


def test_pure_dp_composition_against_the_breakpoints_of_the_exact_curve():
    """3 × 0.5-DP: the exact binomial curve, μ from each breakpoint in mpmath."""
    r = report(Repeated(PureDP(0.5), 3))
    # Breakpoints of the composed randomized response: losses 1.5, 0.5, −0.5, −1.5.
    e = mpmath.exp(mpmath.mpf("0.5"))
    p = [mpmath.binomial(3, j) * e**j / (1 + e) ** 3 for j in range(3, -1, -1)]
    q = [mpmath.binomial(3, j) * e ** (3 - j) / (1 + e) ** 3 for j in range(3, -1, -1)]
    best = 0
    for k in range(1, 4):
        alpha, tpr = sum(q[:k]), sum(p[:k])
        mu_k = references.normal_quantile_of_complement(
            alpha
        ) - references.normal_quantile_of_complement(tpr)
        best = max(best, mu_k)
    assert r.mu == pytest.approx(float(best), rel=1e-12)


def pure_dp_regret_reference(epsilon, mu):
    """Δ(f_{ε,0}, G_μ) at 50 digits: κ of G_μ's tangent point of slope −e^ε to the steep line."""
    mu, epsilon = mpmath.mpf(mu), mpmath.mpf(epsilon)
    shrink = mpmath.exp(-epsilon)
    steep = shrink * mpmath.ncdf(mu / 2 - epsilon / mu)
    return (steep - mpmath.ncdf(-epsilon / mu - mu / 2)) / (1 + shrink)


SWEEP = sorted({*np.geomspace(0.01, 50.0, 25).round(6), 13.0, 20.0, 35.0, 37.0, 50.0})


@pytest.mark.parametrize("epsilon", SWEEP)
@pytest.mark.parametrize("kind", [PureDP, RandomizedResponse])
def test_one_pure_dp_mechanism_is_proposition_6_1_never_below(epsilon, kind):
    """The closed form: μ ≥ the 50-digit value, within 1e-10, and the exact regret.

    Through the binomial profile, rounding of TPRs near 1 put μ below this
    for ε ≳ 13 (ε = 35: 15.98315 instead of 15.99669) and made it ∞ from 37.
    """
    r = report(kind(epsilon))
    reference = prop_6_1(epsilon)
    assert reference <= r.mu <= reference * (1 + 1e-10)
    assert r.delta_tail == 0.0
    exact_regret = float(pure_dp_regret_reference(epsilon, r.mu))
    assert exact_regret <= r.regret <= exact_regret * (1 + 1e-9) + 2e-12
    assert r.tier == (1 if r.regret <= 0.01 else 2)


@pytest.mark.parametrize("epsilon", [0.05, 1.0, 3.0])
def test_pure_dp_regret_agrees_with_the_curve_regret(epsilon):
    r = report(PureDP(epsilon))
    assert r.regret == pytest.approx(regret(curves.epsilon_delta(epsilon), r.mu), rel=1e-9)


def exact_composition_mu(groups, delta=0):
    """The tight μ of a composition of randomized responses at 50 digits.

    groups maps ε to a count; the exact composed pair is built atom by atom and
    μ = max over its breakpoints of −Φ⁻¹(α/(1 − δ)) − Φ⁻¹(β/(1 − δ)).
    """
    atoms = {(): (mpmath.mpf(1), mpmath.mpf(1), mpmath.mpf(0))}
    for epsilon, k in groups.items():
        e = mpmath.exp(mpmath.mpf(epsilon))
        up, down = e / (1 + e), 1 / (1 + e)
        grown = {}
        for key, (p, q, loss) in atoms.items():
            for j in range(k + 1):
                c = mpmath.binomial(k, j)
                grown[(*key, j)] = (
                    p * c * up**j * down ** (k - j),
                    q * c * down**j * up ** (k - j),
                    loss + mpmath.mpf(epsilon) * (2 * j - k),
                )
        atoms = grown
    merged = {}
    for p, q, loss in atoms.values():
        key = mpmath.nstr(loss, 30)
        old = merged.get(key, (0, 0, loss))
        merged[key] = (old[0] + p, old[1] + q, loss)
    ordered = sorted(merged.values(), key=lambda atom: atom[2])
    scale = 1 - mpmath.mpf(delta)
    best = mpmath.mpf(0)
    for i in range(1, len(ordered)):
        alpha = mpmath.fsum(atom[1] for atom in ordered[i:]) / scale
        beta = mpmath.fsum(atom[0] for atom in ordered[:i]) / scale
        if alpha < 1 and beta < 1:
            best = max(
                best,
                references.normal_quantile_of_complement(alpha)
                + references.normal_quantile_of_complement(beta),
            )
    return best


@pytest.mark.parametrize(
    ("groups", "delta_tail"),
    [
        ({0.5: 3}, None),
        ({5.0: 10}, None),
        ({20.0: 2}, None),
        ({15.0: 3}, None),
        ({35.0: 2}, None),
        ({50.0: 20}, None),  # q-masses down to e^{-1000}: α underflows in the profile
        ({1.0: 2, 0.3: 5}, None),
        ({0.5: 3}, 1e-3),
        ({1.0: 1}, 0.1),
        ({2.0: 4}, 0.2),
    ],
)
def test_pure_dp_compositions_are_never_below_the_exact_mu(groups, delta_tail):
    """Compositions: μ from the exact curve in log space is ≥ the 50-digit μ, within 1e-10."""
    parts = [Repeated(PureDP(epsilon), k) for epsilon, k in groups.items()]
    mechanism = parts[0] if len(parts) == 1 else Composition(parts)
    r = report(mechanism, delta_tail=delta_tail)
    reference = float(exact_composition_mu(groups, delta_tail or 0))
    assert reference <= r.mu <= reference * (1 + 1e-10)
    assert r.delta_tail == (delta_tail or 0.0)
    assert math.isfinite(r.regret) and 0.0 <= r.regret <= 1.0


# ---------------------------------------------------------------------------
# μ-GDP except with probability δ
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-6), (0.5, 1e-3), (2.0, 0.05)])
def test_approx_dp_is_randomized_response_except_with_probability_delta(epsilon, delta):
    r = report(ApproxDP(epsilon, delta))
    assert r.mu == pytest.approx(prop_6_1(epsilon), rel=1e-6)
    # δ_tail: the mass at infinite loss (the floor) plus the default 1e-10 for the rest
    assert delta <= r.delta_floor <= r.delta_tail <= delta * (1 + 1e-9) + 1e-10 * (1 + 1e-9)
    assert math.isinf(r.mu_tail)
    assert "except with probability" in r.to_text()


def test_approx_dp_curve_needs_its_delta():
    f = curves.epsilon_delta(1.0, 1e-6)
    assert failure_probability(f) == pytest.approx(1e-6, rel=1e-9)
    assert math.isinf(tight_mu(f, delta=0.0))
    assert tight_mu(f) == pytest.approx(prop_6_1(1.0), rel=1e-9)


@pytest.mark.parametrize(
    "mechanism",
    [
        Composition([Gaussian(1.0), ApproxDP(1.0, 1e-6)]),
        Composition([Repeated(Gaussian(3.0), 5), PureDP(0.2)]),
    ],
)
def test_the_guarantee_holds_against_the_accountants_upper_bounds(mechanism):
    """δ_up(ε) ≤ δ_tail + (1 − δ_tail)δ_μ(ε) on a dense ε grid, and μ is tight."""
    r = account(mechanism).gdp()
    eps = np.linspace(0.0, 30.0, 30001)
    upper = np.asarray(r.accounting.delta(eps))
    assert np.all(upper <= guarantee_delta(r.mu, r.delta_tail, eps) * (1 + 1e-9) + 1e-15)
    # A slightly smaller μ fails somewhere (with the failure probability of the floor).
    smaller = r.mu * (1 - 1e-4)
    assert np.any(upper > guarantee_delta(smaller, r.delta_tail, eps))


# ---------------------------------------------------------------------------
# Every breakpoint (general curves)
# ---------------------------------------------------------------------------


@st.composite
def convex_curves(draw):
    """A random valid piecewise-linear trade-off curve (lower hull of random points)."""
    n = draw(st.integers(min_value=1, max_value=8))
    alphas = sorted(draw(st.lists(st.floats(1e-9, 0.999), min_size=n, max_size=n)))
    # f(0) < 1 (mass at infinity) caps every β: a trade-off curve never rises above f(0).
    start = draw(st.sampled_from([1.0, 1.0, 1.0 - 1e-6, 0.97]))
    betas = []
    for a in alphas:
        top = min(1.0 - a, start)
        betas.append(draw(st.floats(0.0, 1.0)) * top)
    betas = sorted(betas, reverse=True)
    return curves.from_points([0.0, *alphas, 1.0], [start, *betas, 0.0])


@functools.cache  # the examples drawn share many breakpoints (0.5, 1e-9, ...)
def mpmath_breakpoint_mu(alpha, beta, delta):
    """−Φ⁻¹(α/(1 − δ)) − Φ⁻¹(β/(1 − δ)) at 50 digits (−inf if unconstrained)."""
    scale = 1 - mpmath.mpf(delta)
    x, y = mpmath.mpf(alpha) / scale, mpmath.mpf(beta) / scale
    if x >= 1 or y >= 1:
        return -math.inf
    if x == 0 or y == 0:
        return math.inf
    return float(
        references.normal_quantile_of_complement(x) + references.normal_quantile_of_complement(y)
    )


# 30 curves: each needs up to 16 quantiles by 50-digit bisection (the scipy check of the
# same property on a dense grid, below, draws 60).
@settings(max_examples=30, deadline=None)
@given(convex_curves())
def test_mu_is_never_below_any_breakpoint_and_is_attained(curve):
    delta = failure_probability(curve)
    mu = tight_mu(curve)
    needed = [
        mpmath_breakpoint_mu(a, b, delta) for a, b in zip(curve.alphas, curve.betas, strict=True)
    ]
    finite = [m for m in needed if math.isfinite(m)]
    assert all(mu >= m - 1e-9 * max(1.0, abs(m)) for m in finite)
    assert mu == pytest.approx(max([0.0, *finite]), rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(convex_curves())
def test_the_gaussian_curve_lies_below_on_a_dense_grid(curve):
    delta = failure_probability(curve)
    mu = tight_mu(curve)
    alphas = np.concatenate((np.linspace(0.0, 1.0, 2001), np.logspace(-12, 0, 500)))
    scale = 1.0 - delta
    inside = alphas < scale
    guarantee = np.zeros(alphas.size)
    # (1 − δ)·Φ(Φ⁻¹(1 − α/(1 − δ)) − μ), with scipy (not gaussdp) as the reference.
    guarantee[inside] = scale * stats.norm.cdf(stats.norm.isf(alphas[inside] / scale) - mu)
    assert np.all(guarantee <= curve.beta(alphas) + 1e-9)


def test_mu_of_breakpoints_edge_cases():
    values = mu_of_breakpoints([0.0, 0.0, 0.5, 1e-300], [1.0, 0.5, 0.0, 0.5])
    assert values[0] == -math.inf  # the corner (0, 1) constrains nothing
    assert values[1] == math.inf  # mass at infinity without a failure probability
    assert values[2] == math.inf
    assert values[3] == pytest.approx(
        float(references.normal_quantile_of_complement(mpmath.mpf("1e-300"))), rel=1e-12
    )


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="delta must be in"):
        tight_mu(curves.gaussian(1.0), delta=1.0)
    with pytest.raises(ValueError, match="curve must be a "):
        tight_mu([0.0, 1.0])
    with pytest.raises(ValueError, match="delta_tail must be at least"):
        report(ApproxDP(1.0, 1e-3), delta_tail=1e-6)
    with pytest.raises(ValueError, match="delta must be in"):
        report(Gaussian(1.0), deltas=[0.0])


@pytest.mark.parametrize("delta", [0.0, 1e-12, 3e-7])
@pytest.mark.parametrize("steps_below_one", [1, 3, 1000])
def test_mu_of_tests_keeps_the_digits_of_tpr_near_one(delta, steps_below_one):
    """μ = Φ⁻¹(c) − Φ⁻¹(x) with c = (t − δ)/(1 − δ) within ulps of 1: taken from 1 − c.

    Forming c in floating point lost up to ~30% of 1 − c (μ off by ~0.1) for
    t = 1 − 3·2⁻⁵³, δ = 1e-12; and t = 1 exactly (a curve cut at TPR 1) made
    the advantage branch's quantile infinite.
    """
    from gaussdp.report.tight_mu import mu_of_tests

    t = 1.0 - steps_below_one * 2.0**-53
    alpha = 1e-20
    value = float(
        mu_of_tests(np.array([alpha]), np.array([math.log(alpha)]), np.array([t]), delta)[0]
    )
    scale = 1 - mpmath.mpf(delta)
    x, rest = mpmath.mpf(alpha) / scale, (1 - mpmath.mpf(t)) / scale
    reference = references.normal_quantile_of_complement(
        x
    ) + references.normal_quantile_of_complement(rest)
    if x > mpmath.ncdf(-reference / 2):  # beyond the slope −1 point: the advantage decides
        q = (1 - mpmath.mpf(t) + alpha) / (2 * scale)
        reference = max(
            2 * references.normal_quantile_of_complement(x),
            2 * references.normal_quantile_of_complement(q),
        )
    assert value == pytest.approx(float(reference), rel=1e-12)


def test_a_test_at_tpr_one_needs_the_advantage_mu_not_infinity():
    from gaussdp.report.tight_mu import mu_of_tests

    alpha = 1e-30
    value = float(mu_of_tests(np.array([alpha]), np.array([math.log(alpha)]), np.ones(1), 0.0)[0])
    expected = 2 * references.normal_quantile_of_complement(mpmath.mpf(alpha) / 2)
    assert value == pytest.approx(float(expected), rel=1e-12)
