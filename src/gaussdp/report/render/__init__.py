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

from gaussdp._validation import InvalidParameterError
from gaussdp.report.render.data import to_dict, to_json
from gaussdp.report.render.figures import (  # noqa: F401  (gaussdp.report.render.*_svg)
    difference_svg,
    linear_svg,
    log_svg,
    mu_delta_svg,
)
from gaussdp.report.render.markdown import to_markdown
from gaussdp.report.render.page import to_html
from gaussdp.report.render.text import to_text
from gaussdp.report.render.wording import down, up, up_fixed

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
