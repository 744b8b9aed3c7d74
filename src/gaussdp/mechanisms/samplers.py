"""The samplers training uses: random allocation (balls-in-bins), truncated Poisson, shuffling.

:class:`RandomAllocation` (each record takes part in exactly ``k`` of the
``t`` steps of one epoch) and :class:`TruncatedPoisson` (Poisson sampling,
then a batch larger than ``B`` cut to a random subset of ``B``) and
:class:`Shuffled` (a random permutation cut into fixed-size batches). All are
descriptions only; their dominating pairs (or the pairs that bracket them)
are in :mod:`gaussdp.pld`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from gaussdp._binomial import binomial_sf
from gaussdp._validation import InvalidParameterError
from gaussdp.mechanisms.base import (
    Mechanism,
    _fmt,
    _integer,
    _real,
    _require_mechanism,
)
from gaussdp.mechanisms.combinators import Repeated
from gaussdp.mechanisms.sampling import PoissonSubsampled


@dataclass(frozen=True)
class RandomAllocation(Mechanism):
    """Random allocation (balls-in-bins for ``selected = 1``): one epoch of ``steps`` steps.

    Each record takes part in exactly ``k = selected`` of the ``t = steps``
    steps, chosen uniformly at random and independently of the other records;
    every step runs ``mechanism`` on the records allocated to it. Epochs
    compose: ``Repeated(RandomAllocation(M, t), epochs)``. Balls-in-bins
    (k = 1) is the sampler of Chua et al. ("Balls-and-Bins Sampling for
    DP-SGD", arXiv 2412.16802): every record in one batch per epoch, batches
    of random size.

    Dominating pair (add/remove neighbouring, k = 1, a Gaussian mechanism
    with μ = Δ/σ; Feldman & Shenfeld, "Privacy amplification by random
    allocation", arXiv 2502.08202, and the PLD accounting of arXiv
    2602.17284)::

        remove:  P = (1/t) Σᵢ N(μeᵢ, I_t)   vs   Q = N(0, I_t)
        add:     (Q, P)

    With Yᵢ = exp(μxᵢ − μ²/2) the privacy loss is L = log((1/t) Σᵢ Yᵢ),
    so dP = e^L dQ and the law of L under Q determines every divergence;
    under Q the Yᵢ are i.i.d. log-normal, log Yᵢ ~ N(−μ²/2, μ²). No closed
    form is known: the accountant brackets the pair between two discrete
    ones, one dominating it and one dominated by it
    (:mod:`gaussdp.pld.allocation`), so its bounds stay certified. With
    k = t every record is in every step and the description is exactly
    ``Repeated(mechanism, t)`` (:meth:`expand`). For 1 < k < t the
    accountant bounds it from above by k composed runs of 1-out-of-⌊t/k⌋
    allocation (Feldman & Shenfeld 2025, Lemma 3.2) and from below by the law
    of the sum statistic Σᵢ Yᵢ under the k-subset pair
    (:func:`gaussdp.pld.allocation_parts.allocation_parts`), and says so with every
    result (the gap is not numerical). Any basic inner mechanism (Laplace,
    DiscreteGaussian, RandomizedResponse, PureDP, ApproxDP) is accounted the
    same way, through its privacy loss: the Yᵢ are e^{ℓ(xᵢ)} (Feldman &
    Shenfeld, arXiv 2602.17284). Other inner mechanisms and replace-one
    neighbouring are refused by the accountant.

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism run at every step.
    steps : int
        t ≥ 1, the steps of one epoch.
    selected : int
        k with 1 ≤ k ≤ t, the steps each record takes part in.

    Examples
    --------
    >>> from gaussdp.mechanisms import Gaussian, RandomAllocation
    >>> print(RandomAllocation(Gaussian(1.0), steps=100))
    RandomAllocation(t=100, k=1, Gaussian(σ=1))
    >>> print(RandomAllocation(Gaussian(1.0), steps=3, selected=3).expand())
    3 × Gaussian(σ=1)
    """

    mechanism: Mechanism
    steps: int
    selected: int = 1

    type_name: ClassVar[str] = "random_allocation"
    _kinds: ClassVar[dict[str, str]] = {
        "mechanism": "mechanism",
        "steps": "integer",
        "selected": "integer",
    }

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        steps = _integer("steps", self.steps, low=1)
        selected = _integer("selected", self.selected, low=1)
        if selected > steps:
            raise InvalidParameterError(f"selected must be at most steps ({steps}), got {selected}")
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "selected", selected)

    def _short(self) -> str:
        return f"RandomAllocation(t={self.steps}, k={self.selected}, {self.mechanism._short()})"

    def expand(self) -> Mechanism | None:
        """With k = t every record is in every step: exactly ``Repeated(mechanism, t)``."""
        if self.selected == self.steps:
            return Repeated(self.mechanism, self.steps)
        return None

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.mechanism,)


@dataclass(frozen=True)
class TruncatedPoisson(Mechanism):
    """Truncated Poisson sampling: a Poisson batch larger than ``B`` cut to ``B`` records.

    Every one of the ``N = dataset_size`` records is included independently
    with probability q; if more than ``B = max_batch_size`` are included, a
    uniformly random subset of ``B`` of them is kept. ``mechanism`` runs on
    the batch (Ganesh 2025, arXiv 2508.15089; dp_accounting's
    ``TruncatedSubsampledGaussianDpEvent``).

    Neighbouring: add/remove only, with ``N`` the size of the *larger* data
    set (the one holding the record in question), as dp_accounting counts it.
    With K ~ Binomial(N − 1, q) the number of other records sampled, a batch
    holding that record is cut when K ≥ B, with probability
    :attr:`truncation_probability`. Given that, the record is swapped in for
    another (a shift of up to 2Δ) with probability q̄ = E[qB/(K + 1) | K ≥ B];
    otherwise the sampler is exactly Poisson sampling (:attr:`untruncated`).

    Pairs (Gaussian inner mechanism only; see :mod:`gaussdp.pld.truncated`):
    the exact pair is not known, so the accountant brackets it. Upper
    (dominating): reveal whether the batch was cut, i.e. the mixture with
    weights 1 − P(cut), P(cut) of the Gaussian mixtures {0: 1 − q, Δ: q} and
    {0: 1 − q̄, 2Δ: q̄} against N(0, σ²). Lower (dominated): an actual pair of
    data sets, e.g. every other record contributing 0, {0: 1 − q_eff, Δ: q_eff}
    against N(0, σ²) with q_eff the probability that the record is in the
    batch; where batches are cut often, attacks that also see the cut.
    When no batch can be cut (B = N, or P(cut) = 0 in floating point) both
    are the Poisson-subsampled Gaussian. ε is *not* monotone in B: B = 1
    keeps each record with probability about 1/N (very private), B = N is
    plain Poisson, and the bounds are largest for B near the mean batch Nq.

    In a pipeline file::

        [[mechanism]]
        type = "truncated_poisson"
        mechanism = { type = "gaussian", sigma = 1.0 }
        sampling_probability = 0.01
        max_batch_size = 1100
        dataset_size = 100000

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism run on the batch.
    sampling_probability : float
        q ∈ (0, 1].
    max_batch_size : int
        B with 1 ≤ B ≤ N.
    dataset_size : int
        N ≥ 1.

    Examples
    --------
    >>> from gaussdp import Gaussian
    >>> print(TruncatedPoisson(Gaussian(1.0), 0.01, max_batch_size=1200, dataset_size=100000))
    TruncatedPoisson(q=0.01, B=1200, N=100000, Gaussian(σ=1))
    """

    mechanism: Mechanism
    sampling_probability: float
    max_batch_size: int
    dataset_size: int

    type_name: ClassVar[str] = "truncated_poisson"
    _kinds: ClassVar[dict[str, str]] = {
        "mechanism": "mechanism",
        "sampling_probability": "real",
        "max_batch_size": "integer",
        "dataset_size": "integer",
    }

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        object.__setattr__(
            self,
            "sampling_probability",
            _real(
                "sampling_probability", self.sampling_probability, low=0.0, high=1.0, low_open=True
            ),
        )
        dataset_size = _integer("dataset_size", self.dataset_size, low=1)
        max_batch_size = _integer("max_batch_size", self.max_batch_size, low=1)
        if max_batch_size > dataset_size:
            raise InvalidParameterError(
                f"max_batch_size must be in [1, dataset_size = {dataset_size}], "
                f"got {max_batch_size}"
            )
        object.__setattr__(self, "dataset_size", dataset_size)
        object.__setattr__(self, "max_batch_size", max_batch_size)

    @property
    def truncation_probability(self) -> float:
        """P(Binomial(N − 1, q) ≥ B): the chance that a batch holding a given record is cut.

        How far the sampler is from plain Poisson sampling: 0 means it *is*
        Poisson sampling (:attr:`untruncated`) for accounting purposes.

        Examples
        --------
        >>> from gaussdp import Gaussian
        >>> sampler = TruncatedPoisson(Gaussian(1.0), 0.01, 1200, 100000)
        >>> sampler.truncation_probability < 1e-9
        True
        """
        q, n, b = self.sampling_probability, self.dataset_size, self.max_batch_size
        return float(binomial_sf(b - 1, n - 1, q))

    @property
    def untruncated(self) -> Mechanism:
        """The plain Poisson-sampled mechanism, ``PoissonSubsampled(mechanism, q)``, for comparison.

        Examples
        --------
        >>> from gaussdp import Gaussian
        >>> print(TruncatedPoisson(Gaussian(1.0), 0.01, 1200, 100000).untruncated)
        PoissonSubsampled(q=0.01, Gaussian(σ=1))
        """
        from gaussdp.mechanisms.sampling import PoissonSubsampled

        return PoissonSubsampled(self.mechanism, self.sampling_probability)

    def _short(self) -> str:
        return (
            f"TruncatedPoisson(q={_fmt(self.sampling_probability)}, B={self.max_batch_size}, "
            f"N={self.dataset_size}, {self.mechanism._short()})"
        )

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.mechanism,)


@dataclass(frozen=True)
class Shuffled(Mechanism):
    """Shuffling: one epoch, a random permutation of the records cut into ``steps`` batches.

    Each epoch draws a uniformly random permutation of the records (fresh for
    every epoch: ``Repeated(Shuffled(M, t), epochs)``) and cuts it into
    ``t = steps`` batches of one fixed size; ``mechanism`` runs on each batch
    in turn, so every record is in exactly one batch per epoch. This is what
    PyTorch's and JAX's data loaders do (and Opacus with
    ``poisson_sampling=False``).

    **No tight upper bound on its privacy is known.** The accountant gives
    what is certain (:mod:`gaussdp.pld.shuffling`), for a Gaussian inner
    mechanism with r = Δ/σ:

    * upper bounds assuming no amplification at all: one epoch is dominated
      by one run of the inner mechanism, N(r, 1) vs N(0, 1) (each record is
      in one batch; the permutation has the same law on both data sets);
    * the certified lower bounds of Chua et al. (ICML 2024, arXiv
      2403.17673; multi-epoch arXiv 2411.04205): the maximum batch sum of a
      worst-case input, P = MoG(2r) against Q = MoG(r), where
      MoG(m) = (1/t) Σ_s N(m·e_s, I_t).

    **Neighbouring relation.** Fixed batch sizes leave no room to add or
    remove a record, so ``Neighbouring.ADD_REMOVE`` is read as *zero-out*
    (Kairouz et al. 2021; Chua et al. 2024, §2): one record is replaced by a
    null record that contributes 0. Data set and batch sizes stay fixed, the
    Poisson accounting of the same run under zero-out equals its add/remove
    accounting (so the two samplers' ε compare), and it is the relation of
    Chua et al.'s lower bound. Under ``Neighbouring.REPLACE`` a contribution
    may move by 2Δ: upper N(2r, 1), lower MoG(2r) against N(0, I).

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism run on every batch (a Gaussian mechanism to be
        accounted).
    steps : int
        t ≥ 1, the batches of one epoch.

    Examples
    --------
    >>> from gaussdp import Gaussian
    >>> print(Shuffled(Gaussian(1.0), steps=100))
    Shuffled(t=100, Gaussian(σ=1))
    """

    mechanism: Mechanism
    steps: int

    type_name: ClassVar[str] = "shuffled"
    _kinds: ClassVar[dict[str, str]] = {"mechanism": "mechanism", "steps": "integer"}

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        object.__setattr__(self, "steps", _integer("steps", self.steps, low=1))

    def _short(self) -> str:
        return f"Shuffled(t={self.steps}, {self.mechanism._short()})"

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.mechanism,)


def as_if_poisson(mechanism: Mechanism) -> Mechanism | None:
    """The same run with every shuffled epoch accounted as if Poisson: None if none is shuffled.

    ``Shuffled(M, t)`` becomes ``Repeated(PoissonSubsampled(M, 1/t), t)``:
    the Poisson sampling with the same expected batch size that shuffled runs
    are often (wrongly) reported under. Everything else is kept; descriptions
    that are exactly another one (DP-SGD) are read in their expansion.

    Examples
    --------
    >>> from gaussdp.mechanisms import Gaussian, Repeated, Shuffled, as_if_poisson
    >>> print(as_if_poisson(Repeated(Shuffled(Gaussian(1.0), steps=100), 10)))
    10 × 100 × PoissonSubsampled(q=0.01, Gaussian(σ=1))
    >>> as_if_poisson(Repeated(Gaussian(1.0), 10)) is None
    True
    """
    if isinstance(mechanism, Shuffled):
        inner = as_if_poisson(mechanism.mechanism) or mechanism.mechanism
        return Repeated(PoissonSubsampled(inner, 1.0 / mechanism.steps), mechanism.steps)
    expanded = mechanism.expand()
    if expanded is not None:
        return as_if_poisson(expanded)
    changes = {}
    for name, kind in mechanism._kinds.items():
        value = getattr(mechanism, name)
        if kind == "mechanism" and isinstance(value, Mechanism):
            replaced = as_if_poisson(value)
            if replaced is not None:
                changes[name] = replaced
        elif kind == "mechanisms":
            parts = [as_if_poisson(part) for part in value]
            if any(part is not None for part in parts):
                changes[name] = tuple(
                    new if new is not None else old for new, old in zip(parts, value, strict=True)
                )
    return dataclasses.replace(mechanism, **changes) if changes else None
