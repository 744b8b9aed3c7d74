"""Combinators: descriptions built from other descriptions.

:class:`Composition` (adaptive, heterogeneous), :class:`Repeated` (k times the
same), :class:`Group` (group privacy for k records) and :class:`Parallel`
(disjoint parts of the data).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from gaussdp._validation import InvalidParameterError
from gaussdp.mechanisms.base import (
    Mechanism,
    _integer,
    _require_mechanism,
)


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
