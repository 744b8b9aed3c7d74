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

import sys
import types

from gaussdp.accountant import entry, grids, guarantees, numerical

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

#: The names this package had as one module, each with the module that now holds it
#: and its name there. They read as before (``gaussdp.accountant._available_memory``),
#: and setting one here (as a test's monkeypatch does) sets it in that module, from which
#: the package's modules and gaussdp.sweeps.steps read it when they use it.
_MOVED = {
    "_ACCURACY_SHARE": (grids, "_ACCURACY_SHARE"),
    "_BYTES_PER_POINT": (grids, "BYTES_PER_POINT"),
    "_DISCRETISATION_TAIL": (grids, "_DISCRETISATION_TAIL"),
    "_MEMORY_FRACTION": (grids, "MEMORY_FRACTION"),
    "_PLAIN_DISCRETISATION_TAIL": (grids, "PLAIN_DISCRETISATION_TAIL"),
    "_available_memory": (grids, "available_memory"),
    "_choose_grid_spacing": (grids, "choose_grid_spacing"),
    "_composed_length_estimate": (grids, "_composed_length_estimate"),
    "_lower_grid_spacing": (grids, "lower_grid_spacing"),
    "_relative_error_coefficient": (grids, "_relative_error_coefficient"),
    "_ALLOWANCE_SHARE": (guarantees, "_ALLOWANCE_SHARE"),
    "_GRID_REFINEMENTS": (guarantees, "_GRID_REFINEMENTS"),
    "_ProfileGuarantee": (guarantees, "ProfileGuarantee"),
    "_numerical_method": (numerical, "method_name"),
    "_refiners": (numerical, "refiners"),
    "compose_lower_tail": (numerical, "compose_lower_tail"),
    "pld_compose": (numerical, "pld_compose"),
    "_flatten": (entry, "leaves_of"),
    "_merge_gaussians": (entry, "_merge_gaussians"),
}


def __getattr__(name: str):
    if name in _MOVED:
        module, attribute = _MOVED[name]
        return getattr(module, attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(types.ModuleType):
    """This package, where setting a moved name sets it in the module that holds it."""

    def __setattr__(self, name: str, value) -> None:
        if name in _MOVED:
            module, attribute = _MOVED[name]
            setattr(module, attribute, value)
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
