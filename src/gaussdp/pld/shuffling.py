r"""Shuffling: what is certain about one shuffled epoch, as a bracket of two pairs.

One epoch of :class:`~gaussdp.mechanisms.Shuffled` cuts a uniformly random
permutation of the records into ``t`` batches of a fixed size and runs the
Gaussian mechanism (noise σ, sensitivity Δ, r = Δ/σ) on the sum of each batch.
No tight upper bound on its privacy is known. Two pairs are certain:

**The neighbouring relation.** With fixed batch sizes a record cannot simply
be added or removed (the batches would change size). Following Chua et al.
(2024, §2) — and the *zero-out* relation of Kairouz et al. (2021) — add/remove
is read as: ``D'`` is ``D`` with one record replaced by a null record ⊥ whose
contribution (gradient) is 0. Data set and batch sizes stay fixed, and for
Poisson sampling this accounting is exactly the add/remove one (⊥ contributes
nothing), so ε's under the two samplers are comparable; it is also the
relation under which Chua et al. prove the lower bound below. Under replace-one
(``Neighbouring.REPLACE``) a contribution may move by 2Δ.

**Upper: no amplification at all.** Whatever the permutation π, the record
that differs is in exactly one batch; given π, the epoch is an adaptive
composition in which every step but that one has the same output distribution
on both data sets, and that one is the Gaussian mechanism. So each π gives a
pair dominated by N(r, 1) vs N(0, 1) (N(2r, 1) under replace), and so does
their mixture (the hockey-stick divergence is jointly convex; π has the same
law on both sides). One epoch is therefore dominated by *one* run of the inner
Gaussian: the plain Gaussian, once per epoch, which is what is composed.

**Lower: Chua et al. (2024).** Take the adaptive batch linear queries of
Chua et al. ("How Private are DP-SGD Implementations?", ICML 2024, arXiv
2403.17673, §4; multi-epoch in arXiv 2411.04205) with every record but one
contributing −Δ along one direction, and the record that differs contributing
+Δ (and ⊥, 0). The batch sums, centred, are then, in units of σ,

* under zero-out: P = MoG(2r) against Q = MoG(r),
* under replace (+Δ against −Δ): P = MoG(2r) against Q = N(0, I),

where MoG(m) = (1/t) Σ_s N(m·e_s, I_t): the differing record shifts the one
batch it falls in. Every post-processing of (P, Q) is a pair the mechanism
dominates; we take, as they do, M = max_s x_s, whose law under MoG(m) has
distribution function F_m(c) = Φ(c − m)·Φ(c)^{t−1}, and cut M into fine
slices. The slices' masses (p_i, q_i) define the discrete pair with atoms of
loss log(p_i/q_i): exact for that post-processing, hence dominated by the
mechanism (so it gives certified lower bounds without any rounding of ours;
the engine then rounds it down as for any lower bound). The other direction
("add") is the same pair swapped. Epochs reshuffle independently, so E epochs
compose E such pairs.

This is the pair of the ``ShuffleAccountant`` in Google's
dpsgd_batch_sampler_accounting (vendored in the ``random-allocation``
package), against which the tests compare.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError
from gaussdp.pld.losses import AtomicLoss, BracketedLoss, GaussianLoss, PrivacyLoss

__all__ = ["CAVEAT", "max_statistic_loss", "shuffled_losses"]

#: What the bounds of a shuffled run are (said by the accountant and the report).
CAVEAT = (
    "shuffling: no tight upper bound is known; the upper bounds assume no amplification "
    "(each record is in one batch per epoch: the inner Gaussian once per epoch), the lower "
    "bounds are Chua et al. 2024's (arXiv 2403.17673), certified; the truth lies between"
)

# Each slice of the maximum M moves the loss by at most about this (nats); the engine's
# own grid is of the order of 1e-4; 1e-4 here changes ε by < 1e-7 relative (measured).
_LOSS_PER_SLICE = 5e-4
_WIDEST_SLICE = 0.01
# The two end atoms hold the masses of M below / above the slices: this much at most.
_END_MASS = 1e-40


def _log_cdf_of_maximum(c: np.ndarray, shift: float, steps: int) -> np.ndarray:
    """log F_m(c) = log Φ(c − m) + (t − 1)·log Φ(c): the maximum of t unit normals, one shifted."""
    return special.log_ndtr(c - shift) + (steps - 1) * special.log_ndtr(c)


def _slice_log_masses(log_cdf: np.ndarray) -> np.ndarray:
    """log(F(c_{i+1}) − F(c_i)) from log F at the edges, in log space throughout."""
    upper, lower = log_cdf[1:], log_cdf[:-1]
    with np.errstate(divide="ignore"):
        return upper + np.log(-np.expm1(lower - upper))


@lru_cache(maxsize=64)
def max_statistic_loss(high: float, low: float, steps: int) -> AtomicLoss:
    """The pair (law of max_s x_s under MoG(high), under MoG(low)) as atoms of loss.

    MoG(m) = (1/t) Σ_s N(m·e_s, I_t) in units of σ (m = 0 is N(0, I_t)); the
    maximum M has F_m(c) = Φ(c − m)·Φ(c)^{t−1}. M is cut into slices of width
    at most ``_LOSS_PER_SLICE``/(high − low); the masses below and above them
    (at most 1e-40 each) form one atom each. Every atom's loss is log(p_i/q_i)
    of its own masses, so the pair is exactly a post-processing of
    (MoG(high), MoG(low)): dominated by it.

    Examples
    --------
    >>> loss = max_statistic_loss(2.0, 1.0, 10)
    >>> round(float(loss.p_masses.sum()), 12), round(float(loss.q_masses.sum()), 12)
    (1.0, 1.0)
    """
    spread = high - low
    width = min(_WIDEST_SLICE, _LOSS_PER_SLICE / spread)
    # M ≥ c_low has mass ≥ 1 − 1e-40 under both: Φ(c)^t ≤ 1e-40 at c_low (and Φ(c − m) ≤ Φ(c)).
    c_low = min(
        float(special.ndtri(math.exp(math.log(_END_MASS) / steps))),
        float(special.ndtri(_END_MASS)) + high,
    )
    # M ≤ c_high with mass ≥ 1 − 1e-40: t·Φ(−(c − m)) ≤ 1e-40 with m the larger shift.
    c_high = high - float(special.ndtri(_END_MASS / steps))
    count = max(math.ceil((c_high - c_low) / width), 1)
    edges = np.linspace(c_low, c_high, count + 1)
    log_f_high = _log_cdf_of_maximum(edges, high, steps)
    log_f_low = _log_cdf_of_maximum(edges, low, steps)
    log_p = np.concatenate(
        [log_f_high[:1], _slice_log_masses(log_f_high), [math.log(-math.expm1(log_f_high[-1]))]]
    )
    log_q = np.concatenate(
        [log_f_low[:1], _slice_log_masses(log_f_low), [math.log(-math.expm1(log_f_low[-1]))]]
    )
    keep = np.isfinite(log_p) & np.isfinite(log_q)
    if not np.all(keep):  # pragma: no cover - the ends are chosen so that nothing underflows
        raise FloatingPointError("a slice of the maximum underflowed; widen the slices")
    return AtomicLoss.from_atoms(log_p - log_q, np.exp(log_p), np.exp(log_q))


def _swapped(loss: AtomicLoss) -> AtomicLoss:
    """The pair (Q, P) of a pair (P, Q): losses negated, masses exchanged."""
    return AtomicLoss.from_atoms(-loss.losses, loss.q_masses, loss.p_masses)


def shuffled_losses(
    mechanism: m.Shuffled, neighbouring: m.Neighbouring
) -> tuple[PrivacyLoss, PrivacyLoss]:
    """(remove, add) brackets of one shuffled epoch of a Gaussian mechanism.

    Each is a :class:`BracketedLoss`: ``upper`` the Gaussian pair of one run
    of the inner mechanism (no amplification), ``lower`` Chua et al.'s pair
    (module docstring).

    Raises
    ------
    InvalidParameterError
        If the inner mechanism is not a Gaussian mechanism (no lower bound is
        implemented for others).
    """
    inner = mechanism.mechanism
    if type(inner) is not m.Gaussian:
        raise InvalidParameterError(
            f"Shuffled is accounted for a Gaussian inner mechanism only (Chua et al.'s lower "
            f"bound is for Gaussian noise), got {type(inner).__name__}"
        )
    ratio = inner.sensitivity / inner.sigma
    if neighbouring is m.Neighbouring.REPLACE:
        upper = GaussianLoss(2.0 * ratio)
        remove = max_statistic_loss(2.0 * ratio, 0.0, mechanism.steps)
    else:
        upper = GaussianLoss(ratio)
        remove = max_statistic_loss(2.0 * ratio, ratio, mechanism.steps)
    return (
        BracketedLoss(upper=upper, lower=remove, caveat=CAVEAT),
        BracketedLoss(upper=upper, lower=_swapped(remove), caveat=CAVEAT),
    )
