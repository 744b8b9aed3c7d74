"""The f-DP algebra: subsampling C_p, group privacy, and composition ⊗."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from scipy import special

from gaussdp import gdp
from gaussdp._validation import InvalidParameterError
from gaussdp.curves import _geometry
from gaussdp.curves._closed import EpsilonDelta, Gaussian, Laplace, WithFailure
from gaussdp.curves._constructors import _from_masses
from gaussdp.curves._tradeoff import PiecewiseLinear, TradeOff, provides
from gaussdp.curves.numerical import compose_tradeoffs

__all__ = ["compose", "group", "subsample"]

# Pure-DP compositions are enumerated atom by atom up to this many atoms.
_MAX_PURE_DP_ATOMS = 2_000_000


# ---------------------------------------------------------------------------
# Subsampling
# ---------------------------------------------------------------------------


def _corollary_3(curve: EpsilonDelta, p: float) -> PiecewiseLinear:
    """C_p(f_{ε,δ}) = max{f_{ε',δ'}(α), 1 − pδ − p(1 − δ)(e^ε − 1)/(e^ε + 1) − α}.

    Corollary 3 of Dong, Roth & Su with ε' = log(1 − p + pe^ε), δ' = pδ. The
    middle line is the segment of eq. (13) through (x*, f_p(x*)) with
    x* = (1 − δ)/(1 + e^ε), whose intercept is 1 − p + 2p(1 − δ)/(1 + e^ε);
    the corollary as printed has p(e^ε − 1)/(e^ε + 1) without the factor
    (1 − δ), which is the same for δ = 0 and slightly lower (pessimistic)
    for δ > 0. The value here agrees with the definition min{f_p, f_p⁻¹}**
    and with the dual route of Theorem 9's proof (Lemma 2 applied to every
    (ε, δ(ε)) of f_{ε,δ}).
    """
    eps, dlt = curve.parameters
    eps_p = math.log1p(p * math.expm1(eps))
    delta_p = p * dlt
    head = 1.0 - delta_p
    middle = 1.0 - delta_p - p * (1.0 - dlt) * math.tanh(0.5 * eps)
    intercepts = [head, math.exp(-eps_p) * head, middle, 0.0]
    slopes = [-math.exp(eps_p), -math.exp(-eps_p), -1.0, 0.0]
    x, y, _ = _geometry.upper_envelope(intercepts, slopes)
    return PiecewiseLinear._from_vertices(x, y)


def _sampling_operator(curve: PiecewiseLinear, p: float) -> PiecewiseLinear:
    """min{f_p, f_p⁻¹}** on breakpoints: the lower hull of both vertex sets."""
    alphas, betas = curve.alphas, curve.betas
    mixed = p * betas + (1.0 - p) * (1.0 - alphas)
    f_p = PiecewiseLinear._from_vertices(alphas, mixed)
    inverse = f_p.inverse()
    return PiecewiseLinear._from_vertices(
        np.concatenate((f_p.alphas, inverse.alphas)), np.concatenate((f_p.betas, inverse.betas))
    )


@provides("subsample")
def subsample(curve: TradeOff, p: float) -> TradeOff:
    """C_p(f); see :meth:`TradeOff.subsample` (arguments already validated)."""
    if p == 0.0:
        return Gaussian(0.0)
    if p == 1.0:
        return curve
    if isinstance(curve, EpsilonDelta) and math.isfinite(curve.parameters.epsilon):
        return _corollary_3(curve, p)
    piece = curve.piecewise_linear()
    if piece._asymmetry() > 0.0:
        # Symmetric up to rounding: (min{f, f⁻¹})** is symmetric and below f.
        inverse = piece.inverse()
        piece = PiecewiseLinear._from_vertices(
            np.concatenate((piece.alphas, inverse.alphas)),
            np.concatenate((piece.betas, inverse.betas)),
        )
    return _sampling_operator(piece, p)


# ---------------------------------------------------------------------------
# Group privacy
# ---------------------------------------------------------------------------


_GROUP_SNAP = 1e-290


def _group_piecewise(curve: PiecewiseLinear, k: int) -> PiecewiseLinear:
    """1 − (1 − f)^{∘k} exactly on breakpoints, by repeated squaring."""
    gx, gy = curve.alphas, 1.0 - curve.betas  # g = 1 − f, non-decreasing
    # Vertices at α below 1e-290 are moved to α = 0 (lowering the curve there, which is
    # safe): composing slopes of 1e290 and more put vertices near the 1e-300 snap of
    # PiecewiseLinear, on either side of it for consecutive k, and f^{∘k} grew with k.
    tiny = (gx > 0.0) & (gx < _GROUP_SNAP)
    if np.any(tiny):
        gx = np.where(tiny, 0.0, gx)
        keep = np.append(gx[1:] > gx[:-1], True)  # at α = 0, the largest g only
        gx, gy = gx[keep], gy[keep]
    result: tuple[np.ndarray, np.ndarray] | None = None
    power = (gx, gy)
    while True:
        if k & 1:
            result = power if result is None else _geometry.compose_increasing(*power, *result)
        k >>= 1
        if not k:
            break
        power = _geometry.compose_increasing(*power, *power)
    hx, hy = result
    return PiecewiseLinear._from_vertices(hx, 1.0 - hy)


@provides("group")
def group(curve: TradeOff, k: int) -> TradeOff:
    """1 − (1 − f)^{∘k}; see :meth:`TradeOff.group` (arguments already validated)."""
    if k == 1:
        return curve
    if isinstance(curve, Gaussian):
        return Gaussian(gdp.group(curve.mu, k))
    if isinstance(curve, Laplace):
        # For a symmetric location family 1 − f(α) = F(F⁻¹(α) + μ): iterating adds μ.
        return Laplace(k * curve.mu)
    return _group_piecewise(curve.piecewise_linear(), k)


# ---------------------------------------------------------------------------
# Composition
# ---------------------------------------------------------------------------


def _as_tradeoff(item, index: int) -> TradeOff:
    if isinstance(item, TradeOff):
        return item
    if isinstance(item, gdp.GaussianDP):
        return Gaussian(item.mu)
    raise InvalidParameterError(
        f"curves_list[{index}] must be a TradeOff curve (or GaussianDP), got {type(item).__name__}"
    )


def _is_identity(curve: TradeOff) -> bool:
    if isinstance(curve, (Gaussian, Laplace)):
        return curve.mu == 0.0
    if isinstance(curve, EpsilonDelta):
        return curve.parameters == (0.0, 0.0)
    return False


def _compose_pure_dp(epsilons: list[float]) -> PiecewiseLinear | None:
    """⊗_i f_{ε_i,0} exactly, from the binomial pairs (Kairouz et al.; DRS §3.3).

    f_{ε,0} = T(Bern(q), Bern(1 − q)) with q = e^ε/(1 + e^ε), privacy loss ±ε.
    n copies of one ε give a loss (2a − n)ε with a ~ Binomial(n, q) under P
    and Binomial(n, 1 − q) under Q; distinct ε combine by adding losses and
    multiplying masses. Returns None when there would be too many atoms.
    """
    counts = Counter(epsilons)
    atoms = 1
    for n in counts.values():
        atoms *= n + 1
    if atoms > _MAX_PURE_DP_ATOMS:
        return None
    losses = np.zeros(1)
    log_p = np.zeros(1)
    log_q = np.zeros(1)
    for eps, n in sorted(counts.items()):
        a = np.arange(n + 1)
        # log q and log(1 − q) for q = e^ε/(1 + e^ε), never from 1 − q.
        log_plus = -math.log1p(math.exp(-eps))
        log_minus = -eps + log_plus
        step_loss = (2.0 * a - n) * eps
        log_choose = special.gammaln(n + 1) - special.gammaln(a + 1) - special.gammaln(n - a + 1)
        step_p = log_choose + a * log_plus + (n - a) * log_minus
        step_q = log_choose + a * log_minus + (n - a) * log_plus
        losses = (losses[:, None] + step_loss[None, :]).ravel()
        log_p = (log_p[:, None] + step_p[None, :]).ravel()
        log_q = (log_q[:, None] + step_q[None, :]).ravel()
    order = np.argsort(-losses, kind="stable")
    return _from_masses(np.exp(log_p[order]), np.exp(log_q[order]))


@provides("compose")
def compose(curves_list) -> TradeOff:
    r"""The tensor product f₁ ⊗ f₂ ⊗ … (Dong, Roth & Su, Theorem 4).

    The adaptive composition of an f_i-DP mechanisms is f₁ ⊗ … ⊗ f_n-DP, and
    this cannot be improved in general. Computed

    * exactly for Gaussian curves: G_μ with μ = √(Σ μ_i²) (Corollary 2);
    * exactly for f_{ε_i,δ_i} (and randomized response): the δ parts split
      off by f_{ε,δ} = f_{ε,0} ⊗ f_{0,δ} and f_{0,δ₁} ⊗ f_{0,δ₂} =
      f_{0,1−(1−δ₁)(1−δ₂)} (eqs. 10–11), the ε parts from the exact binomial
      privacy-loss distribution behind Theorem 8;
    * for any other curves numerically, by the PLD engine
      (:func:`gaussdp.curves.numerical.compose_tradeoffs`: each curve's breakpoints as a
      discrete pair, PLDs convolved), pessimistic. The result is symmetric:
      for asymmetric inputs it is the symmetrisation of the tensor product
      (both orders of the pair), below f₁ ⊗ … ⊗ f_n itself.

    Factors f ⊗ f_{0,δ} (:meth:`TradeOff.with_failure`) are always split off
    exactly, and identity curves dropped.

    Parameters
    ----------
    curves_list : iterable of TradeOff (or GaussianDP)

    Examples
    --------
    >>> from gaussdp import curves
    >>> curves.compose([curves.gaussian(0.3), curves.gaussian(0.4)])
    Gaussian(mu=0.5)
    >>> f = curves.compose([curves.epsilon_delta(0.5)] * 4)
    >>> round(f.beta(0.1), 6)
    0.633277
    """
    try:
        items = list(curves_list)
    except TypeError:
        raise InvalidParameterError("curves_list must be an iterable of TradeOff curves") from None
    if not items:
        raise InvalidParameterError("curves_list must contain at least one curve, got none")
    bases: list[TradeOff] = []
    log_keep = 0.0  # log Π(1 − δ_i) of the split-off f_{0,δ_i}
    for index, item in enumerate(items):
        curve = _as_tradeoff(item, index)
        if isinstance(curve, WithFailure):
            log_keep += math.log1p(-curve.failure)
            curve = curve.base
        if isinstance(curve, EpsilonDelta) and curve.parameters.delta > 0.0:
            eps, dlt = curve.parameters
            if dlt >= 1.0:
                return EpsilonDelta(math.inf, 0.0)
            log_keep += math.log1p(-dlt)
            curve = EpsilonDelta(eps, 0.0)
        if not _is_identity(curve):
            bases.append(curve)
    failure = -math.expm1(log_keep)
    if not bases:
        result: TradeOff = Gaussian(0.0)
    elif len(bases) == 1:
        result = bases[0]
    elif all(isinstance(c, Gaussian) for c in bases):
        result = Gaussian(gdp.compose([c.mu for c in bases]))
    else:
        result = None
        if all(isinstance(c, EpsilonDelta) for c in bases):
            epsilons = [c.parameters.epsilon for c in bases]
            if any(math.isinf(e) for e in epsilons):
                return EpsilonDelta(math.inf, 0.0)
            result = _compose_pure_dp(epsilons)
        if result is None:
            result = compose_tradeoffs(bases)
    if failure >= 1.0:
        return EpsilonDelta(math.inf, 0.0)
    return WithFailure.of(result, failure) if failure > 0.0 else result
