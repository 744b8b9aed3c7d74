"""μ from the steep curve: the tight μ at a failure probability, and where rounding limits it.

The report's μ is the largest μ_j(δ_tail) over every test j of the accountant's
pessimistic curve (Gomez et al. 2025, Appendix B, eq. 29): the vertices of its
lower convex hull and the tests whose α underflows
(:class:`gaussdp.report._steep.SteepCurve`). :func:`fit` and :func:`fit_many`
compute it, :func:`why_infinite` says why it is ∞ and which δ_tail would help,
and :class:`RoundingLimit` records where the accountant's rounding allowances,
not the mechanism, set μ.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from gaussdp import gdp
from gaussdp._validation import InvalidParameterError
from gaussdp.report import _steep
from gaussdp.report.defaults import LARGEST_SUGGESTED_DELTA_TAIL
from gaussdp.report.render import up
from gaussdp.report.tight_mu import mu_of_tests

# Tests with α below this are also checked in log space (exp underflows near 1e-308).
_UNDERFLOW_ALPHA = 1e-290


class RoundingLimit(NamedTuple):
    """Where rounding, not the mechanism, sets μ (or makes it ∞).

    The accountant adds allowances to every true-positive rate (slack, the
    excess P-mass of curve pairs); where the curve's false-negative rate is no
    larger than them, the certified curve reaches β = 0 at a false-positive
    rate α₀ > 0 (TPR cut at 1). Its symmetric curve is then μ-GDP only for
    μ ≥ about −2Φ⁻¹(α₀/2), which can exceed what every ε row needs; and a
    test that still has TPR ≥ 1 at α₀ (or mass at α = 0 above δ_tail) makes μ
    infinite for every δ_tail below 1 − α₀.

    Attributes
    ----------
    log_alpha_zero : float
        log α₀ (natural log; −inf if the curve starts below 1 − δ_tail at α = 0).
    allowance : float
        slack + excess of the accountant's profiles.
    needed : float or None
        When μ = ∞: the smallest δ_tail for which a finite μ is possible at all.
    suggested_delta_tail, suggested_mu : float or None
        When μ = ∞: a δ_tail (at most :data:`LARGEST_SUGGESTED_DELTA_TAIL`)
        checked to give a finite μ, and that μ; None if there is none.
    """

    log_alpha_zero: float
    allowance: float
    needed: float | None = None
    suggested_delta_tail: float | None = None
    suggested_mu: float | None = None


def _guarantee_beta(mu: float, delta: float, alpha: np.ndarray) -> np.ndarray:
    """(1 − δ)·G_μ(α/(1 − δ)) for α ≤ 1 − δ, 0 beyond."""
    scale = 1.0 - delta
    inside = alpha < scale
    x = np.where(inside, alpha / scale, 0.5)
    if math.isinf(mu):
        values = np.where(x > 0.0, 0.0, 1.0)
    else:
        values = np.asarray(gdp.beta(mu, x), dtype=float)
    return np.where(inside, scale * values, 0.0)


def _guarantee_advantage(mu: float, delta: float) -> float:
    return float(min(delta + (1.0 - delta) * gdp.advantage(mu), 1.0))


def _candidates(steep: _steep.SteepCurve, directions: list[_steep.Direction]):
    """Tests whose μ is checked: the hull vertices, and tests whose α underflows."""
    alpha, log_alpha, tpr = [steep.alpha], [steep.log_alpha], [steep.tpr]
    limit = math.log(_UNDERFLOW_ALPHA)
    for d in directions:
        tiny = d.log_alpha < limit
        alpha.append(d.alpha[tiny])
        log_alpha.append(d.log_alpha[tiny])
        tpr.append(d.tpr[tiny])
    return np.concatenate(alpha), np.concatenate(log_alpha), np.concatenate(tpr)


#: Tests per block of :func:`_largest_mus`, from the coarsest (each a multiple of the next).
_BLOCKS = (1024, 16, 4)
#: The level whose blocks' first tests are evaluated to raise the known maximum.
_SAMPLED_BLOCK = 16


def _block_extremes(values: np.ndarray, size: int, reduce) -> np.ndarray:
    """``reduce`` over consecutive blocks of ``size`` values (the last one shorter)."""
    whole = values.size - values.size % size
    extremes = values[0:whole:size].copy()
    for offset in range(1, size):  # strided passes: a reduce along short rows is slow
        reduce(extremes, values[offset:whole:size], out=extremes)
    if whole < values.size:
        extremes = np.append(extremes, reduce.reduce(values[whole:]))
    return extremes


class _Tests(NamedTuple):
    """One group of tests (α, log α, t) with its blocks' smallest α and largest t.

    ``levels[i]`` holds (min α, min log α, max t) of the blocks of
    ``_BLOCKS[i]`` tests, each level reduced from the next finer one (fmin,
    fmax: a NaN test, whose μ is −inf, hides no other).
    """

    alpha: np.ndarray
    log_alpha: np.ndarray
    tpr: np.ndarray
    levels: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]

    @classmethod
    def of(cls, alpha, log_alpha, tpr) -> _Tests:
        levels = []
        current, size = (alpha, log_alpha, tpr), 1
        for block in reversed(_BLOCKS):
            factor = block // size
            current = (
                _block_extremes(current[0], factor, np.fmin),
                _block_extremes(current[1], factor, np.fmin),
                _block_extremes(current[2], factor, np.fmax),
            )
            levels.append(current)
            size = block
        return cls(alpha, log_alpha, tpr, tuple(reversed(levels)))


def _test_arrays(steep: _steep.SteepCurve, directions: list[_steep.Direction]) -> list[tuple]:
    """The tests of :func:`_candidates`, in groups (the hull, each direction's underflowing)."""
    groups = [(steep.alpha, steep.log_alpha, steep.tpr)]
    limit = math.log(_UNDERFLOW_ALPHA)
    for d in directions:
        tiny = d.log_alpha < limit
        groups.append((d.alpha[tiny], d.log_alpha[tiny], d.tpr[tiny]))
    return [group for group in groups if group[0].size]


#: Curves of at most this many tests are fitted by evaluating every test at once (one call
#: for all δ): on short runs' curves the blocks' summaries cost more than they save.
_EVALUATE_ALL_UP_TO = 4096


def _every_mu(arrays: list[tuple], deltas: list[float]) -> list[float]:
    """max_j μ_j(δ) over every test of ``arrays``, for each δ (what :func:`_largest_mus` finds)."""
    if not arrays:
        return [-math.inf for _ in deltas]
    alpha, log_alpha, tpr = (np.concatenate(parts) for parts in zip(*arrays, strict=True))
    count, size = len(deltas), alpha.size
    mus = mu_of_tests(
        np.tile(alpha, count),
        np.tile(log_alpha, count),
        np.tile(tpr, count),
        np.repeat(np.asarray(deltas, dtype=float), size),
    )
    return [float(row.max()) for row in mus.reshape(count, size)]


def _mus_at(arrays, indices: list[np.ndarray], deltas: np.ndarray) -> list[np.ndarray]:
    """μ_j(δ_i) of the tests ``indices[i]`` of (α, log α, t) ``arrays``, one call for all δ."""
    sizes = [index.size for index in indices]
    if not sum(sizes):
        return [np.empty(0) for _ in indices]
    every = np.concatenate(indices)
    alpha, log_alpha, tpr = (values[every] for values in arrays)
    mus = mu_of_tests(alpha, log_alpha, tpr, np.repeat(deltas, sizes))
    return np.split(mus, np.cumsum(sizes)[:-1])


def _largest_mus(groups: list[_Tests], deltas: list[float]) -> list[float]:
    """max_j μ_j(δ) over the tests of :func:`_candidates`, for each δ, evaluating few of them.

    μ(α, t), the smallest μ whose Ŝ_μ reaches t at α, is non-decreasing in t
    and non-increasing in α (Ŝ_μ(α) increases in both μ and α), so on a block
    of tests μ(min α, max t) bounds every μ_j from above. Blocks whose bound
    is below the largest μ evaluated so far (less a margin for rounding)
    cannot hold the maximum: from the coarsest blocks down, those that remain
    are split into the next finer ones, and the tests of the finest blocks
    left are evaluated. The maximum known is raised on the way by the first
    test of every remaining block of :data:`_SAMPLED_BLOCK`. The value is that
    of evaluating every test. The δ's go through each step together (one
    evaluation of their tests), each with its own blocks.
    """
    values = np.asarray(deltas, dtype=float)
    best = np.full(values.size, -math.inf)

    def raise_best(found: list[np.ndarray]) -> None:
        for number, mus in enumerate(found):
            if mus.size:
                best[number] = max(best[number], float(np.max(mus)))

    def reach() -> np.ndarray:
        with np.errstate(invalid="ignore"):  # ∞ − ∞ where best is infinite: not selected
            return np.where(np.isfinite(best), best - 1e-9 * (1.0 + np.abs(best)), best)

    # kept[g][i]: the blocks of group g still open for δ_i, at the current level
    kept = [[np.arange(group.levels[0][0].size) for _ in deltas] for group in groups]
    for group, blocks in zip(groups, kept, strict=True):
        tests = [open_blocks * _BLOCKS[0] for open_blocks in blocks]
        raise_best(_mus_at((group.alpha, group.log_alpha, group.tpr), tests, values))
    for level, size in enumerate(_BLOCKS):
        if size == _SAMPLED_BLOCK:
            for group, blocks in zip(groups, kept, strict=True):
                tests = [open_blocks * size for open_blocks in blocks]
                raise_best(_mus_at((group.alpha, group.log_alpha, group.tpr), tests, values))
        finer = _BLOCKS[level + 1] if level + 1 < len(_BLOCKS) else 1
        for number, group in enumerate(groups):
            bounds = _mus_at(group.levels[level], kept[number], values)
            limit = group.levels[level + 1][0].size if finer > 1 else group.alpha.size
            margins = reach()
            for i, (blocks, bound) in enumerate(zip(kept[number], bounds, strict=True)):
                blocks = blocks[~(bound < margins[i])]  # NaN bounds are kept
                children = (blocks[:, None] * (size // finer) + np.arange(size // finer)).ravel()
                kept[number][i] = children[children < limit]
    for group, tests in zip(groups, kept, strict=True):
        raise_best(_mus_at((group.alpha, group.log_alpha, group.tpr), tests, values))
    return [float(value) for value in best]


def fit(steep: _steep.SteepCurve, directions: list[_steep.Direction], delta_tail: float) -> float:
    """The tight μ of the pessimistic steep curve with failure probability ``delta_tail``.

    μ = the largest μ_j(δ_tail) over every test j of the curve
    (:func:`gaussdp.report.tight_mu.mu_of_tests`, maximised by
    :func:`_largest_mus`), so that f ≥ G_μ ⊗ f_{0,δ_tail} holds on the whole
    certified curve.
    """
    return fit_many(steep, directions, [delta_tail])[delta_tail]


def fit_many(
    steep: _steep.SteepCurve, directions: list[_steep.Direction], delta_tails: list[float]
) -> dict[float, float]:
    """:func:`fit` at several δ_tail, the tests' blocks summarised once."""
    for value in delta_tails:
        if value < steep.floor:
            raise InvalidParameterError(
                f"delta_tail must be at least the accountant's numerical floor {steep.floor:.3g} "
                f"(mass at infinite loss plus certified slack), got {value!r}"
            )
    arrays = _test_arrays(steep, directions)
    if sum(group[0].size for group in arrays) <= _EVALUATE_ALL_UP_TO:
        found = _every_mu(arrays, list(delta_tails))
    else:
        found = _largest_mus([_Tests.of(*group) for group in arrays], list(delta_tails))
    return {value: float(max(mu, 0.0)) for value, mu in zip(delta_tails, found, strict=True)}


def why_infinite(
    steep: _steep.SteepCurve, directions: list[_steep.Direction], failure: float
) -> RoundingLimit | None:
    """Why μ is ∞ with failure probability ``failure``, and which δ_tail (if any) helps.

    A test needs μ = ∞ when G_μ ⊗ f_{0,δ} can never reach it: its
    true-positive rate is (numerically) 1 at a false-positive rate α < 1 − δ,
    or it has α = 0 and a true-positive rate above δ. The first needs
    δ ≥ 1 − α, the second δ ≥ t; a larger δ_tail is suggested only if it is
    at most :data:`LARGEST_SUGGESTED_DELTA_TAIL` and :func:`fit` with it
    (rounded up as printed) really gives a finite μ.
    """
    alpha, log_alpha, tpr = _candidates(steep, directions)
    blocking = mu_of_tests(alpha, log_alpha, tpr, failure) == math.inf
    if not np.any(blocking):
        return None
    at_zero = blocking & np.isneginf(log_alpha)
    positive = blocking & ~np.isneginf(log_alpha)
    needed = 0.0
    if np.any(at_zero):
        needed = float(np.max(tpr[at_zero]))
    log_alpha_zero = -math.inf
    if np.any(positive):
        log_alpha_zero = float(np.min(log_alpha[positive]))
        needed = max(needed, float(np.max(-np.expm1(log_alpha[positive]))))
    info = RoundingLimit(log_alpha_zero, steep.slack + steep.excess, needed)
    if needed < LARGEST_SUGGESTED_DELTA_TAIL:
        candidate = max(float(up(needed * (1.0 + 1e-9), 2)), steep.floor)
        if candidate < 1.0:
            mu = fit(steep, directions, candidate)
            if math.isfinite(mu):
                info = RoundingLimit(log_alpha_zero, info.allowance, needed, candidate, mu)
    return info


def _cut_sets_mu(steep: _steep.SteepCurve, mu: float, failure: float, rows) -> RoundingLimit | None:
    """A :class:`RoundingLimit` if the cut at TPR 1 sets μ above what every ε row needs."""
    log_cut = steep.log_alpha_one
    if log_cut is None:
        return None
    at_cut = float(
        mu_of_tests(np.array([math.exp(log_cut)]), np.array([log_cut]), np.ones(1), failure)[0]
    )
    needed = max((row.mu_at_delta for row in rows), default=0.0)
    if at_cut < mu * (1.0 - 1e-9) or not mu > needed * (1.0 + 1e-6):
        return None
    return RoundingLimit(log_cut, steep.slack + steep.excess)
