"""Independent high-precision references, computed with mpmath at 50 digits.

These follow the textbook formulas directly; mpmath's working precision and roots
certified by the signs around them (found by bisection, or found faster and then
checked) are what make them trustworthy, not cleverness.
"""

import math

import mpmath
from scipy import special


def bisect(func, low, high, iterations=400):
    """Root of a monotone ``func`` on [low, high] by bisection (no tolerance games).

    It stops early only where the interval can no longer shrink at the working precision
    (the midpoint rounds to an end): every later step would leave the answer unchanged.
    """
    low, high = mpmath.mpf(low), mpmath.mpf(high)
    f_low = func(low)
    for _ in range(iterations):
        middle = (low + high) / 2
        if middle == low or middle == high:
            return middle  # a fixed point of the steps below: the same answer as all of them
        f_middle = func(middle)
        if (f_middle > 0) == (f_low > 0):
            low, f_low = middle, f_middle
        else:
            high = middle
    return (low + high) / 2


def bracketed_root(func, low, high, iterations=400):
    """Root of a monotone ``func`` on [low, high], certified by the signs around it.

    The Illinois variant of regula falsi (mpmath's bracketing solver) from the
    bracket; its answer x is kept only where ``func`` changes sign across
    [x − w, x + w], w = 1e10·ε·(1 + |x|) for ε the working precision's (1e-40 at
    50 digits), so that the answer is the root to within w whatever the solver
    did. Otherwise :func:`bisect` decides.
    """
    low, high = mpmath.mpf(low), mpmath.mpf(high)
    try:
        x = mpmath.findroot(
            func, (low, high), solver="illinois", tol=mpmath.mp.eps, maxsteps=100, verify=False
        )
    except (ValueError, ZeroDivisionError, ArithmeticError):
        x = None
    if x is not None and mpmath.isfinite(x) and low <= x <= high:
        width = 1e10 * mpmath.mp.eps * (1 + abs(x))
        below, above = func(max(x - width, low)), func(min(x + width, high))
        if (below <= 0 <= above) or (below >= 0 >= above):
            return x
    return bisect(func, low, high, iterations)


def normal_quantile_of_complement(alpha):
    """Φ⁻¹(1 − α) for any α in (0, 1): the root of log Φ(−x) = log α, certified by signs.

    Newton's method on log Φ(−x) − log α from scipy's value (a handful of steps
    at 50 digits), then the root is *checked*: the function's signs at x ∓ w,
    w = 1e10·ε·(1 + |x|) for ε the working precision's (1e-40 at 50 digits), must
    show that [x − w, x + w] holds it. Where they do not (or scipy has no value),
    plain bisection on [−100, 100] decides.
    """
    alpha = mpmath.mpf(alpha)
    log_alpha = mpmath.log(alpha)

    def excess(x):
        return mpmath.log(mpmath.ncdf(-x)) - log_alpha

    # Φ⁻¹(1 − α) = −Φ⁻¹(α), from whichever of α and 1 − α (at 50 digits) is the smaller
    if alpha < 0.5:
        guess = -float(special.ndtri(float(alpha))) if float(alpha) > 0.0 else math.nan
    else:
        guess = float(special.ndtri(float(1 - alpha))) if alpha < 1 else math.nan
    if math.isfinite(guess):
        x = mpmath.mpf(guess)
        for _ in range(30):  # d/dx log Φ(−x) = −φ(x)/Φ(−x)
            step = excess(x) * mpmath.ncdf(-x) / mpmath.npdf(x)
            x += step
            if abs(step) < 1e5 * mpmath.mp.eps * (1 + abs(x)):
                break
        width = 1e10 * mpmath.mp.eps * (1 + abs(x))
        if excess(x - width) > 0 > excess(x + width):  # log Φ(−x) decreases in x
            return x
    return bisect(excess, -100, 100)


def gaussian_delta(mu, epsilon):
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su, Cor. 2.13)."""
    mu = mpmath.mpf(mu)
    epsilon = mpmath.mpf(epsilon)
    return mpmath.ncdf(-epsilon / mu + mu / 2) - mpmath.exp(epsilon) * mpmath.ncdf(
        -epsilon / mu - mu / 2
    )


def gaussian_beta(mu, alpha):
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)."""
    return mpmath.ncdf(normal_quantile_of_complement(alpha) - mpmath.mpf(mu))


def solve_mu(epsilon, delta):
    """The μ with δ_μ(ε) = δ, a root in log μ (:func:`bracketed_root`)."""
    log_delta = mpmath.log(mpmath.mpf(delta))

    def excess(log_mu):
        mu = mpmath.exp(log_mu)
        if epsilon / mu > 1e4:  # δ < exp(-5e7): far below any δ we solve for
            return mpmath.mpf(-1e7)
        return mpmath.log(gaussian_delta(mu, epsilon)) - log_delta

    return mpmath.exp(bracketed_root(excess, mpmath.log("1e-305"), mpmath.log(1000)))


def solve_epsilon(mu, delta):
    """The ε with δ_μ(ε) = δ (:func:`bracketed_root`)."""
    log_delta = mpmath.log(mpmath.mpf(delta))
    high = mpmath.mpf(mu) * (mpmath.mpf(mu) / 2 + mpmath.sqrt(-2 * log_delta) + 5)
    return bracketed_root(lambda e: mpmath.log(gaussian_delta(mu, e)) - log_delta, 0, high)


def check_gaussian_sandwich(result, mu, deltas, relative):
    """Assert that ``result``'s ε bounds hold μ-GDP's ε at each δ, the upper within ``relative``."""
    for delta in deltas:
        exact = float(solve_epsilon(mu, delta))
        lower, upper = result.epsilon_bounds(delta)
        assert lower <= exact <= upper, (delta, lower, exact, upper)
        assert upper - exact < relative * exact, (delta, exact, upper)
