"""Reuse along steps: points that differ only in their number of steps share one transform.

A DP-SGD run after T steps is T compositions of one subsampled Gaussian; so
is any pipeline whose description reduces to one mechanism repeated
(``Repeated``, a ``repeat`` key, ``dpsgd``). Such points are grouped by that
mechanism and their neighbouring relation, and each group is accounted by
:func:`account_steps`: one step's distribution is discretised once per
direction and bound (pessimistic for the upper bounds, optimistic for the
lower ones), transformed once, and raised to every T
(:func:`gaussdp.pld.checkpoints.self_compose_checkpoints`).

The result for each T is an :class:`~gaussdp.accountant.Accounting` built
as :func:`gaussdp.account`'s numerical path builds one, on the grid spacing
``account`` chooses: points are only grouped where it chooses the same
spacings for all (:func:`group_by_steps`; at the default accuracy the lower
grid is the 1e-4 cap or coarser for most DP-SGD runs, and the upper grid that
cap or, where its compositions are short, 1e-4/16:
:func:`gaussdp.accountant.grids.upper_grid_spacing`). By default every composition is then bit
for bit ``account``'s; with ``bounds_only`` (what a sweep without the
report uses) the T's also share transforms, and the bounds equal single
calls up to the rounding of a transform of another length.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from gaussdp import accountant
from gaussdp import mechanisms as m
from gaussdp.accountant import grids, numerical
from gaussdp.accountant.guarantees import ProfileGuarantee
from gaussdp.pld.checkpoints import SelfCompositions
from gaussdp.pld.composition import TILT_FROM_COMPOSITIONS, plan_self_composition
from gaussdp.pld.grid import OPTIMISTIC, PESSIMISTIC, GridPLD, discretise
from gaussdp.pld.leaves import leaves as leaves_of
from gaussdp.pld.query import Profile, from_zero, profile_of

__all__ = ["account_steps", "step_key"]


def step_key(pipeline: m.Pipeline) -> tuple[tuple[m.Mechanism, m.Neighbouring], int] | None:
    """``((mechanism, neighbouring), T)`` when the pipeline is T compositions of one mechanism.

    None when it is not, or when :func:`gaussdp.account` answers it in closed
    form anyway (Gaussian or pure-DP compositions), for a single step, and
    from :data:`~gaussdp.pld.composition.TILT_FROM_COMPOSITIONS` steps on
    (``compose_many`` then also composes a tilted row whose tilt depends on
    T, so nothing is shared: such points are accounted by ``account``).

    Examples
    --------
    >>> from gaussdp import DPSGD, Pipeline
    >>> (leaf, relation), steps = step_key(Pipeline(DPSGD(9.4, 0.32768, 2000)))
    >>> print(leaf, "×", steps)
    PoissonSubsampled(q=0.32768, Gaussian(σ=9.4)) × 2000
    """
    mechanism, neighbouring = m.resolve(pipeline)
    try:
        leaves = leaves_of(mechanism, neighbouring)
    except ValueError:
        return None
    if len(leaves) != 1:
        return None
    ((leaf, count),) = leaves.items()
    closed = (m.Gaussian, m.PureDP, m.RandomizedResponse, m.ApproxDP)
    if count < 2 or count >= TILT_FROM_COMPOSITIONS or isinstance(leaf, closed):
        return None
    return (leaf, neighbouring), count


def account_steps(
    leaf: m.Mechanism,
    neighbouring: m.Neighbouring,
    described: Mapping[int, m.Mechanism],
    accuracy: float = accountant.DEFAULT_ACCURACY,
    *,
    bounds_only: bool = False,
) -> Iterator[tuple[int, accountant.Accounting]]:
    """The accounting of ``T`` compositions of ``leaf`` for every ``T`` in ``described``.

    Parameters
    ----------
    leaf : Mechanism
        The mechanism composed (one step).
    neighbouring : Neighbouring
    described : mapping of int to Mechanism
        Step count → the description it belongs to (stored in the result).
    accuracy : float
        As in :func:`gaussdp.account`.
    bounds_only : bool
        False (default): every composition is computed at the FFT length
        ``account`` uses, so each result is bit for bit ``account``'s (only
        the discretisation is shared). True, for results that will only be
        asked ε and δ bounds (ε ≥ 0): the T's share transforms on a ladder of
        lengths (:func:`~gaussdp.pld.checkpoints.self_compose_checkpoints`),
        and a direction's optimistic distribution is only composed when its
        lower bound can be the larger one
        (:class:`_SkippingGuarantee`) — much faster; the bounds then differ from
        ``account``'s by the rounding of a transform of another length (about
        1e-9 relative at δ = 1e-5, up to a few 1e-5 at δ = 1e-9; both are certified),
        and they are not refined where rounding allowances decide (``account``'s
        tilted lower tails and upper compositions): at δ = 1e-9 after tens of
        thousands of steps the lower bound can be well below ``account``'s.
        Not for reports or trade-off curves: their far tails are where that
        rounding shows.

    Yields
    ------
    (int, Accounting)
        In increasing T; use each before asking for the next (the forward
        transforms are shared in that order).

    Examples
    --------
    >>> from gaussdp import DPSGD, Neighbouring, account
    >>> leaf = DPSGD(9.4, 0.32768, 1).expand().mechanism
    >>> runs = {t: DPSGD(9.4, 0.32768, t) for t in (500, 1000)}
    >>> reused = dict(account_steps(leaf, Neighbouring.ADD_REMOVE, runs))
    >>> single = account(DPSGD(9.4, 0.32768, 1000))
    >>> reused[1000].epsilon_bounds(1e-5) == single.epsilon_bounds(1e-5)
    True
    >>> fast = dict(account_steps(leaf, Neighbouring.ADD_REMOVE, runs, bounds_only=True))
    >>> lower, upper = fast[1000].epsilon_bounds(1e-5)
    >>> abs(lower / single.epsilon_bounds(1e-5)[0] - 1) < 1e-8
    True
    """
    counts = sorted(described)
    pair = accountant.dominating_losses(leaf, neighbouring)
    losses = {leaf: pair}
    chosen_spacing = min(grids.choose_grid_spacing(losses, {leaf: t}, accuracy) for t in counts)
    # The lower bounds' grid depends on T (as in account()); the T's sharing one share its
    # transforms.
    lower_spacings = {
        t: grids.lower_grid_spacing(losses, {leaf: t}, chosen_spacing, accuracy) for t in counts
    }
    # The upper grid too (the finer one where T's composition on it is cheap, as in account()).
    upper_spacings = {
        t: grids.upper_grid_spacing(chosen_spacing, losses, {leaf: t}, accuracy) for t in counts
    }
    largest_on = {}
    for t in counts:  # the largest T on each grid
        largest_on[PESSIMISTIC, upper_spacings[t]] = t
        largest_on[OPTIMISTIC, lower_spacings[t]] = t
    compositions = {}
    memory = grids.available_memory()
    for (kind, grid), largest in largest_on.items():
        for index, direction in enumerate(accountant.DIRECTIONS):
            step = discretise(pair[index], grid, kind, grids.PLAIN_DISCRETISATION_TAIL)
            length = plan_self_composition(step, largest).length
            needed = grids.BYTES_PER_POINT * length * (2 if kind == OPTIMISTIC else 1)
            if needed > grids.MEMORY_FRACTION * memory:
                raise MemoryError(
                    f"{largest} steps need a grid of {length:,} points, more than the memory "
                    "available allows"
                )
            compositions[kind, grid, direction] = SelfCompositions(
                step,
                None,
                shared_lengths=bounds_only,  # the accountant's window tails
            )
    for steps in counts:
        chosen = {
            (PESSIMISTIC, direction): compositions[PESSIMISTIC, upper_spacings[steps], direction]
            for direction in accountant.DIRECTIONS
        }
        chosen.update(
            {
                (OPTIMISTIC, direction): compositions[OPTIMISTIC, lower_spacings[steps], direction]
                for direction in accountant.DIRECTIONS
            }
        )
        yield (
            steps,
            _accounting(
                described[steps],
                neighbouring,
                (upper_spacings[steps], lower_spacings[steps]),
                chosen,
                steps,
                bounds_only,
                accuracy,
                losses,
            ),
        )


def _accounting(
    mechanism, neighbouring, spacings, compositions, steps, bounds_only, accuracy, losses
) -> accountant.Accounting:
    """An Accounting of T = ``steps``, as :func:`gaussdp.account` builds it.

    The pessimistic compositions (upper bounds) are computed now; the
    optimistic ones (lower bounds) when first needed, as in ``account``.
    """
    cache: dict[tuple[str, str], GridPLD] = {}

    def composed(kind: str, direction: str) -> GridPLD:
        if (kind, direction) not in cache:
            cache[kind, direction] = compositions[kind, direction](steps)
        return cache[kind, direction]

    def distributions(kind: str) -> dict[str, GridPLD]:
        return {direction: composed(kind, direction) for direction in accountant.DIRECTIONS}

    upper = tuple(profile_of(from_zero(d)) for d in distributions(PESSIMISTIC).values())

    def lower_profile(index: int) -> Profile:
        return profile_of(from_zero(composed(OPTIMISTIC, accountant.DIRECTIONS[index])))

    def lower_profiles():
        return tuple(lower_profile(index) for index in range(len(accountant.DIRECTIONS)))

    if bounds_only:
        guarantee = _SkippingGuarantee(
            lambda: upper, lower_profiles, lower_of=functools.cache(lower_profile)
        )
    else:
        # Refined as account() refines (the same tilted compositions, so the same numbers).
        counts = {leaf: steps for leaf in losses}
        refiners = numerical.refiners(losses, counts, spacings, distributions, None)
        allowance = grids.capped_upper_allowance(spacings[0], losses, counts, accuracy)
        guarantee = ProfileGuarantee(
            lambda: upper, lower_profiles, *refiners, accuracy, upper_allowance=allowance
        )

    def with_floor(delta_floor: float) -> accountant.Accounting:
        # A lower floor needs the tilted composition of account(), which nothing shares.
        fresh = accountant.account(mechanism, neighbouring=neighbouring, accuracy=accuracy)
        return fresh.with_delta_floor(delta_floor)

    method = numerical.method_name(*spacings)
    return accountant.Accounting(
        mechanism,
        neighbouring,
        method,
        spacings[0],
        None,
        guarantee,
        distributions,
        with_floor,
        accuracy,
        caveats=numerical.caveats_of(losses),
    )


@dataclass(frozen=True)
class _SkippingGuarantee(ProfileGuarantee):
    """Lower bounds that compose a direction's optimistic distribution only if it can matter.

    The lower bound on ε (or δ) is the larger of the two directions' lower
    bounds. A direction's lower bound is at most its own upper bound, so when
    that upper bound is already below the larger direction's lower bound,
    that direction cannot change the maximum and is not computed: the
    answer is the one computing both would give.
    """

    lower_of: Callable[[int], Profile] | None = None

    def epsilon_lower(self, delta):
        uppers = [profile.epsilon(delta) for profile in self.upper]
        best = -math.inf
        for index in sorted(range(len(uppers)), key=lambda i: -uppers[i]):
            if uppers[index] < best:
                break
            best = max(best, self.lower_of(index).epsilon(delta))
        return best

    def delta_lower(self, epsilon):
        uppers = [profile.delta(epsilon) for profile in self.upper]
        best = np.full(np.shape(epsilon), -np.inf)
        for index in sorted(range(len(uppers)), key=lambda i: -float(np.sum(uppers[i]))):
            if np.all(uppers[index] < best):
                continue
            best = np.maximum(best, self.lower_of(index).delta(epsilon))
        return best


def group_by_steps(
    points: Iterable[tuple[int, m.Pipeline]], accuracy: float = accountant.DEFAULT_ACCURACY
) -> tuple[list[list[tuple[int, m.Pipeline]]], list[tuple[int, m.Pipeline]]]:
    """Split points into groups of two or more that differ only in T, and the rest.

    A group also shares the grid spacings that :func:`gaussdp.account` chooses
    for each of its points (the accuracy's, and the upper bound's), so that its
    numbers are those of single calls. At the default accuracy the accuracy's
    spacing is the 1e-4 cap for most DP-SGD runs; where it is finer it varies
    with T, and such points are accounted one by one.
    """
    groups: dict[tuple, list[tuple[int, m.Pipeline]]] = {}
    losses: dict[tuple, dict] = {}
    spacings: dict[tuple, tuple[float, float]] = {}
    rest = []
    for point, pipeline in points:
        found = step_key(pipeline)
        if found is None:
            rest.append((point, pipeline))
            continue
        (leaf, relation), steps = found
        try:
            if (leaf, relation, steps) not in spacings:
                if (leaf, relation) not in losses:
                    losses[leaf, relation] = {leaf: accountant.dominating_losses(leaf, relation)}
                chosen = grids.choose_grid_spacing(losses[leaf, relation], {leaf: steps}, accuracy)
                # The lower grid follows the accuracy's spacing, the upper one the cheap rule.
                spacings[leaf, relation, steps] = (
                    chosen,
                    grids.upper_grid_spacing(
                        chosen, losses[leaf, relation], {leaf: steps}, accuracy
                    ),
                )
            spacing = spacings[leaf, relation, steps]
        except Exception:  # account() will report it for this point
            rest.append((point, pipeline))
            continue
        groups.setdefault((leaf, relation, spacing), []).append((point, pipeline))
    result = []
    for members in groups.values():
        if len(members) > 1:
            result.append(members)
        else:
            rest.extend(members)
    return result, rest
