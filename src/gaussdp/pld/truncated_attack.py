"""Lower pairs for truncated Poisson sampling from actual pairs of data sets.

Any pair of neighbouring data sets gives a pair of output laws that the
mechanism dominates; so does anything computed from the output
(post-processing). This module builds such pairs for the truncated Poisson
Gaussian (:mod:`gaussdp.pld.truncated` has the notation): the other N − 1
records all contribute the same unit vector u·Δ, the distinguished record x*
contributes Δ(−a u + b w) with w ⊥ u and a² + b² = 1. In units of σ, with
s = Δ/σ and K ~ Binomial(N − 1, q), the output's coordinates (y_u, y_w) are

* without x* (D'): (s min(K, B), 0);
* with x* (D): the same if x* is not sampled (1 − q); if it is and K ≤ B − 1,
  (s(K − a), s b); if K ≥ B, (s(B − 1 − a), s b) with probability B/(K + 1)
  (x* kept, one other record dropped) and (s B, 0) otherwise,

plus N(0, I). a = 0 is the record orthogonal to the rest; the w-coordinate
alone is the pair of :func:`gaussdp.pld.truncated.inclusion_probability`. When
batches are cut, the u-coordinate also sees that x* pushed one other record
out, which is worth more when x* leans against the others (a > 0).

The output is binned (post-processing: cells of width ``spacing`` in y_w and
in y_u near the cut, 0.5 below it, and the outer tails), giving a finite pair whose cell masses are
Gaussian cell probabilities summed over K. Values of K with Binomial mass
below 1e-30 are left out; the mass left out, m (an exact binomial tail), is
added to every cell of the second distribution, so that the first only loses
mass and the second only gains: every hockey-stick divergence, of one step or
of a composition, can only go down, and the pair stays dominated.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from gaussdp._binomial import (
    binomial_cdf,
    binomial_lower_quantile,
    binomial_pmf,
    binomial_sf,
    binomial_upper_quantile,
)
from gaussdp.pld.losses import AtomicLoss

__all__ = ["attack_losses", "inclusion_divergence", "kullback_leibler"]

_NEGLIGIBLE_MASS = 1e-30
_TAIL_WIDTH = 9.0  # in σ: the outer cells hold what lies beyond
_MAXIMUM_CELLS = 3000  # per coordinate and region
_COARSE_SPACING = 0.5  # in σ, for y_u away from the cut
_MAXIMUM_ATOMS = 2_000_000  # beyond, no attack pair is built (memory)


def _cell_probabilities(edges: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """P(N(c, 1) in each cell) for every centre: (−∞, e₀], (e₀, e₁], …, (e_last, ∞)."""
    c = np.asarray(centres, dtype=float)[:, None]
    below = special.ndtr(edges[None, :] - c)
    above = special.ndtr(c - edges[None, :])
    middle = 0.5 * (edges[1:] + edges[:-1])[None, :]
    inner = np.where(middle > c, above[:, :-1] - above[:, 1:], below[:, 1:] - below[:, :-1])
    return np.concatenate([below[:, :1], np.maximum(inner, 0.0), above[:, -1:]], axis=1)


def _edges(low: float, high: float, spacing: float) -> np.ndarray:
    count = min(math.ceil((high - low) / spacing), _MAXIMUM_CELLS)
    return np.linspace(low, high, count + 1)


def attack_losses(
    dataset_size: int,
    sampling_probability: float,
    max_batch_size: int,
    shift: float,
    against: float,
    spacing: float = 0.1,
) -> tuple[AtomicLoss, AtomicLoss] | None:
    """(remove, add) losses of the binned pair above, x* = −a u + b w with a = ``against``.

    None where the binned pair would have more than 2,000,000 atoms.

    Parameters
    ----------
    dataset_size, sampling_probability, max_batch_size : N, q, B
    shift : float
        s = Δ/σ.
    against : float
        a ∈ [0, 1).
    spacing : float
        Cell width in units of σ.
    """
    n, q, b_max, s = dataset_size, sampling_probability, max_batch_size, shift
    across = math.sqrt(1.0 - against**2)
    # K beyond its 1e-30 quantiles is left out (its mass is added back below).
    low_k = binomial_lower_quantile(n - 1, q, _NEGLIGIBLE_MASS)
    high_k = binomial_upper_quantile(n - 1, q, _NEGLIGIBLE_MASS)
    k = np.arange(max(low_k, 0), min(high_k, n - 1) + 1)
    low_k, high_k = int(k[0]), int(k[-1])
    pmf = binomial_pmf(k, n - 1, q)
    left_out = float(binomial_cdf(low_k - 1, n - 1, q) + binomial_sf(high_k, n - 1, q))
    # Fine cells near the cut (where x* pushing a record out shows), coarse below it.
    bottom = s * (min(low_k, b_max) - 1 - against) - _TAIL_WIDTH
    fine_from = max(s * (b_max - 1 - against) - _TAIL_WIDTH, bottom)
    edges_u = np.concatenate(
        [
            _edges(bottom, fine_from, _COARSE_SPACING)[:-1],
            _edges(fine_from, s * b_max + _TAIL_WIDTH, spacing),
        ]
    )
    edges_w = _edges(-_TAIL_WIDTH, s * across + _TAIL_WIDTH, spacing)
    if (edges_u.size + 1) * (edges_w.size + 1) > _MAXIMUM_ATOMS:
        return None
    cells_w_zero = _cell_probabilities(edges_w, [0.0])[0]
    cells_w_record = _cell_probabilities(edges_w, [s * across])[0]
    without_u = pmf @ _cell_probabilities(edges_u, s * np.minimum(k, b_max))
    small = k < b_max
    record_u = (q * pmf[small]) @ _cell_probabilities(edges_u, s * (k[small] - against))
    kept_share = b_max / (k[~small] + 1.0)
    kept = q * float(np.sum(pmf[~small] * kept_share))
    pushed = q * float(np.sum(pmf[~small] * (1.0 - kept_share)))
    record_u = record_u + kept * _cell_probabilities(edges_u, [s * (b_max - 1 - against)])[0]
    full_u = pushed * _cell_probabilities(edges_u, [s * b_max])[0]
    without = np.outer(without_u, cells_w_zero).ravel()
    with_record = (
        (1.0 - q) * without
        + np.outer(record_u, cells_w_record).ravel()
        + np.outer(full_u, cells_w_zero).ravel()
    )
    remove = _pair(with_record, without + left_out)
    add = _pair(without, with_record + left_out)
    return remove, add


def _pair(first: np.ndarray, second: np.ndarray) -> AtomicLoss:
    useful = first > 0
    with np.errstate(divide="ignore"):
        losses = np.log(first[useful]) - np.log(second[useful])
    return AtomicLoss.from_atoms(losses, first[useful], second[useful])


def kullback_leibler(loss: AtomicLoss) -> float:
    """Σ P log(P/Q) over the atoms: how much a step of this pair reveals on average."""
    return float(np.sum(loss.p_masses * loss.losses))


def inclusion_divergence(q_eff: float, shift: float, spacing: float = 0.1) -> float:
    """KL of {0: 1 − q_eff, s: q_eff} against N(0, 1), binned as :func:`attack_losses` bins y_w."""
    edges = _edges(-_TAIL_WIDTH, shift + _TAIL_WIDTH, spacing)
    zero, moved = _cell_probabilities(edges, [0.0, shift])
    mixture = (1.0 - q_eff) * zero + q_eff * moved
    useful = mixture > 0
    return float(np.sum(mixture[useful] * np.log(mixture[useful] / zero[useful])))
