"""Random allocation (balls-in-bins) of a basic mechanism, bracketed by two discrete pairs.

One epoch of ``RandomAllocation(Gaussian(σ, Δ), t)`` (each record in exactly
one of the t steps, chosen uniformly) is accounted, under add/remove
neighbouring, through the pair of Feldman & Shenfeld ("Privacy amplification
by random allocation", arXiv 2502.08202; its PLD accounting, arXiv
2602.17284, ICML 2026; the same pair as Chua et al., "Balls-and-Bins Sampling
for DP-SGD", arXiv 2412.16802). With μ = Δ/σ and the output seen in units
of the noise,

    remove:  P = (1/t) Σᵢ N(μeᵢ, I_t)  against  Q = N(0, I_t);
    add:     the swap, (Q, P).

Write ℓᵢ = μxᵢ − μ²/2 for the loss of coordinate i and Yᵢ = e^{ℓᵢ}. Then
dP/dQ = Ȳ = (1/t) Σᵢ Yᵢ, so the privacy loss is L = log Ȳ, and everything
follows from the law of S = Σᵢ Yᵢ: under Q the Yᵢ are i.i.d. log-normal,
log Yᵢ ~ N(−μ²/2, μ²); under P (by symmetry, the first coordinate carries
the record) S = X + Σ_{i≥2} Yᵢ with log X ~ N(μ²/2, μ²).

The construction
----------------
Every coordinate is rounded UP to the grid h·ℤ, cᵢ = ⌈Yᵢ/h⌉·h, and
S_c = Σᵢ cᵢ, so that S_c − t·h < S ≤ S_c on every outcome. The laws of S_c
under P and under Q are exact convolutions of the per-coordinate laws (Q:
the t-th power of the log-normal's cells; P: the (t−1)-th power times the
shifted coordinate's), computed by one real FFT each on a circle of N
points. Coordinates above the grid's top Y_max are left out of both (the
laws are sub-probabilities).

For measures (P', Q') (finite, not necessarily of mass one) let
H_β(P'‖Q') = ∫(dP' − β dQ')₊ for β ≥ 0. A pair whose H_β is at least the
true pair's for every β ≥ 0 gives upper bounds, one whose H_β is at most it
lower bounds; both survive composition (the composed H_β is ∫ φ(e^{ℓ₁}) dQ₁
with φ convex, non-decreasing and φ(0) = 0, a non-negative mixture of
u ↦ u and u ↦ (u − β)₊), so the engine's FFT composition of the epochs and
its own certified roundings keep them bounds.

* **Lower** (:func:`_lower_pairs`): the statistic "S_c mod N·h, on the event
  that no coordinate exceeds Y_max" is a function of the output, and its
  laws under P and Q are exactly what the circular convolutions compute.
  Merging outcomes is post-processing and dropping an event only lowers
  H_β, so the pair of these laws is dominated by the true one, in both
  directions, whatever the FFT's wrap-around.
* **Upper** (:func:`_upper_pairs`): on {S_c = kh} the remove loss
  L = log(S/t) lies in [log((k − t)h/t), log(kh/t)]. The two-point pair at
  the ends of that range with the cell's P- and Q-mass (connect-the-dots,
  Doroshenko et al. 2022) dominates every pair with losses in the range and
  those masses, so the cell-by-cell split dominates the true pair; add is
  the same with P and Q swapped. What the laws leave out or get wrong is
  added where it can act (:func:`_allowances`): the transforms' rounding
  (:func:`gaussdp.pld.composition.rounding_allowance`, the engine's own
  convention for FFT rounding) and the circle's fold, bounded cell by cell
  because the laws are computed under exponential tilts
  (:mod:`gaussdp.pld.allocation_tilt`), become atoms just above the largest
  loss each run of cells can change; the outcomes left out (a coordinate
  above Y_max, S_c ≥ N·h) are spread over the losses their sums may have by
  Chernoff and union bounds (:mod:`gaussdp.pld.allocation_left_out`). Only
  what no sum bounds stays at +∞ (about 2e-21 per epoch for σ = 1, t = 100:
  before the tilts and the spreading, 8e-14, and the upper bound was ∞ below
  δ ≈ 8e-13).

Two scales
----------
The grid of S must reach Y_max ≈ e^{μ²/2 + 10μ}, far above the bulk of S
(about t) when σ is small: one uniform grid then has to be coarse (at the
2^23-point cap, h passed the per-step mean at σ = 0.5, and every cell with
S_c ≤ t·h went to +∞), or long. Where a split B shortens the circle at
least :data:`_SPLIT_GAIN` times, the laws above stop at B and the outcomes
with one coordinate above it are a statistic of their own, each block of
that coordinate on a grid relative to its size; two or more above B (at
most 1e-14) go to +∞ (:mod:`gaussdp.pld.allocation_above`). σ = 0.5,
t = 100, 10 epochs at δ = 1e-5 went from [12.019, ∞] to [12.04912,
12.04945]; σ = 1 from 2.0 s to 0.6 s for the same bounds; σ = 1, t = 2 at
ε = 5.5 reads δ within 0.5 % of the exact one, where one grid's lower pair
read 0.

Other inner mechanisms
----------------------
Nothing above is particular to the Gaussian but the law of Yᵢ = e^{ℓᵢ}: for
any basic mechanism (Laplace, randomized response, …) the coordinates are
e^{ℓ(xᵢ)}, ℓ its privacy loss, and their cells (0, h], (h, 2h], … are the
cells of its privacy loss distribution at the edges log(k·h), under either
distribution (:class:`~gaussdp.pld.allocation_coordinate.Coordinate`; arXiv
2602.17284 computes the PLD of random allocation of any mechanism the same
way). Mass at infinite loss (an (ε, δ) step) is P-mass above the grid (at +∞
in the upper pairs, left out of the lower ones) and, mirrored, Q-mass at
Y = 0, which adds nothing to S.
The allocation of a dominating pair dominates the allocation of the
mechanism (each step's outputs are a post-processing of the pair's, by one
kernel for every step), so the bounds hold for the mechanism run.

Accuracy
--------
Both pairs err only inside cells about h/Ȳ wide in loss (Ȳ = S/t), so the
gap between them shrinks like h²: about c·h² per epoch in ε with
c ≈ 0.14/s, s the spread of the epoch's loss (:func:`spacing_for`). The
grid spacing follows the accountant's accuracy (its gap budget spread over
the epochs); the FFT's length, about (Y_max + the bulk of S)/h with
Y_max ≈ e^{μ²/2 + 10μ} (B instead with two scales), is capped
(:data:`MAX_POINTS`), and where the accuracy asks for more, h is as fine as
the cap allows: the bounds stay certified, only further apart (σ = 0.5:
B ≈ 6e4, h ≈ 0.015).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from gaussdp import mechanisms as m
from gaussdp._numerics import log_sum_exp_rows, next_fast_length
from gaussdp._validation import InvalidParameterError
from gaussdp.pld.allocation_above import (
    BLOCK_WIDTH,
    OneAbove,
    one_above_atoms,
    one_above_laws,
    regridded,
    split_point,
)
from gaussdp.pld.allocation_coordinate import COORDINATE_TAIL, Coordinate
from gaussdp.pld.allocation_left_out import left_out
from gaussdp.pld.allocation_tilt import TiltedLaw, located_errors, tilt_rates, tilted_laws
from gaussdp.pld.composition import rounding_allowance
from gaussdp.pld.grid import OPTIMISTIC, PESSIMISTIC, discretise
from gaussdp.pld.losses import AtomicLoss, BracketedLoss, GaussianLoss

__all__ = [
    "MAX_POINTS",
    "allocation_losses",
    "coordinate_of",
    "random_allocation_losses",
    "spacing_for",
    "sum_statistic_losses",
]

#: The largest FFT length (points of the grid of S).
MAX_POINTS = 2**23
#: The grid spacing when no accuracy is given.
DEFAULT_SPACING = 2e-3
#: Share of a use's accuracy budget spent on this construction (the rest: the engine's grid).
_ACCURACY_SHARE = 0.5
#: Never coarser than this grid spacing.
_COARSEST_SPACING = 0.05
#: The P-mass that may wrap around the FFT circle (planned; the bound carried is certified).
_WRAP_TAIL = 1e-13
#: The fold's P-mass is spread over this many sums (each a Chernoff bound).
_FOLD_SUMS = 16
#: The loss grid the pairs are handed to the engine on (at most; finer for fine h).
_FINE_GRID = 1e-5
#: Laws of at most this many points are also computed under mild tilts (tilt_rates).
_MILD_POINTS = 2**22
#: The sum statistic (lower pairs only) leaves out coordinates above a top this far out: what
#: it leaves out only lowers its divergences, and the upper pairs' 1e-21 costs it a grid
#: five times as long (9 of 10 steps).
_LOWER_TAIL = 1e-15
#: Atoms are merged at each end of the laws up to this much mass.
_TRIM = 1e-24
#: Two scales are used only where the split shortens the circle at least this many times.
_SPLIT_GAIN = 2.0


class _Atoms(AtomicLoss):
    """An :class:`AtomicLoss` that remembers its supports (the engine asks for them often)."""

    def support(self, tail):
        supports = self.__dict__.setdefault("_supports", {})
        if tail not in supports:
            supports[tail] = super().support(tail)
        return supports[tail]


@dataclass(frozen=True)
class _Laws:
    """The circular laws of S_c = Σ⌈Yᵢ/h⌉h on k·h, k = 0 … N − 1, and what they leave out.

    Only outcomes with every coordinate at most Y_max (``top``) and S_c below
    N·h are in the laws (sub-probabilities). ``p`` and ``q`` are computed under
    a ladder of tilts, each cell with its own error bound
    (:class:`~gaussdp.pld.allocation_tilt.TiltedLaw`). ``left_out`` is the
    remove upper pair's share of the others' P-mass, spread over the losses
    it may have (atoms, and the rest at +∞,
    :func:`~gaussdp.pld.allocation_left_out.left_out`); ``q_over``
    and ``wrap_q`` bound their Q-mass (a coordinate above Y_max; S_c ≥ N·h).
    Two-scale laws (``one_above``) have Y_max = B, the split: the outcomes
    with exactly one coordinate above it are :class:`OneAbove`'s, and
    ``left_out``, ``q_over`` count those with two or more, or one above the
    blocks' top.
    """

    spacing: float
    top: float
    p: TiltedLaw
    q: TiltedLaw
    left_out: tuple[np.ndarray, np.ndarray, np.ndarray, float]
    q_over: float
    wrap_q: float
    one_above: OneAbove | None = None


def _blocks(masses: np.ndarray, spacing: float) -> tuple[np.ndarray, np.ndarray]:
    """Masses on k·h summed over blocks of geometrically growing width, and each block's top.

    Block boundaries at h·⌈b_j/h⌉ for b_j = 0.05·1.05^j: a few hundred blocks,
    each value overstated by at most 5% + 0.05 + h when taken at its block's top.
    """
    top = masses.size * spacing
    edges = 0.05 * 1.05 ** np.arange(math.ceil(math.log(max(top / 0.05, 1.0)) / math.log(1.05)) + 2)
    starts = np.unique(np.concatenate([[0], np.ceil(edges / spacing).astype(np.int64)]))
    starts = starts[starts < masses.size]
    sums = np.add.reduceat(masses, starts)
    ends = np.append(starts[1:], masses.size)  # block i holds k < ends[i]
    return ends * spacing, sums


def _wrap_bound(
    tops: np.ndarray, first: np.ndarray, rest: np.ndarray, count: int, total: float
) -> float:
    """A certified bound on P(c₁ + c₂ + … + c_{count+1} ≥ total), c₁ ~ ``first``, others ~ ``rest``.

    ``first`` and ``rest`` are block masses of sub-probability laws whose
    values in block i are at most ``tops[i]`` (:func:`_blocks`). For every cap
    b, P(S ≥ T) ≤ P(some cᵢ > b) + P(Σ min(cᵢ, b) ≥ T), and the second term
    is at most e^{−λT}·M₁(λ)·M(λ)^count (Chernoff) with the MGFs of the capped
    laws, each block at its top. Minimised over a few caps and rates.
    """
    tail_first = np.cumsum(first[::-1])[::-1]
    tail_rest = np.cumsum(rest[::-1])[::-1]
    best = 1.0
    with np.errstate(divide="ignore"):
        log_first_all = np.log(first)
        log_rest_all = np.log(rest)
    for fraction in (0.35, 0.5, 0.65, 0.8, 0.9):
        cap_block = min(int(np.searchsorted(tops, fraction * total, side="right")), tops.size - 1)
        cap = tops[cap_block]
        first_above = float(tail_first[cap_block + 1]) if cap_block + 1 < tops.size else 0.0
        rest_above = float(tail_rest[cap_block + 1]) if cap_block + 1 < tops.size else 0.0
        above = first_above + count * rest_above
        if above >= best:
            continue
        rates = np.geomspace(0.5, 200.0, 64) / cap
        exponent = rates[:, None] * tops[None, : cap_block + 1]
        log_m_first = log_sum_exp_rows(log_first_all[None, : cap_block + 1] + exponent)
        log_m_rest = log_sum_exp_rows(log_rest_all[None, : cap_block + 1] + exponent)
        # each law's mass above the cap counts at the cap
        if first_above > 0:
            log_m_first = np.logaddexp(log_m_first, math.log(first_above) + rates * cap)
        if rest_above > 0:
            log_m_rest = np.logaddexp(log_m_rest, math.log(rest_above) + rates * cap)
        chernoff = float(np.exp(np.min(log_m_first + count * log_m_rest - rates * total)))
        best = min(best, above + chernoff)
    return min(best, 1.0)


def _trim_up(masses: np.ndarray, tail: float) -> tuple[int, np.ndarray, float]:
    """Merge the bottom ``tail`` of mass into the first atom kept; return the top ``tail`` apart.

    Moves mass to larger S only (for the P-law). Returns (first index kept,
    kept masses, mass sent to S = +∞).
    """
    head = np.cumsum(masses)
    top = np.cumsum(masses[::-1])[::-1]
    first = int(np.searchsorted(head, tail, side="right"))
    last = masses.size - 1 - int(np.searchsorted(top[::-1], tail, side="right"))
    first = min(first, masses.size - 1)
    last = max(last, first)
    kept = masses[first : last + 1].copy()
    if first > 0:
        kept[0] += head[first - 1]
    above = float(top[last + 1]) if last + 1 < masses.size else 0.0
    return first, kept, above


def _laws(
    coordinate: Coordinate, steps: int, spacing: float, shifted: int = 1, split: float | None = None
) -> _Laws:
    """The P- and Q-laws of S_c for one epoch (``spacing`` coarsened to fit the cap).

    Under P, ``shifted`` coordinates carry the record (k-out-of-t allocation);
    the wrap bounds ``wrap_p`` and the rounding of the P-law are those of one
    shifted coordinate, which only the upper pairs read (``shifted = 1``).
    ``split``: two-scale laws (``shifted = 1`` only), the fine grid up to
    the split B (:func:`~gaussdp.pld.allocation_above.split_point`; made a
    whole number of the first block's cells) and the outcomes with one
    coordinate above it apart (:func:`~gaussdp.pld.allocation_above.one_above_laws`).
    """
    from scipy import fft as scipy_fft  # here: 40 ms that `import gaussdp` need not pay

    coordinate_top = split
    if split is None:
        coordinate_top = coordinate.top(steps, COORDINATE_TAIL if shifted == 1 else _LOWER_TAIL)
    extent = _circle_extent(coordinate, steps, coordinate_top, spacing)  # the bulk of S as well
    extent += (shifted - 1) * coordinate_top  # the other shifted coordinates' room
    if math.ceil(extent / spacing) + 1 > MAX_POINTS:
        spacing = extent / (MAX_POINTS - 1)
    count = math.ceil(coordinate_top / spacing)  # coordinate grid h, 2h, …, count·h
    factor = 1
    if split is not None:  # B = count·h, a whole number of the first block's cells
        factor = max(int(BLOCK_WIDTH * coordinate_top / spacing), 1)
        count = math.ceil(count / factor) * factor
    log_edges = np.log(np.arange(1, count + 1) * spacing)
    # cells (0, h] → h (index 1), (jh, (j+1)h] → (j+1)h; above count·h: "over"
    x_cells, x_over, y_cells, y_over, y_zero = coordinate.cells(log_edges)
    tops, y_blocks = _blocks(np.concatenate([[y_zero], y_cells[:count]]), spacing)
    _, x_blocks = _blocks(np.concatenate([[0.0], x_cells[:count]]), spacing)
    while True:
        length = next_fast_length(max(math.ceil(extent / spacing) + 1, count + 2))
        circle = length * spacing
        wrap_p = _wrap_bound(tops, x_blocks, y_blocks, steps - 1, circle)
        wrap_q = _wrap_bound(tops, y_blocks, y_blocks, steps - 1, circle)
        if max(wrap_p, wrap_q) <= 100.0 * _WRAP_TAIL or length >= MAX_POINTS:
            break
        extent *= 1.5
    y = np.zeros(count + 1)
    x = np.zeros(count + 1)
    y[0] = y_zero  # coordinates Q gives where P has no mass: Y = 0, nothing added to S
    y[1:] = y_cells[:count]
    x[1:] = x_cells[:count]
    del y_cells, x_cells
    rounding = rounding_allowance(length, steps)
    one_above = None
    if split is not None:
        # the others of one coordinate above B: X and t − 2 Y's (under P), t − 1 Y's
        y_hat = scipy_fft.rfft(y, length, workers=2)
        x_hat = scipy_fft.rfft(x, length, workers=2)
        power = y_hat ** (steps - 2)
        rest_p = regridded(scipy_fft.irfft(x_hat * power, length, workers=2), factor)
        power *= y_hat
        rest_q = regridded(scipy_fft.irfft(power, length, workers=2), factor)
        del x_hat, y_hat, power
        one_above, _, q_over = one_above_laws(
            coordinate,
            steps,
            (count * spacing, factor * spacing, spacing),
            (rest_p, rest_q, rounding),
            (wrap_p / (1.0 - y_over), wrap_q / (1.0 - y_over)),
            (x_over, y_over),
        )
    else:
        q_over = -math.expm1(steps * math.log1p(-y_over))

    def folded(x_tilted: np.ndarray, y_tilted: np.ndarray):
        block_tops, y_tilted_blocks = _blocks(y_tilted, spacing)
        _, x_tilted_blocks = _blocks(x_tilted, spacing)
        # more than one shifted coordinate: every coordinate bounded as the larger X
        rest = y_tilted_blocks if shifted == 1 else x_tilted_blocks

        def beyond(cells: int) -> tuple[float, float]:
            return (
                _wrap_bound(block_tops, x_tilted_blocks, rest, steps - 1, cells * spacing),
                _wrap_bound(
                    block_tops, y_tilted_blocks, y_tilted_blocks, steps - 1, cells * spacing
                ),
            )

        return beyond

    # the sum statistic (k > 1 shifted) gives lower pairs only: plain laws, nothing left out
    rates = np.zeros(1)
    if shifted == 1:
        mild = length <= _MILD_POINTS  # each rate costs a transform of the whole circle
        rates = tilt_rates(x, y, steps, spacing, (steps * spacing, circle), mild) * spacing
    p_law, q_law = tilted_laws(x, y, steps, shifted, length, rates, rounding, folded, MAX_POINTS)
    spread = (np.zeros(0), np.zeros(0), np.zeros(0), 0.0)  # the sum statistic: lower only
    if shifted == 1:
        # the fold's P-mass, S ≥ s for s from the circle to t·Y_max (where S ends)
        sums = np.geomspace(circle, max(steps * count * spacing, circle), _FOLD_SUMS)
        fold = np.array([_wrap_bound(tops, x_blocks, y_blocks, steps - 1, s) for s in sums])
        spread = left_out(
            coordinate,
            steps,
            (count * spacing, split, x_over, y_over),
            (sums, fold),
            lambda r: _wrap_bound(tops, x_blocks, y_blocks, steps - 1, r),
        )
    return _Laws(spacing, count * spacing, p_law, q_law, spread, q_over, wrap_q, one_above)


def _circle_extent(
    coordinate: Coordinate, steps: int, coordinate_top: float, spacing: float
) -> float:
    """A length (in units of Y) beyond which S_c has P-mass ≤ _WRAP_TAIL, planned coarsely.

    Only a plan, on a grid no finer than ``spacing``: the bound that is
    carried is recomputed on the grid used.
    """
    coarse = max(coordinate_top / 16384, spacing)
    count = math.ceil(coordinate_top / coarse)
    log_edges = np.log(np.arange(1, count + 1) * coarse)
    x_cells, _, y_cells, _, y_zero = coordinate.cells(log_edges)
    tops, y = _blocks(np.concatenate([[y_zero], y_cells[:count]]), coarse)
    _, x = _blocks(np.concatenate([[0.0], x_cells[:count]]), coarse)
    extent = coordinate_top + 2.0 * steps
    while _wrap_bound(tops, x, y, steps - 1, extent) > _WRAP_TAIL:
        extent *= 1.1
    return extent


def _lower_pairs(laws: _Laws) -> tuple[AtomicLoss, AtomicLoss]:
    """(remove, add) lower pairs: the exact laws of the statistic S_c mod N·h, merged per value.

    S_c mod N·h, restricted to outcomes with no coordinate above the grid,
    is a function of the output: its laws under P and Q (what the circular
    convolution computes) are a post-processing of the true pair, restricted
    to an event, so their hockey-stick divergences are at most the true
    ones (in both directions). Values whose masses are not clearly above the
    transforms' rounding noise (each from the tilt whose noise is least there,
    :attr:`~gaussdp.pld.allocation_tilt.TiltedLaw.clear`) are left out, which
    only lowers them further.
    """
    p, q = laws.p.clear, laws.q.clear
    keep = (p > 0.0) & (q > 0.0)
    p, q = p[keep], q[keep]
    one = laws.one_above
    if one is not None:  # the statistic (block, sum) of one coordinate above B: more values
        keep = (one.p > one.noise) & (one.q > one.noise)
        p, q = np.concatenate([p, one.p[keep]]), np.concatenate([q, one.q[keep]])
    losses = np.log(p) - np.log(q)
    remove = _Atoms.from_atoms(losses, p, q)
    add = _Atoms(-remove.losses[::-1], remove.q_masses[::-1], remove.p_masses[::-1])
    return remove, add


def _upper_pairs(laws: _Laws, steps: int) -> tuple[AtomicLoss, AtomicLoss]:
    """(remove, add) upper pairs: each value of S_c split between the ends of its loss range.

    On {S_c = kh} the sum S lies in ((k − t)h, kh], so the remove loss
    L = log(S/t) lies in [a_k, b_k] = [log((k − t)h/t), log(kh/t)] (a_k = −∞
    for k ≤ t). Splitting the outcomes of a cell into two, at a_k and b_k,
    with the cell's P- and Q-masses kept (connect-the-dots, Doroshenko et
    al. 2022) is a pair that dominates the cell's own; the add direction is
    the same with the roles of P and Q swapped and losses [−b_k, −a_k]. Both
    ends are grid values log(jh/t), so the atoms of cell k land on indices k
    and k − t. What the laws leave out or get wrong is added as atoms where
    it can act, or at +∞ (see :func:`_allowances`).
    """
    h = laws.spacing
    p, q = laws.p.values, laws.q.values
    n = p.size
    k = np.arange(n, dtype=float)
    shifted = k > steps  # cells with a finite lower end
    # remove: P_b = (p − e^{a}q)/(1 − e^{a−b}), with e^a = (k − t)h/t, 1 − e^{a−b} = t/k
    with np.errstate(divide="ignore", invalid="ignore"):
        p_top = np.where(shifted, (p - q * ((k - steps) * h / steps)) * (k / steps), p)
    p_top = np.clip(p_top, 0.0, p)
    remove = p_top.copy()
    remove[1 : n - steps] += (p - p_top)[steps + 1 :]
    # add (first Q, second P, losses in [−b, −a]): the first's mass at −a is
    # F = (q − e^{−b}p)/(1 − e^{a−b}) with e^{−b} = t/(kh); for k ≤ t, −a = +∞
    with np.errstate(divide="ignore", invalid="ignore"):
        q_high = (q - p * (steps / np.maximum(k, 1.0) / h)) * (k / steps)
        q_high = np.where(shifted, q_high, q - p * (steps / np.maximum(k, 1.0) / h))
    q_high = np.clip(q_high, 0.0, q)
    add = q - q_high  # at −b_k (index k)
    add[1 : n - steps] += q_high[steps + 1 :]  # at −a_k = −b_{k−t} (index k − t)
    infinity_add = float(q_high[: steps + 1].sum())  # −a_k = +∞ for k ≤ t
    remove[0] = 0.0  # S_c = 0 has no mass (every coordinate is at least h)
    add[0] = 0.0
    infinity_remove, remove_errors, add_extra, add_errors = _allowances(laws, steps)

    values = k * h
    first, kept, above = _trim_up(remove, _TRIM)
    s_values = values[first : first + kept.size]
    positive = kept > 0
    kept, s_values = kept[positive], s_values[positive]
    remove_atoms = [np.log(s_values / steps), kept, kept * (steps / s_values)]
    infinity_remove += above
    # add losses −log(kh/t) increase as k decreases: trim from the top of k downwards
    first, kept, above = _trim_up(add[::-1], _TRIM)
    s_values = values[::-1][first : first + kept.size]
    positive = (kept > 0) & (s_values > 0)
    kept, s_values = kept[positive], s_values[positive]
    add_atoms = [-np.log(s_values / steps), kept, kept * (s_values / steps)]
    infinity_add += add_extra + above
    parts = [(remove_errors, add_errors)]
    infinities = [(infinity_remove, infinity_add)]
    if laws.one_above is not None:
        one_remove, one_add, one_infinity_remove, one_infinity_add = one_above_atoms(
            laws.one_above, steps
        )
        parts.append((one_remove, one_add))
        infinities.append((one_infinity_remove, one_infinity_add))
    pairs = []
    for direction, cells in enumerate((remove_atoms, add_atoms)):
        # the cells' atoms are sorted already: merge the few others in, not sort them all
        others = AtomicLoss.from_atoms(
            *(np.concatenate([part[direction][i] for part in parts]) for i in range(3))
        )
        infinity = min(sum(infinity[direction] for infinity in infinities), 1.0)
        pairs.append(_Atoms(*_merged(cells, others), infinity))
    return tuple(pairs)


def _merged(cells, others: AtomicLoss) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Atoms (losses strictly increasing) with ``others``' atoms merged in, equal losses summed."""
    losses, p, q = (np.asarray(column, dtype=float) for column in cells)
    at = np.searchsorted(losses, others.losses)
    equal = np.zeros(at.size, dtype=bool)
    inside = at < losses.size
    equal[inside] = losses[at[inside]] == others.losses[inside]
    p, q = p.copy(), q.copy()
    np.add.at(p, at[equal], others.p_masses[equal])
    np.add.at(q, at[equal], others.q_masses[equal])
    new = ~equal
    # the others' places in the merged arrays, each after the cells below it
    places = at[new] + np.arange(int(new.sum()))
    mine = np.ones(losses.size + places.size, dtype=bool)
    mine[places] = False
    merged = []
    for column, extra in ((losses, others.losses), (p, others.p_masses), (q, others.q_masses)):
        out = np.empty(mine.size)
        out[mine] = column
        out[places] = extra[new]
        merged.append(out)
    return tuple(merged)


def _allowances(laws: _Laws, steps: int):
    """What the upper pairs add for what the laws leave out or get wrong.

    Returns (remove's mass at +∞, remove's error atoms, add's mass at +∞,
    add's error atoms), the atoms as (losses, first masses, second masses).

    * **Errors of the laws** (rounding and the circle's fold, bounded cell by
      cell by their tilts): atoms just above the largest loss each run of
      cells can change, the add direction's cells with k ≤ t at +∞
      (:func:`~gaussdp.pld.allocation_tilt.located_errors`).
    * **Outcomes left out.** Remove: spread over the losses their sums may
      have (``left_out``, :mod:`~gaussdp.pld.allocation_left_out`), what no
      sum bounds at +∞. Add: those outcomes have S ≥ Y_max or S ≥ N·h, add
      loss at most −log(Y_max/t) or −log(N·h/t): atoms there of their Q-mass
      (``q_over``, ``wrap_q``), not +∞.
    """
    h = laws.spacing
    n = laws.p.values.size
    remove, add, infinity_add = located_errors(laws.p, laws.q, h, steps)
    left_out_add = (
        (-math.log(laws.top / steps), laws.q_over, laws.q_over * laws.top / steps),
        (-math.log(n * h / steps), laws.wrap_q, laws.wrap_q * n * h / steps),
    )
    remove = tuple(
        np.concatenate([column, extra])
        for column, extra in zip(remove, laws.left_out, strict=False)
    )
    add = tuple(
        np.concatenate([column, extra]) for column, *extra in zip(add, *left_out_add, strict=True)
    )
    return min(laws.left_out[3], 1.0), remove, min(infinity_add, 1.0), add


def _on_fine_grid(loss: AtomicLoss, kind: str, width: float) -> AtomicLoss:
    """A pair with one atom per cell of a fine loss grid, on the same side of ``loss``.

    The cells of S_c are millions of atoms, far finer in loss than any grid
    the engine uses. ``"pessimistic"``: connect-the-dots onto the grid of
    spacing ``width`` (:func:`gaussdp.pld.grid.discretise`), which dominates
    ``loss``; ``"optimistic"``: binning, each bin one atom with the bin's P-
    and Q-mass (a post-processing, dominated by ``loss``). Both err by about
    ``width``² in the divergences, far below the engine's own grid.
    """
    grid = discretise(loss, width, kind, _TRIM)
    p = grid.p_masses
    q = grid.q_masses()
    keep = p > 0
    if kind == OPTIMISTIC:
        keep &= q > 0
        with np.errstate(divide="ignore"):
            losses = np.log(p[keep]) - np.log(q[keep])
        return _Atoms.from_atoms(losses, p[keep], q[keep], grid.infinity_mass)
    return _Atoms(grid.losses[keep], p[keep], q[keep], grid.infinity_mass)


def _pairs(laws: _Laws, steps: int) -> tuple[BracketedLoss, BracketedLoss]:
    remove_upper, add_upper = _upper_pairs(laws, steps)
    remove_lower, add_lower = _lower_pairs(laws)
    width = min(_FINE_GRID, laws.spacing / 10.0)
    # The two pairs differ by the resolution of the laws of S (cells of width h), which
    # no finer grid of the accountant changes.
    return (
        BracketedLoss(
            upper=_on_fine_grid(remove_upper, PESSIMISTIC, width),
            lower=_on_fine_grid(remove_lower, OPTIMISTIC, width),
            far_gaps_follow_the_grid=False,
        ),
        BracketedLoss(
            upper=_on_fine_grid(add_upper, PESSIMISTIC, width),
            lower=_on_fine_grid(add_lower, OPTIMISTIC, width),
            far_gaps_follow_the_grid=False,
        ),
    )


@lru_cache(maxsize=4)
def _bracketed(
    coordinate: Coordinate, steps: int, spacing: float, split: float | None = None
) -> tuple[BracketedLoss, BracketedLoss]:
    return _pairs(_laws(coordinate, steps, spacing, split=split), steps)


def allocation_losses(
    coordinate: Coordinate, steps: int, spacing: float = DEFAULT_SPACING
) -> tuple[BracketedLoss, BracketedLoss]:
    """The bracketed (remove, add) losses of one epoch of balls-in-bins of a basic mechanism.

    Parameters
    ----------
    coordinate : Coordinate
        The mechanism run at every step, with its privacy loss
        (:func:`coordinate_of`).
    steps : int
        t ≥ 2, the steps of the epoch (each record in exactly one).
    spacing : float
        The grid spacing h of the coordinates; the gap between the bounds of
        one epoch shrinks like h² (default :data:`DEFAULT_SPACING`). Made
        finer where sums below t·h are not negligible, and coarser where the
        FFT would exceed :data:`MAX_POINTS`.

    Returns
    -------
    (BracketedLoss, BracketedLoss)
        Remove and add; ``upper`` dominates the epoch, ``lower`` is dominated
        by it (see the module docstring). The last few are kept.

    Examples
    --------
    >>> step = Coordinate(m.Gaussian(2.0), GaussianLoss(0.5))
    >>> remove, add = allocation_losses(step, 10, 0.01)
    >>> bool(remove.upper.sf(0.1)[0] >= remove.lower.sf(0.1)[0])
    True
    """
    steps = int(steps)
    finest = coordinate.finest(steps)
    spacing = float(spacing) if finest is None else min(float(spacing), finest)
    top = coordinate.top(steps)
    extent = _circle_extent(coordinate, steps, top, spacing)
    split = _split(coordinate, steps, top, spacing, extent)
    if split is not None:
        split, extent = split
    spacing = max(spacing, extent / (MAX_POINTS - 1))
    return _bracketed(coordinate, steps, spacing, split)


def _split(
    coordinate: Coordinate, steps: int, top: float, spacing: float, extent: float
) -> tuple[float, float] | None:
    """The split B of two-scale laws and its circle's extent (None: one scale).

    Two scales where a split shortens the circle at least :data:`_SPLIT_GAIN`
    times, and lies far above what the other coordinates' rounding moves S
    (t·h): the loss ranges of the outcomes above it start at
    S ≥ B − 2h₀ − (t − 1)·h, which must stay positive.
    """
    split = split_point(coordinate, steps, top)
    if split is None:
        return None
    split_extent = _circle_extent(coordinate, steps, split, spacing)
    split_spacing = max(spacing, split_extent / (MAX_POINTS - 1))
    if _SPLIT_GAIN * split_extent <= extent and split > 4.0 * steps * split_spacing:
        return split, split_extent
    return None


def spacing_for(loss_accuracy: float | None, coordinate: Coordinate, steps: int) -> float:
    """The grid spacing h for a gap budget per epoch (None: :data:`DEFAULT_SPACING`).

    The epoch's upper and lower pairs differ by the connect-the-dots error
    of cells about h wide in loss, which moved ε by about c·h² per epoch
    with c ≈ 0.14/s, s the spread of the epoch's loss, the standard deviation
    of Ȳ under Q (:meth:`~gaussdp.pld.allocation_coordinate.Coordinate.spread`;
    √((e^{μ²} − 1)/t) for a Gaussian; measured: c = 0.87 for σ = 1, t = 100; 3.3 for t = 1000; 2.6
    for σ = 2, t = 100; 0.55 for σ = 1, t = 10). h is chosen so that c·h² is
    :data:`_ACCURACY_SHARE` of the budget, with c = 0.15/min(s, 0.15) (at
    least 1: the law is an asymptotic one, and few steps stray from it).
    """
    if loss_accuracy is None:
        return DEFAULT_SPACING
    coefficient = 0.15 / min(coordinate.spread(steps), 0.15)
    return min(math.sqrt(_ACCURACY_SHARE * loss_accuracy / coefficient), _COARSEST_SPACING)


def random_allocation_losses(
    mechanism, neighbouring, loss_accuracy: float | None = None, base_loss=None
) -> tuple[BracketedLoss, BracketedLoss]:
    """The (remove, add) losses of a :class:`~gaussdp.mechanisms.RandomAllocation` epoch.

    Balls-in-bins (``selected = 1``) of a basic mechanism under add/remove
    neighbouring (:func:`allocation_losses`; ``base_loss(mechanism, 1.0)``
    gives the inner mechanism's loss, :func:`coordinate_of`); anything else is
    refused in one line (``selected = steps`` never gets here: it is a plain
    repetition, :meth:`RandomAllocation.expand`).
    """
    coordinate = coordinate_of(mechanism, neighbouring, base_loss)
    if mechanism.selected != 1:
        raise InvalidParameterError(
            f"RandomAllocation with selected = {mechanism.selected} (1 < k < t) has no pair of "
            "its own: account it whole (gaussdp.account splits it into allocation_parts)"
        )
    steps = mechanism.steps
    return allocation_losses(coordinate, steps, spacing_for(loss_accuracy, coordinate, steps))


def coordinate_of(part, neighbouring, base_loss=None) -> Coordinate:
    """The pair a random allocation (or a part of one) runs at every step; refused in one line.

    ``base_loss(mechanism, factor)`` is the loss of a basic mechanism (the
    accountant's :func:`gaussdp.pld.dominating_pairs._base_loss`, passed down);
    without it only a Gaussian is known here. Add/remove neighbouring only.
    """
    if neighbouring is not m.Neighbouring.ADD_REMOVE:
        raise InvalidParameterError(
            "RandomAllocation is accounted under add/remove neighbouring only "
            f"(got neighbouring={neighbouring.value}); use Neighbouring.ADD_REMOVE"
        )
    inner = part.mechanism
    if isinstance(inner, m.Gaussian):
        return Coordinate(inner, GaussianLoss(inner.sensitivity / inner.sigma))
    allowed = (
        "a basic mechanism (Gaussian, Laplace, DiscreteGaussian, RandomizedResponse, PureDP "
        "or ApproxDP)"
    )
    if base_loss is None or not _is_basic(inner):
        raise InvalidParameterError(
            f"mechanism of a RandomAllocation must be {allowed}, got {type(inner).__name__}"
        )
    return Coordinate(inner, base_loss(inner, 1.0))


def _is_basic(mechanism) -> bool:
    """Whether ``mechanism`` is one step of noise on one query (its loss the same both ways)."""
    return isinstance(
        mechanism,
        (m.Gaussian, m.Laplace, m.DiscreteGaussian, m.RandomizedResponse, m.PureDP, m.ApproxDP),
    )


def sum_statistic_losses(
    coordinate: Coordinate, steps: int, selected: int, loss_accuracy: float | None = None
) -> tuple[AtomicLoss, AtomicLoss]:
    """(remove, add) lower pairs of k-out-of-t allocation: the laws of the sum statistic.

    Under the pair of data sets in which the record is in ``selected`` of the
    ``steps`` steps and the others contribute nothing, the laws of S_c (each
    coordinate rounded up, ``selected`` of them shifted under P) are a
    post-processing of an actual pair (:func:`_lower_pairs`), so they bound
    the allocation's divergences from below
    (:class:`gaussdp.pld.allocation_parts.AllocationSumStatistic`). The grid
    follows ``loss_accuracy`` as :func:`spacing_for` says, within the cap.
    """
    spacing = spacing_for(loss_accuracy, coordinate, steps)
    finest = coordinate.finest(steps)
    if finest is not None:
        spacing = min(spacing, finest)
    top = coordinate.top(steps, _LOWER_TAIL)
    extent = _circle_extent(coordinate, steps, top, spacing)
    extent += (selected - 1) * top
    spacing = max(spacing, extent / (MAX_POINTS - 1))
    return _sum_statistic(coordinate, steps, selected, spacing)


@lru_cache(maxsize=4)
def _sum_statistic(coordinate: Coordinate, steps: int, selected: int, spacing: float):
    remove, add = _lower_pairs(_laws(coordinate, steps, spacing, shifted=selected))
    width = min(_FINE_GRID, spacing / 10.0)
    return _on_fine_grid(remove, OPTIMISTIC, width), _on_fine_grid(add, OPTIMISTIC, width)
