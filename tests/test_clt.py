"""Central limit theorems: functionals by mpmath quadrature of their definitions, the
theorems' claims on exact compositions, and the optimism of the DP-SGD CLT μ."""

import functools
import math
import warnings

import mpmath
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution

from gaussdp import InvalidParameterError, clt, gdp
from gaussdp import curves as C
from gaussdp.curves import PrivacyProfile


def quantile_of_complement(x):
    """Φ⁻¹(1 − x) in mpmath."""
    return _quantile_of_complement(mpmath.mpf(x), mpmath.mp.prec)


@functools.cache
def _quantile_of_complement(x, prec):
    # Cached: the quadratures of every μ evaluate it at the same nodes (an erfinv, a
    # root-finding, is most of their cost); keyed by the precision it is computed at.
    with mpmath.workprec(prec):
        return mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * x)


def gaussian_log_slope(mu):
    """x ↦ log|G_μ'(x)| = log φ(q − μ) − log φ(q), q = Φ⁻¹(1 − x)."""
    mu = mpmath.mpf(mu)

    def log_slope(x):
        q = quantile_of_complement(x)
        return -((q - mu) ** 2) / 2 + q**2 / 2

    return log_slope


def laplace_log_slope(mu):
    mu = mpmath.mpf(mu)
    corner = mpmath.e ** (-mu) / 2

    def log_slope(x):
        if x <= corner:
            return mu
        if x <= 0.5:
            return mpmath.log(mpmath.e ** (-mu) / (4 * x * x))  # f = e^{−μ}/(4x)
        return -mu

    return log_slope, [0, corner, mpmath.mpf(1) / 2, 1]


def functionals_by_quadrature(log_slope, points=(0, 0.5, 1)):
    """kl, κ₂, κ₃, κ̄₃ as ∫₀¹ of their definitions (DRS §3.2), by mpmath.quad."""
    points = [mpmath.mpf(p) for p in points]
    known = {}
    plain = log_slope

    def log_slope(x):  # once per node: the four integrals share their quadrature nodes
        if x not in known:
            known[x] = plain(x)
        return known[x]

    kl = -mpmath.quad(log_slope, points)
    return (
        kl,
        mpmath.quad(lambda x: log_slope(x) ** 2, points),
        mpmath.quad(lambda x: abs(log_slope(x)) ** 3, points),
        mpmath.quad(lambda x: abs(log_slope(x) + kl) ** 3, points),
    )


# ---------------------------------------------------------------------------
# Functionals
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.5])
def test_gaussian_functionals_match_quadrature(mu):
    with mpmath.workdps(30):
        reference = functionals_by_quadrature(gaussian_log_slope(mu))
    value = clt.functionals(C.gaussian(mu))
    for got, expected in zip(value, reference, strict=True):
        assert got == pytest.approx(float(expected), rel=1e-9)
    assert value.kl == pytest.approx(mu * mu / 2, rel=1e-15)


@pytest.mark.parametrize("mu", [0.2, 1.0, 3.0])
def test_laplace_functionals_match_quadrature(mu):
    log_slope, points = laplace_log_slope(mu)
    reference = functionals_by_quadrature(log_slope, points)
    value = clt.functionals(C.laplace(mu))
    for got, expected in zip(value, reference, strict=True):
        assert got == pytest.approx(float(expected), rel=1e-10)


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 2.0])
def test_pure_dp_functionals_in_closed_form(epsilon):
    """f_{ε,0}: log|f'| = ε on [0, c], −ε on [c, 1], c = 1/(1 + e^ε)."""
    c = 1 / (1 + math.exp(epsilon))
    kl = epsilon * math.tanh(epsilon / 2)
    value = clt.functionals(C.epsilon_delta(epsilon))
    assert value.kl == pytest.approx(kl, rel=1e-12)
    assert value.kappa2 == pytest.approx(epsilon**2, rel=1e-12)
    assert value.kappa3 == pytest.approx(epsilon**3, rel=1e-12)
    bar = c * (epsilon + kl) ** 3 + (1 - c) * (epsilon - kl) ** 3
    assert value.kappa3_bar == pytest.approx(bar, rel=1e-12)
    assert clt.kl(C.epsilon_delta(epsilon)) == value.kl
    assert clt.kappa2(C.epsilon_delta(epsilon)) == value.kappa2
    assert clt.kappa3(C.epsilon_delta(epsilon)) == value.kappa3
    assert clt.kappa3_bar(C.epsilon_delta(epsilon)) == value.kappa3_bar


def test_functionals_are_infinite_with_a_failure_probability():
    value = clt.functionals(C.epsilon_delta(1.0, 1e-6))
    assert all(math.isinf(v) for v in value)
    assert math.isinf(clt.kl(C.gaussian(1.0).with_failure(1e-9)))
    assert clt.functionals(C.identity()) == (0.0, 0.0, 0.0, 0.0)


# ---------------------------------------------------------------------------
# χ²₊ and Lemma 3
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [1e-4, 0.01, 0.3, 1.0, 3.0])
def test_chi2_plus_of_gaussian_is_lemma_3(mu):
    # By definition: ∫ (|f'| − 1)₊² dx with |f'| = e^{μq − μ²/2}, q = Φ⁻¹(1 − x) ~ N(0, 1):
    # = ∫_{μ/2}^∞ (e^{μq − μ²/2} − 1)² φ(q) dq.
    m = mpmath.mpf(mu)
    reference = mpmath.quad(
        lambda q: mpmath.expm1(m * q - m * m / 2) ** 2 * mpmath.npdf(q),
        [m / 2, m / 2 + 10, mpmath.inf],
    )
    lemma_3 = mpmath.e ** (m * m) * mpmath.ncdf(3 * m / 2) + 3 * mpmath.ncdf(-m / 2) - 2
    assert float(lemma_3) == pytest.approx(float(reference), rel=1e-20 / mu**2 + 1e-12)
    assert clt.chi2_plus(C.gaussian(mu)) == pytest.approx(float(reference), rel=1e-11)


def test_chi2_plus_of_laplace_and_piecewise_curves():
    log_slope, points = laplace_log_slope(1.3)
    kink = mpmath.e ** (-mpmath.mpf(1.3) / 2) / 2  # where |f'| = 1
    points = sorted([*points, kink])
    reference = mpmath.quad(lambda x: max(mpmath.e ** log_slope(x) - 1, 0) ** 2, points)
    assert clt.chi2_plus(C.laplace(1.3)) == pytest.approx(float(reference), rel=1e-10)
    c = 1 / (1 + math.e)
    assert clt.chi2_plus(C.epsilon_delta(1.0)) == pytest.approx(c * (math.e - 1) ** 2, rel=1e-13)
    assert clt.chi2_plus(C.identity()) == 0.0


def test_subsampling_limit_is_theorem_11_and_warns_like_noisy_sgd_mu():
    with pytest.warns(clt.OptimisticApproximationWarning):
        mu = clt.subsampling_limit_mu(C.gaussian(1.0), 0.01, 10_000)
    assert mu == pytest.approx(0.01 * 100 * math.sqrt(2 * clt.chi2_plus(C.gaussian(1.0))))
    with pytest.warns(clt.OptimisticApproximationWarning):
        same = clt.noisy_sgd_mu(1.0, 0.01, 10_000, sampling="uniform")
    assert mu == pytest.approx(same, rel=1e-12)
    with pytest.raises(InvalidParameterError, match="symmetric"):
        clt.subsampling_limit_mu(C.from_points([0.1], [0.5]), 0.1, 10)


# ---------------------------------------------------------------------------
# NoisySGD: Corollary 4, Lemma 4, Corollary 5
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("sigma", "p", "steps"), [(1.0, 0.01, 1000), (0.8, 256 / 60_000, 3515)])
def test_noisy_sgd_mu_formulas_and_warning(sigma, p, steps):
    with pytest.warns(clt.OptimisticApproximationWarning, match="optimistic"):
        poisson = clt.noisy_sgd_mu(sigma, p, steps)
    with pytest.warns(clt.OptimisticApproximationWarning, match="gaussdp.account"):
        uniform = clt.noisy_sgd_mu(sigma, p, steps, sampling="uniform")
    s = mpmath.mpf(sigma)
    expected_poisson = p * mpmath.sqrt(steps * mpmath.expm1(1 / s**2))
    c = p * math.sqrt(steps)
    inner = mpmath.e ** (1 / s**2) * mpmath.ncdf(1.5 / s) + 3 * mpmath.ncdf(-0.5 / s) - 2
    expected_uniform = mpmath.sqrt(2) * c * mpmath.sqrt(inner)  # Corollary 4 as printed
    assert poisson == pytest.approx(float(expected_poisson), rel=1e-13)
    assert uniform == pytest.approx(float(expected_uniform), rel=1e-12)


def test_noisy_sgd_mu_is_vectorised():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clt.OptimisticApproximationWarning)
        values = clt.noisy_sgd_mu(np.array([0.8, 1.0, 2.0]), 0.01, 1000)
        single = clt.noisy_sgd_mu(1.0, 0.01, 1000)
    assert values.shape == (3,) and values[1] == single
    assert np.all(np.diff(values) < 0)  # more noise, smaller μ


def test_clt_mu_of_dp_sgd_is_optimistic_against_an_exact_accountant():
    """Gopi et al. 2021: the CLT ε is below the exact (here dp_accounting's) ε."""
    sigma, p, steps = 0.8, 0.004, 5000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clt.OptimisticApproximationWarning)
        mu = clt.noisy_sgd_mu(sigma, p, steps)
    pld = privacy_loss_distribution.from_gaussian_mechanism(
        sigma, sampling_prob=p, value_discretization_interval=1e-3
    ).self_compose(steps)
    exact = pld.get_epsilon_for_delta(1e-5)
    assert gdp.epsilon(mu, 1e-5) < 0.9 * exact


def cp_gaussian_functionals_by_quadrature(mu, p):
    """kl, κ₂, κ₃, κ̄₃ of C_p(G_μ) from eq. (13), integrating over each of its three pieces.

    On [0, x*] the slope is f_p' = pG_μ' − (1 − p); the middle piece has slope −1
    (log 0); the last piece is the inverse of the first, whose log-slope at
    x = f_p(t) is −log|f_p'(t)|, integrated with dx = |f_p'(t)| dt.
    """
    mu, p = mpmath.mpf(mu), mpmath.mpf(p)
    fixed = mpmath.ncdf(-mu / 2)
    log_g = gaussian_log_slope(mu)

    known = {}

    def slope(t):  # |f_p'(t)| and its log, once per node (the four integrals share nodes)
        if t not in known:
            value = p * mpmath.e ** log_g(t) + (1 - p)
            known[t] = value, mpmath.log(value)
        return known[t]

    def integral(g):
        first = mpmath.quad(lambda t: g(slope(t)[1]), [0, fixed / 2, fixed])
        last = mpmath.quad(lambda t: g(-slope(t)[1]) * slope(t)[0], [0, fixed / 2, fixed])
        middle_length = (p * fixed + (1 - p) * (1 - fixed)) - fixed  # f_p(x*) − x*
        return first + middle_length * g(mpmath.mpf(0)) + last

    kl = -integral(lambda v: v)
    return (
        kl,
        integral(lambda v: v**2),
        integral(lambda v: abs(v) ** 3),
        integral(lambda v: abs(v + kl) ** 3),
    )


@pytest.mark.parametrize(("sigma", "p"), [(1.0, 0.01), (0.7, 0.1), (2.0, 0.5)])
def test_lemma_4_functionals_match_the_definition_on_eq_13(sigma, p):
    with mpmath.workdps(25):
        reference = cp_gaussian_functionals_by_quadrature(1 / sigma, p)
    value = clt.noisy_sgd_functionals(sigma, p)
    for got, expected in zip(value, reference, strict=True):
        assert got == pytest.approx(float(expected), rel=1e-10)
    # Lemma 4 as printed leaves out the slope −1 middle segment of eq. (13) from κ̄₃.
    mu = 1 / sigma
    middle = (1 - p) * math.erf(mu / (2 * math.sqrt(2)))
    printed = value.kappa3_bar - middle * value.kl**3
    assert printed < float(reference[3]) and printed == pytest.approx(float(reference[3]), rel=1e-3)
    # The generic route (functionals of the piecewise-linear C_p) agrees to its accuracy.
    generic = clt.functionals(C.gaussian(1 / sigma).subsample(p))
    assert generic.kl == pytest.approx(value.kl, rel=1e-3)
    assert generic.kappa2 == pytest.approx(value.kappa2, rel=1e-3)


def test_noisy_sgd_berry_esseen_lower_curve_is_below_the_exact_accountant():
    sigma, p, steps = 1.0, 0.01, 10_000
    bounds = clt.noisy_sgd_berry_esseen(sigma, p, steps)
    value = clt.noisy_sgd_functionals(sigma, p)
    variance = value.kappa2 - value.kl**2
    assert bounds.mu == pytest.approx(2 * math.sqrt(steps) * value.kl / math.sqrt(variance))
    assert bounds.gamma == pytest.approx(0.56 * value.kappa3_bar / math.sqrt(steps) / variance**1.5)
    pld = privacy_loss_distribution.from_gaussian_mechanism(
        sigma, sampling_prob=p, value_discretization_interval=1e-3
    ).self_compose(steps)
    lower = PrivacyProfile.from_tradeoff(bounds.lower)
    for epsilon in [0.0, 0.5, 1.0, 2.0, 4.0]:
        assert lower.delta(epsilon) >= pld.get_delta_for_epsilon(epsilon)


# ---------------------------------------------------------------------------
# Theorems 5, 6, 7 on exact compositions
# ---------------------------------------------------------------------------


def test_composition_mu_refuses_asymmetric_curves():
    asymmetric = C.from_points([0.0, 0.2, 1.0], [0.9, 0.3, 0.0])
    for call in (clt.composition_mu, clt.compose, clt.berry_esseen):
        with pytest.raises(InvalidParameterError, match=r"curves\[1\] must be symmetric"):
            call([C.gaussian(0.1), asymmetric])
    with pytest.raises(InvalidParameterError, match="f\\(0\\) < 1"):
        clt.composition_mu([C.from_directions(asymmetric, asymmetric.inverse())])
    starts_at_one = C.from_points([0.0, 0.2, 1.0], [1.0, 0.3, 0.0])
    assert not starts_at_one.is_symmetric
    symmetric = C.from_directions(starts_at_one, starts_at_one.inverse())
    assert math.isfinite(clt.composition_mu([C.gaussian(0.1), symmetric]))


def test_composition_mu_of_gaussians_is_exact():
    assert clt.composition_mu([C.gaussian(0.1)] * 100) == pytest.approx(1.0, rel=1e-13)
    assert clt.compose([C.gaussian(0.3), C.gaussian(0.4)]).mu == pytest.approx(0.5, rel=1e-13)
    assert clt.limit_mu(0.5, 1.0) == 1.0


@pytest.mark.parametrize("n", [50, 200])
def test_berry_esseen_bounds_sandwich_the_exact_pure_dp_composition(n):
    eps = 1 / math.sqrt(n)
    bounds = clt.berry_esseen([C.epsilon_delta(eps)] * n)
    exact = C.compose([C.epsilon_delta(eps)] * n)
    alphas = np.linspace(bounds.gamma, 1 - bounds.gamma, 2001)
    assert np.all(bounds.lower.beta(alphas) <= exact.beta(alphas) + 1e-12)
    assert np.all(exact.beta(alphas) <= bounds.upper_beta(alphas) + 1e-12)
    grid = np.linspace(0, 1, 2001)
    assert np.all(bounds.lower.beta(grid) <= exact.beta(grid) + 1e-12)  # everywhere
    bounds.lower.validate()
    assert bounds.mu == pytest.approx(1.0, abs=0.01)  # → 2K/s = 1 (Theorem 6)


def test_theorem_6_and_7_limits_are_approached():
    gaps = []
    for n in [25, 100, 400]:
        eps = 1 / math.sqrt(n)
        exact = C.compose([C.epsilon_delta(eps, 1e-3 / n)] * n)
        limit = clt.epsilon_delta_limit([(eps, 1e-3 / n)] * n)
        grid = np.linspace(0, 1, 4001)
        gaps.append(np.max(np.abs(exact.beta(grid) - limit.beta(grid))))
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 0.005
    limit = clt.epsilon_delta_limit([(0.1, 1e-6)] * 100)
    assert limit.base.mu == pytest.approx(1.0) and limit.failure == pytest.approx(
        -math.expm1(-1e-4)
    )


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: clt.noisy_sgd_mu(0.0, 0.1, 10), "noise_multiplier must be in (0, inf]"),
        (lambda: clt.noisy_sgd_mu(1.0, 1.5, 10), "sampling_probability must be in [0, 1]"),
        (lambda: clt.noisy_sgd_mu(1.0, 0.1, 0), "steps must be an integer >= 1"),
        (lambda: clt.noisy_sgd_mu(1.0, 0.1, 10, sampling="shuffle"), "sampling must be"),
        (lambda: clt.berry_esseen([C.from_points([0.1], [0.5])]), "must be symmetric"),
        (lambda: clt.berry_esseen([C.epsilon_delta(1.0, 1e-3)]), "kappa3 = inf"),
        (lambda: clt.berry_esseen([C.epsilon_delta(2.0)]), "gamma < 1/2"),
        (lambda: clt.berry_esseen([]), "at least one curve"),
        (lambda: clt.functionals("G"), "must be a TradeOff"),
        (lambda: clt.noisy_sgd_berry_esseen(1.0, 0.0, 10), "perfect privacy"),
        (lambda: clt.limit_mu(1.0, 0.0), "kappa2_total must be in (0, inf]"),
        (lambda: clt.epsilon_delta_limit([]), "non-empty"),
    ],
)
def test_bad_input(call, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clt.OptimisticApproximationWarning)
        with pytest.raises(InvalidParameterError) as info:
            call()
    assert message in str(info.value)


def test_clt_curves_warn_where_they_lie_above_the_exact_composition():
    # Dong, Roth & Su, Figure 5: ten (1/√10, 0)-DP mechanisms; the CLT's G_μ lies up to
    # 0.0067 above the exact composition near α ≈ 0.2, understating privacy loss there.
    pieces = [C.epsilon_delta(1 / math.sqrt(10))] * 10
    for approximation in (clt.composition_mu, clt.compose):
        with pytest.warns(clt.OptimisticApproximationWarning, match=r"above the exact"):
            approximation(pieces)
    # The warning is warranted: G_μ is above the exact curve at α = 0.2.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clt.OptimisticApproximationWarning)
        mu = clt.composition_mu(pieces)
    assert C.gaussian(mu).beta(0.2) > C.compose(pieces).beta(0.2) + 1e-3
    with pytest.warns(clt.OptimisticApproximationWarning, match="Theorem 7"):
        clt.epsilon_delta_limit([(1 / math.sqrt(10), 0.0)] * 10)


def test_clt_curves_that_are_exact_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", clt.OptimisticApproximationWarning)
        assert clt.compose([C.gaussian(0.3), C.gaussian(0.4)]).mu == pytest.approx(0.5)
        assert clt.composition_mu([C.gaussian(0.1)] * 100) == pytest.approx(1.0)
