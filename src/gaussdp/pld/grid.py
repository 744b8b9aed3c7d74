"""Privacy loss distributions on a uniform grid, with certified rounding.

A :class:`GridPLD` holds the masses of a privacy loss distribution on the
grid {k·h : k = offset, …, offset + n − 1} plus a mass at +∞, in one of two
certified forms (see :func:`discretise`):

``pessimistic``
    Connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022):
    the mass of each cell (l_k, l_{k+1}] is split between its two ends so
    that both its P-mass and its Q-mass are kept. Splitting an outcome into
    two more distinguishable ones is the reverse of post-processing, so the
    result is a *dominating* pair: every δ(ε) computed from it is an upper
    bound, and composition keeps it one. Mass below the grid is moved up to
    its lowest point and mass above it to +∞, both of which only increase
    the loss. The Q-mass of atom k is p_k·e^{−l_k}; only P-masses are stored.

``optimistic``
    Binning: the outcomes whose loss falls in (l_k − h/2, l_k + h/2] are
    merged into one outcome labelled k, keeping *both* its P-mass and its
    Q-mass (whose ratio is the merged outcome's true likelihood ratio, not
    e^{l_k}). Merging outcomes is post-processing, so the pair is dominated
    by the true one, every composition of such pairs is dominated by the true
    composition, and δ(ε) = Σ_k (P_k − e^ε Q_k)_+ + P(+∞) is a lower bound.
    The labels only group outcomes for the FFT, and any regrouping (trimming
    folds extreme atoms into the boundary ones) is again post-processing.

    The Q-masses are stored *tilted*, R_k = Q_k·e^{l_k}. Tilting commutes
    with convolution (labels add, so e^{l} multiplies), and R_k is of the
    size of P_k wherever δ is decided, so the FFT's absolute rounding error
    (~1e-17 of the largest mass) stays negligible there; untilted, Q_k at
    large losses is ~e^{−l_k} smaller and that error would dominate it.

Both forms answer ``delta(epsilon)`` and ``epsilon(delta)`` exactly for the
discrete pair they describe (:mod:`gaussdp.pld.query`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gaussdp._numerics import CACHE_CHUNK
from gaussdp.pld.losses import PrivacyLoss

__all__ = ["GridPLD", "discretise"]

PESSIMISTIC = "pessimistic"
OPTIMISTIC = "optimistic"


@dataclass(frozen=True, eq=False)
class GridPLD:
    """A discretised privacy loss distribution for one neighbouring direction.

    Attributes
    ----------
    spacing : float
        Grid spacing h (nats).
    offset : int
        Grid index of ``p_masses[0]``; atom j sits at loss (offset + j)·h.
    p_masses : ndarray
        P-mass of each grid atom.
    tilted_q_masses : ndarray or None
        Q-mass of each grid atom times e^{loss}, R_k = Q_k·e^{l_k}
        (optimistic form only; the pessimistic form implies Q_k = P_k·e^{−l_k},
        i.e. R = P).
    infinity_mass : float
        P-mass at loss +∞.
    kind : {"pessimistic", "optimistic"}
    slack : float
        Upper bound on the P-mass that FFT composition may have placed on the
        unsafe side (wrapped around the window, or moved by rounding): added
        to every pessimistic δ, subtracted from every optimistic one.
    slack_below : float
        Extra slack for δ(ε) at ε below ``cut_index``·h only (pessimistic
        forms computed with exponential tilting, see
        :func:`gaussdp.pld.composition.compose_many`).
    cut_index : int or None
        Grid index from which the masses come from the tilted computation.
    slack_at_cut, decay : float
        The rounding error of the tilted masses above loss l ≥ cut is at most
        slack_at_cut·e^{−decay·(l − cut)/h}; added to δ(ε) for ε ≥ cut.
    noise_p, noise_q : float
        The largest magnitude of a negative value the FFT left in the P row
        and in the tilted Q row before they were clipped at 0: the size of
        their rounding noise. An optimistic profile leaves out the atoms whose
        masses are not clearly above it (:func:`gaussdp.pld.query.profile_of`).
    """

    spacing: float
    offset: int
    p_masses: np.ndarray
    tilted_q_masses: np.ndarray | None
    infinity_mass: float
    kind: str
    slack: float = 0.0
    compositions: int = field(default=1)
    slack_below: float = 0.0
    cut_index: int | None = None
    slack_at_cut: float = 0.0
    decay: float = 0.0
    noise_p: float = 0.0
    noise_q: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        """Loss value of each grid atom."""
        return (self.offset + np.arange(self.p_masses.size)) * self.spacing

    @property
    def is_pessimistic(self) -> bool:
        return self.kind == PESSIMISTIC

    def q_masses(self) -> np.ndarray:
        """Q-masses, from the tilted ones or implied by P_k·e^{−l_k}."""
        tilted = self.p_masses if self.tilted_q_masses is None else self.tilted_q_masses
        return tilted * np.exp(-self.losses)


#: Below this exponent e^l is computed as such (e^700 ≈ 1e304); above, e^{l + log q}.
_LARGEST_EXPONENT = 700.0


def _times_exp(masses: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """masses·e^{losses} for ascending losses, without e^l overflowing past ~709 nats.

    Up to :data:`_LARGEST_EXPONENT` the product as written; beyond, e^{l + log m}
    (a Gaussian of μ = 73 has losses of 3,000 nats, whose Q-masses times e^l are
    finite where e^l is not: the product read inf·0 = NaN).
    """
    if losses.size == 0 or losses[-1] <= _LARGEST_EXPONENT:
        return masses * np.exp(losses)
    result = np.empty(masses.size)
    safe = np.searchsorted(losses, _LARGEST_EXPONENT, side="right")
    result[:safe] = masses[:safe] * np.exp(losses[:safe])
    with np.errstate(divide="ignore"):
        result[safe:] = np.exp(losses[safe:] + np.log(masses[safe:]))
    return result


#: Binned cells whose computed Q-mass is below this (it underflows near 1e-308) take it
#: from the loss's log Q-tails where the loss has them.
_UNDERFLOWING_Q = 1e-250


def _underflowed_q_from_logs(loss, edges, grid, cells_p, cells_q, tilted) -> None:
    """Tilted Q-masses Q_k·e^{l_k} of binned cells where Q_k underflows, from log Q-tails.

    At losses of about 700 nats and more Q's mass is below 1e-308: computed
    as a difference of tails it is 0 (or a subnormal with a few bits), and the
    lower bound leaves such cells out (σ = 0.03, q = 0.01, one step: the lower
    bound on ε at δ = 1e-20 stopped at 695.7 where ε is 841.97). Where the loss
    gives log Q(L > x) (:meth:`~gaussdp.pld.losses.PrivacyLoss.log_q_above`),
    Q_k = Q(L > e_{k−1}) − Q(L > e_k) is taken in logarithms,
    log Q(L > e_{k−1}) + log1p(−e^{log Q(L > e_k) − log Q(L > e_{k−1})}), and
    ``tilted`` is written in place (the bottom cell is never such a cell).
    """
    index = np.flatnonzero((cells_q < _UNDERFLOWING_Q) & (cells_p > 0))
    index = index[index > 0]
    if index.size == 0:
        return
    lower = loss.log_q_above(edges[index - 1])
    if lower is None:
        return
    upper = np.full(index.size, -np.inf)
    inside = index < edges.size  # the top cell, (e_{n−1}, ∞), has no upper edge
    upper[inside] = loss.log_q_above(edges[index[inside]])
    with np.errstate(divide="ignore", invalid="ignore"):
        log_cell = lower + np.log1p(-np.exp(upper - lower))
    log_cell = np.where(np.isnan(log_cell), -np.inf, log_cell)
    with np.errstate(over="ignore"):
        tilted[index] = np.exp(log_cell + grid[index])


#: Grids of more points than this are laid over the loss's
#: :meth:`~gaussdp.pld.losses.PrivacyLoss.tight_support` (whose
#: search, about 0.15 ms, is more than a grid this short costs to discretise).
NARROWED_FROM_POINTS = 4096


def discretise(loss: PrivacyLoss, spacing: float, kind: str, tail: float) -> GridPLD:
    """Discretise an exact privacy loss onto the grid of the given spacing.

    Parameters
    ----------
    loss : PrivacyLoss
        The exact privacy loss of one dominating pair.
    spacing : float
        Grid spacing h.
    kind : {"pessimistic", "optimistic"}
        Which certified rounding to apply (see the module docstring).
    tail : float
        The grid covers all but ``tail`` of the P- and Q-mass on each side;
        what lies beyond is moved as each rounding requires.
    """
    loss = loss.for_bound(kind)  # a bracketed mechanism: its upper or its lower pair
    low, high = loss.support(tail)
    if (high - low) / spacing > NARROWED_FROM_POINTS:  # worth a search for tighter ends
        low, high = loss.tight_support(tail)
    k_low = math.floor(low / spacing)
    k_high = max(math.ceil(high / spacing), k_low + 1)
    grid = np.arange(k_low, k_high + 1) * spacing
    if kind == PESSIMISTIC:
        cells_p, cells_q = loss.interval_masses(grid)
        # cells: (-inf, l_0], (l_0, l_1], ..., (l_{n-1}, +inf)
        p = np.zeros(grid.size)
        p[0] = cells_p[0]  # everything at or below the grid, rounded up to its lowest point
        # Split cell (l_k, l_{k+1}]: b to l_{k+1}, a = p − b to l_k, keeping P and Q mass:
        # b = (p − e^{l_k} q)/(1 − e^{−h}). In chunks that stay in the processor's cache.
        for start in range(0, grid.size - 1, CACHE_CHUNK):
            stop = min(start + CACHE_CHUNK, grid.size - 1)
            inner_p, inner_q = cells_p[start + 1 : stop + 1], cells_q[start + 1 : stop + 1]
            charged = _times_exp(inner_q, grid[start:stop])
            upper = (inner_p - charged) / -math.expm1(-spacing)
            upper = np.clip(upper, 0.0, inner_p)
            p[start + 1 : stop + 1] += upper
            p[start:stop] += inner_p - upper
        infinity = loss.infinity_mass + float(cells_p[-1])
        return GridPLD(spacing, k_low, p, None, min(infinity, 1.0), PESSIMISTIC)
    if kind == OPTIMISTIC:
        edges = (np.arange(k_low, k_high) + 0.5) * spacing
        cells_p, cells_q = loss.interval_masses(edges)
        tilted = _times_exp(cells_q, grid)
        _underflowed_q_from_logs(loss, edges, grid, cells_p, cells_q, tilted)
        return GridPLD(spacing, k_low, cells_p, tilted, loss.infinity_mass, OPTIMISTIC)
    raise ValueError(f"kind must be 'pessimistic' or 'optimistic', got {kind!r}")
