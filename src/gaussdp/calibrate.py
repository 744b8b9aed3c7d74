"""Calibration: the least private parameter that still meets a privacy target.

A *calibrator* (the lecture, file 003, autodp's Mechanism / Transformer /
Calibrator) turns a privacy target into a mechanism parameter: the noise
multiplier of DP-SGD for (ε, δ), the number of steps a budget allows, the
scale of a Laplace mechanism. Here every answer is on the **safe side**:

* the returned parameter was accounted with the pessimistic (upper-bound)
  accountant, :func:`gaussdp.account` at the requested accuracy, exactly as a
  user would re-check it, and meets the target;
* the parameter one tolerance step *less* private was accounted the same way
  and fails the target, which says how close the answer is
  (:attr:`Calibration.failing_value`).

The search never minimises |ε(σ) − target| (which can return a σ whose ε is
slightly *above* the target, as autodp's calibrator may): it keeps a bracket
whose private end meets the target and whose other end fails, shrinks it with
:func:`gaussdp._numerics.monotone_root` (Illinois regula falsi with bisection
safeguards) and returns the private end. Nothing relies on the accountant
being exactly monotone in the parameter: both ends are certified as
evaluated.

Targets
-------
``(epsilon, delta)`` or :class:`EpsilonDelta`
    ε(δ) ≤ ε (the pessimistic ε).
:class:`Mu`
    μ-GDP with μ ≤ target: exact for Gaussian compositions, otherwise the
    tight μ of the report (:meth:`gaussdp.Accounting.gdp`), optionally with
    a cap on its regret.
:class:`Advantage`
    The largest TPR − FPR of any membership-inference attack, which is
    δ(0) = H_1(P ‖ Q) (total variation; Dong, Roth & Su 2022, §2.4), at most
    the target.
:class:`TPRAtFPR`
    The largest true-positive rate of any attack with false-positive rate
    ``fpr``, 1 − f(fpr), at most the target (riskcal's operational target;
    Kulynych et al. 2024).
:class:`Predicate`
    Any monotone yes/no question about the :class:`gaussdp.Accounting`.

Speed
-----
For the numerical path the search runs in two phases. A *coarse* phase
accounts on a coarse grid (``coarse_grid_spacing``, 1e-3 by default): a
pessimistic bound is valid at any grid spacing, so this only locates the
answer. The *fine* phase then brackets that location with the default
accountant and shrinks the bracket to ``rtol``. A closed-form first guess
(μ-GDP via the central limit theorem of Dong, Roth & Su 2022, §5.2, for
DP-SGD) starts the bracket, which is grown with the coarse accountant and
whose ends are then re-checked (and moved) with the default one, so that it
brackets the target for the accountant the search uses (for small targets,
ε of order 0.01 say, the coarse bound alone would place the bracket wrongly).
On the CIFAR-10 setting (q = 0.32768, T = 2000, ε = 8, δ = 1e-5) this takes a
few tenths of a second (``docs/benchmarks-calibration.md``).

Examples
--------
>>> from gaussdp import calibrate
>>> result = calibrate.noise_multiplier((8.0, 1e-5), sampling_probability=0.32768, steps=2000)
>>> round(result.value, 3)
8.838
>>> result.achieved <= 8.0 < result.failing_achieved
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from gaussdp import gdp
from gaussdp import mechanisms as m
from gaussdp._numerics import monotone_root, normal_quantile
from gaussdp._validation import InvalidParameterError, check_real
from gaussdp.accountant import DEFAULT_ACCURACY, Accounting, account

__all__ = [
    "Advantage",
    "Calibration",
    "CalibrationError",
    "EpsilonDelta",
    "Mu",
    "Predicate",
    "TPRAtFPR",
    "Target",
    "as_target",
    "noise_multiplier",
    "parameter",
    "tpr_upper",
]

#: Relative tolerance on the parameter (continuous parameters).
DEFAULT_RTOL = 1e-5
#: Grid spacing (nats) of the coarse search phase.
DEFAULT_COARSE_GRID_SPACING = 1e-3
# Relative width to which the coarse phase narrows the bracket.
_COARSE_RTOL = 1e-3
# Bracket expansion: at most this many doublings of the search interval.
_MAX_EXPANSIONS = 60
# ε grid of the profile route to 1 − f(α).
_TPR_GRID = 4097


class CalibrationError(InvalidParameterError):
    """No parameter in the search range meets the target, or the range is not a bracket.

    The message says what was tried and the best value reached.
    """


# ---------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------


class Target:
    """A privacy target: a yes/no question about an :class:`~gaussdp.Accounting`.

    Subclasses define :meth:`measure` (the compared quantity, an upper bound,
    or None for a plain predicate) and :meth:`is_met`.
    """

    #: Short name of the measured quantity (for messages), e.g. ``"epsilon"``.
    quantity: str = "value"

    def measure(self, accounting: Accounting) -> float | None:
        """The measured quantity for this accounting (None for a plain predicate)."""
        raise NotImplementedError  # pragma: no cover - every subclass overrides it

    def threshold(self) -> float | None:
        """The largest allowed value of :meth:`measure` (None for a predicate)."""
        return None

    def is_met(self, accounting: Accounting, value: float | None = None) -> bool:
        """Whether the target is met (``value`` is :meth:`measure`, if already known)."""
        if value is None:
            value = self.measure(accounting)
        return bool(value <= self.threshold())

    def describe(self) -> str:
        """The target as one line of text, e.g. ``epsilon <= 8 at delta = 1e-05``."""
        raise NotImplementedError  # pragma: no cover

    def unmet_conditions(self, accounting: Accounting) -> tuple[str, ...]:
        """The target's conditions that ``accounting`` fails, each as text (empty if met).

        Examples
        --------
        >>> from gaussdp import Gaussian, account
        >>> Advantage(0.1).unmet_conditions(account(Gaussian(1.0)))
        ('advantage = 0.382925 > 0.1',)
        """
        value = self.measure(accounting)
        if self.is_met(accounting, value):
            return ()
        if value is None:
            return ("the predicate is false",)
        return (f"{self.quantity} = {value:.6g} > {self.threshold():g}",)

    def guess_mu(self) -> float | None:
        """A μ-GDP parameter with about this privacy (for a first guess), or None."""
        return None

    def __str__(self) -> str:
        return self.describe()


@dataclass(frozen=True)
class EpsilonDelta(Target):
    """(ε, δ)-DP: the pessimistic ε at ``delta`` is at most ``epsilon``.

    Examples
    --------
    >>> print(EpsilonDelta(8.0, 1e-5))
    epsilon <= 8 at delta = 1e-05
    """

    epsilon: float
    delta: float
    quantity: str = field(default="epsilon", init=False, repr=False)

    def __post_init__(self) -> None:
        epsilon = float(check_real("epsilon", self.epsilon, low=0.0, high=math.inf, high_open=True))
        delta = float(
            check_real("delta", self.delta, low=0.0, high=1.0, low_open=True, high_open=True)
        )
        object.__setattr__(self, "epsilon", epsilon)
        object.__setattr__(self, "delta", delta)

    def measure(self, accounting: Accounting) -> float:
        return float(accounting.epsilon(self.delta))

    def threshold(self) -> float:
        return self.epsilon

    def describe(self) -> str:
        return f"epsilon <= {self.epsilon:g} at delta = {self.delta:g}"

    def guess_mu(self) -> float:
        return float(gdp.mu(self.epsilon, self.delta))


def _distinct(value: float, limit: float) -> str:
    """``value`` with 6 significant digits, or as many more as tell it apart from ``limit``."""
    for digits in range(6, 18):
        text = f"{value:.{digits}g}"
        if float(text) != limit:
            return text
    return repr(value)


@dataclass(frozen=True)
class Mu(Target):
    """μ-GDP with μ at most ``mu`` (optionally capping the regret and the failure probability).

    The measured μ is the exact one for compositions of Gaussian mechanisms
    (:attr:`gaussdp.Accounting.mu`, regret 0) and otherwise the tight μ of the
    report, :meth:`gaussdp.Accounting.gdp` (the reporting paper, file 002,
    Appendix B), which holds "except with probability ``delta_tail``"
    (f ≥ G_μ ⊗ f_{0,δ}: Dong, Roth & Su 2022, eq. 12) — for subsampled
    mechanisms the far tail is not amplified. ``max_regret`` caps the report's
    regret (how far the curve is from G_μ). The failure probability is the
    same for every parameter tried — the report's declared default δ_tail =
    1e-10 (:data:`gaussdp.report.core.DEFAULT_DELTA_TAIL`), or
    ``max_delta_tail`` when given — so the measured μ is monotone in the
    parameter (more noise never raises it).

    Examples
    --------
    >>> print(Mu(1.0, max_regret=0.01))
    mu <= 1 with regret <= 0.01
    """

    mu: float
    max_regret: float | None = None
    max_delta_tail: float | None = None
    quantity: str = field(default="mu", init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "mu",
            float(check_real("mu", self.mu, low=0.0, high=math.inf, low_open=True, high_open=True)),
        )
        for name in ("max_regret", "max_delta_tail"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, float(check_real(name, value, low=0.0, high=1.0)))

    def report_values(self, accounting: Accounting) -> tuple[float, float, float]:
        """(μ, regret, delta_tail) of the accounting (closed form or the report)."""
        if accounting.mu is not None:
            return float(accounting.mu), 0.0, 0.0
        report_of = getattr(accounting, "gdp", None)
        if report_of is None:
            raise InvalidParameterError(
                "a mu target for a mechanism without a closed form needs the tight mu of "
                "Accounting.gdp() (gaussdp.report), which this installation does not have; "
                "use an (epsilon, delta) target instead"
            )
        # Both are fixed failure probabilities, the same for every parameter value.
        if self.max_delta_tail is None:
            report = report_of()
        else:
            try:
                report = report_of(delta_tail=self.max_delta_tail)
            except InvalidParameterError as error:
                raise InvalidParameterError(
                    f"max_delta_tail = {self.max_delta_tail:g} cannot be certified for "
                    f"{accounting.mechanism.describe()}: {error}"
                ) from None
        regret = getattr(report, "regret", None)
        delta_tail = float(getattr(report, "delta_tail", 0.0) or 0.0)
        return float(report.mu), (math.inf if regret is None else float(regret)), delta_tail

    def measure(self, accounting: Accounting) -> float:
        return self.report_values(accounting)[0]

    def threshold(self) -> float:
        return self.mu

    def is_met(self, accounting: Accounting, value: float | None = None) -> bool:
        return not self.unmet_conditions(accounting)

    def unmet_conditions(self, accounting: Accounting) -> tuple[str, ...]:
        """Which of μ, the regret cap and the failure-probability cap fail.

        A failing μ target can fail on its regret (or failure probability)
        alone, with μ below the target.
        """
        mu, regret, delta_tail = self.report_values(accounting)
        failed = []
        if not mu <= self.mu:
            failed.append(f"mu = {mu:.6g} > {self.mu:g}")
        if self.max_regret is not None and not regret <= self.max_regret:
            failed.append(f"regret = {_distinct(regret, self.max_regret)} > {self.max_regret:g}")
        if self.max_delta_tail is not None and not delta_tail <= self.max_delta_tail:
            failed.append(
                f"failure probability = {_distinct(delta_tail, self.max_delta_tail)} > "
                f"{self.max_delta_tail:g}"
            )
        return tuple(failed)

    @property
    def has_caps(self) -> bool:
        """Whether a regret or failure-probability cap is set."""
        return self.max_regret is not None or self.max_delta_tail is not None

    def describe(self) -> str:
        caps = []
        if self.max_regret is not None:
            caps.append(f"regret <= {self.max_regret:g}")
        if self.max_delta_tail is not None:
            caps.append(f"failure probability <= {self.max_delta_tail:g}")
        return f"mu <= {self.mu:g}" + (" with " + " and ".join(caps) if caps else "")

    def guess_mu(self) -> float:
        return self.mu


@dataclass(frozen=True)
class Advantage(Target):
    """Membership advantage: the largest TPR − FPR of any attack is at most ``advantage``.

    The largest TPR − FPR over all tests of P against Q is their total
    variation distance, which is the hockey-stick divergence at ε = 0:
    advantage = δ(0) (Dong, Roth & Su 2022, §2.4; the reporting paper,
    file 002, §4). The pessimistic δ(0) is therefore an upper bound on it.

    Examples
    --------
    >>> print(Advantage(0.1))
    advantage <= 0.1
    """

    advantage: float
    quantity: str = field(default="advantage", init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "advantage",
            float(
                check_real(
                    "advantage", self.advantage, low=0.0, high=1.0, low_open=True, high_open=True
                )
            ),
        )

    def measure(self, accounting: Accounting) -> float:
        return float(accounting.delta(0.0))

    def threshold(self) -> float:
        return self.advantage

    def describe(self) -> str:
        return f"advantage <= {self.advantage:g}"

    def guess_mu(self) -> float:
        # advantage(μ) = 2Φ(μ/2) − 1.
        return float(2.0 * normal_quantile(0.5 + 0.5 * self.advantage))


@dataclass(frozen=True)
class TPRAtFPR(Target):
    """Attack risk: at false-positive rate ``fpr`` no attack has TPR above ``tpr``.

    The largest TPR at FPR α is 1 − f(α) with f the mechanism's trade-off
    curve; the measured value is the upper bound :func:`tpr_upper`. Random
    guessing already reaches TPR = FPR, so ``tpr`` must exceed ``fpr``.

    Examples
    --------
    >>> print(TPRAtFPR(tpr=0.01, fpr=1e-4))
    TPR <= 0.01 at FPR = 0.0001
    """

    tpr: float
    fpr: float
    quantity: str = field(default="TPR", init=False, repr=False)

    def __post_init__(self) -> None:
        fpr = float(check_real("fpr", self.fpr, low=0.0, high=1.0, low_open=True, high_open=True))
        tpr = float(check_real("tpr", self.tpr, low=0.0, high=1.0, high_open=True))
        if not tpr > fpr:
            raise InvalidParameterError(
                f"tpr must be greater than fpr ({fpr:g}): random guessing already reaches "
                f"TPR = FPR, so no mechanism meets TPR <= {tpr:g}; got tpr={tpr!r}"
            )
        object.__setattr__(self, "fpr", fpr)
        object.__setattr__(self, "tpr", tpr)

    def measure(self, accounting: Accounting) -> float:
        return tpr_upper(accounting, self.fpr)

    def threshold(self) -> float:
        return self.tpr

    def describe(self) -> str:
        return f"TPR <= {self.tpr:g} at FPR = {self.fpr:g}"

    def guess_mu(self) -> float:
        # G_μ: TPR = Φ(Φ⁻¹(α) + μ).
        return float(normal_quantile(self.tpr) - normal_quantile(self.fpr))


@dataclass(frozen=True)
class Predicate(Target):
    """A custom target: ``function(accounting)`` returns True when the target is met.

    The function must be monotone along the parameter (met on the private
    side, not met on the other); the search then only bisects.

    Examples
    --------
    >>> target = Predicate(lambda a: a.delta(1.0) <= 1e-6, "delta(1) <= 1e-6")
    >>> print(target)
    delta(1) <= 1e-6
    """

    function: Callable[[Accounting], bool]
    description: str = "custom predicate"
    quantity: str = field(default="predicate", init=False, repr=False)

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise InvalidParameterError(
                f"function must be a callable (Accounting) -> bool, got {self.function!r}"
            )

    def measure(self, accounting: Accounting) -> None:
        return None

    def is_met(self, accounting: Accounting, value: float | None = None) -> bool:
        return bool(self.function(accounting))

    def unmet_conditions(self, accounting: Accounting) -> tuple[str, ...]:
        return () if self.is_met(accounting) else (f"{self.describe()} is false",)

    def describe(self) -> str:
        return str(self.description)


def as_target(target: Any) -> Target:
    """A :class:`Target` from a target object, an ``(epsilon, delta)`` pair or a callable.

    Examples
    --------
    >>> as_target((1.0, 1e-6))
    EpsilonDelta(epsilon=1.0, delta=1e-06)
    """
    if isinstance(target, Target):
        return target
    if isinstance(target, (tuple, list)) and len(target) == 2:
        return EpsilonDelta(*target)
    if callable(target):
        return Predicate(target)
    raise InvalidParameterError(
        "target must be an (epsilon, delta) pair, a gaussdp.calibrate target "
        f"(EpsilonDelta, Mu, Advantage, TPRAtFPR, Predicate) or a callable, got {target!r}"
    )


# ---------------------------------------------------------------------------
# Attack risk from the privacy profile
# ---------------------------------------------------------------------------


def tpr_upper(accounting: Accounting, fpr: float) -> float:
    """Upper bound on the largest TPR of any attack with FPR ``fpr``: 1 − f(fpr).

    Closed forms use their exact trade-off curve. On the numerical path the
    curve is bounded from below through the pessimistic privacy profile: a
    mechanism that is (ε, δ(ε))-DP under a symmetric neighbouring relation
    has, for every test,

        β ≥ 1 − δ(ε) − e^ε α   and   β ≥ e^{−ε}(1 − δ(ε) − α)

    (Dong, Roth & Su 2022, Proposition 2.5 / 2.12; Kairouz et al. 2015), so
    f(α) ≥ sup_ε max(…) over any set of ε. The supremum is taken over a
    dense grid refined around its best point; any ε used gives a valid bound,
    so the answer is an upper bound on the TPR whatever the grid.

    Examples
    --------
    >>> from gaussdp import DPSGD, Gaussian, account, gdp
    >>> exact = 1 - gdp.beta(1.0, 1e-3)
    >>> bound = tpr_upper(account(Gaussian(1.0)), 1e-3)
    >>> abs(bound - exact) < 1e-12
    True
    """
    alpha = float(check_real("fpr", fpr, low=0.0, high=1.0))
    if accounting.grid_spacing is None:
        curve = accounting.tradeoff()
        return float(np.clip(1.0 - float(curve.beta(alpha)), alpha, 1.0))
    delta_at_zero = float(accounting.delta(0.0))
    if delta_at_zero <= 0.0:
        return alpha
    top = float(accounting.epsilon(1e-300)) if delta_at_zero > 1e-300 else 0.0
    if not math.isfinite(top):
        top = float(accounting.epsilon(min(1e-12, 0.5 * delta_at_zero)))
    if not math.isfinite(top):  # infinite-loss mass above 1e-12: a crude but valid grid
        top = 100.0
    top = max(top, 1e-6)

    def beta_lower(epsilon: np.ndarray) -> np.ndarray:
        delta = np.asarray(accounting.delta(epsilon), dtype=float)
        first = 1.0 - delta - np.exp(epsilon) * alpha
        second = np.exp(-epsilon) * (1.0 - delta - alpha)
        return np.maximum(first, second)

    grid = np.linspace(0.0, top, _TPR_GRID)
    values = beta_lower(grid)
    best = int(np.argmax(values))
    step = grid[1] - grid[0]
    local = np.linspace(max(grid[best] - step, 0.0), grid[best] + step, 257)
    beta = max(float(values[best]), float(np.max(beta_lower(local))), 0.0)
    return float(np.clip(1.0 - beta, alpha, 1.0))


# ---------------------------------------------------------------------------
# The result
# ---------------------------------------------------------------------------


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
        met, value, _ = self(x, phase)
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


# ---------------------------------------------------------------------------
# DP-SGD
# ---------------------------------------------------------------------------


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


def _dpsgd_bracket(evaluator: _Evaluator, q: float, steps: int) -> tuple[float, float]:
    """A σ bracket (failing low end, meeting high end) certified with the search's accountant.

    A closed-form guess (the central-limit μ of the target's μ-like value) is
    grown geometrically with the cheap coarse accountant to locate the answer,
    then both ends are re-checked with the fine (default) accountant that the
    search uses — the coarse bound is looser, so the coarse bracket's low end can
    already meet the target — and moved until the low end fails and the high end
    meets. Towards less privacy the search stops at the least private end
    (σ = ``_SIGMA_MIN``, or where an attack's advantage is already as large as
    DP-SGD with this q and T allows) with a :class:`CalibrationError`; towards
    more privacy at σ = ``_SIGMA_MAX``, where :func:`_search` reports the target
    as unreachable.
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
    while evaluator(low, "fine")[0]:
        if least_private(low, "fine"):
            raise met_everywhere(low, "fine")
        high, low = low, max(low / 2, _SIGMA_MIN)
    while not evaluator(high, "fine")[0]:
        if high >= _SIGMA_MAX:
            break  # _search reports the target as unreachable
        low, high = high, min(high * 2, _SIGMA_MAX)
    return low, high
