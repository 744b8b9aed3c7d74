"""The numerical path: dominating pairs discretised, composed by FFT, read as profiles.

Each leaf's dominating pair is discretised pessimistically (connect-the-dots,
for the upper bounds) and optimistically (binning, for the lower bounds) on
the grids :mod:`gaussdp.accountant.grids` chooses, and composed per
neighbouring direction (:func:`_compose_all`, :mod:`gaussdp.pld.composition`);
the result is an :class:`~gaussdp.accountant.Accounting` whose
:class:`~gaussdp.accountant.guarantees.ProfileGuarantee` is refined by tilted
compositions (:func:`refiners`) and finer grids where that is what keeps its
bounds apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from gaussdp._validation import InvalidParameterError
from gaussdp.accountant import grids
from gaussdp.accountant.grids import _check_memory
from gaussdp.accountant.guarantees import _FINEST_REFINEMENT, ProfileGuarantee, _Guarantee
from gaussdp.accountant.result import Accounting
from gaussdp.pld import composition as pld_compose
from gaussdp.pld.blocks import (
    BLOCKS_BELOW_SPACING,
    BLOCKS_FROM,
    blocked_items,
)
from gaussdp.pld.grid import OPTIMISTIC, PESSIMISTIC, GridPLD, discretise
from gaussdp.pld.lower_tail import LowerTail, compose_lower_tail, lower_tail_discretisation_tail
from gaussdp.pld.query import Profile, from_zero, profile_of

#: The neighbouring directions, in the order of each leaf's (remove, add) pair.
DIRECTIONS = ("remove", "add")
#: Where an accounting keeps the pessimistic compositions its queries tilted at the default.
_DEFAULT_TILTED = "pessimistic, tilted"
#: A query at δ composes the upper bound tilted at once where the plain rounding
#: allowance is more than this share of δ (see _numerical's tilted_at_once).
_PLAIN_FLOOR_SHARE = 0.1
#: ... and composes the other directions plain where the allowance is below this share.
_PLAIN_OTHERS_SHARE = 0.5
#: A block's composition on its finer grid may have this many points at least.
_BLOCK_POINTS = 2**20
#: Blocks only where each direction's composition is at most this many points long.
_BLOCKS_UP_TO_POINTS = 2**20


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
    directions: tuple[int, ...] | None = None,
    blocks: bool = True,
) -> dict[str, GridPLD]:
    """Discretise every mechanism and compose them all in the Fourier domain, per direction.

    ``estimate(spacing, index)`` is the composed length of direction
    ``index`` planned on a coarse grid
    (:func:`~gaussdp.accountant.grids._composed_length_estimate`).
    The pessimistic compositions keep their floor at most ``delta_floor``
    (computing them exponentially tilted where the plain rounding allowance
    is larger, :func:`gaussdp.pld.composition.needs_tilt`). Where memory
    does not allow the tilted row: refused if ``floor_required``, else the
    plain composition (with its larger floor) is computed. ``plain_first``:
    without a ``delta_floor``, long runs are composed plain too (their
    queries then compose tilted where the plain allowance decides,
    :class:`ProfileGuarantee`). ``directions``: the indices (into
    :data:`DIRECTIONS`) of the directions to compose (None: all). ``blocks``:
    whether long runs may be composed in blocks at all
    (:func:`~gaussdp.accountant.grids.blocks_allowed`).
    """
    indices = range(len(DIRECTIONS)) if directions is None else directions
    memory = grids.available_memory()
    for leaf, pair in losses.items():
        for loss in pair:
            low, high = loss.support(grids._DISCRETISATION_TAIL)
            points = (high - low) / spacing
            if 64 * points > memory // 2:
                raise InvalidParameterError(
                    f"grid_spacing {spacing:.3g} needs {points:,.0f} grid points for {leaf}, "
                    f"more than half of the {memory / 1e9:.1f} GB available; use a coarser "
                    "accuracy or grid_spacing"
                )
    total_count = sum(counts.values())
    floor = delta_floor if kind == PESSIMISTIC else None
    # Upper bounds of runs long enough that sweeps never share their steps
    # (sweeps.steps.step_key) are composed in blocks (gaussdp.pld.blocks): they err about
    # 15 times less than single steps on one grid. Plain blocks where the composition is
    # plain, tilted ones where it is tilted: a tilted block's located errors count twice
    # at every loss of a plain composition (σ = 7.6, q = 0.0017, T = 17,000 at δ = 1e-8
    # then needed the tilted composition too), and composing every run in blocks tilted
    # at once cost runs that dp_accounting does in 15 ms half as much again. Only where
    # the composition is at most _BLOCKS_UP_TO_POINTS long: a second row of a longer one
    # costs more than dp_accounting's whole composition at its default grid (σ = 0.8,
    # q = 0.01, T = 10⁶: 4.6 M points, 1.0 s → 2.5 s).
    in_blocks = (
        blocks
        and kind == PESSIMISTIC
        and total_count >= pld_compose.TILT_FROM_COMPOSITIONS
        and spacing < BLOCKS_BELOW_SPACING
        and any(count >= BLOCKS_FROM for count in counts.values())
        and all(estimate(spacing, index) <= _BLOCKS_UP_TO_POINTS for index in indices)
    )

    def rows_for(length: int) -> int:
        if kind == OPTIMISTIC:
            return 2
        if plain_first and floor is None:
            return 1
        return 2 if pld_compose.needs_tilt(length, total_count, floor) else 1

    for index in indices:
        length = estimate(spacing, index)
        rows = rows_for(length)
        if rows == 2 and kind == PESSIMISTIC and not floor_required:
            if grids.BYTES_PER_POINT * length * rows > grids.MEMORY_FRACTION * memory:
                floor = None  # the default floor is a wish, not a demand: stay plain
                rows = rows_for(length)
        _check_memory(length, rows, spacing, total_count, memory, "about ")
    results: dict[str, GridPLD] = {}
    for index in indices:
        direction = DIRECTIONS[index]
        if progress is not None:
            progress(f"{kind} bounds, {direction} direction: discretising")
        # Plain compositions cut their grids and windows where the rounding allowance
        # dominates; one mechanism alone is not composed (no allowance): its grid keeps
        # all but 1e-30 (what it leaves above goes to +∞, a floor under every δ).
        tilted = kind == PESSIMISTIC and rows_for(estimate(spacing, index)) == 2
        # a block's finer composition may be longer than the composition itself, within
        # memory (the block is 256 steps on a grid 4 times finer)
        longest = min(
            max(2 * estimate(spacing, index), _BLOCK_POINTS),
            int(grids.MEMORY_FRACTION * memory / (2 * grids.BYTES_PER_POINT)),
        )
        for _ in range(2):
            if tilted:
                cut = pld_compose.tilted_discretisation_tail(total_count, tilt_tail, floor)
            elif total_count == 1:
                cut = grids.SINGLE_MECHANISM_TAIL
            else:
                cut = grids.PLAIN_DISCRETISATION_TAIL
            items = []
            for leaf, pair in losses.items():
                blocked = in_blocks and blocked_items(
                    pair[index], spacing, counts[leaf], cut, longest, tilted
                )
                items += blocked or [(discretise(pair[index], spacing, kind, cut), counts[leaf])]
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
        needed = grids.BYTES_PER_POINT * plan.length * rows
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


def _compose_tilted(
    losses: dict,
    counts: dict,
    spacing: float,
    progress: Callable[[str], None] | None,
    estimate: Callable[[float, int], int],
    tilt_tail: float | None,
    directions: tuple[int, ...] | None,
    blocks: bool = True,
) -> dict[str, GridPLD] | None:
    """The pessimistic compositions tilted where the upper tail is ``tilt_tail`` (None: 1e-10).

    No floor is asked of them; None where memory allowed only the plain ones.
    """
    composed = _compose_all(
        losses,
        counts,
        spacing,
        PESSIMISTIC,
        progress,
        0.0,
        False,
        estimate,
        tilt_tail,
        directions=directions,
        blocks=blocks,
    )
    if any(pld.cut_index is None for pld in composed.values()):
        return None
    return composed


def method_name(spacing: float, lower_spacing: float) -> str:
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
    reaccount=None,
    pessimistic=None,
    directions=None,
    accuracy_spacing=None,
    blocks=True,
):
    """The numerical path's Accounting (both kinds composed on demand, then cached).

    ``spacings``: the grid spacings of the upper and of the lower bounds.
    ``optimistic``: the optimistic compositions if already computed (they
    do not depend on the floor). ``estimates``: composed lengths already
    estimated, by (spacing, direction index). ``accuracy``: what the grids
    were chosen for (None: a spacing was given). ``reaccount(accuracy)``:
    the same mechanism accounted again for a finer accuracy (given with an
    ``accuracy``; :func:`gaussdp.accountant.account` passes itself down, so
    that this module does not import the entry point above it).
    ``pessimistic``: the pessimistic compositions if already computed (a
    tilted one that reaches this accounting's floor). ``directions``: the
    indices of the directions its upper profiles hold (None: all; a finer
    upper grid for some directions only, see ``refine_upper_grid``).
    ``accuracy_spacing``: the upper grid the accuracy asks for, where the upper
    bound's is a finer one because it is cheap
    (:func:`~gaussdp.accountant.grids.upper_grid_spacing`; None: the same).
    ``blocks``: whether its long runs may be composed in blocks
    (:func:`~gaussdp.accountant.grids.blocks_allowed`; every composition on its grids follows it).
    """
    spacing, lower_spacing = spacings
    cache: dict[str, dict[str, GridPLD]] = {}
    if optimistic is not None:
        cache[OPTIMISTIC] = optimistic
    if pessimistic is not None:
        cache[PESSIMISTIC] = pessimistic
    estimates = {} if estimates is None else estimates

    def estimate(grid: float, index: int) -> int:
        if (grid, index) not in estimates:
            estimates[grid, index] = grids._composed_length_estimate(losses, leaves, grid, index)
        return estimates[grid, index]

    indices = range(len(DIRECTIONS)) if directions is None else directions
    for index in indices:  # refuse what memory cannot hold before any work
        _check_memory(estimate(spacing, index), 1, spacing, 0, grids.available_memory(), "about ")

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
                directions=directions if kind == PESSIMISTIC else None,
                blocks=blocks,
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
        # The default-tilted composition a query made on this grid, if it reaches the floor.
        tilted = cache.get(_DEFAULT_TILTED)
        if tilted is not None and any(_top_floor(pld) > new_floor for pld in tilted.values()):
            tilted = None
        return again(spacing, new_floor, tilted, accuracy_spacing)

    def on_accuracy_grid() -> Accounting | None:
        # None: the upper grid is the accuracy's already. Else the same accounting with the
        # upper bound on the accuracy's grid.
        if accuracy_spacing is None or accuracy_spacing == spacing:
            return None
        return again(accuracy_spacing, delta_floor)

    def again(upper_spacing, floor, pessimistic=None, finer_than=None) -> Accounting:
        # This mechanism on another upper grid or floor, the lower compositions, the
        # estimates and the refinements shared; ``finer_than``: its accuracy's upper grid.
        return _numerical(
            mechanism,
            neighbouring,
            leaves,
            losses,
            (upper_spacing, lower_spacing),
            floor,
            progress,
            cache.get(OPTIMISTIC),
            estimates,
            accuracy,
            epsilon_scale,
            reaccount,
            pessimistic,
            accuracy_spacing=finer_than,
            blocks=blocks,
        )

    def tilted_at_once(delta: float) -> None:
        # A run composed plain first whose plain rounding allowance (a floor under every
        # δ) is more than _PLAIN_FLOOR_SHARE of the δ asked would be composed tilted for
        # it anyway (ProfileGuarantee._upper_refined): the tilted composition is made at
        # once and serves as the plain one (σ = 0.5, q = 1e-6, T = 10⁶ at δ = 1e-9: the
        # allowance is 4.4e-10, and the plain composition cost 1.5 s for nothing).
        if PESSIMISTIC in cache or accuracy is None or delta_floor is not None:
            return
        total = sum(leaves.values())
        allowance = max(
            pld_compose.rounding_allowance(estimate(spacing, index), total) for index in indices
        )
        if allowance <= _PLAIN_FLOOR_SHARE * delta:
            return
        # Where the allowance leaves δ/2 or more of δ, the first direction tilted (under
        # add/remove the remove direction, whose heavy tail decides small δ on subsampled
        # mechanisms) and the others plain: a query tilts those too only where their bound
        # is above what the first one computes (σ = 0.5, q = 1e-6, T = 10⁶ at δ = 1e-9:
        # the add direction's plain ε, 0.032, against 0.56). Else all tilted: a plain
        # bound would be infinite or nearly so.
        split = allowance < _PLAIN_OTHERS_SHARE * delta
        first, others = (indices[:1], tuple(indices[1:])) if split else (indices, ())
        composed = _compose_tilted(
            losses, leaves, spacing, progress, estimate, None, first, blocks=blocks
        )
        if composed is None:
            return
        if others:
            composed.update(
                _compose_all(
                    losses,
                    leaves,
                    spacing,
                    PESSIMISTIC,
                    progress,
                    None,
                    False,
                    estimate,
                    plain_first=True,
                    directions=others,
                    blocks=blocks,
                )
            )
        cache[PESSIMISTIC] = {DIRECTIONS[i]: composed[DIRECTIONS[i]] for i in indices}
        if not others:
            cache[_DEFAULT_TILTED] = cache[PESSIMISTIC]

    # The bounds read atoms at losses ≥ −h only (from_zero); tradeoff() reads all of them.
    def upper_profiles() -> tuple[Profile, ...]:
        return tuple(profile_of(from_zero(d)) for d in distributions(PESSIMISTIC).values())

    def lower_profiles() -> tuple[Profile, ...]:
        return tuple(profile_of(from_zero(d)) for d in distributions(OPTIMISTIC).values())

    method = method_name(spacing, lower_spacing)
    refinements = (None, None)
    refine_grid = refine_upper_grid = None
    if accuracy is not None:

        def refine_upper_grid(finer: float, indices=None) -> _Guarantee | None:
            # the upper bound alone on a grid for the finer accuracy (h ∝ √accuracy), the
            # lower one where it is: its compositions are shared, not composed again; for
            # the directions ``indices`` only (None: all), the others keep this grid's
            if finer < _FINEST_REFINEMENT:
                return None
            try:
                refined = _numerical(
                    mechanism,
                    neighbouring,
                    leaves,
                    losses,
                    (spacing * math.sqrt(finer / accuracy), lower_spacing),
                    None,  # as a finer accounting of its own (no floor: tilted if need be)
                    progress,
                    distributions(OPTIMISTIC),
                    estimates,
                    finer,
                    epsilon_scale,
                    directions=indices,
                    blocks=blocks,
                )
            except InvalidParameterError:  # memory does not allow that grid
                return None
            # no refinement of its own grids: it serves one step of this accounting's
            return replace(
                refined._guarantee, refine_grid=None, refine_upper_grid=None, _refined={}
            )

        refinements = refiners(
            losses,
            leaves,
            spacings,
            distributions,
            progress,
            estimate,
            kept=cache,
            directions=directions,
            blocks=blocks,
        )

        def refine_grid(finer: float) -> _Guarantee | None:
            if finer < _FINEST_REFINEMENT:
                return None
            try:
                refined = reaccount(finer)
            except InvalidParameterError:  # memory does not allow that grid
                return None
            guarantee = refined._guarantee
            if isinstance(guarantee, ProfileGuarantee):
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
        ProfileGuarantee(
            upper_profiles,
            lower_profiles,
            *refinements,
            accuracy,
            refine_grid=refine_grid,
            epsilon_scale=epsilon_scale,
            refine_upper_grid=refine_upper_grid,
            before_upper=tilted_at_once,
            refine_far_gaps=_far_gaps_follow_the_grid(losses),
            upper_allowance=grids.capped_upper_allowance(
                spacing, losses, leaves, accuracy, estimate, indices
            ),
        ),
        distributions,
        with_floor,
        accuracy,
        epsilon_scale,
        caveats_of(losses),
        _on_accuracy_grid=on_accuracy_grid,
    )


def _far_gaps_follow_the_grid(losses: dict) -> bool:
    """False where a leaf's own pairs keep its bounds far apart at small δ (random allocation).

    See :attr:`gaussdp.pld.losses.BracketedLoss.far_gaps_follow_the_grid`.
    """
    return all(
        getattr(loss, "far_gaps_follow_the_grid", True) for pair in losses.values() for loss in pair
    )


def caveats_of(losses: dict) -> tuple[str, ...]:
    """What the leaves' bracketed pairs say their bounds are, once each, in order."""
    found = (getattr(loss, "caveat", "") for pair in losses.values() for loss in pair)
    return tuple(dict.fromkeys(caveat for caveat in found if caveat))


def refiners(
    losses: dict,
    counts: dict,
    spacings: tuple[float, float],
    distributions: Callable[[str], dict[str, GridPLD]],
    progress: Callable[[str], None] | None,
    estimate: Callable[[float, int], int] | None = None,
    kept: dict | None = None,
    directions: tuple[int, ...] | None = None,
    blocks: bool = True,
):
    """The refinements of :class:`ProfileGuarantee` for a numerical accounting.

    ``refine_upper(tail, positions)``: the profiles of the pessimistic composition
    exponentially tilted where its upper tail is about ``tail`` (None: the
    default, 1e-10), or None if memory allows only the plain one or the plain
    one is that already. ``refine_lower(ε, δ,
    tolerance, direction, coarseness, reach)``: a direction's lower tail
    (:func:`_lower_tail`) on the lower bound's grid made ``coarseness`` times
    coarser, for queries at losses up to ``reach``.
    ``kept``: where the default-tilted compositions are kept once made (an
    accounting asked for a lower floor on the same grid starts from them).
    ``directions``: the directions the upper profiles hold (None: all). ``blocks``:
    whether long runs may be composed in blocks (:func:`~gaussdp.accountant.grids.blocks_allowed`).
    """
    spacing, lower_spacing = spacings
    if estimate is None:

        def estimate(grid: float, index: int) -> int:
            return grids._composed_length_estimate(losses, counts, grid, index)

    own = tuple(range(len(DIRECTIONS))) if directions is None else tuple(directions)
    # Each direction's tilted profile, by (tilt tail, direction index), made once: queries
    # may ask for different sets of directions. The default tilt's compositions are kept
    # too, for an accounting asked for a lower floor (``kept``).
    profiles: dict[tuple[float | None, int], Profile] = {}
    default_tilted: dict[str, GridPLD] = {}

    def refine_upper(
        tilt_tail: float | None, positions: tuple[int, ...] | None = None
    ) -> tuple[Profile | None, ...] | None:
        # ``positions``: which of this accounting's directions to tilt (None: all); those
        # whose composition is tilted at the default already are not, for the default
        # tilt (None if that leaves none). Directions not tilted at ``tilt_tail`` (now or
        # before) are None in the result.
        plain = distributions(PESSIMISTIC)
        chosen = own if positions is None else tuple(own[p] for p in positions)
        if tilt_tail is None:
            chosen = tuple(i for i in chosen if plain[DIRECTIONS[i]].cut_index is None)
        if not chosen:
            return None
        missing = tuple(i for i in chosen if (tilt_tail, i) not in profiles)
        if missing:
            composed = _compose_tilted(
                losses, counts, spacing, progress, estimate, tilt_tail, missing, blocks=blocks
            )
            if composed is None:
                return None  # memory allowed the plain composition only
            for index in missing:
                pld = composed[DIRECTIONS[index]]
                profiles[tilt_tail, index] = profile_of(from_zero(pld))
                if tilt_tail is None and kept is not None:  # else only the profile is kept
                    default_tilted[DIRECTIONS[index]] = pld
        if kept is not None and tilt_tail is None:
            whole = {
                DIRECTIONS[i]: default_tilted.get(DIRECTIONS[i], plain[DIRECTIONS[i]]) for i in own
            }
            if all(pld.cut_index is not None for pld in whole.values()):
                kept[_DEFAULT_TILTED] = whole
        # every direction tilted at this tail so far (asked now or before)
        return tuple(profiles.get((tilt_tail, index)) for index in own)

    def refine_lower(
        epsilon: float,
        delta: float,
        tolerance: float,
        index: int,
        coarseness: int = 1,
        reach: float | None = None,
    ):
        return _lower_tail(
            losses,
            counts,
            lower_spacing * coarseness,
            epsilon,
            delta,
            tolerance,
            index,
            progress,
            reach,
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
    reach: float | None = None,
) -> LowerTail | None:
    """Direction ``index``'s lower tail, tilted at loss ``epsilon`` (None: not useful there).

    ``reach``: the largest loss it will be asked about (only the suffixes that
    decide up to there are kept, :func:`gaussdp.pld.lower_tail.compose_lower_tail`).

    None too where the tilted window would need more than the memory allows:
    that direction's lower bound stays the plain one.
    """
    if progress is not None:
        progress(f"lower bound's tail, {DIRECTIONS[index]} direction: composing tilted")
    cut = lower_tail_discretisation_tail(sum(counts.values()), tolerance, delta)
    items = [
        (discretise(pair[index], spacing, OPTIMISTIC, cut), counts[leaf])
        for leaf, pair in losses.items()
    ]
    longest = int(grids.MEMORY_FRACTION * grids.available_memory() / (grids.BYTES_PER_POINT * 2))
    return compose_lower_tail(items, epsilon, delta, tolerance, longest, reach)
