"""Composition of arbitrary trade-off curves through the PLD engine.

A piecewise-linear trade-off curve *is* a discrete pair: each segment of
slope −e^l is an outcome of privacy loss l whose P-mass is the drop in β and
whose Q-mass is the rise in α, and 1 − f(0) is P-mass at loss +∞
(:meth:`gaussdp.curves.PiecewiseLinear.privacy_loss`; Gomez et al. 2025,
Theorem A.10). Composing curves (Dong, Roth & Su 2022, Theorem 4) is then
composing these pairs, which the engine does with certified rounding: the
result is the pessimistic (connect-the-dots) curve, which lies below the
exact tensor product.
"""

from __future__ import annotations

import numpy as np

from gaussdp.pld.composition import compose_many
from gaussdp.pld.grid import PESSIMISTIC, discretise
from gaussdp.pld.losses import AtomicLoss
from gaussdp.pld.query import profile_of

__all__ = ["compose_tradeoffs"]

DEFAULT_GRID_SPACING = 1e-4
_TAIL = 1e-30


def _pair(curve) -> AtomicLoss:
    piecewise = curve if hasattr(curve, "privacy_loss") else curve.piecewise_linear()
    losses, probabilities, infinity = piecewise.privacy_loss()
    finite = np.isfinite(losses)
    infinity += float(probabilities[~finite & (losses > 0)].sum())
    losses, probabilities = losses[finite], probabilities[finite]
    return AtomicLoss.from_atoms(
        losses, probabilities, probabilities * np.exp(-losses), min(infinity, 1.0)
    )


def compose_tradeoffs(curves, *, grid_spacing: float = DEFAULT_GRID_SPACING):
    """The tensor product of trade-off curves, as a symmetric curve below the exact one.

    Each curve f gives the pair of the "remove" direction and f⁻¹ that of
    the "add" direction; both are composed, and the result is the symmetric
    curve of their common privacy profile, sup_{ε ≥ 0} f_{ε, δ(ε)} with
    δ = max over the two directions (Dong, Roth & Su 2022, Propositions 5–6),
    read off the atoms of loss ≥ 0. It lies below f₁ ⊗ … ⊗ f_n and below its
    inverse; for symmetric curves it is the tensor product up to the
    discretisation, for asymmetric ones it is their symmetrisation (valid
    for a symmetric neighbouring relation, and pessimistic). Closed-form
    curves enter through their pessimistic piecewise-linear approximation.

    Parameters
    ----------
    curves : sequence of TradeOff
    grid_spacing : float
        The engine's grid spacing (nats).

    Returns
    -------
    gaussdp.curves.PiecewiseLinear
    """
    from gaussdp import curves as curves_module

    curves = list(curves)
    # Only atoms of loss >= 0 of each orientation are read (from the suffix sums,
    # accurate at small alpha), and the symmetric curve is their envelope and its
    # reflection: -diff(tail_p)·e^{-l} loses the Q-mass of very negative losses
    # and turned it into spurious mass at +inf (f(0) = 1 - 3e-5 for G_3 ⊗ Lap_3).
    xs, ys = [], []
    for orient in (lambda f: f, lambda f: f.inverse()):
        items = [
            (discretise(_pair(orient(curve)), grid_spacing, PESSIMISTIC, _TAIL), 1)
            for curve in curves
        ]
        profile = profile_of(compose_many(items))
        infinity = min(
            profile.infinity_mass + profile.shift + profile.shift_below + profile.shift_at_cut, 1.0
        )
        head = int(np.searchsorted(profile.losses, 0.0, side="left"))
        with np.errstate(over="ignore"):
            tail_q = np.exp(profile.log_tail_q[head:])
        alphas = np.concatenate(([0.0], tail_q))
        betas = np.clip(
            np.concatenate(([1.0 - infinity], 1.0 - infinity - profile.tail_p[head:])), 0.0, 1.0
        )
        betas = np.minimum(betas, 1.0 - alphas)
        xs += [alphas, betas]
        ys += [betas, alphas]
    return curves_module.PiecewiseLinear._from_vertices(np.concatenate(xs), np.concatenate(ys))
