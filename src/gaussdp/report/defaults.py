"""The report's declared choices: the δ it always reports, its tiers, its default δ_tail.

These are part of what a report *means* (docs/report.md says why each value),
so they stand apart from the code that computes one: the renderings
(:mod:`gaussdp.report.render`) and calibration read them too. They are also
:mod:`gaussdp.report.core`'s and :mod:`gaussdp.report`'s names.
"""

#: δ at which ε is always reported (Gomez et al. 2025, §4, plus 1e-9).
DEFAULT_DELTAS = (1e-5, 1e-6, 1e-9)
#: The α of the Tier II table (§4.3); the α of maximal advantage is added.
TABLE_ALPHAS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)
#: Tier I when the regret is at most this (§4.2).
TIER_I_REGRET = 0.01
#: A δ_tail above this is not suggested to make μ finite (it would mean nothing).
LARGEST_SUGGESTED_DELTA_TAIL = 1e-2
#: The failure probability that goes with μ unless asked otherwise: the report's μ is
#: "μ-GDP except with probability 1e-10" for every mechanism and parameter (see
#: docs/report.md for why this value). Closed forms that are exactly μ-GDP report δ_tail = 0.
DEFAULT_DELTA_TAIL = 1e-10
#: The δ_tail of the μ-by-δ_tail table (the report's own δ_tail is added).
MU_TABLE_DELTA_TAILS = (1e-6, 1e-8, 1e-10, 1e-12)
#: The accountant's floor is kept at least this many times below the δ_tail asked for.
FLOOR_MARGIN = 100.0
