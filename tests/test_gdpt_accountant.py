"""The GDPT of the accountant's DP-SGD profile: subsampling and the head certificate (§5.3)."""

import math

import numpy as np
import pytest

import gaussdp
from gaussdp import gdpt

account = pytest.importorskip("gaussdp.accountant").account


class GaussianLog:
    """μ-GDP profile with log δ (gaussdp.GaussianDP gives δ only)."""

    def __init__(self, mu):
        self.mu = mu

    def delta(self, epsilon):
        return gaussdp.gdp.delta(self.mu, epsilon)

    def log_delta(self, epsilon):
        return gaussdp.gdp.log_delta(self.mu, epsilon)


def dpsgd(sampling_probability, noise_multiplier=1.0, steps=1):
    return account(gaussdp.DPSGD(noise_multiplier, sampling_probability, steps))


def test_subsampling_lowers_the_gdpt_near_zero_but_not_far_out():
    # One step of DP-SGD with σ = 1: without subsampling the GDPT is the constant 1; with
    # q = 0.1 it starts near 0.1 but climbs back towards 1 (the tail limit is unchanged).
    full = dpsgd(1.0)
    subsampled = dpsgd(0.1)
    epsilons = np.array([0.0, 2.0, 8.0])
    np.testing.assert_allclose(gdpt.transform(full, epsilons), 1.0, rtol=1e-3)
    values = gdpt.transform(subsampled, epsilons)
    assert values[0] < 0.15
    assert np.all(np.diff(values) > 0)
    assert values[-1] > 0.75
    # The add-one direction of the subsampled Gaussian is exactly subsample_profile of the
    # Gaussian; the accountant (both directions, pessimistic) is at least that.
    exact = gdpt.transform(gdpt.subsample_profile(gaussdp.GaussianDP(1.0), 0.1), epsilons)
    assert np.all(values >= exact * (1 - 1e-9))
    # Its tail limit is that of the Gaussian, 1/σ = 1 (log space keeps the far tail).
    log_gaussian = gdpt.subsample_profile(GaussianLog(1.0), 0.1)
    assert gdpt.tail_limit(log_gaussian) == pytest.approx(1.0, rel=1e-6)


def test_certify_reads_the_accountants_bounds():
    accounting = dpsgd(0.1)
    certificate = gdpt.certify(accounting, 4.0, 1e-3)
    assert certificate.from_bounds
    _, upper = accounting.delta_bounds(np.array([0.0, 4.0]))
    # The GDPT of each side on a fine grid: the certificate must bracket them.
    grid = np.linspace(0.0, 4.0, 401)
    lows, ups = accounting.delta_bounds(grid)
    transform_of_lower = gdpt.transform(lambda e: np.interp(e, grid, lows), grid).max()
    transform_of_upper = gdpt.transform(lambda e: np.interp(e, grid, ups), grid).max()
    assert transform_of_lower - 1e-3 <= certificate.mu_lower <= certificate.mu_upper
    assert certificate.mu_upper >= transform_of_upper
    assert certificate.mu_upper - certificate.mu_lower <= 1e-3 + (
        transform_of_upper - transform_of_lower
    )
    assert certificate.tail_delta == pytest.approx(upper[1], rel=1e-12)
    assert math.isfinite(certificate.mu_upper)
