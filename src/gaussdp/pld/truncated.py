"""Truncated Poisson sampling of a Gaussian: certified bracketing pairs.

The sampler (:class:`gaussdp.mechanisms.TruncatedPoisson`): each record of
the data set is included independently with probability q; a batch of more
than B records is cut to a uniformly random subset of B. A Gaussian
mechanism N(·, σ²), ℓ2 sensitivity Δ, runs on the batch sum.

Neighbouring relation: add/remove, with N = ``dataset_size`` the size of the
*larger* data set, the one holding the distinguished record x* (as in
dp_accounting's ``from_truncated_subsampled_gaussian_mechanism``, whose
"truncation probability" is P(Binomial(N − 1, q) ≥ B)). Let K be the number
of the N − 1 other records that are sampled, K ~ Binomial(N − 1, q), and
T = {K ≥ B} the event that a batch holding x* would be cut.

Analysis (remove direction: D ∋ x*, D' = D ∖ {x*}; add is the swap).

* On T^c (K ≤ B − 1) nothing is cut whether or not x* is sampled: the batch of
  D' is the K sampled others S', that of D is S' or, with probability q,
  S' ∪ {x*}. Given S', the pair is the Poisson-subsampled Gaussian
  ((1 − q)N(s, σ²) + q N(s + g*, σ²), N(s, σ²)) with ‖g*‖ ≤ Δ.
* On T (K ≥ B), D' keeps a uniform B-subset A of S'. D keeps x* with
  probability q·B/(K + 1), and then a uniform (B − 1)-subset of S'; otherwise a
  uniform B-subset of S'. A uniform subset of a uniform subset is a uniform
  subset of the N − 1 others, whatever K is, so given T the pair is sampling
  without replacement of one record against another, with probability

      q̄ = E[q B/(K + 1) | T] = (B/N) P(Binomial(N, q) ≥ B + 1) / P(T):

  coupling A = A'' ∪ {j} with j uniform in A, given A the pair is
  ((1 − q̄)N(s_A) + q̄ avg_j N(s_A − g_j + g*), N(s_A)), each shift of norm
  ≤ 2Δ. By joint convexity of the hockey-stick divergence it is dominated
  by ((1 − q̄)N(0, σ²) + q̄ N(2Δ, σ²), N(0, σ²)), which the data set whose
  other records all hold −g* attains on T.

T has the same law under D and D' (it depends on the other records only).

``upper`` reveals T: the pair ((T, Y), (T, Y')) whose loss is the mixture,
with weights 1 − P(T) and P(T), of the Gaussian mixtures
{0: 1 − q, Δ: q} and {0: 1 − q̄, 2Δ: q̄} against N(0, σ²). Revealing more is
the reverse of post-processing, so it dominates the mechanism in each
direction. dp_accounting builds the same mixture but takes for the branch T
the replace-one pair of the subsampled Gaussian at σ/2 (its "slightly loose"
upper bound, which dominates the branch's pair); the branch here is the tight
one, so the pair ``upper`` is never looser than dp_accounting's (the computed ε
can differ by the two tools' grid errors, ~1e-9 where no batch is ever cut).

``lower`` is a pair of actual neighbouring data sets, so the mechanism
dominates it. The simplest: the other records all contribute 0 and x* a
vector of norm Δ; the output is N(0, σ²) under D' and {0: 1 − q_eff, Δ: q_eff}
under D, with q_eff = P(x* is in the batch) = q P(K ≤ B − 1)
+ (B/N) P(Binomial(N, q) ≥ B + 1). Where batches are cut often enough
(P(T) ≥ 1e-6), attacks that also see the cut are tried
(:mod:`gaussdp.pld.truncated_attack`: the others contribute u, x* leans against
them), binned (post-processing); the one whose single step reveals most on
average (Kullback–Leibler divergence, which drives long compositions) is used.

When P(T) = 0 (in particular B = N) both are the Poisson-subsampled Gaussian
with rate q, which is returned exactly. Otherwise the exact pair of the
sampler is not known to us; the truth lies between.

Source: Ganesh (2025), "Tighter privacy analysis for truncated Poisson
sampling", arXiv 2508.15089; dp_accounting's
``from_truncated_subsampled_gaussian_mechanism``
(``dp_accounting/pld/privacy_loss_distribution.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaussdp import mechanisms as m
from gaussdp._binomial import binomial_cdf, binomial_sf
from gaussdp._validation import InvalidParameterError
from gaussdp.pld.losses import BracketedLoss, PrivacyLoss, remembered_tight_support
from gaussdp.pld.mixture import mixture_losses
from gaussdp.pld.truncated_attack import (
    attack_losses,
    inclusion_divergence,
    kullback_leibler,
)

__all__ = [
    "CAVEAT",
    "RevealedMixtureLoss",
    "conditional_sampling_probability",
    "inclusion_probability",
    "truncated_poisson_losses",
]

CAVEAT = (
    "truncated Poisson: the exact pair is not known; the upper bounds reveal whether the "
    "batch was cut (at least as tight as dp_accounting's), the lower bounds are those of an "
    "actual pair of data sets (the most revealing of a few attacks); the truth lies between"
)

#: Below this P(cut), the pairs differ by less than 2e-20 in δ per step: no caveat.
_NEGLIGIBLE_CUT = 1e-20
#: From this P(cut) on, attacks that see the cut (x* against the others) are tried too.
_ATTACKS_FROM_CUT = 1e-6
#: The directions tried: x* = −a u + b w for these a (see :mod:`gaussdp.pld.truncated_attack`).
_ATTACK_DIRECTIONS = (0.0, 0.3)
#: An attack replaces the zero-others pair only if its divergence is this much larger
#: (the attacks are binned, the zero-others pair is exact).
_ATTACK_MARGIN = 1.01


@dataclass(frozen=True, eq=False)
class RevealedMixtureLoss(PrivacyLoss):
    """The pair that also reveals which of several pairs ran: branch k with probability wₖ.

    For pairs (Pₖ, Qₖ) chosen by a coin with the same law under both data
    sets, the pair ((k, Y) ~ Σ wₖ δₖ ⊗ Pₖ, (k, Y') ~ Σ wₖ δₖ ⊗ Qₖ) has loss
    Lₖ(Y) on branch k, so its tails are the weighted sums of the branches'
    tails. It dominates the pair that hides k (post-processing).
    """

    weights: tuple[float, ...]
    components: tuple[PrivacyLoss, ...]

    @property
    def infinity_mass(self) -> float:  # type: ignore[override]
        pairs = zip(self.weights, self.components, strict=True)
        return float(sum(weight * component.infinity_mass for weight, component in pairs))

    def tails(self, x):
        x = np.asarray(x, dtype=float)
        sf_p = np.zeros_like(x)
        sf_q = np.zeros_like(x)
        cdf_p = np.zeros_like(x)
        cdf_q = np.zeros_like(x)
        for weight, component in zip(self.weights, self.components, strict=True):
            (a, b), (c, d) = component.tails(x)
            sf_p += weight * a
            sf_q += weight * b
            cdf_p += weight * c
            cdf_q += weight * d
        return (sf_p, sf_q), (cdf_p, cdf_q)

    def sf(self, x):
        return self.tails(x)[0]

    def cdf(self, x):
        return self.tails(x)[1]

    def support(self, tail):
        # Each branch leaves at most ``tail`` outside its interval, so the mixture does too.
        pairs = zip(self.weights, self.components, strict=True)
        ends = [component.support(tail) for weight, component in pairs if weight > 0]
        return min(low for low, _ in ends), max(high for _, high in ends)

    def tight_support(self, tail):
        # A branch of weight 1e-49 (a batch almost never cut) needs no grid of its own.
        return remembered_tight_support(self, tail)


def conditional_sampling_probability(mechanism: m.TruncatedPoisson) -> float:
    """q̄ = E[q B/(K + 1) | K ≥ B] = (B/N) P(Binomial(N, q) ≥ B + 1) / P(Binomial(N − 1, q) ≥ B).

    The probability that the distinguished record is in the batch, given that
    the batch is cut; 0 when no batch is ever cut.
    """
    n, q, b = mechanism.dataset_size, mechanism.sampling_probability, mechanism.max_batch_size
    cut = mechanism.truncation_probability
    if cut == 0.0:
        return 0.0
    return min(float(b / n * binomial_sf(b, n, q) / cut), q)


def inclusion_probability(mechanism: m.TruncatedPoisson) -> float:
    """P(the distinguished record is in the batch).

    q_eff = q P(K ≤ B − 1) + (B/N) P(Binomial(N, q) ≥ B + 1), K ~ Binomial(N − 1, q).
    """
    n, q, b = mechanism.dataset_size, mechanism.sampling_probability, mechanism.max_batch_size
    kept = q * float(binomial_cdf(b - 1, n - 1, q))
    cut = b / n * float(binomial_sf(b, n, q))
    return min(kept + cut, q)


def _lower_pair(mechanism: m.TruncatedPoisson, shift: float, cut: float):
    """The lower pair: the zero-others pair, or a binned attack that reveals more on average.

    Every candidate is an actual pair of data sets (or a post-processing of
    one), so whichever is chosen is dominated by the mechanism; the choice
    (largest Kullback–Leibler divergence of one step, which drives long
    compositions) only decides how tight the lower bound is.
    """
    q_eff = inclusion_probability(mechanism)
    zero_others = mixture_losses(1.0, (0.0, shift), (1.0 - q_eff, q_eff))
    if cut < _ATTACKS_FROM_CUT:
        return zero_others
    n, q, b = mechanism.dataset_size, mechanism.sampling_probability, mechanism.max_batch_size
    # The zero-others pair's own divergence, by the same binning as the attacks'.
    best, best_score = zero_others, inclusion_divergence(q_eff, shift)
    for against in _ATTACK_DIRECTIONS:
        candidate = attack_losses(n, q, b, shift, against)
        if candidate is None:  # too many cells for memory: keep what we have
            break
        score = kullback_leibler(candidate[0])
        if score > _ATTACK_MARGIN * best_score:
            best, best_score = candidate, score
    return best


def truncated_poisson_losses(
    mechanism: m.TruncatedPoisson, neighbouring: m.Neighbouring
) -> tuple[PrivacyLoss, PrivacyLoss]:
    """(remove, add) losses of a truncated-Poisson-sampled Gaussian.

    Bracketed (:class:`BracketedLoss`), or exact when no batch is ever cut.
    """
    if neighbouring is not m.Neighbouring.ADD_REMOVE:
        raise InvalidParameterError(
            "TruncatedPoisson is accounted under add/remove neighbouring only "
            f"(got neighbouring={neighbouring.value}); use Neighbouring.ADD_REMOVE"
        )
    inner = mechanism.mechanism
    if not isinstance(inner, m.Gaussian):
        raise InvalidParameterError(
            f"TruncatedPoisson is accounted for a Gaussian inner mechanism only, got "
            f"{type(inner).__name__}"
        )
    sigma, delta_shift = inner.sigma, inner.sensitivity
    q = mechanism.sampling_probability
    cut = mechanism.truncation_probability
    plain = mixture_losses(sigma, (0.0, delta_shift), (1.0 - q, q))
    if cut == 0.0:
        return plain
    q_bar = conditional_sampling_probability(mechanism)
    swapped = mixture_losses(sigma, (0.0, 2.0 * delta_shift), (1.0 - q_bar, q_bar))
    n, b = mechanism.dataset_size, mechanism.max_batch_size
    kept_weight = float(binomial_cdf(b - 1, n - 1, q))
    lower = _lower_pair(mechanism, delta_shift / sigma, cut)
    return tuple(
        BracketedLoss(
            upper=RevealedMixtureLoss((kept_weight, cut), (plain[i], swapped[i])),
            lower=lower[i],
            # Where the two pairs differ by a negligible mass, the gap is numerical only and
            # the accountant may refine its grids as for an exact pair.
            caveat=CAVEAT if cut > _NEGLIGIBLE_CUT else "",
        )
        for i in range(2)
    )
