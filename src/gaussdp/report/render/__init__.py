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

import importlib

from gaussdp._validation import InvalidParameterError
from gaussdp.report.render.wording import down, up, up_fixed

#: The renderers, each imported from its module when first used (``__getattr__``): the
#: report's computation needs only the rounding of :mod:`~gaussdp.report.render.wording`,
#: and a report made to be read in code (a sweep, a calibration) never loads json, html
#: or the page's figures (5 ms of a short run's report).
_LAZY = {
    "to_dict": "data",
    "to_json": "data",
    "difference_svg": "figures",
    "linear_svg": "figures",
    "log_svg": "figures",
    "mu_delta_svg": "figures",
    "to_markdown": "markdown",
    "to_html": "page",
    "to_text": "text",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    renderers = {"text": "to_text", "json": "to_json", "markdown": "to_markdown", "html": "to_html"}
    if name in renderers:
        return __getattr__(renderers[name])(report)
    raise InvalidParameterError(
        f"output_format must be one of {', '.join(FORMATS)}, got {output_format!r}"
    )
