"""Strategy matrices of the matrix mechanism, as immutable data.

A strategy is the encoder C of a factorisation A = B C of the workload A (the
prefix sums for training): the mechanism releases B(C x + z), z ~ N(0, σ² I),
and its privacy depends on C alone, through its Gram matrix G = CᵀC (the
columns of C are the directions in which one step's contribution moves the
output). C has ``n`` columns, one per step. The named strategies:

=========================  ====================================================
``identity(n)``            C = I: independent noise per step (DP-SGD without
                           sampling), column norm 1
``prefix_sum(n)``          C = the lower-triangular matrix of ones, column
                           norm √n at the first step
``tree(n)``                binary-tree aggregation (Dwork et al. 2010, Chan et
                           al. 2011, Kairouz et al. 2021): one row per completed
                           dyadic interval, column norm √⌈log₂(n + 1)⌉
``toeplitz(c, n)``         lower-triangular Toeplitz, C[i, j] = c[i − j]
``square_root_toeplitz``   Toeplitz with the coefficients of (1 − x)^(−1/2),
                           c_k = C(2k, k)/4^k (Fichtenberger et al. 2023)
``banded(M or c, b)``      M (or the Toeplitz matrix of c) with entries b or
                           more diagonals below the main one set to zero
``dense(C)``               any lower-triangular n × n matrix
=========================  ====================================================

Nothing n × n is built until it is asked for (:meth:`Strategy.matrix`,
:meth:`Strategy.gram`); a request larger than :data:`MAX_DENSE_BYTES` is
refused with its size before anything is allocated.
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gaussdp._validation import InvalidParameterError, check_integer

__all__ = [
    "MAX_DENSE_BYTES",
    "Strategy",
    "banded",
    "dense",
    "identity",
    "prefix_sum",
    "square_root_toeplitz",
    "strategy_from_dict",
    "toeplitz",
    "tree",
]

#: The largest dense n × n float64 array (matrix or Gram matrix) a strategy builds: 1 GiB
#: (n ≤ 11,585); the sensitivity's working memory is a few times that.
MAX_DENSE_BYTES = 1024**3

_NAMES = ("identity", "prefix_sum", "tree", "toeplitz", "square_root_toeplitz", "banded", "dense")


def _size_text(nbytes: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} bytes"


def short_repr(value: Any) -> str:
    """One line for an error message: an array by its shape, anything else by a short repr."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."


def check_dense_size(rows: int, columns: int, what: str) -> None:
    """Refuse, before allocating, a float64 array of ``rows × columns`` above MAX_DENSE_BYTES."""
    nbytes = 8.0 * rows * columns
    if nbytes > MAX_DENSE_BYTES:
        raise InvalidParameterError(
            f"{what} needs a dense {rows} × {columns} array ({_size_text(nbytes)}), more than "
            f"the {_size_text(MAX_DENSE_BYTES)} allowed; use a Toeplitz or banded strategy, "
            "whose sensitivity needs no dense matrix"
        )


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=float, copy=True)
    array.flags.writeable = False
    return array


def _finite(name: str, array: np.ndarray) -> None:
    bad = ~np.isfinite(array)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = index[0] if len(index) == 1 else index
        raise InvalidParameterError(
            f"{name} must hold finite real numbers, got {float(array[index])!r} at index {where}"
        )


def _coefficients_array(name: str, values: Any) -> np.ndarray:
    if isinstance(values, (str, bytes, Mapping)):
        raise InvalidParameterError(f"{name} must be a sequence of real numbers, got {values!r}")
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"{name} must be a sequence of real numbers, got {values!r}"
        ) from None
    if array.ndim != 1 or array.size == 0:
        raise InvalidParameterError(
            f"{name} must be a non-empty one-dimensional sequence, got shape {array.shape}"
        )
    _finite(name, array)
    return array


@dataclass(frozen=True, eq=False, repr=False)
class Strategy:
    """A strategy matrix C with ``n`` columns (steps); immutable, hashable, compared by value.

    Build one with the constructors of :mod:`gaussdp.matrix` (:func:`identity`,
    :func:`prefix_sum`, :func:`tree`, :func:`toeplitz`,
    :func:`square_root_toeplitz`, :func:`banded`, :func:`dense`), not directly.

    Attributes
    ----------
    name : str
        Which constructor made it.
    n : int
        The number of steps (columns of C).
    coefficients : numpy.ndarray or None
        For a Toeplitz strategy, the first column c (length ≤ n; C[i, j] = c[i − j],
        zero beyond its length); None otherwise. Read-only.
    bands : int or None
        The number of non-zero diagonals from the main one down (C[i, j] = 0
        when i − j ≥ bands), when known; None otherwise.
    """

    name: str
    n: int
    coefficients: np.ndarray | None = None
    bands: int | None = None
    dense_matrix: np.ndarray | None = field(default=None)

    # ------------------------------------------------------------------ identity
    def __post_init__(self) -> None:
        def digest(array):
            if array is None:
                return None
            return (array.shape, hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest())

        key = (self.name, self.n, self.bands, digest(self.coefficients), digest(self.dense_matrix))
        object.__setattr__(self, "_identity", key)  # hashed once: a dense C can be large

    def _key(self) -> tuple:
        return self._identity

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Strategy):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"gaussdp.matrix.{self.describe()}"

    def describe(self) -> str:
        """A one-line description, e.g. ``'tree(n=1024)'``."""
        if self.name in ("identity", "prefix_sum", "tree"):
            return f"{self.name}(n={self.n})"
        if self.name == "square_root_toeplitz":
            bands = "" if self.bands is None or self.bands >= self.n else f", bands={self.bands}"
            return f"square_root_toeplitz(n={self.n}{bands})"
        if self.coefficients is not None:
            shown = ", ".join(f"{v:.4g}" for v in self.coefficients[:4])
            more = ", …" if self.coefficients.size > 4 else ""
            bands = "" if self.name == "toeplitz" else f", bands={self.bands}"
            return f"{self.name}([{shown}{more}], n={self.n}{bands})"
        bands = "" if self.name == "dense" else f", bands={self.bands}"
        return f"{self.name}({self.n} × {self.n} matrix{bands})"

    # ------------------------------------------------------------------ properties
    @property
    def is_toeplitz(self) -> bool:
        """Whether C is lower-triangular Toeplitz (its ``coefficients`` are known)."""
        return self.coefficients is not None

    @property
    def rows(self) -> int:
        """The number of rows of C (n, or the number of tree nodes for :func:`tree`)."""
        if self.name == "tree":
            return sum(self.n >> level for level in range(self.n.bit_length()))
        return self.n

    def is_nonnegative(self) -> bool:
        """Whether every entry of C is ≥ 0 (then CᵀC ≥ 0 entrywise too)."""
        if self.name in ("identity", "prefix_sum", "tree"):
            return True
        if self.coefficients is not None:
            return bool(np.all(self.coefficients >= 0))
        return bool(np.all(self.dense_matrix >= 0))

    def column_norms(self) -> np.ndarray:
        """‖C e_j‖ for every step j, without building C where a closed form exists."""
        n = self.n
        if self.name == "tree":
            steps = np.arange(n)
            count = np.zeros(n)
            for level in range(n.bit_length()):
                # the dyadic node of size 2^level holding step j is complete within n steps
                count += (((steps >> level) + 1) << level) <= n
            return np.sqrt(count)
        if self.coefficients is not None:
            squares = np.zeros(n)
            squares[: self.coefficients.size] = self.coefficients**2
            # column j sees c[0 .. n-1-j]
            return np.sqrt(np.cumsum(squares)[::-1])
        return np.linalg.norm(self.dense_matrix, axis=0)

    def matrix(self) -> np.ndarray:
        """C as a dense array (rows × n); refused with its size above :data:`MAX_DENSE_BYTES`."""
        n = self.n
        check_dense_size(self.rows, n, f"the strategy {self.describe()}")
        if self.dense_matrix is not None:
            return self.dense_matrix
        if self.name == "tree":
            rows = []
            steps = np.arange(n)
            for level in range(n.bit_length()):
                size = 1 << level
                for start in range(0, n - size + 1, size):
                    rows.append((steps >= start) & (steps < start + size))
            return np.array(rows, dtype=float)
        c = np.zeros(n)
        c[: min(n, self.coefficients.size)] = self.coefficients[:n]
        index = np.subtract.outer(np.arange(n), np.arange(n))
        return np.where(index >= 0, c[np.clip(index, 0, n - 1)], 0.0)

    def gram(self) -> np.ndarray:
        """G = CᵀC (n × n); refused with its size above :data:`MAX_DENSE_BYTES`."""
        n = self.n
        check_dense_size(n, n, f"the Gram matrix of {self.describe()}")
        if self.name == "tree":
            steps = np.arange(n)
            gram = np.zeros((n, n))
            for level in range(n.bit_length()):
                node = steps >> level
                complete = ((node + 1) << level) <= n
                gram += (node[:, None] == node[None, :]) & complete[:, None]
            return gram
        matrix = self.matrix()
        return matrix.T @ matrix

    def to_dict(self) -> dict[str, Any]:
        """A TOML/JSON-friendly table; :func:`strategy_from_dict` inverts it."""
        if self.name in ("identity", "prefix_sum", "tree"):
            return {"name": self.name, "n": self.n}
        if self.name == "square_root_toeplitz":
            result: dict[str, Any] = {"name": self.name, "n": self.n}
            if self.bands is not None and self.bands < self.n:
                result["bands"] = self.bands
            return result
        if self.coefficients is not None:
            result = {"name": self.name, "coefficients": self.coefficients.tolist(), "n": self.n}
        else:
            result = {"name": self.name, "matrix": self.dense_matrix.tolist()}
        if self.name == "banded":
            result["bands"] = self.bands
        return result


# ---------------------------------------------------------------------- constructors


def _steps(n: Any) -> int:
    return check_integer("n", n, low=1)


def identity(n: int) -> Strategy:
    """C = I (n × n): independent noise at every step, DP-SGD without sampling.

    Examples
    --------
    >>> identity(4).column_norms()
    array([1., 1., 1., 1.])
    """
    return Strategy("identity", _steps(n), _frozen([1.0]), bands=1)


def prefix_sum(n: int) -> Strategy:
    """C = the n × n lower-triangular matrix of ones (noise added to every prefix sum).

    Examples
    --------
    >>> float(prefix_sum(9).column_norms().max())
    3.0
    """
    n = _steps(n)
    return Strategy("prefix_sum", n, _frozen(np.ones(n)), bands=n)


def tree(n: int) -> Strategy:
    """Binary-tree aggregation over ``n`` steps (Dwork et al. 2010; Kairouz et al. 2021).

    C has one row per dyadic interval [a·2ˡ, (a + 1)·2ˡ) that is complete
    within the ``n`` steps; a step lies in at most ⌊log₂ n⌋ + 1 = ⌈log₂(n + 1)⌉
    of them, so the largest column norm is √⌈log₂(n + 1)⌉ (the first step's).
    C is not square; what the privacy depends on, CᵀC, is n × n.

    Examples
    --------
    >>> tree(8).rows, float(tree(8).column_norms().max() ** 2)
    (15, 4.0)
    """
    return Strategy("tree", _steps(n))


def toeplitz(coefficients: Any, n: int | None = None) -> Strategy:
    """The lower-triangular Toeplitz strategy C[i, j] = c[i − j] (zero beyond len(c)).

    Parameters
    ----------
    coefficients : sequence of float
        c, the first column of C; finite. Longer than ``n``: cut to ``n``.
    n : int, optional
        The number of steps; ``len(coefficients)`` when omitted.

    Examples
    --------
    >>> toeplitz([1.0, 0.5], n=3).matrix()
    array([[1. , 0. , 0. ],
           [0.5, 1. , 0. ],
           [0. , 0.5, 1. ]])
    """
    c = _coefficients_array("coefficients", coefficients)
    n = c.size if n is None else _steps(n)
    c = c[:n]
    nonzero = np.flatnonzero(c)
    bands = int(nonzero[-1]) + 1 if nonzero.size else 1
    return Strategy("toeplitz", n, _frozen(c), bands=bands)


def square_root_toeplitz_coefficients(n: int) -> np.ndarray:
    """c_k = C(2k, k)/4^k, k < n: the coefficients of (1 − x)^(−1/2).

    Computed by the recurrence c_0 = 1, c_k = c_{k−1}·(2k − 1)/(2k) (every
    factor in (0, 1): no overflow, relative error ≲ k·2⁻⁵³).

    Examples
    --------
    >>> square_root_toeplitz_coefficients(4)
    array([1.    , 0.5   , 0.375 , 0.3125])
    """
    n = _steps(n)
    k = np.arange(1, n)
    return np.concatenate([[1.0], np.cumprod((2.0 * k - 1.0) / (2.0 * k))])


def square_root_toeplitz(n: int, bands: int | None = None) -> Strategy:
    """The square root of the prefix sums: Toeplitz, c = the coefficients of (1 − x)^(−1/2).

    C·C equals the prefix-sum matrix (Fichtenberger, Henzinger and Upadhyay
    2023; Henzinger et al. 2024). With ``bands``, the coefficients from index
    ``bands`` on are set to zero (the banded square-root factorisation,
    Kalinin and Lampert 2024, arXiv 2405.13763).

    Examples
    --------
    >>> c = square_root_toeplitz(5).matrix()
    >>> bool(np.allclose(c @ c, prefix_sum(5).matrix()))
    True
    >>> square_root_toeplitz(5, bands=2).coefficients
    array([1. , 0.5])
    """
    n = _steps(n)
    if bands is not None:
        bands = check_integer("bands", bands, low=1)
    width = n if bands is None else min(bands, n)
    c = square_root_toeplitz_coefficients(width)
    return Strategy("square_root_toeplitz", n, _frozen(c), bands=width)


def _square_matrix(name: str, matrix: Any) -> np.ndarray:
    shape = np.shape(matrix)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] == 0:
        raise InvalidParameterError(f"{name} must be a non-empty square matrix, got shape {shape}")
    check_dense_size(shape[0], shape[1], name)
    try:
        array = np.asarray(matrix, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must hold real numbers") from None
    _finite(name, array)
    return array


def _lower_triangular(name: str, array: np.ndarray) -> None:
    upper = np.triu(array, 1)
    if np.any(upper != 0):
        i, j = (int(v) for v in np.argwhere(upper != 0)[0])
        raise InvalidParameterError(
            f"{name} must be lower-triangular (step j's noise cannot depend on later steps), "
            f"got {float(array[i, j])!r} at row {i}, column {j} above the diagonal"
        )


def dense(matrix: Any) -> Strategy:
    """Any lower-triangular n × n strategy C, given as an array (a jax_privacy matrix included).

    Raises
    ------
    InvalidParameterError
        If C is not square, too large (its size is named before it is copied),
        holds NaN or ±inf, or has a non-zero entry above the diagonal.

    Examples
    --------
    >>> dense([[1.0, 0.0], [-0.5, 1.0]]).n
    2
    """
    array = _square_matrix("matrix", matrix)
    _lower_triangular("matrix", array)
    n = array.shape[0]
    rows, columns = np.nonzero(array)
    bands = int((rows - columns).max()) + 1 if rows.size else 1
    return Strategy("dense", n, bands=bands, dense_matrix=_frozen(array))


def banded(matrix_or_coefficients: Any, bands: int, n: int | None = None) -> Strategy:
    """The ``bands``-banded strategy: C[i, j] = 0 when i − j ≥ ``bands``.

    Given Toeplitz coefficients (one-dimensional), they are cut after
    ``bands`` entries; given a lower-triangular matrix, its entries ``bands``
    or more diagonals below the main one are set to zero. A b-banded C has a
    Gram matrix that vanishes beyond b − 1 off the diagonal, so under
    b-min-separation the participations do not interact (the BandMF
    mechanism, Choquette-Choo et al. 2023, arXiv 2306.08153).

    Parameters
    ----------
    matrix_or_coefficients : array
        A lower-triangular n × n matrix, or Toeplitz coefficients c.
    bands : int
        b ≥ 1, the number of diagonals kept (b = 1: diagonal).
    n : int, optional
        The number of steps for coefficients (``len(c)`` when omitted); a
        matrix's own size otherwise (given, it must match).

    Examples
    --------
    >>> banded([1.0, 0.5, 0.25], bands=2).coefficients
    array([1. , 0.5])
    >>> banded([[1.0, 0.0, 0.0], [2.0, 1.0, 0.0], [3.0, 2.0, 1.0]], bands=2).matrix()[2]
    array([0., 2., 1.])
    """
    bands = check_integer("bands", bands, low=1)
    if np.ndim(matrix_or_coefficients) == 1 and not isinstance(
        matrix_or_coefficients, (str, bytes, Mapping)
    ):
        c = _coefficients_array("coefficients", matrix_or_coefficients)
        n = c.size if n is None else _steps(n)
        c = c[: min(bands, n)]
        return Strategy("banded", n, _frozen(c), bands=min(bands, n))
    array = _square_matrix("matrix", matrix_or_coefficients)
    _lower_triangular("matrix", array)
    size = array.shape[0]
    if n is not None and _steps(n) != size:
        raise InvalidParameterError(
            f"n must equal the matrix's size {size}, got {n} (n is the number of steps)"
        )
    array = np.tril(array) - np.tril(array, -bands)
    return Strategy("banded", size, bands=min(bands, size), dense_matrix=_frozen(array))


def strategy_from_dict(table: Any, where: str = "strategy") -> Strategy:
    """A strategy from its table, e.g. ``{"name": "tree", "n": 1024}`` (:meth:`Strategy.to_dict`).

    Keys: ``name`` (one of identity, prefix_sum, tree, toeplitz,
    square_root_toeplitz, banded, dense) and that constructor's arguments:
    ``n``; ``coefficients`` (toeplitz, banded); ``bands``
    (square_root_toeplitz, banded); ``matrix`` (dense, banded).

    Examples
    --------
    >>> strategy_from_dict({"name": "square_root_toeplitz", "n": 8, "bands": 2})
    gaussdp.matrix.square_root_toeplitz(n=8, bands=2)
    """
    if isinstance(table, Strategy):
        return table
    if not isinstance(table, Mapping):
        raise InvalidParameterError(
            f'{where} must be a strategy or a table such as {{name = "tree", n = 1024}}, '
            f"got {short_repr(table)}"
        )
    name = table.get("name")
    if name not in _NAMES:
        raise InvalidParameterError(
            f"{where}.name must be one of {', '.join(_NAMES)}, got {name!r}"
        )
    allowed = {
        "identity": ("n",),
        "prefix_sum": ("n",),
        "tree": ("n",),
        "toeplitz": ("coefficients", "n"),
        "square_root_toeplitz": ("n", "bands"),
        "banded": ("coefficients", "matrix", "bands", "n"),
        "dense": ("matrix",),
    }[name]
    for key in table:
        if key != "name" and key not in allowed:
            raise InvalidParameterError(
                f"{where}.{key}: unknown key for strategy {name!r}; allowed: {', '.join(allowed)}"
            )
    arguments = {key: table[key] for key in allowed if key in table}
    for key, value in arguments.items():
        if key in ("n", "bands") and (
            isinstance(value, bool) or not isinstance(value, numbers.Real)
        ):
            raise InvalidParameterError(f"{where}.{key} must be an integer >= 1, got {value!r}")
    try:
        if name == "banded":
            if ("coefficients" in arguments) == ("matrix" in arguments):
                raise InvalidParameterError("banded needs exactly one of coefficients and matrix")
            if "bands" not in arguments:
                raise InvalidParameterError("bands is missing (required for strategy 'banded')")
            source = arguments.get("coefficients", arguments.get("matrix"))
            return banded(source, arguments["bands"], arguments.get("n"))
        required = {"toeplitz": "coefficients", "dense": "matrix"}.get(name, "n")
        if required not in arguments:
            raise InvalidParameterError(f"{required} is missing (required for strategy {name!r})")
        return {
            "identity": identity,
            "prefix_sum": prefix_sum,
            "tree": tree,
            "toeplitz": toeplitz,
            "square_root_toeplitz": square_root_toeplitz,
            "dense": dense,
        }[name](**arguments)
    except InvalidParameterError as error:
        raise InvalidParameterError(f"{where}.{error}") from None
