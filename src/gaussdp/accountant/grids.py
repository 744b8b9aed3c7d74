"""Grids: their spacing from an error law, and the memory a composition on them needs.

The numerical path (:mod:`gaussdp.accountant.numerical`) discretises every
dominating pair on a grid of spacing h and composes by FFT. Here: how fine
a grid the ``accuracy`` asks for (:func:`choose_grid_spacing` for the upper
bound, :func:`lower_grid_spacing` for the lower one, from the error law
:class:`ErrorLaw`), what :func:`gap_scale` makes the accuracy relative to,
how much mass the discretisation leaves beyond the grid, and whether a
composition fits in memory (:func:`available_memory`, :func:`_check_memory`)
before anything large is allocated.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass

from gaussdp._numerics import UNIT_ROUNDOFF
from gaussdp._validation import InvalidParameterError
from gaussdp.pld import composition as pld_compose
from gaussdp.pld.blocks import BLOCKS_BELOW_SPACING
from gaussdp.pld.grid import PESSIMISTIC, GridPLD, discretise

#: Default target for the relative gap between the certified ε bounds, (upper − lower)/upper.
DEFAULT_ACCURACY = 5e-5
#: Never use a coarser grid than this (the default of dp_accounting's PLD accountant),
#: so the default answer is as tight as that accountant's up to the certified rounding
#: allowance (6e-9 of ε on σ = 1, q = 0.01, T = 1000, δ = 1e-5). A cap of 9.5e-5 removed
#: that but put the losses of round ε (0.5: 5263.16 cells) between grid points: the δ of
#: an (0.5, 1e-6)-DP leaf at ε = 0.5 read 1.6e-5.
MAXIMUM_GRID_SPACING = 1e-4
#: The coarsest grid an accuracy coarser than the default may have (8 times 1e-4).
COARSE_ACCURACY_SPACING = 8 * MAXIMUM_GRID_SPACING
#: Mass beyond the per-mechanism grid on each side for the estimates made before any
#: composition (its length, the memory it needs); tilted compositions and lower tails
#: discretise only as far as the mass they may drop
#: (:func:`gaussdp.pld.composition.tilted_discretisation_tail`,
#: :func:`gaussdp.pld.lower_tail.lower_tail_discretisation_tail`).
_DISCRETISATION_TAIL = 1e-30
#: The same, under its public name (the entry point checks a loss's width at it).
ESTIMATE_TAIL = _DISCRETISATION_TAIL
#: ... and the tail a mechanism accounted alone leaves beyond its grid: it is not composed,
#: so no rounding allowance hides what goes to +∞ there (a floor under every δ).
SINGLE_MECHANISM_TAIL = _DISCRETISATION_TAIL
#: Mass beyond the per-mechanism grid on each side, for compositions computed plain:
#: T mechanisms then move at most T times this, a thousandth of the rounding allowance
#: u·4T that every δ of a plain composition carries anyway (as the window, see
#: :func:`gaussdp.pld.composition.window_tail`). On a subsampled Gaussian with q = 1e-4
#: the grid is then 3-4 times shorter than at 1e-30.
PLAIN_DISCRETISATION_TAIL = 1e-3 * 4.0 * UNIT_ROUNDOFF
#: Peak bytes per point of the composed grid, per row (plain: 1 row; optimistic and tilted:
#: 2, composed one after the other). Measured as growth of the peak RSS (the FFT's own
#: buffers included) on an 18M-point CIFAR-10 composition: 29 B/point plain, 41 optimistic,
#: 32 tilted, result arrays included (37.6, 48.3 and 44.2 with scipy.fft, whose plans stay).
BYTES_PER_POINT = 48
#: Refuse when the estimate exceeds this fraction of the available memory.
MEMORY_FRACTION = 0.8


def available_memory() -> int:
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


def _composed_length_estimate(
    losses: dict, counts: dict, spacing: float, index: int, plain: bool = False
) -> int:
    """FFT length of the composition at ``spacing``, estimated from a coarse grid.

    The composition window is set by Chernoff bounds on the composed loss, a
    width in nats that hardly depends on the grid; planning it on a grid of
    at most ~4000 points per mechanism costs milliseconds, and scaling its
    length by the ratio of spacings predicts the fine grid's length before
    anything large is allocated. ``plain``: the window of a composition computed
    without tilting (:func:`~gaussdp.pld.composition.plain_plan`, steps cut where
    the numerical path cuts them: :data:`PLAIN_DISCRETISATION_TAIL`, or
    :data:`SINGLE_MECHANISM_TAIL` for one mechanism alone), a third to a half of
    the tilted window's estimate on short runs at small q; else the tilted window
    (tails of 1e-30), which sizes memory.
    """
    if not plain:
        tail = _DISCRETISATION_TAIL
    elif sum(counts.values()) == 1:
        tail = SINGLE_MECHANISM_TAIL
    else:
        tail = PLAIN_DISCRETISATION_TAIL
    coarse = spacing
    for pair in losses.values():
        low, high = pair[index].support(tail)
        coarse = max(coarse, (high - low) / 4000.0)
    # The coarse grid is the same for every grid finer than it (the upper and the lower
    # bound's, the cheap upper grid): its window is planned once (6 plans of 1-2 ms each
    # made a quarter of a 50 ms accounting).
    key = (tuple((pair[index], counts[leaf]) for leaf, pair in losses.items()), coarse, tail, plain)
    try:
        hash(key)
    except TypeError:  # a loss that cannot be hashed (arrays in its fields): not kept
        return int(_coarse_length.__wrapped__(key) * coarse / spacing)
    return int(_coarse_length(key) * coarse / spacing)


@functools.lru_cache(maxsize=64)
def _coarse_length(key: tuple) -> int:
    """The composition window's length on the coarse grid of ``key`` (see above)."""
    terms, coarse, tail, plain = key
    items = [(discretise(loss, coarse, PESSIMISTIC, tail), count) for loss, count in terms]
    plan = pld_compose.plain_plan(items)[0] if plain else pld_compose.plan_composition(items)
    return plan.length


def _moments(pld: GridPLD) -> tuple[float, float]:
    """Mean and variance of the finite part of a discretised loss under P (0, 0 if none).

    A pair with no finite part (every loss +∞: a random allocation whose upper
    pair the grid cap left vacuous, σ = 0.16 in a group of three) adds nothing
    to the composed loss's moments; its mass at +∞ is the floor of every δ.
    """
    p = pld.p_masses
    total = float(p.sum())
    if not total > 0.0:
        return 0.0, 0.0
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


@dataclass(frozen=True)
class ErrorLaw:
    """How far apart the grids leave the bounds on ε, as a function of ε and the spacings.

    Connect-the-dots splits each loss between its two grid neighbours so that
    the Q-mass is kept; for a smooth loss distribution that adds about h²/12
    to the mean and h²/6 to the variance of the loss under P, per mechanism
    (measured on DP-SGD runs alike). Where ε ≈ m + z·√V (m, V the mean and
    variance of the composed loss, z = (ε − m)/√V), ε then moves by

        Δε ≈ T·h²/12 + z·T·h²/(12·√V) = (T·h²/12)·(1 + (ε − m)/V).

    Measured against fine references, this predicts the upper error within
    6% on five CIFAR-10 and ImageNet runs ((ε − m)/V from 2.5 to 14), and
    within the reference's own uncertainty on a 10⁶-step run
    ((ε − m)/V = 0.24), where the old law, 0.5·T·h²/√V, was several times
    optimistic. The binned lower bound moves by about half as much at the
    same spacing. Grids are chosen at ε̂ = m + 4√V, before any δ is asked
    for (:attr:`epsilon_estimate`). Where a query reaches a larger ε the gap
    grows with it in this law (σ = 1, q = 1e-5, T = 10⁶: 1.28 times at
    δ = 1e-9, as found), but not on every run (σ = 0.66, q = 6.5e-6,
    T = 1700, a spike and a rare far tail, is off by factors of 0.05 to 6
    across δ): the law chooses grids, and the gap found decides whether a
    finer one is needed (:class:`~gaussdp.accountant.guarantees.ProfileGuarantee`).

    Attributes
    ----------
    count : int
        T, the number of composed mechanisms.
    mean, variance : float
        m and V (> 0), of the composed loss under P (from coarse grids).
    """

    count: int
    mean: float
    variance: float

    @property
    def epsilon_estimate(self) -> float:
        """ε̂ = m + 4√V (at least 1e-3), where the grids are chosen."""
        return max(self.mean + 4.0 * math.sqrt(self.variance), 1e-3)

    def shift(self, epsilon: float) -> float:
        """Δε/h² at ε: (T/12)·(1 + (ε − m)/V)."""
        return self.count * (1.0 + (epsilon - self.mean) / self.variance) / 12.0

    @property
    def coefficient(self) -> float:
        """κ with the upper bound's relative ε error ≈ κ·h² near ε̂."""
        return self.shift(self.epsilon_estimate) / self.epsilon_estimate


def error_law(losses: dict, counts: dict) -> ErrorLaw | None:
    """The :class:`ErrorLaw` of a composition (None: the composed loss has no variance)."""
    mean, variance = _loss_moments(losses, counts)
    if variance <= 0:
        return None
    return ErrorLaw(sum(counts.values()), mean, variance)


def _relative_error_coefficient(losses: dict, counts: dict) -> float | None:
    """κ with the upper bound's relative ε error ≈ κ·h² at grid spacing h (:class:`ErrorLaw`)."""
    law = error_law(losses, counts)
    return None if law is None else law.coefficient


def gap_scale(epsilon: float, epsilon_scale: float = 1.0) -> float:
    """What ``accuracy`` is relative to: the bounds on ε are within accuracy·max(ε, s).

    With s = ``epsilon_scale`` (default 1): relative for ε ≥ s and absolute
    (accuracy·s) below. A relative gap of 5e-5 on ε = 0.045 would be 2e-6 of
    ε, digits nobody reports, bought with grids twenty times finer; s = 0
    asks for a purely relative gap (calibration to small targets does).
    """
    return max(epsilon, epsilon_scale)


#: The grids are chosen for this share of the accuracy (the error law is within ~10%, and
#: a gap just above the accuracy costs a second, finer grid: docs/accountant.md). 0.8 left
#: the report of σ = 1, q = 1e-5, T = 10⁶ 2% above the accuracy at δ = 1e-9 (whose ε is
#: 1.28 times the grids' estimate), and its second grid cost 40% of the report's time.
_ACCURACY_SHARE = 0.75


def _spacing_budget(
    losses: dict,
    counts: dict,
    accuracy: float,
    epsilon_scale: float = 1.0,
    law: ErrorLaw | bool | None = False,
) -> float | None:
    """B with gap ≈ κ·(h² + h_l²/2) ≤ share·a ⟺ h² + h_l²/2 ≤ B (None: any grid).

    a is the relative gap the accuracy allows at the estimated ε̂:
    accuracy·max(ε̂, s)/ε̂ (:func:`gap_scale`). ``law``: the
    :func:`error_law` if already computed.
    """
    if law is False:
        law = error_law(losses, counts)
    if law is None or law.coefficient <= 0:
        return None
    coefficient, epsilon_estimate = law.coefficient, law.epsilon_estimate
    relative = accuracy * gap_scale(epsilon_estimate, epsilon_scale) / epsilon_estimate
    return _ACCURACY_SHARE * relative / coefficient


def choose_grid_spacing(
    losses: dict,
    counts: dict,
    accuracy: float,
    epsilon_scale: float = 1.0,
    law: ErrorLaw | bool | None = False,
) -> float:
    """The upper bound's grid spacing, for a relative gap between the bounds of ``accuracy``.

    With both bounds on one spacing h the gap is about 1.5·κ·h²
    (:func:`_relative_error_coefficient`), so h = √(B/1.5) (:func:`_spacing_budget`).
    (A lower grid √2 times coarser and an upper one finer, h = √(B/2), composes 7%
    fewer points for the bounds, but the report's work is mostly on the upper
    grid, tilted in two rows, its steep curve and fit: the ImageNet report took
    0.193 s instead of 0.168 s.)
    At the default accuracy and finer ones, never coarser than 1e-4
    (dp_accounting's default): the default upper bound is as tight as that
    accountant's. A coarser accuracy may have a coarser grid, up to
    :data:`COARSE_ACCURACY_SPACING`: asking for fewer digits must buy time
    where 1e-4 gives far more than asked (a composition reaching ε = 549 took
    28 s at any accuracy). The spacing stays continuous in the run: snapped to
    a ladder 1e-4·2^k it jumped twofold between 3,691 and 3,690 steps of
    σ = 1, q = 0.0017 at accuracy 3e-3, and one step fewer raised the upper
    bound (0.50706 to 0.50792).
    """
    budget = _spacing_budget(losses, counts, accuracy, epsilon_scale, law)
    if budget is None:
        return MAXIMUM_GRID_SPACING
    spacing = math.sqrt(budget / 1.5)
    if spacing <= MAXIMUM_GRID_SPACING or accuracy <= DEFAULT_ACCURACY:
        return min(spacing, MAXIMUM_GRID_SPACING)
    return min(spacing, COARSE_ACCURACY_SPACING)


#: Where it is cheap, the upper bound is computed at the default accuracy (or a finer one)
#: on a grid finer than dp_accounting's accurate setting (1e-5): 1e-4/16, on the ladder
#: 1e-4·2^-k that keeps round ε (0.5, 0.05) on grid points, so that an (ε, δ)-DP part's
#: δ reads exactly, where each direction's composition on it is predicted at most 2^18
#: points long. Connect-the-dots errs by about h², so the upper bound is then about 0.4
#: times as far above ε as that accountant's at 1e-5 (docs/accountant.md, "Cheap digits").
#: A step of 1e-4/2 for longer runs (below dp_accounting's default instead of matching it
#: up to the rounding allowance) doubled the cost of every such run, and the test suite's.
CHEAP_UPPER_SPACING = MAXIMUM_GRID_SPACING / 16.0
#: ... where each direction's composition on it is predicted at most this many points.
CHEAP_UPPER_POINTS = 2**18


def upper_grid_spacing(
    spacing: float,
    losses: dict,
    counts: dict,
    accuracy: float,
) -> float:
    """The upper bound's grid: the accuracy's ``spacing``, or a finer one where that is cheap.

    The accuracy sets how far apart the two bounds may be. At the default
    accuracy and finer ones, the upper bound, the number users report, is
    computed on :data:`CHEAP_UPPER_SPACING` (1e-4/16, finer than
    dp_accounting's accurate setting of 1e-5) wherever every direction's
    composition there is predicted at most :data:`CHEAP_UPPER_POINTS` long
    (lengths scale as 1/h: the windows are set in nats by Chernoff bounds).
    The length predicted is the plain composition's, the one the bounds
    compute (σ = 0.78, q = 1.6e-5, T = 220: 99,511 points at the accuracy's
    grid where the tilted window's 317,934 had kept the upper bound off the
    fine grid, 1.5e-4 of ε above dp_accounting's at 1e-5).
    A coarser accuracy than the default keeps its own grid, so it never costs
    more, and stays the knob for speed (a sweep); the lower bound keeps the
    accuracy's grid (:func:`lower_grid_spacing`, from ``spacing``).
    """
    if spacing <= CHEAP_UPPER_SPACING or accuracy > DEFAULT_ACCURACY:
        return spacing
    directions = len(next(iter(losses.values())))
    longest = max(
        _composed_length_estimate(losses, counts, spacing, index, plain=True)
        for index in range(directions)
    )
    cheap = longest * (spacing / CHEAP_UPPER_SPACING) <= CHEAP_UPPER_POINTS
    return CHEAP_UPPER_SPACING if cheap else spacing


def blocks_allowed(losses: dict, counts: dict, accuracy: float, epsilon_scale: float = 1.0) -> bool:
    """Whether a run may be composed in blocks: judged on its grid at 10,000 steps.

    Blocks (:mod:`gaussdp.pld.blocks`) are made on grids finer than
    :data:`~gaussdp.pld.blocks.BLOCKS_BELOW_SPACING`, and err about 15 times less
    than single steps. The grid the accuracy asks for gets finer as the run gets
    longer, so judged on the run's own grid one step *more* could cross that
    ceiling into blocks and read a smaller ε (σ = 1, q = 0.0023: 3.5500178 at
    δ = 1e-5 with T = 74,738, single steps, and 3.5499606 with T = 74,739, in
    blocks). Judged on the grid :func:`choose_grid_spacing` gives the same
    composition scaled to :data:`~gaussdp.pld.composition.TILT_FROM_COMPOSITIONS`
    steps (where blocks begin), the answer no longer changes along T: that grid
    is at least as coarse as the run's own, so a run allowed blocks has its own
    grid below the ceiling too. (Every run of the regime benchmark in blocks
    keeps them.) True for runs of at most that many steps: their own grid decides.
    """
    total = sum(counts.values())
    if total <= pld_compose.TILT_FROM_COMPOSITIONS:
        return True
    share = pld_compose.TILT_FROM_COMPOSITIONS / total
    scaled = {leaf: max(1, round(count * share)) for leaf, count in counts.items()}
    law = error_law(losses, scaled)
    spacing = choose_grid_spacing(losses, scaled, accuracy, epsilon_scale, law=law)
    return spacing < BLOCKS_BELOW_SPACING


#: On the coarsest grid (:data:`MAXIMUM_GRID_SPACING`, dp_accounting's default), where each
#: direction's composition is at most this many points, the upper bound is tilted wherever
#: its rounding allowance costs ε more than :data:`CAPPED_ALLOWANCE` of itself: the grid is
#: that accountant's, and so is the upper bound but for the allowance (5.7e-9 of ε on
#: σ = 1, q = 0.01, T = 1000, δ = 1e-5, where its ε is 5e-9 below ours). A tilted
#: composition of 2^18 points takes a few hundredths of a second.
CAPPED_TILT_POINTS = 2**18
#: ... the share of ε the allowance may cost there (relative to ε; δ(ε) alike).
CAPPED_ALLOWANCE = 1e-9


def capped_upper_allowance(
    spacing: float,
    losses: dict,
    counts: dict,
    accuracy: float | None,
    estimate: Callable[[float, int], int] | None = None,
    indices=None,
) -> float | None:
    """The share of ε the upper bound's rounding allowance may cost (None: the accuracy's rule).

    On the coarsest grid (``spacing`` at :data:`MAXIMUM_GRID_SPACING`), at
    the default accuracy or a finer one, where every direction's composition
    is predicted at most :data:`CAPPED_TILT_POINTS` long:
    :data:`CAPPED_ALLOWANCE`, so that the default upper bound is at least as
    tight as dp_accounting's default on the same grid rather than equal to it
    up to the allowance. ``estimate(grid, index)``: direction ``index``'s composed
    length at ``grid`` (default :func:`_composed_length_estimate`); ``indices``: the
    directions composed (None: all).
    """
    if accuracy is None or accuracy > DEFAULT_ACCURACY or spacing < MAXIMUM_GRID_SPACING:
        return None
    if estimate is None:

        def estimate(grid: float, index: int) -> int:
            return _composed_length_estimate(losses, counts, grid, index)

    if indices is None:
        indices = range(len(next(iter(losses.values()))))
    if max(estimate(spacing, index) for index in indices) > CAPPED_TILT_POINTS:
        return None
    return CAPPED_ALLOWANCE


#: The lower bound's grid is at most this many times coarser than the upper bound's,
#: and only for compositions of at least _LOWER_COARSENING_FROM mechanisms.
_LOWER_COARSENING = 8.0
_LOWER_COARSENING_FROM = 100


def lower_grid_spacing(
    losses: dict,
    counts: dict,
    spacing: float,
    accuracy: float,
    epsilon_scale: float = 1.0,
    law: ErrorLaw | bool | None = False,
) -> float:
    """A grid spacing for the binned lower bound: coarser where the accuracy allows.

    The lower bound's error at spacing h_l is about κ·h_l²/2 (half the upper
    bound's, :func:`_relative_error_coefficient`), so it gets what the upper
    bound at its own spacing h leaves of the budget: h_l = √(2·(B − h²)),
    between h and 8h, rounded down to h·2^(k/2) (runs that differ only in T
    then share a grid, as sweeps do). Where the upper grid was capped this is
    coarser than h; elsewhere it is h.
    Only the distance between the bounds depends on it: both stay certified.
    """
    if sum(counts.values()) < _LOWER_COARSENING_FROM:
        return spacing  # nothing to save: a few mechanisms compose in no time
    budget = _spacing_budget(losses, counts, accuracy, epsilon_scale, law)
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
    needed = BYTES_PER_POINT * length * rows
    if needed <= MEMORY_FRACTION * memory:
        return
    optional_tilt = total_count < pld_compose.TILT_FROM_COMPOSITIONS
    if rows == 2 and optional_tilt and BYTES_PER_POINT * length <= MEMORY_FRACTION * memory:
        reachable = pld_compose.rounding_allowance(length, total_count)
        raise InvalidParameterError(
            f"a delta floor below {reachable:.2g} needs a second, tilted composition of "
            f"{length:,} points (about {needed / 1e9:.1f} GB in all), more than "
            f"{MEMORY_FRACTION:.0%} of the {memory / 1e9:.1f} GB available; the smallest "
            f"reachable delta_floor is {reachable:.2g} (a delta_tail of {100 * reachable:.2g})"
        )
    remedy = (
        f"use a coarser accuracy (grid spacing now {spacing:.3g})"
        if spacing < MAXIMUM_GRID_SPACING
        else f"the grid is at its coarsest spacing ({MAXIMUM_GRID_SPACING:g}) already: the "
        "privacy loss spans more nats than this machine can hold"
    )
    raise InvalidParameterError(
        f"this accuracy needs a grid of {about}{length:,} points (about "
        f"{needed / 1e9:.1f} GB), more than {MEMORY_FRACTION:.0%} of the "
        f"{memory / 1e9:.1f} GB available; {remedy}"
    )
