"""Certified measurement of μ on the head of a profile, and clip-and-rectify (§4.1–4.2).

**Head measurement** (Theorems 4.5, 4.6 and the optimised Algorithm of
Appendix D). On a grid 0 = x_0 < … < x_n = ε_h with spacing D, monotonicity
of δ and of μ_GDP gives, for ε in the cell [x_i, x_{i+1}],

    μ_GDP(x_i, δ(x_{i+1})) ≤ G(ε) ≤ μ_GDP(x_{i+1}, δ(x_i)),

so μ⁺ = max_i μ_GDP(x_{i+1}, δ(x_i)) bounds sup_{ε ≤ ε_h} G from above, and
every value G(x_i) = μ_GDP(x_i, δ(x_i)) bounds it from below. Since
∂μ_GDP/∂ε ≤ √(2π)/2 (Theorem 4.5), μ⁺ − max_i G(x_i) ≤ √(2π)·D/2. (The
paper's Theorem 4.6 pairs the upper staircase with the lower staircase
μ_GDP(x_i, δ(x_{i+1})) and gets √(2π)·D; using the grid values themselves as
the lower bound halves the gap, so the grid needed for a given tolerance is
half as fine.)

The optimised algorithm visits the cells in a random order and keeps running
maxima; a root search for μ_GDP is run only when the running bound must move,
i.e. when δ_{μ⁺}(x_{i+1}) < δ(x_i) (the paper's test). After shuffling, the
k-th cell needs a search with probability 1/k, so about log n searches are
run in expectation instead of n. The tests are evaluated a block at a time
(numpy) and a search restarts the block after the cell that triggered it, so
the result and the sequence of searches are exactly those of the sequential
algorithm.

Safety. Each upper search targets δ·(1 + 1e-10) and each lower one
δ·(1 − 1e-10) (plus a relative term in the far tail), which covers the
≤ 1e-11 relative error of the computed GDP profile: ``mu_upper`` is a true
upper bound and ``mu_lower`` a true lower bound on the sup of the GDPT of the
profile as given. A profile given as bounds (lower, upper) is measured
honestly: the upper profile feeds μ⁺, the lower one the lower bound, and the
interval then also carries the width of the profile's own bracket.

**Clip and rectify** (Theorem 4.7): clipping a numerical output to
[y⁻, y⁺] and adding Laplace noise of scale (y⁺ − y⁻)/ε_h makes it ε_h-DP, which
closes the tail beyond ε_h; post-processing keeps the head, so an
(ε_h, μ)-head GDP mechanism becomes μ-GDP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gaussdp import gdp
from gaussdp._validation import InvalidParameterError, check_integer, check_real, restore_shape
from gaussdp.gdpt._profiles import read_profile
from gaussdp.gdpt.tail import NOT_GDP, PURE_DP, UNDETERMINED, TailEstimate, tail_estimate
from gaussdp.gdpt.transform import log_margin, mu_lower_bound, mu_upper_bound

__all__ = ["Certificate", "certify", "clip_and_rectify"]

_HALF_SQRT_2PI = 0.5 * math.sqrt(2.0 * math.pi)
# The grid takes this share of the tolerance; the rest is slack for the margins.
_GRID_SHARE = 0.9
_BLOCK = 4096
_LOWER_SLACK = 1e-12


@dataclass(frozen=True)
class Certificate:
    """A certified bracket on sup_{ε ≤ ε_max} G(ε), from :func:`certify`.

    It certifies (ε_max, mu_upper)-**head** GDP only: δ(ε) ≤ δ_μ(ε) for every
    ε ≤ ``epsilon_max`` with μ = ``mu_upper``. Beyond ``epsilon_max`` nothing
    about the GDPT is certified; what *is* certified there is that
    δ(ε) ≤ δ(ε_max) ≤ ``tail_delta``, so the mechanism as a whole is
    ``mu_upper``-GDP except with probability ``tail_delta`` (the trade-off
    function G_μ ⊗ f_{0, tail_delta}, Dong, Roth & Su eq. 12). The tail
    verdict (Theorem 4.4, estimated) says whether the GDPT could exceed
    ``mu_upper`` further out.

    Attributes
    ----------
    mu_lower : float
        Lower bound on the sup (optimistic: the mechanism is *not* μ-GDP on
        the head for any smaller μ).
    mu_upper : float
        Upper bound on the sup (the μ to report for the head).
    epsilon_max : float
        ε_h, the end of the certified head.
    argmax_epsilon : float
        A grid point where G ≥ ``mu_lower``: where the maximum is attained,
        to within the grid spacing.
    tolerance : float
        The requested width.
    steps : int
        Number of grid cells n (spacing ε_max/n).
    evaluations : int
        Number of profile values computed (bounds count twice).
    searches : int
        Number of μ_GDP root searches run (≈ 2 log n expected).
    tail_delta : float
        δ (upper profile) at ε_max: the probability beyond the head.
    log_tail_delta : float
        Its logarithm, finite where ``tail_delta`` underflows to 0.
    tail : TailEstimate or None
        The tail criterion (an estimate, not a bound), if requested.
    from_bounds : bool
        True when the profile was given as (lower, upper) bounds.
    """

    mu_lower: float
    mu_upper: float
    epsilon_max: float
    argmax_epsilon: float
    tolerance: float
    steps: int
    evaluations: int
    searches: int
    tail_delta: float
    log_tail_delta: float
    tail: TailEstimate | None
    from_bounds: bool

    def __iter__(self):
        """Unpack as ``mu_lower, mu_upper = certify(...)``."""
        return iter((self.mu_lower, self.mu_upper))

    @property
    def width(self) -> float:
        """mu_upper − mu_lower (0 when both are ∞: no finite μ holds, exactly)."""
        if self.mu_lower == math.inf:
            return 0.0
        return self.mu_upper - self.mu_lower

    @property
    def tolerance_met(self) -> bool:
        """Whether the width is within the requested tolerance.

        Always true for a single profile; for bounds the profile's own
        bracket can make the interval wider.
        """
        return self.width <= self.tolerance

    def _tail_probability(self) -> str:
        if self.tail_delta > 0.0 or self.log_tail_delta == -math.inf:
            return f"{self.tail_delta:.3g}"
        return f"exp({self.log_tail_delta:.6g})"

    def __str__(self) -> str:
        e = self.epsilon_max
        p = self._tail_probability()
        lines = [
            f"certified head: sup of the GDPT over [0, {e:g}] lies in "
            f"[{self.mu_lower:.6g}, {self.mu_upper:.6g}] (width {self.width:.2g}, "
            f"tolerance {self.tolerance:g})",
            f"  maximum near epsilon = {self.argmax_epsilon:.4g}",
            f"  => ({e:g}, {self.mu_upper:.6g})-head GDP: delta(eps) <= delta_mu(eps) for "
            f"eps <= {e:g} only, mu = {self.mu_upper:.6g} (upper bound)",
            f"  beyond epsilon = {e:g} the GDPT is not certified; there delta <= {p}, "
            f"so the mechanism is {self.mu_upper:.6g}-GDP except with probability {p}",
        ]
        if self.from_bounds and not self.tolerance_met:
            lines.append(
                "  the interval is wider than requested: the profile's own bounds are that "
                "far apart"
            )
        if self.tail is not None:
            lines.append(f"  tail: {self.tail}")
            if self.tail.verdict == PURE_DP:
                lines.append(
                    "  the tail is 0 beyond that point: the GDPT cannot exceed the head there"
                )
            elif self.tail.floor_delta is not None:
                lines.append(
                    f"  so the head certificate is the answer: {self.mu_upper:.6g}-GDP for "
                    f"eps <= {e:g}, and beyond it except with probability {p}"
                )
            elif self.tail.verdict in (NOT_GDP, UNDETERMINED):
                lines.append(
                    "  the head bound does not extend to a GDP guarantee; clip and rectify "
                    "(gdpt.clip_and_rectify) to make the mechanism mu-GDP"
                )
            elif self.tail.limit > self.mu_upper:
                lines.append(
                    f"  the tail limit exceeds mu_upper: the whole mechanism is at best "
                    f"{self.tail.limit:.6g}-GDP (estimate)"
                )
            else:
                lines.append("  the tail limit is below mu_upper (estimate, not certified)")
        lines.append(f"  {self.evaluations} profile values, {self.searches} mu searches")
        return "\n".join(lines)


def _running_max(order, needs_search, search, evaluate_at):
    """The paper's shuffled scan: search only where the running maximum must move.

    ``needs_search(indices, mu)`` → bool array; ``search(i)`` → candidate μ.
    Returns (μ, index attaining it or None, number of searches).
    """
    mu = 0.0
    best = None
    searches = 0
    position = 0
    while position < order.size and mu < math.inf:
        block = order[position : position + _BLOCK]
        hits = np.flatnonzero(needs_search(block, mu))
        if hits.size == 0:
            position += block.size
            continue
        index = int(block[hits[0]])
        candidate = search(index)
        searches += 1
        if candidate > mu:
            mu, best = candidate, evaluate_at(index)
        position += int(hits[0]) + 1
    return mu, best, searches


def certify(
    profile,
    epsilon_max,
    tolerance=1e-3,
    *,
    tail: bool = True,
    seed=0,
    max_steps=20_000_000,
) -> Certificate:
    r"""Certify sup_{ε ≤ ε_max} G(ε) to within ``tolerance`` (Theorem 4.6, Appendix D).

    Returns μ⁻ ≤ sup_{ε∈[0, ε_max]} G(ε) ≤ μ⁺ with μ⁺ − μ⁻ ≤ tolerance, where
    G is the GDPT of the profile: the mechanism is (ε_max, μ⁺)-head GDP and
    not (ε_max, μ)-head GDP for any μ < μ⁻. The grid has
    n = ⌈ε_max·√(2π)/(2·0.9·tolerance)⌉ cells, so √(2π)·D/2 ≤ 0.9·tolerance
    (Theorem 4.5); the rest of the tolerance absorbs the safety margins.
    The scan is the paper's optimised algorithm (see the module notes).

    Parameters
    ----------
    profile : callable, profile object, or pair
        ε ↦ δ(ε): a callable, an object with ``.delta`` (and optionally
        ``.log_delta``), an object with ``.delta_bounds(epsilon)``
        returning (lower, upper), or a pair ``(lower, upper)`` of those. For
        bounds, μ⁺ comes from the upper and μ⁻ from the lower profile.
    epsilon_max : float
        ε_h > 0, the end of the certified head.
    tolerance : float
        Requested width of [μ⁻, μ⁺], > 0.
    tail : bool
        Also estimate the tail criterion (:func:`gaussdp.gdpt.tail_estimate`).
    seed : int or None
        Seed of the shuffle (affects only the number of searches).
    max_steps : int
        Refuse grids finer than this many cells.

    Returns
    -------
    Certificate

    Examples
    --------
    The Laplace mechanism with sensitivity/scale = 2 (the paper's example):

    >>> laplace = lambda e: np.where(e < 2.0, -np.expm1(np.minimum(e, 2.0) / 2 - 1.0), 0.0)
    >>> c = certify(laplace, 10.0, 1e-4, tail=False)
    >>> round(c.mu_lower, 4), round(c.mu_upper, 4), c.argmax_epsilon
    (1.8009, 1.801, 0.0)
    >>> c.width <= 1e-4
    True
    """
    e_max = float(
        check_real(
            "epsilon_max", epsilon_max, low=0.0, high=math.inf, low_open=True, high_open=True
        )
    )
    tol = float(
        check_real("tolerance", tolerance, low=0.0, high=math.inf, low_open=True, high_open=True)
    )
    max_steps = check_integer("max_steps", max_steps, low=1)
    reader = read_profile(profile)
    spacing = _GRID_SHARE * tol / _HALF_SQRT_2PI
    steps = max(1, math.ceil(e_max / spacing))
    if steps > max_steps:
        raise InvalidParameterError(
            f"tolerance={tol!r} with epsilon_max={e_max!r} needs {steps} grid cells, more than "
            f"max_steps={max_steps}; raise the tolerance or max_steps"
        )
    grid = np.linspace(0.0, e_max, steps + 1)
    log_lower, log_upper = reader.log_bounds(grid)
    evaluations = grid.size * (2 if reader.is_pair else 1)

    with np.errstate(invalid="ignore"):
        target_upper = np.where(
            np.isfinite(log_upper), log_upper + log_margin(log_upper), log_upper
        )
        target_lower = np.where(
            np.isfinite(log_lower), log_lower - log_margin(log_lower), log_lower
        )
    rng = np.random.default_rng(seed)

    # Upper: cells i = 0..n-1 need δ_{μ⁺}(x_{i+1}) ≥ δ(x_i) (with margin).
    def upper_needs(block, mu):
        return gdp.log_delta(mu, grid[block + 1]) < target_upper[block]

    mu_upper, _, upper_searches = _running_max(
        rng.permutation(steps),
        upper_needs,
        lambda i: mu_upper_bound(float(grid[i + 1]), float(log_upper[i])),
        lambda i: float(grid[i]),
    )

    # Lower: points i = 0..n, G(x_i) ≥ μ_GDP(x_i, δ_lower(x_i)).
    # Skipping a point can only loosen the lower bound, never invalidate it; a
    # relative slack of 1e-12 keeps points that tie the running maximum (a flat
    # GDPT, e.g. a GDP profile, at the search's rounding level) from each
    # triggering a search that cannot move it.
    def lower_needs(block, mu):
        with np.errstate(invalid="ignore"):
            return gdp.log_delta(mu * (1.0 + _LOWER_SLACK), grid[block]) < target_lower[block]

    mu_lower, argmax, lower_searches = _running_max(
        rng.permutation(steps + 1),
        lower_needs,
        lambda i: mu_lower_bound(float(grid[i]), float(log_lower[i])),
        lambda i: float(grid[i]),
    )
    mu_lower = min(mu_lower, mu_upper)
    estimate = _tail_or_explain(profile) if tail else None
    return Certificate(
        mu_lower=float(mu_lower),
        mu_upper=float(mu_upper),
        epsilon_max=e_max,
        argmax_epsilon=0.0 if argmax is None else argmax,
        tolerance=tol,
        steps=steps,
        evaluations=evaluations,
        searches=upper_searches + lower_searches,
        tail_delta=float(math.exp(log_upper[-1])),
        log_tail_delta=float(log_upper[-1]),
        tail=estimate,
        from_bounds=reader.is_pair,
    )


def _tail_or_explain(profile) -> TailEstimate:
    """The tail estimate; a profile that fails far out gets a hint to skip it."""
    try:
        return tail_estimate(profile)
    except InvalidParameterError as error:
        raise InvalidParameterError(
            f"{error} (while estimating the tail limit, which probes epsilon up to ~1e6; "
            "the head is certified without it: pass tail=False, or --no-tail on the "
            "command line)"
        ) from None


def clip_and_rectify(epsilon_h, lower, upper):
    r"""Laplace scale that turns (ε_h, μ)-head GDP into μ-GDP (Theorem 4.7).

    For a mechanism A with a numerical output, let C clip it to [y⁻, y⁺] and
    R add Laplace noise of scale

    .. math::
        b = (y^+ - y^-)/ε_h .

    Then R∘C∘A is ε_h-DP (a Laplace mechanism with sensitivity y⁺ − y⁻), so
    its profile is 0 beyond ε_h, and by post-processing it is at most A's
    below ε_h: if A is (ε_h, μ)-head GDP (:func:`certify`), R∘C∘A is μ-GDP.
    (It is also −2Φ⁻¹(1/(1 + e^{ε_h}))-GDP by Theorem 5.1 alone, so the head
    certificate only helps when that is larger than μ.)

    Utility cost: the output is biased by clipping wherever A's output leaves
    [y⁻, y⁺], and gains Laplace noise of variance 2b² = 2(y⁺ − y⁻)²/ε_h².
    Certify the head as far out as possible (a large ε_h) and choose the
    clipping range as tight as the output allows.

    Parameters
    ----------
    epsilon_h : array_like
        ε_h > 0, the end of the certified head.
    lower, upper : array_like
        Clipping range y⁻ < y⁺ (finite).

    Returns
    -------
    float or ndarray
        The Laplace scale b.

    Examples
    --------
    >>> clip_and_rectify(50.0, -1.0, 1.0)
    0.04
    """
    eps_h = check_real("epsilon_h", epsilon_h, low=0.0, high=math.inf, low_open=True)
    low = check_real("lower", lower, low=-math.inf, high=math.inf, low_open=True, high_open=True)
    high = check_real("upper", upper, low=-math.inf, high=math.inf, low_open=True, high_open=True)
    eps_h, low, high = np.broadcast_arrays(eps_h, low, high)
    if np.any(high <= low):
        index = int(np.flatnonzero((high <= low).ravel())[0])
        raise InvalidParameterError(
            f"upper must exceed lower, got lower={float(low.ravel()[index])!r}, "
            f"upper={float(high.ravel()[index])!r}"
        )
    return restore_shape((high - low) / eps_h, epsilon_h, lower, upper)
