"""A drop-in privacy accountant for Opacus (and any code written against its interface).

:class:`GaussDPAccountant` follows Opacus's ``IAccountant`` interface —
``step(noise_multiplier=, sample_rate=)``, ``get_epsilon(delta)``,
``__len__``, ``state_dict`` / ``load_state_dict``, ``mechanism()``,
``get_optimizer_hook_fn`` and the ``history`` list of
``(noise_multiplier, sample_rate, steps)`` phases — and accounts the run
with gaussdp's certified PLD accountant (:func:`gaussdp.account`): every ε
it returns is an upper bound. It adds :meth:`~GaussDPAccountant.get_mu`,
:meth:`~GaussDPAccountant.report` and :meth:`~GaussDPAccountant.pipeline`
(the run as a gaussdp description, a composition of :class:`gaussdp.DPSGD`
phases).

Opacus is not imported here. To use the accountant inside Opacus, register
it under a name and pass that name to the engine::

    from opacus import PrivacyEngine
    from gaussdp.interop.opacus import register
    register()                                   # name "gaussdp"
    engine = PrivacyEngine(accountant="gaussdp")

or replace an engine's accountant: ``engine.accountant = GaussDPAccountant()``.
Opacus's ``make_private_with_epsilon`` then calibrates with it too: a fresh
accountant, which reads ``poisson_sampling`` from that call and, for shuffled
batches, calibrates σ to the shuffling upper bound (:meth:`GaussDPAccountant.get_epsilon`).

**The sampler.** Opacus samples Poisson batches only when the engine's
``make_private`` is called with ``poisson_sampling=True`` (its default: the data
loader is replaced by a ``DPDataLoader``); with ``poisson_sampling=False`` the
original loader's batches are used — shuffled (or fixed) batches of one size —
and Opacus still accounts them as Poisson. This accountant is told the sampler
(``GaussDPAccountant(sampler="shuffling")``), or reads it where Opacus exposes
it: ``make_private`` asks it for its step hook, and the accountant reads that
call's ``poisson_sampling`` (or, by :meth:`~GaussDPAccountant.detect_sampler`,
the data loader ``make_private`` returned). A shuffled run is then accounted as
shuffling — certified upper bounds without amplification and Chua et al.'s
lower bounds (:class:`gaussdp.Shuffled`) — with a :class:`ShufflingWarning`,
never as Poisson in disguise.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable
from copy import deepcopy
from typing import Any

from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError, check_real
from gaussdp.accountant import DEFAULT_ACCURACY, Accounting, account

__all__ = ["MECHANISM_NAME", "GaussDPAccountant", "ShufflingWarning", "register"]

#: The name under which :func:`register` makes the accountant known to Opacus.
MECHANISM_NAME = "gaussdp"

#: The samplers an Opacus run can be accounted under (truncated Poisson needs the batch
#: bound and the data set size, which Opacus's hook does not give).
_OPACUS_SAMPLERS = (m.Sampler.POISSON, m.Sampler.SHUFFLING, m.Sampler.BALLS_IN_BINS)


class ShufflingWarning(UserWarning):
    """An Opacus run's batches are shuffled, not Poisson: accounted as shuffling.

    Its ε is then known only between a certified upper bound that assumes no
    amplification and Chua et al.'s certified lower bound (often far above
    what Poisson accounting of the same run claims).
    """


class GaussDPAccountant:
    """Opacus-style accountant for DP-SGD, backed by gaussdp's certified accountant.

    Each ``step`` records one noisy step with Poisson sampling rate
    ``sample_rate`` and noise multiplier ``noise_multiplier``; consecutive
    steps with the same parameters form a phase. The run is the composition
    of its phases, ``Composition([DPSGD(σ_1, q_1, T_1), …])``, under
    add/remove neighbouring (Opacus's convention).

    With ``sampler="shuffling"`` (or ``"balls-in-bins"``), or once it has
    read ``poisson_sampling=False`` from Opacus, each phase is
    ``DPSGD(σ, steps=…, sampler=…, steps_per_epoch=t)`` with t = 1/q (Opacus's
    ``sample_rate`` is 1/len(data_loader)). An unfinished epoch is counted as a
    whole one for the upper bound and left out of the lower bound; a phase's
    epochs are counted from its first step.

    Parameters
    ----------
    accuracy : float
        Passed to :func:`gaussdp.account`.
    sampler : str or Sampler, optional
        ``"poisson"``, ``"shuffling"`` or ``"balls-in-bins"``. None (default):
        Poisson unless Opacus says otherwise (``poisson_sampling=False``).

    Examples
    --------
    >>> accountant = GaussDPAccountant()
    >>> for _ in range(1000):
    ...     accountant.step(noise_multiplier=1.1, sample_rate=0.01)
    >>> len(accountant), accountant.history
    (1000, [(1.1, 0.01, 1000)])
    >>> round(accountant.get_epsilon(1e-5), 3)
    1.515
    """

    def __init__(self, *, accuracy: float = DEFAULT_ACCURACY, sampler: Any = None) -> None:
        self.history: list[tuple[float, float, int]] = []
        self.accuracy = float(check_real("accuracy", accuracy, low=0.0, high=0.1, low_open=True))
        self._cache: tuple[tuple, Accounting] | None = None
        self._told = sampler is not None
        self.sampler = m.Sampler.POISSON if sampler is None else _opacus_sampler(sampler)

    def _use(self, sampler: m.Sampler) -> None:
        """Account the run under ``sampler`` from now on; warns for shuffled batches."""
        if sampler is m.Sampler.SHUFFLING and self.sampler is not m.Sampler.SHUFFLING:
            warnings.warn(
                "Opacus uses shuffled batches (poisson_sampling=False): gaussdp accounts them "
                "as shuffling (upper bounds without amplification, Chua et al.'s lower "
                "bounds), not as Poisson",
                ShufflingWarning,
                stacklevel=3,
            )
        self.sampler = sampler
        self._cache = None

    def detect_sampler(self, data_loader: Any) -> m.Sampler:
        """Read the sampler from the data loader Opacus's ``make_private`` returned.

        A ``DPDataLoader`` (or a loader whose batch sampler is Opacus's
        ``UniformWithReplacementSampler``) draws Poisson batches; any other
        loader cuts batches of one size (shuffled, or in a fixed order, which
        shuffling's bounds also cover), accounted as shuffling with a
        :class:`ShufflingWarning`. A sampler given at construction is kept.
        """
        if self._told:
            return self.sampler
        batch_sampler = getattr(data_loader, "batch_sampler", None)
        poisson = type(data_loader).__name__ == "DPDataLoader" or (
            type(batch_sampler).__name__ == "UniformWithReplacementSampler"
        )
        self._use(m.Sampler.POISSON if poisson else m.Sampler.SHUFFLING)
        return self.sampler

    # ---------------------------------------------------------------- Opacus interface

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one step (merged into the last phase if its parameters are equal)."""
        sigma = float(
            check_real("noise_multiplier", noise_multiplier, low=0.0, high=math.inf, low_open=True)
        )
        q = float(check_real("sample_rate", sample_rate, low=0.0, high=1.0))
        if self.history and self.history[-1][0] == sigma and self.history[-1][1] == q:
            last_sigma, last_q, steps = self.history[-1]
            self.history[-1] = (last_sigma, last_q, steps + 1)
        else:
            self.history.append((sigma, q, 1))

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        """Upper bound on ε at ``delta`` for the steps so far (0 before any step).

        Extra arguments (Opacus passes accountant-specific ones such as
        ``eps_error``) are accepted and ignored: the accuracy is set at
        construction. Called by Opacus's ``make_private_with_epsilon`` with
        ``poisson_sampling=False`` (to calibrate σ), the run is accounted as
        shuffling, with a :class:`ShufflingWarning`: σ is then calibrated to the
        shuffling upper bound, never to Poisson's.
        """
        if not self._told and self.sampler is m.Sampler.POISSON:
            caller = inspect.currentframe().f_back
            poisson = _calibrating_for(caller)
            del caller
            if poisson is False:  # Opacus calibrating σ for shuffled batches
                self._use(m.Sampler.SHUFFLING)
        return float(self.accounting().epsilon(delta))

    def get_epsilon_bounds(self, delta: float) -> tuple[float, float]:
        """``(lower, upper)`` bounds on ε at ``delta`` (lower from finished epochs only)."""
        lower, upper = self.accounting().epsilon_bounds(delta)
        finished = self.pipeline(whole_epochs="down")
        if finished != self.pipeline():
            lower = min(
                float(account(finished, accuracy=self.accuracy).epsilon_bounds(delta)[0]), upper
            )
        return lower, upper

    def __len__(self) -> int:
        return sum(steps for _, _, steps in self.history)

    @classmethod
    def mechanism(cls) -> str:
        """The accounting mechanism's name, as Opacus expects: ``"gaussdp"``."""
        return MECHANISM_NAME

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """A callback for Opacus's ``DPOptimizer``: one ``step`` per optimizer step.

        Called by Opacus's ``make_private``; where the caller is that method,
        its ``poisson_sampling`` argument says which sampler the run uses
        (unless one was given at construction).
        """
        if not self._told:
            caller = inspect.currentframe().f_back
            poisson = _opacus_poisson_sampling(caller)
            del caller
            if poisson is not None:
                self._use(m.Sampler.POISSON if poisson else m.Sampler.SHUFFLING)

        def hook_fn(optim: Any) -> None:
            self.step(
                noise_multiplier=optim.noise_multiplier,
                sample_rate=sample_rate * getattr(optim, "accumulated_iterations", 1),
            )

        return hook_fn

    def state_dict(self, destination: dict | None = None) -> dict:
        """The accountant's state: ``{"history": [...], "mechanism": "gaussdp"}``."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        if self.sampler is not m.Sampler.POISSON:
            destination["sampler"] = self.sampler.value
        return destination

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a state saved by :meth:`state_dict` (checked, with a clear error)."""
        if not state_dict:
            raise InvalidParameterError("state_dict is empty or None; cannot load it")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise InvalidParameterError(f"state_dict has no {key!r} key; cannot load it")
        if state_dict["mechanism"] != self.mechanism():
            raise InvalidParameterError(
                f"state_dict of accountant {state_dict['mechanism']!r} cannot be loaded into "
                f"a {self.mechanism()!r} accountant"
            )
        history = []
        for index, entry in enumerate(state_dict["history"]):
            try:
                sigma, q, steps = entry
            except (TypeError, ValueError):
                raise InvalidParameterError(
                    f"state_dict['history'][{index}] must be (noise_multiplier, sample_rate, "
                    f"steps), got {entry!r}"
                ) from None
            phase = m.DPSGD(sigma, q, steps) if q > 0 else None  # validates the values
            history.append((float(sigma), float(q), int(phase.steps if phase else steps)))
        self.history = history
        if "sampler" in state_dict:
            self.sampler = _opacus_sampler(state_dict["sampler"])
            self._told = True
        self._cache = None

    # ---------------------------------------------------------------- gaussdp additions

    def pipeline(self, *, whole_epochs: str = "up") -> m.Mechanism:
        """The run so far as a gaussdp description (a composition of DP-SGD phases).

        Phases with sample rate 0 reveal nothing and are left out; an empty
        run is ``Gaussian(sigma=inf)`` (perfect privacy). Under an epoch
        sampler (shuffling, balls-in-bins) an unfinished epoch is counted as
        whole (``whole_epochs="up"``, for upper bounds) or left out
        (``"down"``, for lower bounds).
        """
        phases = []
        for sigma, q, steps in self.history:
            if q <= 0:
                continue
            if self.sampler is m.Sampler.POISSON:
                phases.append(m.DPSGD(sigma, q, steps))
                continue
            per_epoch = _steps_per_epoch(q)
            epochs = -(-steps // per_epoch) if whole_epochs == "up" else steps // per_epoch
            if epochs:
                phases.append(
                    m.DPSGD(
                        sigma,
                        steps=epochs * per_epoch,
                        sampler=self.sampler,
                        steps_per_epoch=per_epoch,
                    )
                )
        if not phases:
            return m.Gaussian(math.inf)
        return phases[0] if len(phases) == 1 else m.Composition(phases)

    def accounting(self) -> Accounting:
        """The :class:`gaussdp.Accounting` of the run so far (cached until the next step).

        Under an epoch sampler mid-epoch, its upper bounds count the epoch as
        whole and :meth:`get_epsilon_bounds` takes the lower bound from the
        finished epochs.
        """
        key = (tuple(self.history), self.sampler)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, account(self.pipeline(), accuracy=self.accuracy))
        return self._cache[1]

    def get_mu(self) -> float:
        """μ-GDP of the run: exact for Gaussian-only runs, else the report's tight μ."""
        accounting = self.accounting()
        if accounting.mu is not None:
            return float(accounting.mu)
        return float(self.report().mu)

    def report(self, **options: Any):
        """The μ-GDP report of the run (:meth:`gaussdp.Accounting.gdp`)."""
        accounting = self.accounting()
        report_of = getattr(accounting, "gdp", None)
        if report_of is None:
            raise InvalidParameterError(
                "the GDP report needs gaussdp.report (Accounting.gdp), which this "
                "installation does not have"
            )
        return report_of(**options)


def _opacus_sampler(value: Any) -> m.Sampler:
    sampler = m.Sampler.parse(value)
    if sampler not in _OPACUS_SAMPLERS:
        allowed = ", ".join(repr(choice.value) for choice in _OPACUS_SAMPLERS)
        raise InvalidParameterError(
            f"sampler must be one of {allowed} for an Opacus run, got {sampler.value!r}"
        )
    return sampler


def _steps_per_epoch(sample_rate: float) -> int:
    """t = 1/q: Opacus's ``sample_rate`` is 1/len(data_loader) for fixed-size batches."""
    steps = round(1.0 / sample_rate)
    if abs(steps * sample_rate - 1.0) > 1e-9:
        raise InvalidParameterError(
            f"sample_rate must be 1/(steps per epoch) for shuffled or balls-in-bins batches, "
            f"got {sample_rate!r}"
        )
    return steps


def _opacus_poisson_sampling(frame: Any, names: tuple[str, ...] = ("make_private",)) -> bool | None:
    """``poisson_sampling`` of Opacus's ``make_private`` if ``frame`` is that call, else None.

    ``names``: the Opacus methods whose frame may hold it (``make_private``,
    and ``make_private_with_epsilon``, which calibrates σ before it calls
    ``make_private``).
    """
    if frame is None or frame.f_code.co_name not in names:
        return None
    if not str(frame.f_globals.get("__name__", "")).startswith("opacus"):
        return None
    value = frame.f_locals.get("poisson_sampling")
    return value if isinstance(value, bool) else None


def _calibrating_for(frame: Any, depth: int = 6) -> bool | None:
    """``poisson_sampling`` of an Opacus ``make_private_with_epsilon`` up the stack, else None.

    Opacus calibrates σ there with a fresh accountant of this kind
    (``get_noise_multiplier`` sets its history and asks :meth:`GaussDPAccountant.get_epsilon`),
    so that accountant is told nothing about the sampler but what this reads.
    """
    for _ in range(depth):
        if frame is None:
            return None
        found = _opacus_poisson_sampling(frame, ("make_private_with_epsilon",))
        if found is not None:
            return found
        frame = frame.f_back
    return None


def register(name: str = MECHANISM_NAME) -> None:
    """Register :class:`GaussDPAccountant` with Opacus under ``name`` (needs Opacus).

    Afterwards ``opacus.PrivacyEngine(accountant=name)`` uses it. Registering
    the same name again replaces the earlier registration.
    """
    try:
        from opacus.accountants import register_accountant
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "gaussdp.interop.opacus.register needs Opacus (pip install opacus)"
        ) from None
    accountant = GaussDPAccountant
    if name != MECHANISM_NAME:
        accountant = type(
            "GaussDPAccountant", (GaussDPAccountant,), {"mechanism": classmethod(lambda cls: name)}
        )
    register_accountant(name, accountant, force=True)
