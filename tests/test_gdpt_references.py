"""High-precision references for the GDPT tests, and checks of the references themselves.

Everything here is computed from the defining formulas with mpmath (30–50
digits) and plain bisection or golden-section search; nothing calls the code
under test. The tests at the bottom pin the references to closed forms and to
published values, so that a wrong reference cannot silently agree with a
wrong implementation.
"""

import itertools
import math

import mpmath
import pytest

from tests import references

SQRT_2PI = mpmath.sqrt(2 * mpmath.pi)


# ---------------------------------------------------------------------------
# Hockey-stick divergences and profiles
# ---------------------------------------------------------------------------


def hockey_stick(p, q, epsilon):
    """H_ε(P‖Q) = Σ (p − e^ε q)₊ for discrete distributions."""
    factor = mpmath.exp(mpmath.mpf(epsilon))
    return mpmath.fsum(
        max(mpmath.mpf(a) - factor * mpmath.mpf(b), 0) for a, b in zip(p, q, strict=True)
    )


def four_point_mechanism(epsilon0, delta0):
    """The worst (ε₀, δ₀)-DP mechanism of the GDPT paper's proof of Theorem 3.1."""
    e0, d0 = mpmath.mpf(epsilon0), mpmath.mpf(delta0)
    a0 = mpmath.exp(e0) / (1 + mpmath.exp(e0))
    p = [d0, 0, (1 - d0) * a0, (1 - d0) * (1 - a0)]
    q = [0, d0, (1 - d0) * (1 - a0), (1 - d0) * a0]
    return p, q


def implied(epsilon0, delta0, epsilon):
    """δ₀ + (1 − δ₀)(e^{ε₀} − e^ε)₊/(1 + e^{ε₀}) (Theorem 3.1), in mpmath."""
    e0, d0, e = (mpmath.mpf(x) for x in (epsilon0, delta0, epsilon))
    gap = max(mpmath.exp(e0) - mpmath.exp(e), 0) / (1 + mpmath.exp(e0))
    return d0 + (1 - d0) * gap


def tradeoff_profile(f, vertices, epsilon):
    """δ(ε) = sup_α (1 − e^ε α − f(α)) for a piecewise-linear convex f, at its vertices."""
    factor = mpmath.exp(mpmath.mpf(epsilon))
    return max(1 - factor * a - f(a) for a in vertices)


def gaussian_delta(mu, epsilon):
    """δ_μ(ε); 0 for μ = 0."""
    if mu == 0:
        return mpmath.mpf(0)
    return references.gaussian_delta(mu, epsilon)


def gaussian_hockey(mu, x):
    """H_x(N(μ,1)‖N(0,1)) for any real x (negative x by complementation)."""
    x = mpmath.mpf(x)
    if mu == 0:
        return max(1 - mpmath.exp(x), 0)
    if x >= 0:
        return gaussian_delta(mu, x)
    return 1 - mpmath.exp(x) + mpmath.exp(x) * gaussian_delta(mu, -x)


def composed_delta(mu, pure_epsilons, epsilon):
    """Profile of μ-GDP composed with randomized responses RR(ε_j) (their worst ε_j-DP pairs).

    δ(ε) = Σ_s P(s)·H_{ε − ℓ(s)}(N(μ,1)‖N(0,1)) over sign vectors s, with
    ℓ(s) = Σ s_j ε_j and P(s) = Π p_j^{[s_j = +]}(1 − p_j)^{[s_j = −]}, p_j = e^{ε_j}/(1 + e^{ε_j}).
    """
    total = mpmath.mpf(0)
    for signs in itertools.product((1, -1), repeat=len(pure_epsilons)):
        weight = mpmath.mpf(1)
        loss = mpmath.mpf(0)
        for sign, e in zip(signs, pure_epsilons, strict=True):
            e = mpmath.mpf(e)
            p = mpmath.exp(e) / (1 + mpmath.exp(e))
            weight *= p if sign > 0 else 1 - p
            loss += sign * e
        total += weight * gaussian_hockey(mu, mpmath.mpf(epsilon) - loss)
    return total


def laplace_delta_integral(epsilon, epsilon0):
    """∫ (p − e^ε q)₊ for p = Lap(0, 1), q = Lap(ε₀, 1): the Laplace mechanism's profile."""
    e, e0 = mpmath.mpf(epsilon), mpmath.mpf(epsilon0)

    def integrand(x):
        p = mpmath.exp(-abs(x)) / 2
        q = mpmath.exp(-abs(x - e0)) / 2
        return max(p - mpmath.exp(e) * q, 0)

    # p > e^ε q only for x < (ε₀ − ε)/2; split at the kinks.
    cut = (e0 - e) / 2
    return mpmath.quad(integrand, [-mpmath.inf, min(0, cut), cut]) if cut > 0 else mpmath.mpf(0)


# ---------------------------------------------------------------------------
# μ_GDP and the GDPT
# ---------------------------------------------------------------------------


def solve_mu(epsilon, delta, iterations=200):
    """μ with δ_μ(ε) = δ, a root in log μ (δ ∈ (0, 1); references.bracketed_root)."""
    delta = mpmath.mpf(delta)
    if delta <= 0:
        return mpmath.mpf(0)
    log_delta = mpmath.log(delta)
    epsilon = mpmath.mpf(epsilon)

    def excess(log_mu):
        value = gaussian_delta(mpmath.exp(log_mu), epsilon)
        return (mpmath.log(value) if value > 0 else mpmath.mpf(-(10**9))) - log_delta

    return mpmath.exp(
        references.bracketed_root(excess, mpmath.log("1e-12"), mpmath.log(60), iterations)
    )


def solve_mu_near(epsilon, delta, start):
    """μ with δ_μ(ε) = δ by the secant method on log μ from ``start``; residual checked.

    Fast where many roots are needed; the start only affects the speed, the
    root is checked against the defining equation.
    """
    epsilon, delta = mpmath.mpf(epsilon), mpmath.mpf(delta)
    log_delta = mpmath.log(delta)

    def excess(log_mu):
        return mpmath.log(gaussian_delta(mpmath.exp(log_mu), epsilon)) - log_delta

    tolerance = mpmath.mpf(10) ** (-(mpmath.mp.dps - 5))
    root = mpmath.findroot(excess, mpmath.log(mpmath.mpf(start)), tol=tolerance)
    assert abs(excess(root)) < mpmath.mpf(10) ** (-(mpmath.mp.dps // 2))
    return mpmath.exp(root)


def solve_mu_from_log(epsilon, log_delta, iterations=200):
    """μ with log δ_μ(ε) = log_delta, for tails where δ is far below 1e-308."""
    epsilon = mpmath.mpf(epsilon)
    log_delta = mpmath.mpf(log_delta)

    def excess(log_mu):
        return mpmath.log(gaussian_delta(mpmath.exp(log_mu), epsilon)) - log_delta

    return mpmath.exp(
        references.bracketed_root(excess, mpmath.log("1e-3"), mpmath.log(60), iterations)
    )


def gdpt(delta_function, epsilon, iterations=200):
    """G(ε) = μ_GDP(ε, δ(ε)) for an mpmath profile ``delta_function``."""
    return solve_mu(epsilon, delta_function(mpmath.mpf(epsilon)), iterations)


def golden_max(function, low, high, iterations=60):
    """Golden-section maximisation of a unimodal function on [low, high]: (argmax, max)."""
    low, high = mpmath.mpf(low), mpmath.mpf(high)
    ratio = (mpmath.sqrt(5) - 1) / 2
    c = high - ratio * (high - low)
    d = low + ratio * (high - low)
    fc, fd = function(c), function(d)
    for _ in range(iterations):
        if fc >= fd:
            high, d, fd = d, c, fc
            c = high - ratio * (high - low)
            fc = function(c)
        else:
            low, c, fc = c, d, fd
            d = low + ratio * (high - low)
            fd = function(d)
    best = max([(fc, c), (fd, d), (function(low), low), (function(high), high)])
    return best[1], best[0]


def _gdpt_continued(delta_function, epsilon, start):
    """G(ε) by the secant method from a nearby value ``start`` (bisection if that fails)."""
    delta = delta_function(mpmath.mpf(epsilon))
    if delta <= 0:
        return mpmath.mpf(0)
    if start is not None and start > 0:
        try:
            return solve_mu_near(epsilon, delta, start)
        except (ValueError, ZeroDivisionError, AssertionError):
            pass
    return solve_mu(epsilon, delta, 110)


def brute_force_sup(delta_function, epsilon_max, coarse=24, iterations=40):
    """sup_{ε ∈ [0, ε_max]} G(ε): a coarse grid, then golden section around its best point.

    Returns a value of G at a point (so never above the true supremum) that is
    within the golden-section accuracy of it for a GDPT with one local maximum
    near the best grid point. Each G is the root of the defining equation;
    neighbouring roots only serve as starting points.
    """
    with mpmath.workdps(30):
        grid = [mpmath.mpf(epsilon_max) * k / coarse for k in range(coarse + 1)]
        values = []
        start = None
        for e in grid:
            value = _gdpt_continued(delta_function, e, start)
            values.append(value)
            start = value if value > 0 else start
        k = max(range(len(values)), key=lambda i: values[i])
        low = grid[max(k - 1, 0)]
        high = grid[min(k + 1, coarse)]
        top = values[k]
        _, best = golden_max(
            lambda e: _gdpt_continued(delta_function, e, top), low, high, iterations
        )
        return max(best, top)


def mills_ratio(x):
    """m(x) = Φ(−x)/φ(x)."""
    x = mpmath.mpf(x)
    return mpmath.ncdf(-x) / mpmath.npdf(x)


# ---------------------------------------------------------------------------
# Refined profiles of the paper's examples, from their closed forms
# ---------------------------------------------------------------------------


def sgd_naive(epsilon, sigma=2, a=2, b=1):
    return min(mpmath.mpf(1), mpmath.mpf(b) * mpmath.exp(-((sigma * mpmath.mpf(epsilon) / a) ** 2)))


def encoder_naive(epsilon, messages=20, users=4):
    epsilon = mpmath.mpf(epsilon)
    if epsilon == 0:
        return mpmath.mpf(1)
    return min(mpmath.mpf(1), users * mpmath.exp(-mpmath.mpf(messages) / 10) / epsilon)


def anchor(naive, start):
    """argmax of h(ε₀) = (1 − δ̂(ε₀))/(1 + e^{ε₀}), by golden section around ``start``."""

    def h(e):
        return (1 - naive(e)) / (1 + mpmath.exp(e))

    low = max(mpmath.mpf(start) - mpmath.mpf("0.5"), 0)
    argmax, _ = golden_max(h, low, mpmath.mpf(start) + mpmath.mpf("0.5"), iterations=160)
    return argmax


def refined_brute(naive, epsilon, points=400):
    """The refined profile at ε by direct search: inf over ε₀ ∈ [ε, w] of the implied δ.

    Only ε₀ below w, where (e^w − e^ε)/(1 + e^w) = δ̂(ε), can beat δ̂(ε); h is
    scanned on ``points`` values of [ε, w] and polished by golden section around
    the best one, so several local maxima of h are handled.
    """
    epsilon = mpmath.mpf(epsilon)
    at = naive(epsilon)
    if at <= 0:
        return mpmath.mpf(0)
    end = epsilon + 40 if at >= 1 else mpmath.log((mpmath.exp(epsilon) + at) / (1 - at))

    def h(e):
        return (1 - naive(e)) / (1 + mpmath.exp(e))

    grid = [epsilon + (end - epsilon) * k / points for k in range(points + 1)]
    k = max(range(len(grid)), key=lambda i: h(grid[i]))
    best, _ = golden_max(h, grid[max(k - 1, 0)], grid[min(k + 1, points)], iterations=100)
    if h(grid[k]) > h(best):
        best = grid[k]
    return min(at, implied(best, naive(best), epsilon))


def refined(naive, anchor_epsilon, epsilon):
    """The refined profile of a naive one whose h has a single maximum at the anchor."""
    epsilon = mpmath.mpf(epsilon)
    if epsilon >= anchor_epsilon:
        return naive(epsilon)
    return min(naive(epsilon), implied(anchor_epsilon, naive(anchor_epsilon), epsilon))


# ---------------------------------------------------------------------------
# Checks of the references
# ---------------------------------------------------------------------------


def test_four_point_mechanism_is_exactly_epsilon0_delta0_dp():
    p, q = four_point_mechanism(1.3, 0.05)
    assert hockey_stick(p, q, 1.3) == pytest.approx(0.05, abs=1e-40)
    assert hockey_stick(q, p, 1.3) == pytest.approx(0.05, abs=1e-40)


def test_laplace_integral_matches_total_variation():
    # At ε = 0 the hockey stick is the total variation distance 1 − exp(−ε₀/2).
    assert laplace_delta_integral(0, 2) == pytest.approx(1 - mpmath.exp(-1), rel=1e-25)


def test_solve_mu_inverts_the_gaussian_profile():
    mu = solve_mu(1.0, gaussian_delta(mpmath.mpf("0.7"), 1.0))
    assert mu == pytest.approx(mpmath.mpf("0.7"), rel=1e-30)


def test_composed_profile_of_pure_dp_alone_is_the_binomial_form():
    # One RR(ε₀) and no Gaussian: (e^{ε₀} − e^ε)₊/(1 + e^{ε₀}).
    assert composed_delta(0, [1.5], 0.4) == pytest.approx(implied(1.5, 0, 0.4), rel=1e-40)


def test_composed_profile_of_gaussians_is_gaussian():
    assert composed_delta(0.8, [], 1.1) == pytest.approx(gaussian_delta(0.8, 1.1), rel=1e-40)


def test_sgd_and_encoder_anchors_match_the_paper():
    # GDPT paper §3: ε₂ ≈ 1.187, δ₂ ≈ 0.244; ε₃ ≈ 1.159, δ₃ ≈ 0.468.
    e2 = anchor(sgd_naive, 1.2)
    assert float(e2) == pytest.approx(1.187, abs=2e-3)
    assert float(sgd_naive(e2)) == pytest.approx(0.244, abs=1e-3)
    e3 = anchor(encoder_naive, 1.2)
    assert float(e3) == pytest.approx(1.159, abs=3e-3)  # the paper's value is slightly off
    assert float(encoder_naive(e3)) == pytest.approx(0.468, abs=1e-3)


def test_golden_max_finds_a_parabola_top():
    argmax, top = golden_max(lambda x: -((x - mpmath.mpf("0.3")) ** 2), 0, 1)
    assert float(argmax) == pytest.approx(0.3, abs=1e-10)
    assert math.isclose(float(top), 0.0, abs_tol=1e-20)
