"""The reporting paper's reference points: De et al.'s CIFAR-10 DP-SGD and the 2020 Census.

Gomez et al. (2025), §5: CIFAR-10 (σ = 9.4, q = 2^14/50000, T = 2000) is μ ≈ 1.57
with regret ≈ 1.0e-3; the Census TopDown pipeline is μ ≈ 2.70 with regret ≈ 1e-9.
The independent references are the paper's own code (gdpnum, on dp_accounting's
PLD) and, for the Census, the closed form √(2ρ) of a ρ-zCDP Gaussian budget.
"""

import math
from pathlib import Path

import numpy as np
import pytest
from dp_accounting.pld.privacy_loss_distribution import from_gaussian_mechanism
from gdpnum.converter import PLDConverter, get_worst_case_regret

from gaussdp import DPSGD, account, curves, gdp, load
from gaussdp.report import regret, report

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SIGMA, Q, STEPS = 9.4, 2**14 / 50000, 2000


@pytest.fixture(scope="module")
def cifar():
    accounting = account(DPSGD(SIGMA, Q, STEPS))
    return accounting, accounting.gdp()


@pytest.fixture(scope="module")
def gdpnum_cifar():
    """The paper's code on dp_accounting's connect-the-dots PLD (grid 1e-4)."""
    pld = from_gaussian_mechanism(
        standard_deviation=SIGMA,
        sampling_prob=Q,
        use_connect_dots=True,
        value_discretization_interval=1e-4,
    ).self_compose(STEPS)
    converter = PLDConverter(pld)
    mu, regret_value = converter.get_mu_and_regret()
    return converter, float(mu), float(regret_value)


def test_cifar10_mu_and_regret_match_the_paper(cifar):
    _, r = cifar
    assert round(r.mu, 2) == 1.57
    assert 1.0e-3 <= r.regret <= 1.4e-3
    assert r.tier == 1
    assert r.mu_tail == pytest.approx(math.sqrt(STEPS) / SIGMA, rel=1e-14)
    assert r.delta_tail == 1e-10 and r.delta_floor <= 1e-14


def test_cifar10_against_gdpnum(cifar, gdpnum_cifar):
    """Our μ also covers the tail gdpnum drops (α < 1e-10), so it is at least gdpnum's."""
    _, r = cifar
    _, mu_gdpnum, regret_gdpnum = gdpnum_cifar
    assert mu_gdpnum <= r.mu <= mu_gdpnum + 0.005
    assert r.regret >= regret_gdpnum
    assert regret_gdpnum == pytest.approx(1.0e-3, rel=0.02)  # the paper's value


def test_regret_on_gdpnums_own_curve_is_never_below_its_value(gdpnum_cifar):
    converter, mu_gdpnum, _ = gdpnum_cifar
    alphas, betas = converter.alphas_symm, converter.betas_symm
    curve = curves.from_points(alphas, betas)
    ours = regret(curve, mu_gdpnum)
    theirs = get_worst_case_regret(alphas, betas, mu_gdpnum, tol=1e-13)
    assert theirs <= ours <= theirs + 1e-8


def test_cifar10_epsilons_agree_with_dp_accounting(cifar):
    _, r = cifar
    row = r.epsilons[0]
    assert row.delta == 1e-5
    assert row.epsilon_lower <= row.epsilon
    assert row.epsilon == pytest.approx(7.42438, abs=2e-4)  # dp_accounting PLD: 7.4244
    # The μ-GDP guarantee gives a slightly larger ε, and the GDPT rises towards the tail.
    assert row.epsilon <= row.epsilon_mu <= row.epsilon + 0.05
    needed = [row.mu_at_delta for row in r.epsilons]
    assert needed == sorted(needed)
    # μ at δ_tail = 1e-10 covers the δ = 1e-9 point with 0.9e-9 of it; all of it, at 1e-12.
    assert needed[-1] <= r.mu_for(1e-12) + 1e-9


def test_cifar10_guarantee_holds_against_the_accountant(cifar):
    _, r = cifar
    eps = np.linspace(0.0, 25.0, 50001)
    upper = np.asarray(r.accounting.delta(eps))
    bound = r.delta_tail + (1.0 - r.delta_tail) * np.asarray(gdp.delta(r.mu, eps))
    assert np.all(upper <= bound * (1 + 1e-9) + 1e-16)


def test_census_topdown_is_sqrt_two_rho_with_tiny_regret():
    r = report(load(EXAMPLES / "census_topdown.toml"))
    rho = 3.65
    assert r.mu == pytest.approx(math.sqrt(2 * rho), rel=1e-7)
    assert round(r.mu, 2) == 2.70
    assert r.regret < 1e-8  # the paper: ≈ 1e-9
    assert r.tier == 1
    assert r.delta_tail == 1e-10
    assert r.mu_tail == pytest.approx(math.sqrt(2 * rho), rel=1e-9)
    assert r.title.startswith("2020 Census TopDown")
