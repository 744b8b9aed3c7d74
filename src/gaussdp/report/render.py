"""Rendering a :class:`~gaussdp.report.core.Report`: text, JSON, Markdown, HTML with SVG.

Every number is printed with the kind of bound it is, and rounded in the
direction that keeps it one: upper bounds (μ, δ_tail, ε, regret, advantage)
*up*, lower bounds (the ε and advantage lower bounds, the pessimistic β)
*down* — toward less privacy either way (:func:`up`, :func:`down`). JSON keeps
the full floats. Infinite values are written ``inf`` (JSON: the string
``"inf"``); a report never contains NaN.
The HTML page is self-contained: inline CSS and two inline SVG figures (the
curve against the reported guarantee on linear axes, and the attack's ROC on
log-log axes), no scripts, no network.
"""

from __future__ import annotations

import html
import json
import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import numpy as np

from gaussdp._validation import InvalidParameterError

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
            f"delta_tail = {up(report.delta_tail, 2)})"
        )
    return f"mu = {up_fixed(report.mu)}  (strict mu-GDP: no failure probability)"


def to_text(report) -> str:
    """The report as plain text."""
    neighbouring = report.neighbouring.value.replace("_", "/")
    lines = [f"{report.title}  [{neighbouring} neighbouring]", _guarantee_line(report)]
    lines.append(f"regret = {up(report.regret, 3)} (upper bound): {_tier_sentence(report)}")
    lines.append(
        f"advantage = {up(report.advantage, 5)} (upper bound; lower bound "
        f"{down(report.advantage_lower, 5)}); mu implies {up(report.advantage_mu, 5)}, "
        f"at most 2 x regret = {up(2.0 * report.regret, 3)} more"
    )
    lines.append("where mu stops holding:")
    if report.delta_tail > 0.0:
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
    tail = "—" if report.mu_tail is None else up(report.mu_tail, 5)
    return [
        "| quantity | value | kind |",
        "|---|---|---|",
        f"| μ | {up_fixed(report.mu)} | "
        + ("μ-GDP except with probability δ_tail |" if report.delta_tail > 0 else "strict μ-GDP |"),
        f"| δ_tail | {failure} | certified down to this δ (ε ≤ {down(report.epsilon_tail, 5)}) |",
        f"| regret Δ | {up(report.regret, 3)} | upper bound (Δ-divergence to μ) |",
        f"| tier | {'I' if report.tier == 1 else 'II'} | Tier I iff regret ≤ 0.01 |",
        f"| advantage | {up(report.advantage, 5)} | upper bound (lower "
        f"{down(report.advantage_lower, 5)}; μ implies {up(report.advantage_mu, 5)}) |",
        f"| μ of the far tail | {tail} | GDPT tail limit (strict δ = 0 guarantee) |",
    ]


def to_markdown(report) -> str:
    """The report as Markdown: a summary table, ε at δ, and (Tier II) the curve."""
    neighbouring = report.neighbouring.value.replace("_", "/")
    lines = [f"### {report.title}", "", f"*{neighbouring} neighbouring; {report.method}*", ""]
    lines += _markdown_summary(report)
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
"""


def to_html(report) -> str:
    """A self-contained HTML page: summary, ε table, curve table and two SVG figures."""
    e = html.escape
    neighbouring = report.neighbouring.value.replace("_", "/")
    failure = (
        f"except with probability δ_tail = {up(report.delta_tail, 2)}"
        if report.delta_tail > 0.0
        else ("strictly (closed form)" if report.exact else "strictly")
    )
    summary = "".join(
        f"<tr><th>{e(name)}</th><td>{e(value)}</td><td>{e(kind)}</td></tr>"
        for name, value, kind in (
            ("μ", up_fixed(report.mu), f"μ-GDP {failure}"),
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
                "GDPT tail limit: what a strict (δ = 0) guarantee needs",
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
{infinite_paragraph}<h2>ε at δ</h2>
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
