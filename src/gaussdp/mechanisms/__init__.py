"""Mechanism descriptions as data, and pipeline files.

A private algorithm is described here, not analysed: every class below is an
immutable, validated record (a frozen dataclass) whose docstring defines the
mathematics completely — the mechanism, its dominating pair of output
distributions (Zhu, Dong & Wang 2022, Definition 7; the lecture, file 003,
§4.1) under each neighbouring relation, and its privacy loss — and which
contains no accounting code. The accountant (:func:`gaussdp.account`) reads
these descriptions and does the mathematics.

Notation used throughout. ``D ≃ D'`` are neighbouring data sets. A pair of
distributions ``(P, Q)`` *dominates* a mechanism ``M`` when, for every
``α ≥ 0``,

    sup_{D ≃ D'} H_α(M(D) ‖ M(D')) ≤ H_α(P ‖ Q),
    H_α(P ‖ Q) = ∫ (dP − α dQ)₊  (the hockey-stick divergence).

With α = e^ε, H_α is the smallest δ for which M is (ε, δ)-DP. The *privacy
loss* of the pair is ``L(x) = log (dP/dQ)(x)`` and the *privacy loss random
variable* (PLRV) is ``L(X)`` with ``X ~ P``; then
``H_{e^ε}(P ‖ Q) = E[(1 − e^{ε − L(X)})₊]`` (an atom at L = +∞ is an output
P can produce and Q cannot). Pairs of adaptively composed mechanisms multiply
(Theorem 10 there), so privacy losses add.

The neighbouring relation is a property of the whole description
(:class:`Neighbouring`, carried by a :class:`Pipeline`): add/remove one record
(the default) or replace one record. Under add/remove the relation is not
symmetric in general, so two ordered pairs matter: *remove* (``D'`` is ``D``
with one record removed: the pair is ``(M(D), M(D'))``) and *add* (``D'`` is
``D`` with one record added). For the basic mechanisms below both directions
have the same privacy loss distribution; Poisson subsampling is where they
differ. The guarantee of a description is the larger of the two directions.

Building blocks
---------------
:class:`Gaussian`, :class:`Laplace`, :class:`DiscreteGaussian`,
:class:`RandomizedResponse`, :class:`GaussianMixture`, :class:`PureDP` (any ε-DP mechanism),
:class:`ApproxDP` (any (ε, δ)-DP mechanism).

Transformers
------------
:class:`PoissonSubsampled`, :class:`SubsampledWithoutReplacement`, the samplers
training uses (:class:`RandomAllocation`, :class:`TruncatedPoisson`,
:class:`Shuffled`),
:class:`Composition`, :class:`Repeated`, and :class:`DPSGD` (the common case,
``steps`` rounds of a Poisson-subsampled Gaussian).

Matrix mechanisms
-----------------
:class:`MatrixMechanism` (DP-FTRL, tree aggregation, Toeplitz and banded
strategies from :mod:`gaussdp.matrix`: exactly one Gaussian mechanism) and
:class:`AmplifiedBandMF` (banded strategies with cyclic Poisson sampling). Like
DP-SGD they are exactly another description, :meth:`Mechanism.expand`.

Every description converts to a JSON/TOML-friendly dict (:meth:`Mechanism.to_dict`,
inverted by :func:`from_dict`) and reads as one line (``str(m)`` /
:meth:`Mechanism.describe`). A whole pipeline — a mechanism plus its
neighbouring relation — can be written as a TOML file and read with
:func:`load` / :func:`loads`; :func:`dumps` writes one. The file format is
documented in ``docs/mechanisms.md``.

Where things are: the descriptions live by family in
:mod:`~gaussdp.mechanisms.noise`, :mod:`~gaussdp.mechanisms.sampling`,
:mod:`~gaussdp.mechanisms.samplers`, :mod:`~gaussdp.mechanisms.combinators`,
:mod:`~gaussdp.mechanisms.training`,
:mod:`~gaussdp.mechanisms.matrix` and :mod:`~gaussdp.mechanisms.guarantees`, on the base class of
:mod:`~gaussdp.mechanisms.base`; the neighbouring relations in
:mod:`~gaussdp.mechanisms.neighbouring`; pipeline files in
:mod:`~gaussdp.mechanisms.pipeline`. Every name is also ``gaussdp.mechanisms.X``.
A new description is one class in its family's module (see
``docs/architecture.md``): defining it registers its ``type_name`` for pipeline
and sweep files.

Examples
--------
>>> from gaussdp.mechanisms import Composition, DPSGD, Gaussian, PureDP, Repeated
>>> print(DPSGD(noise_multiplier=9.4, sampling_probability=0.32768, steps=2000))
DP-SGD: σ=9.4, q=0.32768, 2000 steps
>>> autodp = Composition([Repeated(Gaussian(5.0), 3), Repeated(Gaussian(8.0), 5), PureDP(0.1)])
>>> print(autodp)
Composition of 3: 3 × Gaussian(σ=5), 5 × Gaussian(σ=8), PureDP(ε=0.1)
>>> from_dict(autodp.to_dict()) == autodp
True
"""

from __future__ import annotations

from gaussdp.mechanisms.base import Mechanism
from gaussdp.mechanisms.combinators import Composition, Group, Parallel, Repeated
from gaussdp.mechanisms.guarantees import GDP, ZCDP, NoiseEquation, Profile, RenyiDP
from gaussdp.mechanisms.matrix import AmplifiedBandMF, MatrixMechanism
from gaussdp.mechanisms.neighbouring import Neighbouring, validate_neighbouring
from gaussdp.mechanisms.noise import (
    ApproxDP,
    DiscreteGaussian,
    Gaussian,
    GaussianMixture,
    Laplace,
    PureDP,
    RandomizedResponse,
)
from gaussdp.mechanisms.pipeline import (
    Pipeline,
    PipelineFileError,
    dumps,
    from_dict,
    load,
    loads,
    resolve,  # noqa: F401  (gaussdp.mechanisms.resolve, used by the accountant)
)
from gaussdp.mechanisms.samplers import RandomAllocation, Shuffled, TruncatedPoisson, as_if_poisson
from gaussdp.mechanisms.sampling import PoissonSubsampled, SubsampledWithoutReplacement
from gaussdp.mechanisms.training import DPSGD, Sampler

__all__ = [
    "DPSGD",
    "GDP",
    "ZCDP",
    "AmplifiedBandMF",
    "ApproxDP",
    "Composition",
    "DiscreteGaussian",
    "Gaussian",
    "GaussianMixture",
    "Group",
    "Laplace",
    "MatrixMechanism",
    "Mechanism",
    "Neighbouring",
    "NoiseEquation",
    "Parallel",
    "Pipeline",
    "PipelineFileError",
    "PoissonSubsampled",
    "Profile",
    "PureDP",
    "RandomAllocation",
    "RandomizedResponse",
    "RenyiDP",
    "Repeated",
    "Sampler",
    "Shuffled",
    "SubsampledWithoutReplacement",
    "TruncatedPoisson",
    "as_if_poisson",
    "dumps",
    "from_dict",
    "load",
    "loads",
    "validate_neighbouring",
]

# The public classes are documented, pickled and shown as gaussdp.mechanisms.X, where
# they were defined before this package was split by family; the pickles of older
# versions load, and new pickles are byte for byte the same.
for _name in __all__:
    _object = globals()[_name]
    if isinstance(_object, type):
        _object.__module__ = __name__
del _name, _object
