"""A report as a self-contained HTML page: inline CSS and the SVG figures of
:mod:`gaussdp.report.render.figures`.
"""

from __future__ import annotations

import html

from gaussdp.report.defaults import DEFAULT_DELTA_TAIL
from gaussdp.report.render.figures import (
    _mu_delta_caption,
    difference_svg,
    linear_svg,
    log_svg,
    mu_delta_svg,
)
from gaussdp.report.render.mu_table import (
    _TAIL_LIMIT,
    _declared,
    _delta_tail_kind,
    _mu_constant,
    _mu_row_cells,
)
from gaussdp.report.render.wording import (
    _beta_text,
    _capital,
    _rounding_sentence,
    _tail_sentence,
    down,
    up,
    up_fixed,
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
    caveats = "".join(f'<p class="warning">Caveat: {e(caveat)}.</p>\n' for caveat in report.caveats)
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
{caveats}<table>{summary}</table>
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
