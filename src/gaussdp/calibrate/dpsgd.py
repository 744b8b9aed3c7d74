"""DP-SGD's noise multiplier for a target: :func:`noise_multiplier`, started from the
central limit theorem's μ-GDP guess (Dong, Roth & Su 2022, §5.2).
"""

from __future__ import annotations

import math

from gaussdp import mechanisms as m
from gaussdp._validation import check_real
from gaussdp.accountant import DEFAULT_ACCURACY
from gaussdp.calibrate.search import (
    DEFAULT_COARSE_GRID_SPACING,
    DEFAULT_RTOL,
    Calibration,
    CalibrationError,
    _calibrate,
    _Evaluator,
    _make_evaluator,
    parameter,
)
from gaussdp.calibrate.targets import (
    Advantage,
    EpsilonDelta,
    Predicate,
    Target,
    TPRAtFPR,
    as_target,
)


def _clt_sigma(mu: float, sampling_probability: float, steps: int) -> float:
    """σ with μ_CLT = q·√(T(e^{1/σ²} − 1)) = μ (Dong, Roth & Su 2022, Corollary 5.4)."""
    ratio = (mu / sampling_probability) ** 2 / steps
    return 1.0 / math.sqrt(math.log1p(ratio))


def noise_multiplier(
    target,
    *,
    sampling_probability: float,
    steps: int,
    neighbouring: m.Neighbouring | None = None,
    bracket: tuple[float, float] | None = None,
    rtol: float = DEFAULT_RTOL,
    accuracy: float = DEFAULT_ACCURACY,
    coarse_grid_spacing: float | None = DEFAULT_COARSE_GRID_SPACING,
) -> Calibration:
    """The smallest DP-SGD noise multiplier σ that meets a privacy target.

    The mechanism is :class:`gaussdp.DPSGD` (``steps`` rounds of a
    Poisson-subsampled Gaussian with rate ``sampling_probability``). Without
    a ``bracket`` the search starts from the σ whose central-limit μ-GDP
    (Dong, Roth & Su 2022, Corollary 5.4: μ = q√(T(e^{1/σ²} − 1))) matches
    the target — a first guess only — and doubles or halves it until the
    accountant the search uses brackets the answer: the low end fails the
    target and the high end meets it (located with the coarse accountant,
    both ends re-checked with the default one). Upwards it stops at σ = 10⁶
    (the target is then unreachable); downwards at the least private end,
    σ = 0.05 or where an attack's advantage is already as large as DP-SGD with
    this q and T allows, and raises :class:`CalibrationError` saying the target
    is met across the whole range tried. The answer itself always comes from
    the pessimistic accountant (see :func:`parameter`).

    Parameters
    ----------
    target : Target or (epsilon, delta)
    sampling_probability : float
        q ∈ (0, 1].
    steps : int
        T ≥ 1.
    neighbouring, rtol, accuracy, coarse_grid_spacing
        As in :func:`parameter`.
    bracket : (float, float), optional
        Search range for σ.

    Returns
    -------
    Calibration
        ``value`` is σ.

    Examples
    --------
    >>> result = noise_multiplier(Advantage(0.1), sampling_probability=0.01, steps=1000)
    >>> round(result.value, 2), result.achieved <= 0.1
    (1.42, True)
    """
    target = as_target(target)
    q = float(
        check_real("sampling_probability", sampling_probability, low=0.0, high=1.0, low_open=True)
    )
    steps = m.DPSGD(1.0, q, steps).steps  # validates

    def make(sigma: float) -> m.Mechanism:
        return m.DPSGD(sigma, q, steps)

    if bracket is not None:
        return parameter(
            make,
            target,
            bracket=bracket,
            more_private="high",
            neighbouring=neighbouring,
            rtol=rtol,
            accuracy=accuracy,
            coarse_grid_spacing=coarse_grid_spacing,
            name="noise_multiplier",
        )
    rtol = float(check_real("rtol", rtol, low=1e-15, high=0.1))
    # One evaluator for the bracket and the search: the bracket's accountings are reused.
    evaluator = _make_evaluator(make, target, neighbouring, accuracy, coarse_grid_spacing, False)
    low, high = _dpsgd_bracket(evaluator, q, steps)
    try:
        return _calibrate(evaluator, high, low, rtol, False, "noise_multiplier")
    except CalibrationError:
        # The low end was left unchecked with the default accountant (it clearly fails
        # with the coarse one) and the search found that it meets the target after all:
        # the bracket again, that end checked and moved.
        if (low, "fine") not in evaluator.cache or not evaluator(low, "fine")[0]:
            raise
        low, high = _dpsgd_bracket(evaluator, q, steps, check_low=True)
        return _calibrate(evaluator, high, low, rtol, False, "noise_multiplier")


#: The automatic σ bracket of :func:`noise_multiplier` stays within [_SIGMA_MIN, _SIGMA_MAX].
#: Below about σ = 0.027 the privacy loss 1/(2σ²) overflows exp(); well before that the
#: accountant's grid gets huge (CIFAR-10 setting at σ = 0.05: 20 s on the coarse grid).
_SIGMA_MIN = 0.05
_SIGMA_MAX = 1e6
# The least private end is also reached where an attack's advantage (lower bound) is
# within this relative distance of the largest that DP-SGD with this q and T allows.
_SATURATION_RTOL = 1e-6


def _largest_advantage(q: float, steps: int) -> float:
    """TV distance of DP-SGD as σ → 0: the record is used in some step, 1 − (1 − q)^T."""
    return 1.0 if q >= 1.0 else -math.expm1(steps * math.log1p(-q))


def _saturates(target: Target, q: float, steps: int) -> bool:
    """Whether the target's answer stops changing once the advantage is saturated.

    Advantage, TPR at FPR, a predicate (we cannot tell; assume so) and ε at a δ
    at least the largest advantage (ε = 0 for every σ) do; ε at a smaller δ and
    μ keep growing as σ → 0, so only the σ floor stops them.
    """
    if isinstance(target, (Advantage, TPRAtFPR, Predicate)):
        return True
    if isinstance(target, EpsilonDelta):
        return target.delta >= _largest_advantage(q, steps)
    return False


#: The low end of the automatic bracket is not checked with the default accountant where
#: the coarse one's measure there is above the target by more than this share of it.
_CLEARLY_FAILING = 0.01


def _dpsgd_bracket(
    evaluator: _Evaluator, q: float, steps: int, check_low: bool = False
) -> tuple[float, float]:
    """A σ bracket (failing low end, meeting high end) certified with the search's accountant.

    A closed-form guess (the central-limit μ of the target's μ-like value) is
    grown geometrically with the cheap coarse accountant to locate the answer,
    then both ends are re-checked with the fine (default) accountant that the
    search uses — the coarse bound is looser, so the coarse bracket's low end can
    already meet the target — and moved until the low end fails and the high end
    meets. The low end is re-checked only where the coarse measure there is within
    :data:`_CLEARLY_FAILING` of the target (or ``check_low``): at a small σ that
    check was the search's costliest accounting (a quarter of a μ target's time), and
    the search itself evaluates the low end where it needs it (where it then meets
    the target, :func:`noise_multiplier` brackets again with ``check_low``).
    Towards less privacy the search stops at the least private end
    (σ = ``_SIGMA_MIN``, or where an attack's advantage is already as large as
    DP-SGD with this q and T allows) with a :class:`CalibrationError`; towards
    more privacy at σ = ``_SIGMA_MAX``, where
    :func:`~gaussdp.calibrate.search._search` reports the target as unreachable.
    """
    target = evaluator.target
    mu = target.guess_mu()
    guess = _clt_sigma(mu, q, steps) if mu is not None and mu > 0 else 1.0
    guess = min(max(guess, 1.25 * _SIGMA_MIN), _SIGMA_MAX / 4)
    saturates = _saturates(target, q, steps)
    largest = _largest_advantage(q, steps)

    def least_private(sigma: float, phase: str) -> bool:
        if sigma <= _SIGMA_MIN:
            return True
        if not saturates:
            return False
        accounting = evaluator(sigma, phase)[2]
        lower = float(accounting.delta_bounds(0.0)[0])
        return lower >= (1.0 - _SATURATION_RTOL) * largest

    def met_everywhere(sigma: float, phase: str) -> CalibrationError:
        value = evaluator(sigma, phase)[1]
        reached = (
            f"{target.quantity} = {value:.6g} there"
            if value is not None
            else "the predicate is true there"
        )
        if sigma <= _SIGMA_MIN:
            why = (
                "the smallest noise multiplier searched automatically; to search smaller "
                "ones pass bracket=(low, high), though below about 0.03 the privacy loss "
                "overflows"
            )
        else:
            why = (
                "an attack's advantage there is already within "
                f"{_SATURATION_RTOL:g} (relative) of {largest:.6g}, the largest that DP-SGD "
                f"with q = {q:g} and T = {steps} allows at any noise multiplier, so the "
                "target does not bind"
            )
        return CalibrationError(
            f"the target is met across the whole range tried: {target.describe()} is met at "
            f"every noise_multiplier tried down to {sigma!r} ({reached}), the least private "
            f"end of the automatic search ({why})"
        )

    # 1. Locate with the cheap accountant (the fine one if there is no coarse phase).
    explore = "coarse" if evaluator.coarse_spacing is not None else "fine"
    low, high = guess / 1.25, guess * 1.25
    if evaluator(low, explore)[0]:
        while evaluator(low, explore)[0]:
            if least_private(low, explore):
                raise met_everywhere(low, explore)
            high, low = low, max(low / 2, _SIGMA_MIN)
    else:
        while not evaluator(high, explore)[0] and high < _SIGMA_MAX:
            low, high = high, min(high * 2, _SIGMA_MAX)
    if explore == "fine":
        return low, high
    # 2. Certify both ends with the search's accountant, moving them as needed.
    value, threshold = evaluator(low, explore)[1], evaluator.target.threshold()
    clearly_failing = (
        value is not None
        and threshold is not None
        and value > threshold + _CLEARLY_FAILING * abs(threshold)
    )
    while (check_low or not clearly_failing) and evaluator(low, "fine")[0]:
        if least_private(low, "fine"):
            raise met_everywhere(low, "fine")
        high, low = low, max(low / 2, _SIGMA_MIN)
    while not evaluator(high, "fine")[0]:
        if high >= _SIGMA_MAX:
            break  # _search reports the target as unreachable
        low, high = high, min(high * 2, _SIGMA_MAX)
    return low, high
