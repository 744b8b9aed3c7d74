"""The numerical engine: privacy loss distributions on a grid, composed by FFT.

* :mod:`gaussdp.pld.losses` — exact privacy losses of dominating pairs;
* :mod:`gaussdp.pld.grid` — certified discretisation (pessimistic
  connect-the-dots, optimistic binning) into :class:`GridPLD`;
* :mod:`gaussdp.pld.composition` — FFT composition with tracked truncation;
* :mod:`gaussdp.pld.chernoff` — Chernoff bounds on sums, for its windows and tilts;
* :mod:`gaussdp.pld.tilt` — exponential tilts of composed rows (relative rounding);
* :mod:`gaussdp.pld.lower_tail` — lower bounds at small δ from a tilted composition;
* :mod:`gaussdp.pld.query` — δ(ε) and ε(δ) of a discrete distribution;
* :mod:`gaussdp.pld.tradeoffs` — composition of arbitrary trade-off curves (loaded
  on first use of ``compose_tradeoffs``: it stands with :mod:`gaussdp.curves`, above
  the engine).

Most users want :func:`gaussdp.account`, which drives all of this.
"""

from gaussdp.pld.composition import (
    compose,
    compose_many,
    plan_composition,
    self_compose,
    trim,
)
from gaussdp.pld.grid import GridPLD, discretise
from gaussdp.pld.losses import AtomicLoss, GaussianLoss, LaplaceLoss, PrivacyLoss, SubsampledLoss
from gaussdp.pld.query import Profile, profile_of

__all__ = [
    "AtomicLoss",
    "GaussianLoss",
    "GridPLD",
    "LaplaceLoss",
    "PrivacyLoss",
    "Profile",
    "SubsampledLoss",
    "compose",
    "compose_many",
    "compose_tradeoffs",
    "discretise",
    "plan_composition",
    "profile_of",
    "self_compose",
    "trim",
]


def __getattr__(name: str):
    # compose_tradeoffs builds curves (gaussdp.curves.numerical), which stand above the
    # engine's modules: the engine's face hands it on when first asked (PEP 562).
    if name == "compose_tradeoffs":
        from gaussdp.pld.tradeoffs import compose_tradeoffs

        return compose_tradeoffs
    raise AttributeError(f"module 'gaussdp.pld' has no attribute {name!r}")
