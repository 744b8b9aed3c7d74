"""The accountant: from a mechanism description to certified privacy bounds.

:func:`account` interprets a mechanism (:mod:`gaussdp.mechanisms`) and
returns an immutable :class:`Accounting` that answers ε for a δ and δ for an
ε, each as an upper bound (the default, pessimistic answer) together with a
matching lower bound, so the user sees how tight the answer is.

Three paths, chosen automatically and named in :attr:`Accounting.method`:

* **closed form, Gaussian** — a composition of Gaussian mechanisms is exactly
  μ-GDP with μ = √Σ(Δ_i/σ_i)² (Dong, Roth & Su 2022, Corollary 2);
* **closed form, pure DP** — a composition of ε_i-DP mechanisms is dominated
  by the composition of randomized responses, whose privacy loss is a sum of
  independent ±ε_i, i.e. a sum of scaled binomials (the form behind Dong,
  Roth & Su, Theorem 8, and Kairouz, Oh & Viswanath 2015), evaluated exactly;
* **numerical** — privacy loss distributions of each dominating pair,
  discretised on a common grid in a pessimistic (connect-the-dots) and an
  optimistic (binning) form, composed by FFT (:mod:`gaussdp.pld`). The
  pessimistic form gives the upper bounds, the optimistic one the lower
  bounds; both are exact for the discrete pairs they describe.

The accountant is a package of one concept per module, each importing only
those above it in this list (so that each can be read knowing only what it
imports):

* ``grids`` — the grid spacing an accuracy asks for (the error law), what
  the accuracy is relative to (:func:`gap_scale`), the discretisation's tails,
  and the memory a composition needs;
* ``pure_dp`` — the exact composition of pure-DP mechanisms;
* ``guarantees`` — the closed-form, profile and exact-atoms guarantees behind
  one interface, with the refinements of the profile bounds;
* ``result`` — :class:`Accounting`, which asks its guarantee, and
  :class:`AccuracyWarning`;
* ``numerical`` — the numerical path: discretise, compose by FFT, refine;
* ``entry`` — :func:`account`, which chooses the path (and
  :func:`dominating_losses`, which hands it down to Group and Parallel parts).

A package rather than sibling modules of :mod:`gaussdp`: the six are one
layer with one public face, ``gaussdp.accountant``, which keeps the import
path it had as a single module. Everything is used from here as before
(:func:`account`, :class:`Accounting`, :data:`DEFAULT_ACCURACY`,
:data:`MAXIMUM_GRID_SPACING`, :func:`gap_scale`, :func:`dominating_losses`);
the sweeps reuse the numerical path piece by piece through the public names
of ``grids``, ``guarantees`` and ``numerical``.
"""

from __future__ import annotations

from gaussdp.accountant import entry, grids, guarantees, numerical  # noqa: F401 (the modules)

# Public names of gaussdp.accountant beside __all__, used from here as before.
from gaussdp.accountant.entry import account, dominating_losses  # noqa: F401
from gaussdp.accountant.grids import (  # noqa: F401
    DEFAULT_ACCURACY,
    MAXIMUM_GRID_SPACING,
    gap_scale,
)
from gaussdp.accountant.numerical import DIRECTIONS  # noqa: F401
from gaussdp.accountant.result import Accounting, AccuracyWarning

__all__ = ["Accounting", "AccuracyWarning", "account"]

# The public classes are documented, pickled and shown as gaussdp.accountant.X, where they
# were defined before this module was split by concept.
for _class in (Accounting, AccuracyWarning):
    _class.__module__ = __name__
del _class
