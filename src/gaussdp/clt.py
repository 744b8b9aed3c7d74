r"""Central limit theorems for f-DP composition — labelled approximations.

Dong, Roth & Su (2022, §3.2–§3.3, §5) show that the composition of many
mechanisms, each close to perfect privacy, tends to a Gaussian trade-off
curve G_μ, and give μ from four functionals of the trade-off functions

.. math::
    kl(f) = −∫₀¹ \log|f'(x)| dx,   κ₂(f) = ∫₀¹ \log²|f'(x)| dx,
    κ₃(f) = ∫₀¹ |\log|f'(x)||³ dx,   κ̄₃(f) = ∫₀¹ |\log|f'(x)| + kl(f)|³ dx.

**Everything here is an approximation — neither an upper nor a lower bound
on privacy loss — unless the theorem makes it one** (only the lower curve of
the Berry–Esseen bound, Theorem 5, is a bound). In particular the CLT μ of
DP-SGD is known to be optimistic: it understates the privacy loss of
realistic training runs (Gopi et al. 2021; Gomez et al. 2025, App. A.5).
Use the numerical accountant (``gaussdp.account``) for certified answers;
:func:`noisy_sgd_mu` and :func:`subsampling_limit_mu` (the same limit for any curve)
always warn with :class:`OptimisticApproximationWarning`, and :func:`compose`,
:func:`composition_mu` and :func:`epsilon_delta_limit` warn wherever their curve
lies above the exact composition.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy import special

from gaussdp import curves as curves_module
from gaussdp import gdp
from gaussdp._validation import InvalidParameterError, check_integer, check_real, restore_shape
from gaussdp.curves import Gaussian, Laplace, PiecewiseLinear, TradeOff, WithFailure

__all__ = [
    "BerryEsseen",
    "Functionals",
    "OptimisticApproximationWarning",
    "berry_esseen",
    "chi2_plus",
    "compose",
    "composition_mu",
    "epsilon_delta_limit",
    "functionals",
    "kappa2",
    "kappa3",
    "kappa3_bar",
    "kl",
    "limit_mu",
    "noisy_sgd_berry_esseen",
    "noisy_sgd_functionals",
    "noisy_sgd_mu",
    "subsampling_limit_mu",
]

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_BERRY_ESSEEN_CONSTANT = 0.56


class OptimisticApproximationWarning(UserWarning):
    """An approximation that is known to understate privacy loss was used.

    Raised by :func:`gaussdp.clt.noisy_sgd_mu`: the central-limit μ of
    DP-SGD is optimistic relative to the exact accountant (Gopi et al. 2021);
    and by the other CLT curves wherever they lie above the exact composition.
    """


class Functionals(NamedTuple):
    """The moment functionals of a trade-off function (DRS §3.2)."""

    kl: float
    kappa2: float
    kappa3: float
    kappa3_bar: float


# ---------------------------------------------------------------------------
# The functionals
# ---------------------------------------------------------------------------


def _normal_abs_moment_3(mean: float, scale: float) -> float:
    """E|X|³ for X ~ N(mean, scale²), in closed form."""
    if scale == 0.0:
        return abs(mean) ** 3
    nu = mean / scale
    body = (nu**3 + 3.0 * nu) * math.erf(nu / math.sqrt(2.0))
    tail = 2.0 * (nu * nu + 2.0) * math.exp(-0.5 * nu * nu) / _SQRT_2PI
    return scale**3 * (body + tail)


def _gaussian_functionals(mu: float) -> Functionals:
    # log|G_μ'(α)| = μt − μ²/2 with t = Φ⁻¹(1 − α) ~ N(0, 1) when α ~ U(0, 1).
    if math.isinf(mu):
        return Functionals(math.inf, math.inf, math.inf, math.inf)
    half = 0.5 * mu * mu
    return Functionals(
        kl=half,
        kappa2=mu * mu + half * half,
        kappa3=_normal_abs_moment_3(-half, mu),
        kappa3_bar=2.0 * math.sqrt(2.0 / math.pi) * mu**3,
    )


def _laplace_moment(mu: float, g, kink: float = 0.0) -> float:
    # log|f'| is μ on [0, e^{−μ}/2], 2t − μ on the middle piece parametrised by
    # α = e^{−t}/2 (t ∈ [0, μ], dα = e^{−t}/2 dt), and −μ on [1/2, 1]. ``kink``
    # is where g(2t − μ) has a kink (g(x) = |x − kink|³ and the like).
    corner = 0.5 * math.exp(-mu)
    points = [t for t in (0.5 * (mu + kink),) if 0.0 < t < mu]
    from scipy import integrate  # imported here: slow, and rarely needed

    middle, _ = integrate.quad(
        lambda t: g(2.0 * t - mu) * 0.5 * math.exp(-t),
        0.0,
        mu,
        points=points or None,
        limit=200,
        epsabs=0.0,
        epsrel=1e-12,
    )
    return corner * g(mu) + middle + 0.5 * g(-mu)


def _laplace_functionals(mu: float) -> Functionals:
    if math.isinf(mu):
        return Functionals(math.inf, math.inf, math.inf, math.inf)
    kl_value = -_laplace_moment(mu, lambda x: x)
    return Functionals(
        kl=kl_value,
        kappa2=_laplace_moment(mu, lambda x: x * x),
        kappa3=_laplace_moment(mu, lambda x: abs(x) ** 3, kink=0.0),
        kappa3_bar=_laplace_moment(mu, lambda x: abs(x + kl_value) ** 3, kink=-kl_value),
    )


def _piecewise_functionals(curve: PiecewiseLinear) -> Functionals:
    widths = np.diff(curve.alphas)
    with np.errstate(divide="ignore"):
        logs = np.log(-np.minimum(curve.slopes, 0.0))
    if np.any(np.isinf(logs) & (widths > 0.0)):
        # A flat piece (f' = 0, e.g. f reaching 0 before α = 1): log|f'| = −∞.
        return Functionals(math.inf, math.inf, math.inf, math.inf)
    kl_value = -float(np.sum(widths * logs))
    return Functionals(
        kl=kl_value,
        kappa2=float(np.sum(widths * logs**2)),
        kappa3=float(np.sum(widths * np.abs(logs) ** 3)),
        kappa3_bar=float(np.sum(widths * np.abs(logs + kl_value) ** 3)),
    )


def _check_curve(curve, name: str = "curve") -> TradeOff:
    if not isinstance(curve, TradeOff):
        raise InvalidParameterError(f"{name} must be a TradeOff curve, got {type(curve).__name__}")
    return curve


def functionals(curve: TradeOff) -> Functionals:
    r"""kl, κ₂, κ₃, κ̄₃ of a trade-off function (Dong, Roth & Su §3.2).

    Closed forms for G_μ (log|G_μ'| ~ N(−μ²/2, μ²): kl = μ²/2,
    κ₂ = μ² + μ⁴/4, κ̄₃ = 2√(2/π)μ³) and quadrature for the Laplace curve;
    exact sums over the segments of a piecewise-linear curve; other curves
    through their (pessimistic) piecewise-linear version, which makes the
    functionals approximations. A flat piece (f' = 0 on a set of positive
    length, e.g. any f ⊗ f_{0,δ} with δ > 0) makes them infinite.

    Examples
    --------
    >>> from gaussdp import clt, curves
    >>> clt.functionals(curves.gaussian(1.0)).kl
    0.5
    """
    curve = _check_curve(curve)
    if isinstance(curve, Gaussian):
        return _gaussian_functionals(curve.mu)
    if isinstance(curve, Laplace):
        return _laplace_functionals(curve.mu)
    if isinstance(curve, WithFailure) and curve.failure > 0.0:
        return Functionals(math.inf, math.inf, math.inf, math.inf)
    return _piecewise_functionals(curve.piecewise_linear())


def kl(curve: TradeOff) -> float:
    """kl(f) = −∫₀¹ log|f'(x)| dx, the KL divergence of the pair (DRS §3.2)."""
    return functionals(curve).kl


def kappa2(curve: TradeOff) -> float:
    """κ₂(f) = ∫₀¹ log²|f'(x)| dx (DRS §3.2)."""
    return functionals(curve).kappa2


def kappa3(curve: TradeOff) -> float:
    """κ₃(f) = ∫₀¹ |log|f'(x)||³ dx (DRS §3.2)."""
    return functionals(curve).kappa3


def kappa3_bar(curve: TradeOff) -> float:
    """κ̄₃(f) = ∫₀¹ |log|f'(x)| + kl(f)|³ dx (DRS §3.2)."""
    return functionals(curve).kappa3_bar


# ---------------------------------------------------------------------------
# Composition: Theorems 5, 6 and 7
# ---------------------------------------------------------------------------


def _require_symmetric(curve: TradeOff, name: str, theorem: str) -> None:
    if not curve.is_symmetric:
        raise InvalidParameterError(
            f"{name} must be symmetric for {theorem}; call .symmetrize() "
            "(if it bounds every ordered pair) or use curves.from_directions"
        )


def _as_curve_list(curves: Iterable) -> list[TradeOff]:
    try:
        items = list(curves)
    except TypeError:
        raise InvalidParameterError("curves must be an iterable of TradeOff curves") from None
    if not items:
        raise InvalidParameterError("curves must contain at least one curve, got none")
    for i, item in enumerate(items):
        _check_curve(item, f"curves[{i}]")
    return items


# α at which a CLT curve is compared with the exact composition, and by how much it
# may exceed it before the warning (the generic exact composition is itself a
# pessimistic discretisation, within about 1e-8 of the truth).
_CHECK_ALPHAS = np.concatenate((np.geomspace(1e-12, 0.5, 200), 1.0 - np.geomspace(1e-12, 0.5, 200)))
_CHECK_MARGIN = 1e-7


def _warn_if_optimistic(approximation: TradeOff, exact: TradeOff, what: str) -> None:
    """Warn when ``approximation`` lies above ``exact`` anywhere: it then understates privacy loss.

    The exact composition (:func:`gaussdp.curves.compose`) is at or below the
    truth, so a CLT curve above it by more than the margin is optimistic.
    """
    excess = approximation.beta(_CHECK_ALPHAS) - exact.beta(_CHECK_ALPHAS)
    worst = int(np.argmax(excess))
    if excess[worst] > _CHECK_MARGIN:
        warnings.warn(
            f"{what} is optimistic here: its curve lies up to {excess[worst]:.3g} above the "
            f"exact composition (at alpha = {_CHECK_ALPHAS[worst]:.3g}), so it understates the "
            "privacy loss; use gaussdp.curves.compose or gaussdp.account for a certified answer",
            OptimisticApproximationWarning,
            stacklevel=3,
        )


def _mu_and_gamma(values: list[Functionals], steps: int = 1) -> tuple[float, float]:
    kl_sum = steps * math.fsum(v.kl for v in values)
    kl_squares = steps * math.fsum(v.kl**2 for v in values)
    kappa2_sum = steps * math.fsum(v.kappa2 for v in values)
    kappa3_bar_sum = steps * math.fsum(v.kappa3_bar for v in values)
    if not (math.isfinite(kl_sum) and math.isfinite(kappa2_sum)):
        raise InvalidParameterError(
            "the CLT needs finite kl and kappa2, got kl = "
            f"{kl_sum!r}, kappa2 = {kappa2_sum!r}: a curve with f(0) < 1 (mass at infinite "
            "loss) or a flat piece has none; split off the delta part with eq. (10) first"
        )
    variance = kappa2_sum - kl_squares
    if not variance > 0.0:
        raise InvalidParameterError(
            "the CLT needs ||kappa2||_1 - ||kl||_2^2 > 0, got "
            f"{variance!r} (are all curves the identity?)"
        )
    mu = 2.0 * kl_sum / math.sqrt(variance)
    gamma = _BERRY_ESSEEN_CONSTANT * kappa3_bar_sum / variance**1.5
    return mu, gamma


def composition_mu(curves) -> float:
    r"""The CLT μ of f₁ ⊗ … ⊗ f_n: 2‖kl‖₁ / √(‖κ₂‖₁ − ‖kl‖₂²) (Theorems 5 and 6).

    **Approximation — neither an upper nor a lower bound.** As n grows with
    Σ kl → K, Σ κ₂ → s², max kl → 0 and Σ κ₃ → 0 it tends to 2K/s, and the
    composition tends to G_μ (Theorem 6). The curves must be symmetric, as
    the theorems assume. G_μ is compared with the exact composition
    (:func:`gaussdp.curves.compose`) at 400 false-positive rates, and an
    :class:`OptimisticApproximationWarning` says where it lies above it.

    Examples
    --------
    >>> from gaussdp import clt, curves
    >>> round(clt.composition_mu([curves.gaussian(0.1)] * 100), 12)
    1.0
    """
    items = _as_curve_list(curves)
    mu = _composition_mu(items)
    _warn_if_optimistic(Gaussian(mu), curves_module.compose(items), "the CLT mu")
    return mu


def _composition_mu(items: list[TradeOff]) -> float:
    for i, curve in enumerate(items):
        _require_symmetric(curve, f"curves[{i}]", "Theorems 5 and 6")
    mu, _ = _mu_and_gamma([functionals(c) for c in items])
    return mu


def limit_mu(kl_total, kappa2_total) -> float:
    """The limit μ = 2K/s of Theorem 6, for Σ kl → K and Σ κ₂ → s².

    **Approximation — the limit of a triangular array, not a bound.**

    Examples
    --------
    >>> from gaussdp import clt
    >>> clt.limit_mu(0.5, 1.0)
    1.0
    """
    k = float(check_real("kl_total", kl_total, low=0.0, high=math.inf))
    s2 = float(check_real("kappa2_total", kappa2_total, low=0.0, high=math.inf, low_open=True))
    return 2.0 * k / math.sqrt(s2)


def compose(curves) -> Gaussian:
    """G_μ with the CLT μ of :func:`composition_mu` (Theorem 6).

    **Approximation — neither an upper nor a lower bound** on the exact
    composition (:func:`gaussdp.curves.compose`); warns with
    :class:`OptimisticApproximationWarning` where it lies above it.
    """
    items = _as_curve_list(curves)
    result = Gaussian(_composition_mu(items))
    _warn_if_optimistic(result, curves_module.compose(items), "the CLT curve")
    return result


def epsilon_delta_limit(pairs) -> TradeOff:
    r"""The limit G_μ ⊗ f_{0, 1 − e^{−δ}} of Theorem 7 for ⊗ f_{ε_i, δ_i}.

    μ = √(Σ ε_i²) and δ = Σ δ_i. **Approximation — the limit of a triangular
    array (max ε_i → 0, max δ_i → 0), neither an upper nor a lower bound**;
    the exact composition is :func:`gaussdp.curves.compose`, and an
    :class:`OptimisticApproximationWarning` says where the limit lies above it.

    Examples
    --------
    >>> from gaussdp import clt
    >>> f = clt.epsilon_delta_limit([(0.1, 1e-6)] * 100)
    >>> round(f.base.mu, 12), round(f.failure, 10)
    (1.0, 9.9995e-05)
    """
    try:
        array = np.asarray(list(pairs), dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError("pairs must be a sequence of (epsilon, delta) pairs") from None
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] == 0:
        raise InvalidParameterError(
            f"pairs must be a non-empty sequence of (epsilon, delta) pairs, got shape {array.shape}"
        )
    epsilons = check_real("epsilon", array[:, 0], low=0.0, high=math.inf)
    deltas = check_real("delta", array[:, 1], low=0.0, high=1.0)
    mu = gdp.compose(epsilons.tolist())
    failure = -math.expm1(-math.fsum(deltas.tolist()))
    limit = Gaussian(mu).with_failure(min(failure, np.nextafter(1.0, 0.0)))
    exact = curves_module.compose(
        [curves_module.epsilon_delta(e, d) for e, d in zip(epsilons, deltas, strict=True)]
    )
    _warn_if_optimistic(limit, exact, "the Theorem 7 limit")
    return limit


# ---------------------------------------------------------------------------
# Berry–Esseen (Theorem 5)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BerryEsseen:
    r"""The Berry–Esseen bounds of Theorem 5 on a composed trade-off curve.

    For α ∈ [γ, 1 − γ]:  G_μ(α + γ) − γ ≤ f₁ ⊗ … ⊗ f_n(α) ≤ G_μ(α − γ) + γ.

    Attributes
    ----------
    mu : float
        The CLT μ.
    gamma : float
        The error term γ (< 1/2).
    lower : TradeOff
        A trade-off function below the composition: the bound above on
        [γ, 1], f(α) ≥ f(γ) below γ (monotonicity), made convex. This is a
        **lower bound** (pessimistic) on the composed curve, given the
        functionals. (Corollary 5 states max{G_μ(α + γ) − γ, 0} for every α;
        Theorem 5 covers only α ≥ γ, so below γ ours is lower.)
    """

    mu: float
    gamma: float
    lower: TradeOff

    def upper_beta(self, alpha):
        """An upper bound on f₁ ⊗ … ⊗ f_n(α): min{1 − α, G_μ(α' − γ) + γ}, α' = clip(α, γ, 1 − γ).

        Not a trade-off function (not convex in general), and an **optimistic**
        statement about privacy: the composition is at most this private.
        """
        alpha_array = check_real("alpha", alpha, low=0.0, high=1.0)
        clipped = np.clip(alpha_array, self.gamma, 1.0 - self.gamma)
        value = np.asarray(gdp.beta(self.mu, np.clip(clipped - self.gamma, 0.0, 1.0))) + self.gamma
        return restore_shape(np.clip(np.minimum(value, 1.0 - alpha_array), 0.0, 1.0), alpha)

    def lower_beta(self, alpha):
        """The lower bound curve at α; see :attr:`lower`."""
        return self.lower.beta(alpha)


def _berry_esseen_lower(mu: float, gamma: float) -> PiecewiseLinear:
    piece = Gaussian(mu).piecewise_linear()
    at_2gamma = float(np.interp(min(2.0 * gamma, 1.0), piece.alphas, piece.betas)) - gamma
    keep = piece.alphas >= 2.0 * gamma
    x = np.concatenate(([0.0, gamma], piece.alphas[keep] - gamma))
    y = np.concatenate(([at_2gamma, at_2gamma], piece.betas[keep] - gamma))
    return PiecewiseLinear._from_vertices(x, np.maximum(y, 0.0))


def _berry_esseen_result(mu: float, gamma: float) -> BerryEsseen:
    if not gamma < 0.5:
        raise InvalidParameterError(
            f"Theorem 5 needs gamma < 1/2, got gamma = {gamma!r}: too few or too "
            "non-private mechanisms for a Berry-Esseen bound"
        )
    return BerryEsseen(mu, gamma, _berry_esseen_lower(mu, gamma))


def berry_esseen(curves) -> BerryEsseen:
    r"""Theorem 5: μ, γ and the bounding curves of f₁ ⊗ … ⊗ f_n.

    μ = 2‖kl‖₁/√(‖κ₂‖₁ − ‖kl‖₂²) and γ = 0.56‖κ̄₃‖₁/(‖κ₂‖₁ − ‖kl‖₂²)^{3/2}.
    The curves must be symmetric with κ₃ < ∞ (so f(0) = 1), and γ < 1/2.
    The ``lower`` curve is a lower bound (pessimistic) on the composition;
    μ alone is an approximation.

    Examples
    --------
    >>> from gaussdp import clt, curves
    >>> bounds = clt.berry_esseen([curves.epsilon_delta(0.1)] * 100)
    >>> round(bounds.mu, 4), round(bounds.gamma, 4)
    (1.0004, 0.0562)
    """
    items = _as_curve_list(curves)
    values = []
    for i, curve in enumerate(items):
        _require_symmetric(curve, f"curves[{i}]", "Theorem 5")
        value = functionals(curve)
        if not math.isfinite(value.kappa3):
            raise InvalidParameterError(
                f"curves[{i}] has kappa3 = inf (f(0) < 1 or a flat piece); Theorem 5 "
                "needs finite moments: split off the delta part with eq. (10) first"
            )
        values.append(value)
    return _berry_esseen_result(*_mu_and_gamma(values))


# ---------------------------------------------------------------------------
# χ²₊ and subsampling (Theorem 11, Lemma 3)
# ---------------------------------------------------------------------------


def _chi2_plus_gaussian(mu: float) -> float:
    """Lemma 3: e^{μ²}Φ(3μ/2) + 3Φ(−μ/2) − 2, rearranged to avoid cancellation.

    = expm1(μ²)Φ(3μ/2) + [Φ(3μ/2) − Φ(μ/2)] − [Φ(μ/2) − Φ(−μ/2)], the last two
    as differences of erf, which leaves O(μ²) with relative error ~1e-16/μ.
    """
    if mu == 0.0:
        return 0.0
    if math.isinf(mu) or mu * mu > 709.0:
        return math.inf
    r = mu / math.sqrt(2.0)
    first = math.expm1(mu * mu) * float(special.ndtr(1.5 * mu))
    second = 0.5 * (math.erf(1.5 * r) - math.erf(0.5 * r))
    third = math.erf(0.5 * r)
    return first + second - third


def chi2_plus(curve: TradeOff) -> float:
    r"""χ²₊(f) = ∫₀¹ (|f'(x)| − 1)₊² dx (Dong, Roth & Su, Theorem 11).

    Lemma 3 for G_μ: e^{μ²}Φ(3μ/2) + 3Φ(−μ/2) − 2 (computed without
    cancellation); exact sums for piecewise-linear curves; quadrature for the
    Laplace curve; other curves through their piecewise-linear version.

    Examples
    --------
    >>> from gaussdp import clt, curves
    >>> round(clt.chi2_plus(curves.gaussian(1.0)), 10)
    1.4622936434
    """
    curve = _check_curve(curve)
    if isinstance(curve, Gaussian):
        return _chi2_plus_gaussian(curve.mu)
    if isinstance(curve, Laplace):
        mu = curve.mu
        if math.isinf(mu) or mu > 709.0:
            return math.inf
        corner = 0.5 * math.exp(-mu) * math.expm1(mu) ** 2

        def integrand(t):
            return math.expm1(2.0 * t - mu) ** 2 * 0.5 * math.exp(-t)

        from scipy import integrate  # imported here: slow, and rarely needed

        middle, _ = integrate.quad(integrand, 0.5 * mu, mu, limit=200, epsabs=0.0, epsrel=1e-12)
        return corner + middle
    piece = curve.piecewise_linear()
    excess = np.maximum(-piece.slopes - 1.0, 0.0)
    return float(np.sum(np.diff(piece.alphas) * excess**2))


def subsampling_limit_mu(curve: TradeOff, sampling_probability, steps) -> float:
    r"""Theorem 11: C_p(f)^{⊗T} → G_{p√T·√(2χ²₊(f))} as T → ∞ with p√T fixed.

    **Approximation — a limit, neither an upper nor a lower bound.** f must
    be symmetric with f(0) = 1. For f = G_{1/σ} this is the CLT μ of DP-SGD
    with uniform batches (:func:`noisy_sgd_mu`), known to be optimistic, so
    it warns with :class:`OptimisticApproximationWarning` in the same way.
    """
    curve = _check_curve(curve)
    p = float(check_real("sampling_probability", sampling_probability, low=0.0, high=1.0))
    t = check_integer("steps", steps, low=1)
    _require_symmetric(curve, "curve", "Theorem 11")
    warnings.warn(_OPTIMISTIC_MESSAGE, OptimisticApproximationWarning, stacklevel=2)
    return p * math.sqrt(t) * math.sqrt(2.0 * chi2_plus(curve))


# ---------------------------------------------------------------------------
# NoisySGD (Corollary 4, Lemma 4, Corollary 5)
# ---------------------------------------------------------------------------

_OPTIMISTIC_MESSAGE = (
    "the central-limit mu of DP-SGD is an approximation that is known to be "
    "optimistic: it understates the privacy loss of realistic training runs "
    "(Gopi, Lee & Wutschitz 2021). It is neither an upper nor a lower bound; "
    "for a certified mu use the numerical accountant, "
    "gaussdp.account(gaussdp.DPSGD(noise_multiplier, sampling_probability, steps))"
)


def noisy_sgd_mu(noise_multiplier, sampling_probability, steps, sampling: str = "poisson"):
    r"""The central-limit μ of NoisySGD / DP-SGD. **Optimistic approximation.**

    * ``sampling="poisson"`` (Bu, Dong, Long & Su 2020):
      μ = p·√(T·(e^{1/σ²} − 1));
    * ``sampling="uniform"`` (batches drawn without replacement; Dong, Roth &
      Su, Corollary 4): μ = p·√T·√(2χ²₊(G_{1/σ})) =
      √2·p√T·√(e^{σ⁻²}Φ(1.5/σ) + 3Φ(−0.5/σ) − 2).

    These are limits as T → ∞ with p√T fixed. **Approximation — neither an
    upper nor a lower bound, and known to be optimistic** for DP-SGD
    (Gopi et al. 2021): an :class:`OptimisticApproximationWarning` is always
    emitted. Use ``gaussdp.account`` for a certified μ.

    Parameters
    ----------
    noise_multiplier : array_like
        σ > 0 (noise standard deviation over clipping norm).
    sampling_probability : array_like
        p ∈ [0, 1] (expected batch size over data set size).
    steps : int
        T ≥ 1.
    sampling : {"poisson", "uniform"}

    Examples
    --------
    >>> import warnings
    >>> from gaussdp import clt
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", clt.OptimisticApproximationWarning)
    ...     round(clt.noisy_sgd_mu(1.0, 256 / 60_000, 15 * 60_000 // 256), 4)
    0.3316
    """
    sigma = check_real("noise_multiplier", noise_multiplier, low=0.0, high=math.inf, low_open=True)
    p = check_real("sampling_probability", sampling_probability, low=0.0, high=1.0)
    t = check_integer("steps", steps, low=1)
    if sampling not in ("poisson", "uniform"):
        raise InvalidParameterError(f"sampling must be 'poisson' or 'uniform', got {sampling!r}")
    warnings.warn(_OPTIMISTIC_MESSAGE, OptimisticApproximationWarning, stacklevel=2)
    s, q = np.broadcast_arrays(sigma, p)
    out = np.empty(s.shape)
    for index, (sv, qv) in enumerate(zip(s.flat, q.flat, strict=True)):
        mu_step = 1.0 / float(sv)
        if sampling == "poisson":
            with np.errstate(over="ignore"):
                growth = math.expm1(mu_step**2) if mu_step**2 < 709.0 else math.inf
        else:
            growth = 2.0 * _chi2_plus_gaussian(mu_step)
        out.flat[index] = float(qv) * math.sqrt(t) * math.sqrt(growth)
    return restore_shape(out, noise_multiplier, sampling_probability)


def _lemma_4_integral(function, mu: float) -> float:
    from scipy import integrate  # imported here: slow, and rarely needed

    value, _ = integrate.quad(function, 0.5 * mu, math.inf, limit=400, epsabs=0.0, epsrel=1e-12)
    return value


def noisy_sgd_functionals(noise_multiplier, sampling_probability) -> Functionals:
    r"""kl, κ₂ and κ̄₃ of one NoisySGD step, C_p(G_{1/σ}) (Lemma 4), by quadrature.

    With μ = 1/σ and Z(x) = log(p·e^{μx − μ²/2} + 1 − p):

    * kl = p∫_{μ/2}^∞ Z(x)(φ(x − μ) − φ(x)) dx,
    * κ₂ = ∫_{μ/2}^∞ Z(x)²(pφ(x − μ) + (2 − p)φ(x)) dx,
    * κ̄₃ = ∫_{μ/2}^∞ |Z(x) − kl|³(pφ(x − μ) + (1 − p)φ(x)) dx
      + ∫_{μ/2}^∞ |Z(x) + kl|³ φ(x) dx + (1 − p)(2Φ(μ/2) − 1)·kl³.

    The last term is the contribution of the middle segment of eq. (13),
    of slope −1 and length f_p(x*) − x* = (1 − p)(2Φ(μ/2) − 1), where
    |log|f'| + kl|³ = kl³; Lemma 4 as printed omits it (harmless for kl and
    κ₂, whose integrands vanish there), which would make γ slightly
    optimistic. With it κ̄₃ matches the definition integrated over
    eq. (13) (checked against mpmath in the tests).

    κ₃ (not in Lemma 4) uses the weight of κ₂, which holds for any even
    function of log|f'| because C_p(G_μ) is symmetric: κ₃ = ∫_{μ/2}^∞ |Z(x)|³
    (pφ(x − μ) + (2 − p)φ(x)) dx.

    C_p(G_μ) is the curve of one step of NoisySGD both with batches drawn
    without replacement (Theorem 10) and with Poisson sampling under
    add/remove neighbouring (min{f_p, f_p⁻¹}** of f_p = pG_μ + (1 − p)Id).
    The integrals are numerical (relative accuracy ~1e-12).
    """
    sigma = float(
        check_real("noise_multiplier", noise_multiplier, low=0.0, high=math.inf, low_open=True)
    )
    p = float(check_real("sampling_probability", sampling_probability, low=0.0, high=1.0))
    mu = 1.0 / sigma
    if p == 0.0 or mu == 0.0:
        return Functionals(0.0, 0.0, 0.0, 0.0)
    log_p, log_rest = math.log(p), math.log1p(-p) if p < 1.0 else -math.inf

    def z(x: float) -> float:
        return float(np.logaddexp(log_p + mu * x - 0.5 * mu * mu, log_rest))

    def phi(x: float) -> float:
        return math.exp(-0.5 * x * x) / _SQRT_2PI

    kl_value = p * _lemma_4_integral(lambda x: z(x) * (phi(x - mu) - phi(x)), mu)
    kappa2_value = _lemma_4_integral(
        lambda x: z(x) ** 2 * (p * phi(x - mu) + (2.0 - p) * phi(x)), mu
    )
    kappa3_value = _lemma_4_integral(
        lambda x: abs(z(x)) ** 3 * (p * phi(x - mu) + (2.0 - p) * phi(x)), mu
    )
    middle_length = (1.0 - p) * math.erf(0.5 * mu / math.sqrt(2.0))  # f_p(x*) − x*
    kappa3_bar_value = (
        _lemma_4_integral(
            lambda x: abs(z(x) - kl_value) ** 3 * (p * phi(x - mu) + (1.0 - p) * phi(x)), mu
        )
        + _lemma_4_integral(lambda x: abs(z(x) + kl_value) ** 3 * phi(x), mu)
        + middle_length * kl_value**3
    )
    return Functionals(kl_value, kappa2_value, kappa3_value, kappa3_bar_value)


def noisy_sgd_berry_esseen(noise_multiplier, sampling_probability, steps) -> BerryEsseen:
    r"""Corollary 5: the Berry–Esseen bound for T steps of NoisySGD.

    μ̃ = 2√T·kl/√(κ₂ − kl²), γ = 0.56·κ̄₃/(√T·(κ₂ − kl²)^{3/2}) with the
    functionals of C_p(G_{1/σ}) from Lemma 4. The ``lower`` curve is a lower
    bound on NoisySGD's trade-off curve (pessimistic; see
    :class:`BerryEsseen`); μ̃ alone is an approximation. Raises if γ ≥ 1/2.

    Examples
    --------
    >>> from gaussdp import clt
    >>> bounds = clt.noisy_sgd_berry_esseen(1.0, 0.01, 10_000)
    >>> round(bounds.mu, 3), round(bounds.gamma, 4)
    (1.672, 0.0281)
    """
    t = check_integer("steps", steps, low=1)
    value = noisy_sgd_functionals(noise_multiplier, sampling_probability)
    if value.kl == 0.0:
        raise InvalidParameterError(
            "sampling_probability = 0 or noise_multiplier = inf is perfect privacy; "
            "there is nothing to approximate"
        )
    return _berry_esseen_result(*_mu_and_gamma([value], steps=t))
