"""Exact geometry of piecewise-linear convex functions on [0, 1].

Everything the trade-off algebra needs reduces to four operations on
breakpoints, done here once:

* ``lower_hull``: the greatest convex function below a set of points (the
  convex envelope ``h**`` of the minimum of piecewise-linear functions, the
  lower convex envelope of ``from_points``);
* ``upper_envelope``: the pointwise maximum of lines on [0, 1] (Proposition 5,
  ``sup_i f_{ε_i, δ_i}``, and the tangent-line approximations of smooth curves);
* ``tangent_lines``: adaptive tangent lines of a smooth convex curve given
  parametrically, refined until the curve is pinned between the tangent
  envelope (below) and the chords (above) to a tolerance;
* ``pointwise_max`` and ``compose_increasing``: max of two piecewise-linear
  convex functions and the composition u∘v of increasing piecewise-linear
  functions (group privacy).

Conventions: breakpoints are float arrays ``x`` (strictly increasing, from 0
to 1) and ``y``; the function is the linear interpolation between them.
Rounding can only remove a vertex that lies within rounding of the segment
joining its neighbours, so the results are exact up to a few ulps.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = [
    "compose_increasing",
    "drop_dominated_points",
    "drop_points_above_chains",
    "lower_hull",
    "pointwise_max",
    "tangent_lines",
    "upper_envelope",
]

# A middle point counts as on the chord of its neighbours when the two sides of
# the orientation test agree to this relative precision (a few ulps): between
# near-duplicate points the slope is rounding noise, and keeping such points
# could leave a hull that is convex at each vertex only up to rounding but not
# overall. Dropping them moves the curve by rounding error only.
_COLLINEAR = 8.0 * np.finfo(float).eps


# Passes stop when at most 1/_CASCADE of the points are left to remove: what is left is
# mostly a cascade (each removal exposing the next point, one per pass: 7,000 passes
# on a curve of 1.8 M points), which Andrew's monotone chain finishes in one sweep.
_CASCADE = 1000


def _on_or_above_chord(xs, ys, before, middle, after, collinear) -> np.ndarray:
    """Whether each middle point is on (up to rounding) or above its neighbours' chord."""
    left = (xs[middle] - xs[before]) * (ys[after] - ys[before])
    right = (ys[middle] - ys[before]) * (xs[after] - xs[before])
    return left - right <= collinear * (np.abs(left) + np.abs(right))


def _lower_hull_indices(x: np.ndarray, y: np.ndarray, collinear: float = 0.0) -> np.ndarray:
    """Indices of the lower convex hull vertices of (x_i, y_i), ordered by x.

    For repeated x only the smallest y can be a vertex. The points, sorted by
    x, form a chain from which every point on (up to rounding) or above the
    segment joining its two neighbours is removed, in passes: the chain only
    moves down, so every removed point stays above it, and a chain that turns
    left at every point is convex, hence the lower hull. After the first pass
    a pass checks only the points whose neighbours changed (the chain is a
    doubly linked list over the sorted points). It removes every other point
    of a run of neighbours to remove, never two neighbours at once: with
    (near-)collinear twins each could sit on the chord through the other, and
    both would vanish. Andrew's monotone chain (:func:`_monotone_chain`)
    finishes the few points the passes leave.
    """
    order = np.lexsort((y, x))
    first = np.ones(order.size, dtype=bool)
    first[1:] = x[order[1:]] != x[order[:-1]]
    index = order[first]
    size = index.size
    if size < 3:
        return index
    xs, ys = x[index], y[index]
    whole = slice(None, -2), slice(1, -1), slice(2, None)
    bad = np.flatnonzero(_on_or_above_chord(xs, ys, *whole, collinear)) + 1
    before = np.arange(-1, size - 1)  # the chain's previous and next alive points
    after = np.arange(1, size + 1)
    alive = np.ones(size, dtype=bool)
    while bad.size * _CASCADE > size:
        # Runs of neighbours (positions are sorted): remove their 1st, 3rd, … points.
        continues = np.zeros(bad.size, dtype=bool)
        continues[1:] = before[bad[1:]] == bad[:-1]
        run_start = np.maximum.accumulate(np.where(continues, 0, np.arange(bad.size)))
        removed = bad[(np.arange(bad.size) - run_start) % 2 == 0]
        a, b = before[removed], after[removed]
        after[a], before[b] = b, a  # no two removed points are neighbours
        alive[removed] = False
        # To check again: the removed points' neighbours (the bad points kept are among
        # them), never the two ends.
        changed = np.sort(np.concatenate((a, b)))
        changed = changed[(changed > 0) & (changed < size - 1)]
        changed = changed[np.flatnonzero(np.diff(changed, prepend=-1))]
        bad = changed[
            _on_or_above_chord(xs, ys, before[changed], changed, after[changed], collinear)
        ]
    index = index[alive]
    if bad.size == 0:
        return index
    return index[_monotone_chain(x[index], y[index], collinear)]


def _monotone_chain(xs: np.ndarray, ys: np.ndarray, collinear: float) -> np.ndarray:
    """Positions of the lower hull of points sorted by increasing x (Andrew's chain).

    Where three consecutive points already turn left, the chain appends the
    third without popping whenever the first two are the top of its stack; so
    the loop runs point by point only at the (few, after the passes) points
    that do not turn left, and appends the runs between them whole. The stack
    is held as runs of consecutive positions. The orientation test is the
    same expression on the same floats, so the hull is the plain chain's.
    """
    n = xs.size
    turns_left = ~_on_or_above_chord(
        xs, ys, slice(None, -2), slice(1, -1), slice(2, None), collinear
    )
    # Position j of the sorted points may be appended in a run if (j−2, j−1, j) turns
    # left; ``stops`` are the positions where that fails.
    stops = np.append(np.flatnonzero(~turns_left) + 2, n).tolist()
    runs: list[list[int]] = []  # the stack: runs [start, end) of consecutive positions
    count = 0
    position, next_stop = 0, 0
    while position < n:
        xi, yi = float(xs[position]), float(ys[position])
        while count >= 2:
            top = runs[-1][1] - 1
            second = top - 1 if runs[-1][1] - runs[-1][0] >= 2 else runs[-2][1] - 1
            x1, y1, x2, y2 = float(xs[second]), float(ys[second]), float(xs[top]), float(ys[top])
            left_side = (x2 - x1) * (yi - y1)
            right_side = (y2 - y1) * (xi - x1)
            if left_side - right_side > collinear * (abs(left_side) + abs(right_side)):
                break
            runs[-1][1] -= 1  # pop
            if runs[-1][1] == runs[-1][0]:
                runs.pop()
            count -= 1
        end = position + 1
        if count >= 1 and runs[-1][1] == position:
            runs[-1][1] = end
        else:
            runs.append([position, end])
        count += 1
        position = end
        if runs[-1][1] - runs[-1][0] >= 2:  # the top two are position − 2, position − 1
            while stops[next_stop] < position:
                next_stop += 1
            end = max(position, stops[next_stop])  # [position, end) turn left after them
            count += end - position
            runs[-1][1] = end
            position = end
    return np.concatenate([np.arange(start, end) for start, end in runs])


def lower_hull(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of the lower convex hull of the points (x_i, y_i), sorted by x.

    The result is the greatest convex function below every point, evaluated
    by linear interpolation between the returned vertices. Points on a
    straight segment between two others are dropped; for repeated x the
    smallest y is kept.
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    index = _lower_hull_indices(x, y, _COLLINEAR)
    return x[index], y[index]


def drop_dominated_points(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points (x_i, y_i) that no other point dominates, sorted by x; the last always.

    A point (x, y) is dominated when another has x' ≤ x and y' ≤ y. For points
    in [0, 1]² whose set holds (1, 0) — a trade-off function's candidate
    vertices — no dominated point other than the last (the largest x, and
    there the smallest y) is a vertex of the lower convex hull: the hull h is
    non-increasing, so
    h(x) ≤ h(x') ≤ y' ≤ y, with equality only where h is flat from x' on,
    which for a convex non-increasing h ending at (1, 0) means y = 0, a point
    inside the hull's last segment. Dropping them first (one sort and a
    running minimum) leaves the hull unchanged and spares its point-by-point
    work the plateaus that rounding makes where a profile's masses fall
    below one ulp of 1 − S_P (σ = 0.5, q = 0.3, 50 steps: 2.2 M points, a
    fifth of them dominated).
    """
    order = np.lexsort((y, x))  # by x, the smallest y first among equal x
    if order.size == 0:
        return x[order], y[order]
    sorted_x, sorted_y = x[order], y[order]
    lowest_before = np.minimum.accumulate(np.concatenate(([np.inf], sorted_y[:-1])))
    keep = sorted_y < lowest_before
    keep[np.searchsorted(sorted_x, sorted_x[-1], side="left")] = True  # the last, lowest
    order = order[keep]
    return x[order], y[order]


# A point counts as above another chain's polygonal line only beyond this relative
# margin: np.interp's value is within a few ulps of the segment's endpoints.
_ABOVE_MARGIN = 16.0 * np.finfo(float).eps


def drop_points_above_chains(chains):
    """Each chain of points without the points that are no lower-hull vertex of the union
    because they lie above the polygonal line through another chain's points.

    A point strictly above the segment between two points (with x between
    theirs) is never a vertex of the lower convex hull; "strictly" here means
    by more than ``_ABOVE_MARGIN`` relative to the values involved, so points
    on a segment up to rounding stay for the hull to decide. Chains need not
    be sorted or convex.

    Parameters
    ----------
    chains : list of (x, y) pairs of 1-d arrays

    Returns
    -------
    list of (x, y) pairs
        The kept points of each chain, in their order.
    """
    if len(chains) < 2:  # nothing to compare with
        return list(chains)
    ordered = []
    for x, y in chains:
        order = np.argsort(x, kind="stable")
        ordered.append((x[order], y[order]))
    kept_chains = []
    for i, (x, y) in enumerate(chains):
        keep = np.ones(x.size, dtype=bool)
        for j, (other_x, other_y) in enumerate(ordered):
            if j == i or other_x.size < 2:
                continue
            inside = (x >= other_x[0]) & (x <= other_x[-1])
            line = np.interp(x, other_x, other_y)
            right = np.clip(np.searchsorted(other_x, x, side="right"), 1, other_x.size - 1)
            scale = np.abs(y) + np.abs(other_y[right - 1]) + np.abs(other_y[right])
            keep &= ~(inside & (y - line > _ABOVE_MARGIN * scale))
        kept_chains.append((x[keep], y[keep]))
    return kept_chains


def mirrored_half(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A decreasing chain made symmetric about the diagonal: its part with x < y, mirrored.

    The vertices with x < y, the point where the chain crosses x = y, and the
    first part's mirror image (y, x) in reverse order: a chain that swapping
    the coordinates maps onto itself exactly.
    """
    above = np.flatnonzero(x >= y)
    if above.size == 0:
        return x, y
    k = int(above[0])
    if x[k] == y[k] or k == 0:
        diagonal = float(x[k]) if x[k] == y[k] else float(min(x[k], y[k]))
    else:
        # the segment from (x₁, y₁), x₁ < y₁, to (x₂, y₂), x₂ ≥ y₂, meets x = y at t
        x1, y1, x2, y2 = float(x[k - 1]), float(y[k - 1]), float(x[k]), float(y[k])
        t = (y1 - x1) / ((y1 - x1) + (x2 - y2))
        diagonal = x1 + t * (x2 - x1)
    hx = np.concatenate([x[:k], [diagonal], y[:k][::-1]])
    hy = np.concatenate([y[:k], [diagonal], x[:k][::-1]])
    return hx, hy


def upper_envelope(intercepts, slopes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The maximum of the lines y = a_k + b_k·x on [0, 1], as breakpoints.

    By duality the lines that appear in the maximum are the vertices of the
    lower convex hull of the points (b_k, −a_k), and the envelope switches
    from one to the next at x equal to the slope of the hull edge between
    them.

    Returns
    -------
    x, y : ndarray
        Breakpoints of the envelope on [0, 1] (x[0] = 0, x[-1] = 1).
    lines : ndarray of int
        For each segment ``[x[i], x[i+1]]`` the index of the line active there.
    """
    a = np.asarray(intercepts, dtype=float).ravel()
    b = np.asarray(slopes, dtype=float).ravel()
    h = _lower_hull_indices(b, -a)
    a_h, b_h = a[h], b[h]
    # Switch points: the slope of each hull edge, increasing.
    switch = (a_h[:-1] - a_h[1:]) / (b_h[1:] - b_h[:-1])
    start = int(np.searchsorted(switch, 0.0, side="right"))
    stop = int(np.searchsorted(switch, 1.0, side="left"))
    active = np.arange(start, stop + 1)
    xs = np.concatenate(([0.0], switch[start:stop], [1.0]))
    a_left = a_h[active]
    b_left = b_h[active]
    ys = np.empty(xs.size)
    ys[:-1] = a_left + b_left * xs[:-1]
    ys[-1] = a_left[-1] + b_left[-1]
    # At a switch point both lines agree up to rounding; take the larger (the max).
    if xs.size > 2:
        ys[1:-1] = np.maximum(ys[1:-1], a_left[:-1] + b_left[:-1] * xs[1:-1])
    return xs, ys, h[active]


def pointwise_max(x1, y1, x2, y2) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints of max(f, g) for piecewise-linear f, g on [0, 1] (both convex).

    The maximum is evaluated on the union of both breakpoint sets and on the
    crossing points inside each segment; the result is convex, and
    ``lower_hull`` only removes collinear points.
    """
    xs = np.union1d(x1, x2)
    f = np.interp(xs, x1, y1)
    g = np.interp(xs, x2, y2)
    d = f - g
    crossing = np.nonzero(d[:-1] * d[1:] < 0.0)[0]
    if crossing.size:
        t = d[crossing] / (d[crossing] - d[crossing + 1])
        xc = xs[crossing] + t * (xs[crossing + 1] - xs[crossing])
        xs = np.union1d(xs, xc)
        f = np.interp(xs, x1, y1)
        g = np.interp(xs, x2, y2)
    return lower_hull(xs, np.maximum(f, g))


def _inverse_increasing(xs: np.ndarray, ys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Preimages under the non-decreasing piecewise-linear (xs, ys) (leftmost)."""
    # np.interp needs strictly increasing abscissae: keep the first x of flat runs.
    first = np.ones(ys.size, dtype=bool)
    first[1:] = ys[1:] != ys[:-1]
    return np.interp(values, ys[first], xs[first])


def compose_increasing(outer_x, outer_y, inner_x, inner_y) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints of u∘v for non-decreasing piecewise-linear u, v: [0, 1] → [0, 1].

    The composition is linear between the breakpoints of v and the preimages
    under v of the breakpoints of u, so it is exact on that union.
    """
    inner_x = np.asarray(inner_x, dtype=float)
    inner_y = np.asarray(inner_y, dtype=float)
    outer_x = np.asarray(outer_x, dtype=float)
    low, high = inner_y[0], inner_y[-1]
    targets = outer_x[(outer_x > low) & (outer_x < high)]
    xs = np.union1d(inner_x, _inverse_increasing(inner_x, inner_y, targets))
    return xs, np.interp(np.interp(xs, inner_x, inner_y), outer_x, outer_y)


def tangent_lines(
    alpha: Callable[[np.ndarray], np.ndarray],
    beta: Callable[[np.ndarray], np.ndarray],
    slope: Callable[[np.ndarray], np.ndarray],
    low: float,
    high: float,
    *,
    tolerance: float,
    tail_tolerance: Callable[..., np.ndarray] | None = None,
    initial: int = 129,
    max_points: int = 400_000,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Tangent points of a smooth convex curve, refined adaptively.

    The curve is given parametrically by ``u ↦ (alpha(u), beta(u))`` with
    alpha increasing and its slope dβ/dα = ``slope(u)`` (negative,
    non-decreasing). Between two tangent points the curve lies below their
    chord and above the two tangent lines, and the largest vertical gap
    between chord and tangents is Δα·(s₂ − m)(m − s₁)/(s₂ − s₁), with m the
    chord slope. Intervals are bisected in u until that gap is at most
    ``tolerance``·min(1, |m|), so that the horizontal gap is within
    ``tolerance`` as well (which bounds the error of the inverse curve), or
    ``tail_tolerance(alpha_left, beta_left, slope_left, alpha_right,
    beta_right, slope_right)`` of the interval's ends where that is smaller,
    to keep relative accuracy in the tails.

    Returns
    -------
    u, alpha, beta, slope : ndarray
        The tangent points, sorted by u.
    """
    u = np.linspace(low, high, initial)
    a, b, s = alpha(u), beta(u), slope(u)
    while True:
        da = a[1:] - a[:-1]
        db = b[1:] - b[:-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            m = db / da
            spread = s[1:] - s[:-1]
            gap = np.where(
                (da > 0.0) & (spread > 0.0),
                da * np.clip(s[1:] - m, 0.0, None) * np.clip(m - s[:-1], 0.0, None) / spread,
                0.0,
            )
        # Scaled by min(1, |m|): the gap measured horizontally is then within
        # tolerance too, which bounds the error of the inverse curve.
        allowed = tolerance * np.minimum(1.0, np.abs(m))
        if tail_tolerance is not None:
            allowed = np.minimum(
                allowed, tail_tolerance(a[:-1], b[:-1], s[:-1], a[1:], b[1:], s[1:])
            )
        refine = np.nonzero(~(gap <= allowed))[0]
        if refine.size == 0 or u.size + refine.size > max_points:
            return u, a, b, s
        midpoints = 0.5 * (u[refine] + u[refine + 1])
        midpoints = midpoints[(midpoints > u[refine]) & (midpoints < u[refine + 1])]
        if midpoints.size == 0:
            return u, a, b, s
        u = np.concatenate((u, midpoints))
        a = np.concatenate((a, alpha(midpoints)))
        b = np.concatenate((b, beta(midpoints)))
        s = np.concatenate((s, slope(midpoints)))
        order = np.argsort(u, kind="stable")
        u, a, b, s = u[order], a[order], b[order], s[order]
