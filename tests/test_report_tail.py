"""Where μ stops holding: the tail limit from the mechanism, checked numerically; delta_tail."""

import math

import mpmath
import numpy as np
import pytest

from gaussdp import (
    DPSGD,
    GDP,
    ZCDP,
    ApproxDP,
    Composition,
    DiscreteGaussian,
    Gaussian,
    Group,
    Laplace,
    Neighbouring,
    Parallel,
    PoissonSubsampled,
    Profile,
    PureDP,
    RandomizedResponse,
    RenyiDP,
    Repeated,
    SubsampledWithoutReplacement,
    account,
    gdp,
)
from gaussdp.report import report, tail_mu
from gaussdp.report.core import DEFAULT_DELTA_TAIL
from tests import references

REPLACE = Neighbouring.REPLACE


@pytest.mark.parametrize(
    ("mechanism", "neighbouring", "expected"),
    [
        (DPSGD(9.4, 0.32768, 2000), None, math.sqrt(2000) / 9.4),
        (DPSGD(1.0, 1e-4, 100), None, 10.0),
        (Gaussian(2.0, sensitivity=3.0), None, 1.5),
        (Gaussian(2.0), REPLACE, 1.0),
        (PoissonSubsampled(Gaussian(2.0), 0.1), REPLACE, 0.5),  # the N(0) component decides
        (PoissonSubsampled(Gaussian(2.0), 1.0), REPLACE, 1.0),
        (SubsampledWithoutReplacement(Gaussian(2.0), 10, 100), REPLACE, 1.0),
        (DiscreteGaussian(4.0), None, 0.25),
        (
            Composition([Repeated(Gaussian(5.0), 3), Repeated(Gaussian(8.0), 5), PureDP(0.1)]),
            None,
            math.sqrt(3 / 25 + 5 / 64),
        ),
        (PureDP(3.0), None, 0.0),
        (RandomizedResponse(1.0), None, 0.0),
        (Laplace(1.0), None, 0.0),
        (ApproxDP(1.0, 1e-6), None, math.inf),
        (ApproxDP(1.0, 0.0), None, 0.0),
        (Composition([Gaussian(1.0), ApproxDP(1.0, 1e-9)]), None, math.inf),
        (GDP(1.5), None, 1.5),
        (ZCDP(0.5), None, 1.0),
        (RenyiDP([2.0, 8.0], [0.1, 0.5]), None, math.inf),
        (Group(Gaussian(2.0), 3), None, 1.5),
        (Parallel([Gaussian(2.0), Gaussian(4.0)]), None, 0.5),
        (Profile(lambda eps: gdp.delta(1.0, eps), name="callable"), None, None),
    ],
)
def test_tail_limit_rules(mechanism, neighbouring, expected):
    value = tail_mu(mechanism, neighbouring)
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected, rel=1e-14)


def subsampled_gaussian_delta(epsilon, sigma, q):
    """δ(ε) of one Poisson-subsampled Gaussian step (remove direction), at 60 digits.

    P = (1 − q)N(0, σ²) + qN(1, σ²), Q = N(0, σ²); the loss log(1 − q + q e^{(2x−1)/(2σ²)})
    exceeds ε for x > x_ε, so δ = P(X > x_ε) − e^ε Q(X > x_ε). (The add direction's loss
    is below −log(1 − q), so it has no tail.)
    """
    with mpmath.workdps(60):
        eps, s, q = mpmath.mpf(epsilon), mpmath.mpf(sigma), mpmath.mpf(q)
        x = s**2 * mpmath.log((mpmath.exp(eps) - 1 + q) / q) + mpmath.mpf(1) / 2
        tail = lambda z: mpmath.ncdf(-z)  # noqa: E731
        return (1 - q) * tail(x / s) + q * tail((x - 1) / s) - mpmath.exp(eps) * tail(x / s)


def test_subsampling_does_not_amplify_the_tail_numerically():
    """The GDPT μ_GDP(ε, δ(ε)) of a subsampled Gaussian climbs to the unsubsampled 1/σ."""
    sigma, q = 2.0, 0.01
    values = []
    for epsilon in (1, 5, 20, 80, 160):
        delta = subsampled_gaussian_delta(epsilon, sigma, q)
        values.append(float(references.solve_mu(mpmath.mpf(epsilon), delta)))
    assert values == sorted(values)
    assert 0.48 < values[-1] < 1 / sigma
    assert tail_mu(PoissonSubsampled(Gaussian(sigma), q)) == 1 / sigma
    # The head, which the report's μ describes, is far below the tail.
    r = report(PoissonSubsampled(Gaussian(sigma), q))
    assert r.mu < r.mu_tail / 3


def test_accountant_gdpt_rises_towards_the_tail_limit():
    deltas = [1e-2, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12]
    r = account(DPSGD(1.0, 0.5, 4)).gdp(deltas=deltas)
    needed = [row.mu_at_delta for row in r.epsilons]
    assert needed == sorted(needed)
    # μ at δ_tail covers the points with δ > δ_tail; the 1e-12 point needs a smaller δ_tail.
    assert needed[-3] <= r.mu <= r.mu_tail == 2.0
    assert needed[-1] <= r.mu_for(1e-14) * (1 + 1e-6) <= r.mu_tail
    assert r.delta_tail == DEFAULT_DELTA_TAIL


def test_delta_tail_is_the_declared_default_far_above_the_floor():
    accounting = account(DPSGD(1.1, 0.01, 3000))
    r = accounting.gdp()
    assert r.delta_tail == DEFAULT_DELTA_TAIL == 1e-10
    assert r.delta_floor <= 1e-14  # 100 times below every δ_tail of the μ table
    accounting = r.accounting  # the (tilted) composition the report read
    assert r.epsilon_tail == pytest.approx(gdp.epsilon(r.mu, r.delta_tail), rel=1e-12)
    eps = np.linspace(0.0, r.epsilon_tail + 5.0, 40001)
    bound = r.delta_tail + (1.0 - r.delta_tail) * np.asarray(gdp.delta(r.mu, eps))
    assert np.all(np.asarray(r.accounting.delta(eps)) <= bound * (1 + 1e-9) + 1e-16)


def test_a_larger_delta_tail_gives_a_smaller_mu():
    accounting = account(DPSGD(9.4, 0.32768, 2000))
    default = accounting.gdp()
    looser = accounting.gdp(delta_tail=1e-9)
    assert looser.delta_tail == 1e-9
    assert looser.mu < default.mu
    eps = np.linspace(0.0, 20.0, 20001)
    bound = 1e-9 + (1.0 - 1e-9) * np.asarray(gdp.delta(looser.mu, eps))
    assert np.all(np.asarray(looser.accounting.delta(eps)) <= bound * (1 + 1e-9) + 1e-16)


def test_long_runs_with_a_position_dependent_allowance_stay_certified():
    """From 10,000 steps the accountant's slack depends on ε; the report charges its maximum."""
    accounting = account(DPSGD(1.1, 0.01, 20000))
    r = accounting.gdp()
    eps = np.linspace(0.0, 30.0, 30001)
    bound = r.delta_tail + (1.0 - r.delta_tail) * np.asarray(gdp.delta(r.mu, eps))
    assert np.all(np.asarray(r.accounting.delta(eps)) <= bound * (1 + 1e-9) + 1e-16)
    assert r.mu < r.mu_tail


@pytest.mark.parametrize("mu", [1.0, 3.0])
def test_a_profile_of_an_exactly_gdp_mechanism_reports_its_mu(mu):
    """The pair of a Profile's curve raises every atom by two ulps of 1.0.

    With failure probability exactly the floor (2.3e-16) that rounding
    allowance decided μ in the far tail: 1.067 for G_1, regret 0.0117, Tier II.
    Treated as slack (the atoms' excess P-mass), μ is within 1e-5 of the truth.
    """
    accounting = account(Profile(lambda e, mu=mu: gdp.delta(mu, e)))
    r = accounting.gdp()
    assert mu <= r.mu <= mu * (1 + 1e-5)
    assert r.tier == 1 and r.regret < 1e-5
    assert r.delta_tail == DEFAULT_DELTA_TAIL
    eps = np.linspace(0.0, 40.0, 40001)
    bound = r.delta_tail + (1.0 - r.delta_tail) * np.asarray(gdp.delta(r.mu, eps))
    assert np.all(np.asarray(r.accounting.delta(eps)) <= bound * (1 + 1e-9) + 1e-16)


# ---------------------------------------------------------------------------
# Where rounding, not the mechanism, sets μ (or makes it ∞)
# ---------------------------------------------------------------------------


def test_a_curve_cut_at_tpr_one_gives_a_finite_certified_mu():
    """ZCDP(50): the certified curve reaches TPR 1 at FPR 2.9e-24 (allowance 2e-13).

    That point made μ = ∞ (1 − tiny rounded to 1 in the quantile); the hull
    cut at TPR 1 is as certified (no test has TPR > 1) and its symmetric curve
    is μ-GDP for a finite μ. The report says that rounding sets μ there.
    """
    from gaussdp.report.render import up

    accounting = account(ZCDP(50.0))
    r = accounting.gdp()
    assert math.isfinite(r.mu) and r.mu < 25.0
    needs = max(row.mu_at_delta for row in r.epsilons)
    assert needs < r.mu
    eps = np.linspace(0.0, 600.0, 60001)
    bound = r.delta_tail + (1.0 - r.delta_tail) * np.asarray(gdp.delta(r.mu, eps))
    assert np.all(np.asarray(r.accounting.delta(eps)) <= bound * (1 + 1e-9) + 1e-16)
    alphas = np.concatenate((np.logspace(-300, 0, 3001), np.linspace(0.0, 1.0, 1001)))
    assert np.all(r.beta_mu(alphas) <= r.beta(alphas) + 1e-15)
    limit = r.rounding_limit
    assert limit is not None and limit.allowance > 0.0
    # μ is what the cut point needs: the advantage condition −2Φ⁻¹(α'/(2(1 − δ))).
    alpha_cut = mpmath.exp(limit.log_alpha_zero)
    expected = 2 * references.normal_quantile_of_complement(alpha_cut / (2 * (1 - r.delta_tail)))
    assert r.mu == pytest.approx(float(expected), rel=1e-9)
    text = r.to_text()
    assert "mu is set where the computed curve reaches true-positive rate 1" in text
    assert f"the epsilon rows need at most mu = {up(needs, 5)}" in text
    for output_format in ("markdown", "html"):
        assert "mu is set where the computed curve reaches" in r.render(output_format).lower()
    assert "allowance" in r.to_dict()["rounding_limit"]


def test_no_rounding_note_where_the_mechanism_sets_mu():
    r = account(DPSGD(9.4, 0.32768, 2000)).gdp()
    assert r.rounding_limit is None
    assert "mu is set where" not in r.to_text() and "no finite mu" not in r.to_text()
    assert "rounding_limit" not in r.to_dict()


def _direction(log_alpha, tpr, floor):
    from gaussdp.report import _steep

    log_alpha = np.asarray(log_alpha, dtype=float)
    losses = np.arange(log_alpha.size - 1, 0, -1, dtype=float) - 1.0  # decreasing, ends at 0
    return _steep.Direction(losses, np.exp(log_alpha), log_alpha, np.asarray(tpr), floor)


def test_infinite_mu_is_explained_and_a_larger_delta_tail_suggested_only_if_it_helps():
    """μ = ∞ from a test at α = 0 (its Q-mass underflowed) with TPR 1e-7 above the floor."""
    from types import SimpleNamespace

    from gaussdp.report import _steep, core
    from gaussdp.report.render.wording import _rounding_sentence

    floor = 1e-12
    direction = _direction(
        [-np.inf, -np.inf, np.log(1e-3), np.log(0.3)], [floor, 1e-7, 0.05, 0.8], floor
    )
    steep = _steep.steep_curve([direction])
    failure = floor
    mu = core.fit(steep, [direction], failure)
    assert math.isinf(mu)
    info = core.why_infinite(steep, [direction], failure)
    assert info.needed == pytest.approx(1e-7)
    assert info.suggested_delta_tail == pytest.approx(1.1e-7)
    checked = core.fit(steep, [direction], info.suggested_delta_tail)
    assert math.isfinite(checked) and info.suggested_mu == checked
    row = SimpleNamespace(mu_at_delta=2.0)
    sentence = _rounding_sentence(SimpleNamespace(rounding_limit=info, mu=mu, epsilons=[row]))
    assert sentence.startswith("no finite mu is certified: the computed curve starts below")
    assert "--delta-tail 1.1e-07" in sentence
    # A test with TPR 1 at α = 1e-40 (where no larger δ_tail helps) is not suggested away.
    blocked = core.RoundingLimit(math.log(1e-40), 3e-10, 1.0)
    sentence = _rounding_sentence(SimpleNamespace(rounding_limit=blocked, mu=mu, epsilons=[row]))
    assert "true-positive rate 1 at false-positive rate alpha = 1e-40" in sentence
    assert "rounding allowance (3e-10" in sentence
    assert (
        "A larger --delta-tail does not help (it would have to be at least 1 - 1e-40)" in sentence
    )
