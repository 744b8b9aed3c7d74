"""A report as Markdown: a summary and tables that can be pasted into a paper."""

from __future__ import annotations

from gaussdp.report.render.mu_table import (
    _TAIL_LIMIT,
    _delta_tail_kind,
    _mu_constant,
    _mu_row_cells,
    _tail_row,
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
    for caveat in report.caveats:
        lines += [f"**Caveat:** {caveat}.", ""]
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
