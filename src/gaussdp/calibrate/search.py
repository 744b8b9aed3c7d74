"""The search: the least private parameter that meets a target, bracketed on the safe side.

:func:`parameter` keeps a bracket whose private end meets the target and whose
other end fails, shrinks it (coarse grid first, then the default accountant) and
returns the private end as a :class:`Calibration`; see :mod:`gaussdp.calibrate`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from gaussdp import mechanisms as m
from gaussdp._numerics import monotone_root
from gaussdp._validation import InvalidParameterError, check_real
from gaussdp.accountant import DEFAULT_ACCURACY, Accounting, account
from gaussdp.calibrate.targets import Mu, Target, as_target

#: Relative tolerance on the parameter (continuous parameters).
DEFAULT_RTOL = 1e-5
#: Grid spacing (nats) of the coarse search phase.
DEFAULT_COARSE_GRID_SPACING = 1e-3
# Relative width to which the coarse phase narrows the bracket.
_COARSE_RTOL = 1e-3
# Bracket expansion: at most this many doublings of the search interval.
_MAX_EXPANSIONS = 60


class CalibrationError(InvalidParameterError):
    """No parameter in the search range meets the target, or the range is not a bracket.

    The message says what was tried and the best value reached.
    """


@dataclass(frozen=True, eq=False)
class Calibration:
    """The result of a calibration: a parameter that meets the target, and how close it is.

    Attributes
    ----------
    value : float or int
        The calibrated parameter. ``make_mechanism(value)`` accounted with the
        pessimistic accountant (:func:`gaussdp.account` at ``accuracy``) meets
        the target.
    failing_value : float or int or None
        The parameter one tolerance step less private, which fails the target
        (None when ``value`` is the least private end of the search range and
        meets the target there: the target does not bind).
    achieved, failing_achieved : float or None
        The measured quantity (ε, μ, advantage or TPR; an upper bound) at
        ``value`` and at ``failing_value``; None for a plain predicate.
    target : Target
    mechanism : Mechanism
        ``make_mechanism(value)``.
    accounting : Accounting
        Its accounting (the re-check).
    evaluations : int
        How many accountings the search ran (coarse and fine).
    failing_accounting : Accounting or None
        The accounting of ``failing_value`` (the same accountant).
    """

    value: float | int
    failing_value: float | int | None
    achieved: float | None
    failing_achieved: float | None
    target: Target
    mechanism: m.Mechanism
    accounting: Accounting = field(repr=False)
    evaluations: int = 0
    parameter_name: str = "parameter"
    failing_accounting: Accounting | None = field(default=None, repr=False)

    @property
    def failing_reason(self) -> str | None:
        """Why ``failing_value`` fails the target: the conditions it fails, as text.

        For a μ target with a regret cap this says whether the neighbour fails
        on μ or on the regret (its μ can be below the target).
        """
        if self.failing_accounting is None:
            return None
        return "; ".join(self.target.unmet_conditions(self.failing_accounting)) or None

    def report_values(self) -> dict[str, float | None] | None:
        """For a μ target: μ, regret and failure probability at both ends (else None)."""
        if not isinstance(self.target, Mu):
            return None
        _, regret, delta_tail = self.target.report_values(self.accounting)
        values: dict[str, float | None] = {
            "regret": regret,
            "delta_tail": delta_tail,
            "failing_regret": None,
            "failing_delta_tail": None,
        }
        if self.failing_accounting is not None:
            _, failing_regret, failing_tail = self.target.report_values(self.failing_accounting)
            values["failing_regret"] = failing_regret
            values["failing_delta_tail"] = failing_tail
        return values

    @property
    def relative_gap(self) -> float | None:
        """|value − failing_value| / |value|: how close the answer is to the boundary."""
        if self.failing_value is None:
            return None
        scale = abs(self.value) if self.value != 0 else 1.0
        return abs(self.value - self.failing_value) / scale

    def describe(self) -> str:
        """A few lines for people."""
        name = self.parameter_name
        lines = [f"{name} = {self.value!r}", f"  meets: {self.target.describe()}"]
        quantity = self.target.quantity
        threshold = self.target.threshold()

        def number(x: float) -> str:
            # 12 digits, or all of them when 12 would hide which side of the target x is.
            text = f"{x:.12g}"
            if threshold is not None and (float(text) <= threshold) != (x <= threshold):
                return repr(float(x))
            return text

        if self.achieved is not None:
            lines.append(f"  {quantity} = {number(self.achieved)} (upper bound, re-checked)")
        if self.failing_value is not None:
            capped = isinstance(self.target, Mu) and self.target.has_caps
            shown = []
            if self.failing_achieved is not None:
                shown.append(f"{quantity} = {number(self.failing_achieved)}")
            values = self.report_values() if capped else None
            if values is not None and values["failing_regret"] is not None:
                shown.append(f"regret = {values['failing_regret']:.6g}")
            lines.append(
                f"  {name} = {self.failing_value!r}, one tolerance step less private, fails"
                + (f" ({', '.join(shown)})" if shown else "")
            )
            reason = self.failing_reason
            if capped and reason is not None:
                # With a cap the neighbour can fail with mu below the target: say why.
                lines.append(f"    fails on: {reason}")
        if isinstance(self.target, Mu) and self.accounting.mu is None:
            _, regret, delta_tail = self.target.report_values(self.accounting)
            lines.append(
                f"  mu-GDP except with probability {delta_tail:.3g} (regret <= {regret:.3g}; "
                "from the report)"
            )
        lines.append(f"  mechanism: {self.mechanism.describe()}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.describe()


# ---------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------


class _Evaluator:
    """Accounts ``make_mechanism(x)`` and asks the target, caching by (x, phase)."""

    def __init__(self, make_mechanism, target, neighbouring, accuracy, coarse_spacing, integer):
        self.make_mechanism = make_mechanism
        self.target = target
        self.neighbouring = neighbouring
        self.accuracy = accuracy
        self.coarse_spacing = coarse_spacing
        self.integer = integer
        self.cache: dict[tuple[float, str], tuple[bool, float | None, Accounting]] = {}
        self.evaluations = 0

    def mechanism(self, x):
        value = int(x) if self.integer else float(x)
        mechanism = self.make_mechanism(value)
        if isinstance(mechanism, m.Pipeline):
            return mechanism
        if not isinstance(mechanism, m.Mechanism):
            raise InvalidParameterError(
                f"make_mechanism({value!r}) must return a gaussdp mechanism description, "
                f"got {type(mechanism).__name__}"
            )
        return mechanism

    def __call__(self, x, phase: str) -> tuple[bool, float | None, Accounting]:
        key = (x, phase)
        if key not in self.cache:
            mechanism = self.mechanism(x)
            options: dict[str, Any] = {"neighbouring": self.neighbouring}
            if phase == "coarse":
                options["grid_spacing"] = self.coarse_spacing
            else:
                options["accuracy"] = self.accuracy
                # relative at every ε: a small target is met as tightly as a large one
                options["epsilon_scale"] = 0.0
            accounting = account(mechanism, **options)
            value = self.target.measure(accounting)
            if value is not None and math.isnan(value):
                raise InvalidParameterError(
                    f"the target's measure is nan at parameter {x!r}; cannot calibrate"
                )
            met = self.target.is_met(accounting, value)
            self.evaluations += 1
            self.cache[key] = (met, value, accounting)
        return self.cache[key]

    def excess(self, x, phase: str) -> float:
        """> 0 where the target fails, ≤ 0 where it is met (for the root finder)."""
        met, value, accounting = self(x, phase)
        relative = self.target.relative_excess(accounting)
        if relative is not None and not math.isnan(relative):
            return min(relative, 0.0) if met else max(relative, 1e-300)
        threshold = self.target.threshold()
        if value is None or threshold is None:
            return -1.0 if met else 1.0
        gap = value - threshold
        # `met` decides (a regret cap can fail with μ below its threshold).
        return min(gap, 0.0) if met else max(gap, 1e-300)


def _snap(x, integer: bool):
    return round(x) if integer else float(x)


def _shrink(
    evaluator: _Evaluator,
    phase: str,
    private: float,
    failing: float,
    rtol: float,
    integer: bool,
) -> tuple[float, float]:
    """Shrink [private, failing] (private meets, failing fails) to rtol; return both ends."""
    if integer:
        while abs(failing - private) > 1:
            middle = (private + failing) // 2
            if evaluator(middle, phase)[0]:
                private = middle
            else:
                failing = middle
        return private, failing
    low, high = min(private, failing), max(private, failing)
    side = "low" if private < failing else "high"
    ends: dict[str, float] = {}

    def func(x: float) -> float:
        return evaluator.excess(x, phase)

    result = monotone_root(func, low, high, side=side, xtol=0.0, rtol=rtol)
    ends["private"] = result
    # The other end of the final bracket is the nearest evaluated point that fails.
    failing_points = [
        x
        for (x, p), (met, _, _) in evaluator.cache.items()
        if p == phase and not met and (x > result if side == "low" else x < result)
    ]
    other = min(failing_points, key=lambda x: abs(x - result))
    return result, other


def _coarse_root(evaluator: _Evaluator, private: float, failing: float, integer: bool):
    """Locate the coarse boundary (Illinois regula falsi), stopping as soon as it is close.

    Only a location is needed here (the fine phase certifies the answer), so the
    search stops when the private end's measure is within 1e-6 (relative) of
    the threshold, or the bracket is narrower than ``_COARSE_RTOL``.
    """
    threshold = evaluator.target.threshold()
    if integer or threshold is None:
        return _shrink(evaluator, "coarse", private, failing, _COARSE_RTOL, integer)
    a, b = private, failing
    f_a, f_b = evaluator.excess(a, "coarse"), evaluator.excess(b, "coarse")
    retained = 0
    close = 1e-6 * max(abs(threshold), 1e-300)
    for _ in range(_MAX_EXPANSIONS):
        if abs(b - a) <= _COARSE_RTOL * max(abs(a), abs(b)) or -f_a <= close:
            break
        c = 0.5 * (a + b)
        if math.isfinite(f_a) and math.isfinite(f_b) and f_b != f_a:
            secant = a - f_a * (b - a) / (f_b - f_a)
            if min(a, b) < secant < max(a, b):
                c = secant
        f_c = evaluator.excess(c, "coarse")
        if f_c <= 0:
            a, f_a = c, f_c
            if retained == -1 and math.isfinite(f_b):
                f_b *= 0.5
            retained = -1
        else:
            b, f_b = c, f_c
            if retained == 1 and math.isfinite(f_a):
                f_a *= 0.5
            retained = 1
    return a, b


def _search(
    evaluator: _Evaluator,
    private_end: float,
    other_end: float,
    rtol: float,
    integer: bool,
    name: str,
) -> tuple[float, float | None]:
    """The calibrated parameter (meets, fine phase) and the failing neighbour."""
    target = evaluator.target

    def best_message(x: float, phase: str) -> str:
        _met, value, _ = evaluator(x, phase)
        if value is None:
            return f"the predicate is false at {name} = {x!r}"
        return f"{target.quantity} = {value:.6g} at {name} = {x!r}"

    # 1. The private end must meet the target (checked with the fine accountant if the
    #    coarse one says no, since the fine bound is tighter). The coarse phase only
    #    runs on the numerical path (closed forms ignore the grid), and only when the
    #    coarse accountant meets the target at the private end: for targets near the
    #    coarse grid's resolution (ε of order 1e-3, say) its bound never meets them and
    #    it cannot locate anything.
    use_coarse = evaluator.coarse_spacing is not None
    if use_coarse:
        met, _, accounting = evaluator(private_end, "coarse")
        use_coarse = met and accounting.grid_spacing is not None
    if not use_coarse:
        if not evaluator(private_end, "fine")[0]:
            raise CalibrationError(
                f"target unreachable: {target.describe()} is not met even at the most private "
                f"end of the search range; best value reached: "
                f"{best_message(private_end, 'fine')}"
            )
    # 2. Coarse phase: locate the boundary cheaply.
    if use_coarse and not evaluator(other_end, "coarse")[0]:
        coarse_private, coarse_failing = _coarse_root(evaluator, private_end, other_end, integer)
    else:
        coarse_private, coarse_failing = private_end, other_end
    # 3. Fine phase: bracket the boundary near the coarse answer, then shrink.
    centre = coarse_private
    width = abs(coarse_failing - coarse_private)
    width = max(width, 1 if integer else abs(centre) * _COARSE_RTOL)
    direction = 1.0 if other_end > private_end else -1.0
    if use_coarse and not integer and centre != coarse_failing:
        centre, width = _secant_start(evaluator, centre, private_end, other_end, width, rtol)
    if evaluator(centre, "fine")[0]:
        fine_private = centre
        fine_failing = None
        step = width
        for _ in range(_MAX_EXPANSIONS):
            candidate = centre + direction * step
            if (candidate - other_end) * direction >= 0:
                candidate = other_end
            candidate = _snap(candidate, integer)
            if evaluator(candidate, "fine")[0]:
                fine_private = candidate
                if candidate == other_end:
                    break
                step *= 2.0
            else:
                fine_failing = candidate
                break
        if fine_failing is None:
            if fine_private == other_end:
                raise CalibrationError(
                    f"the search range does not bracket the target: {target.describe()} is "
                    f"already met at the least private end; {best_message(other_end, 'fine')}. "
                    "Widen the range towards less privacy"
                )
            raise CalibrationError(  # pragma: no cover - needs a wildly non-monotone target
                f"could not find a failing {name} near {fine_private!r}"
            )
    else:
        fine_failing = centre
        fine_private = None
        step = width
        for _ in range(_MAX_EXPANSIONS):
            candidate = centre - direction * step
            if (candidate - private_end) * direction <= 0:
                candidate = private_end
            candidate = _snap(candidate, integer)
            if evaluator(candidate, "fine")[0]:
                fine_private = candidate
                break
            fine_failing = candidate
            step *= 2.0
        if fine_private is None:  # pragma: no cover - the private end was checked above
            raise CalibrationError(f"could not find a {name} meeting the target")
    value, failing = _shrink(evaluator, "fine", fine_private, fine_failing, rtol, integer)
    return value, failing


def _secant_start(evaluator, centre, private_end, other_end, width, rtol):
    """A better start for the fine phase: correct the coarse root by the fine offset.

    The coarse grid shifts the measured quantity by a nearly constant amount
    near the root; one secant step with the coarse slope, from the fine value
    at the coarse root, lands close to the fine root. Only a starting point:
    the bracket is still found (from one tolerance step, doubling) and shrunk
    by evaluation.
    """
    threshold = evaluator.target.threshold()
    fine_value = evaluator(centre, "fine")[1]
    # The coarse slope, from the nearest coarse point at least 0.1% away.
    others = [
        (x, value)
        for (x, phase), (_, value, _) in evaluator.cache.items()
        if phase == "coarse" and value is not None and abs(x - centre) >= 1e-3 * abs(centre)
    ]
    centre_value = evaluator(centre, "coarse")[1]
    if threshold is None or fine_value is None or centre_value is None or not others:
        return centre, width
    other, other_value = min(others, key=lambda item: abs(item[0] - centre))
    slope = (other_value - centre_value) / (other - centre)
    if not math.isfinite(slope) or slope == 0 or not math.isfinite(fine_value):
        return centre, width
    predicted = centre - (fine_value - threshold) / slope
    low, high = sorted((private_end, other_end))
    if not low < predicted < high:
        return centre, width
    # One tolerance step: when the prediction is that good, two evaluations end the search.
    return predicted, max(rtol * abs(predicted), 1e-300)


def parameter(
    make_mechanism: Callable[[Any], m.Mechanism],
    target,
    *,
    bracket: tuple[float, float],
    more_private: Literal["high", "low"] | None = None,
    integer: bool = False,
    neighbouring: m.Neighbouring | None = None,
    rtol: float = DEFAULT_RTOL,
    accuracy: float = DEFAULT_ACCURACY,
    coarse_grid_spacing: float | None = DEFAULT_COARSE_GRID_SPACING,
    name: str = "parameter",
) -> Calibration:
    """Calibrate any one-parameter family of mechanisms to a privacy target.

    Finds the least private parameter x in ``bracket`` such that
    ``account(make_mechanism(x))`` meets ``target``, on the safe side: the
    returned value meets the target as accounted (pessimistic bounds), the
    value one tolerance step less private fails it.

    Parameters
    ----------
    make_mechanism : callable
        x ↦ a mechanism description (or a :class:`gaussdp.Pipeline`).
    target : Target, (epsilon, delta) pair, or callable
        See :func:`as_target`.
    bracket : (float, float)
        The search range [low, high]. One end must meet the target and the
        other fail it; otherwise :class:`CalibrationError` says what was
        found at each end.
    more_private : {"high", "low"}, optional
        Which end of the range is more private (σ: "high"; steps, sampling
        probability, ε of a pure-DP step: "low"). By default it is taken to
        be the end that meets the target (or, if both or neither do, the end
        with the smaller measured quantity).
    integer : bool
        Search integers only (steps, batch sizes); the tolerance is then 1.
    neighbouring : Neighbouring, optional
        Passed to :func:`gaussdp.account`.
    rtol : float
        Relative tolerance on the parameter (continuous parameters).
    accuracy : float
        The accountant's accuracy for the final (fine) phase and re-check,
        relative at every ε (``epsilon_scale=0`` of :func:`gaussdp.account`).
    coarse_grid_spacing : float or None
        Grid spacing of the coarse phase (None: no coarse phase).
    name : str
        The parameter's name, for messages.

    Returns
    -------
    Calibration

    Raises
    ------
    CalibrationError
        If no parameter in the range meets the target (with the best value
        reached), or the target is met at both ends (the range does not
        bracket it).

    Examples
    --------
    How many steps of DP-SGD at σ = 1, q = 0.01 fit in (ε, δ) = (2, 1e-5)?

    >>> from gaussdp import DPSGD
    >>> result = parameter(
    ...     lambda steps: DPSGD(1.0, 0.01, steps), (2.0, 1e-5),
    ...     bracket=(1, 20000), integer=True, more_private="low", name="steps",
    ... )
    >>> result.value, result.failing_value
    (1202, 1203)
    """
    if not callable(make_mechanism):
        raise InvalidParameterError(
            f"make_mechanism must be a callable x -> mechanism, got {make_mechanism!r}"
        )
    target = as_target(target)
    try:
        low, high = bracket
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"bracket must be a pair (low, high), got {bracket!r}"
        ) from None
    low_value = float(check_real("bracket[0]", low))
    high_value = float(check_real("bracket[1]", high))
    if not math.isfinite(low_value) or not math.isfinite(high_value) or not low_value < high_value:
        raise InvalidParameterError(
            f"bracket must be two finite numbers with low < high, got {bracket!r}"
        )
    if integer:
        if low_value != math.floor(low_value) or high_value != math.floor(high_value):
            raise InvalidParameterError(
                f"bracket must hold integers when integer=True, got {bracket!r}"
            )
        low_value, high_value = int(low_value), int(high_value)
    if more_private not in (None, "high", "low"):
        raise InvalidParameterError(
            f"more_private must be 'high', 'low' or None, got {more_private!r}"
        )
    rtol = float(check_real("rtol", rtol, low=1e-15, high=0.1))
    evaluator = _make_evaluator(
        make_mechanism, target, neighbouring, accuracy, coarse_grid_spacing, integer
    )
    if more_private is None:
        more_private = _detect_private_end(evaluator, low_value, high_value, name)
    private_end, other_end = (
        (high_value, low_value) if more_private == "high" else (low_value, high_value)
    )
    return _calibrate(evaluator, private_end, other_end, rtol, integer, name)


def _make_evaluator(make_mechanism, target, neighbouring, accuracy, coarse_grid_spacing, integer):
    if coarse_grid_spacing is not None:
        coarse_grid_spacing = float(
            check_real("coarse_grid_spacing", coarse_grid_spacing, low=0.0, high=1.0, low_open=True)
        )
    return _Evaluator(make_mechanism, target, neighbouring, accuracy, coarse_grid_spacing, integer)


def _calibrate(evaluator, private_end, other_end, rtol, integer, name) -> Calibration:
    """Search [private_end, other_end] and package the answer with its failing neighbour."""
    value, failing = _search(evaluator, private_end, other_end, rtol, integer, name)
    _met, achieved, accounting = evaluator(value, "fine")
    _, failing_achieved, failing_accounting = evaluator(failing, "fine")
    return Calibration(
        value=value,
        failing_value=failing,
        achieved=achieved,
        failing_achieved=failing_achieved,
        target=evaluator.target,
        mechanism=evaluator.mechanism(value),
        accounting=accounting,
        evaluations=evaluator.evaluations,
        parameter_name=name,
        failing_accounting=failing_accounting,
    )


def _detect_private_end(evaluator: _Evaluator, low, high, name: str) -> str:
    """Which end of the range is more private, from the target at both ends (fine)."""
    met_low, value_low, _ = evaluator(low, "fine")
    met_high, value_high, _ = evaluator(high, "fine")
    if met_low != met_high:
        return "low" if met_low else "high"
    if value_low is not None and value_high is not None and value_low != value_high:
        return "low" if value_low < value_high else "high"
    state = "met" if met_low else "not met"
    raise CalibrationError(
        f"the search range does not bracket the target: {evaluator.target.describe()} is "
        f"{state} at both ends ({name} = {low!r} and {high!r}"
        + (
            f"; {evaluator.target.quantity} = {value_low:.6g} and {value_high:.6g}"
            if value_low is not None and value_high is not None
            else ""
        )
        + ")"
    )
