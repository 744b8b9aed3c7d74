r"""Matrix mechanisms: DP-FTRL, tree aggregation, banded and Toeplitz factorisations.

:class:`MatrixMechanism` is a whole training run with correlated noise: the
released prefix sums are A x + B z with A = B C, a post-processing of
C x + z, one Gaussian mechanism with the L2 sensitivity Δ of C over the
participation patterns (:func:`gaussdp.matrix.sensitivity`). It expands to
``Gaussian(sigma = noise_multiplier / Δ)``: exactly μ-GDP with μ = Δ/σ.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from gaussdp._validation import InvalidParameterError
from gaussdp.matrix import (
    Participation,
    Sensitivity,
    Strategy,
    participation_from_dict,
    sensitivity,
    strategy_from_dict,
)
from gaussdp.mechanisms.base import Mechanism, _fmt, _integer, _real
from gaussdp.mechanisms.noise import Gaussian
from gaussdp.mechanisms.training import DPSGD

__all__ = ["AmplifiedBandMF", "MatrixMechanism"]


@functools.lru_cache(maxsize=16)
def _sensitivity(strategy: Strategy, participation: Participation) -> Sensitivity:
    return sensitivity(strategy, participation)


@dataclass(frozen=True)
class MatrixMechanism(Mechanism):
    r"""The matrix mechanism (DP-FTRL): correlated Gaussian noise through a strategy C.

    A run of n steps with clipped gradients x_1, …, x_n (norm ≤ 1, the
    clipping norm as unit) releases the noisy prefix sums

    .. math::

        \widehat{A x} = A x + B z = B (C x + z), \qquad A = B C,\ z \sim N(0, σ^2 I),

    with A the lower-triangular matrix of ones. The output is a
    post-processing of C x + z: a Gaussian mechanism whose L2 sensitivity is
    Δ = max over participation patterns of ‖C (x − x')‖
    (:func:`gaussdp.matrix.sensitivity`). The gradients may be chosen
    adaptively (each from the previous outputs): the run is still exactly
    the Gaussian mechanism with that sensitivity (Denisov, McMahan, Rush,
    Smith and Thakurta 2022, arXiv 2202.08312, for one participation;
    Choquette-Choo, McMahan, Rush and Thakurta 2023, arXiv 2211.06530, for
    several). Hence it is **exactly μ-GDP with μ = Δ/σ**, with no failure
    probability: its dominating pair under add/remove is
    ``P = N(Δ, σ²)``, ``Q = N(0, σ²)``, i.e. :meth:`expand` is
    ``Gaussian(σ/Δ)`` (sensitivity 1). Under replace-one the contribution at
    each step moves by at most 2, the sensitivity is 2Δ, as for every
    Gaussian here. When Δ is only an upper bound (``sensitivity.exact`` is
    False: a strategy with negative Gram entries that no theorem covers),
    μ = Δ/σ and everything accounted from it are upper bounds, and
    :meth:`describe` says so.

    Parameters
    ----------
    strategy : Strategy or dict
        C, from :mod:`gaussdp.matrix` (``tree(1024)``, ``square_root_toeplitz(n)``,
        ``dense(C)``, …) or its table (``{"name": "tree", "n": 1024}``).
    noise_multiplier : float
        σ ∈ (0, ∞], the standard deviation of z over the clipping norm.
    participation : Participation or dict
        ``SingleParticipation()``, ``MinSeparation(b, k)`` or ``FixedEpochs(k)``
        (or their tables, ``{}``, ``{"min_separation": b, "max_participations": k}``,
        ``{"epochs": k}``).

    Examples
    --------
    >>> from gaussdp import account, matrix
    >>> run = MatrixMechanism(matrix.tree(1024), 2.0, matrix.MinSeparation(256, 4))
    >>> run.sensitivity.exact, round(run.sensitivity.value**2, 9)   # 4 × 9 + 2 × 2² + 4²
    (True, 60.0)
    >>> gaussian = run.expand()  # σ/Δ, with Δ rounded up (never below the truth)
    >>> type(gaussian).__name__, round(gaussian.sigma, 12), gaussian.sensitivity
    ('Gaussian', 0.258198889747, 1.0)
    >>> print(run.describe())  # doctest: +NORMALIZE_WHITESPACE
    Matrix mechanism: tree(n=1024), σ=2, at most 4 participations, 256 or more steps apart;
    Δ=7.746 (exact), μ = Δ/σ = 3.873
    >>> accounting = account(run)
    >>> accounting.method
    'closed form: a composition of Gaussian mechanisms is mu-GDP with mu = 3.87298'
    >>> report = accounting.gdp()
    >>> round(report.mu, 6), report.delta_tail
    (3.872983, 0.0)
    """

    strategy: Strategy
    noise_multiplier: float
    participation: Participation

    type_name: ClassVar[str] = "matrix"
    _kinds: ClassVar[dict[str, str]] = {
        "strategy": "table",
        "noise_multiplier": "real",
        "participation": "table",
    }

    def __post_init__(self) -> None:
        object.__setattr__(self, "strategy", strategy_from_dict(self.strategy))
        object.__setattr__(
            self,
            "noise_multiplier",
            _real("noise_multiplier", self.noise_multiplier, low=0.0, low_open=True),
        )
        object.__setattr__(self, "participation", participation_from_dict(self.participation))
        _sensitivity(self.strategy, self.participation)  # validates: n, memory

    @property
    def sensitivity(self) -> Sensitivity:
        """Δ with ``exact`` and ``method`` (:func:`gaussdp.matrix.sensitivity`)."""
        return _sensitivity(self.strategy, self.participation)

    @property
    def mu(self) -> float:
        """μ = Δ/σ: exact when ``sensitivity.exact``, an upper bound otherwise."""
        return self.sensitivity.value / self.noise_multiplier

    def expand(self) -> Mechanism:
        """``Gaussian(σ/Δ)``: the same mechanism with the sensitivity as unit (exactly)."""
        delta = self.sensitivity.value
        if delta == 0.0 or math.isinf(self.noise_multiplier):
            return Gaussian(math.inf)
        return Gaussian(self.noise_multiplier / delta)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type_name,
            "strategy": self.strategy.to_dict(),
            "noise_multiplier": self.noise_multiplier,
            "participation": self.participation.to_dict(),
        }

    def _params(self) -> str:
        return (
            f"{self.strategy.describe()}, σ={_fmt(self.noise_multiplier)}, "
            f"{self.participation.describe()}"
        )

    def describe(self) -> str:
        s = self.sensitivity
        if s.exact:
            tail = f"Δ={s.value:.4g} (exact), μ = Δ/σ = {self.mu:.4g}"
        else:
            tail = f"Δ ≤ {s.value:.4g} (upper bound), μ ≤ Δ/σ = {self.mu:.4g} (an upper bound)"
        return f"Matrix mechanism: {self._params()}; {tail}"

    def _short(self) -> str:
        return f"MatrixMechanism({self._params()})"

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.expand(),)


_COLUMN_NORM_SLACK = 1e-12  # relative: a column normalised in floating point may exceed 1 by ulps


@dataclass(frozen=True)
class AmplifiedBandMF(Mechanism):
    r"""Amplified banded matrix factorisation (BandMF with cyclic Poisson sampling).

    The run: the data set is split into b = ``bands`` disjoint groups; at step
    t the batch is a Poisson sample, rate q = ``sampling_probability``, of
    group t mod b; the noise is correlated through a b-banded strategy C
    whose columns have norm at most 1, z ~ N(0, σ² I). Then every example
    takes part in at most ⌈T/b⌉ rounds, b steps apart, and the whole run is
    dominated by ⌈T/b⌉ compositions of the Poisson-subsampled Gaussian
    mechanism with noise σ (Choquette-Choo, Ganesh, McKenna, McMahan, Rush,
    Thakurta and Xu 2023, arXiv 2306.08153, Theorem 4; jax_privacy's
    ``amplified_bandmf_event``). So :meth:`expand` is
    ``DPSGD(σ, q, ⌈T/b⌉)``, accounted with gaussdp's certified two-sided
    bounds and reported as μ-GDP like DP-SGD.

    The preconditions are the user's to meet (the sampling is not visible
    here); given ``strategy``, the strategy ones are checked: n = T, at most
    b bands, every column norm ≤ 1.

    Parameters
    ----------
    noise_multiplier : float
        σ ∈ (0, ∞], relative to the clipping norm and a strategy of column norm ≤ 1.
    steps : int
        T ≥ 1.
    bands : int
        b ≥ 1, the number of bands of C and of groups of the data.
    sampling_probability : float
        q ∈ (0, 1], the Poisson rate within a group (the expected batch is
        q·N/b for N examples).
    strategy : Strategy or dict, optional
        The strategy used, to check the preconditions.

    Examples
    --------
    >>> import numpy as np
    >>> from gaussdp import matrix
    >>> run = AmplifiedBandMF(1.0, steps=1000, bands=4, sampling_probability=0.05)
    >>> print(run.expand())
    DP-SGD: σ=1, q=0.05, 250 steps
    >>> c = matrix.square_root_toeplitz_coefficients(4)
    >>> unit = matrix.banded(c / np.linalg.norm(c), 4, n=1000)
    >>> checked = AmplifiedBandMF(1.0, 1000, 4, 0.05, strategy=unit)
    >>> AmplifiedBandMF(1.0, 1000, 4, 0.05, strategy=matrix.banded(c, 4, n=1000))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gaussdp._validation.InvalidParameterError: strategy must have columns of norm at most 1 ...
    """

    noise_multiplier: float
    steps: int
    bands: int
    sampling_probability: float
    strategy: Strategy | None = None

    type_name: ClassVar[str] = "amplified_bandmf"
    _kinds: ClassVar[dict[str, str]] = {
        "noise_multiplier": "real",
        "steps": "integer",
        "bands": "integer",
        "sampling_probability": "real",
        "strategy": "table",
    }

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "noise_multiplier",
            _real("noise_multiplier", self.noise_multiplier, low=0.0, low_open=True),
        )
        object.__setattr__(self, "steps", _integer("steps", self.steps, low=1))
        object.__setattr__(self, "bands", _integer("bands", self.bands, low=1))
        object.__setattr__(
            self,
            "sampling_probability",
            _real(
                "sampling_probability", self.sampling_probability, low=0.0, high=1.0, low_open=True
            ),
        )
        if self.strategy is None:
            return
        strategy = strategy_from_dict(self.strategy)
        object.__setattr__(self, "strategy", strategy)
        if strategy.n != self.steps:
            raise InvalidParameterError(
                f"strategy must have n = steps = {self.steps} columns, got n = {strategy.n}"
            )
        if strategy.bands is None or strategy.bands > self.bands:
            raise InvalidParameterError(
                f"strategy must be {self.bands}-banded for amplified BandMF with "
                f"bands = {self.bands}, got {strategy.describe()} with "
                f"{'an unbounded number of' if strategy.bands is None else strategy.bands} bands"
            )
        largest = float(strategy.column_norms().max())
        if largest > 1.0 + _COLUMN_NORM_SLACK:
            raise InvalidParameterError(
                "strategy must have columns of norm at most 1 for amplified BandMF (normalise "
                f"them, and scale σ with them), got a largest column norm of {largest:.6g}"
            )

    def expand(self) -> Mechanism:
        """``DPSGD(σ, q, ⌈T/b⌉)`` (arXiv 2306.08153, Theorem 4)."""
        return DPSGD(self.noise_multiplier, self.sampling_probability, -(-self.steps // self.bands))

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "type": self.type_name,
            "noise_multiplier": self.noise_multiplier,
            "steps": self.steps,
            "bands": self.bands,
            "sampling_probability": self.sampling_probability,
        }
        if self.strategy is not None:
            result["strategy"] = self.strategy.to_dict()
        return result

    def _params(self) -> str:
        return (
            f"σ={_fmt(self.noise_multiplier)}, {self.steps} steps, {self.bands} bands, "
            f"q={_fmt(self.sampling_probability)}"
        )

    def describe(self) -> str:
        rounds = -(-self.steps // self.bands)
        return f"Amplified BandMF: {self._params()} (as DP-SGD over {rounds} rounds)"

    def _short(self) -> str:
        return f"AmplifiedBandMF({self._params()})"

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.expand(),)
