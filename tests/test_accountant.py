"""The numerical accountant against independent references.

Sandwich tests (lower ≤ exact ≤ upper, with the gap asserted small) wherever
the truth is known in closed form or by high-precision integration, and
cross-checks against dp_accounting and prv_accountant.
"""

import math
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gaussdp as g
from gaussdp import InvalidParameterError, gdp
from tests import references


def assert_sandwich(lower, exact, upper, *, relative_gap):
    assert lower <= exact * (1 + 1e-12) + 1e-300, (lower, exact)
    assert exact <= upper * (1 + 1e-12) + 1e-300, (exact, upper)
    assert upper - lower <= relative_gap * max(abs(exact), 1e-300), (lower, exact, upper)


# --- closed-form truths ----------------------------------------------------------------


@pytest.mark.parametrize(("sigma", "delta"), [(1.0, 1e-5), (0.7, 1e-9), (3.0, 0.01)])
def test_gaussian_through_the_numerical_path(sigma, delta):
    # PoissonSubsampled with q = 1 is a plain Gaussian but takes the numerical path;
    # composed with a plain Gaussian it must give μ = √2/σ.
    mechanism = g.Composition([g.Gaussian(sigma), g.PoissonSubsampled(g.Gaussian(sigma), 1.0)])
    result = g.account(mechanism)
    assert result.method.startswith("numerical")
    mu = math.sqrt(2) / sigma
    exact = float(references.solve_epsilon(mu, delta))
    lower, upper = result.epsilon_bounds(delta)
    assert_sandwich(lower, exact, upper, relative_gap=1e-4)
    for epsilon in (0.5, 2.0):
        exact_delta = float(references.gaussian_delta(mu, epsilon))
        low, high = result.delta_bounds(epsilon)
        assert_sandwich(low, exact_delta, high, relative_gap=1e-3)


def test_gaussian_composition_closed_form():
    result = g.account(
        g.Composition([g.Repeated(g.Gaussian(5.0), 3), g.Repeated(g.Gaussian(8.0), 5)])
    )
    mu = math.sqrt(3 / 25 + 5 / 64)
    assert result.mu == pytest.approx(mu, rel=1e-14)
    assert result.method.startswith("closed form")
    exact = float(references.solve_epsilon(mu, 1e-6))
    lower, upper = result.epsilon_bounds(1e-6)
    assert_sandwich(lower, exact, upper, relative_gap=1e-9)


def test_replace_doubles_the_gaussian_shift():
    result = g.account(g.Gaussian(4.0), neighbouring=g.Neighbouring.REPLACE)
    assert result.mu == pytest.approx(0.5)


def _pure_dp_delta(epsilon0, k, epsilon):
    """Exact δ(ε) of k-fold ε0-randomized response: Σ_j Bin(j)·(1 − e^{ε−ℓ_j})_+ (mpmath)."""
    p = mpmath.e**epsilon0 / (1 + mpmath.e**epsilon0)
    total = mpmath.mpf(0)
    for j in range(k + 1):
        loss = epsilon0 * (2 * j - k)
        if loss > epsilon:
            weight = mpmath.binomial(k, j) * p**j * (1 - p) ** (k - j)
            total += weight * (1 - mpmath.e ** (epsilon - loss))
    return float(total)


@pytest.mark.parametrize(
    ("epsilon0", "k", "epsilon"), [(0.1, 100, 1.0), (0.5, 20, 2.0), (1.0, 5, 0.5)]
)
def test_pure_dp_composition_exact(epsilon0, k, epsilon):
    exact = _pure_dp_delta(epsilon0, k, epsilon)
    closed = g.account(g.Repeated(g.PureDP(epsilon0), k))
    assert closed.method.startswith("closed form")
    low, high = closed.delta_bounds(epsilon)
    assert_sandwich(low, exact, high, relative_gap=1e-9)
    # The same composition through the numerical path (ApproxDP with δ = 0 is RR too).
    numerical = g.account(g.Repeated(g.ApproxDP(epsilon0, 0.0), k))
    assert numerical.method.startswith("numerical")
    low, high = numerical.delta_bounds(epsilon)
    assert_sandwich(low, exact, high, relative_gap=1e-2)


def test_randomized_response_and_approx_dp_single():
    epsilon0, delta0 = 1.0, 1e-3
    result = g.account(g.ApproxDP(epsilon0, delta0))
    for epsilon in (0.0, 0.3, 0.9):
        exact = delta0 + (1 - delta0) * (math.exp(epsilon0) - math.exp(epsilon)) / (
            1 + math.exp(epsilon0)
        )
        low, high = result.delta_bounds(epsilon)
        assert_sandwich(low, exact, high, relative_gap=1e-3)
    # Beyond ε0 only the δ0 of infinite loss remains.
    low, high = result.delta_bounds(3.0)
    assert low == pytest.approx(delta0, rel=1e-9) and high == pytest.approx(delta0, rel=1e-9)


@pytest.mark.parametrize("epsilon", [0.0, 0.2, 0.45])
def test_laplace_single(epsilon):
    # Laplace with r = Δ/b: δ(ε) = 1 − exp((ε − r)/2) for 0 ≤ ε ≤ r.
    ratio = 0.5
    exact = -math.expm1((epsilon - ratio) / 2)
    low, high = g.account(g.Laplace(scale=2.0)).delta_bounds(epsilon)
    assert_sandwich(low, exact, high, relative_gap=1e-3)


def test_discrete_gaussian_single():
    sigma, epsilon = 1.5, 0.8
    with mpmath.workdps(40):
        weights = {x: mpmath.exp(-(mpmath.mpf(x) ** 2) / (2 * sigma**2)) for x in range(-80, 82)}
        norm = sum(weights.values())
        exact = (
            sum(max(weights.get(x - 1, 0) - mpmath.exp(epsilon) * weights[x], 0) for x in weights)
            / norm
        )
    low, high = g.account(g.DiscreteGaussian(sigma)).delta_bounds(epsilon)
    assert_sandwich(low, float(exact), high, relative_gap=1e-3)


def _subsampled_gaussian_delta(sigma, q, epsilon, direction):
    """δ(ε) of one Poisson-subsampled Gaussian by mpmath quadrature (both directions)."""
    with mpmath.workdps(30):
        s = mpmath.mpf(sigma)

        def density(x, mean):
            return mpmath.npdf(x, mean, s)

        def mixture(x):
            return (1 - q) * density(x, 0) + q * density(x, 1)

        def integrand(x):
            if direction == "remove":
                value = mixture(x) - mpmath.exp(epsilon) * density(x, 0)
            else:
                value = density(x, 0) - mpmath.exp(epsilon) * mixture(x)
            return max(value, 0)

        def excess(x):
            if direction == "remove":
                return mixture(x) - mpmath.exp(epsilon) * density(x, 0)
            return density(x, 0) - mpmath.exp(epsilon) * mixture(x)

        # The positive region is a half-line (the loss is monotone in x); find its end.
        low, high = -60 * s, 60 * s
        if (excess(low) > 0) == (excess(high) > 0):
            return 0.0 if excess(low) <= 0 else 1.0
        crossing = references.bisect(excess, low, high, iterations=200)
        if direction == "remove":
            return float(mpmath.quad(integrand, [crossing, crossing + 40 * s, mpmath.inf]))
        return float(mpmath.quad(integrand, [-mpmath.inf, crossing - 40 * s, crossing]))


@pytest.mark.parametrize(("sigma", "q", "epsilon"), [(1.0, 0.1, 0.2), (0.8, 0.5, 1.0)])
def test_one_step_subsampled_gaussian_against_quadrature(sigma, q, epsilon):
    result = g.account(g.DPSGD(sigma, q, 1))
    exact = max(_subsampled_gaussian_delta(sigma, q, epsilon, d) for d in ("remove", "add"))
    low, high = result.delta_bounds(epsilon)
    assert_sandwich(low, exact, high, relative_gap=1e-3)


def test_add_remove_asymmetry_of_poisson_subsampling():
    result = g.account(g.DPSGD(1.0, 0.2, 10))
    plds = result.privacy_loss_distributions()
    from gaussdp.pld import profile_of

    remove = profile_of(plds["remove"]).delta(np.array([1.0]))[0]
    add = profile_of(plds["add"]).delta(np.array([1.0]))[0]
    assert remove > add * 1.01  # the remove direction dominates at this ε
    assert result.delta(1.0) == pytest.approx(max(remove, add), rel=1e-12)
    # Each direction alone matches its own quadrature for one step.
    one = g.account(g.DPSGD(1.0, 0.2, 1)).privacy_loss_distributions()
    for direction in ("remove", "add"):
        exact = _subsampled_gaussian_delta(1.0, 0.2, 0.5, direction)
        value = profile_of(one[direction]).delta(np.array([0.5]))[0]
        assert value == pytest.approx(exact, rel=1e-3)
        assert value >= exact


# --- composition properties ------------------------------------------------------------


def test_heterogeneous_composition_equals_the_whole():
    split = g.account(g.Composition([g.DPSGD(1.2, 0.05, 300), g.DPSGD(1.2, 0.05, 700)]))
    whole = g.account(g.DPSGD(1.2, 0.05, 1000))
    low_split, high_split = split.epsilon_bounds(1e-6)
    low_whole, high_whole = whole.epsilon_bounds(1e-6)
    assert low_split <= high_whole and low_whole <= high_split
    assert high_split == pytest.approx(high_whole, rel=2e-4)


def test_subsampled_without_replacement_matches_its_pair():
    # Under replace-one, sampling m of n is dominated by ((1−γ)Q + γP, Q) with the
    # replace-one Gaussian pair (shift 2Δ): the same as Poisson add/remove with Δ = 2.
    fixed = g.account(
        g.Repeated(g.SubsampledWithoutReplacement(g.Gaussian(2.0), 100, 1000), 50),
        neighbouring=g.Neighbouring.REPLACE,
    )
    poisson = g.account(g.Repeated(g.PoissonSubsampled(g.Gaussian(2.0, sensitivity=2.0), 0.1), 50))
    assert fixed.epsilon(1e-5) == pytest.approx(poisson.epsilon(1e-5), rel=1e-12)
    with pytest.raises(InvalidParameterError, match="replace-one"):
        g.account(g.SubsampledWithoutReplacement(g.Gaussian(2.0), 100, 1000))
    with pytest.raises(InvalidParameterError, match="add/remove"):
        g.account(g.DPSGD(1.0, 0.1, 3), neighbouring=g.Neighbouring.REPLACE)


# --- other accountants -----------------------------------------------------------------


def test_against_dp_accounting_pld():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld_module

    sigma, q, steps, delta = 1.5, 0.02, 500, 1e-6
    result = g.account(g.DPSGD(sigma, q, steps))
    lower, upper = result.epsilon_bounds(delta)
    bounds = {}
    for pessimistic in (True, False):
        pld = pld_module.from_gaussian_mechanism(
            sigma,
            sampling_prob=q,
            value_discretization_interval=1e-4,
            pessimistic_estimate=pessimistic,
        ).self_compose(steps)
        bounds[pessimistic] = pld.get_epsilon_for_delta(delta)
    assert lower <= bounds[True]  # their pessimistic value is an upper bound
    assert bounds[False] <= upper  # their optimistic value is a lower bound
    assert upper == pytest.approx(bounds[True], rel=1e-4)
    assert upper <= bounds[True] * (1 + 1e-7)  # at least as tight
    del dp_accounting


def test_against_prv_accountant():
    prv = pytest.importorskip("prv_accountant")
    sigma, q, steps, delta = 1.0, 0.01, 1000, 1e-5
    accountant = prv.PRVAccountant(
        prvs=prv.PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q),
        max_self_compositions=steps,
        eps_error=0.01,
        delta_error=1e-9,
    )
    prv_lower, _, prv_upper = accountant.compute_epsilon(delta=delta, num_self_compositions=steps)
    lower, upper = g.account(g.DPSGD(sigma, q, steps)).epsilon_bounds(delta)
    assert lower <= prv_upper and prv_lower <= upper  # the certified intervals overlap
    assert upper - lower < (prv_upper - prv_lower) / 10  # and ours is much narrower


# --- properties --------------------------------------------------------------------------


@settings(max_examples=6, deadline=None)
@given(
    st.floats(min_value=0.6, max_value=5.0),
    st.floats(min_value=0.001, max_value=0.5),
    st.integers(min_value=1, max_value=200),
)
def test_monotone_in_noise_sampling_and_steps(sigma, q, steps):
    base = g.account(g.DPSGD(sigma, q, steps)).epsilon_bounds(1e-5)
    noisier = g.account(g.DPSGD(sigma * 1.3, q, steps)).epsilon_bounds(1e-5)
    denser = g.account(g.DPSGD(sigma, min(q * 1.5, 1.0), steps)).epsilon_bounds(1e-5)
    longer = g.account(g.DPSGD(sigma, q, steps * 2)).epsilon_bounds(1e-5)
    assert noisier[0] <= base[1]
    assert base[0] <= denser[1]
    assert base[0] <= longer[1]
    assert base[0] <= base[1]
    # The reported (upper) bounds themselves, up to rounding and the grid's position (a
    # few 1e-7 where the accuracy's grid moves with σ: tests/test_accountant_regime.py)
    assert noisier[1] <= base[1] * (1 + 1e-6)
    assert base[1] <= denser[1] * (1 + 1e-6)
    assert base[1] <= longer[1] * (1 + 1e-6)


def test_bounds_are_ordered_and_monotone_in_epsilon():
    result = g.account(g.DPSGD(1.1, 0.01, 1000))
    epsilons = np.linspace(0, 6, 25)
    lower, upper = result.delta_bounds(epsilons)
    assert np.all(lower <= upper)
    assert np.all(np.diff(upper) <= 1e-18)
    assert np.all(np.diff(lower) <= 1e-18)


def test_perfect_privacy_and_shapes():
    result = g.account(g.Gaussian(math.inf))
    assert result.epsilon(1e-9) == 0.0 and result.delta(0.0) == 0.0
    deltas = g.account(g.DPSGD(1.0, 0.01, 10)).epsilon(np.array([1e-5, 1e-6]))
    assert deltas.shape == (2,)
    assert isinstance(g.account(g.DPSGD(1.0, 0.01, 10)).epsilon(1e-5), float)


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.epsilon(0.0), r"delta must be in \(0, 1\), got 0.0"),
        (lambda r: r.epsilon(1.0), r"delta must be in \(0, 1\)"),
        (lambda r: r.epsilon_bounds(math.nan), "delta .* got nan"),
        (lambda r: r.delta(-1.0), r"epsilon must be in \[0, inf\], got -1.0"),
        (lambda r: r.privacy_loss_distributions("exact"), "kind must be"),
    ],
)
def test_bad_queries(call, message):
    with pytest.raises(InvalidParameterError, match=message):
        call(g.account(g.DPSGD(1.0, 0.01, 10)))


def test_bad_account_arguments():
    with pytest.raises(InvalidParameterError, match="neighbouring must be"):
        g.account(g.Gaussian(1.0), neighbouring="replace")
    with pytest.raises(InvalidParameterError, match="accuracy must be"):
        g.account(g.DPSGD(1.0, 0.01, 10), accuracy=0.0)
    with pytest.raises(InvalidParameterError, match="mechanism must be"):
        g.account("gaussian")


def test_requests_beyond_the_machines_memory_are_refused(monkeypatch):
    from gaussdp.accountant import grids

    # The same answer on every machine: pretend it has 16 GB available.
    monkeypatch.setattr(grids, "available_memory", lambda: 16 * 10**9)
    with pytest.raises(InvalidParameterError, match=r"needs .* points"):
        g.account(g.DPSGD(1.0, 0.01, 10**6), grid_spacing=1e-9)
    with pytest.raises(InvalidParameterError, match=r"needs .* points"):
        g.account(g.DPSGD(1.0, 0.01, 10**10), grid_spacing=1e-4)  # the T-fold window


def test_long_compositions_keep_small_deltas_accurate():
    # 20,000 steps: FFT rounding grows like T·u (~2e-12 of δ here). The tilted
    # computation makes it relative, so ε at δ = 1e-10 stays sandwiched and tight.
    steps, sigma = 20_000, 100.0
    result = g.account(g.Repeated(g.PoissonSubsampled(g.Gaussian(sigma), 1.0), steps))
    references.check_gaussian_sandwich(result, math.sqrt(steps) / sigma, (1e-6, 1e-10, 1e-14), 1e-4)
    # composed plain first (on its grid of 1e-4 no blocks, gaussdp.pld.blocks); the
    # queries whose plain allowance decides were answered from the tilted composition,
    # made on demand
    plds = result.privacy_loss_distributions()
    assert plds["remove"].cut_index is None
    (tilted,) = [v for k, v in result._guarantee._refined.items() if k[:2] == ("upper", None) and v]
    assert all(math.isfinite(p.cut_loss) for p in tilted)


def test_a_part_with_delta_one_promises_nothing():
    result = g.account(g.Composition([g.ApproxDP(1.0, 1.0), g.Gaussian(1.0)]))
    assert result.mu == math.inf
    assert result.epsilon_bounds(1e-5) == (math.inf, math.inf)
    assert result.delta(5.0) == 1.0


def test_accountant_curves_sandwich_the_truth():
    alphas = np.concatenate([np.geomspace(1e-12, 0.5, 40), np.linspace(0.5, 1.0, 11)])
    # A Gaussian composition through the numerical path: pessimistic ≤ G_μ ≤ optimistic.
    sigma = 2.0
    result = g.account(
        g.Composition([g.Gaussian(sigma), g.PoissonSubsampled(g.Gaussian(sigma), 1.0)])
    )
    exact = gdp.beta(math.sqrt(2) / sigma, alphas)
    # (to rounding: FFT rounding moves tiny masses by ~1e-11)
    assert np.all(result.tradeoff().beta(alphas) <= exact + 1e-10)
    assert np.all(exact <= result.tradeoff("optimistic").beta(alphas) + 1e-10)
    # DP-SGD: the two curves are ordered, symmetric, and close.
    dpsgd = g.account(g.DPSGD(1.0, 0.05, 200))
    low, high = dpsgd.tradeoff(), dpsgd.tradeoff("optimistic")
    assert np.all(low.beta(alphas) <= high.beta(alphas) + 1e-10)
    assert np.max(high.beta(alphas) - low.beta(alphas)) < 1e-3
    assert low.is_symmetric


@pytest.mark.parametrize(
    ("mechanism", "infinite_loss_mass"),
    [
        # (eps, delta)-DP's dominating pair puts delta at infinite loss (leaky RR);
        # composing with Laplace keeps it; Poisson subsampling at rate q scales it by q.
        (g.Composition([g.ApproxDP(0.5, 1e-3), g.Laplace(1.0)]), 1e-3),
        (g.PoissonSubsampled(g.ApproxDP(0.5, 1e-3), 0.1), 1e-4),
        (g.Repeated(g.ApproxDP(0.2, 1e-4), 3), 1 - (1 - 1e-4) ** 3),
        (g.DPSGD(1.0, 0.01, 100), 0.0),
    ],
)
def test_mass_at_infinite_loss_is_kept_in_the_profile_and_the_curve(mechanism, infinite_loss_mass):
    result = g.account(mechanism)
    lower, upper = result.delta_bounds(math.inf)  # delta(inf) = P(L = +inf), never NaN
    assert lower <= infinite_loss_mass * (1 + 1e-12) + 1e-15
    assert infinite_loss_mass <= upper <= infinite_loss_mass * (1 + 1e-9) + 1e-12
    # The trade-off curve starts at f(0) = 1 - P(L = +inf): the attack that says
    # "member" only on outputs impossible without the record.
    assert result.tradeoff().beta(0.0) <= 1 - infinite_loss_mass + 1e-15
    assert result.tradeoff().beta(0.0) >= 1 - infinite_loss_mass - 1e-9
    assert result.tradeoff("optimistic").beta(0.0) >= result.tradeoff().beta(0.0)


def test_each_kind_of_guarantee_says_what_it_is_through_the_accounting():
    """The seams the report reads: mu for exact mu-GDP, exact_atoms, profiles per direction."""
    from gaussdp import DPSGD, Gaussian, PureDP, Repeated, account

    gaussian = account(Repeated(Gaussian(2.0), 16))
    assert gaussian.mu == 2.0 and not gaussian.exact_atoms and gaussian.upper_floor() == 0.0
    with pytest.raises(InvalidParameterError, match="closed form"):
        gaussian.profiles()
    nothing = account(Gaussian(math.inf))
    assert nothing.mu == 0.0 and nothing.tradeoff().beta(0.3) == pytest.approx(0.7)
    pure = account(Repeated(PureDP(0.5), 3))
    assert pure.mu is None and pure.exact_atoms and len(pure.profiles("lower")) == 1
    numerical = account(DPSGD(2.0, 0.01, 10))
    assert numerical.mu is None and not numerical.exact_atoms
    assert len(numerical.profiles("upper")) == 2  # remove and add
    assert 0.0 < numerical.upper_floor() < 1e-10
    with pytest.raises(InvalidParameterError, match="side"):
        numerical.profiles("middle")


def test_full_batch_dpsgd_is_the_gaussian_composition_in_closed_form():
    # q = 1 samples every record: T Gaussian mechanisms, exactly √T/σ-GDP, with no grid.
    run = g.DPSGD(0.5, 1.0, 50)
    assert run.expand() == g.Repeated(g.Gaussian(0.5), 50)
    result = g.account(run)
    assert result.mu == pytest.approx(math.sqrt(50) / 0.5, rel=1e-15)
    exact = float(references.solve_epsilon(math.sqrt(50) / 0.5, 1e-5))
    lower, upper = result.epsilon_bounds(1e-5)
    assert lower <= exact <= upper and upper - lower < 1e-9 * exact


def test_one_subsampled_step_is_bounded_at_tiny_delta():
    """One mechanism is not composed (no rounding allowance): its grid keeps all but 1e-30,
    so δ = 1e-25 has a finite upper bound (the grid's far tail, at +∞, is the floor),
    above the remove pair's exact ε (mpmath; the add pair's is at most −log(1 − q))."""

    def log_delta(epsilon):  # P' = (1 − q)N(0, 1) + qN(μ, 1) against Q' = N(0, 1)
        t = (mpmath.log((mpmath.exp(epsilon) - (1 - q)) / q) + mu**2 / 2) / mu
        q_tail = mpmath.erfc(t / mpmath.sqrt(2)) / 2
        p_tail = (1 - q) * q_tail + q * mpmath.erfc((t - mu) / mpmath.sqrt(2)) / 2
        return mpmath.log(p_tail - mpmath.exp(epsilon) * q_tail)

    with mpmath.workdps(60):
        mu, q, delta = mpmath.mpf(1), mpmath.mpf("0.01"), mpmath.mpf("1e-25")
        exact = float(mpmath.findroot(lambda e: log_delta(e) - mpmath.log(delta), (4, 8)))
    lower, upper = g.account(g.DPSGD(1.0, 0.01, 1)).epsilon_bounds(1e-25)
    assert lower <= exact <= upper < exact + 1e-3


def _two_subsampled_steps_exact_delta(epsilon) -> mpmath.mpf:
    """δ(ε) of two steps of σ = 1, q = 0.01 (remove pair), by quadrature in mpmath.

    The composed loss exceeds ε where y > t(x) = L⁻¹(ε − L(x)), so
    δ(ε) = ∫ p(x)·P(Y > t(x)) − e^ε·q(x)·Q(Y > t(x)) dx, the tails in closed form.
    (The add pair's ε is at most 2·(−log(1 − q)): it never decides here.)
    """
    with mpmath.workdps(30):
        q, half = mpmath.mpf("0.01"), mpmath.mpf(1) / 2

        def loss(y):
            return mpmath.log(1 - q + q * mpmath.exp(y - half))

        def inverse(v):  # the y with loss(y) = v, for v > log(1 − q)
            return mpmath.log((mpmath.exp(v) - (1 - q)) / q) + half

        def density(t):
            return mpmath.exp(-t * t / 2) / mpmath.sqrt(2 * mpmath.pi)

        def tail(t):
            return mpmath.erfc(t / mpmath.sqrt(2)) / 2

        epsilon = mpmath.mpf(epsilon)
        bottom = mpmath.log(1 - q)

        def integrand(x):
            p, q_density = (1 - q) * density(x) + q * density(x - 1), density(x)
            if epsilon - loss(x) <= bottom:  # every y: the whole of both measures
                return p - mpmath.exp(epsilon) * q_density
            t = inverse(epsilon - loss(x))
            p_tail = (1 - q) * tail(t) + q * tail(t - 1)
            return p * p_tail - mpmath.exp(epsilon) * q_density * tail(t)

        switch = inverse(epsilon - bottom)
        return mpmath.quad(integrand, [-mpmath.inf, 0, switch, switch + 5, mpmath.inf])


def test_two_subsampled_steps_are_bounded_at_tiny_delta_against_mpmath():
    """Two steps of σ = 1, q = 0.01 at δ = 1e-16 (below the plain composition's floor, so
    tilted), against δ(ε) by quadrature. Each step's grid sends P-mass to +∞, which the
    composition carries; computed as 1 − Π(1 − p) it read 0, and the upper bound was
    3.3891036 where ε is 3.3891075."""
    lower, upper = g.account(g.DPSGD(1.0, 0.01, 2)).epsilon_bounds(1e-16)
    assert _two_subsampled_steps_exact_delta(upper) <= 1e-16
    assert _two_subsampled_steps_exact_delta(lower) >= 1e-16
    assert upper - lower < 1e-7


def test_below_the_upper_floor_the_lower_bound_is_read_above_it():
    """Below the upper bounds' floor (3.5e-30 here: each step's grid leaves 1e-30 above it)
    the upper bound is infinite and the lower bound used to fall back to the plain lower
    profiles; ε(δ) is non-increasing, so the bound at ten times the floor holds, and it
    stays below the exact ε (mpmath)."""
    accounting = g.account(g.DPSGD(1.0, 0.01, 2))
    with pytest.warns(g.AccuracyWarning):
        lower, upper = accounting.epsilon_bounds(1e-31)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", g.AccuracyWarning)  # its gap is not asserted here
        above = accounting.epsilon_bounds(1e-25)[0]
    assert upper == math.inf
    assert lower >= above > 5.7
    assert _two_subsampled_steps_exact_delta(lower) >= 1e-31


def test_two_subsampled_steps_stay_tight_far_below_the_plain_floor():
    """δ from 1e-18 to 1e-26, asked after a δ(ε) query (so the first composition is plain,
    floor 3e-14): the lower tails are sized for the decade asked, not for the plain upper
    profile's floor (which let that much in: 2.65 at 1e-26 where ε is 5.93), a tilt for
    the decade is made where the plain profiles' noise hid the need, and each direction's
    best tilt counts. Against the quadrature in mpmath."""
    accounting = g.account(g.DPSGD(1.0, 0.01, 2))
    accounting.delta_bounds(np.array([0.5, 1.0]))
    for delta in (1e-18, 1e-26):
        lower, upper = accounting.epsilon_bounds(delta)
        assert _two_subsampled_steps_exact_delta(upper) <= delta
        assert _two_subsampled_steps_exact_delta(lower) >= delta
        assert upper - lower < 1e-5 * upper


def test_the_upper_floor_is_each_directions_best():
    """A group tilted for the remove direction keeps the add direction's plain profile
    (floor 3e-14): the floor is each direction's best, not any one group's largest, and
    below it the lower bound is read at ten times that floor whatever was asked before."""
    fresh = g.account(g.DPSGD(1.0, 0.01, 10))
    asked = g.account(g.DPSGD(1.0, 0.01, 10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", g.AccuracyWarning)
        for delta in (1e-10, 1e-20, 1e-27):
            asked.epsilon_bounds(delta)
        below_fresh = fresh.epsilon_bounds(1e-30)
        below_asked = asked.epsilon_bounds(1e-30)
    assert asked.upper_floor() < 1e-28 and fresh.upper_floor() < 1e-28
    assert below_fresh[1] == below_asked[1] == math.inf
    assert below_asked[0] == pytest.approx(below_fresh[0], rel=1e-6)
    assert below_asked[0] > 6.5
