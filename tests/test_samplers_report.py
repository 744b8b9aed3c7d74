"""The μ-GDP report of the new samplers is stable as today's: monotone and continuous in σ.

For each new description (balls-in-bins, truncated Poisson, shuffling, a Gaussian
mixture), the report's μ (an upper bound at the default δ_tail) decreases as the noise
grows, by a little for a little more noise (no jump of the kind the report once had
near a floor), and epochs never make it smaller. Independent of the references of each
sampler's own tests: this checks what the report does with their bounds.
"""

import itertools

import pytest

from gaussdp import (
    Gaussian,
    GaussianMixture,
    RandomAllocation,
    Repeated,
    Shuffled,
    TruncatedPoisson,
    account,
)

RUNS = {
    "balls-in-bins": lambda sigma, epochs: Repeated(RandomAllocation(Gaussian(sigma), 5), epochs),
    "truncated Poisson": lambda sigma, epochs: Repeated(
        TruncatedPoisson(Gaussian(sigma), 0.05, 8, 100), 10 * epochs
    ),
    "shuffling": lambda sigma, epochs: Repeated(Shuffled(Gaussian(sigma), 10), epochs),
    "Gaussian mixture": lambda sigma, epochs: Repeated(
        GaussianMixture(sigma, [0.0, 0.5, 1.0], [0.9, 0.05, 0.05]), 10 * epochs
    ),
}


@pytest.mark.parametrize("name", RUNS)
def test_the_reports_mu_is_monotone_and_continuous_in_sigma_and_epochs(name):
    run = RUNS[name]
    sigmas = [2.0, 2.002, 2.2, 3.0]
    mus = [account(run(sigma, 1)).gdp().mu for sigma in sigmas]
    assert all(later <= earlier for earlier, later in itertools.pairwise(mus)), mus
    # 0.1 % more noise moves μ by well under 1 % (μ ∝ 1/σ for a Gaussian: 0.1 %)
    assert mus[0] - mus[1] < 0.01 * mus[0]
    assert account(run(2.0, 2)).gdp().mu >= mus[0]
