"""Closed-form trade-off curves: G_μ, the Laplace curve, f_{ε,δ}, and f ⊗ f_{0,δ}."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy import special

from gaussdp import gdp
from gaussdp._validation import InvalidParameterError, check_real
from gaussdp.curves import _geometry
from gaussdp.curves._tradeoff import (
    DEFAULT_TOLERANCE,
    TAIL_RELATIVE_TOLERANCE,
    PiecewiseLinear,
    TradeOff,
    provides,
)

__all__ = ["EpsilonDelta", "EpsilonDeltaParameters", "Gaussian", "Laplace", "WithFailure"]


class EpsilonDeltaParameters(NamedTuple):
    """The (ε, δ) of an f_{ε,δ} curve."""

    epsilon: float
    delta: float


# Tangent points of smooth curves are laid down until the TPR 1 − β (and β)
# at the ends is about this small; beyond, the piecewise-linear curve follows
# the last tangent line, below the true curve by less than that.
_TAIL_MASS = 1e-40
_TAIL_FLOOR = 1e-300
# Tangent slopes stay within e^{±_MAX_LOG_SLOPE}, far from overflow.
_MAX_LOG_SLOPE = 690.0
# Beyond this μ the fixed point Φ(−μ/2) of G_μ is below 1e-300.
_ZERO_GAUSSIAN_MU = 75.0


def _tolerance(tolerance: float | None) -> float:
    if tolerance is None:
        return DEFAULT_TOLERANCE
    return float(check_real("tolerance", tolerance, low=0.0, high=1.0, low_open=True))


def _tail_tolerance(alpha_left, beta_left, slope_left, alpha_right, beta_right, slope_right):
    """Relative accuracy in the tails: of the TPR 1 − β near α = 0, of β near α = 1.

    Convexity gives 1 − f(α) ≥ f(0) − f(α) ≥ |f'(α)|·α, a lower bound on the
    TPR that keeps its digits where 1 − β has lost them.
    """
    tpr_scale = np.maximum(1.0 - beta_left, -slope_left * alpha_left)
    return np.maximum(TAIL_RELATIVE_TOLERANCE * np.minimum(tpr_scale, beta_right), _TAIL_FLOOR)


def _envelope_of_tangents(alphas, betas, slopes) -> PiecewiseLinear:
    """The upper envelope of the tangent lines and β = 0: a curve below f."""
    intercepts = np.append(betas - slopes * alphas, 0.0)
    x, y, _ = _geometry.upper_envelope(intercepts, np.append(slopes, 0.0))
    return PiecewiseLinear._from_vertices(x, y)


# ---------------------------------------------------------------------------
# Gaussian
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _gaussian_piecewise(mu: float, tolerance: float) -> PiecewiseLinear:
    if mu == 0.0:
        return PiecewiseLinear._trusted(np.array([0.0, 1.0]), np.array([1.0, 0.0]))
    if mu >= _ZERO_GAUSSIAN_MU:
        # G_μ(α) underflows to 0 for every α ≥ 1e-300: the zero curve is below it.
        return PiecewiseLinear._trusted(np.array([0.0, 1.0]), np.array([0.0, 0.0]))
    # Threshold parametrisation: α = Φ(u), β = Φ(−u − μ), dβ/dα = −exp(−μu − μ²/2);
    # u ↦ −u − μ swaps α and β, so the grid is symmetric about u = −μ/2.
    # At u = centre − w the TPR is Φ(u + μ) = Φ(μ/2 − w): tiny for w = μ/2 + 13.3.
    half_width = min(0.5 * mu - float(special.ndtri(_TAIL_MASS)), _MAX_LOG_SLOPE / mu)
    centre = -0.5 * mu

    _, a, b, s = _geometry.tangent_lines(
        special.ndtr,
        lambda u: special.ndtr(-u - mu),
        lambda u: -np.exp(-mu * (u - centre)),  # −μu − μ²/2 = −μ(u − centre)
        centre - half_width,
        centre + half_width,
        tolerance=tolerance,
        tail_tolerance=_tail_tolerance,
    )
    return _envelope_of_tangents(a, b, s)


@dataclass(frozen=True)
class Gaussian(TradeOff):
    r"""G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) = T(N(0, 1), N(μ, 1)) (Dong, Roth & Su, eq. 5).

    Exact: evaluation, profile, ε(δ), advantage, composition (Corollary 2)
    and group privacy (G_{kμ}, Theorem 3) use the closed forms of
    :mod:`gaussdp.gdp`. μ = 0 is perfect privacy (Id), μ = ∞ none.

    Examples
    --------
    >>> from gaussdp import curves
    >>> f = curves.gaussian(1.0)
    >>> round(f.beta(0.05), 6), round(f.tpr(1e-6), 8)
    (0.740489, 8.722e-05)
    """

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", float(check_real("mu", self.mu, low=0.0, high=math.inf)))

    def _beta(self, alpha):
        return np.asarray(gdp.beta(self.mu, alpha), dtype=float)

    def _tpr(self, alpha):
        alpha = np.asarray(alpha, dtype=float)
        if math.isinf(self.mu):
            return np.where(alpha >= 0.0, 1.0, 0.0)
        small = alpha <= 0.5
        with np.errstate(divide="ignore"):
            low = special.ndtr(special.ndtri(np.where(small, alpha, 0.5)) + self.mu)
        return np.where(small, low, 1.0 - self._beta(alpha))

    # gdp's profile divides by μ; for subnormal μ that overflows harmlessly to δ = 0.

    def _delta(self, epsilon):
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return np.asarray(gdp.delta(self.mu, epsilon), dtype=float)

    def _epsilon(self, delta):
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return np.asarray(gdp.epsilon(self.mu, delta), dtype=float)

    def _support(self, slope):
        slope = np.asarray(slope, dtype=float)
        log_slope = np.log(slope)
        above = log_slope >= 0.0
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            high = 1.0 - np.asarray(gdp.delta(self.mu, np.where(above, log_slope, 0.0)))
            low = slope * (1.0 - np.asarray(gdp.delta(self.mu, np.where(above, 0.0, -log_slope))))
        return np.where(above, high, low)

    def advantage(self) -> float:
        return float(gdp.advantage(self.mu))

    @property
    def is_symmetric(self) -> bool:
        return True

    def inverse(self) -> Gaussian:
        return self

    def piecewise_linear(self, tolerance=None) -> PiecewiseLinear:
        return _gaussian_piecewise(self.mu, _tolerance(tolerance))


# ---------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _laplace_piecewise(mu: float, tolerance: float) -> PiecewiseLinear:
    if mu == 0.0:
        return PiecewiseLinear._trusted(np.array([0.0, 1.0]), np.array([1.0, 0.0]))
    if mu >= _MAX_LOG_SLOPE:
        # The curve is 0 except on α < e^{−μ}/2 < 1e-300: the zero curve is below it.
        return PiecewiseLinear._trusted(np.array([0.0, 1.0]), np.array([0.0, 0.0]))
    # Middle piece: α = e^u/2, β = e^{−u−μ}/2, dβ/dα = −e^{−2u−μ}, u ∈ [−μ, 0];
    # the tangents at the two ends are the two linear pieces of the curve.
    _, a, b, s = _geometry.tangent_lines(
        lambda u: 0.5 * np.exp(u),
        lambda u: 0.5 * np.exp(-u - mu),
        lambda u: -np.exp(-2.0 * u - mu),
        -mu,
        0.0,
        tolerance=tolerance,
        tail_tolerance=_tail_tolerance,
    )
    return _envelope_of_tangents(a, b, s)


@dataclass(frozen=True)
class Laplace(TradeOff):
    r"""T(Lap(0, 1), Lap(μ, 1)): the Laplace mechanism with sensitivity/scale μ.

    .. math::
        f(α) = 1 − e^μ α            for α ≤ e^{−μ}/2,
               e^{−μ}/(4α)          for e^{−μ}/2 ≤ α ≤ 1/2,
               e^{−μ}(1 − α)        for α ≥ 1/2

    (Dong, Roth & Su, Proposition 7: the limit of group privacy for ε-DP).
    Its profile is δ(ε) = max(0, 1 − e^{(ε−μ)/2}), its advantage
    1 − e^{−μ/2}, and group privacy is exact: Laplace(kμ).

    Examples
    --------
    >>> from gaussdp import curves
    >>> round(curves.laplace(1.0).beta(0.25), 6)
    0.367879
    """

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", float(check_real("mu", self.mu, low=0.0, high=math.inf)))

    def _beta(self, alpha):
        alpha = np.asarray(alpha, dtype=float)
        mu = self.mu
        if math.isinf(mu):
            return np.zeros(alpha.shape)
        corner = 0.5 * math.exp(-mu)
        with np.errstate(divide="ignore", over="ignore"):
            head = 1.0 - math.exp(mu) * alpha
            middle = corner / (2.0 * alpha)
        tail = math.exp(-mu) * (1.0 - alpha)
        return np.where(alpha <= corner, head, np.where(alpha <= 0.5, middle, tail))

    def _tpr(self, alpha):
        alpha = np.asarray(alpha, dtype=float)
        if math.isinf(self.mu):
            return np.where(alpha >= 0.0, 1.0, 0.0)
        corner = 0.5 * math.exp(-self.mu)
        with np.errstate(over="ignore"):
            head = math.exp(self.mu) * alpha
        return np.where(alpha <= corner, head, 1.0 - self._beta(alpha))

    def _delta(self, epsilon):
        epsilon = np.asarray(epsilon, dtype=float)
        if math.isinf(self.mu):
            return np.where(np.isinf(epsilon), 0.0, 1.0)
        with np.errstate(invalid="ignore"):
            value = -np.expm1(0.5 * (epsilon - self.mu))
        return np.where(epsilon >= self.mu, 0.0, value)

    def _epsilon(self, delta):
        delta = np.asarray(delta, dtype=float)
        if math.isinf(self.mu):
            return np.where(delta >= 1.0, 0.0, np.inf)
        with np.errstate(divide="ignore"):
            value = self.mu + 2.0 * np.log1p(-delta)
        return np.nextafter(np.maximum(value, 0.0), np.inf) * (value > 0.0)

    def _support(self, slope):
        slope = np.asarray(slope, dtype=float)
        if math.isinf(self.mu):
            return np.zeros(slope.shape)
        # inf_α f(α) + γα: 1 at γ ≥ e^μ, √γ·e^{−μ/2} between, γ at γ ≤ e^{−μ}.
        log_slope = np.log(slope)
        middle = np.exp(0.5 * (log_slope - self.mu))
        return np.where(log_slope >= self.mu, 1.0, np.where(log_slope <= -self.mu, slope, middle))

    def advantage(self) -> float:
        return float(-math.expm1(-0.5 * self.mu))

    @property
    def is_symmetric(self) -> bool:
        return True

    def inverse(self) -> Laplace:
        return self

    def piecewise_linear(self, tolerance=None) -> PiecewiseLinear:
        return _laplace_piecewise(self.mu, _tolerance(tolerance))


# ---------------------------------------------------------------------------
# f_{ε,δ}
# ---------------------------------------------------------------------------


class EpsilonDelta(TradeOff):
    r"""f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)} (Dong, Roth & Su, eq. 4).

    A mechanism is (ε, δ)-DP exactly when it is f_{ε,δ}-DP (Proposition 3).
    Piecewise linear with breakpoints (0, 1 − δ), (c, c) with
    c = (1 − δ)/(1 + e^ε), and (1 − δ, 0); symmetric. Its profile is
    δ(ε') = δ + (1 − δ)(e^ε − e^{ε'})₊/(1 + e^ε). Composition of f_{ε_i,0}
    is exact (binomial form), and subsampling uses Corollary 3.

    The parameters are ``parameters.epsilon`` and ``parameters.delta``
    (``delta(...)`` and ``epsilon(...)`` are the profile queries every curve has).

    Examples
    --------
    >>> from gaussdp import curves
    >>> f = curves.epsilon_delta(1.0, 0.01)
    >>> f
    EpsilonDelta(epsilon=1.0, delta=0.01)
    >>> round(f.beta(0.1), 6), round(f.delta(0.5), 6)
    (0.718172, 0.294773)
    """

    __slots__ = ("__dict__", "parameters")

    def __init__(self, epsilon, delta) -> None:
        eps = float(check_real("epsilon", epsilon, low=0.0, high=math.inf))
        dlt = float(check_real("delta", delta, low=0.0, high=1.0))
        object.__setattr__(self, "parameters", EpsilonDeltaParameters(eps, dlt))

    def __setattr__(self, name, value):
        raise AttributeError(f"EpsilonDelta is immutable; cannot set {name!r}")

    def __repr__(self) -> str:
        return f"EpsilonDelta(epsilon={self.parameters.epsilon!r}, delta={self.parameters.delta!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EpsilonDelta):
            return NotImplemented
        return self.parameters == other.parameters

    def __hash__(self) -> int:
        return hash(("EpsilonDelta", self.parameters))

    @property
    def _eps(self) -> float:
        return self.parameters.epsilon

    @property
    def _dlt(self) -> float:
        return self.parameters.delta

    @functools.cached_property
    def _piecewise(self) -> PiecewiseLinear:
        one = 1.0 - self._dlt
        if math.isinf(self._eps) or one == 0.0:
            return PiecewiseLinear._trusted(np.array([0.0, 1.0]), np.array([0.0, 0.0]))
        corner = one / (1.0 + math.exp(self._eps))
        x = [0.0, corner, one, 1.0]
        y = [one, corner, 0.0, 0.0]
        return PiecewiseLinear._from_vertices(x, y)

    def _beta(self, alpha):
        return self._piecewise._beta(alpha)

    def _tpr(self, alpha):
        alpha = np.asarray(alpha, dtype=float)
        if math.isinf(self._eps):
            return np.ones(alpha.shape)
        corner = (1.0 - self._dlt) / (1.0 + math.exp(self._eps))
        with np.errstate(over="ignore"):
            head = self._dlt + math.exp(self._eps) * alpha
        return np.where(alpha <= corner, head, 1.0 - self._beta(alpha))

    def _delta(self, epsilon):
        epsilon = np.asarray(epsilon, dtype=float)
        if math.isinf(self._eps):
            return np.where(np.isinf(epsilon), self._dlt, 1.0)
        # (e^ε − e^{ε'})/(1 + e^ε) = −expm1(ε' − ε)/(1 + e^{−ε}) for ε' ≤ ε.
        gap = np.minimum(epsilon - self._eps, 0.0)
        share = -np.expm1(gap) / (1.0 + math.exp(-self._eps))
        return self._dlt + (1.0 - self._dlt) * share

    def _epsilon(self, delta):
        delta = np.asarray(delta, dtype=float)
        if math.isinf(self._eps):
            return np.where(delta >= 1.0, 0.0, np.inf)
        if self._dlt >= 1.0:
            return np.zeros(delta.shape)
        share = (delta - self._dlt) * (1.0 + math.exp(-self._eps)) / (1.0 - self._dlt)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = self._eps + np.log1p(-np.minimum(share, 1.0))
        value = np.where(share >= 1.0, 0.0, np.maximum(value, 0.0))
        value = np.nextafter(value, np.inf) * (value > 0.0)
        return np.where(delta < self._dlt, np.inf, value)

    def advantage(self) -> float:
        return float(self._delta(np.zeros(1))[0])

    @property
    def is_symmetric(self) -> bool:
        return True

    def inverse(self) -> EpsilonDelta:
        return self

    def piecewise_linear(self, tolerance=None) -> PiecewiseLinear:
        return self._piecewise


# ---------------------------------------------------------------------------
# f ⊗ f_{0,δ}
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WithFailure(TradeOff):
    r"""f ⊗ f_{0,δ}: "f-DP except with probability δ" (Dong, Roth & Su, eq. 12).

    .. math::
        (f ⊗ f_{0,δ})(α) = (1 − δ)·f(α/(1 − δ)) for α ≤ 1 − δ, 0 beyond.

    The curve of f scaled towards the origin by 1 − δ; its value at 0 is
    (1 − δ)f(0) < 1. Exact: profile δ_g(ε) = δ + (1 − δ)δ_f(ε), advantage
    δ + (1 − δ)·adv(f), inverse (f⁻¹) ⊗ f_{0,δ}.

    Build it with :meth:`TradeOff.with_failure`.
    """

    base: TradeOff
    failure: float

    @classmethod
    def of(cls, base: TradeOff, delta: float) -> TradeOff:
        """``base`` ⊗ f_{0,δ}, merging the failures of f_{ε,δ} and of a nested WithFailure."""
        if delta == 0.0:
            return base
        if isinstance(base, EpsilonDelta):
            # f_{ε,δ₁} ⊗ f_{0,δ} = f_{ε, 1 − (1−δ₁)(1−δ)} (eqs. 10, 11).
            eps, dlt = base.parameters
            return EpsilonDelta(eps, -math.expm1(math.log1p(-dlt) + math.log1p(-delta)))
        if isinstance(base, WithFailure):
            combined = -math.expm1(math.log1p(-base.failure) + math.log1p(-delta))
            return cls(base.base, combined)
        return cls(base, delta)

    def __post_init__(self) -> None:
        if not isinstance(self.base, TradeOff):
            raise InvalidParameterError(f"base must be a TradeOff, got {type(self.base).__name__}")
        value = float(check_real("delta", self.failure, low=0.0, high=1.0, high_open=True))
        object.__setattr__(self, "failure", value)

    @property
    def _scale(self) -> float:
        return 1.0 - self.failure

    def _beta(self, alpha):
        alpha = np.asarray(alpha, dtype=float)
        scale = self._scale
        inside = alpha <= scale
        value = scale * self.base._beta(np.where(inside, np.minimum(alpha / scale, 1.0), 1.0))
        return np.where(inside, value, 0.0)

    def _tpr(self, alpha):
        alpha = np.asarray(alpha, dtype=float)
        scale = self._scale
        inside = alpha <= scale
        value = self.failure + scale * self.base._tpr(
            np.where(inside, np.minimum(alpha / scale, 1.0), 1.0)
        )
        return np.where(inside, value, 1.0)

    def _delta(self, epsilon):
        return self.failure + self._scale * np.asarray(self.base._delta(epsilon))

    def _epsilon(self, delta):
        delta = np.asarray(delta, dtype=float)
        shifted = np.clip((delta - self.failure) / self._scale, 0.0, 1.0)
        value = np.asarray(self.base._epsilon(shifted), dtype=float)
        return np.where(delta < self.failure, np.inf, value)

    def _support(self, slope):
        return self._scale * np.asarray(self.base._support(slope))

    def advantage(self) -> float:
        return float(self.failure + self._scale * self.base.advantage())

    @property
    def is_symmetric(self) -> bool:
        return self.base.is_symmetric

    def inverse(self) -> TradeOff:
        return WithFailure.of(self.base.inverse(), self.failure)

    def symmetrize(self) -> TradeOff:
        return WithFailure.of(self.base.symmetrize(), self.failure)

    def piecewise_linear(self, tolerance=None) -> PiecewiseLinear:
        base = self.base.piecewise_linear(tolerance)
        scale = self._scale
        return PiecewiseLinear._from_vertices(
            np.append(scale * base.alphas, 1.0), np.append(scale * base.betas, 0.0)
        )


provides("with_failure")(WithFailure.of)
