"""Subsampling: run a mechanism on a random subset of the records.

:class:`PoissonSubsampled` (each record independently, add/remove or replace)
and :class:`SubsampledWithoutReplacement` (a fixed-size batch, replace only).
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


@dataclass(frozen=True)
class PoissonSubsampled(Mechanism):
    """Poisson subsampling: run ``mechanism`` on a random subset of the records.

    Every record is included independently with probability q, and the inner
    mechanism runs on the records included. Let ``(P, Q)`` be the inner
    mechanism's add/remove pair (``P``: the record present, ``Q``: absent) and
    ``ℓ = log dP/dQ`` its privacy loss. Under ADD_REMOVE (Zhu, Dong & Wang
    2022, §4.1; the lecture, file 003; Dong, Roth & Su 2022, §4.2):

    - remove (``D'`` lacks a record of ``D``): ``((1 − q)Q + qP,  Q)``, privacy
      loss ``L(x) = log(1 − q + q e^{ℓ(x)})`` with ``X ~ (1 − q)Q + qP``;
    - add (``D'`` has one record more): ``(Q,  (1 − q)Q + qP)``, privacy loss
      ``L(x) = −log(1 − q + q e^{ℓ(x)})`` with ``X ~ Q``.

    The two directions differ (for the Gaussian the remove direction has the
    heavier right tail); the guarantee is the larger of the two.

    Under REPLACE the record is present with probability q in both data sets,
    with contribution ``v`` in ``D`` and ``v'`` in ``D'``. This description
    defines it for additive-noise inner mechanisms with symmetric noise
    (:class:`Gaussian`, :class:`Laplace`, :class:`DiscreteGaussian`, and
    compositions / repetitions of them): with ``Q`` the noise distribution,
    ``P`` = Q shifted by +Δ and ``P̄`` = Q shifted by −Δ, the pair is
    ``((1 − q)Q + qP,  (1 − q)Q + qP̄)`` (dp_accounting's ``REPLACE_ONE``).
    For other inner mechanisms no dominating pair under REPLACE is defined
    here, and :class:`Pipeline` / :func:`validate_neighbouring` refuse it.

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism run on the sample.
    sampling_probability : float
        q ∈ (0, 1]; q = 1 is the inner mechanism itself.

    Examples
    --------
    >>> print(PoissonSubsampled(Gaussian(1.0), sampling_probability=0.01))
    PoissonSubsampled(q=0.01, Gaussian(σ=1))
    """

    mechanism: Mechanism
    sampling_probability: float

    type_name: ClassVar[str] = "poisson_subsampled"
    _kinds: ClassVar[dict[str, str]] = {"mechanism": "mechanism", "sampling_probability": "real"}

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        object.__setattr__(
            self,
            "sampling_probability",
            _real(
                "sampling_probability", self.sampling_probability, low=0.0, high=1.0, low_open=True
            ),
        )

    def _short(self) -> str:
        return f"PoissonSubsampled(q={_fmt(self.sampling_probability)}, {self.mechanism._short()})"

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.mechanism,)


@dataclass(frozen=True)
class SubsampledWithoutReplacement(Mechanism):
    """Fixed-size subsampling: run ``mechanism`` on m records drawn without replacement.

    The data set has exactly ``n = dataset_size`` records; a subset of exactly
    ``m = sample_size`` of them is drawn uniformly at random and the inner
    mechanism runs on it. Because the data set size is fixed, this is defined
    under **REPLACE** only (a :class:`Pipeline` refuses it under ADD_REMOVE).

    Let ``γ = m/n`` (:attr:`sampling_probability`) and let ``(P, Q)`` be the
    inner mechanism's REPLACE pair (on data sets of size m), with privacy loss
    ``ℓ = log dP/dQ``. For an ordered pair of neighbours ``(D, D')``:

    - at hockey-stick orders α ≥ 1 it is dominated by
      ``((1 − γ)Q + γP,  Q)`` (Zhu, Dong & Wang 2022, §4.1; in (ε, δ) form,
      Balle, Barthe & Gaboardi 2018: ``ε' = log(1 + γ(e^ε − 1))``, ``δ' = γδ``),
      privacy loss ``log(1 − γ + γ e^{ℓ(x)})`` with ``X ~ (1 − γ)Q + γP``;
    - at α ≤ 1 by ``(Q,  (1 − γ)Q + γP)``, privacy loss
      ``−log(1 − γ + γ e^{ℓ(x)})`` with ``X ~ Q``, which follows from the first
      by ``H_α(X ‖ Y) = 1 − α + α H_{1/α}(Y ‖ X)`` and the symmetry of REPLACE.

    These are the Poisson "remove" and "add" shapes with γ in place of q and
    the inner REPLACE pair in place of the add/remove pair.

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism run on the sample.
    sample_size : int
        m, an integer with 1 ≤ m ≤ n.
    dataset_size : int
        n, an integer ≥ 1.

    Examples
    --------
    >>> s = SubsampledWithoutReplacement(Gaussian(1.0), sample_size=256, dataset_size=60000)
    >>> round(s.sampling_probability, 6)
    0.004267
    >>> print(s)
    SubsampledWithoutReplacement(m=256, n=60000, Gaussian(σ=1))
    """

    mechanism: Mechanism
    sample_size: int
    dataset_size: int

    type_name: ClassVar[str] = "subsampled_without_replacement"
    _kinds: ClassVar[dict[str, str]] = {
        "mechanism": "mechanism",
        "sample_size": "integer",
        "dataset_size": "integer",
    }

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        sample_size = _integer("sample_size", self.sample_size, low=1)
        dataset_size = _integer("dataset_size", self.dataset_size, low=1)
        if sample_size > dataset_size:
            raise InvalidParameterError(
                f"sample_size must be <= dataset_size ({dataset_size}), got {sample_size}"
            )
        object.__setattr__(self, "sample_size", sample_size)
        object.__setattr__(self, "dataset_size", dataset_size)

    @property
    def sampling_probability(self) -> float:
        """γ = m/n, the probability that a given record is in the sample."""
        return self.sample_size / self.dataset_size

    def _short(self) -> str:
        return (
            f"SubsampledWithoutReplacement(m={self.sample_size}, n={self.dataset_size}, "
            f"{self.mechanism._short()})"
        )

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.mechanism,)
