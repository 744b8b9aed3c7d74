"""The accountant: from a mechanism description to certified privacy bounds.

:func:`account` interprets a mechanism (:mod:`gaussdp.mechanisms`) and
returns an immutable :class:`Accounting` that answers ε for a δ and δ for an
ε, each as an upper bound (the default, pessimistic answer) together with a
matching lower bound, so the user sees how tight the answer is.

Three paths, chosen automatically and named in :attr:`Accounting.method`:

* **closed form, Gaussian** — a composition of Gaussian mechanisms is exactly
  μ-GDP with μ = √Σ(Δ_i/σ_i)² (Dong, Roth & Su 2022, Corollary 2);
* **closed form, pure DP** — a composition of ε_i-DP mechanisms is dominated
  by the composition of randomized responses, whose privacy loss is a sum of
  independent ±ε_i, i.e. a sum of scaled binomials (the form behind Dong,
  Roth & Su, Theorem 8, and Kairouz, Oh & Viswanath 2015), evaluated exactly;
* **numerical** — privacy loss distributions of each dominating pair,
  discretised on a common grid in a pessimistic (connect-the-dots) and an
  optimistic (binning) form, composed by FFT (:mod:`gaussdp.pld`). The
  pessimistic form gives the upper bounds, the optimistic one the lower
  bounds; both are exact for the discrete pairs they describe.
"""

from __future__ import annotations

import math
import os
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
from scipy import special

from gaussdp import gdp
from gaussdp import mechanisms as m
from gaussdp._numerics import LOG_ROUNDING, UNIT_ROUNDOFF, suffix_sums
from gaussdp._validation import InvalidParameterError, check_real, restore_shape
from gaussdp.pld import composition as pld_compose
from gaussdp.pld.dominating_pairs import dominating_losses as pair_losses
from gaussdp.pld.grid import OPTIMISTIC, PESSIMISTIC, GridPLD, discretise
from gaussdp.pld.leaves import leaves
from gaussdp.pld.losses import PrivacyLoss
from gaussdp.pld.lower_tail import LowerTail, compose_lower_tail
from gaussdp.pld.query import Profile, certify_tail_sums, from_zero, profile_of

__all__ = ["Accounting", "AccuracyWarning", "account"]

DIRECTIONS = ("remove", "add")


class AccuracyWarning(UserWarning):
    """The certified ε bounds are further apart than the ``accuracy`` asked for.

    Raised by :meth:`Accounting.epsilon_bounds`, in one line saying the gap
    reached and what limits it (the bounds themselves stay certified).
    """


#: Default target for the relative gap between the certified ε bounds, (upper − lower)/upper.
DEFAULT_ACCURACY = 5e-5
#: Never use a coarser grid than this (the default of dp_accounting's PLD accountant),
#: so the default answer is at least as tight as that accountant's.
MAXIMUM_GRID_SPACING = 1e-4
#: Mass beyond the per-mechanism grid on each side, for compositions computed tilted
#: (whose floor is far below the rounding allowance of a plain composition).
_DISCRETISATION_TAIL = 1e-30
#: Mass beyond the per-mechanism grid on each side, for compositions computed plain:
#: T mechanisms then move at most T times this, a thousandth of the rounding allowance
#: u·4T that every δ of a plain composition carries anyway (as the window, see
#: :func:`gaussdp.pld.composition.window_tail`). On a subsampled Gaussian with q = 1e-4
#: the grid is then 3-4 times shorter than at 1e-30.
_PLAIN_DISCRETISATION_TAIL = 1e-3 * 4.0 * UNIT_ROUNDOFF
# Peak bytes per point of the composed grid, per row (plain: 1 row; optimistic and tilted:
# 2, composed one after the other). Measured as growth of the peak RSS (the FFT's own
# buffers included) on an 18M-point CIFAR-10 composition: 29 B/point plain, 41 optimistic,
# 32 tilted, result arrays included (37.6, 48.3 and 44.2 with scipy.fft, whose plans stay).
_BYTES_PER_POINT = 48
# Refuse when the estimate exceeds this fraction of the available memory.
_MEMORY_FRACTION = 0.8
#: Largest number of atoms for the exact pure-DP composition.
_MAXIMUM_EXACT_ATOMS = 2_000_000
# Bound on the relative error of the closed-form GDP profile (see gaussdp.gdp).
_GDP_RELATIVE_ERROR = 1e-11


# ---------------------------------------------------------------------------
# Reading the mechanism description
# ---------------------------------------------------------------------------


#: The leaves of a description (:func:`gaussdp.pld.leaves.leaves`); the old private name
#: stays while gaussdp.sweeps.steps reads it.
_flatten = leaves


def dominating_losses(
    leaf: m.Mechanism, neighbouring: m.Neighbouring
) -> tuple[PrivacyLoss, PrivacyLoss]:
    """The (remove, add) privacy losses of one leaf, its parts accounted here.

    :func:`gaussdp.pld.dominating_pairs.dominating_losses`, given this
    accountant for the parts of Group and Parallel leaves (their pessimistic
    trade-off curves, :meth:`Accounting.tradeoff`): the accounting is passed
    down to the engine rather than imported by it.
    """
    return pair_losses(leaf, neighbouring, tradeoff_of=_tradeoff_of)


def _tradeoff_of(mechanism: m.Mechanism, neighbouring: m.Neighbouring):
    """The pessimistic trade-off curve of ``mechanism`` under ``neighbouring``."""
    return account(mechanism, neighbouring=neighbouring).tradeoff()


def _merge_gaussians(leaves: dict[m.Mechanism, int]) -> dict[m.Mechanism, int]:
    """Replace all plain Gaussian mechanisms by the single Gaussian they compose to.

    Exact: composing Gaussian mechanisms with μ_i = Δ_i/σ_i gives the pair
    N(μ, 1) vs N(0, 1) with μ = √Σμ_i² (Dong, Roth & Su 2022, Corollary 2),
    so the numerical path discretises one Gaussian instead of many.
    """
    gaussians = {leaf: n for leaf, n in leaves.items() if isinstance(leaf, m.Gaussian)}
    if len(gaussians) + (sum(gaussians.values()) > 1) <= 1:
        return leaves
    mu = gdp.compose(
        [leaf.sensitivity / leaf.sigma * math.sqrt(n) for leaf, n in gaussians.items()]
    )
    merged = {leaf: n for leaf, n in leaves.items() if not isinstance(leaf, m.Gaussian)}
    merged[m.Gaussian(sigma=1.0 / mu)] = 1
    return merged


# ---------------------------------------------------------------------------
# Guarantees: the three paths behind one small interface
# ---------------------------------------------------------------------------


class _Guarantee(ABC):
    """δ(ε) and ε(δ) as upper and lower bounds (scalars).

    Besides the bounds, each kind of guarantee says through its own members
    what else it knows, so that the report, sweeps and interop ask it rather
    than its class: :attr:`closed_form_mu` (μ when it is exactly μ-GDP; an
    :class:`Accounting` made without a ``mu`` takes it from here), :attr:`exact_atoms`
    (bounds read off an exact discrete profile),
    :meth:`exact_curve` (its trade-off curve when known exactly),
    :meth:`profiles` (the discrete profiles per neighbouring direction) and
    :meth:`upper_floor`.
    """

    #: μ when the guarantee is exactly μ-GDP (a closed form), else None.
    closed_form_mu: float | None = None
    #: True when the bounds are read off an exact discrete profile (they differ only by
    #: rounding), as for compositions of pure-DP mechanisms.
    exact_atoms: bool = False

    @abstractmethod
    def delta_upper(self, epsilon: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def delta_lower(self, epsilon: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def epsilon_upper(self, delta: float) -> float: ...

    @abstractmethod
    def epsilon_lower(self, delta: float) -> float: ...

    def epsilon_bounds(self, delta: float) -> tuple[float, float]:
        """(lower, upper) bounds on ε(δ)."""
        upper = self.epsilon_upper(delta)
        return self.epsilon_lower(delta), upper

    def allowance_costs(self, delta: float) -> tuple[float, float]:
        """What certified rounding allowances cost the (lower, upper) bounds on ε(δ)."""
        return 0.0, 0.0

    def delta_bounds(self, epsilon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) bounds on δ(ε)."""
        return self.delta_lower(epsilon), self.delta_upper(epsilon)

    def exact_curve(self):
        """The trade-off curve when it is known exactly, else None (read it off the profiles)."""
        return None

    def profiles(self, side: str) -> tuple[Profile, ...]:
        """The discrete privacy profiles per direction of the ``side`` ("upper" or "lower")."""
        raise InvalidParameterError(
            "this result is a closed form; it has no discrete privacy profiles"
        )

    def upper_floor(self) -> float:
        """The smallest δ the upper bounds resolve (0: a closed form resolves every δ)."""
        return 0.0


class _PerfectPrivacy(_Guarantee):
    closed_form_mu = 0.0

    def exact_curve(self):
        from gaussdp import curves  # loaded on first use: `import gaussdp` stays fast

        return curves.identity()

    def delta_upper(self, epsilon):
        return np.zeros_like(epsilon)

    delta_lower = delta_upper

    def epsilon_upper(self, delta):
        return 0.0

    epsilon_lower = epsilon_upper


@dataclass(frozen=True)
class _GaussianGuarantee(_Guarantee):
    mu: float

    @property
    def closed_form_mu(self) -> float:
        return self.mu

    def exact_curve(self):
        from gaussdp import curves  # loaded on first use: `import gaussdp` stays fast

        return curves.gaussian(self.mu)

    def delta_upper(self, epsilon):
        return np.minimum(gdp.delta(self.mu, epsilon) * (1 + _GDP_RELATIVE_ERROR), 1.0)

    def delta_lower(self, epsilon):
        return gdp.delta(self.mu, epsilon) * (1 - _GDP_RELATIVE_ERROR)

    def epsilon_upper(self, delta):
        return gdp.epsilon(self.mu, delta)  # already solved on the safe side

    def epsilon_lower(self, delta):
        # Solving for δ(1 + 2·err) lands below the exact root (see gdp.epsilon).
        return gdp.epsilon(self.mu, min(delta * (1 + 2 * _GDP_RELATIVE_ERROR), 1.0))


#: A bound is refined when its certified allowance costs more than this share of the gap.
_ALLOWANCE_SHARE = 0.1
#: The tilted lower tails let in at most this share of the accuracy, as a share of δ.
_TAIL_TOLERANCE = 1e-3
#: Lower tails are tilted for losses on this grid (nats): one tail serves a bin of queries.
_TAIL_BIN = 0.25
#: Grids are not refined for an accuracy finer than this (the closed-form solves' margin).
_FINEST_REFINEMENT = 1e-10
#: At most this many finer grids per query, each chosen from the gap the previous reached.
_GRID_REFINEMENTS = 2


def _tail_bins(epsilon: np.ndarray) -> np.ndarray:
    """The lower tails' bin of each loss: one tail serves a bin (0: none, at loss ≤ 0).

    From loss 1 up, bins of :data:`_TAIL_BIN` nats (numbered k ≥ 4 for
    [k, k + 1)·_TAIL_BIN); below, dyadic bins [2^k, 2^(k+1)) (numbered k < 0),
    so that a small ε (0.07 on a long run at q = 1e-4) gets a tail tilted near
    it rather than none.
    """
    epsilon = np.asarray(epsilon, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        linear = np.floor(epsilon / _TAIL_BIN)
        dyadic = np.floor(np.log2(np.where(epsilon > 0.0, epsilon, 1.0)))
    bins = np.where(epsilon >= 1.0, linear, np.where(epsilon > 0.0, dyadic, 0.0))
    return bins.astype(np.int64)


def _tail_range(bin_number: int) -> tuple[float, float]:
    """(the loss a bin's tail is tilted at, the top of the bin) (:func:`_tail_bins`)."""
    if bin_number > 0:
        return bin_number * _TAIL_BIN, (bin_number + 1) * _TAIL_BIN
    if bin_number < 0:
        return 2.0**bin_number, 2.0 ** (bin_number + 1)
    return 0.0, 0.0


def _without_allowance(profile: Profile) -> Profile:
    """The profile as computed, without its certified allowance (to see what that costs)."""
    return replace(profile, shift=0.0, shift_below=0.0, shift_at_cut=0.0)


@dataclass(frozen=True)
class _ProfileGuarantee(_Guarantee):
    """Bounds read off discrete distributions, the maximum over directions.

    Both sides are computed on first use (so that a report can ask for a
    lower floor before anything is composed), then kept.

    **Refinement.** Where the two bounds on ε(δ) (or δ(ε)) end up further
    apart than ``accuracy`` and a side's certified rounding allowance is a
    good part of the gap, :meth:`epsilon_bounds` and :meth:`delta_bounds`
    compute that side again with the allowance made relative:
    ``refine_upper(tail)`` gives the upper profiles of the pessimistic
    composition exponentially tilted where its upper tail is about ``tail``
    (:func:`gaussdp.pld.composition.compose_many`), ``refine_lower(ε, δ,
    tolerance)`` the lower tails of the dominated pair tilted at loss ε
    (:mod:`gaussdp.pld.lower_tail`). Both are certified, so the refined
    bounds are the tighter of each pair: the smaller upper bound, the larger
    lower bound. Each refinement is computed once (the default-tilted upper
    profiles, and where their allowance still decides an ε(δ), one per decade
    of δ; a lower tail per bin of :data:`_TAIL_BIN` nats and direction) and
    kept; which ones a query uses depends only on the query, not on what was
    asked before.
    """

    upper_factory: Callable[[], tuple[Profile, ...]]
    lower_factory: Callable[[], tuple[Profile, ...]]
    refine_upper: Callable[[float], tuple[Profile, ...] | None] | None = None
    refine_lower: Callable[[float, float, float, int], LowerTail | None] | None = None
    accuracy: float | None = None
    refine_grid: Callable[[float], _Guarantee | None] | None = None
    epsilon_scale: float = 1.0
    _refined: dict = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def upper(self) -> tuple[Profile, ...]:
        return self.upper_factory()

    @cached_property
    def lower(self) -> tuple[Profile, ...]:
        return self.lower_factory()

    def profiles(self, side: str) -> tuple[Profile, ...]:
        return self.upper if side == "upper" else self.lower

    def delta_upper(self, epsilon):
        """The upper bound on δ(ε), tilted where the plain allowance is a share of the accuracy."""
        upper = np.max([p.delta(epsilon) for p in self.upper], axis=0)
        if self.refine_upper is None or self.accuracy is None:
            return upper
        allowance = np.max([p.allowance(epsilon) for p in self.upper], axis=0)
        wanted = allowance > _ALLOWANCE_SHARE * self.accuracy * upper
        if np.any(wanted & np.isfinite(epsilon)):
            tilted = self._tilted_upper(None)  # the default tilt only, for δ(ε)
            if tilted:
                upper = np.minimum(upper, np.max([p.delta(epsilon) for p in tilted], axis=0))
        return upper

    def delta_lower(self, epsilon):
        return np.max([p.delta(epsilon) for p in self.lower], axis=0)

    def epsilon_upper(self, delta):
        """The upper bound on ε(δ), tilted where the plain allowance is a share of the accuracy.

        Long runs are composed plain first (:func:`_compose_all`); where their
        rounding allowance costs ε more than :data:`_ALLOWANCE_SHARE` of what
        the accuracy allows (or leaves it infinite: δ below the plain floor),
        the tilted composition is used (:meth:`_upper_refined`).
        """
        upper = max(p.epsilon(delta) for p in self.upper)
        if self.refine_upper is None or self.accuracy is None:
            return upper
        budget = _ALLOWANCE_SHARE * self.accuracy * gap_scale(upper, self.epsilon_scale)
        return self._upper_refined(delta, upper, budget)

    def _upper_refined(self, delta: float, upper: float, budget: float) -> float:
        """``upper`` made smaller by tilted compositions while its allowance costs > ``budget``.

        The default tilt first; where its allowance still decides, one for δ's decade
        (unless that is within a decade of the default's, which then serves as well).
        """
        computed = max(_without_allowance(p).epsilon(delta) for p in self.upper)
        decade = 10.0 ** math.floor(math.log10(delta))
        near = abs(math.log10(decade / pld_compose.DEFAULT_TILT_TAIL)) <= 1.0
        for tail in (None,) if near else (None, decade):
            if not (math.isinf(upper) or upper - computed > budget):
                break
            tilted = self._tilted_upper(tail)
            if tilted:
                upper = min(upper, max(p.epsilon(delta) for p in tilted))
                computed = max(_without_allowance(p).epsilon(delta) for p in tilted)
        return upper

    def epsilon_lower(self, delta):
        return max(p.epsilon(delta) for p in self.lower)

    # -- refinement ---------------------------------------------------------

    def _refines(self) -> bool:
        return self.accuracy is not None and (
            self.refine_upper is not None or self.refine_lower is not None
        )

    def _tilted_upper(self, tail: float | None) -> tuple[Profile, ...] | None:
        """The upper profiles tilted where the upper tail is ``tail`` (None: the default).

        Computed once per ``tail``: the default one, and one per decade of δ asked for.
        """
        key = ("upper", tail)
        if key not in self._refined:
            self._refined[key] = self.refine_upper(tail)
        return self._refined[key]

    def _upper_groups(self) -> list[tuple[Profile, ...]]:
        """The plain upper profiles and every tilted refinement made so far."""
        refined = [v for k, v in self._refined.items() if k[0] == "upper" and v]
        return [self.upper, *refined]

    def _tail(self, bin_number: int, index: int):
        """Direction ``index``'s lower tail tilted for a bin of losses (None: no use there).

        Bins (:func:`_tail_bins`): [k, k + 1)·:data:`_TAIL_BIN` from loss 1 up,
        [2^k, 2^(k+1)) below; computed once per bin and direction.
        """
        key = ("tail", bin_number, index)
        if key not in self._refined:
            target, top = _tail_range(bin_number)
            # The smallest δ in the bin (an upper bound on it) sets how little may leak in.
            delta = float(self.upper[index].delta(np.array([top]))[0])
            tail = None
            if target > 0.0 and delta > 0.0:
                tolerance = _TAIL_TOLERANCE * self.accuracy
                tail = self.refine_lower(target, delta, tolerance, index)
            self._refined[key] = tail
        return self._refined[key]

    def _directions_that_can_matter(self, uppers: list) -> list[int]:
        """Directions by decreasing upper bound (each one's lower bound is at most that)."""
        return sorted(range(len(uppers)), key=lambda i: -float(np.max(uppers[i])))

    def epsilon_bounds(self, delta):
        """(lower, upper) on ε(δ), each side refined where its allowance keeps them apart."""
        upper = self.epsilon_upper(delta)
        lower = self.epsilon_lower(delta)
        if not self._refines() or (
            math.isfinite(upper)
            and upper - lower <= self.accuracy * gap_scale(upper, self.epsilon_scale)
        ):
            return lower, upper
        if self.refine_upper is not None:
            upper = self._upper_refined(delta, upper, _ALLOWANCE_SHARE * (upper - lower))
        if self.refine_lower is not None and math.isfinite(upper):
            computed = max(_without_allowance(p).epsilon(delta) for p in self.lower)
            if computed - lower > _ALLOWANCE_SHARE * (upper - lower):
                # A direction whose own upper bound is below the lower bound so far
                # cannot raise it: its tail is not composed.
                uppers = [p.epsilon(delta) for p in self.upper]
                for index in self._directions_that_can_matter(uppers):
                    if uppers[index] <= lower:
                        continue
                    tail = self._tail(int(_tail_bins(np.array([upper]))[0]), index)
                    if tail is not None:
                        lower = max(lower, tail.epsilon(delta))
        if self.refine_grid is not None and math.isfinite(upper) and lower > 0.0:
            lower, upper = self._on_a_finer_grid(delta, lower, upper)
        return min(lower, upper), upper

    def _on_a_finer_grid(self, delta: float, lower: float, upper: float) -> tuple[float, float]:
        """Where the grids' error law was optimistic, both bounds again on finer grids.

        The gap scales with h², i.e. with the accuracy the grids are chosen
        for: the grids of accuracy a/2^k, with the smallest k ≥ 1 that should
        bring the gap g to 90% of a (a·2^{−k} ≤ 0.9·a²/g), computed once per k
        (None where memory does not allow them). Both are certified, so the
        tighter of each pair is kept.
        """
        gap = (upper - lower) / gap_scale(upper, self.epsilon_scale)
        if gap <= self.accuracy:
            return lower, upper
        lower_cost, upper_cost = self.allowance_costs(delta)
        if max(lower_cost, upper_cost) > _ALLOWANCE_SHARE * (upper - lower):
            return lower, upper  # the allowances decide: finer grids do not help
        accuracy, halvings = self.accuracy, 0
        # At most _GRID_REFINEMENTS steps, each from the gap the previous grid reached
        # (the finer accountings do not refine for their own accuracy: no cascade).
        for _ in range(_GRID_REFINEMENTS):
            halvings += max(1, math.ceil(math.log2(gap / (0.9 * self.accuracy))))
            key = ("grid", halvings)
            if key not in self._refined:
                self._refined[key] = self.refine_grid(accuracy / 2.0**halvings)
            finer = self._refined[key]
            if finer is None:
                break
            finer_lower, finer_upper = finer.epsilon_bounds(delta)
            lower, upper = max(lower, finer_lower), min(upper, finer_upper)
            gap = (upper - lower) / gap_scale(upper, self.epsilon_scale)
            if gap <= self.accuracy:
                break
        return lower, upper

    def upper_floor(self) -> float:
        """The smallest δ any of the upper profiles resolves (δ at ε = ∞)."""
        at_infinity = np.array([math.inf])
        return min(
            max(float(p.delta(at_infinity)[0]) for p in group) for group in self._upper_groups()
        )

    def allowance_costs(self, delta: float) -> tuple[float, float]:
        """What certification costs each side's best bound on ε(δ), in ε (lower, upper).

        The distance between the bound and what the same computation gives
        without its rounding allowances (for the refinements already made).
        """
        lower = max(p.epsilon(delta) for p in self.lower)
        lower_cost = max(_without_allowance(p).epsilon(delta) for p in self.lower) - lower
        for key, tail in self._refined.items():
            if key[0] == "tail" and tail is not None:
                value = tail.epsilon(delta)
                if value > lower:
                    lower, lower_cost = value, tail.epsilon(delta, certified=False) - value
        upper_cost = math.inf
        for group in self._upper_groups():
            value = max(p.epsilon(delta) for p in group)
            computed = max(_without_allowance(p).epsilon(delta) for p in group)
            upper_cost = min(upper_cost, value - computed)
        return max(lower_cost, 0.0), max(upper_cost, 0.0) if math.isfinite(upper_cost) else 0.0

    def delta_bounds(self, epsilon):
        """(lower, upper) on δ(ε), each side refined where its allowance keeps them apart."""
        upper = self.delta_upper(epsilon)
        lower = self.delta_lower(epsilon)
        if not self._refines():
            return lower, upper
        lower, upper = np.array(lower, dtype=float), np.array(upper, dtype=float)
        apart = (upper - lower > self.accuracy * upper) & np.isfinite(epsilon)
        if not np.any(apart):
            return lower, upper
        if self.refine_upper is not None:
            allowance = max(float(np.max(p.allowance(epsilon))) for p in self.upper)
            if np.any(apart & (allowance > _ALLOWANCE_SHARE * (upper - lower))):
                tilted = self._tilted_upper(None)  # the default tilt only, for δ(ε)
                if tilted:
                    refined = np.max([p.delta(epsilon) for p in tilted], axis=0)
                    upper = np.minimum(upper, refined)
        if self.refine_lower is not None:
            allowance = max(-float(np.min(p.allowance(epsilon))) for p in self.lower)
            wanted = apart & (allowance > _ALLOWANCE_SHARE * (upper - lower))
            # beyond the upper bounds' largest atom only their floor is known: no tail there
            top = max(
                float(p.losses[-1]) if len(p.losses) else 0.0
                for group in self._upper_groups()
                for p in group
            )
            wanted &= epsilon < top
            uppers = [p.delta(epsilon) for p in self.upper]
            bins = _tail_bins(np.where(wanted, epsilon, 0.0))
            for index in self._directions_that_can_matter(uppers):
                # where this direction's own upper bound is below the lower bound so far,
                # its tail cannot raise it
                chosen = wanted & (uppers[index] > lower)
                for bin_number in np.unique(bins[chosen]):
                    tail = self._tail(int(bin_number), index)
                    if tail is not None:
                        at = chosen & (bins == bin_number)
                        lower[at] = np.maximum(lower[at], tail.delta(epsilon[at]))
        return np.minimum(lower, upper), upper


# ---------------------------------------------------------------------------
# The exact pure-DP composition
# ---------------------------------------------------------------------------


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


@dataclass(frozen=True)
class _ExactAtomsGuarantee(_ProfileGuarantee):
    """An exact discrete profile: bounds differ only by rounding.

    ``exact`` holds the computed tail sums themselves (not moved by their
    rounding allowance), from which the trade-off curve is read.
    """

    exact: Profile | None = None
    exact_atoms = True

    def exact_curve(self):
        return _exact_atoms_curve(self.exact)


# ---------------------------------------------------------------------------
# The numerical path
# ---------------------------------------------------------------------------


def _available_memory() -> int:
    """Bytes of memory available to this process.

    MemAvailable on Linux (free pages elsewhere), and no more than what an
    address-space limit (``ulimit -v``, RLIMIT_AS) leaves above the process's
    current size.
    """
    available = 4 * 1024**3
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except OSError:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            pass
    try:
        import resource

        limit, _ = resource.getrlimit(resource.RLIMIT_AS)
        if limit != resource.RLIM_INFINITY:
            with open("/proc/self/statm", encoding="ascii") as statm:
                used = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            available = min(available, max(limit - used, 0))
    except (ImportError, OSError, ValueError, AttributeError):
        pass
    return available


def _composed_length_estimate(losses: dict, counts: dict, spacing: float, index: int) -> int:
    """FFT length of the composition at ``spacing``, estimated from a coarse grid.

    The composition window is set by Chernoff bounds on the composed loss, a
    width in nats that hardly depends on the grid; planning it on a grid of
    at most ~4000 points per mechanism costs milliseconds, and scaling its
    length by the ratio of spacings predicts the fine grid's length before
    anything large is allocated.
    """
    coarse = spacing
    for pair in losses.values():
        low, high = pair[index].support(_DISCRETISATION_TAIL)
        coarse = max(coarse, (high - low) / 4000.0)
    items = [
        (discretise(pair[index], coarse, PESSIMISTIC, _DISCRETISATION_TAIL), counts[leaf])
        for leaf, pair in losses.items()
    ]
    plan = pld_compose.plan_composition(items)
    return int(plan.length * coarse / spacing)


def _moments(pld: GridPLD) -> tuple[float, float]:
    """Mean and variance of the finite part of a discretised loss under P."""
    p = pld.p_masses
    total = float(p.sum())
    losses = pld.losses
    mean = float((losses * p).sum() / total)
    return mean, float(((losses - mean) ** 2 * p).sum() / total)


def _loss_moments(losses: dict, counts: dict) -> tuple[float, float]:
    """Mean and variance of the composed privacy loss under P (from coarse grids)."""
    variance = 0.0
    mean = 0.0
    for leaf, (remove, _add) in losses.items():
        low, high = remove.support(1e-12)
        coarse = max((high - low) / 4000.0, 1e-9)
        leaf_mean, leaf_variance = _moments(discretise(remove, coarse, PESSIMISTIC, 1e-12))
        mean += counts[leaf] * leaf_mean
        variance += counts[leaf] * leaf_variance
    return mean, variance


def _error_law(losses: dict, counts: dict) -> tuple[float, float] | None:
    """(κ, ε̂): the upper bound's relative ε error ≈ κ·h² at spacing h, near ε̂ (None: no variance).

    Connect-the-dots splits each loss between its two grid neighbours so that
    the Q-mass is kept; for a smooth loss distribution that adds about h²/12
    to the mean and h²/6 to the variance of the loss under P, per mechanism
    (measured on DP-SGD runs alike). Where ε ≈ m + z·√V (m, V the mean and
    variance of the composed loss, z = (ε − m)/√V), ε then moves by

        Δε ≈ T·h²/12 + z·T·h²/(12·√V) = (T·h²/12)·(1 + (ε − m)/V),

    with ε estimated as ε̂ = m + 4√V. Measured against fine references, this
    predicts the upper error within 6% on five CIFAR-10 and ImageNet runs
    ((ε − m)/V from 2.5 to 14), and within the reference's own uncertainty
    on a 10⁶-step run ((ε − m)/V = 0.24), where the old law, 0.5·T·h²/√V,
    was several times optimistic. The binned lower bound moves by about half
    as much at the same spacing.
    """
    total_count = sum(counts.values())
    mean, variance = _loss_moments(losses, counts)
    if variance <= 0:
        return None
    epsilon_estimate = max(mean + 4.0 * math.sqrt(variance), 1e-3)
    coefficient = total_count * (1.0 + (epsilon_estimate - mean) / variance) / 12.0
    return coefficient / epsilon_estimate, epsilon_estimate


def _relative_error_coefficient(losses: dict, counts: dict) -> float | None:
    """κ with the upper bound's relative ε error ≈ κ·h² at grid spacing h (:func:`_error_law`)."""
    law = _error_law(losses, counts)
    return None if law is None else law[0]


def gap_scale(epsilon: float, epsilon_scale: float = 1.0) -> float:
    """What ``accuracy`` is relative to: the bounds on ε are within accuracy·max(ε, s).

    With s = ``epsilon_scale`` (default 1): relative for ε ≥ s and absolute
    (accuracy·s) below. A relative gap of 5e-5 on ε = 0.045 would be 2e-6 of
    ε, digits nobody reports, bought with grids twenty times finer; s = 0
    asks for a purely relative gap (calibration to small targets does).
    """
    return max(epsilon, epsilon_scale)


#: The grids are chosen for this share of the accuracy (the error law is within ~10%).
_ACCURACY_SHARE = 0.9


def _spacing_budget(
    losses: dict, counts: dict, accuracy: float, epsilon_scale: float = 1.0
) -> float | None:
    """B with gap ≈ κ·(h² + h_l²/2) ≤ share·a ⟺ h² + h_l²/2 ≤ B (None: any grid).

    a is the relative gap the accuracy allows at the estimated ε̂:
    accuracy·max(ε̂, s)/ε̂ (:func:`gap_scale`).
    """
    law = _error_law(losses, counts)
    if law is None or law[0] <= 0:
        return None
    coefficient, epsilon_estimate = law
    relative = accuracy * gap_scale(epsilon_estimate, epsilon_scale) / epsilon_estimate
    return _ACCURACY_SHARE * relative / coefficient


def _choose_grid_spacing(
    losses: dict, counts: dict, accuracy: float, epsilon_scale: float = 1.0
) -> float:
    """The upper bound's grid spacing, for a relative gap between the bounds of ``accuracy``.

    With both bounds on one spacing h the gap is about 1.5·κ·h²
    (:func:`_relative_error_coefficient`), so h = √(B/1.5) (:func:`_spacing_budget`),
    never coarser than 1e-4 (dp_accounting's default): the default upper
    bound is at least as tight as that accountant's.
    """
    budget = _spacing_budget(losses, counts, accuracy, epsilon_scale)
    if budget is None:
        return MAXIMUM_GRID_SPACING
    return min(math.sqrt(budget / 1.5), MAXIMUM_GRID_SPACING)


#: The lower bound's grid is at most this many times coarser than the upper bound's,
#: and only for compositions of at least _LOWER_COARSENING_FROM mechanisms.
_LOWER_COARSENING = 8.0
_LOWER_COARSENING_FROM = 100


def _lower_grid_spacing(
    losses: dict, counts: dict, spacing: float, accuracy: float, epsilon_scale: float = 1.0
) -> float:
    """A grid spacing for the binned lower bound: coarser where the accuracy allows.

    The lower bound's error at spacing h_l is about κ·h_l²/2 (half the upper
    bound's, :func:`_relative_error_coefficient`), so it gets what the upper
    bound at its own spacing h leaves of the budget: h_l = √(2·(B − h²)),
    between h and 8h, rounded down to h·2^(k/2) (runs that differ only in T
    then share a grid, as sweeps do). Where the upper grid was capped at 1e-4
    this is coarser than h; elsewhere it is h. Only the distance between the
    bounds depends on it: both stay certified.
    """
    if sum(counts.values()) < _LOWER_COARSENING_FROM:
        return spacing  # nothing to save: a few mechanisms compose in no time
    budget = _spacing_budget(losses, counts, accuracy, epsilon_scale)
    if budget is None:
        return spacing
    left = budget - spacing**2
    if left <= 0.0:
        return spacing
    chosen = min(max(math.sqrt(2.0 * left), spacing), _LOWER_COARSENING * spacing)
    steps = math.floor(2.0 * math.log2(chosen / spacing) + 1e-9)
    return spacing * 2.0 ** (steps / 2.0)


def _check_memory(
    length: int, rows: int, spacing: float, total_count: int, memory: int, about: str
) -> None:
    """Refuse, before allocating, a composition that memory does not allow.

    When only the tilted second row does not fit, the message names the
    smallest floor the plain composition reaches.
    """
    needed = _BYTES_PER_POINT * length * rows
    if needed <= _MEMORY_FRACTION * memory:
        return
    optional_tilt = total_count < pld_compose.TILT_FROM_COMPOSITIONS
    if rows == 2 and optional_tilt and _BYTES_PER_POINT * length <= _MEMORY_FRACTION * memory:
        reachable = pld_compose.rounding_allowance(length, total_count)
        raise InvalidParameterError(
            f"a delta floor below {reachable:.2g} needs a second, tilted composition of "
            f"{length:,} points (about {needed / 1e9:.1f} GB in all), more than "
            f"{_MEMORY_FRACTION:.0%} of the {memory / 1e9:.1f} GB available; the smallest "
            f"reachable delta_floor is {reachable:.2g} (a delta_tail of {100 * reachable:.2g})"
        )
    raise InvalidParameterError(
        f"this accuracy needs a grid of {about}{length:,} points (about "
        f"{needed / 1e9:.1f} GB), more than {_MEMORY_FRACTION:.0%} of the "
        f"{memory / 1e9:.1f} GB available; use a coarser accuracy (grid spacing now "
        f"{spacing:.3g})"
    )


def _compose_all(
    losses: dict,
    counts: dict,
    spacing: float,
    kind: str,
    progress: Callable[[str], None] | None,
    delta_floor: float | None,
    floor_required: bool,
    estimate: Callable[[float, int], int],
    tilt_tail: float | None = None,
    plain_first: bool = False,
) -> dict[str, GridPLD]:
    """Discretise every mechanism and compose them all in the Fourier domain, per direction.

    ``estimate(spacing, index)`` is the composed length of direction
    ``index`` planned on a coarse grid (:func:`_composed_length_estimate`).
    The pessimistic compositions keep their floor at most ``delta_floor``
    (computing them exponentially tilted where the plain rounding allowance
    is larger, :func:`gaussdp.pld.composition.needs_tilt`). Where memory
    does not allow the tilted row: refused if ``floor_required``, else the
    plain composition (with its larger floor) is computed. ``plain_first``:
    without a ``delta_floor``, long runs are composed plain too (their
    queries then compose tilted where the plain allowance decides,
    :class:`_ProfileGuarantee`).
    """
    memory = _available_memory()
    for leaf, pair in losses.items():
        for loss in pair:
            low, high = loss.support(_DISCRETISATION_TAIL)
            points = (high - low) / spacing
            if 64 * points > memory // 2:
                raise InvalidParameterError(
                    f"grid_spacing {spacing:.3g} needs {points:,.0f} grid points for {leaf}, "
                    f"more than half of the {memory / 1e9:.1f} GB available; use a coarser "
                    "accuracy or grid_spacing"
                )
    total_count = sum(counts.values())
    floor = delta_floor if kind == PESSIMISTIC else None

    def rows_for(length: int) -> int:
        if kind == OPTIMISTIC:
            return 2
        if plain_first and floor is None:
            return 1
        return 2 if pld_compose.needs_tilt(length, total_count, floor) else 1

    for index in range(len(DIRECTIONS)):
        length = estimate(spacing, index)
        rows = rows_for(length)
        if rows == 2 and kind == PESSIMISTIC and not floor_required:
            if _BYTES_PER_POINT * length * rows > _MEMORY_FRACTION * memory:
                floor = None  # the default floor is a wish, not a demand: stay plain
                rows = rows_for(length)
        _check_memory(length, rows, spacing, total_count, memory, "about ")
    results: dict[str, GridPLD] = {}
    for index, direction in enumerate(DIRECTIONS):
        if progress is not None:
            progress(f"{kind} bounds, {direction} direction: discretising")
        # Plain compositions cut their grids and windows where the rounding allowance
        # dominates.
        tilted = kind == PESSIMISTIC and rows_for(estimate(spacing, index)) == 2
        for _ in range(2):
            cut = _DISCRETISATION_TAIL if tilted else _PLAIN_DISCRETISATION_TAIL
            items = [
                (discretise(pair[index], spacing, kind, cut), counts[leaf])
                for leaf, pair in losses.items()
            ]
            if tilted:
                tail = pld_compose.DEFAULT_TAIL
                plan = pld_compose.plan_composition(items, tail)
                break
            plan, tail = pld_compose.plain_plan(items)
            # the estimate said plain; the window itself may say otherwise (then tilted,
            # on the grid of a tilted composition)
            tilted = kind == PESSIMISTIC and rows_for(plan.length) == 2
            if not tilted:
                break
        rows = 2 if kind == OPTIMISTIC or tilted else 1
        needed = _BYTES_PER_POINT * plan.length * rows
        _check_memory(plan.length, rows, spacing, total_count, memory, "")
        if progress is not None:
            progress(f"{kind} bounds, {direction} direction: composing ({plan.length:,} points)")
        try:
            results[direction] = pld_compose.compose_many(
                items, tail, plan=plan, floor=floor, tilt_tail=tilt_tail, tilt=rows == 2
            )
        except MemoryError as error:  # the estimate was wrong or memory went elsewhere
            raise MemoryError(
                f"out of memory composing a grid of {plan.length:,} points (estimated "
                f"{needed / 1e9:.1f} GB of {memory / 1e9:.1f} GB available): {error}; "
                "use a coarser accuracy"
            ) from error
    return results


# ---------------------------------------------------------------------------
# The public face
# ---------------------------------------------------------------------------


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


@dataclass(frozen=True, eq=False)
class Accounting:
    """The privacy of one mechanism, as certified bounds.

    Every query without ``bounds`` in its name returns an **upper bound** on
    privacy loss (pessimistic): ``epsilon(delta)`` is at least the true ε,
    ``delta(epsilon)`` at least the true δ. ``epsilon_bounds`` and
    ``delta_bounds`` return ``(lower, upper)``: the truth lies between them.

    Attributes
    ----------
    mechanism : Mechanism
        What was accounted.
    neighbouring : Neighbouring
        The neighbouring relation applied to the whole description.
    method : str
        Which path produced the numbers (closed form or numerical, and how).
    grid_spacing : float or None
        The discretisation step of the numerical path (None for closed forms).
    mu : float or None
        For compositions of Gaussian mechanisms, the exact μ-GDP parameter.
    accuracy : float or None
        The relative gap between the ε bounds that the numerical path's grids
        were chosen for (None: closed forms, or a ``grid_spacing`` given).
    """

    mechanism: m.Mechanism
    neighbouring: m.Neighbouring
    method: str
    grid_spacing: float | None
    mu: float | None
    _guarantee: _Guarantee = field(repr=False)
    _distributions: Callable[[str], dict[str, GridPLD]] | None = field(default=None, repr=False)
    _with_floor: Callable[[float], Accounting] | None = field(default=None, repr=False)
    accuracy: float | None = None
    epsilon_scale: float = 1.0

    def __post_init__(self) -> None:
        # A guarantee that is exactly μ-GDP says so itself (closed_form_mu); the result
        # then reports that μ, and the report reads it as a closed form.
        if self.mu is None and self._guarantee.closed_form_mu is not None:
            object.__setattr__(self, "mu", float(self._guarantee.closed_form_mu))

    def with_delta_floor(self, delta_floor: float) -> Accounting:
        """The same accounting with its numerical floor at most ``delta_floor``.

        Closed forms have no floor and are returned as they are; the
        numerical path composes again on the same grid, exponentially tilted
        where the plain rounding allowance is above ``delta_floor``
        (refused with one line where memory does not allow it).
        """
        delta_floor = float(
            check_real("delta_floor", delta_floor, low=0.0, high=1.0, low_open=True)
        )
        lower = None if self._with_floor is None else self._with_floor(delta_floor)
        return self if lower is None else lower

    def delta(self, epsilon):
        """Upper bound on δ(ε), vectorised over ε ≥ 0."""
        epsilon_array = check_real("epsilon", epsilon, low=0.0, high=math.inf)
        flat = epsilon_array.ravel()
        values = np.clip(self._guarantee.delta_upper(flat), 0.0, 1.0).reshape(epsilon_array.shape)
        return restore_shape(values, epsilon)

    def delta_bounds(self, epsilon):
        """``(lower, upper)`` bounds on δ(ε), vectorised over ε ≥ 0."""
        epsilon_array = check_real("epsilon", epsilon, low=0.0, high=math.inf)
        flat = epsilon_array.ravel()
        lower, upper = self._guarantee.delta_bounds(flat)
        upper = np.clip(upper, 0.0, 1.0)
        lower = np.minimum(np.clip(lower, 0.0, 1.0), upper)
        shape = epsilon_array.shape
        return restore_shape(lower.reshape(shape), epsilon), restore_shape(
            upper.reshape(shape), epsilon
        )

    def _epsilons(self, delta, which: str):
        delta_array = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        if which == "bounds":
            pairs = [self._guarantee.epsilon_bounds(float(d)) for d in delta_array.ravel()]
            values = np.array(pairs, dtype=float).reshape(-1, 2)
            return tuple(column.reshape(delta_array.shape) for column in values.T)
        solve = self._guarantee.epsilon_upper if which == "upper" else self._guarantee.epsilon_lower
        values = np.array([solve(float(d)) for d in delta_array.ravel()])
        return values.reshape(delta_array.shape)

    def epsilon(self, delta):
        """Upper bound on the ε at which the mechanism is (ε, δ)-DP; δ ∈ (0, 1)."""
        return restore_shape(self._epsilons(delta, "upper"), delta)

    def epsilon_bounds(self, delta, *, warn: bool = True):
        """``(lower, upper)`` bounds on ε(δ); δ ∈ (0, 1).

        Warns (:class:`AccuracyWarning`, one line) where the bounds are further
        apart than the ``accuracy`` the grids were chosen for, unless ``warn``
        is false (a report or a sweep that shows both bounds).
        """
        lower, upper = self._epsilon_bounds(delta)
        if warn and self.accuracy is not None:
            self._warn_if_apart(np.ravel(delta), np.ravel(lower), np.ravel(upper))
        return lower, upper

    def _epsilon_bounds(self, delta):
        """:meth:`epsilon_bounds` without the warning (the report shows both bounds)."""
        lower, upper = self._epsilons(delta, "bounds")
        lower = np.minimum(lower, upper)
        return restore_shape(lower, delta), restore_shape(upper, delta)

    def _warn_if_apart(self, deltas, lower, upper) -> None:
        """One :class:`AccuracyWarning` for the δ whose bounds are relatively furthest apart."""
        with np.errstate(divide="ignore", invalid="ignore"):
            gaps = (upper - lower) / np.maximum(upper, self.epsilon_scale)  # gap_scale
        gaps = np.where(np.isinf(upper), np.inf, gaps)
        worst = int(np.argmax(gaps))
        if gaps[worst] <= self.accuracy:
            return
        delta = float(deltas[worst])
        if math.isinf(upper[worst]):
            composed = self.privacy_loss_distributions().values()
            floor = self._guarantee.upper_floor()
            infinite = max(pld.infinity_mass for pld in composed)
            why = (
                "mass at infinite loss: the mechanism's own, and the discretisation's outer "
                f"tails, at most {_DISCRETISATION_TAIL:g} per mechanism"
                if infinite >= delta
                else "certified slack for truncation and rounding, even composed exponentially "
                "tilted where memory allowed"
            )
            warnings.warn(
                f"accuracy {self.accuracy:g} not reached at delta={delta:g}: the upper bound on "
                f"epsilon is inf, as delta is below the upper bound's floor {floor:.2g} ({why})",
                AccuracyWarning,
                stacklevel=3,
            )
            return
        lower_cost, upper_cost = self._guarantee.allowance_costs(delta)
        spread = upper[worst] - lower[worst]
        if max(lower_cost, upper_cost) > _ALLOWANCE_SHARE * spread:
            side = "lower" if lower_cost >= upper_cost else "upper"
            cost = max(lower_cost, upper_cost)
            why = (
                f"the {side} bound gives up {cost:.2g} of epsilon to certified rounding "
                "allowances, which a finer grid does not reduce (what remains after the "
                "tilted compositions that make them relative, where memory allowed them)"
            )
        else:
            why = (
                "the grid's error law was optimistic here, and memory did not allow the "
                "finer grids that would narrow it"
            )
        warnings.warn(
            f"accuracy {self.accuracy:g} not reached at delta={delta:g}: the certified bounds "
            f"[{lower[worst]:.10g}, {upper[worst]:.10g}] are {gaps[worst]:.2g} apart "
            f"(relative to max(epsilon, {self.epsilon_scale:g})); {why}",
            AccuracyWarning,
            stacklevel=3,
        )

    def tradeoff(self, kind: str = PESSIMISTIC):
        """The mechanism's trade-off curve (best membership attack's β at each α).

        ``kind="pessimistic"`` (default) gives a curve *below* the true one
        (attacks at least this strong are ruled out — a valid f-DP guarantee),
        ``"optimistic"`` one above it. On the numerical path each is the exact
        piecewise-linear curve of the accountant's own profile over both
        neighbouring directions (:func:`gaussdp.curves.numerical.symmetric_curve`:
        symmetric, and correct for asymmetric mechanisms such as Poisson
        subsampling); mass at infinite loss (and the pessimistic slack) makes
        f(0) < 1 rather than being dropped. Closed forms give G_μ or the exact
        pure-DP curve.
        """
        if kind not in (PESSIMISTIC, OPTIMISTIC):
            raise InvalidParameterError(f"kind must be 'pessimistic' or 'optimistic', got {kind!r}")
        exact = self._guarantee.exact_curve()
        if exact is not None:
            return exact
        # Curves are built in gaussdp.curves (a layer below), loaded on first use so that
        # `import gaussdp` stays fast.
        from gaussdp.curves.numerical import symmetric_curve

        return symmetric_curve(
            [profile_of(pld) for pld in self.privacy_loss_distributions(kind).values()]
        )

    def privacy_loss_distributions(self, kind: str = PESSIMISTIC) -> dict[str, GridPLD]:
        """The composed discrete distributions {"remove": …, "add": …} of the numerical path.

        ``kind`` is "pessimistic" (a dominating pair: upper bounds) or
        "optimistic" (a dominated pair: lower bounds). Raises for closed-form
        results, which have no grid.
        """
        if kind not in (PESSIMISTIC, OPTIMISTIC):
            raise InvalidParameterError(f"kind must be 'pessimistic' or 'optimistic', got {kind!r}")
        if self._distributions is None:
            raise InvalidParameterError(
                f"this result was computed in closed form ({self.method}); it has no "
                "discretised distribution"
            )
        return self._distributions(kind)

    @property
    def exact_atoms(self) -> bool:
        """True when the bounds are read off an exact discrete profile (they differ only by
        rounding): compositions of pure-DP mechanisms and randomized responses.

        Where the result is exactly μ-GDP, :attr:`mu` says so instead (not None).
        """
        return self._guarantee.exact_atoms

    def profiles(self, side: str = "upper") -> tuple[Profile, ...]:
        """The accountant's own privacy profiles, one per neighbouring direction.

        ``side`` is "upper" (the pessimistic profiles behind the upper bounds)
        or "lower". Computed on first use and kept; the report reads the
        numbers the accountant certified. Raises for closed forms, which have
        no discrete profile.
        """
        if side not in ("upper", "lower"):
            raise InvalidParameterError(f"side must be 'upper' or 'lower', got {side!r}")
        return self._guarantee.profiles(side)

    def upper_floor(self) -> float:
        """The smallest δ the upper bounds resolve (δ at ε = ∞; 0 for closed forms)."""
        return self._guarantee.upper_floor()

    def gdp(self, **options):
        """Report this result as μ-GDP: tight μ, regret, where μ stops holding, tier.

        Delegates to :func:`gaussdp.report.report` (Gomez et al. 2025, §4);
        ``options`` are its keyword arguments (``deltas``, ``delta_tail``,
        ``title``). Returns a :class:`gaussdp.report.Report`.

        Examples
        --------
        >>> from gaussdp import Gaussian, Repeated, account
        >>> r = account(Repeated(Gaussian(2.0), 16)).gdp()
        >>> r.mu, r.regret, r.tier
        (2.0, 0.0, 1)
        """
        # gaussdp.report.core builds a report from an Accounting's public members and
        # imports nothing of the accountant: this import runs downwards. It is made here,
        # on first use, because loading gaussdp.report also loads gaussdp.report.entry,
        # which accounts mechanisms with this module.
        from gaussdp.report.core import from_accounting

        return from_accounting(self, **options)


def account(
    mechanism: m.Mechanism | m.Pipeline,
    *,
    neighbouring: m.Neighbouring | None = None,
    accuracy: float = DEFAULT_ACCURACY,
    grid_spacing: float | None = None,
    delta_floor: float | None = None,
    progress: Callable[[str], None] | None = None,
    epsilon_scale: float = 1.0,
) -> Accounting:
    """Account the privacy of a mechanism: certified upper and lower bounds.

    Parameters
    ----------
    mechanism : Mechanism or Pipeline
        A mechanism description (:mod:`gaussdp.mechanisms`), or a pipeline
        loaded from a TOML file (its neighbouring relation is used unless
        ``neighbouring`` is given).
    neighbouring : Neighbouring, optional
        Add/remove one record (default) or replace one record.
    accuracy : float
        Target gap between the certified ε bounds of the numerical path:
        upper − lower ≤ accuracy·max(ε, ``epsilon_scale``), i.e. relative for
        ε ≥ 1 and absolute below by default (default 5e-5; the upper bound's
        grid is never coarser than 1e-4). The bounds are certified whatever
        the accuracy; it only sets how close they are, and a coarser
        accuracy never costs more. Where they end up further apart (at very
        small δ, the lower bound's rounding allowance can decide),
        :meth:`Accounting.epsilon_bounds` says so with an
        :class:`AccuracyWarning`.
    grid_spacing : float, optional
        Use this grid spacing (nats) instead of choosing one from ``accuracy``.
    delta_floor : float, optional
        Keep the numerical floor of the upper bounds (P(+∞) plus the
        certified slack for truncation and rounding: the δ that every ε
        carries) at most this, by composing exponentially tilted as well
        (:func:`gaussdp.pld.composition.needs_tilt`); refused with one line
        where memory does not allow it. By default only runs of 10,000
        compositions or more are tilted (the plain floor is u·(4T + 16 log₂ N),
        about 1e-12 for T = 2000); the μ-GDP report asks for what its δ_tail
        needs. Mass that the mechanism itself puts at infinite loss (an
        (ε, δ) part) is not numerical and is not affected.
    progress : callable, optional
        Called with a short message before each expensive step.
    epsilon_scale : float
        The ε below which ``accuracy`` is absolute (default 1; see
        :func:`gap_scale`): 0 asks for a relative gap at every ε, with grids
        that grow finer as ε shrinks (calibration to small targets uses it).

    Returns
    -------
    Accounting
        On the numerical path each side (upper, lower bounds) is composed on
        its first query and then kept; a grid that cannot fit in memory is
        refused here, before anything is composed.

    Examples
    --------
    >>> from gaussdp import DPSGD, Gaussian, Repeated, account
    >>> result = account(Repeated(Gaussian(sigma=2.0), 16))
    >>> result.method
    'closed form: a composition of Gaussian mechanisms is mu-GDP with mu = 2'
    >>> round(result.epsilon(1e-5), 4)
    9.9973
    >>> lower, upper = account(DPSGD(9.4, 0.32768, 2000)).epsilon_bounds(1e-5)
    >>> round(lower, 3), round(upper, 3)
    (7.424, 7.424)
    """
    mechanism, neighbouring = m.resolve(mechanism, neighbouring)
    accuracy = float(check_real("accuracy", accuracy, low=0.0, high=0.1, low_open=True))
    epsilon_scale = float(check_real("epsilon_scale", epsilon_scale, low=0.0, high=math.inf))
    if grid_spacing is not None:
        grid_spacing = float(
            check_real("grid_spacing", grid_spacing, low=0.0, high=1.0, low_open=True)
        )
    leaves = _flatten(mechanism, neighbouring)
    if not leaves:
        return Accounting(
            mechanism,
            neighbouring,
            "closed form: the mechanism reveals nothing (perfect privacy)",
            None,
            0.0,
            _PerfectPrivacy(),
        )

    if any(isinstance(leaf, m.ApproxDP) and leaf.delta >= 1.0 for leaf in leaves):
        # δ = 1 promises nothing: the composition is ∞-GDP (δ(ε) = 1, ε(δ) = ∞).
        return Accounting(
            mechanism,
            neighbouring,
            "closed form: a part is (epsilon, 1)-DP, which promises nothing (mu = inf)",
            None,
            math.inf,
            _GaussianGuarantee(math.inf),
        )

    if all(isinstance(leaf, m.Gaussian) for leaf in leaves):
        factor = 2.0 if neighbouring is m.Neighbouring.REPLACE else 1.0
        mu = gdp.compose(
            [factor * leaf.sensitivity / leaf.sigma * math.sqrt(n) for leaf, n in leaves.items()]
        )
        method = f"closed form: a composition of Gaussian mechanisms is mu-GDP with mu = {mu:.6g}"
        return Accounting(mechanism, neighbouring, method, None, mu, _GaussianGuarantee(mu))

    if all(isinstance(leaf, (m.PureDP, m.RandomizedResponse)) for leaf in leaves):
        profiles = _pure_dp_profiles(leaves)
        if profiles is not None:
            profile, lower, exact = profiles
            method = (
                "closed form: composition of pure-DP mechanisms via the exact distribution "
                "of a sum of randomized-response losses (scaled binomials)"
            )
            guarantee = _ExactAtomsGuarantee(lambda: (profile,), lambda: (lower,), exact=exact)
            return Accounting(mechanism, neighbouring, method, None, None, guarantee)

    if delta_floor is not None:
        delta_floor = float(
            check_real("delta_floor", delta_floor, low=0.0, high=1.0, low_open=True)
        )
    leaves = _merge_gaussians(leaves)
    losses = {leaf: dominating_losses(leaf, neighbouring) for leaf in leaves}
    spacing = grid_spacing or _choose_grid_spacing(losses, leaves, accuracy, epsilon_scale)
    lower_spacing = (
        grid_spacing
        if grid_spacing
        else _lower_grid_spacing(losses, leaves, spacing, accuracy, epsilon_scale)
    )
    return _numerical(
        mechanism,
        neighbouring,
        leaves,
        losses,
        (spacing, lower_spacing),
        delta_floor,
        progress,
        accuracy=None if grid_spacing else accuracy,
        epsilon_scale=epsilon_scale,
    )


def _numerical_method(spacing: float, lower_spacing: float) -> str:
    """The numerical path's :attr:`Accounting.method`, naming both grids."""
    lower_grid = "" if lower_spacing == spacing else f", lower bound {lower_spacing:.3g}"
    return (
        "numerical: privacy loss distributions composed by FFT "
        f"(connect-the-dots upper bound, binned lower bound, grid spacing {spacing:.3g}"
        f"{lower_grid})"
    )


def _top_floor(pld: GridPLD) -> float:
    """The allowance a pessimistic composition adds to δ(ε) for ε beyond its largest atom."""
    floor = pld.infinity_mass + pld.slack
    if pld.cut_index is None:
        return floor + pld.slack_below + pld.slack_at_cut
    top = pld.offset + pld.p_masses.size - 1
    return floor + pld.slack_at_cut * math.exp(-pld.decay * max(top - pld.cut_index, 0))


def _numerical(
    mechanism,
    neighbouring,
    leaves,
    losses,
    spacings,
    delta_floor,
    progress,
    optimistic=None,
    estimates=None,
    accuracy=None,
    epsilon_scale=1.0,
):
    """The numerical path's Accounting (both kinds composed on demand, then cached).

    ``spacings``: the grid spacings of the upper and of the lower bounds.
    ``optimistic``: the optimistic compositions if already computed (they
    do not depend on the floor). ``estimates``: composed lengths already
    estimated, by (spacing, direction index). ``accuracy``: what the grids
    were chosen for (None: a spacing was given).
    """
    spacing, lower_spacing = spacings
    cache: dict[str, dict[str, GridPLD]] = {}
    if optimistic is not None:
        cache[OPTIMISTIC] = optimistic
    estimates = {} if estimates is None else estimates

    def estimate(grid: float, index: int) -> int:
        if (grid, index) not in estimates:
            estimates[grid, index] = _composed_length_estimate(losses, leaves, grid, index)
        return estimates[grid, index]

    for index in range(len(DIRECTIONS)):  # refuse what memory cannot hold before any work
        _check_memory(estimate(spacing, index), 1, spacing, 0, _available_memory(), "about ")

    def distributions(kind: str) -> dict[str, GridPLD]:
        if kind not in cache:
            grid = spacing if kind == PESSIMISTIC else lower_spacing
            cache[kind] = _compose_all(
                losses,
                leaves,
                grid,
                kind,
                progress,
                delta_floor,
                delta_floor is not None,
                estimate,
                plain_first=accuracy is not None,
            )
        return cache[kind]

    def with_floor(new_floor: float) -> Accounting | None:
        # None: this accounting reaches it (no reference to it here: no cycle to collect).
        if delta_floor is not None and new_floor >= delta_floor:
            return None
        if PESSIMISTIC in cache and all(
            _top_floor(pld) <= new_floor for pld in cache[PESSIMISTIC].values()
        ):
            return None
        return _numerical(
            mechanism,
            neighbouring,
            leaves,
            losses,
            spacings,
            new_floor,
            progress,
            cache.get(OPTIMISTIC),
            estimates,
            accuracy,
            epsilon_scale,
        )

    # The bounds read atoms at losses ≥ −h only (from_zero); tradeoff() reads all of them.
    def upper_profiles() -> tuple[Profile, ...]:
        return tuple(profile_of(from_zero(d)) for d in distributions(PESSIMISTIC).values())

    def lower_profiles() -> tuple[Profile, ...]:
        return tuple(profile_of(from_zero(d)) for d in distributions(OPTIMISTIC).values())

    method = _numerical_method(spacing, lower_spacing)
    refiners = (None, None)
    refine_grid = None
    if accuracy is not None:
        refiners = _refiners(losses, leaves, spacings, distributions, progress, estimate)

        def refine_grid(finer: float) -> _Guarantee | None:
            if finer < _FINEST_REFINEMENT:
                return None
            try:
                refined = account(
                    mechanism,
                    neighbouring=neighbouring,
                    accuracy=finer,
                    progress=progress,
                    epsilon_scale=epsilon_scale,
                )
            except InvalidParameterError:  # memory does not allow that grid
                return None
            guarantee = refined._guarantee
            if isinstance(guarantee, _ProfileGuarantee):
                # one refinement, for this accounting's accuracy: the finer accounting does
                # not refine its own grids again for its (finer) accuracy
                guarantee = replace(guarantee, refine_grid=None, _refined={})
            return guarantee

    return Accounting(
        mechanism,
        neighbouring,
        method,
        spacing,
        None,
        _ProfileGuarantee(
            upper_profiles,
            lower_profiles,
            *refiners,
            accuracy,
            refine_grid=refine_grid,
            epsilon_scale=epsilon_scale,
        ),
        distributions,
        with_floor,
        accuracy,
        epsilon_scale,
    )


def _refiners(
    losses: dict,
    counts: dict,
    spacings: tuple[float, float],
    distributions: Callable[[str], dict[str, GridPLD]],
    progress: Callable[[str], None] | None,
    estimate: Callable[[float, int], int] | None = None,
):
    """The refinements of :class:`_ProfileGuarantee` for a numerical accounting.

    ``refine_upper(tail)``: the profiles of the pessimistic composition
    exponentially tilted where its upper tail is about ``tail`` (None: the
    default, 1e-10), or None if memory allows only the plain one or the plain
    one is that already. ``refine_lower(ε, δ,
    tolerance, direction)``: a direction's lower tail (:func:`_lower_tail`).
    """
    spacing, lower_spacing = spacings
    if estimate is None:

        def estimate(grid: float, index: int) -> int:
            return _composed_length_estimate(losses, counts, grid, index)

    def refine_upper(tilt_tail: float | None) -> tuple[Profile, ...] | None:
        plain = distributions(PESSIMISTIC).values()
        if tilt_tail is None and all(pld.cut_index is not None for pld in plain):
            return None  # the plain composition is tilted at the default already
        composed = _compose_all(
            losses, counts, spacing, PESSIMISTIC, progress, 0.0, False, estimate, tilt_tail
        )
        if any(pld.cut_index is None for pld in composed.values()):
            return None  # memory allowed the plain composition only
        return tuple(profile_of(from_zero(d)) for d in composed.values())

    def refine_lower(epsilon: float, delta: float, tolerance: float, index: int):
        return _lower_tail(
            losses, counts, lower_spacing, epsilon, delta, tolerance, index, progress
        )

    return refine_upper, refine_lower


def _lower_tail(
    losses: dict,
    counts: dict,
    spacing: float,
    epsilon: float,
    delta: float,
    tolerance: float,
    index: int,
    progress: Callable[[str], None] | None,
) -> LowerTail | None:
    """Direction ``index``'s lower tail, tilted at loss ``epsilon`` (None: not useful there).

    None too where the tilted window would need more than the memory allows:
    that direction's lower bound stays the plain one.
    """
    if progress is not None:
        progress(f"lower bound's tail, {DIRECTIONS[index]} direction: composing tilted")
    items = [
        (discretise(pair[index], spacing, OPTIMISTIC, _DISCRETISATION_TAIL), counts[leaf])
        for leaf, pair in losses.items()
    ]
    longest = int(_MEMORY_FRACTION * _available_memory() / (_BYTES_PER_POINT * 2))
    return compose_lower_tail(items, epsilon, delta, tolerance, longest)
