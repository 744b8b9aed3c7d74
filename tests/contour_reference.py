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
from scipy import optimize, special


def _complex_expm1(w: np.ndarray) -> np.ndarray:
    """e^w − 1 for complex w without cancellation near 0."""
    re, im = w.real, w.imag
    half_sine = np.sin(0.5 * im)
    real = np.expm1(re) * np.cos(im) - 2.0 * half_sine * half_sine
    return real + 1j * np.exp(re) * np.sin(im)


#: The nodes reach this many σ beyond the Gaussian factor's peak: e^{−10²/2} = 2e-22, below
#: what T·log M needs over 10⁶ steps (M − 1 to ~1e-18).
_REACH = 10.0


def _loss(sigma: float, q: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a(y) = log(1 − q + q·eˣ) and q(eˣ − 1), x = (2y − 1)/(2σ²)."""
    x = (2.0 * y - 1.0) / (2.0 * sigma * sigma)
    excess = q * np.expm1(x)  # q(eˣ − 1), mean 0 under N(0, σ²)
    if q <= 0.5:
        return np.log1p(excess), excess
    # log(1 − q + q·eˣ) as a sum in log space (exact at q = 1: a = x)
    return np.logaddexp(math.log1p(-q) if q < 1.0 else -math.inf, math.log(q) + x), excess


def _loss_slope(sigma: float, q: float, y: np.ndarray) -> np.ndarray:
    """a'(y) = q·eˣ/((1 − q + q·eˣ)·σ²) ∈ [0, 1/σ²]."""
    x = (2.0 * y - 1.0) / (2.0 * sigma * sigma)
    if q >= 1.0:
        return np.full(np.shape(y), 1.0 / (sigma * sigma))
    return special.expit(x + math.log(q) - math.log1p(-q)) / (sigma * sigma)


def _nodes(sigma: float, q: float, exponent_scale: float, frequency: float, resolution: float):
    """Trapezoid nodes and weights in y for E over N(0, σ²) of e^{k·a(y)}, Re k ≤ exponent_scale.

    The integrand's Gaussian factor times e^{k·y/σ²} peaks at y = Re k, so the
    nodes cover [−10σ + min(Re k, 0), max(Re k, 0) + 10σ]. Its phase Im k·a(y)
    turns at up to ``frequency``·a'(y) radians per unit of y (|Im k| ≤
    frequency), fast only where a'(y) ~ 1/σ² (the far tail, for small q). The
    nodes are uniform in u = y/h + (frequency/θ)·a(y), an analytic, increasing
    change of variables: at most h = min(σ, σ²)/8 apart in y and θ = 1/4 radian
    apart in phase, so the trapezoid neither aliases nor spends nodes where the
    phase hardly turns (y(u) solved by bisection; the weights carry dy/du).
    """
    step = min(sigma, sigma * sigma) / (8.0 * resolution)
    low = -_REACH * sigma + min(exponent_scale, 0.0)
    high = _REACH * sigma + max(exponent_scale, 0.0)
    stretch = frequency * resolution / 0.25

    def warped(y):
        return y / step + stretch * _loss(sigma, q, y)[0]

    u_low, u_high = float(warped(np.array(low))), float(warped(np.array(high)))
    count = math.ceil(u_high - u_low) + 1
    u = np.linspace(u_low, u_high, count)
    du = (u_high - u_low) / (count - 1)
    below, above = np.full(count, low), np.full(count, high)
    for _ in range(64):  # bisection: warped is increasing
        middle = 0.5 * (below + above)
        under = warped(middle) < u
        below = np.where(under, middle, below)
        above = np.where(under, above, middle)
    y = 0.5 * (below + above)
    y[0], y[-1] = low, high
    jacobian = du / (1.0 / step + stretch * _loss_slope(sigma, q, y))  # dy per node
    weights = np.exp(-0.5 * (y / sigma) ** 2) * jacobian / (sigma * math.sqrt(2.0 * math.pi))
    return y, weights


def log_mgf(
    sigma: float, q: float, s: np.ndarray, direction: str, resolution: float = 1.0
) -> np.ndarray:
    """log M(s) of one step (complex s with Re s > 0), ``direction`` "remove" or "add".

    ``resolution`` r > 1 places r times as many nodes (a check of the quadrature).
    """
    s = np.atleast_1d(np.asarray(s, dtype=complex))
    scale = float(np.max(1.0 + s.real)) if direction == "remove" else 0.0
    y, weights = _nodes(sigma, q, scale, float(np.max(np.abs(s.imag))), resolution)
    a, excess = _loss(sigma, q, y)
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
    sigma: float, q: float, steps: int, epsilon: float, direction: str, resolution: float = 1.0
) -> tuple[float, float]:
    """δ(ε) of ``steps`` compositions in one direction and dδ/dε, by Laplace inversion.

    dδ/dε = −(1/π) ∫₀^∞ Re[M(s)ᵀ e^{−sε}/(s + 1)] dt: the same integrand times −s.
    ``resolution`` r > 1 takes r times as many nodes in y and in t (a check of
    both quadratures: the answer must not move).
    """

    def real_exponent(c):
        with np.errstate(all="ignore"):
            value = steps * log_mgf(sigma, q, np.array([c]), direction, resolution)[0].real
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
    # The trapezoid in t aliases the integrand's transform (the tilted loss law, e^{c(l−ε)}
    # times it) by 2π/step in loss, and the poles at s = 0 and −1 by e^{−2πc/step}: a step
    # of c/8 keeps both below e^{−50}; width/6 resolves the peak itself.
    step = min(width / 12.0, c / 8.0) / resolution
    total = slope = 0.0
    start, block = 0, 256
    while True:
        t = (start + np.arange(block)) * step
        s = c + 1j * t
        exponent = steps * log_mgf(sigma, q, s, direction, resolution)
        exponent += -s * epsilon - np.log(s) - np.log1p(s)
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


def delta(
    sigma: float, q: float, steps: int, epsilon: float, direction: str, resolution: float = 1.0
) -> float:
    """δ(ε) of ``steps`` compositions in one direction, by Laplace inversion."""
    return delta_and_slope(sigma, q, steps, epsilon, direction, resolution)[0]


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
