"""A report as a dict of JSON-ready values, and as JSON (full floats; ∞ as "inf")."""

from __future__ import annotations

import json

import numpy as np

from gaussdp.report.defaults import DEFAULT_DELTA_TAIL
from gaussdp.report.render.wording import _json_value, _rounding_sentence


def _mechanism_entry(mechanism) -> tuple[dict | str, bool]:
    """(the mechanism as a dict, True), or (its description, False) if it has no dict form.

    Descriptions that hold Python callables (``Profile``, ``NoiseEquation``)
    cannot be written as a dict; the report is still written, with the
    one-line description in their place.
    """
    try:
        entry = mechanism.to_dict()
        json.dumps(_clean(entry), allow_nan=False)
    except (ValueError, TypeError, NotImplementedError):
        return mechanism.describe(), False
    return entry, True


def to_dict(report) -> dict:
    """Everything in the report as JSON-ready values (∞ as "inf").

    ``mechanism`` is the description as a dict (:meth:`Mechanism.to_dict`);
    for descriptions that hold Python callables it is the one-line
    description instead, and ``mechanism_serialisable`` is False.
    """
    mechanism, serialisable = _mechanism_entry(report.mechanism)
    payload = {
        "title": report.title,
        "mechanism": mechanism,
        "mechanism_serialisable": serialisable,
        "neighbouring": report.neighbouring.value,
        "method": report.method,
        "mu": report.mu,
        "delta_tail": report.delta_tail,
        "delta_tail_default": DEFAULT_DELTA_TAIL,
        "mu_by_delta_tail": [
            {"delta_tail": row.delta_tail, "mu": row.mu, "kind": row.kind}
            for row in report.mu_by_delta_tail
        ],
        "epsilon_tail": report.epsilon_tail,
        "delta_floor": report.delta_floor,
        "mu_tail": report.mu_tail,
        "regret": report.regret,
        "tier": report.tier,
        "advantage": report.advantage,
        "advantage_lower": report.advantage_lower,
        "advantage_mu": report.advantage_mu,
        "advantage_gap_bound": 2.0 * report.regret,
        "alpha_star": report.alpha_star,
        "exact": report.exact,
        **({"caveats": list(report.caveats)} if report.caveats else {}),
        **_rounding_entry(report),
        "epsilons": [
            {
                "delta": row.delta,
                "epsilon": row.epsilon,
                "epsilon_lower": row.epsilon_lower,
                "epsilon_mu": row.epsilon_mu,
                "mu_at_delta": row.mu_at_delta,
            }
            for row in report.epsilons
        ],
        "table": [
            {
                "alpha": row.alpha,
                "beta": row.beta,
                "beta_optimistic": row.beta_optimistic,
                "beta_mu": row.beta_mu,
                "label": row.label,
            }
            for row in report.table
        ],
        "notes": {
            "guarantee": "the mechanism is mu-GDP except with probability delta_tail: "
            "f >= G_mu (x) f_{0,delta_tail} (Dong, Roth & Su 2022, eq. 12)",
            "delta_tail": "a declared failure probability (delta_tail_default unless asked "
            "otherwise; 0 for strict closed forms), not a property of the mechanism",
            "mu_by_delta_tail": "the tight mu (an upper bound) at each delta_tail; no mu "
            "where delta_tail is below the accountant's floor (kind says so); the row with "
            "kind 'tail limit' and delta_tail 0 is the GDPT tail limit mu_tail, a lower bound "
            "on the strict (delta_tail = 0) mu, not a certified mu",
            "bounds": "epsilon, regret, advantage are upper bounds; *_lower are lower bounds; "
            "beta is pessimistic (the true beta is at least it), beta_optimistic the other side",
            "regret": "Delta-divergence from the curve to the guarantee (Gomez et al. 2025, "
            "Definition 2.10); the guarantee's advantage exceeds the true one by at most "
            "2 x regret (Proposition 4.2)",
        },
    }
    return _clean(payload)


def _rounding_entry(report) -> dict:
    """``rounding_limit`` (the sentence and its numbers) when rounding sets μ, else nothing."""
    info = getattr(report, "rounding_limit", None)
    if info is None:
        return {}
    entry = {
        "explanation": _rounding_sentence(report),
        "log_alpha_zero": info.log_alpha_zero,
        "allowance": info.allowance,
    }
    if info.needed is not None:
        entry["delta_tail_needed"] = info.needed
    if info.suggested_delta_tail is not None:
        entry["suggested_delta_tail"] = info.suggested_delta_tail
        entry["mu_with_suggested_delta_tail"] = info.suggested_mu
    return {"rounding_limit": entry}


def _clean(value):
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item) for item in value]
    if isinstance(value, (np.floating, np.integer)):
        value = value.item()
    return _json_value(value)


def to_json(report) -> str:
    """The report as indented JSON (strict: no NaN or Infinity literals)."""
    return json.dumps(to_dict(report), indent=2, allow_nan=False)
