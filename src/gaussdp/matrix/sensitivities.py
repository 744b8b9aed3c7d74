r"""The L2 sensitivity of a strategy under a participation schema: exact, or an upper bound.

One record contributes gradients g_t with ‖g_t‖ ≤ 1 at the steps t of one
participation pattern π and nothing elsewhere. Two neighbouring runs differ by
D = Σ_{t∈π} C e_t d_tᵀ with ‖d_t‖ ≤ 1 (d_t = g_t, add/remove), so

.. math::

    ‖D‖_F^2 = \sum_{s,t \in π} G_{st} \langle d_s, d_t \rangle, \qquad G = C^\top C,

and the sensitivity is Δ = max over π and such d of ‖D‖_F. Only the entries of
G on pairs of steps that one pattern can hold matter.

* If those entries are all ≥ 0 (true when C ≥ 0: identity, prefix sums, tree,
  square-root Toeplitz, non-negative Toeplitz or banded), then by
  Cauchy–Schwarz ⟨d_s, d_t⟩ ≤ 1 and the maximum is attained by d_t all equal to
  one unit vector: Δ² = max_π Σ_{s,t∈π} G_st = max_{u∈Π} uᵀGu over 0/1
  vectors u (Choquette-Choo, McMahan, Rush and Thakurta 2023, arXiv
  2211.06530, Section 2; Choquette-Choo et al. 2023, arXiv 2306.08153,
  Eq. (5)).
* In general Δ² ≤ max_{u∈Π} uᵀ|G|u, the same bound with |G| (ibid., Eq. (5)):
  an upper bound, labelled so.

Exact routes used (each a theorem, never a heuristic):

1. one participation (or k = 1, or b ≥ n): Δ = the largest column norm of C;
2. G zero for steps b or more apart (C with at most b bands, BandMF):
   participations do not interact, Δ² = max_π Σ_{t∈π} G_tt, a dynamic program
   over the diagonal (arXiv 2306.08153, Theorem 2 there; exact for any signs);
3. Toeplitz C with non-negative, non-increasing coefficients under
   b-min-separation: the steps 0, b, …, (k − 1)b are a worst case (Kalinin and
   Lampert 2024, arXiv 2405.13763, Theorem 2), computed in O(n);
4. fixed epochs with G ≥ 0 on every pair a pattern holds: all n/k patterns
   evaluated;
5. min-separation with G ≥ 0 on every pair a pattern holds and few patterns
   (n small): every pattern evaluated;
6. min-separation with G ≥ 0 on those pairs: the upper bound below, when a
   pattern attains it (checked against every shift of the evenly spaced
   pattern).

Otherwise the value is the upper bound of arXiv 2306.08153, Algorithm 4 (for
each row the best pattern by dynamic programming, then the best pattern of
those row maxima), applied to |G| with the entries no pattern can hold (two
different steps less than b apart) set to zero, which leaves every uᵀ|G|u over
patterns unchanged; exact=False then, with the best lower bound found.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from gaussdp._numerics import UNIT_ROUNDOFF
from gaussdp._validation import InvalidParameterError
from gaussdp.matrix.participation import (
    FixedEpochs,
    MinSeparation,
    Participation,
    SingleParticipation,
)
from gaussdp.matrix.strategies import Strategy, short_repr

__all__ = ["EXHAUSTIVE_PATTERNS", "Sensitivity", "sensitivity"]

#: The most participation patterns :func:`sensitivity` evaluates one by one.
EXHAUSTIVE_PATTERNS = 200_000

# Relative slack under which an upper bound counts as attained (floating-point sums of the
# same non-negative terms in different orders differ by a few ulps per term).
_ATTAINED = 1e-12
# Rows of |G| handed to the dynamic program at once (bounds its working memory).
_ROWS_AT_ONCE = 256
# The most entries of the 0/1 pattern matrix built for an exhaustive search.
_EXHAUSTIVE_ENTRIES = 20_000_000


@dataclass(frozen=True)
class Sensitivity:
    """The L2 sensitivity Δ of a strategy under a participation schema.

    Attributes
    ----------
    value : float
        Δ, exact (``exact=True``, up to floating-point rounding, which is
        rounded up: see :func:`sensitivity`) or an upper bound on it
        (``exact=False``): never below the true sensitivity.
    exact : bool
        Whether a theorem makes ``value`` the sensitivity itself.
    method : str
        How it was obtained, with its source.
    lower : float
        A lower bound: the value of a participation pattern (equal to ``value``
        when exact).
    """

    value: float
    exact: bool
    method: str
    lower: float

    def __float__(self) -> float:
        return self.value


# ---------------------------------------------------------------------- dynamic programs


def linear_max(weights: np.ndarray, separation: int, participations: int) -> np.ndarray:
    """max over patterns u (≤ k ones, any two ≥ b apart) of ⟨w, u⟩, for each row w.

    The dynamic program of arXiv 2306.08153, Algorithm 3 (VecSens),
    vectorised over the rows of ``weights`` (shape (..., n)): O(n·k) per row.

    Examples
    --------
    >>> float(linear_max(np.array([3.0, 5.0, 4.0, 1.0]), separation=2, participations=2))
    7.0
    """
    weights = np.asarray(weights, dtype=float)
    n = weights.shape[-1]
    if separation == 1:  # no separation: the k largest positive entries, O(n log n)
        top = -np.sort(-weights, axis=-1)[..., :participations]
        return np.maximum(top, 0.0).sum(axis=-1)
    best = np.zeros((*weights.shape[:-1], n + separation))
    for _ in range(participations):
        best[..., :n] = weights + best[..., separation : separation + n]
        best = np.maximum.accumulate(best[..., ::-1], axis=-1)[..., ::-1]
    return best[..., 0]


def _spaced(strategy_n: int, separation: int, participations: int) -> np.ndarray:
    """Index arrays of every shift s of the pattern s, s + b, …, s + (k − 1)b inside n."""
    span = (participations - 1) * separation
    starts = np.arange(strategy_n - span)
    return starts[:, None] + separation * np.arange(participations)[None, :]


def _pattern_values(gram: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """uᵀGu for each pattern given as a row of indices."""
    return gram[patterns[:, :, None], patterns[:, None, :]].sum(axis=(1, 2))


def _count_patterns(n: int, separation: int, participations: int) -> float:
    """How many non-empty min-separation patterns there are (a float: large counts are inexact).

    N_j(t), the patterns of exactly j participations among steps ≥ t, satisfies
    N_j(t) = N_j(t + 1) + N_{j−1}(t + b), N_0 = 1.
    """
    previous = np.ones(n + separation)
    total = 0.0
    for _ in range(participations):
        shifted = np.zeros(n + separation)
        shifted[:n] = previous[separation : separation + n]
        with np.errstate(over="ignore"):  # an overflow to inf only says "too many"
            current = np.cumsum(shifted[::-1])[::-1]
        total += float(current[0])
        previous = current
    return total


def _signed_lower(gram: np.ndarray, patterns: np.ndarray, budget: int = 4_000_000) -> float:
    """max of vᵀGv over v ∈ {−1, 0, 1}ⁿ supported on a pattern: the value of a real pair of
    neighbouring runs (gradients ±e), so a lower bound on Δ² (patterns where affordable)."""
    best = 0.0
    sizes = patterns.sum(axis=1).astype(int)
    for size in np.unique(sizes):
        rows = patterns[sizes == size]
        if rows.shape[0] * 2 ** (size - 1) * size * size > budget:
            continue
        index = np.nonzero(rows)[1].reshape(rows.shape[0], size)
        sub = gram[index[:, :, None], index[:, None, :]]
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=size - 1)))
        signs = np.hstack([np.ones((signs.shape[0], 1)), signs]) if size > 1 else np.ones((1, 1))
        values = np.einsum("si,mij,sj->ms", signs, sub, signs)
        best = max(best, float(values.max()))
    return best


def _all_patterns(n: int, separation: int, participations: int) -> np.ndarray:
    """Every maximal-by-length min-separation pattern as 0/1 rows (the empty one left out)."""
    rows: list[list[int]] = []

    def extend(prefix: list[int], start: int) -> None:
        for step in range(start, n):
            pattern = [*prefix, step]
            rows.append(pattern)
            if len(pattern) < participations:
                extend(pattern, step + separation)

    extend([], 0)
    matrix = np.zeros((len(rows), n))
    for index, pattern in enumerate(rows):
        matrix[index, pattern] = 1.0
    return matrix


# ---------------------------------------------------------------------- the cases


def _single(strategy: Strategy, why: str) -> Sensitivity:
    value = float(strategy.column_norms().max())
    return Sensitivity(value, True, f"{why}: the largest column norm of C (exact)", value)


def _toeplitz_spaced(coefficients: np.ndarray, n: int, separation: int, k: int) -> float:
    """‖C u‖ for u = steps 0, b, …, (k − 1)b of a Toeplitz C, in O(n) (difference of cumsums)."""
    padding = (-n) % separation
    c = np.zeros(n + padding)
    c[: min(n, coefficients.size)] = coefficients[:n]
    every = c.reshape(-1, separation).cumsum(axis=0).ravel()  # participations at 0, b, 2b, ...
    column = every.copy()
    column[separation * k :] -= every[: every.size - separation * k]
    column = column[:n]
    return math.sqrt(float(column @ column))


def _non_increasing(coefficients: np.ndarray) -> bool:
    return bool(np.all(coefficients >= 0) and np.all(np.diff(coefficients) <= 0))


def _fixed_epochs(strategy: Strategy, epochs: int) -> Sensitivity:
    n = strategy.n
    length = n // epochs
    if strategy.is_toeplitz and _non_increasing(strategy.coefficients):
        # G ≥ 0, and the pattern starting at step i is the one at step 0 cut to n − i steps
        value = _toeplitz_spaced(strategy.coefficients, n, length, epochs)
        method = (
            f"{epochs} fixed epochs on a Toeplitz strategy with non-negative coefficients: "
            "CᵀC ≥ 0, and the pattern starting at the first step is the largest (exact; "
            "arXiv 2211.06530, Section 2)"
        )
        return Sensitivity(value, True, method, value)
    gram = strategy.gram()
    blocks = gram.reshape(epochs, length, epochs, length)
    signed = np.einsum("aibi->i", blocks)
    absolute = np.einsum("aibi->i", np.abs(blocks))
    negative = np.einsum("aibi->i", np.minimum(blocks, 0.0))
    best = int(np.argmax(absolute))
    value = math.sqrt(float(absolute[best]))
    lower = math.sqrt(max(float(signed.max()), 0.0))
    if negative.any() and lower >= value * (1.0 - _ATTAINED):
        value = max(value, lower)
        method = (
            f"{epochs} fixed epochs: the upper bound max over the patterns of √(uᵀ|CᵀC|u) "
            "(arXiv 2306.08153, Eq. (5)) is attained by one pattern (exact)"
        )
        return Sensitivity(value, True, method, value)
    if not negative.any():
        method = (
            f"{epochs} fixed epochs: all {length} patterns evaluated, CᵀC ≥ 0 on every pair "
            "of steps a pattern holds (exact; arXiv 2211.06530, Section 2)"
        )
        return Sensitivity(value, True, method, value)
    method = (
        f"{epochs} fixed epochs, CᵀC has negative entries on pairs a pattern holds: upper "
        "bound max over the patterns of √(uᵀ|CᵀC|u) (arXiv 2306.08153, Eq. (5)); "
        f"the true value is at least {lower:.6g}"
    )
    return Sensitivity(value, False, method, lower)


def _min_separation(strategy: Strategy, b: int, k: int) -> Sensitivity:
    n = strategy.n
    spacing = f"at most {k} participations {b} or more steps apart"
    if strategy.bands is not None and strategy.bands <= b:
        squares = strategy.column_norms() ** 2
        value = math.sqrt(float(linear_max(squares, b, k)))
        method = (
            f"{spacing} on a strategy with {strategy.bands} ≤ {b} bands: CᵀC vanishes between "
            "steps a pattern holds, Δ² = the largest sum of squared column norms over patterns, "
            "by dynamic programming (exact; arXiv 2306.08153)"
        )
        return Sensitivity(value, True, method, value)
    if strategy.is_toeplitz and _non_increasing(strategy.coefficients):
        value = _toeplitz_spaced(strategy.coefficients, n, b, k)
        method = (
            f"{spacing} on a Toeplitz strategy with non-negative non-increasing coefficients: "
            f"the steps 0, {b}, …, {(k - 1) * b} are a worst case (exact; Kalinin and "
            "Lampert 2024, arXiv 2405.13763, Theorem 2)"
        )
        return Sensitivity(value, True, method, value)

    gram = strategy.gram()  # a new array (never the strategy's own): changed in place below
    if not gram.flags.writeable:  # pragma: no cover - gram() builds a new array
        gram = gram.copy()
    diagonal = np.diag(gram).copy()
    for offset in range(1, min(b, n)):  # pairs no pattern holds: two steps under b apart
        rows = np.arange(n - offset)
        gram[rows, rows + offset] = 0.0
        gram[rows + offset, rows] = 0.0
    nonnegative = not np.any(gram < 0)
    # G zero between steps b or more apart (any signs): only the diagonal counts
    far = (np.any(np.triu(gram[s : s + _ROWS_AT_ONCE], b + s)) for s in range(0, n, _ROWS_AT_ONCE))
    if not any(far):
        value = math.sqrt(float(linear_max(diagonal, b, k)))
        method = (
            f"{spacing}: CᵀC vanishes between steps a pattern holds, Δ² = the largest sum of "
            "squared column norms over patterns, by dynamic programming (exact; "
            "arXiv 2306.08153)"
        )
        return Sensitivity(value, True, method, value)
    spaced = _spaced(n, b, k)
    lower_sq = float(_pattern_values(gram, spaced).max()) if spaced.size else 0.0

    count = _count_patterns(n, b, k)
    if count <= EXHAUSTIVE_PATTERNS and count * n <= _EXHAUSTIVE_ENTRIES:
        count = int(count)
        patterns = _all_patterns(n, b, k)
        values = np.einsum("pi,ij,pj->p", patterns, np.abs(gram), patterns)
        value = math.sqrt(float(values.max()))
        if nonnegative:
            method = (
                f"{spacing}: all {count} patterns evaluated, CᵀC ≥ 0 on every pair of "
                "steps a pattern holds (exact; arXiv 2211.06530, Section 2)"
            )
            return Sensitivity(value, True, method, value)
        lower_sq = max(_signed_lower(gram, patterns), lower_sq, 0.0)
        lower = math.sqrt(lower_sq)
        if lower_sq >= value**2 * (1.0 - _ATTAINED):
            value = max(value, lower)
            method = (
                f"{spacing}: the upper bound max over all {count} patterns of √(uᵀ|CᵀC|u) "
                "(arXiv 2306.08153, Eq. (5)) is attained by gradients ±e on one pattern (exact)"
            )
            return Sensitivity(value, True, method, value)
        method = (
            f"{spacing}, CᵀC has negative entries on pairs a pattern holds: upper bound "
            f"max over all {count} patterns of √(uᵀ|CᵀC|u) (arXiv 2306.08153, Eq. (5)); "
            f"the true value is at least {lower:.6g}"
        )
        return Sensitivity(value, False, method, lower)

    absolute = np.abs(gram, out=gram)  # the signed values are no longer needed
    rows = np.concatenate(
        [
            linear_max(absolute[start : start + _ROWS_AT_ONCE], b, k)
            for start in range(0, n, _ROWS_AT_ONCE)
        ]
    )
    upper_sq = float(linear_max(rows, b, k))
    value = math.sqrt(upper_sq)
    if nonnegative and upper_sq <= lower_sq * (1.0 + _ATTAINED):
        value = math.sqrt(max(upper_sq, lower_sq))
        method = (
            f"{spacing}: CᵀC ≥ 0 on every pair of steps a pattern holds, and the upper bound "
            "of arXiv 2306.08153, Algorithm 4 is attained by evenly spaced participations "
            "(exact)"
        )
        return Sensitivity(value, True, method, value)
    lower = math.sqrt(max(lower_sq, 0.0))
    signs = "" if nonnegative else ", CᵀC has negative entries on pairs a pattern holds"
    method = (
        f"{spacing}{signs}: upper bound of arXiv 2306.08153, Algorithm 4 on |CᵀC| "
        f"(not exact; the true value is at least {lower:.6g})"
    )
    return Sensitivity(value, False, method, lower)


def sensitivity(strategy: Strategy, participation: Participation) -> Sensitivity:
    """The L2 sensitivity Δ of ``strategy`` under ``participation``: exact or an upper bound.

    See the module docstring for the mathematics and the theorems used; an
    answer is ``exact=True`` only where one of them applies, and is otherwise
    a certified upper bound (``exact=False``), never a value that may be
    below the truth. Adaptively chosen gradients are included (Denisov et
    al. 2022, arXiv 2202.08312; Choquette-Choo et al. 2023, arXiv 2211.06530).

    Parameters
    ----------
    strategy : Strategy
        From :func:`gaussdp.matrix.tree` and the other constructors.
    participation : Participation
        :class:`SingleParticipation`, :class:`MinSeparation` or :class:`FixedEpochs`.

    Returns
    -------
    Sensitivity
        ``value``, ``exact``, ``method`` and ``lower``.

    Raises
    ------
    InvalidParameterError
        If the schema does not fit the strategy's n steps, or a dense Gram
        matrix would be too large (named with its size, before allocating).

    Examples
    --------
    >>> from gaussdp.matrix import MinSeparation, identity, prefix_sum, tree
    >>> round(sensitivity(identity(100), MinSeparation(10, 4)).value, 12)  # rounded up: 2 + 5e-14
    2.0
    >>> s = sensitivity(tree(1023), SingleParticipation())
    >>> round(s.value ** 2, 12), s.exact
    (10.0, True)
    >>> round(sensitivity(prefix_sum(9), MinSeparation(3, 3)).value ** 2, 9)   # 1+1+1+4+4+4+9+9+9
    42.0
    """
    if not isinstance(strategy, Strategy):
        raise InvalidParameterError(
            f"strategy must be a gaussdp.matrix strategy (tree(n), toeplitz(c, n), dense(C), "
            f"...), got {short_repr(strategy)}"
        )
    if not isinstance(participation, Participation):
        raise InvalidParameterError(
            "participation must be SingleParticipation(), MinSeparation(b, k) or "
            f"FixedEpochs(k), got {short_repr(participation)}"
        )
    n = strategy.n
    participation.check(n)
    if isinstance(participation, SingleParticipation):
        return _rounded_up(_single(strategy, "single participation"), n, 1)
    if isinstance(participation, FixedEpochs):
        if participation.epochs == 1:
            return _rounded_up(_single(strategy, "one epoch"), n, 1)
        return _rounded_up(_fixed_epochs(strategy, participation.epochs), n, participation.epochs)
    if isinstance(participation, MinSeparation):
        k = participation.effective(n)
        if k == 1:
            return _rounded_up(_single(strategy, "one participation fits"), n, 1)
        return _rounded_up(_min_separation(strategy, participation.separation, k), n, k)
    raise InvalidParameterError(  # pragma: no cover - a new schema without a rule
        f"participation {participation!r} has no sensitivity rule"
    )


def _rounded_up(result: Sensitivity, n: int, participations: int) -> Sensitivity:
    """``result`` with Δ moved up, and its witness down, by their floating-point rounding.

    Δ² is a sum of at most k² non-negative terms (k participations; Gram
    entries, or |Gram| entries for a bound), each a dot product of at most n
    products of entries: computed within a relative (n + k² + 2)·u of the
    exact sum of the entries as stored (u the unit roundoff, Higham,
    *Accuracy and Stability of Numerical Algorithms*, §3.1), and Δ = √Δ²
    within half that plus u. So Δ·(1 + (n + k² + 4)·u) is never below the
    sensitivity of the stored strategy, and the witness times (1 − that) never
    above it.
    """
    relative = (n + participations * participations + 4) * UNIT_ROUNDOFF
    return replace(
        result, value=result.value * (1.0 + relative), lower=result.lower * (1.0 - relative)
    )
