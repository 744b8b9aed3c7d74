"""Mechanisms known only by a guarantee: μ-GDP, ρ-zCDP, Rényi DP, a privacy profile,
or a noise equation.

:class:`GDP`, :class:`ZCDP`, :class:`RenyiDP`, :class:`Profile` and
:class:`NoiseEquation` describe a mechanism by what is proved about it, not by
its noise. Their accounting lives in :mod:`gaussdp.pld.guarantees`; which
conversions are lossless is said in ``docs/interop.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from gaussdp._validation import InvalidParameterError
from gaussdp.mechanisms.base import (
    _INF,
    Mechanism,
    _fmt,
    _real,
    _reals,
    _require_callable,
)


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
    (pessimistic). Compositions of ZCDP mechanisms add their ρ before the
    conversion: the Σρ class bounds them from above; from below, the Gaussian
    of μ = √(2Σρ) (a composition of members), with a caveat saying so (the Σρ
    class holds mechanisms that are no such composition). The same lower bound
    holds wherever a ZCDP leaf is composed with other mechanisms: the class's
    curve bounds it from below only alone. Group privacy of k
    records: k²ρ from above, the Gaussian member's group (μ = k·√(2ρ)) from
    below.

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
    their ε(α) on the common orders before the conversion; their lower bound
    is then the Gaussian whose μ² sums each part's largest Gaussian member
    (see :class:`ZCDP`).

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
    The lower bounds read a curve above the exact one, built on δ's
    convexity in e^ε (:func:`gaussdp.pld.guarantees.dominating_losses`): they
    take ``delta`` to be a privacy profile itself (convex and non-increasing
    in e^ε, as every mechanism's is), and are certified for the worst
    mechanism of the class only where it is one.
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
        answer may be ``inf``), so write it with numpy, not ``math``.
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
