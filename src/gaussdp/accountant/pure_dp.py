"""The exact composition of pure-DP mechanisms: a sum of randomized-response losses.

A composition of ε_i-DP mechanisms is dominated by the composition of
randomized responses, whose privacy loss is a sum of independent ±ε_i, i.e.
a sum of scaled binomials (Dong, Roth & Su 2022, Theorem 8; Kairouz, Oh &
Viswanath 2015). :func:`_pure_dp_profiles` forms its atoms exactly, in log
space; :func:`_exact_atoms_curve` reads its trade-off curve off them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from gaussdp import mechanisms as m
from gaussdp._numerics import LOG_ROUNDING, UNIT_ROUNDOFF, suffix_sums
from gaussdp.pld.query import Profile, certify_tail_sums

#: Largest number of atoms for the exact pure-DP composition.
_MAXIMUM_EXACT_ATOMS = 2_000_000


def _pure_dp_profiles(
    leaves: dict[m.Mechanism, int],
) -> tuple[Profile, Profile, Profile] | None:
    """Upper, lower and computed profiles of composed randomized responses (None if too large).

    Under P the number of "+ε" answers of k responses is Binomial(k, p),
    p = e^ε/(1 + e^ε), under Q Binomial(k, 1 − p), and the loss is ε(2j − k)
    (Dong, Roth & Su 2022, proof of Theorem 8). The atoms are formed in log
    space from log p = −log1p(e^{−ε}) and log(1 − p) = −ε − log1p(e^{−ε}),
    never from 1 − p. Each atom's log carries at most a few roundings of its
    largest term, log Γ(k + 1) or k·(ε + 1), so its relative error is at most
    8u·(3 log Γ(k + 1) + k(ε + 1) + 4) per group (u the unit roundoff); that
    and the error of the tail sums move the two profiles apart, so that
    they bound the exact profile from both sides.
    """
    groups: dict[float, int] = {}
    for leaf, count in leaves.items():
        groups[leaf.epsilon] = groups.get(leaf.epsilon, 0) + count
    size = math.prod(k + 1 for k in groups.values())
    if size > _MAXIMUM_EXACT_ATOMS:
        return None
    losses = np.zeros(1)
    log_p = np.zeros(1)
    log_q = np.zeros(1)
    atom_error = 0.0
    for epsilon, k in groups.items():
        j = np.arange(k + 1)
        log_choose = special.gammaln(k + 1) - special.gammaln(j + 1) - special.gammaln(k - j + 1)
        log_plus = -math.log1p(math.exp(-epsilon))  # log p
        log_minus = -epsilon + log_plus  # log(1 − p)
        group_log_p = log_choose + j * log_plus + (k - j) * log_minus
        group_log_q = log_choose + j * log_minus + (k - j) * log_plus
        losses = (losses[:, None] + epsilon * (2 * j - k)[None, :]).ravel()
        log_p = (log_p[:, None] + group_log_p[None, :]).ravel()
        log_q = (log_q[:, None] + group_log_q[None, :]).ravel()
        atom_error += 8.0 * UNIT_ROUNDOFF * (3.0 * math.lgamma(k + 1) + k * (epsilon + 1.0) + 4.0)
    order = np.argsort(losses, kind="stable")
    losses, p, q = losses[order], np.exp(log_p[order]), np.exp(log_q[order])
    unique, start = np.unique(losses, return_index=True)
    p, q = np.add.reduceat(p, start), np.add.reduceat(q, start)
    tail_p, sum_error_p = suffix_sums(p)
    tail_q, sum_error_q = suffix_sums(q)
    with np.errstate(divide="ignore"):
        log_tail_q = np.log(tail_q)
    error_p = (1.0 + sum_error_p) * (1.0 + atom_error) - 1.0
    error_q = (1.0 + sum_error_q) * (1.0 + atom_error) - 1.0 + LOG_ROUNDING
    bounds = []
    for side in (1, -1):
        moved_p, moved_log_q = certify_tail_sums(tail_p, error_p, log_tail_q, error_q, side)
        bounds.append(Profile(unique, moved_p, moved_log_q, 0.0, 0.0, side))
    return bounds[0], bounds[1], Profile(unique, tail_p, log_tail_q, 0.0, 0.0, 1)


def _exact_atoms_curve(profile: Profile):
    """The exact curve of composed randomized responses from their profile.

    Each atom's mass is taken from the side that does not cancel: P_i from the
    P suffix sums where l_i >= 0, Q_i·e^{l_i} from the Q suffix sums below
    (-diff(tail_p) alone loses the Q-mass of low-loss atoms: asymmetric curves,
    and Q-masses summing above 1, e.g. Repeated(RandomizedResponse(2.0), 10)).
    """
    from gaussdp import curves

    p_diff = -np.diff(profile.tail_p)
    with np.errstate(over="ignore"):
        q_diff = -np.diff(np.exp(profile.log_tail_q))
    masses = np.where(profile.losses >= 0.0, p_diff, q_diff * np.exp(profile.losses))
    return curves.from_privacy_loss(
        profile.losses, np.clip(masses, 0.0, None), profile.infinity_mass
    )
