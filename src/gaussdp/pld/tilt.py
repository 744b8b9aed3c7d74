"""Exponential tilts of composed rows, and the atoms a tilted composition leaves out.

A composition of rows tilted by e^{λk}/M_i(λ) is the tilted composition
exactly, and untilting an entry r multiplies its rounding error by
e^{log Π M^c − λr}: relative to the tail instead of to the whole
distribution (:func:`gaussdp.pld.composition.compose_many`,
:mod:`gaussdp.pld.lower_tail`). :class:`Tilt` rounds λ and the log M_i so
that this factor is rounded once; :func:`reachable` finds the atoms whose
sums hold too little P-mass to be composed, which under a tilt weigh most.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gaussdp._numerics import UNIT_ROUNDOFF
from gaussdp.pld.grid import GridPLD

__all__ = ["Tilt", "reachable", "tail_index"]


@dataclass(frozen=True)
class Tilt:
    """An exponential tilt e^{λk}/M_i(λ) of composed rows, with exactly representable exponents.

    λ is rounded to a number whose products with every index up to ``full``
    are exact, and each log M_i up (so that a tilted row sums to at most 1) to
    a multiple of 2^−K whose products with the counts, and their sum log Π M^c,
    are exact. The untilting exponent log Π M^c − λr of a composed entry is
    then rounded once, not after cancelling two terms of size T·log M (up to
    4e6 on a 10⁶-step run).
    """

    lam: float
    log_mgfs: tuple[float, ...]
    log_total: float

    @classmethod
    def of(cls, items, lam: float, full: int, log_mgf_of) -> Tilt:
        """Round ``lam`` and the log M_i = ``log_mgf_of(i, λ)`` as the class docstring says."""
        lam = _dyadic(lam, 52 - math.ceil(math.log2(full + 2)))
        raw = [log_mgf_of(number, lam) for number in range(len(items))]
        total = sum(count * abs(m) for (_, count), m in zip(items, raw, strict=True)) + 2.0
        scale = 2.0 ** (50 - math.ceil(math.log2(total)))
        rounded = tuple(math.ceil(m * scale) / scale for m in raw)
        log_total = sum(count * m for (_, count), m in zip(items, rounded, strict=True))
        return cls(lam, rounded, log_total)

    def row(self, masses: np.ndarray, number: int) -> np.ndarray:
        """The tilted masses p_k·e^{λk − log M_i} (in log form only for masses below 1e-290)."""
        exponent = self.lam * np.arange(masses.size) - self.log_mgfs[number]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            tilted = masses * np.exp(np.minimum(exponent, 700.0))
            tiny = (masses > 0.0) & (masses < _TINY_MASS)
            if np.any(tiny):
                tilted[tiny] = np.exp(np.log(masses[tiny]) + exponent[tiny])
        return np.where(masses > 0.0, tilted, 0.0)

    def rounding(self, items, rows: list[np.ndarray], untilt: float) -> float:
        """A bound on the relative error of masses composed tilted, then untilted.

        A tilted mass p_k·exp(λk − log M_i) is within η_i = u·(|λk − log M_i| + 3)
        of the exact one (the exponent rounded once, the exponential, the
        product; in log form, for masses below 1e-290, |log p_k| more), so the
        composition computed is the exact composition of inputs each within a
        factor 1 ± η_i: its masses are within Π(1 + η_i)^{c_i} − 1, relatively,
        before the FFT's own (absolute) rounding. Untilting by exp(x),
        |x| ≤ ``untilt``, x rounded once, adds 4u·(|x| + 4).
        """
        u = UNIT_ROUNDOFF
        total = 0.0
        for number, ((_, count), masses) in enumerate(zip(items, rows, strict=True)):
            positive = np.flatnonzero(masses > 0.0)
            if positive.size == 0:
                continue
            exponent = np.abs(self.lam * positive - self.log_mgfs[number])
            tiny = masses[positive] < _TINY_MASS
            if np.any(tiny):
                exponent = exponent + np.where(tiny, -np.log(masses[positive]), 0.0)
            total += count * math.log1p(u * (float(np.max(exponent)) + 3.0))
        return math.expm1(total) + 4.0 * u * (abs(untilt) + 4.0)


# Tilted in log form below this (p·e^x would overflow e^x before p is applied).
_TINY_MASS = 1e-290


def _dyadic(value: float, bits: int) -> float:
    """``value`` rounded to ``bits`` significant bits."""
    if value == 0.0:
        return 0.0
    mantissa, exponent = math.frexp(value)
    return math.ldexp(round(mantissa * 2.0**bits), exponent - bits)


def tail_index(masses: np.ndarray, tail: float) -> int | None:
    """The last index from which ``masses`` hold at least ``tail`` (None: they never do)."""
    above = np.cumsum(masses[::-1])[::-1]
    reached = np.flatnonzero(above >= tail)
    return int(reached[-1]) if reached.size else None


def reachable(items: list[tuple[GridPLD, int]], budget: float) -> tuple[int, float]:
    """The smallest relative index K whose atoms from K up hold at most ``budget``.

    A composed sum that takes an atom at relative index k of any summand is
    at least k, and the P-mass of the sums that take one at K or above is at
    most Σ c_i·P_i(index ≥ K) (a union bound over the Σ c_i summands).
    Returns (K, that bound, raised for rounding); (size, 0.0) if nothing is dropped.
    """
    longest = max(pld.p_masses.size for pld, _ in items)
    union = np.zeros(longest + 1)
    for pld, count in items:
        tails = np.cumsum(pld.p_masses[::-1])[::-1]  # summed from the top: small ones first
        union[: tails.size] += count * tails
    kept = np.flatnonzero(union > budget)
    reachable = int(kept[-1]) + 1 if kept.size else 0
    # raised for the rounding of the sums (n terms: at most n·u relative each) and products
    dropped = float(union[reachable]) * (1.0 + 4.0 * (longest + len(items)) * UNIT_ROUNDOFF)
    return max(reachable, 1), dropped if reachable < longest else 0.0
