"""One step of a random allocation as its accounting sees it: the law of Y = e^ℓ.

In one epoch of random allocation (balls-in-bins) the privacy loss is
L = log((1/t) Σᵢ Yᵢ), Yᵢ = e^{ℓ(xᵢ)} with ℓ the privacy loss of the mechanism
run at each step (:mod:`gaussdp.pld.allocation`). Everything that construction
needs from that mechanism is here: the masses of Y's cells on a grid under
both distributions, how far Y's grid must reach, the finest grid its low
sums ask for and the spread of Ȳ. A Gaussian's coordinate is log-normal, in
closed form; any other basic mechanism's cells are those of its own privacy
loss distribution at the edges log(k·h) (Feldman & Shenfeld, arXiv
2602.17284, compute the PLD of random allocation of any mechanism this way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from gaussdp import mechanisms as m
from gaussdp._numerics import monotone_root, normal_quantile_of_complement
from gaussdp.pld.losses import GaussianLoss, PrivacyLoss

__all__ = ["COORDINATE_TAIL", "LOW_TAIL", "Coordinate"]

#: Q-mass allowed on S ≤ t·h, whose add loss the upper pair puts at +∞.
LOW_TAIL = 1e-13
#: The P-mass, per epoch, beyond the top of the coordinate grid (counted at loss +∞).
COORDINATE_TAIL = 1e-21


def _cell_masses(log_edges: np.ndarray, mean: float, scale: float) -> tuple[np.ndarray, float]:
    """Masses of N(mean, scale²) on (−∞, e₀], (e₀, e₁], …, and above the last edge.

    Each cell is a difference of lower tails below the median and of upper
    tails above it, so that both tails keep their relative accuracy.
    """
    z = (log_edges - mean) / scale
    small = special.ndtr(-np.abs(z))  # the smaller tail at each edge
    below = z <= 0.0
    cdf = np.where(below, small, 1.0 - small)
    sf = np.where(below, 1.0 - small, small)
    cells = np.empty(z.size)
    cells[0] = cdf[0]
    both_below = below[1:] & below[:-1]
    cells[1:] = np.where(both_below, cdf[1:] - cdf[:-1], sf[:-1] - sf[1:])
    np.maximum(cells, 0.0, out=cells)
    return cells, float(sf[-1])


@dataclass(frozen=True)
class Coordinate:
    """One step's pair as the allocation sees it: Y = e^ℓ, ℓ the step's privacy loss.

    ``mechanism`` (the inner mechanism, run at every step) identifies it;
    ``loss`` is its privacy loss (remove direction; the basic mechanisms an
    allocation runs have the same loss in both directions). Under Q the
    coordinates are i.i.d. with the law of e^ℓ under the loss's second
    distribution; the one carrying the record has its law under the first.
    A Gaussian's cells are log-normal (:func:`_cell_masses`); any other
    loss's come from its own cell masses (``interval_masses``).
    """

    mechanism: m.Mechanism
    loss: PrivacyLoss = field(compare=False, hash=False)

    @property
    def gaussian_mu(self) -> float | None:
        return self.loss.mu if isinstance(self.loss, GaussianLoss) else None

    def cells(self, log_edges: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, float, float]:
        """P- and Q-masses of the cells of Y (0, e^{e₀}], (e^{e₀}, e^{e₁}], … and above.

        Returns (P cells, P above, Q cells, Q above, Q-mass at Y = 0); P's
        mass at infinite loss is above, Q's at −∞ loss (where P has none) is
        at Y = 0.
        """
        mu = self.gaussian_mu
        if mu is not None:
            half = 0.5 * mu * mu
            y_cells, y_over = _cell_masses(log_edges, -half, mu)
            x_cells, x_over = _cell_masses(log_edges, half, mu)
            return x_cells, x_over, y_cells, y_over, 0.0
        p, q = self.loss.interval_masses(log_edges)
        n = log_edges.size
        x_over = float(p[n]) + float(self.loss.infinity_mass)
        y_over = float(q[n])
        at_zero = max(1.0 - math.fsum(q), 0.0)  # Q's mass at −∞ loss, where P has none
        return p[:n], min(x_over, 1.0), q[:n], y_over, at_zero

    def top(self, steps: int, tail: float = COORDINATE_TAIL) -> float:
        """Y_max with P(X > Y_max) + (t − 1)·Q(Y > Y_max) ≤ ``tail``."""
        mu = self.gaussian_mu
        share = tail / 2.0
        if mu is not None:
            half = 0.5 * mu * mu
            return math.exp(
                max(
                    half + mu * float(normal_quantile_of_complement(share)),
                    -half + mu * float(normal_quantile_of_complement(share / max(steps - 1, 1))),
                )
            )
        high = max(self.loss.support(share)[1], self.loss.support(share / max(steps - 1, 1))[1])
        # a little above, so that an atom at the top of the support is inside the grid
        return math.exp(high) * (1.0 + 1e-9)

    def finest(self, steps: int) -> float | None:
        """The coarsest h with Q(S ≤ t·h) ≤ :data:`LOW_TAIL` (None: no h reaches it).

        S ≤ t·h needs every Yᵢ ≤ t·h, of Q-probability Q(Y ≤ t·h)^t.
        """
        level = math.exp(math.log(LOW_TAIL) / steps)
        mu = self.gaussian_mu
        if mu is not None:
            z = float(special.ndtri(level))
            return math.exp(mu * z - 0.5 * mu * mu) / steps

        at_zero = self.cells(np.array([0.0]))[4]

        def below(loss: float) -> float:  # Q(ℓ ≤ loss), with Q's mass at −∞
            (_, _), (_, cdf_q) = self.loss.tails(np.array([loss]))
            return float(cdf_q[0]) + at_zero

        low, high = self.loss.support(min(level, 1e-3) * 1e-3)
        low -= 1.0
        if below(low) > level:
            return None
        if below(high) <= level:
            return math.exp(high) / steps
        # the largest loss with Q(ℓ ≤ loss) ≤ level (the side where it holds, as evaluated)
        loss = monotone_root(lambda x: below(x) - level, low, high, side="low", rtol=1e-12)
        return math.exp(loss) / steps

    def spread(self, steps: int) -> float:
        """The standard deviation of Ȳ = S/t under Q: √((E_Q[Y²] − 1)/t) = √((E_P[Y] − 1)/t)."""
        mu = self.gaussian_mu
        if mu is not None:
            return math.sqrt(math.expm1(mu * mu) / steps)
        low, high = self.loss.support(1e-12)
        edges = np.linspace(low, max(high, low + 1e-9), 2001)
        p, _ = self.loss.interval_masses(edges)
        # each cell at its upper edge (the last at the top): E_P[e^ℓ] from above
        values = np.exp(np.append(edges, edges[-1]))
        second_moment = float(np.sum(p * values))
        return math.sqrt(max(second_moment - 1.0, 1e-12) / steps)
