"""All thresholds of an attack's scores at once: the Pareto front, and the best bounds on it.

Threshold ``t`` guesses "member" for scores ``>= t``. Its counts — false
positives ``fp`` (non-members at or above ``t``) and false negatives ``fn``
(members below ``t``) — are what the Clopper–Pearson bounds see, and the ε and
μ objectives (:mod:`gaussdp.audit.bounds`) decrease in both error-rate bounds,
so only thresholds on the Pareto front of ``(fp, fn)`` can give the best bound.

:func:`front` finds the front from one stable merge of the two sorted score
arrays; :func:`best` finds the ε-best and μ-best thresholds on it. With more
candidates than :data:`EXACT_LIMIT` the Clopper–Pearson bounds are tabulated
exactly on a grid of counts (:class:`~gaussdp.audit.binomial.UpperTable`) and
interpolated to rank the thresholds. The interpolation is monotone in the
counts, so a run of consecutive thresholds is ranked from its two ends; runs of
:data:`BLOCKS` thresholds that cannot hold one of the :data:`RANKED` best
estimates are dropped before anything is computed per threshold. The best
:data:`RANKED` get exact bounds, and the best exact value is reported: valid
whatever the ranking, since every threshold's bounds hold together
(Bonferroni). The *search gap* certifies how much an exhaustive search could
still add: the front is cut into *segments* on which both counts stay in one
grid cell, so each segment's objective is bracketed from above by the grid's
exact values (the objective decreases in both rates); the gap is the largest
such bracket of a segment with a threshold not computed exactly, minus the
reported value.
"""

from __future__ import annotations

import numpy as np

from gaussdp.audit import bounds
from gaussdp.audit.binomial import EXACT_LIMIT, UpperTable, clopper_pearson_upper

__all__ = [
    "BLOCKS",
    "EXACT_LIMIT",
    "RANKED",
    "Segments",
    "best",
    "cut_runs",
    "front",
    "run_indices",
    "top_estimates",
]

#: How many of the best-ranked thresholds get exact bounds (per bound: ε and μ).
RANKED = 256


def front(members: np.ndarray, non_members: np.ndarray):
    """Thresholds on the Pareto front of (false positives, false negatives), with counts.

    Any threshold is dominated by the smallest member score at or above it (the
    same false negatives, no more false positives), or by ``+inf`` (nobody) if
    there is none, so the candidates are the distinct member scores and ``+inf``;
    of those with equal false positives only the lowest (fewest false negatives)
    is kept.

    Both arrays are sorted, then merged by a stable sort of their concatenation
    (members first, so a member precedes the non-members of equal score). A
    candidate is a member that starts a run of members in the merged order (the
    non-members between two runs are what changes ``fp``); at merged position
    ``p`` with member rank ``i`` (``i`` members strictly below it) it has
    ``fn = i`` and ``fp = n_non_members − (p − i)``.

    Returns
    -------
    thresholds, fp, fn : numpy.ndarray
        ``fp`` decreasing and ``fn`` increasing.
    """
    members_sorted = np.sort(members)
    non_members_sorted = np.sort(non_members)
    order = np.argsort(np.concatenate([members_sorted, non_members_sorted]), kind="stable")
    is_member = order < members_sorted.size
    starts = is_member.copy()
    np.logical_and(starts[1:], ~is_member[:-1], out=starts[1:])
    positions = np.flatnonzero(starts)
    fn = order[positions]
    fp = non_members.size - (positions - fn)
    thresholds = members_sorted[fn]
    nobody = non_members.size - int(np.searchsorted(non_members_sorted, np.inf, side="left"))
    if nobody != fp[-1]:
        thresholds = np.append(thresholds, np.inf)
        fp = np.append(fp, nobody)
        fn = np.append(fn, members.size)
    return thresholds, fp, fn


class Segments:
    """A front cut where either count changes grid cell, with each segment's bracketing rates.

    ``fp`` must be non-increasing and ``fn`` non-decreasing along the front. In a
    segment both counts stay in one cell of their :class:`UpperTable`, so every
    candidate's Clopper–Pearson bounds lie between the segment's ``*_lo`` and
    ``*_hi`` rates (exact grid values): any function decreasing in both rates is
    bracketed per segment, without computing anything per candidate.
    """

    def __init__(self, fp, negatives, fn, positives, level):
        fp_table = UpperTable(negatives, level)
        fn_table = UpperTable(positives, level)
        size = fp.size
        # fp decreases along the front: the first index with fp < g is #{fp >= g}
        fp_breaks = size - np.searchsorted(fp[::-1], fp_table.grid, side="left")
        fn_breaks = np.searchsorted(fn, fn_table.grid, side="left")
        cuts = np.unique(np.concatenate([[0], fp_breaks, fn_breaks]))
        self.starts = cuts[cuts < size]
        self.lengths = np.diff(np.append(self.starts, size))
        fp_cell = fp_table.cell(fp[self.starts])
        fn_cell = fn_table.cell(fn[self.starts])
        self.fpr_lo = fp_table.values[fp_cell]
        self.fnr_lo = fn_table.values[fn_cell]
        self.fpr_hi = fp_table.values[np.minimum(fp_cell + 1, fp_table.values.size - 1)]
        self.fnr_hi = fn_table.values[np.minimum(fn_cell + 1, fn_table.values.size - 1)]
        self.fp_table, self.fn_table = fp_table, fn_table

    def members(self, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The front indices of the segments ``chosen``, and the segment of each."""
        lengths = self.lengths[chosen]
        offsets = np.repeat(self.starts[chosen] - (np.cumsum(lengths) - lengths), lengths)
        return np.arange(int(lengths.sum())) + offsets, np.repeat(chosen, lengths)

    def segment_of(self, indices: np.ndarray) -> np.ndarray:
        """The segment of each front index."""
        return np.searchsorted(self.starts, indices, side="right") - 1


#: Block sizes of the ranking's successive refinements (then single candidates).
BLOCKS = (256, 16)


def run_indices(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[j] .. starts[j] + lengths[j] − 1`` of every run, in order."""
    offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(int(lengths.sum())) + offsets


def cut_runs(starts: np.ndarray, lengths: np.ndarray, block: int):
    """Runs cut into blocks of at most ``block`` consecutive indices: (first, size, last)."""
    counts = -(-lengths // block)
    run = np.repeat(np.arange(starts.size), counts)
    within = np.arange(run.size) - np.repeat(np.cumsum(counts) - counts, counts)
    first = starts[run] + block * within
    size = np.minimum(block, starts[run] + lengths[run] - first)
    return first, size, first + size - 1


def top_estimates(
    objective, fp, fn, fp_table: UpperTable, fn_table: UpperTable, count: int, starts, lengths
) -> np.ndarray:
    """The ``count`` front indices of largest estimated objective, among the given runs.

    ``objective(fpr, fnr)`` must decrease in both rates; it is evaluated on the
    interpolated bounds (:meth:`UpperTable.estimate`). Those are non-decreasing in
    the counts, and along the front fp decreases while fn increases, so on any run
    of consecutive candidates every estimated objective lies between its value at
    (first fp, last fn) and at (last fp, first fn). Runs of :data:`BLOCKS`
    candidates are bracketed so, best lower bracket first, until they hold
    ``count`` candidates: the ``count`` best estimates are at least that ``floor``,
    and only runs whose upper bracket reaches it are refined, down to single
    candidates. The selection is the one an estimate of every candidate would make
    (up to exact ties). The runs (``starts``, ``lengths``) must hold more than
    ``count`` candidates.
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    for block in BLOCKS:
        first, size, last = cut_runs(starts, lengths, block)
        lo = objective(fp_table.estimate(fp[first]), fn_table.estimate(fn[last]))
        hi = objective(fp_table.estimate(fp[last]), fn_table.estimate(fn[first]))
        order = np.argsort(-lo, kind="stable")
        enough = int(np.searchsorted(np.cumsum(size[order]), count, side="left"))
        floor = float(lo[order[enough]])
        floor -= 1e-9 * abs(floor) + 1e-12  # rounding of the interpolated estimates
        keep = hi >= floor
        starts, lengths = first[keep], size[keep]
    candidates = run_indices(starts, lengths)
    if candidates.size <= count:
        return candidates
    estimate = objective(fp_table.estimate(fp[candidates]), fn_table.estimate(fn[candidates]))
    return candidates[np.argpartition(-estimate, count - 1)[:count]]


def _top_estimates(objective, fp, fn, segments: Segments) -> np.ndarray:
    """The :data:`RANKED` front indices of largest estimated objective (:func:`top_estimates`)."""
    return top_estimates(
        objective, fp, fn, segments.fp_table, segments.fn_table, RANKED, [0], [fp.size]
    )


def _ranked(objective, fp, fn, segments: Segments):
    """The :data:`RANKED` candidates of best estimated objective, and the search's optimism.

    Returns (chosen indices, the largest optimistic bracket over segments holding a
    candidate not chosen).
    """
    chosen = _top_estimates(objective, fp, fn, segments)
    optimistic = objective(segments.fpr_lo, segments.fnr_lo)
    taken = np.bincount(segments.segment_of(chosen), minlength=segments.starts.size)
    open_segments = segments.lengths > taken
    optimistic_max = float(np.max(optimistic[open_segments])) if open_segments.any() else -np.inf
    return chosen, optimistic_max


def _argmax(objective, fp, negatives, fn, positives, level, segments):
    """A candidate (near-)maximising ``objective(FPR_ub, FNR_ub)``, its exact value, the gap."""
    if segments is None:
        chosen = np.arange(fp.size)
        optimistic_max = -np.inf
    else:
        chosen, optimistic_max = _ranked(objective, fp, fn, segments)
    fpr = np.atleast_1d(clopper_pearson_upper(fp[chosen], negatives, level))
    fnr = np.atleast_1d(clopper_pearson_upper(fn[chosen], positives, level))
    values = np.atleast_1d(objective(fpr, fnr))
    index = int(np.argmax(values))
    value = float(values[index])
    return int(chosen[index]), value, max(optimistic_max - value, 0.0)


def best(fp, negatives: int, fn, positives: int, level: float, delta: float):
    """The ε-best and μ-best candidates of a front: (index, value, search gap) for each.

    Every candidate's bounds are at ``level``; the ε objective is
    :func:`~gaussdp.audit.bounds.epsilon_lower` at ``delta``, the μ objective
    :func:`~gaussdp.audit.bounds.mu_lower`. With at most ``max(EXACT_LIMIT,
    RANKED)`` candidates all are computed exactly (gap 0).
    """
    fp = np.asarray(fp, dtype=np.int64)
    fn = np.asarray(fn, dtype=np.int64)
    segments = None
    if fp.size > max(EXACT_LIMIT, RANKED):
        segments = Segments(fp, negatives, fn, positives, level)

    def epsilon(fpr, fnr):
        return bounds.epsilon_lower(fpr, fnr, delta)

    found_epsilon = _argmax(epsilon, fp, negatives, fn, positives, level, segments)
    found_mu = _argmax(bounds.mu_lower, fp, negatives, fn, positives, level, segments)
    return found_epsilon, found_mu
