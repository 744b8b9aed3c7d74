r"""The regret of reporting μ-GDP: the Δ-divergence, exactly, on piecewise-linear curves.

**Definition** (Kaissis et al. 2024; Gomez et al. 2025, Definition 2.10).
For trade-off curves f and g,

    Δ(f, g) = inf{κ ≥ 0 : f(α + κ) − κ ≤ g(α) for all α ∈ [0, 1]}

(f is taken as 0 beyond α = 1): how far f must be moved down and to the left,
along the diagonal, to lie below g. The symmetrised Δ↔(f, g) is the larger of
Δ(f, g) and Δ(g, f). When g = G_μ is a valid guarantee for f (G_μ ≤ f), then
Δ(G_μ, f) = 0 and Δ↔ = Δ(f, G_μ) (Proposition 4.1): the *regret* of reporting
μ instead of the whole curve. Its normalisation is that of the shift itself —
no factor ½ — as in the paper's code (gdpnum's ``get_worst_case_regret``
bisects on exactly this condition).

**Closed form on a piecewise-linear curve** (the paper's Theorem B.2 bisects;
here it is exact). Let h be the target (G_μ, or G_μ ⊗ f_{0,δ}), convex and
decreasing. For a point (a, b) the diagonal distance κ(a, b) to h solves
h(a − κ) + κ = b (unique: the left side increases in κ), and
Δ(f, h) = max over points of f of κ. Parametrise points by c = a − b, constant
along diagonals: κ(c) = a_f(c) − a_h(c), where a_f is linear on each segment
of f (with slope 1/(1 − s), s the segment slope) and a_h is convex. So κ is
concave on each segment, stationary where h' = s: **on a linear piece the worst
point against the convex h is where h has the segment's slope**. For G_μ,
h'(x) = −exp(μz − μ²/2) with z = Φ⁻¹(1 − x), so the tangent point for slope
s = −e^l is

    z* = l/μ + μ/2,   x* = Φ(−z*),   1 − h(x*) = Φ(μ/2 − l/μ),

and the diagonal distance from it to the segment's line is

    κ_i = ((1 − h(x*)) − t_i − e^l (x* − α_i)) / (1 + e^l),   t_i = 1 − β_i.

Moreover max_i κ_i is exactly Δ(f, h): each line lies below the convex f, so
the diagonal through any point of the line meets f further up by at least as
much (κ_i ≤ Δ); and the maximiser of κ sits at an interior stationary point
of some segment, where κ equals that segment's κ_i (the kinks of f are convex
kinks of κ, never strict maxima; the ends of the curve have κ ≤ 0). No search
and no grid: one Φ per segment. For G_μ ⊗ f_{0,δ} the tangent point is
scaled: α* = (1 − δ)x*, 1 − h(α*) = δ + (1 − δ)Φ(μ/2 − l/μ).

The result is returned as an upper bound: :data:`ROUNDING_MARGIN` (far above
the rounding of one Φ and a few products) is added.

**Advantage** (Proposition 4.2). With Id the curve of perfect privacy,
Δ(Id, g) = adv(g)/2 (Lemma C.1: the shift that brings 1 − α below g is half
its largest gap), and if f(α + κ) − κ ≤ g(α) for all α then
1 − α − g(α) ≤ 1 − (α + κ) − f(α + κ) + 2κ, so

    adv(G_μ) − adv(f) ≤ 2·Δ(f, G_μ),

with equality for f = Id. The constant is 2: a regret of 0.01 lets the
advantage implied by μ exceed the true one by at most 2 percentage points.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from gaussdp._numerics import log_diff_exp
from gaussdp._validation import check_real
from gaussdp.report.tight_mu import _breakpoints

__all__ = ["ROUNDING_MARGIN", "advantage_gap_bound", "profile_regret", "regret"]

#: Added to every computed regret so that it is an upper bound on the exact value
#: for the curve (the computation itself is closed form, accurate to ~1e-15).
ROUNDING_MARGIN = 1e-12


def _tangent_points(log_slope: np.ndarray, mu: float, delta: float):
    """(α*, 1 − h(α*)) where h = G_μ ⊗ f_{0,δ} has slope −e^l."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = log_slope / mu
        x_star = special.ndtr(-(ratio + 0.5 * mu))
        tpr_star = special.ndtr(0.5 * mu - ratio)
    x_star = np.where(np.isneginf(log_slope), 1.0, x_star)
    tpr_star = np.where(np.isneginf(log_slope), 1.0, tpr_star)
    return (1.0 - delta) * x_star, delta + (1.0 - delta) * tpr_star


def line_distances(alpha, tpr, log_slope, mu: float, delta: float = 0.0) -> np.ndarray:
    """κ_i of each line t = t_i + e^{l_i}(α − α_i) against h = G_μ ⊗ f_{0,δ} (see above).

    In coordinates t = 1 − β (the attack's true-positive rate). For μ = 0 the
    target is the line 1 − δ − α and the distance of the point (α_i, t_i)
    along the diagonal is (α_i − t_i + δ)/2 (the largest over a segment is at
    an end, i.e. at a vertex). For μ = ∞ the target is 0 on (0, 1].
    """
    alpha = np.asarray(alpha, dtype=float)
    tpr = np.asarray(tpr, dtype=float)
    log_slope = np.asarray(log_slope, dtype=float)
    if mu == 0.0:
        return 0.5 * (alpha - tpr + delta)
    alpha_star, tpr_star = _tangent_points(log_slope, mu, delta)
    steep = log_slope > 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        slope = np.exp(np.minimum(log_slope, 0.0))  # ≤ 1 on shallow lines
        inverse = np.exp(-np.maximum(log_slope, 0.0))  # ≤ 1 on steep lines
        shallow_kappa = ((tpr_star - tpr) - slope * (alpha_star - alpha)) / (1.0 + slope)
        steep_kappa = ((tpr_star - tpr) * inverse - (alpha_star - alpha)) / (inverse + 1.0)
    return np.where(steep, steep_kappa, shallow_kappa)


def regret(curve, mu, *, delta=0.0) -> float:
    r"""The regret Δ(f, G_μ ⊗ f_{0,δ}) of reporting μ for the curve f, exactly.

    The Δ-divergence of Definition 2.10 (Gomez et al. 2025; Kaissis et al.
    2024) from f to the μ-GDP curve (with failure probability δ, if given),
    by the per-segment closed form of the module docstring: exact for the
    piecewise-linear curve, returned with :data:`ROUNDING_MARGIN` added so
    that it is an upper bound. Meant for a μ that is a valid guarantee
    (G_μ ⊗ f_{0,δ} ≤ f, e.g. :func:`tight_mu`); for a smaller μ it is still
    an upper bound on Δ(f, G_μ ⊗ f_{0,δ}).

    Parameters
    ----------
    curve : TradeOff
        The curve f (closed forms are replaced by their piecewise-linear
        version, within 1e-9 below them).
    mu : float
        μ ∈ [0, ∞].
    delta : float
        Failure probability δ ∈ [0, 1).

    Examples
    --------
    >>> from gaussdp import curves, gdp
    >>> from gaussdp.report import regret, tight_mu
    >>> identity = curves.identity()
    >>> round(regret(identity, 1.0), 9), round(gdp.advantage(1.0) / 2, 9)  # Lemma C.1
    (0.191462461, 0.191462461)
    >>> f = curves.epsilon_delta(1.0)
    >>> round(regret(f, tight_mu(f)), 6)
    0.057546
    """
    mu_value = float(check_real("mu", mu, low=0.0, high=math.inf))
    d = float(check_real("delta", delta, low=0.0, high=1.0, high_open=True))
    alphas, betas = _breakpoints(curve)
    if math.isinf(mu_value):
        return _regret_against_zero(alphas, betas)
    tpr = 1.0 - betas
    # The rise of t = 1 − β from the β's themselves: 1 − β rounds away the difference
    # of two β's an ulp apart, and a zero rise on a nonzero run reads as a flat line.
    rise = betas[:-1] - betas[1:]
    with np.errstate(divide="ignore"):
        log_run = log_diff_exp(np.log(alphas[1:]), np.log(alphas[:-1]))
        log_slope = np.log(np.maximum(rise, 0.0)) - log_run
    kappas = line_distances(alphas[:-1], tpr[:-1], log_slope, mu_value, d)
    # A segment a few ulps long has no meaningful slope (a curve rounded near a kink can
    # even show a flat one); its ends are on its neighbours' lines, which stay.
    short = alphas[1:] - alphas[:-1] <= 4.0 * np.spacing(alphas[1:])
    if np.any(short) and not np.all(short):
        kappas = np.where(short, -np.inf, kappas)
    if mu_value == 0.0:  # linear target: the largest distance is at a vertex
        kappas = line_distances(alphas, tpr, np.zeros(alphas.size), 0.0, d)
    best = float(np.max(kappas)) if kappas.size else 0.0
    return max(best, 0.0) + ROUNDING_MARGIN


def _regret_against_zero(alphas: np.ndarray, betas: np.ndarray) -> float:
    """Δ(f, 0): the shift that puts f below the zero curve is the fixed point f(a) = a."""
    gap = betas - alphas  # decreasing; the fixed point is where it crosses 0
    k = int(np.argmax(gap <= 0.0))
    if k == 0:
        return 0.0
    left, right = gap[k - 1], gap[k]
    share = left / (left - right)
    return float(alphas[k - 1] + share * (alphas[k] - alphas[k - 1])) + ROUNDING_MARGIN


def profile_regret(epsilons, deltas, mu: float, delta: float = 0.0) -> float:
    r"""Δ(f, G_μ ⊗ f_{0,δ}) for a *symmetric* f given by its profile: the profile form.

    For symmetric f and h with h ≤ f, the supporting line of f's steep half
    with slope e^ε is t = δ_f(ε) + e^ε α (t = 1 − β), and h's tangent point
    (α*, t*) with that slope has t* − e^ε α* = δ_h(ε). Substituting into the
    line distance κ of the module docstring,

        κ(ε) = (δ_h(ε) − δ_f(ε)) / (1 + e^ε),

    and Δ(f, h) = sup_{ε ≥ 0} κ(ε), attained at the slope of a segment of f's
    steep half (by symmetry the other half gives the same values). So the
    maximum over a grid containing every segment slope — an accountant's
    atoms and the crossings of its two directions — is exact; any other ε
    gives a value below it. Here δ_h(ε) = δ + (1 − δ)δ_μ(ε), with δ_μ from the
    tangent point (absolute error ~1e-16, which is what the regret needs).

    Parameters
    ----------
    epsilons, deltas : array_like
        ε ≥ 0 and the profile δ_f(ε) of the symmetric curve there.
    mu : float
        μ ∈ [0, ∞].
    delta : float
        Failure probability δ ∈ [0, 1).

    Returns
    -------
    float
        max(0, max_ε κ(ε)), without the rounding margin.

    Examples
    --------
    >>> import numpy as np
    >>> from gaussdp import gdp
    >>> eps = np.linspace(0.0, 5.0, 11)
    >>> round(profile_regret(eps, np.zeros(eps.size), 1.0), 9)   # f = Id: adv(G_1)/2
    0.191462461
    """
    eps = np.asarray(epsilons, dtype=float)
    values = np.asarray(deltas, dtype=float)
    if eps.size > 4096:
        # κ(ε) ≤ (1 − min δ_f)/(1 + e^ε) (target ≤ 1; δ_f ≥ 0 up to rounding): once some
        # κ is known, larger ε's cannot hold the maximum and are skipped (same value).
        known = profile_regret(eps[::1024], values[::1024], mu, delta)
        if known > 0.0:
            most = 1.0 - min(float(np.min(values)), 0.0)
            reach = math.log(max(most / (known * (1.0 - 1e-9)) - 1.0, 1e-300)) + 1e-9
            kept = eps <= reach
            eps, values = eps[kept], values[kept]
    if math.isinf(mu):
        target = np.ones(eps.size)
    elif mu == 0.0:
        target = np.zeros(eps.size)
    else:
        ratio = eps / mu
        tpr_star = special.ndtr(0.5 * mu - ratio)
        with np.errstate(over="ignore"):
            scaled = np.exp(eps + special.log_ndtr(-(ratio + 0.5 * mu)))
        target = np.maximum(tpr_star - scaled, 0.0)
    target = delta + (1.0 - delta) * target
    with np.errstate(over="ignore"):
        kappa = (target - values) / (1.0 + np.exp(eps))
    return float(max(np.max(kappa), 0.0)) if kappa.size else 0.0


def advantage_gap_bound(regret_value) -> float:
    """2·regret: the most by which μ's advantage exceeds the curve's (Proposition 4.2).

    Examples
    --------
    >>> advantage_gap_bound(0.001)
    0.002
    """
    value = float(check_real("regret", regret_value, low=0.0, high=1.0))
    return 2.0 * value
