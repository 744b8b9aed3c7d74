"""The entry point: report a mechanism, a pipeline or an :class:`~gaussdp.accountant.Accounting`.

This module stands above the accountant: given a description it calls
:func:`gaussdp.account` first, then builds the report from the accounting's
public members (:func:`gaussdp.report.core.from_accounting`), which know nothing
of the accountant's modules. :meth:`gaussdp.accountant.Accounting.gdp` calls
that builder directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gaussdp import mechanisms as m
from gaussdp.accountant import Accounting, account
from gaussdp.report.core import DEFAULT_DELTAS, Report, from_accounting

__all__ = ["report"]


def report(
    mechanism,
    *,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    delta_tail: float | None = None,
    neighbouring: m.Neighbouring | None = None,
    accuracy: float | None = None,
    grid_spacing: float | None = None,
    progress: Callable[[str], None] | None = None,
    title: str | None = None,
) -> Report:
    r"""Report a mechanism's privacy as μ-GDP (Gomez et al. 2025, §4): μ, regret, tail, tier.

    Parameters
    ----------
    mechanism : Mechanism, Pipeline or Accounting
        What to report; an :class:`~gaussdp.accountant.Accounting` (from
        :func:`gaussdp.account`) is used as it is.
    deltas : sequence of float
        δ ∈ (0, 1) at which ε is reported, as upper and lower bounds
        (default 1e-5, 1e-6, 1e-9).
    delta_tail : float, optional
        The failure probability δ_tail ∈ (0, 1) that goes with μ (default
        :data:`DEFAULT_DELTA_TAIL` = 1e-10; closed forms that are exactly
        μ-GDP report 0). The accountant is asked for a floor 100 times below
        min(δ_tail, 1e-12).
    neighbouring, accuracy, grid_spacing, progress
        Passed to :func:`gaussdp.account` (not allowed with an Accounting).
    title : str, optional
        Default: the pipeline's name, or the mechanism's description.

    Returns
    -------
    Report

    Examples
    --------
    >>> from gaussdp import DPSGD, Gaussian, PureDP, Repeated
    >>> from gaussdp.report import report
    >>> r = report(Repeated(Gaussian(4.0), 16))   # exactly μ-GDP with μ = √16/4
    >>> r.mu, r.regret, r.delta_tail, r.tier
    (1.0, 0.0, 0.0, 1)
    >>> r = report(PureDP(1.0))                   # Proposition 6.1: μ = −2Φ⁻¹(1/(1+e))
    >>> round(r.mu, 6), round(r.regret, 6), r.delta_tail
    (1.232035, 0.057546, 0.0)
    >>> r = report(DPSGD(9.4, 0.32768, 2000))     # De et al.'s CIFAR-10 run
    >>> round(r.mu, 2), round(r.regret, 4), r.delta_tail, r.tier, round(r.mu_tail, 2)
    (1.57, 0.0011, 1e-10, 1, 4.76)
    """
    if isinstance(mechanism, Accounting):
        return from_accounting(
            mechanism,
            deltas=deltas,
            delta_tail=delta_tail,
            title=title,
            neighbouring=neighbouring,
            accuracy=accuracy,
            grid_spacing=grid_spacing,
            progress=progress,
        )
    if isinstance(mechanism, m.Pipeline) and title is None:
        title = mechanism.name or None
    options = {"neighbouring": neighbouring, "grid_spacing": grid_spacing, "progress": progress}
    if accuracy is not None:
        options["accuracy"] = accuracy
    accounting = account(mechanism, **options)
    return from_accounting(accounting, deltas=deltas, delta_tail=delta_tail, title=title)
