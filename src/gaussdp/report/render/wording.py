"""Numbers rounded the way that keeps them bounds, and the sentences every format shares.

Upper bounds are rounded up and lower bounds down, toward less privacy either
way (:func:`up`, :func:`down`); the sentences say what a tier, a tail and a
rounding limit mean.
"""

from __future__ import annotations

import math

#: decimal's rounding modes, by name (the module is imported when a number is first
#: rounded for people: a report computed to be read in code never needs it).
_CEILING, _FLOOR = "ROUND_CEILING", "ROUND_FLOOR"


def _special(value: float | None) -> str | None:
    """``n/a`` for None, ``undefined`` for NaN (never printed as ``nan``), ``±inf``, ``0``."""
    if value is None:
        return "n/a"
    value = float(value)
    if math.isnan(value):
        return "undefined"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0.0:
        return "0"
    return None


def _directed(value: float, digits: int, rounding: str) -> str:
    """``value`` to ``digits`` significant digits, rounded in one direction (``g`` style).

    The float's shortest decimal form (``repr``) is rounded, so values that
    print exactly (1.1, 0.25) are not moved by their binary representation.
    """
    text = _special(value)
    if text is not None:
        return text
    from decimal import Decimal

    exact = Decimal(repr(float(value)))
    quantum = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    rounded = exact.quantize(quantum, rounding=rounding)
    return f"{float(rounded):.{digits}g}"


def up(value: float | None, digits: int = 6) -> str:
    """An upper bound for people: rounded *up* to ``digits`` significant digits.

    Examples
    --------
    >>> up(1.013e-12, 2), up(7.424385, 6), up(0.5646051, 4), up(2.0, 3), up(float("inf"))
    ('1.1e-12', '7.42439', '0.5647', '2', 'inf')
    """
    return _directed(value, digits, _CEILING)


def down(value: float | None, digits: int = 6) -> str:
    """A lower bound for people: rounded *down* to ``digits`` significant digits.

    Examples
    --------
    >>> down(7.424389, 6), down(0.5646059, 4), down(1e-12, 2)
    ('7.42438', '0.5646', '1e-12')
    """
    return _directed(value, digits, _FLOOR)


def up_fixed(value: float, decimals: int = 4) -> str:
    """An upper bound with a fixed number of decimals (μ), rounded up.

    Examples
    --------
    >>> up_fixed(1.568744), up_fixed(1.0), up_fixed(float("inf"))
    ('1.5688', '1.0000', 'inf')
    """
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return _special(value)
    from decimal import Decimal

    rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=_CEILING)
    return f"{rounded:f}"


def _json_value(value):
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    return value


def _beta_text(beta: float, bound: str) -> str:
    """β near 1 as 1 − (1 − β), so the digits that matter are visible.

    ``bound`` is "lower" (β rounded down, so 1 − β up) or "upper".
    """
    lower = bound == "lower"
    if 0.999 < beta < 1.0:
        return f"1 - {up(1.0 - beta, 4) if lower else down(1.0 - beta, 4)}"
    return down(beta, 6) if lower else up(beta, 6)


def _up_from_log(log_value: float, digits: int = 2) -> str:
    """e^{log_value} rounded up, also where it underflows a float (e.g. ``3e-400``)."""
    if log_value > -700.0:
        return up(math.exp(log_value), digits)
    tens = log_value / math.log(10.0)
    exponent = math.floor(tens)
    mantissa = up(10.0 ** (tens - exponent), digits)
    if mantissa == "10":
        mantissa, exponent = "1", exponent + 1
    return f"{mantissa}e{exponent}"


def _rounding_sentence(report) -> str | None:
    """Where rounding, not the mechanism, sets μ or makes it ∞, in plain words (or None)."""
    info = getattr(report, "rounding_limit", None)
    if info is None:
        return None
    if math.isinf(info.log_alpha_zero):
        where = (
            "the computed curve starts below 1 - delta_tail at alpha = 0 (more mass at "
            "infinite privacy loss than delta_tail)"
        )
        needed = f"at least {up(info.needed, 2)}"
    else:
        alpha = _up_from_log(info.log_alpha_zero)
        where = (
            f"the computed curve reaches true-positive rate 1 at false-positive rate "
            f"alpha = {alpha} (an attack with no false negatives there is not ruled out)"
        )
        if info.allowance > 0.0:
            where += (
                ": its false-negative rate there is no larger than the accountant's rounding "
                f"allowance ({up(info.allowance, 2)}, added to every true-positive rate), which "
                "swamps it"
            )
        else:
            where += ": its false-negative rate there is below double precision near 1"
        needed = f"at least 1 - {alpha}"
    rows = [row.mu_at_delta for row in report.epsilons]
    if math.isfinite(report.mu):
        return f"mu is set where {where}; the epsilon rows need at most mu = {up(max(rows), 5)}"
    sentence = (
        f"no finite mu is certified: {where}. The epsilon rows still hold, and 'needs mu' is "
        "what each single (epsilon, delta) point needs. "
    )
    if info.suggested_delta_tail is not None:
        return (
            f"{sentence}With --delta-tail {info.suggested_delta_tail:g} (delta_tail="
            f"{info.suggested_delta_tail:g} in Python) mu = {up_fixed(info.suggested_mu)}"
        )
    return f"{sentence}A larger --delta-tail does not help (it would have to be {needed})"


def _capital(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


def _tier_sentence(report) -> str:
    if report.tier == 1:
        return "Tier I: regret <= 0.01, so mu describes the whole trade-off curve"
    return "Tier II: regret > 0.01, so report the tabulated curve as well as mu"


def _tail_sentence(report) -> str:
    tail = report.mu_tail
    if tail is None:
        return "no rule is known for this mechanism's tail"
    if math.isinf(tail):
        return (
            "the tail is not GDP for any mu: the mechanism has mass at infinite privacy loss "
            "(an (epsilon, delta) piece), so every guarantee needs a failure probability"
        )
    if tail > report.mu * (1.0 + 1e-9):
        return (
            f"the far tail needs mu = {up(tail, 5)} (the GDPT tail limit; subsampling does not "
            "amplify the tail), so a strict (delta = 0) guarantee needs that much"
        )
    return f"the far tail needs mu = {up(tail, 5)} (the GDPT tail limit), no more than mu"
