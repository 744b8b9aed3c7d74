"""Guarantees: the three paths of the accountant behind one small interface.

A guarantee answers δ(ε) and ε(δ) as upper and lower bounds, and says
through its own members what else it knows (a closed-form μ, exact atoms,
profiles per direction, a curve, a floor): :class:`_PerfectPrivacy` and
:class:`_GaussianGuarantee` (closed forms), :class:`ProfileGuarantee` (bounds
read off discrete profiles, refined where rounding allowances or the grids
keep them apart) and :class:`_ExactAtomsGuarantee` (an exact discrete
profile). An :class:`~gaussdp.accountant.Accounting` asks its guarantee.
"""

from __future__ import annotations

import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from gaussdp import gdp
from gaussdp._validation import InvalidParameterError
from gaussdp.accountant.grids import gap_scale
from gaussdp.accountant.pure_dp import _exact_atoms_curve
from gaussdp.pld import composition as pld_compose
from gaussdp.pld.lower_tail import LowerTail
from gaussdp.pld.query import Profile

# Bound on the relative error of the closed-form GDP profile (see gaussdp.gdp).
_GDP_RELATIVE_ERROR = 1e-11


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

    def finer_grids_refused(self) -> bool:
        """Whether a finer grid a query asked for could not be made (memory, or finest)."""
        return False


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
#: Just above that share the refined bound is reported no lower than the plain one less
#: this many times the excess cost (:meth:`ProfileGuarantee.epsilon_upper`): the bound
#: then moves continuously from the plain to the tilted one as the cost grows.
_TILT_RAMP = 2.0
#: The tilted lower tails let in at most this share of the accuracy, as a share of δ.
_TAIL_TOLERANCE = 1e-3
#: Lower tails for ε(δ) are composed first on a grid this many times coarser than the
#: lower bound's (ProfileGuarantee._tail_lower), where the lower profiles are longer than
#: _COARSE_TAILS_FROM points (below, the coarse tails cost more than they can save:
#: ImageNet's report, 125 k points, took 4% longer with them; σ = 0.5, q = 1e-6,
#: T = 10⁶ has 573 k).
_COARSE_TAIL = 4
_COARSE_TAILS_FROM = 1 << 18
#: Lower tails are tilted for losses on this grid (nats): one tail serves a bin of queries.
_TAIL_BIN = 0.25
#: Grids are not refined for an accuracy finer than this (the closed-form solves' margin).
_FINEST_REFINEMENT = 1e-10
#: At most this many finer grids per query, each chosen from the gap the previous reached.
_GRID_REFINEMENTS = 3
#: A gap of more than _NEAR_MISS accuracies first asks for a grid for at most this
#: factor of the accuracy (the grid's points ×4, where the gap alone could ask ×16 or
#: more), and refinement stops when a finer grid leaves more than _GRID_PROGRESS of the
#: gap: it is then not the grid's (random allocation at δ = 1e-9, whose two pairs differ
#: there: 50 s on grids 16 times finer, for the same gap).
_FIRST_FAR_STEP = 1.0 / 16.0
_GRID_PROGRESS = 0.75
#: A finer grid is chosen for this share of the accuracy (at the gap the coarser one found).
_REFINED_SHARE = 0.8
#: A gap up to this many accuracies is a near miss (see ProfileGuarantee._on_a_finer_grid).
_NEAR_MISS = 1.5
#: A gap up to this many accuracies is narrowed by a finer upper grid first.
_UPPER_FIRST = 2.0
#: The kinds of refinement (keys of ProfileGuarantee._refined) that are finer grids.
_GRID_KINDS = ("grid", "upper grid")


#: Below the upper bounds' floor, the lower bound is read at this many times the floor.
_FLOOR_FACTOR = 10.0
#: Certified bounds may cross by this much (relative) through their own margins.
_CROSSING_TOLERANCE = 1e-9


def _ordered(lower: float, upper: float, delta: float) -> float:
    """The lower bound, at most ``upper``; a crossing beyond rounding margins is reported.

    Both bounds are certified, so a lower bound above the upper one means
    that one of them is not: it is said (a RuntimeWarning, which the test
    suite turns into an error) rather than hidden by the clamp alone.
    """
    if lower > upper + _CROSSING_TOLERANCE * abs(upper):
        warnings.warn(
            f"the certified bounds on epsilon at delta={delta:.3g} cross (lower {lower!r} > "
            f"upper {upper!r}): one of them is wrong; please report this mechanism",
            RuntimeWarning,
            stacklevel=4,
        )
    return min(lower, upper)


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
class ProfileGuarantee(_Guarantee):
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
    refine_upper: Callable[..., tuple[Profile | None, ...] | None] | None = None
    refine_lower: Callable[..., LowerTail | None] | None = None
    accuracy: float | None = None
    refine_grid: Callable[[float], _Guarantee | None] | None = None
    epsilon_scale: float = 1.0
    refine_upper_grid: Callable[[float, tuple[int, ...] | None], _Guarantee | None] | None = None
    before_upper: Callable[[float], None] | None = None
    refine_far_gaps: bool = True
    upper_allowance: float | None = None
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
        wanted = allowance > self._allowance_share() * upper
        if np.any(wanted & np.isfinite(epsilon)):
            tilted = self._tilted_upper(None)  # the default tilt only, for δ(ε)
            if tilted:
                upper = np.minimum(upper, np.max([p.delta(epsilon) for p in tilted], axis=0))
        return upper

    def delta_lower(self, epsilon):
        return np.max([p.delta(epsilon) for p in self.lower], axis=0)

    def epsilon_upper(self, delta):
        """The upper bound on ε(δ), tilted where the plain allowance is a share of the accuracy.

        Long runs are composed plain first
        (:func:`gaussdp.accountant.numerical._compose_all`); where their
        rounding allowance costs ε more than :data:`_ALLOWANCE_SHARE` of what
        the accuracy allows (or leaves it infinite: δ below the plain floor),
        the tilted composition is used (:meth:`_upper_refined`).

        Continuous where that cost c (the plain bound u less what the plain
        profiles compute without their allowances) crosses its budget b: with r
        the tilted bound, max(r, u − k·(c − b)), k = :data:`_TILT_RAMP`: u at
        c = b, and r from c = b + (u − r)/k on (twice the budget at most). A jump
        from u (c ≤ b) to r (just above) let more noise read a larger ε, by up
        to b, a tenth of the accuracy (σ = 8.4238656774171, q = 0.0017,
        T = 17,000 at δ = 1e-8: 4.97e-6). In the ramp c − b falls with more
        noise far more slowly than ε, so the bound still falls with it. Every
        value in [r, u] is certified.
        """
        if self.before_upper is not None and "upper" not in self.__dict__:
            self.before_upper(delta)  # the first query: it may compose tilted at once
        upper = max(p.epsilon(delta) for p in self.upper)
        if self.refine_upper is None or self.accuracy is None:
            return upper
        budget = _ALLOWANCE_SHARE * self.accuracy * gap_scale(upper, self.epsilon_scale)
        if self.upper_allowance is not None and math.isfinite(upper):
            budget = min(budget, self.upper_allowance * upper)
        refined = self._upper_refined(delta, upper, budget)
        if not refined < upper < math.inf:
            return refined
        # The plain profiles' own cost (not an earlier query's tilt): the same answer
        # whatever was asked before.
        computed = max(_without_allowance(p).epsilon(delta) for p in self.upper)
        excess = max(upper - computed - budget, 0.0)
        return max(refined, upper - _TILT_RAMP * excess)

    def _allowance_share(self) -> float:
        """The share of δ the upper bound's rounding allowance may be before it is tilted."""
        share = _ALLOWANCE_SHARE * self.accuracy
        return share if self.upper_allowance is None else min(share, self.upper_allowance)

    def _upper_refined(self, delta: float, upper: float, budget: float) -> float:
        """``upper`` made smaller by tilted compositions while its allowance costs > ``budget``.

        The default tilt first; where its allowance still decides, one for δ's decade
        (unless that is within a decade of the default's, which then serves as well).
        """
        computed = self._computed_without_allowances(delta)
        decade = 10.0 ** math.floor(math.log10(delta))
        near = abs(math.log10(decade / pld_compose.DEFAULT_TILT_TAIL)) <= 1.0
        for tail in (None,) if near else (None, decade):
            if not (math.isinf(upper) or upper - computed > budget):
                break
            # Each direction's best bound so far (tilts made for earlier queries count);
            # then only the directions whose best bound is above what the largest one
            # computes without allowances: a tilt cannot take ε below that.
            best = self._upper_by_direction(delta)
            upper = min(upper, max(best))
            positions = tuple(
                i for i, value in enumerate(best) if value > computed or math.isinf(value)
            )
            tilted = self._tilted_upper(tail, positions)
            if tilted:
                # each direction's best bound (a group tilted for some directions keeps
                # the plain profiles of the others, which may be infinite here)
                upper = min(upper, max(self._upper_by_direction(delta)))
                computed = max(_without_allowance(p).epsilon(delta) for p in tilted)
        return upper

    def _computed_without_allowances(self, delta: float) -> float:
        """ε(δ) as the upper profiles compute it without their allowances (an estimate).

        From the groups of upper profiles (plain, and tilted ones made so far)
        whose allowance at their bound is at most half of δ: below its floor a
        profile's computed δ is rounding noise (the plain profiles of σ = 1,
        q = 0.01, two steps at δ = 1e-18, where that noise read above the
        tilted bound, and no tilt for δ's decade was made). 0 where no group
        resolves δ.
        """
        values = []
        for group in self._upper_groups():
            bounds = [p.epsilon(delta) for p in group]
            if all(
                math.isfinite(bound) and float(p.allowance(bound)) <= 0.5 * delta
                for p, bound in zip(group, bounds, strict=True)
            ):
                values.append(max(_without_allowance(p).epsilon(delta) for p in group))
        return min(values, default=0.0)

    def epsilon_lower(self, delta):
        return max(p.epsilon(delta) for p in self.lower)

    # -- refinement ---------------------------------------------------------

    def _refines(self) -> bool:
        return self.accuracy is not None and (
            self.refine_upper is not None or self.refine_lower is not None
        )

    def _tilted_upper(
        self, tail: float | None, positions: tuple[int, ...] | None = None
    ) -> tuple[Profile, ...] | None:
        """The upper profiles tilted where the upper tail is ``tail`` (None: the default).

        Computed once per ``tail``: the default one, and one per decade of δ asked for.
        ``positions``: the directions to tilt (None: all); in the group returned,
        a direction not tilted at ``tail`` (now or for an earlier query) keeps this
        accounting's own profile (each profile bounds its own direction).
        """
        key = ("upper", tail) if positions is None else ("upper", tail, positions)
        if positions is not None and self._refined.get(("upper", tail)):
            return self._refined["upper", tail]  # every direction tilted at ``tail`` already
        if key not in self._refined:
            tilted = self.refine_upper(tail, positions)
            if tilted is not None:
                tilted = tuple(self.upper[i] if p is None else p for i, p in enumerate(tilted))
            self._refined[key] = tilted
        return self._refined[key]

    def _upper_groups(self) -> list[tuple[Profile, ...]]:
        """The plain upper profiles and every tilted refinement made so far."""
        refined = [v for k, v in self._refined.items() if k[0] == "upper" and v]
        return [self.upper, *refined]

    def _tail(self, bin_number: int, index: int, delta: float | None = None, coarseness: int = 1):
        """Direction ``index``'s lower tail tilted for a bin of losses (None: no use there).

        On the lower bound's grid made ``coarseness`` times coarser
        (:meth:`_tail_lower`).

        Bins (:func:`_tail_bins`): [k, k + 1)·:data:`_TAIL_BIN` from loss 1 up,
        [2^k, 2^(k+1)) below; computed once per bin and direction, and, for a
        query at ``delta``, per decade of δ. What the window may let in is set
        by the smallest δ the tail serves: for a query's decade, its lower end,
        or the lower bound's δ at the top of the bin if larger (on a steep tail
        the bin's top is far below the δ asked: 3e-19 against 1e-9 on σ = 1,
        q = 1e-5, T = 10⁶, which made the window six times as long; an upper
        bound there may be its floor, far above the δ asked); else the upper
        bound's δ at the top of the bin.
        """
        decade = None if delta is None or delta <= 0.0 else math.floor(math.log10(delta))
        key = ("tail", bin_number, index, decade, coarseness)
        if key not in self._refined:
            target, top = _tail_range(bin_number)
            # The smallest δ in the bin (an upper bound on it) sets how little may leak in.
            at_top = np.array([top])
            if decade is None:
                smallest = float(self.upper[index].delta(at_top)[0])
            else:
                # For a query's decade: its lower end, or a lower bound on δ at the bin's
                # top if larger. An upper bound there may be its floor (σ = 1, q = 0.01,
                # two steps at δ = 1e-26: 3e-14, which let that much in, and the lower
                # bound stayed at 2.65 where ε is 5.93).
                smallest = max(float(self.lower[index].delta(at_top)[0]), 10.0**decade)
            tail = None
            if target > 0.0 and smallest > 0.0:
                tolerance = _TAIL_TOLERANCE * self.accuracy
                tail = self.refine_lower(target, smallest, tolerance, index, coarseness, top)
            self._refined[key] = tail
        return self._refined[key]

    def _tail_lower(
        self, bin_number: int, index: int, delta: float, lower: float, upper: float
    ) -> float:
        """``lower`` raised by direction ``index``'s lower tail, coarse grids first.

        A tail on a grid c times coarser than the lower bound's has c times
        fewer points, and its binning error is about c² times the lower
        bound's (which the grids make about half the accuracy). Tails are
        composed on grids :data:`_COARSE_TAIL`, half that, …, 1 times
        coarser (where the lower profiles are longer than
        :data:`_COARSE_TAILS_FROM` points; else on its own grid at once),
        stopping once the gap is within the accuracy or more than c²
        accuracies: the binning error of the last tail is then at most half of
        what is left, and the rest is what no tail removes (rounding
        allowances, the upper bound's own error). On σ = 0.5, q = 1e-6, 10⁶
        steps at δ = 1e-9 (a gap of 100 accuracies) the coarsest tail takes
        2.3 s instead of 10.4 s and gives a lower bound as high (0.56004); at
        δ = 1e-6 it leaves 1.04 accuracies, and the tail twice as fine closes
        it; on σ = 1, q = 1e-5 the finer ones follow as far as needed.
        """
        scale = self.accuracy * gap_scale(upper, self.epsilon_scale)
        # Where the lower compositions are short, so is a tail: compose it fine at once.
        longest = max(len(profile.losses) for profile in self.lower)
        coarseness = _COARSE_TAIL if longest > _COARSE_TAILS_FROM else 1
        while True:
            tail = self._tail(bin_number, index, delta, coarseness=coarseness)
            if tail is not None:
                lower = max(lower, tail.epsilon(delta))
            gap = upper - lower
            if coarseness == 1 or gap <= scale or gap > coarseness**2 * scale:
                return lower
            coarseness //= 2

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
                # A direction whose own upper bound (its best, tilted where that was
                # composed) is below the lower bound so far cannot raise it: its tail is
                # not composed.
                uppers = self._upper_by_direction(delta)
                for index in self._directions_that_can_matter(uppers):
                    if uppers[index] <= lower:
                        continue
                    bin_number = int(_tail_bins(np.array([upper]))[0])
                    lower = self._tail_lower(bin_number, index, delta, lower, upper)
            scale = self.accuracy * gap_scale(upper, self.epsilon_scale)
            if self.refine_upper is not None and upper - lower > scale:
                # The upper bound was refined against the gap to the plain lower bound;
                # against the one the tails reached, its allowance may now decide (σ = 1,
                # q = 0.01, two steps at δ = 1e-18: 3.9561 where the tails reach 3.95144).
                upper = self._upper_refined(delta, upper, _ALLOWANCE_SHARE * (upper - lower))
        if self.refine_grid is not None and math.isfinite(upper) and lower > 0.0:
            lower, upper = self._on_a_finer_grid(delta, lower, upper)
        if math.isinf(upper) and self.refine_lower is not None:
            lower = max(lower, self._lower_above_the_floor(delta))
        return _ordered(lower, upper, delta), upper

    def _lower_above_the_floor(self, delta: float) -> float:
        """A lower bound on ε(δ) for δ below the upper bounds' floor (0: none better).

        ε(δ) is non-increasing in δ, so a lower bound at any δ' ≥ δ holds at δ.
        Below the floor the upper bound is infinite and the lower one cannot be
        refined (its tails are tilted at the upper bound's loss), so it would
        fall back to the plain lower profiles: DP-SGD(1, 0.01, 10) read 6.21 at
        δ = 1e-28 but 2.86 at 1e-30. It is read at ten times the floor instead,
        where the upper bound is finite and the tails apply.
        """
        above = _FLOOR_FACTOR * self.upper_floor()
        if not delta < above < 1.0:
            return 0.0
        return self.epsilon_bounds(above)[0]

    def _on_a_finer_grid(self, delta: float, lower: float, upper: float) -> tuple[float, float]:
        """Where the grids' error law was optimistic, both bounds again on finer grids.

        The gap scales with h², i.e. with the accuracy the grids are chosen
        for: a gap of g accuracies asks for grids of accuracy
        a·:data:`_REFINED_SHARE`/g (at most 0.9·a, each step from the gap
        the previous grid reached), computed once per accuracy (None where
        memory does not allow them): a gap just above the accuracy (at most
        :data:`_NEAR_MISS` accuracies) asks for a grid only a little finer
        (1.025 accuracies: 1.13 times the points, where halving the accuracy
        made 1.41); a larger one for the accuracy halved until 90% of it
        should be reached (the grid may have been capped at 1e-4, finer than
        the accuracy asked, and then the gap does not scale with it), the
        first such step at most :data:`_FIRST_FAR_STEP` of the accuracy. A
        step that leaves more than :data:`_GRID_PROGRESS` of the gap ends the
        refinement: what keeps the bounds apart is then not the grid (a
        mechanism whose upper and lower pairs differ, as random allocation's
        at small δ), and finer grids would only cost more. Where
        ``refine_far_gaps`` is False (mechanisms whose own pairs are computed:
        random allocation) only near misses are refined: a far gap there is
        the pairs' (as fine as the grid of the allocation's sums), and every finer grid
        computes the pairs again (σ = 1, t = 100, 10 epochs at δ = 1e-9:
        9.9 s on a grid 4 times finer, for the same bounds). Both are
        certified, so the tighter of each pair is kept.

        A gap of at most :data:`_UPPER_FIRST` accuracies is first narrowed by
        the upper bound alone on the finer grid (``refine_upper_grid``, the
        lower compositions shared): connect-the-dots errs by about twice what
        binning does, and the upper side is one FFT row per direction where
        the lower is two, with no lower tails. On σ = 0.5, q = 1e-6, 10⁶ steps
        at δ = 1e-5 (1.53 accuracies) that alone reaches the accuracy; where it
        does not, both sides follow as above.
        """
        gap = (upper - lower) / (self.accuracy * gap_scale(upper, self.epsilon_scale))
        if gap <= 1.0:
            return lower, upper
        lower_cost, upper_cost = self.allowance_costs(delta)
        if max(lower_cost, upper_cost) > _ALLOWANCE_SHARE * (upper - lower):
            return lower, upper  # the allowances decide: finer grids do not help
        factor = 1.0
        if self.refine_upper_grid is not None and gap <= _UPPER_FIRST:
            # The upper bound first: its grid error is about twice the lower one's (binning
            # errs by about half of connect-the-dots) and it is one row per direction,
            # not two, nor lower tails.
            wanted = self._finer_factor(_REFINED_SHARE / gap, "upper grid")
            # Only the directions whose upper bound keeps the gap above the accuracy: the
            # others' bounds here already serve (ε(δ) is the largest direction's).
            per_direction = self._upper_by_direction(delta)
            upper = min(upper, max(per_direction))
            target = lower + self.accuracy * gap_scale(upper, self.epsilon_scale)
            indices = tuple(i for i, value in enumerate(per_direction) if value > target)
            if not indices:
                return lower, upper
            key = ("upper grid", wanted, indices)
            if key not in self._refined:
                self._refined[key] = self.refine_upper_grid(self.accuracy * wanted, indices)
            finer = self._refined[key]
            if finer is not None:
                others = [v for i, v in enumerate(per_direction) if i not in indices]
                upper = min(upper, max([finer.epsilon_upper(delta), *others]))
                gap = (upper - lower) / (self.accuracy * gap_scale(upper, self.epsilon_scale))
                if gap <= 1.0:
                    return lower, upper
        if gap > _NEAR_MISS and not self.refine_far_gaps:
            return lower, upper  # the mechanism's own pairs keep the bounds apart
        # At most _GRID_REFINEMENTS steps, each from the gap the previous grid reached
        # (the finer accountings do not refine for their own accuracy: no cascade).
        for step in range(_GRID_REFINEMENTS):
            if gap <= _NEAR_MISS:
                wanted = _REFINED_SHARE / gap
            else:  # far off (or on a capped grid, where the gap does not follow a)
                wanted = 2.0 ** -math.ceil(math.log2(gap / 0.9))
                if step == 0:  # first see whether a finer grid narrows the gap at all
                    wanted = max(wanted, _FIRST_FAR_STEP)
            factor = self._finer_factor(factor * min(wanted, 0.9))
            key = ("grid", factor)
            if key not in self._refined:
                self._refined[key] = self.refine_grid(self.accuracy * factor)
            finer = self._refined[key]
            if finer is None:
                break
            finer_lower, finer_upper = finer.epsilon_bounds(delta)
            lower, upper = max(lower, finer_lower), min(upper, finer_upper)
            before = gap
            gap = (upper - lower) / (self.accuracy * gap_scale(upper, self.epsilon_scale))
            if gap <= 1.0 or gap > _GRID_PROGRESS * before:
                break  # reached; or what keeps the bounds apart is not the grid
        return lower, upper

    def _upper_by_direction(self, delta: float) -> list[float]:
        """Each direction's best upper bound on ε(δ) so far (plain or tilted profiles).

        ε(δ) is the largest of the directions' (δ(ε) is the largest of theirs),
        and each group of profiles bounds every direction, so each one's
        smallest bound serves.
        """
        groups = self._upper_groups()
        return [
            min(float(group[index].epsilon(delta)) for group in groups)
            for index in range(len(self.upper))
        ]

    def _finer_factor(self, wanted: float, kind: str = "grid") -> float:
        """The accuracy factor of the finer grids to use for ``wanted`` (< 1).

        The coarsest finer grid already computed (where memory allowed it)
        that is at least as fine; else ``wanted`` rounded down to the ladder
        2^(−k/8), so that queries whose gaps differ a little share one finer
        accounting.
        """
        made = [
            key[1]
            for key, finer in self._refined.items()
            if key[0] == kind and key[1] <= wanted and finer is not None
        ]
        if made:
            return max(made)
        return 2.0 ** (-math.ceil(-8.0 * math.log2(wanted) - 1e-9) / 8.0)

    def finer_grids_refused(self) -> bool:
        return any(finer is None for key, finer in self._refined.items() if key[0] in _GRID_KINDS)

    def upper_floor(self) -> float:
        """The smallest δ the upper profiles resolve (δ at ε = ∞), each direction's best.

        ε(δ) is the largest direction's, and each direction is bounded by its best
        profile in any group (a group tilted for some directions keeps the others'
        plain profiles, whose floor is higher).
        """
        at_infinity = np.array([math.inf])
        groups = self._upper_groups()
        return max(
            min(float(group[index].delta(at_infinity)[0]) for group in groups)
            for index in range(len(self.upper))
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
            groups = self._upper_groups()  # each direction's best upper bound on δ(ε)
            uppers = [
                np.min([group[index].delta(epsilon) for group in groups], axis=0)
                for index in range(len(self.upper))
            ]
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


@dataclass(frozen=True)
class _ExactAtomsGuarantee(ProfileGuarantee):
    """An exact discrete profile: bounds differ only by rounding.

    ``exact`` holds the computed tail sums themselves (not moved by their
    rounding allowance), from which the trade-off curve is read.
    """

    exact: Profile | None = None
    exact_atoms = True

    def exact_curve(self):
        return _exact_atoms_curve(self.exact)
