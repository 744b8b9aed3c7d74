"""μ-Gaussian differential privacy in closed form.

A mechanism is μ-GDP (Dong, Roth & Su 2022, Definition 2.6) when telling
neighbouring data sets apart from its output is at least as hard as telling
N(0, 1) from N(μ, 1): its trade-off function is at least

    G_μ(α) = Φ(Φ⁻¹(1 − α) − μ).

By duality (Dong, Roth & Su, Corollary 2.13) μ-GDP is the same as being
(ε, δ_μ(ε))-DP for every ε ≥ 0, with the privacy profile

    δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

Everything here is a closed form, vectorised like scipy: scalars in give a
float out, arrays in give an array of the broadcast shape out. Parameters are
checked at the boundary (μ ∈ [0, ∞], ε ∈ [0, ∞], δ ∈ [0, 1], α ∈ [0, 1]);
anything else raises :class:`gaussdp.InvalidParameterError`.

Numerics. The profile is computed as φ(a)·(m(t) − m(t + μ)) with a = μ/2 − ε/μ,
t = −a and m the Mills ratio (see :func:`gaussdp._numerics.mills_ratio_difference`),
which removes the catastrophic cancellation of the two Φ terms that the GDPT
paper (§3) warns about: the relative error stays near 1e-12 wherever δ is
representable, and the profile underflows cleanly to 0.0 beyond.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import special

from gaussdp._numerics import (
    LOG_SQRT_2PI,
    expand_bracket,
    mills_ratio_difference,
    mills_ratio_difference_of_floats,
    monotone_root,
    normal_log_pdf,
    normal_quantile_from_log,
)
from gaussdp._validation import InvalidParameterError, check_integer, check_real, restore_shape

__all__ = [
    "GaussianDP",
    "advantage",
    "beta",
    "compose",
    "delta",
    "epsilon",
    "from_gaussian",
    "from_pure_dp",
    "group",
    "log_delta",
    "mu",
]

_INF = math.inf
_SQRT_HALF = math.sqrt(0.5)
# A bound on the relative error of the computed privacy profile (the tests
# measure it against 50-digit mpmath over μ ∈ [1e-3, 50], ε ∈ [0, 1000]).
_PROFILE_RELATIVE_ERROR = 1e-11


def _check_mu(value):
    return check_real("mu", value, low=0.0, high=_INF)


def _check_epsilon(value):
    return check_real("epsilon", value, low=0.0, high=_INF)


def _check_delta(value):
    return check_real("delta", value, low=0.0, high=1.0)


def _log_delta_finite(mu: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """log δ_μ(ε) for 0 < μ < ∞ and 0 ≤ ε < ∞ (arrays of one shape)."""
    a = 0.5 * mu - epsilon / mu
    t = -a
    out = np.empty(a.shape, dtype=float)
    head = t <= 0.0  # ε ≤ μ²/2, where δ ≥ δ_μ(μ²/2) is never tiny
    if np.any(head):
        # δ = [Φ(a) − ½] + [½ − Φ(b)] − (e^ε − 1)Φ(b): two non-negative terms
        # and a correction below μ²/4, so nothing cancels even for tiny μ.
        ah, eh, bh = a[head], epsilon[head], a[head] - mu[head]
        value = 0.5 * special.erf(ah * _SQRT_HALF) + 0.5 * special.erf(-bh * _SQRT_HALF)
        small = eh < 1.0
        correction = np.where(
            small,
            np.expm1(np.minimum(eh, 1.0)) * special.ndtr(bh),
            np.exp(eh + special.log_ndtr(bh)) - special.ndtr(bh),
        )
        value -= correction
        with np.errstate(divide="ignore"):
            out[head] = np.log(value)
    tail = ~head
    if np.any(tail):
        at, tt, mt = a[tail], t[tail], mu[tail]
        with np.errstate(divide="ignore"):
            out[tail] = normal_log_pdf(at) + np.log(mills_ratio_difference(tt, mt))
    return out


def _log_delta_of_floats(mu: float, epsilon: float) -> float:
    """:func:`_log_delta_finite` for one (μ, ε), by the same branches (root searches)."""
    a = 0.5 * mu - epsilon / mu
    if a >= 0.0:  # ε ≤ μ²/2: the head, as in _log_delta_finite
        b = a - mu
        value = 0.5 * math.erf(a * _SQRT_HALF) + 0.5 * math.erf(-b * _SQRT_HALF)
        if epsilon < 1.0:
            value -= math.expm1(epsilon) * float(special.ndtr(b))
        else:
            value -= math.exp(epsilon + float(special.log_ndtr(b))) - float(special.ndtr(b))
        return math.log(value) if value > 0.0 else -_INF
    difference = mills_ratio_difference_of_floats(-a, mu)
    if difference <= 0.0:
        return -_INF
    return -0.5 * a * a - LOG_SQRT_2PI + math.log(difference)


def log_delta(mu, epsilon):
    """Natural logarithm of the GDP privacy profile, log δ_μ(ε).

    Finite far beyond the point where δ_μ(ε) underflows, which is what tail
    analyses (e.g. the GDPT's tail limit ε/√(−2 log δ(ε))) need.

    Parameters
    ----------
    mu : array_like
        μ ∈ [0, ∞].
    epsilon : array_like
        ε ∈ [0, ∞].

    Returns
    -------
    float or ndarray
        log δ_μ(ε); −inf where δ is exactly 0 (μ = 0 or ε = ∞), 0 for μ = ∞.

    Examples
    --------
    >>> round(log_delta(1.0, 500.0), 3)
    -124763.473
    """
    mu_array = _check_mu(mu)
    epsilon_array = _check_epsilon(epsilon)
    m, e = np.broadcast_arrays(mu_array, epsilon_array)
    out = np.full(m.shape, -np.inf)
    out[np.isinf(m) & np.isfinite(e)] = 0.0
    finite = (m > 0) & np.isfinite(m) & np.isfinite(e)
    if np.any(finite):
        out[finite] = _log_delta_finite(m[finite], e[finite])
    return restore_shape(out, mu, epsilon)


def delta(mu, epsilon):
    r"""The μ-GDP privacy profile δ_μ(ε).

    .. math::
        δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)

    (Dong, Roth & Su 2022, Corollary 2.13), the smallest δ such that a μ-GDP
    mechanism is (ε, δ)-DP. Computed without cancellation; accurate to about
    1e-12 relative wherever δ ≥ 1e-300, and 0.0 where it underflows.

    Parameters
    ----------
    mu : array_like
        μ ∈ [0, ∞]. μ = 0 is perfect privacy (δ = 0); μ = ∞ none (δ = 1).
    epsilon : array_like
        ε ∈ [0, ∞].

    Returns
    -------
    float or ndarray
        δ_μ(ε) ∈ [0, 1].

    Examples
    --------
    >>> round(delta(1.0, 1.0), 12)
    0.126936737507
    >>> delta(0.5, [0.0, 2.0])
    array([1.97412651e-01, 9.43916863e-06])
    """
    return restore_shape(np.clip(np.exp(log_delta(mu, epsilon)), 0.0, 1.0), mu, epsilon)


def _epsilon_scalar(mu_value: float, delta_value: float) -> float:
    if mu_value == 0.0 or delta_value >= 1.0:
        return 0.0
    if delta_value == 0.0 or math.isinf(mu_value):
        return _INF
    # Solve against δ·(1 − 1e-11): the computed profile is within 1e-11 of the
    # exact one (measured ≤ 1e-12 against mpmath), so the exact δ_μ(ε) ≤ δ too.
    target = math.log(delta_value) + math.log1p(-_PROFILE_RELATIVE_ERROR)

    def excess(eps: float) -> float:  # decreasing in ε
        return _log_delta_of_floats(mu_value, eps) - target

    if excess(0.0) <= 0.0:
        return 0.0
    # δ_μ(ε) < Φ(μ/2 − ε/μ), which equals δ at this ε: a valid upper end.
    high = mu_value * (0.5 * mu_value - float(normal_quantile_from_log(target)))
    high = max(high, 1e-300)
    if excess(high) > 0.0:
        _, high = expand_bracket(excess, high, direction="up")
    return monotone_root(excess, 0.0, high, side="high")


def epsilon(mu, delta):
    """The smallest ε ≥ 0 with δ_μ(ε) ≤ δ: the ε of a μ-GDP mechanism at δ.

    Solves the privacy profile (see :func:`delta`) for ε by a bracketing
    root search in log space. The answer is on the safe side: it solves
    δ_μ(ε) = δ·(1 − 1e-11), which more than covers the profile's own
    evaluation error, so the exact δ_μ at the returned ε is at most δ, and the
    returned ε exceeds the exact root by only about 1e-11 relative.

    Parameters
    ----------
    mu : array_like
        μ ∈ [0, ∞].
    delta : array_like
        δ ∈ [0, 1]. δ = 0 gives ε = ∞ (for μ > 0); δ ≥ δ_μ(0) gives 0.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(epsilon(1.0, 1e-5), 10)
    4.3771780957
    """
    mu_array = _check_mu(mu)
    delta_array = _check_delta(delta)
    m, d = np.broadcast_arrays(mu_array, delta_array)
    out = np.array(
        [_epsilon_scalar(float(x), float(y)) for x, y in zip(m.flat, d.flat, strict=False)]
    )
    return restore_shape(out.reshape(m.shape), mu, delta)


def _mu_scalar(epsilon_value: float, delta_value: float) -> float:
    if delta_value == 0.0:
        return 0.0
    if delta_value >= 1.0 or math.isinf(epsilon_value):
        return _INF
    target = math.log(delta_value)

    def excess(mu_value: float) -> float:  # increasing in μ
        return _log_delta_of_floats(mu_value, epsilon_value) - target

    # At μ₀ = z + √(z² + 2ε) = 2ε/(√(z² + 2ε) − z), z = Φ⁻¹(δ) < 0, the first term
    # Φ(μ/2 − ε/μ) of the profile equals δ, so δ_μ₀(ε) < δ: μ₀ is below the root.
    # At ε = 0 the profile is erf(μ/(2√2)) and the root is 2√2·erf⁻¹(δ).
    z = float(normal_quantile_from_log(target))
    if epsilon_value == 0.0:
        start = 2.0 * math.sqrt(2.0) * float(special.erfinv(delta_value))
    elif z < 0.0:
        start = 2.0 * epsilon_value / (math.sqrt(z * z + 2.0 * epsilon_value) - z)
    else:
        start = 2.0 * z + 1.0
    start = min(max(start, 1e-300), 1e300)
    direction = "down" if excess(start) > 0.0 else "up"
    low, high = expand_bracket(excess, start, direction=direction, max_steps=2100)
    return monotone_root(excess, low, high, side="high")


def mu(epsilon, delta):
    """The μ whose privacy profile passes through (ε, δ): δ_μ(ε) = δ.

    This is the largest μ for which every μ-GDP mechanism is (ε, δ)-DP, and
    the entry of the reporting paper's ε → μ conversion table (Gomez et al.
    2025, §5). Found by a bracketing search in log space; the answer is
    rounded up (towards more privacy loss) by at most a few units in the last
    place, so its relative error is far below 1e-10.

    Parameters
    ----------
    epsilon : array_like
        ε ∈ [0, ∞]; ε = ∞ gives μ = ∞.
    delta : array_like
        δ ∈ [0, 1]; δ = 0 gives μ = 0, δ = 1 gives μ = ∞.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(mu(1.0, 1e-5), 10)
    0.2680511232
    """
    epsilon_array = _check_epsilon(epsilon)
    delta_array = _check_delta(delta)
    e, d = np.broadcast_arrays(epsilon_array, delta_array)
    out = np.array([_mu_scalar(float(x), float(y)) for x, y in zip(e.flat, d.flat, strict=False)])
    return restore_shape(out.reshape(e.shape), epsilon, delta)


def beta(mu, alpha):
    """The Gaussian trade-off function G_μ(α) = Φ(Φ⁻¹(1 − α) − μ).

    The smallest type II error (false-negative rate) of any test between
    neighbouring data sets at type I error α (Dong, Roth & Su, eq. 6).
    Φ⁻¹(1 − α) is taken as −Φ⁻¹(α) for α ≤ 1/2 and as Φ⁻¹(1 − α) (an exact
    subtraction) above, so the function is accurate from α = 1e-300 to
    1 − 1e-16.

    Parameters
    ----------
    mu : array_like
        μ ∈ [0, ∞].
    alpha : array_like
        α ∈ [0, 1].

    Returns
    -------
    float or ndarray
        β ∈ [0, 1]; G_μ(0) = 1 for finite μ and G_∞ ≡ 0.

    Examples
    --------
    >>> round(beta(1.0, 0.05), 12)
    0.740488977159
    """
    mu_array = _check_mu(mu)
    alpha_array = check_real("alpha", alpha, low=0.0, high=1.0)
    m, a = np.broadcast_arrays(mu_array, alpha_array)
    upper = a > 0.5
    with np.errstate(divide="ignore"):
        threshold = np.where(upper, special.ndtri(np.where(upper, 1.0 - a, 0.5)), -special.ndtri(a))
    with np.errstate(invalid="ignore"):
        out = special.ndtr(threshold - m)
    out = np.where(np.isinf(m), 0.0, out)
    return restore_shape(np.clip(out, 0.0, 1.0), mu, alpha)


def advantage(mu):
    """The largest membership-inference advantage against a μ-GDP mechanism.

    TPR − FPR = max_α (1 − α − G_μ(α)) = 2Φ(μ/2) − 1 = erf(μ/(2√2)),
    attained at α = Φ(−μ/2) (Gomez et al. 2025, §4; Kaissis et al. 2024).

    Examples
    --------
    >>> round(advantage(1.0), 12)
    0.382924922548
    """
    mu_array = _check_mu(mu)
    return restore_shape(special.erf(mu_array / (2.0 * math.sqrt(2.0))), mu)


def compose(mus: Iterable) -> float:
    """Compose μ-GDP guarantees: √(μ₁² + … + μ_k²) (Dong, Roth & Su, Corollary 2).

    Accepts numbers or :class:`GaussianDP` objects.

    Examples
    --------
    >>> compose([0.3, 0.4])
    0.5
    """
    values = [m.mu if isinstance(m, GaussianDP) else m for m in mus]
    if not values:
        raise InvalidParameterError("mus must contain at least one value, got an empty sequence")
    array = _check_mu(values).ravel()
    if np.any(np.isinf(array)):
        return _INF
    scale = float(np.max(array))
    if scale == 0.0:
        return 0.0
    return scale * math.sqrt(float(np.sum((array / scale) ** 2)))


def group(mu, k: int):
    """Group privacy: a μ-GDP mechanism is kμ-GDP for groups of k records.

    (Dong, Roth & Su, Corollary 2.14.)

    Examples
    --------
    >>> group(0.5, 3)
    1.5
    """
    k = check_integer("k", k, low=1)
    mu_array = _check_mu(mu)
    return restore_shape(k * mu_array, mu)


def from_pure_dp(epsilon):
    """The μ-GDP guarantee of any ε-DP mechanism: μ = −2Φ⁻¹(1/(1 + e^ε)).

    Tight at the point of the trade-off curve closest to the origin
    (Gomez et al. 2025, Proposition 6.1; GDPT paper, Theorem 5.1). Computed as
    −2·Φ⁻¹(exp(−log(1 + e^ε))) so that large ε does not underflow.

    Examples
    --------
    >>> round(from_pure_dp(1.0), 12)
    1.232035385345
    """
    epsilon_array = _check_epsilon(epsilon)
    with np.errstate(divide="ignore"):
        large = -2.0 * normal_quantile_from_log(-np.logaddexp(0.0, epsilon_array)) + 0.0
    # For small ε, 1/(1+e^ε) = (1 − tanh(ε/2))/2, so μ = 2√2·erf⁻¹(tanh(ε/2)) keeps
    # full relative accuracy (the quantile form loses about 1e-16/ε).
    small = 2.0 * math.sqrt(2.0) * special.erfinv(np.tanh(0.5 * np.minimum(epsilon_array, 1.0)))
    out = np.where(epsilon_array < 1.0, small, large)
    return restore_shape(out, epsilon)


def from_gaussian(sigma, sensitivity=1.0):
    """The Gaussian mechanism with noise σ and ℓ₂-sensitivity Δ is (Δ/σ)-GDP.

    (Dong, Roth & Su, Theorem 2.7.)

    Examples
    --------
    >>> from_gaussian(2.0)
    0.5
    """
    sigma_array = check_real("sigma", sigma, low=0.0, high=_INF, low_open=True)
    sensitivity_array = check_real("sensitivity", sensitivity, low=0.0, high=_INF, high_open=True)
    return restore_shape(sensitivity_array / sigma_array, sigma, sensitivity)


@dataclass(frozen=True)
class GaussianDP:
    """A μ-GDP guarantee: trade-off function at least G_μ.

    Answers the same queries as every gaussdp representation
    (``delta(epsilon)``, ``epsilon(delta)``, ``beta(alpha)``) and composes by
    ``+`` or :meth:`compose` (root of the sum of squares).

    Parameters
    ----------
    mu : float
        μ ∈ [0, ∞].

    Examples
    --------
    >>> g = GaussianDP(0.3) + GaussianDP(0.4)
    >>> g
    GaussianDP(mu=0.5)
    >>> round(g.epsilon(1e-5), 6)
    1.993091
    """

    mu: float

    def __post_init__(self) -> None:
        value = float(_check_mu(self.mu))
        object.__setattr__(self, "mu", value)

    def delta(self, epsilon):
        """δ_μ(ε); see :func:`gaussdp.gdp.delta`."""
        return delta(self.mu, epsilon)

    def log_delta(self, epsilon):
        """log δ_μ(ε), finite where δ underflows; see :func:`gaussdp.gdp.log_delta`."""
        return log_delta(self.mu, epsilon)

    def epsilon(self, delta):
        """The smallest ε with δ_μ(ε) ≤ δ; see :func:`gaussdp.gdp.epsilon`."""
        return epsilon(self.mu, delta)

    def beta(self, alpha):
        """G_μ(α); see :func:`gaussdp.gdp.beta`."""
        return beta(self.mu, alpha)

    def advantage(self) -> float:
        """2Φ(μ/2) − 1; see :func:`gaussdp.gdp.advantage`."""
        return advantage(self.mu)

    def compose(self, *others: GaussianDP) -> GaussianDP:
        """The composition of this guarantee with ``others``."""
        for other in others:
            if not isinstance(other, GaussianDP):
                raise InvalidParameterError(
                    f"can only compose GaussianDP with GaussianDP, got {type(other).__name__}"
                )
        return GaussianDP(compose([self, *others]))

    def group(self, k: int) -> GaussianDP:
        """The guarantee for groups of k records, kμ-GDP."""
        return GaussianDP(group(self.mu, k))

    def __add__(self, other: object) -> GaussianDP:
        if not isinstance(other, GaussianDP):
            return NotImplemented
        return self.compose(other)
