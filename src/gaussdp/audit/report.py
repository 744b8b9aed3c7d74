"""The audit beside the accountant: μ_lo (audit) <= μ <= μ_hi (accountant), and a verdict.

:class:`AuditReport` puts an :class:`~gaussdp.audit.result.AuditResult` next to
the accountant's certified answer for the same run: its pessimistic trade-off
curve (a valid f-DP guarantee) and its μ (:meth:`gaussdp.Accounting.gdp`). It
reports the interval ``μ_lo <= μ <= μ_hi``, the share ``μ_lo / μ_hi`` of the
claim the attack realised and a **violation** when a certified audit point lies
below the accountant's curve (for a one-run audit: when the f-DP test of
Mahloujifar, Melis & Chaudhuri rejects the accountant's curve), with the
p-value of that test (:mod:`gaussdp.audit.compare`). Rendered as text, JSON,
Markdown or a self-contained HTML page with an inline log-log ROC figure, like
:mod:`gaussdp.report.render`; lower bounds are rounded down, upper bounds up.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass

import numpy as np

from gaussdp import gdp
from gaussdp._validation import InvalidParameterError
from gaussdp.audit.compare import resolve_accounting
from gaussdp.report.render import down, up

__all__ = ["FORMATS", "AuditReport", "result_text"]

FORMATS = ("text", "json", "markdown", "html")


def _percent(alpha: float) -> str:
    return f"{100.0 * (1.0 - alpha):.6g}%"


def _p_text(p: float) -> str:
    """``p = 0.053`` or ``p < 1e-300`` (rounded up)."""
    return "p < 1e-300" if p <= 1e-300 else f"p = {up(p, 2)}"


def result_text(result) -> str:
    """A few lines for an AuditResult (also its ``str``)."""
    lines = [
        f"audit at {_percent(result.alpha)} confidence (alpha = {result.alpha:g})",
        f"  mu      >= {down(result.mu_lower, 5)}   (lower bound)",
        f"  epsilon >= {down(result.epsilon_lower, 5)}   (lower bound at delta = {result.delta:g})",
    ]
    if result.delta > 0.0:
        lines.append(
            f"  epsilon ~  {down(result.epsilon_from_mu_lower, 5)}   "
            "(model-based: the epsilon of mu_lower-GDP, not a certified bound)"
        )
    lines.append(f"  method: {result.method}")
    for point in result.points:
        where = "" if point.threshold is None else f" at threshold {point.threshold:.6g}"
        lines.append(
            f"  certified point{where}: FPR <= {up(point.fpr_upper, 4)}, "
            f"FNR <= {up(point.fnr_upper, 4)}"
        )
    if result.report is not None:
        lines.append("  " + result.report.verdict())
    return "\n".join(lines)


@dataclass(frozen=True)
class AuditReport:
    """An audit set beside the accountant's certified curve for the same run.

    Attributes
    ----------
    result : AuditResult
        The audit.
    title : str
        The run, as the accountant's report names it.
    mu_upper : float
        The accountant's μ (an upper bound: μ-GDP except with probability ``delta_tail``).
    delta_tail : float
        The failure probability attached to ``mu_upper``.
    epsilon_upper : float or None
        The accountant's ε at the audit's δ (an upper bound; None when δ = 0).
    curve : TradeOff
        The accountant's pessimistic (certified lower) trade-off curve.
    violation : bool
        True if a certified audit point lies below ``curve`` at the audit's α.
    p_value : float
        The smallest α at which the audit would report a violation (1 if none).
    """

    result: object
    title: str
    mu_upper: float
    delta_tail: float
    epsilon_upper: float | None
    curve: object
    violation: bool
    p_value: float

    @classmethod
    def build(cls, result, against) -> AuditReport:
        """Account ``against`` (a mechanism or an Accounting) and test the audit against it."""
        accounting = resolve_accounting(against)
        report = accounting.gdp()
        curve = accounting.tradeoff()
        epsilon_upper = float(accounting.epsilon(result.delta)) if result.delta > 0 else None
        violation, p = result._evidence.test(curve, result.alpha)
        return cls(
            result=result,
            title=str(getattr(report, "title", accounting.mechanism)),
            mu_upper=float(report.mu),
            delta_tail=float(getattr(report, "delta_tail", 0.0)),
            epsilon_upper=epsilon_upper,
            curve=curve,
            violation=bool(violation),
            p_value=float(p),
        )

    @property
    def mu_lower(self) -> float:
        """The audit's μ lower bound."""
        return self.result.mu_lower

    @property
    def share(self) -> float:
        """``μ_lo / μ_hi``: how much of the accountant's claim the attack realised."""
        if self.mu_upper == 0.0:
            return 0.0 if self.mu_lower == 0.0 else math.inf
        return self.mu_lower / self.mu_upper

    def verdict(self) -> str:
        """The test's outcome in words."""
        confidence = _percent(self.result.alpha)
        if self.violation:
            return (
                f"VIOLATION ({_p_text(self.p_value)}): at {confidence} confidence the attack "
                "did better than the accountant's certified curve allows, so the code that ran "
                "leaks more than the accountant claims (a bug, or a mechanism other than the "
                "one described)."
            )
        if self.result.points:
            found = "no certified audit point beats the accountant's curve"
        else:
            found = "the f-DP test does not reject the accountant's curve"
        return (
            f"no violation ({_p_text(self.p_value)}) at {confidence} confidence: {found}; "
            "the audit is consistent with the claim."
        )

    # -- rendering --------------------------------------------------------------------

    def _epsilon_line(self) -> str | None:
        if self.epsilon_upper is None:
            return None
        r = self.result
        return (
            f"{down(r.epsilon_lower, 5)} (audit, lower bound) <= epsilon <= "
            f"{up(self.epsilon_upper, 5)} (accountant, upper bound) at delta = {r.delta:g}"
        )

    def _mu_line(self) -> str:
        tail = f", except with probability {up(self.delta_tail, 2)}" if self.delta_tail else ""
        line = (
            f"{down(self.mu_lower, 5)} (audit, lower bound) <= mu <= "
            f"{up(self.mu_upper, 5)} (accountant, upper bound{tail})"
        )
        if self.mu_lower > self.mu_upper:
            line += ": an empty interval, the audit contradicts the claim"
        return line

    def _share_text(self) -> str:
        """``μ_lo / μ_hi`` in percent, rounded down, without an exponent."""
        percent = 100.0 * self.share
        if math.isinf(percent):
            return "inf%"
        if percent >= 1000.0:
            return f"{math.floor(percent):,}%"
        return f"{down(percent, 3)}%"

    def _share_line(self) -> str:
        line = f"the attack realised {self._share_text()} of the accountant's mu"
        if self.share > 1.0:
            line += " (more than all of it: the audit's lower bound exceeds the claim)"
        return line

    def to_text(self) -> str:
        """Plain text."""
        r = self.result
        lines = [
            f"Audit of {self.title}",
            f"  confidence {_percent(r.alpha)} (alpha = {r.alpha:g})",
            f"  {self._mu_line()}",
            f"  {self._share_line()}",
        ]
        epsilon = self._epsilon_line()
        if epsilon:
            lines.append(f"  {epsilon}")
            lines.append(
                f"  model-based epsilon of the audit's mu: {down(r.epsilon_from_mu_lower, 5)} "
                "(assumes a Gaussian-shaped curve; not certified)"
            )
        lines.append(f"  {self.verdict()}")
        lines.append(f"  method: {r.method}")
        for point in r.points:
            beta = float(self.curve.beta(point.fpr_upper))
            lines.append(
                f"  certified point: FPR <= {up(point.fpr_upper, 4)}, FNR <= "
                f"{up(point.fnr_upper, 4)}; the accountant's curve there: beta >= {down(beta, 4)}"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready values (full floats; infinities as the string "inf")."""
        return clean_json(
            {
                "title": self.title,
                "audit": self.result.to_dict(),
                "accountant": {
                    "mu_upper": self.mu_upper,
                    "delta_tail": self.delta_tail,
                    "epsilon_upper": self.epsilon_upper,
                },
                "mu_interval": [self.mu_lower, self.mu_upper],
                "share_of_mu": self.share,
                "violation": self.violation,
                "p_value": self.p_value,
                "verdict": self.verdict(),
            }
        )

    def to_json(self) -> str:
        """Indented standard JSON (no NaN or Infinity)."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    def _rows(self) -> list[tuple[str, str, str]]:
        """(quantity, value, kind) for the summary tables."""
        r = self.result
        rows = [
            ("μ (audit)", down(self.mu_lower, 5), f"lower bound, {_percent(r.alpha)} confidence"),
            ("μ (accountant)", up(self.mu_upper, 5), "upper bound"),
            (
                "share realised",
                self._share_text(),
                "μ_lo / μ_hi" + (" (over 100%: beyond the claim)" if self.share > 1.0 else ""),
            ),
            ("ε (audit)", down(r.epsilon_lower, 5), f"lower bound at δ = {r.delta:g}"),
        ]
        if self.epsilon_upper is not None:
            rows.append(
                ("ε (accountant)", up(self.epsilon_upper, 5), f"upper bound at δ = {r.delta:g}")
            )
            rows.append(
                ("ε from μ_lo", down(r.epsilon_from_mu_lower, 5), "model-based, not certified")
            )
        p_value = "< 1e-300" if self.p_value <= 1e-300 else up(self.p_value, 2)
        rows.append(("p-value", p_value, "violation test (rounded up)"))
        return rows

    def to_markdown(self) -> str:
        """A Markdown section with a summary table."""
        lines = [
            f"## Audit of {self.title}",
            "",
            "| quantity | value | kind |",
            "|---|---:|---|",
            *(f"| {a} | {b} | {c} |" for a, b, c in self._rows()),
            "",
            f"**{self.verdict()}**",
            "",
            f"Method: {self.result.method}.",
        ]
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        """A self-contained HTML page: summary table, verdict, inline SVG ROC figure."""
        e = html.escape
        colour = "#b00" if self.violation else "#060"
        rows = "".join(
            f"<tr><th>{e(a)}</th><td>{e(b)}</td><td>{e(c)}</td></tr>" for a, b, c in self._rows()
        )
        points = "".join(
            f"<li>FPR ≤ {up(p.fpr_upper, 4)}, FNR ≤ {up(p.fnr_upper, 4)}"
            + ("" if p.threshold is None else f" at threshold {p.threshold:.6g}")
            + (
                " (the reversed test: drawn mirrored, at FPR ≤ "
                f"{up(p.fnr_upper, 4)}, TPR ≥ {down(1.0 - p.fpr_upper, 4)})"
                if _mirrored(p)
                else ""
            )
            + "</li>"
            for p in self.result.points
        )
        points_html = (
            "<h2>Certified points</h2><p>Upper bounds on the attack's error rates, all "
            f"holding together at {_percent(self.result.alpha)} confidence.</p><ul>{points}</ul>"
            if points
            else ""
        )
        return f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Audit of {e(self.title)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}
.verdict{{color:{colour};font-weight:bold}}
figure{{margin:1.5em 0}}figcaption{{max-width:40em;font-size:90%;color:#333}}</style></head>
<body>
<h1>Audit of {e(self.title)}</h1>
<p>{e(self._mu_line())}</p>
<p class="verdict">{e(self.verdict())}</p>
<table>{rows}</table>
<figure>
{roc_svg(self)}
<figcaption>{e(self.caption())}</figcaption>
</figure>
{points_html}
<p>Method: {e(self.result.method)}.</p>
</body>
</html>
"""

    def caption(self) -> str:
        """How to read the figure, in words."""
        text = (
            "Log-log ROC: true-positive rate against false-positive rate. The accountant's "
            "certified curve (blue) bounds every attack on the run as described: no test "
            "of its neighbouring outputs lies above it. Dashed purple: the Gaussian curve "
            "at the audit's lower bound on μ (no μ-GDP claim with a smaller μ survives the "
            "audit)."
        )
        if self.result.points:
            text += (
                f" Boxes: the confidence box of each certified point (all at "
                f"{_percent(self.result.alpha)} together); the dot is the corner the bounds "
                "certify (largest FPR, smallest TPR). A dot above the blue curve is a "
                "violation."
            )
        else:
            text += (
                " A one-run audit certifies no ROC point; its violation test is the f-DP "
                "test of Mahloujifar, Melis & Chaudhuri (2024) applied to the blue curve."
            )
        return text

    def render(self, output_format: str = "text") -> str:
        """The report in one of :data:`FORMATS`."""
        name = str(output_format).lower()
        if name not in FORMATS:
            raise InvalidParameterError(
                f"output_format must be one of {', '.join(FORMATS)}, got {output_format!r}"
            )
        return getattr(self, f"to_{name}")()

    def __str__(self) -> str:
        return self.to_text()

    def roc_points(self, n: int = 241):
        """The figure's data: FPR grid, the accountant's TPR, G_μ_lo's TPR, and the boxes."""
        low = _floor(self)
        fpr = np.logspace(math.log10(low), 0.0, n)
        accountant = 1.0 - np.asarray(self.curve.beta(fpr), dtype=float)
        audit = 1.0 - np.asarray(gdp.beta(self.mu_lower, fpr), dtype=float)
        boxes = []
        for p in self.result.points:
            # A point certified through the reversed pair (D', D) is drawn mirrored: the
            # same rejection region has error rates (FNR, FPR) there (symmetric relation).
            if _mirrored(p):
                boxes.append((p.fnr_lower, p.fnr_upper, 1.0 - p.fpr_upper, 1.0 - p.fpr_lower))
            else:
                boxes.append((p.fpr_lower, p.fpr_upper, 1.0 - p.fnr_upper, 1.0 - p.fnr_lower))
        return fpr, accountant, audit, boxes

    def plot(self, ax=None):
        """Log-log ROC: the accountant's curve, G_{μ_lo} and the audit's confidence boxes."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        if ax is None:
            _, ax = plt.subplots(figsize=(5.5, 5))
        fpr, accountant, audit, boxes = self.roc_points()
        low = fpr[0]
        ax.plot(
            fpr,
            np.maximum(accountant, low),
            color=ACCOUNTANT,
            lw=2,
            label=f"accountant's certified curve, $\\mu \\leq {up(self.mu_upper, 4)}$ (upper)",
        )
        ax.plot(
            fpr,
            np.maximum(audit, low),
            color=AUDIT_CURVE,
            ls="--",
            label=f"$G_\\mu$ at the audit's $\\mu \\geq {down(self.mu_lower, 4)}$ (lower)",
        )
        ax.plot(fpr, fpr, color="#999", ls=":", lw=1, label="TPR = FPR (no attack)")
        colour = VIOLATED if self.violation else CONSISTENT
        for i, (x0, x1, y0, y1) in enumerate(boxes):
            x0 = max(x0, low)
            ax.add_patch(
                Rectangle(
                    (x0, max(y0, low)),
                    x1 - x0,
                    max(y1, low) - max(y0, low),
                    fill=True,
                    alpha=0.25,
                    color=colour,
                )
            )
            ax.plot(
                [x1],
                [max(y0, low)],
                marker="o",
                ls="none",
                color=colour,
                label="audit: certified corner and confidence box" if i == 0 else None,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(low, 1.0)
        ax.set_ylim(low, 1.0)
        ax.set_xlabel("false-positive rate $\\alpha$")
        ax.set_ylabel("true-positive rate $1 - \\beta$")
        verdict = "VIOLATION" if self.violation else "no violation"
        ax.set_title(
            f"{verdict} ({_p_text(self.p_value)}) at {_percent(self.result.alpha)} confidence",
            fontsize=10,
            color=VIOLATED if self.violation else "black",
        )
        ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
        return ax


def _mirrored(point) -> bool:
    """A point certified through the reversed pair (D', D): drawn with its rates swapped."""
    return point.fnr_upper < point.fpr_upper


#: Colours of the figures: the accountant, the audit's G_μ, boxes without / with violation.
ACCOUNTANT, AUDIT_CURVE, CONSISTENT, VIOLATED = "#1f77b4", "#9467bd", "#2ca02c", "#c00000"


def _floor(report) -> float:
    lows = []
    for p in report.result.points:
        lows += [x for x in (p.fpr_lower, p.fnr_lower) if x > 0]
        lows += [1.0 - x for x in (p.fpr_upper, p.fnr_upper) if x < 1]
    low = min([1e-4, *(x / 3.0 for x in lows)])
    return max(low, 1e-10)


def clean_json(value):
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if math.isnan(value):
            return None
        return value
    if isinstance(value, dict):
        return {k: clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    if isinstance(value, (np.floating, np.integer)):
        return clean_json(value.item())
    return value


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _decade(exponent: int) -> str:
    """``1`` or ``10⁻³``: a tick label of a log axis."""
    return "1" if exponent == 0 else "10" + str(exponent).translate(_SUPERSCRIPT)


def roc_svg(report, width: int = 560, height: int = 500) -> str:
    """The log-log ROC figure as inline SVG (no matplotlib): what :meth:`AuditReport.plot` draws."""
    left, right, top, bottom = 70, 16, 34, 56
    inner_w, inner_h = width - left - right, height - top - bottom
    fpr, accountant, audit, boxes = report.roc_points()
    low = math.log10(fpr[0])

    def x_of(a):
        return left + (np.log10(np.maximum(a, 10**low)) - low) / -low * inner_w

    def y_of(t):
        return top + (1.0 - (np.log10(np.maximum(t, 10**low)) - low) / -low) * inner_h

    def line(xs, ys, colour, dash="", stroke=2):
        pts = " ".join(f"{x:.2f},{y:.2f}" for x, y in zip(x_of(xs), y_of(ys), strict=True))
        d = f' stroke-dasharray="{dash}"' if dash else ""
        return (
            f'<polyline fill="none" stroke="{colour}" stroke-width="{stroke}"{d} points="{pts}"/>'
        )

    colour = VIOLATED if report.violation else CONSISTENT
    verdict = "VIOLATION" if report.violation else "no violation"
    parts = [
        f'<rect class="frame" x="{left}" y="{top}" width="{inner_w}" height="{inner_h}" '
        'fill="white" stroke="#444"/>',
        f'<text x="{left + inner_w / 2}" y="{top - 12}" font-size="14" text-anchor="middle" '
        f'font-weight="bold" fill="{VIOLATED if report.violation else "#222"}">'
        f"{verdict} ({html.escape(_p_text(report.p_value))}) at "
        f"{_percent(report.result.alpha)} confidence</text>",
    ]
    for exponent in range(math.ceil(low), 1):
        x = float(x_of(10.0**exponent))
        y = float(y_of(10.0**exponent))
        label = _decade(exponent)
        parts.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + inner_h}" stroke="#eee"/>'
        )
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + inner_w}" y2="{y:.1f}" stroke="#eee"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{top + inner_h + 18}" font-size="12" '
            f'text-anchor="middle">{label}</text>'
        )
        parts.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end">{label}</text>'
        )
    parts.append(
        f'<rect x="{left}" y="{top}" width="{inner_w}" height="{inner_h}" '
        'fill="none" stroke="#444"/>'
    )
    parts.append(
        f'<text x="{left + inner_w / 2}" y="{height - 14}" font-size="13" '
        'text-anchor="middle">false-positive rate α</text>'
    )
    parts.append(
        f'<text x="18" y="{top + inner_h / 2}" font-size="13" text-anchor="middle" '
        f'transform="rotate(-90 18 {top + inner_h / 2})">true-positive rate 1 − β</text>'
    )
    parts.append(line(fpr, fpr, "#999", "2 3", stroke=1))
    parts.append(line(fpr, accountant, ACCOUNTANT))
    parts.append(line(fpr, audit, AUDIT_CURVE, "6 3"))
    for x0, x1, y0, y1 in boxes:
        ax0, ax1 = float(x_of(x0)), float(x_of(x1))
        ay0, ay1 = float(y_of(y1)), float(y_of(y0))
        parts.append(
            f'<rect class="box" x="{ax0:.2f}" y="{ay0:.2f}" width="{max(ax1 - ax0, 1):.2f}" '
            f'height="{max(ay1 - ay0, 1):.2f}" fill="{colour}" fill-opacity="0.25" '
            f'stroke="{colour}"/>'
        )
        parts.append(
            f'<circle class="corner" cx="{ax1:.2f}" cy="{ay1:.2f}" r="4.5" fill="{colour}" '
            'stroke="white"/>'
        )
    legend = [
        (f"accountant's certified curve, μ ≤ {up(report.mu_upper, 4)} (upper)", ACCOUNTANT, ""),
        (f"G_μ at the audit's μ ≥ {down(report.mu_lower, 4)} (lower)", AUDIT_CURVE, "6 3"),
        ("TPR = FPR (no attack)", "#999", "2 3"),
    ]
    if boxes:
        legend.append(("audit: certified corner, confidence box", colour, "box"))
    row = 17
    legend_w = int(48 + 6.3 * max(len(label) for label, _, _ in legend))
    legend_x = left + inner_w - legend_w - 8
    legend_y = top + inner_h - 8 - row * len(legend) - 6
    parts.append(
        f'<rect x="{legend_x}" y="{legend_y}" width="{legend_w}" '
        f'height="{row * len(legend) + 8}" fill="white" fill-opacity="0.9" stroke="#bbb"/>'
    )
    for i, (label, c, dash) in enumerate(legend):
        y = legend_y + 4 + row * i + row / 2
        x = legend_x + 8
        if dash == "box":
            parts.append(
                f'<rect x="{x}" y="{y - 5}" width="20" height="10" fill="{c}" '
                f'fill-opacity="0.25" stroke="{c}"/>'
            )
            parts.append(f'<circle cx="{x + 20}" cy="{y + 5}" r="3.5" fill="{c}"/>')
        else:
            d = f' stroke-dasharray="{dash}"' if dash else ""
            parts.append(
                f'<line x1="{x}" y1="{y}" x2="{x + 24}" y2="{y}" stroke="{c}" '
                f'stroke-width="2.5"{d}/>'
            )
        parts.append(f'<text x="{x + 32}" y="{y + 4}" font-size="11.5">{html.escape(label)}</text>')
    body = "\n  ".join(parts)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="system-ui, sans-serif" role="img" '
        f'aria-label="audit ROC on log-log axes: {verdict}">\n  {body}\n</svg>'
    )


def attach_report(result, against):
    """The result with its :class:`AuditReport` when ``against`` is given (else as it is)."""
    if against is None:
        return result
    from dataclasses import replace

    return replace(result, report=AuditReport.build(result, against))
