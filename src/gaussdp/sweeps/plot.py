"""The common picture of a sweep: privacy against training steps, one line per σ."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gaussdp._validation import InvalidParameterError

__all__ = ["plot_steps", "steps_curves"]

_QUANTITIES = ("epsilon", "mu")


def steps_curves(
    rows: Sequence[dict[str, Any]],
    *,
    quantity: str = "epsilon",
    by: str | None = "noise_multiplier",
    steps: str = "steps",
    delta: float | None = None,
) -> dict[Any, dict[str, list]]:
    """The points of :func:`plot_steps`, without matplotlib: ``{label: {steps, upper, lower}}``.

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`gaussdp.sweep`.
    quantity : {"epsilon", "mu"}
        ε at ``delta`` (upper and lower bounds), or the report's μ (needs
        ``report = true``; ``lower`` is then None).
    by : str or None
        The column whose values are the lines (default ``noise_multiplier``;
        None or a column not in the rows: one line).
    steps : str
        The column of the x axis.
    delta : float, optional
        Which δ (default: the smallest in the rows).

    Examples
    --------
    >>> rows = [{"noise_multiplier": 1.0, "steps": t, "delta": 1e-5, "epsilon_lower": t - 0.1,
    ...          "epsilon_upper": float(t), "error": None} for t in (1, 2)]
    >>> steps_curves(rows)
    {1.0: {'steps': [1, 2], 'upper': [1.0, 2.0], 'lower': [0.9, 1.9]}}
    """
    if quantity not in _QUANTITIES:
        raise InvalidParameterError(f"quantity must be 'epsilon' or 'mu', got {quantity!r}")
    rows = [row for row in rows if not row.get("error")]
    if not rows:
        raise InvalidParameterError("rows holds no results without an error")
    if steps not in rows[0]:
        raise InvalidParameterError(f"steps: no column {steps!r} in the rows")
    if quantity == "epsilon":
        deltas = sorted({row["delta"] for row in rows if row.get("delta") is not None})
        if not deltas:
            raise InvalidParameterError("the rows have no epsilon for a delta (no deltas swept)")
        chosen = deltas[0] if delta is None else delta
        if chosen not in deltas:
            raise InvalidParameterError(f"delta must be one of {deltas}, got {delta!r}")
        rows = [row for row in rows if row.get("delta") == chosen]
        upper_column, lower_column = "epsilon_upper", "epsilon_lower"
    else:
        if rows[0].get("mu") is None:
            raise InvalidParameterError("the rows have no mu; set report = true in [sweep]")
        seen = set()
        unique = []
        for row in rows:  # μ repeats on every δ row of a point
            if row["point"] not in seen:
                seen.add(row["point"])
                unique.append(row)
        rows = unique
        upper_column, lower_column = "mu", None
    curves: dict[Any, dict[str, list]] = {}
    for row in sorted(rows, key=lambda r: r[steps]):
        label = row.get(by) if by else None
        curve = curves.setdefault(label, {"steps": [], "upper": [], "lower": []})
        curve["steps"].append(row[steps])
        curve["upper"].append(row[upper_column])
        curve["lower"].append(row[lower_column] if lower_column else None)
    return curves


def plot_steps(
    rows: Sequence[dict[str, Any]],
    *,
    quantity: str = "epsilon",
    by: str | None = "noise_multiplier",
    steps: str = "steps",
    delta: float | None = None,
    ax=None,
):
    """Plot ε (or μ) against the number of steps, one line per value of ``by`` (σ).

    ε is drawn as its upper bound, with the band down to the lower bound
    (usually thinner than the line). Arguments as in :func:`steps_curves`;
    ``ax`` is a matplotlib axes (default: a new figure). Returns the axes.
    """
    import matplotlib.pyplot as plt

    curves = steps_curves(rows, quantity=quantity, by=by, steps=steps, delta=delta)
    if ax is None:
        _, ax = plt.subplots()
    symbol = {"noise_multiplier": "σ", "sampling_probability": "q"}.get(by or "", by)
    for label, curve in curves.items():
        name = (
            None
            if label is None
            else f"{symbol} = {label:g}"
            if isinstance(label, (int, float))
            else f"{symbol} = {label}"
        )
        (line,) = ax.plot(curve["steps"], curve["upper"], label=name)
        if quantity == "epsilon":
            ax.fill_between(
                curve["steps"], curve["lower"], curve["upper"], color=line.get_color(), alpha=0.3
            )
    ax.set_xlabel("steps")
    ax.set_ylabel("ε (upper bound)" if quantity == "epsilon" else "μ (μ-GDP)")
    if any(label is not None for label in curves):
        ax.legend()
    return ax
