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

from gaussdp.matrix import (
    Participation,
    Sensitivity,
    Strategy,
    participation_from_dict,
    sensitivity,
    strategy_from_dict,
)
from gaussdp.mechanisms.base import Mechanism, _fmt, _real
from gaussdp.mechanisms.noise import Gaussian

__all__ = ["MatrixMechanism"]


@functools.lru_cache(maxsize=64)
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
    >>> run.expand()
    Gaussian(sigma=0.2581988897471611, sensitivity=1.0)
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
