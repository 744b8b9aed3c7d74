"""k-out-of-t random allocation (1 < k < t): bracketed by two accounting parts.

No tight pair is known for a record allocated to k of the t steps of an epoch,
so the accountant splits the mechanism into two parts whose pairs bracket it
(:func:`allocation_parts`), and says so with every result
(:data:`K_OUT_OF_T_CAVEAT`):

* above, k runs of 1-out-of-⌊t/k⌋ balls-in-bins (:class:`AllocationBlock`;
  Feldman & Shenfeld 2025, arXiv 2502.08202, Lemma 3.2), each accounted by
  :func:`gaussdp.pld.allocation.allocation_losses`;
* below, the exact laws of the sum statistic of the t outputs under the k-subset
  pair (:class:`AllocationSumStatistic`,
  :func:`gaussdp.pld.allocation.sum_statistic_losses`), a post-processing.

The engine composes all upper pairs together and all lower pairs together, so
the blocks and the statistic give exactly those two bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from gaussdp import mechanisms as m
from gaussdp.pld.allocation import (
    allocation_losses,
    coordinate_of,
    spacing_for,
    sum_statistic_losses,
)
from gaussdp.pld.losses import REVEALS_NOTHING, BracketedLoss

__all__ = [
    "K_OUT_OF_T_CAVEAT",
    "AllocationBlock",
    "AllocationSumStatistic",
    "allocation_parts",
    "part_losses",
]

#: What the bounds of k-out-of-t allocation (1 < k < t) are, said with every accounting.
K_OUT_OF_T_CAVEAT = (
    "random allocation of k > 1 out of t steps: the upper bounds compose k runs of "
    "1-out-of-floor(t/k) allocation (Feldman & Shenfeld 2025, arXiv 2502.08202, Lemma 3.2), "
    "the lower bounds are those of the sum statistic of the t outputs (a post-processing); "
    "the gap between them is not numerical"
)


@dataclass(frozen=True)
class AllocationBlock(m.Mechanism):
    """Upper side of k-out-of-t allocation: one of k runs of 1-out-of-⌊t/k⌋ allocation.

    Feldman & Shenfeld (2025, arXiv 2502.08202, Lemma 3.2): the privacy
    profile of k-out-of-t random allocation is at most that of k composed
    runs of 1-out-of-⌊t/k⌋ allocation. An accounting part, made by
    :func:`allocation_parts` (never written in a file): its upper pair is
    balls-in-bins over ``steps`` = ⌊t/k⌋ (:func:`allocation_losses`),
    its lower pair reveals nothing; the lower bounds come from
    :class:`AllocationSumStatistic`, whose upper pair reveals nothing. The
    engine composes all upper pairs together and all lower pairs together, so
    the k blocks and the statistic give exactly those two bounds.
    """

    mechanism: m.Mechanism
    steps: int

    def _short(self) -> str:
        return f"AllocationBlock(1 of {self.steps}, {self.mechanism._short()})"

    def _children(self) -> tuple[m.Mechanism, ...]:
        return (self.mechanism,)


@dataclass(frozen=True)
class AllocationSumStatistic(m.Mechanism):
    """Lower side of k-out-of-t allocation: the law of S = Σᵢ e^{ℓᵢ} of the t outputs.

    With a Gaussian of μ = Δ/σ, a record allocated to k of the t steps and the
    other records contributing nothing is an actual pair of neighbouring data
    sets: P = average over k-subsets K of N(μ·1_K, I_t), Q = N(0, I_t). The
    laws of the rounded statistic S_c (every Yᵢ = e^{μxᵢ − μ²/2} rounded up to
    the grid, k of them shifted under P) are a post-processing of that pair,
    so their hockey-stick divergences are at most the mechanism's
    (:func:`gaussdp.pld.allocation.sum_statistic_losses`). An accounting part made by
    :func:`allocation_parts`; its upper pair reveals nothing (the upper bounds
    come from :class:`AllocationBlock`).
    """

    mechanism: m.Mechanism
    steps: int
    selected: int

    def _short(self) -> str:
        return f"AllocationSumStatistic({self.selected} of {self.steps}, {self.mechanism._short()})"

    def _children(self) -> tuple[m.Mechanism, ...]:
        return (self.mechanism,)


def allocation_parts(mechanism: m.RandomAllocation) -> list[tuple[m.Mechanism, int]]:
    """The accounting parts of k-out-of-t allocation (1 < k < t), with their counts.

    ``[(AllocationBlock(M, ⌊t/k⌋), k), (AllocationSumStatistic(M, t, k), 1)]``
    (see the two classes). Balls-in-bins (k = 1) and k = t are not split.

    Examples
    --------
    >>> from gaussdp.mechanisms import Gaussian, RandomAllocation
    >>> for part, count in allocation_parts(RandomAllocation(Gaussian(1.0), 10, 3)):
    ...     print(part, count)
    AllocationBlock(1 of 3, Gaussian(σ=1)) 3
    AllocationSumStatistic(3 of 10, Gaussian(σ=1)) 1
    """
    k, t = mechanism.selected, mechanism.steps
    return [
        (AllocationBlock(mechanism.mechanism, t // k), k),
        (AllocationSumStatistic(mechanism.mechanism, t, k), 1),
    ]


def part_losses(
    part, neighbouring, loss_accuracy: float | None = None, base_loss=None
) -> tuple[BracketedLoss, BracketedLoss]:
    """The (remove, add) losses of a part of k-out-of-t allocation (:func:`allocation_parts`).

    ``base_loss`` as in :func:`gaussdp.pld.allocation.coordinate_of`.
    """
    coordinate = coordinate_of(part, neighbouring, base_loss)
    if isinstance(part, AllocationBlock):
        if part.steps == 1:  # 1 out of 1: the mechanism itself
            uppers = (coordinate.loss, coordinate.loss)
        else:
            spacing = spacing_for(loss_accuracy, coordinate, part.steps)
            uppers = tuple(p.upper for p in allocation_losses(coordinate, part.steps, spacing))
        return tuple(  # type: ignore[return-value]
            BracketedLoss(upper=u, lower=REVEALS_NOTHING, caveat=K_OUT_OF_T_CAVEAT) for u in uppers
        )
    lowers = sum_statistic_losses(coordinate, part.steps, part.selected, loss_accuracy)
    return tuple(  # type: ignore[return-value]
        BracketedLoss(upper=REVEALS_NOTHING, lower=low, caveat=K_OUT_OF_T_CAVEAT) for low in lowers
    )
