"""The samplers training uses: random allocation (balls-in-bins), truncated Poisson, shuffling.

:class:`RandomAllocation` (each record takes part in exactly ``k`` of the
``t`` steps of one epoch) and :class:`TruncatedPoisson` (Poisson sampling,
then a batch larger than ``B`` cut to a random subset of ``B``) and
:class:`Shuffled` (a random permutation cut into fixed-size batches). All are
descriptions only; their dominating pairs (or the pairs that bracket them)
are in :mod:`gaussdp.pld`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gaussdp._validation import InvalidParameterError
from gaussdp.mechanisms.base import (
    Mechanism,
    _fmt,
    _integer,
    _real,
    _require_mechanism,
)
from gaussdp.mechanisms.combinators import Repeated


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
    ``Repeated(mechanism, t)`` (:meth:`expand`); 1 < k < t, other inner
    mechanisms and replace-one neighbouring are refused by the accountant.

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
    the batch.

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

    Each record is in exactly one of the ``t = steps`` batches of fixed size.
    No tight upper bound on its privacy is known; the accountant says what is
    certain (see :mod:`gaussdp.pld`).

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism run on every batch.
    steps : int
        t ≥ 1, the batches of one epoch.

    Examples
    --------
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
