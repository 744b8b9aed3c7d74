"""μ by δ_tail: the table every format shows, ending in the GDPT tail limit."""

from __future__ import annotations

import math

from gaussdp.report.defaults import DEFAULT_DELTA_TAIL
from gaussdp.report.render.wording import up, up_fixed

_TAIL_LIMIT = "tail limit"


def _is_default(report) -> bool:
    return report.delta_tail == DEFAULT_DELTA_TAIL


def _origin(report) -> str:
    """Where the report's δ_tail came from: "strict", "default", "floor" or "declared".

    "floor": the default was below the accountant's floor (mass at infinite
    loss, or certified slack), so δ_tail is the floor plus the default: the
    rest of the mechanism keeps the default failure probability.
    """
    if report.delta_tail == 0.0:
        return "strict"
    if _is_default(report):
        return "default"
    if DEFAULT_DELTA_TAIL < report.delta_floor and math.isclose(
        report.delta_tail, report.delta_floor + DEFAULT_DELTA_TAIL, rel_tol=1e-12
    ):
        return "floor"
    return "declared"


_FLOOR_WORDS = f"the accountant's floor plus the default {DEFAULT_DELTA_TAIL:g}"


def _declared(report) -> str:
    """How the report's δ_tail was chosen, for the guarantee line."""
    return {
        "default": "the default",
        "floor": f"{_FLOOR_WORDS}: the default alone is below the floor",
    }.get(_origin(report), f"declared; the default is {DEFAULT_DELTA_TAIL:g}")


def _delta_tail_kind(report) -> str:
    """The δ_tail row's kind in the Markdown and HTML summaries."""
    return {
        "strict": "no failure probability needed (strict)",
        "default": f"declared failure probability (default {DEFAULT_DELTA_TAIL:g})",
        "floor": f"{_FLOOR_WORDS} (the default alone is below the floor)",
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
