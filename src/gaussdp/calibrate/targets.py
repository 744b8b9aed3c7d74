"""Privacy targets: what a calibrated parameter must meet, as a yes/no question about an
:class:`~gaussdp.Accounting`.

:class:`EpsilonDelta` (ε(δ) ≤ ε), :class:`Mu` (μ-GDP, optionally with a cap on the
regret), :class:`Advantage` (the largest TPR − FPR of any attack), :class:`TPRAtFPR`
(1 − f(α), read off the privacy profile by :func:`tpr_upper`) and :class:`Predicate`
(any monotone question); :func:`as_target` accepts the shorthand ``(ε, δ)``.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gaussdp import gdp
from gaussdp._numerics import normal_quantile
from gaussdp._validation import InvalidParameterError, check_real
from gaussdp.accountant import Accounting

# ε grid of the profile route to 1 − f(α).
_TPR_GRID = 4097


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

    def relative_excess(self, accounting: Accounting) -> float | None:
        """How far the target fails (> 0) or holds (≤ 0), where several conditions bind.

        None (the default): :meth:`measure` against :meth:`threshold` says it,
        and the search reads that.
        """
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


#: (μ, regret, δ_tail) of the reports made for μ targets, by accounting (a weak key:
#: floats only, no reference back) and failure probability.
_REPORT_VALUES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


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
        """(μ, regret, delta_tail) of the accounting (closed form or the report).

        Kept per accounting (weakly: gone with it) and failure probability: the
        search asks for them twice per accounting (its measure, then whether it is
        met), and a report costs more than the bounds (150–230 ms each at σ = 0.8,
        q = 0.01, T = 1,000).
        """
        if accounting.mu is not None:
            return float(accounting.mu), 0.0, 0.0
        try:
            kept = _REPORT_VALUES.setdefault(accounting, {})
        except TypeError:  # not weakly referable: not kept
            return self._report_values(accounting)
        if self.max_delta_tail not in kept:
            kept[self.max_delta_tail] = self._report_values(accounting)
        return kept[self.max_delta_tail]

    def _report_values(self, accounting: Accounting) -> tuple[float, float, float]:
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

    def relative_excess(self, accounting: Accounting) -> float | None:
        """With a regret cap: the larger of (μ − mu)/mu and (regret − max_regret)/max_regret
        (the regret itself for a zero cap), and (δ_tail − max_delta_tail)/max_delta_tail
        where that fails (the report's δ_tail is that cap: it binds nowhere else).

        > 0 exactly where :meth:`unmet_conditions` names a condition, and it follows
        the condition that binds: near a σ where only the regret fails, μ's distance
        to its target says nothing of where the regret crosses its cap (a search on
        it bisected: 11 accountings where regula falsi takes 7). None without a
        regret cap: μ against its target says it.
        """
        if self.max_regret is None:
            return None
        mu, regret, delta_tail = self.report_values(accounting)
        cap = self.max_regret
        excesses = [(mu - self.mu) / self.mu, (regret - cap) / cap if cap > 0.0 else regret]
        tail_cap = self.max_delta_tail
        if tail_cap is not None and delta_tail > tail_cap:
            excesses.append((delta_tail - tail_cap) / tail_cap if tail_cap > 0.0 else delta_tail)
        return max(excesses)

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


# What the grid of tpr_upper may lose of β beyond its top (see there).
_TPR_TAIL = 1e-9


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
    if alpha > 0.0:
        # Beyond ε = log(1/α) + 1 the first bound is negative. Beyond ε₁, where
        # δ(ε₁) ≤ η(1 − α), the second is at most e^{−ε}(1 − α) ≤ e^{−ε₁}(1 − α), within
        # η of its value at ε₁. So [0, max(log(1/α) + 1, ε₁)] loses at most η = 1e-9
        # of β. ε₁ is read off the plain upper profiles (any ε at least ε₁ will do);
        # reading the top from ε(1e-300), as before, composed the run tilted at
        # δ = 1e-300 for every FPR asked.
        target = _TPR_TAIL * (1.0 - alpha)
        tail = max(float(p.epsilon(target)) for p in accounting.profiles("upper"))
        if not math.isfinite(tail):
            tail = float(accounting.epsilon(target))
        if not math.isfinite(tail):  # infinite-loss mass above η(1 − α): a crude, valid grid
            tail = 100.0
        top = max(math.log(1.0 / alpha) + 1.0, tail)
    else:
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
