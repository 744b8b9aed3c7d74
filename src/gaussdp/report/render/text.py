"""A report as plain text."""

from __future__ import annotations

from gaussdp.report.defaults import DEFAULT_DELTA_TAIL
from gaussdp.report.render.mu_table import _declared, _is_default, _mu_table_text, _origin
from gaussdp.report.render.wording import (
    _beta_text,
    _rounding_sentence,
    _tail_sentence,
    _tier_sentence,
    down,
    up,
    up_fixed,
)


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
                f"  delta_tail = {up(report.delta_tail, 2)} is the accountant's floor "
                f"{up(report.delta_floor, 2)} plus the default {DEFAULT_DELTA_TAIL:g}, not a "
                "declared choice: no mu holds below the floor, and at the floor itself no "
                "failure probability would be left for the rest of the mechanism (mu "
                f"{up(report.mu_for(report.delta_floor), 5)} there)"
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
    lines += [f"caveat: {caveat}" for caveat in report.caveats]
    lines.append(f"method: {report.method}")
    return "\n".join(lines)
