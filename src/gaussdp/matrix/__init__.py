"""Matrix mechanisms (DP-FTRL, tree aggregation, banded and Toeplitz factorisations): strategies,
participation schemas and their exact sensitivity.

The matrix mechanism releases B(C x + z) for the prefix sums A x of the
clipped gradients x, with A = B C and z ~ N(0, σ² I): a post-processing of
C x + z, a Gaussian mechanism whose L2 sensitivity Δ over the participation
patterns makes the whole run exactly μ-GDP with μ = Δ/σ
(:class:`gaussdp.MatrixMechanism`). This package holds the data: strategies
C (:func:`identity`, :func:`prefix_sum`, :func:`tree`, :func:`toeplitz`,
:func:`square_root_toeplitz`, :func:`banded`, :func:`dense`), participation
(:class:`SingleParticipation`, :class:`MinSeparation`, :class:`FixedEpochs`),
:func:`sensitivity`, and what a strategy costs in error, :func:`prefix_sum_error`.

Examples
--------
>>> from gaussdp import matrix
>>> s = matrix.sensitivity(matrix.tree(1024), matrix.SingleParticipation())
>>> round(s.value ** 2, 12), s.exact
(11.0, True)
"""

from gaussdp.matrix.error import PrefixSumError, prefix_sum_error
from gaussdp.matrix.participation import (
    FixedEpochs,
    MinSeparation,
    Participation,
    SingleParticipation,
    participation_from_dict,
)
from gaussdp.matrix.sensitivities import Sensitivity, sensitivity
from gaussdp.matrix.strategies import (
    MAX_DENSE_BYTES,
    Strategy,
    banded,
    dense,
    identity,
    prefix_sum,
    square_root_toeplitz,
    square_root_toeplitz_coefficients,
    strategy_from_dict,
    toeplitz,
    tree,
)

__all__ = [
    "MAX_DENSE_BYTES",
    "FixedEpochs",
    "MinSeparation",
    "Participation",
    "PrefixSumError",
    "Sensitivity",
    "SingleParticipation",
    "Strategy",
    "banded",
    "dense",
    "identity",
    "participation_from_dict",
    "prefix_sum",
    "prefix_sum_error",
    "sensitivity",
    "square_root_toeplitz",
    "square_root_toeplitz_coefficients",
    "strategy_from_dict",
    "toeplitz",
    "tree",
]
