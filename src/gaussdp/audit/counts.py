"""An attack's confusion counts -> certified lower bounds on ε and μ (one threshold).

The attack guessed "member" for ``tp + fp`` examples: ``tp`` of the ``tp + fn``
members and ``fp`` of the ``fp + tn`` non-members. Clopper–Pearson upper bounds
on both error rates, each at level α/2 (the union bound: both hold together
with probability at least ``1 − α``), give the ε lower bound at δ of the
privacy region and the μ lower bound (:mod:`gaussdp.audit.bounds`). These are
the established conventions (Jagielski et al. 2020; Nasr et al. 2023; jax_privacy's
``CanaryScoreAuditor.epsilon_clopper_pearson`` with a fixed threshold), so the
numbers compare with the peers'.
"""

from __future__ import annotations

import numpy as np

from gaussdp._validation import InvalidParameterError
from gaussdp.audit import bounds
from gaussdp.audit._checks import check_alpha, check_count, check_delta, model_epsilon
from gaussdp.audit.binomial import clopper_pearson_lower, clopper_pearson_upper
from gaussdp.audit.compare import CountsEvidence, check_against
from gaussdp.audit.report import attach_report
from gaussdp.audit.result import AuditPoint, AuditResult

__all__ = ["from_counts", "point"]


def point(tp: int, fn: int, fp: int, tn: int, level: float, threshold=None) -> AuditPoint:
    """The certified point of one threshold's counts, every bound at ``level``."""
    positives, negatives = tp + fn, fp + tn
    return AuditPoint(
        fpr_upper=float(clopper_pearson_upper(fp, negatives, level)),
        fnr_upper=float(clopper_pearson_upper(fn, positives, level)),
        fpr_lower=float(clopper_pearson_lower(fp, negatives, level)),
        fnr_lower=float(clopper_pearson_lower(fn, positives, level)),
        true_positives=int(tp),
        false_negatives=int(fn),
        false_positives=int(fp),
        true_negatives=int(tn),
        level=level,
        threshold=None if threshold is None else float(threshold),
    )


def from_counts(tp, fn, fp, tn, *, alpha=0.05, delta=0.0, against=None) -> AuditResult:
    """Lower bounds on ε (at δ) and μ from one threshold's confusion counts.

    With ``FPR_ub`` and ``FNR_ub`` the Clopper–Pearson upper bounds at α/2 each,

    * ``epsilon_lower = max(log((1−δ−FNR_ub)/FPR_ub), log((1−δ−FPR_ub)/FNR_ub), 0)``
      (Kairouz et al. 2015; Jagielski et al. 2020),
    * ``mu_lower = max(Φ⁻¹(1−FPR_ub) − Φ⁻¹(FNR_ub), 0)`` (Dong, Roth & Su 2022;
      Nasr et al. 2023),

    both holding together with probability at least ``1 − alpha``.

    Parameters
    ----------
    tp, fn, fp, tn : int
        True positives and false negatives (members guessed in / out), false
        positives and true negatives (non-members guessed in / out). At least one
        member and one non-member.
    alpha : float
        1 − confidence, in (0, 1); default 0.05.
    delta : float
        δ in [0, 1) for the ε lower bound; default 0.
    against : Mechanism or Accounting, optional
        The run's description: adds an :class:`~gaussdp.audit.report.AuditReport`
        (``result.report``, ``result.violation``, ``result.p_value``).

    Returns
    -------
    AuditResult

    Examples
    --------
    A perfect attack on 100 members and 100 non-members:

    >>> result = from_counts(100, 0, 0, 100)
    >>> round(result.points[0].fpr_upper, 6)  # 1 − 0.025^(1/100)
    0.036217
    >>> round(result.epsilon_lower, 4), round(result.mu_lower, 4)
    (3.2813, 3.5928)
    """
    tp = check_count("tp", tp)
    fn = check_count("fn", fn)
    fp = check_count("fp", fp)
    tn = check_count("tn", tn)
    if tp + fn == 0:
        raise InvalidParameterError("tp + fn (the members) must be at least 1, got 0")
    if fp + tn == 0:
        raise InvalidParameterError("fp + tn (the non-members) must be at least 1, got 0")
    alpha = check_alpha(alpha)
    delta = check_delta(delta)
    check_against(against)
    level = alpha / 2.0
    certified = point(tp, fn, fp, tn, level)
    epsilon = bounds.epsilon_lower(certified.fpr_upper, certified.fnr_upper, delta)
    mu = bounds.mu_lower(certified.fpr_upper, certified.fnr_upper)
    evidence = CountsEvidence(
        false_positives=np.array([fp]),
        negatives=fp + tn,
        false_negatives=np.array([fn]),
        positives=tp + fn,
        divisor=2.0,
    )
    result = AuditResult(
        method="Clopper–Pearson bounds on both error rates at one threshold, α/2 each "
        "(union bound); privacy region for ε (Kairouz et al. 2015), G_μ for μ "
        "(Dong, Roth & Su 2022; Nasr et al. 2023)",
        alpha=alpha,
        delta=delta,
        epsilon_lower=epsilon,
        mu_lower=mu,
        epsilon_from_mu_lower=model_epsilon(mu, delta),
        points=(certified,),
        used={
            "counts": {"tp": tp, "fn": fn, "fp": fp, "tn": tn},
            "thresholds": 1,
            "level_per_bound": level,
        },
        _evidence=evidence,
    )
    return attach_report(result, against)
