"""Constructors of trade-off curves: closed forms, points, profiles, privacy losses."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from gaussdp._validation import InvalidParameterError, check_integer, check_real
from gaussdp.curves import _geometry
from gaussdp.curves._closed import EpsilonDelta, Gaussian, Laplace
from gaussdp.curves._profile import (
    PrivacyProfile,
    _call_vectorised,
    _check_privacy_loss,
    _check_values,
)
from gaussdp.curves._tradeoff import (
    DEFAULT_TOLERANCE,
    TAIL_RELATIVE_TOLERANCE,
    PiecewiseLinear,
    TradeOff,
    provides,
)

__all__ = [
    "epsilon_delta",
    "from_directions",
    "from_epsilon_deltas",
    "from_points",
    "from_privacy_loss",
    "from_profile",
    "gaussian",
    "identity",
    "laplace",
    "lower_envelope",
    "randomized_response",
]

# Adaptive ε grids for from_profile stop at these sizes.
_PROFILE_INITIAL = 257
_PROFILE_MAX_EPSILONS = 1 << 16
#: from_profile does not halve intervals of ε narrower than this (times max(ε, 1)): lines
#: whose slopes e^ε differ by less meet where rounding puts them, and halving such an
#: interval again and again (2,000 rounds on the profile of a pure-DP curve with a floor
#: of 1e-11, 34 s) changes the curve by less than that rounding.
_PROFILE_MIN_STEP = 1e-9
_PROFILE_MAX_EPSILON = 512.0
_PROFILE_TAIL_FLOOR = 1e-300


# ---------------------------------------------------------------------------
# Closed forms
# ---------------------------------------------------------------------------


def gaussian(mu) -> Gaussian:
    r"""G_μ(α) = Φ(Φ⁻¹(1 − α) − μ): the curve of μ-GDP (Dong, Roth & Su, eq. 5).

    Examples
    --------
    >>> from gaussdp import curves
    >>> round(curves.gaussian(1.0).beta(0.05), 6)
    0.740489
    """
    return Gaussian(mu)


def laplace(mu) -> Laplace:
    """T(Lap(0, 1), Lap(μ, 1)), the Laplace mechanism's curve; see :class:`Laplace`.

    Examples
    --------
    >>> from gaussdp import curves
    >>> round(curves.laplace(1.0).advantage(), 6)
    0.393469
    """
    return Laplace(mu)


def epsilon_delta(epsilon, delta=0.0) -> EpsilonDelta:
    r"""f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)} (Dong, Roth & Su, eq. 4).

    Examples
    --------
    >>> from gaussdp import curves
    >>> round(curves.epsilon_delta(1.0, 1e-5).beta(0.2), 6)
    0.456334
    """
    return EpsilonDelta(epsilon, delta)


def identity() -> Gaussian:
    """Id(α) = 1 − α: perfect privacy (G_0)."""
    return Gaussian(0.0)


def randomized_response(epsilon, categories: int = 2) -> TradeOff:
    r"""The curve of k-ary randomized response with parameter ε.

    Each record's value is reported truthfully with probability
    e^ε/(e^ε + k − 1) and as each other value with probability
    1/(e^ε + k − 1). Changing one record from a to b gives a pair with
    privacy losses +ε (output a), −ε (output b) and 0 (any other output). For
    k = 2 its curve is exactly f_{ε,0} (Kairouz et al. 2017; Dong, Roth & Su
    §3.3); for k > 2 it lies above f_{ε,0} and is returned as the exact
    piecewise-linear curve of that pair.

    Parameters
    ----------
    epsilon : float
        ε ∈ [0, ∞].
    categories : int
        k ≥ 2.

    Examples
    --------
    >>> from gaussdp import curves
    >>> curves.randomized_response(1.0)
    EpsilonDelta(epsilon=1.0, delta=0.0)
    >>> round(curves.randomized_response(1.0, categories=4).beta(0.3), 6)
    0.399511
    """
    eps = float(check_real("epsilon", epsilon, low=0.0, high=math.inf))
    k = check_integer("categories", categories, low=2)
    if k == 2 or math.isinf(eps):
        return EpsilonDelta(eps, 0.0)
    # Masses divided by Z = e^ε + k − 1, computed as e^{−log Z} to avoid overflow.
    log_norm = eps + math.log1p((k - 1) * math.exp(-eps))
    p_truth = math.exp(eps - log_norm)
    p_other = math.exp(-log_norm)
    losses = np.array([-eps, 0.0, eps])
    probabilities = np.array([p_other, (k - 2) * p_other, p_truth])
    return from_privacy_loss(losses, probabilities)


# ---------------------------------------------------------------------------
# From points and (ε, δ) pairs
# ---------------------------------------------------------------------------


def from_points(alphas, betas) -> PiecewiseLinear:
    """The lower convex envelope of points (α_i, β_i), made a valid trade-off function.

    The result is the largest convex function below the given points and
    the corners (0, 1) and (1, 0) that every trade-off function passes
    under: the piecewise-linear curve through the points where they are
    convex (it is exact for the breakpoints of a piecewise-linear curve, e.g.
    an accountant's). If the points are samples of a smooth convex curve the
    chords between them lie *above* that curve, so use the smooth curve's own
    :meth:`TradeOff.piecewise_linear` for a pessimistic version.

    Parameters
    ----------
    alphas, betas : array_like
        Points sorted by increasing α (ties allowed) with non-increasing β,
        α, β ∈ [0, 1] and β ≤ 1 − α.

    Raises
    ------
    InvalidParameterError
        Naming the first offending point.

    Examples
    --------
    >>> from gaussdp import curves
    >>> f = curves.from_points([0.0, 0.1, 0.5], [0.8, 0.4, 0.1])
    >>> round(f.beta(0.3), 6)
    0.25
    """
    try:
        a = np.asarray(alphas, dtype=float)
        b = np.asarray(betas, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError("alphas and betas must be sequences of real numbers") from None
    if a.ndim != 1 or b.ndim != 1 or a.size != b.size or a.size == 0:
        raise InvalidParameterError(
            "alphas and betas must be 1-D sequences of the same non-zero length, "
            f"got shapes {a.shape} and {b.shape}"
        )

    def point(i: int) -> str:
        return f"point {i} (alpha={float(a[i])!r}, beta={float(b[i])!r})"

    for i in range(a.size):
        if math.isnan(a[i]) or math.isnan(b[i]):
            raise InvalidParameterError(f"{point(i)} is not a number")
        if not 0.0 <= a[i] <= 1.0:
            raise InvalidParameterError(f"{point(i)}: alpha must be in [0, 1]")
        if not 0.0 <= b[i] <= 1.0:
            raise InvalidParameterError(f"{point(i)}: beta must be in [0, 1]")
        if b[i] > 1.0 - a[i] + 1e-12:
            raise InvalidParameterError(
                f"{point(i)}: a trade-off curve has beta <= 1 - alpha (Proposition 1), "
                f"but beta exceeds 1 - alpha = {float(1.0 - a[i])!r}"
            )
        if i and a[i] < a[i - 1]:
            raise InvalidParameterError(
                f"{point(i)}: points must be sorted by increasing alpha, but alpha "
                f"decreases from {float(a[i - 1])!r} at point {i - 1}"
            )
        if i and b[i] > b[i - 1]:
            raise InvalidParameterError(
                f"{point(i)}: beta must not increase along the curve, but it rises "
                f"from {float(b[i - 1])!r} at point {i - 1}"
            )
    return PiecewiseLinear._from_vertices(a, b)


def _lines_of_pairs(epsilons: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two non-trivial lines of each f_{ε,δ} (finite ε, δ < 1)."""
    keep = np.isfinite(epsilons) & (deltas < 1.0)
    e, d = epsilons[keep], deltas[keep]
    head = 1.0 - d
    intercepts = np.concatenate((head, np.exp(-e) * head, [0.0]))
    slopes = np.concatenate((-np.exp(e), -np.exp(-e), [0.0]))
    return intercepts, slopes


def from_epsilon_deltas(pairs) -> PiecewiseLinear:
    r"""The curve of a mechanism that is (ε_i, δ_i)-DP for every i: sup_i f_{ε_i,δ_i}.

    Proposition 5 of Dong, Roth & Su (dual to primal); exact (the maximum of
    the piecewise-linear f_{ε_i,δ_i}), and symmetric.

    Parameters
    ----------
    pairs : iterable of (ε, δ)
        ε ∈ [0, ∞], δ ∈ [0, 1].

    Examples
    --------
    >>> from gaussdp import curves
    >>> f = curves.from_epsilon_deltas([(1.0, 1e-3), (3.0, 1e-6)])
    >>> round(f.beta(1e-3), 6)
    0.996282
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
    intercepts, slopes = _lines_of_pairs(epsilons, deltas)
    x, y, _ = _geometry.upper_envelope(intercepts, slopes)
    return PiecewiseLinear._from_vertices(x, y)


# ---------------------------------------------------------------------------
# From a privacy profile
# ---------------------------------------------------------------------------


def _profile_function(profile):
    if isinstance(profile, PrivacyProfile):
        return profile._evaluate
    if isinstance(profile, TradeOff):
        raise InvalidParameterError(
            "from_profile takes a privacy profile, got a TradeOff curve (it is already a curve)"
        )
    if hasattr(profile, "delta") and callable(profile.delta):
        return PrivacyProfile(profile.delta)._evaluate
    if callable(profile):
        return PrivacyProfile(profile)._evaluate
    raise InvalidParameterError(
        "profile must be a PrivacyProfile, an object with .delta(epsilon), or a "
        f"callable epsilon -> delta, got {type(profile).__name__}"
    )


def _envelope_needing_refinement(epsilons: np.ndarray, deltas: np.ndarray, tolerance: float):
    """Upper envelope of the profile lines, and which ε border a too-large gap.

    At each interior vertex of the envelope the chord between the
    neighbouring vertices lies above the true curve (when δ is exact, each
    line touches the curve inside its own segment), so chord − envelope
    bounds the error there.
    """
    intercepts, slopes = _lines_of_pairs(epsilons, deltas)
    # Lines 0..m-1 are the steep family, m..2m-1 the shallow one, 2m the zero line.
    kept = np.nonzero(np.isfinite(epsilons) & (deltas < 1.0))[0]
    owner = np.concatenate((kept, kept, [-1]))
    x, y, active = _geometry.upper_envelope(intercepts, slopes)
    refine = np.zeros(epsilons.size, dtype=bool)
    if x.size >= 3:
        width = x[2:] - x[:-2]
        # Coincident neighbours (width 0) leave nothing between them to refine: chord = y.
        share = np.divide(x[1:-1] - x[:-2], width, out=np.zeros_like(width), where=width > 0)
        chord = np.where(width > 0, y[:-2] + (y[2:] - y[:-2]) * share, y[1:-1])
        # The TPR 1 − y is at least |slope|·x by convexity, which keeps its digits.
        tpr = np.maximum(1.0 - y[1:-1], -slopes[active[:-1]] * x[1:-1])
        tail = np.minimum(tpr, y[1:-1])
        # Below a few ulps of y (and of x, times the slope) the gap is rounding noise.
        noise = 8.0 * np.finfo(float).eps * (y[1:-1] - slopes[active[:-1]] * x[1:-1])
        floor = np.maximum(_PROFILE_TAIL_FLOOR, noise)
        allowed = np.minimum(tolerance, np.maximum(TAIL_RELATIVE_TOLERANCE * tail, floor))
        too_large = (chord - y[1:-1]) > allowed
        for side in (active[:-1], active[1:]):
            owners = owner[side][too_large]
            refine[owners[owners >= 0]] = True
    return x, y, refine


@provides("from_profile")
def from_profile(profile, *, epsilons=None, tolerance=None) -> PiecewiseLinear:
    r"""The trade-off curve of a privacy profile: f = sup_{ε ≥ 0} f_{ε, δ(ε)}.

    Proposition 5 of Dong, Roth & Su (with Lemma 23 of the PLD lecture
    notes): a mechanism that is (ε, δ(ε))-DP for all ε is f-DP for this f,
    which is symmetric; for the profile of a symmetric curve it returns that
    curve (Proposition 6), for the one-direction profile of an asymmetric g
    it returns min{g, g⁻¹}** (Proposition 8).

    The supremum is taken over a finite set of ε, so the result lies *below*
    the exact curve (pessimistic) for any choice of grid. With ``epsilons``
    given, exactly those are used. Otherwise the grid spans [0, ε_max]
    (ε_max the first power of two where δ underflows, at most 512) and is
    refined where the curve bends: at each vertex of the current curve the
    chord of the neighbouring vertices bounds the true curve from above
    when δ is the exact profile, and grid intervals are halved until that
    gap is at most ``tolerance`` (default 1e-8; 1e-5 relative in the tails).

    Parameters
    ----------
    profile : PrivacyProfile, object with ``.delta(epsilon)``, or callable
        The privacy profile (valid upper bounds δ(ε) give a valid curve).
    epsilons : array_like, optional
        The ε at which to evaluate the profile.
    tolerance : float, optional
        Target gap for the adaptive grid (default ``DEFAULT_TOLERANCE``).

    Examples
    --------
    >>> from gaussdp import curves, gdp
    >>> f = curves.from_profile(lambda eps: gdp.delta(1.0, eps))
    >>> abs(f.beta(0.1) - gdp.beta(1.0, 0.1)) < 1e-8
    True
    """
    evaluate = _profile_function(profile)
    if epsilons is not None:
        grid = np.unique(check_real("epsilons", epsilons, low=0.0, high=math.inf).ravel())
        if grid.size == 0:
            raise InvalidParameterError("epsilons must not be empty")
        values = _check_values(_call_vectorised(evaluate, grid), grid)
        intercepts, slopes = _lines_of_pairs(grid, values)
        x, y, _ = _geometry.upper_envelope(intercepts, slopes)
        return PiecewiseLinear._from_vertices(x, y)
    tol = (
        DEFAULT_TOLERANCE
        if tolerance is None
        else float(check_real("tolerance", tolerance, low=0.0, high=1.0, low_open=True))
    )
    top = 1.0
    while top < _PROFILE_MAX_EPSILON:
        if float(evaluate(np.array([top]))[0]) <= _PROFILE_TAIL_FLOOR:
            break
        top *= 2.0
    grid = np.linspace(0.0, top, _PROFILE_INITIAL)
    values = evaluate(grid)
    while True:
        x, y, refine = _envelope_needing_refinement(grid, values, tol)
        bad = np.nonzero(refine)[0]
        if bad.size == 0 or grid.size >= _PROFILE_MAX_EPSILONS:
            break
        left = np.clip(bad - 1, 0, grid.size - 1)
        right = np.clip(bad + 1, 0, grid.size - 1)
        # Intervals narrower than _PROFILE_MIN_STEP (relative) are not halved: there the
        # lines are parallel to 1e-9 and the gap measured is their intersections' rounding.
        wide = _PROFILE_MIN_STEP * np.maximum(np.abs(grid[bad]), 1.0)
        new = np.concatenate(
            (
                (0.5 * (grid[left] + grid[bad]))[grid[bad] - grid[left] > wide],
                (0.5 * (grid[bad] + grid[right]))[grid[right] - grid[bad] > wide],
            )
        )
        new = np.setdiff1d(np.unique(new), grid)
        if new.size == 0:
            break
        new = new[: _PROFILE_MAX_EPSILONS - grid.size]
        new_values = evaluate(new)
        grid = np.concatenate((grid, new))
        values = np.concatenate((values, new_values))
        order = np.argsort(grid)
        grid, values = grid[order], values[order]
    return PiecewiseLinear._from_vertices(x, y)


# ---------------------------------------------------------------------------
# From a discrete privacy-loss distribution (the accountant's interface)
# ---------------------------------------------------------------------------


def _from_masses(p_mass: np.ndarray, q_mass: np.ndarray) -> PiecewiseLinear:
    """The exact curve of atoms sorted by *decreasing* privacy loss.

    Breakpoint j decides "P" on the j atoms of largest loss (and on the
    atoms at +∞): α_j is their Q-mass (prefix sums from the top), β_j the
    P-mass of the remaining finite atoms (suffix sums from the bottom), so
    both small ends keep full relative precision.
    """
    alphas = np.concatenate(([0.0], np.cumsum(q_mass)))
    betas = np.concatenate((np.cumsum(p_mass[::-1])[::-1], [0.0]))
    return PiecewiseLinear._from_vertices(np.minimum(alphas, 1.0), betas)


def from_privacy_loss(losses, probabilities, infinity_mass=0.0) -> PiecewiseLinear:
    r"""The exact trade-off curve of a discrete privacy-loss distribution.

    Conventions (used throughout :mod:`gaussdp.curves`). P is the output
    distribution on the data set *with* the record, Q *without* it; the
    privacy loss is L = log(dP/dQ). ``probabilities[i]`` is the P-mass of
    loss ``losses[i]``, its Q-mass is ``probabilities[i]·exp(−losses[i])``,
    ``infinity_mass`` is the P-mass at L = +∞ (outputs impossible under Q),
    and Q-mass not accounted for sits at L = −∞. A membership attack says
    "member" on some outputs; α (FPR) is its Q-probability, β (FNR) the
    P-probability that it says "non-member". With these conventions the
    curve and the profile δ(ε) = P(L > ε) − e^ε Q(L > ε) + infinity_mass are
    exact duals, δ(ε) = 1 + f*(−e^ε) (Proposition 6), and:

    * mass at +∞ makes the curve start below 1: f(0) = 1 − infinity_mass
      (an attack that is never wrong on those outputs);
    * mass at −∞ makes the curve reach 0 before α = 1, at α = Q(L > −∞).

    The curve is piecewise linear with a breakpoint after each atom, taken
    in order of decreasing loss (Neyman–Pearson; Kulynych et al. 2024;
    Gomez et al. 2025, Theorem A.10): the segment of atom i has slope
    −e^{l_i}. P-mass missing from probabilities + infinity_mass (a total
    below 1) is treated as mass at +∞, which is pessimistic.

    Parameters
    ----------
    losses : array_like
        Finite privacy losses (any order; ties allowed).
    probabilities : array_like
        Their P-masses, non-negative.
    infinity_mass : float
        P-mass at loss +∞.

    Examples
    --------
    >>> from gaussdp import curves
    >>> import math
    >>> eps = 1.0
    >>> q = math.exp(eps) / (1 + math.exp(eps))
    >>> f = curves.from_privacy_loss([eps, -eps], [q, 1 - q])   # randomized response
    >>> round(f.beta(0.1), 6), round(curves.epsilon_delta(eps).beta(0.1), 6)
    (0.728172, 0.728172)
    """
    loss, p_mass, q_mass, infinity = _check_privacy_loss(losses, probabilities, infinity_mass)
    order = np.argsort(-loss, kind="stable")
    curve = _from_masses(p_mass[order], q_mass[order])
    if infinity > 0.0 and curve.betas[0] > 1.0 - infinity:
        betas = np.minimum(curve.betas, 1.0 - infinity)
        curve = PiecewiseLinear._from_vertices(curve.alphas, betas)
    return curve


# ---------------------------------------------------------------------------
# Envelopes and the two neighbouring directions
# ---------------------------------------------------------------------------


def _as_curves(curves: Iterable, name: str) -> list[TradeOff]:
    try:
        items = list(curves)
    except TypeError:
        raise InvalidParameterError(f"{name} must be an iterable of TradeOff curves") from None
    if not items:
        raise InvalidParameterError(f"{name} must contain at least one curve, got none")
    for i, item in enumerate(items):
        if not isinstance(item, TradeOff):
            raise InvalidParameterError(
                f"{name}[{i}] must be a TradeOff curve, got {type(item).__name__}"
            )
    return items


def lower_envelope(curves) -> PiecewiseLinear:
    r"""(min_i f_i)**: the largest convex function below every curve.

    Any pair of distributions whose curve is at least every f_i — or at
    least one of them — has a convex curve above min_i f_i, hence above
    its convex envelope, so a mechanism known to satisfy "f_i-DP for some
    i at each neighbouring pair" is (min f_i)**-DP. Exact on
    piecewise-linear curves (the lower convex hull of all breakpoints);
    other curves enter through their pessimistic piecewise-linear versions.

    Examples
    --------
    >>> from gaussdp import curves
    >>> g, h = curves.gaussian(1.0), curves.epsilon_delta(1.0)
    >>> f = curves.lower_envelope([g, h])
    >>> bool(f.beta(0.3) <= min(g.beta(0.3), h.beta(0.3)))
    True
    """
    items = _as_curves(curves, "curves")
    pieces = [c.piecewise_linear() for c in items]
    x = np.concatenate([p.alphas for p in pieces])
    y = np.concatenate([p.betas for p in pieces])
    return PiecewiseLinear._from_vertices(x, y)


def from_directions(f_remove: TradeOff, f_add: TradeOff) -> PiecewiseLinear:
    r"""The symmetric curve of a mechanism from its two neighbouring directions.

    For the add/remove relation an accountant gives f_remove = T(M(D'), M(D))
    bounding every pair (D, D' = D minus one record) in that order, and
    f_add bounding pairs in the other order (D' = D plus one record). An
    attack may face either order, and T(Q, P) = T(P, Q)⁻¹, so every ordered
    pair of neighbours has a curve above one of f_remove, f_remove⁻¹, f_add,
    f_add⁻¹. The mechanism is therefore f-DP with

    .. math::
        f = \min\{f_{remove}, f_{remove}^{-1}, f_{add}, f_{add}^{-1}\}^{**},

    the largest trade-off function below all four (:func:`lower_envelope`),
    which is symmetric. Taking max(f, f⁻¹) of one direction instead
    (:meth:`TradeOff.symmetrize`) would be optimistic for asymmetric
    mechanisms such as Poisson-subsampled ones; for them this is the
    analogue of C_p's min{f_p, f_p⁻¹}** (Definition 6).

    Examples
    --------
    >>> from gaussdp import curves
    >>> f_p = curves.from_points([0.0, 0.2, 1.0], [0.9, 0.3, 0.0])  # an asymmetric curve
    >>> f = curves.from_directions(f_p, f_p.inverse())
    >>> f.is_symmetric
    True
    """
    for name, value in (("f_remove", f_remove), ("f_add", f_add)):
        if not isinstance(value, TradeOff):
            raise InvalidParameterError(
                f"{name} must be a TradeOff curve, got {type(value).__name__}"
            )
    return lower_envelope([f_remove, f_remove.inverse(), f_add, f_add.inverse()])
