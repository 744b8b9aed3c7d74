"""Clopper–Pearson confidence bounds on a binomial proportion (an attack's error rate).

An attack that errs on ``k`` of ``n`` independent trials has an error rate ``p``
that is only known through ``k``. The Clopper–Pearson (1934) bounds invert the
binomial test exactly: the one-sided upper bound at level ``a`` is the ``p``
at which seeing ``k`` or fewer errors has probability exactly ``a``,

    P[Binomial(n, p_upper) <= k] = a,   p_upper = B⁻¹(1 − a; k + 1, n − k)
                                        (the complementary regularised beta inverse),

so ``P[p > p_upper] <= a`` whatever ``p`` is; ``p_upper = 1`` when ``k = n``. The
lower bound is symmetric: ``P[Binomial(n, p_lower) >= k] = a``,
``p_lower = B⁻¹(a; k, n − k + 1)``, and ``0`` when ``k = 0``.

The bounds are computed with ``scipy.special.betainccinv`` and
``scipy.special.betaincinv`` at ``a`` itself (never at ``1 − a``), so a
tiny level (a Bonferroni correction over a million thresholds) loses nothing.
With no errors the upper bound has the closed form ``1 − a^(1/n)``, computed as
``−expm1(log(a) / n)``.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["clopper_pearson_lower", "clopper_pearson_upper"]


def _counts(k, n) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(k, dtype=float), np.asarray(n, dtype=float)


def clopper_pearson_upper(k, n, level):
    """One-sided Clopper–Pearson upper confidence bound on a binomial proportion.

    Parameters
    ----------
    k : int or array of int
        Failures (errors) observed, ``0 <= k <= n``.
    n : int or array of int
        Trials, ``n >= 1``.
    level : float
        The probability ``a`` in (0, 1) that the bound is wrong (confidence ``1 − a``).

    Returns
    -------
    float or numpy.ndarray
        ``p_upper`` with ``P[Binomial(n, p_upper) <= k] = a`` (Clopper & Pearson 1934),
        ``1`` where ``k = n``. A valid upper bound: ``P[p > p_upper] <= a``.

    Examples
    --------
    With no errors in 100 trials at ``a = 0.025`` the bound is ``1 − 0.025^(1/100)``:

    >>> round(clopper_pearson_upper(0, 100, 0.025), 6)
    0.036217
    """
    k_arr, n_arr = _counts(k, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = special.betainccinv(k_arr + 1.0, n_arr - k_arr, level)
        zero = -np.expm1(np.log(level) / n_arr)
    result = np.where(k_arr >= n_arr, 1.0, np.where(k_arr == 0, zero, inner))
    return float(result) if result.ndim == 0 else result


def clopper_pearson_lower(k, n, level):
    """One-sided Clopper–Pearson lower confidence bound on a binomial proportion.

    Parameters
    ----------
    k : int or array of int
        Successes observed, ``0 <= k <= n``.
    n : int or array of int
        Trials, ``n >= 1``.
    level : float
        The probability ``a`` in (0, 1) that the bound is wrong.

    Returns
    -------
    float or numpy.ndarray
        ``p_lower`` with ``P[Binomial(n, p_lower) >= k] = a``, ``0`` where ``k = 0``.

    Examples
    --------
    >>> round(clopper_pearson_lower(100, 100, 0.025), 6)
    0.963783
    """
    k_arr, n_arr = _counts(k, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = special.betaincinv(k_arr, n_arr - k_arr + 1.0, level)
        full = np.exp(np.log(level) / n_arr)
    result = np.where(k_arr <= 0, 0.0, np.where(k_arr >= n_arr, full, inner))
    return float(result) if result.ndim == 0 else result


#: Below this many counts every bound is computed exactly; above, a grid brackets them first.
EXACT_LIMIT = 4096


def _grid(n: int) -> np.ndarray:
    """Integers 0..n: all up to 1024, then geometrically spaced (ratio ~1.002), and n."""
    head = np.arange(min(n, 1024) + 1)
    if n <= 1024:
        return head
    tail = np.rint(np.geomspace(1024, n, 4000)).astype(np.int64)
    return np.unique(np.concatenate([head, tail, [n]]))


def upper_bracket(k: np.ndarray, n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Cheap certified brackets ``lo <= clopper_pearson_upper(k, n, level) <= hi``.

    The Clopper–Pearson upper bound is non-decreasing in ``k``, so its exact
    values on a grid of counts bracket it at every count between grid points
    (exact where ``k`` is a grid point). Used to discard thresholds that cannot
    matter before computing their bounds exactly.
    """
    grid = _grid(int(n))
    values = np.asarray(clopper_pearson_upper(grid, n, level), dtype=float)
    k = np.asarray(k, dtype=np.int64)
    below = np.searchsorted(grid, k, side="right") - 1
    exact = grid[below] == k
    above = np.minimum(below + 1, grid.size - 1)
    lo = values[below]
    hi = np.where(exact, lo, values[above])
    return lo, hi
