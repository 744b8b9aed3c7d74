"""One-run auditing: m canaries, each included with probability ½, audited from one training run.

The auditor inserts ``m`` canaries, each independently with probability ½,
trains once, and guesses inclusion for ``r`` of them (abstaining on the rest);
``v`` guesses are right.

ε at δ (Steinke, Nasr & Jagielski 2023, arXiv 2305.08846, Thm 3.1 / Prop. 5.2 and
their Algorithm for the bound). Under (ε, δ)-DP the number of correct guesses
``W`` satisfies, with ``q = e^ε/(1 + e^ε)`` and ``β = P[Binomial(r, q) >= v]``,

    P[W >= v] <= β + 2 m δ · max_{1<=i<=v} P[v − i <= Binomial(r, q) < v] / i,

a p-value for the claim. ``epsilon_lower`` is the largest ε at which this
p-value is still at most α (bisection; 0 if even ε = 0 is not rejected).

Any trade-off curve f (Mahloujifar, Melis & Chaudhuri 2024, arXiv 2410.22235,
Algorithm 3 "audit with abstention"). With the blow-up inverse
``φ⁻¹(y) = f⁻¹(1 − y)`` (the smallest FPR at which an f-DP test reaches TPR y;
``f(1 − y)`` for a symmetric f), start from ``r_v = α v / m``,
``h_v = α (r − v) / m`` and for ``i = v − 1, …, 0``

    h_i = max(h_{i+1}, φ⁻¹(r_{i+1})),
    r_i = min(r_{i+1} + i / (r − i) · (h_i − h_{i+1}), 1);

the f-DP claim is rejected at level α when ``r_0 + h_0 > r / m``. With the
Gaussian curves G_μ this gives ``mu_lower`` (the largest rejected μ), with the
(ε, δ)-DP curves an ε lower bound, and with the accountant's own curve of the
run a direct test of what was claimed. Rejection is monotone in α, in μ and in
ε, so each bound is found by bisection and rounded to the safe side.
"""

from __future__ import annotations

import numpy as np

from gaussdp._validation import InvalidParameterError
from gaussdp.audit._checks import check_alpha, check_count, check_delta, model_epsilon
from gaussdp.audit.compare import OneRunEvidence, check_against
from gaussdp.audit.one_run_tests import (
    curve_blow_up_inverse,
    epsilon_lower_fdp,
    epsilon_lower_steinke,
    mmc_rejects,
    mu_lower_fdp,
    steinke_p_value,
)
from gaussdp.audit.report import attach_report
from gaussdp.audit.result import AuditResult
from gaussdp.audit.scores import load_scores

__all__ = [
    "curve_blow_up_inverse",
    "epsilon_lower_fdp",
    "epsilon_lower_steinke",
    "guesses_from_scores",
    "mmc_rejects",
    "mu_lower_fdp",
    "one_run",
    "one_run_from_scores",
    "steinke_p_value",
]


def guesses_from_scores(scores, included, *, guesses: int) -> tuple[int, int, int]:
    """The one-run game's counts from per-canary scores: (canaries, guesses, correct).

    The auditor guesses "included" for the ``ceil(guesses / 2)`` highest scores and
    "excluded" for the ``floor(guesses / 2)`` lowest, abstaining on the rest
    (Steinke, Nasr & Jagielski 2023, §6); ``guesses`` must be fixed before the
    scores are seen for the audit to be valid.

    Parameters
    ----------
    scores : array_like
        One score per canary, higher meaning "included".
    included : array_like of bool
        Whether each canary was in the training set.
    guesses : int
        r, the number of guesses, at most the number of canaries.

    Examples
    --------
    >>> guesses_from_scores([0.9, 0.1, 0.5, 0.8], [True, False, False, True], guesses=2)
    (4, 2, 2)
    """
    values = np.asarray(scores, dtype=float).reshape(-1)
    truth = np.asarray(included).reshape(-1)
    if values.size == 0:
        raise InvalidParameterError("scores must not be empty")
    if np.isnan(values).any():
        raise InvalidParameterError(
            f"scores must not contain NaN, got NaN at index {int(np.argmax(np.isnan(values)))}"
        )
    if truth.shape != values.shape:
        raise InvalidParameterError(
            f"included must have one entry per score ({values.size}), got {truth.size}"
        )
    if truth.dtype != bool and not np.isin(truth, (0, 1)).all():
        raise InvalidParameterError("included must be booleans (or 0/1)")
    truth = truth.astype(bool)
    guesses = check_count("guesses", guesses)
    if guesses > values.size:
        raise InvalidParameterError(
            f"guesses must be at most the number of canaries ({values.size}), got {guesses}"
        )
    order = np.argsort(values, kind="stable")
    top, bottom = (guesses + 1) // 2, guesses // 2
    right = int(truth[order[values.size - top :]].sum()) if top else 0
    right += int((~truth[order[:bottom]]).sum())
    return int(values.size), guesses, right


def one_run(
    canaries, guesses, correct, *, alpha=0.05, delta=0.0, curve=None, against=None
) -> AuditResult:
    """Lower bounds from a one-run audit: m canaries, r guesses, v right.

    Without ``curve``: ``epsilon_lower`` is Steinke, Nasr & Jagielski's (2023)
    bound at δ. With ``curve`` (any trade-off curve, e.g.
    ``gaussdp.account(run).tradeoff()``): the f-DP analysis of Mahloujifar, Melis
    & Chaudhuri (2024) — ``epsilon_lower`` from the (ε, δ)-DP curves, and the claim
    "the mechanism is ``curve``-DP" tested (``used["curve_rejected"]``,
    ``used["curve_p_value"]``). ``mu_lower`` is always the MMC bound with the
    Gaussian curves G_μ. Each bound is its own test at level α (confidence 1 − α).

    Parameters
    ----------
    canaries : int
        m >= 1, canaries each included independently with probability ½.
    guesses : int
        r in [0, m], canaries on which the auditor guessed (the rest abstained).
    correct : int
        v in [0, r], right guesses.
    alpha : float
        1 − confidence, in (0, 1); default 0.05.
    delta : float
        δ in [0, 1) for ε; default 0.
    curve : TradeOff, optional
        A claimed trade-off curve to test (the f-DP version).
    against : Mechanism or Accounting, optional
        The run's description: adds an :class:`~gaussdp.audit.report.AuditReport`
        whose violation test is the MMC test of the accountant's curve.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> result = one_run(1000, 100, 100)
    >>> round(result.epsilon_lower, 4)
    3.493
    """
    canaries = check_count("canaries", canaries, low=1)
    guesses = check_count("guesses", guesses)
    correct = check_count("correct", correct)
    if guesses > canaries:
        raise InvalidParameterError(f"guesses must be at most canaries ({canaries}), got {guesses}")
    if correct > guesses:
        raise InvalidParameterError(f"correct must be at most guesses ({guesses}), got {correct}")
    alpha = check_alpha(alpha)
    delta = check_delta(delta)
    check_against(against)
    if curve is not None and not hasattr(curve, "beta"):
        raise InvalidParameterError(
            f"curve must be a trade-off curve (with .beta), got {type(curve).__name__}"
        )
    mu = mu_lower_fdp(canaries, guesses, correct, alpha)
    used: dict = {"canaries": canaries, "guesses": guesses, "correct": correct}
    evidence = OneRunEvidence(canaries, guesses, correct)
    if curve is None:
        epsilon = epsilon_lower_steinke(canaries, guesses, correct, alpha, delta)
        method = (
            "one-run audit: ε by Steinke, Nasr & Jagielski (2023), μ by the f-DP analysis "
            "of Mahloujifar, Melis & Chaudhuri (2024) with G_μ"
        )
    else:
        epsilon = epsilon_lower_fdp(canaries, guesses, correct, alpha, delta)
        rejected, p = evidence.test(curve, alpha)
        used["curve_rejected"] = rejected
        used["curve_p_value"] = p
        method = (
            "one-run f-DP audit (Mahloujifar, Melis & Chaudhuri 2024): ε from the "
            "(ε, δ)-DP curves, μ from G_μ, and the given curve tested"
        )
    result = AuditResult(
        method=method,
        alpha=alpha,
        delta=delta,
        epsilon_lower=epsilon,
        mu_lower=mu,
        epsilon_from_mu_lower=model_epsilon(mu, delta),
        used=used,
        _evidence=evidence,
    )

    return attach_report(result, against)


def one_run_from_scores(
    scores,
    included,
    *,
    guesses,
    alpha=0.05,
    delta=0.0,
    curve=None,
    against=None,
    column: str | None = None,
    included_column: str | None = None,
) -> AuditResult:
    """A one-run audit from per-canary scores: :func:`guesses_from_scores`, then :func:`one_run`.

    Parameters
    ----------
    scores : array_like or path
        One score per canary (higher meaning "included"): an array, or a ``.npy`` /
        ``.csv`` file (``column`` names the CSV column).
    included : array_like or path
        Whether each canary was in the training set (booleans or 0/1), likewise
        (``included_column``).
    guesses : int
        r, fixed before the scores are seen.
    alpha, delta, curve, against
        As for :func:`one_run`.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> one_run_from_scores([0.9, 0.1, 0.5, 0.8], [1, 0, 0, 1], guesses=2).used["correct"]
    2
    """
    # the cheap parameters first: nothing is read for a call that must fail
    alpha = check_alpha(alpha)
    delta = check_delta(delta)
    guesses = check_count("guesses", guesses)
    check_against(against)
    values = load_scores(scores, name="scores", column=column)
    truth = load_scores(included, name="included", column=included_column)
    counts = guesses_from_scores(values, truth, guesses=guesses)
    return one_run(*counts, alpha=alpha, delta=delta, curve=curve, against=against)
