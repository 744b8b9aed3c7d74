"""Noise mechanisms: the building blocks that add noise or are known by (ε, δ).

:class:`Gaussian`, :class:`Laplace`, :class:`DiscreteGaussian`,
:class:`RandomizedResponse`, :class:`PureDP` (any ε-DP mechanism) and
:class:`ApproxDP` (any (ε, δ)-DP mechanism). Each docstring gives the
dominating pair under both neighbouring relations; the pairs' privacy losses
are computed in :mod:`gaussdp.pld.dominating_pairs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from gaussdp._validation import InvalidParameterError
from gaussdp.mechanisms.base import (
    _INF,
    Mechanism,
    _fmt,
    _integer,
    _real,
    _reals,
)


@dataclass(frozen=True)
class Gaussian(Mechanism):
    """The Gaussian mechanism: ``x ↦ f(D) + N(0, σ² I)``.

    ``f`` is a vector-valued query whose ℓ2 sensitivity under add/remove is Δ:
    one record contributes a vector ``v`` with ``‖v‖₂ ≤ Δ`` (for DP-SGD, a
    gradient clipped to norm Δ = 1, with σ the noise multiplier).

    Dominating pair (tight; Dong, Roth & Su 2022, Theorem 2.7):

    - ADD_REMOVE, both directions: ``P = N(Δ, σ²)``, ``Q = N(0, σ²)``.
    - REPLACE: the contribution moves from ``v`` to ``v'`` with
      ``‖v − v'‖₂ ≤ 2Δ``, so ``P = N(2Δ, σ²)``, ``Q = N(0, σ²)``. (For a query
      whose replace-one sensitivity is smaller, e.g. a count, describe it with
      ``sensitivity`` = half of it.)

    Privacy loss: with shift s (Δ, or 2Δ under REPLACE),
    ``L(x) = (s x − s²/2)/σ²``; under ``X ~ P`` it is ``N(μ²/2, μ²)`` with
    ``μ = s/σ``: the mechanism is exactly μ-GDP. σ = ∞ or Δ = 0 means μ = 0
    (no privacy loss).

    Parameters
    ----------
    sigma : float
        Standard deviation of the noise, σ ∈ (0, ∞].
    sensitivity : float, default 1.0
        ℓ2 sensitivity Δ ∈ [0, ∞) of the query under add/remove.

    Examples
    --------
    >>> Gaussian(5.0)
    Gaussian(sigma=5.0, sensitivity=1.0)
    >>> print(Gaussian(2, sensitivity=0.5))
    Gaussian(σ=2, Δ=0.5)
    """

    sigma: float
    sensitivity: float = 1.0

    type_name: ClassVar[str] = "gaussian"
    _kinds: ClassVar[dict[str, str]] = {"sigma": "real", "sensitivity": "real"}

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _real("sigma", self.sigma, low=0.0, low_open=True))
        object.__setattr__(
            self,
            "sensitivity",
            _real("sensitivity", self.sensitivity, low=0.0, high=_INF, high_open=True),
        )

    def _short(self) -> str:
        extra = "" if self.sensitivity == 1.0 else f", Δ={_fmt(self.sensitivity)}"
        return f"Gaussian(σ={_fmt(self.sigma)}{extra})"


@dataclass(frozen=True)
class Laplace(Mechanism):
    """The Laplace mechanism: ``x ↦ f(D) + Z``, ``Z`` with i.i.d. Lap(0, b) coordinates.

    Lap(m, b) has density ``exp(−|x − m|/b) / (2b)``. ``f`` has ℓ1 sensitivity
    Δ under add/remove (one record moves ``f`` by at most Δ in ℓ1 norm).

    Dominating pair: ``P = Lap(Δ, b)``, ``Q = Lap(0, b)`` (one coordinate
    carries the whole shift: exact for scalar queries and dp_accounting's
    convention for vector ones), in both add/remove directions; under REPLACE
    the shift is 2Δ: ``P = Lap(2Δ, b)``.

    Privacy loss: with shift s, ``L(x) = (|x| − |x − s|)/b ∈ [−s/b, s/b]``. Under
    ``X ~ P`` it equals ``s/b`` with probability 1/2 (x ≥ s), ``−s/b`` with
    probability ``e^{−s/b}/2`` (x ≤ 0), and is ``(2x − s)/b`` for ``0 < x < s``.
    The mechanism is (s/b)-DP; b = ∞ or Δ = 0 means no privacy loss.

    Parameters
    ----------
    scale : float
        The scale b ∈ (0, ∞] of the noise.
    sensitivity : float, default 1.0
        ℓ1 sensitivity Δ ∈ [0, ∞) under add/remove.

    Examples
    --------
    >>> print(Laplace(scale=2.0))
    Laplace(b=2)
    """

    scale: float
    sensitivity: float = 1.0

    type_name: ClassVar[str] = "laplace"
    _kinds: ClassVar[dict[str, str]] = {"scale": "real", "sensitivity": "real"}

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", _real("scale", self.scale, low=0.0, low_open=True))
        object.__setattr__(
            self,
            "sensitivity",
            _real("sensitivity", self.sensitivity, low=0.0, high=_INF, high_open=True),
        )

    def _short(self) -> str:
        extra = "" if self.sensitivity == 1.0 else f", Δ={_fmt(self.sensitivity)}"
        return f"Laplace(b={_fmt(self.scale)}{extra})"


@dataclass(frozen=True)
class DiscreteGaussian(Mechanism):
    """The discrete Gaussian mechanism: integer query plus N_ℤ(0, σ²) noise.

    The discrete Gaussian N_ℤ(m, σ²) on the integers has
    ``P[X = x] = exp(−(x − m)²/(2σ²)) / Σ_{y∈ℤ} exp(−y²/(2σ²))`` (Canonne,
    Kamath & Steinke 2020); it is the building block of the 2020 US Census
    TopDown algorithm. ``f`` is integer-valued and, under add/remove, one record
    changes one coordinate of it by at most Δ (a count, or one cell of a
    histogram); noise is added independently to every coordinate.

    Dominating pair: ``P = N_ℤ(Δ, σ²)``, ``Q = N_ℤ(0, σ²)`` in both add/remove
    directions; under REPLACE the shift is 2Δ in one coordinate
    (``P = N_ℤ(2Δ, σ²)``) — pessimistic for a histogram, where a replacement
    moves two cells by Δ each.

    Privacy loss: with shift s (an integer; the normalising constants cancel),
    ``L(x) = (s x − s²/2)/σ²`` for ``x ∈ ℤ``, a lattice-valued variable. The
    mechanism is (s²/(2σ²))-zCDP (CKS 2020, Theorem 14), which is how the
    Census states its budget ρ.

    Parameters
    ----------
    sigma : float
        The scale σ ∈ (0, ∞) of the noise (its variance is slightly below σ²).
    sensitivity : int, default 1
        The integer sensitivity Δ ≥ 1.

    Examples
    --------
    >>> DiscreteGaussian(3.5)
    DiscreteGaussian(sigma=3.5, sensitivity=1)
    >>> print(DiscreteGaussian(3.5, sensitivity=2))
    DiscreteGaussian(σ=3.5, Δ=2)
    """

    sigma: float
    sensitivity: int = 1

    type_name: ClassVar[str] = "discrete_gaussian"
    _kinds: ClassVar[dict[str, str]] = {"sigma": "real", "sensitivity": "integer"}

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "sigma",
            _real("sigma", self.sigma, low=0.0, high=_INF, low_open=True, high_open=True),
        )
        object.__setattr__(self, "sensitivity", _integer("sensitivity", self.sensitivity, low=1))

    def _short(self) -> str:
        extra = "" if self.sensitivity == 1 else f", Δ={self.sensitivity}"
        return f"DiscreteGaussian(σ={_fmt(self.sigma)}{extra})"


@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    """Binary randomized response: report a record's bit truthfully w.p. e^ε/(1 + e^ε).

    Otherwise the flipped bit is reported. Under REPLACE the record's bit
    changes; under ADD_REMOVE an absent record is treated as a fixed default
    bit (dp_accounting's ``REPLACE_SPECIAL``), so both relations have the same
    tight pair:

    ``P = Bernoulli(e^ε/(1 + e^ε))``, ``Q = Bernoulli(1/(1 + e^ε))``.

    Privacy loss: ``L = +ε`` with probability ``e^ε/(1 + e^ε)`` and ``−ε``
    otherwise; the mechanism is exactly ε-DP, and
    ``H_{e^{ε'}}(P ‖ Q) = (e^ε − e^{ε'})₊ / (1 + e^ε)``.

    Parameters
    ----------
    epsilon : float
        ε ∈ [0, ∞); ε = 0 reports a fair coin.

    Examples
    --------
    >>> print(RandomizedResponse(1.0))
    RandomizedResponse(ε=1)
    """

    epsilon: float

    type_name: ClassVar[str] = "randomized_response"
    _kinds: ClassVar[dict[str, str]] = {"epsilon": "real"}

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "epsilon", _real("epsilon", self.epsilon, low=0.0, high=_INF, high_open=True)
        )

    def _short(self) -> str:
        return f"RandomizedResponse(ε={_fmt(self.epsilon)})"


@dataclass(frozen=True)
class PureDP(Mechanism):
    """Any ε-DP mechanism (when nothing more is known about it).

    The tight dominating pair of the class of ε-DP mechanisms is randomized
    response (Kairouz, Oh & Viswanath 2015; the lecture, file 003), under either
    relation: ``P = Bernoulli(e^ε/(1 + e^ε))``, ``Q = Bernoulli(1/(1 + e^ε))``.
    Privacy loss ``±ε`` with ``P[L = ε] = e^ε/(1 + e^ε)``. k-fold compositions
    have the binomial form of Dong, Roth & Su (2022, proof of Theorem 8).

    Parameters
    ----------
    epsilon : float
        ε ∈ [0, ∞).

    Examples
    --------
    >>> print(PureDP(0.1))
    PureDP(ε=0.1)
    """

    epsilon: float

    type_name: ClassVar[str] = "pure_dp"
    _kinds: ClassVar[dict[str, str]] = {"epsilon": "real"}

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "epsilon", _real("epsilon", self.epsilon, low=0.0, high=_INF, high_open=True)
        )

    def _short(self) -> str:
        return f"PureDP(ε={_fmt(self.epsilon)})"


@dataclass(frozen=True)
class ApproxDP(Mechanism):
    """Any (ε, δ)-DP mechanism (when nothing more is known about it).

    The tight dominating pair of the class is *leaky* randomized response (the
    lecture, file 003, §3.1, the simulation lemma; Kairouz, Oh & Viswanath
    2015), under either relation. Its outcomes are ``⊥_P, 0, 1, ⊥_Q`` with

    ========  =========================  =========================
    outcome   P                          Q
    ========  =========================  =========================
    ⊥_P       δ                          0
    0         (1 − δ) e^ε / (1 + e^ε)    (1 − δ) / (1 + e^ε)
    1         (1 − δ) / (1 + e^ε)        (1 − δ) e^ε / (1 + e^ε)
    ⊥_Q       0                          δ
    ========  =========================  =========================

    (Q mirrors P.) Seen from P the privacy loss has three atoms: ``+∞`` with
    probability δ (the output ⊥_P that only P produces: "the mechanism leaked"),
    ``+ε`` with probability ``(1 − δ) e^ε/(1 + e^ε)`` and ``−ε`` with
    probability ``(1 − δ)/(1 + e^ε)``. Hence
    ``H_{e^{ε'}}(P ‖ Q) = δ + (1 − δ)(e^ε − e^{ε'})₊/(1 + e^ε)``.

    Parameters
    ----------
    epsilon : float
        ε ∈ [0, ∞).
    delta : float
        δ ∈ [0, 1]; δ = 0 is :class:`PureDP`, δ = 1 means no guarantee.

    Examples
    --------
    >>> print(ApproxDP(1.0, 1e-6))
    ApproxDP(ε=1, δ=1e-06)
    """

    epsilon: float
    delta: float

    type_name: ClassVar[str] = "approx_dp"
    _kinds: ClassVar[dict[str, str]] = {"epsilon": "real", "delta": "real"}

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "epsilon", _real("epsilon", self.epsilon, low=0.0, high=_INF, high_open=True)
        )
        object.__setattr__(self, "delta", _real("delta", self.delta, low=0.0, high=1.0))

    def _short(self) -> str:
        return f"ApproxDP(ε={_fmt(self.epsilon)}, δ={_fmt(self.delta)})"


@dataclass(frozen=True)
class GaussianMixture(Mechanism):
    """A mixture of Gaussian shifts: N(0, σ²) against Σᵢ pᵢ N(cᵢ, σ²).

    The building block of subsampled and truncated-Poisson Gaussians: a
    record moves the query by ``cᵢ = sensitivities[i]`` with probability
    ``pᵢ = probabilities[i]``. With ``{0: 1 − q, 1: q}`` it is the
    Poisson-subsampled Gaussian (dp_accounting's ``MixtureOfGaussiansDpEvent``;
    arXiv 2310.15526; the pairs of truncated Poisson sampling, Ganesh 2025,
    arXiv 2508.15089).

    Dominating pair (exact), ADD_REMOVE only: remove ``P = Σᵢ pᵢ N(cᵢ, σ²)``,
    ``Q = N(0, σ²)``; add: the swap. The privacy loss
    ``L(x) = log Σᵢ pᵢ exp((2cᵢx − cᵢ²)/(2σ²))`` is increasing in x (all
    cᵢ ≥ 0), bounded below by log of the mass at c = 0, so its law under P and
    Q is a sum of Gaussian tails at its inverse (:mod:`gaussdp.pld.mixture`).
    REPLACE is refused: the pair of a mixture under replace-one is not
    established here. σ = ∞, or no mass on a positive shift, reveals nothing.

    Parameters
    ----------
    noise_multiplier : float
        σ ∈ (0, ∞].
    sensitivities : sequence of float
        The shifts cᵢ ≥ 0.
    probabilities : sequence of float
        pᵢ ≥ 0, one per shift, summing to 1.

    Examples
    --------
    >>> print(GaussianMixture(1.0, [0.0, 1.0], [0.99, 0.01]))
    GaussianMixture(σ=1, c=(0, 1), p=(0.99, 0.01))
    """

    noise_multiplier: float
    sensitivities: tuple[float, ...]
    probabilities: tuple[float, ...]

    type_name: ClassVar[str] = "gaussian_mixture"
    _kinds: ClassVar[dict[str, str]] = {
        "noise_multiplier": "real",
        "sensitivities": "reals",
        "probabilities": "reals",
    }

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "noise_multiplier",
            _real("noise_multiplier", self.noise_multiplier, low=0.0, low_open=True),
        )
        sensitivities = _reals(
            "sensitivities", self.sensitivities, low=0.0, high=_INF, high_open=True
        )
        probabilities = _reals("probabilities", self.probabilities, low=0.0, high=1.0)
        if len(sensitivities) != len(probabilities):
            raise InvalidParameterError(
                f"sensitivities and probabilities must have the same length, got "
                f"{len(sensitivities)} and {len(probabilities)}"
            )
        total = math.fsum(probabilities)
        if abs(total - 1.0) > 1e-9:
            raise InvalidParameterError(f"probabilities must sum to 1, got a sum of {total!r}")
        object.__setattr__(self, "sensitivities", sensitivities)
        object.__setattr__(self, "probabilities", probabilities)

    def _short(self) -> str:
        shifts = ", ".join(_fmt(c) for c in self.sensitivities)
        masses = ", ".join(_fmt(p) for p in self.probabilities)
        return f"GaussianMixture(σ={_fmt(self.noise_multiplier)}, c=({shifts}), p=({masses}))"
