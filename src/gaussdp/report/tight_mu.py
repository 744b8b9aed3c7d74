r"""The tight μ of a piecewise-linear trade-off curve (Gomez et al. 2025, Appendix B).

The smallest μ whose Gaussian curve G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) lies below a
trade-off curve f is a maximum over f's breakpoints (Proposition B.1,
eq. 29): for a breakpoint (α, β) with 0 < α, β < 1 the μ with G_μ(α) = β is

    μ(α, β) = Φ⁻¹(1 − α) − Φ⁻¹(β) = −Φ⁻¹(α) − Φ⁻¹(β),

computed as ``-ndtri(α) - ndtri(β)`` (accurate for α, β down to 1e-300, and
symmetric in α and β, so f and f⁻¹ need the same μ).

**Why breakpoints suffice.** G_μ is convex. Between two breakpoints f is the
chord joining them, and a convex function lies *below* each of its chords:
if G_μ ≤ f at both ends of a segment then, for every point of the segment,
G_μ(α) ≤ (chord of G_μ) ≤ (chord of f) = f(α). So G_μ ≤ f everywhere iff it
holds at every breakpoint, and the tight μ is the largest μ(α_i, β_i).

**Mass at infinity: μ-GDP except with probability δ.** A curve with
f(0) < 1 (mass at infinite privacy loss: an ApproxDP piece, or the mass an
accountant moved to +∞ when it truncated) is above no G_μ, since G_μ(0) = 1;
likewise a curve that reaches 0 before α = 1. Such a curve is reported as
"μ-GDP except with probability δ" (Dong, Roth & Su 2022, eq. 12):

    f ≥ G_μ ⊗ f_{0,δ},   (G_μ ⊗ f_{0,δ})(α) = (1 − δ)·G_μ(α/(1 − δ)) for α ≤ 1 − δ, 0 beyond,

whose breakpoint condition is μ ≥ −Φ⁻¹(α/(1 − δ)) − Φ⁻¹(β/(1 − δ)) for every
breakpoint with α, β < 1 − δ; breakpoints with β ≥ 1 − δ or α ≥ 1 − δ
constrain nothing, and a breakpoint with α = 0 and β < 1 − δ (or β = 0 and
α < 1 − δ) makes μ infinite. The same chord argument applies, because
(1 − δ)G_μ(α/(1 − δ)) is convex. The smallest δ for which some μ works is
max(1 − f(0), 1 − f⁻¹(0)) (:func:`failure_probability`); μ is never reported
without it.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from gaussdp._validation import InvalidParameterError, check_real

__all__ = ["failure_probability", "mu_of_breakpoints", "tight_mu"]


def _breakpoints(curve) -> tuple[np.ndarray, np.ndarray]:
    from gaussdp.curves import TradeOff

    if not isinstance(curve, TradeOff):
        raise InvalidParameterError(
            f"curve must be a gaussdp.curves.TradeOff, got {type(curve).__name__}"
        )
    pl = curve.piecewise_linear()
    return pl.alphas, pl.betas


def failure_probability(curve) -> float:
    """The smallest δ for which f ≥ G_μ ⊗ f_{0,δ} holds for some finite μ.

    That is max(1 − f(0), 1 − f⁻¹(0)): the P-mass at infinite privacy loss of
    the curve or of its inverse (f⁻¹(0) is the α where f first reaches 0).
    Zero for every curve that starts at (0, 1) and ends at (1, 0) only.

    Examples
    --------
    >>> from gaussdp import curves
    >>> failure_probability(curves.gaussian(1.0))
    0.0
    >>> round(failure_probability(curves.epsilon_delta(1.0, 1e-6)), 12)
    1e-06
    """
    alphas, betas = _breakpoints(curve)
    zero = int(np.argmax(betas <= 0.0)) if np.any(betas <= 0.0) else alphas.size - 1
    return float(max(1.0 - betas[0], 1.0 - alphas[zero], 0.0))


def mu_of_breakpoints(alphas, betas, delta=0.0) -> np.ndarray:
    """The μ each breakpoint needs for f ≥ G_μ ⊗ f_{0,δ} (eq. 29 with failure δ).

    −Φ⁻¹(α/(1 − δ)) − Φ⁻¹(β/(1 − δ)) where both scaled values are below 1;
    −inf (no constraint) where either is at least 1; +inf where one of α, β
    is 0 and the other is below 1 − δ.

    Parameters
    ----------
    alphas, betas : array_like
        Breakpoints in [0, 1].
    delta : float
        δ ∈ [0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> np.round(mu_of_breakpoints([0.1, 0.0], [0.2, 1.0]), 6)
    array([2.123173,     -inf])
    """
    a = check_real("alphas", alphas, low=0.0, high=1.0)
    b = check_real("betas", betas, low=0.0, high=1.0)
    d = float(check_real("delta", delta, low=0.0, high=1.0, high_open=True))
    scale = 1.0 - d
    # Complements 1 − α/(1 − δ) = (1 − δ − α)/(1 − δ), formed once, exactly where α ≥ 1/2.
    free = ((1.0 - a) <= d) | ((1.0 - b) <= d)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.minimum(a / scale, 1.0)
        y = np.minimum(b / scale, 1.0)
        mu = -special.ndtri(x) - special.ndtri(y)
    mu = np.where(free, -np.inf, mu)
    return np.where(np.isnan(mu), -np.inf, mu)


def tight_mu(curve, *, delta=None) -> float:
    """The smallest μ with f ≥ G_μ ⊗ f_{0,δ}: the tight μ-GDP guarantee of a curve.

    Gomez et al. (2025), Appendix B, eq. 29, taken over *every* breakpoint
    (none dropped), with the failure probability δ of Dong, Roth & Su (2022,
    eq. 12) where the curve has mass at infinity. See the module docstring
    for why breakpoints suffice.

    Parameters
    ----------
    curve : TradeOff
        Any trade-off curve; closed forms are replaced by their pessimistic
        piecewise-linear version (within 1e-9 below them).
    delta : float, optional
        The failure probability δ ∈ [0, 1). Default: :func:`failure_probability`
        of the curve, the smallest that gives a finite μ. A smaller δ gives
        μ = ∞.

    Returns
    -------
    float
        μ ≥ 0 (∞ if no finite μ works with this δ).

    Examples
    --------
    >>> from gaussdp import curves
    >>> round(tight_mu(curves.epsilon_delta(1.0)), 6)   # Proposition 6.1: -2Φ⁻¹(1/(1+e))
    1.232035
    >>> round(tight_mu(curves.epsilon_delta(1.0, 1e-6)), 6)   # with failure δ = 1e-6
    1.232035
    >>> tight_mu(curves.epsilon_delta(1.0, 1e-6), delta=0.0)
    inf
    """
    alphas, betas = _breakpoints(curve)
    d = failure_probability(curve) if delta is None else delta
    d = float(check_real("delta", d, low=0.0, high=1.0, high_open=True))
    mus = mu_of_breakpoints(alphas, betas, d)
    return float(max(np.max(mus), 0.0)) if mus.size else 0.0


# ---------------------------------------------------------------------------
# The accountant's steep tests: exact symmetric rule in TPR coordinates
# ---------------------------------------------------------------------------


def mu_of_tests(alpha, log_alpha, tpr, delta: float) -> np.ndarray:
    r"""The μ each steep test needs for the symmetric curve to be ≥ G_μ ⊗ f_{0,δ}.

    A test with false-positive rate α and true-positive rate t (an atom set
    of privacy loss ≥ 0, see :mod:`gaussdp.report._steep`) bounds the
    profile by t − e^ε α for every ε ≥ 0. With H(α) = δ + (1 − δ)·T_μ(α/(1 − δ)),
    T_μ(x) = Φ(μ + Φ⁻¹(x)) the TPR of G_μ, the target's profile for ε ≥ 0 is
    sup_α H(α) − e^ε α, and the test is covered iff t ≤ Ŝ(α), where Ŝ = H up
    to the point α_h = (1 − δ)Φ(−μ/2) where H has slope 1 and
    δ_h(0) + α beyond (δ_h(0) = δ + (1 − δ)(2Φ(μ/2) − 1), the advantage). So
    (x = α/(1 − δ), c = (t − δ)/(1 − δ)):

    * μ_H = Φ⁻¹(c) − Φ⁻¹(x), if x ≤ Φ(−μ_H/2);
    * otherwise max(−2Φ⁻¹(x), 2Φ⁻¹((1 + (t − α − δ)/(1 − δ))/2)).

    This is exactly the tight μ of max(F, F⁻¹) (the symmetric curve), the
    curve-side counterpart of Proposition B.1; −inf for tests with t ≤ δ.
    """
    delta = np.asarray(delta, dtype=float)
    scale = 1.0 - delta
    log_x = np.minimum(log_alpha - np.log1p(-delta), 0.0)
    z_alpha = special.ndtri_exp(log_x)
    c = np.clip((tpr - delta) / scale, 0.0, 1.0)
    # Φ⁻¹(c) from the complement 1 − c = (1 − t)/(1 − δ) where c > ½: t within 1e-16
    # of 1 keeps its digits (1 − t is exact there), where c itself would round to 1.
    rest = np.clip((1.0 - tpr) / scale, 0.0, 1.0)
    upper_half = c > 0.5
    with np.errstate(invalid="ignore", divide="ignore"):
        quantile = special.ndtri(np.where(upper_half, rest, c))  # one Φ⁻¹ per test
        np.negative(quantile, out=quantile, where=upper_half)
        mu = quantile - z_alpha
        beyond = np.flatnonzero(z_alpha > -0.5 * mu)
    if beyond.size:
        # Tests past the point where the target has slope −1: the advantage decides,
        # μ ≥ 2Φ⁻¹((1 + (t − α − δ)/(1 − δ))/2) = −2Φ⁻¹(q), q = (1 − t + α)/(2(1 − δ)),
        # taken from q so that t = 1 − 1e-20 (or exactly 1) keeps α's digits.
        scale_b = scale if scale.ndim == 0 else scale[beyond]
        q = ((1.0 - tpr[beyond]) + alpha[beyond]) / (2.0 * scale_b)
        with np.errstate(divide="ignore"):
            mu_adv = np.where(q > 0.0, -2.0 * special.ndtri(np.clip(q, 0.0, 1.0)), np.inf)
        mu[beyond] = np.maximum(-2.0 * z_alpha[beyond], mu_adv)
    return np.where(np.isnan(mu), -np.inf, mu)
