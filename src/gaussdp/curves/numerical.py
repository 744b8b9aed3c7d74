"""Curves composed numerically: trade-off curves on the PLD engine, and back.

A piecewise-linear curve *is* a discrete dominating pair
(:meth:`gaussdp.curves.PiecewiseLinear.privacy_loss`; Gomez et al. 2025,
Theorem A.10), so arbitrary curves compose on the engine of :mod:`gaussdp.pld`
(Dong, Roth & Su 2022, Theorem 4): :func:`compose_tradeoffs`, which
:func:`gaussdp.curves.compose` uses where no closed form applies. The way back,
from composed privacy profiles to a curve, is :func:`symmetric_curve`, which
the accountant uses for :meth:`gaussdp.accountant.Accounting.tradeoff`.

This module stands above the engine's modules (``gaussdp.pld.composition``,
``grid``, ``losses``, ``query``), which know nothing of curves; both names are
also :mod:`gaussdp.pld.tradeoffs`'.
"""

from __future__ import annotations

import numpy as np

from gaussdp.curves._tradeoff import PiecewiseLinear
from gaussdp.pld.composition import compose_many
from gaussdp.pld.grid import PESSIMISTIC, discretise
from gaussdp.pld.losses import AtomicLoss
from gaussdp.pld.query import profile_of

__all__ = ["compose_tradeoffs", "pair_of_curve", "symmetric_curve"]

DEFAULT_GRID_SPACING = 1e-4
_TAIL = 1e-30


def pair_of_curve(curve) -> AtomicLoss:
    """The discrete pair of a curve (remove direction): one atom per segment.

    A segment of slope −e^l is an outcome of privacy loss l whose P-mass is
    the drop in β and whose Q-mass the rise in α; 1 − f(0) and vertical
    segments are P-mass at +∞ (Gomez et al. 2025, Theorem A.10). Closed-form
    curves enter through their pessimistic piecewise-linear approximation.
    """
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
    curves = list(curves)
    profiles = []
    for orient in (lambda f: f, lambda f: f.inverse()):
        items = [
            (discretise(pair_of_curve(orient(curve)), grid_spacing, PESSIMISTIC, _TAIL), 1)
            for curve in curves
        ]
        profiles.append(profile_of(compose_many(items)))
    return symmetric_curve(profiles)


def symmetric_curve(profiles):
    """The symmetric trade-off curve sup_{ε ≥ 0} f_{ε, δ(ε)} of δ = max over ``profiles``.

    Dong, Roth & Su (2022), Propositions 5–6: for each profile (one
    neighbouring direction) the test on the atoms of loss above a threshold
    has false-positive rate S_Q and true-positive rate S_P + P(+∞) + slack;
    the lower convex hull of these points over every profile, reflected in
    the diagonal, is the curve. Only atoms of loss ≥ 0 are read, straight off
    the suffix sums (accurate at small α): the P-masses of very negative
    losses are below one ulp of the sums, so rebuilding masses by differences
    loses their Q-mass and invents mass at infinite loss. Each profile's
    allowance is honoured on its own side: a positive shift (a pessimistic
    profile's slack) is P-mass at infinite loss and lowers f(0); a negative
    one (an optimistic profile lowered by its allowance) raises every β by as
    much (Proposition 6: f(α) = sup_ε 1 − δ(ε) − e^ε α), capped at 1 − α.
    """
    chains = []
    for profile in profiles:
        allowance = profile.shift + profile.shift_below + profile.shift_at_cut
        infinity = min(profile.infinity_mass + max(allowance, 0.0), 1.0)
        raise_by = max(-allowance, 0.0)
        head = int(np.searchsorted(profile.losses, 0.0, side="left"))
        with np.errstate(over="ignore"):
            tail_q = np.exp(profile.log_tail_q[head:])
        alphas = np.concatenate(([0.0], tail_q))
        betas = np.concatenate(([1.0 - infinity], 1.0 - infinity - profile.tail_p[head:]))
        betas = np.clip(np.minimum(betas + raise_by, 1.0 - alphas), 0.0, 1.0)
        chains += [(alphas, betas), (betas, alphas)]
    return PiecewiseLinear._from_chains(chains)
