"""The result of an accounting: :class:`Accounting`, and :class:`AccuracyWarning`.

An :class:`Accounting` holds what was accounted, how (:attr:`Accounting.method`)
and a guarantee (:mod:`gaussdp.accountant.guarantees`) that it asks for every
bound, profile and curve; it checks the queries' arguments and says, in one
warning, where the bounds are further apart than the accuracy asked for.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError, check_real, restore_shape
from gaussdp.accountant import guarantees
from gaussdp.accountant.guarantees import _Guarantee
from gaussdp.pld.grid import OPTIMISTIC, PESSIMISTIC, GridPLD
from gaussdp.pld.query import Profile, profile_of


class AccuracyWarning(UserWarning):
    """The certified ε bounds are further apart than the ``accuracy`` asked for.

    Raised by :meth:`Accounting.epsilon_bounds`, in one line saying the gap
    reached and what limits it (the bounds themselves stay certified).
    """


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
    caveats : tuple of str
        What the bounds are where a part is only known between two pairs
        whose gap is science, not numerics (shuffling: the upper bounds
        assume no amplification, the lower bounds are Chua et al.'s). The
        :class:`AccuracyWarning` is not raised for such results: their
        bounds are apart by what is unknown, not by the grid.
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
    caveats: tuple[str, ...] = ()
    _as_if_poisson: Callable[[], Accounting | None] | None = field(default=None, repr=False)
    _on_accuracy_grid: Callable[[], Accounting | None] | None = field(default=None, repr=False)

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

    def on_accuracy_grid(self) -> Accounting:
        """The same accounting with its upper bound on the grid its ``accuracy`` asks for.

        Where the upper bound's compositions are short, :func:`gaussdp.account`
        computes them on a finer grid than the accuracy needs
        (:func:`gaussdp.accountant.grids.upper_grid_spacing`: the bounds are
        then tighter, cheaply). Work that reads every atom of the upper curve
        many times, as the μ-GDP report's fit does, costs in proportion to
        its length: it is done here on the accuracy's grid, with the same
        lower compositions, and certified as well. Returns ``self`` where the
        two grids are one (and for closed forms).
        """
        other = None if self._on_accuracy_grid is None else self._on_accuracy_grid()
        return self if other is None else other

    def as_if_poisson(self) -> Accounting | None:
        """The same run accounted as if its shuffled epochs were Poisson-sampled (q = 1/t).

        What such runs are often reported under, for comparison only: not a
        bound on the shuffled run (:func:`gaussdp.mechanisms.samplers.as_if_poisson`).
        None where nothing is shuffled, under replace-one neighbouring
        (Poisson sampling is accounted under add/remove), or for results not
        made by :func:`gaussdp.account`. Computed on first use and kept.

        Examples
        --------
        >>> from gaussdp import Gaussian, Repeated, Shuffled, account
        >>> shuffled = account(Repeated(Shuffled(Gaussian(1.0), 10), 2))
        >>> lower, upper = shuffled.epsilon_bounds(1e-5)
        >>> poisson = shuffled.as_if_poisson().epsilon(1e-5)
        >>> bool(poisson < lower < upper)   # Poisson accounting understates this run
        True
        """
        return None if self._as_if_poisson is None else self._as_if_poisson()

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
        if warn and self.accuracy is not None and not self.caveats:
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
                "tails, at most a quarter of what a tilted composition may drop"
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
        if max(lower_cost, upper_cost) > guarantees._ALLOWANCE_SHARE * spread:
            side = "lower" if lower_cost >= upper_cost else "upper"
            cost = max(lower_cost, upper_cost)
            why = (
                f"the {side} bound gives up {cost:.2g} of epsilon to certified rounding "
                "allowances, which a finer grid does not reduce (what remains after the "
                "tilted compositions that make them relative, where memory allowed them)"
            )
        elif lower[worst] <= 0.0:
            why = (
                "the lower bound found no atom of the binned distributions above epsilon = 0 "
                "at this delta (their Q-masses underflow at losses beyond ~700 nats, where "
                "the upper bound still holds)"
                if upper[worst] > 700.0
                else "the lower bound found no atom of the binned distributions above "
                "epsilon = 0 at this delta"
            )
        elif self._guarantee.finer_grids_refused():
            why = (
                "the grid's error law was optimistic here, and memory did not allow the "
                "finer grids that would narrow it"
            )
        elif not getattr(self._guarantee, "refine_far_gaps", True):
            why = (
                "the mechanism is known only between two computed pairs, which differ there "
                "(random allocation's: as fine as the grid of the laws of its sums, which "
                "the accuracy sets), and no grid of the accountant closes that"
            )
        else:
            why = (
                "the finer grids tried did not narrow it as the grid's error law predicts: "
                "either the mechanism is known only between two pairs that differ there "
                "(such as truncated Poisson's where batches are cut), which no grid closes, "
                "or an atom of "
                "the privacy loss (such as the Laplace mechanism's at 1/b) is off by up to a "
                "grid spacing, not its square, which a grid_spacing below the gap narrows"
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
