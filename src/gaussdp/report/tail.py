r"""Where μ stops holding: the tail of the privacy profile and the GDPT tail limit.

A μ fitted to an accountant's curve describes the curve *down to the δ the
computation resolves*. Whether the mechanism is μ-GDP beyond that is a
question about the far tail of its privacy profile δ(ε) as ε → ∞, which the
GDPT paper (``papers/000_…``) answers with the tail limit of the GDP
transformation G(ε) = μ_GDP(ε, δ(ε)):

    lim sup_{ε→∞} G(ε) = lim sup_{ε→∞} ε / √(−2 log δ(ε))   (Theorem 4.4),

the μ that the tail alone needs (the mechanism is GDP iff it is finite,
Theorem 4.3). :func:`tail_mu` derives it from the mechanism description,
exactly, by three rules:

* **Leaves.** A Gaussian mechanism with shift s (Δ, or 2Δ under replace)
  has a Gaussian privacy loss N(μ²/2, μ²), μ = s/σ, so δ(ε) decays like
  e^{−ε²/(2μ²)} and the limit is s/σ; a μ-GDP description gives μ. The
  discrete Gaussian has the same loss L(x) = (s x − s²/2)/σ² on the
  integers, whose tail decays at the same rate: s/σ. ρ-zCDP gives
  δ(ε) ≤ e^{−(ε−ρ)²/(4ρ)}, limit √(2ρ) (attained by the Gaussian with that
  μ). Laplace, randomized response and pure ε-DP have bounded losses: δ(ε)
  is 0 beyond some ε and the limit is 0. An (ε, δ)-DP piece with δ > 0 has
  P-mass δ at infinite loss, δ(ε) ≥ δ for every ε, and no μ covers it: ∞;
  Rényi-DP at finitely many orders only bounds δ(ε) by e^{−cε}: ∞. Profiles
  and noise equations given as functions have no rule (None; estimate them
  with :func:`gaussdp.gdpt.tail_estimate`).
* **Composition.** Losses add; the tail of a sum of independent Gaussian-
  tailed losses with parameters μ_i is Gaussian-tailed with √Σμ_i² (bounded
  losses only shift it), so limits compose like μ's: √Σ μ_i², k repetitions
  give √k·μ.
* **Subsampling does not amplify the tail** (GDPT paper §5.3). Subsampling
  with rate q maps (ε, δ) to (log(1 − q + q e^ε), qδ): for large ε,
  ε' = ε + log q + o(1) and log δ' = log δ + log q, so ε'/√(−2 log δ') has the
  same limit. The Poisson-subsampled Gaussian's remove-direction loss
  log(1 − q + q e^{ℓ(x)}) ≈ ℓ(x) + log q where ℓ is large, and its tail is
  the inner mechanism's. So DP-SGD with T steps and noise multiplier σ has
  tail limit √T/σ — the *unsubsampled* μ — however small q is. (Under
  replace, Poisson subsampling with q < 1 compares N(Δ, σ²) with the
  N(0, σ²) component of the other mixture in the tail, so its limit is the
  inner add/remove one, Δ/σ; fixed-size subsampling keeps the inner replace
  limit.) Group privacy multiplies the limit by the group size k (G_μ
  becomes G_{kμ}, Dong, Roth & Su Theorem 2.14; for a subsampled mechanism
  the tail is the run where all k records are used); a parallel
  composition has its worst part's limit.

**Nor does shuffling.** One shuffled epoch of a Gaussian mechanism lies between
the inner Gaussian (its upper pair: shift s) and Chua et al.'s pair, the
maximum batch sum of MoG(2r) against MoG(r) (against N(0, I) under replace);
in the far tail that maximum is the shifted batch's, a Gaussian against a
Gaussian s/σ apart, so both pairs have the inner limit and so does the epoch:
E epochs need √E·s/σ (at δ = 1e-14, σ = 1, t = 10, the lower bound's μ at
that point is already 0.9999).

In plain words: subsampling hides a record most of the time, which is what
makes μ small; but in the rare runs where the record is used in (almost)
every step, nothing hides it, and those runs decide how fast δ(ε) can fall at
very large ε. They matter only at astronomically small δ — for CIFAR-10
DP-SGD (σ = 9.4, q = 0.328, T = 2000), μ = 1.57 describes the curve down to
δ ≈ 1e-12, while the strict, δ = 0 guarantee needs μ = √2000/9.4 ≈ 4.76.
"""

from __future__ import annotations

import math

from gaussdp import mechanisms as m

__all__ = ["tail_mu"]


def _tail(mechanism: m.Mechanism, neighbouring: m.Neighbouring) -> float | None:
    replace = neighbouring is m.Neighbouring.REPLACE
    if isinstance(mechanism, m.Mechanism) and mechanism.expand() is not None:  # DP-SGD, matrix
        return _tail(mechanism.expand(), neighbouring)
    if isinstance(mechanism, (m.Gaussian, m.DiscreteGaussian)):
        if mechanism.sensitivity == 0 or math.isinf(mechanism.sigma):
            return 0.0
        return (2.0 if replace else 1.0) * mechanism.sensitivity / mechanism.sigma
    if isinstance(mechanism, m.GDP):
        return mechanism.mu
    if isinstance(mechanism, m.ZCDP):
        return math.sqrt(2.0 * mechanism.rho)
    if isinstance(mechanism, m.RenyiDP):
        return math.inf
    if isinstance(mechanism, (m.Laplace, m.PureDP, m.RandomizedResponse)):
        return 0.0
    if isinstance(mechanism, m.ApproxDP):
        return math.inf if mechanism.delta > 0 else 0.0
    if isinstance(mechanism, m.PoissonSubsampled):
        if replace and mechanism.sampling_probability < 1.0:
            return _tail(mechanism.mechanism, m.Neighbouring.ADD_REMOVE)
        return _tail(mechanism.mechanism, neighbouring)
    if isinstance(mechanism, (m.SubsampledWithoutReplacement, m.Shuffled)):
        return _tail(mechanism.mechanism, neighbouring)
    if isinstance(mechanism, m.Repeated):
        inner = _tail(mechanism.mechanism, neighbouring)
        return None if inner is None else math.sqrt(mechanism.times) * inner
    if isinstance(mechanism, m.Group):
        inner = _tail(mechanism.mechanism, neighbouring)
        if inner is None or inner in (0.0, math.inf):
            return inner
        return mechanism.group_size * inner
    if isinstance(mechanism, m.Parallel):
        parts = [_tail(part, neighbouring) for part in mechanism.mechanisms]
        return None if any(part is None for part in parts) else max(parts)
    if isinstance(mechanism, m.Composition):
        parts = [_tail(part, neighbouring) for part in mechanism.mechanisms]
        if any(part is None for part in parts):
            return None
        if any(math.isinf(part) for part in parts):
            return math.inf
        return math.sqrt(math.fsum(part * part for part in parts))
    return None


def tail_mu(mechanism, neighbouring=None) -> float | None:
    """The μ the far tail of a mechanism's privacy profile needs (its GDPT tail limit).

    lim sup_{ε→∞} ε/√(−2 log δ(ε)) (GDPT paper, Theorem 4.4), derived from the
    description by the rules in the module docstring: s/σ for (discrete)
    Gaussians, 0 for bounded losses, ∞ for (ε, δ)-DP pieces with δ > 0, √Σμ_i²
    under composition, and unchanged by subsampling. A mechanism is μ-GDP
    with δ = 0 only for μ at least this (and at least its head μ).

    Parameters
    ----------
    mechanism : Mechanism or Pipeline
    neighbouring : Neighbouring, optional
        Default: the pipeline's, or add/remove.

    Returns
    -------
    float or None
        None for a description this function has no rule for.

    Examples
    --------
    >>> from gaussdp import DPSGD, Composition, Gaussian, PureDP
    >>> round(tail_mu(DPSGD(9.4, 0.32768, 2000)), 4)   # √2000 / 9.4: not amplified
    4.7576
    >>> tail_mu(Composition([Gaussian(1.0), PureDP(1.0)]))
    1.0
    """
    mechanism, neighbouring = m.resolve(mechanism, neighbouring)
    return _tail(mechanism, neighbouring)
