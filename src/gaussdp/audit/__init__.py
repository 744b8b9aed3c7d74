"""Auditing: attack outcomes -> certified lower bounds, beside the accountant's curve.

The accountant bounds a run's privacy loss from above; an audit bounds it from
below, from what an attack on the trained model achieved. Every number here is
a **lower bound** at confidence ``1 − alpha`` unless labelled *model-based*.

Entry points:

* :func:`from_counts` — one threshold's confusion counts (Clopper–Pearson);
* :func:`from_scores` — attack scores, all thresholds with a Bonferroni
  correction, a split, or a fixed threshold;
* :func:`one_run` — one-run auditing (Steinke, Nasr & Jagielski 2023) and its
  f-DP version for any trade-off curve (Mahloujifar, Melis & Chaudhuri 2024);
  :func:`one_run_from_scores` from per-canary scores.

Each takes ``against=`` (a mechanism or an Accounting) to put the audit beside the
accountant in an :class:`AuditReport`: ``μ_lo (audit) <= μ <= μ_hi (accountant)``,
the share of the claim realised, and a violation test with its p-value.
"""

from __future__ import annotations

from gaussdp.audit.binomial import clopper_pearson_lower, clopper_pearson_upper
from gaussdp.audit.bounds import epsilon_lower, mu_lower
from gaussdp.audit.counts import from_counts
from gaussdp.audit.one_run import guesses_from_scores, one_run, one_run_from_scores
from gaussdp.audit.report import AuditReport
from gaussdp.audit.result import AuditPoint, AuditResult
from gaussdp.audit.scores import from_scores, load_scores

__all__ = [
    "AuditPoint",
    "AuditReport",
    "AuditResult",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower",
    "from_counts",
    "from_scores",
    "guesses_from_scores",
    "load_scores",
    "mu_lower",
    "one_run",
    "one_run_from_scores",
]
