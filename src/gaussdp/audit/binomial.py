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


def _grid(n: int, points: int = 512) -> np.ndarray:
    """Integers 0..n: all within 64 of either end, geometrically spaced from both ends between."""
    if n <= 256:
        return np.arange(n + 1)
    ends = np.arange(65)
    middle = np.rint(np.geomspace(64, n / 2, points)).astype(np.int64)
    return np.unique(np.concatenate([ends, middle, n - middle, n - ends]))


class UpperTable:
    """Clopper–Pearson upper bounds at ``level`` tabulated exactly on a grid of counts.

    The grid (:func:`_grid`) is dense near 0 and near ``n`` and holds ``n`` itself
    (where the bound is 1). Grid *cell* ``j`` holds the counts
    ``grid[j] <= k < grid[j + 1]`` (the last cell is ``k = n``). The bound is
    non-decreasing in ``k``, so ``values[j]`` (the exact bound at ``grid[j]``) is a
    certified lower bracket and ``values[j + 1]`` a certified upper bracket of every
    bound in cell ``j``; :meth:`estimate` interpolates between them (only to rank).

    Attributes
    ----------
    n : int
        Trials.
    grid : numpy.ndarray
        The tabulated counts, increasing, from 0 to ``n``.
    values : numpy.ndarray
        The exact upper bounds at ``grid`` (``values[-1] = 1``).
    """

    def __init__(self, n: int, level: float):
        self.n = int(n)
        self.grid = _grid(self.n)
        inner = np.asarray(clopper_pearson_upper(self.grid[:-1], self.n, level), dtype=float)
        self.values = np.append(inner, 1.0)
        self._logit = np.log(inner) - np.log1p(-inner)
        self._positions = self._position(self.grid[:-1])

    def _position(self, counts):
        return np.log((counts + 0.5) / (self.n - counts + 0.5))

    def cell(self, k) -> np.ndarray:
        """The grid cell of each count: ``grid[cell] <= k < grid[cell + 1]``."""
        return np.searchsorted(self.grid, np.asarray(k, dtype=np.int64), side="right") - 1

    def lower(self, k) -> np.ndarray:
        """A certified lower bracket of the bounds at ``k``: the bound at the grid point below."""
        return self.values[self.cell(k)]

    def upper(self, k) -> np.ndarray:
        """A certified upper bracket of the bounds at ``k``: the bound at the grid point above."""
        cell = self.cell(k)
        return self.values[np.minimum(cell + 1, self.values.size - 1)]

    def estimate(self, k, lower=None) -> np.ndarray:
        """Interpolated bounds at ``k`` (``logit`` linear in ``log((k + ½)/(n − k + ½))``).

        Accurate near both ends, not a bound; at least the lower bracket ``lower``
        (computed when not given).
        """
        k = np.asarray(k, dtype=np.int64)
        if lower is None:
            lower = self.lower(k)
        position = self._position(np.minimum(k, self.n - 1))
        estimate = special.expit(np.interp(position, self._positions, self._logit))
        estimate = np.where(k >= self.n, 1.0, estimate)
        return np.maximum(estimate, lower)


def upper_table(k, n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """A certified lower bracket and an interpolated estimate of the CP upper bounds at ``k``.

    The exact bounds are computed on a grid of counts, dense near 0 and near
    ``n`` (:class:`UpperTable`). The bound is non-decreasing in ``k``, so the value
    at the grid point at or below ``k`` is a certified lower bracket (exact at grid
    points); the estimate interpolates ``logit(bound)`` linearly in
    ``log((k + ½)/(n − k + ½))`` between grid points — accurate near both ends, but
    not a bound, and used only to rank thresholds.
    """
    table = UpperTable(n, level)
    k = np.asarray(k, dtype=np.int64)
    lower = table.lower(k)
    return lower, table.estimate(k, lower)
