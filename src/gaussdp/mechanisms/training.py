"""Training: DP-SGD, the common case, as its own description, with the sampler it uses.

:class:`DPSGD` is ``steps`` noisy gradient steps whose batches a
:class:`Sampler` draws: Poisson (the default, and the only sampler a run
described without one can mean), balls-in-bins, truncated Poisson or
shuffling. It expands to the building blocks of that sampler, e.g.
``Repeated(PoissonSubsampled(Gaussian(σ), q), steps)`` or
``Repeated(RandomAllocation(Gaussian(σ), t), epochs)``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, ClassVar

from gaussdp._validation import InvalidParameterError
from gaussdp.mechanisms.base import (
    Mechanism,
    _fmt,
    _integer,
    _real,
    _suggest,
)
from gaussdp.mechanisms.combinators import Repeated
from gaussdp.mechanisms.noise import Gaussian
from gaussdp.mechanisms.samplers import RandomAllocation, Shuffled, TruncatedPoisson
from gaussdp.mechanisms.sampling import PoissonSubsampled


class Sampler(enum.Enum):
    """How DP-SGD draws its batches (:class:`DPSGD`'s ``sampler``; its value is the spelling).

    ``POISSON`` ("poisson"): every record independently with probability q,
    at every step. ``BALLS_IN_BINS`` ("balls-in-bins"): every epoch, each
    record is put in one of the ``t`` steps uniformly at random
    (:class:`RandomAllocation` with k = 1). ``TRUNCATED_POISSON``
    ("truncated-poisson"): Poisson, then a batch larger than B cut to B
    (:class:`TruncatedPoisson`). ``SHUFFLING`` ("shuffling"): every epoch, a
    random permutation cut into ``t`` batches of one size (:class:`Shuffled`:
    certified upper and lower bounds only, no tight bound is known).

    Examples
    --------
    >>> Sampler("balls-in-bins")
    <Sampler.BALLS_IN_BINS: 'balls-in-bins'>
    >>> Sampler.parse("shufling")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gaussdp._validation.InvalidParameterError: sampler must be ... (did you mean 'shuffling'?)
    """

    POISSON = "poisson"
    BALLS_IN_BINS = "balls-in-bins"
    TRUNCATED_POISSON = "truncated-poisson"
    SHUFFLING = "shuffling"

    @classmethod
    def parse(cls, value: Any) -> Sampler:
        """A :class:`Sampler` from itself or its name (one-line error with a suggestion)."""
        if isinstance(value, cls):
            return value
        names = [sampler.value for sampler in cls]
        if isinstance(value, str):
            spelled = value.strip().lower().replace("_", "-")
            if spelled in names:
                return cls(spelled)
            hint = _suggest(spelled, names)
        else:
            hint = ""
        allowed = ", ".join(repr(name) for name in names)
        raise InvalidParameterError(f"sampler must be one of {allowed}, got {value!r}{hint}")


#: The samplers whose batches are fixed per epoch: every record in one step of each epoch.
_EPOCH_SAMPLERS = (Sampler.BALLS_IN_BINS, Sampler.SHUFFLING)
_OPTIONAL = ("steps_per_epoch", "batch_size", "max_batch_size", "dataset_size")


@dataclass(frozen=True, repr=False)
class DPSGD(Mechanism):
    """DP-SGD (Abadi et al. 2016): ``steps`` noisy gradient steps on batches a sampler draws.

    Each step clips each per-example gradient of its batch to norm C and adds
    N(0, (σC)² I) to their sum; with C as the unit of sensitivity the step is
    the Gaussian mechanism ``Gaussian(σ)`` on the batch, and the run is that
    step composed under the **sampler** (:meth:`expand`):

    * ``"poisson"`` (the default; needs q):
      ``Repeated(PoissonSubsampled(G, q), T)``;
    * ``"balls-in-bins"`` (needs t, or B and N with t = N/B):
      ``Repeated(RandomAllocation(G, t), T/t)``;
    * ``"truncated-poisson"`` (needs q, the largest batch B and N):
      ``Repeated(TruncatedPoisson(G, q, B, N), T)``;
    * ``"shuffling"`` (needs t, or B and N with t = N/B):
      ``Repeated(Shuffled(G, t), T/t)``,

    with G = ``Gaussian(σ)``, T = ``steps`` and t = ``steps_per_epoch``; T
    must be a whole number of epochs. For Poisson the pairs are given in
    :class:`PoissonSubsampled` (P = N(1, σ²), Q = N(0, σ²)); for the others
    in the sampler's own description. **A fixed batch size is never
    silently Poisson**: ``batch_size``, ``steps_per_epoch`` or
    ``max_batch_size`` without a sampler named is refused, asking for one.

    ``DPSGD(σ, q, T)`` is exactly what it always was (same fields, text,
    dict and pipeline file); the sampler fields appear only when used. A run
    whose noise or sampling changes between phases is the composition of its
    phases, e.g. ``Composition([DPSGD(1.1, 0.01, 5000), DPSGD(0.8, 0.02, 1000)])``.

    Parameters
    ----------
    noise_multiplier : float
        σ ∈ (0, ∞], the noise standard deviation divided by the clipping norm.
    sampling_probability : float, optional
        q ∈ (0, 1]: Poisson and truncated Poisson (expected batch size over
        data set size).
    steps : int
        T ≥ 1, the number of noisy gradient steps.
    sampler : Sampler or str, optional
        ``"poisson"`` (default), ``"balls-in-bins"``, ``"truncated-poisson"``
        or ``"shuffling"`` (:class:`Sampler`).
    steps_per_epoch : int, optional
        t ≥ 1: balls-in-bins and shuffling (t divides T).
    batch_size : int, optional
        B ≥ 1, with ``dataset_size`` N: balls-in-bins and shuffling, instead
        of ``steps_per_epoch`` (t = N/B, B must divide N).
    max_batch_size : int, optional
        B with 1 ≤ B ≤ N: truncated Poisson.
    dataset_size : int, optional
        N ≥ 1: truncated Poisson (and with ``batch_size``).

    Examples
    --------
    >>> run = DPSGD(noise_multiplier=9.4, sampling_probability=0.32768, steps=2000)
    >>> print(run.expand())
    2000 × PoissonSubsampled(q=0.32768, Gaussian(σ=9.4))
    >>> run.expand() == Repeated(PoissonSubsampled(Gaussian(9.4), 0.32768), 2000)
    True
    >>> print(Composition([DPSGD(1.1, 0.01, 5000), DPSGD(0.8, 0.02, 1000)]))
    Composition of 2: DPSGD(σ=1.1, q=0.01, 5000 steps), DPSGD(σ=0.8, q=0.02, 1000 steps)
    >>> run = DPSGD(1.0, steps=1000, sampler="balls-in-bins", steps_per_epoch=100)
    >>> print(run)
    DP-SGD: σ=1, balls-in-bins, 100 steps per epoch, 10 epochs
    >>> run.expand() == Repeated(RandomAllocation(Gaussian(1.0), 100), 10)
    True
    >>> DPSGD(1.0, steps=1000, batch_size=100, dataset_size=10000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gaussdp._validation.InvalidParameterError: a fixed batch size (...) needs a sampler: ...
    """

    noise_multiplier: float
    sampling_probability: float | None = None
    steps: int | None = None
    sampler: Sampler | None = None
    steps_per_epoch: int | None = None
    batch_size: int | None = None
    max_batch_size: int | None = None
    dataset_size: int | None = None

    type_name: ClassVar[str] = "dpsgd"
    _kinds: ClassVar[dict[str, str]] = {
        "noise_multiplier": "real",
        "sampling_probability": "real",
        "steps": "integer",
        "sampler": "name",
        "steps_per_epoch": "integer",
        "batch_size": "integer",
        "max_batch_size": "integer",
        "dataset_size": "integer",
    }

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "noise_multiplier",
            _real("noise_multiplier", self.noise_multiplier, low=0.0, low_open=True),
        )
        if self.steps is None:
            raise InvalidParameterError("steps is missing: DP-SGD needs the number of steps T >= 1")
        object.__setattr__(self, "steps", _integer("steps", self.steps, low=1))
        for name in _OPTIONAL:
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _integer(name, getattr(self, name), low=1))
        if self.sampling_probability is not None:
            object.__setattr__(
                self,
                "sampling_probability",
                _real(
                    "sampling_probability",
                    self.sampling_probability,
                    low=0.0,
                    high=1.0,
                    low_open=True,
                ),
            )
        if self.sampler is None:
            self._no_sampler_named()
            return
        sampler = Sampler.parse(self.sampler)
        object.__setattr__(self, "sampler", sampler)
        if sampler is Sampler.POISSON:  # named: the batch fields give q; stored as the default
            self._refuse("max_batch_size")
            self._rate_from_batches(allow_batch_size=True)
            object.__setattr__(self, "sampler", None)
            self._no_sampler_named()
            return
        if sampler is Sampler.TRUNCATED_POISSON:
            self._rate_from_batches(allow_batch_size=False)
            self._require("sampling_probability", "max_batch_size", "dataset_size")
            self._refuse("steps_per_epoch", "batch_size")
            # the description checks B ≤ N
            TruncatedPoisson(
                Gaussian(1.0), self.sampling_probability, self.max_batch_size, self.dataset_size
            )
            return
        self._refuse("sampling_probability", "max_batch_size")
        self._epochs_from_batches()

    # -- validation helpers -------------------------------------------------------------

    def _given(self, *names: str) -> list[str]:
        return [name for name in names if getattr(self, name) is not None]

    def _no_sampler_named(self) -> None:
        fixed = self._given("batch_size", "steps_per_epoch", "max_batch_size", "dataset_size")
        if fixed:
            values = ", ".join(f"{name}={getattr(self, name)}" for name in fixed)
            raise InvalidParameterError(
                f"a fixed batch size ({values}) needs a sampler: name one, "
                "sampler='balls-in-bins', 'shuffling' or 'truncated-poisson' (DP-SGD is never "
                "silently Poisson for fixed-size batches)"
            )
        if self.sampling_probability is None:
            raise InvalidParameterError(
                "sampling_probability is missing: Poisson DP-SGD needs q in (0, 1] "
                "(or name another sampler)"
            )

    def _require(self, *names: str) -> None:
        missing = [name for name in names if getattr(self, name) is None]
        if missing:
            raise InvalidParameterError(
                f"sampler {self.sampler.value!r} needs {' and '.join(missing)}, not given"
            )

    def _refuse(self, *names: str) -> None:
        extra = self._given(*names)
        if extra:
            values = ", ".join(f"{name}={getattr(self, name)}" for name in extra)
            raise InvalidParameterError(
                f"{values} does not apply to sampler {self.sampler.value!r}"
            )

    def _rate_from_batches(self, *, allow_batch_size: bool) -> None:
        """q = 1/t or B/N where a Poisson sampler is named with an epoch's batches instead of q.

        The expected batch size is then the epoch's: what a sweep over samplers
        with one ``steps_per_epoch`` compares.
        """
        names = ("steps_per_epoch", "batch_size") if allow_batch_size else ("steps_per_epoch",)
        given = self._given(*names)
        if not given:
            return
        if self.sampling_probability is not None:
            values = ", ".join(f"{name}={getattr(self, name)}" for name in given)
            raise InvalidParameterError(
                f"give sampling_probability or {values}, not both, for sampler "
                f"{self.sampler.value!r}"
            )
        if self.steps_per_epoch is not None:
            self._refuse("batch_size")
            rate = 1.0 / self.steps_per_epoch
        else:
            self._require("batch_size", "dataset_size")
            if self.batch_size > self.dataset_size:
                raise InvalidParameterError(
                    f"batch_size must be in [1, dataset_size = {self.dataset_size}], "
                    f"got {self.batch_size}"
                )
            rate = self.batch_size / self.dataset_size
            object.__setattr__(self, "batch_size", None)
            object.__setattr__(self, "dataset_size", None)
        object.__setattr__(self, "sampling_probability", rate)
        object.__setattr__(self, "steps_per_epoch", None)

    def _epochs_from_batches(self) -> None:
        """t from ``steps_per_epoch`` or from N/B; T must be a whole number of epochs."""
        if self.batch_size is not None or self.dataset_size is not None:
            if self.steps_per_epoch is not None:
                raise InvalidParameterError(
                    "give steps_per_epoch or batch_size with dataset_size, not both"
                )
            self._require("batch_size", "dataset_size")
            batch, size = self.batch_size, self.dataset_size
            if size % batch != 0:
                raise InvalidParameterError(
                    f"batch_size must divide dataset_size for whole batches, got batch_size="
                    f"{batch} and dataset_size={size} (or give steps_per_epoch)"
                )
            object.__setattr__(self, "steps_per_epoch", size // batch)
            object.__setattr__(self, "batch_size", None)
            object.__setattr__(self, "dataset_size", None)
        self._require("steps_per_epoch")
        if self.steps % self.steps_per_epoch != 0:
            raise InvalidParameterError(
                f"steps must be a whole number of epochs of steps_per_epoch = "
                f"{self.steps_per_epoch}, got {self.steps} "
                f"({self.steps / self.steps_per_epoch:g} epochs)"
            )

    # -- reading --------------------------------------------------------------------------

    @property
    def sampler_kind(self) -> Sampler:
        """The sampler, :attr:`Sampler.POISSON` where none was named."""
        return Sampler.POISSON if self.sampler is None else self.sampler

    @property
    def epochs(self) -> int | None:
        """T / t for balls-in-bins and shuffling, None for the Poisson samplers."""
        if self.sampler_kind in _EPOCH_SAMPLERS:
            return self.steps // self.steps_per_epoch
        return None

    def expand(self) -> Mechanism:
        """The same description in building blocks (structure only, no accounting).

        Full-batch Poisson training (q = 1) samples every record: it is exactly
        ``Repeated(Gaussian(σ), steps)``, which composes in closed form.
        """
        step = Gaussian(self.noise_multiplier)
        kind = self.sampler_kind
        if kind is Sampler.POISSON and self.sampling_probability == 1.0:
            return Repeated(step, self.steps)
        if kind is Sampler.POISSON:
            return Repeated(PoissonSubsampled(step, self.sampling_probability), self.steps)
        if kind is Sampler.TRUNCATED_POISSON:
            truncated = TruncatedPoisson(
                step, self.sampling_probability, self.max_batch_size, self.dataset_size
            )
            return Repeated(truncated, self.steps)
        epoch_of = RandomAllocation if kind is Sampler.BALLS_IN_BINS else Shuffled
        return Repeated(epoch_of(step, self.steps_per_epoch), self.epochs)

    def to_dict(self) -> dict[str, Any]:
        """As :meth:`Mechanism.to_dict`, without the fields not given; the sampler by name."""
        result = {key: value for key, value in super().to_dict().items() if value is not None}
        if self.sampler is not None:
            result["sampler"] = self.sampler.value
        return result

    def _params(self) -> str:
        steps = f"{self.steps} step" + ("" if self.steps == 1 else "s")
        sigma = f"σ={_fmt(self.noise_multiplier)}"
        kind = self.sampler_kind
        if kind is Sampler.POISSON:
            return f"{sigma}, q={_fmt(self.sampling_probability)}, {steps}"
        if kind is Sampler.TRUNCATED_POISSON:
            return (
                f"{sigma}, truncated Poisson q={_fmt(self.sampling_probability)}, "
                f"B={self.max_batch_size}, N={self.dataset_size}, {steps}"
            )
        epochs = f"{self.epochs} epoch" + ("" if self.epochs == 1 else "s")
        return f"{sigma}, {kind.value}, {self.steps_per_epoch} steps per epoch, {epochs}"

    def describe(self) -> str:
        return f"DP-SGD: {self._params()}"

    def __getstate__(self) -> dict[str, Any]:
        # Pickles of Poisson runs stay byte for byte those of before samplers existed; the
        # fields left out read their class defaults (None) when loaded.
        return {key: value for key, value in vars(self).items() if value is not None}

    def __repr__(self) -> str:
        given = {key: value for key, value in vars(self).items() if value is not None}
        if self.sampler is not None:
            given["sampler"] = self.sampler.value
        return f"DPSGD({', '.join(f'{key}={value!r}' for key, value in given.items())})"

    def _short(self) -> str:
        return f"DPSGD({self._params()})"

    def _children(self) -> tuple[Mechanism, ...]:
        return (self.expand(),)
