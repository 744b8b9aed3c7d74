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

import numpy as np
from scipy import fft

from gaussdp._validation import InvalidParameterError
from gaussdp.pld import composition as _composition
from gaussdp.pld.grid import GridPLD

__all__ = ["self_compose_checkpoints"]

# T's whose FFT lengths are within this factor of each other share one transform.
_BUCKET = 1.25


def _log_transform(pld: GridPLD, length: int) -> tuple[np.ndarray, np.ndarray]:
    """log|X| and arg X of the rows of one distribution at ``length`` (pessimistic: 1 row)."""
    rows = (
        pld.p_masses[None, :]
        if pld.is_pessimistic
        else np.vstack([pld.p_masses, pld.tilted_q_masses])
    )
    transformed = fft.rfft(rows, length, axis=-1, workers=_composition._WORKERS)
    with np.errstate(divide="ignore"):
        log_magnitude = np.log(np.abs(transformed))
    return log_magnitude, np.angle(transformed)


def _one_checkpoint(
    pld: GridPLD,
    times: int,
    plan: _composition.CompositionPlan,
    length: int,
    log_magnitude: np.ndarray,
    angle: np.ndarray,
    tail: float,
) -> GridPLD:
    """``compose_many([(pld, times)])`` from the shared transform (see the module docstring)."""
    full = times * (pld.p_masses.size - 1) + 1
    exact = full <= length
    low = 0 if exact else plan.low
    optimistic = not pld.is_pessimistic
    scaled = times * log_magnitude
    alive = scaled > _composition._LOG_UNDERFLOW
    transformed = np.zeros(scaled.shape, dtype=complex)
    transformed[alive] = np.exp(scaled[alive] + 1j * (times * angle[alive]))
    del scaled, alive
    composed_rows = fft.irfft(transformed, length, axis=-1, workers=_composition._WORKERS)
    del transformed
    keep = min(length, full - low)
    start = low % length
    if start + keep <= length:
        composed_rows = composed_rows[:, start : start + keep]
    else:
        composed_rows = np.concatenate(
            (composed_rows[:, start:], composed_rows[:, : start + keep - length]), axis=-1
        )
    np.maximum(composed_rows, 0.0, out=composed_rows)
    infinity = 1.0 - (1.0 - pld.infinity_mass) ** times
    wrapped = 0.0 if exact else (plan.below if optimistic else plan.above)
    allowance = _composition._rounding_allowance(length, times)
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
    )
    return _composition.trim(composed, tail)


def self_compose_checkpoints(
    pld: GridPLD, counts: Iterable[int], tail: float = _composition.DEFAULT_TAIL
) -> Iterator[tuple[int, GridPLD]]:
    """The ``T``-fold self-composition of ``pld`` for every ``T`` in ``counts``, one at a time.

    Equal (up to floating-point rounding of a differently sized transform) to
    ``self_compose(pld, T)`` for each ``T``, and certified the same way, but the
    forward transform is shared: taken once per band of T whose FFT lengths
    are within 25% of each other (below
    :data:`~gaussdp.pld.composition.TILT_FROM_COMPOSITIONS`), at the longest
    length of the band. Results
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
    if not wanted:
        return
    if wanted[0] < 1:
        raise InvalidParameterError(f"counts must be integers >= 1, got {wanted[0]}")
    shared = [t for t in wanted if 1 < t < _composition.TILT_FROM_COMPOSITIONS]
    plans = {t: _composition.plan_self_composition(pld, t, tail) for t in shared}
    lengths = _bucket_lengths(pld, plans)
    transforms: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for t in wanted:
        if t not in plans:  # T = 1, or a tilted composition: compose_many itself
            yield t, _composition.self_compose(pld, t, tail)
            continue
        length = lengths[t]
        if length not in transforms:
            transforms.clear()  # lengths only grow with T: one transform is held at a time
            transforms[length] = _log_transform(pld, length)
        log_magnitude, angle = transforms[length]
        yield t, _one_checkpoint(pld, t, plans[t], length, log_magnitude, angle, tail)


def _bucket_lengths(pld: GridPLD, plans: dict[int, _composition.CompositionPlan]) -> dict[int, int]:
    """The FFT length used for each T: shared by runs of T needing up to ``_BUCKET``× more.

    One length for all would make the smallest T pay for the largest; one
    length each would take a forward transform per T. Lengths rise with T,
    so T's (in increasing order) share the length of the first of their bucket
    times ``_BUCKET``, the longest that any of them needs, at least.
    """
    needed = {}
    for t, plan in plans.items():
        full = t * (pld.p_masses.size - 1) + 1
        needed[t] = plan.length if full > plan.length else full
    result: dict[int, int] = {}
    bucket: list[int] = []
    ceiling = 0
    for t in sorted(needed):
        if bucket and needed[t] > ceiling:
            length = fft.next_fast_len(max(needed[u] for u in bucket), real=True)
            result.update(dict.fromkeys(bucket, length))
            bucket = []
        if not bucket:
            ceiling = int(needed[t] * _BUCKET)
        bucket.append(t)
    if bucket:
        length = fft.next_fast_len(max(needed[u] for u in bucket), real=True)
        result.update(dict.fromkeys(bucket, length))
    return result
