r"""The steep half of an accountant's symmetric trade-off curve, read off its profiles.

For the add/remove relation the accountant certifies, for every ε ≥ 0,

    δ(ε) ≤ δ_up(ε) = max_d [ S_P,d(ε) − e^ε S_Q,d(ε) + P_d(+∞) + slack_d ],

one term per neighbouring direction d (remove, add), each the hockey-stick
divergence of a discrete pair (S_P, S_Q: P- and Q-mass of the atoms of loss
> ε). The mechanism is then f-DP for the symmetric curve
f = sup_{ε ≥ 0} f_{ε, δ_up(ε)} (Dong, Roth & Su 2022, Proposition 5):

    f = max(F, F⁻¹, 0),   F(α) = 1 − S(α),   S(α) = inf_{ε ≥ 0} (δ_up(ε) + e^ε α),

S being the attack's true-positive rate on the *steep* half of the curve
(where f has slope ≤ −1). A test that says "member" on the k atoms of
largest loss of direction d has false-positive rate α_{d,k} (their Q-mass)
and true-positive rate t_{d,k} (their P-mass plus P_d(+∞) + slack_d), and

    δ_d(ε) = t_{d,k} − e^ε α_{d,k},   k = #{atoms of loss > ε},

so S is the upper concave hull of all points (α_{d,k}, t_{d,k}), continued by a
line of slope 1. Only atoms of loss ≥ 0 enter: the others have slope < 1,
and their Q-masses e^{−λ}·P carry the FFT's rounding error multiplied by
e^{|λ|}, which this construction never uses.

**The hull without a hull algorithm.** The supporting point of S for slope
e^ε is the maximising direction's point k(ε); every hull vertex is the
supporting point for the slope of the hull segment to its right, and that
slope is either an atom's e^λ (a segment of one direction) or a slope where
two directions' δ_d(ε) cross (a bridge between them, found in closed form on
each interval between atoms, where both δ_d are linear in e^ε). Evaluating
k(ε) at all atoms and crossings (:attr:`SteepCurve.epsilons`) therefore
yields every vertex, in order of increasing α. The same grid gives the
regret exactly (:mod:`gaussdp.report.regret`, profile form).

Working with t = 1 − β keeps full relative precision where β is within 1e-16
of 1, and α is carried in log space as well, so tests with false-positive
rates below 1e-308 keep their exact μ.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from gaussdp.pld.query import Lattice

__all__ = ["Direction", "SteepCurve", "direction", "steep_curve"]


class Direction(NamedTuple):
    """The steep tests of one discrete pair, k = 0, 1, … atoms of largest loss.

    ``losses`` are the atoms of loss ≥ 0 in decreasing order; point k
    (``alpha[k]``, ``log_alpha[k]``, ``tpr[k]``) is the test on the first k
    of them, point 0 the test that never says "member" (α = 0, t = floor).
    ``floor`` = P(+∞) + slack, ``slack`` the certified allowance for
    truncation and rounding alone (0 for exact and optimistic profiles).
    ``excess`` is the P-mass by which the atoms and P(+∞) sum to more than 1:
    a rounding allowance carried in the atoms themselves (pairs built from a
    trade-off curve raise every atom by two ulps of 1.0), which no test's
    true-positive rate can owe more than.
    """

    losses: np.ndarray
    alpha: np.ndarray
    log_alpha: np.ndarray
    tpr: np.ndarray
    floor: float
    slack: float = 0.0
    excess: float = 0.0

    def index(self, epsilon: np.ndarray) -> np.ndarray:
        """k(ε) = the number of atoms of loss > ε."""
        ascending = self.losses[::-1]
        position = np.searchsorted(ascending, np.asarray(epsilon, dtype=float), side="right")
        return self.losses.size - position

    def delta(self, epsilon: np.ndarray, index: np.ndarray | None = None) -> np.ndarray:
        """δ_d(ε) = t_k − e^ε α_k (k = k(ε)), for ε ≥ 0."""
        k = self.index(epsilon) if index is None else index
        with np.errstate(over="ignore"):
            scaled = np.exp(np.asarray(epsilon, dtype=float) + self.log_alpha[k])
        return self.tpr[k] - scaled


class Computed:
    """A read-only array whose entries are computed when indexed: ``values[key]``.

    A direction's α = e^{log α} and t = S_P + allowances are as long as its
    profile (millions of tests on long runs) and are read a chunk, a few
    points or a mask at a time; ``function(key)`` computes exactly the
    entries the key selects (int, slice, index array or mask), elementwise,
    so every entry equals that of the whole array. ``np.asarray`` forms it.
    """

    def __init__(self, function, size: int):
        self._function = function
        self.size = int(size)
        self.shape = (self.size,)
        self.ndim = 1

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key):
        return self._function(key)

    def __array__(self, dtype=None, copy=None):
        values = np.asarray(self._function(slice(None)), dtype=float)
        return values if dtype is None else values.astype(dtype)


def _positions(key, size: int) -> np.ndarray:
    """The positions ``np.arange(size)[key]`` selects, without forming that range."""
    if isinstance(key, slice):
        return np.arange(*key.indices(size))
    key = np.asarray(key)
    if key.dtype == bool:
        return np.flatnonzero(key)
    return np.where(key < 0, key + size, key)


def _exp_of(values: np.ndarray):
    """key ↦ e^{values[key]}, computed on a contiguous copy of the entries selected.

    numpy's exp may round a strided (here reversed) array differently from a
    contiguous one in the last bit, and each test's α must be the same number
    wherever it is read.
    """

    def exp(key):
        selected = values[key]
        return np.exp(np.ascontiguousarray(selected) if np.ndim(selected) else selected)

    return exp


def direction(profile) -> Direction:
    """The steep tests of one :class:`gaussdp.pld.query.Profile`.

    The profile's additive terms P(+∞) + ``shift`` (slack; negative for an
    optimistic profile) are added to every t, and t is clipped at 0 as the
    profile's δ is (the test at k = 0 then gives δ ≥ 0). A pessimistic
    profile whose allowance depends on ε (compositions computed with
    exponential tilting: ``shift_below`` before a cut, a decaying
    ``shift_at_cut`` after it) charges each test the allowance at the lower
    end of the ε-interval it certifies (the allowance is non-increasing in
    ε), so the curve stays below the accountant's; the floor is then the
    allowance beyond the largest atom, far below the plain one.

    The losses, log α and S_P are views of the profile's arrays; α and t are
    :class:`Computed` from them where they are read.
    """
    losses = profile.losses
    first = int(np.searchsorted(losses, 0.0, side="left"))
    # tail_p[j] = Σ_{i ≥ j} P_i with a trailing 0; reversed, entry k sums the top k atoms.
    tail = np.asarray(profile.tail_p[first:][::-1], dtype=float)  # views, not copies
    log_alpha = np.asarray(profile.log_tail_q[first:][::-1], dtype=float)
    descending = losses[first:][::-1]  # a view, or a lattice of the grid's multiples
    if not isinstance(descending, Lattice):
        descending = np.asarray(descending, dtype=float)
    infinity = float(profile.infinity_mass)
    shift = float(profile.shift)
    tilted = (
        getattr(profile, "shift_below", 0.0) > 0.0 or getattr(profile, "shift_at_cut", 0.0) > 0.0
    )
    if tilted and profile.safe_side > 0:
        # The test on the top k atoms gives δ(ε) for ε in [λ_{k+1}, λ_k) (λ descending,
        # ε ≥ 0); the allowance is non-increasing in ε, so charge its value at λ_{k+1}
        # (at 0 for the test on every atom).
        def lower_ends(key) -> np.ndarray:
            if isinstance(key, slice):  # a chunk of the grid: the losses themselves
                start, stop, step = key.indices(tail.size)
                if step == 1 and stop <= descending.size:
                    return np.asarray(descending[start:stop])
            at = _positions(key, tail.size)
            if descending.size == 0:
                return np.zeros(at.shape)
            inside = np.minimum(at, descending.size - 1)
            return np.where(at < descending.size, descending[inside], 0.0)

        def tpr_of(key):
            offset = infinity + np.asarray(profile.allowance(lower_ends(key)), dtype=float)
            return np.maximum(tail[key] + offset, 0.0)

        # The allowance is constant below the cut and decays beyond it: its largest
        # value at the lower ends is at 0 or at the smallest one at or above the cut.
        ascending = descending[::-1]
        at_cut = int(np.searchsorted(ascending, max(float(profile.cut_loss), 0.0), side="left"))
        candidates = [0.0] + ([float(ascending[at_cut])] if at_cut < ascending.size else [])
        offsets = infinity + np.asarray(profile.allowance(np.array(candidates)), dtype=float)
        first_offset = float(np.max(offsets))
        floor_offset = infinity + float(np.asarray(profile.allowance(lower_ends(0))))
    else:
        offset = infinity + shift

        def tpr_of(key):
            return np.maximum(tail[key] + offset, 0.0)

        first_offset = floor_offset = offset
    total = float(profile.tail_p[0]) + infinity if profile.tail_p.size else 0.0
    return Direction(
        descending,
        Computed(_exp_of(log_alpha), log_alpha.size),
        log_alpha,
        Computed(tpr_of, tail.size),
        max(floor_offset, 0.0),
        max(first_offset - infinity, 0.0),
        max(total - 1.0, 0.0),
    )


def _crossings(grid: np.ndarray, first, second) -> np.ndarray:
    """ε in (grid[i+1], grid[i]) where two directions' δ_d cross (bridge slopes).

    On such an interval every δ_d(ε) = t_d − e^ε α_d with the points k_d(ε)
    of its lower end (``first``, ``second``: each direction's (t, α) at every
    grid point), so a crossing has e^ε = (t_1 − t_2)/(α_1 − α_2). Candidates
    are picked by comparing that ratio with e^ε at both ends (with a margin),
    and the exact test ε ∈ (grid[i+1], grid[i]) is made on them alone.
    """
    if grid.size < 2:
        return np.empty(0)
    (t1, a1), (t2, a2) = first, second
    with np.errstate(over="ignore"):
        scale = np.exp(grid)
    gamma = t1[1:] - t2[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(gamma, a1[1:] - a2[1:], out=gamma)
    near = np.flatnonzero((gamma > scale[1:] * (1.0 - 1e-9)) & (gamma < scale[:-1] * (1.0 + 1e-9)))
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.log(gamma[near])
    inside = (eps > grid[1:][near]) & (eps < grid[:-1][near])
    return eps[inside]


def _merge_descending(arrays: list[np.ndarray]) -> np.ndarray:
    """The distinct values of several decreasing arrays, decreasing (linear-time merge)."""
    merged = arrays[0]
    for other in arrays[1:]:
        # position of each element of ``other`` in the merged (increasing) order
        ascending = merged[::-1]
        slots = np.searchsorted(ascending, other[::-1], side="right") + np.arange(other.size)
        out = np.empty(merged.size + other.size)
        mask = np.zeros(out.size, dtype=bool)
        mask[slots] = True
        out[mask] = other[::-1]
        out[~mask] = ascending
        merged = out[::-1]
    keep = np.ones(merged.size, dtype=bool)
    keep[1:] = merged[1:] != merged[:-1]
    return merged[keep]


def _merged_pair(first: Direction, second: Direction):
    """Grid (decreasing union of both directions' losses, then 0) and k_d on it.

    A merge by rank: an atom's place in the union is its own rank plus the
    number of the other direction's atoms before it, and those counts are
    the k of the other direction there — three searches, no sort.
    """
    a, b = np.asarray(first.losses), np.asarray(second.losses)
    if a.size == 0 or b.size == 0 or np.any(a[1:] >= a[:-1]) or np.any(b[1:] >= b[:-1]):
        return None
    ascending_a, ascending_b = a[::-1], b[::-1]
    b_above_a = b.size - np.searchsorted(ascending_b, a, side="right")  # #{b > a_i}
    a_from_b = a.size - np.searchsorted(ascending_a, b, side="left")  # #{a ≥ b_j}
    a_above_b = a.size - np.searchsorted(ascending_a, b, side="right")  # #{a > b_j}
    size = a.size + b.size
    grid = np.empty(size)
    k_first = np.empty(size, dtype=np.intp)
    k_second = np.empty(size, dtype=np.intp)
    slots_a = np.arange(a.size) + b_above_a
    slots_b = np.arange(b.size) + a_from_b
    grid[slots_a], grid[slots_b] = a, b
    k_first[slots_a], k_first[slots_b] = np.arange(a.size), a_above_b
    k_second[slots_a], k_second[slots_b] = b_above_a, np.arange(b.size)
    keep = np.ones(size, dtype=bool)
    keep[1:] = grid[1:] != grid[:-1]
    grid, k_first, k_second = grid[keep], k_first[keep], k_second[keep]
    if grid[-1] > 0.0:
        zero = np.zeros(1)
        grid = np.concatenate((grid, zero))
        k_first = np.concatenate((k_first, first.index(zero)))
        k_second = np.concatenate((k_second, second.index(zero)))
    return grid, [k_first, k_second]


def _take(values: np.ndarray, where) -> np.ndarray:
    """values[k] for the points k of a grid: an index array, or (shift, count) meaning
    k_j = clip(j + shift, 0, values.size − 1) (:func:`_lattice_grid`), taken by slicing.
    """
    if isinstance(where, np.ndarray):
        return values[where]
    shift, count = where
    last = values.size - 1
    before = min(max(-shift, 0), count)  # j with j + shift < 0
    start = min(max(shift, 0), last)
    inside = max(min(count - before, last - start + 1), 0)
    after = count - before - inside
    if before == 0 and after == 0:
        return values[start : start + inside]  # a view
    return np.concatenate(
        (np.full(before, values[0]), values[start : start + inside], np.full(after, values[-1]))
    )


#: Grid points per chunk of :func:`_supporting_points` (bounds its temporary arrays).
_CHUNK = 1 << 18


def _supporting_points(directions, grid, indices):
    """δ_up on the grid, the maximising direction's point k(ε) at each ε, and the crossings.

    Computed a chunk of the grid at a time (each direction's points on it,
    and the bridges of every pair of directions between its ε's), so that
    only the four results are held at the grid's full size.
    """
    size = grid.size
    deltas, alpha, log_alpha, tpr = (np.empty(size) for _ in range(4))
    pairs = [(i, j) for i in range(len(directions)) for j in range(i + 1, len(directions))]
    found: dict[tuple[int, int], list[np.ndarray]] = {pair: [] for pair in pairs}
    for start in range(0, size, _CHUNK):
        stop = min(start + _CHUNK, size)
        reach = min(stop + 1, size)  # one point more: the lower end of the chunk's last interval
        part = grid[start:reach]
        count = stop - start
        points = []
        for number, (d, k) in enumerate(zip(directions, indices, strict=True)):
            where = k[start:reach] if isinstance(k, np.ndarray) else (k[0] + start, reach - start)
            t_k, log_alpha_k, alpha_k = (
                _take(d.tpr, where),
                _take(d.log_alpha, where),
                _take(d.alpha, where),
            )
            values = part + log_alpha_k  # Direction.delta at its points, in place
            with np.errstate(over="ignore"):
                np.exp(values, out=values)
            np.subtract(t_k, values, out=values)
            points.append((t_k, alpha_k))
            outputs = (deltas, alpha, log_alpha, tpr)
            inputs = (values, alpha_k, log_alpha_k, t_k)
            if number == 0:
                for output, value in zip(outputs, inputs, strict=True):
                    output[start:stop] = value[:count]
                continue
            better = values[:count] > deltas[start:stop]
            for output, value in zip(outputs, inputs, strict=True):
                np.copyto(output[start:stop], value[:count], where=better)
        for i, j in pairs:
            found[i, j].append(_crossings(part, points[i], points[j]))
    crossings = [np.concatenate(found[pair]) for pair in pairs]
    return deltas, alpha, log_alpha, tpr, np.concatenate(crossings) if crossings else np.empty(0)


def _lattice_grid(directions):
    """Grid and indices without searching when every direction's atoms are one lattice.

    The pessimistic (connect-the-dots) profiles put atoms at consecutive
    multiples of the grid spacing h, so the union of their losses is a run of
    multiples m·h and k_d(m·h) = the number of d's lattice points above m.
    Returns None when the atoms are not such a lattice.
    """
    spacing = None
    tops = []
    for d in directions:
        if d.losses.size < 2:
            return None
        h = float(d.losses[0] - d.losses[-1]) / (d.losses.size - 1)  # each step is h ± rounding
        if not isinstance(d.losses, Lattice):  # a lattice is one by construction
            steps = -np.diff(d.losses)
            if h <= 0.0 or float(np.max(np.abs(steps - h))) > 1e-9 * h:
                return None
        elif h <= 0.0:
            return None
        if spacing is None:
            spacing = h
        elif abs(h - spacing) > 1e-9 * spacing:
            return None
        tops.append(round(float(d.losses[0]) / spacing))
    lows = [top - d.losses.size + 1 for top, d in zip(tops, directions, strict=True)]
    for low, d in zip(lows, directions, strict=True):
        if abs(d.losses[-1] - low * spacing) > 1e-9 * max(spacing, abs(d.losses[-1])):
            return None
    top = max(tops)
    bottom = min(0, *lows)
    if top - bottom + 1 > 2 * sum(d.losses.size for d in directions) + 2:
        return None  # not a dense common lattice (e.g. two atoms a hair apart)
    if top < 0:
        return np.zeros(1), [np.zeros(1, dtype=np.intp) for _ in directions]
    grid = np.arange(top, -1, -1, dtype=float)  # grid point j is the multiple top − j ≥ 0
    grid *= spacing
    # k_d at multiple m = t_d − m, clipped to [0, n_d]: t_d − top + j (see _take).
    return grid, [(t - top, top + 1) for t in tops]


class SteepCurve(NamedTuple):
    """S, the concave TPR function of the steep half, with its ε-grid.

    Attributes
    ----------
    epsilons : ndarray
        Decreasing ε ≥ 0 (ending at 0): every atom's loss and every crossing
        of two directions — the slopes of all hull segments.
    deltas : ndarray
        δ_up at ``epsilons`` (the maximum over directions).
    alpha, log_alpha, tpr : ndarray
        The hull vertices (α_k, t_k), α increasing from 0; between vertices S
        is linear, beyond the last it continues with slope 1.
    floor : float
        1 − f(0): the largest P(+∞) + slack over the directions.
    slack : float
        The largest certified slack (truncation and rounding allowance).
    excess : float
        The largest rounding allowance carried in a direction's atoms
        (:attr:`Direction.excess`).
    log_alpha_one : float or None
        log α' where the hull was cut at TPR 1 (the last vertex), or None.
    advantage : float
        δ_up(0) = max_k (t_k − α_k), the largest TPR − FPR of any test.
    """

    epsilons: np.ndarray
    deltas: np.ndarray
    alpha: np.ndarray
    log_alpha: np.ndarray
    tpr: np.ndarray
    floor: float
    slack: float
    advantage: float
    excess: float = 0.0
    log_alpha_one: float | None = None

    def tpr_at(self, alpha) -> np.ndarray:
        """S(α): the true-positive rate of the steep half at false-positive rate α."""
        alpha = np.asarray(alpha, dtype=float)
        end_alpha, end_t = self.alpha[-1], self.tpr[-1]
        inside = np.interp(alpha, self.alpha, self.tpr)
        value = np.where(alpha <= end_alpha, inside, end_t + (alpha - end_alpha))
        return np.minimum(value, 1.0)

    def beta_at(self, alpha) -> np.ndarray:
        """The symmetric curve f(α) = max(1 − S(α), F⁻¹(α), 0)."""
        alpha = np.asarray(alpha, dtype=float)
        steep = 1.0 - self.tpr_at(alpha)
        return np.clip(np.maximum(steep, self._first_reaching(1.0 - alpha)), 0.0, 1.0)

    def _first_reaching(self, target: np.ndarray) -> np.ndarray:
        """F⁻¹ = the smallest a with S(a) ≥ ``target``; S continues with slope 1 up to 1.

        The linear interpolation ``np.interp(target, ys, xs, left=0, right=xs[-1])``
        over the vertices followed by (α_end + 1 − t_end, 1), keeping the first
        of vertices with equal t, evaluated at the bracket of each target
        alone (as np.interp computes it), without copying the vertices.
        """
        shape = np.shape(target)
        target = np.atleast_1d(np.asarray(target, dtype=float))
        size = self.tpr.size
        end = self.alpha[-1] + max(1.0 - self.tpr[-1], 0.0)

        def ys(j):
            return np.where(j < size, self.tpr[np.minimum(j, size - 1)], 1.0)

        def xs(j):
            return np.where(j < size, self.alpha[np.minimum(j, size - 1)], end)

        # The last vertex at or below the target, and the first vertex of its t.
        last = np.searchsorted(self.tpr, target, side="right") + (target >= 1.0) - 1
        below = last < 0
        last = np.clip(last, 0, size)
        first = np.searchsorted(self.tpr, ys(last), side="left")
        low_y, low_x = ys(first), xs(first)
        high_y, high_x = ys(last + 1), xs(last + 1)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope = (high_x - low_x) / (high_y - low_y)
            value = slope * (target - low_y) + low_x
            again = slope * (target - high_y) + high_x
            value = np.where(np.isnan(value), again, value)
            value = np.where(np.isnan(value) & (low_x == high_x), low_x, value)
        value = np.where(target == low_y, low_x, value)
        value = np.where(below, 0.0, np.where(target > 1.0, end, value))
        return value.reshape(shape)


def steep_curve(directions: list[Direction]) -> SteepCurve:
    """The steep half certified by one or more directions (see the module docstring)."""
    merged = _lattice_grid(directions)
    if merged is None and len(directions) == 2:
        merged = _merged_pair(*directions)
    if merged is None:
        grid = _merge_descending([np.asarray(d.losses) for d in directions] + [np.zeros(1)])
        indices = [d.index(grid) for d in directions]
    else:
        grid, indices = merged
    del merged  # the grid is replaced below when crossings are added: no second reference
    deltas, alpha, log_alpha, tpr, crossings = _supporting_points(directions, grid, indices)
    advantage = float(np.clip(deltas[-1], 0.0, 1.0))  # δ_up(0): grid ends at ε = 0
    # The supporting point beyond the largest atom is the test on +∞ alone (k = 0); it
    # goes first, and the crossings' points by α, in one insertion (one copy per array).
    slots = np.zeros(1, dtype=np.intp)
    new_alpha, new_log_alpha = np.zeros(1), np.full(1, -math.inf)
    new_tpr = np.array([max(float(d.tpr[0]) for d in directions)])
    if crossings.size:
        # Bridge slopes: both ends of each bridge are vertices (the directions tie
        # there), so every direction within rounding of the maximum contributes its
        # supporting point; they are inserted by α (there are few).
        cross_indices = [d.index(crossings) for d in directions]
        c_deltas = np.array(
            [d.delta(crossings, k) for d, k in zip(directions, cross_indices, strict=True)]
        )
        best = np.max(c_deltas, axis=0)
        tied = c_deltas >= best - 1e-12 * (1.0 + np.abs(best))
        c_alpha = np.concatenate(
            [d.alpha[k[t]] for d, k, t in zip(directions, cross_indices, tied, strict=True)]
        )
        c_log_alpha = np.concatenate(
            [d.log_alpha[k[t]] for d, k, t in zip(directions, cross_indices, tied, strict=True)]
        )
        c_tpr = np.concatenate(
            [d.tpr[k[t]] for d, k, t in zip(directions, cross_indices, tied, strict=True)]
        )
        grid = np.concatenate((grid, crossings))
        deltas = np.concatenate((deltas, best))
        order = np.lexsort((c_tpr, c_alpha))
        slots = np.concatenate((slots, np.searchsorted(alpha, c_alpha[order], side="left")))
        new_alpha = np.concatenate((new_alpha, c_alpha[order]))
        new_log_alpha = np.concatenate((new_log_alpha, c_log_alpha[order]))
        new_tpr = np.concatenate((new_tpr, c_tpr[order]))
    alpha = np.insert(alpha, slots, new_alpha)
    log_alpha = np.insert(log_alpha, slots, new_log_alpha)
    tpr = np.insert(tpr, slots, new_tpr)
    if np.any(alpha[1:] < alpha[:-1]):  # only by rounding at near-ties of two directions
        order = np.lexsort((tpr, alpha))
        alpha, log_alpha, tpr = alpha[order], log_alpha[order], tpr[order]
    # Keep the last of repeated vertices, and t non-decreasing (one array at a time).
    keep = np.ones(alpha.size, dtype=bool)
    keep[:-1] = (alpha[1:] != alpha[:-1]) | (log_alpha[1:] != log_alpha[:-1])
    if not np.all(keep):
        alpha = alpha[keep]
        log_alpha = log_alpha[keep]
        tpr = tpr[keep]
    del keep
    np.maximum.accumulate(tpr, out=tpr)
    alpha, log_alpha, tpr, deltas, advantage, log_cut = _capped_at_one(
        alpha, log_alpha, tpr, grid, deltas, advantage
    )
    floor = max(d.floor for d in directions)
    slack = max(d.slack for d in directions)
    excess = max(d.excess for d in directions)
    return SteepCurve(grid, deltas, alpha, log_alpha, tpr, floor, slack, advantage, excess, log_cut)


def _capped_at_one(alpha, log_alpha, tpr, grid, deltas, advantage):
    """min(S, 1): the hull cut where it reaches true-positive rate 1.

    Allowances added to every t (slack, P(+∞), the excess of curve pairs) can
    carry the hull above 1, which no test reaches: the TPR of any test is at
    most 1, so min(S, 1) is as certified as S. Its vertices are those below 1
    and the point (α', 1) where the segment crossing 1 reaches it (α' from
    log-space interpolation, nudged down: a smaller α' only lowers the curve);
    its profile is 1 − e^ε α' for slopes e^ε below that segment's, and
    unchanged above. Without the cut a test with t ≥ 1 at α > 0 needs μ = ∞
    although the (symmetric) curve it gives is μ-GDP for a finite μ.
    """
    over = np.flatnonzero(tpr >= 1.0)
    if over.size == 0 or over[0] == 0:
        return alpha, log_alpha, tpr, deltas, advantage, None
    k = int(over[0])
    t0, t1 = float(tpr[k - 1]), float(tpr[k])
    la0, la1 = float(log_alpha[k - 1]), float(log_alpha[k])
    share = (1.0 - t0) / (t1 - t0)  # in (0, 1]
    if share >= 1.0:
        log_cross = la1
    elif math.isinf(la0):
        log_cross = la1 + math.log(share)
    else:
        log_cross = float(np.logaddexp(la0 + math.log1p(-share), la1 + math.log(share)))
    log_cross -= 1e-14 * (1.0 + abs(log_cross))
    # The segment's slope e^{ε_s} = (t1 − t0)/(α1 − α0); slopes below it now support at α'.
    run = la1 if math.isinf(la0) else la1 + math.log1p(-math.exp(la0 - la1))
    log_slope = math.log(t1 - t0) - run
    below = np.flatnonzero(grid < log_slope)
    with np.errstate(over="ignore"):
        capped = 1.0 - np.exp(grid[below] + log_cross)
    deltas[below] = np.minimum(deltas[below], capped)  # in place: steep_curve's own array
    del below, capped
    if log_slope > 0.0:  # ε = 0 is below the segment's slope: the advantage is capped too
        advantage = float(np.clip(min(advantage, 1.0 - math.exp(log_cross)), 0.0, 1.0))
    # In place (steep_curve's own arrays), keeping the first k + 1 entries as views.
    alpha[k], log_alpha[k], tpr[k] = math.exp(log_cross), log_cross, 1.0
    return alpha[: k + 1], log_alpha[: k + 1], tpr[: k + 1], deltas, advantage, log_cross


_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
_GOLDEN_STEPS = 72  # 0.618^72 ≈ 1e-15: the bracket is at double precision
#: Interior points each step of the search evaluates per bracket: it shrinks (K + 1)/2 = 16-fold.
_SECTION_POINTS = 31
_SECTION_STEPS = 13  # 16^-13 ≈ 2e-16: the bracket is at double precision
#: Searches of at most this many brackets go by multisection (a table's few α: 13 calls of
#: the profiles instead of 74, each call's fixed cost deciding); more by golden section
#: (a plot's hundreds of α: one point per bracket and call, the points deciding).
_MULTISECTION_BRACKETS = 64


def _profile_delta(profiles, epsilon: np.ndarray) -> np.ndarray:
    """max over directions of the profiles' δ(ε) (each as its kind certifies)."""
    return np.max([np.asarray(p.delta(epsilon), dtype=float) for p in profiles], axis=0)


def _multisection(function, low: np.ndarray, high: np.ndarray, sign: float) -> np.ndarray:
    """Extreme value of unimodal functions on [low, high] by multisection search.

    Each step evaluates K equally spaced interior points of every bracket in one
    call (``function`` of a (K, n) array) and keeps the two cells beside the best
    point, where a unimodal function's extreme lies: the bracket shrinks by
    (K + 1)/2 per step, so 13 calls do what golden-section search does in 74.
    ``sign`` = +1 minimises, −1 maximises; the best value evaluated is returned,
    so a minimum is approached from above and a maximum from below.
    """
    fractions = np.arange(1, _SECTION_POINTS + 1, dtype=float)[:, None] / (_SECTION_POINTS + 1)
    columns = np.arange(low.size)
    a, b = low.astype(float), high.astype(float)
    best = np.full(low.shape, np.inf)
    for _ in range(_SECTION_STEPS):
        points = a + fractions * (b - a)
        values = sign * function(points)
        index = np.argmin(values, axis=0)
        best = np.minimum(best, values[index, columns])
        centre, cell = points[index, columns], (b - a) / (_SECTION_POINTS + 1)
        a, b = np.maximum(centre - cell, a), np.minimum(centre + cell, b)
    return sign * best


def _golden(function, low: np.ndarray, high: np.ndarray, sign: float) -> np.ndarray:
    """Extreme value of unimodal functions on [low, high] by golden-section search.

    ``sign`` = +1 minimises, −1 maximises; the best value evaluated is
    returned, so a minimum is approached from above and a maximum from below.
    """
    a, b = low.copy(), high.copy()
    c = b - _GOLDEN * (b - a)
    d = a + _GOLDEN * (b - a)
    fc, fd = sign * function(c[None])[0], sign * function(d[None])[0]
    best = np.minimum(fc, fd)
    for _ in range(_GOLDEN_STEPS):
        left = fc < fd  # the extreme lies in [a, d]
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        keep_point = np.where(left, c, d)  # becomes d (left) or c (right)
        keep_value = np.where(left, fc, fd)
        new = np.where(left, b - _GOLDEN * (b - a), a + _GOLDEN * (b - a))
        value = sign * function(new[None])[0]
        best = np.minimum(best, value)
        c = np.where(left, new, keep_point)
        d = np.where(left, keep_point, new)
        fc = np.where(left, value, keep_value)
        fd = np.where(left, keep_value, value)
    return sign * best


def profile_curve_beta(profiles, alpha) -> np.ndarray:
    """The symmetric curve sup_{ε ≥ 0} f_{ε, δ(ε)}(α) of profiles, without building its hull.

    δ(ε) = max over ``profiles`` of their δ (e.g. the accountant's optimistic
    ones). With γ = e^ε, β = max(1 − S(α), F⁻¹(α), 0) where
    S(α) = min_γ δ(γ) + γα (convex in γ) and F⁻¹(α) = max_γ (1 − α − δ(γ))/γ
    (a concave function over a linear one: unimodal), both found by
    multisection or golden-section search in ε ∈ [0, largest atom + 1] — for plots and
    tables at a few hundred α, where building the exact hull would cost more.
    """
    alpha = np.asarray(alpha, dtype=float)
    top = max(float(p.losses[-1]) if p.losses.size else 0.0 for p in profiles)
    count = alpha.size
    flat = np.ravel(alpha)
    log_alpha = np.log(flat, out=np.full(flat.shape, -np.inf), where=flat > 0.0)

    def both(eps):
        # Both searches at once (one δ evaluation per step for all points, eps of shape
        # (K, 2n)): the first n columns minimise S's argument, the last n minus F⁻¹'s.
        deltas = _profile_delta(profiles, eps.ravel()).reshape(eps.shape)
        with np.errstate(over="ignore"):
            # e^ε·α as exp(ε + log α): 0 (not inf·0 = NaN) at α = 0 when e^ε overflows.
            steep = deltas[:, :count] + np.exp(eps[:, :count] + log_alpha)
        shallow = (1.0 - flat - deltas[:, count:]) * np.exp(-eps[:, count:])
        return np.concatenate((steep, -shallow), axis=1)

    low = np.zeros(2 * count)
    high = np.full(2 * count, max(top, 0.0) + 1.0)
    search = _multisection if low.size <= _MULTISECTION_BRACKETS else _golden
    best = search(both, low, high, 1.0)
    tpr = np.minimum(best[:count], 1.0)
    mirrored = -best[count:]
    return np.clip(np.maximum(1.0 - tpr, mirrored), 0.0, 1.0)
