"""Mechanism descriptions as data, and pipeline files.

A private algorithm is described here, not analysed: every class below is an
immutable, validated record (a frozen dataclass) whose docstring defines the
mathematics completely — the mechanism, its dominating pair of output
distributions (Zhu, Dong & Wang 2022, Definition 7; the lecture, file 003,
§4.1) under each neighbouring relation, and its privacy loss — and which
contains no accounting code. The accountant (:func:`gaussdp.account`) reads
these descriptions and does the mathematics.

Notation used throughout. ``D ≃ D'`` are neighbouring data sets. A pair of
distributions ``(P, Q)`` *dominates* a mechanism ``M`` when, for every
``α ≥ 0``,

    sup_{D ≃ D'} H_α(M(D) ‖ M(D')) ≤ H_α(P ‖ Q),
    H_α(P ‖ Q) = ∫ (dP − α dQ)₊  (the hockey-stick divergence).

With α = e^ε, H_α is the smallest δ for which M is (ε, δ)-DP. The *privacy
loss* of the pair is ``L(x) = log (dP/dQ)(x)`` and the *privacy loss random
variable* (PLRV) is ``L(X)`` with ``X ~ P``; then
``H_{e^ε}(P ‖ Q) = E[(1 − e^{ε − L(X)})₊]`` (an atom at L = +∞ is an output
P can produce and Q cannot). Pairs of adaptively composed mechanisms multiply
(Theorem 10 there), so privacy losses add.

The neighbouring relation is a property of the whole description
(:class:`Neighbouring`, carried by a :class:`Pipeline`): add/remove one record
(the default) or replace one record. Under add/remove the relation is not
symmetric in general, so two ordered pairs matter: *remove* (``D'`` is ``D``
with one record removed: the pair is ``(M(D), M(D'))``) and *add* (``D'`` is
``D`` with one record added). For the basic mechanisms below both directions
have the same privacy loss distribution; Poisson subsampling is where they
differ. The guarantee of a description is the larger of the two directions.

Building blocks
---------------
:class:`Gaussian`, :class:`Laplace`, :class:`DiscreteGaussian`,
:class:`RandomizedResponse`, :class:`PureDP` (any ε-DP mechanism),
:class:`ApproxDP` (any (ε, δ)-DP mechanism).

Transformers
------------
:class:`PoissonSubsampled`, :class:`SubsampledWithoutReplacement`,
:class:`Composition`, :class:`Repeated`, and :class:`DPSGD` (the common case,
``steps`` rounds of a Poisson-subsampled Gaussian).

Every description converts to a JSON/TOML-friendly dict (:meth:`Mechanism.to_dict`,
inverted by :func:`from_dict`) and reads as one line (``str(m)`` /
:meth:`Mechanism.describe`). A whole pipeline — a mechanism plus its
neighbouring relation — can be written as a TOML file and read with
:func:`load` / :func:`loads`; :func:`dumps` writes one. The file format is
documented in ``docs/mechanisms.md``.

Examples
--------
>>> from gaussdp.mechanisms import Composition, DPSGD, Gaussian, PureDP, Repeated
>>> print(DPSGD(noise_multiplier=9.4, sampling_probability=0.32768, steps=2000))
DP-SGD: σ=9.4, q=0.32768, 2000 steps
>>> autodp = Composition([Repeated(Gaussian(5.0), 3), Repeated(Gaussian(8.0), 5), PureDP(0.1)])
>>> print(autodp)
Composition of 3: 3 × Gaussian(σ=5), 5 × Gaussian(σ=8), PureDP(ε=0.1)
>>> from_dict(autodp.to_dict()) == autodp
True
"""

from __future__ import annotations

import difflib
import enum
import math
import numbers
import os
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar

import numpy as np

from gaussdp._validation import InvalidParameterError, check_integer, check_real

__all__ = [
    "DPSGD",
    "GDP",
    "ZCDP",
    "ApproxDP",
    "Composition",
    "DiscreteGaussian",
    "Gaussian",
    "Group",
    "Laplace",
    "Mechanism",
    "Neighbouring",
    "NoiseEquation",
    "Parallel",
    "Pipeline",
    "PipelineFileError",
    "PoissonSubsampled",
    "Profile",
    "PureDP",
    "RandomizedResponse",
    "RenyiDP",
    "Repeated",
    "SubsampledWithoutReplacement",
    "dumps",
    "from_dict",
    "load",
    "loads",
    "validate_neighbouring",
]

_INF = math.inf


class PipelineFileError(InvalidParameterError):
    """A pipeline file (or text) is malformed.

    The message names the file, the place in it (``mechanism[2].sigma``) and the
    problem: a TOML syntax error (with its line), an unknown type or field, a
    missing field, a value of the wrong type or out of range, or an empty pipeline.
    """


class Neighbouring(enum.Enum):
    """Which data sets count as neighbours; applies to a whole description.

    ``ADD_REMOVE`` (the default everywhere): ``D'`` is ``D`` with one record
    added or removed. ``REPLACE``: ``D'`` is ``D`` with one record replaced by
    another (data sets of a fixed size). Under ``REPLACE`` a record's
    contribution to a sum may move from ``v`` to ``v'`` with
    ``‖v − v'‖ ≤ 2Δ``, where Δ is the add/remove sensitivity (the convention of
    dp_accounting's ``REPLACE_ONE``).

    Examples
    --------
    >>> Neighbouring("replace")
    <Neighbouring.REPLACE: 'replace'>
    >>> Neighbouring.ADD_REMOVE.value
    'add_remove'
    """

    ADD_REMOVE = "add_remove"
    REPLACE = "replace"

    def describe(self) -> str:
        """A few words for people: ``'add/remove one record'`` or ``'replace one record'``."""
        return "add/remove one record" if self is Neighbouring.ADD_REMOVE else "replace one record"


# --------------------------------------------------------------------------- helpers


def _real(name: str, value: Any, **bounds) -> float:
    """A scalar real in the given range, as a plain Python float (−0.0 becomes 0.0)."""
    is_real_scalar = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        is_real_scalar = True
    if not is_real_scalar:
        raise InvalidParameterError(f"{name} must be a real number, got {value!r}")
    return float(check_real(name, value, **bounds)) + 0.0


def _integer(name: str, value: Any, low: int = 1) -> int:
    """An integer ≥ ``low`` as a plain Python int (integral floats are accepted)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return check_integer(name, value, low=low)


def _fmt(value: float | int) -> str:
    """Shortest exact text for a number: 5.0 → '5', inf → '∞', 1e-05 → '1e-05'."""
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "∞"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _suggest(word: str, choices: Iterable[str]) -> str:
    matches = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {matches[0]!r}?)" if matches else ""


# --------------------------------------------------------------------------- base class


@dataclass(frozen=True)
class Mechanism:
    """Base class of every mechanism description (a frozen dataclass with no fields).

    Subclasses are immutable, hashable and compare by value; they validate
    their fields at construction and hold plain Python floats, ints and tuples.
    ``Mechanism`` itself cannot be instantiated.
    """

    type_name: ClassVar[str] = ""
    # field name -> "real" | "integer" | "mechanism" | "mechanisms"
    _kinds: ClassVar[dict[str, str]] = {}

    def __new__(cls, *args, **kwargs):
        if cls is Mechanism:
            raise TypeError(
                "Mechanism is an abstract base class; use Gaussian, PureDP, Composition, ..."
            )
        return super().__new__(cls)

    def to_dict(self) -> dict[str, Any]:
        """A JSON/TOML-friendly dict: ``{"type": <snake_case name>, <field>: <value>, ...}``.

        Wrapped mechanisms are nested dicts (``"mechanism"``) or a list of dicts
        (``"mechanisms"``). :func:`from_dict` inverts it.
        """
        result: dict[str, Any] = {"type": self.type_name}
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, Mechanism):
                value = value.to_dict()
            elif isinstance(value, tuple):
                value = [part.to_dict() if isinstance(part, Mechanism) else part for part in value]
            elif self._kinds.get(field.name) == "callable":
                raise InvalidParameterError(
                    f"{type(self).__name__} holds a Python callable ({field.name}) and cannot "
                    "be written as a dict or a pipeline file"
                )
            result[field.name] = value
        return result

    def describe(self) -> str:
        """A readable one-line description, e.g. ``'DP-SGD: σ=9.4, q=0.32768, 2000 steps'``."""
        return self._short()

    def _short(self) -> str:
        """The compact form used when this mechanism is nested inside another."""
        raise NotImplementedError  # pragma: no cover - every subclass overrides it

    def _children(self) -> tuple[Mechanism, ...]:
        """The mechanisms this one is built from (for walking a description)."""
        return ()

    def __str__(self) -> str:
        return self.describe()


def _walk(mechanism: Mechanism):
    yield mechanism
    for child in mechanism._children():
        yield from _walk(child)


def _require_mechanism(name: str, value: Any) -> Mechanism:
    if not isinstance(value, Mechanism):
        raise InvalidParameterError(
            f"{name} must be a Mechanism (Gaussian, PureDP, Composition, ...), got {value!r}"
        )
    return value


# --------------------------------------------------------------------------- building blocks


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


# --------------------------------------------------------------------------- transformers


@dataclass(frozen=True)
class PoissonSubsampled(Mechanism):
    """Poisson subsampling: run ``mechanism`` on a random subset of the records.

    Every record is included independently with probability q, and the inner
    mechanism runs on the records included. Let ``(P, Q)`` be the inner
    mechanism's add/remove pair (``P``: the record present, ``Q``: absent) and
    ``ℓ = log dP/dQ`` its privacy loss. Under ADD_REMOVE (Zhu, Dong & Wang
    2022, §4.1; the lecture, file 003; Dong, Roth & Su 2022, §4.2):

    - remove (``D'`` lacks a record of ``D``): ``((1 − q)Q + qP,  Q)``, privacy
      loss ``L(x) = log(1 − q + q e^{ℓ(x)})`` with ``X ~ (1 − q)Q + qP``;
    - add (``D'`` has one record more): ``(Q,  (1 − q)Q + qP)``, privacy loss
      ``L(x) = −log(1 − q + q e^{ℓ(x)})`` with ``X ~ Q``.

    The two directions differ (for the Gaussian the remove direction has the
    heavier right tail); the guarantee is the larger of the two.

    Under REPLACE the record is present with probability q in both data sets,
    with contribution ``v`` in ``D`` and ``v'`` in ``D'``. This description
    defines it for additive-noise inner mechanisms with symmetric noise
    (:class:`Gaussian`, :class:`Laplace`, :class:`DiscreteGaussian`, and
    compositions / repetitions of them): with ``Q`` the noise distribution,
    ``P`` = Q shifted by +Δ and ``P̄`` = Q shifted by −Δ, the pair is
    ``((1 − q)Q + qP,  (1 − q)Q + qP̄)`` (dp_accounting's ``REPLACE_ONE``).
    For other inner mechanisms no dominating pair under REPLACE is defined
    here, and :class:`Pipeline` / :func:`validate_neighbouring` refuse it.

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism run on the sample.
    sampling_probability : float
        q ∈ (0, 1]; q = 1 is the inner mechanism itself.

    Examples
    --------
    >>> print(PoissonSubsampled(Gaussian(1.0), sampling_probability=0.01))
    PoissonSubsampled(q=0.01, Gaussian(σ=1))
    """

    mechanism: Mechanism
    sampling_probability: float

    type_name: ClassVar[str] = "poisson_subsampled"
    _kinds: ClassVar[dict[str, str]] = {"mechanism": "mechanism", "sampling_probability": "real"}

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        object.__setattr__(
            self,
            "sampling_probability",
            _real(
                "sampling_probability", self.sampling_probability, low=0.0, high=1.0, low_open=True
            ),
        )

    def _short(self) -> str:
        return f"PoissonSubsampled(q={_fmt(self.sampling_probability)}, {self.mechanism._short()})"

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.mechanism,)


@dataclass(frozen=True)
class SubsampledWithoutReplacement(Mechanism):
    """Fixed-size subsampling: run ``mechanism`` on m records drawn without replacement.

    The data set has exactly ``n = dataset_size`` records; a subset of exactly
    ``m = sample_size`` of them is drawn uniformly at random and the inner
    mechanism runs on it. Because the data set size is fixed, this is defined
    under **REPLACE** only (a :class:`Pipeline` refuses it under ADD_REMOVE).

    Let ``γ = m/n`` (:attr:`sampling_probability`) and let ``(P, Q)`` be the
    inner mechanism's REPLACE pair (on data sets of size m), with privacy loss
    ``ℓ = log dP/dQ``. For an ordered pair of neighbours ``(D, D')``:

    - at hockey-stick orders α ≥ 1 it is dominated by
      ``((1 − γ)Q + γP,  Q)`` (Zhu, Dong & Wang 2022, §4.1; in (ε, δ) form,
      Balle, Barthe & Gaboardi 2018: ``ε' = log(1 + γ(e^ε − 1))``, ``δ' = γδ``),
      privacy loss ``log(1 − γ + γ e^{ℓ(x)})`` with ``X ~ (1 − γ)Q + γP``;
    - at α ≤ 1 by ``(Q,  (1 − γ)Q + γP)``, privacy loss
      ``−log(1 − γ + γ e^{ℓ(x)})`` with ``X ~ Q``, which follows from the first
      by ``H_α(X ‖ Y) = 1 − α + α H_{1/α}(Y ‖ X)`` and the symmetry of REPLACE.

    These are the Poisson "remove" and "add" shapes with γ in place of q and
    the inner REPLACE pair in place of the add/remove pair.

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism run on the sample.
    sample_size : int
        m, an integer with 1 ≤ m ≤ n.
    dataset_size : int
        n, an integer ≥ 1.

    Examples
    --------
    >>> s = SubsampledWithoutReplacement(Gaussian(1.0), sample_size=256, dataset_size=60000)
    >>> round(s.sampling_probability, 6)
    0.004267
    >>> print(s)
    SubsampledWithoutReplacement(m=256, n=60000, Gaussian(σ=1))
    """

    mechanism: Mechanism
    sample_size: int
    dataset_size: int

    type_name: ClassVar[str] = "subsampled_without_replacement"
    _kinds: ClassVar[dict[str, str]] = {
        "mechanism": "mechanism",
        "sample_size": "integer",
        "dataset_size": "integer",
    }

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        sample_size = _integer("sample_size", self.sample_size, low=1)
        dataset_size = _integer("dataset_size", self.dataset_size, low=1)
        if sample_size > dataset_size:
            raise InvalidParameterError(
                f"sample_size must be <= dataset_size ({dataset_size}), got {sample_size}"
            )
        object.__setattr__(self, "sample_size", sample_size)
        object.__setattr__(self, "dataset_size", dataset_size)

    @property
    def sampling_probability(self) -> float:
        """γ = m/n, the probability that a given record is in the sample."""
        return self.sample_size / self.dataset_size

    def _short(self) -> str:
        return (
            f"SubsampledWithoutReplacement(m={self.sample_size}, n={self.dataset_size}, "
            f"{self.mechanism._short()})"
        )

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.mechanism,)


@dataclass(frozen=True)
class Composition(Mechanism):
    """Adaptive composition of mechanisms (heterogeneous, nestable).

    The mechanisms run one after another on the same data, each possibly chosen
    in the light of the earlier outputs. If ``(P_i, Q_i)`` dominates the i-th
    mechanism, ``(P_1 × P_2 × …, Q_1 × Q_2 × …)`` dominates the composition
    (Zhu, Dong & Wang 2022, Theorem 10; Dong, Roth & Su 2022, Theorem 3.2): the
    privacy loss is the sum of independent privacy losses, and its distribution
    the convolution of theirs. Under ADD_REMOVE every part sees the same
    neighbouring pair, so the remove pairs of all parts compose together and
    the add pairs together; the guarantee is the larger of the two directions.

    Parameters
    ----------
    mechanisms : iterable of Mechanism
        At least one; stored as a tuple.

    Examples
    --------
    >>> c = Composition([Gaussian(5.0), PureDP(0.1)])
    >>> c.mechanisms
    (Gaussian(sigma=5.0, sensitivity=1.0), PureDP(epsilon=0.1))
    >>> print(c)
    Composition of 2: Gaussian(σ=5), PureDP(ε=0.1)
    """

    mechanisms: tuple[Mechanism, ...]

    type_name: ClassVar[str] = "composition"
    _kinds: ClassVar[dict[str, str]] = {"mechanisms": "mechanisms"}

    def __post_init__(self) -> None:
        value = self.mechanisms
        if isinstance(value, (Mechanism, str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise InvalidParameterError(
                f"mechanisms must be an iterable of Mechanism objects, got {value!r}"
            )
        parts = tuple(value)
        if not parts:
            raise InvalidParameterError("Composition needs at least one mechanism, got none")
        for index, part in enumerate(parts):
            _require_mechanism(f"mechanisms[{index}]", part)
        object.__setattr__(self, "mechanisms", parts)

    def describe(self) -> str:
        parts = ", ".join(part._short() for part in self.mechanisms)
        return f"Composition of {len(self.mechanisms)}: {parts}"

    def _short(self) -> str:
        return "Composition[" + ", ".join(part._short() for part in self.mechanisms) + "]"

    def _children(self) -> tuple[Mechanism, ...]:
        return self.mechanisms


@dataclass(frozen=True)
class Repeated(Mechanism):
    """``times``-fold adaptive self-composition of ``mechanism``.

    The same as ``Composition([mechanism] * times)``: the pair is
    ``(P^{×k}, Q^{×k})`` and the privacy loss the sum of k independent copies
    (its distribution is the k-th convolution power; in the Fourier domain, the
    k-th power of the characteristic function).

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism repeated.
    times : int
        k ≥ 1.

    Examples
    --------
    >>> print(Repeated(Gaussian(5.0), 3))
    3 × Gaussian(σ=5)
    """

    mechanism: Mechanism
    times: int

    type_name: ClassVar[str] = "repeated"
    _kinds: ClassVar[dict[str, str]] = {"mechanism": "mechanism", "times": "integer"}

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        object.__setattr__(self, "times", _integer("times", self.times, low=1))

    def _short(self) -> str:
        return f"{self.times} × {self.mechanism._short()}"

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.mechanism,)


@dataclass(frozen=True)
class DPSGD(Mechanism):
    """DP-SGD (Abadi et al. 2016): ``steps`` rounds of a Poisson-subsampled Gaussian.

    Each step includes every record independently with probability q, clips
    each per-example gradient to norm C and adds N(0, (σC)² I) to their sum.
    With C as the unit of sensitivity this is exactly
    ``Repeated(PoissonSubsampled(Gaussian(σ), q), steps)`` (:meth:`expand`),
    whose pairs are given in :class:`PoissonSubsampled` with
    ``P = N(1, σ²)``, ``Q = N(0, σ²)``.

    A run whose noise or sampling rate changes between phases is the
    composition of its phases, e.g.
    ``Composition([DPSGD(1.1, 0.01, 5000), DPSGD(0.8, 0.02, 1000)])``.

    Parameters
    ----------
    noise_multiplier : float
        σ ∈ (0, ∞], the noise standard deviation divided by the clipping norm.
    sampling_probability : float
        q ∈ (0, 1] (batch size over data set size for Poisson batches).
    steps : int
        T ≥ 1, the number of noisy gradient steps.

    Examples
    --------
    >>> run = DPSGD(noise_multiplier=9.4, sampling_probability=0.32768, steps=2000)
    >>> print(run.expand())
    2000 × PoissonSubsampled(q=0.32768, Gaussian(σ=9.4))
    >>> run.expand() == Repeated(PoissonSubsampled(Gaussian(9.4), 0.32768), 2000)
    True
    >>> print(Composition([DPSGD(1.1, 0.01, 5000), DPSGD(0.8, 0.02, 1000)]))
    Composition of 2: DPSGD(σ=1.1, q=0.01, 5000 steps), DPSGD(σ=0.8, q=0.02, 1000 steps)
    """

    noise_multiplier: float
    sampling_probability: float
    steps: int

    type_name: ClassVar[str] = "dpsgd"
    _kinds: ClassVar[dict[str, str]] = {
        "noise_multiplier": "real",
        "sampling_probability": "real",
        "steps": "integer",
    }

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "noise_multiplier",
            _real("noise_multiplier", self.noise_multiplier, low=0.0, low_open=True),
        )
        object.__setattr__(
            self,
            "sampling_probability",
            _real(
                "sampling_probability", self.sampling_probability, low=0.0, high=1.0, low_open=True
            ),
        )
        object.__setattr__(self, "steps", _integer("steps", self.steps, low=1))

    def expand(self) -> Mechanism:
        """The same description in building blocks (structure only, no accounting)."""
        inner = PoissonSubsampled(Gaussian(self.noise_multiplier), self.sampling_probability)
        return Repeated(inner, self.steps)

    def _params(self) -> str:
        steps = f"{self.steps} step" + ("" if self.steps == 1 else "s")
        return f"σ={_fmt(self.noise_multiplier)}, q={_fmt(self.sampling_probability)}, {steps}"

    def describe(self) -> str:
        return f"DP-SGD: {self._params()}"

    def _short(self) -> str:
        return f"DPSGD({self._params()})"

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.expand(),)


# ------------------------------------------------------------- guarantees, more transformers
#
# Mechanisms known only by a guarantee (GDP, ZCDP, RenyiDP, Profile, NoiseEquation),
# and the transformers Group and Parallel. Their accounting lives in
# gaussdp.pld.guarantees; which conversions are lossless is said in docs/interop.md.


def _reals(name: str, values: Any, **bounds) -> tuple[float, ...]:
    """A non-empty tuple of plain floats, each in the given range."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise InvalidParameterError(f"{name} must be a sequence of real numbers, got {values!r}")
    items = tuple(values)
    if not items:
        raise InvalidParameterError(f"{name} must hold at least one number, got none")
    return tuple(_real(f"{name}[{index}]", value, **bounds) for index, value in enumerate(items))


def _require_callable(name: str, value: Any, what: str) -> None:
    if not callable(value):
        raise InvalidParameterError(f"{name} must be a callable {what}, got {value!r}")


@dataclass(frozen=True)
class GDP(Mechanism):
    """Any μ-GDP mechanism (Dong, Roth & Su 2022, Definition 2.6), known only by μ.

    Its trade-off curve is at least G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), and the tight
    dominating pair of the class is ``P = N(μ, 1)``, ``Q = N(0, 1)`` in both
    add/remove directions; the guarantee is taken as stated for the
    neighbouring relation in use (under REPLACE too, unlike
    :class:`Gaussian`, whose shift doubles). Privacy loss ``N(μ²/2, μ²)``
    under P. Composes exactly with Gaussian mechanisms (μ = √Σμ_i²).

    Parameters
    ----------
    mu : float
        μ ∈ [0, ∞); μ = 0 reveals nothing.

    Examples
    --------
    >>> print(GDP(1.0))
    GDP(μ=1)
    """

    mu: float

    type_name: ClassVar[str] = "gdp"
    _kinds: ClassVar[dict[str, str]] = {"mu": "real"}

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _real("mu", self.mu, low=0.0, high=_INF, high_open=True))

    def _short(self) -> str:
        return f"GDP(μ={_fmt(self.mu)})"


@dataclass(frozen=True)
class ZCDP(Mechanism):
    """Any ρ-zCDP mechanism (Bun & Steinke 2016), known only by ρ.

    ρ-zCDP means ``D_α(M(D) ‖ M(D')) ≤ ρα`` for every order α > 1 and every
    ordered pair of neighbours (Rényi divergence
    ``D_α(P ‖ Q) = log E_Q[(dP/dQ)^α]/(α − 1)``). It is described by its
    *optimal* conversion to a trade-off curve, not by the Gaussian mechanism
    with the same Rényi divergences (which would be optimistic: randomized
    response is also 1/2-zCDP and is less private at some α; the lecture,
    file 003, Figure 1). A test with false-positive rate x and false-negative
    rate y turns any pair into the Bernoulli pair ``(Bern(1 − y), Bern(x))``,
    whose Rényi divergences cannot exceed the pair's (data processing), so
    the curve of the class is

        f(x) = sup_{α > 1} max(f_α(x), f_α⁻¹(x)),
        f_α(x) = min{y : (1 − y)^α x^{1−α} + y^α (1 − x)^{1−α} ≤ e^{(α−1)ρα}}

    (Balle et al. 2020; Zhu, Dong & Wang 2022, the optimal RDP → f-DP
    conversion), and every point on it is attained by a pair in the class.
    The accountant computes it on a finite set of orders and by tangent
    lines, both of which place the computed curve below the exact one
    (pessimistic). Compositions of ZCDP mechanisms add their ρ (exact for the
    class) before the conversion. Group privacy of k records: k²ρ.

    Parameters
    ----------
    rho : float
        ρ ∈ [0, ∞); ρ = 0 reveals nothing.

    Examples
    --------
    >>> print(ZCDP(0.5))
    ZCDP(ρ=0.5)
    """

    rho: float

    type_name: ClassVar[str] = "zcdp"
    _kinds: ClassVar[dict[str, str]] = {"rho": "real"}

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _real("rho", self.rho, low=0.0, high=_INF, high_open=True))

    def _short(self) -> str:
        return f"ZCDP(ρ={_fmt(self.rho)})"


@dataclass(frozen=True)
class RenyiDP(Mechanism):
    """Any mechanism known only by Rényi-DP bounds ε(α) at finitely many orders.

    ``D_α(M(D) ‖ M(D')) ≤ ε_i`` at each order ``α_i > 1``, for every ordered
    pair of neighbours (Mironov 2017). Described by the optimal RDP → f-DP
    conversion (see :class:`ZCDP`): f(x) = max_i max(f_{α_i}(x), f_{α_i}⁻¹(x)),
    the exact trade-off curve of the class (every point attained), computed
    below the exact one. Compositions of RenyiDP (and ZCDP) mechanisms add
    their ε(α) on the common orders before the conversion.

    Parameters
    ----------
    orders : sequence of float
        Orders α_i > 1 (at least one), stored sorted as a tuple.
    epsilons : sequence of float
        ε_i ∈ [0, ∞), one per order.

    Examples
    --------
    >>> print(RenyiDP([2, 8], [0.1, 0.5]))
    RenyiDP(α=[2, 8], ε=[0.1, 0.5])
    """

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]

    type_name: ClassVar[str] = "renyi_dp"
    _kinds: ClassVar[dict[str, str]] = {"orders": "reals", "epsilons": "reals"}

    def __post_init__(self) -> None:
        orders = _reals("orders", self.orders, low=1.0, high=_INF, low_open=True, high_open=True)
        epsilons = _reals("epsilons", self.epsilons, low=0.0, high=_INF, high_open=True)
        if len(orders) != len(epsilons):
            raise InvalidParameterError(
                f"orders and epsilons must have the same length, got {len(orders)} orders "
                f"and {len(epsilons)} epsilons"
            )
        if len(set(orders)) != len(orders):
            raise InvalidParameterError(f"orders must be distinct, got {list(orders)}")
        pairs = sorted(zip(orders, epsilons, strict=True))
        object.__setattr__(self, "orders", tuple(a for a, _ in pairs))
        object.__setattr__(self, "epsilons", tuple(e for _, e in pairs))

    def _short(self) -> str:
        orders = ", ".join(_fmt(a) for a in self.orders[:4])
        epsilons = ", ".join(_fmt(e) for e in self.epsilons[:4])
        more = ", …" if len(self.orders) > 4 else ""
        return f"RenyiDP(α=[{orders}{more}], ε=[{epsilons}{more}])"


@dataclass(frozen=True)
class Profile(Mechanism):
    """Any mechanism known only by a privacy profile ε ↦ δ(ε) (GDPT issue).

    ``delta`` is a callable giving, for ε ≥ 0, a δ for which the mechanism is
    (ε, δ)-DP under the neighbouring relation in use (an upper bound on its
    privacy profile; vectorised or not). The accountant turns it into the
    trade-off curve sup_ε f_{ε,δ(ε)} (Dong, Roth & Su 2022, Proposition 2.12)
    on a finite, adaptively refined set of ε — a curve below the exact one —
    and takes the pair of that curve (the lecture, file 003, Lemma 9).
    Because it holds a Python callable it cannot be written to a pipeline
    file.

    Parameters
    ----------
    delta : callable
        ε ↦ δ(ε) ∈ [0, 1], non-increasing.
    name : str
        A label for descriptions.

    Examples
    --------
    >>> from gaussdp import gdp
    >>> print(Profile(lambda eps: gdp.delta(1.0, eps), name="1-GDP profile"))
    Profile(1-GDP profile)
    """

    delta: Any
    name: str = "privacy profile"

    type_name: ClassVar[str] = "profile"
    _kinds: ClassVar[dict[str, str]] = {"delta": "callable", "name": "string"}

    def __post_init__(self) -> None:
        _require_callable("delta", self.delta, "epsilon -> delta")
        if not isinstance(self.name, str):
            raise InvalidParameterError(f"name must be a string, got {self.name!r}")

    def _short(self) -> str:
        return f"Profile({self.name})"


@dataclass(frozen=True)
class NoiseEquation(Mechanism):
    """A mechanism run with noise σ, calibrated by a privacy-utility equation σ = f(ε, δ).

    The equation says that noise ``noise_fn(ε, δ)`` makes the mechanism
    (ε, δ)-DP (GDPT paper, file 000, §2). With noise σ the mechanism is
    (ε, δ̂(ε))-DP for δ̂(ε) = min{δ : f(ε, δ) ≤ σ}, and by the exact partial
    order of (ε, δ) guarantees the *refined* profile (GDPT paper, Appendix B;
    :func:`gaussdp.gdpt.from_noise_equation`) holds. The accountant uses
    that profile as :class:`Profile` does. Holds a callable: not for
    pipeline files.

    Parameters
    ----------
    noise_fn : callable
        ``noise_fn(epsilon, delta) -> sigma`` (or of ``log δ`` when
        ``log_delta``), decreasing in ε and δ. The accountant calls it with
        numpy arrays of ε and δ that include ε = 0 and δ = 0 (where the
        answer may be ``inf``), so write it with numpy, not :mod:`math`.
    sigma : float
        The noise used, σ ∈ (0, ∞).
    log_delta : bool
        Whether ``noise_fn`` takes log δ.
    name : str
        A label for descriptions.

    Examples
    --------
    The classical Gaussian mechanism's equation (Dwork & Roth, Theorem A.1),
    σ = √(2 log(1.25/δ))/ε; at σ = 5 it claims ε ≈ 0.96896 at δ = 1e-5:

    >>> import numpy as np
    >>> from gaussdp import NoiseEquation, account
    >>> def classical(eps, delta):
    ...     return np.sqrt(2 * np.log(1.25 / delta)) / eps
    >>> mechanism = NoiseEquation(classical, 5.0, name="classical Gaussian")
    >>> print(mechanism)
    NoiseEquation(classical Gaussian, σ=5)
    >>> round(float(account(mechanism).epsilon(1e-5)), 4)
    0.969
    """

    noise_fn: Any
    sigma: float
    log_delta: bool = False
    name: str = "noise equation"

    type_name: ClassVar[str] = "noise_equation"
    _kinds: ClassVar[dict[str, str]] = {
        "noise_fn": "callable",
        "sigma": "real",
        "log_delta": "boolean",
        "name": "string",
    }

    def __post_init__(self) -> None:
        _require_callable("noise_fn", self.noise_fn, "(epsilon, delta) -> sigma")
        object.__setattr__(
            self,
            "sigma",
            _real("sigma", self.sigma, low=0.0, high=_INF, low_open=True, high_open=True),
        )
        if not isinstance(self.log_delta, (bool, np.bool_)):
            raise InvalidParameterError(f"log_delta must be True or False, got {self.log_delta!r}")
        object.__setattr__(self, "log_delta", bool(self.log_delta))
        if not isinstance(self.name, str):
            raise InvalidParameterError(f"name must be a string, got {self.name!r}")

    def _short(self) -> str:
        return f"NoiseEquation({self.name}, σ={_fmt(self.sigma)})"


@dataclass(frozen=True)
class Group(Mechanism):
    """Group privacy: ``mechanism`` seen by groups of k records.

    Neighbours are now data sets that differ in up to k records (added or
    removed, or replaced). A chain of k single-record neighbours gives the
    general rule: an f-DP mechanism is [1 − (1 − f)^{∘k}]-DP for groups of k
    (Dong, Roth & Su 2022, Theorem 2.14). Where the mechanism's structure
    allows more, the accountant uses it, all exact or dominating:

    - a composition (or repetition, or DP-SGD) of mechanisms sees the same
      group in every part: ``Group(Composition([A, B]), k)`` is accounted as
      ``Composition([Group(A, k), Group(B, k)])`` (composition of dominating
      pairs for the group relation);
    - Gaussian and Laplace with sensitivity Δ: the group moves the query by
      at most kΔ, so ``Gaussian(σ, kΔ)``, ``Laplace(b, kΔ)`` (exact);
    - μ-GDP: kμ (Theorem 2.14 for G_μ); ε-DP and randomized response: kε;
      ρ-zCDP: k²ρ (Bun & Steinke 2016, Proposition 27);
    - anything else (subsampled mechanisms, approximate DP, discrete
      Gaussians, profiles, parallel compositions): Theorem 2.14 applied to
      its pessimistic trade-off curve.

    Parameters
    ----------
    mechanism : Mechanism
    group_size : int
        k ≥ 1; k = 1 is the mechanism itself.

    Examples
    --------
    >>> print(Group(Gaussian(4.0), 3))
    Group(k=3, Gaussian(σ=4))
    """

    mechanism: Mechanism
    group_size: int

    type_name: ClassVar[str] = "group"
    _kinds: ClassVar[dict[str, str]] = {"mechanism": "mechanism", "group_size": "integer"}

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        object.__setattr__(self, "group_size", _integer("group_size", self.group_size, low=1))

    def _short(self) -> str:
        return f"Group(k={self.group_size}, {self.mechanism._short()})"

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.mechanism,)


@dataclass(frozen=True)
class Parallel(Mechanism):
    """Parallel composition: each mechanism runs on its own, disjoint part of the data.

    The data set is split into disjoint parts by a rule that does not depend
    on the other records (e.g. by a record's own attribute), and the i-th
    mechanism sees only the i-th part. One record lies in one part, so a pair
    of neighbouring data sets differs in one part only: the privacy of the
    whole is the *worst* part's, not a composition (McSherry 2009). In
    hockey-stick terms, for each neighbouring direction

        H_α(whole) = max_i H_α(part i),

    a maximum of convex, decreasing functions, which is again a privacy
    profile; its trade-off curve is the convex envelope (min_i f_i)**
    (:func:`gaussdp.curves.lower_envelope`). The accountant accounts each part
    on its own and takes the pair of that envelope (the lecture, file 003,
    Lemma 9): exact for the profile, and composable with everything else.

    Parameters
    ----------
    mechanisms : iterable of Mechanism
        At least one; stored as a tuple.

    Examples
    --------
    >>> print(Parallel([Gaussian(2.0), Laplace(1.0)]))
    Parallel of 2: Gaussian(σ=2), Laplace(b=1)
    """

    mechanisms: tuple[Mechanism, ...]

    type_name: ClassVar[str] = "parallel"
    _kinds: ClassVar[dict[str, str]] = {"mechanisms": "mechanisms"}

    def __post_init__(self) -> None:
        value = self.mechanisms
        if isinstance(value, (Mechanism, str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise InvalidParameterError(
                f"mechanisms must be an iterable of Mechanism objects, got {value!r}"
            )
        parts = tuple(value)
        if not parts:
            raise InvalidParameterError("Parallel needs at least one mechanism, got none")
        for index, part in enumerate(parts):
            _require_mechanism(f"mechanisms[{index}]", part)
        object.__setattr__(self, "mechanisms", parts)

    def describe(self) -> str:
        parts = ", ".join(part._short() for part in self.mechanisms)
        return f"Parallel of {len(self.mechanisms)}: {parts}"

    def _short(self) -> str:
        return "Parallel[" + ", ".join(part._short() for part in self.mechanisms) + "]"

    def _children(self) -> tuple[Mechanism, ...]:
        return self.mechanisms


_TYPES: dict[str, type[Mechanism]] = {
    cls.type_name: cls
    for cls in (
        Gaussian,
        Laplace,
        DiscreteGaussian,
        RandomizedResponse,
        PureDP,
        ApproxDP,
        PoissonSubsampled,
        SubsampledWithoutReplacement,
        Composition,
        Repeated,
        DPSGD,
        GDP,
        ZCDP,
        RenyiDP,
        Group,
        Parallel,
    )
}
_ADDITIVE = (Gaussian, Laplace, DiscreteGaussian)


# --------------------------------------------------------------------------- neighbouring


def resolve(mechanism, neighbouring=None) -> tuple[Mechanism, Neighbouring]:
    """The mechanism and relation to account: unpack a :class:`Pipeline`, default the relation.

    A pipeline's own relation applies unless ``neighbouring`` is given;
    otherwise add/remove. Raises :class:`InvalidParameterError` when
    ``neighbouring`` is not a :class:`Neighbouring` or ``mechanism`` is not a
    mechanism description.
    """
    if isinstance(mechanism, Pipeline):
        if neighbouring is None:
            neighbouring = mechanism.neighbouring
        mechanism = mechanism.mechanism
    if neighbouring is None:
        neighbouring = Neighbouring.ADD_REMOVE
    if not isinstance(neighbouring, Neighbouring):
        raise InvalidParameterError(
            "neighbouring must be a gaussdp.Neighbouring (ADD_REMOVE or REPLACE), "
            f"got {neighbouring!r}"
        )
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError(
            f"mechanism must be a gaussdp mechanism description, got {type(mechanism).__name__}"
        )
    return mechanism, neighbouring


def validate_neighbouring(
    mechanism: Mechanism, neighbouring=Neighbouring.ADD_REMOVE
) -> Neighbouring:
    """Check that ``mechanism`` has a defined pair under ``neighbouring``; return the enum.

    The rules (see the class docstrings): :class:`SubsampledWithoutReplacement`
    needs REPLACE (fixed-size data sets), and :class:`PoissonSubsampled` under
    REPLACE needs an inner mechanism built only from additive-noise mechanisms
    (Gaussian, Laplace, DiscreteGaussian) by Composition and Repeated.

    Parameters
    ----------
    mechanism : Mechanism
    neighbouring : Neighbouring or str
        A :class:`Neighbouring` or its value (``"add_remove"``, ``"replace"``).

    Raises
    ------
    InvalidParameterError
        If ``neighbouring`` is not a relation, or the description has no pair under it.

    Examples
    --------
    >>> validate_neighbouring(DPSGD(1.0, 0.01, 10), "replace")
    <Neighbouring.REPLACE: 'replace'>
    """
    _require_mechanism("mechanism", mechanism)
    relation = _neighbouring(neighbouring)
    for part in _walk(mechanism):
        if isinstance(part, SubsampledWithoutReplacement) and relation is Neighbouring.ADD_REMOVE:
            raise InvalidParameterError(
                "neighbouring must be 'replace' for SubsampledWithoutReplacement "
                "(fixed-size data sets), got 'add_remove'"
            )
        if isinstance(part, PoissonSubsampled) and relation is Neighbouring.REPLACE:
            inner = [p for p in _walk(part.mechanism) if not isinstance(p, (Composition, Repeated))]
            odd = [p for p in inner if not isinstance(p, _ADDITIVE)]
            if odd:
                raise InvalidParameterError(
                    "neighbouring 'replace' with PoissonSubsampled is defined only over "
                    "Gaussian, Laplace and DiscreteGaussian mechanisms (and compositions of "
                    f"them), got PoissonSubsampled over {odd[0]._short()}"
                )
    return relation


def _neighbouring(value: Any) -> Neighbouring:
    if isinstance(value, Neighbouring):
        return value
    allowed = ", ".join(repr(member.value) for member in Neighbouring)
    if isinstance(value, str):
        try:
            return Neighbouring(value)
        except ValueError:
            raise InvalidParameterError(
                f"neighbouring must be one of {allowed}, got {value!r}"
                + _suggest(value, [m.value for m in Neighbouring])
            ) from None
    raise InvalidParameterError(f"neighbouring must be one of {allowed}, got {value!r}")


# --------------------------------------------------------------------------- pipeline


@dataclass(frozen=True)
class Pipeline:
    """A mechanism together with the neighbouring relation that applies to all of it.

    This is what :func:`load` returns and what a pipeline file describes.

    Parameters
    ----------
    mechanism : Mechanism
        The whole algorithm.
    neighbouring : Neighbouring or str, default ADD_REMOVE
        Stored as a :class:`Neighbouring`; the description must have a
        dominating pair under it (see :func:`validate_neighbouring`).
    name : str or None
        A label for reports.

    Examples
    --------
    >>> p = Pipeline(DPSGD(9.4, 0.32768, 2000), name="CIFAR-10")
    >>> print(p)
    CIFAR-10: DP-SGD: σ=9.4, q=0.32768, 2000 steps [add/remove one record]
    >>> loads(dumps(p)) == p
    True
    """

    mechanism: Mechanism
    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE
    name: str | None = None

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        object.__setattr__(
            self, "neighbouring", validate_neighbouring(self.mechanism, self.neighbouring)
        )
        if self.name is not None and not isinstance(self.name, str):
            raise InvalidParameterError(f"name must be a string or None, got {self.name!r}")

    def describe(self) -> str:
        """One line: the name, the mechanism and the relation."""
        prefix = f"{self.name}: " if self.name else ""
        return f"{prefix}{self.mechanism.describe()} [{self.neighbouring.describe()}]"

    def __str__(self) -> str:
        return self.describe()

    def to_dict(self) -> dict[str, Any]:
        """The pipeline-file structure as a dict: ``name``, ``neighbouring``, ``mechanism`` list.

        A top-level :class:`Composition` of two or more parts becomes one
        ``mechanism`` entry per part; anything else is a single entry.
        """
        result: dict[str, Any] = {}
        if self.name is not None:
            result["name"] = self.name
        result["neighbouring"] = self.neighbouring.value
        if isinstance(self.mechanism, Composition) and len(self.mechanism.mechanisms) > 1:
            entries = [part.to_dict() for part in self.mechanism.mechanisms]
        else:
            entries = [self.mechanism.to_dict()]
        result["mechanism"] = entries
        return result

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> Pipeline:
        """Build a pipeline from the structure of a pipeline file (see :func:`loads`)."""
        return _pipeline_from_document(document)


# --------------------------------------------------------------------------- dict conversion


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _describe_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def _build(entry: Any, path: str) -> Mechanism:
    """Parse one mechanism table (a dict); messages are prefixed with ``path``."""
    where = path or "mechanism"
    if not isinstance(entry, Mapping):
        raise InvalidParameterError(
            f"{where} must be a table with a 'type' key, got {_describe_type(entry)} {entry!r}"
        )
    known_types = ", ".join(sorted(_TYPES))
    if "type" not in entry:
        raise InvalidParameterError(f"{_join(path, 'type')} is missing; known types: {known_types}")
    type_name = entry["type"]
    if not isinstance(type_name, str):
        raise InvalidParameterError(
            f"{_join(path, 'type')} must be a string, got {_describe_type(type_name)} {type_name!r}"
        )
    cls = _TYPES.get(type_name)
    if cls is None:
        raise InvalidParameterError(
            f"{_join(path, 'type')}: unknown mechanism type {type_name!r}"
            f"{_suggest(type_name, _TYPES)}; known types: {known_types}"
        )
    allowed = [*cls._kinds, "repeat"]
    for key in entry:
        if key != "type" and key not in allowed:
            raise InvalidParameterError(
                f"{_join(path, str(key))}: unknown field for type {type_name!r}"
                f"{_suggest(str(key), allowed)}; allowed fields: {', '.join(allowed)}"
            )
    defaults = {f.name for f in fields(cls) if f.default is not MISSING}
    kwargs: dict[str, Any] = {}
    for name, kind in cls._kinds.items():
        place = _join(path, name)
        if name not in entry:
            if name in defaults:
                continue
            raise InvalidParameterError(f"{place} is missing (required for type {type_name!r})")
        value = entry[name]
        if kind == "real":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise InvalidParameterError(
                    f"{place} must be a number, got {_describe_type(value)} {value!r}"
                )
        elif kind == "integer":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise InvalidParameterError(
                    f"{place} must be an integer, got {_describe_type(value)} {value!r}"
                )
        elif kind == "reals":
            if not isinstance(value, (list, tuple)) or any(
                isinstance(v, bool) or not isinstance(v, numbers.Real) for v in value
            ):
                raise InvalidParameterError(
                    f"{place} must be an array of numbers, got {_describe_type(value)} {value!r}"
                )
        elif kind == "mechanism":
            value = _build(value, place)
        else:  # "mechanisms"
            if not isinstance(value, (list, tuple)):
                raise InvalidParameterError(
                    f"{place} must be an array of mechanism tables, got "
                    f"{_describe_type(value)} {value!r}"
                )
            if not value:
                raise InvalidParameterError(
                    f"{place}: {cls.__name__} needs at least one mechanism, got none"
                )
            value = [_build(part, f"{place}[{index}]") for index, part in enumerate(value)]
        kwargs[name] = value
    try:
        mechanism = cls(**kwargs)
    except InvalidParameterError as error:
        message = str(error)
        if path and any(message.startswith(name + " ") for name in cls._kinds):
            raise InvalidParameterError(f"{path}.{message}") from None
        raise InvalidParameterError(f"{path}: {message}" if path else message) from None
    if "repeat" in entry:
        repeat = entry["repeat"]
        place = _join(path, "repeat")
        if isinstance(repeat, bool) or not isinstance(repeat, numbers.Real):
            raise InvalidParameterError(
                f"{place} must be an integer >= 1, got {_describe_type(repeat)} {repeat!r}"
            )
        times = _integer(place, repeat, low=1)
        if times > 1:
            mechanism = Repeated(mechanism, times)
    return mechanism


def from_dict(data: Mapping[str, Any]) -> Mechanism:
    """The mechanism described by ``data``, the inverse of :meth:`Mechanism.to_dict`.

    ``data`` has a ``"type"`` key (``"gaussian"``, ``"pure_dp"``, ...) and the
    class's fields; wrapped mechanisms are nested dicts. An optional
    ``"repeat"`` key (an integer ≥ 1) wraps the result in :class:`Repeated`.

    Raises
    ------
    InvalidParameterError
        Naming the place (e.g. ``mechanism.sigma``) and the problem.

    Examples
    --------
    >>> from_dict({"type": "gaussian", "sigma": 5.0, "repeat": 3})
    Repeated(mechanism=Gaussian(sigma=5.0, sensitivity=1.0), times=3)
    """
    return _build(data, "")


_TOP_LEVEL_KEYS = ("name", "neighbouring", "mechanism")


def _pipeline_from_document(document: Any) -> Pipeline:
    if not isinstance(document, Mapping):
        raise InvalidParameterError(f"a pipeline must be a table, got {_describe_type(document)}")
    for key in document:
        if key not in _TOP_LEVEL_KEYS:
            raise InvalidParameterError(
                f"{key}: unknown top-level key{_suggest(str(key), _TOP_LEVEL_KEYS)}; "
                f"allowed: {', '.join(_TOP_LEVEL_KEYS)}"
            )
    name = document.get("name")
    if name is not None and not isinstance(name, str):
        raise InvalidParameterError(f"name must be a string, got {_describe_type(name)} {name!r}")
    neighbouring = _neighbouring(document.get("neighbouring", Neighbouring.ADD_REMOVE))
    entries = document.get("mechanism")
    if entries is None or (isinstance(entries, (list, tuple)) and not entries):
        raise InvalidParameterError(
            "empty pipeline: no mechanism entries (add a [[mechanism]] table with a 'type')"
        )
    if isinstance(entries, Mapping):
        mechanism = _build(entries, "mechanism")
    elif isinstance(entries, (list, tuple)):
        parts = [_build(entry, f"mechanism[{index}]") for index, entry in enumerate(entries)]
        mechanism = parts[0] if len(parts) == 1 else Composition(parts)
    else:
        raise InvalidParameterError(
            "mechanism must be an array of tables ([[mechanism]]) or a table, got "
            f"{_describe_type(entries)} {entries!r}"
        )
    return Pipeline(mechanism, neighbouring, name)


# --------------------------------------------------------------------------- TOML files


def _toml():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:  # pragma: no cover - depends on the environment
            raise ImportError(
                "reading pipeline files on Python 3.10 needs the 'tomli' package "
                "(pip install tomli)"
            ) from None
    return tomllib


def loads(text: str, *, source: str = "<string>") -> Pipeline:
    """Read a pipeline from TOML text.

    The format (documented with every type in ``docs/mechanisms.md``)::

        name = "autodp example"          # optional
        neighbouring = "add_remove"      # optional: add_remove (default) | replace

        [[mechanism]]
        type = "gaussian"
        sigma = 5.0
        repeat = 3                       # optional on any entry: wraps in Repeated

        [[mechanism]]
        type = "poisson_subsampled"
        sampling_probability = 0.01
        mechanism = { type = "gaussian", sigma = 1.0 }

    Several ``[[mechanism]]`` entries form a :class:`Composition`; one entry is
    that mechanism. Entries are numbered from 0 in messages.

    Parameters
    ----------
    text : str
        The TOML document.
    source : str
        How messages refer to the text (a file name).

    Raises
    ------
    PipelineFileError
        ``<source>: <place>: <problem>`` for a syntax error (with its line), an
        unknown type or field, a missing field, a wrong type, a value out of
        range, or an empty pipeline.

    Examples
    --------
    >>> p = loads('[[mechanism]]\\ntype = "pure_dp"\\nepsilon = 0.1\\nrepeat = 2')
    >>> p.mechanism
    Repeated(mechanism=PureDP(epsilon=0.1), times=2)
    """
    if not isinstance(text, str):
        raise PipelineFileError(f"{source}: expected TOML text (a str), got {type(text).__name__}")
    tomllib = _toml()
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PipelineFileError(f"{source}: invalid TOML: {error}") from None
    try:
        return _pipeline_from_document(document)
    except InvalidParameterError as error:
        raise PipelineFileError(f"{source}: {error}") from None


def load(path: str | os.PathLike[str]) -> Pipeline:
    """Read a pipeline file (TOML); see :func:`loads` and ``docs/mechanisms.md``.

    Raises
    ------
    PipelineFileError
        If the file cannot be read or is malformed; the message starts with the path.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "dpsgd.toml"
    >>> _ = path.write_text(dumps(Pipeline(DPSGD(9.4, 0.32768, 2000))))
    >>> print(load(path).mechanism)
    DP-SGD: σ=9.4, q=0.32768, 2000 steps
    """
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise PipelineFileError(f"{source}: file not found") from None
    except IsADirectoryError:
        raise PipelineFileError(f"{source}: is a directory, not a pipeline file") from None
    except UnicodeDecodeError as error:
        raise PipelineFileError(f"{source}: not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise PipelineFileError(f"{source}: cannot read the file ({error.strerror})") from None
    return loads(text, source=source)


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    escaped = []
    for char in text:
        if char in ('"', "\\"):
            escaped.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04X}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):  # pragma: no cover - descriptions hold no booleans
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")  # pragma: no cover


def dumps(pipeline: Pipeline | Mechanism) -> str:
    """The TOML text of a pipeline file; :func:`loads` reads it back to an equal pipeline.

    A bare :class:`Mechanism` is written as a pipeline under ADD_REMOVE.

    Examples
    --------
    >>> print(dumps(Pipeline(Repeated(Gaussian(5.0), 3), name="three Gaussians")), end="")
    name = "three Gaussians"
    neighbouring = "add_remove"
    <BLANKLINE>
    [[mechanism]]
    type = "repeated"
    mechanism = { type = "gaussian", sigma = 5.0, sensitivity = 1.0 }
    times = 3
    """
    if isinstance(pipeline, Mechanism):
        pipeline = Pipeline(pipeline)
    if not isinstance(pipeline, Pipeline):
        raise InvalidParameterError(f"pipeline must be a Pipeline or a Mechanism, got {pipeline!r}")
    document = pipeline.to_dict()
    lines = [
        f"{key} = {_toml_value(document[key])}"
        for key in ("name", "neighbouring")
        if key in document
    ]
    for entry in document["mechanism"]:
        lines += ["", "[[mechanism]]"]
        lines += [f"{key} = {_toml_value(value)}" for key, value in entry.items()]
    return "\n".join(lines) + "\n"
