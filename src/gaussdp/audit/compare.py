"""Testing an audit's evidence against a claimed trade-off curve: violation and p-value.

A claim "the mechanism is f-DP" (for the accountant, f is its certified,
pessimistic curve, :meth:`gaussdp.Accounting.tradeoff`) says every test of
neighbouring outputs has ``FNR >= f(FPR)``; over a symmetric neighbouring
relation also ``FPR >= f(FNR)``. An audit's certified point
``(FPR_ub, FNR_ub)`` with ``FNR_ub < f(FPR_ub)`` (or ``FPR_ub < f(FNR_ub)``)
is impossible under the claim unless a confidence bound failed, which happens
with probability at most the audit's α: the claim is **violated** at level α.

The **p-value** is the smallest α at which the audit, rerun on the same data
with the same thresholds and corrections, reports a violation. Confidence
boxes shrink as α grows, so the set of such α is an interval ``[p, 1)`` and
``P[p <= α] <= α`` whenever the claim is true: a valid p-value. It is found by
bisection on log α (32 steps) and rounded up. With many thresholds the
bisection runs on a few of the deepest violating points, and its answer is
checked against all the others at one level (the largest it found no violation
at): the same p as a bisection over all of them, at the cost of a few.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from gaussdp._validation import InvalidParameterError
from gaussdp.audit.binomial import EXACT_LIMIT, clopper_pearson_upper
from gaussdp.audit.one_run_tests import curve_blow_up_inverse, mmc_rejects
from gaussdp.audit.search import BLOCKS, Segments, cut_runs, run_indices, top_estimates

__all__ = ["CountsEvidence", "OneRunEvidence", "check_against", "p_value", "resolve_accounting"]

#: Smallest α the p-value search looks at; a smaller p-value is reported as this.
P_FLOOR = 1e-300

#: How many of the deepest violating points the p-value search starts from.
CHAMPIONS = 8


def check_against(against) -> None:
    """``against`` must be None, a mechanism or pipeline, or an Accounting (checked, not run)."""
    from gaussdp.mechanisms import Mechanism, Pipeline

    if against is None or isinstance(against, (Mechanism, Pipeline)):
        return
    if hasattr(against, "tradeoff") and hasattr(against, "gdp"):
        return
    raise InvalidParameterError(
        f"against must be a mechanism or an Accounting, got {type(against).__name__}"
    )


def resolve_accounting(against):
    """An Accounting from ``against``: an Accounting as is, a mechanism or pipeline accounted."""
    from gaussdp.accountant import account
    from gaussdp.mechanisms import Mechanism, Pipeline

    if hasattr(against, "tradeoff") and hasattr(against, "gdp"):
        return against
    if not isinstance(against, (Mechanism, Pipeline)):
        raise InvalidParameterError(
            f"against must be a mechanism or an Accounting, got {type(against).__name__}"
        )
    return account(against)


def _below(curve, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Points (x, y) strictly below the curve, in either orientation."""
    x = np.clip(x, 0.0, 1.0)
    y = np.clip(y, 0.0, 1.0)
    fx = np.asarray(curve.beta(x), dtype=float)
    fy = np.asarray(curve.beta(y), dtype=float)
    margin = 1e-12
    return (y < fx - margin) | (x < fy - margin)


def _monotone(fp: np.ndarray, fn: np.ndarray) -> bool:
    """Counts along a front: false positives non-increasing, false negatives non-decreasing."""
    return bool(np.all(fp[1:] <= fp[:-1]) and np.all(fn[1:] >= fn[:-1]))


def _depth(curve, fpr: np.ndarray, fnr: np.ndarray) -> np.ndarray:
    """How far below ``curve`` each point lies, in either orientation (decreasing in both)."""
    return np.maximum(
        np.asarray(curve.beta(np.clip(fpr, 0.0, 1.0)), dtype=float) - fnr,
        np.asarray(curve.beta(np.clip(fnr, 0.0, 1.0)), dtype=float) - fpr,
    )


def _deepest(curve, fpr: np.ndarray, fnr: np.ndarray) -> np.ndarray:
    """Positions of the (at most) :data:`CHAMPIONS` points furthest below ``curve``."""
    depth = _depth(curve, fpr, fnr)
    if depth.size <= CHAMPIONS:
        return np.arange(depth.size)
    return np.argpartition(-depth, CHAMPIONS - 1)[:CHAMPIONS]


@dataclass(frozen=True)
class CountsEvidence:
    """Error counts at candidate thresholds, each bound at ``alpha / divisor``."""

    false_positives: np.ndarray
    negatives: int
    false_negatives: np.ndarray
    positives: int
    divisor: float

    def violating(self, curve, alpha: float, indices: np.ndarray | None = None) -> np.ndarray:
        """Indices of candidates whose certified corner lies below ``curve`` at level α."""
        level = alpha / self.divisor
        return self._exact(curve, level, self._shortlist(curve, level, indices))

    def _shortlist(self, curve, level: float, indices: np.ndarray | None = None) -> np.ndarray:
        """The candidates :meth:`violating` checks exactly (all, unless there are many)."""
        if indices is None:
            indices = np.arange(self.false_positives.size)
        if indices.size == 0:
            return indices
        fp = self.false_positives[indices]
        fn = self.false_negatives[indices]
        if indices.size > EXACT_LIMIT and _monotone(fp, fn):
            # Certified lower brackets of the bounds (per segment of the front, where both
            # counts stay in one grid cell): a point is below the curve only if its brackets
            # are. Of those, the ones furthest below (by the interpolated estimates) are
            # checked exactly; any violation found is a valid one.
            segments = Segments(fp, self.negatives, fn, self.positives, level)
            screened = np.flatnonzero(_below(curve, segments.fpr_lo, segments.fnr_lo))
            if segments.lengths[screened].sum() > EXACT_LIMIT:
                # the EXACT_LIMIT deepest by the estimates (depth decreases in both rates)
                maybe = top_estimates(
                    functools.partial(_depth, curve),
                    fp,
                    fn,
                    segments.fp_table,
                    segments.fn_table,
                    EXACT_LIMIT,
                    segments.starts[screened],
                    segments.lengths[screened],
                )
            else:
                maybe = segments.members(screened)[0]
            return indices[maybe]
        return indices

    def _exact(self, curve, level: float, indices: np.ndarray) -> np.ndarray:
        """The candidates whose exact certified corner lies below ``curve``.

        On a run of consecutive front candidates the corners are at least the run's
        *ideal corner* (the bounds at its smallest fp and its smallest fn, both
        monotone in the counts), so a run whose ideal corner is not below the curve
        holds no violation; runs of :data:`~gaussdp.audit.search.BLOCKS` candidates
        are screened so before any candidate's own bounds are computed. The result
        is the set an exact check of every candidate gives.
        """
        if indices.size == 0:
            return indices
        if indices.size > BLOCKS[-1]:
            indices = np.sort(indices)
            fp = self.false_positives[indices]
            fn = self.false_negatives[indices]
            if _monotone(fp, fn):
                starts, lengths = np.array([0]), np.array([indices.size])
                for block in BLOCKS:
                    first, size, last = cut_runs(starts, lengths, block)
                    # slightly smaller corners: the screen never drops a violation to rounding
                    x = np.atleast_1d(clopper_pearson_upper(fp[last], self.negatives, level))
                    y = np.atleast_1d(clopper_pearson_upper(fn[first], self.positives, level))
                    keep = _below(curve, x * (1.0 - 1e-12), y * (1.0 - 1e-12))
                    starts, lengths = first[keep], size[keep]
                indices = indices[run_indices(starts, lengths)]
                if indices.size == 0:
                    return indices
        fpr = clopper_pearson_upper(self.false_positives[indices], self.negatives, level)
        fnr = clopper_pearson_upper(self.false_negatives[indices], self.positives, level)
        return indices[_below(curve, np.atleast_1d(fpr), np.atleast_1d(fnr))]

    def test(self, curve, alpha: float) -> tuple[bool, float]:
        """(violation at α, p-value).

        Whether any point of the shortlist at α violates is asked of its deepest few
        first (by the observed rates), then of the rest only if they do not. The
        p-value search may run on the shortlist itself rather than on its violators:
        a point that does not violate at α violates at no smaller level.
        """
        level = alpha / self.divisor
        shortlist = self._shortlist(curve, level)
        first = shortlist
        if shortlist.size > CHAMPIONS:
            fpr = self.false_positives[shortlist] / self.negatives
            fnr = self.false_negatives[shortlist] / self.positives
            first = np.sort(shortlist[_deepest(curve, fpr, fnr)])
        violation = self._exact(curve, level, first).size > 0
        if not violation and first.size < shortlist.size:
            rest = np.setdiff1d(shortlist, first, assume_unique=True)
            violation = self._exact(curve, level, rest).size > 0
        if violation:
            return True, self._p_value(curve, shortlist, alpha)
        hi = math.nextafter(1.0, 0.0)
        candidates = self.violating(curve, hi)
        if candidates.size == 0:
            return False, 1.0
        return False, self._p_value(curve, candidates, hi)

    def _p_value(self, curve, candidates: np.ndarray, hi: float) -> float:
        """:func:`p_value` over ``candidates``, searched on a few champions and then checked.

        The search's answers are "some candidate violates at this level". It runs on
        the :data:`CHAMPIONS` deepest candidates first; if no other candidate violates
        at the largest level at which the champions did not (violations only grow with
        the level), every answer of the search over all candidates would have been the
        same, so its result is the same. Otherwise those violators join the champions
        and the search runs again.
        """
        if candidates.size <= CHAMPIONS:
            return self._search(curve, candidates, hi)[0]
        # the deepest by the observed rates (a guess: it changes the cost, not the result)
        fpr = self.false_positives[candidates] / self.negatives
        fnr = self.false_negatives[candidates] / self.positives
        champions = np.sort(candidates[_deepest(curve, fpr, fnr)])
        while True:
            p, refused = self._search(curve, champions, hi)
            if refused is None:  # the champions violate at P_FLOOR: so do all
                return p
            others = np.setdiff1d(candidates, champions, assume_unique=True)
            extra = self.violating(curve, refused, others)
            if extra.size == 0:
                return p
            # the deepest of the others at that level join (a better guess, near p)
            level = refused / self.divisor
            fpr = np.atleast_1d(
                clopper_pearson_upper(self.false_positives[extra], self.negatives, level)
            )
            fnr = np.atleast_1d(
                clopper_pearson_upper(self.false_negatives[extra], self.positives, level)
            )
            champions = np.union1d(champions, extra[_deepest(curve, fpr, fnr)])

    def _search(self, curve, candidates: np.ndarray, hi: float) -> tuple[float, float | None]:
        """(:func:`p_value` over ``candidates``, the largest level found without violation).

        Violations at a smaller α are among those at a larger one (the boxes grow as α
        shrinks), so the search keeps only the last violating set as candidates.
        """
        kept = [candidates]
        refused: list[float | None] = [None]

        def violating_at(level: float) -> np.ndarray:
            found = self.violating(curve, level, kept[0])
            if found.size:
                kept[0] = found
            elif refused[0] is None or level > refused[0]:
                refused[0] = level
            return found

        return p_value(violating_at, hi), refused[0]


@dataclass(frozen=True)
class OneRunEvidence:
    """A one-run audit's counts: m canaries, r guesses, v of them right."""

    canaries: int
    guesses: int
    correct: int

    def test(self, curve, alpha: float) -> tuple[bool, float]:
        """(the MMC test rejects f-DP at α, p-value)."""

        inverse = curve_blow_up_inverse(curve)

        def rejects(level: float) -> np.ndarray:
            hit = mmc_rejects(inverse, self.canaries, self.guesses, self.correct, level)
            return np.arange(1) if hit else np.arange(0)

        at_alpha = rejects(alpha)
        if at_alpha.size:
            return True, p_value(rejects, alpha)
        hi = math.nextafter(1.0, 0.0)
        if rejects(hi).size == 0:
            return False, 1.0
        return False, p_value(rejects, hi)


def p_value(violating_at, hi: float) -> float:
    """Smallest α in [P_FLOOR, hi] with ``violating_at(α)`` non-empty (monotone), rounded up."""
    if violating_at(P_FLOOR).size:
        return P_FLOOR
    lo_log, hi_log = math.log(P_FLOOR), math.log(hi)
    for _ in range(32):
        mid = 0.5 * (lo_log + hi_log)
        if violating_at(math.exp(mid)).size:
            hi_log = mid
        else:
            lo_log = mid
    return min(math.exp(hi_log), 1.0)
