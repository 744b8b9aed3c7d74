"""Balls-in-bins on two scales: the outcomes with exactly one coordinate above a split B.

One epoch of balls-in-bins is accounted through the law of S = Σᵢ Yᵢ
(:mod:`gaussdp.pld.allocation`), each Yᵢ = e^{ℓᵢ} rounded up to a grid that must
reach the coordinates' far tail, about e^{μ²/2 + 10μ}. For small σ that is
thousands of times the bulk of S (about t). Where a split B shortens that grid
enough, the outcomes are taken apart by how many coordinates exceed B:

* none: the fine laws of :mod:`gaussdp.pld.allocation`, on a grid that stops at B;
* exactly one (here): that coordinate in a block (B·2^j, B·2^{j+1}] on the grid
  h₀·2^j (h₀ about :data:`BLOCK_WIDTH`·B, rounded up), the other t − 1 summed
  on the fine grid h and regridded up to h₀·2^j. The statistic (j, v), v the
  block-grid sum, has S in [v − 2h₀2^j − (t − 1)h, v], a loss range about
  2·:data:`BLOCK_WIDTH` wide, and its laws are one small exact convolution per
  block (:func:`one_above_laws`). Under P the coordinate above B is the
  record's (the others then all Y's) or one of the t − 1 others (the others
  then X and t − 2 Y's); under Q any of the t;
* two or more: at most :data:`SPLIT_TAIL` of P- and Q-mass (:func:`split_point`,
  union bounds), left out of the lower pairs; the upper pairs spread it over the
  losses its sums may have (:mod:`gaussdp.pld.allocation_left_out`).

Each part is a statistic of the output, so the lower pairs (exact laws, merged)
stay dominated by the epoch, and the upper pairs (each value split between the
ends of its loss range, :func:`one_above_atoms`) dominate it. The blocks'
masses are computed relative to their own size, so the far tail of the remove
loss keeps its relative accuracy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gaussdp._numerics import next_fast_length
from gaussdp.pld.allocation_coordinate import Coordinate
from gaussdp.pld.allocation_tilt import error_atoms
from gaussdp.pld.composition import rounding_allowance

__all__ = [
    "BLOCK_WIDTH",
    "SPLIT_TAIL",
    "OneAbove",
    "one_above_atoms",
    "one_above_laws",
    "regridded",
    "split_point",
]

#: Two-scale laws: the P- (and Q-) mass, per epoch, of outcomes with two or more
#: coordinates above the split B, which the upper pairs spread over the losses their sums
#: may have (:mod:`gaussdp.pld.allocation_left_out`).
SPLIT_TAIL = 1e-14
#: ... the relative width of a cell of the coordinate above B (blocks (B·2^j, B·2^{j+1}]
#: on grids of B·2^j·BLOCK_WIDTH).
BLOCK_WIDTH = 1e-4


@dataclass(frozen=True)
class OneAbove:
    """Two-scale laws: the outcomes with exactly one coordinate in (B, Y_top].

    The coordinate above B lies in a block (B·2^j, B·2^{j+1}], on the block's
    grid h_j = h₀·2^j (rounded up); the others, all at most B, sum to R_c on
    the fine grid h (rounded up, t − 1 of them), regridded up to h_j. The
    statistic is (j, v), v the block-grid sum, on which S lies in
    [``low``, ``top``] = [v − 2h_j − (t − 1)h, v]. ``p`` and ``q`` are its
    laws (P: the record's coordinate above B with the others below, or one
    of the others above; Q: any of the t); ``noise`` is what each value's
    block may have of FFT noise (1e-12 of the block's mass). Block by block
    (arrays over j): ``errors`` bounds the ℓ¹ error of either law's values in
    the block (rounding, its own and the rests'), ``folded_p`` and
    ``folded_q`` the mass of its outcomes whose R_c the circle folded
    (misplaced lower: their S is at most ``rest_top`` above the block's top).
    """

    top: np.ndarray
    low: np.ndarray
    p: np.ndarray
    q: np.ndarray
    noise: np.ndarray
    block_top: np.ndarray
    block_low: np.ndarray
    errors: np.ndarray
    folded_p: np.ndarray
    folded_q: np.ndarray
    rest_top: float


def regridded(masses: np.ndarray, factor: int) -> np.ndarray:
    """Masses on r·h moved up to the grid factor·h: index r → ⌈r/factor⌉ (negatives to 0)."""
    masses = np.maximum(masses, 0.0)
    if factor == 1:
        return masses
    coarse = np.zeros(1 + math.ceil((masses.size - 1) / factor))
    coarse[0] = masses[0]
    padded = np.zeros((coarse.size - 1) * factor)
    padded[: masses.size - 1] = masses[1:]
    coarse[1:] = padded.reshape(-1, factor).sum(axis=1)
    return coarse


def split_point(coordinate: Coordinate, steps: int, top: float) -> float | None:
    """The smallest B (a hundredth of a nat apart) above which two coordinates are negligible.

    Under P at most (t − 1)·P(X > B)·Q(Y > B) + C(t − 1, 2)·Q(Y > B)², under
    Q at most C(t, 2)·Q(Y > B)² (union bounds) may have two or more
    coordinates above B; both at most :data:`SPLIT_TAIL`. None: no B below
    ``top`` is.
    """
    if top <= 1.0:
        return None
    log_edges = np.arange(0.0, math.log(top), 0.01)
    x_cells, x_over, y_cells, y_over, _ = coordinate.cells(log_edges)
    x_tail = np.cumsum(np.append(x_cells[1:], x_over)[::-1])[::-1]  # mass above each edge
    y_tail = np.cumsum(np.append(y_cells[1:], y_over)[::-1])[::-1]
    t = steps
    two_p = (t - 1) * x_tail * y_tail + 0.5 * (t - 1) * (t - 2) * y_tail**2
    two_q = 0.5 * t * (t - 1) * y_tail**2
    below = np.flatnonzero(np.maximum(two_p, two_q) <= SPLIT_TAIL)
    return float(math.exp(log_edges[below[0]])) if below.size else None


def one_above_laws(coordinate, steps, grids, rests, folded, over_split):
    """The laws of the outcomes with exactly one coordinate above the split (:class:`OneAbove`).

    ``grids`` = (B, h₀, h): the split, the first block's grid and the fine
    grid; ``rests`` = (R_P, R_Q, their rounding): the laws of the others on
    h₀ (X and t − 2 Y's, and t − 1 Y's, all at most B); ``folded``: bounds on
    the mass of each rest the circle folded; ``over_split``: P(X > B), Q(Y > B).
    Blocks (B·2^j, B·2^{j+1}] on grids h₀·2^j follow one another until the
    coordinate's top (:meth:`Coordinate.top`); each is one convolution,
    exact but for its FFT's rounding. Returns the laws and the P- and
    Q-mass of the outcomes neither in the fine laws nor here (two or more
    coordinates above B, or one above the last block).
    """
    from scipy import fft as scipy_fft  # here: 40 ms that `import gaussdp` need not pay

    split, block_spacing, spacing = grids
    rest_p, rest_q, rest_rounding = rests
    t = steps
    cells_per_block = round(split / block_spacing)
    top = coordinate.top(steps)
    tops, lows, ps, qs, noises = [], [], [], [], []
    errors, x_masses, y_masses = [], [], []
    low_edge = split
    while True:
        edges = low_edge + block_spacing * np.arange(cells_per_block + 1)
        x_cells, x_above, y_cells, y_above, _ = coordinate.cells(np.log(edges))
        above = np.zeros((2, cells_per_block + 1))  # index i: the value low_edge + i·h_j
        above[0, 1:] = x_cells[1 : cells_per_block + 1]
        above[1, 1:] = y_cells[1 : cells_per_block + 1]
        length = next_fast_length(cells_per_block + rest_p.size)
        x_hat, y_hat = scipy_fft.rfft(above, length, workers=2)
        rest_p_hat, rest_q_hat = scipy_fft.rfft(np.stack([rest_p, rest_q]), length, workers=2)
        p = scipy_fft.irfft(x_hat * rest_q_hat + (t - 1) * y_hat * rest_p_hat, length)
        q = scipy_fft.irfft(t * y_hat * rest_q_hat, length)
        np.maximum(p, 0.0, out=p)
        np.maximum(q, 0.0, out=q)
        n = np.arange(1, cells_per_block + rest_p.size)
        value = low_edge + n * block_spacing
        tops.append(value)
        lows.append(value - 2.0 * block_spacing - (t - 1) * spacing)
        ps.append(p[n])
        qs.append(q[n])
        x_mass, y_mass = float(above[0].sum()), float(above[1].sum())
        noises.append(np.full(n.size, 1e-12 * max(x_mass + (t - 1) * y_mass, t * y_mass)))
        errors.append((x_mass + 2 * t * y_mass) * (rounding_allowance(length, 4) + rest_rounding))
        x_masses.append(x_mass)
        y_masses.append(y_mass)
        if edges[-1] >= top:
            break
        low_edge = float(edges[-1])
        block_spacing *= 2.0
        rest_p, rest_q = regridded(rest_p, 2), regridded(rest_q, 2)
    if min(float(low.min()) for low in lows) <= 0.0:  # allocation_losses splits far above t·h
        raise ValueError(
            f"split {split:.6g} is not above the others' rounding, {t - 1}·{spacing:.3g}"
        )
    x_split, y_split = over_split
    folded_p_rest, folded_q_rest = folded
    x_big, y_big = np.asarray(x_masses), np.asarray(y_masses)
    laws = OneAbove(
        np.concatenate(tops),
        np.concatenate(lows),
        np.concatenate(ps),
        np.concatenate(qs),
        np.concatenate(noises),
        np.array([float(top.max()) for top in tops]),
        np.array([float(low.min()) for low in lows]),
        np.asarray(errors),
        x_big * folded_q_rest + (t - 1) * y_big * folded_p_rest,
        t * y_big * folded_q_rest,
        (t - 1) * split,
    )
    p_over = x_above + (t - 1) * y_above
    p_over += (t - 1) * x_split * y_split + 0.5 * (t - 1) * (t - 2) * y_split**2
    q_over = t * y_above + 0.5 * t * (t - 1) * y_split**2
    return laws, min(p_over, 1.0), min(q_over, 1.0)


def one_above_atoms(one: OneAbove, steps: int):
    """The upper pairs' atoms of the outcomes with one coordinate above B, and their allowances.

    On a value with S in [low, top] the remove loss lies in
    [a, b] = [log(low/t), log(top/t)]: each value is split between the two
    ends with its P- and Q-mass kept (connect-the-dots, as the fine cells'
    upper pairs do, :mod:`gaussdp.pld.allocation`); add alike, losses
    [−b, −a]. The laws' errors, block by block, act only up to the block's
    largest likelihood ratio (e^b ≤ max(top)/t; add: e^{−a} ≤ t/min(low)):
    atoms just above it (:func:`~gaussdp.pld.allocation_tilt.error_atoms`),
    where before they sat at +∞ (5.6e-15 at σ = 0.7, t = 20). The outcomes
    whose rest the circle folded have S up to ``rest_top`` above their block:
    their P-mass at loss log((max(top) + rest_top)/t), their Q-mass (add) at
    −log(B/t) at most, as atoms.
    Returns (remove atoms, add atoms, remove's mass at +∞, add's), the atoms
    as (losses, first masses, second masses).
    """
    t = float(steps)
    top, low, p, q = one.top, one.low, one.p, one.q
    spread = 1.0 - low / top  # 1 − e^{a−b}
    p_top = np.clip((p - q * (low / t)) / spread, 0.0, p)
    p_low = p - p_top
    q_high = np.clip((q - p * (t / top)) / spread, 0.0, q)  # first-measure mass at −a
    q_low = q - q_high
    # blocks double: an atom at twice a block's cap (the next block's) costs twice its errors
    remove_errors = error_atoms(
        one.block_top / t, one.errors + one.folded_p, one.errors + one.folded_q, math.log(2.0)
    )
    add_errors = error_atoms(
        t / one.block_low, one.errors + one.folded_q, one.errors + one.folded_p, math.log(2.0)
    )
    folded_loss = np.log((one.block_top + one.rest_top) / t)
    split_loss = -math.log(float(one.block_low.min()) / t)
    remove = (
        np.concatenate([np.log(top / t), np.log(low / t), remove_errors[0], folded_loss]),
        np.concatenate([p_top, p_low, remove_errors[1], one.folded_p]),
        np.concatenate(
            [
                p_top * (t / top),
                p_low * (t / low),
                remove_errors[2],
                one.folded_p * np.exp(-folded_loss),
            ]
        ),
    )
    folded_q = float(one.folded_q.sum())
    add = (
        np.concatenate([-np.log(low / t), -np.log(top / t), add_errors[0], [split_loss]]),
        np.concatenate([q_high, q_low, add_errors[1], [folded_q]]),
        np.concatenate(
            [
                q_high * (low / t),
                q_low * (top / t),
                add_errors[2],
                [folded_q * math.exp(-split_loss)],
            ]
        ),
    )
    return remove, add, 0.0, 0.0
