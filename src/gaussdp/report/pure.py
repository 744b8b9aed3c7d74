r"""Pure ε-DP mechanisms and their compositions: μ from exact log-space breakpoints.

**One ε-DP mechanism** (``PureDP(ε)``, binary ``RandomizedResponse(ε)``) has
the trade-off curve f_{ε,0}: the lines β = 1 − e^ε α and β = e^{−ε}(1 − α),
meeting at α₀ = β₀ = 1/(1 + e^ε). Its tight μ is Proposition 6.1 of Gomez et
al. (2025), μ = −2Φ⁻¹(1/(1 + e^ε)) (:func:`gaussdp.gdp.from_pure_dp`,
accurate to ~1e-13 relative for every ε), and its regret is the diagonal
distance from G_μ's tangent point of slope −e^ε to the steep line (the other
line gives the same by symmetry; :mod:`gaussdp.report.regret`):

    regret = (e^{−ε} Φ(μ/2 − ε/μ) − Φ(−ε/μ − μ/2)) / (1 + e^{−ε}),

a difference of two positive terms each at most the regret, so it keeps its
relative accuracy for every ε (no cancellation near TPR = 1).

**Compositions.** The accountant's exact binomial profile holds the tests'
true-positive rates t = P(L ≥ λ) as numbers near 1, where double precision
keeps only ~1e-16 of 1 − t: for ε ≳ 13 rounding put μ *below* the truth, and
for ε ≳ 37 it made μ infinite. Here the breakpoints (α_i, β_i) =
(Q(L ≥ λ_i), P(L < λ_i)) of the exact curve are summed in log space from the
small end of each tail (no cancellation, no underflow), each of α, β and
their complements from its own sum, and μ = max_i Φ⁻¹(1 − α_i) + Φ⁻¹(1 − β_i)
(Appendix B, eq. 29) is taken from the form whose argument is at most ½.
The log-masses (log-gamma binomial coefficients) and the cumulative sums
carry rounding errors; a certified bound E on their effect on every log α,
log β is carried along, and since |d Φ⁻¹(1 − x)/d log x| ≤ 1.2534 for
x ≤ ½ the reported μ is raised by 2·1.2534·E plus a relative
:data:`QUANTILE_MARGIN` for the quantile itself: never below the exact μ.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from gaussdp import gdp
from gaussdp import mechanisms as m
from gaussdp.pld.leaves import leaves as leaves_of
from gaussdp.report.regret import ROUNDING_MARGIN

__all__ = ["laplace_mu", "pure_dp_groups", "pure_dp_mu", "pure_dp_regret"]

#: Relative margin added to μ for the error of the normal quantile (``ndtri_exp``,
#: :func:`gaussdp.gdp.from_pure_dp`: ~1e-13 relative against 50-digit mpmath).
QUANTILE_MARGIN = 4e-13
# Unit roundoff of float64.
_U = 2.0**-53
# |d Φ⁻¹(1 − x) / d log x| = x/φ(Φ⁻¹(x)) ≤ 0.5/φ(0) for x ≤ 1/2 (Mills ratio).
_SLOPE = 0.5 * math.sqrt(2.0 * math.pi)
# A cumulative sum is rescaled when the running maximum log term rises by this much.
_RESCALE = 300.0
_LOG_HALF = math.log(0.5)


def pure_dp_groups(mechanism, neighbouring) -> dict[float, int] | None:
    """{ε: count} if the mechanism is a composition of pure-DP pieces, else None.

    Uses the accountant's own flattening (Repeated, Composition, groups
    expanded; ε = 0 pieces dropped), so the groups are what it composed.
    """
    leaves = leaves_of(mechanism, neighbouring)
    if not leaves or not all(isinstance(leaf, (m.PureDP, m.RandomizedResponse)) for leaf in leaves):
        return None
    groups: dict[float, int] = {}
    for leaf, count in leaves.items():
        groups[leaf.epsilon] = groups.get(leaf.epsilon, 0) + count
    return groups


def _log_cumsum(log_terms: np.ndarray) -> tuple[np.ndarray, int]:
    """log Σ_{j ≤ i} e^{l_j} for every i, without underflow; and the number of rescalings.

    A plain cumulative sum of the terms scaled by e^{−s}, where s follows the
    running maximum: whenever it rises by :data:`_RESCALE` the sum so far is
    rescaled. Terms more than ~700 below the running maximum underflow to 0
    (a relative change below 1e-300). Relative error ≤ (i + 2·rescalings + 2)·u.
    """
    out = np.full(log_terms.size, -np.inf)
    if log_terms.size == 0:
        return out, 0
    running = np.maximum.accumulate(log_terms)
    start = int(np.searchsorted(running, -np.inf, side="right"))  # skip zero terms
    carry, scale, rescalings = 0.0, 0.0, 0
    while start < log_terms.size:
        new_scale = float(running[start])
        carry = carry * math.exp(scale - new_scale) if carry else 0.0
        scale = new_scale
        end = int(np.searchsorted(running, scale + _RESCALE, side="right"))
        end = max(end, start + 1)
        sums = np.cumsum(np.exp(log_terms[start:end] - scale)) + carry
        out[start:end] = np.log(sums) + scale
        carry = float(sums[-1])
        start = end
        rescalings += 1
    return out, rescalings


def _atoms(groups: dict[float, int]):
    """Distinct losses (ascending), their log P- and log Q-masses, and an error bound.

    Each group of k ε-DP pieces contributes j ~ Binomial(k, e^ε/(1 + e^ε))
    "+ε" answers under P and Binomial(k, 1/(1 + e^ε)) under Q, loss ε(2j − k).
    The bound is on the absolute error of every log-mass (a few ulps of each
    term of the log-gamma formula, summed over groups).
    """
    losses = np.zeros(1)
    log_p = np.zeros(1)
    log_q = np.zeros(1)
    error = 0.0
    for epsilon, k in sorted(groups.items()):
        j = np.arange(k + 1, dtype=float)
        log_up = -math.log1p(math.exp(-epsilon))  # log(e^ε/(1+e^ε))
        log_down = -epsilon + log_up  # log(1/(1+e^ε))
        log_factorial = float(special.gammaln(k + 1.0))
        log_choose = log_factorial - special.gammaln(j + 1.0) - special.gammaln(k - j + 1.0)
        group_p = log_choose + j * log_up + (k - j) * log_down
        group_q = log_choose + j * log_down + (k - j) * log_up
        scale = 3.0 * log_factorial + k * (abs(log_up) + abs(log_down)) + 1.0
        error += 16.0 * _U * scale
        losses = (losses[:, None] + (epsilon * (2.0 * j - k))[None, :]).ravel()
        log_p = (log_p[:, None] + group_p[None, :]).ravel()
        log_q = (log_q[:, None] + group_q[None, :]).ravel()
    order = np.argsort(losses, kind="stable")
    losses, log_p, log_q = losses[order], log_p[order], log_q[order]
    unique, starts, counts = np.unique(losses, return_index=True, return_counts=True)
    if unique.size < losses.size:
        log_p = _log_sum_groups(log_p, starts, counts)
        log_q = _log_sum_groups(log_q, starts, counts)
        error += (int(np.max(counts)) + 2) * _U
    return unique, log_p, log_q, error


def _log_sum_groups(log_terms, starts, counts):
    peak = np.maximum.reduceat(log_terms, starts)
    shifted = np.exp(log_terms - np.repeat(peak, counts))
    return np.log(np.add.reduceat(shifted, starts)) + peak


def _quantile(log_x: np.ndarray, log_complement: np.ndarray) -> np.ndarray:
    """Φ⁻¹(1 − x) from whichever of log x, log(1 − x) is at most log ½."""
    small = log_x <= _LOG_HALF
    with np.errstate(invalid="ignore"):
        from_x = -special.ndtri_exp(np.where(small, log_x, _LOG_HALF))
        from_complement = special.ndtri_exp(np.where(small, _LOG_HALF, log_complement))
    return np.where(small, from_x, from_complement)


def _scaled_quantile(log_x, log_complement, delta: float, error: float) -> np.ndarray:
    """Φ⁻¹(1 − x/(1 − δ)) (−inf where x ≥ 1 − δ); the complement form rounded upward."""
    if delta == 0.0:
        return _quantile(log_x, log_complement)
    log_scaled = log_x - math.log1p(-delta)
    small = log_scaled <= _LOG_HALF
    # 1 − x/(1 − δ) = (c − δ)/(1 − δ), c = 1 − x taken a relative E too large (upward).
    with np.errstate(invalid="ignore", over="ignore"):
        rest = (np.exp(log_complement + error) - delta) / (1.0 - delta)
        from_x = -special.ndtri_exp(np.where(small, log_scaled, _LOG_HALF))
        from_rest = special.ndtri(np.clip(rest, 0.0, 1.0))
    return np.where(small, from_x, np.where(rest > 0.0, from_rest, -np.inf))


def pure_dp_mu(groups: dict[float, int], delta: float = 0.0) -> float:
    """The tight μ of a composition of pure-DP mechanisms (failure probability δ), upward.

    ``groups`` maps ε to the number of ε-DP pieces. A single piece with δ = 0
    is Proposition 6.1 (:func:`gaussdp.gdp.from_pure_dp`); otherwise the
    exact curve's breakpoints are checked in log space (module docstring).
    Either way the result is raised by a certified margin for rounding, so it
    is never below the exact tight μ.

    Examples
    --------
    >>> round(pure_dp_mu({1.0: 1}), 9)          # −2Φ⁻¹(1/(1 + e))
    1.232035385
    >>> round(pure_dp_mu({35.0: 1}), 5)         # no rounding near TPR = 1
    15.99669
    >>> round(pure_dp_mu({0.5: 3}), 9)         # 3 × 0.5-DP: the exact binomial curve
    0.935487787
    """
    if not groups:
        return 0.0
    if len(groups) == 1 and next(iter(groups.values())) == 1 and delta == 0.0:
        epsilon = next(iter(groups))
        return float(gdp.from_pure_dp(epsilon)) * (1.0 + QUANTILE_MARGIN)
    losses, log_p, log_q, error = _atoms(groups)
    n = losses.size
    # Test i says "member" iff L ≥ λ_i (i = 1 … n − 1; i = 0 and i = n are the corners).
    upper_q, rescale_a = _log_cumsum(log_q[::-1])  # log Q(L ≥ λ_i), i = n−1 … 0
    upper_p, rescale_b = _log_cumsum(log_p[::-1])
    lower_q, rescale_c = _log_cumsum(log_q)  # log Q(L ≤ λ_i)
    lower_p, rescale_d = _log_cumsum(log_p)
    rescalings = max(rescale_a, rescale_b, rescale_c, rescale_d)
    log_alpha = upper_q[::-1][1:]  # Q(L ≥ λ_i), i = 1 … n − 1
    log_alpha_c = lower_q[:-1]  # Q(L < λ_i) = 1 − α_i
    log_beta = lower_p[:-1]  # P(L < λ_i)
    log_beta_c = upper_p[::-1][1:]  # P(L ≥ λ_i) = 1 − β_i
    if log_alpha.size == 0:
        return 0.0
    error += (n + 2 * rescalings + 4) * _U
    z_alpha = _scaled_quantile(log_alpha, log_alpha_c, delta, error)
    z_beta = _scaled_quantile(log_beta, log_beta_c, delta, error)
    mus = np.where(np.isnan(z_alpha + z_beta), -np.inf, z_alpha + z_beta)
    mu = float(np.max(mus))
    if not mu > 0.0:  # every breakpoint free (or −inf): 0-GDP
        return 0.0
    if math.isinf(mu):
        return mu
    return mu + 2.0 * _SLOPE * error + QUANTILE_MARGIN * mu


def pure_dp_regret(epsilon: float, mu: float) -> float:
    """Δ(f_{ε,0}, G_μ), exactly from the steep line (module docstring), plus the rounding margin.

    Examples
    --------
    >>> from gaussdp import curves
    >>> from gaussdp.report import regret
    >>> mu = pure_dp_mu({1.0: 1})
    >>> round(pure_dp_regret(1.0, mu), 9), round(regret(curves.epsilon_delta(1.0), mu), 9)
    (0.057546396, 0.057546396)
    """
    if math.isinf(mu):
        # G_∞ = 0 on (0, 1]: the shift is the fixed point f(a) = a, a = 1/(1 + e^ε).
        return 1.0 / (1.0 + math.exp(epsilon)) + ROUNDING_MARGIN
    if mu == 0.0:
        return 0.0
    ratio = epsilon / mu
    shrink = math.exp(-epsilon)
    steep = shrink * special.ndtr(0.5 * mu - ratio)
    corner = special.ndtr(-ratio - 0.5 * mu)
    return max(float((steep - corner) / (1.0 + shrink)), 0.0) + ROUNDING_MARGIN


# Relative margin on the Laplace μ: the maximiser is found to ~1e-12 in log α, where
# the objective is flat (an error of x moves μ by O(x²)), plus the quantiles' ~1e-13.
_LAPLACE_MARGIN = 1e-10


def _laplace_needs(log_alpha: np.ndarray, epsilon: float) -> np.ndarray:
    """Φ⁻¹(1 − α) − Φ⁻¹(f(α)) on the steep half of the Laplace curve (α ≤ ½), log α given.

    f(α) = 1 − e^ε α for α < e^{−ε}/2 and e^{−ε}/(4α) up to α = ½; on the first
    piece Φ⁻¹(f) = −Φ⁻¹(e^ε α), all quantiles taken from log arguments ≤ log ½.
    """
    z_alpha = -special.ndtri_exp(np.minimum(log_alpha, _LOG_HALF))
    first = log_alpha < -epsilon - math.log(2.0)
    on_first = special.ndtri_exp(np.minimum(log_alpha + epsilon, _LOG_HALF))
    log_f = -epsilon - math.log(4.0) - log_alpha
    on_second = -special.ndtri_exp(np.minimum(log_f, _LOG_HALF))
    return z_alpha + np.where(first, on_first, on_second)


def laplace_mu(epsilon: float) -> float:
    r"""The tight μ of one Laplace mechanism with ε = Δ/b (strict, δ = 0), rounded up.

    The Laplace mechanism's trade-off curve (Dong, Roth & Su 2022, the
    example after Definition 2.2) is symmetric, with steep half
    f(α) = 1 − e^ε α for α < e^{−ε}/2 and e^{−ε}/(4α) for e^{−ε}/2 ≤ α ≤ ½.
    G_μ ≤ f iff μ ≥ Φ⁻¹(1 − α) − Φ⁻¹(f(α)) for every α, so
    μ = sup over α ≤ ½ of that difference, found on a grid in log α and
    refined by golden-section search on each piece (both unimodal; the
    maximum of the second is at its centre α = e^{−ε/2}/2 by symmetry), then
    raised by a relative 1e-10.

    Examples
    --------
    >>> round(laplace_mu(1.0), 6)
    1.030064
    """
    if epsilon == 0.0:
        return 0.0
    if math.isinf(epsilon):
        return math.inf
    corner = -epsilon - math.log(2.0)
    low = corner - 4.0 * epsilon - 60.0
    grid = np.concatenate(
        (np.linspace(low, corner, 4001), np.linspace(corner, _LOG_HALF, 4001)[1:])
    )
    values = _laplace_needs(grid, epsilon)
    best = int(np.argmax(values))
    left, right = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    a, b = float(left), float(right)
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    top = float(values[best])
    for _ in range(200):
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        fc, fd = _laplace_needs(np.array([c, d]), epsilon)
        top = max(top, float(fc), float(fd))
        if fc >= fd:
            b = d
        else:
            a = c
        if b - a < 1e-13 * max(1.0, abs(a)):
            break
    centre = -0.5 * epsilon - math.log(2.0)
    top = max(top, float(_laplace_needs(np.array([centre]), epsilon)[0]))
    return top * (1.0 + _LAPLACE_MARGIN) + QUANTILE_MARGIN
