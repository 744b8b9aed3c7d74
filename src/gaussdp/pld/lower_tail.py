r"""Lower bounds at small δ from an exponentially tilted composition of the dominated pair.

The binned (optimistic) composition of :func:`gaussdp.pld.composition.compose_many`
gives up the FFT's rounding allowance A = u·(4T + 16 log₂ N) of every δ it
bounds from below: an absolute error, which at δ = 1e-9 after ImageNet's
71,589 steps (A ≈ 6e-11) is 6% of δ, whatever the grid. This module removes
that floor where it matters, without atom-by-atom error analysis.

**The bound.** For the dominated pair (P, Q) of the composition (grid atoms
k with P-mass P_k, Q-mass Q_k, plus P(+∞)), and *any* set K of atoms,

    δ(ε) = Σ_k (P_k − e^ε Q_k)_+ + P(+∞) ≥ Σ_{k ∈ K} (P_k − e^ε Q_k) + P(+∞),

since dropping atoms and positive parts can only lower the sum; and the true
mechanism's δ(ε) is at least the dominated pair's (binning is
post-processing). With K = {r, …, top} (grid indices), a_r ≤ Σ_K P_k and
b_r ≥ Σ_K Q_k,

    L_r(ε) = a_r − e^ε b_r + P(+∞)

is a certified lower bound on δ(ε) for every r, so δ(ε) ≥ max_r L_r(ε), and
ε(δ) ≥ max_r log((a_r + P(+∞) − δ)/b_r) in closed form (an ε below that
would give L_r(ε) > δ). This is the hockey-stick divergence read on suffixes
of the grid (the lecture, file 003, hockey-stick divergence); where the
merged atoms' true losses increase with their labels — as they do — its
maximum over r is the profile's own value.

**The tilt.** a_r and b_r come from both rows composed exponentially tilted,
P̃_k = P_k e^{λk}/M_P(λ) and R̃_k = R_k e^{λk}/M_R(λ) (R_k = Q_k e^{l_k}, the
stored form; Dong, Roth & Su's moment generating functions are these M's):
the composition of tilted rows is the tilted composition exactly, and
untilting an entry k multiplies its rounding error by M^T e^{−λk}. So the
error of a suffix sum from r up is at most E·M^T e^{−λr} (E the L1 error of
the tilted row), relative to the tail instead of to the whole distribution.
λ is the saddle point of the Chernoff bound at the index of the queried ε,
where the tilted masses are largest. What the windows let in is bounded:

* tilted mass above the window's top (Chernoff on the tilted masses) wraps
  to its bottom and can only land at entries k ≥ r with an untilting factor
  at most M^T e^{−λr}: it is added to E;
* mass below the window's start wraps to its top, read there at e^{−λ·L}
  of its P-mass or less (L the FFT length): at most e^{−λL} in all;
* Q's wrapped copies only raise b_r, which is an upper bound: nothing to do.

The suffix sums are those of :func:`gaussdp._numerics.suffix_sums`, moved by
their certified relative error, as the profiles' are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from gaussdp._numerics import (
    CACHE_CHUNK,
    LOG_ROUNDING,
    UNIT_ROUNDOFF,
    next_fast_length,
    suffix_sums,
    union_of_independent,
)
from gaussdp.pld.chernoff import blocked_terms, chernoff_cut, log_mgf, saddle, spread
from gaussdp.pld.composition import _compose_row, rounding_allowance
from gaussdp.pld.grid import GridPLD
from gaussdp.pld.query import Lattice
from gaussdp.pld.tilt import Tilt, reachable

__all__ = ["LowerTail", "compose_lower_tail", "label_drift", "lower_tail_discretisation_tail"]

# Relative margin by which a solved ε is moved down (the closed form's rounding).
_ROUNDING = 1e-12
# P-mass the rows may leave out (their highest atoms), as a share of tolerance·δ.
_DROP_SHARE = 0.1
# The window starts this far (in nats, or 64 atoms if more) below the queried loss.
_START_MARGIN = 0.05


@dataclass(frozen=True, eq=False)
class LowerTail:
    """Certified suffix sums of a dominated pair: δ(ε) ≥ max_r a_r − e^ε b_r + P(+∞).

    Suffix i holds the window's atoms i, i + 1, …, at grid losses
    ``losses[i]`` onwards. ``tail_p[i]`` and ``tail_q[i]`` are the computed
    sums of their P-masses and of their Q-masses times e^{−q_scale}; the
    certified bounds move them by their relative rounding (``relative_p``,
    ``relative_q``: the sums', and the tilts', :class:`gaussdp.pld.tilt.Tilt`)
    and by the untilted absolute error, which decays geometrically from the
    window's start:

        a_i = tail_p[i]·(1 − relative_p) − error_p·e^{−decay_p·i} − below,
        b_i·e^{−q_scale} = tail_q[i]·(1 + relative_q) + error_q·e^{−decay_q·i} + dropped_q,

    ``dropped_q`` the Q-mass of the atoms left out of the rows (times
    e^{−q_scale}; :func:`_truncated`).
    """

    losses: Lattice
    tail_p: np.ndarray
    tail_q: np.ndarray
    q_scale: float
    relative_p: float
    relative_q: float
    error_p: float
    decay_p: float
    below: float
    error_q: float
    decay_q: float
    infinity_mass: float
    dropped_q: float = 0.0

    def _chunks(self, certified: bool = True):
        """(a, b·e^{−q_scale}) of consecutive chunks of suffixes; uncertified: the sums.

        Computed a chunk at a time and not kept: a tail is kept by its
        accounting for later queries, and the certified copies of two arrays
        of millions of suffixes would double what it holds.
        """
        for start in range(0, self.tail_p.size, _READ_CHUNK):
            tail_p = self.tail_p[start : start + _READ_CHUNK]
            tail_q = self.tail_q[start : start + _READ_CHUNK]
            if not certified:
                yield tail_p, tail_q
                continue
            index = np.arange(start, start + tail_p.size)
            a = tail_p * (1.0 - self.relative_p)
            a -= self.error_p * np.exp(-self.decay_p * index) + self.below
            b = tail_q * (1.0 + self.relative_q)
            b += self.error_q * np.exp(-self.decay_q * index) + self.dropped_q
            yield a, b

    def delta(self, epsilon) -> np.ndarray:
        """max_r L_r(ε): a certified lower bound on δ(ε), for an array of ε."""
        epsilon = np.asarray(epsilon, dtype=float)
        flat = np.ravel(epsilon)
        values = np.full(flat.size, -np.inf) if self.tail_p.size else np.zeros(flat.size)
        with np.errstate(over="ignore", invalid="ignore"):
            weights = np.exp(flat + self.q_scale)  # may overflow to ∞: then only b = 0 counts
            for a, b in self._chunks():
                step = max(1, 4_000_000 // b.size)
                for first in range(0, flat.size, step):
                    part = weights[first : first + step, None]
                    charged = np.where(b[None, :] > 0.0, part * b[None, :], 0.0)
                    best = np.max(a[None, :] - charged, axis=1)
                    values[first : first + step] = np.maximum(values[first : first + step], best)
        return np.maximum(values + self.infinity_mass, 0.0).reshape(epsilon.shape)

    def epsilon(self, delta: float, certified: bool = True) -> float:
        """max_r log((a_r + P(+∞) − δ)/b_r): a lower bound on ε(δ) (0 if no suffix gives one).

        ``certified=False`` reads the computed sums as they are, to show what
        the certification costs.
        """
        ratio = -math.inf
        for a, b in self._chunks(certified):
            excess = a + (self.infinity_mass - delta)
            usable = (excess > 0.0) & (b > 0.0)
            if np.any(usable):
                ratio = max(ratio, float(np.max(excess[usable] / b[usable])))
        if not ratio > 0.0:
            return 0.0
        value = max(math.log(ratio) - self.q_scale, 0.0)
        return value - _ROUNDING * max(value, 1e-3) if value > 0.0 else value


#: Suffixes per chunk when a :class:`LowerTail` is read.
_READ_CHUNK = 1 << 16


def _row_terms(rows: list[np.ndarray], counts: list[int]):
    """(log masses, indices, count) of each row's positive masses (as ``log_terms``)."""
    terms = []
    for row, count in zip(rows, counts, strict=True):
        positive = row > 0
        terms.append((np.log(row[positive]), np.nonzero(positive)[0].astype(float), count))
    return terms


def compose_lower_tail(
    items: list[tuple[GridPLD, int]],
    epsilon: float,
    delta: float,
    tolerance: float,
    longest: int | None = None,
    reach: float | None = None,
) -> LowerTail | None:
    """The :class:`LowerTail` of Σ counts_i copies of optimistic grid distributions.

    Tilted at the saddle point of the Chernoff bound at the grid index of
    ``epsilon`` (the loss at which δ is about ``delta``). The window starts
    a little below that index and is long enough that what the windows let
    in — tilted mass above the top, mass below the start, read e^{−λL} —
    costs at most ``tolerance``·``delta`` there, besides the rounding
    allowance. None when ``epsilon`` is not above the bulk of the
    composition (where the untilting factor M^T e^{−λk} exceeds 1 the plain
    composition is the better bound), or when the window would be longer
    than ``longest`` points (what memory allows).

    ``reach``: the largest loss whose δ the tail will be asked for (None: any
    in the window). Only the suffixes that can decide there are kept
    (:func:`_suffixes_kept`); every suffix sum is still over the whole window.
    """
    first = items[0][0]
    if first.is_pessimistic:
        raise ValueError("a lower tail is composed from optimistic (binned) distributions")
    spacing = first.spacing
    # Q-mass dropped adds to every b_r; at the queried loss b is about δ·e^{−ε}.
    share = _DROP_SHARE * tolerance * delta
    items, dropped_q = _truncated(items, share, share * math.exp(-epsilon))
    counts = [count for _, count in items]
    offset = sum(count * pld.offset for pld, count in items)
    full = sum(count * (pld.p_masses.size - 1) for pld, count in items) + 1
    p_terms = _row_terms([pld.p_masses for pld, _ in items], counts)
    q_terms = _row_terms([pld.tilted_q_masses for pld, _ in items], counts)
    blocked_p = blocked_terms(p_terms)
    scale = spread(blocked_p)  # the searches' scale: the sum's standard deviation
    # Relative index of the labels of the atoms whose true loss is the queried one.
    drift = label_drift(items)
    target = (epsilon + drift) / spacing - offset
    lam, _ = saddle(p_terms, target, scale, blocked=blocked_p)
    # Exactly representable exponents (Tilt): λ, and log M for either row.
    tilt_p = Tilt.of(items, lam, full, lambda n, at, t=p_terms: log_mgf(t[n][0], t[n][1], at))
    lam = tilt_p.lam
    tilt_q = Tilt.of(items, lam, full, lambda n, at, t=q_terms: log_mgf(t[n][0], t[n][1], at))
    log_mgfs_p, log_total_p, log_total_q = tilt_p.log_mgfs, tilt_p.log_total, tilt_q.log_total
    margin = max(_START_MARGIN / spacing, 64.0)
    start = max(math.ceil(log_total_p / lam), math.floor(target - margin), 0)
    if start >= min(target, full - 1):
        return None
    # What the windows let in may cost tolerance·δ/4 each at the queried index, where
    # a unit of tilted mass untilts to e^{log M^T − λ·target} (about δ, up to the
    # Chernoff bound's slack).
    log_budget = math.log(0.25 * tolerance) + math.log(delta)  # δ may be far below 1e-300·…
    # Mass above the top wraps to the bottom, read at most at the untilting factor of
    # the suffix it lands in; Q's wrapped copies only raise b, an upper bound.
    tilted_p = [
        (log_p + lam * idx - m, idx, c)
        for (log_p, idx, c), m in zip(p_terms, log_mgfs_p, strict=True)
    ]
    log_wrap = min(log_budget - (log_total_p - lam * target), math.log(1e-3))
    cut, mu, log_total_tilted = chernoff_cut(tilted_p, log_wrap, scale, +1, with_total=True)
    top = max(start, min(math.ceil(cut), full - 1))
    needed = max(top - start + 1, math.ceil(-log_budget / lam))
    length = next_fast_length(needed)
    if longest is not None and length > longest:
        return None
    top = min(start + length - 1, full - 1)
    keep = top - start + 1
    above = 0.0
    if top < full - 1:
        above = math.exp(min(log_total_tilted - mu * (top + 1), 0.0))
    allowance = rounding_allowance(max(length, full), sum(counts))
    ends = np.array([start, start + keep - 1], dtype=float)
    untilt_p = float(np.max(np.abs(log_total_p - lam * ends)))
    # as long as every step's grid: not held while the rows compose
    del p_terms, q_terms, tilted_p, blocked_p
    p = _compose_row(items, lambda n, pld: tilt_p.row(pld.p_masses, n), length, start, keep)
    # Untilt: P_k = P̃_k·M_P^T e^{−λk}; Q_k = R̃_k·M_R^T e^{−λk}·e^{−l_k}, the latter
    # scaled by e^{−q_scale} (its value at the start) so that nothing overflows.
    # (in place, a chunk at a time: no temporaries as long as the row)
    for first in range(0, keep, CACHE_CHUNK):
        part = p[first : first + CACHE_CHUNK]
        part *= np.exp(log_total_p - lam * (start + np.arange(first, first + part.size)))
    # only the suffixes kept (their sums over the whole window): the rest is not held
    # while Q's row composes
    kept = _suffixes_kept(keep, offset + start, spacing, epsilon, drift, reach)
    tail_p, error_p = suffix_sums(p, kept)
    del p
    q = _compose_row(items, lambda n, pld: tilt_q.row(pld.tilted_q_masses, n), length, start, keep)

    def q_exponent(first: int, size: int) -> np.ndarray:
        relative = start + np.arange(first, first + size)
        return (log_total_q - lam * relative) - (offset + relative) * spacing

    q_scale = float(q_exponent(0, 1)[0])
    largest = 0.0
    for first in range(0, keep, CACHE_CHUNK):
        part = q[first : first + CACHE_CHUNK]
        exponent = q_exponent(first, part.size)
        largest = max(largest, float(np.max(np.abs(exponent))))
        part *= np.exp(exponent - q_scale)
    # every roundoff of the exponent: the λ-part, the loss, their difference, the shift
    loss_ends = np.abs((offset + ends) * spacing)
    largest *= 2.0
    untilt_q = float(np.max(np.abs(log_total_q - lam * ends)) + np.max(loss_ends)) + largest
    tail_q, error_q = suffix_sums(q, kept)
    del q
    return LowerTail(
        losses=Lattice(offset + start, spacing, kept),
        tail_p=tail_p,
        tail_q=tail_q,
        q_scale=q_scale,
        # the tilts' roundings, the sums', the products' and (for Q) the log
        relative_p=error_p
        + tilt_p.rounding(items, [d.p_masses for d, _ in items], untilt_p)
        + 4.0 * UNIT_ROUNDOFF,
        relative_q=error_q
        + tilt_q.rounding(items, [d.tilted_q_masses for d, _ in items], untilt_q)
        + LOG_ROUNDING
        + 4.0 * UNIT_ROUNDOFF,
        error_p=(allowance + above) * math.exp(log_total_p - lam * start),
        decay_p=lam,
        below=math.exp(-lam * length),
        error_q=allowance,
        decay_q=lam + spacing,
        infinity_mass=_infinity_mass(items),
        dropped_q=math.exp(math.log(dropped_q) - q_scale) if dropped_q > 0.0 else 0.0,
    )


def _suffixes_kept(
    keep: int, first: int, spacing: float, epsilon: float, drift: float, reach: float | None
) -> int:
    """How many of a window's ``keep`` suffixes a tail tilted at ``epsilon`` keeps.

    A query whose answer is the loss ε is decided by the suffix that starts
    where the true losses pass ε, at the label ε + drift (:func:`label_drift`;
    merged atoms spread around it by much less than a bin: 0.003 nats on
    σ = 0.5, q = 1e-6, T = 10⁶). Suffixes with labels above ``reach`` + drift +
    max(``reach`` − ``epsilon``, :data:`_START_MARGIN`) + 64 grid steps decide no
    query the tail serves. A max over fewer suffixes is still a lower bound;
    the tail's window is as long as before, its suffix sums over all of it.
    On σ = 0.5, q = 1e-6, T = 10⁶ the tail at δ = 1e-9 held 8.1 M suffixes
    (130 MB), of which 19 k decide; σ = 1, q = 1e-5, T = 10⁶: 1 M (17 MB),
    38 k.
    """
    if reach is None:
        return keep
    margin = max(reach - epsilon, _START_MARGIN)
    last = math.ceil((reach + drift + margin) / spacing) + 64 - first
    return int(min(max(last + 1, 1), keep))


def label_drift(items: list[tuple[GridPLD, int]]) -> float:
    """How far the composed labels lie above the true losses of the atoms: Σ c_i·E_P[l − L].

    Binning keeps each merged atom's true loss L_k = log(P_k/Q_k) in its
    masses (R_k = Q_k·e^{l_k}, so l_k − L_k = −log(P_k/R_k)), but labels it
    l_k, the nearest grid point; a composed atom's label is the sum of its
    summands', and so is its true loss. A spike narrower than the grid sits
    off its label by the same amount in every summand: on σ = 0.5,
    q = 1e-6, T = 10⁶ (h = 1.5e-6) the remove direction's labels lie
    0.258 nats *below* the true losses, and a tail tilted at the label of
    the queried loss held none of the atoms that decide δ there (its lower
    bound on ε(1e-9) was 0.40 where the upper bound is 0.565). The drift of
    the atoms at a small δ is that of the bulk summands (T − 1 of T), so the
    P-weighted mean serves.
    """
    drift = 0.0
    for pld, count in items:
        p, r = pld.p_masses, pld.tilted_q_masses
        both = (p > 0.0) & (r > 0.0)
        if np.any(both):
            mass = p[both]
            drift += count * float(np.sum(mass * -np.log(mass / r[both])) / np.sum(mass))
    return drift


def lower_tail_discretisation_tail(total_count: int, tolerance: float, delta: float) -> float:
    """The mass each mechanism's binned grid may fold into its end atoms, for a lower tail.

    Folding outcomes into the end atoms is post-processing (the lower bound
    stays one whatever the fold). The mass folded into the top atom is a
    tenth of what :func:`_truncated` may leave out
    (:data:`_DROP_SHARE`·``tolerance``·``delta``), shared over the
    ``total_count`` compositions by the union bound, so atoms that far up
    are left out anyway unless their Q-mass keeps them (then the fold only
    costs tightness). At least 1e-30.
    """
    return max(0.1 * _DROP_SHARE * tolerance * delta / total_count, 1e-30)


def _truncated(items: list[tuple[GridPLD, int]], budget: float, q_budget: float):
    """The distributions without their atoms at relative indices from K up, and a Q bound.

    K is the smallest index whose atoms hold at most ``budget`` of every
    composed P-mass (:func:`gaussdp.pld.tilt.reachable`) and at most
    ``q_budget`` of Q-mass, Σ c_i·Q_i(index ≥ K). Dropping
    P-mass only lowers every a_r, by at most ``budget`` (sums that took such
    an atom); under the tilt these atoms would weigh most, and their tilted
    copies would need a window many steps long. Q-mass dropped would lower
    b_r, which must stay an upper bound: the Q-mass of the sums that took
    one, at most Σ c_i·Q_i(index ≥ K), is returned to be added to every b_r
    (where the Q-masses of high losses are not small, as for a Gaussian, this
    is what keeps K high).
    """
    kept, dropped = reachable(items, budget)
    if dropped == 0.0:
        return items, 0.0
    longest = max(pld.p_masses.size for pld, _ in items)
    q_above = np.zeros(longest + 1)  # Σ c_i·Q_i(index ≥ k), k = 0 … longest
    for pld, count in items:
        losses = (pld.offset + np.arange(pld.p_masses.size)) * pld.spacing
        q_masses = pld.tilted_q_masses * np.exp(-losses)
        q_above[: q_masses.size] += count * np.cumsum(q_masses[::-1])[::-1]
    kept = max(kept, int(np.argmax(q_above <= q_budget)))
    if kept >= longest:
        return items, 0.0
    dropped_q = 0.0
    for pld, count in items:
        losses = (pld.offset + np.arange(kept, pld.p_masses.size)) * pld.spacing
        q_masses = pld.tilted_q_masses[kept:] * np.exp(-losses)
        # numpy's pairwise sum errs by at most ~log2(n)·u relative (positive terms), far
        # inside the 1e-9 added below (math.fsum walked the array a float at a time)
        dropped_q += count * float(np.sum(q_masses))
    truncated = [
        (
            replace(
                pld,
                p_masses=pld.p_masses[:kept],
                tilted_q_masses=pld.tilted_q_masses[:kept],
            ),
            count,
        )
        for pld, count in items
    ]
    return truncated, dropped_q * (1.0 + 1e-9)


def _infinity_mass(items: list[tuple[GridPLD, int]]) -> float:
    """P(+∞) of the composition, rounded down."""
    return union_of_independent(((pld.infinity_mass, count) for pld, count in items), upward=False)
