"""Privacy loss random variables of dominating pairs, exactly (before discretisation).

A dominating pair (P, Q) of a mechanism for one neighbouring direction is
described by its *privacy loss* L = log(dP/dQ), seen under P and under Q
(Gopi et al. 2021; the accounting lecture, file 003, §PLD). Everything the
accountant needs follows from its distribution:

    δ(ε) = P(L > ε) − e^ε Q(L > ε) + P(L = +∞)

(the hockey-stick divergence H_{e^ε}(P ‖ Q)). The classes here give, for an
array of loss values x, the tail probabilities ``sf(x) = (P(L > x), Q(L > x))``
and ``cdf(x) = (P(L ≤ x), Q(L ≤ x))``, each accurate in its own tail (no
``1 − cdf``), plus the masses at ±∞ (``infinity_mass`` is P(L = +∞), outputs
impossible under Q; Q(L = −∞) is whatever Q-mass the finite part lacks).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from scipy import special

from gaussdp._numerics import CACHE_CHUNK, normal_quantile_of_complement

__all__ = [
    "REVEALS_NOTHING",
    "AtomicLoss",
    "BracketedLoss",
    "GaussianLoss",
    "LaplaceLoss",
    "PrivacyLoss",
    "SubsampledLoss",
    "narrowed_support",
    "remembered_tight_support",
    "subsampled_loss",
]


class PrivacyLoss(ABC):
    """Interface: the privacy loss distribution of one dominating pair."""

    #: P(L = +∞): probability, under P, of outputs Q cannot produce.
    infinity_mass: float = 0.0

    @abstractmethod
    def sf(self, x):
        """(P(L > x), Q(L > x)) for an array x of finite losses."""
        ...

    @abstractmethod
    def cdf(self, x):
        """(P(L ≤ x), Q(L ≤ x)) for an array x, finite part only (excludes ±∞ atoms)."""
        ...

    @abstractmethod
    def support(self, tail: float) -> tuple[float, float]:
        """An interval [low, high] outside of which P and Q each have mass ≤ ``tail``."""
        ...

    def tight_support(self, tail: float) -> tuple[float, float]:
        """:meth:`support`, or a narrower interval with the same promise at some cost.

        Grids of many points ask for it (:func:`gaussdp.pld.grid.discretise`);
        the default is :meth:`support`.
        """
        return self.support(tail)

    def tails(self, x):
        """((P(L > x), Q(L > x)), (P(L ≤ x), Q(L ≤ x))), each accurate in its own tail."""
        return self.sf(x), self.cdf(x)

    def log_q_above(self, x) -> np.ndarray | None:
        """log Q(L > x), where Q(L > x) underflows (losses of 700 nats and more), or None.

        Q's mass there is about e^{−x} times P's: below 1e-308 it is 0 in
        double precision, and a binned grid can only leave such cells out (a
        lower bound may) — the lower bound then stops near 700 nats. Losses
        that know the logarithm give it here (default: None, not known).
        """
        return None

    def for_bound(self, kind: str) -> PrivacyLoss:
        """The loss to discretise for ``kind`` of bound.

        ``"pessimistic"`` (upper bounds) needs a pair that dominates the
        mechanism, ``"optimistic"`` (lower bounds) one that the mechanism
        dominates. An exact loss is both, so it returns itself;
        :class:`BracketedLoss` returns one of its two pairs.
        """
        return self

    def interval_masses(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """P- and Q-masses of the cells (−∞, e₀], (e₀, e₁], …, (e_{n−1}, ∞) (finite part).

        Each cell's mass is taken as a difference of upper-tail probabilities
        above the median and of lower-tail probabilities below it, so that
        tails keep their relative accuracy.
        """
        edges = np.asarray(edges, dtype=float)
        (sf_p, sf_q), (cdf_p, cdf_q) = _tails_in_chunks(self.tails, edges)
        return _cell_masses(sf_p, cdf_p), _cell_masses(sf_q, cdf_q)


def _tails_in_chunks(tails, x: np.ndarray):
    """``tails(x)`` computed :data:`~gaussdp._numerics.CACHE_CHUNK` points at a time.

    The same numbers (every tail is computed pointwise); on grids of millions
    of points, the dozen temporary arrays of one evaluation then stay in the
    processor's cache instead of streaming through memory each time: 2.5
    times faster on 5.5 M edges (0.95 s to 0.38 s).
    """
    if x.size <= CACHE_CHUNK:
        return tails(x)
    sf_p, sf_q, cdf_p, cdf_q = (np.empty(x.size) for _ in range(4))
    for start in range(0, x.size, CACHE_CHUNK):
        part = slice(start, start + CACHE_CHUNK)
        (sf_p[part], sf_q[part]), (cdf_p[part], cdf_q[part]) = tails(x[part])
    return (sf_p, sf_q), (cdf_p, cdf_q)


#: Candidates per pass of :func:`narrowed_support` (two passes: the interval to 1/4096).
_SUPPORT_CANDIDATES = 65


def narrowed_support(tails, tail: float, low: float, high: float) -> tuple[float, float]:
    """[low, high] narrowed to where the tails ``tails(x)`` themselves leave ``tail`` outside.

    ``[low, high]`` must leave at most ``tail`` of P- and of Q-mass on each
    side (a support read off a component, such as a subsampled loss's inner
    one, which bounds a mixture's tails by its heaviest component's). The
    ends move inwards to the innermost of 65 candidates, then 65 between the
    two that bracket it, at which ``tails`` (each accurate in its own tail)
    still leaves at most ``tail`` beyond: only points where this is computed
    are chosen, so the contract holds however the tails are shaped. A
    subsampled Gaussian with σ = 1, q = 1e-5, tail 2.5e-26: the remove
    direction's grid ends at a loss of 0.22 instead of 0.49 (the inner
    support charges the mixture the tail of its γ-weighted component).
    """
    if not high > low:
        return low, high
    # Each end searched from the other one outwards: ``stop`` is the end given (valid by
    # the contract, which counts the mass strictly beyond it: it may sit at an atom) or a
    # candidate found good. Both ends' candidates go through one evaluation of the tails.
    searches = [[low, high], [high, low]]  # (start, stop): the high end, then the low end
    fractions = np.linspace(0.0, 1.0, _SUPPORT_CANDIDATES)
    for _ in range(2):
        (high_start, high_stop), (low_start, low_stop) = searches
        points = np.concatenate(
            (
                high_start + (high_stop - high_start) * fractions,
                low_start + (low_stop - low_start) * fractions,
            )
        )
        points[_SUPPORT_CANDIDATES - 1], points[-1] = high_stop, low_stop
        candidates = (points[:_SUPPORT_CANDIDATES], points[_SUPPORT_CANDIDATES:])
        (sf_p, sf_q), (cdf_p, cdf_q) = tails(points)
        good_above = (np.asarray(sf_p) <= tail) & (np.asarray(sf_q) <= tail)
        good_below = (np.asarray(cdf_p) <= tail) & (np.asarray(cdf_q) <= tail)
        size = _SUPPORT_CANDIDATES
        for index, good in enumerate((good_above[:size], good_below[size:])):
            good[-1] = True
            chosen = int(np.argmax(good))
            row = candidates[index]
            searches[index] = [float(row[max(chosen - 1, 0)]), float(row[chosen])]
    new_high, new_low = searches[0][1], searches[1][1]
    if new_low > new_high:  # a tail of half the mass or more: keep what was given
        return low, high
    return new_low, new_high


def remembered_tight_support(loss: PrivacyLoss, tail: float) -> tuple[float, float]:
    """``loss.support(tail)`` narrowed to its own tails, remembered on the loss per tail.

    For mixtures, whose cheap supports bound each component's tail separately
    (:func:`narrowed_support`); the engine asks for a few tails, often.
    """
    supports = loss.__dict__.setdefault("_tight_supports", {})
    if tail not in supports:
        supports[tail] = narrowed_support(loss.tails, tail, *loss.support(tail))
    return supports[tail]


def _cell_masses(sf: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    """Masses of consecutive cells from tail probabilities at the edges."""
    total = cdf[0] + sf[0]
    masses = np.empty(sf.size + 1)
    masses[0] = cdf[0]
    masses[-1] = sf[-1]
    for start in range(0, sf.size - 1, CACHE_CHUNK):  # in chunks, as _tails_in_chunks
        stop = min(start + CACHE_CHUNK, sf.size - 1)
        left, right = slice(start, stop), slice(start + 1, stop + 1)
        upper = sf[left] <= cdf[left]  # past the median: use upper tails
        masses[right] = np.where(upper, sf[left] - sf[right], cdf[right] - cdf[left])
    np.maximum(masses, 0.0, out=masses)
    # The two formulas meet at the median; rescale the tiny rounding mismatch away.
    observed = masses.sum()
    if observed > 0 and abs(observed - total) > 1e-15 * total:
        masses *= total / observed
    return masses


@dataclass(frozen=True)
class GaussianLoss(PrivacyLoss):
    """Privacy loss of N(μ, 1) against N(0, 1): L ~ N(μ²/2, μ²) under P, N(−μ²/2, μ²) under Q.

    This is the loss of the Gaussian mechanism with μ = sensitivity/σ
    (Dong, Roth & Su 2022, Theorem 2.7), in both directions.
    """

    mu: float

    def _standardised(self, x):
        x = np.asarray(x, dtype=float)
        return (x - 0.5 * self.mu**2) / self.mu, (x + 0.5 * self.mu**2) / self.mu

    def sf(self, x):
        zp, zq = self._standardised(x)
        return special.ndtr(-zp), special.ndtr(-zq)

    def cdf(self, x):
        zp, zq = self._standardised(x)
        return special.ndtr(zp), special.ndtr(zq)

    def tails(self, x):
        """((P(L > x), Q(L > x)), (P(L ≤ x), Q(L ≤ x))) with one normal tail per point.

        Each side's smaller tail is Φ(−|z|), accurate in its tail; the larger is
        1 − that (at least ½, so within a few units of roundoff, relatively).
        """
        zp, zq = self._standardised(x)
        small_p, small_q = special.ndtr(-np.abs(zp)), special.ndtr(-np.abs(zq))
        large_p, large_q = 1.0 - small_p, 1.0 - small_q
        above_p, above_q = zp > 0, zq > 0
        sf = np.where(above_p, small_p, large_p), np.where(above_q, small_q, large_q)
        cdf = np.where(above_p, large_p, small_p), np.where(above_q, large_q, small_q)
        return sf, cdf

    def support(self, tail):
        z = float(normal_quantile_of_complement(tail))
        half = 0.5 * self.mu**2
        return -half - z * self.mu, half + z * self.mu

    def log_q_above(self, x):
        """log Q(L > x) = log Φ(−(x + μ²/2)/μ), accurate however far in the tail."""
        return special.log_ndtr(-self._standardised(x)[1])


@dataclass(frozen=True)
class LaplaceLoss(PrivacyLoss):
    """Privacy loss of Lap(r, 1) against Lap(0, 1), r = sensitivity/scale.

    The loss is ℓ(x) = |x| − |x − r| ∈ [−r, r]: an atom at −r (x ≤ 0, mass
    e^{−r}/2 under P and 1/2 under Q), an atom at +r (x ≥ r, mass 1/2 under
    P and e^{−r}/2 under Q), and in between ℓ = 2x − r with density
    e^{−(r − x)}/2 under P and e^{−x}/2 under Q.
    """

    ratio: float

    def tails(self, x):
        r = self.ratio
        x = np.clip(np.asarray(x, dtype=float), -np.inf, np.inf)
        # u = (ℓ + r)/2 ∈ [0, r] is the output position giving loss ℓ.
        u = np.clip(0.5 * (x + r), 0.0, r)
        # P(L > ℓ) for −r ≤ ℓ < r: P(X > u) = 1 − e^{−(r−u)}/2 … computed as pieces.
        p_above = 0.5 + 0.5 * -np.expm1(-(r - u))  # P(X > u) = ½ + ∫_u^r e^{−(r−t)}/2 dt
        q_above = 0.5 * np.exp(-u)  # Q(X > u) = e^{−u}/2
        p_below = 0.5 * np.exp(-(r - u))  # P(X ≤ u) = e^{−(r−u)}/2
        q_below = 0.5 + 0.5 * -np.expm1(-u)
        above_top = x >= r
        below_bottom = x < -r
        p_above = np.where(above_top, 0.0, np.where(below_bottom, 1.0, p_above))
        q_above = np.where(above_top, 0.0, np.where(below_bottom, 1.0, q_above))
        p_below = np.where(above_top, 1.0, np.where(below_bottom, 0.0, p_below))
        q_below = np.where(above_top, 1.0, np.where(below_bottom, 0.0, q_below))
        return (p_above, q_above), (p_below, q_below)

    def sf(self, x):
        return self.tails(x)[0]

    def cdf(self, x):
        return self.tails(x)[1]

    def support(self, tail):
        return -self.ratio, self.ratio


@dataclass(frozen=True, eq=False)
class AtomicLoss(PrivacyLoss):
    """A discrete privacy loss: finite atoms plus masses at ±∞.

    Parameters
    ----------
    losses : ndarray
        Finite loss values, strictly increasing.
    p_masses, q_masses : ndarray
        Mass of each atom under P and under Q (q = p·e^{−loss} for an exact
        pair; kept separately so that merged atoms stay exact).
    infinity_mass : float
        P(L = +∞).
    """

    losses: np.ndarray
    p_masses: np.ndarray
    q_masses: np.ndarray
    infinity_mass: float = 0.0

    @classmethod
    def from_atoms(cls, losses, p_masses, q_masses, infinity_mass=0.0) -> AtomicLoss:
        """Sort atoms and merge equal losses."""
        losses = np.asarray(losses, dtype=float)
        order = np.argsort(losses, kind="stable")
        losses = losses[order]
        p = np.asarray(p_masses, dtype=float)[order]
        q = np.asarray(q_masses, dtype=float)[order]
        if losses.size == 0:
            return cls(losses, p, q, infinity_mass)
        # the first of each run of equal losses (np.unique would sort the sorted again)
        start = np.flatnonzero(np.concatenate([[True], losses[1:] != losses[:-1]]))
        return cls(
            losses[start], np.add.reduceat(p, start), np.add.reduceat(q, start), infinity_mass
        )

    def sf(self, x):
        x = np.asarray(x, dtype=float)
        index = np.searchsorted(self.losses, x, side="right")
        tail_p = np.concatenate([np.cumsum(self.p_masses[::-1])[::-1], [0.0]])
        tail_q = np.concatenate([np.cumsum(self.q_masses[::-1])[::-1], [0.0]])
        return tail_p[index], tail_q[index]

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        index = np.searchsorted(self.losses, x, side="right")
        head_p = np.concatenate([[0.0], np.cumsum(self.p_masses)])
        head_q = np.concatenate([[0.0], np.cumsum(self.q_masses)])
        return head_p[index], head_q[index]

    def interval_masses(self, edges):
        edges = np.asarray(edges, dtype=float)
        cell = np.searchsorted(edges, self.losses, side="left")  # atom at an edge: lower cell
        p = np.bincount(cell, weights=self.p_masses, minlength=edges.size + 1)
        q = np.bincount(cell, weights=self.q_masses, minlength=edges.size + 1)
        return p, q

    def support(self, tail):
        """The atoms that remain once at most ``tail`` of P- and of Q-mass is cut from each end."""
        if self.losses.size == 0:
            return 0.0, 0.0
        from_bottom = np.maximum(np.cumsum(self.p_masses), np.cumsum(self.q_masses))
        from_top = np.maximum(np.cumsum(self.p_masses[::-1]), np.cumsum(self.q_masses[::-1]))[::-1]
        first = min(int(np.searchsorted(from_bottom, tail, side="right")), self.losses.size - 1)
        last = max(
            self.losses.size - 1 - int(np.searchsorted(from_top[::-1], tail, side="right")), first
        )
        return float(self.losses[first]), float(self.losses[last])


def subsampled_loss(inner: float, probability: float) -> float:
    """log(1 − γ + γe^v): the remove direction's loss where the inner loss is v.

    As log1p(γ·expm1(v)) up to v = 700; above as log γ + v + log1p((1 − γ)e^{−v}/γ),
    where e^v overflows.
    """
    if probability >= 1.0:
        return inner
    if inner > 700.0:
        return (
            math.log(probability)
            + inner
            + math.log1p(math.exp(-inner) * (1.0 - probability) / probability)
        )
    return math.log1p(probability * math.expm1(inner))


@dataclass(frozen=True)
class SubsampledLoss(PrivacyLoss):
    """Privacy loss of a Poisson-subsampled (or without-replacement) mechanism.

    With inner pair (P, Q) and sampling probability γ, the dominating pairs are
    (Zhu, Dong & Wang 2022, Theorem 11; Dong, Roth & Su 2022, §4.2)

    * remove: ((1 − γ)Q + γP, Q), loss L' = log(1 − γ + γe^L);
    * add:    (Q, (1 − γ)Q + γP), loss L'' = −log(1 − γ + γe^L),

    with L the inner loss. Tail probabilities map through the monotone
    transform: L' > y ⟺ L > g(y) with g(y) = log((e^y − 1 + γ)/γ).
    """

    inner: PrivacyLoss
    probability: float
    direction: str  # "remove" or "add"

    def _inverse(self, y):
        """g(y) = log((e^y − (1 − γ))/γ) for y > log(1 − γ); −inf at or below it.

        Above y = 1 as y − log γ + log1p(−(1 − γ)e^{−y}): e^y overflows from
        y = 710 on (a noise multiplier of 0.02 makes losses of 1,800 nats),
        where the direct form read +inf and every tail there 0.
        """
        y = np.asarray(y, dtype=float)
        log_gamma = math.log(self.probability)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            inside = np.expm1(np.minimum(y, 1.0)) + self.probability
            value = np.log(np.where(inside > 0, inside, 1.0)) - log_gamma
            far = y - log_gamma + np.log1p(-(1.0 - self.probability) * np.exp(-np.maximum(y, 1.0)))
        return np.where(y > 1.0, far, np.where(inside > 0, value, -np.inf))

    def _inner_tails(self, x):
        """Inner (sf_p, sf_q, cdf_p, cdf_q) at x, handling ±inf."""
        x = np.asarray(x, dtype=float)
        finite = np.isfinite(x)
        if finite.all():  # the usual case: only a grid's lowest points map to −∞
            (sf_p, sf_q), (cdf_p, cdf_q) = self.inner.tails(x)
            return sf_p, sf_q, cdf_p, cdf_q
        safe = np.where(finite, x, 0.0)
        (sf_p, sf_q), (cdf_p, cdf_q) = self.inner.tails(safe)
        low = np.isneginf(x)
        high = np.isposinf(x)
        sf_p = np.where(low, 1.0, np.where(high, 0.0, sf_p))
        sf_q = np.where(low, 1.0, np.where(high, 0.0, sf_q))
        cdf_p = np.where(low, 0.0, np.where(high, 1.0, cdf_p))
        cdf_q = np.where(low, 0.0, np.where(high, 1.0, cdf_q))
        return sf_p, sf_q, cdf_p, cdf_q

    def _mix(self, p, q):
        return (1.0 - self.probability) * q + self.probability * p

    def tails(self, x):
        """((P(L > x), Q(L > x)), (P(L ≤ x), Q(L ≤ x))) from one evaluation of the inner tails."""
        gamma_inverse = self._inverse(x if self.direction == "remove" else -np.asarray(x))
        sf_p, sf_q, cdf_p, cdf_q = self._inner_tails(gamma_inverse)
        if self.direction == "remove":
            return (self._mix(sf_p, sf_q), sf_q), (self._mix(cdf_p, cdf_q), cdf_q)
        # add: L'' > x ⟺ L' < −x ⟺ L < g(−x); first distribution Q, second the mixture
        return (cdf_q, self._mix(cdf_p, cdf_q)), (sf_q, self._mix(sf_p, sf_q))

    def sf(self, x):
        return self.tails(x)[0]

    def cdf(self, x):
        return self.tails(x)[1]

    @property
    def infinity_mass(self) -> float:  # type: ignore[override]
        # remove: the mixture keeps γ·P(L=+∞); add: the first component Q has none.
        return self.probability * self.inner.infinity_mass if self.direction == "remove" else 0.0

    def support(self, tail):
        low, high = self.inner.support(tail)
        a, b = subsampled_loss(low, self.probability), subsampled_loss(high, self.probability)
        return (a, b) if self.direction == "remove" else (-b, -a)

    def log_q_above(self, x):
        """log Q(L' > x) for the remove direction (Q is the inner Q: L' > x ⟺ L > g(x)).

        The add direction's Q is the mixture, whose losses stay below
        −log(1 − γ): nothing there underflows (None).
        """
        if self.direction != "remove":
            return None
        inner = self.inner.log_q_above(self._inverse(x))
        if inner is None:
            return None
        bottom = math.log1p(-self.probability) if self.probability < 1.0 else -math.inf
        return np.where(np.asarray(x) <= bottom, 0.0, inner)

    def tight_support(self, tail):
        """:meth:`support` narrowed to the mixture's own tails (:func:`narrowed_support`).

        The inner support charges the mixture the tail of its γ-weighted
        component: σ = 1, q = 1e-5 at 2.5e-26 reached a loss of 0.49 where 0.21
        leaves the same. Remembered per tail (the engine asks for a few, often).
        """
        return remembered_tight_support(self, tail)


@dataclass(frozen=True)
class BracketedLoss(PrivacyLoss):
    """A mechanism known between two pairs: ``upper`` dominates it, it dominates ``lower``.

    For mechanisms whose exact pair is not computed in closed form (random
    allocation, truncated Poisson), the engine discretises ``upper``
    pessimistically for the upper bounds and ``lower`` optimistically for the
    lower bounds (:meth:`for_bound`), so both stay certified: for every α,
    ``H_α(lower) ≤ H_α(mechanism) ≤ H_α(upper)``. Used directly (``sf``,
    ``cdf``, ``support``) it reads as ``upper``, the safe side, except that
    its support covers both. ``caveat``, where given, says in one sentence
    what the two pairs are (the accountant and the report repeat it); give
    one only where the two pairs are apart by what is unknown (shuffling),
    not by numerics: the accountant then neither refines its grids to narrow
    the gap nor warns that it is wide. ``far_gaps_follow_the_grid`` is False
    where the pairs' own construction, not the accountant's grid, keeps them
    far apart at small δ (random allocation, whose pairs are as fine as the
    grid of its sums S, not the accountant's): the accountant then refines its
    grids for near misses only, and its warning names the pairs.
    """

    upper: PrivacyLoss
    lower: PrivacyLoss
    caveat: str = ""
    far_gaps_follow_the_grid: bool = True

    @property
    def infinity_mass(self) -> float:  # type: ignore[override]
        return self.upper.infinity_mass

    def sf(self, x):
        return self.upper.sf(x)

    def cdf(self, x):
        return self.upper.cdf(x)

    def tails(self, x):
        return self.upper.tails(x)

    def interval_masses(self, edges):
        return self.upper.interval_masses(edges)

    def support(self, tail: float) -> tuple[float, float]:
        low_u, high_u = self.upper.support(tail)
        low_l, high_l = self.lower.support(tail)
        return min(low_u, low_l), max(high_u, high_l)

    def for_bound(self, kind: str) -> PrivacyLoss:
        if kind == "pessimistic":
            return self.upper.for_bound(kind)
        if kind == "optimistic":
            return self.lower.for_bound(kind)
        raise ValueError(f"kind must be 'pessimistic' or 'optimistic', got {kind!r}")


#: The pair P = Q (loss 0 with probability 1): the side of a :class:`BracketedLoss`
#: that says nothing, e.g. the lower pair of a mechanism known only from above.
REVEALS_NOTHING = AtomicLoss.from_atoms([0.0], [1.0], [1.0])
