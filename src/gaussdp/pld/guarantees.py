r"""Dominating pairs of mechanisms known by a guarantee, and of Group and Parallel.

The engine composes dominating pairs (Zhu, Dong & Wang 2022, Theorem 10).
For the descriptions added by the calibration/interop issue a pair comes
from a trade-off curve: a piecewise-linear curve *is* a discrete pair
(each segment of slope −e^l an outcome of privacy loss l; the lecture,
file 003, Lemma 9 and Corollary 26; :mod:`gaussdp.pld.tradeoffs`), and a
curve *below* the exact one gives a pair that dominates the mechanism.

=====================  =============================================  =====================
description            curve                                          conversion
=====================  =============================================  =====================
GDP(μ)                 G_μ: the Gaussian pair N(μ,1) vs N(0,1)        lossless (closed form)
ZCDP(ρ), RenyiDP       optimal RDP → f-DP conversion (below)          lossless for the class,
                                                                      computed pessimistically
Profile(δ)             sup_ε f_{ε,δ(ε)} on an adaptive ε grid          lossless up to the grid
NoiseEquation(f, σ)    the refined profile of the GDPT paper          as Profile
Group(M, k)            pushed into compositions; exact for Gaussian,  Theorem 2.14 of Dong,
                       Laplace, GDP, ε-DP, zCDP; else 1−(1−f)^{∘k}    Roth & Su otherwise
Parallel([M_i])        (min_i f_i)**, i.e. max_i of the profiles       lossless for the profile
=====================  =============================================  =====================

**The optimal RDP → f-DP conversion.** A test with false-positive rate x
and false-negative rate y reduces any pair to ``(Bern(1 − y), Bern(x))``,
whose Rényi divergences are at most the pair's (data processing). With
t = 1 − y (the attack's true-positive rate), the bound D_α ≤ ε_α reads

    g_α(x, t) = t^α x^{1−α} + (1 − t)^α (1 − x)^{1−α} ≤ e^{(α−1) ε_α},

and g_α increases in t on [x, 1]. So the largest TPR at FPR x is
t*(x) = min_α max{t : g_α(x, t) ≤ e^{(α−1)ε_α}}, and every (x, t*(x)) is
attained by the Bernoulli pair itself: f(x) = 1 − t*(x) is the exact curve of
the class (Balle et al. 2020; Zhu, Dong & Wang 2022), symmetric because the
bounds hold for both orders of the neighbours (the swapped constraint is
g_α(1 − t, 1 − x)). Here t* is found by bisection in log t, keeping the
infeasible end (t too large: pessimistic); the curve is then bounded below
by the tangent lines of the active constraint at each x (implicit
differentiation: with u = t/x, v = (1 − t)/(1 − x), the slope is
−((α−1)/α)(u^α − v^α)/(u^{α−1} − v^{α−1})), each of which is an (ε, δ)
guarantee, and the curve of all of them
(:func:`gaussdp.curves.from_epsilon_deltas`) lies below f. A finite set of
orders (for ZCDP, ε_α = ρα on 1 + 10^[-3, 3.5]) only removes constraints,
which again lowers the curve. A relative margin of 1e-9 on every δ covers
the rounding of the tangent construction.

**The lower bounds** read a curve above the exact one, so that they stay
certified too (:func:`dominating_losses` returns a
:class:`~gaussdp.pld.losses.BracketedLoss`): for ZCDP and RenyiDP the chords
of the attained points (the feasible end of each bisection; the exact curve
is convex, so it lies below the upper concave hull of attained TPRs,
:func:`_chord_pairs`), for Profile and NoiseEquation the lines of the
profile at its grid and at the crossings of its secants
(:func:`_optimistic_profile_curve`). For ZCDP the attained points are those
of the best order the golden-section search finds, which is within its
convergence (about 1e-8 in log(α − 1)) of the best one. A subsampled
guarantee (its pair read through :func:`base_loss`) keeps the one pair.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from gaussdp import mechanisms as m
from gaussdp._numerics import UNIT_ROUNDOFF, log1m_exp
from gaussdp._validation import InvalidParameterError
from gaussdp.pld.losses import (
    REVEALS_NOTHING,
    AtomicLoss,
    BracketedLoss,
    GaussianLoss,
    PrivacyLoss,
)

if TYPE_CHECKING:
    from gaussdp.curves import TradeOff

# gaussdp.curves (a layer below) is imported where a curve is built, not here: the
# accountant loads this module with `import gaussdp`, which stays fast without it.

__all__ = [
    "COMPOSED_CLASS_CAVEAT",
    "GROUP_CAVEAT",
    "HANDLED",
    "PARALLEL_CAVEAT",
    "ComposedRenyiDP",
    "ComposedZCDP",
    "base_loss",
    "dominating_losses",
    "expand_group",
    "rdp_tradeoff",
    "simplify_leaves",
    "zcdp_tradeoff",
]

#: What the bounds of a group accounted by Theorem 2.14 are, said with every accounting.
GROUP_CAVEAT = (
    "group privacy of a mechanism without an exact group pair is bounded from above by "
    "Dong, Roth & Su 2022, Theorem 2.14 (1 - (1 - f)^k), not from below: its lower bounds "
    "leave the group out"
)

#: What the bounds of a Parallel are, said with every accounting.
PARALLEL_CAVEAT = (
    "parallel parts are accounted from their parts' upper-bound curves (the worst part): "
    "its lower bounds leave the parallel part out"
)

#: What the bounds of several zCDP or Rényi-DP guarantees composed are.
COMPOSED_CLASS_CAVEAT = (
    "zCDP or Renyi-DP guarantees composed (with each other or with other mechanisms) are "
    "bounded from above by their classes' curves (of the summed Renyi bounds where they "
    "add up), and from below by Gaussian mechanisms that meet each of them: the worst "
    "members of the classes, composed, lie between the two"
)


@dataclass(frozen=True)
class ComposedZCDP(m.ZCDP):
    """ZCDP(Σρ) standing for zCDP guarantees composed, with each other or with other
    mechanisms, or a group of one (:func:`simplify_leaves`, :func:`expand_group`).

    Its upper bound is the Σρ-zCDP class's curve, which every composition of
    the parts meets; not its lower bound: that class holds mechanisms no
    composition of the parts is (13 × ZCDP(0.181) has δ(0) ≤ 0.818, composing
    the parts' curves, where the class of ρ = 2.35 reaches 0.874). The lower
    bound is the Gaussian of μ = √(2Σρ), the composition of the Gaussians of
    μ_i = √(2ρ_i), each in its part's class.
    """


@dataclass(frozen=True)
class ComposedRenyiDP(m.RenyiDP):
    """RenyiDP of summed bounds standing for several Rényi-DP (and zCDP) guarantees composed.

    As :class:`ComposedZCDP`: the upper bound is the class of the summed
    bounds; the lower bound the Gaussian of μ = ``member_mu``, whose μ² sums
    each part's largest Gaussian meeting it (min over its orders of 2ε(α)/α;
    2ρ for a zCDP part).
    """

    member_mu: float = 0.0


#: Descriptions whose pairs this module provides.
HANDLED = (m.GDP, m.ZCDP, m.RenyiDP, m.Profile, m.NoiseEquation, m.Group, m.Parallel)
_CURVE_GUARANTEES = (m.ZCDP, m.RenyiDP, m.Profile, m.NoiseEquation)

# Golden-section steps of the search for the best order of a ZCDP bound.
_GOLDEN_STEPS = 40
# Relative margin added to every δ of the tangent construction (taken off the chords').
_DELTA_MARGIN = 1e-9
# Relative margin taken off every attained TPR of the chords (the constraint's rounding:
# about 1e-15 in log g, at most α times that in log t).
_OPTIMISTIC_MARGIN = 1e-12
_BISECTION_STEPS = 64


def _log_fpr_grid() -> np.ndarray:
    """log x for the FPRs at which the RDP curve is evaluated (dense where δ ≥ 1e-30)."""
    far = np.linspace(math.log(1e-300), math.log(1e-40), 150, endpoint=False)
    tail = np.linspace(math.log(1e-40), math.log(1e-2), 2000, endpoint=False)
    middle = np.log(np.linspace(1e-2, 1.0 - 1e-2, 400))
    top = np.log1p(-np.geomspace(1e-2, 1e-12, 100)[1:])
    return np.concatenate([far, tail, middle, top])


def _solve_log_t(log_x, log_not_x, alpha, bound, feasible: bool = False):
    """log t*: the largest TPR allowed at FPR x by D_α ≤ bound/(α − 1) (infeasible end).

    All arguments broadcast together. Bisection in log t on [log x, 0], keeping
    the end where the constraint fails (t too large), so 1 − t is a lower bound
    on the curve; with ``feasible``, the other end (an attained TPR: 1 − t an
    upper bound on the curve, up to the rounding of the constraint).
    """

    def excess(log_t):
        with np.errstate(divide="ignore", invalid="ignore"):
            first = alpha * log_t + (1.0 - alpha) * log_x
            second = alpha * log1m_exp(np.minimum(log_t, 0.0)) + (1.0 - alpha) * log_not_x
            return np.logaddexp(first, second) - bound

    shape = np.broadcast_shapes(np.shape(log_x), np.shape(alpha), np.shape(bound))
    low = np.broadcast_to(log_x, shape).copy()  # t = x: g = 1, always feasible
    high = np.zeros(shape)  # t = 1
    feasible_at_one = excess(high) <= 0.0
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        over = excess(middle) > 0.0
        high = np.where(over, middle, high)
        low = np.where(over, low, middle)
    return np.where(feasible_at_one, 0.0, low if feasible else high)


def _best_over_orders(log_x, log_not_x, orders, epsilons):
    """min over the given orders of log t*, with the minimising order and its ε."""
    alpha = orders[:, None]
    log_t = _solve_log_t(log_x, log_not_x, alpha, (alpha - 1.0) * epsilons[:, None])
    best = np.argmin(log_t, axis=0)
    return log_t[best, np.arange(log_x.size)], orders[best], epsilons[best]


def _best_zcdp(log_x, log_not_x, rho):
    """min over α > 1 of log t* for ε_α = ρα: golden-section search in log(α − 1).

    Any order gives a valid constraint, so an imperfect search only loosens
    the curve (pessimistic).
    """
    low = np.full(log_x.shape, math.log(1e-4))
    high = np.full(log_x.shape, math.log(1e4))
    ratio = (math.sqrt(5.0) - 1.0) / 2.0

    def value(s):
        alpha = 1.0 + np.exp(s)
        return _solve_log_t(log_x, log_not_x, alpha, (alpha - 1.0) * rho * alpha)

    left = high - ratio * (high - low)
    right = low + ratio * (high - low)
    f_left, f_right = value(left), value(right)
    for _ in range(_GOLDEN_STEPS):
        move = f_left < f_right  # the minimum lies in [low, right]
        high = np.where(move, right, high)
        low = np.where(move, low, left)
        right_new = np.where(move, left, low + ratio * (high - low))
        left_new = np.where(move, high - ratio * (high - low), right)
        f_same = np.where(move, f_left, f_right)
        evaluate_at = np.where(move, left_new, right_new)
        f_new = value(evaluate_at)
        f_left, f_right = np.where(move, f_new, f_same), np.where(move, f_same, f_new)
        left, right = left_new, right_new
    s = np.where(f_left < f_right, left, right)
    alpha = 1.0 + np.exp(s)
    return np.minimum(f_left, f_right), alpha, rho * alpha


def _reflected_delta(delta, epsilon, upward: bool):
    """1 − (1 − δ)e^ε, the δ of a line reflected across the diagonal, rounded to one side.

    Written δe^ε − (e^ε − 1): the direct form rounds 1 − δ to 1 for δ below
    1.1e-16 and then loses the difference. Either way the two terms nearly
    cancel where the result is small, so it is moved by their rounding error,
    3u·(δe^ε + e^ε − 1), and by the relative margin, up (``upward``) or down.
    """
    delta, epsilon = np.asarray(delta, dtype=float), np.asarray(epsilon, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        grown, rise = delta * np.exp(epsilon), np.expm1(epsilon)
        value = grown - rise  # −∞ where e^ε overflows (far below 0 unless δ = 1)
        value = np.where(np.isnan(value), -np.inf, value)
        error = np.where(np.isfinite(value), 3.0 * UNIT_ROUNDOFF * (grown + rise), 0.0)
    moved = value + error if upward else value - error
    margin = np.where(np.isfinite(moved), _DELTA_MARGIN * np.abs(moved), 0.0)
    return moved + margin if upward else moved - margin


def _tangent_pairs(log_x, log_not_x, log_t, alpha, epsilon_alpha) -> np.ndarray:
    """(ε, δ) guarantees from the tangents of the active constraint at each x."""
    keep = (log_t < 0.0) & (log_t > log_x) & (epsilon_alpha > 0)
    log_t, a, lx, l1x = log_t[keep], alpha[keep], log_x[keep], log_not_x[keep]
    log_u = log_t - lx
    log_v = log1m_exp(log_t) - l1x
    gap = log_v - log_u  # < 0
    log_slope = np.log((a - 1.0) / a) + log_u + log1m_exp(a * gap) - log1m_exp((a - 1.0) * gap)
    # δ = t − e^ε x, in log space.
    with np.errstate(divide="ignore"):
        log_delta = log_t + log1m_exp(np.minimum(log_slope + lx - log_t, 0.0))
    delta = np.exp(log_delta) * (1.0 + _DELTA_MARGIN)
    epsilon = log_slope.copy()
    # Tangents with slope in (−1, 0) are reflected across the diagonal (the swapped order).
    negative = epsilon < 0.0
    epsilon[negative] = -epsilon[negative]
    delta[negative] = _reflected_delta(delta[negative], epsilon[negative], upward=True)
    pairs = np.column_stack([epsilon, np.clip(delta, 0.0, 1.0)])
    return pairs[np.isfinite(pairs).all(axis=1)]


def _log_slope(log_x0, log_t0, log_x1, log_t1) -> float:
    """log((t₁ − t₀)/(x₁ − x₀)) for x₀ < x₁, t₀ < t₁ (−∞ logs: the origin)."""
    rise = log_t1 + (float(log1m_exp(log_t0 - log_t1)) if log_t0 > -np.inf else 0.0)
    run = log_x1 + (float(log1m_exp(log_x0 - log_x1)) if log_x0 > -np.inf else 0.0)
    return rise - run


def _chord_pairs(log_x, log_t) -> np.ndarray:
    """(ε, δ) of the chords of the concave hull of attained points (x_i, t_i), and (0, 0).

    Each t_i·(1 − 1e-12) is attained (feasible for every constraint: the
    margin covers their rounding), so t* ≥ t_i, and t* = 1 − f is concave:
    t* lies above the smallest concave function above the points, their
    upper concave hull. In β = 1 − t the hull's curve is an upper bound on
    the class's curve f (optimistic), and, being convex, the maximum of its
    pieces' lines: each is a line 1 − δ − e^ε α with δ ≥ 0 (the hull starts
    at the origin), and max_i f_{ε_i,δ_i} adds their reflections, above f
    too as f is symmetric. Slopes are compared in log space, so that TPRs
    far below an ulp of 1 keep their digits.
    """
    log_t = log_t + math.log1p(-_OPTIMISTIC_MARGIN)
    order = np.argsort(log_x, kind="stable")
    points = [(-np.inf, -np.inf)]  # the origin: t* ≥ 0 at x = 0
    for lx, lt in zip(log_x[order].tolist(), log_t[order].tolist(), strict=True):
        if lt <= points[-1][1] or lx <= points[-1][0]:
            continue  # no rise: the hull does not need it (t* rises through it)
        while len(points) >= 2 and _log_slope(*points[-2], *points[-1]) <= _log_slope(
            *points[-1], lx, lt
        ):
            points.pop()
        points.append((lx, lt))
    pairs = []
    for (lx0, lt0), (lx1, lt1) in itertools.pairwise(points):
        epsilon = _log_slope(lx0, lt0, lx1, lt1)
        # δ = t₀ − e^ε x₀ (the line at α = 0), ≥ 0 on a concave hull from the origin
        if lt0 == -np.inf:
            delta = 0.0
        else:
            gap = min(epsilon + lx0 - lt0, 0.0)
            delta = math.exp(lt0 + float(log1m_exp(gap))) if gap < 0.0 else 0.0
        delta *= 1.0 - _DELTA_MARGIN
        if epsilon < 0.0:  # slope in (−1, 0): the reflected line of the swapped order
            epsilon = -epsilon
            delta = float(_reflected_delta(delta, epsilon, upward=False))
        if math.isfinite(epsilon):
            pairs.append((epsilon, min(max(delta, 0.0), 1.0)))
    return np.array(pairs).reshape(-1, 2)


def _rdp_pairs(orders: np.ndarray, epsilons: np.ndarray, optimistic: bool = False):
    log_x = _log_fpr_grid()
    log_not_x = np.log1p(-np.exp(log_x))
    if optimistic:  # the feasible end at every order: attained by a member of the class
        alpha = orders[:, None]
        log_t = _solve_log_t(
            log_x, log_not_x, alpha, (alpha - 1.0) * epsilons[:, None], feasible=True
        )
        return _chord_pairs(log_x, np.min(log_t, axis=0))
    best = _best_over_orders(log_x, log_not_x, orders, epsilons)
    return _tangent_pairs(log_x, log_not_x, *best)


def _zcdp_pairs(rho: float, optimistic: bool = False) -> np.ndarray:
    log_x = _log_fpr_grid()
    log_not_x = np.log1p(-np.exp(log_x))
    best = _best_zcdp(log_x, log_not_x, rho)
    if optimistic:  # the feasible end at the best order found
        _, alpha, epsilon_alpha = best
        log_t = _solve_log_t(log_x, log_not_x, alpha, (alpha - 1.0) * epsilon_alpha, feasible=True)
        return _chord_pairs(log_x, log_t)
    return _tangent_pairs(log_x, log_not_x, *best)


def _curve_of_pairs(pairs: np.ndarray):
    from gaussdp import curves

    if pairs.size == 0:
        return curves.identity().piecewise_linear()
    return curves.from_epsilon_deltas(pairs)


@lru_cache(maxsize=64)
def _rdp_tradeoff_cached(
    orders: tuple[float, ...], epsilons: tuple[float, ...], optimistic: bool = False
):
    return _curve_of_pairs(_rdp_pairs(np.asarray(orders), np.asarray(epsilons), optimistic))


@lru_cache(maxsize=64)
def _zcdp_tradeoff_cached(rho: float, optimistic: bool = False):
    return _curve_of_pairs(_zcdp_pairs(rho, optimistic))


def rdp_tradeoff(orders, epsilons):
    """The trade-off curve of the class of mechanisms with these Rényi-DP bounds (below it).

    The optimal conversion of the module docstring; every δ it implies is an
    upper bound for the class.

    Examples
    --------
    >>> from gaussdp import gdp
    >>> f = rdp_tradeoff([2.0, 4.0, 8.0, 16.0, 32.0], [1.0, 2.0, 4.0, 8.0, 16.0])  # ε(α) = α/2
    >>> bool(f.beta(0.1) <= gdp.beta(1.0, 0.1))  # 1/2-zCDP is weaker than 1-GDP
    True
    """
    rdp = m.RenyiDP(orders, epsilons)
    return _rdp_tradeoff_cached(rdp.orders, rdp.epsilons)


def zcdp_tradeoff(rho: float):
    """The trade-off curve of ρ-zCDP (optimal conversion, on 120 orders; below the exact one).

    Examples
    --------
    >>> f = zcdp_tradeoff(0.5)
    >>> round(float(f.epsilon(1e-5)), 2)
    4.73
    """
    rho = m.ZCDP(rho).rho
    return _zcdp_tradeoff_cached(rho)


# ---------------------------------------------------------------------------
# Group privacy: pushing the group into the description
# ---------------------------------------------------------------------------


def expand_group(group: m.Group) -> m.Mechanism:
    """An equivalent (or dominating) description with the group pushed inwards.

    See :class:`gaussdp.mechanisms.Group` for the rules; what cannot be
    simplified stays a ``Group`` leaf, accounted by Theorem 2.14 of Dong,
    Roth & Su on its curve.

    Examples
    --------
    >>> from gaussdp.mechanisms import Composition, Gaussian, Group, PureDP
    >>> print(expand_group(Group(Composition([Gaussian(2.0), PureDP(0.5)]), 3)))
    Composition of 2: Gaussian(σ=2, Δ=3), PureDP(ε=1.5)
    """
    k = group.group_size
    inner = group.mechanism
    if k == 1:
        return inner
    if isinstance(inner, m.Group):
        return expand_group(m.Group(inner.mechanism, k * inner.group_size))
    if inner.expand() is not None:  # DP-SGD, a matrix mechanism: exactly another description
        inner = inner.expand()
    if isinstance(inner, m.Composition):
        return m.Composition([expand_group(m.Group(part, k)) for part in inner.mechanisms])
    if isinstance(inner, m.Repeated):
        return m.Repeated(expand_group(m.Group(inner.mechanism, k)), inner.times)
    if isinstance(inner, m.Gaussian):
        return m.Gaussian(inner.sigma, k * inner.sensitivity)
    if isinstance(inner, m.Laplace):
        return m.Laplace(inner.scale, k * inner.sensitivity)
    if isinstance(inner, m.GDP):
        return m.GDP(k * inner.mu)
    if isinstance(inner, (m.PureDP, m.RandomizedResponse)):
        return m.PureDP(k * inner.epsilon)
    if isinstance(inner, m.ZCDP):
        # k²ρ-zCDP from above; the k²ρ class is no group of the ρ class: the lower bound is
        # the Gaussian member's group, μ = k·√(2ρ) (ComposedZCDP)
        return ComposedZCDP(k * k * inner.rho)
    return m.Group(inner, k)


# ---------------------------------------------------------------------------
# Leaves: GDP to Gaussian, and RDP-type guarantees composed by adding
# ---------------------------------------------------------------------------


def simplify_leaves(
    leaves: dict[m.Mechanism, int], neighbouring: m.Neighbouring
) -> dict[m.Mechanism, int]:
    """Rewrite the accountant's leaves (mechanism → count) exactly.

    * ``GDP(μ)`` becomes the Gaussian with the same pair under the relation
      in use (``Gaussian(1/μ)``, or ``Gaussian(1/μ, sensitivity=1/2)`` under
      REPLACE, whose shift doubles), so GDP and Gaussian mechanisms compose
      in closed form.
    * ZCDP and RenyiDP leaves compose by adding their Rényi bounds (exact
      for the classes; Mironov 2017, Proposition 1): all ZCDP leaves become
      one ZCDP(Σρ), and if there are RenyiDP leaves with orders in common,
      everything becomes one RenyiDP on those orders.
    """
    out: dict[m.Mechanism, int] = {}
    rho = 0.0
    parts = 0  # zCDP and Rényi-DP guarantees composed (with their counts)
    composed = False  # a part already stands for several (or a group of) guarantees
    renyi: list[tuple[m.RenyiDP, int]] = []

    def add(leaf: m.Mechanism, count: int) -> None:
        out[leaf] = out.get(leaf, 0) + count

    for leaf, count in leaves.items():
        if isinstance(leaf, m.GDP):
            sensitivity = 0.5 if neighbouring is m.Neighbouring.REPLACE else 1.0
            sigma = math.inf if leaf.mu == 0 else 1.0 / leaf.mu
            add(m.Gaussian(sigma, sensitivity), count)
        elif isinstance(leaf, m.ZCDP):
            rho += count * leaf.rho
            parts += count
            composed |= isinstance(leaf, ComposedZCDP)
        elif isinstance(leaf, m.RenyiDP):
            if any(e > 0 for e in leaf.epsilons):
                renyi.append((leaf, count))
                parts += count
                composed |= isinstance(leaf, ComposedRenyiDP)
        else:
            add(leaf, count)
    # A class's own curve bounds it from below only alone (each of its points is attained
    # by some member, not all by one): composed with anything, or summed, the lower bound
    # is Gaussian members (ComposedZCDP, ComposedRenyiDP).
    alone = parts == 1 and not composed and not out
    if renyi:
        common = set(renyi[0][0].orders)
        for leaf, _ in renyi[1:]:
            common &= set(leaf.orders)
        if common:
            orders = sorted(common)
            totals = np.array([rho * a for a in orders])
            for leaf, count in renyi:
                table = dict(zip(leaf.orders, leaf.epsilons, strict=True))
                totals += count * np.array([table[a] for a in orders])
            if alone:
                add(m.RenyiDP(orders, totals.tolist()), 1)
                return out
            # each part's largest Gaussian member: μ² = min over its orders of 2ε(α)/α
            squared = 2.0 * rho + sum(count * _member_mu(leaf) ** 2 for leaf, count in renyi)
            add(ComposedRenyiDP(orders, totals.tolist(), math.sqrt(squared)), 1)
            return out
        for leaf, count in renyi:  # no order in common: each composed on its own
            summed = [count * e for e in leaf.epsilons]
            add(ComposedRenyiDP(leaf.orders, summed, math.sqrt(count) * _member_mu(leaf)), 1)
    if rho > 0:
        add(m.ZCDP(rho) if alone else ComposedZCDP(rho), 1)
    return out


def _member_mu(leaf: m.RenyiDP) -> float:
    """μ of the largest Gaussian meeting a Rényi-DP guarantee: √(min over α of 2ε(α)/α)."""
    if isinstance(leaf, ComposedRenyiDP):
        return leaf.member_mu
    return math.sqrt(min(2.0 * e / a for a, e in zip(leaf.orders, leaf.epsilons, strict=True)))


# ---------------------------------------------------------------------------
# Pairs
# ---------------------------------------------------------------------------


# Bound on the rounding of a difference of two β's near 1 (two ulps of 1.0).
_BETA_ROUNDING = 2.3e-16


def _pair_of_curve(curve) -> AtomicLoss:
    """The pair of a piecewise-linear curve, made safe against the rounding of β near 1.

    Each atom's P-mass is a difference of two β's, which near β = 1 may be off
    by two ulps of 1.0; summed over the atoms above ε that could understate
    δ(ε) in the far tail. So every atom's P-mass is raised by 2.3e-16 (its
    Q-mass kept, its loss recomputed): δ(ε) = Σ_{l_i > ε} (P_i − e^ε Q_i) + P(∞)
    can then only grow. The far tail where 1 − β is below an ulp of 1.0 (at
    most 2.3e-16 of P-mass) is lost to rounding, so that much is put at +∞.
    (The P-masses then sum to 1 + (n + 1)·2.3e-16, immaterial.)
    """
    from gaussdp.curves.numerical import pair_of_curve

    pair = pair_of_curve(curve)
    if pair.losses.size == 0:
        return pair
    p = pair.p_masses + _BETA_ROUNDING
    q = pair.q_masses
    with np.errstate(divide="ignore"):
        losses = np.where(q > 0, np.log(p) - np.log(np.where(q > 0, q, 1.0)), pair.losses)
    return AtomicLoss.from_atoms(losses, p, q, min(pair.infinity_mass + _BETA_ROUNDING, 1.0))


def _optimistic_pair_of_curve(curve) -> AtomicLoss:
    """The pair of a piecewise-linear curve above the exact one, rounded the other way.

    As :func:`_pair_of_curve`, but every atom's P-mass is lowered by 2.3e-16
    (and P(+∞) with them), so that δ(ε) can only shrink: a pair dominated by
    the mechanism's, for the lower bounds.
    """
    from gaussdp.curves.numerical import pair_of_curve

    pair = pair_of_curve(curve)
    if pair.losses.size == 0:
        return pair
    p = np.maximum(pair.p_masses - _BETA_ROUNDING, 0.0)
    q = pair.q_masses
    keep = (p > 0.0) & (q > 0.0)
    losses = np.log(p[keep]) - np.log(q[keep])
    infinity = max(pair.infinity_mass - _BETA_ROUNDING, 0.0)
    return AtomicLoss.from_atoms(losses, p[keep], q[keep], infinity)


def _interval_pairs(s, deltas, a, b) -> np.ndarray:
    """The pairs (log s, δ_low(s)) of every interval [s_i, s_{i+1}], in order (see below).

    On each interval δ_low is the largest of three lines: δ = δ_{i+1}, and the secants of
    the intervals on either side, extended (where they exist). Its points: both ends,
    then the crossings of the lines (0 with 1, 0 with 2, 1 with 2) strictly inside.
    """
    intervals = s.size - 1
    index = np.arange(intervals)
    # lines 0, 1, 2 of each interval: intercepts and slopes (an absent line is −∞, flat)
    intercepts = np.full((intervals, 3), -np.inf)
    slopes = np.zeros((intervals, 3))
    present = np.zeros((intervals, 3), dtype=bool)
    intercepts[:, 0], present[:, 0] = deltas[1:], True
    left, right = index >= 1, index + 2 <= intervals
    intercepts[left, 1], slopes[left, 1], present[left, 1] = a[:-1], b[:-1], True
    intercepts[right, 2], slopes[right, 2], present[right, 2] = a[1:], b[1:], True
    points = np.empty((intervals, 5))
    valid = np.zeros((intervals, 5), dtype=bool)
    points[:, 0], points[:, 1] = s[:-1], s[1:]
    valid[:, :2] = True
    with np.errstate(divide="ignore", invalid="ignore"):
        for column, (first, second) in enumerate(((0, 1), (0, 2), (1, 2)), start=2):
            a1, b1 = intercepts[:, first], slopes[:, first]
            a2, b2 = intercepts[:, second], slopes[:, second]
            crossing = (a2 - a1) / (b1 - b2)
            points[:, column] = crossing
            valid[:, column] = (
                present[:, first]
                & present[:, second]
                & (b1 != b2)
                & (s[:-1] < crossing)
                & (crossing < s[1:])
            )
        values = intercepts[:, :, None] + slopes[:, :, None] * points[:, None, :]
        values = np.where(present[:, :, None], values, -np.inf)
        low = np.max(values, axis=1)
        return np.column_stack([np.log(points[valid]), low[valid]])


def _optimistic_profile_curve(profile, pessimistic):
    """A curve above sup_ε f_{ε,δ(ε)}, from the ε at which ``pessimistic`` was built.

    In s = e^ε every privacy profile δ(s) = E_P[(1 − s·e^{−L})_+] is convex
    and non-increasing. So on [s_i, s_{i+1}] it lies above the secants of the
    neighbouring intervals, extended, and above δ(s_{i+1}): above the
    largest of those three lines, δ_low. For each α the exact curve there is
    sup_s 1 − δ(s) − sα ≤ sup_s 1 − δ_low(s) − sα, a concave piecewise-linear
    function of s whose maximum is at an end or a crossing of the lines: so
    the curve of the pairs (log s, δ_low(s)) at the grid points and the
    crossings, max f_{ε,δ} (symmetric, as the exact curve is), bounds it
    from above (beyond the last point, δ ≥ 0 and the last secant). The ε are
    those of ``pessimistic``'s segments (slopes −e^{±ε}), where
    :func:`gaussdp.curves.from_profile` refined its grid.
    """
    from gaussdp import curves

    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = -np.diff(pessimistic.betas) / np.diff(pessimistic.alphas)
        epsilons = np.abs(np.log(slopes[slopes > 0.0]))
    # below e^ε's overflow (a profile there is 0 to double precision anyway)
    epsilons = epsilons[np.isfinite(epsilons) & (epsilons < 700.0)]
    epsilons = np.unique(np.concatenate(([0.0], epsilons)))
    evaluate = profile.delta if hasattr(profile, "delta") else profile
    deltas = np.asarray(evaluate(epsilons), dtype=float).reshape(epsilons.shape)
    deltas = np.minimum.accumulate(deltas)  # a profile does not rise
    s = np.exp(epsilons)
    pairs = [np.column_stack([epsilons, deltas])]
    n = s.size
    # secant k through (s_k, δ_k), (s_{k+1}, δ_{k+1}): δ = a_k + b_k·s (NaN where two ε
    # round to one s: that interval is a point, and its rows are dropped below)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.diff(deltas) / np.diff(s)
        a = deltas[:-1] - b * s[:-1]
    if n >= 2:
        pairs.append(_interval_pairs(s, deltas, a, b))
    if n >= 2 and b[-1] < 0.0:  # beyond the last point: the last secant, down to δ = 0
        pairs.append(np.array([[math.log(-a[-1] / b[-1]), 0.0]]))
    else:
        pairs.append(np.array([[epsilons[-1], 0.0]]))
    table = np.concatenate(pairs)
    table[:, 1] = np.clip(table[:, 1] * (1.0 - _DELTA_MARGIN), 0.0, 1.0)
    table = table[np.isfinite(table).all(axis=1) & (table[:, 0] >= 0.0)]
    return curves.from_epsilon_deltas(table)


def _curve_of_guarantee(mechanism: m.Mechanism, optimistic: bool = False):
    """The guarantee's curve below the exact one (above it, with ``optimistic``)."""
    from gaussdp import curves

    if isinstance(mechanism, m.ZCDP):
        if optimistic:
            return _zcdp_tradeoff_cached(mechanism.rho, True)
        return zcdp_tradeoff(mechanism.rho)
    if isinstance(mechanism, m.RenyiDP):
        if optimistic:
            return _rdp_tradeoff_cached(mechanism.orders, mechanism.epsilons, True)
        return rdp_tradeoff(mechanism.orders, mechanism.epsilons)
    if isinstance(mechanism, m.Profile):
        profile = mechanism.delta
    elif isinstance(mechanism, m.NoiseEquation):
        from gaussdp import gdpt

        profile = gdpt.from_noise_equation(
            mechanism.noise_fn, mechanism.sigma, log_delta=mechanism.log_delta
        )
    else:
        raise InvalidParameterError(  # pragma: no cover - callers dispatch on HANDLED
            f"no curve for {type(mechanism).__name__}"
        )
    pessimistic = curves.from_profile(profile)
    return _optimistic_profile_curve(profile, pessimistic) if optimistic else pessimistic


def base_loss(mechanism: m.Mechanism, factor: float) -> PrivacyLoss | None:
    """The symmetric pair of a guarantee (for subsampling), or None if not one of ours.

    ``factor`` is ignored: guarantees are taken as stated for the relation in use.
    """
    if isinstance(mechanism, m.GDP):
        return GaussianLoss(mechanism.mu) if mechanism.mu > 0 else _identity_loss()
    if isinstance(mechanism, _CURVE_GUARANTEES):
        return _pair_of_curve(_curve_of_guarantee(mechanism))
    return None


def _identity_loss() -> AtomicLoss:
    return AtomicLoss.from_atoms([0.0], [1.0], [1.0])


def dominating_losses(
    mechanism: m.Mechanism,
    neighbouring: m.Neighbouring,
    *,
    tradeoff_of: Callable[[m.Mechanism, m.Neighbouring], TradeOff] | None = None,
) -> tuple[PrivacyLoss, PrivacyLoss]:
    """The (remove, add) pairs of a description in :data:`HANDLED`.

    Group and Parallel account their parts with ``tradeoff_of(part,
    neighbouring)`` — the pessimistic trade-off curve of the part under the
    same relation, which the accountant passes down (:func:`gaussdp.account`
    followed by :meth:`~gaussdp.accountant.Accounting.tradeoff`) — and use the
    pair of the resulting (symmetric) curve for both directions.

    Raises
    ------
    InvalidParameterError
        For a Group or Parallel leaf when no ``tradeoff_of`` is given.
    """
    if isinstance(mechanism, (ComposedZCDP, ComposedRenyiDP)):
        # The class of the summed bounds from above; Gaussians that meet the parts from
        # below (the class holds mechanisms that are no composition of the parts).
        upper = _pair_of_curve(_curve_of_guarantee(mechanism))
        mu = (
            math.sqrt(2.0 * mechanism.rho)
            if isinstance(mechanism, ComposedZCDP)
            else mechanism.member_mu
        )
        lower = GaussianLoss(mu) if mu > 0 else REVEALS_NOTHING
        bracket = BracketedLoss(upper=upper, lower=lower, caveat=COMPOSED_CLASS_CAVEAT)
        return bracket, bracket
    if isinstance(mechanism, _CURVE_GUARANTEES):
        # The upper bounds read the curve below the exact one; the lower bounds one above
        # it, so that both stay certified (not one pair rounded one way for both).
        upper = _pair_of_curve(_curve_of_guarantee(mechanism))
        lower = _optimistic_pair_of_curve(_curve_of_guarantee(mechanism, optimistic=True))
        bracket = BracketedLoss(upper=upper, lower=lower)
        return bracket, bracket
    loss = base_loss(mechanism, 1.0)
    if loss is not None:
        return loss, loss
    if isinstance(mechanism, (m.Group, m.Parallel)) and tradeoff_of is None:
        raise InvalidParameterError(
            f"tradeoff_of must be given for {type(mechanism).__name__}: its parts are "
            "accounted by the accountant that calls this (gaussdp.account)"
        )
    if isinstance(mechanism, m.Group):
        expanded = expand_group(mechanism)
        if not isinstance(expanded, m.Group):
            pair = _pair_of_curve(tradeoff_of(expanded, neighbouring))
            return pair, pair
        inner = tradeoff_of(expanded.mechanism, neighbouring)
        pair = _pair_of_curve(inner.group(expanded.group_size))
        # Theorem 2.14 bounds group privacy from above only: the lower bounds leave it out.
        bracket = BracketedLoss(upper=pair, lower=REVEALS_NOTHING, caveat=GROUP_CAVEAT)
        return bracket, bracket
    if isinstance(mechanism, m.Parallel):
        from gaussdp import curves

        parts = [tradeoff_of(part, neighbouring) for part in mechanism.mechanisms]
        pair = _pair_of_curve(curves.lower_envelope(parts))
        # The parts' curves are upper bounds (and the pair rounds them further down): a
        # lower bound read from this pair would not be certified, so there is none.
        bracket = BracketedLoss(upper=pair, lower=REVEALS_NOTHING, caveat=PARALLEL_CAVEAT)
        return bracket, bracket
    raise InvalidParameterError(  # pragma: no cover - callers dispatch on HANDLED
        f"{type(mechanism).__name__} has no dominating pair here"
    )
