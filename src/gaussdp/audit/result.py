"""The result of an audit: certified lower bounds, and what they were computed from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AuditPoint", "AuditResult"]


@dataclass(frozen=True)
class AuditPoint:
    """One certified point of the attack's ROC: an error-rate pair and its confidence box.

    With the audit's confidence, the attack's true false-positive rate is at most
    ``fpr_upper`` and its false-negative rate at most ``fnr_upper`` (one-sided
    Clopper–Pearson bounds at ``level`` each). ``fpr_lower`` and ``fnr_lower`` are
    the matching one-sided lower bounds at the same level, drawn as the box.

    Attributes
    ----------
    fpr_upper, fnr_upper : float
        Upper confidence bounds on the error rates (the certified corner).
    fpr_lower, fnr_lower : float
        Lower confidence bounds at the same level (the other corner of the box).
    true_positives, false_negatives, false_positives, true_negatives : int
        The counts the bounds come from.
    level : float
        The probability that each one-sided bound is wrong (after any correction).
    threshold : float or None
        The score threshold (score >= threshold is guessed "member"), if any.
    """

    fpr_upper: float
    fnr_upper: float
    fpr_lower: float
    fnr_lower: float
    true_positives: int
    false_negatives: int
    false_positives: int
    true_negatives: int
    level: float
    threshold: float | None = None

    def to_dict(self) -> dict:
        """The point as plain JSON-ready values."""
        return {
            "fpr_upper": self.fpr_upper,
            "fnr_upper": self.fnr_upper,
            "fpr_lower": self.fpr_lower,
            "fnr_lower": self.fnr_lower,
            "true_positives": self.true_positives,
            "false_negatives": self.false_negatives,
            "false_positives": self.false_positives,
            "true_negatives": self.true_negatives,
            "level": self.level,
            "threshold": self.threshold,
        }


@dataclass(frozen=True)
class AuditResult:
    """Lower bounds on a mechanism's privacy loss, certified by an attack.

    Every number is a **lower bound** holding with probability at least
    ``confidence = 1 − alpha`` over the audit's randomness, except
    ``epsilon_from_mu_lower``, which is *model-based*: the ε at δ of the
    ``mu_lower``-GDP curve, a lower bound on ε only if the mechanism's curve
    is Gaussian-shaped.

    Attributes
    ----------
    method : str
        The statistic and how thresholds were handled, with its source.
    alpha : float
        The audit's total error probability (1 − confidence).
    delta : float
        The δ at which ``epsilon_lower`` is stated.
    epsilon_lower : float
        Lower bound on ε at ``delta``.
    mu_lower : float
        Lower bound on μ (any μ-GDP guarantee of the mechanism has μ at least this).
    epsilon_from_mu_lower : float
        Model-based: ε at ``delta`` of ``mu_lower``-GDP (not a certified bound).
    points : tuple of AuditPoint
        The certified ROC points behind the bounds (empty for one-run audits).
    used : dict
        What the audit used: counts, number of thresholds, the level of each bound.
    report : AuditReport or None
        The comparison with the accountant, when ``against=`` was given.
    """

    method: str
    alpha: float
    delta: float
    epsilon_lower: float
    mu_lower: float
    epsilon_from_mu_lower: float
    points: tuple[AuditPoint, ...] = ()
    used: dict[str, Any] = field(default_factory=dict)
    report: Any = None
    #: what a comparison needs to test another curve (private to the package)
    _evidence: Any = field(default=None, repr=False, compare=False)

    @property
    def confidence(self) -> float:
        """``1 − alpha``: the probability with which every lower bound holds."""
        return 1.0 - self.alpha

    @property
    def violation(self) -> bool | None:
        """True if a certified point lies beyond the accountant's curve (None: no ``against``)."""
        return None if self.report is None else self.report.violation

    @property
    def p_value(self) -> float | None:
        """The p-value of the violation test (None without ``against``)."""
        return None if self.report is None else self.report.p_value

    def to_dict(self) -> dict:
        """The result as plain JSON-ready values (infinities kept as floats)."""
        return {
            "method": self.method,
            "alpha": self.alpha,
            "confidence": self.confidence,
            "delta": self.delta,
            "epsilon_lower": self.epsilon_lower,
            "mu_lower": self.mu_lower,
            "epsilon_from_mu_lower": self.epsilon_from_mu_lower,
            "epsilon_from_mu_lower_kind": "model-based (Gaussian-shaped curve assumed)",
            "points": [p.to_dict() for p in self.points],
            "used": dict(self.used),
        }

    def __str__(self) -> str:
        from gaussdp.audit.report import result_text

        return result_text(self)
