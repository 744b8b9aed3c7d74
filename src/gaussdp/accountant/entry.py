"""The entry point: :func:`account`, from a mechanism description to an Accounting.

It reads the description's leaves (:func:`gaussdp.pld.leaves.leaves`) and
chooses the path: a closed form (perfect privacy, compositions of Gaussian
mechanisms, compositions of pure-DP mechanisms), else the numerical path
(:mod:`gaussdp.accountant.numerical`) on the grids the accuracy asks for
(:mod:`gaussdp.accountant.grids`). Group and Parallel parts are accounted
by calling :func:`account` again (:func:`dominating_losses` passes it down
to the engine).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import replace

from gaussdp import gdp
from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError, check_real
from gaussdp.accountant import grids
from gaussdp.accountant.grids import DEFAULT_ACCURACY
from gaussdp.accountant.guarantees import (
    _ExactAtomsGuarantee,
    _GaussianGuarantee,
    _PerfectPrivacy,
)
from gaussdp.accountant.numerical import _numerical, caveats_of
from gaussdp.accountant.pure_dp import _pure_dp_profiles
from gaussdp.accountant.result import Accounting
from gaussdp.mechanisms.samplers import as_if_poisson
from gaussdp.pld.dominating_pairs import dominating_losses as pair_losses
from gaussdp.pld.leaves import leaves as leaves_of
from gaussdp.pld.losses import PrivacyLoss


def dominating_losses(
    leaf: m.Mechanism, neighbouring: m.Neighbouring, loss_accuracy: float | None = None
) -> tuple[PrivacyLoss, PrivacyLoss]:
    """The (remove, add) privacy losses of one leaf, its parts accounted here.

    :func:`gaussdp.pld.dominating_pairs.dominating_losses`, given this
    accountant for the parts of Group and Parallel leaves (their pessimistic
    trade-off curves, :meth:`Accounting.tradeoff`): the accounting is passed
    down to the engine rather than imported by it. ``loss_accuracy``: the gap
    one use of a leaf computed between two pairs (random allocation) may add.
    """
    return pair_losses(leaf, neighbouring, tradeoff_of=_tradeoff_of, loss_accuracy=loss_accuracy)


#: The widest privacy loss (in nats, between the ends a grid would cover) accounted on a
#: grid: a grid of spacing 1e-4 across it would need 1e10 points. Wider losses come from
#: a noise scale so small that the mechanism protects next to nothing.
_WIDEST_LOSS = 1e6


def _checked_losses(leaf: m.Mechanism, neighbouring: m.Neighbouring, loss_accuracy: float):
    """:func:`dominating_losses`, refusing a loss too wide (or not finite) for any grid.

    A noise multiplier of 1e-100 makes losses of 1e200 nats: their grid was NaN
    (and account() failed with "cannot convert float NaN to integer"), or the
    computation overflowed. One line names the leaf instead.
    """
    try:
        pair = dominating_losses(leaf, neighbouring, loss_accuracy)
        ends = [end for loss in pair for end in loss.support(grids.ESTIMATE_TAIL)]
    except (OverflowError, FloatingPointError) as error:
        raise InvalidParameterError(
            f"{leaf}: its privacy loss overflows ({error}); its noise is far too small "
            "to account (it protects next to nothing)"
        ) from None
    width = max(ends) - min(ends)
    if not math.isfinite(width) or width > _WIDEST_LOSS:
        raise InvalidParameterError(
            f"{leaf}: its privacy loss spans {width:.3g} nats, more than the {_WIDEST_LOSS:g} "
            "a grid can hold; its noise is far too small to account (it protects next to "
            "nothing)"
        )
    return pair


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
        grid is never coarser than 1e-4, and at this accuracy or finer it is
        1e-4/16 wherever its compositions there are short:
        :func:`~gaussdp.accountant.grids.upper_grid_spacing`). The bounds are certified whatever
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
    epsilon_scale = float(
        check_real("epsilon_scale", epsilon_scale, low=0.0, high=math.inf, high_open=True)
    )
    if grid_spacing is not None:
        grid_spacing = float(
            check_real("grid_spacing", grid_spacing, low=0.0, high=1.0, low_open=True)
        )
    leaves = leaves_of(mechanism, neighbouring)
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
    losses = {
        leaf: _checked_losses(leaf, neighbouring, accuracy / count)
        for leaf, count in leaves.items()
    }
    law = None if grid_spacing else grids.error_law(losses, leaves)
    spacing = grid_spacing or grids.choose_grid_spacing(
        losses, leaves, accuracy, epsilon_scale, law=law
    )
    lower_spacing = (
        grid_spacing
        if grid_spacing
        else grids.lower_grid_spacing(losses, leaves, spacing, accuracy, epsilon_scale, law=law)
    )
    estimates: dict[tuple[float, int], int] = {}
    accuracy_spacing = spacing  # the upper grid the accuracy asks for

    def estimate(grid: float, index: int) -> int:
        if (grid, index) not in estimates:
            estimates[grid, index] = grids._composed_length_estimate(losses, leaves, grid, index)
        return estimates[grid, index]

    if not grid_spacing:
        spacing = grids.upper_grid_spacing(spacing, losses, leaves, accuracy)
    # (a given spacing is the same at every T: its own grid decides)
    blocks = bool(grid_spacing) or grids.blocks_allowed(losses, leaves, accuracy, epsilon_scale)
    result = _numerical(
        mechanism,
        neighbouring,
        leaves,
        losses,
        (spacing, lower_spacing),
        delta_floor,
        progress,
        # Bounds apart by what is unknown (a caveat), not by the grid: no finer grid narrows them.
        accuracy=None if grid_spacing or caveats_of(losses) else accuracy,
        epsilon_scale=epsilon_scale,
        reaccount=lambda finer: account(
            mechanism,
            neighbouring=neighbouring,
            accuracy=finer,
            progress=progress,
            epsilon_scale=epsilon_scale,
        ),
        estimates=estimates,
        accuracy_spacing=accuracy_spacing,
        blocks=blocks,
    )
    poisson = as_if_poisson(mechanism) if neighbouring is m.Neighbouring.ADD_REMOVE else None
    if poisson is None:
        return result
    # A shuffled run: keep, for comparison, the accounting users often report in its place.
    return replace(
        result, _as_if_poisson=functools.cache(lambda: account(poisson, accuracy=accuracy))
    )
