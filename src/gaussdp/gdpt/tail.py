"""Identifying GDP from the tail of a privacy profile (GDPT paper, §4, Theorems 4.3–4.4).

A mechanism is GDP (for some μ) if and only if the limit superior of its GDPT
is finite (Theorem 4.3), and that limit is (Theorem 4.4)

    lim sup_{ε→∞} G(ε) = lim sup_{ε→∞} ε / √(−2 log δ(ε)).

So δ(ε) must vanish like e^{−ε²/(2μ²)}: ε-DP profiles (δ = 0 beyond some ε)
have limit 0, the noisy-SGD family δ = e^{−ε²} has 1/√2, and the
invisibility-cloak encoder (δ ∝ 1/ε) has ∞ — it is not GDP for any μ.

**The limit cannot be computed from finitely many values of a black-box
profile**; :func:`tail_estimate` estimates it and says how, and its answer is
an *estimate, not a bound*. Method:

1. Evaluate log δ at ε_k = ε_start·2^k, k = 0 … 20 (up to about 10⁶ by default),
   in log space when the profile provides ``log_delta`` (and at ε_start/8, ε_start/4
   and ε_start/2 only to reject a profile that is invalid near 0; ε = 0 itself
   is never probed).
2. If δ reaches exactly 0, bisect for the first zero: the profile is ε-DP
   there and the limit is 0 (exact, not an estimate) — unless the last
   non-zero value is below 1e-290 and the profile gives no ``log_delta``, in
   which case the zero may be floating-point underflow (flagged, and the
   estimate falls back to the representable points).
3. Otherwise compute G(ε_k) (the GDPT converges to the same limit as
   ε/√(−2 log δ) but much faster: it is exactly μ for a GDP profile) and look
   at the increments d_k = G(ε_{k+1}) − G(ε_k) of the last four points. A
   limit approached like c·ε^{−p} has d_{k+1}/d_k → 2^{−p}; a divergent G has
   increments that do not shrink. Increments that stay positive with ratio
   ≥ 0.75 twice in a row are read as divergence (limit ∞, not GDP);
   otherwise the limit is extrapolated by Aitken's Δ² from the last three
   values (clamped at 0).

A profile whose δ levels off at a positive value (the last four probes agree
to 1e-6 in log δ) has limit ∞ — it is not GDP as given — and the level is
reported as ``floor_delta``: the pessimistic profile of a numerical
accountant does this with mass it could not resolve, and then the honest
reading is "GDP except with probability ``floor_delta``".

Failure modes (documented, and the reason the result is an estimate):
a limit approached slower than ε^{−0.4} is mistaken for divergence (the
pessimistic direction); a divergence that only starts beyond the last probe,
or a profile whose behaviour changes there, is invisible; a plain callable
whose δ underflows leaves only the representable ε to extrapolate from (pass
an object with ``log_delta``, e.g. :func:`gaussdp.gdpt.from_noise_equation`
with ``log_delta=True``); and oscillating increments make the extrapolation
fall back to the largest of the last two values.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from gaussdp._validation import check_integer, check_real
from gaussdp.gdpt._profiles import read_profile
from gaussdp.gdpt.transform import _mu_scalar_from_log

__all__ = ["TailEstimate", "tail_estimate", "tail_limit"]

# Below this, a zero returned by a plain δ callable may be underflow.
_LOG_UNDERFLOW_SUSPECT = math.log(1e-290)
_DIVERGENCE_RATIO = 0.75
# log δ changing by less than this (relative) over the last four probes: a floor.
_FLAT = 1e-6
_CONVERGED = 1e-9

PURE_DP = "pure-dp"
GDP = "gdp"
NOT_GDP = "not-gdp"
UNDETERMINED = "undetermined"


@dataclass(frozen=True)
class TailEstimate:
    """The tail criterion of Theorem 4.4, estimated numerically.

    Attributes
    ----------
    limit : float
        Estimated lim sup of the GDPT (= lim ε/√(−2 log δ(ε))). 0 for
        profiles that reach 0 (exact), ∞ when the GDPT is judged divergent or
        nothing could be estimated. **An estimate, not a bound.**
    verdict : str
        ``"pure-dp"`` (δ reaches 0: limit exactly 0), ``"gdp"`` (finite
        limit), ``"not-gdp"`` (divergent) or ``"undetermined"``.
    zero_epsilon : float or None
        Where δ first reaches 0 (to bisection accuracy), if it does.
    epsilons, transforms : tuple of float
        The probe points and G there (∞ where δ = 1), for inspection and plots.
    underflow : bool
        True when a zero of a plain δ callable may be floating-point underflow.
    evaluations : int
        Number of profile values used.
    floor_delta : float or None
        When δ levels off at a positive value instead of vanishing (the
        last four probes agree), that value. Such a profile is not GDP as
        given; it is what a numerical accountant's pessimistic profile does
        with probability mass it could not resolve, and reads as "GDP except
        with probability ``floor_delta``".
    """

    limit: float
    verdict: str
    zero_epsilon: float | None
    epsilons: tuple
    transforms: tuple
    underflow: bool
    evaluations: int
    floor_delta: float | None = None

    @property
    def is_gdp(self) -> bool:
        """True when the estimated limit is finite (Theorem 4.3)."""
        return math.isfinite(self.limit)

    def __str__(self) -> str:
        if self.verdict == PURE_DP:
            return (
                f"tail limit 0 (exact): delta reaches 0 at epsilon = {self.zero_epsilon:.6g}, "
                "so the mechanism is pure DP there and its GDPT vanishes beyond"
            )
        caveat = " (numerical estimate, not a bound)"
        note = ""
        if self.underflow:
            note = (
                f"; delta underflows to 0 near epsilon = {self.zero_epsilon:.6g}, so only the "
                "representable range was used (give the profile a log_delta method)"
            )
        if self.verdict == NOT_GDP and self.floor_delta is not None:
            return (
                f"tail limit inf{caveat}: delta levels off at {self.floor_delta:.3g} instead of "
                "vanishing, so the profile as given is not GDP (for a numerical accountant: "
                "mass it could not resolve; read the result as GDP except with that probability)"
            )
        if self.verdict == NOT_GDP:
            return f"tail limit inf{caveat}: the GDPT diverges, the mechanism is not GDP{note}"
        if self.verdict == UNDETERMINED:
            return f"tail limit undetermined, treated as inf{caveat}: too few usable values{note}"
        return f"tail limit {self.limit:.6g}{caveat}: the mechanism is GDP{note}"


def _first_zero(reader, low: float, high: float, evaluations: list) -> tuple[float, float]:
    """Bisect for the first ε where log δ = −inf; returns (ε, last finite log δ)."""
    log_low = float(reader.log_upper(np.array([low]))[0]) if low > 0 else 0.0
    for _ in range(60):
        middle = 0.5 * (low + high)
        if not low < middle < high:
            break
        value = float(reader.log_upper(np.array([middle]))[0])
        evaluations[0] += 1
        if value == -math.inf:
            high = middle
        else:
            low, log_low = middle, value
    return high, log_low


def _extrapolate(values: np.ndarray) -> tuple[float, str]:
    """Limit and verdict from the last four GDPT values at doubling ε."""
    g = values[-4:]
    d = np.diff(g)
    scale = max(abs(float(g[-1])), 1e-300)
    if abs(d[-1]) <= _CONVERGED * scale:
        return float(g[-1]), GDP
    if (
        d[-1] > 0
        and d[-2] > 0
        and d[-3] > 0
        and d[-1] >= _DIVERGENCE_RATIO * d[-2]
        and (d[-2] >= _DIVERGENCE_RATIO * d[-3])
    ):
        return math.inf, NOT_GDP
    ratio = d[-1] / d[-2] if d[-2] != 0 else 0.0
    if 0.0 < ratio < 1.0:
        limit = float(g[-1] + d[-1] * ratio / (1.0 - ratio))
    else:
        limit = float(max(g[-1], g[-2]))
    return max(limit, 0.0), GDP


def tail_estimate(profile, *, epsilon_start=1.0, doublings=20) -> TailEstimate:
    """Estimate the tail limit of the GDPT, with the evidence (Theorem 4.4).

    See the module documentation for the method and its failure modes.

    Parameters
    ----------
    profile : callable, profile object, or pair
        ε ↦ δ(ε) (for bounds, the upper profile is used). Objects with
        ``log_delta`` are evaluated in log space, which keeps the far tail.
    epsilon_start : float
        First probe, > 0.
    doublings : int
        Number of doublings of ε (the last probe is ε_start·2^doublings).

    Returns
    -------
    TailEstimate

    Examples
    --------
    >>> from gaussdp import GaussianDP
    >>> estimate = tail_estimate(GaussianDP(1.5))
    >>> estimate.verdict, round(estimate.limit, 9)
    ('gdp', 1.5)
    """
    start = float(
        check_real(
            "epsilon_start", epsilon_start, low=0.0, high=math.inf, low_open=True, high_open=True
        )
    )
    doublings = check_integer("doublings", doublings, low=3)
    reader = read_profile(profile)
    epsilons = start * np.exp2(np.arange(doublings + 1))
    # The head (0, ε_start) plays no part in the limit, but a profile that is
    # invalid there (δ > 1, NaN, increasing) is rejected rather than extrapolated.
    # ε = 0 itself is not probed: profiles such as c/ε are valid on ε > 0 only.
    head = start * np.array([0.125, 0.25, 0.5])
    log_values = reader.log_upper(np.concatenate((head, epsilons)))[head.size :]
    evaluations = [head.size + epsilons.size]
    zeros = np.flatnonzero(log_values == -np.inf)
    zero_epsilon = None
    underflow = False
    usable = np.ones(epsilons.size, dtype=bool)
    if zeros.size:
        z = int(zeros[0])
        low = float(epsilons[z - 1]) if z > 0 else 0.0
        zero_epsilon, last_log = _first_zero(reader, low, float(epsilons[z]), evaluations)
        underflow = (not reader.has_log) and last_log < _LOG_UNDERFLOW_SUSPECT
        if not underflow:
            transforms = tuple(
                _mu_scalar_from_log(float(e), float(v))
                for e, v in zip(epsilons[:z], log_values[:z], strict=True)
            ) + (0.0,) * (epsilons.size - z)
            return TailEstimate(
                limit=0.0,
                verdict=PURE_DP,
                zero_epsilon=zero_epsilon,
                epsilons=tuple(float(e) for e in epsilons),
                transforms=transforms,
                underflow=False,
                evaluations=evaluations[0],
            )
        usable[z:] = False
    transforms = np.array(
        [
            _mu_scalar_from_log(float(e), float(v)) if keep else 0.0
            for e, v, keep in zip(epsilons, log_values, usable, strict=True)
        ]
    )
    finite = usable & np.isfinite(transforms)
    values = transforms[finite]
    floor_delta = None
    if values.size < 4:
        limit, verdict = math.inf, UNDETERMINED
    else:
        limit, verdict = _extrapolate(values)
        last = log_values[finite][-4:]
        if np.ptp(last) <= _FLAT * np.max(np.abs(last)):
            limit, verdict = math.inf, NOT_GDP
            floor_delta = float(math.exp(last[-1]))
    return TailEstimate(
        limit=limit,
        verdict=verdict,
        zero_epsilon=zero_epsilon,
        epsilons=tuple(float(e) for e in epsilons),
        transforms=tuple(float(t) for t in transforms),
        underflow=underflow,
        evaluations=evaluations[0],
        floor_delta=floor_delta,
    )


def tail_limit(profile, *, epsilon_start=1.0, doublings=20) -> float:
    """The identification criterion lim_{ε→∞} ε/√(−2 log δ(ε)) (Theorem 4.4), estimated.

    The mechanism is GDP if and only if this is finite (Theorem 4.3); then no
    μ below it can hold, so it is a lower bound on the μ of the whole
    mechanism *if* the estimate is right. Returns 0 for profiles that reach
    0 (ε-DP; exact), ∞ for profiles judged non-GDP (the GDPT diverges).
    **A numerical estimate, not a bound**: see :func:`tail_estimate` for the
    method, the evidence and its failure modes. A ``RuntimeWarning`` is
    issued when the profile underflows and the estimate rests on its
    representable range only.

    Examples
    --------
    >>> round(tail_limit(lambda e: max(0.0, 1.0 - np.exp(e / 2 - 1.0))), 12)  # Laplace
    0.0
    >>> tail_limit(lambda e: min(1.0, 0.54 / e))  # the encoder's 1/ε tail
    inf
    """
    estimate = tail_estimate(profile, epsilon_start=epsilon_start, doublings=doublings)
    if estimate.underflow:
        warnings.warn(str(estimate), RuntimeWarning, stacklevel=2)
    return estimate.limit
