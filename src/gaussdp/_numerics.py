"""Stable numerical primitives shared by every part of gaussdp.

Privacy quantities live at the edges of the unit interval: δ of 1e-12, attack
false-positive rates of 1e-10, trade-off values within 1e-16 of one. Computed
naively (``1 - norm.cdf(x)``, ``log(exp(a) - exp(b))``) they lose every digit.
This module gathers the few primitives that keep them accurate, so that the
rest of the package never has to re-derive them:

* the standard normal distribution in log space and through its Mills ratio,
  ``normal_log_cdf``, ``normal_log_pdf``, ``mills_ratio``, ``mills_ratio_difference``;
* its quantile for tiny probabilities and for complements, ``normal_quantile``,
  ``normal_quantile_of_complement``, ``normal_quantile_from_log``;
* log-space arithmetic, ``log_diff_exp``, ``log1m_exp``, ``log_add_exp``;
* tail sums of many non-negative masses with a certified rounding bound,
  ``suffix_sums`` (the unit roundoff is ``UNIT_ROUNDOFF``);
* a bracketing root finder for monotone functions that returns the side of the
  root the caller asks for, ``monotone_root``, and ``expand_bracket``.

Conventions: Φ is the standard normal CDF, φ its density, and
Φ⁻¹(1 − α) is computed as ``-ndtri(α)`` (never ``ndtri(1 - α)``).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from typing import Literal

import numpy as np
from scipy import special

__all__ = [
    "CACHE_CHUNK",
    "LOG_ROUNDING",
    "LOG_SQRT_2PI",
    "SQRT_HALF_PI",
    "UNIT_ROUNDOFF",
    "expand_bracket",
    "log1m_exp",
    "log_add_exp",
    "log_diff_exp",
    "log_sum_exp_rows",
    "mills_ratio",
    "mills_ratio_difference",
    "monotone_root",
    "next_fast_length",
    "normal_cdf",
    "normal_log_cdf",
    "normal_log_pdf",
    "normal_log_sf",
    "normal_quantile",
    "normal_quantile_from_log",
    "normal_quantile_of_complement",
    "normal_sf",
    "suffix_sums",
    "union_of_independent",
]

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: Elements per step where long arrays are worked on elementwise in pieces, so that the
#: temporaries of one step stay in the processor's cache instead of streaming through
#: memory (discretisation, Chernoff sums, FFT rows: 1.5 to 2.5 times faster on millions
#: of points, with the same numbers).
CACHE_CHUNK = 1 << 15
#: u = 2⁻⁵³: |fl(x ∘ y) − x ∘ y| ≤ u·|x ∘ y| for every basic operation.
UNIT_ROUNDOFF = 2.0**-53
#: Bound on the relative error, in x = e^y, of y = fl(fl(log s) − l) for positive
#: doubles s and log x: the log is within one ulp, ≤ 2u·|log s| ≤ 1430u (|log s| ≤ 715
#: for the sums here), the subtraction within u·|y| ≤ 745u, and an absolute error a in
#: y is a relative error e^a − 1 ≈ a in x. Rounded up.
LOG_ROUNDING = 2300.0 * UNIT_ROUNDOFF
SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_SQRT_HALF = math.sqrt(0.5)

# Above this argument the Mills-ratio difference is taken from its asymptotic
# series, whose first omitted term is below 1e-20 of the sum there.
_SERIES_THRESHOLD = 30.0
_SERIES_TERMS = 12
# Below this step the difference is summed from the Taylor series in h, whose
# terms fall by a factor h·max(1, t) each; 12 terms leave < 1e-20 relative.
_TAYLOR_STEP = 0.01
_TAYLOR_TERMS = 12


# ---------------------------------------------------------------------------
# The standard normal distribution
# ---------------------------------------------------------------------------


def _five_smooth_numbers(largest: int) -> list[int]:
    """Every 2^a·3^b·5^c up to ``largest``, sorted."""
    found = []
    five = 1
    while five <= largest:
        three = five
        while three <= largest:
            two = three
            while two <= largest:
                found.append(two)
                two *= 2
            three *= 3
        five *= 5
    return sorted(found)


#: The FFT lengths that pocketfft transforms fastest (real input): 5-smooth numbers, the
#: ones scipy.fft.next_fast_len(n, real=True) returns (identical on 40,000 sizes up to
#: 2^40), listed once up to 2^48 (5,811 of them, in about 1 ms).
_FAST_LENGTHS = _five_smooth_numbers(2**48)


def next_fast_length(size: int) -> int:
    """The smallest 5-smooth number (2^a·3^b·5^c) at least ``size``: a fast real FFT length.

    What ``scipy.fft.next_fast_len(size, real=True)`` returns, without importing
    scipy.fft (40 ms of every process that imports gaussdp).

    Examples
    --------
    >>> next_fast_length(1), next_fast_length(97), next_fast_length(1025)
    (1, 100, 1080)
    """
    size = max(int(size), 1)
    if size > _FAST_LENGTHS[-1]:  # far beyond any memory: a power of two serves
        return 1 << (size - 1).bit_length()
    return _FAST_LENGTHS[bisect.bisect_left(_FAST_LENGTHS, size)]


def normal_cdf(x):
    """Φ(x), accurate in relative terms for x → −∞."""
    return special.ndtr(x)


def normal_sf(x):
    """1 − Φ(x) = Φ(−x), without forming the complement."""
    return special.ndtr(np.negative(x))


def normal_log_cdf(x):
    """log Φ(x), finite down to x ≈ −1e154."""
    return special.log_ndtr(x)


def normal_log_sf(x):
    """log(1 − Φ(x)) = log Φ(−x)."""
    return special.log_ndtr(np.negative(x))


def normal_log_pdf(x):
    """log φ(x) = −x²/2 − log √(2π)."""
    x = np.asarray(x, dtype=float)
    return -0.5 * x * x - LOG_SQRT_2PI


def normal_quantile(p):
    """Φ⁻¹(p), accurate for p down to the smallest subnormal."""
    return special.ndtri(p)


def normal_quantile_of_complement(p):
    """Φ⁻¹(1 − p) = −Φ⁻¹(p), accurate for tiny p (no ``1 - p`` is formed)."""
    return -special.ndtri(p)


def normal_quantile_from_log(log_p):
    """Φ⁻¹(exp(log_p)) for log_p ≤ 0, usable where exp(log_p) underflows."""
    return special.ndtri_exp(log_p)


def mills_ratio(x):
    """The Mills ratio m(x) = Φ(−x)/φ(x) = √(π/2)·erfcx(x/√2).

    Finite and accurate for x ≥ −37; it overflows for more negative x, where
    m(x) ≈ e^{x²/2}√(2π).
    """
    return SQRT_HALF_PI * special.erfcx(np.multiply(_SQRT_HALF, x))


def mills_ratio_difference(t, h):
    """m(t) − m(t + h) for h ≥ 0, without catastrophic cancellation.

    The difference of Mills ratios is the kernel of the Gaussian privacy
    profile: δ_μ(ε) = φ(μ/2 − ε/μ) · (m(t) − m(t + μ)) with t = ε/μ − μ/2.
    For t below 30 and h ≥ 0.01 it is the difference of two ``erfcx``
    values, whose relative error is at most about 1e-16·max(1, t)/h; for
    smaller h it is the Taylor series in h built from the derivative
    recursion m' = t·m − 1, m⁽ⁿ⁺¹⁾ = t·m⁽ⁿ⁾ + n·m⁽ⁿ⁻¹⁾. Beyond t = 30 it is summed from the
    asymptotic series m(t) = Σ_k (−1)^k (2k−1)!! t^{−(2k+1)}, taking each
    difference t^{−n} − (t+h)^{−n} = t^{−n}·(−expm1(−n·log1p(h/t))) exactly.

    Parameters
    ----------
    t : array_like
        Lower argument (any real; values below −37 overflow m(t)).
    h : array_like
        Non-negative step.

    Returns
    -------
    ndarray
        m(t) − m(t + h) ≥ 0.
    """
    t, h = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(h, dtype=float))
    out = np.empty(t.shape, dtype=float)
    far = t >= _SERIES_THRESHOLD
    near = ~far
    small = near & (h < _TAYLOR_STEP)
    direct = near & ~small
    if np.any(direct):
        td, hd = t[direct], h[direct]
        out[direct] = mills_ratio(td) - mills_ratio(td + hd)
    if np.any(small):
        # Taylor series in h: m(t) − m(t+h) = −Σ_{n≥1} m⁽ⁿ⁾(t) hⁿ/n!, with
        # m' = t·m − 1 and m⁽ⁿ⁺¹⁾ = t·m⁽ⁿ⁾ + n·m⁽ⁿ⁻¹⁾ (differentiate m' = t·m − 1).
        ts = t[small]
        out[small] = _taylor_difference(ts, h[small], mills_ratio(ts))
    if np.any(far):
        tf = t[far]
        out[far] = _series_difference(tf, np.log1p(h[far] / tf), np.expm1)
    return np.maximum(out, 0.0)


def _taylor_difference(t, h, mills):
    """m(t) − m(t+h) = −Σ_{n≥1} m⁽ⁿ⁾(t) hⁿ/n! (floats or arrays; ``mills`` = m(t)).

    With m' = t·m − 1 and m⁽ⁿ⁺¹⁾ = t·m⁽ⁿ⁾ + n·m⁽ⁿ⁻¹⁾ (differentiate m' = t·m − 1).
    """
    previous, current = mills, t * mills - 1.0
    total, power = (np.zeros(np.shape(t)) if np.ndim(t) else 0.0), 1.0
    for n in range(1, _TAYLOR_TERMS + 1):
        power = power * h / n
        total = total - current * power
        previous, current = current, t * current + n * previous
    return total


def _series_difference(t, log_ratio, expm1):
    """m(t) − m(t+h) from m(t) = Σ_k (−1)^k (2k−1)!! t^{−(2k+1)}, log_ratio = log1p(h/t).

    Each t^{−n} − (t+h)^{−n} = t^{−n}·(−expm1(−n·log_ratio)) exactly; floats or
    arrays (``expm1`` math's or numpy's).
    """
    total = np.zeros(np.shape(t)) if np.ndim(t) else 0.0  # not 0·t: t may be ∞
    coefficient = 1.0  # (2k - 1)!!, with (-1)!! = 1
    for k in range(_SERIES_TERMS):
        n = 2 * k + 1
        term = coefficient * t ** (-float(n)) * -expm1(-n * log_ratio)
        total = total + term if k % 2 == 0 else total - term
        coefficient *= n
    return total


def mills_ratio_difference_of_floats(t: float, h: float) -> float:
    """:func:`mills_ratio_difference` for one pair of floats, by the same three branches.

    The root searches of :mod:`gaussdp.gdp` evaluate the profile one point at
    a time; without array masks and copies this is about 20 times faster.
    """
    if t >= _SERIES_THRESHOLD:
        total = _series_difference(t, math.log1p(h / t), math.expm1)
    elif h < _TAYLOR_STEP:
        total = _taylor_difference(t, h, SQRT_HALF_PI * float(special.erfcx(_SQRT_HALF * t)))
    else:
        total = SQRT_HALF_PI * float(
            special.erfcx(_SQRT_HALF * t) - special.erfcx(_SQRT_HALF * (t + h))
        )
    return max(total, 0.0)


# ---------------------------------------------------------------------------
# Log-space arithmetic
# ---------------------------------------------------------------------------


def log1m_exp(x):
    """log(1 − eˣ) for x ≤ 0, accurate at both ends (Mächler 2012).

    Returns −inf at x = 0.
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_diff_exp(a, b):
    """log(eᵃ − eᵇ) for a ≥ b; −inf where a == b (including a = b = −inf)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        difference = np.where(np.isneginf(a), -np.inf, b - a)
    return np.where(np.isneginf(a), -np.inf, a + log1m_exp(np.minimum(difference, 0.0)))


def log_add_exp(a, b):
    """log(eᵃ + eᵇ)."""
    return np.logaddexp(a, b)


def log_sum_exp_rows(values: np.ndarray) -> np.ndarray:
    """log Σⱼ exp(values[i, j]) for each row i (−inf for a row of −infs, +inf kept).

    scipy.special.logsumexp's, without its argument checks and array-API
    dispatch: 3 to 4 times faster on the small matrices of Chernoff bounds
    that balls-in-bins evaluates hundreds of times.
    """
    values = np.asarray(values, dtype=float)
    top = np.max(values, axis=-1, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        sums = np.log(np.sum(np.exp(values - shift), axis=-1))
    return sums + shift[..., 0]


#: Relative margin that :func:`union_of_independent` moves its result by (its own
#: error is a few units of roundoff per term).
_UNION_MARGIN = 1e-12


def union_of_independent(probabilities_and_counts, upward: bool) -> float:
    """1 − Π (1 − pᵢ)^{cᵢ}, the chance that at least one of independent events happens.

    Computed as −expm1(Σ cᵢ·log1p(−pᵢ)), relative error a few units of
    roundoff (the direct form loses every pᵢ below 1.1e-16: 1 − pᵢ rounds
    to 1). ``upward``: the result is moved up by a relative 1e-12 (the mass
    a pessimistic composition sends to +∞, which an upper bound must not
    lose), else down (an optimistic one's). Used for P(+∞) of a composition:
    each mechanism's privacy loss is +∞ with probability pᵢ, independently.
    """
    exponent = 0.0
    for probability, count in probabilities_and_counts:
        if probability >= 1.0:
            return 1.0
        exponent += count * math.log1p(-probability)
    value = -math.expm1(exponent)
    value *= 1.0 + _UNION_MARGIN if upward else 1.0 - _UNION_MARGIN
    return min(max(value, 0.0), 1.0)


# ---------------------------------------------------------------------------
# Certified tail sums
# ---------------------------------------------------------------------------

_SUM_BLOCK = 16


def suffix_sums(values: np.ndarray, count: int | None = None) -> tuple[np.ndarray, float]:
    """Σ_{i ≥ j} vᵢ for every j, with a trailing 0, and a bound on their relative error.

    A plain running sum of n non-negative terms is only guaranteed to a
    relative (n − 1)·u (Higham 2002, *Accuracy and Stability of Numerical
    Algorithms*, §4.2): 2e-10 for the 2·10⁶ atoms of a fine privacy loss
    distribution, where a tail sum near 1 must be trusted to far less. Here
    the running sums are taken within blocks of B = 16 terms and the block
    totals are summed the same way, recursively, over L = ⌈log_B n⌉ levels;
    every computed sum Ŝⱼ then satisfies

        |Ŝⱼ − Sⱼ| ≤ γ·Sⱼ,   γ = (1 + γ_{B−1})^L (1 + u)^L − 1 ≈ L·B·u,

    with γ_k = k·u/(1 − k·u) (about 1e-14 for 2·10⁶ terms).

    Parameters
    ----------
    values : ndarray
        Non-negative, finite terms v₀, …, v_{n−1}.
    count : int, optional
        Return only the first ``count`` ≤ n sums (no trailing 0), in an array of
        their own: the full sums are not held beside them.

    Returns
    -------
    sums : ndarray
        n + 1 entries, ``sums[j]`` = Σ_{i ≥ j} vᵢ and ``sums[n]`` = 0 (the first
        ``count`` where given).
    relative_error : float
        γ above, rounded up.

    Examples
    --------
    >>> sums, bound = suffix_sums(np.full(1000, 0.001))
    >>> bool(abs(sums[0] - 1.0) <= bound), float(sums[-1]), bound < 1e-14
    (True, 0.0, True)
    """
    values = np.asarray(values, dtype=float)
    sums, levels = _blocked_suffix_sums(values)
    u = UNIT_ROUNDOFF
    block = (_SUM_BLOCK - 1) * u / (1.0 - (_SUM_BLOCK - 1) * u)
    bound = math.expm1(levels * (math.log1p(block) + math.log1p(u)))
    if count is not None:
        return sums[:count].copy(), bound * (1.0 + 1e-6)
    return np.concatenate([sums, [0.0]]), bound * (1.0 + 1e-6)


def _blocked_suffix_sums(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Suffix sums as prefix sums of the reversed terms, blocked (contiguous rows of B)."""
    sums, levels = _blocked_prefix_sums(values[::-1])
    return sums[::-1], levels


def _blocked_prefix_sums(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Running sums within rows of B terms, plus the running sum of the rows before."""
    n = values.size
    if n <= _SUM_BLOCK:
        return np.cumsum(values), 1
    rows = -(-n // _SUM_BLOCK)
    padded = np.zeros(rows * _SUM_BLOCK)
    padded[:n] = values
    table = padded.reshape(rows, _SUM_BLOCK)
    # The running sums along each row, a column at a time: the same additions in the same
    # order as np.cumsum(table, axis=1), whose loop over short rows is slower.
    for column in range(1, _SUM_BLOCK):
        table[:, column] += table[:, column - 1]
    before, levels = _blocked_prefix_sums(table[:, -1].copy())
    table[1:] += before[:-1, None]
    return padded[:n], levels + 1


# ---------------------------------------------------------------------------
# Root finding for monotone functions
# ---------------------------------------------------------------------------

Side = Literal["low", "high"]


def expand_bracket(
    func: Callable[[float], float],
    start: float,
    *,
    direction: Literal["up", "down"] = "up",
    factor: float = 2.0,
    limit: float | None = None,
    max_steps: int = 200,
) -> tuple[float, float]:
    """Grow a bracket geometrically until ``func`` changes sign.

    Starting from ``start`` (where ``func`` has the sign s), step
    x ← x·factor (``direction="up"``) or x ← x/factor (``"down"``), positive x
    only, until ``func(x)`` has the opposite sign. Returns ``(low, high)``
    ordered so that ``low < high`` and the sign change lies between them.

    Raises
    ------
    ValueError
        If no sign change is found before ``limit`` or ``max_steps``.
    """
    if start <= 0 or not math.isfinite(start):
        raise ValueError(f"start must be a positive finite number, got {start}")
    sign = _sign(func(start))
    previous = start
    x = start
    for _ in range(max_steps):
        x = x * factor if direction == "up" else x / factor
        if limit is not None and (
            (direction == "up" and x > limit) or (direction == "down" and x < limit)
        ):
            x = limit
        if _sign(func(x)) != sign:
            return (previous, x) if direction == "up" else (x, previous)
        if limit is not None and x == limit:
            break
        previous = x
    raise ValueError(
        f"no sign change found searching {direction} from {start} "
        f"(last point {x}); the target may be unreachable"
    )


def _sign(value: float) -> int:
    if math.isnan(value):
        raise ValueError("function returned NaN during root finding")
    return 1 if value > 0 else -1


def monotone_root(
    func: Callable[[float], float],
    low: float,
    high: float,
    *,
    side: Side,
    xtol: float = 0.0,
    rtol: float = 4e-16,
    max_iterations: int = 400,
) -> float:
    """Locate the sign change of a monotone function and return one side of it.

    The search keeps a bracket [low, high] on which ``func`` changes sign
    (values ``> 0`` count as positive, ``≤ 0`` as non-positive) and shrinks it
    by Illinois-modified regula falsi steps, falling back to bisection
    whenever a step fails to halve the bracket, until
    ``high − low ≤ xtol + rtol·max(|low|, |high|)``. Infinite function values
    are allowed (they force bisection), which lets callers work in log space
    where a probability underflows.

    Because the bracket is kept, the answer is on the side asked for *as
    evaluated*: ``side="high"`` returns the bracket end where ``func`` has the
    sign it has at ``high``, ``side="low"`` the end that shares the sign of
    ``func(low)``. Callers use this to round inverses towards the side that
    over-states privacy loss.

    Parameters
    ----------
    func : callable
        Monotone function of one float.
    low, high : float
        A bracket, ``low < high``, with ``func(low)`` and ``func(high)`` of
        opposite signs.
    side : {"low", "high"}
        Which end of the final bracket to return.
    xtol, rtol : float
        Absolute and relative width at which to stop.
    max_iterations : int
        Safety cap; the bracket halves at least every other step, so 400
        steps resolve any bracket of doubles.

    Returns
    -------
    float
        ``low`` or ``high`` of the final bracket.

    Examples
    --------
    >>> root = monotone_root(lambda x: x * x - 2.0, 0.0, 2.0, side="high")
    >>> root >= 2 ** 0.5 and root - 2 ** 0.5 < 1e-15
    True
    """
    if not low < high:
        raise ValueError(f"bracket must satisfy low < high, got [{low}, {high}]")
    f_low = float(func(low))
    f_high = float(func(high))
    s_low, s_high = _sign(f_low), _sign(f_high)
    if s_low == s_high:
        raise ValueError(
            f"bracket [{low}, {high}] does not bracket a sign change (values {f_low} and {f_high})"
        )
    widths = [math.inf, math.inf]  # bracket widths one and two steps ago
    retained = 0  # which end survived the last step: -1 low, +1 high
    for _ in range(max_iterations):
        current = high - low
        if current <= xtol + rtol * max(abs(low), abs(high)):
            break
        candidate = low + 0.5 * current
        interpolate = current <= 0.5 * widths[1]  # the last two steps halved it
        if interpolate and math.isfinite(f_low) and math.isfinite(f_high) and f_low != f_high:
            secant = low - f_low * current / (f_high - f_low)
            if low < secant < high:
                candidate = secant
        if not low < candidate < high:
            break  # the bracket is two adjacent doubles
        widths = [current, widths[0]]
        value = float(func(candidate))
        if _sign(value) == s_low:
            low, f_low = candidate, value
            if retained == -1 and math.isfinite(f_high):
                f_high *= 0.5  # Illinois: the high end was retained twice
            retained = -1
        else:
            high, f_high = candidate, value
            if retained == 1 and math.isfinite(f_low):
                f_low *= 0.5
            retained = 1
    return high if side == "high" else low
