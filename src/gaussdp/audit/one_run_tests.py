"""The statistics of one-run auditing: Steinke et al.'s p-value and the f-DP test.

The formulas and their sources are in :mod:`gaussdp.audit.one_run`, which
applies them to an audit; :mod:`gaussdp.audit.compare` applies the f-DP test
to the accountant's own curve. Kept here, below both, so that neither imports
the other.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable

import numpy as np
from scipy import special

__all__ = [
    "curve_blow_up_inverse",
    "epsilon_lower_fdp",
    "epsilon_lower_steinke",
    "mmc_rejects",
    "mu_lower_fdp",
    "steinke_p_value",
]


def _binomial_sf(k, n: int, p: float):
    """P[Binomial(n, p) > k] (1 for k < 0, 0 for k >= n), by ``scipy.special.bdtrc``."""
    k = np.asarray(k)
    inner = special.bdtrc(np.clip(k, 0, max(n - 1, 0)), n, p)
    return np.where(k < 0, 1.0, np.where(k >= n, 0.0, inner))


def steinke_p_value(canaries: int, guesses: int, correct: int, epsilon: float, delta: float):
    """P-value of ``correct`` right guesses out of ``guesses`` under (ε, δ)-DP.

    Steinke, Nasr & Jagielski (2023), Prop. 5.2:
    ``min(β + 2 m δ max_i P[v−i <= Bin(r, q) < v] / i, 1)``, ``q = e^ε/(1+e^ε)``.

    Examples
    --------
    All 10 guesses right under pure 0-DP (coin flips): 2⁻¹⁰.

    >>> steinke_p_value(100, 10, 10, 0.0, 0.0) == 2.0 ** -10
    True
    """
    q = special.expit(epsilon)
    beta = float(_binomial_sf(correct - 1, guesses, q))
    if delta == 0.0 or correct == 0:
        return min(beta, 1.0)
    shifts = np.arange(1, correct + 1)
    between = _binomial_sf(correct - shifts - 1, guesses, q) - beta
    spread = float(np.max(between / shifts))
    return min(beta + spread * delta * 2.0 * canaries, 1.0)


def _largest_rejected(rejects: Callable[[float], bool], upper_start: float = 1.0) -> float:
    """sup{x >= 0 : rejects(x)} for a rejection monotone decreasing in x (0 if none)."""
    if not rejects(0.0):
        return 0.0
    lo, hi = 0.0, upper_start
    while rejects(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if rejects(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-9 * max(1.0, lo):
            break
    return lo


def epsilon_lower_steinke(canaries, guesses, correct, alpha, delta) -> float:
    """ε lower bound at δ of Steinke, Nasr & Jagielski (2023): the largest rejected ε.

    Examples
    --------
    With δ = 0 and every guess right, ``q^r <= α`` gives ``ε = logit(α^(1/r))``:

    >>> round(epsilon_lower_steinke(1000, 100, 100, 0.05, 0.0), 6)
    3.492965
    """
    return _largest_rejected(
        lambda eps: steinke_p_value(canaries, guesses, correct, eps, delta) <= alpha
    )


def mmc_rejects(blow_up_inverse, canaries: int, guesses: int, correct: int, alpha: float) -> bool:
    """Whether Mahloujifar, Melis & Chaudhuri's test rejects the f-DP claim at level α."""
    if guesses == 0:
        return False
    r = alpha * correct / canaries
    h = alpha * (guesses - correct) / canaries
    for i in range(correct - 1, -1, -1):
        h_new = max(h, float(blow_up_inverse(r)))
        if h_new == h:
            break  # neither r nor h changes again
        r = min(r + (i / (guesses - i)) * (h_new - h), 1.0)
        h = h_new
    return r + h > guesses / canaries


def _gaussian_inverse(mu: float):
    return lambda y: special.ndtr(special.ndtri(min(y, 1.0)) - mu)


def _approximate_dp_inverse(epsilon: float, delta: float):
    """φ⁻¹(y) = f_{ε,δ}(1 − y) = max(0, 1 − δ − e^ε (1 − y), e^{−ε} (y − δ))."""
    growth = math.exp(min(epsilon, 700.0))

    def inverse(y: float) -> float:
        y = min(y, 1.0)
        return max(0.0, 1.0 - delta - growth * (1.0 - y), (y - delta) / growth)

    return inverse


def curve_blow_up_inverse(curve):
    """φ⁻¹(y) = f⁻¹(1 − y) of a trade-off curve, from below on a fine grid.

    ``f⁻¹`` is ``curve.inverse()`` unless the curve is symmetric. ``φ⁻¹`` is
    non-decreasing, so its value at the grid point just below ``y`` is a lower
    bound; a smaller ``φ⁻¹`` only makes the MMC test reject less, so a rejection
    (a violation) stays valid. The grid (about 8,000 points, dense near 0 and 1)
    is evaluated in one vectorised call, so the test costs microseconds per step.
    """
    symmetric = curve.is_symmetric
    symmetric = symmetric() if callable(symmetric) else symmetric
    inverse_curve = curve if symmetric else curve.inverse()
    tails = np.logspace(-15, -0.3, 2000)
    grid = np.unique(np.concatenate([[0.0, 1.0], np.linspace(0.0, 1.0, 4001), tails, 1.0 - tails]))
    values = np.asarray(inverse_curve.beta(np.clip(1.0 - grid, 0.0, 1.0)), dtype=float)
    values = np.maximum.accumulate(np.clip(values, 0.0, 1.0))  # non-decreasing, as φ⁻¹ is
    grid_list, value_list = grid.tolist(), values.tolist()

    def inverse(y: float) -> float:
        index = bisect.bisect_right(grid_list, min(y, 1.0)) - 1
        return value_list[max(index, 0)]

    return inverse


def mu_lower_fdp(canaries, guesses, correct, alpha) -> float:
    """The largest μ whose G_μ-DP claim the MMC test rejects at level α (0 if none)."""
    return _largest_rejected(
        lambda mu: mmc_rejects(_gaussian_inverse(mu), canaries, guesses, correct, alpha)
    )


def epsilon_lower_fdp(canaries, guesses, correct, alpha, delta) -> float:
    """The largest ε whose (ε, δ)-DP curve the MMC test rejects at level α (0 if none)."""
    return _largest_rejected(
        lambda eps: mmc_rejects(
            _approximate_dp_inverse(eps, delta), canaries, guesses, correct, alpha
        )
    )
