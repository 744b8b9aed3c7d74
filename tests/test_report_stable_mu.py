"""The report's headline μ: a fixed, declared δ_tail; smooth and monotone; μ for every δ_tail."""

import functools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaussdp import DPSGD, InvalidParameterError, Laplace, account, gdp
from gaussdp.report import report
from gaussdp.report.core import DEFAULT_DELTA_TAIL, MU_TABLE_DELTA_TAILS
from gaussdp.report.pure import laplace_mu
from tests import references

CIFAR_Q = 0.32768


# Several tests read the report of the same run (reports are immutable): compute each once.
@functools.cache
def _mu(sigma, q, steps, **options):
    return account(DPSGD(sigma, q, steps)).gdp(**options)


def test_the_default_delta_tail_is_declared_and_the_same_for_every_run():
    for sigma, q, steps in [(9.4, CIFAR_Q, 2000), (0.9, 0.01, 1000), (0.8, 0.01, 5000)]:
        r = _mu(sigma, q, steps)
        assert r.delta_tail == DEFAULT_DELTA_TAIL == 1e-10
        assert r.delta_floor <= min(MU_TABLE_DELTA_TAILS) / 100


def test_regression_the_issues_table_no_longer_jumps():
    """On main, σ 9.395 → 9.39 moved μ by 19 % (1.5696 → 1.8658) and more noise raised μ."""
    a, b = _mu(9.395, CIFAR_Q, 2000).mu, _mu(9.39, CIFAR_Q, 2000).mu
    assert a < b < a * (1 + 1e-3)  # less noise, slightly larger μ
    assert _mu(1.0, 0.01, 1000).mu < _mu(0.9, 0.01, 1000).mu  # more noise, smaller μ
    assert _mu(1.0, 0.01, 1000).mu < _mu(1.0, 0.01, 2000).mu  # fewer steps, smaller μ
    # The issue's fixed-δ_tail sweep, 9.38 → 9.40: 1.57064, 1.56980, 1.56896, 1.56812, 1.56728.
    sweep = [_mu(s, CIFAR_Q, 2000).mu for s in (9.38, 9.385, 9.39, 9.395, 9.40)]
    assert np.all(np.diff(sweep) < 0)
    assert sweep == pytest.approx([1.57064, 1.56980, 1.56896, 1.56812, 1.56728], abs=2e-5)


@settings(max_examples=6, deadline=None)
@given(
    sigma=st.floats(0.8, 3.0),
    q=st.floats(0.002, 0.05),
    steps=st.integers(10, 200),
    factor=st.floats(1.0001, 1.3),
)
def test_mu_is_monotone_in_sigma_q_and_steps_at_the_fixed_delta_tail(sigma, q, steps, factor):
    """More noise, a smaller q or fewer steps never raise μ (up to the discretisation, 1e-5)."""
    base = _mu(sigma, q, steps).mu
    tolerance = 1e-5 * base + 1e-9
    assert _mu(sigma * factor, q, steps).mu <= base + tolerance
    assert _mu(sigma, q / factor, steps).mu <= base + tolerance
    assert _mu(sigma, q, max(1, int(steps / factor))).mu <= base + tolerance


def test_mu_changes_no_more_than_the_parameter_change_justifies():
    """A 0.05 % change of σ moves μ by about as much (the head is Gaussian: μ ∝ 1/σ)."""
    sigma = 9.4
    mu = _mu(sigma, CIFAR_Q, 2000).mu
    moved = _mu(sigma * 1.0005, CIFAR_Q, 2000).mu
    assert 0.0 < (mu - moved) / mu < 2 * 0.0005


@pytest.mark.parametrize(
    ("sigma", "q", "steps"), [(9.4, CIFAR_Q, 2000), (0.9, 0.01, 1000), (1.1, 0.01, 12000)]
)
def test_the_guarantee_is_certified_on_a_dense_epsilon_grid(sigma, q, steps):
    """δ(ε) ≤ δ_tail + (1 − δ_tail)·δ_μ(ε) on the pessimistic profile: f ≥ G_μ ⊗ f_{0,δ_tail}."""
    r = _mu(sigma, q, steps)
    eps = np.linspace(0.0, r.epsilon_tail + 10.0, 60001)
    upper = np.asarray(r.accounting.delta(eps))
    for row in r.mu_by_delta_tail:
        if row.kind != "certified":
            continue
        bound = row.delta_tail + (1.0 - row.delta_tail) * np.asarray(gdp.delta(row.mu, eps))
        assert np.all(upper <= bound * (1 + 1e-9) + 1e-18), row


def test_mu_by_delta_tail_is_one_curve_non_increasing_and_ends_at_the_tail_limit():
    r = _mu(1.0, 0.01, 1000)
    rows = r.mu_by_delta_tail
    certified = [row for row in rows if row.kind == "certified"]
    assert [row.delta_tail for row in certified] == [1e-6, 1e-8, 1e-10, 1e-12]
    mus = [row.mu for row in certified]
    assert mus == sorted(mus)  # smaller δ_tail, larger μ
    assert all(row.mu == r.mu_for(row.delta_tail) for row in certified)
    assert r.mu == r.mu_for(1e-10)
    assert rows[-1].kind == "tail limit" and rows[-1].delta_tail == 0.0
    assert rows[-1].mu == pytest.approx(math.sqrt(1000) / 1.0) and rows[-1].mu > mus[-1]


def test_a_delta_tail_below_the_default_floor_is_reached_not_refused():
    """On main delta_tail=1e-14 was refused on CIFAR-10 (floor 9.2e-13)."""
    r = _mu(9.4, CIFAR_Q, 2000, delta_tail=1e-14)
    assert r.delta_tail == 1e-14 and r.delta_floor <= 1e-16
    assert r.mu_for(1e-10) < r.mu < r.mu_tail
    # mu_for below the report's floor composes again rather than refusing.
    assert r.mu_for(1e-20) >= r.mu


def test_a_mu_for_a_delta_tail_memory_cannot_reach_names_the_smallest(monkeypatch):
    from gaussdp.accountant import grids

    accounting = account(DPSGD(9.4, CIFAR_Q, 2000))
    accounting.epsilon(1e-5)  # composed plainly: one row
    # the window of the tilted composition (on the grid of a tilted composition)
    tilted = account(DPSGD(9.4, CIFAR_Q, 2000), delta_floor=1e-20)
    length = max(p.p_masses.size for p in tilted.privacy_loss_distributions().values())
    # Room for one row of the window, not for two.
    room = int(1.5 * grids.BYTES_PER_POINT * length / grids.MEMORY_FRACTION)
    monkeypatch.setattr(grids, "available_memory", lambda: room)
    with pytest.raises(InvalidParameterError, match=r"smallest reachable delta_floor is \S+"):
        accounting.gdp()


@pytest.mark.parametrize("bad", [0.0, 1.0, -1e-3, 1.5, math.nan])
def test_bad_delta_tail_is_one_clear_error(bad):
    accounting = account(DPSGD(9.4, CIFAR_Q, 200))
    with pytest.raises(InvalidParameterError, match="delta_tail"):
        accounting.gdp(delta_tail=bad)
    with pytest.raises(InvalidParameterError, match="delta_tail"):
        _mu(9.4, CIFAR_Q, 200).mu_for(bad)


# ---------------------------------------------------------------------------
# One Laplace mechanism: the strict μ of its closed-form curve
# ---------------------------------------------------------------------------


def _laplace_needs(epsilon, alpha):
    """Φ⁻¹(1 − α) − Φ⁻¹(f(α)) on the steep half of the Laplace curve, in mpmath."""
    epsilon, alpha = mpmath.mpf(epsilon), mpmath.mpf(alpha)
    if alpha < mpmath.exp(-epsilon) / 2:
        quantile_f = references.normal_quantile_of_complement(mpmath.exp(epsilon) * alpha)
    else:
        quantile_f = -references.normal_quantile_of_complement(mpmath.exp(-epsilon) / (4 * alpha))
    return references.normal_quantile_of_complement(alpha) - quantile_f


@pytest.mark.parametrize("epsilon", [0.01, 1.0, 70.0])
def test_laplace_mu_is_the_tight_mu_of_its_exact_curve(epsilon):
    with mpmath.workdps(30):  # 30 digits for a check at 1e-9: each quantile bisects less
        _check_laplace_mu(epsilon, laplace_mu(epsilon))


def _check_laplace_mu(epsilon, mu):
    # 12 points on each piece of the curve (its ends included) locate the maximum, which
    # the search below refines.
    log_alphas = np.concatenate(
        (
            np.linspace(-epsilon - math.log(2) - 4 * epsilon - 60, -epsilon - math.log(2), 12),
            np.linspace(-epsilon - math.log(2), math.log(0.5), 12),
        )
    )
    needs = [_laplace_needs(epsilon, mpmath.exp(x)) for x in log_alphas]
    assert all(value <= mu for value in needs)  # G_μ ≤ f at every α checked
    # Refine the best grid point by golden-section search in 30-digit arithmetic.
    k = int(np.argmax([float(v) for v in needs]))
    a = mpmath.mpf(log_alphas[max(k - 1, 0)])
    b = mpmath.mpf(log_alphas[min(k + 1, len(log_alphas) - 1)])
    ratio = (mpmath.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    need_c, need_d = _laplace_needs(epsilon, mpmath.exp(c)), _laplace_needs(epsilon, mpmath.exp(d))
    # Each step reuses one of its two inner points (1 - ratio = ratio²). 20 steps shrink
    # the bracket by 0.618^20 ≈ 7e-5; at the (smooth) maximum the value then moves by
    # about the square of that (≤ 3e-12 relative here), far below the 1e-9 asked. Fewer
    # steps can only leave `best` lower, which makes the upper check below stricter.
    for _ in range(20):
        if need_c >= need_d:
            b, d, need_d = d, c, need_c
            c = b - ratio * (b - a)
            need_c = _laplace_needs(epsilon, mpmath.exp(c))
        else:
            a, c, need_c = c, d, need_d
            d = a + ratio * (b - a)
            need_d = _laplace_needs(epsilon, mpmath.exp(d))
    best = _laplace_needs(epsilon, mpmath.exp((a + b) / 2))
    assert best <= mu <= float(best) * (1 + 1e-9) + 1e-12  # valid there, and no larger


def test_laplace_report_is_the_closed_form_not_the_grid():
    """Laplace at ε = 70 reported μ 17.17 on main, against a true 16.17."""
    r = report(Laplace(scale=1 / 70))
    assert r.mu == pytest.approx(16.16655, abs=1e-4)
    assert r.delta_tail == 0.0
    assert "closed form" in r.to_text() or "strict" in r.to_text()


@pytest.mark.parametrize("seed", range(6))
def test_blockwise_mu_is_the_maximum_over_every_test(seed):
    # _largest_mus prunes blocks of tests by a bound, for several δ at once; it must return
    # exactly what evaluating every test gives (as _every_mu does for short curves), even
    # out of order and with a NaN among them.
    from types import SimpleNamespace

    from gaussdp.report.fit import _every_mu, _largest_mus, _test_arrays, _Tests
    from gaussdp.report.tight_mu import mu_of_tests

    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 5000))
    log_alpha = np.sort(rng.uniform(-700.0, 0.0, size))
    tpr = np.sort(rng.uniform(0.0, 1.0, size))
    if seed % 2:  # out of order, as a nudged cut point can be
        swap = rng.integers(0, size, 10)
        log_alpha[swap] = log_alpha[swap[::-1]]
    if seed == 3:
        tpr[size // 2] = np.nan
    steep = SimpleNamespace(alpha=np.exp(log_alpha), log_alpha=log_alpha, tpr=tpr)
    tiny = np.sort(rng.uniform(-800.0, -700.0, 50))
    direction = SimpleNamespace(
        alpha=np.exp(tiny), log_alpha=tiny, tpr=np.sort(rng.uniform(0, 1, 50))
    )
    deltas = [1e-12, 1e-10, 1e-6]
    arrays = _test_arrays(steep, [direction])
    found = _largest_mus([_Tests.of(*group) for group in arrays], deltas)
    # Short curves evaluate every test at once (one call for all δ): the same values.
    assert _every_mu(arrays, deltas) == found
    for delta, value in zip(deltas, found, strict=True):
        everything = mu_of_tests(
            np.concatenate((steep.alpha, direction.alpha)),
            np.concatenate((log_alpha, tiny)),
            np.concatenate((tpr, direction.tpr)),
            delta,
        )
        assert value == np.max(everything)
