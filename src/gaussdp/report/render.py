"""Rendering a :class:`~gaussdp.report.core.Report`: text, JSON, Markdown, HTML with SVG.

Every number is printed with the kind of bound it is, and rounded in the
direction that keeps it one: upper bounds (μ, δ_tail, ε, regret, advantage)
*up*, lower bounds (the ε and advantage lower bounds, the pessimistic β)
*down* — toward less privacy either way (:func:`up`, :func:`down`). JSON keeps
the full floats. Infinite values are written ``inf`` (JSON: the string
``"inf"``); a report never contains NaN.
Every rendering states the failure probability next to μ ("μ-GDP except with
probability δ_tail", and whether δ_tail is the default
:data:`~gaussdp.report.core.DEFAULT_DELTA_TAIL`) and gives μ by δ_tail
(:attr:`~gaussdp.report.core.Report.mu_by_delta_tail`), ending, where known, in
the GDPT tail limit: a lower bound on the strict (δ_tail = 0) μ, not a
certified μ.
The HTML page is self-contained: inline CSS and inline SVG figures (the curve
against the reported guarantee on linear axes, the attack's ROC on log-log
axes, the curve minus the guarantee, and μ against δ_tail on a log axis), no
scripts, no network.
"""

from __future__ import annotations

import html
import json
import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import numpy as np

from gaussdp._validation import InvalidParameterError
from gaussdp.report.defaults import DEFAULT_DELTA_TAIL

__all__ = [
    "FORMATS",
    "down",
    "render",
    "to_dict",
    "to_html",
    "to_json",
    "to_markdown",
    "to_text",
    "up",
    "up_fixed",
]

FORMATS = ("text", "json", "markdown", "html")


# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------


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
    return _directed(value, digits, ROUND_CEILING)


def down(value: float | None, digits: int = 6) -> str:
    """A lower bound for people: rounded *down* to ``digits`` significant digits.

    Examples
    --------
    >>> down(7.424389, 6), down(0.5646059, 4), down(1e-12, 2)
    ('7.42438', '0.5646', '1e-12')
    """
    return _directed(value, digits, ROUND_FLOOR)


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
    rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_CEILING)
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


# ---------------------------------------------------------------------------
# μ by δ_tail
# ---------------------------------------------------------------------------

_TAIL_LIMIT = "tail limit"


def _is_default(report) -> bool:
    return report.delta_tail == DEFAULT_DELTA_TAIL


def _origin(report) -> str:
    """Where the report's δ_tail came from: "strict", "default", "floor" or "declared".

    "floor": the default was below the accountant's floor (mass at infinite
    loss, or certified slack), so δ_tail is the floor itself.
    """
    if report.delta_tail == 0.0:
        return "strict"
    if _is_default(report):
        return "default"
    if DEFAULT_DELTA_TAIL < report.delta_floor and report.delta_tail <= report.delta_floor:
        return "floor"
    return "declared"


def _declared(report) -> str:
    """How the report's δ_tail was chosen, for the guarantee line."""
    return {
        "default": "the default",
        "floor": f"the accountant's floor: the default {DEFAULT_DELTA_TAIL:g} is below it",
    }.get(_origin(report), f"declared; the default is {DEFAULT_DELTA_TAIL:g}")


def _delta_tail_kind(report) -> str:
    """The δ_tail row's kind in the Markdown and HTML summaries."""
    return {
        "strict": "no failure probability needed (strict)",
        "default": f"declared failure probability (default {DEFAULT_DELTA_TAIL:g})",
        "floor": f"the accountant's floor (the default {DEFAULT_DELTA_TAIL:g} is below it)",
    }.get(_origin(report), f"declared failure probability (not the default {DEFAULT_DELTA_TAIL:g})")


def _certified_rows(report) -> list:
    return [row for row in report.mu_by_delta_tail if row.kind != _TAIL_LIMIT]


def _tail_row(report):
    rows = [row for row in report.mu_by_delta_tail if row.kind == _TAIL_LIMIT]
    return rows[0] if rows else None


def _mu_constant(report) -> bool:
    """True for strict reports whose μ table would repeat μ (e.g. Gaussian compositions).

    Every certified row and the tail limit print as the reported μ (at
    :func:`up_fixed`'s digits); a strict report with a row that differs
    (μ lower with a failure probability) shows the table.
    """
    if report.delta_tail > 0.0:
        return False
    printed = up_fixed(report.mu)
    for row in report.mu_by_delta_tail:
        if row.kind == _TAIL_LIMIT:
            if row.mu > report.mu:
                return False
        elif row.mu is None or up_fixed(row.mu) != printed:
            return False
    return True


def _tail_amplified(report, tail: float) -> bool:
    """True where the tail limit exceeds every certified μ (subsampling's unamplified tail)."""
    finite = [row.mu for row in _certified_rows(report) if row.mu is not None]
    return bool(finite) and tail > max(finite) * (1.0 + 1e-9)


def _tail_row_text(report, tail: float) -> str:
    """The δ_tail → 0 end of the table, in words (text format)."""
    if math.isinf(tail):
        return (
            "mu = inf (not GDP for any mu: mass at infinite privacy loss needs a failure "
            "probability)"
        )
    why = "; subsampling does not amplify the tail" if _tail_amplified(report, tail) else ""
    return (
        f"mu >= {up(tail, 5)} (GDPT tail limit, a lower bound on the strict mu, not certified{why})"
    )


def _mu_row_cells(report) -> list[tuple[str, str, str]]:
    """(δ_tail, μ, note) for each row of the μ table, printed (upper bounds rounded up)."""
    cells = []
    if report.delta_tail == 0.0:
        cells.append(("0", up_fixed(report.mu), "reported: strict mu-GDP"))
    for row in _certified_rows(report):
        note = "reported" if row.delta_tail == report.delta_tail else ""
        if row.delta_tail == DEFAULT_DELTA_TAIL:
            note = f"{note}, the default" if note else "the default"
        if row.mu is None:
            cells.append(
                (
                    up(row.delta_tail, 2),
                    "not certified",
                    f"below the accountant's floor {up(report.delta_floor, 2)}",
                )
            )
        else:
            cells.append((up(row.delta_tail, 2), up_fixed(row.mu), note))
    tail = _tail_row(report)
    if tail is not None and report.delta_tail > 0.0:
        cells.append(("-> 0", _tail_mu_cell(tail.mu), _TAIL_LIMIT))
    return cells


def _tail_mu_cell(tail: float) -> str:
    return "inf" if math.isinf(tail) else f">= {up(tail, 5)}"


def _mu_table_text(report) -> list[str]:
    if _mu_constant(report):
        same = all(row.mu == report.mu for row in _certified_rows(report))
        how = "strict closed form" if report.exact else "strict mu-GDP"
        how += (
            "; a failure probability does not lower it"
            if same
            else "; a failure probability lowers it by less than the last digit"
        )
        every = f"mu = {up_fixed(report.mu)} for every delta_tail, including 0"
        return [f"mu by delta_tail: {every} ({how})"]
    lines = [
        "mu by delta_tail (upper bounds; the mechanism is mu-GDP except with probability "
        "delta_tail):"
    ]
    if report.delta_tail == 0.0:
        lines.append(f"  delta_tail = 0: mu = {up_fixed(report.mu)} (reported: strict mu-GDP)")
    for row in _certified_rows(report):
        head = f"  delta_tail = {up(row.delta_tail, 2)}: "
        if row.mu is None:
            lines.append(
                f"{head}not certified (below the accountant's floor {up(report.delta_floor, 2)})"
            )
            continue
        marks = []
        if row.delta_tail == report.delta_tail:
            marks.append("reported")
        if row.delta_tail == DEFAULT_DELTA_TAIL:
            marks.append("the default")
        mark = f" ({', '.join(marks)})" if marks else ""
        lines.append(f"{head}mu = {up_fixed(row.mu)}{mark}")
    tail = _tail_row(report)
    if tail is not None and report.delta_tail > 0.0:
        lines.append(f"  delta_tail -> 0: {_tail_row_text(report, tail.mu)}")
    return lines


# ---------------------------------------------------------------------------
# Dictionary / JSON
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------


def _guarantee_line(report) -> str:
    if report.delta_tail > 0.0:
        return (
            f"mu = {up_fixed(report.mu)}  (mu-GDP except with probability "
            f"delta_tail = {up(report.delta_tail, 2)}, {_declared(report)})"
        )
    return f"mu = {up_fixed(report.mu)}  (strict mu-GDP: no failure probability)"


def to_text(report) -> str:
    """The report as plain text."""
    neighbouring = report.neighbouring.value.replace("_", "/")
    lines = [f"{report.title}  [{neighbouring} neighbouring]", _guarantee_line(report)]
    lines += _mu_table_text(report)
    lines.append(f"regret = {up(report.regret, 3)} (upper bound): {_tier_sentence(report)}")
    lines.append(
        f"advantage = {up(report.advantage, 5)} (upper bound; lower bound "
        f"{down(report.advantage_lower, 5)}); mu implies {up(report.advantage_mu, 5)}, "
        f"at most 2 x regret = {up(2.0 * report.regret, 3)} more"
    )
    lines.append("where mu stops holding:")
    if report.delta_tail > 0.0:
        if _origin(report) == "floor":
            lines.append(
                f"  delta_tail = {up(report.delta_tail, 2)} is the accountant's floor, not a "
                f"declared choice: the default {DEFAULT_DELTA_TAIL:g} is below it, and no "
                "smaller delta_tail is certified"
            )
        else:
            default = "the default" if _is_default(report) else "not the default"
            lines.append(
                f"  delta_tail = {up(report.delta_tail, 2)} is a declared failure probability "
                f"({default}), not a property of the mechanism: a smaller one needs a larger mu "
                "(see mu by delta_tail)"
            )
        lines.append(
            f"  certified down to delta = {up(report.delta_tail, 2)} (epsilon up to "
            f"{down(report.epsilon_tail, 5)}); the accountant resolves nothing below its "
            f"floor {up(report.delta_floor, 2)}"
        )
    else:
        how = "closed form" if report.exact else "no failure probability needed"
        lines.append(f"  certified for every delta ({how})")
    lines.append(f"  {_tail_sentence(report)}")
    infinite = _rounding_sentence(report)
    if infinite is not None:
        lines.append(f"  {infinite}")
    lines.append("epsilon at delta (upper bound, lower bound; from mu; the mu this point needs):")
    for row in report.epsilons:
        lines.append(
            f"  delta = {row.delta:g}: epsilon = {up(row.epsilon, 6)} (lower "
            f"{down(row.epsilon_lower, 6)}); mu gives {up(row.epsilon_mu, 6)}; "
            f"needs mu = {up(row.mu_at_delta, 5)}"
        )
    if report.tier == 2:
        lines.append(
            "trade-off curve (beta = smallest false-negative rate at false-positive alpha):"
        )
        lines.append("  alpha          beta (pessimistic)   beta (optimistic)    beta from mu")
        for row in report.table:
            label = f"  {row.label}" if row.label else ""
            lines.append(
                f"  {row.alpha:<14.4g} {_beta_text(row.beta, 'lower'):<20} "
                f"{_beta_text(row.beta_optimistic, 'upper'):<20} "
                f"{_beta_text(row.beta_mu, 'lower')}{label}"
            )
    lines.append(f"method: {report.method}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------


def _markdown_summary(report) -> list[str]:
    strict = "0 (strict, closed form)" if report.exact else "0 (strict)"
    failure = up(report.delta_tail, 2) if report.delta_tail > 0.0 else strict
    declared = _delta_tail_kind(report)
    tail = "—" if report.mu_tail is None else up(report.mu_tail, 5)
    return [
        "| quantity | value | kind |",
        "|---|---|---|",
        f"| μ | {up_fixed(report.mu)} | "
        + ("μ-GDP except with probability δ_tail |" if report.delta_tail > 0 else "strict μ-GDP |"),
        f"| δ_tail | {failure} | {declared}; certified down to this δ "
        f"(ε ≤ {down(report.epsilon_tail, 5)}) |",
        f"| regret Δ | {up(report.regret, 3)} | upper bound (Δ-divergence to μ) |",
        f"| tier | {'I' if report.tier == 1 else 'II'} | Tier I iff regret ≤ 0.01 |",
        f"| advantage | {up(report.advantage, 5)} | upper bound (lower "
        f"{down(report.advantage_lower, 5)}; μ implies {up(report.advantage_mu, 5)}) |",
        f"| μ of the far tail | {tail} | GDPT tail limit: a strict (δ = 0) guarantee needs "
        "at least this |",
    ]


def _mu_table_markdown(report) -> list[str]:
    """The pasteable μ-by-δ_tail table (or one line where every row is μ)."""
    if _mu_constant(report):
        how = "strict, closed form" if report.exact else "strict"
        return [f"μ = {up_fixed(report.mu)} for every δ_tail, including 0 ({how})."]
    lines = [
        "μ by δ_tail (upper bounds: μ-GDP except with probability δ_tail):",
        "",
        "| δ_tail | μ (upper bound) |",
        "|---|---|",
    ]
    for delta_tail, mu, note in _mu_row_cells(report):
        if note == _TAIL_LIMIT:
            lines.append(f"| → 0 | {mu.replace('>=', '≥')} (tail limit) |")
            continue
        if mu == "not certified":
            lines.append(f"| {delta_tail} | not certified ({note}) |")
            continue
        lines.append(f"| {delta_tail} | {mu}{f' ({note})' if note else ''} |")
    if _tail_row(report) is not None and report.delta_tail > 0.0:
        lines += [
            "",
            "The tail limit (δ_tail → 0) is a lower bound on the strict μ, not a certified μ.",
        ]
    return lines


def to_markdown(report) -> str:
    """The report as Markdown: a summary table, ε at δ, and (Tier II) the curve."""
    neighbouring = report.neighbouring.value.replace("_", "/")
    lines = [f"### {report.title}", "", f"*{neighbouring} neighbouring; {report.method}*", ""]
    lines += _markdown_summary(report)
    lines += ["", *_mu_table_markdown(report)]
    lines += [
        "",
        "| δ | ε (upper) | ε (lower) | ε from μ | μ needed at δ |",
        "|---|---|---|---|---|",
    ]
    for row in report.epsilons:
        lines.append(
            f"| {row.delta:g} | {up(row.epsilon, 6)} | {down(row.epsilon_lower, 6)} | "
            f"{up(row.epsilon_mu, 6)} | {up(row.mu_at_delta, 5)} |"
        )
    if report.tier == 2:
        lines += ["", "| α | β (pessimistic) | β (optimistic) | β from μ |", "|---|---|---|---|"]
        for row in report.table:
            name = f"{row.alpha:.4g}" + (" (α*, max advantage)" if row.label else "")
            lines.append(
                f"| {name} | {_beta_text(row.beta, 'lower')} | "
                f"{_beta_text(row.beta_optimistic, 'upper')} | {_beta_text(row.beta_mu, 'lower')} |"
            )
    lines += ["", f"{_capital(_tail_sentence(report))}."]
    infinite = _rounding_sentence(report)
    if infinite is not None:
        lines += ["", f"**{_capital(infinite)}.**"]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# HTML with inline SVG
# ---------------------------------------------------------------------------

_WIDTH, _HEIGHT = 440, 400
_LEFT, _RIGHT, _TOP, _BOTTOM = 74, 16, 18, 52
_LOG_FLOOR = 1e-12


def _polyline(xs, ys, colour: str, dash: str = "", width: float = 2.0) -> str:
    points = " ".join(f"{x:.2f},{y:.2f}" for x, y in zip(xs, ys, strict=True))
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<polyline fill="none" stroke="{colour}" stroke-width="{width}"{dashed} '
        f'points="{points}"/>'
    )


def _frame(title: str, x_label: str, y_label: str, ticks_x, ticks_y) -> list[str]:
    inner_w = _WIDTH - _LEFT - _RIGHT
    inner_h = _HEIGHT - _TOP - _BOTTOM
    parts = [
        f'<rect x="{_LEFT}" y="{_TOP}" width="{inner_w}" height="{inner_h}" '
        'fill="white" stroke="#444"/>',
    ]
    for position, label in ticks_x:
        x = _LEFT + position * inner_w
        parts.append(
            f'<line x1="{x:.2f}" y1="{_TOP}" x2="{x:.2f}" y2="{_TOP + inner_h}" stroke="#ddd"/>'
        )
        parts.append(
            f'<text x="{x:.2f}" y="{_TOP + inner_h + 16}" font-size="11" '
            f'text-anchor="middle">{html.escape(label)}</text>'
        )
    for position, label in ticks_y:
        y = _TOP + (1.0 - position) * inner_h
        parts.append(
            f'<line x1="{_LEFT}" y1="{y:.2f}" x2="{_LEFT + inner_w}" y2="{y:.2f}" stroke="#ddd"/>'
        )
        parts.append(
            f'<text x="{_LEFT - 6}" y="{y + 4:.2f}" font-size="11" '
            f'text-anchor="end">{html.escape(label)}</text>'
        )
    parts.append(
        f'<text x="{_LEFT + inner_w / 2:.1f}" y="{_HEIGHT - 12}" font-size="13" '
        f'text-anchor="middle">{html.escape(x_label)}</text>'
    )
    parts.append(
        f'<text x="14" y="{_TOP + inner_h / 2:.1f}" font-size="13" text-anchor="middle" '
        f'transform="rotate(-90 14 {_TOP + inner_h / 2:.1f})">{html.escape(y_label)}</text>'
    )
    parts.insert(0, f"<title>{html.escape(title)}</title>")
    return parts


def _legend(entries, *, bottom: bool = False) -> list[str]:
    parts = []
    first = _HEIGHT - _BOTTOM - 12 - 16 * (len(entries) - 1) if bottom else _TOP + 16
    for i, (label, colour, dash) in enumerate(entries):
        y = first + 16 * i
        x = _WIDTH - _RIGHT - 190
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<line x1="{x}" y1="{y}" x2="{x + 22}" y2="{y}" stroke="{colour}" '
            f'stroke-width="2"{dashed}/>'
        )
        parts.append(f'<text x="{x + 28}" y="{y + 4}" font-size="11">{html.escape(label)}</text>')
    return parts


def _svg(parts: list[str], label: str) -> str:
    body = "\n  ".join(parts)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" aria-label="{html.escape(label)}">\n'
        f"  {body}\n</svg>"
    )


def linear_svg(report) -> str:
    """The curve f (pessimistic), its optimistic side and G_μ ⊗ f_{0,δ} on [0, 1]²."""
    alphas = np.linspace(0.0, 1.0, 401)
    inner_w = _WIDTH - _LEFT - _RIGHT
    inner_h = _HEIGHT - _TOP - _BOTTOM

    def xy(a, b):
        return _LEFT + np.asarray(a) * inner_w, _TOP + (1.0 - np.asarray(b)) * inner_h

    ticks = [(t, f"{t:g}") for t in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)]
    parts = _frame(
        "trade-off curve", "alpha (false-positive rate)", "beta (false-negative rate)", ticks, ticks
    )
    parts.append(_polyline(*xy([0, 1], [1, 0]), "#999", "4 4", 1.0))
    parts.append(_polyline(*xy(alphas, report.beta_optimistic(alphas)), "#9ecae1", "", 4.0))
    parts.append(_polyline(*xy(alphas, report.beta(alphas)), "#1f77b4"))
    parts.append(_polyline(*xy(alphas, report.beta_mu(alphas)), "#d62728", "6 3"))
    parts += _legend(
        [
            ("curve (pessimistic)", "#1f77b4", ""),
            ("curve (optimistic)", "#9ecae1", ""),
            (f"mu-GDP, mu = {up(report.mu, 4)}", "#d62728", "6 3"),
            ("no privacy loss", "#999", "4 4"),
        ]
    )
    return _svg(parts, f"trade-off curve against mu = {up(report.mu, 4)}")


def log_svg(report) -> str:
    """The attack's ROC, TPR = 1 − β against FPR = α, on log-log axes (α ≥ 1e-12)."""
    low = math.log10(_LOG_FLOOR)
    alphas = np.logspace(low, 0.0, 361)
    inner_w = _WIDTH - _LEFT - _RIGHT
    inner_h = _HEIGHT - _TOP - _BOTTOM

    def tpr(values):
        return np.clip(1.0 - np.asarray(values), _LOG_FLOOR, 1.0)

    def xy(a, t):
        x = (np.log10(np.maximum(a, _LOG_FLOOR)) - low) / -low
        y = (np.log10(t) - low) / -low
        return _LEFT + x * inner_w, _TOP + (1.0 - y) * inner_h

    ticks = [((e - low) / -low, f"1e{e}" if e else "1") for e in range(int(low), 1, 2)]
    parts = _frame(
        "membership-attack ROC (log-log)",
        "FPR = alpha",
        "TPR = 1 - beta",
        ticks,
        ticks,
    )
    parts.append(_polyline(*xy(alphas, alphas), "#999", "4 4", 1.0))
    parts.append(_polyline(*xy(alphas, tpr(report.beta(alphas))), "#1f77b4"))
    parts.append(_polyline(*xy(alphas, tpr(report.beta_mu(alphas))), "#d62728", "6 3"))
    parts += _legend(
        [
            ("curve (pessimistic)", "#1f77b4", ""),
            (f"mu-GDP, mu = {up(report.mu, 4)}", "#d62728", "6 3"),
            ("TPR = FPR", "#999", "4 4"),
        ],
        bottom=True,
    )
    return _svg(parts, "attack ROC on log-log axes")


def difference_svg(report) -> str:
    """f(α) − (G_μ ⊗ f_{0,δ})(α): how far the curve lies above the guarantee (≥ 0)."""
    alphas = np.linspace(0.0, 1.0, 401)
    gap = np.maximum(report.beta(alphas) - report.beta_mu(alphas), 0.0)
    top = float(np.max(gap))
    scale = 10.0 ** math.ceil(math.log10(top)) if top > 0.0 else 1e-12
    if top > 0.0 and top <= scale / 2:
        scale /= 2
    inner_w = _WIDTH - _LEFT - _RIGHT
    inner_h = _HEIGHT - _TOP - _BOTTOM

    def xy(a, g):
        return _LEFT + np.asarray(a) * inner_w, _TOP + (1.0 - np.asarray(g) / scale) * inner_h

    ticks_x = [(t, f"{t:g}") for t in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)]
    ticks_y = [(t, f"{t * scale:.3g}") for t in (0.0, 0.25, 0.5, 0.75, 1.0)]
    parts = _frame(
        "curve minus guarantee",
        "alpha (false-positive rate)",
        "beta - beta from mu",
        ticks_x,
        ticks_y,
    )
    parts.append(_polyline(*xy(alphas, gap), "#2ca02c"))
    parts += _legend([(f"regret (diagonal) <= {up(report.regret, 3)}", "#ffffff", "")])
    return _svg(parts, "difference between the curve and the mu-GDP curve")


def mu_delta_svg(report) -> str | None:
    """μ against δ_tail (log10 axis): the certified rows joined, the report's δ_tail marked.

    The tail limit is drawn as a dashed horizontal line when it lies within 3×
    the plotted μ range, else left to the caption. None if fewer than two rows
    have a finite μ (one point is no plot; the table says it).
    """
    points = [
        (math.log10(row.delta_tail), float(row.mu))
        for row in _certified_rows(report)
        if row.mu is not None and math.isfinite(row.mu) and row.delta_tail > 0.0
    ]
    if len(points) < 2:
        return None
    points.sort()
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    x_low, x_high = math.floor(min(xs)) - 0.5, math.ceil(max(xs)) + 0.5
    y_low, y_high = min(ys), max(ys)
    if report.delta_tail == 0.0:
        y_low, y_high = min(y_low, report.mu), max(y_high, report.mu)
    tail = _tail_row(report)
    tail_mu = None if tail is None or report.delta_tail == 0.0 else tail.mu
    span = max(y_high - y_low, 1e-3 * max(abs(y_high), 1.0))
    tail_drawn = (
        tail_mu is not None
        and math.isfinite(tail_mu)
        and y_low - 2 * span <= tail_mu
        and tail_mu <= y_high + 2 * span
    )
    if tail_drawn:
        y_low, y_high = min(y_low, tail_mu), max(y_high, tail_mu)
        span = max(y_high - y_low, span)
    y_low, y_high = y_low - 0.12 * span, y_high + 0.3 * span  # room for the legend
    inner_w = _WIDTH - _LEFT - _RIGHT
    inner_h = _HEIGHT - _TOP - _BOTTOM

    def position_x(x):
        return (x - x_low) / (x_high - x_low)

    def position_y(y):
        return (y - y_low) / (y_high - y_low)

    def xy(x, y):
        return _LEFT + position_x(x) * inner_w, _TOP + (1.0 - position_y(y)) * inner_h

    ticks_x = [(position_x(e), f"1e{e}") for e in range(math.ceil(x_low), math.floor(x_high) + 1)]
    step = (y_high - y_low) / 4.0
    decimals = max(0, 1 - math.floor(math.log10(step)))
    ticks_y = [(i / 4.0, f"{y_low + i * step:.{decimals}f}") for i in range(5)]
    parts = _frame(
        "mu against delta_tail", "delta_tail (log scale)", "mu (upper bound)", ticks_x, ticks_y
    )
    legend = [("mu at delta_tail (upper bound)", "#1f77b4", "")]
    if tail_drawn:
        left, level = xy(x_low, tail_mu)
        right, _ = xy(x_high, tail_mu)
        parts.append(_polyline([left, right], [level, level], "#7f7f7f", "6 4", 1.5))
        parts.append(
            f'<text x="{left + 6:.2f}" y="{level - 5:.2f}" font-size="11" fill="#555">'
            f"{html.escape(f'tail limit (delta_tail -> 0): mu >= {up(tail_mu, 5)}')}</text>"
        )
        legend.append(("tail limit (lower bound)", "#7f7f7f", "6 4"))
    if report.delta_tail == 0.0:
        left, level = xy(x_low, report.mu)
        right, _ = xy(x_high, report.mu)
        parts.append(_polyline([left, right], [level, level], "#d62728", "6 3"))
        legend.append((f"reported: strict mu = {up_fixed(report.mu)}", "#d62728", "6 3"))
    parts.append(_polyline(*zip(*(xy(x, y) for x, y in points), strict=True), "#1f77b4"))
    for x, y in points:
        cx, cy = xy(x, y)
        parts.append(f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="3.5" fill="#1f77b4"/>')
    if report.delta_tail > 0.0 and math.isfinite(report.mu):
        cx, cy = xy(math.log10(report.delta_tail), report.mu)
        parts.append(
            f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="6" fill="none" stroke="#d62728" '
            'stroke-width="2.5"/>'
        )
        parts.append(
            f'<text x="{cx + 10:.2f}" y="{cy - 9:.2f}" font-size="11" '
            f'fill="#d62728">reported: mu = {up_fixed(report.mu)}</text>'
        )
        legend.append((f"reported delta_tail = {up(report.delta_tail, 2)}", "#d62728", ""))
    parts += _legend(legend)
    return _svg(parts, "mu against delta_tail on a log axis")


def _mu_delta_caption(report) -> str:
    """What the μ-by-δ_tail figure does not show, in words."""
    tail = _tail_row(report)
    if tail is None or report.delta_tail == 0.0:
        return "Each point is an upper bound on μ at that δ_tail."
    if math.isinf(tail.mu):
        return (
            "Each point is an upper bound on μ at that δ_tail. As δ_tail → 0 no finite μ "
            "holds: the mechanism has mass at infinite privacy loss."
        )
    note = (
        "dashed line"
        if "tail limit (lower bound)" in (mu_delta_svg(report) or "")
        else "off the plotted range"
    )
    return (
        f"Each point is an upper bound on μ at that δ_tail. As δ_tail → 0, μ rises to the "
        f"GDPT tail limit μ ≥ {up(tail.mu, 5)} ({note}): a lower bound on the strict μ, not a "
        "certified μ."
    )


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 62rem; margin: 2rem auto; color: #222;
       padding: 0 1rem; }
h1 { font-size: 1.4rem; }
.headline { font-size: 1.25rem; margin: 0.5rem 0 1rem; }
table { border-collapse: collapse; margin: 0.6rem 0 1.2rem; }
td, th { border: 1px solid #ccc; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f3f3f3; }
.figures { display: flex; flex-wrap: wrap; gap: 1rem; }
.note { color: #555; font-size: 0.9rem; }
.warning { border-left: 4px solid #d62728; padding-left: 0.6rem; }
.mu-table { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
tr.reported td { font-weight: bold; }
.nowrap { white-space: nowrap; }
figure { margin: 0; }
figcaption { color: #555; font-size: 0.9rem; max-width: 440px; }
"""


def _mu_section_html(report) -> str:
    """μ by δ_tail: the table and the figure (or one line where every row is μ)."""
    e = html.escape
    if _mu_constant(report):
        how = "strict, closed form" if report.exact else "strict"
        return (
            f"<h2>μ by δ_tail</h2>\n<p>μ = {up_fixed(report.mu)} for every δ_tail, "
            f"including 0 ({how}).</p>\n"
        )
    rows = []
    for delta_tail, mu, note in _mu_row_cells(report):
        if note == _TAIL_LIMIT:
            delta_tail, mu, note = "→ 0", mu.replace(">=", "≥"), "GDPT tail limit (lower bound)"
        reported = ' class="reported"' if note.startswith("reported") else ""
        rows.append(
            f"<tr{reported}><td>{e(delta_tail)}</td><td>{e(mu)}</td><td>{e(note)}</td></tr>"
        )
    figure = mu_delta_svg(report)
    figure_html = (
        ""
        if figure is None
        else f"<figure>\n{figure}\n<figcaption>{e(_mu_delta_caption(report))}</figcaption>\n"
        "</figure>\n"
    )
    return (
        "<h2>μ by δ_tail</h2>\n<p>The mechanism is μ-GDP except with probability δ_tail; "
        "each μ is an upper bound. δ_tail is a declared choice (default "
        f'<span class="nowrap">{DEFAULT_DELTA_TAIL:g}</span>).</p>\n<div class="mu-table">\n'
        "<table><tr><th>δ_tail</th><th>μ (upper bound)</th><th>note</th></tr>"
        f"{''.join(rows)}</table>\n{figure_html}</div>\n"
    )


def to_html(report) -> str:
    """A self-contained HTML page: summary, μ by δ_tail, ε table, curve table, SVG figures."""
    e = html.escape
    neighbouring = report.neighbouring.value.replace("_", "/")
    failure = (
        f"except with probability δ_tail = {up(report.delta_tail, 2)} ({_declared(report)})"
        if report.delta_tail > 0.0
        else ("strictly (closed form)" if report.exact else "strictly")
    )
    summary = "".join(
        f"<tr><th>{e(name)}</th><td>{e(value)}</td><td>{e(kind)}</td></tr>"
        for name, value, kind in (
            ("μ", up_fixed(report.mu), f"μ-GDP {failure}"),
            (
                "δ_tail",
                up(report.delta_tail, 2) if report.delta_tail > 0.0 else "0",
                _delta_tail_kind(report),
            ),
            (
                "regret Δ",
                up(report.regret, 3),
                "upper bound; " + ("Tier I (≤ 0.01)" if report.tier == 1 else "Tier II (> 0.01)"),
            ),
            (
                "advantage",
                up(report.advantage, 5),
                f"upper bound (lower {down(report.advantage_lower, 5)}); "
                f"μ implies {up(report.advantage_mu, 5)}, at most 2·regret more",
            ),
            (
                "certified down to",
                f"δ = {up(report.delta_tail, 3)}",
                f"ε ≤ {down(report.epsilon_tail, 5)}; accountant floor {up(report.delta_floor, 3)}",
            ),
            (
                "μ of the far tail",
                "—" if report.mu_tail is None else up(report.mu_tail, 5),
                "GDPT tail limit: a strict (δ = 0) guarantee needs at least this",
            ),
        )
    )
    epsilon_rows = "".join(
        f"<tr><td>{row.delta:g}</td><td>{up(row.epsilon, 6)}</td>"
        f"<td>{down(row.epsilon_lower, 6)}</td><td>{up(row.epsilon_mu, 6)}</td>"
        f"<td>{up(row.mu_at_delta, 5)}</td></tr>"
        for row in report.epsilons
    )
    curve_rows = "".join(
        f"<tr><td>{row.alpha:.4g}{' (α*)' if row.label else ''}</td>"
        f"<td>{e(_beta_text(row.beta, 'lower'))}</td>"
        f"<td>{e(_beta_text(row.beta_optimistic, 'upper'))}</td>"
        f"<td>{e(_beta_text(row.beta_mu, 'lower'))}</td></tr>"
        for row in report.table
    )
    mu_section = _mu_section_html(report)
    infinite = _rounding_sentence(report)
    infinite_paragraph = (
        "" if infinite is None else f'<p class="warning">{e(_capital(infinite))}.</p>\n'
    )
    tier_note = (
        "Tier I: the regret is at most 0.01, so μ describes the whole curve; the table is "
        "given for reference."
        if report.tier == 1
        else "Tier II: the regret exceeds 0.01, so report this table as well as μ."
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{e(report.title)} — μ-GDP report</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>{e(report.title)}</h1>
<p class="note">{e(neighbouring)} neighbouring; {e(report.method)}</p>
<p class="headline">μ = {up_fixed(report.mu)}, {e(failure)}; regret {up(report.regret, 3)}.</p>
<table>{summary}</table>
<p>{e(_capital(_tail_sentence(report)))}.</p>
{infinite_paragraph}{mu_section}<h2>ε at δ</h2>
<table><tr><th>δ</th><th>ε (upper)</th><th>ε (lower)</th><th>ε from μ</th>
<th>μ needed at δ</th></tr>{epsilon_rows}</table>
<h2>The trade-off curve</h2>
<div class="figures">
{linear_svg(report)}
{log_svg(report)}
{difference_svg(report)}
</div>
<p class="note">{e(tier_note)} β is the smallest false-negative rate of any membership attack
at false-positive rate α; the pessimistic value is a certified lower bound.</p>
<table><tr><th>α</th><th>β (pessimistic)</th><th>β (optimistic)</th><th>β from μ</th></tr>
{curve_rows}</table>
<p class="note">Generated by gaussdp. μ-GDP reporting as proposed by Gomez, Kaissis, Kulynych et
al. (2025); regret is the Δ-divergence of Kaissis et al. (2024).</p>
</body>
</html>
"""


def render(report, output_format: str = "text") -> str:
    """The report in one of :data:`FORMATS`."""
    name = str(output_format).lower()
    if name == "text":
        return to_text(report)
    if name == "json":
        return to_json(report)
    if name == "markdown":
        return to_markdown(report)
    if name == "html":
        return to_html(report)
    raise InvalidParameterError(
        f"output_format must be one of {', '.join(FORMATS)}, got {output_format!r}"
    )
