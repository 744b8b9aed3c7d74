r"""What a strategy costs: the standard deviation of the prefix sums' error per unit of noise.

The released prefix sums A x + B z, z ~ N(0, I), err at step t by (B z)_t, of
standard deviation s_t = ‖B_t‖ (row t of B); the noise σ multiplies it. The
decoder is the one of the streaming release, which uses at step t only what
is released by step t:

* a square lower-triangular C: B = A C⁻¹ (lower-triangular, so causal);
  Toeplitz strategies in O(n²) without an n × n matrix (B is Toeplitz, its
  coefficients the cumulative sums of C⁻¹'s);
* the binary tree: the prefix [0, t] as the sum of the at most ⌈log₂(n + 1)⌉
  complete dyadic nodes of the binary expansion of t + 1, s_t = √popcount(t + 1)
  (Dwork et al. 2010; Chan, Shi and Song 2011). Honaker's (2015) least-squares
  decoder does better, and is not what is measured here.

Comparing strategies at one μ: σ = Δ/μ, so the error is Δ·s_t/μ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaussdp._validation import InvalidParameterError
from gaussdp.matrix.strategies import Strategy, check_dense_size

__all__ = ["PrefixSumError", "prefix_sum_error"]


@dataclass(frozen=True)
class PrefixSumError:
    """The prefix sums' error standard deviation per unit noise, s_t, and its summaries.

    Attributes
    ----------
    per_step : numpy.ndarray
        s_t for t = 1, …, n (read-only).
    mean : float
        The mean of s_t over the steps.
    max : float
        The largest s_t.
    """

    per_step: np.ndarray
    mean: float
    max: float


def _toeplitz_inverse(coefficients: np.ndarray, n: int) -> np.ndarray:
    """d with Σ_{j≤k} c_j d_{k−j} = [k = 0], k < n (the first column of C⁻¹)."""
    c = np.zeros(n)
    c[: min(n, coefficients.size)] = coefficients[:n]
    inverse = np.zeros(n)
    inverse[0] = 1.0 / c[0]
    for k in range(1, n):
        inverse[k] = -(c[1 : k + 1] @ inverse[k - 1 :: -1]) / c[0]
    return inverse


def prefix_sum_error(strategy: Strategy) -> PrefixSumError:
    """s_t, the prefix-sum error's standard deviation per unit noise, of ``strategy``.

    Raises
    ------
    InvalidParameterError
        If C has no left inverse (the prefix sums cannot be decoded), or the
        dense computation is too large.

    Examples
    --------
    >>> from gaussdp.matrix import identity, prefix_sum, square_root_toeplitz
    >>> prefix_sum_error(identity(4)).per_step ** 2      # independent noise: s_t² = t
    array([1., 2., 3., 4.])
    >>> prefix_sum_error(prefix_sum(4)).max              # noise on the sums themselves
    1.0
    >>> round(prefix_sum_error(square_root_toeplitz(1024)).max, 4)
    1.809
    """
    n = strategy.n
    if strategy.name == "tree":
        counts = np.array([bin(t).count("1") for t in range(1, n + 1)], dtype=float)
        per_step = np.sqrt(counts)
    elif strategy.is_toeplitz:
        if strategy.coefficients[0] == 0.0:
            raise InvalidParameterError(
                f"strategy {strategy.describe()} has a zero diagonal: C is singular and the "
                "prefix sums cannot be decoded from C x + z"
            )
        decoder = np.cumsum(_toeplitz_inverse(strategy.coefficients, n))  # B = A C⁻¹
        per_step = np.sqrt(np.cumsum(decoder**2))
    else:
        matrix = strategy.matrix()
        if np.any(np.diag(matrix) == 0.0):
            raise InvalidParameterError(
                f"strategy {strategy.describe()} has a zero on its diagonal: C is singular "
                "and the prefix sums cannot be decoded from C x + z"
            )
        check_dense_size(n, n, f"the error of {strategy.describe()}")
        import scipy.linalg  # only here: 40-60 ms that `import gaussdp` need not pay

        inverse = scipy.linalg.solve_triangular(matrix, np.eye(n), lower=True)
        per_step = np.linalg.norm(np.cumsum(inverse, axis=0), axis=1)  # rows of A C⁻¹
    per_step = np.array(per_step, dtype=float)
    per_step.flags.writeable = False
    return PrefixSumError(per_step, float(per_step.mean()), float(per_step.max()))
