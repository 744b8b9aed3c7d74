"""Blocks: many steps composed on a finer grid, then put on the composition's grid once.

Connect-the-dots (:func:`gaussdp.pld.grid.discretise`) errs by about h² per
discretisation: T steps discretised on a grid of spacing h and composed
carry T of those errors, which is what keeps a long run's upper bound above
the truth (:class:`gaussdp.accountant.grids.ErrorLaw`). A *block* of k steps
is discretised on h/r, composed there (k errors of (h/r)² each), and put on
the grid h by connect-the-dots once (:func:`regrid`): connect-the-dots
dominates any pair, a composed discrete one included. T steps as T // k
blocks and T mod k single steps then carry about T/k + T/r² + (T mod k)
errors of h² instead of T: with k = 256 and r = 4, about 15 times less on a
long run, for one composition of k steps on the finer grid.

The block is composed exponentially tilted (:func:`~gaussdp.pld.composition.compose_many`),
so its rounding errors are located: at most ``slack_below`` below its cut,
and above it at most ``slack_at_cut`` decaying with the loss. The
composition of the blocks reads those errors where they are
(see :func:`~gaussdp.pld.composition.compose_many`): placed everywhere,
5,000 blocks' rounding allowances were a floor of 3e-10 under every δ.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from gaussdp.pld.chernoff import blocked_terms, chernoff_cut, log_terms, spread
from gaussdp.pld.composition import (
    DEFAULT_TAIL,
    compose_many,
    plan_composition,
    tilted_discretisation_tail,
)
from gaussdp.pld.grid import PESSIMISTIC, GridPLD, discretise
from gaussdp.pld.losses import PrivacyLoss

__all__ = [
    "BLOCKS_BELOW_SPACING",
    "BLOCKS_FROM",
    "BLOCK_STEPS",
    "FINER",
    "blocked_items",
    "regrid",
]

#: Steps per block (k).
BLOCK_STEPS = 256
#: How many times finer the blocks' grid is than the composition's (r).
FINER = 4
#: Blocks are used from this many steps of one mechanism on (T // k ≥ 4).
BLOCKS_FROM = 4 * BLOCK_STEPS
#: ... and on grids finer than this. There is no floor: one at 1.5e-5 (until 2026-11-29)
#: let a step of σ across it read a larger upper bound, since the grid gets finer as σ
#: grows and q shrinks (σ = 4.36163, q = 0.003, T = 50,000: 0.5535543, and a hair
#: noisier 0.5535753, at δ = 1e-5); this ceiling is crossed towards blocks as σ grows.
#: On coarser grids (the accuracy's grid capped near dp_accounting's default, 1e-4) the
#: block's composition on a grid of h/4 cost the ImageNet report (σ = 2.5, T = 71,589,
#: h = 8.6e-5) a quarter of its time, and its target is a ratio to that accountant's
#: default.
BLOCKS_BELOW_SPACING = 5e-5
#: A block is tilted this many times more steeply than the composition's Chernoff λ.
_RATE_MARGIN = 1.25
#: Blocks are tilted at least as steeply as a composition tilted where its tail is this.
_RATE_TAIL = 1e-14
#: The floor all the blocks of a composition ask for together (what they lose goes to +∞).
_BLOCK_FLOOR = 1e-20


def regrid(pld: GridPLD, ratio: int) -> GridPLD:
    """A pessimistic distribution on spacing h/``ratio`` put on spacing h by connect-the-dots.

    An atom at loss l = (J + s/r)·h, 0 < s < r, is split between J·h and
    (J + 1)·h with b = p·(1 − e^{−s·h/r})/(1 − e^{−h}) at the top and p − b at
    the bottom, which keeps its P- and its Q-mass (Q = P·e^{−l}): the pair
    dominates the finer one (Doroshenko et al. 2022). Atoms on the coarse grid
    (s = 0) stay. The masses' errors keep their ℓ¹ size and move by less than
    h: the cut becomes the first coarse index at or above every error the fine
    cut had below it, and the decay of the errors above it ``ratio`` times
    faster per (coarse) index, from a cut moved down by at most r + 1 fine
    indices.
    """
    if pld.kind != PESSIMISTIC:
        raise ValueError(f"regrid needs a pessimistic distribution, got {pld.kind!r}")
    fine = pld.spacing
    spacing = fine * ratio
    first = pld.offset // ratio  # floor
    shift = pld.offset - first * ratio  # the first atom's residue
    size = pld.p_masses.size
    rows = -(-(shift + size) // ratio)
    padded = np.zeros(rows * ratio)
    padded[shift : shift + size] = pld.p_masses
    padded = padded.reshape(rows, ratio)  # row J: the atoms at (J + s/r)·h, s = 0 … r − 1
    # the share of an atom at residue s that goes to the top of its cell
    fraction = -np.expm1(-np.arange(ratio) * fine) / -math.expm1(-spacing)
    upper = padded @ fraction
    masses = np.zeros(rows + 1)
    masses[:-1] = padded.sum(axis=1) - upper
    masses[1:] += upper
    masses = np.maximum(masses, 0.0)
    last = int(np.flatnonzero(masses)[-1]) + 1 if masses.any() else 1
    masses = masses[:last]
    fields = {}
    if pld.cut_index is not None:
        # errors below the fine cut c land at coarse indices ≤ ⌈(c − 1)/r⌉
        cut = -((1 - pld.cut_index) // ratio)
        # from coarse X up: fine indices > r(X − 1), so S·e^{−d(r(X − 1) − c)}
        moved = pld.decay * (ratio * (cut - 1) - pld.cut_index)
        fields = {
            "slack_below": pld.slack_below,
            "cut_index": cut,
            "slack_at_cut": pld.slack_at_cut * math.exp(-moved),
            "decay": pld.decay * ratio,
        }
    elif pld.slack_below or pld.slack_at_cut:
        fields = {"slack_below": pld.slack_below, "slack_at_cut": pld.slack_at_cut}
    return GridPLD(
        spacing,
        first,
        masses,
        None,
        pld.infinity_mass,
        PESSIMISTIC,
        pld.slack,
        pld.compositions,
        **fields,
    )


def _composition_rate(single: GridPLD, count: int, tail: float) -> float:
    """λ per index of ``single``'s grid of the Chernoff bound at ``count`` steps' tail ``tail``.

    A composition tilted where its tail is ``tail`` or above has a λ at most this one
    (:func:`~gaussdp.pld.composition.compose_many`).
    """
    terms = log_terms([(single, count)])
    blocked = blocked_terms(terms)
    _, rate = chernoff_cut(terms, math.log(tail), spread(blocked), +1, blocked=blocked)
    return rate


@functools.lru_cache(maxsize=4)
def _block(
    loss: PrivacyLoss, spacing: float, count: int, longest: int, cut: float | None
) -> GridPLD | None:
    """The block of ``count`` steps' composition: :data:`BLOCK_STEPS` steps of ``loss``.

    ``cut`` None: for a tilted composition. Discretised on spacing/:data:`FINER`
    (leaving the tilted composition's tail of ``count`` steps beyond the grid,
    whatever the composition it joins: plain and tilted compositions share it),
    composed tilted at :data:`_RATE_MARGIN` times the Chernoff λ of ``count`` steps at
    the tail :data:`_RATE_TAIL` (:func:`_composition_rate`) and put on ``spacing``
    (:func:`regrid`). Else for a plain composition: discretised leaving ``cut`` beyond
    the grid and composed plain, so that its errors are one plain rounding allowance
    of :data:`BLOCK_STEPS` steps (a plain composition counts an item's errors at every
    loss: a tilted block's located ones, below its cut and decaying above it, count
    twice there). None where that composition would be longer than ``longest``
    points, or the window of a tilted one could not hold so steep a tilt.
    """
    tilted = cut is None
    fine = discretise(
        loss, spacing / FINER, PESSIMISTIC, tilted_discretisation_tail(count) if tilted else cut
    )
    plan = plan_composition([(fine, BLOCK_STEPS)])
    if plan.length > longest:
        return None
    if not tilted:
        return regrid(compose_many([(fine, BLOCK_STEPS)], plan=plan, tilt=False), FINER)
    # The block is tilted a little more steeply than the composition it joins will be:
    # its errors, relative to e^{−λ·loss} with its λ, stay small under the composition's
    # tilt (compose_many); tilted at its own tail they were 0.013 of ε at δ = 1e-11. (The
    # composition's λ per index of the finer grid, from that grid: λ scales with h.)
    composition = _composition_rate(fine, count, _RATE_TAIL)
    # One floor for every block, whatever the composition's (at most _BLOCK_FLOOR in all):
    # an accounting asked for a floor composes the blocks a query without one composed.
    composed = compose_many(
        [(fine, BLOCK_STEPS)],
        DEFAULT_TAIL,
        plan=plan,
        floor=_BLOCK_FLOOR / (count // BLOCK_STEPS),
        tilt=True,
        whole=True,
        rate=_RATE_MARGIN * composition,
    )
    del fine
    block = regrid(composed, FINER)
    if block.cut_index is not None and block.decay < FINER * composition:
        # the block's window could not hold so steep a tilt: under the composition's, its
        # errors above its switch would grow with the loss (single steps instead)
        return None
    return block


def blocked_items(
    loss: PrivacyLoss,
    spacing: float,
    count: int,
    cut: float,
    longest: int,
    tilted: bool = True,
) -> list[tuple[GridPLD, int]] | None:
    """The items of ``count`` compositions of ``loss``: blocks and single steps on ``spacing``.

    ``count`` // :data:`BLOCK_STEPS` blocks (:func:`_block`, the last few kept) and
    the rest as steps discretised on ``spacing``, leaving ``cut`` beyond the grid.
    ``tilted``: for a tilted composition. Its blocks lose at most 1e-20 of P-mass in all
    (the composition's floor aside); they serve every tilt of the composition down to a
    tail of :data:`_RATE_TAIL` (below it their errors weigh more, certified all the
    same), so that a report's tilts at several tails share one block. Else the blocks
    are composed plain, for a plain composition (:func:`_block`). None where ``count`` is below
    :data:`BLOCKS_FROM`, ``spacing`` not below :data:`BLOCKS_BELOW_SPACING`, or the
    block could not be made within ``longest`` points.
    """
    if count < BLOCKS_FROM or not spacing < BLOCKS_BELOW_SPACING:
        return None
    # (a plain block is the same for every count: one cache entry)
    block = _block(loss, spacing, count if tilted else 0, longest, None if tilted else cut)
    if block is None:
        return None
    blocks, rest = divmod(count, BLOCK_STEPS)
    items = [(block, blocks)]
    if rest:
        items.append((discretise(loss, spacing, PESSIMISTIC, cut), rest))
    return items
