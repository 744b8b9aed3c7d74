"""δ(ε) of a composed Poisson-subsampled Gaussian by Laplace inversion of its exact MGF.

An independent reference for the small-q regime, where a grid is hardest to fit
and dp_accounting's FFT is not always an upper bound: no grid, no FFT, no
rounding. Only the moment generating function of one step's privacy loss, a
smooth Gaussian integral, is computed numerically.

For a pair (P, Q) with privacy loss L = log dP/dQ, δ(ε) = E_P[(1 − e^{ε−L})₊].
The bilateral Laplace transform of g(l) = (1 − e^{ε−l})₊ is
e^{−sε}/(s(s + 1)) for Re s > 0, so for any c > 0 (Bromwich)

    δ(ε) = (1/π) ∫₀^∞ Re[ M(c + it)ᵀ e^{−(c+it)ε} / ((c + it)(c + it + 1)) ] dt,

with M(s) = E_P[e^{sL}] one step's MGF. c is the saddle point of the
integrand on the real axis, where it is positive and peaked, and the
trapezoidal rule (exponentially accurate for analytic integrands) does the rest.

One step, y ~ N(0, σ²), x = (2y − 1)/(2σ²), a(y) = log(1 − q + q·eˣ):
- remove (P the mixture, Q = N(0, σ²)): M(s) = E_Q[e^{(1+s)L}] = E[e^{(1+s)a(y)}];
- add (P = N(0, σ²), Q the mixture): L = −a(y), M(s) = E[e^{−s·a(y)}].
E[eˣ − 1] = 0 exactly, so M(s) − 1 is integrated with q(eˣ − 1)·(1 + s) (or
−s) subtracted: the integrand is O(q²) pointwise and M(s) − 1 keeps its
relative precision; T·log M(s) then does too.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize


def _complex_expm1(w: np.ndarray) -> np.ndarray:
    """e^w − 1 for complex w without cancellation near 0."""
    re, im = w.real, w.imag
    half_sine = np.sin(0.5 * im)
    real = np.expm1(re) * np.cos(im) - 2.0 * half_sine * half_sine
    return real + 1j * np.exp(re) * np.sin(im)


#: The nodes reach this many σ beyond the Gaussian factor's peak: e^{−12²/2} = 5e-32, far
#: below what T·log M needs (M − 1 to ~1e-22).
_REACH = 12.0


def _nodes(sigma: float, exponent_scale: float, frequency: float):
    """Trapezoid nodes and weights in y for E over N(0, σ²) of e^{k·a(y)}, Re k ≤ exponent_scale.

    The integrand's Gaussian factor times e^{k·y/σ²} peaks at y = Re k, so the
    nodes cover [−12σ + min(Re k, 0), max(Re k, 0) + 12σ]; it turns at up to
    ``frequency``/σ² radians per unit of y (|Im k| ≤ frequency), so the spacing
    keeps a quarter radian per node: the trapezoid does not alias.
    """
    step = min(sigma, sigma * sigma) / 24.0
    if frequency > 0.0:
        step = min(step, 0.25 * sigma * sigma / frequency)
    low = -_REACH * sigma + min(exponent_scale, 0.0)
    high = _REACH * sigma + max(exponent_scale, 0.0)
    y = np.arange(low, high + step, step)
    weights = np.exp(-0.5 * (y / sigma) ** 2) * step / (sigma * math.sqrt(2.0 * math.pi))
    return y, weights


def log_mgf(sigma: float, q: float, s: np.ndarray, direction: str) -> np.ndarray:
    """log M(s) of one step (complex s with Re s > 0), ``direction`` "remove" or "add"."""
    s = np.atleast_1d(np.asarray(s, dtype=complex))
    scale = float(np.max(1.0 + s.real)) if direction == "remove" else 0.0
    y, weights = _nodes(sigma, scale, float(np.max(np.abs(s.imag))))
    x = (2.0 * y - 1.0) / (2.0 * sigma * sigma)
    excess = q * np.expm1(x)  # q(eˣ − 1), mean 0 under N(0, σ²)
    if q <= 0.5:
        a = np.log1p(excess)
    else:  # log(1 − q + q·eˣ) as a sum in log space (exact at q = 1: a = x)
        a = np.logaddexp(math.log1p(-q) if q < 1.0 else -math.inf, math.log(q) + x)
    factor = (1.0 + s) if direction == "remove" else -s
    with np.errstate(divide="ignore"):
        log_weights = np.log(weights)  # −inf where the Gaussian weight underflows
    out = np.empty(s.shape, dtype=complex)
    for index, k in enumerate(factor):  # one node set for every s (y covers the largest)
        exponent = k * a
        small = exponent.real < 1.0
        with np.errstate(over="ignore", invalid="ignore"):
            # w·(e^{ka} − 1 − k·q(eˣ − 1)), written where e^{ka} alone may overflow
            terms = np.where(
                small,
                weights * (_complex_expm1(np.where(small, exponent, 0.0)) - k * excess),
                np.exp(exponent + log_weights) - weights * (1.0 + k * excess),
            )
            total = np.sum(terms)
        if np.isfinite(total) and abs(total) < 0.5:  # M(s) − 1, to its own precision
            out[index] = np.log1p(total)
        else:  # M(s) far from 1: a sum in log space
            largest = float(np.max(exponent.real + log_weights))
            out[index] = largest + np.log(np.sum(np.exp(exponent + log_weights - largest)))
    return out


def delta_and_slope(
    sigma: float, q: float, steps: int, epsilon: float, direction: str
) -> tuple[float, float]:
    """δ(ε) of ``steps`` compositions in one direction and dδ/dε, by Laplace inversion.

    dδ/dε = −(1/π) ∫₀^∞ Re[M(s)ᵀ e^{−sε}/(s + 1)] dt: the same integrand times −s.
    """

    def real_exponent(c):
        with np.errstate(all="ignore"):
            value = steps * log_mgf(sigma, q, np.array([c]), direction)[0].real
        value = value - c * epsilon - math.log(c) - math.log1p(c)
        return value if math.isfinite(value) else math.inf

    # the saddle point on the real axis, searched in log c
    result = optimize.minimize_scalar(
        lambda u: real_exponent(math.exp(u)),
        bounds=(-12.0, 6.0),
        method="bounded",
        options={"xatol": 1e-6},
    )
    c = math.exp(result.x)
    peak = real_exponent(c)
    # width of the peak in t: 1/√K''(c), from a finite difference of the real exponent
    h = 1e-3 * c
    curvature = (real_exponent(c + h) - 2.0 * peak + real_exponent(c - h)) / (h * h)
    width = 1.0 / math.sqrt(max(curvature, 1e-300))
    step = width / 12.0
    total = slope = 0.0
    start, block = 0, 256
    while True:
        t = (start + np.arange(block)) * step
        s = c + 1j * t
        exponent = steps * log_mgf(sigma, q, s, direction) - s * epsilon - np.log(s) - np.log1p(s)
        terms = np.exp(exponent - peak)
        weights = np.ones(block)
        if start == 0:
            weights[0] = 0.5
        total += float(np.sum(weights * terms.real))
        slope -= float(np.sum(weights * (s * terms).real))
        start += block
        # the quadrature in y leaves M(s) ~1e-13 off: stop where the integrand is below that
        if np.max(np.abs(terms[-64:] * s[-64:])) < 1e-12 or start > 2**17:
            break
    scale = math.exp(peak) * step / math.pi
    return scale * total, scale * slope


def delta(sigma: float, q: float, steps: int, epsilon: float, direction: str) -> float:
    """δ(ε) of ``steps`` compositions in one direction, by Laplace inversion."""
    return delta_and_slope(sigma, q, steps, epsilon, direction)[0]


def epsilon(
    sigma: float, q: float, steps: int, target: float, guess: float = 1.0, tolerance: float = 1e-9
) -> float:
    """ε at δ = ``target``: the larger of the two directions' roots of δ(ε) = target.

    Newton's method on log δ(ε) (δ and its slope from one integral), kept inside
    a bracket that is widened from ``guess`` until it holds the root; bisection
    where a Newton step would leave it. ``tolerance`` is relative to ε.
    """
    roots = []
    for direction in ("remove", "add"):

        def excess(e, d=direction):
            value, slope = delta_and_slope(sigma, q, steps, e, d)
            if value <= 0.0:
                return -math.inf, 0.0
            return math.log(value) - math.log(target), slope / value

        if excess(1e-12)[0] <= 0.0:
            roots.append(0.0)
            continue
        low, high = 1e-12, max(guess, 1e-9)
        value, slope = excess(high)
        while value > 0.0:
            low, high = high, 2.0 * high
            value, slope = excess(high)
        point = high
        for _ in range(60):
            if value > 0.0:
                low = point
            else:
                high = point
            step = -value / slope if slope < 0.0 and math.isfinite(value) else math.nan
            candidate = point + step
            if not low < candidate < high:
                candidate = 0.5 * (low + high)
            if (
                abs(candidate - point) <= tolerance * abs(candidate)
                or high - low <= tolerance * high
            ):
                point = candidate
                break
            point = candidate
            value, slope = excess(point)
        roots.append(point)
    return max(roots)
