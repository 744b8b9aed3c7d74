"""Refined privacy profiles and refined noise (GDPT paper, §3, Appendices B and C).

A privacy-utility equation σ = f(ε, δ) ("noise σ makes the mechanism
(ε, δ)-DP") gives, for a fixed σ, a *naive* privacy profile δ̂(ε): the
smallest δ with f(ε, δ) ≤ σ. Every point (ε₀, δ̂(ε₀)) of it is a guarantee,
and by the exact partial order (Theorem 3.1) each one implies a whole profile.
The *refined* profile is the best of them (Appendix B):

    δ_A(ε) = inf_{ε₀ ≥ ε} g(ε, ε₀),
    g(ε, ε₀) = δ̂(ε₀) + (1 − δ̂(ε₀))·(e^{ε₀} − e^ε)/(1 + e^{ε₀})
             = 1 − (1 + e^ε)·h(ε₀),     h(ε₀) = (1 − δ̂(ε₀))/(1 + e^{ε₀}).

The second form shows why the paper finds that "the sign of ∂g/∂ε₀ does not
depend on ε": minimising g over ε₀ is maximising h, whatever ε is. So the
refined profile is 1 − (1 + e^ε)·sup_{ε₀ ≥ ε} h(ε₀): it follows the naive
profile where h is decreasing, and the line implied by the single best
guarantee (ε_i, δ̂(ε_i)), ε_i = argmax h, to the left of ε_i.

:func:`refine` computes this for any non-increasing naive profile
(differentiable or not) by a suffix maximum of h over a grid of candidate ε₀,
refined by a bounded Brent search at each local maximum. Every candidate is an
actual guarantee of the naive profile, so the computed profile is always a
valid (pessimistic) privacy profile; a matching lower bound on the exact
refined profile comes from the monotonicity of δ̂ alone
(:meth:`RefinedProfile.delta_lower`).

Appendix C turns the same idea around: to reach a target (ε, δ), any
(ε₀, δ₀) that implies it will do, so the noise can be f(ε₀, δ₀) minimised over
those (:func:`refine_noise`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from gaussdp._numerics import log1m_exp
from gaussdp._validation import InvalidParameterError, check_integer, check_real, restore_shape
from gaussdp.gdpt._profiles import read_profile
from gaussdp.gdpt.order import _log_gap, implied_delta

__all__ = [
    "NoiseEquationProfile",
    "NoiseRefinement",
    "RefinedProfile",
    "default_grid",
    "from_noise_equation",
    "refine",
    "refine_noise",
]

# At most this many local maxima of h are polished by a Brent search.
_MAX_POLISHED = 16
# Smallest positive double, as a log: the floor of a naive profile given in δ.
_LOG_TINY = math.log(5e-324)
_BISECTION_STEPS = 2100  # enough to halve any log-δ bracket down to its last bits


def default_grid() -> np.ndarray:
    """The default candidate ε₀ of :func:`refine`: 1/256 steps to 16, then geometric to 4096."""
    return np.unique(
        np.concatenate([np.linspace(0.0, 16.0, 4097), np.geomspace(16.0, 4096.0, 513)])
    )


def _suffix_argmax(values: np.ndarray) -> np.ndarray:
    """index[j] = argmax_{k ≥ j} values[k] (the last maximiser on ties)."""
    n = values.size
    reverse = values[::-1]
    running = np.maximum.accumulate(reverse)
    record = np.where(reverse >= running, np.arange(n), 0)
    last_record = np.maximum.accumulate(record)
    return (n - 1 - last_record)[::-1]


class _RangeArgmax:
    """argmax of values[l..r] for many (l, r) at once (a sparse table)."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        levels = [np.arange(values.size)]
        width = 1
        while 2 * width <= values.size:
            previous = levels[-1]
            left, right = previous[:-width], previous[width:]
            levels.append(np.where(values[right] > values[left], right, left))
            width *= 2
        self.levels = levels

    def __call__(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        level = np.floor(np.log2(high - low + 1)).astype(int)
        out = np.empty(low.size, dtype=int)
        for k in np.unique(level):
            pick = level == k
            table = self.levels[k]
            left = table[low[pick]]
            right = table[high[pick] - (1 << k) + 1]
            out[pick] = np.where(self.values[right] > self.values[left], right, left)
        return out


def _log_implied(log_delta0: np.ndarray, epsilon0: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """log of δ₀ + (1 − δ₀)(e^{ε₀} − e^ε)₊/(1 + e^{ε₀}), from log δ₀."""
    with np.errstate(divide="ignore"):
        return np.logaddexp(log_delta0, log1m_exp(log_delta0) + _log_gap(epsilon0, epsilon))


class RefinedProfile:
    """The refined privacy profile of a naive one (GDPT paper, Appendix B).

    Use :func:`refine` or :func:`from_noise_equation` to build one. The
    object is immutable and answers ``delta`` (pessimistic: every value is
    implied by an actual guarantee of the naive profile), ``log_delta`` (for
    tails below 1e-308; None unless the naive profile provides it) and
    ``delta_lower`` (a certified lower bound on the exact refined profile).
    It is callable: ``profile(epsilon)`` is ``profile.delta(epsilon)``.

    Attributes
    ----------
    naive : object
        The naive profile as given.
    grid : ndarray
        The candidate ε₀ used (the requested grid plus polished maxima of h).
    anchor_epsilon, anchor_delta : float
        The single best guarantee (ε_i, δ̂(ε_i)), ε_i = argmax h: to the left
        of ε_i the refined profile is the profile implied by it. The paper's
        noisy-SGD example has (1.187, 0.244), its encoder (1.159, 0.468).
    """

    def __init__(self, naive, grid=None) -> None:
        reader = read_profile(naive, "naive_profile")
        if reader.is_pair:
            raise InvalidParameterError(
                "naive_profile must be a single profile, not a pair of bounds; refine each bound"
            )
        nodes = default_grid() if grid is None else np.asarray(grid, dtype=float).ravel()
        check_real("grid", nodes, low=0.0, high=math.inf, high_open=True)
        nodes = np.unique(nodes)
        if nodes.size < 2:
            raise InvalidParameterError(
                f"grid must hold at least 2 distinct values, got {nodes.size}"
            )
        self._reader = reader
        self.naive = naive
        log_naive = reader.log_upper(nodes)
        nodes, log_naive = self._polish(nodes, log_naive)
        self.grid = nodes
        self._log_naive = log_naive
        log_h = self._log_h(nodes, log_naive)
        self._best = _suffix_argmax(log_h)
        with np.errstate(divide="ignore"):
            log_kappa = log1m_exp(log_naive[1:]) - np.logaddexp(0.0, nodes[:-1])
        self._cell_argmax = _RangeArgmax(log_kappa)
        anchor = int(self._best[0])
        self.anchor_epsilon = float(nodes[anchor])
        self.anchor_delta = float(math.exp(log_naive[anchor]))
        self.grid.setflags(write=False)
        self._log_naive.setflags(write=False)

    @staticmethod
    def _log_h(nodes: np.ndarray, log_naive: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return log1m_exp(log_naive) - np.logaddexp(0.0, nodes)

    def _polish(self, nodes: np.ndarray, log_naive: np.ndarray):
        """Add Brent-polished local maxima of h (those that are suffix records)."""
        log_h = self._log_h(nodes, log_naive)
        n = nodes.size
        suffix_best = np.maximum.accumulate(log_h[::-1])[::-1]
        later = np.append(suffix_best[1:], -np.inf)
        left = np.insert(log_h[:-1], 0, -np.inf)
        candidates = np.flatnonzero((log_h > later) & (log_h >= left) & np.isfinite(log_h))
        candidates = candidates[candidates < n - 1]
        if candidates.size > _MAX_POLISHED:
            candidates = candidates[np.argsort(log_h[candidates])[-_MAX_POLISHED:]]
        extra_nodes, extra_values = [], []

        def negative_log_h(t: float) -> float:
            value = float(self._reader.log_upper(np.array([t]))[0])
            return -float(self._log_h(np.array([t]), np.array([value]))[0])

        for k in candidates:
            low = nodes[max(k - 1, 0)]
            high = nodes[k + 1]
            from scipy import optimize  # imported here: slow, and rarely needed

            result = optimize.minimize_scalar(
                negative_log_h, bounds=(low, high), method="bounded", options={"xatol": 1e-13}
            )
            t = float(result.x)
            if -negative_log_h(t) > log_h[k]:
                extra_nodes.append(t)
                extra_values.append(float(self._reader.log_upper(np.array([t]))[0]))
        if not extra_nodes:
            return nodes, log_naive
        all_nodes = np.concatenate([nodes, extra_nodes])
        all_values = np.concatenate([log_naive, extra_values])
        order = np.argsort(all_nodes, kind="stable")
        all_nodes, all_values = all_nodes[order], all_values[order]
        keep = np.append(np.diff(all_nodes) > 0, True)
        return all_nodes[keep], all_values[keep]

    # -- queries -----------------------------------------------------------

    def _log_upper(self, epsilon: np.ndarray) -> np.ndarray:
        nodes = self.grid
        log_at = self._reader.log_upper(epsilon)
        j = np.searchsorted(nodes, epsilon, side="left")
        inside = j < nodes.size
        out = log_at.copy()
        if np.any(inside):
            best = self._best[j[inside]]
            candidate = _log_implied(self._log_naive[best], nodes[best], epsilon[inside])
            out[inside] = np.minimum(out[inside], candidate)
        return out

    def _log_lower(self, epsilon: np.ndarray) -> np.ndarray:
        # Only ε₀ in the window [ε, w] can beat δ̂(ε), where w solves
        # (e^w − e^ε)/(1 + e^w) = δ̂(ε); beyond it g ≥ δ̂(ε). Cover the window by
        # [ε, t_j], the grid cells inside it, and [t_m, w], and bound g on each.
        nodes = self.grid
        log_at = self._reader.log_upper(epsilon)
        delta_at = np.exp(log_at)
        with np.errstate(divide="ignore"):
            window_end = epsilon + np.log1p(delta_at * np.exp(-epsilon)) - np.log1p(-delta_at)
        out = log_at.copy()  # the part beyond the window costs at least δ̂(ε)
        open_window = window_end > epsilon
        if not np.any(open_window):
            return out
        index = np.flatnonzero(open_window)
        e, w = epsilon[index], window_end[index]
        j = np.searchsorted(nodes, e, side="left")  # first node ≥ ε
        m = np.searchsorted(nodes, w, side="left") - 1  # last node < w
        has_node = (j <= m) & (j < nodes.size)
        bound = np.full(index.size, np.inf)
        # [ε, t_j]: g ≥ δ̂(t_j).
        if np.any(has_node):
            bound[has_node] = self._log_naive[j[has_node]]
        # Full cells [t_k, t_{k+1}], j ≤ k < m: g ≥ 1 − (1 + e^ε)·κ_k.
        cells = has_node & (m > j)
        if np.any(cells):
            k = self._cell_argmax(j[cells], m[cells] - 1)
            cell_bound = _log_implied(self._log_naive[k + 1], nodes[k], e[cells])
            bound[cells] = np.minimum(bound[cells], cell_bound)
        # The last piece [a, w] with a = t_m (or ε when no node is inside): g ≥ g(ε, ·) at
        # δ̂(w) and e^a.
        start = np.where(has_node, nodes[np.clip(m, 0, nodes.size - 1)], e)
        finite = np.isfinite(w)
        if np.any(finite):
            log_end = self._reader.log_upper(w[finite])
            last_piece = _log_implied(log_end, start[finite], e[finite])
            bound[finite] = np.minimum(bound[finite], last_piece)
        if np.any(~finite):  # δ̂(ε) = 1: beyond a only δ̂ ≥ 0 is known
            bound[~finite] = np.minimum(bound[~finite], _log_gap(start[~finite], e[~finite]))
        out[index] = np.minimum(out[index], bound)
        return out

    def _query(self, epsilon, which: str):
        e = check_real("epsilon", epsilon, low=0.0, high=math.inf, high_open=True)
        flat = e.ravel()
        values = self._log_upper(flat) if which == "upper" else self._log_lower(flat)
        return restore_shape(np.minimum(values, 0.0).reshape(e.shape), epsilon)

    @property
    def log_delta(self):
        """log of :meth:`delta` as a function of ε, or None.

        Offered only when the naive profile has ``log_delta`` itself: then it
        stays finite where δ underflows. Built from a δ-only naive profile it
        is None, so that nobody mistakes an underflowed δ for an exact zero.
        """
        if not self._reader.has_log:
            return None
        return lambda epsilon: self._query(epsilon, "upper")

    def delta(self, epsilon):
        """The refined profile δ_A(ε) (pessimistic: an implied guarantee).

        Computed as min(δ̂(ε), g(ε, ε₀*)) with ε₀* the best candidate ε₀ ≥ ε
        on the grid; it exceeds the exact infimum only where h peaks between
        grid points away from the polished maxima.
        """
        log_values = self._query(epsilon, "upper")
        return restore_shape(np.clip(np.exp(log_values), 0.0, 1.0), epsilon)

    def delta_lower(self, epsilon):
        """A certified lower bound on the exact refined profile (optimistic).

        Only ε₀ in the window [ε, w], (e^w − e^ε)/(1 + e^w) = δ̂(ε), can beat
        δ̂(ε). On a piece [a, b] of it, g(ε, ε₀) ≥ 1 − (1 + e^ε)(1 − δ̂(b))/(1 + e^a)
        because δ̂ does not increase; the minimum over the grid cells in the
        window and its two end pieces is below the infimum. The gap to
        :meth:`delta` is about one grid spacing times the slope of h where the
        window is wide (≲ 1% relative near the anchor with the default grid),
        and about the change of δ̂ across the window (≈ 2δ̂ wide) where the
        refined profile is the naive one.
        """
        log_values = self._query(epsilon, "lower")
        return restore_shape(np.clip(np.exp(log_values), 0.0, 1.0), epsilon)

    def __call__(self, epsilon):
        return self.delta(epsilon)

    def __repr__(self) -> str:
        return (
            f"RefinedProfile(naive={self.naive!r}, anchor_epsilon={self.anchor_epsilon:.6g}, "
            f"anchor_delta={self.anchor_delta:.6g})"
        )


def refine(naive_profile, *, grid=None) -> RefinedProfile:
    r"""Refine a naive privacy profile by the exact partial order (Appendix B).

    .. math::
        δ_A(ε) = \inf_{ε₀ ≥ ε}\; δ̂(ε₀) + (1 − δ̂(ε₀))\frac{e^{ε₀} − e^{ε}}{1 + e^{ε₀}}

    Works for any non-increasing naive profile, continuous or not: the
    infimum is a suffix maximum of h(ε₀) = (1 − δ̂(ε₀))/(1 + e^{ε₀}) over a
    grid of candidate ε₀ (see :func:`default_grid`), whose local maxima are
    polished by a bounded Brent search. Because every candidate is a real
    guarantee, the result never understates δ. An exact profile (Laplace, a
    GDP profile, any mechanism's true profile) is its own refinement.

    Parameters
    ----------
    naive_profile : callable or profile object
        ε ↦ δ̂(ε), non-increasing, values in [0, 1] (checked on the grid).
    grid : array_like, optional
        Candidate ε₀ values (≥ 0). Beyond the last one the refined profile is
        taken to be the naive one (for the upper value).

    Returns
    -------
    RefinedProfile

    Examples
    --------
    The noisy-SGD equation σ = 2√(log(1/δ))/ε at σ = 2 has δ̂(ε) = e^{−ε²},
    which claims nothing at ε = 0; refined, it is (0, 0.647)-DP:

    >>> profile = refine(lambda e: np.exp(-e**2))
    >>> round(profile.anchor_epsilon, 4), round(profile.anchor_delta, 4)
    (1.1878, 0.2439)
    >>> round(profile.delta(0.0), 6)
    0.646685
    """
    return RefinedProfile(naive_profile, grid)


# ---------------------------------------------------------------------------
# Privacy-utility equations σ = f(ε, δ)
# ---------------------------------------------------------------------------


def _call_noise(
    noise_fn: Callable, epsilon: np.ndarray, second: np.ndarray, singular: np.ndarray | None = None
) -> np.ndarray:
    """noise_fn on arrays (falling back to a loop), with NaN rejected.

    Privacy-utility equations are usually singular at ε = 0 (σ ∝ 1/ε gives 0/0
    or a division error there); at ε = 0 a NaN or an exception is read as
    "no noise suffices" (+inf), the pessimistic reading. Anywhere else it is
    an error. The same holds where ``singular`` is true (δ = 0, i.e. log δ = −inf:
    σ ∝ √log(1/δ) or −log δ written with ``math`` raises there).
    """
    singular = epsilon == 0.0 if singular is None else (singular | (epsilon == 0.0))
    try:
        with np.errstate(all="ignore"):
            values = np.asarray(noise_fn(epsilon, second), dtype=float)
        values = np.broadcast_to(values, epsilon.shape).astype(float)
    except Exception:  # the array call failed: evaluate point by point
        values = np.empty(epsilon.shape)
        for index in np.ndindex(epsilon.shape):
            try:
                with np.errstate(all="ignore"):
                    values[index] = float(noise_fn(float(epsilon[index]), float(second[index])))
            except Exception as error:
                if singular[index]:
                    values[index] = math.inf
                    continue
                raise InvalidParameterError(
                    f"noise_fn failed at epsilon={float(epsilon[index])!r}, second argument "
                    f"{float(second[index])!r}: {type(error).__name__}: {error}"
                ) from None
    values = np.where(np.isnan(values) & singular, np.inf, values)
    bad = np.isnan(values)
    if np.any(bad):
        index = int(np.flatnonzero(bad.ravel())[0])
        raise InvalidParameterError(
            f"noise_fn returned nan at epsilon={float(epsilon.ravel()[index])!r}, "
            f"second argument {float(second.ravel()[index])!r}"
        )
    return values


class NoiseEquationProfile:
    """The naive privacy profile of a privacy-utility equation σ = f(ε, δ).

    δ̂(ε) = min{δ ∈ [0, 1] : f(ε, δ) ≤ σ}: the smallest δ for which the noise
    σ suffices at ε, found by bisection in log δ (vectorised over ε). It
    assumes that f decreases in δ (a larger δ never needs more noise) and that
    more noise than required keeps the guarantee. Where even δ = 1 needs more
    than σ the profile is 1 (no guarantee); where δ = 0 suffices it is 0. The
    bisection returns the end of its bracket where f ≤ σ, so δ̂ is never
    understated.

    Parameters
    ----------
    noise_fn : callable
        ``noise_fn(epsilon, delta)`` (or ``noise_fn(epsilon, log_delta)`` when
        ``log_delta`` is true), vectorised or not.
    sigma : float
        The noise used, > 0.
    log_delta : bool
        If true, ``noise_fn`` takes log δ, which keeps δ below 1e-308
        representable (the tail of the GDPT needs it).
    """

    def __init__(self, noise_fn: Callable, sigma, *, log_delta: bool = False) -> None:
        if not callable(noise_fn):
            raise InvalidParameterError(
                "noise_fn must be a callable (epsilon, delta) -> sigma, "
                f"got {type(noise_fn).__name__}"
            )
        self.noise_fn = noise_fn
        self.sigma = float(
            check_real("sigma", sigma, low=0.0, high=math.inf, low_open=True, high_open=True)
        )
        self.takes_log_delta = bool(log_delta)

    def _noise(self, epsilon: np.ndarray, log_delta: np.ndarray) -> np.ndarray:
        second = log_delta if self.takes_log_delta else np.exp(log_delta)
        return _call_noise(self.noise_fn, epsilon, second, np.isneginf(log_delta))

    def log_delta(self, epsilon):
        """log δ̂(ε), by bisection on log δ."""
        e = check_real("epsilon", epsilon, low=0.0, high=math.inf, high_open=True)
        flat = e.ravel()
        out = np.empty(flat.shape)
        enough_at_one = self._noise(flat, np.zeros(flat.shape)) <= self.sigma
        out[~enough_at_one] = 0.0
        enough_at_zero = self._noise(flat, np.full(flat.shape, -np.inf)) <= self.sigma
        out[enough_at_zero & enough_at_one] = -np.inf
        todo = np.flatnonzero(enough_at_one & ~enough_at_zero)
        if todo.size:
            eps = flat[todo]
            high = np.zeros(todo.size)  # f ≤ σ here
            low = np.full(todo.size, _LOG_TINY)
            if self.takes_log_delta:  # push the low end down until f > σ
                for _ in range(40):
                    still = self._noise(eps, low) <= self.sigma
                    if not np.any(still):
                        break
                    high = np.where(still, low, high)
                    low = np.where(still, low * 4.0, low)
            low_ok = self._noise(eps, low) <= self.sigma  # then δ̂ ≤ the smallest δ tried
            active = ~low_ok
            for _ in range(_BISECTION_STEPS):
                active &= (high - low) > 1e-15 * np.maximum(1.0, np.abs(low))
                if not np.any(active):
                    break
                middle = 0.5 * (low + high)
                ok = self._noise(eps, middle) <= self.sigma
                high = np.where(active & ok, middle, high)
                low = np.where(active & ~ok, middle, low)
            result = np.where(low_ok, low, high)
            out[todo] = result
        return restore_shape(out.reshape(e.shape), epsilon)

    def delta(self, epsilon):
        """δ̂(ε) = min{δ : f(ε, δ) ≤ σ}."""
        return restore_shape(np.clip(np.exp(self.log_delta(epsilon)), 0.0, 1.0), epsilon)

    def __call__(self, epsilon):
        return self.delta(epsilon)

    def __repr__(self) -> str:
        return f"NoiseEquationProfile(noise_fn={self.noise_fn!r}, sigma={self.sigma!r})"


def from_noise_equation(noise_fn: Callable, sigma, *, log_delta: bool = False, grid=None):
    """The refined privacy profile of a privacy-utility equation σ = f(ε, δ).

    Builds the naive profile δ̂(ε) = min{δ : f(ε, δ) ≤ σ}
    (:class:`NoiseEquationProfile`) and refines it (:func:`refine`). GDPT
    paper, §2 and Appendix B: inverting the equation alone "will lead to a
    problematic asymptotic analysis, especially near the origin" — the naive
    profile of noisy SGD claims nothing at ε = 0, the refined one gives
    (0, 0.647)-DP.

    Parameters
    ----------
    noise_fn : callable
        ``noise_fn(epsilon, delta) -> sigma``, decreasing in δ and ε.
    sigma : float
        The noise used, > 0.
    log_delta : bool
        If true, ``noise_fn`` is called with log δ instead of δ, so that the
        profile's tail below 1e-308 is kept (needed by :func:`tail_limit`).
    grid : array_like, optional
        Candidate ε₀ for the refinement (see :func:`refine`).

    Returns
    -------
    RefinedProfile
        Its ``naive`` attribute is the :class:`NoiseEquationProfile`.

    Examples
    --------
    The invisibility-cloak encoder is (ε, δ)-DP if m > 10·log(n/(εδ))
    (Ghazi et al. 2019); with m = 20 messages and n = 4 users:

    >>> encoder = from_noise_equation(
    ...     lambda e, log_d: 10 * (np.log(4) - np.log(e) - log_d), 20, log_delta=True
    ... )
    >>> round(encoder.anchor_epsilon, 3), round(encoder.anchor_delta, 3)
    (1.157, 0.468)
    """
    naive = NoiseEquationProfile(noise_fn, sigma, log_delta=log_delta)
    return refine(naive, grid=grid)


# ---------------------------------------------------------------------------
# Appendix C: refining the noise
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseRefinement:
    """The result of :func:`refine_noise`.

    Attributes
    ----------
    sigma : float
        The refined noise f(ε₀, δ₀), never above ``sigma_naive``.
    epsilon0, delta0 : float
        The guarantee used; (ε₀, δ₀)-DP implies the target (ε, δ)-DP exactly
        (Theorem 3.1), so noise ``sigma`` achieves the target.
    sigma_naive : float
        f(ε, δ), the noise the equation asks for directly.
    epsilon, delta : float
        The target.
    """

    sigma: float
    epsilon0: float
    delta0: float
    sigma_naive: float
    epsilon: float
    delta: float

    @property
    def saving(self) -> float:
        """Relative noise saved, 1 − sigma/sigma_naive."""
        return 1.0 - self.sigma / self.sigma_naive if self.sigma_naive > 0 else 0.0


def _delta0_for(epsilon: float, delta: float, epsilon0: np.ndarray) -> np.ndarray:
    """The largest δ₀ with (ε₀, δ₀) ⇒ (ε, δ), rounded down; ≤ 0 where none exists.

    δ₀ = δ − (1 − δ)·(e^{ε₀} − e^ε)/(1 + e^ε) solves Theorem 3.1's bound with
    equality; it is shrunk by 1e-12 relative so that rounding cannot make the
    implication fail.
    """
    value = delta - (1.0 - delta) * special.expit(epsilon) * np.expm1(epsilon0 - epsilon)
    return value * (1.0 - 1e-12)


def refine_noise(noise_fn: Callable, epsilon, delta, *, log_delta: bool = False, points=256):
    """The smallest noise whose (ε₀, δ₀)-guarantee implies the target (ε, δ).

    GDPT paper, Appendix C and §5.2:

        σ⁻ = inf_{ε₀ ≥ ε} f(ε₀, δ₀(ε₀)),  δ₀(ε₀) = δ − (1 − δ)(e^{ε₀} − e^ε)/(1 + e^ε),

    the largest δ₀ for which (ε₀, δ₀)-DP implies (ε, δ)-DP. The search runs
    over ε₀ ∈ [ε, ε_end) where δ₀ > 0, on a grid of ``points`` values
    polished by a bounded Brent search. Any ε₀ it returns is a valid choice
    (the implication is re-checked), so the answer is safe even where the
    search misses the global minimum; it is never worse than f(ε, δ).

    Parameters
    ----------
    noise_fn : callable
        ``noise_fn(epsilon, delta) -> sigma`` (or of log δ, see ``log_delta``).
    epsilon : float
        Target ε ≥ 0.
    delta : float
        Target δ ∈ (0, 1).
    log_delta : bool
        If true, ``noise_fn`` is called with log δ.
    points : int
        Grid size of the search.

    Returns
    -------
    NoiseRefinement

    Examples
    --------
    Projected noisy SGD (Feldman et al. 2018), σ = −C·log(δ)/ε with C = 1, at
    the target (0.2, e⁻²): the equation asks for σ = 10, but the guarantee
    (0.334, 0.067) implies the target and needs only 8.086 (paper, §5.2).

    >>> r = refine_noise(lambda e, d: -np.log(d) / e, 0.2, np.exp(-2))
    >>> round(r.sigma, 3), round(r.epsilon0, 3), round(r.delta0, 3), round(r.sigma_naive, 3)
    (8.086, 0.334, 0.067, 10.0)
    """
    if not callable(noise_fn):
        raise InvalidParameterError(
            f"noise_fn must be a callable (epsilon, delta) -> sigma, got {type(noise_fn).__name__}"
        )
    e = float(check_real("epsilon", epsilon, low=0.0, high=math.inf, high_open=True))
    d = float(check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True))
    points = check_integer("points", points, low=2)

    def noise(eps0: np.ndarray, delta0: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            second = np.log(delta0) if log_delta else delta0
        return _call_noise(noise_fn, eps0, second, np.asarray(delta0) == 0.0)

    sigma_naive = float(noise(np.array([e]), np.array([d]))[0])
    # (e^{ε₀} − e^ε)/(1 + e^{ε₀}) reaches δ at ε_end: beyond it no δ₀ ≥ 0 works.
    epsilon_end = e + math.log1p(d * math.exp(-e)) - math.log1p(-d)
    candidates = np.linspace(e, epsilon_end, points + 1)[1:-1]
    delta0s = _delta0_for(e, d, candidates)
    usable = delta0s > 0.0
    candidates, delta0s = candidates[usable], delta0s[usable]
    best = (sigma_naive, e, d)
    if candidates.size:
        sigmas = noise(candidates, delta0s)
        k = int(np.argmin(sigmas))
        if sigmas[k] < best[0]:
            best = (float(sigmas[k]), float(candidates[k]), float(delta0s[k]))
        low = candidates[k - 1] if k > 0 else e
        high = candidates[k + 1] if k + 1 < candidates.size else candidates[k]

        def objective(eps0: float) -> float:
            d0 = _delta0_for(e, d, np.array([eps0]))
            if d0[0] <= 0.0:
                return math.inf
            return float(noise(np.array([eps0]), d0)[0])

        if high > low:
            from scipy import optimize  # imported here: slow, and rarely needed

            result = optimize.minimize_scalar(
                objective, bounds=(low, high), method="bounded", options={"xatol": 1e-12}
            )
            eps0 = float(result.x)
            value = objective(eps0)
            if value < best[0]:
                best = (value, eps0, float(_delta0_for(e, d, np.array([eps0]))[0]))
    # The end point itself, with δ₀ = 0 (pure DP at ε_end implies (ε, δ) exactly):
    # where f does not depend on δ (Laplace, f = Δ/ε) the optimum is there.
    end = epsilon_end
    for _ in range(64):
        if implied_delta(end, 0.0, e) <= d:
            break
        end = e + (end - e) * (1.0 - 1e-12)
    end_sigma = float(noise(np.array([end]), np.array([0.0]))[0])
    if end_sigma < best[0]:
        best = (end_sigma, end, 0.0)
    sigma, eps0, delta0 = best
    # Re-check the implication in floating point; shrink δ₀ if rounding broke it.
    for _ in range(64):
        if implied_delta(eps0, delta0, e) <= d:
            break
        delta0 *= 1.0 - 1e-12
    else:  # pragma: no cover - cannot happen: δ₀ → 0 implies δ ≥ gap(ε₀, ε)
        sigma, eps0, delta0 = sigma_naive, e, d
    if (eps0, delta0) != (best[1], best[2]):
        sigma = float(noise(np.array([eps0]), np.array([delta0]))[0])
    return NoiseRefinement(
        sigma=float(sigma),
        epsilon0=float(eps0),
        delta0=float(delta0),
        sigma_naive=sigma_naive,
        epsilon=e,
        delta=d,
    )
