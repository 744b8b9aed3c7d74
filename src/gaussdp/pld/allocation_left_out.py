"""Balls-in-bins: the outcomes the laws of S leave out, spread over the losses they may have.

The laws of S_c (:mod:`gaussdp.pld.allocation`) hold the outcomes with every
coordinate at most the grid's top c and S_c below the circle's end. The
others (the circle's fold, a coordinate above the top, and with two scales two
coordinates above the split) have unbounded or large remove loss log(S/t), so
the upper pair must carry their P-mass. Put at +∞, it was the floor of every δ
(1e-14 per epoch with two scales). Here it is spread instead: a bound
T(s) ≥ P(event, S > s) over a ladder of sums gives atoms at the losses
log(s/t) (:func:`_spread`), by union bounds over which coordinates are large
and a Chernoff bound on the sum of the rest (:func:`left_out`).
"""

from __future__ import annotations

import math

import numpy as np

from gaussdp.pld.allocation_coordinate import Coordinate

__all__ = ["left_out"]

#: The left-out P-mass is spread over sums s₀·e^{0 … 40} in steps of 0.05 nats; the
#: others' sums R in the tails over this many (each a Chernoff bound).
_LEFT_OUT_REACH = 40.0
_LEFT_OUT_STEP = 0.05
_REST_SUMS = 24


def _tail_masses(coordinate: Coordinate, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(X > v) and Q(Y > v) for increasing values v > 0 (X the record's coordinate)."""
    x_cells, x_over, y_cells, y_over, _ = coordinate.cells(np.log(values))
    tails = []
    for cells, over in ((x_cells, x_over), (y_cells, y_over)):
        suffix = np.cumsum(cells[::-1])[::-1]  # Σ_{j ≥ i}
        tails.append(np.append(suffix[1:], 0.0) + over)
    return tails[0], tails[1]


def _tails_at(coordinate: Coordinate, values: np.ndarray) -> np.ndarray:
    """P(X > v) and Q(Y > v) for positive values v of any shape (stacked: shape (2, *v))."""
    flat = np.ravel(values)
    order = np.argsort(flat, kind="stable")
    tails = np.empty((2, flat.size))
    tails[:, order] = _tail_masses(coordinate, flat[order])
    return tails.reshape((2, *np.shape(values)))


def _spread(sums: np.ndarray, tails: np.ndarray, steps: int):
    """Remove atoms for P-mass with S ≥ s₀, given T_i ≥ P(S > s_i) (T₀ ≥ all of it).

    The mass with S in (s_i, s_{i+1}] has remove loss at most log(s_{i+1}/t),
    so T_i − T_{i+1} of P-mass there (Q-mass e^{−loss} times it) dominates it:
    the atoms' mass above any loss is at least the outcomes'. Returns the
    atoms and T of the last sum (the mass above it).
    """
    tails = np.minimum.accumulate(np.minimum(tails, 1.0))
    mass = tails[:-1] - tails[1:]
    losses = np.log(sums[1:] / steps)
    keep = mass > 0.0
    return (losses[keep], mass[keep], mass[keep] * np.exp(-losses[keep])), float(tails[-1])


def left_out(coordinate: Coordinate, steps: int, grid, fold, capped_sum):
    """The remove upper pair's atoms for the P-mass the laws leave out (the rest at +∞).

    Its loss is log(S/t); each part is spread over the sums it may have
    (:func:`_spread`), with tail bounds from union bounds over coordinates (X
    the record's, Y the others'). For the others' sum R (all but one or two
    coordinates), P(R > r) ≤ P(Σ min(Yᵢ, c) > r) + P(some Yᵢ > c), c the
    grid's top, the first a Chernoff bound (``capped_sum(r)``,
    :func:`gaussdp.pld.allocation._wrap_bound`); each tail is the least over a
    ladder of r:

    * the circle's fold, S ≥ N·h with every coordinate at most c: Chernoff
      bounds on S ≥ s (``fold``) up to t·c, where S ends (its rest at loss
      log c);
    * a coordinate above v₀ (c, or with two scales the blocks' top):
      P(Yᵢ > v₀, S > s) ≤ P(Yᵢ > max(v₀, s − r)) + P(Yᵢ > v₀)·P(R > r);
    * with two scales, two coordinates above the split B:
      P(Yᵢ > B, Yⱼ > B, S > s) ≤ P(Yᵢ > max(B, (s − r)/2))·P(Yⱼ > B)
      + P(Yᵢ > B)·P(Yⱼ > max(B, (s − r)/2)) + P(Yᵢ > B)·P(Yⱼ > B)·P(R > r).

    Before, all but the fold sat at +∞: 1e-14 per epoch with two scales,
    the floor of the upper bound at small δ.
    """
    grid_top, split, x_split, y_split = grid
    sums, fold_tails = fold
    t = steps
    atoms, rest = _spread(sums, fold_tails, t)
    losses, p, q = atoms  # the fold's rest at log c, where the sums end
    parts = [
        (np.append(losses, math.log(grid_top)), np.append(p, rest), np.append(q, rest / grid_top))
    ]
    infinity = 0.0
    x_cap, y_cap = _tail_masses(coordinate, np.array([grid_top]))
    cap_tail = float(x_cap[0]) + (t - 1) * float(y_cap[0])
    rests = np.geomspace(0.5 * t, t * grid_top, _REST_SUMS)
    rest_tails = np.array([min(capped_sum(r) + cap_tail, 1.0) for r in rests])
    ratio = np.exp(np.arange(0.0, _LEFT_OUT_REACH, _LEFT_OUT_STEP))
    above = grid_top if split is None else coordinate.top(steps)
    # some coordinate above v₀
    s = above * ratio
    x_far, y_far = _tails_at(coordinate, np.maximum(above, s[:, None] - rests[None, :]))
    total = float(np.sum(_tails_at(coordinate, np.array([above])) * np.array([[1.0], [t - 1]])))
    tails = np.min(x_far + (t - 1) * y_far + total * rest_tails[None, :], axis=1)
    atoms, rest = _spread(s, tails, t)
    parts.append(atoms)
    infinity += rest
    if split is not None:  # two coordinates above the split B
        s = 2.0 * split * ratio
        half = np.maximum(split, 0.5 * (s[:, None] - rests[None, :]))
        x_far, y_far = _tails_at(coordinate, half)
        two = (t - 1) * x_split * y_split + 0.5 * (t - 1) * (t - 2) * y_split**2
        tails = np.min(
            (t - 1) * (x_far * y_split + x_split * y_far)
            + (t - 1) * (t - 2) * y_far * y_split
            + two * rest_tails[None, :],
            axis=1,
        )
        atoms, rest = _spread(s, tails, t)
        parts.append(atoms)
        infinity += rest
    return (*(np.concatenate([part[i] for part in parts]) for i in range(3)), infinity)
