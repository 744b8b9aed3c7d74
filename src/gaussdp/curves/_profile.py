"""Privacy profiles δ(ε): the dual of trade-off curves (Dong, Roth & Su §2.4)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gaussdp._numerics import expand_bracket, monotone_root
from gaussdp._validation import InvalidParameterError, check_real, restore_shape
from gaussdp.curves._tradeoff import _PROVIDED, TradeOff, provides

__all__ = ["PrivacyProfile"]

# Mass totals may exceed 1 by rounding; beyond this they are an error.
_MASS_SLACK = 1e-9
# A user profile is searched for ε(δ) up to this ε before answering ∞.
_EPSILON_SEARCH_LIMIT = 1e6


def _check_privacy_loss(losses, probabilities, infinity_mass):
    """Validate a discrete PLD; return (losses, P-masses, Q-masses, P-mass at +∞)."""
    loss = check_real("losses", losses, low=-math.inf, high=math.inf, low_open=True, high_open=True)
    mass = check_real("probabilities", probabilities, low=0.0, high=1.0)
    if loss.ndim != 1 or mass.shape != loss.shape:
        raise InvalidParameterError(
            "losses and probabilities must be 1-D arrays of the same length, "
            f"got shapes {loss.shape} and {mass.shape}"
        )
    infinity = float(check_real("infinity_mass", infinity_mass, low=0.0, high=1.0))
    total = math.fsum(mass.tolist()) + infinity
    if total > 1.0 + _MASS_SLACK:
        raise InvalidParameterError(
            f"probabilities plus infinity_mass must sum to at most 1, got {total!r}"
        )
    with np.errstate(divide="ignore"):
        q_mass = np.exp(np.log(mass) - loss)
    q_total = math.fsum(q_mass.tolist())
    if q_total > 1.0 + _MASS_SLACK:
        raise InvalidParameterError(
            "the Q-masses probabilities*exp(-losses) must sum to at most 1, "
            f"got {q_total!r}; losses must be log(dP/dQ) with P-masses as probabilities"
        )
    # P-mass missing from the total is treated as mass at +∞ (pessimistic).
    infinity += max(0.0, 1.0 - total)
    return loss, mass, q_mass, min(infinity, 1.0)


def _call_vectorised(function: Callable, epsilon: np.ndarray) -> np.ndarray:
    """Call ``function`` on the array; fall back to one call per element."""
    try:
        with np.errstate(all="ignore"):
            value = np.asarray(function(epsilon), dtype=float)
        if value.shape == epsilon.shape:
            return value
        if value.size == 1 and epsilon.size == 1:
            return value.reshape(epsilon.shape)
    except (TypeError, ValueError):
        pass
    flat = [float(function(float(e))) for e in epsilon.ravel()]
    return np.asarray(flat, dtype=float).reshape(epsilon.shape)


def _check_values(values: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    bad = np.isnan(values) | (values < 0.0) | (values > 1.0)
    if np.any(bad):
        i = int(np.argmax(bad.ravel()))
        raise InvalidParameterError(
            "a privacy profile must return delta in [0, 1], got "
            f"{float(values.ravel()[i])!r} at epsilon={float(epsilon.ravel()[i])!r}"
        )
    return values


@dataclass(frozen=True, eq=False)
class PrivacyProfile:
    r"""A privacy profile ε ↦ δ(ε): the mechanism is (ε, δ(ε))-DP for every ε ≥ 0.

    The dual of a trade-off curve (Dong, Roth & Su, Propositions 5 and 6;
    Balle et al. 2018). Immutable; ``delta(epsilon)`` and
    ``epsilon(delta)`` are vectorised. Build one

    * from any function ε ↦ δ (``PrivacyProfile(func)`` or
      :meth:`from_callable`; vectorised or not),
    * from a trade-off curve, :meth:`from_tradeoff` (δ(ε) = 1 + f*(−e^ε)),
    * from a discrete privacy-loss distribution, :meth:`from_privacy_loss`,

    and turn it back into a curve with :meth:`tradeoff`.

    Parameters
    ----------
    function : callable
        ε ↦ δ(ε) for ε ≥ 0. Its values are checked (in [0, 1], not NaN) at
        every evaluation.
    name : str
        Shown in the repr.

    Examples
    --------
    >>> from gaussdp.curves import PrivacyProfile
    >>> from gaussdp import curves
    >>> profile = PrivacyProfile.from_tradeoff(curves.gaussian(1.0))
    >>> round(profile.delta(1.0), 6), round(profile.epsilon(1e-5), 4)
    (0.126937, 4.3772)
    """

    function: Callable
    name: str = "privacy profile"
    _inverse: Callable | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise InvalidParameterError(
                f"function must be callable (epsilon -> delta), got {type(self.function).__name__}"
            )

    @classmethod
    def from_callable(cls, function: Callable, name: str = "privacy profile") -> PrivacyProfile:
        """A profile from any function ε ↦ δ (called on arrays, or element by element)."""
        return cls(function, name)

    @classmethod
    def from_tradeoff(cls, curve) -> PrivacyProfile:
        r"""δ(ε) = 1 + f*(−e^ε) = sup_α (1 − e^ε α − f(α)) (Proposition 6).

        For a symmetric f this is exactly the profile of an f-DP mechanism.
        For an asymmetric f it is the hockey-stick divergence of the one
        ordered pair whose curve is f (the profile used with f_p in the proof
        of Theorem 9, eq. 15); :func:`curves.from_profile` of it gives the
        symmetric min{f, f⁻¹}** (Proposition 8). Exact for every curve in
        :mod:`gaussdp.curves` (closed forms use their closed-form profiles,
        piecewise-linear curves their breakpoints).
        """
        if not isinstance(curve, TradeOff):
            raise InvalidParameterError(f"curve must be a TradeOff, got {type(curve).__name__}")
        return cls(curve._delta, f"profile of {curve!r}", curve._epsilon)

    @classmethod
    def from_privacy_loss(cls, losses, probabilities, infinity_mass=0.0) -> PrivacyProfile:
        r"""The exact profile of a discrete privacy-loss distribution.

        .. math::
            δ(ε) = Σ_i p_i (1 − e^{ε − l_i})₊ + p_∞ = P(L > ε) − e^ε Q(L > ε) + p_∞,

        summed term by term with ``-expm1`` (no cancellation), where p_i is
        the P-mass of loss l_i = log(dP/dQ) and p_∞ the P-mass at +∞ (see
        :func:`curves.from_privacy_loss` for the conventions; P-mass missing
        from the total counts as mass at +∞, which is pessimistic).
        ε(δ) is found by a bracketing search and rounded up.

        Examples
        --------
        >>> from gaussdp.curves import PrivacyProfile
        >>> profile = PrivacyProfile.from_privacy_loss([-1.0, 1.0], [0.25, 0.75])
        >>> round(profile.delta(0.5), 6)
        0.295102
        """
        loss, mass, _, infinity = _check_privacy_loss(losses, probabilities, infinity_mass)
        order = np.argsort(loss, kind="stable")
        loss, mass = loss[order], mass[order]

        def delta(epsilon: np.ndarray) -> np.ndarray:
            epsilon = np.asarray(epsilon, dtype=float)
            flat = epsilon.ravel()
            out = np.full(flat.size, infinity)
            starts = np.searchsorted(loss, flat, side="right")
            for j, (eps, start) in enumerate(zip(flat.tolist(), starts.tolist(), strict=True)):
                if start < loss.size and math.isfinite(eps):
                    tail = mass[start:] * -np.expm1(eps - loss[start:])
                    out[j] += math.fsum(tail.tolist()) if tail.size < 64 else float(np.sum(tail))
            return np.clip(out, 0.0, 1.0).reshape(epsilon.shape)

        top = float(loss[-1]) if loss.size else 0.0

        def epsilon_of(delta_values: np.ndarray) -> np.ndarray:
            delta_values = np.asarray(delta_values, dtype=float)
            out = np.empty(delta_values.size)
            for j, target in enumerate(delta_values.ravel().tolist()):
                out[j] = _solve_epsilon(delta, target, infinity, max(top, 0.0))
            return out.reshape(delta_values.shape)

        return cls(delta, f"profile of a {loss.size}-atom privacy-loss distribution", epsilon_of)

    # -- queries -------------------------------------------------------------

    def _evaluate(self, epsilon: np.ndarray) -> np.ndarray:
        return _check_values(_call_vectorised(self.function, epsilon), epsilon)

    def delta(self, epsilon):
        """δ(ε), vectorised; ε ∈ [0, ∞]."""
        epsilon_array = check_real("epsilon", epsilon, low=0.0, high=math.inf)
        return restore_shape(self._evaluate(epsilon_array), epsilon)

    def epsilon(self, delta):
        """The smallest ε ≥ 0 with δ(ε) ≤ ``delta`` (rounded up; ∞ if none found).

        Exact inverses are used where the profile came from a curve or a
        privacy-loss distribution; a user function is inverted by a
        bracketing search that returns the upper end of the final bracket
        (searching up to ε = 1e6).
        """
        delta_array = check_real("delta", delta, low=0.0, high=1.0)
        if self._inverse is not None:
            out = np.asarray(self._inverse(delta_array), dtype=float)
        else:
            values = [
                _solve_epsilon(self._evaluate, target, 0.0, 1.0)
                for target in delta_array.ravel().tolist()
            ]
            out = np.asarray(values, dtype=float).reshape(delta_array.shape)
        return restore_shape(np.maximum(out, 0.0), delta)

    def tradeoff(self, **options):
        """The trade-off curve sup_ε f_{ε,δ(ε)}; see :func:`curves.from_profile`."""
        return _PROVIDED["from_profile"](self, **options)


provides("profile")(PrivacyProfile.from_tradeoff)


def _solve_epsilon(evaluate: Callable, target: float, floor: float, start: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ target, on the high side of the final bracket."""
    if target < floor:
        return math.inf

    def excess(eps: float) -> float:
        return float(evaluate(np.array([eps]))[0]) - target

    if excess(0.0) <= 0.0:
        return 0.0
    start = max(start, 1e-3)
    if excess(start) > 0.0:
        try:
            _, start = expand_bracket(excess, start, direction="up", limit=_EPSILON_SEARCH_LIMIT)
        except ValueError:
            return math.inf
    return monotone_root(excess, 0.0, start, side="high")
