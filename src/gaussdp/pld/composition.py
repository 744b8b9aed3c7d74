"""Composition of grid privacy loss distributions by FFT.

Adaptive composition adds privacy losses, so the loss distribution of a
composition is the convolution of the components' (Koskela, Jälkö & Honkela
2020; the lecture, file 003, §PLD). Two operations:

* :func:`compose` — linear convolution of two (different) distributions,
  followed by a certified trim of negligible extreme mass;
* :func:`compose_many` — any number of copies of several distributions at
  once, as the product of their transforms raised to their counts, inverted
  once on a window chosen by Chernoff bounds (:func:`self_compose` is the
  one-distribution case).

Truncated mass is never dropped from an upper bound: in the pessimistic form
mass trimmed above the window goes to +∞, mass trimmed below is moved up to
the window's lowest point, and mass that may wrap around in the circular
convolution to the unsafe side is bounded (Chernoff, with the exact moment
generating function of the discrete distribution) and carried as ``slack``,
added to every δ, together with an allowance for floating-point rounding in
the transforms (:func:`rounding_allowance`). In the optimistic form (separate
P and tilted Q masses) any regrouping of atoms is post-processing, so trimmed
mass is folded into the boundary atoms; only mass wrapping from below the
window to its top (where its tilted Q-mass would be read at too high a loss)
is bounded and carried as ``slack`` with the rounding allowance, subtracted
from every δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from gaussdp._numerics import CACHE_CHUNK, UNIT_ROUNDOFF, next_fast_length, union_of_independent
from gaussdp.pld.chernoff import (
    blocked_terms,
    chernoff_cut,
    log_mgf,
    log_terms,
    saddle,
    spread,
    tilted_reach,
)
from gaussdp.pld.grid import GridPLD
from gaussdp.pld.memory import REUSE_FROM_POINTS, reuse_freed_memory
from gaussdp.pld.tilt import Tilt, reachable, tail_index

__all__ = [
    "CompositionPlan",
    "compose",
    "drop_budget",
    "needs_tilt",
    "plain_plan",
    "plan_self_composition",
    "rounding_allowance",
    "self_compose",
    "tilted_discretisation_tail",
    "trim",
    "window_tail",
]

# FFTs are numpy's (pocketfft, like scipy.fft's): scipy.fft caches up to 16 plans, each
# holding twiddle factors of about 8 bytes per point, which a long run's windows of
# millions of points turn into 100 MB that outlive the composition (measured: 836 MB
# peak RSS against 673 MB for the 10^6-step report). numpy's keeps no plan, and runs
# on one thread (one row's transform is not parallelised by either).
# Sums of products are written out (np.sum(x * y)), not np.dot: OpenBLAS runs a long
# dot product on threads that then spin, doubling the CPU time of a composition.


def rounding_allowance(length: int, times: int = 1) -> float:
    """An allowance for floating-point rounding in an FFT convolution, as P-mass.

    Raising a Fourier coefficient to the T-th power carries a relative error
    of about T·u (u the unit roundoff), and each transform adds about
    u·log₂(N); the error of every δ read off the result is bounded by the
    total absolute error of the masses, which these terms bound generously
    (measured errors are orders of magnitude smaller). Carried in ``slack``
    so that upper bounds stay upper bounds and lower bounds lower bounds.
    """
    return UNIT_ROUNDOFF * (4.0 * times + 16.0 * math.log2(max(length, 2)))


# Below this, exp() underflows to zero in double precision.
_LOG_UNDERFLOW = -745.0

# Masses this small (relative to the total) at the extremes are trimmed.
DEFAULT_TAIL = 1e-30
#: The tail of :func:`window_tail`, as a share of the rounding allowance.
_WINDOW_SHARE = 1e-3


def window_tail(times: int) -> float:
    """The tail at which the window of a plain composition of ``times`` mechanisms is cut.

    Every δ of a composition computed without exponential tilting carries
    the rounding allowance u·(4T + 16 log₂ N) (:func:`rounding_allowance`),
    which no window makes smaller; cutting the window where the tails hold a
    thousandth of its T-part, 4uT, changes the δ's and the floor by at most
    that share and shortens the FFT by up to a third against a tail of
    1e-30 (:func:`plain_plan`). Tilted compositions keep
    :data:`DEFAULT_TAIL`: their floor is far below the allowance.
    """
    return max(_WINDOW_SHARE * 4.0 * UNIT_ROUNDOFF * times, DEFAULT_TAIL)


def plain_plan(items: list[tuple[GridPLD, int]]) -> tuple[CompositionPlan, float]:
    """The window and the trim level of a composition computed without tilting.

    Both ends at :func:`window_tail`, and trimmed there. Pessimistic: mass
    above the window is carried as slack, mass below it only moves up.
    Optimistic: the wrap-around from below is carried, and mass above the
    window moves down, which lowers every lower-bound δ by at most the tail:
    a thousandth of the allowance those δ's already give up (where the
    computed δ is below the allowance the lower bound is 0 anyway).
    """
    tail = window_tail(sum(count for _, count in items))
    return plan_composition(items, tail), tail


def _check_compatible(first: GridPLD, second: GridPLD) -> None:
    if first.kind != second.kind:
        raise ValueError("cannot compose a pessimistic with an optimistic distribution")
    if not math.isclose(first.spacing, second.spacing, rel_tol=1e-12):
        raise ValueError(
            f"grid spacings differ ({first.spacing} and {second.spacing}); "
            "discretise every component on the same grid"
        )


def _convolve(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Linear convolution of two mass vectors (by real FFT), clipped at 0."""
    if x.size == 1 or y.size == 1:
        return np.convolve(x, y)
    size = x.size + y.size - 1
    length = next_fast_length(size)
    product = np.fft.rfft(x, length) * np.fft.rfft(y, length)
    return np.maximum(np.fft.irfft(product, length)[:size], 0.0)


def _first_past(values: np.ndarray, threshold: float) -> int:
    """``searchsorted(cumsum(values), threshold, side="right")``, over growing prefixes.

    ``np.cumsum`` accumulates in order, so the cumulative sums of a prefix are
    those of the whole array: the cut is found without summing the whole array
    (after a composition planned at the same tail it lies a few atoms in).
    """
    size = 4096
    while True:
        prefix = np.cumsum(values[:size])
        if prefix[-1] > threshold or size >= values.size:
            return int(np.searchsorted(prefix, threshold, side="right"))
        size *= 4


def trim(pld: GridPLD, tail: float = DEFAULT_TAIL) -> GridPLD:
    """Drop negligible mass at both ends of the grid, in the certified direction.

    Pessimistic: the lowest atoms holding at most ``tail`` of P-mass are
    moved up to the first kept atom, the highest ones to +∞. Optimistic: both
    ends are folded into the boundary atoms (P and Q masses alike).
    """
    p = pld.p_masses
    if p.size <= 2:
        return pld
    total = float(p.sum())
    threshold = tail * max(total, 1e-300)
    start = _first_past(p, threshold)
    stop = p.size - _first_past(p[::-1], threshold)
    start = min(start, p.size - 1)
    stop = max(stop, start + 1)
    if start == 0 and stop == p.size:
        return pld
    kept = p[start:stop].copy()
    below = float(p[:start].sum())
    above = float(p[stop:].sum())
    if pld.is_pessimistic:
        kept[0] += below
        infinity = min(pld.infinity_mass + above, 1.0)
        return replace(pld, offset=pld.offset + start, p_masses=kept, infinity_mass=infinity)
    # Regrouping atom j into atom k rescales its tilted Q-mass by e^{l_k − l_j}.
    r = pld.tilted_q_masses
    h = pld.spacing
    kept_q = r[start:stop].copy()
    if start > 0:
        kept_q[0] += float(np.sum(r[:start] * np.exp(h * (start - np.arange(start)))))
    if stop < p.size:
        last = stop - 1
        kept_q[-1] += float(np.sum(r[stop:] * np.exp(h * (last - np.arange(stop, p.size)))))
    kept[-1] += above
    kept[0] += below
    return replace(pld, offset=pld.offset + start, p_masses=kept, tilted_q_masses=kept_q)


def compose(first: GridPLD, second: GridPLD, tail: float = DEFAULT_TAIL) -> GridPLD:
    """The distribution of the composition of two mechanisms (convolution)."""
    _check_compatible(first, second)
    p = _convolve(first.p_masses, second.p_masses)
    q = None
    if not first.is_pessimistic:
        q = _convolve(first.tilted_q_masses, second.tilted_q_masses)
    infinity = union_of_independent(
        ((first.infinity_mass, 1), (second.infinity_mass, 1)), upward=first.is_pessimistic
    )
    composed = GridPLD(
        first.spacing,
        first.offset + second.offset,
        p,
        q,
        infinity,
        first.kind,
        first.slack
        + first.slack_below
        + first.slack_at_cut
        + second.slack
        + second.slack_below
        + second.slack_at_cut
        + rounding_allowance(p.size),
        first.compositions + second.compositions,
    )
    return trim(composed, tail)


#: Compositions with at most this many possible sums are computed whole, without a
#: Chernoff search for their window: a real FFT of 4096 points takes ~30 µs, the two
#: searches ~0.2 ms of Python (σ = 15, q = 5.1e-5, 2 steps: 95 sums, a window of 72).
WHOLE_SUPPORT_POINTS = 4096


@dataclass(frozen=True)
class CompositionPlan:
    """Where a composition is computed.

    ``low`` is the first sum kept (relative to the smallest possible sum),
    ``length`` the FFT length, ``above`` and ``below`` bounds on the P-mass
    of the sums beyond the window's ends (zero when the window holds every
    possible sum).
    """

    low: int
    length: int
    above: float
    below: float


def plan_composition(
    items: list[tuple[GridPLD, int]],
    tail: float = DEFAULT_TAIL,
    upper_tail: float | None = None,
) -> CompositionPlan:
    """Choose the window of sums to compute for Σ counts_i copies of each distribution.

    For any λ > 0, the mass of sums ≥ t is at most e^{−λt} Π M_i(λ)^{c_i}
    with M_i the moment generating function of the masses of distribution i
    (valid for sub-probability masses too), and the mirror bound holds for
    λ < 0. The window runs from the lower to the upper cut at which these
    bounds reach ``tail`` (``upper_tail`` for the upper cut, if given). In
    the circular convolution, mass above the
    window wraps to its bottom (too small a loss: unsafe for the pessimistic
    form, safe for the optimistic one) and mass below wraps to its top (the
    reverse); both bounds are returned.
    """
    full = sum(count * (pld.p_masses.size - 1) for pld, count in items) + 1
    longest = max(pld.p_masses.size for pld, _ in items)
    if full <= longest or (len(items) == 1 and items[0][1] == 1):
        return CompositionPlan(0, full, 0.0, 0.0)
    if full <= WHOLE_SUPPORT_POINTS:  # every sum: no cut, and no search for one
        return CompositionPlan(0, next_fast_length(full), 0.0, 0.0)
    terms = log_terms(items)
    blocked = blocked_terms(terms)
    scale = spread(blocked)
    high_cut, high_lambda, high_total = chernoff_cut(
        terms, math.log(upper_tail or tail), scale, +1, blocked=blocked, with_total=True
    )
    low_cut, low_lambda, low_total = chernoff_cut(
        terms, math.log(tail), scale, -1, blocked=blocked, with_total=True
    )
    low = min(max(math.floor(-low_cut), 0), full - 1)
    high = max(min(math.ceil(high_cut), full - 1), low)
    length = next_fast_length(max(high - low + 1, longest))
    if full <= length:  # the window holds every possible sum: nothing wraps
        return CompositionPlan(0, next_fast_length(full), 0.0, 0.0)

    log_above = high_total - high_lambda * (high + 1)
    log_below = low_total + low_lambda * (low - 1)
    above = math.exp(min(log_above, 0.0)) if high < full - 1 else 0.0
    below = math.exp(min(log_below, 0.0)) if low > 0 else 0.0
    return CompositionPlan(low, length, above, below)


def plan_self_composition(pld: GridPLD, times: int, tail: float = DEFAULT_TAIL) -> CompositionPlan:
    """:func:`plan_composition` for ``times`` copies of one distribution."""
    return plan_composition([(pld, times)], tail)


def _compose_row(
    items, row_of, length: int, low: int, keep: int, noise: list[float] | None = None
) -> np.ndarray:
    """Entries low, …, low + keep − 1 of the cyclic convolution of ``row_of(i, pld)``^count_i.

    The transform of the composition, Π X_i^{c_i}, is accumulated as
    Σ c_i·log|X_i| and Σ c_i·arg X_i, exponentiated only at the frequencies
    that do not underflow (typically a small fraction when the counts are
    large; the angles are computed there only) and inverted once; one row at
    a time, so that the peak memory is that of one transform.
    """
    if length >= REUSE_FROM_POINTS:  # the rows' arrays reuse freed pages (glibc)
        reuse_freed_memory()
    rows = [row_of(number, pld) for number, (pld, _) in enumerate(items)]
    # |X_j| ≤ Σ row_j: a frequency where c_i·log|X_i| is below the underflow less what the
    # others can add, c_j·log⁺(Σ row_j), underflows whatever they are; its angle is not needed.
    lifts = [
        count * max(math.log(total), 0.0) if total > 0.0 else 0.0
        for (_, count), total in zip(items, (float(row.sum()) for row in rows), strict=True)
    ]
    size = length // 2 + 1
    if len(items) == 1:  # one mechanism: X^c in place, chunk by chunk
        (_, count), (row,) = items[0], rows
        if row.size > length:
            row = np.pad(row, (0, -row.size % length)).reshape(-1, length).sum(axis=0)
        transformed = np.fft.rfft(row, length)
        threshold = math.exp(_LOG_UNDERFLOW / count) * (1.0 - 1e-9)
        for start in range(0, size, CACHE_CHUNK):
            values = transformed[start : start + CACHE_CHUNK]
            magnitude = np.abs(values)
            wanted = magnitude > threshold
            exponent = count * np.log(magnitude[wanted])
            alive = exponent > _LOG_UNDERFLOW
            powered = np.zeros(exponent.size, dtype=complex)
            powered[alive] = np.exp(
                exponent[alive] + 1j * (count * np.angle(values[wanted][alive]))
            )
            values[...] = 0.0
            values[wanted] = powered
        return _inverted(transformed, length, low, keep, noise)
    log_magnitude = np.empty(size)
    angle = np.zeros(size)
    for number, ((_, count), row) in enumerate(zip(items, rows, strict=True)):
        if row.size > length:  # fold: a cyclic convolution only sees indices modulo its length
            row = np.pad(row, (0, -row.size % length)).reshape(-1, length).sum(axis=0)
        transformed = np.fft.rfft(row, length)
        # c·log|X| only where it can stay above the underflow (a margin for rounding in
        # the comparison below): elsewhere −inf, which keeps the frequency dead.
        threshold = math.exp((_LOG_UNDERFLOW - (sum(lifts) - lifts[number])) / count)
        threshold *= 1.0 - 1e-9
        # In chunks that stay in the processor's cache, without a full-length temporary.
        for start in range(0, size, CACHE_CHUNK):
            part = slice(start, start + CACHE_CHUNK)
            values = transformed[part]
            magnitude = np.abs(values)
            wanted = magnitude > threshold
            term = np.full(magnitude.size, -np.inf)
            term[wanted] = count * np.log(magnitude[wanted])
            angle[part][wanted] += count * np.angle(values[wanted])
            if number == 0:
                log_magnitude[part] = term
            else:
                log_magnitude[part] += term
    for start in range(0, size, CACHE_CHUNK):
        part = slice(start, start + CACHE_CHUNK)
        alive = log_magnitude[part] > _LOG_UNDERFLOW
        values = np.zeros(alive.size, dtype=complex)
        values[alive] = np.exp(log_magnitude[part][alive] + 1j * angle[part][alive])
        transformed[part] = values
    del log_magnitude, angle
    return _inverted(transformed, length, low, keep, noise)


def _inverted(transformed, length: int, low: int, keep: int, noise) -> np.ndarray:
    """Entries low, …, low + keep − 1 of the inverse transform (``transformed`` is freed)."""
    result = np.fft.irfft(transformed, length)
    del transformed
    if noise is not None:  # the rounding noise's size, seen where it went below 0
        noise.append(max(-float(np.min(result)), 0.0))
    return window(result[None, :], low, keep)[0]


#: From this many composed mechanisms on, the pessimistic form is also computed
#: exponentially tilted (see :func:`compose_many`); below, rounding is negligible.
TILT_FROM_COMPOSITIONS = 10_000
#: The tail level at which the tilted computation is centred.
_TILT_TAIL = 1e-10
#: The tail level at which the tilted computation is centred by default (public name).
DEFAULT_TILT_TAIL = _TILT_TAIL
#: P-mass a tilted composition may lose (to +∞: every δ carries it), as a share of the
#: tail level it is centred at, and at most this share of the floor asked for.
_TILTED_DROP_SHARE = 1e-9
_FLOOR_DROP_SHARE = 1e-5
#: Tilted mass a tilted row may wrap onto the entries it is read at, as a share of
#: its rounding allowance (see :func:`_tilted_composition`).
_TILTED_WRAP_SHARE = 1e-3


def drop_budget(tilt_tail: float | None = None, floor: float | None = None) -> float:
    """The P-mass a tilted composition may lose: 1e-9 of its tilt tail, ≤ 1e-5 of ``floor``.

    Lost mass goes to +∞ (every δ carries it); see :func:`compose_many`.
    """
    drop = _TILTED_DROP_SHARE * (tilt_tail or _TILT_TAIL)
    if floor:
        drop = min(drop, _FLOOR_DROP_SHARE * floor)
    return max(drop, DEFAULT_TAIL)


def tilted_discretisation_tail(
    total_count: int, tilt_tail: float | None = None, floor: float | None = None
) -> float:
    """The mass each mechanism's grid may leave beyond it, for a tilted composition.

    A quarter of the :func:`drop_budget`, shared over the ``total_count``
    compositions: the P-mass above the grid goes to +∞, so the composition
    carries at most the union bound Σ c_i·(tail) = drop/4 there. Atoms
    holding less would be left out by :func:`~gaussdp.pld.tilt.reachable`
    anyway; not discretising them first makes each grid shorter (σ = 1,
    q = 1e-5, 10⁶ steps: 0.51 M points instead of 0.92 M at 1e-30).
    """
    return max(0.25 * drop_budget(tilt_tail, floor) / total_count, DEFAULT_TAIL)


def needs_tilt(length: int, total_count: int, floor: float | None = None) -> bool:
    """Whether a pessimistic composition is also computed exponentially tilted.

    From :data:`TILT_FROM_COMPOSITIONS` compositions on always (rounding is then
    no longer small next to a δ of 1e-8), and whenever the plain rounding
    allowance (:func:`rounding_allowance`, a floor under every δ) exceeds
    the requested ``floor``.
    """
    if total_count >= TILT_FROM_COMPOSITIONS:
        return True
    return floor is not None and rounding_allowance(length, total_count) > floor


def window(rows: np.ndarray, low: int, keep: int) -> np.ndarray:
    """Entries low, low + 1, …, low + keep − 1 of cyclic results, clipped at 0.

    A view unless the window wraps around the end of the rows.
    """
    length = rows.shape[-1]
    start = low % length
    if start + keep <= length:
        rows = rows[:, start : start + keep]
    else:
        rows = np.concatenate((rows[:, start:], rows[:, : start + keep - length]), axis=-1)
    np.maximum(rows, 0.0, out=rows)
    return rows


#: A tilted row may be at most this many times as long as the plain window (see
#: :func:`_within_reach`). 2 until subsampled grids were laid over their own tails
#: (PrivacyLoss.tight_support): the plain window of σ = 0.5, q = 1e-6, 10⁶ steps
#: shrank from 7.86 M to 7.08 M points, λ with it, and ε at δ = 1e-9 grew by 0.03%
#: (0.56542 to 0.56560); at 2.25 the row is as long as before, ε 0.56538.
_TILTED_ROW_RATIO = 2.25


def _within_reach(blocked, lam: float, log_spare: float, drop: float, length: int, scale):
    """λ, lowered where needed so that the tilted row is at most 2.25 times the plain window.

    The tilted row runs from the switch to where the tilted sum's upper tail
    is the wrap share of the rounding allowance (``log_spare``), and at least
    −log(drop/2)/λ (:func:`_tilted_composition`). When the tilt is steeper
    than each mechanism's tail at the top of its grid — small sampling rates,
    whose loss tail is that of the few steps an example is in — the tilted
    masses pile up at the top of every grid and the tilted sum's tail runs
    far: on σ = 0.5, q = 1e-6, 10⁶ steps the saddle point's row was 51 M
    points for a plain window of 7.6 M (77 nats above the switch, where the
    P-mass is below e^{−190}). A smaller λ moves the tilted masses off the
    grid's top; untilting then multiplies rounding by a little more at the
    tilt's centre (there: ε at δ = 1e-9 0.03% larger with a row of 15 M
    points; every bound stays certified, whatever λ). The reach
    (:func:`~gaussdp.pld.chernoff.tilted_reach`, estimated) shrinks with λ
    and the drop term grows: the largest λ whose reach is at most
    :data:`_TILTED_ROW_RATIO` times ``length`` is found by bisection in
    log λ, but no λ whose drop term alone exceeds that.
    """
    limit = _TILTED_ROW_RATIO * length
    smallest = -math.log(0.5 * drop) / limit  # below it, the drop term alone is longer

    def short_enough(at: float) -> bool:
        return tilted_reach(blocked, at, log_spare, scale) <= limit

    if smallest >= lam or short_enough(lam):
        return lam
    low, high = math.log(smallest), math.log(lam)
    if not short_enough(smallest):
        return smallest
    while high - low > 0.01:
        middle = 0.5 * (low + high)
        if short_enough(math.exp(middle)):
            low = middle
        else:
            high = middle
    return math.exp(low)


def _terms_below(terms, kept: int):
    """:func:`log_terms` of the distributions cut to their first ``kept`` atoms, from theirs.

    The positive atoms' relative indices are increasing, so the cut keeps a prefix
    of each term (views, the same numbers as computing them again).
    """
    cut = []
    for log_p, index, count in terms:
        size = int(np.searchsorted(index, kept))
        cut.append((log_p[:size], index[:size], count))
    return cut


def _error_above(pld: GridPLD, kept: int) -> float:
    """A bound on the error mass of ``pld``'s masses at relative indices ``kept`` and above.

    A composed distribution's masses err by at most ``slack_below`` below its cut and,
    above it, by at most ``slack_at_cut``·e^{−decay·(i − cut)} summed from index i up
    (:func:`compose_many`); its ``slack`` is carried everywhere anyway. 0 for a
    distribution discretised directly (its masses are exact up to relative rounding).
    """
    if pld.cut_index is None:
        return pld.slack_below + pld.slack_at_cut
    cut = pld.cut_index - pld.offset
    if kept < cut:
        return pld.slack_below + pld.slack_at_cut
    return pld.slack_at_cut * math.exp(-pld.decay * (kept - cut))


def _tilted_error(pld: GridPLD, lam: float, log_mgf: float) -> float:
    """A bound on the absolute error of ``pld``'s tilted row p_i·e^{λi − log M} (ℓ¹).

    A tilted composition's masses (:func:`compose_many`, and :func:`gaussdp.pld.blocks.regrid`
    of one) err by e_i with Σ|e_i| ≤ B = ``slack_below`` below the relative
    cut c, and above it by the untilted errors of the tilted row:
    Σ_{i≥c} |e_i|·e^{d(i − c)} ≤ S = ``slack_at_cut`` (d = ``decay``; its tail
    masses are then at most S·e^{−d(x − c)}, which is how δ reads them).
    So Σ|e_i|e^{λi} ≤ B·e^{λc} + S·e^{λc}·max(1, e^{(λ − d)·n}), n the indices
    above the cut. Errors without a cut are placed at the last index. 0 for a
    distribution without located errors.
    """
    located = pld.slack_below + pld.slack_at_cut
    if located == 0.0:
        return 0.0
    top = pld.p_masses.size - 1
    if pld.cut_index is None:
        return located * math.exp(min(lam * top - log_mgf, 700.0))
    cut = min(max(pld.cut_index - pld.offset, 0), top)
    above = max(lam - pld.decay, 0.0) * (top - cut)
    return (pld.slack_below + pld.slack_at_cut * math.exp(min(above, 700.0))) * math.exp(
        min(lam * cut - log_mgf, 700.0)
    )


def _tilted_composition(
    items,
    plan: CompositionPlan,
    full: int,
    tail: float,
    tilt_tail: float,
    drop: float,
    whole: bool = False,
    rate: float | None = None,
):
    """The masses of a pessimistic composition computed plain below a switch, tilted above.

    Returns (masses from ``low``, switch index, λ, log Π M_i(λ)^{c_i}, the two
    FFT lengths, a bound on the P-mass the windows lose, and one on the tilted
    row's error carried in from the items' own errors, :func:`_tilted_error`). See
    :func:`compose_many` for the construction. Atoms of each row from the
    relative index K up (:func:`~gaussdp.pld.tilt.reachable`) are left out first, at most
    ``drop``/2 of P-mass (lost); the plain row is composed first, and λ is
    the saddle point where its upper tail is ``tilt_tail``. Then the windows:

    * the **plain row** is read at the sums [low, switch). Its window starts
      at ``low`` and is only as long as that and the following need: mass
      above the window wraps to its bottom, and such wrapped copies only add
      to the masses (an upper bound stays one), so the window ends where the
      mass that can wrap onto entries of loss ≥ 0 (the only ones any δ(ε),
      ε ≥ 0, reads) is at most ``tail`` (Chernoff); the mass above it is
      read from the tilted row. Mass below ``low`` (at most ``plan.below``)
      wraps onto unread entries and is lost. With ``whole``, the row spans
      the plan's window: only the mass above it (at most ``plan.above``)
      wraps, and the masses at negative losses are right too (a composition
      that is composed again, :mod:`gaussdp.pld.blocks`; the short window
      piled up to 2e-4 of P-mass there on 64 steps).
    * the **tilted row** is read from the switch up; its window starts there
      and ends where the tilted masses' upper tail is a thousandth of the
      rounding allowance (Chernoff on the tilted masses). Tilted mass above
      the top wraps onto the switch and is read there as at most that share
      of the rounding allowance carried at each entry (both are untilted by
      the same factor): an addition, again. Tilted mass below the switch
      wraps to the top, read as e^{−λ·length} of its P-mass or less (at most
      ``drop``/2: the length is at least −log(drop/2)/λ). The P-mass of sums
      above the top, at most e^{log Π M^c − λ(top + 1)} ≤ ``drop``/2, is lost.
    """
    terms = log_terms(items)
    low = plan.low
    # The plain row: up to the switch, and far enough that wrapped mass lands below loss 0
    # (computed first: where its upper tail reaches ``tilt_tail`` is where the tilt is
    # centred).
    blocked = blocked_terms(terms)
    scale = spread(blocked)  # the searches' scale: the sum's standard deviation
    wrap_cut, _ = chernoff_cut(terms, math.log(tail), scale, +1, blocked=blocked)
    zero = -sum(count * pld.offset for pld, count in items)  # relative index of loss 0
    lost = plan.below
    # Atoms from ``kept`` up, which hold at most drop/2 of every composed P-mass,
    # are dropped (counted in ``lost``): under the tilt they would weigh most.
    kept, dropped = reachable(items, 0.5 * drop)
    if dropped > 0.0:
        # the computed masses dropped, and what their errors may hide above ``kept``
        lost += dropped + sum(count * _error_above(pld, kept) for pld, count in items)
        items = [(replace(pld, p_masses=pld.p_masses[:kept]), c) for pld, c in items]
        terms = _terms_below(terms, kept)
        blocked = blocked_terms(terms)
    # λ is at most the Chernoff bound's at ``tilt_tail`` (its cut lies above the true one),
    # so the switch log Π M^c/λ, which grows with λ, is at most that λ's: the row reaches it.
    tail_cut, lam, log_total = chernoff_cut(
        terms, math.log(tilt_tail), scale, +1, tolerance=0.05, blocked=blocked, with_total=True
    )
    highest_switch = min(max(math.ceil(log_total / lam), low), full)
    plain_top = min(max(math.ceil(wrap_cut) - max(zero - low, 0), low), full - 1)
    plain_length = max(
        plan.length if whole else min(next_fast_length(plain_top - low + 1), plan.length),
        next_fast_length(max(highest_switch - low, 1)),
    )
    plain = _compose_row(
        items, lambda _, pld: pld.p_masses, plain_length, low, min(plain_length, full - low)
    )
    # Where the row reaches the Chernoff bound's cut, the tilt is centred where the row's
    # tail is ``tilt_tail`` (the Chernoff λ serves where rounding noise hides the tail).
    centre = tail_index(plain, tilt_tail)
    if tail_cut <= low + plain.size - 1 and centre is not None:
        centred, inside = saddle(terms, low + centre, scale, tolerance=0.05, blocked=blocked)
        lam = min(centred, lam) if inside else lam
    total_count = sum(count for _, count in items)
    spare = _TILTED_WRAP_SHARE * rounding_allowance(plan.length, total_count)
    if rate is not None:  # at least the caller's λ (a block, at least as steep as its composition)
        lam = max(lam, rate)
    lam = _within_reach(blocked, lam, math.log(max(spare, tail)), drop, plan.length, scale)
    tilt = Tilt.of(items, lam, full, lambda n, at, t=terms: log_mgf(t[n][0], t[n][1], at))
    lam, log_mgfs, log_total = tilt.lam, list(tilt.log_mgfs), tilt.log_total
    switch = min(max(math.ceil(log_total / lam), low), full)  # relative sum index r_c
    if switch < full:  # where the tilted masses' upper tail is the wrap share (see below)
        tilted_terms = [
            (log_p + lam * index - log_mgfs[number], index, count)  # as log_terms(.., lam, ..)
            for number, (log_p, index, count) in enumerate(terms)
        ]
        tilted_cut, _ = chernoff_cut(tilted_terms, math.log(max(spare, tail)), scale, +1)
        del tilted_terms
    del terms, blocked  # two arrays as long as every step's grid: not held while rows compose
    if switch - low > plain.size:  # the switch lies beyond the row's window: a longer one
        plain_length = next_fast_length(switch - low)
        plain = _compose_row(items, lambda _, pld: pld.p_masses, plain_length, low, switch - low)
    masses = plain[: max(switch - low, 0)].copy()  # a copy: the rest of the row is freed
    if switch <= low:
        plain_length = 0
    del plain
    tilted_length = 0
    if switch < full:
        top = min(math.ceil(tilted_cut), full - 1)
        # Long enough that P-mass below the switch, wrapped to the top at e^{−λ·length},
        # adds at most drop/2 there, and that the P-mass above the top is at most that.
        needed = max(top - switch + 1, math.ceil(-math.log(0.5 * drop) / lam), 1)
        tilted_length = next_fast_length(needed)
        top = switch + tilted_length - 1
        if top < full - 1:
            lost += math.exp(min(log_total - lam * (top + 1), 0.0))

        keep = min(tilted_length, full - switch)
        tilted = _compose_row(
            items, lambda n, pld: tilt.row(pld.p_masses, n), tilted_length, switch, keep
        )
        # Raised by the tilt's relative rounding: the masses stay an upper bound.
        untilt = max(abs(log_total - lam * switch), abs(log_total - lam * (switch + keep)))
        growth = 1.0 + tilt.rounding(items, [pld.p_masses for pld, _ in items], untilt)
        for start in range(0, keep, CACHE_CHUNK):  # untilted in place, a chunk at a time
            part = tilted[start : start + CACHE_CHUNK]
            relative = switch + np.arange(start, start + part.size)
            part *= np.exp(np.minimum(log_total - lam * relative, 0.0)) * growth
        masses = np.concatenate((masses, tilted))
    carried = sum(
        count * _tilted_error(pld, tilt.lam, tilt.log_mgfs[number])
        for number, (pld, count) in enumerate(items)
    )
    return masses, switch, lam, log_total, (plain_length, tilted_length), lost, carried


def compose_many(
    items: list[tuple[GridPLD, int]],
    tail: float = DEFAULT_TAIL,
    plan: CompositionPlan | None = None,
    floor: float | None = None,
    tilt_tail: float | None = None,
    tilt: bool | None = None,
    whole: bool = False,
    rate: float | None = None,
) -> GridPLD:
    """Compose ``count`` copies of each distribution, all in the Fourier domain.

    The transform of the composition is Π X_i^{c_i}, computed one row at a
    time by :func:`_compose_row` on the window of :func:`plan_composition`
    (pass ``plan`` to reuse one). Mass that may wrap around to the unsafe
    side and an allowance for rounding become ``slack``.

    Rounding in X^T grows like T·u, an absolute error on every mass, which
    for long runs is not small next to a δ of 1e-8. So from
    :data:`TILT_FROM_COMPOSITIONS` compositions on, the pessimistic masses
    are also composed exponentially tilted — p̃_k = p_k·e^{λk}/M(λ), whose
    composition is P(r)·e^{λr}/Π M_i(λ)^{c_i} exactly — with λ the saddle
    point (:func:`~gaussdp.pld.chernoff.saddle`) at the sum where the plain row's upper tail is
    about 1e-10, at most the λ of the Chernoff bound's cut there. Each
    mechanism's atoms that only make sums of negligible P-mass are left out
    first (:func:`~gaussdp.pld.tilt.reachable`; at most :data:`_TILTED_DROP_SHARE` of that
    tail, carried in ``slack``). Untilting multiplies the rounding error by
    e^{log Π M^c − λr}, which is below 1 above the switch index
    r_c = ⌈log Π M^c / λ⌉: atoms from r_c up are taken from the tilted
    result, where the rounding error becomes relative, those below from the
    plain one, each row on its own, shorter window
    (:func:`_tilted_composition`). The allowance is then split into ``slack``
    (everywhere) and ``slack_below`` (for δ(ε) with ε below the switch only).

    Items that are tilted compositions themselves (the blocks of
    :mod:`gaussdp.pld.blocks`) bring their own located errors: in a tilted
    form those below an item's cut count below the switch only, and in the
    tilted row each item's errors weigh what its tilt says
    (:func:`_tilted_error`), so they decay above the switch as the rounding
    allowance does; in a plain form they count everywhere.

    ``floor`` asks for the pessimistic form's δ floor (the allowance that
    every δ carries however large ε is) to be at most this: when the plain
    allowance exceeds it, the tilted form is computed whatever the number
    of compositions (:func:`needs_tilt`). ``tilt_tail`` centres the tilt where
    the upper tail is about this (default 1e-10): where δ is wanted most
    accurately, as the rounding error is smallest relative to δ there.
    ``tilt`` decides for the pessimistic form instead of :func:`needs_tilt`
    (False: plain, whatever the number of compositions; True: tilted).
    ``whole``: a tilted form's masses are right at negative losses too, not
    only where δ(ε ≥ 0) reads them (for a composition composed again);
    ``rate``: a least λ per grid index for the tilt (within the window's reach
    all the same).
    """
    first = items[0][0]
    for pld, _ in items[1:]:
        _check_compatible(first, pld)
    if len(items) == 1 and items[0][1] == 1:
        return first
    if plan is None:
        plan = plan_composition(items, tail)
    length = plan.length
    full = sum(count * (pld.p_masses.size - 1) for pld, count in items) + 1
    exact = full <= length
    if exact:
        plan = CompositionPlan(0, length, 0.0, 0.0)
    low = plan.low
    optimistic = not first.is_pessimistic
    total_count = sum(count for _, count in items)
    offset = sum(count * pld.offset for pld, count in items)
    infinity = union_of_independent(
        ((pld.infinity_mass, count) for pld, count in items), upward=not optimistic
    )
    inherited = sum(
        count * (pld.slack + pld.slack_below + pld.slack_at_cut) for pld, count in items
    )
    keep = min(length, full - low)
    extra: dict[str, float | int] = {}
    tilted_q = None
    if optimistic:
        noise: list[float] = []
        masses = _compose_row(items, lambda _, pld: pld.p_masses, length, low, keep, noise)
        tilted_q = _compose_row(items, lambda _, pld: pld.tilted_q_masses, length, low, keep, noise)
        slack = inherited + plan.below + rounding_allowance(length, total_count)
        extra = {"noise_p": noise[0], "noise_q": noise[1]}
    elif not (needs_tilt(length, total_count, floor) if tilt is None else tilt):
        masses = _compose_row(items, lambda _, pld: pld.p_masses, length, low, keep)
        slack = inherited + plan.above + rounding_allowance(length, total_count)
    else:
        drop = max(drop_budget(tilt_tail, floor), tail)
        masses, switch, lam, log_total, lengths, lost, carried = _tilted_composition(
            items, plan, full, tail, tilt_tail or _TILT_TAIL, drop, whole, rate
        )
        # The items' own errors (composed items, :mod:`gaussdp.pld.blocks`): those placed
        # anywhere (``slack``) stay everywhere; those located below an item's cut or
        # decaying above it reach the plain row whole (``slack_below``, read below the
        # switch only) and the tilted row as ``carried`` (:func:`_tilted_error`), which
        # untilting makes decay with the rounding allowance above the switch.
        located = inherited - sum(count * pld.slack for pld, count in items)
        allowance = rounding_allowance(max(lengths), total_count)
        slack_at_cut = (allowance + carried) * math.exp(min(log_total - lam * switch, 0.0))
        slack = inherited - located + lost
        extra = {
            "slack_below": allowance + located + slack_at_cut,
            "cut_index": offset + switch,
            "slack_at_cut": slack_at_cut,
            "decay": lam,
        }
    composed = GridPLD(
        first.spacing,
        offset + low,
        masses,
        tilted_q,
        min(infinity, 1.0),
        first.kind,
        slack,
        sum(count * pld.compositions for pld, count in items),
        **extra,
    )
    return trim(composed, tail)


def self_compose(
    pld: GridPLD, times: int, tail: float = DEFAULT_TAIL, plan: CompositionPlan | None = None
) -> GridPLD:
    """The T-fold composition of a distribution with itself (see :func:`compose_many`)."""
    return compose_many([(pld, times)], tail, plan)
