"""Composition of arbitrary trade-off curves through the PLD engine.

A piecewise-linear trade-off curve *is* a discrete pair: each segment of
slope −e^l is an outcome of privacy loss l whose P-mass is the drop in β and
whose Q-mass is the rise in α, and 1 − f(0) is P-mass at loss +∞
(:meth:`gaussdp.curves.PiecewiseLinear.privacy_loss`; Gomez et al. 2025,
Theorem A.10). Composing curves (Dong, Roth & Su 2022, Theorem 4) is then
composing these pairs, which the engine does with certified rounding: the
result is the pessimistic (connect-the-dots) curve, which lies below the
exact tensor product.

The functions live in :mod:`gaussdp.curves.numerical`, where the curves stand
above the engine's modules; they are handed on here under their old names.
"""

from gaussdp.curves.numerical import DEFAULT_GRID_SPACING, compose_tradeoffs, symmetric_curve

__all__ = ["DEFAULT_GRID_SPACING", "compose_tradeoffs", "symmetric_curve"]
