"""Google dp_accounting ``DpEvent`` trees → gaussdp mechanism descriptions.

TensorFlow Privacy, JAX Privacy and dp_accounting describe what a training
run did as a tree of ``DpEvent`` objects. :func:`from_dp_event` turns such a
tree into a gaussdp description, so the same run can be accounted with
gaussdp and reported as μ-GDP. dp_accounting itself is not imported here:
events are recognised by their class name and read through their
attributes, so any version with the same field names works.

========================================  ====================================================
DpEvent                                    gaussdp description
========================================  ====================================================
``NoOpDpEvent``                            nothing (an empty composition: perfect privacy)
``NonPrivateDpEvent``                      ``ApproxDP(0, 1)`` (no guarantee: ε = ∞ for δ < 1)
``GaussianDpEvent(σ)``                     ``Gaussian(σ)`` (σ = 0: non-private)
``LaplaceDpEvent(b)``                      ``Laplace(b)`` (b = 0: non-private)
``DiscreteLaplaceDpEvent(a, Δ)``           ``PureDP(a·Δ)`` (dominating, not tight)
``EpsilonDeltaDpEvent(ε, δ)``              ``ApproxDP(ε, δ)`` (the tight pair of the class:
                                           leaky randomized response; ε = ∞: non-private)
``RandomizedResponseDpEvent(p, k)``        k = 2: ``RandomizedResponse(log((2 − p)/p))`` exact;
                                           k > 2: ``PureDP(log((k(1 − p) + p)/p))`` (dominating)
``ZCDpEvent(ρ, ξ)``                        ξ = 0: ``ZCDP(ρ)``; else ``RenyiDP`` with ε(α) = ξ + ρα
``PoissonSampledDpEvent(q, e)``            ``PoissonSubsampled(e', q)``
``SampledWithoutReplacementDpEvent``       ``SubsampledWithoutReplacement(e', m, n)`` (REPLACE;
                                           inner Gaussian σ is per replace-one sensitivity)
``SelfComposedDpEvent(e, T)``              ``Repeated(e', T)`` (sampled Gaussian: ``DPSGD``)
``ComposedDpEvent([...])``                 ``Composition([...])``
``MixtureOfGaussiansDpEvent(σ, c, p)``      ``GaussianMixture(σ, c, p)`` (σ = 0: non-private)
``TruncatedSubsampledGaussianDpEvent``      ``TruncatedPoisson(Gaussian(σ), q, min(B, N), N)``
``(N, q, B, σ)``                            (B ≥ N: nothing is ever cut, B = N is the same;
                                           add/remove, N the larger data set's size, as
                                           dp_accounting counts it)
``SingleEpochTreeAggregationDpEvent``      ``MatrixMechanism(tree(max T_i), σ,
``(σ, [T_1, …])``                          SingleParticipation())``: the trees are
                                           restarted and each record is in one of them, so
                                           the run is one Gaussian with the largest tree's
                                           column norm √⌈log₂(max T_i + 1)⌉ (exact; dp_accounting
                                           accounts it by Rényi DP under REPLACE_SPECIAL,
                                           which is gaussdp's add/remove)
========================================  ====================================================

Every other event (``UnsupportedDpEvent``, ``SampledWithReplacementDpEvent``,
``RepeatAndSelectDpEvent``,
…) raises :class:`UnsupportedEventError` naming it and where it sits in the
tree. dp_accounting's neighbouring relation is a property of its
accountant, not of the event: pass the same relation to
:func:`gaussdp.account` (``Neighbouring.REPLACE`` for sampling without
replacement, as dp_accounting's ``REPLACE_ONE``).

:func:`to_dp_event` goes the other way for the descriptions that have an
event (the table read backwards, for Gaussian, Laplace, Poisson sampling,
repetition, composition, DP-SGD, mixtures and truncated Poisson); it imports
dp_accounting.
"""

from __future__ import annotations

import math
from typing import Any

from gaussdp import matrix
from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError

__all__ = ["UnsupportedEventError", "from_dp_event", "to_dp_event"]


class UnsupportedEventError(InvalidParameterError):
    """A DpEvent (or something that is not one) that gaussdp cannot describe."""


_NON_PRIVATE = m.ApproxDP(0.0, 1.0)
_SUPPORTED = (
    "NoOpDpEvent, NonPrivateDpEvent, GaussianDpEvent, LaplaceDpEvent, DiscreteLaplaceDpEvent, "
    "EpsilonDeltaDpEvent, RandomizedResponseDpEvent, ZCDpEvent, PoissonSampledDpEvent, "
    "SampledWithoutReplacementDpEvent, SelfComposedDpEvent, ComposedDpEvent, "
    "SingleEpochTreeAggregationDpEvent, MixtureOfGaussiansDpEvent, "
    "TruncatedSubsampledGaussianDpEvent"
)
# Orders used for a (ξ, ρ)-zCDP event with ξ > 0.
_ZCDP_ORDERS = tuple([1.25, 1.5, 1.75, *range(2, 65), 80, 96, 128, 192, 256, 512, 1024])


def _field(event: Any, name: str, where: str):
    try:
        return getattr(event, name)
    except AttributeError:
        raise UnsupportedEventError(
            f"{where}: {type(event).__name__} has no field {name!r}; is it a dp_accounting DpEvent?"
        ) from None


def _convert(event: Any, where: str, replace_sensitivity: bool = False) -> m.Mechanism | None:
    """The description of ``event`` (None for an event that reveals nothing).

    ``replace_sensitivity``: inside sampling without replacement, dp_accounting's
    noise multipliers are relative to the replace-one sensitivity, which gaussdp
    writes as an add/remove sensitivity of 1/2 (doubled under REPLACE).
    """
    kind = type(event).__name__
    sensitivity = 0.5 if replace_sensitivity else 1.0
    if kind == "NoOpDpEvent":
        return None
    if kind == "NonPrivateDpEvent":
        return _NON_PRIVATE
    if kind == "GaussianDpEvent":
        sigma = float(_field(event, "noise_multiplier", where))
        return _NON_PRIVATE if sigma == 0 else m.Gaussian(sigma, sensitivity)
    if kind == "LaplaceDpEvent":
        scale = float(_field(event, "noise_multiplier", where))
        return _NON_PRIVATE if scale == 0 else m.Laplace(scale, sensitivity)
    if kind == "DiscreteLaplaceDpEvent":
        parameter = float(_field(event, "noise_parameter", where))
        sensitivity = float(_field(event, "sensitivity", where))
        return m.PureDP(parameter * sensitivity)
    if kind == "EpsilonDeltaDpEvent":
        # (ε, δ)-DP under the accountant's relation; ApproxDP's pair (leaky randomized
        # response) is the tight one for the class under either relation.
        epsilon = float(_field(event, "epsilon", where))
        delta = float(_field(event, "delta", where))
        if epsilon == math.inf and 0.0 <= delta <= 1.0:
            return _NON_PRIVATE
        return m.ApproxDP(epsilon, delta)
    if kind == "RandomizedResponseDpEvent":
        p = float(_field(event, "noise_parameter", where))
        k = int(_field(event, "num_buckets", where))
        if not 0.0 <= p <= 1.0 or k < 1:
            raise InvalidParameterError(
                f"{where}: RandomizedResponseDpEvent needs noise_parameter in [0, 1] and "
                f"num_buckets >= 1, got {p!r} and {k!r}"
            )
        if k == 1 or p == 1.0:
            return None
        if p == 0.0:
            return _NON_PRIVATE
        # Truthful with probability 1 − p + p/k, each other bucket p/k.
        epsilon = math.log((k * (1.0 - p) + p) / p)
        return m.RandomizedResponse(epsilon) if k == 2 else m.PureDP(epsilon)
    if kind == "ZCDpEvent":
        rho = float(_field(event, "rho", where))
        xi = float(getattr(event, "xi", 0.0) or 0.0)
        if xi == 0.0:
            return m.ZCDP(rho)
        return m.RenyiDP(_ZCDP_ORDERS, [xi + rho * a for a in _ZCDP_ORDERS])
    if kind == "PoissonSampledDpEvent":
        q = float(_field(event, "sampling_probability", where))
        inner = _convert(_field(event, "event", where), f"{where}.event", replace_sensitivity)
        if inner is None or q == 0.0:
            return None
        return m.PoissonSubsampled(inner, q)
    if kind == "SampledWithoutReplacementDpEvent":
        n = int(_field(event, "source_dataset_size", where))
        size = int(_field(event, "sample_size", where))
        inner = _convert(_field(event, "event", where), f"{where}.event", True)
        if inner is None or size == 0:
            return None
        return m.SubsampledWithoutReplacement(inner, size, n)
    if kind == "SelfComposedDpEvent":
        count = int(_field(event, "count", where))
        inner = _convert(_field(event, "event", where), f"{where}.event", replace_sensitivity)
        if inner is None or count == 0:
            return None
        if (
            isinstance(inner, m.PoissonSubsampled)
            and isinstance(inner.mechanism, m.Gaussian)
            and inner.mechanism.sensitivity == 1.0
        ):
            return m.DPSGD(inner.mechanism.sigma, inner.sampling_probability, count)
        return inner if count == 1 else m.Repeated(inner, count)
    if kind == "SingleEpochTreeAggregationDpEvent":
        sigma = float(_field(event, "noise_multiplier", where))
        counts = _field(event, "step_counts", where)
        counts = [counts] if isinstance(counts, (int, float)) else list(counts)
        if not counts or any(int(c) != c or c < 0 for c in counts):
            raise InvalidParameterError(
                f"{where}: SingleEpochTreeAggregationDpEvent needs step_counts, non-negative "
                f"integers, at least one of them, got {counts!r}"
            )
        steps = int(max(counts))
        if steps == 0:
            return None
        if sigma == 0:
            return _NON_PRIVATE
        return m.MatrixMechanism(matrix.tree(steps), sigma, matrix.SingleParticipation())
    if kind == "MixtureOfGaussiansDpEvent":
        sigma = float(_field(event, "standard_deviation", where))
        shifts = [sensitivity * float(c) for c in _field(event, "sensitivities", where)]
        weights = [float(p) for p in _field(event, "sampling_probs", where)]
        mixture = m.GaussianMixture(sigma if sigma > 0 else math.inf, shifts, weights)
        if all(c == 0 or p == 0 for c, p in zip(shifts, weights, strict=True)):
            return None  # N(0, σ²) against itself
        return _NON_PRIVATE if sigma == 0 else mixture
    if kind == "TruncatedSubsampledGaussianDpEvent":
        n = int(_field(event, "dataset_size", where))
        q = float(_field(event, "sampling_probability", where))
        b = int(_field(event, "truncated_batch_size", where))
        sigma = float(_field(event, "noise_multiplier", where))
        if n == 0 or b == 0 or q == 0.0:
            return None
        if sigma == 0:
            return _NON_PRIVATE
        # B ≥ N: no batch is ever cut, exactly as with B = N.
        return m.TruncatedPoisson(m.Gaussian(sigma, sensitivity), q, min(b, n), n)
    if kind == "ComposedDpEvent":
        events = _field(event, "events", where)
        parts = [
            part
            for index, child in enumerate(events)
            if (part := _convert(child, f"{where}.events[{index}]", replace_sensitivity))
            is not None
        ]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else m.Composition(parts)
    if kind.endswith("DpEvent"):
        raise UnsupportedEventError(
            f"{where}: {kind} is not supported by gaussdp (supported: {_SUPPORTED})"
        )
    raise UnsupportedEventError(f"{where}: expected a dp_accounting DpEvent, got {kind} {event!r}")


def from_dp_event(event: Any) -> m.Mechanism:
    """The gaussdp description of a dp_accounting ``DpEvent`` tree.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        Any supported event tree (see the module docstring for the mapping).

    Returns
    -------
    Mechanism
        An event that reveals nothing (``NoOpDpEvent``, or compositions of
        them) becomes ``Gaussian(sigma=inf)``, which accounts as perfect
        privacy.

    Raises
    ------
    UnsupportedEventError
        Naming the unsupported event and its place in the tree
        (e.g. ``event.events[1]: SampledWithReplacementDpEvent is not
        supported``).

    Examples
    --------
    >>> import dp_accounting
    >>> step = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1))
    >>> print(from_dp_event(dp_accounting.SelfComposedDpEvent(step, 1000)))
    DP-SGD: σ=1.1, q=0.01, 1000 steps
    """
    mechanism = _convert(event, "event")
    return m.Gaussian(math.inf) if mechanism is None else mechanism


def to_dp_event(mechanism: m.Mechanism):
    """A dp_accounting ``DpEvent`` for a gaussdp description (the inverse of :func:`from_dp_event`).

    Supported: ``Gaussian(σ, Δ)`` → ``GaussianDpEvent(σ/Δ)``, ``Laplace(b, Δ)``
    → ``LaplaceDpEvent(b/Δ)``, ``PoissonSubsampled`` → ``PoissonSampledDpEvent``,
    ``Repeated`` → ``SelfComposedDpEvent``, ``Composition`` →
    ``ComposedDpEvent``, ``DPSGD`` (through its building blocks),
    ``GaussianMixture(σ, c, p)`` → ``MixtureOfGaussiansDpEvent(σ, c, p)`` and
    ``TruncatedPoisson(Gaussian(σ, Δ), q, B, N)`` →
    ``TruncatedSubsampledGaussianDpEvent(N, q, B, σ/Δ)``. The neighbouring
    relation is the accountant's in both libraries (add/remove for these).

    Raises
    ------
    UnsupportedEventError
        For any other description, naming it.

    Examples
    --------
    >>> from gaussdp import Gaussian, TruncatedPoisson
    >>> to_dp_event(TruncatedPoisson(Gaussian(1.0), 0.01, 1100, 100000))
    TruncatedSubsampledGaussianDpEvent(dataset_size=100000, sampling_probability=0.01, \
truncated_batch_size=1100, noise_multiplier=1.0)
    """
    from dp_accounting import dp_event

    expanded = mechanism.expand() if isinstance(mechanism, m.Mechanism) else None
    if expanded is not None:
        return to_dp_event(expanded)
    if isinstance(mechanism, m.Gaussian) and mechanism.sensitivity > 0:
        return dp_event.GaussianDpEvent(mechanism.sigma / mechanism.sensitivity)
    if isinstance(mechanism, m.Laplace) and mechanism.sensitivity > 0:
        return dp_event.LaplaceDpEvent(mechanism.scale / mechanism.sensitivity)
    if isinstance(mechanism, m.PoissonSubsampled):
        inner = to_dp_event(mechanism.mechanism)
        return dp_event.PoissonSampledDpEvent(mechanism.sampling_probability, inner)
    if isinstance(mechanism, m.Repeated):
        return dp_event.SelfComposedDpEvent(to_dp_event(mechanism.mechanism), mechanism.times)
    if isinstance(mechanism, m.Composition):
        return dp_event.ComposedDpEvent([to_dp_event(p) for p in mechanism.mechanisms])
    if isinstance(mechanism, m.GaussianMixture):
        return dp_event.MixtureOfGaussiansDpEvent(
            mechanism.noise_multiplier, list(mechanism.sensitivities), list(mechanism.probabilities)
        )
    if (
        isinstance(mechanism, m.TruncatedPoisson)
        and isinstance(mechanism.mechanism, m.Gaussian)
        and mechanism.mechanism.sensitivity > 0
    ):
        inner = mechanism.mechanism
        return dp_event.TruncatedSubsampledGaussianDpEvent(
            mechanism.dataset_size,
            mechanism.sampling_probability,
            mechanism.max_batch_size,
            inner.sigma / inner.sensitivity,
        )
    name = str(mechanism) if isinstance(mechanism, m.Mechanism) else repr(mechanism)
    raise UnsupportedEventError(
        f"mechanism {name} has no dp_accounting DpEvent here (supported: Gaussian, Laplace, "
        "PoissonSubsampled, Repeated, Composition, DPSGD, GaussianMixture, "
        "TruncatedPoisson of a Gaussian)"
    )
