"""From certified error rates to lower bounds on ε (at δ) and on μ.

Given upper confidence bounds ``FPR_ub`` and ``FNR_ub`` on an attack's two error
rates, holding together with probability at least ``1 − α``:

ε at δ (the privacy region; Kairouz, Oh & Viswanath 2015, Thm 2.1; Jagielski,
Ullman & Oprea 2020). Every test of an (ε, δ)-DP mechanism's neighbouring
outputs satisfies both ``FPR + e^ε FNR >= 1 − δ`` and ``FNR + e^ε FPR >= 1 − δ``
(the neighbouring relation is symmetric). With ``FPR <= FPR_ub`` and
``FNR <= FNR_ub`` any such ε is therefore at least

    ε_lower = max(log((1 − δ − FNR_ub) / FPR_ub), log((1 − δ − FPR_ub) / FNR_ub), 0).

μ (Dong, Roth & Su 2022, Def. 2.7; Nasr et al. 2023, arXiv 2302.07956). A μ-GDP
mechanism has ``FNR >= Φ(Φ⁻¹(1 − FPR) − μ)`` for every test, so

    μ_lower = max(Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub), 0),

computed as ``−ndtri(FPR_ub) − ndtri(FNR_ub)`` (never ``1 − cdf``). G_μ is
symmetric, so the swapped pair gives the same value. An ε *derived* from
μ_lower (the ε at δ of the μ_lower-GDP curve) is not a lower bound on the
mechanism's ε unless the mechanism is Gaussian-shaped; it is reported as
``epsilon_from_mu_lower`` and labelled *model-based*.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["epsilon_lower", "mu_lower"]


def epsilon_lower(fpr_upper, fnr_upper, delta: float):
    """Lower bound on ε at ``delta`` from upper bounds on both error rates.

    ``max(log((1 − δ − FNR_ub)/FPR_ub), log((1 − δ − FPR_ub)/FNR_ub), 0)``
    elementwise (Kairouz et al. 2015's privacy region, both directions).

    Parameters
    ----------
    fpr_upper, fnr_upper : float or array
        Upper bounds on the false-positive and false-negative rates, in [0, 1].
    delta : float
        δ in [0, 1).

    Returns
    -------
    float or numpy.ndarray
        The ε lower bound (``inf`` when an error bound is 0 and the other below 1 − δ).

    Examples
    --------
    >>> round(epsilon_lower(0.01, 0.5, 0.0), 6)  # log(0.5 / 0.01)
    3.912023
    """
    fpr = np.asarray(fpr_upper, dtype=float)
    fnr = np.asarray(fnr_upper, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.where(delta + fnr < 1.0, np.log1p(-(delta + fnr)) - np.log(fpr), -np.inf)
        two = np.where(delta + fpr < 1.0, np.log1p(-(delta + fpr)) - np.log(fnr), -np.inf)
    result = np.maximum(np.maximum(one, two), 0.0)
    return float(result) if result.ndim == 0 else result


def mu_lower(fpr_upper, fnr_upper):
    """Lower bound on μ from upper bounds on both error rates.

    ``max(Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub), 0) = max(−ndtri(FPR_ub) − ndtri(FNR_ub), 0)``
    (Dong, Roth & Su 2022; Nasr et al. 2023).

    Examples
    --------
    >>> round(mu_lower(0.05, 0.05), 6)  # 2 Φ⁻¹(0.95)
    3.289707
    """
    fpr = np.asarray(fpr_upper, dtype=float)
    fnr = np.asarray(fnr_upper, dtype=float)
    with np.errstate(invalid="ignore"):
        value = -special.ndtri(fpr) - special.ndtri(fnr)
    result = np.where(np.isnan(value), 0.0, np.maximum(value, 0.0))
    return float(result) if result.ndim == 0 else result
