"""Chernoff bounds on sums of independent grid distributions, and their saddle points.

For independent summands with masses p_{i,k} at relative indices k, the mass
of sums ≥ t is at most e^{−λt}·Π_i M_i(λ)^{c_i} for every λ > 0, with M_i the
moment generating function Σ_k p_{i,k} e^{λk} (the mirror bound holds for
λ < 0). The composition windows (:mod:`gaussdp.pld.composition`) are cut where
these bounds reach a tail, and the exponential tilts of the tilted
compositions and lower tails (:mod:`gaussdp.pld.tilt`,
:mod:`gaussdp.pld.lower_tail`) take λ at their saddle points. Any λ gives a
valid bound, so a search that stops early only loosens a window.
"""

from __future__ import annotations

import math

import numpy as np

from gaussdp._numerics import CACHE_CHUNK
from gaussdp.pld.grid import GridPLD

__all__ = [
    "blocked_terms",
    "chernoff_cut",
    "log_mgf",
    "log_terms",
    "minimise",
    "saddle",
    "spread",
    "tilted_reach",
]

_INVERSE_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def minimise(function, low: float, high: float, tolerance: float) -> tuple[float, float]:
    """(min value, argmin) of a unimodal function on [low, high] by golden-section search.

    The smallest value evaluated is returned with its argument (so an
    inexact minimum errs upwards, which only widens a Chernoff window).
    """
    c = high - _INVERSE_GOLDEN * (high - low)
    d = low + _INVERSE_GOLDEN * (high - low)
    fc, fd = function(c), function(d)
    best = min((fc, c), (fd, d))
    while high - low > tolerance:
        if fc <= fd:
            high, d, fd = d, c, fc
            c = high - _INVERSE_GOLDEN * (high - low)
            fc = function(c)
            best = min(best, (fc, c))
        else:
            low, c, fc = c, d, fd
            d = low + _INVERSE_GOLDEN * (high - low)
            fd = function(d)
            best = min(best, (fd, d))
    return best


#: Terms of a moment generating function this far (in log) below its largest are not
#: exponentiated: each is counted as e^{−this} of the largest (an upper bound).
_LOG_NEGLIGIBLE = 40.0


def log_mgf(log_p: np.ndarray, index: np.ndarray, lam: float) -> float:
    """An upper bound on log Σ_i p_i e^{λ i} (relative indices i), computed without overflow.

    Terms more than :data:`_LOG_NEGLIGIBLE` below the largest are counted at
    that level instead of being exponentiated (the far tails of a long grid:
    at most a relative n·e^{−40} ≈ 4e-18·n too much, which only widens
    Chernoff windows and lowers tilted rows). Every caller needs an upper
    bound: a window, the mass beyond it, a tilted row that sums to at most 1.
    Long arrays are read in chunks that stay in the processor's cache (the
    largest exponent first, then the sum).
    """
    if log_p.size <= CACHE_CHUNK:
        return _log_mgf_of_chunks(((log_p, index),), lam)
    chunks = tuple(
        (log_p[start : start + CACHE_CHUNK], index[start : start + CACHE_CHUNK])
        for start in range(0, log_p.size, CACHE_CHUNK)
    )
    return _log_mgf_of_chunks(chunks, lam)


def _log_mgf_of_chunks(chunks, lam: float) -> float:
    # (ndarray methods, not np.max/np.sum: the same reductions without numpy's Python-level
    # dispatch, which decides the cost of the short arrays of the windows' searches)
    top = max(float((log_p + lam * index).max()) for log_p, index in chunks)
    total, rest = 0.0, 0
    for log_p, index in chunks:
        exponent = log_p + lam * index
        large = exponent[exponent > top - _LOG_NEGLIGIBLE]
        rest += exponent.size - large.size
        total += float(np.exp(large - top).sum())
    return top + math.log(total + rest * math.exp(-_LOG_NEGLIGIBLE))


def chernoff_cut(
    terms: list[tuple[np.ndarray, np.ndarray, int]],
    log_tail: float,
    scale: float,
    sign: int,
    tolerance: float = 0.25,
    blocked=None,
    with_total: bool = False,
):
    """The best Chernoff cut point for one tail of a sum, and its λ (and Σ c_i·log M_i(±λ)).

    ``terms`` holds (log masses, relative indices, count) of independent
    summands. For sign = +1: the smallest t with
    min_λ>0 e^{−λt} Π M_i(λ)^{c_i} ≤ tail, i.e.
    t = min_λ (Σ c_i·log M_i(λ) − log tail)/λ, minimised over log λ (a
    unimodal function) by a bounded scalar search. For sign = −1 the mirror
    image for the lower tail. Any λ gives a valid bound, so an inexact
    minimum only widens the window. ``blocked``: :func:`blocked_terms` of
    ``terms``, where several searches share them. ``with_total``: also
    return the exact log Π M_i(±λ)^{c_i} the cut was computed from.
    """
    coarse = blocked_terms(terms) if blocked is None else blocked

    def cut(log_lambda: float, terms=coarse, log_mgf=_approximate_log_mgf) -> float:
        lam = math.exp(log_lambda)
        total = sum(count * log_mgf(log_p, index, sign * lam) for log_p, index, count in terms)
        return (total - log_tail) / lam

    # Any λ is valid and the cut is flat at its minimum: for a window, a tolerance of
    # 0.25 in log λ costs ~0.3% more length than 0.05, with three evaluations (of ~14)
    # fewer. A tilt's λ (whose allowance decays like e^{−λ·loss}) asks for 0.05. The
    # search runs on the blocked terms; the cut returned is the exact bound at its λ.
    _, log_lambda = minimise(
        cut, math.log(1e-3 / scale), math.log(1e3 / scale), tolerance=tolerance
    )
    lam = math.exp(float(log_lambda))
    total = sum(count * log_mgf(log_p, index, sign * lam) for log_p, index, count in terms)
    value = (total - log_tail) / lam
    return (float(value), lam, float(total)) if with_total else (float(value), lam)


def log_terms(items: list[tuple[GridPLD, int]], lam: float = 0.0, log_mgfs=None):
    """(log masses, relative indices, count) of each distribution, tilted by ``lam``."""
    terms = []
    for number, (pld, count) in enumerate(items):
        p = pld.p_masses
        positive = p > 0
        index = np.nonzero(positive)[0].astype(float)
        log_p = np.log(p[positive])
        if lam:
            log_p = log_p + lam * index - log_mgfs[number]
        terms.append((log_p, index, count))
    return terms


def saddle(
    terms, index: float, scale: float, tolerance: float = 0.02, blocked=None
) -> tuple[float, bool]:
    """(λ, inside) minimising the Chernoff exponent Σ c_i·log M_i(λ) − λ·index over λ > 0.

    The saddle point of the Chernoff bound at relative sum index ``index``:
    the tilt by this λ has its mean there, and the untilting factor
    e^{log Π M^c − λ·index} that multiplies the rounding error read there is
    the smallest any tilt makes it. Searched over [1e-4, 1e2]/``scale``;
    ``inside`` is False where the minimum lies at an end of that range (the
    index at or below the mean, or beyond any finite tail). ``blocked`` as
    for :func:`chernoff_cut`.
    """
    coarse = blocked_terms(terms) if blocked is None else blocked

    def exponent(log_lambda: float) -> float:
        lam = math.exp(log_lambda)
        total = sum(count * _approximate_log_mgf(log_p, idx, lam) for log_p, idx, count in coarse)
        return total - lam * index

    bottom, top = math.log(1e-4 / scale), math.log(1e2 / scale)
    _, log_lambda = minimise(exponent, bottom, top, tolerance=tolerance)
    inside = min(log_lambda - bottom, top - log_lambda) > 5 * tolerance
    return math.exp(log_lambda), inside


#: Consecutive masses summarised by one block in the searches for λ.
_BLOCK = 64


def blocked_terms(terms):
    """Each term's masses in blocks of :data:`_BLOCK`: ((log mass, variance), mean index, count).

    The search for a Chernoff λ only needs to find where a smooth convex
    function is least, not its value: it runs on these summaries (64 times
    fewer entries), each block's moment generating function taken as
    P_B·e^{λ·m_B + λ²·v_B/2} (its cumulant expansion to second order, with
    mean m_B and variance v_B of the block's indices: an error of third order
    in λ times the block's width). The bound itself is then evaluated exactly
    (:func:`log_mgf`) at the λ found, so the summary can only make the λ less
    than best, never the bound invalid. Short terms are kept as they are
    (variance 0).
    """
    blocked = []
    for log_p, index, count in terms:
        size = log_p.size
        if size <= 16 * _BLOCK:
            blocked.append(((log_p, np.zeros(size)), index, count))
            continue
        pad = (-size) % _BLOCK
        log_p = np.concatenate([log_p, np.full(pad, -np.inf)]).reshape(-1, _BLOCK)
        position = np.concatenate([index, np.full(pad, index[-1])]).reshape(-1, _BLOCK)
        rows = log_p.shape[0]
        top, mass = np.empty(rows), np.empty(rows)
        mean, variance = np.empty(rows), np.empty(rows)
        step = CACHE_CHUNK // _BLOCK  # blocks per chunk, as in log_mgf
        for first in range(0, rows, step):
            part = slice(first, first + step)
            top[part] = log_p[part].max(axis=1)
            weights = np.exp(log_p[part] - top[part, None])
            mass[part] = weights.sum(axis=1)
            mean[part] = np.einsum("ij,ij->i", weights, position[part]) / mass[part]
            centred = position[part] - mean[part, None]
            variance[part] = np.einsum("ij,ij,ij->i", weights, centred, centred) / mass[part]
        blocked.append(((top + np.log(mass), variance), mean, count))
    return blocked


def _approximate_log_mgf(log_p_and_variance, index: np.ndarray, lam: float) -> float:
    """log Σ_B P_B e^{λ m_B + λ² v_B/2} over blocks (see :func:`blocked_terms`)."""
    log_p, variance = log_p_and_variance
    exponent = log_p + lam * index + (0.5 * lam * lam) * variance
    top = float(exponent.max())
    return top + math.log(float(np.exp(exponent - top).sum()))


def tilted_reach(blocked, lam: float, log_tail: float, scale: float) -> float:
    """Where the sum tilted by ``lam`` has its upper tail at ``log_tail``, relative to its switch.

    The distance from the switch log Π M^c(λ)/λ (where untilting multiplies
    by 1) to the Chernoff cut of the tilted sum: the tilted masses have log
    moment generating function K(λ + μ) − K(λ), K = Σ c·log M, so the cut is
    min_μ (K(λ + μ) − K(λ) − log tail)/μ. An estimate from the blocked terms
    (:func:`blocked_terms`), to choose λ by; the windows themselves are cut
    exactly.
    """

    def total(at: float) -> float:
        return sum(c * _approximate_log_mgf(lp, idx, at) for lp, idx, c in blocked)

    base = total(lam)

    def cut(log_mu: float) -> float:
        mu = math.exp(log_mu)
        return (total(lam + mu) - base - log_tail) / mu

    value, _ = minimise(cut, math.log(1e-3 / scale), math.log(1e3 / scale), tolerance=0.25)
    return value - base / lam


def spread(blocked) -> float:
    """The standard deviation of the sum's index, from blocked terms (at least 1).

    Law of total variance over the blocks of :func:`blocked_terms`: each
    term's variance is Σ_B w_B·(v_B + (m_B − m)²) with w_B its blocks'
    normalised masses. The searches' scale.
    """
    variance = 0.0
    for (log_mass, block_variance), mean, count in blocked:
        weights = np.exp(log_mass - np.max(log_mass))
        weights /= weights.sum()
        centre = float(np.sum(weights * mean))
        variance += count * float(np.sum(weights * (block_variance + (mean - centre) ** 2)))
    return max(math.sqrt(variance), 1.0)
