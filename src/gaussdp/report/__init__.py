r"""Report privacy as μ-GDP, honestly (Gomez, Kaissis, Kulynych et al. 2025, §4).

One number for the simple question — μ — with a certified statement of how
well it fits the mechanism's full trade-off curve and of where it stops
holding:

* **μ** — the tight μ over every test of the accountant's pessimistic curve
  (Appendix B, eq. 29), reported as "μ-GDP except with probability
  ``delta_tail``" (f ≥ G_μ ⊗ f_{0,δ}, Dong, Roth & Su eq. 12) at a fixed,
  declared δ_tail (default 1e-10), with μ at other δ_tail
  (``mu_by_delta_tail``, :meth:`Report.mu_for`);
* **regret** — the Δ-divergence between the curve and G_μ (Definition 2.10,
  Proposition 4.1), exact on the piecewise-linear curve and reported as an
  upper bound, with the advantage bound it implies (Proposition 4.2:
  adv(G_μ) − adv(f) ≤ 2·regret);
* **where μ stops holding** — ``delta_tail`` / ``epsilon_tail``, and
  ``mu_tail``, the GDPT tail limit that a strict guarantee needs (√T/σ for
  DP-SGD: subsampling does not amplify the tail);
* **Tier I / Tier II** — regret ≤ 0.01: report μ; otherwise also the curve
  tabulated at small α and the advantage;
* ε at the δ the user asks for (default 1e-5, 1e-6, 1e-9), upper and lower
  bounds; rendered as text, JSON, Markdown or a self-contained HTML page.

Modules: :mod:`~gaussdp.report.tight_mu` (μ from breakpoints),
:mod:`~gaussdp.report.regret` (exact Δ-divergence), :mod:`~gaussdp.report.pure`
(pure-DP mechanisms and compositions, exact in log space),
:mod:`~gaussdp.report.tail` (where μ stops holding), :mod:`~gaussdp.report.fit`
(μ from the steep curve), :mod:`~gaussdp.report.core` (the :class:`Report` and
tiers, built from an Accounting's public members), :mod:`~gaussdp.report.entry`
(:func:`report`: a mechanism is accounted first), :mod:`~gaussdp.report.render` (text, JSON,
Markdown, HTML + SVG).

Examples
--------
>>> import gaussdp
>>> r = gaussdp.account(gaussdp.DPSGD(9.4, 0.32768, 2000)).gdp()
>>> round(r.mu, 3), r.delta_tail, r.tier, round(r.mu_tail, 2)
(1.567, 1e-10, 1, 4.76)
>>> print(r.to_text().splitlines()[1])
mu = 1.5673  (mu-GDP except with probability delta_tail = 1e-10, the default)
"""

from gaussdp.report.core import (
    DEFAULT_DELTA_TAIL,
    DEFAULT_DELTAS,
    TABLE_ALPHAS,
    TIER_I_REGRET,
    EpsilonRow,
    MuRow,
    Report,
    RoundingLimit,
    TableRow,
)
from gaussdp.report.entry import report
from gaussdp.report.regret import advantage_gap_bound, profile_regret, regret
from gaussdp.report.tail import tail_mu
from gaussdp.report.tight_mu import failure_probability, mu_of_breakpoints, tight_mu

__all__ = [
    "DEFAULT_DELTAS",
    "DEFAULT_DELTA_TAIL",
    "TABLE_ALPHAS",
    "TIER_I_REGRET",
    "EpsilonRow",
    "MuRow",
    "Report",
    "RoundingLimit",
    "TableRow",
    "advantage_gap_bound",
    "failure_probability",
    "mu_of_breakpoints",
    "profile_regret",
    "regret",
    "report",
    "tail_mu",
    "tight_mu",
]
