"""Chernoff cuts and saddle points: the searches run on blocked summaries, the bounds stay exact.

References: the exact tail of a sum computed by direct convolution, and a
brute-force minimum of the exact Chernoff exponent over a fine grid of λ.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.signal import fftconvolve

from gaussdp.pld.chernoff import chernoff_cut, log_mgf, saddle
from gaussdp.pld.grid import discretise
from gaussdp.pld.losses import GaussianLoss, SubsampledLoss


def _terms(masses: np.ndarray, count: int):
    positive = masses > 0
    return [(np.log(masses[positive]), np.nonzero(positive)[0].astype(float), count)]


def _exact_cut(terms, log_tail: float, lam: float, sign: int) -> float:
    total = sum(c * log_mgf(log_p, index, sign * lam) for log_p, index, c in terms)
    return (total - log_tail) / lam


def _subsampled_step(sampling_probability: float, spacing: float, mu: float = 1.0) -> np.ndarray:
    loss = SubsampledLoss(GaussianLoss(mu), sampling_probability, "remove")
    return discretise(loss, spacing, "pessimistic", 1e-20).p_masses


def _spread(step: np.ndarray, count: int) -> float:
    """The standard deviation of the sum's index (the searches' scale)."""
    index = np.arange(step.size)
    mean = np.sum(step * index) / step.sum()
    return max(math.sqrt(count * np.sum(step * (index - mean) ** 2) / step.sum()), 1.0)


@pytest.mark.parametrize("sign", [+1, -1])
def test_cut_bounds_the_exact_tail_of_a_convolution(sign):
    # 40,000 grid points: the search runs on blocked summaries; the tail of the
    # 3-fold sum is computed by convolution (to rounding, ~1e-16 per entry).
    step = _subsampled_step(0.3, 2e-4)
    assert step.size > 20_000
    count, log_tail = 3, math.log(1e-12)
    terms = _terms(step, count)
    scale = _spread(step, count)
    cut, lam = chernoff_cut(terms, log_tail, scale, sign)
    assert cut == pytest.approx(_exact_cut(terms, log_tail, lam, sign), rel=1e-12)
    composed = np.clip(fftconvolve(fftconvolve(step, step), step), 0.0, None)
    if sign > 0:
        beyond = composed[math.floor(cut) + 1 :].sum()
    else:
        beyond = composed[: max(math.ceil(-cut), 0)].sum()
    assert beyond <= 1e-12


@pytest.mark.parametrize(
    ("sampling_probability", "spacing", "mu", "count"),
    [(1e-6, 1e-4, 2.0, 10**6), (1e-3, 1e-4, 1.0, 10**4), (0.5, 1e-4, 1.0, 10)],
)
@pytest.mark.parametrize("sign", [+1, -1])
def test_cut_is_within_a_hair_of_the_best_exact_cut(sampling_probability, spacing, mu, count, sign):
    step = _subsampled_step(sampling_probability, spacing, mu)
    assert step.size > 4_096  # long enough to be blocked
    terms = _terms(step, count)
    scale = _spread(step, count)
    log_tail = math.log(1e-30)
    cut, _ = chernoff_cut(terms, log_tail, scale, sign)
    grid = np.exp(np.linspace(math.log(1e-3 / scale), math.log(1e3 / scale), 200))
    best = min(_exact_cut(terms, log_tail, g, sign) for g in grid)
    # the window runs from the mean to the cut: the search's cut is at most 1% of the
    # distance from the mean further out than the best on a grid of 200 λ (the golden
    # search stops at 0.25 in log λ)
    mean = sum(c * np.sum(np.exp(lp) * i) / np.sum(np.exp(lp)) for lp, i, c in terms)
    # (a cut below the grid's best is the search finding a λ between its points)
    assert cut - best <= 0.01 * abs(best - sign * mean) + 1.0


def test_saddle_puts_the_tilted_mean_at_the_index():
    step = _subsampled_step(1e-4, 2e-5)
    count = 10**5
    terms = _terms(step, count)
    log_p, index, _ = terms[0]
    weights = np.exp(log_p - log_p.max())
    mean = count * np.sum(weights * index) / weights.sum()
    spread = math.sqrt(count * np.sum(weights * (index - mean / count) ** 2) / weights.sum())
    target = mean + 3 * spread
    lam, inside = saddle(terms, target, spread)
    assert inside
    tilted = np.exp(log_p + lam * index - log_p.max() - lam * index.max())
    tilted_mean = count * np.sum(tilted * index) / tilted.sum()
    # the search stops at 0.02 in log λ: the tilted mean lands within a few percent of
    # the distance from the untilted mean
    assert abs(tilted_mean - target) <= 0.05 * (target - mean)
