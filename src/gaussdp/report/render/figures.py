"""The report's figures as inline SVG: the curve against the reported guarantee on
linear axes, the attack's ROC on log-log axes, the curve minus the guarantee, and μ
against δ_tail on a log axis. No scripts, no network.
"""

from __future__ import annotations

import html
import math

import numpy as np

from gaussdp.report.render.mu_table import _certified_rows, _tail_row
from gaussdp.report.render.wording import up, up_fixed

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
