"""The accountant's trade-off curves in the tails: sandwich the truth at low FPR, no spurious
mass at infinite loss, exact and symmetric for composed randomized response."""

import mpmath
import numpy as np
import pytest

import gaussdp as g
from gaussdp import curves as C


def cp_gaussian_tpr(mu, p, alpha):
    """1 − C_p(G_μ)(α) for α below the fixed point: p(1 − G_μ(α)) + (1 − p)α, in mpmath."""
    with mpmath.workdps(40):
        mu, p, a = mpmath.mpf(mu), mpmath.mpf(p), mpmath.mpf(alpha)
        g_mu = mpmath.ncdf(mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * a) - mu)
        return float(p * (1 - g_mu) + (1 - p) * a)


@pytest.mark.parametrize(("sigma", "q"), [(0.5, 0.05), (1.0, 0.01)])
def test_accountant_curves_sandwich_the_truth_at_low_fpr(sigma, q):
    result = g.account(g.PoissonSubsampled(g.Gaussian(sigma), q))
    low, high = result.tradeoff(), result.tradeoff("optimistic")
    assert low.tpr(0.0) < 1e-12  # no spurious mass at infinite loss
    for alpha in [1e-10, 1e-9, 1e-8, 1e-6]:
        truth = cp_gaussian_tpr(1 / sigma, q, alpha)
        assert high.tpr(alpha) <= truth * (1 + 1e-6)  # optimistic: TPR not above the truth
        assert low.tpr(alpha) >= truth * (1 - 1e-6)  # pessimistic: TPR not below the truth
        assert low.tpr(alpha) <= truth * (1 + 1e-3)  # and close


@pytest.mark.parametrize(("epsilon", "n"), [(2.0, 10), (1.0, 50), (0.5, 100)])
def test_accountant_curve_of_composed_randomized_response_is_exact_and_symmetric(epsilon, n):
    f = g.account(g.Repeated(g.RandomizedResponse(epsilon), n)).tradeoff()
    exact = C.compose([C.epsilon_delta(epsilon)] * n)
    alphas = np.concatenate([np.geomspace(1e-15, 0.5, 100), 1 - np.geomspace(1e-15, 0.5, 100)])
    assert np.max(np.abs(f.beta(alphas) - exact.beta(alphas))) < 1e-13
    assert f.is_symmetric
    assert f.inverse().beta(0.0) == pytest.approx(exact.inverse().beta(0.0), abs=1e-13)


def test_numerical_curves_have_no_spurious_infinite_loss_mass():
    result = g.account(g.Composition([g.Laplace(1 / 3.0), g.Gaussian(1 / 3.0)]))
    assert result.tradeoff().tpr(0.0) < 1e-12
    assert C.compose([C.gaussian(3.0), C.laplace(3.0)]).tpr(0.0) < 1e-12
    profile_curve = C.from_profile(lambda e: result.delta(e))
    assert result.tradeoff().tpr(1e-12) == pytest.approx(profile_curve.tpr(1e-12), rel=1e-4)
