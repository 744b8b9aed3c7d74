"""The ``TradeOff`` base class and the exact piecewise-linear curve.

See :mod:`gaussdp.curves` for the conventions (which distribution α and β
are measured under) and the list of constructors.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gaussdp._validation import InvalidParameterError, check_integer, check_real, restore_shape
from gaussdp.curves import _geometry

__all__ = [
    "DEFAULT_TOLERANCE",
    "SYMMETRY_TOLERANCE",
    "PiecewiseLinear",
    "TradeOff",
]

#: Largest vertical gap (in β) between a smooth curve and the piecewise-linear
#: curve that approximates it from below, for operators without a closed form.
DEFAULT_TOLERANCE = 1e-8
#: In the tails the gap is also kept below this fraction of min(1 − β, β).
TAIL_RELATIVE_TOLERANCE = 1e-5
#: Two curves closer than this everywhere count as equal for ``is_symmetric``.
SYMMETRY_TOLERANCE = 1e-9
# Breakpoint coordinates below this are set to 0 (pessimistic, keeps slopes finite).
_TINY = 1e-300

#: What :class:`TradeOff` offers as methods but the modules above this one build: the
#: privacy profile (``_profile``), closed forms (``_closed``), constructors and operators.
#: Each of those modules hands its function in as it is loaded (:func:`provides`), and
#: ``gaussdp.curves`` loads them all before any curve exists; so the base class reaches
#: the kinds of curve defined on it without importing upwards.
_PROVIDED: dict[str, Callable] = {}


def provides(name: str) -> Callable[[Callable], Callable]:
    """Register the function that :class:`TradeOff`'s method ``name`` calls (a decorator)."""

    def hand_in(function: Callable) -> Callable:
        _PROVIDED[name] = function
        return function

    return hand_in


_ASYMMETRIC_ADVICE = (
    "if the curve bounds every ordered pair of neighbouring data sets, call "
    ".symmetrize() first (Dong, Roth & Su, Proposition 2); if it bounds one "
    "direction only (e.g. the remove direction of a Poisson-subsampled "
    "mechanism), combine the two directions with curves.from_directions(f_remove, f_add)"
)


def _check_alpha(alpha) -> np.ndarray:
    return check_real("alpha", alpha, low=0.0, high=1.0)


class TradeOff(abc.ABC):
    r"""A trade-off function f: [0, 1] → [0, 1] (Dong, Roth & Su, Definition 2).

    f(α) is the smallest false-negative rate β of any membership-inference
    test whose false-positive rate is at most α; a mechanism is f-DP when
    every pair of neighbouring data sets is at least this hard to tell apart.
    Valid curves are convex, continuous, non-increasing and satisfy
    f(α) ≤ 1 − α (Proposition 1).

    Objects are immutable. Every curve answers

    * ``beta(alpha)`` (vectorised), ``tpr(fpr)`` = 1 − β,
    * ``delta(epsilon)`` / ``epsilon(delta)``: its privacy profile
      δ(ε) = 1 + f*(−e^ε) (Proposition 6),
    * ``advantage()``, ``bayes_error(prior)``, ``points(n)``, ``plot()``,

    and the algebra ``inverse()``, ``symmetrize()``, ``subsample(p)``,
    ``group(k)``, ``with_failure(delta)``, ``compose(*others)``.

    Closed forms (:class:`Gaussian`, :class:`Laplace`, :class:`EpsilonDelta`)
    keep their parameters and are exact; everything else is a
    :class:`PiecewiseLinear` curve, exact for its breakpoints. Operators
    without a closed form work on :meth:`piecewise_linear`, an approximation
    that lies *below* the true curve (pessimistic) by at most ``tolerance``.
    """

    __slots__ = ()

    # -- the curve ---------------------------------------------------------

    @abc.abstractmethod
    def _beta(self, alpha: np.ndarray) -> np.ndarray:
        """f(α) for a validated float array α ∈ [0, 1]."""

    def _tpr(self, alpha: np.ndarray) -> np.ndarray:
        return 1.0 - self._beta(alpha)

    @abc.abstractmethod
    def piecewise_linear(self, tolerance: float | None = None) -> PiecewiseLinear:
        """A piecewise-linear curve below this one (pessimistic), within ``tolerance``.

        Exact (``self``) for piecewise-linear curves and for f_{ε,δ}. For
        smooth curves it is the upper envelope of tangent lines, refined until
        the largest gap to the curve, vertical and horizontal, is at most
        ``tolerance`` (default ``DEFAULT_TOLERANCE`` = 1e-8) and, in the
        tails, at most 1e-5 of the TPR 1 − β (near α = 0) or of β (near
        α = 1). The result lies below the curve everywhere, so any guarantee
        computed from it is valid (pessimistic). Below α (or β) ≈ 1e-300 the
        curve is not resolved (it is still below the true one).
        """

    def beta(self, alpha):
        """The trade-off value f(α): the smallest false-negative rate at FPR α.

        Parameters
        ----------
        alpha : array_like
            Type I error (false-positive rate) α ∈ [0, 1].

        Returns
        -------
        float or ndarray
            f(α) ∈ [0, 1].
        """
        alpha_array = _check_alpha(alpha)
        out = np.asarray(self._beta(alpha_array), dtype=float)
        return restore_shape(np.clip(out, 0.0, 1.0), alpha)

    def __call__(self, alpha):
        """Same as :meth:`beta`."""
        return self.beta(alpha)

    def tpr(self, fpr):
        """True-positive rate 1 − f(α) of the best attack at false-positive rate ``fpr``.

        An upper bound on the power of any membership-inference attack at
        that FPR against an f-DP mechanism (Dong, Roth & Su §2.1; Gomez et
        al. 2025, §4). Computed without forming 1 − β where a closed form
        allows, so tiny TPRs keep their relative accuracy.
        """
        fpr_array = check_real("fpr", fpr, low=0.0, high=1.0)
        out = np.asarray(self._tpr(fpr_array), dtype=float)
        return restore_shape(np.clip(out, 0.0, 1.0), fpr)

    # -- the privacy profile -------------------------------------------------

    def _delta(self, epsilon: np.ndarray) -> np.ndarray:
        return self.piecewise_linear()._delta(epsilon)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        return self.piecewise_linear()._epsilon(delta)

    def delta(self, epsilon):
        r"""The privacy profile δ(ε) = 1 + f*(−e^ε) = sup_α (1 − f(α) − e^ε α).

        Proposition 6 of Dong, Roth & Su: a mechanism with a symmetric
        trade-off function f is (ε, δ(ε))-DP for every ε ≥ 0 and no smaller
        δ works. For an asymmetric f this is the profile of the one ordered
        pair whose curve is f (the hockey-stick divergence H_{e^ε}).

        Parameters
        ----------
        epsilon : array_like
            ε ∈ [0, ∞].
        """
        epsilon_array = check_real("epsilon", epsilon, low=0.0, high=math.inf)
        out = np.asarray(self._delta(epsilon_array), dtype=float)
        return restore_shape(np.clip(out, 0.0, 1.0), epsilon)

    def epsilon(self, delta):
        """The smallest ε ≥ 0 with δ(ε) ≤ ``delta`` (rounded up; ∞ if none)."""
        delta_array = check_real("delta", delta, low=0.0, high=1.0)
        out = np.asarray(self._epsilon(delta_array), dtype=float)
        return restore_shape(np.maximum(out, 0.0), delta)

    def profile(self):
        """This curve's privacy profile as a :class:`PrivacyProfile`."""
        return _PROVIDED["profile"](self)

    @classmethod
    def from_profile(cls, profile, **options) -> TradeOff:
        """The curve sup_{ε ≥ 0} f_{ε,δ(ε)} of a profile; see :func:`curves.from_profile`."""
        return _PROVIDED["from_profile"](profile, **options)

    # -- attack read-outs ----------------------------------------------------

    def advantage(self) -> float:
        """max_α (1 − α − f(α)): the largest TPR − FPR of any attack.

        Equals the total-variation distance of the pair, and δ(0). Computed
        from the pessimistic piecewise-linear curve where there is no closed
        form, so it is an upper bound.
        """
        return float(np.clip(self._delta(np.zeros(1))[0], 0.0, 1.0))

    def _support(self, slope: np.ndarray) -> np.ndarray:
        """inf_α f(α) + γ·α for γ > 0 (the negated conjugate −f*(−γ))."""
        return self.piecewise_linear()._support(slope)

    def bayes_error(self, prior=0.5):
        r"""The smallest error probability of any membership guess.

        With prior probability π that the record is in the data, the Bayes
        error is min_α [(1 − π)·α + π·f(α)] = π·inf_α (f(α) + γα), γ = (1−π)/π.
        A lower bound on the error of every attack (so lower is more
        pessimistic). At π = 1/2 it is (1 − advantage)/2.

        Parameters
        ----------
        prior : array_like
            π ∈ [0, 1], the prior probability of membership.
        """
        prior_array = check_real("prior", prior, low=0.0, high=1.0)
        out = np.zeros(prior_array.shape)
        inside = (prior_array > 0.0) & (prior_array < 1.0)
        if np.any(inside):
            pi = prior_array[inside]
            out[inside] = pi * self._support((1.0 - pi) / pi)
        out = np.minimum(out, np.minimum(prior_array, 1.0 - prior_array))
        return restore_shape(np.clip(out, 0.0, 1.0), prior)

    # -- the algebra ---------------------------------------------------------

    @property
    def is_symmetric(self) -> bool:
        """Whether f = f⁻¹ (to within 1e-9), as Proposition 2 assumes."""
        return self.piecewise_linear().is_symmetric

    def inverse(self) -> TradeOff:
        """The inverse f⁻¹(α) = inf{t : f(t) ≤ α} (eq. 3): T(Q, P) when f = T(P, Q).

        Exact for every curve in this module (closed forms are symmetric;
        piecewise-linear curves swap α and β).
        """
        return self.piecewise_linear().inverse()

    def symmetrize(self) -> TradeOff:
        """f^S = max(f, f⁻¹) (Dong, Roth & Su, Proposition 2).

        Valid only if f bounds *every ordered* pair of neighbouring data
        sets, which is what "the mechanism is f-DP" means for a symmetric
        neighbouring relation. If f describes one direction of an asymmetric
        relation, use :func:`curves.from_directions` instead.
        """
        if self.is_symmetric:
            return self
        return self.piecewise_linear().symmetrize()

    def _require_symmetric(self, operation: str) -> None:
        if not self.is_symmetric:
            raise InvalidParameterError(
                f"{operation} requires a symmetric trade-off curve (f = f⁻¹), "
                f"got an asymmetric {type(self).__name__}; {_ASYMMETRIC_ADVICE}"
            )

    def subsample(self, p) -> TradeOff:
        r"""The sampling operator C_p(f) = min{f_p, f_p⁻¹}** (Definition 6, eq. 13).

        A mechanism that is f-DP on a subsample of m out of n records drawn
        without replacement (p = m/n) is C_p(f)-DP (Theorem 9), where
        f_p = p·f + (1 − p)·Id and ** is the convex envelope. f must be
        symmetric. Computed exactly on the pessimistic piecewise-linear
        curve (C_p is monotone, so the result lies below the true C_p(f)).

        Parameters
        ----------
        p : float
            Sampling ratio in [0, 1].
        """
        p_value = float(check_real("p", p, low=0.0, high=1.0))
        self._require_symmetric("subsample")
        return _PROVIDED["subsample"](self, p_value)

    def group(self, k: int) -> TradeOff:
        r"""Group privacy for groups of k records: 1 − (1 − f)^{∘k} (Theorem 3).

        Exact for G_μ (G_{kμ}) and the Laplace curve, and for piecewise-linear
        curves (composition of piecewise-linear maps on breakpoints). Other
        curves go through :meth:`piecewise_linear`; the result lies below the
        exact group curve, by an error that can grow with k where f is steep.
        """
        k_value = check_integer("k", k, low=1)
        return _PROVIDED["group"](self, k_value)

    def with_failure(self, delta) -> TradeOff:
        r"""f ⊗ f_{0,δ}: the curve scaled towards the origin by 1 − δ (eq. 12).

        (1 − δ)·f(α/(1 − δ)) for α ≤ 1 − δ and 0 beyond: "f-DP except with
        probability δ". Exact.

        Parameters
        ----------
        delta : float
            δ ∈ [0, 1).
        """
        delta_value = float(check_real("delta", delta, low=0.0, high=1.0, high_open=True))
        return _PROVIDED["with_failure"](self, delta_value)

    def compose(self, *others: TradeOff) -> TradeOff:
        """The tensor product f ⊗ g ⊗ … (Theorem 4); see :func:`curves.compose`."""
        return _PROVIDED["compose"]([self, *others])

    # -- validity and output -------------------------------------------------

    def validate(self, tolerance: float = 1e-12) -> None:
        """Check Proposition 1 on the breakpoints of :meth:`piecewise_linear`.

        Raises
        ------
        InvalidParameterError
            Naming the first violation (not convex, increasing, above 1 − α).
        """
        self.piecewise_linear()._check_valid(tolerance)

    def points(self, n: int = 201, *, log: bool = False, alpha_min: float = 1e-8):
        """Points (alphas, betas) of the curve, for plotting without matplotlib.

        Parameters
        ----------
        n : int
            Number of points.
        log : bool
            Space α logarithmically from ``alpha_min`` to 1 (for log-log
            ROC plots) instead of uniformly on [0, 1].

        Returns
        -------
        alphas, betas : ndarray
        """
        n = check_integer("n", n, low=2)
        if log:
            low = float(check_real("alpha_min", alpha_min, low=0.0, high=1.0, low_open=True))
            alphas = np.logspace(math.log10(low), 0.0, n)
        else:
            alphas = np.linspace(0.0, 1.0, n)
        return alphas, np.asarray(self.beta(alphas))

    def plot(self, ax=None, *, log: bool = False, label: str | None = None, **kwargs):
        """Plot the curve with matplotlib (imported lazily); returns the axes.

        ``log=False`` draws β against α on [0, 1]²; ``log=True`` draws the
        attack's ROC, TPR = 1 − β against FPR = α, on log-log axes, where the
        low-FPR region that matters for membership inference is visible.
        See :func:`gaussdp.plot.plot_tradeoff` for the options.
        """
        from gaussdp.plot import plot_tradeoff

        labels = None if label is None else [label]
        return plot_tradeoff(self, ax=ax, log=log, labels=labels, **kwargs)


@dataclass(frozen=True, eq=False, repr=False)
class PiecewiseLinear(TradeOff):
    """The piecewise-linear trade-off function through breakpoints (α_i, β_i).

    Evaluated by linear interpolation, which is exact: it is the trade-off
    function of the discrete pair whose privacy-loss atoms are the segment
    slopes (Kulynych et al. 2024; Gomez et al. 2025, Theorem A.10), see
    :meth:`privacy_loss`. Build one with :func:`curves.from_points` (which
    takes the lower convex envelope of arbitrary points) or
    :func:`curves.from_privacy_loss`; the constructor requires breakpoints
    that already form a valid curve.

    Parameters
    ----------
    alphas : array_like
        Strictly increasing, from 0 to 1.
    betas : array_like
        Non-increasing, convex in α, β_i ≤ 1 − α_i, ending at 0.
    """

    alphas: np.ndarray
    betas: np.ndarray

    def __post_init__(self) -> None:
        alphas = check_real("alphas", self.alphas, low=0.0, high=1.0).ravel().copy()
        betas = check_real("betas", self.betas, low=0.0, high=1.0).ravel().copy()
        if alphas.size != betas.size or alphas.size < 2:
            raise InvalidParameterError(
                "alphas and betas must have the same length, at least 2, "
                f"got {alphas.size} and {betas.size}"
            )
        if alphas[0] != 0.0 or alphas[-1] != 1.0:
            raise InvalidParameterError(
                f"alphas must run from 0 to 1, got {float(alphas[0])!r} to {float(alphas[-1])!r}; "
                "use curves.from_points to complete a partial curve"
            )
        object.__setattr__(self, "alphas", alphas)
        object.__setattr__(self, "betas", betas)
        self._check_valid(1e-12)
        alphas.setflags(write=False)
        betas.setflags(write=False)

    @classmethod
    def _trusted(cls, alphas: np.ndarray, betas: np.ndarray) -> PiecewiseLinear:
        """Build from breakpoints already known to be valid (no checks)."""
        curve = object.__new__(cls)
        alphas = np.array(alphas, dtype=float)
        betas = np.clip(np.array(betas, dtype=float), 0.0, None)
        alphas.setflags(write=False)
        betas.setflags(write=False)
        object.__setattr__(curve, "alphas", alphas)
        object.__setattr__(curve, "betas", betas)
        return curve

    @classmethod
    def _from_vertices(cls, x, y) -> PiecewiseLinear:
        """The greatest valid trade-off function below the points (x, y) ∪ {(1, 0)}.

        Takes the lower convex hull of the points together with (1, 0) and
        the cap β ≤ 1 − α. Points are assumed to lie in [0, 1]²; if none has
        x = 0 the curve starts at (0, 1). Coordinates below 1e-300 are set to 0.
        """
        return cls._from_chains([(x, y)])

    @classmethod
    def _from_chains(cls, chains) -> PiecewiseLinear:
        """:meth:`_from_vertices` of the union of several chains of points.

        The same curve; a point of one chain lying above the polygonal line
        through another chain's points (beyond rounding) is no hull vertex and
        is dropped before the hull (:func:`_geometry.drop_points_above_chains`),
        which keeps the hull's point-by-point work to where chains cross. A
        point that another point dominates (α' ≤ α, β' ≤ β) is no hull vertex
        either, and is dropped first (:func:`_geometry.drop_dominated_points`).
        """
        chains = [cls._capped_points(x, y) for x, y in chains]
        if len(chains) > 1:  # each chain's dominated points first: shorter comparisons
            chains = [_geometry.drop_dominated_points(x, y) for x, y in chains]
        chains = _geometry.drop_points_above_chains(chains)
        x = np.concatenate([[0.0, 1.0], *(x for x, _ in chains)])
        y = np.concatenate([[1.0, 0.0], *(y for _, y in chains)])
        hx, hy = _geometry.lower_hull(*_geometry.drop_dominated_points(x, y))
        return cls._trusted(hx, hy)

    @staticmethod
    def _capped_points(x, y) -> tuple[np.ndarray, np.ndarray]:
        """Points clipped into [0, 1]² below β = 1 − α, coordinates below 1e-300 set to 0."""
        x = np.clip(np.asarray(x, dtype=float).ravel(), 0.0, 1.0)
        y = np.asarray(y, dtype=float).ravel()
        y = np.clip(np.minimum(y, 1.0 - x), 0.0, 1.0)
        # Values below 1e-300 become 0: moving a vertex left or down only lowers
        # the curve (pessimistic), and keeps slopes (Δβ/Δα) finite.
        x = np.where(x < _TINY, 0.0, x)
        y = np.where(y < _TINY, 0.0, y)
        return x, y

    def __repr__(self) -> str:
        return f"PiecewiseLinear(<{self.alphas.size} breakpoints>)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PiecewiseLinear):
            return NotImplemented
        return np.array_equal(self.alphas, other.alphas) and np.array_equal(self.betas, other.betas)

    def __hash__(self) -> int:
        return hash((self.alphas.tobytes(), self.betas.tobytes()))

    def _check_valid(self, tolerance: float) -> None:
        alphas, betas = self.alphas, self.betas
        steps = np.diff(alphas)
        if np.any(steps <= 0.0):
            i = int(np.argmax(steps <= 0.0)) + 1
            raise InvalidParameterError(
                f"alphas must be strictly increasing, got alpha[{i}] = {float(alphas[i])!r} "
                f"after alpha[{i - 1}] = {float(alphas[i - 1])!r}"
            )
        above = betas > 1.0 - alphas + tolerance
        if np.any(above):
            i = int(np.argmax(above))
            raise InvalidParameterError(
                f"a trade-off curve satisfies beta <= 1 - alpha (Proposition 1), got "
                f"point {i} (alpha={float(alphas[i])!r}, beta={float(betas[i])!r})"
            )
        rising = np.diff(betas) > tolerance
        if np.any(rising):
            i = int(np.argmax(rising)) + 1
            raise InvalidParameterError(
                f"a trade-off curve is non-increasing, got beta rising at point {i} "
                f"(alpha={float(alphas[i])!r}, beta={float(betas[i])!r})"
            )
        if betas[-1] > tolerance:
            raise InvalidParameterError(f"a trade-off curve has f(1) = 0, got {float(betas[-1])!r}")
        # Convexity: chords rise; compare vertical deviations, not slopes.
        if alphas.size > 2:
            chord = betas[:-2] + (betas[2:] - betas[:-2]) * (
                steps[:-1] / (alphas[2:] - alphas[:-2])
            )
            concave = betas[1:-1] > chord + tolerance
            if np.any(concave):
                i = int(np.argmax(concave)) + 1
                raise InvalidParameterError(
                    f"a trade-off curve is convex (Proposition 1), got point {i} "
                    f"(alpha={float(alphas[i])!r}, beta={float(betas[i])!r}) above the "
                    "chord of its neighbours; use curves.from_points for the convex envelope"
                )

    # -- evaluation ----------------------------------------------------------

    def _beta(self, alpha: np.ndarray) -> np.ndarray:
        return np.interp(alpha, self.alphas, self.betas)

    def piecewise_linear(self, tolerance: float | None = None) -> PiecewiseLinear:
        return self

    @property
    def slopes(self) -> np.ndarray:
        """Segment slopes (β_{i+1} − β_i)/(α_{i+1} − α_i), non-decreasing, ≤ 0."""
        with np.errstate(over="ignore"):
            return np.diff(self.betas) / np.diff(self.alphas)

    def _tangent_vertex(self, slope: np.ndarray) -> np.ndarray:
        """Index of the breakpoint minimising β_i + γ·α_i, for γ > 0."""
        return np.searchsorted(self.slopes, -slope, side="left")

    def _support(self, slope: np.ndarray) -> np.ndarray:
        slope = np.asarray(slope, dtype=float)
        i = self._tangent_vertex(slope)
        with np.errstate(invalid="ignore", over="ignore"):
            value = self.betas[i] + slope * self.alphas[i]
        return np.where(np.isinf(slope), self.betas[0], value)

    def _delta(self, epsilon: np.ndarray) -> np.ndarray:
        epsilon = np.asarray(epsilon, dtype=float)
        with np.errstate(over="ignore"):
            gamma = np.exp(epsilon)
        i = self._tangent_vertex(gamma)
        with np.errstate(invalid="ignore", over="ignore"):
            value = (1.0 - self.betas[i]) - gamma * self.alphas[i]
        value = np.where(i == 0, 1.0 - self.betas[0], value)
        return np.clip(value, 0.0, 1.0)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        """Exact inverse of δ(ε) = max_i (1 − β_i − e^ε α_i): e^ε = max_i (1 − β_i − δ)/α_i."""
        delta = np.asarray(delta, dtype=float)
        flat = delta.ravel()
        out = np.empty(flat.size)
        head = 1.0 - self.betas[1:]
        alphas = self.alphas[1:]
        start = 1.0 - self.betas[0]  # mass at infinite loss: δ(∞)
        chunk = max(1, 4_000_000 // max(alphas.size, 1))
        for lo in range(0, flat.size, chunk):
            d = flat[lo : lo + chunk]
            ratio = np.max((head[None, :] - d[:, None]) / alphas[None, :], axis=1)
            with np.errstate(divide="ignore"):
                eps = np.where(ratio > 1.0, np.log(np.maximum(ratio, 1.0)), 0.0)
            eps = np.nextafter(eps, np.inf) * (ratio > 1.0)
            out[lo : lo + chunk] = np.where(d < start, np.inf, eps)
        return out.reshape(delta.shape)

    def _tpr(self, alpha: np.ndarray) -> np.ndarray:
        return 1.0 - self._beta(alpha)

    def advantage(self) -> float:
        return float(np.clip(np.max(1.0 - self.alphas - self.betas), 0.0, 1.0))

    # -- exact algebra on breakpoints -----------------------------------------

    def inverse(self) -> PiecewiseLinear:
        """f⁻¹ exactly: swap α and β (eq. 3), with f⁻¹ = 0 on [f(0), 1]."""
        return PiecewiseLinear._from_vertices(self.betas[::-1], self.alphas[::-1])

    @property
    def is_symmetric(self) -> bool:
        return self._asymmetry() <= SYMMETRY_TOLERANCE

    def _asymmetry(self) -> float:
        inverse = self.inverse()
        xs = np.union1d(self.alphas, inverse.alphas)
        return float(np.max(np.abs(self._beta(xs) - inverse._beta(xs))))

    def symmetrize(self) -> PiecewiseLinear:
        inverse = self.inverse()
        x, y = _geometry.pointwise_max(self.alphas, self.betas, inverse.alphas, inverse.betas)
        # max(f, f⁻¹) is its own inverse; computed, its halves on either side of the
        # diagonal may differ by rounding, which a near-vertical segment turns into 1e-9 of
        # β (from_points([1e-8, 0.875], [0.499999995, 0]): 1.2e-9, and subsample refused
        # it). The half above the diagonal and its mirror image are kept.
        x, y = _geometry.mirrored_half(x, y)
        # Snapped as every curve is (coordinates below 1e-300 to 0) so that the result is
        # its own inverse: a vertex at α below 1e-300 would otherwise be one only at β.
        return PiecewiseLinear._from_vertices(x, y)

    def privacy_loss(self) -> tuple[np.ndarray, np.ndarray, float]:
        """The discrete pair behind this curve, as a privacy-loss distribution.

        The inverse of :func:`curves.from_privacy_loss`: each segment with
        slope −e^l is an atom at privacy loss l carrying P-mass equal to the
        drop in β and Q-mass equal to the rise in α; 1 − f(0) is the P-mass
        at loss +∞; a final flat segment is Q-mass at loss −∞.

        Returns
        -------
        losses : ndarray
            Sorted increasingly (finite).
        probabilities : ndarray
            P-mass of each loss.
        infinity_mass : float
            P-mass at loss +∞.
        """
        drops = -np.diff(self.betas)
        rises = np.diff(self.alphas)
        keep = drops > 0.0
        with np.errstate(divide="ignore"):
            losses = np.log(drops[keep]) - np.log(rises[keep])
        probabilities = drops[keep]
        order = np.argsort(losses, kind="stable")
        return losses[order], probabilities[order], float(1.0 - self.betas[0])
