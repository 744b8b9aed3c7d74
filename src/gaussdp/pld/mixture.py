"""The privacy loss of a mixture of Gaussian shifts against a Gaussian, exactly.

For σ > 0, shifts cᵢ ≥ 0 and probabilities pᵢ (Σ pᵢ = 1) the pair is

    remove:  P = Σᵢ pᵢ N(cᵢ, σ²)  against  Q = N(0, σ²);
    add:     the swap, P = N(0, σ²) against Q = Σᵢ pᵢ N(cᵢ, σ²).

In the standardised output z = x/σ, with μᵢ = cᵢ/σ, the remove loss is

    L(z) = log Σᵢ pᵢ exp(μᵢ z − μᵢ²/2),

a log-sum-exp of affine functions with slopes μᵢ ≥ 0: convex and increasing
in z. As z → −∞ it falls to log p₀, where p₀ is the mass at μ = 0 (−∞ if
there is none); it is unbounded above. So L > y ⟺ z > z(y) with z(y) its
inverse, and the tails under P and Q are Gaussian tails at z(y):

    P(L > y) = Σᵢ pᵢ Φ̄(z(y) − μᵢ),     Q(L > y) = Φ̄(z(y)),
    P(L ≤ y) = Σᵢ pᵢ Φ(z(y) − μᵢ),     Q(L ≤ y) = Φ(z(y)),

each accurate in its own tail. The add loss is −L(z) with z ~ N(0, 1) first
and z ~ mixture second, so its tails are the same functions at z(−y), read
from the other side. With the mixture {0: 1 − q, c: q} this is the
Poisson-subsampled Gaussian (:class:`gaussdp.pld.losses.SubsampledLoss`),
and z(y) has the closed form z = (log(e^y − 1 + q) − log q)/μ + μ/2.

The inverse: with the shifts μ = 0 set aside, z(y) solves

    G(z) = log Σ_{μᵢ > 0} pᵢ exp(μᵢ z − μᵢ²/2) = r(y),  r(y) = log(e^y − p₀),

for y > log p₀ (else z(y) = −∞). G is convex, increasing and asymptotically
linear at both ends, so Newton's method started at a point above the root
(z₀ = minᵢ (r − log pᵢ + μᵢ²/2)/μᵢ, where one term alone already reaches r)
decreases monotonically to it in a few steps.

Sources: dp_accounting's ``MixtureGaussianPrivacyLoss``
(``dp_accounting/pld/privacy_loss_mechanism.py``, which inverts the same
monotone loss numerically), for mixtures as the pairs of truncated Poisson
sampling Ganesh (2025), arXiv 2508.15089, and for mixture mechanisms in
general arXiv 2310.15526 (cited by dp_accounting's ``MixtureOfGaussiansDpEvent``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from gaussdp._numerics import normal_quantile_of_complement
from gaussdp.pld.losses import PrivacyLoss, remembered_tight_support

__all__ = ["GaussianMixtureLoss", "is_trivial_mixture", "mixture_losses"]

_NEWTON_STEPS = 60


@dataclass(frozen=True, eq=False)
class GaussianMixtureLoss(PrivacyLoss):
    """Privacy loss of Σᵢ pᵢ N(μᵢ, 1) against N(0, 1) ("remove") or its swap ("add").

    Parameters
    ----------
    shifts : tuple of float
        μᵢ = cᵢ/σ ≥ 0, at least one positive.
    probabilities : tuple of float
        pᵢ > 0, summing to 1.
    direction : str
        ``"remove"`` (mixture first) or ``"add"`` (N(0, 1) first).

    Examples
    --------
    >>> loss = GaussianMixtureLoss((0.0, 1.0), (0.5, 0.5), "remove")
    >>> p_above, q_above = loss.sf(0.0)
    >>> round(float(p_above - q_above), 6)  # the TV distance, ½(2Φ(½) − 1)
    0.191462
    """

    shifts: tuple[float, ...]
    probabilities: tuple[float, ...]
    direction: str

    def __post_init__(self) -> None:
        shifts = np.asarray(self.shifts, dtype=float)
        weights = np.asarray(self.probabilities, dtype=float)
        positive = shifts > 0
        object.__setattr__(self, "_zero_mass", float(weights[~positive].sum()))
        object.__setattr__(self, "_shifts", shifts)
        object.__setattr__(self, "_weights", weights)
        object.__setattr__(self, "_positive_shifts", shifts[positive])
        object.__setattr__(self, "_log_positive_weights", np.log(weights[positive]))
        object.__setattr__(self, "_positive_mass", float(math.fsum(weights[positive])))

    # -- the loss and its inverse ----------------------------------------------------------
    def remove_loss(self, z):
        """L(z) = log Σᵢ pᵢ exp(μᵢ z − μᵢ²/2), the remove loss at standardised output z."""
        z = np.asarray(z, dtype=float)
        exponents = (
            np.log(self._weights)[:, None]
            + self._shifts[:, None] * z.ravel()[None, :]
            - 0.5 * self._shifts[:, None] ** 2
        )
        return special.logsumexp(exponents, axis=0).reshape(z.shape)

    def _inverse(self, y):
        """z(y) with L(z(y)) = y for the remove loss; −∞ where y ≤ log p₀."""
        y = np.asarray(y, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # r = log(e^y − p₀) = log(expm1(y) + Σ_{μ>0} pᵢ), accurate near y = 0.
            inside = np.expm1(y) + self._positive_mass
            reachable = inside > 0
            r = np.log(np.where(reachable, inside, 1.0))
        mu = self._positive_shifts
        log_w = self._log_positive_weights
        starts = (r[..., None] - log_w + 0.5 * mu**2) / mu
        z = starts.min(axis=-1)
        if mu.size > 1:
            z = self._newton(z, r, mu, log_w)
        return np.where(reachable, z, -np.inf)

    @staticmethod
    def _newton(z, r, mu, log_w):
        """Newton's method from above on the convex increasing G(z) − r."""
        converging = False
        offsets = log_w - 0.5 * mu**2
        for _ in range(_NEWTON_STEPS):
            exponents = offsets + mu * z[..., None]
            top = exponents.max(axis=-1)
            terms = np.exp(exponents - top[..., None])
            total = terms.sum(axis=-1)
            value = top + np.log(total)  # G(z), a log-sum-exp
            slope = (terms @ mu) / total  # G'(z), the terms' weighted mean slope
            step = (value - r) / slope
            z = z - step
            if converging:  # one step after 1e-9: quadratic convergence reached roundoff
                break
            converging = not np.any(np.abs(step) > 1e-9 * (1.0 + np.abs(z)))
        return z

    # -- tails -------------------------------------------------------------------------------
    def _mixture_tails(self, z):
        """(mixture P(Z > z), P(Z ≤ z)) for Z ~ Σ pᵢ N(μᵢ, 1), each from its own tail."""
        z = np.asarray(z, dtype=float)[..., None]
        above = np.sum(self._weights * special.ndtr(self._shifts - z), axis=-1)
        below = np.sum(self._weights * special.ndtr(z - self._shifts), axis=-1)
        return above, below

    def tails(self, x):
        x = np.asarray(x, dtype=float)
        if self.direction == "remove":
            z = self._inverse(x)
            mixture_above, mixture_below = self._mixture_tails(z)
            return (mixture_above, special.ndtr(-z)), (mixture_below, special.ndtr(z))
        # add: −L > x ⟺ L < −x ⟺ z < z(−x)  (the boundary z = z(−x) has no mass)
        z = self._inverse(-x)
        mixture_above, mixture_below = self._mixture_tails(z)
        return (special.ndtr(z), mixture_below), (special.ndtr(-z), mixture_above)

    def sf(self, x):
        return self.tails(x)[0]

    def cdf(self, x):
        return self.tails(x)[1]

    def support(self, tail):
        width = float(normal_quantile_of_complement(tail))
        low = float(self.remove_loss(np.array(-width)))
        high = float(self.remove_loss(np.array(width + float(self._shifts.max()))))
        return (low, high) if self.direction == "remove" else (-high, -low)

    def tight_support(self, tail):
        # The largest shift's tail is charged at full weight above: narrowed to the mixture's.
        return remembered_tight_support(self, tail)


def mixture_losses(
    noise_multiplier: float, sensitivities, probabilities
) -> tuple[GaussianMixtureLoss, GaussianMixtureLoss]:
    """The (remove, add) losses of N(0, σ²) against Σ pᵢ N(cᵢ, σ²), add/remove neighbouring.

    Components with pᵢ = 0 are dropped and equal shifts merged; at least one
    shift must be positive with positive probability (else the pair is the
    identity, see :func:`is_trivial_mixture`).
    """
    merged: dict[float, float] = {}
    for shift, weight in zip(sensitivities, probabilities, strict=True):
        if weight > 0:
            mu = float(shift) / float(noise_multiplier)
            merged[mu] = merged.get(mu, 0.0) + float(weight)
    shifts = tuple(sorted(merged))
    weights = tuple(merged[mu] for mu in shifts)
    total = math.fsum(weights)
    weights = tuple(w / total for w in weights)
    return (
        GaussianMixtureLoss(shifts, weights, "remove"),
        GaussianMixtureLoss(shifts, weights, "add"),
    )


def is_trivial_mixture(noise_multiplier: float, sensitivities, probabilities) -> bool:
    """True when the mixture equals N(0, σ²): σ = ∞ or every shift with mass is 0."""
    if math.isinf(noise_multiplier):
        return True
    return all(c == 0 or p == 0 for c, p in zip(sensitivities, probabilities, strict=True))
