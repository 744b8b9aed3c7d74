"""Training: DP-SGD, the common case, as its own description.

:class:`DPSGD` is ``steps`` rounds of a Poisson-subsampled Gaussian; it expands
to ``Repeated(PoissonSubsampled(Gaussian(σ), q), steps)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gaussdp.mechanisms.base import (
    Mechanism,
    _fmt,
    _integer,
    _real,
)
from gaussdp.mechanisms.combinators import Repeated
from gaussdp.mechanisms.noise import Gaussian
from gaussdp.mechanisms.sampling import PoissonSubsampled


@dataclass(frozen=True)
class DPSGD(Mechanism):
    """DP-SGD (Abadi et al. 2016): ``steps`` rounds of a Poisson-subsampled Gaussian.

    Each step includes every record independently with probability q, clips
    each per-example gradient to norm C and adds N(0, (σC)² I) to their sum.
    With C as the unit of sensitivity this is exactly
    ``Repeated(PoissonSubsampled(Gaussian(σ), q), steps)`` (:meth:`expand`),
    whose pairs are given in :class:`PoissonSubsampled` with
    ``P = N(1, σ²)``, ``Q = N(0, σ²)``.

    A run whose noise or sampling rate changes between phases is the
    composition of its phases, e.g.
    ``Composition([DPSGD(1.1, 0.01, 5000), DPSGD(0.8, 0.02, 1000)])``.

    Parameters
    ----------
    noise_multiplier : float
        σ ∈ (0, ∞], the noise standard deviation divided by the clipping norm.
    sampling_probability : float
        q ∈ (0, 1] (batch size over data set size for Poisson batches).
    steps : int
        T ≥ 1, the number of noisy gradient steps.

    Examples
    --------
    >>> run = DPSGD(noise_multiplier=9.4, sampling_probability=0.32768, steps=2000)
    >>> print(run.expand())
    2000 × PoissonSubsampled(q=0.32768, Gaussian(σ=9.4))
    >>> run.expand() == Repeated(PoissonSubsampled(Gaussian(9.4), 0.32768), 2000)
    True
    >>> print(Composition([DPSGD(1.1, 0.01, 5000), DPSGD(0.8, 0.02, 1000)]))
    Composition of 2: DPSGD(σ=1.1, q=0.01, 5000 steps), DPSGD(σ=0.8, q=0.02, 1000 steps)
    """

    noise_multiplier: float
    sampling_probability: float
    steps: int

    type_name: ClassVar[str] = "dpsgd"
    _kinds: ClassVar[dict[str, str]] = {
        "noise_multiplier": "real",
        "sampling_probability": "real",
        "steps": "integer",
    }

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "noise_multiplier",
            _real("noise_multiplier", self.noise_multiplier, low=0.0, low_open=True),
        )
        object.__setattr__(
            self,
            "sampling_probability",
            _real(
                "sampling_probability", self.sampling_probability, low=0.0, high=1.0, low_open=True
            ),
        )
        object.__setattr__(self, "steps", _integer("steps", self.steps, low=1))

    def expand(self) -> Mechanism:
        """The same description in building blocks (structure only, no accounting).

        Full-batch training (q = 1) samples every record: it is exactly
        ``Repeated(Gaussian(σ), steps)``, which composes in closed form.
        """
        if self.sampling_probability == 1.0:
            return Repeated(Gaussian(self.noise_multiplier), self.steps)
        inner = PoissonSubsampled(Gaussian(self.noise_multiplier), self.sampling_probability)
        return Repeated(inner, self.steps)

    def _params(self) -> str:
        steps = f"{self.steps} step" + ("" if self.steps == 1 else "s")
        return f"σ={_fmt(self.noise_multiplier)}, q={_fmt(self.sampling_probability)}, {steps}"

    def describe(self) -> str:
        return f"DP-SGD: {self._params()}"

    def _short(self) -> str:
        return f"DPSGD({self._params()})"

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.expand(),)
