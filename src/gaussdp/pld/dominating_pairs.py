"""Dominating pairs of the basic mechanisms, as exact privacy losses.

A pair (P, Q) *dominates* a mechanism for one neighbouring direction when its
hockey-stick divergence is at least the mechanism's on every pair of
neighbouring data sets (Zhu, Dong & Wang 2022, Definition 7; the lecture,
file 003). Accounting a mechanism means accounting such pairs, one for each
direction ("remove": D ⊃ D', "add": D ⊂ D'); both are returned, and for
symmetric mechanisms they coincide.

=======================  ==========================================  =====================
mechanism                 dominating pair (add/remove)                 loss under P
=======================  ==========================================  =====================
Gaussian(σ, Δ)            N(Δ, σ²) vs N(0, σ²)                          N(μ²/2, μ²), μ = Δ/σ
Laplace(b, Δ)             Lap(Δ, b) vs Lap(0, b)                        atoms ±Δ/b + linear part
DiscreteGaussian(σ, Δ)    N_Z(Δ, σ²) vs N_Z(0, σ²)                      (2Δx − Δ²)/(2σ²), x ∈ ℤ
RandomizedResponse(ε)     Bern(e^ε/(1+e^ε)) vs Bern(1/(1+e^ε))          ±ε
PureDP(ε)                 randomized response with ε                    ±ε
ApproxDP(ε, δ)            leaky randomized response                     ±ε, +∞ with mass δ
PoissonSubsampled(M, γ)   remove ((1−γ)Q + γP, Q); add the swap         log(1 − γ + γe^L)
GaussianMixture(σ, c, p)  remove (Σ pᵢN(cᵢ, σ²), N(0, σ²)); add swap    :mod:`gaussdp.pld.mixture`
TruncatedPoisson(G, q,…)  bracketed: :mod:`gaussdp.pld.truncated`       (add/remove only)
=======================  ==========================================  =====================

Under replace-one neighbouring a record's contribution can move by twice
the add/remove sensitivity (the convention of dp_accounting), so Gaussian,
Laplace and discrete Gaussian shifts double; pure and approximate DP
guarantees are taken as stated for the relation in use. Sampling without
replacement is defined for fixed-size data sets, i.e. replace-one, where the
subsampled pair is ((1−γ)Q + γP, Q) with γ = m/n and (P, Q) the inner
replace-one pair (Dong, Roth & Su 2022, Theorem 9; Zhu, Dong & Wang 2022).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError
from gaussdp.pld import allocation, allocation_parts, guarantees, mixture, shuffling, truncated
from gaussdp.pld.losses import AtomicLoss, GaussianLoss, LaplaceLoss, PrivacyLoss, SubsampledLoss

__all__ = ["dominating_losses", "is_identity"]

# The discrete Gaussian is summed over |x| ≤ Δ + this many σ: beyond, its
# mass is below 1e-300.
_DISCRETE_GAUSSIAN_SPAN = 38.0


def _shift_factor(neighbouring: m.Neighbouring) -> float:
    return 2.0 if neighbouring is m.Neighbouring.REPLACE else 1.0


def is_identity(mechanism: m.Mechanism, neighbouring: m.Neighbouring) -> bool:
    """True when the mechanism leaks nothing (σ = ∞, zero sensitivity, ε = 0 …)."""
    if isinstance(mechanism, m.Gaussian):
        return math.isinf(mechanism.sigma) or mechanism.sensitivity == 0
    if isinstance(mechanism, m.Laplace):
        return math.isinf(mechanism.scale) or mechanism.sensitivity == 0
    if isinstance(mechanism, (m.RandomizedResponse, m.PureDP)):
        return mechanism.epsilon == 0
    if isinstance(mechanism, m.ApproxDP):
        return mechanism.epsilon == 0 and mechanism.delta == 0
    if isinstance(mechanism, (m.PoissonSubsampled, m.SubsampledWithoutReplacement, m.Shuffled)):
        return is_identity(mechanism.mechanism, neighbouring)
    if isinstance(mechanism, m.TruncatedPoisson):
        return is_identity(mechanism.mechanism, neighbouring)
    if isinstance(mechanism, m.GaussianMixture):
        return mixture.is_trivial_mixture(
            mechanism.noise_multiplier, mechanism.sensitivities, mechanism.probabilities
        )
    if isinstance(mechanism, m.RandomAllocation):
        return is_identity(mechanism.mechanism, neighbouring)
    return False


def _randomized_response(epsilon: float, delta: float = 0.0) -> AtomicLoss:
    # P = (δ at +∞, (1−δ)·e^ε/(1+e^ε) at +ε, (1−δ)/(1+e^ε) at −ε); Q mirrored.
    high = -math.log1p(math.exp(-epsilon))  # log(e^ε/(1+e^ε))
    low = -math.log1p(math.exp(epsilon))  # log(1/(1+e^ε))
    scale = 1.0 - delta
    p = scale * np.exp([low, high])
    q = scale * np.exp([high, low])
    return AtomicLoss.from_atoms([-epsilon, epsilon], p, q, infinity_mass=delta)


def _discrete_gaussian(sigma: float, shift: int) -> AtomicLoss:
    span = math.ceil(shift + _DISCRETE_GAUSSIAN_SPAN * sigma) + 1
    x = np.arange(-span, span + 1, dtype=float)
    log_q = -(x**2) / (2 * sigma**2)
    log_p = -((x - shift) ** 2) / (2 * sigma**2)
    log_normaliser = special.logsumexp(log_q)  # the same for both (a shift of ℤ)
    p = np.exp(log_p - log_normaliser)
    q = np.exp(log_q - log_normaliser)
    return AtomicLoss.from_atoms(log_p - log_q, p, q)


def _base_loss(mechanism: m.Mechanism, factor: float) -> PrivacyLoss:
    """The (symmetric) loss of a basic mechanism, shift multiplied by ``factor``."""
    if isinstance(mechanism, m.Gaussian):
        return GaussianLoss(factor * mechanism.sensitivity / mechanism.sigma)
    if isinstance(mechanism, m.Laplace):
        return LaplaceLoss(factor * mechanism.sensitivity / mechanism.scale)
    if isinstance(mechanism, m.DiscreteGaussian):
        return _discrete_gaussian(mechanism.sigma, round(factor * mechanism.sensitivity))
    if isinstance(mechanism, (m.RandomizedResponse, m.PureDP)):
        return _randomized_response(mechanism.epsilon)
    if isinstance(mechanism, m.ApproxDP):
        return _randomized_response(mechanism.epsilon, mechanism.delta)
    if (loss := guarantees.base_loss(mechanism, factor)) is not None:
        return loss
    raise InvalidParameterError(
        f"{type(mechanism).__name__} cannot be subsampled here: the inner mechanism of a "
        "subsampled mechanism must be a basic one (Gaussian, Laplace, DiscreteGaussian, "
        "RandomizedResponse, PureDP or ApproxDP)"
    )


def _subsample_atoms(inner: AtomicLoss, gamma: float, direction: str) -> AtomicLoss:
    """Exact subsampling of a discrete loss (remove: ((1−γ)Q + γP, Q); add: its swap)."""
    q_minus_infinity = max(1.0 - float(inner.q_masses.sum()), 0.0)
    losses = np.append(inner.losses, -np.inf)
    p = np.append(inner.p_masses, 0.0)
    q = np.append(inner.q_masses, q_minus_infinity)
    mixture = (1.0 - gamma) * q + gamma * p
    with np.errstate(divide="ignore"):
        new_losses = np.logaddexp(
            math.log1p(-gamma) if gamma < 1 else -np.inf, math.log(gamma) + losses
        )
    keep = np.isfinite(new_losses)
    if direction == "remove":
        first, second = mixture, q
        infinity = gamma * inner.infinity_mass
    else:
        first, second = q, mixture
        new_losses = -new_losses
        infinity = 0.0  # the first component Q has no mass at +∞
    keep &= first > 0
    return AtomicLoss.from_atoms(new_losses[keep], first[keep], second[keep], infinity)


def _subsampled(inner_mechanism: m.Mechanism, gamma: float, factor: float):
    base = _base_loss(inner_mechanism, factor)
    if gamma >= 1.0:
        return base, base
    if isinstance(base, AtomicLoss):
        return (_subsample_atoms(base, gamma, "remove"), _subsample_atoms(base, gamma, "add"))
    return SubsampledLoss(base, gamma, "remove"), SubsampledLoss(base, gamma, "add")


def dominating_losses(
    mechanism: m.Mechanism,
    neighbouring: m.Neighbouring,
    *,
    tradeoff_of=None,
    loss_accuracy: float | None = None,
) -> tuple[PrivacyLoss, PrivacyLoss]:
    """The exact privacy losses (remove, add) of a basic or subsampled mechanism.

    ``tradeoff_of(part, neighbouring)``, the pessimistic trade-off curve of a
    part, is what Group and Parallel leaves are built from
    (:func:`gaussdp.pld.guarantees.dominating_losses`); the accountant passes
    its own. ``loss_accuracy``: for mechanisms computed between two pairs
    (random allocation, :mod:`gaussdp.pld.allocation`), about how far apart
    their upper and lower losses may be (None: the module's default).
    """
    if isinstance(mechanism, m.RandomAllocation):
        return allocation.random_allocation_losses(
            mechanism, neighbouring, loss_accuracy, base_loss=_base_loss
        )
    parts = (allocation_parts.AllocationBlock, allocation_parts.AllocationSumStatistic)
    if isinstance(mechanism, parts):
        return allocation_parts.part_losses(
            mechanism, neighbouring, loss_accuracy, base_loss=_base_loss
        )
    if isinstance(mechanism, guarantees.HANDLED):
        return guarantees.dominating_losses(mechanism, neighbouring, tradeoff_of=tradeoff_of)
    if isinstance(mechanism, m.Shuffled):  # a bracket: no amplification / Chua et al.
        return shuffling.shuffled_losses(mechanism, neighbouring)
    factor = _shift_factor(neighbouring)
    if isinstance(mechanism, m.GaussianMixture):
        if neighbouring is not m.Neighbouring.ADD_REMOVE:
            raise InvalidParameterError(
                "GaussianMixture is accounted under add/remove neighbouring only "
                f"(got neighbouring={neighbouring.value}); use Neighbouring.ADD_REMOVE"
            )
        return mixture.mixture_losses(
            mechanism.noise_multiplier, mechanism.sensitivities, mechanism.probabilities
        )
    if isinstance(mechanism, m.TruncatedPoisson):
        return truncated.truncated_poisson_losses(mechanism, neighbouring)
    if isinstance(mechanism, m.PoissonSubsampled):
        if neighbouring is not m.Neighbouring.ADD_REMOVE:
            raise InvalidParameterError(
                "PoissonSubsampled is accounted under add/remove neighbouring only "
                f"(got neighbouring={neighbouring.value}); use Neighbouring.ADD_REMOVE"
            )
        return _subsampled(mechanism.mechanism, mechanism.sampling_probability, 1.0)
    if isinstance(mechanism, m.SubsampledWithoutReplacement):
        if neighbouring is not m.Neighbouring.REPLACE:
            raise InvalidParameterError(
                "SubsampledWithoutReplacement is defined for fixed-size data sets, i.e. "
                f"replace-one neighbouring (got neighbouring={neighbouring.value}); "
                "use Neighbouring.REPLACE"
            )
        gamma = mechanism.sample_size / mechanism.dataset_size
        return _subsampled(mechanism.mechanism, gamma, 2.0)
    base = _base_loss(mechanism, factor)
    return base, base
