"""Many self-compositions of one distribution from one transform: privacy after every epoch.

``T`` steps of a mechanism compose to the distribution whose transform is X^T,
X the transform of one step (:func:`gaussdp.pld.composition.compose_many`).
Asking for ε after every epoch of a run — T = 20, 40, …, 2000 — therefore
needs one step's discretisation and one forward transform, taken at the FFT
length the largest T needs; each checkpoint is then exp(T·log X) and one
inverse transform.

Each result is certified exactly as :func:`~gaussdp.pld.composition.compose_many`
certifies its own: the window of sums kept is the Chernoff window that
:func:`~gaussdp.pld.composition.plan_composition` chooses for that T (the
kept window starts where that plan's does; it is only longer, so less mass
wraps than the plan's bound ``above``/``below`` allows, and that bound is
carried as slack), plus the rounding allowance for T powers at this length,
the mass at +∞ and the certified trim. From
:data:`~gaussdp.pld.composition.TILT_FROM_COMPOSITIONS` steps on,
``compose_many`` also composes an exponentially tilted row whose tilt depends
on T; those checkpoints are handed to ``compose_many`` itself (the
discretisation is still shared, the transform is not).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from gaussdp._numerics import next_fast_length, union_of_independent
from gaussdp._validation import InvalidParameterError
from gaussdp.pld import composition as _composition
from gaussdp.pld.grid import GridPLD
from gaussdp.pld.memory import REUSE_FROM_POINTS, reuse_freed_memory

__all__ = ["self_compose_checkpoints"]

# T's whose FFT lengths are within this factor of each other share one transform.
_BUCKET = 1.25


@dataclass(frozen=True, eq=False)
class _Transform:
    """log|X| and arg X of one distribution's rows at one FFT length, for raising to powers.

    ``reach[r, k]`` is the largest log|X| at frequency k or above in row r:
    X^T underflows to zero past the last k with ``reach > −745/T``, so only
    the frequencies before it are exponentiated.
    """

    length: int
    log_magnitude: np.ndarray
    angle: np.ndarray
    reach: np.ndarray

    @classmethod
    def of(cls, pld: GridPLD, length: int) -> _Transform:
        rows = (
            pld.p_masses[None, :]
            if pld.is_pessimistic
            else np.vstack([pld.p_masses, pld.tilted_q_masses])
        )
        if length >= REUSE_FROM_POINTS:  # the arrays reuse freed pages (glibc)
            reuse_freed_memory()
        transformed = np.fft.rfft(rows, length, axis=-1)
        with np.errstate(divide="ignore"):
            log_magnitude = np.log(np.abs(transformed))
        reach = np.maximum.accumulate(log_magnitude[:, ::-1], axis=1)[:, ::-1]
        return cls(length, log_magnitude, np.angle(transformed), reach)

    def power(self, times: int) -> np.ndarray:
        """The inverse transform of X^T, every row (as ``compose_many`` computes it)."""
        rows, size = self.log_magnitude.shape
        transformed = np.zeros((rows, size), dtype=complex)
        threshold = _composition._LOG_UNDERFLOW / times
        for row in range(rows):
            # reach is non-increasing: the frequencies that may be alive come first.
            stop = int(np.searchsorted(-self.reach[row], -threshold, side="left"))
            scaled = times * self.log_magnitude[row, :stop]
            alive = scaled > _composition._LOG_UNDERFLOW
            transformed[row, :stop][alive] = np.exp(
                scaled[alive] + 1j * (times * self.angle[row, :stop][alive])
            )
        return np.fft.irfft(transformed, self.length, axis=-1)


def _one_checkpoint(
    pld: GridPLD,
    times: int,
    plan: _composition.CompositionPlan,
    transform: _Transform,
    tail: float,
) -> GridPLD:
    """``compose_many([(pld, times)])`` from the shared transform (see the module docstring)."""
    length = transform.length
    full = times * (pld.p_masses.size - 1) + 1
    exact = full <= length
    low = 0 if exact else plan.low
    optimistic = not pld.is_pessimistic
    composed_rows = transform.power(times)
    # the rounding noise's size, seen where it went below 0 (as compose_many measures it)
    noise = np.maximum(-np.min(composed_rows, axis=-1), 0.0)
    keep = min(length, full - low)
    composed_rows = _composition.window(composed_rows, low, keep)
    infinity = union_of_independent(((pld.infinity_mass, times),), upward=not optimistic)
    wrapped = 0.0 if exact else (plan.below if optimistic else plan.above)
    allowance = _composition.rounding_allowance(length, times)
    inherited = times * (pld.slack + pld.slack_below + pld.slack_at_cut)
    composed = GridPLD(
        pld.spacing,
        times * pld.offset + low,
        composed_rows[0],
        composed_rows[1] if optimistic else None,
        min(infinity, 1.0),
        pld.kind,
        inherited + wrapped + allowance,
        times * pld.compositions,
        noise_p=float(noise[0]) if optimistic else 0.0,
        noise_q=float(noise[1]) if optimistic else 0.0,
    )
    return _composition.trim(composed, tail)


def self_compose_checkpoints(
    pld: GridPLD,
    counts: Iterable[int],
    tail: float = _composition.DEFAULT_TAIL,
    *,
    shared_lengths: bool = True,
) -> Iterator[tuple[int, GridPLD]]:
    """The ``T``-fold self-composition of ``pld`` for every ``T`` in ``counts``, one at a time.

    Equal (up to floating-point rounding of a differently sized transform) to
    ``self_compose(pld, T)`` for each ``T``, and certified the same way, but the
    forward transform is shared: each T below
    :data:`~gaussdp.pld.composition.TILT_FROM_COMPOSITIONS` is computed at the
    first rung of a fixed ladder of FFT lengths (ratio 1.25) at or above what
    its plan needs, and the T's on one rung share one transform. The result
    for a T does not depend on the other T's asked for. Results
    are yielded in increasing ``T`` (duplicates once), so that only one
    composed distribution is held at a time.

    Parameters
    ----------
    pld : GridPLD
        One step's distribution (either form).
    counts : iterable of int
        Numbers of compositions T ≥ 1.
    tail : float
        Trim level, as in ``compose_many``.
    shared_lengths : bool
        Compute on the ladder of lengths (default). False: at the length
        ``compose_many`` uses for each T, so that the result is bit for bit
        ``self_compose(pld, T)``; only the discretisation and the plan are
        then shared, and every T takes its own forward transform.

    Yields
    ------
    (int, GridPLD)
        T and the composed distribution.

    Examples
    --------
    >>> from gaussdp import Gaussian, Neighbouring, PoissonSubsampled
    >>> from gaussdp.pld import discretise, profile_of, self_compose
    >>> from gaussdp.pld.dominating_pairs import dominating_losses
    >>> remove, _ = dominating_losses(PoissonSubsampled(Gaussian(1.0), 0.1),
    ...                               Neighbouring.ADD_REMOVE)
    >>> step = discretise(remove, 1e-3, "pessimistic", 1e-30)
    >>> reused = dict(self_compose_checkpoints(step, [50, 100]))
    >>> direct = profile_of(self_compose(step, 100)).epsilon(1e-5)
    >>> abs(profile_of(reused[100]).epsilon(1e-5) / direct - 1) < 1e-9
    True
    """
    wanted = sorted({int(t) for t in counts})
    if wanted and wanted[0] < 1:
        raise InvalidParameterError(f"counts must be integers >= 1, got {wanted[0]}")
    compositions = SelfCompositions(pld, tail, shared_lengths=shared_lengths)
    for t in wanted:
        yield t, compositions(t)


class SelfCompositions:
    """``self_compose(pld, T)`` for any T on demand, sharing the forward transforms.

    Calling the instance with T returns the T-fold composition (see
    :func:`self_compose_checkpoints`); the last forward transform is kept, so
    T's asked in increasing order share it as long as they are on one rung
    of the ladder of lengths. ``tail`` None: each T's window and trim as
    :func:`gaussdp.account` composes (:func:`~gaussdp.pld.composition.plain_plan`).
    """

    def __init__(
        self,
        pld: GridPLD,
        tail: float | None = _composition.DEFAULT_TAIL,
        *,
        shared_lengths: bool = True,
    ) -> None:
        self.pld = pld
        self.tail = tail
        self.shared_lengths = shared_lengths
        self._transform: _Transform | None = None

    def __call__(self, times: int) -> GridPLD:
        pld, tail = self.pld, self.tail
        if not 1 < times < _composition.TILT_FROM_COMPOSITIONS:
            # T = 1, or a tilted composition: compose_many itself.
            return _composition.self_compose(pld, times, tail or _composition.DEFAULT_TAIL)
        if tail is None:  # as the accountant composes: cut where rounding dominates
            plan, tail = _composition.plain_plan([(pld, times)])
        else:
            plan = _composition.plan_self_composition(pld, times, tail)
        length = _ladder_length(pld, times, plan) if self.shared_lengths else plan.length
        if self._transform is None or self._transform.length != length:
            self._transform = None  # one transform held at a time
            self._transform = _Transform.of(pld, length)
        return _one_checkpoint(pld, times, plan, self._transform, tail)


def _ladder_length(pld: GridPLD, times: int, plan: _composition.CompositionPlan) -> int:
    """The FFT length used for T: the first rung of a fixed ladder at or above its need.

    The rungs are :func:`~gaussdp._numerics.next_fast_length` of 1024·1.25^k: T's whose needs fall
    between two rungs share one forward transform, no T is computed more than
    25% longer than it needs, and each T's length (so its rounding) depends
    on T alone — not on which other T's are asked for with it.
    """
    full = times * (pld.p_masses.size - 1) + 1
    needed = plan.length if full > plan.length else full
    rung = 1024
    while rung < needed:
        rung = math.ceil(rung * _BUCKET)
    return next_fast_length(rung)
