"""The laws of S = Σ cᵢ under exponential tilts: their FFT rounding relative in both tails.

Balls-in-bins is accounted through the laws of S_c, the sum of the t rounded
coordinates (:mod:`gaussdp.pld.allocation`), computed as FFT convolution
powers on a circle of N cells of width h. Computed plainly, their rounding is
absolute: each cell errs by up to about u·log N of the largest mass, bounded
in ℓ¹ by R (:func:`~gaussdp.pld.composition.rounding_allowance`). The far tails
of S, where the privacy loss is large and δ small, drown in it.

Tilting
-------
With λ a rate per cell, tilt the coordinate laws, y_λ(j) = y(j)·e^{λj}/M_y(λ)
(and x alike), and compute the power of the tilted laws instead. Untilting
cell k by M(λ)·e^{−λk}, with M(λ) = M_x(λ)^s·M_y(λ)^{t−s} for P (s shifted
coordinates) and M_y(λ)^t for Q, gives the law of S_c with errors e_k that
satisfy

    Σ_k |e_k|·e^{λk} ≤ M(λ)·(R + W_λ),

where W_λ bounds the tilted mass at or beyond the circle's end, which the
circle folds onto k − N (a Chernoff bound on the tilted coordinates; folded
mass at j = k + N comes back at k weighted e^{λN}, exactly the tilted mass
it had). So cell k errs by at most M(λ)(R + W_λ)e^{−λk}: relative to the
tail it lies in, when λ is the Chernoff rate of that tail (the same property
the engine's tilted compositions keep, :mod:`gaussdp.pld.composition`).

Each law is computed under a ladder of rates (λ = 0 for the bulk, and the
Chernoff rates of a few points in each tail, :func:`tilt_rates`), and every
cell is taken from the rate whose bound is least there (:func:`tilted_laws`).
A run of cells that one rate gave errs in all by at most the largest bound
among them (:meth:`TiltedLaw.tail_bounds`, :meth:`TiltedLaw.head_bounds`); the
upper pairs put each such error where it can act, at a finite loss
(:func:`located_errors`). On σ = 1, t = 100, 10 epochs the upper bound was ∞
below δ ≈ 8e-13 (the plain laws' R at +∞); it now stays within the default
accuracy of the lower bound down to δ = 1e-16.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from math import e

import numpy as np

from gaussdp._numerics import log_sum_exp_rows, next_fast_length
from gaussdp.pld.composition import rounding_allowance

__all__ = [
    "ERROR_SHIFT",
    "NOISE",
    "TiltedLaw",
    "error_atoms",
    "located_errors",
    "tilt_rates",
    "tilted_laws",
]

#: What a computed value may carry of FFT noise, as a share of its tilted law's largest
#: value (the lower pairs keep only values clearly above it; measured noise is ~1e-16).
NOISE = 1e-12
#: Errors of the laws are gathered in runs of cells whose caps (in log) share a bucket this wide.
_ERROR_BUCKET = 0.05
#: Errors that act up to a likelihood ratio c are put at an atom of loss log c + this
#: (their mass times r/(r − 1), r = e^this: :func:`error_atoms`).
ERROR_SHIFT = 0.05
#: A rate towards small sums computes on a circle no shorter than this.
_SHORTEST = 1024
#: A rate towards large sums computes on a longer circle until its tilted fold is below this
#: (its cells' error bounds then relative to their tail within 1e-6, far below what δ reads).
_FOLD = 1e-6
#: ... on a circle up to this many times as long.
_MAX_EXTENSION = 4
#: The tilts' targets: the sums e^{±ℓ}·E[S], whose losses are about ±ℓ.
_TILT_LOSSES = np.array([1.0, 3.0, 5.0, 7.0, 9.0, 11.0])
#: ... and, where the laws are short enough (``mild``), these too: the bulk's own tails,
#: whose plain rounding the composition of many epochs reads (σ = 1, t = 1000, 10 epochs at
#: δ = 1e-9: 0.741475 without them, 0.740910 with; the lower bound 0.740876).
_MILD_LOSSES = np.array([0.25, 0.5])


@dataclass(frozen=True)
class TiltedLaw:
    """A law on the cells k = 0 … N − 1, each cell from the tilt whose error bound is least.

    ``values[k]`` is the computed (untilted, clipped at 0) mass of cell k;
    ``source[k]`` the tilt it came from. Tilt i errs at cell k by at most
    exp(``log_errors[i]`` − ``rates[i]``·k) in the sense of
    Σ_k |e_k| e^{λᵢk} ≤ e^{log_errors[i]} over the cells it gave (module
    docstring): the upper pairs read these. ``clear[k]`` is the value of cell
    k from the tilt whose noise level is least there (:data:`NOISE` of that
    tilted law's largest value, and its fold), or 0 where it is not clearly
    above it: the lower pairs read these.
    """

    values: np.ndarray
    source: np.ndarray
    rates: np.ndarray
    log_errors: np.ndarray
    clear: np.ndarray

    def bound(self, cells: np.ndarray) -> np.ndarray:
        """Each cell's error bound (a set of cells from one tilt errs by at most its largest)."""
        cells = np.asarray(cells)
        source = self.source[cells]
        return np.exp(self.log_errors[source] - self.rates[source] * cells)

    def _pieces(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The runs of cells from one tilt: (first cells, last cells, each run's largest bound)."""
        first = np.flatnonzero(np.concatenate([[True], self.source[1:] != self.source[:-1]]))
        last = np.append(first[1:], self.source.size) - 1
        # a bound is monotone along a run (e^{−λk}): its largest is at one end
        return first, last, np.maximum(self.bound(first), self.bound(last))

    def tail_bounds(self, cells: np.ndarray) -> np.ndarray:
        """Non-increasing bounds on Σ_{k ≥ c}|e_k| for the increasing cells c given.

        Each run of cells from one tilt errs in all by at most its largest
        bound (the tilt's bound on Σ|e_k|e^{λk} over the least e^{λk} of the
        run); the run holding c counts from c on.
        """
        cells = np.asarray(cells, dtype=np.int64)
        first, last, largest = self._pieces()
        run = np.searchsorted(first, cells, side="right") - 1
        later = np.concatenate([np.cumsum(largest[::-1])[::-1], [0.0]])[run + 1]
        partial = np.maximum(self.bound(cells), self.bound(last[run]))
        return np.minimum.accumulate(partial + later)

    def head_bounds(self, cells: np.ndarray) -> np.ndarray:
        """Non-decreasing bounds on Σ_{k ≤ c}|e_k| for the increasing cells c given."""
        cells = np.asarray(cells, dtype=np.int64)
        first, _, largest = self._pieces()
        run = np.searchsorted(first, cells, side="right") - 1
        earlier = np.concatenate([[0.0], np.cumsum(largest)])[run]
        partial = np.maximum(self.bound(cells), self.bound(first[run]))
        return np.minimum.accumulate((partial + earlier)[::-1])[::-1]


def error_atoms(
    caps: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    shift: float | np.ndarray = ERROR_SHIFT,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Atoms that cover errors acting only up to a likelihood ratio (one per run of cells).

    Run j's cells change H_β only for β ≤ c_j (its cap). If the runs whose
    caps are at least β err in all by at most Σ (E_j + β·F_j) (first and second
    measure), atoms of first-measure mass m_j = (E_j + c_j·F_j)·r/(r − 1) at
    losses log(c_j·r) cover them: each adds m_j·(1 − β·e^{−ℓ_j}) ≥ m_j·(1 − 1/r)
    for β ≤ c_j (r = e^{``shift``}, :data:`ERROR_SHIFT` by default: a larger shift
    costs less mass where runs' caps are far apart).
    """
    ratio = np.exp(shift)
    mass = (np.maximum(first, 0.0) + caps * np.maximum(second, 0.0)) * (ratio / (ratio - 1.0))
    losses = np.log(caps) + shift
    keep = mass > 0.0
    return losses[keep], mass[keep], mass[keep] * np.exp(-losses[keep])


def _shifts(law: TiltedLaw, cells: np.ndarray) -> np.ndarray:
    """How far above its cap each run's error atom goes (:func:`error_atoms`'s ``shift``).

    ``cells``: the last cell of each run (where a run's tail or head bound
    takes in the plain cells' allowance). Where that cell is the plain law's
    (λ = 0), the run's errors are the plain
    rounding allowance, absolute and placed at the largest cap the plain
    cells reach, not where they are: they go to twice that cap, for twice
    their mass (at losses far above ε that mass is all the atom adds).
    Tilted cells' errors are relative to the tail they lie in: they go just
    above the cap, at e^{0.05} times it for 20.5 times their mass (at small
    δ the loss the atom sits at is what moves it). Measured: σ = 2, t = 10⁴,
    5 epochs at δ = 1e-9 read 0.161993 with the second everywhere; σ = 2,
    t = 100, 10 epochs at 1e-13, 1.4717 with the first everywhere
    (1.1712131 with the second).
    """
    plain = law.rates[law.source[cells]] == 0.0
    return np.where(plain, math.log(2.0), ERROR_SHIFT)


def _runs(log_caps: np.ndarray, offset: int) -> np.ndarray:
    """First cells of the runs whose log caps share a bucket of width :data:`_ERROR_BUCKET`."""
    bucket = np.floor(log_caps / _ERROR_BUCKET)
    return offset + np.flatnonzero(np.concatenate([[True], bucket[1:] != bucket[:-1]]))


def located_errors(p: TiltedLaw, q: TiltedLaw, spacing: float, steps: int):
    """The upper pairs' atoms for the laws' errors, each where it can act.

    ``p`` and ``q`` are the laws of S_c on cells of width h (``spacing``) of
    one epoch of t (``steps``) steps (:mod:`gaussdp.pld.allocation`). A cell's
    split pair, as a function of its masses, gains at most
    |Δ first| + β·|Δ second| from errors in them, and nothing once β passes
    e^{its top loss}: the cap c_k = kh/t (remove, increasing in k) or
    t/((k − t)h) (add, decreasing; ∞ for k ≤ t). So at β the remove pair errs
    by at most the errors of the cells k ≥ k_β (tail bounds), the add pair by
    those of k ≤ k_β (head bounds). Cells are taken in runs whose caps differ
    by at most 5 % (:data:`_ERROR_BUCKET`), and the bounds' increments over
    each run become an atom above its cap (:func:`error_atoms`, how far above:
    :func:`_shifts`). The add direction's cells with k ≤ t, whose cap is ∞,
    put theirs at +∞: such a cell's split has H_β = q − min(p·t/(kh), β·p),
    which errors change by at most |Δq| + (t/h)·|Δp| whatever β.

    Returns (remove's atoms, add's atoms, add's mass at +∞), the atoms as
    (losses, first masses, second masses).
    """
    h = spacing
    n = p.values.size
    # remove: cap kh/t for k ≥ 1 (S_c = 0 has no mass); run j covers [s_j, s_{j+1})
    starts = _runs(np.log(np.arange(1, n) * h / steps), 1)
    increments = [
        np.append(-np.diff(tail), tail[-1])
        for tail in (p.tail_bounds(starts), q.tail_bounds(starts))
    ]
    ends = np.append(starts[1:], n) - 1
    remove = error_atoms(ends * h / steps, *increments, _shifts(p, ends))
    # add: cap t/((k − t)h) for k > t; k ≤ t at +∞
    above = np.arange(steps + 1, n)
    starts = _runs(np.log(steps / ((above - steps) * h)), steps + 1)
    ends = np.append(starts[1:], n) - 1
    heads = [law.head_bounds(np.append(steps, ends)) for law in (q, p)]
    # a cell k ≤ t gains at most |Δq| + min(β, t/(kh))·|Δp| ≤ |Δq| + (t/h)·|Δp|, for all β
    infinity = float(heads[0][0]) + steps / h * float(heads[1][0])
    increments = [np.diff(head) for head in heads]
    add = error_atoms(steps / ((starts - steps) * h), *increments, _shifts(q, ends))
    return remove, add, infinity


def _tilted(log_law: np.ndarray, exponent: np.ndarray) -> tuple[np.ndarray, float]:
    """The law e^{log_law + exponent}/M and log M, M its total (one pass of exp)."""
    values = log_law + exponent
    top = float(np.max(values))
    np.exp(values - top, out=values)
    total = float(values.sum())
    values /= total
    return values, top + math.log(total)


def _log_mgf(log_masses: np.ndarray, values: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """log Σ_j m_j e^{λ v_j} for each λ in ``rates`` (log masses, −∞ for empty cells)."""
    return log_sum_exp_rows(log_masses[None, :] + rates[:, None] * values[None, :])


def tilt_rates(
    x: np.ndarray, y: np.ndarray, steps: int, spacing: float, ends: tuple, mild: bool = True
) -> np.ndarray:
    """The ladder of rates λ (per unit of Y): 0, and Chernoff rates of points in both tails.

    Planned on the coordinate laws ``x`` and ``y`` (cells j·h, ``spacing`` h)
    summed over blocks of geometrically growing width (5 %), each block at
    its top for λ > 0 and its bottom for λ < 0: for the sums
    s = E[S]·e^{±ℓ}, ℓ in :data:`_TILT_LOSSES` (and :data:`_MILD_LOSSES` if
    ``mild``), inside S's range (``ends`` =
    (lowest, highest)), and s = e·lowest (the add direction's largest losses,
    the fewest cells), the rate minimising log M(λ) − λs, M the P-law's
    moment generating function. Only a plan: the bounds carried are computed
    exactly for the rates chosen.
    """
    cells = x.size
    starts = np.unique(np.ceil(1.05 ** np.arange(math.log(cells) / math.log(1.05) + 2)))
    starts = np.concatenate([[0], starts[starts < cells]]).astype(np.int64)
    bottoms = starts * spacing
    tops = (np.append(starts[1:], cells) - 1) * spacing
    x_blocks, y_blocks = np.add.reduceat(x, starts), np.add.reduceat(y, starts)
    with np.errstate(divide="ignore"):
        log_x, log_y = np.log(x_blocks), np.log(y_blocks)
    mean = float(np.sum(x_blocks * tops) + (steps - 1) * np.sum(y_blocks * tops))
    lowest, highest = ends
    top = float(tops[-1])
    rates = [0.0]
    for sign, end in ((1.0, highest), (-1.0, lowest)):
        # points e^{±ℓ} times the mean (ℓ nats of loss), inside S's range
        losses = np.concatenate([_MILD_LOSSES, _TILT_LOSSES]) if mild else _TILT_LOSSES
        targets = mean * np.exp(sign * losses)
        targets = targets[sign * (end - targets) > 0]
        if sign < 0 and e * lowest < mean:  # and the fewest, smallest sums (k ≤ e·t cells)
            targets = np.append(targets, e * lowest)
        if targets.size == 0:
            continue
        # rates up to e^{700} on the largest value (λ > 0), or 700 nats per unit of the lowest
        scale = 700.0 / top if sign > 0 else 700.0 / max(lowest, 1e-300)
        grid = sign * np.geomspace(1e-8, 1.0, 400) * scale
        values = tops if sign > 0 else bottoms
        log_m = _log_mgf(log_x, values, grid) + (steps - 1) * _log_mgf(log_y, values, grid)
        for target in targets:
            rates.append(float(grid[np.argmin(log_m - grid * target)]))
    return np.unique(np.asarray(rates))


def _circle(x_tilted, y_tilted, steps, rate, length, longest, rounding, folded):
    """The circle one rate computes on, and its folds (W_P, W_Q).

    λ = 0: the laws' own (N cells). λ < 0: the tilted laws sit at small sums,
    so the circle is the shortest of 2·E_λ[S], doubled, whose fold is below R
    (the errors are then those of the full circle, at a fraction of its cost;
    cells beyond it come from other rates). λ > 0: they sit at large sums,
    near the circle's end, so it is doubled, up to :data:`_MAX_EXTENSION`
    times and ``longest`` cells, until the fold is below :data:`_FOLD`.
    """
    beyond = folded(x_tilted, y_tilted)
    if rate < 0:  # from twice the tilted mean of S up, doubling, until the fold is below R
        mean = steps * float(np.dot(np.arange(y_tilted.size), y_tilted))
        circle = next_fast_length(max(int(2.0 * mean), _SHORTEST))
        while circle < length:
            folds = beyond(circle)
            if max(folds) <= rounding:
                return circle, folds
            circle = next_fast_length(2 * circle)
    circle = length
    folds = beyond(circle)
    longest = min(_MAX_EXTENSION * length, max(length, longest))
    while rate > 0 and max(folds) > _FOLD and 2 * circle <= longest:
        circle = next_fast_length(2 * circle)
        folds = beyond(circle)
    return circle, folds


def tilted_laws(
    x: np.ndarray,
    y: np.ndarray,
    steps: int,
    shifted: int,
    length: int,
    rates: np.ndarray,
    rounding: float,
    folded: Callable[[np.ndarray, np.ndarray], Callable[[int], tuple[float, float]]],
    longest: int,
) -> tuple[TiltedLaw, TiltedLaw]:
    """The P- and Q-laws of S_c on a circle of ``length`` cells, each cell from its best tilt.

    Parameters
    ----------
    x, y : np.ndarray
        The coordinate laws on cells 0, 1, … (sub-probabilities): the one
        carrying the record (P) and the others (and every one under Q).
    steps, shifted : int
        t, and how many coordinates carry the record under P.
    length : int
        N, the circle's length in cells.
    rates : np.ndarray
        λ per cell, one computation each (:func:`tilt_rates`, times h).
    rounding : float
        R, the FFT's ℓ¹ rounding allowance for laws of mass at most one on
        the circle of ``length`` cells: the fold a shortened circle may have.
        Each rate's bounds carry the allowance of the circle it is computed
        on (:func:`~gaussdp.pld.composition.rounding_allowance`).
    folded : callable
        ``folded(x_λ, y_λ)(n)`` bounds (W_P, W_Q), the mass of the tilted laws
        at or beyond cell n (the fold of a circle of n cells), for coordinate
        laws of mass one (what the first call prepares serves every n). A rate
        towards large sums computes on a circle up to :data:`_MAX_EXTENSION`
        times as long, for a fold below :data:`_FOLD`.
    longest : int
        No circle is longer than this (or N): the memory cap.

    Returns
    -------
    (TiltedLaw, TiltedLaw)
        P and Q.
    """
    from scipy import fft as scipy_fft  # here: 40 ms that `import gaussdp` need not pay

    rates = np.concatenate([[0.0], rates[rates != 0.0]])  # λ = 0 first: it fills every cell
    if rates.size > 1:
        cells = np.arange(length, dtype=float)
        index = np.arange(x.size, dtype=float)
        with np.errstate(divide="ignore"):
            log_x, log_y = np.log(x), np.log(y)
    laws = [{"log_errors": []}, {"log_errors": []}]
    for number, rate in enumerate(rates):
        if rate == 0.0:
            log_mx, log_my = math.log(float(x.sum())), math.log(float(y.sum()))
            x_tilted, y_tilted = x * math.exp(-log_mx), y * math.exp(-log_my)
        else:
            (x_tilted, log_mx), (y_tilted, log_my) = (
                _tilted(log_law, rate * index) for log_law in (log_x, log_y)
            )
        circle, folds = _circle(x_tilted, y_tilted, steps, rate, length, longest, rounding, folded)
        if rate != 0.0 and max(folds) > _FOLD:  # no circle short enough keeps it accurate
            for law in laws:
                law["log_errors"].append(math.inf)
            continue
        # cells beyond the circle are sums beyond it: left out, counted in the fold
        y_hat = scipy_fft.rfft(y_tilted[:circle], circle, workers=2)
        x_hat = scipy_fft.rfft(x_tilted[:circle], circle, workers=2)
        del x_tilted, y_tilted
        power = y_hat ** (steps - shifted)
        span = min(circle, length)
        computed = (
            scipy_fft.irfft(x_hat**shifted * power, circle, workers=2)[:span],
            scipy_fft.irfft(power * y_hat**shifted, circle, workers=2)[:span],
        )
        del x_hat, y_hat, power
        log_totals = (
            shifted * log_mx + (steps - shifted) * log_my,
            steps * log_my,
        )
        for law, tilted, log_total, fold in zip(laws, computed, log_totals, folds, strict=True):
            # R of the circle computed on (a longer one rounds more)
            log_error = math.log(rounding_allowance(circle, steps) + fold) + log_total
            log_noise = math.log(NOISE * max(float(tilted.max()), 1e-300) + fold) + log_total
            law["log_errors"].append(log_error)
            np.maximum(tilted, 0.0, out=tilted)
            if rate == 0.0:
                tilted *= math.exp(log_total)
                law["values"] = tilted
                law["clear"] = tilted.copy()
                law["source"] = np.zeros(length, dtype=np.int16)
                # log bounds, to choose by (float32 suffices: any choice is certified)
                law["best"] = np.full(length, log_error, dtype=np.float32)
                law["quiet"] = np.full(length, log_noise, dtype=np.float32)
                continue
            slope = rate * cells[:span]
            envelope = log_error - slope
            # a bound of 1 or more says nothing (λ = 0 is always below it)
            better = np.flatnonzero((envelope < law["best"][:span]) & (envelope < 0.0))
            law["best"][better] = envelope[better]
            law["source"][better] = number
            law["values"][better] = tilted[better] * np.exp(log_total - slope[better])
            envelope = log_noise - slope
            quieter = np.flatnonzero((envelope < law["quiet"][:span]) & (envelope < 0.0))
            law["quiet"][quieter] = envelope[quieter]
            law["clear"][quieter] = tilted[quieter] * np.exp(log_total - slope[quieter])
    for law in laws:
        quiet = law.pop("quiet")
        if rates.size == 1:  # one noise level: a threshold
            law["clear"][law["clear"] <= np.exp(quiet[0])] = 0.0
        else:
            with np.errstate(divide="ignore"):
                law["clear"][np.log(law["clear"]) <= quiet] = 0.0
        del law["best"]
    return tuple(
        TiltedLaw(
            law["values"],
            law["source"],
            np.asarray(rates, dtype=float),
            np.asarray(law["log_errors"]),
            law["clear"],
        )
        for law in laws
    )
