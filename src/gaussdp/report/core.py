r"""The μ-GDP report: tight μ, regret, where μ stops holding, Tier I / Tier II.

Implements the reporting recipe of Gomez, Kaissis, Kulynych et al. (2025,
"Gaussian DP for reporting DP guarantees", ``papers/002_…``, §4) on top of
gaussdp's certified accountant:

1. The accountant's pessimistic curve (below the true one) is read off its
   privacy profiles as the exact symmetric piecewise-linear curve
   (:mod:`gaussdp.report._steep`).
2. **μ** is the tight μ of that curve over every test it resolves
   (Appendix B, eq. 29; :func:`gaussdp.report.tight_mu.mu_of_tests`), and
   **delta_tail** the smallest δ with which the curve certifies it as "μ-GDP
   except with probability δ" (Dong, Roth & Su 2022, eq. 12): the
   guarantee f ≥ G_μ ⊗ f_{0,δ} holds for the true mechanism.
3. **regret** is the Δ-divergence Δ(f, G_μ ⊗ f_{0,δ}) (Definition 2.10,
   Proposition 4.1) between the certified curve f and the reported
   guarantee, computed exactly (profile form, one closed-form value per
   atom and crossing) plus a rounding margin: an upper bound for f. (The
   true curve lies between f and the optimistic curve; the two differ by
   the accountant's discretisation error, 2e-7 in the regret for CIFAR-10.)
4. **Tier I** if the regret is at most 0.01 (§4.2): μ describes the curve.
   Otherwise **Tier II** (§4.3): the curve is also tabulated at
   α ∈ {1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1} and at the α of maximal
   advantage. The table is computed in both tiers.

**Which δ goes with μ.** An accountant resolves δ only down to its numerical
floor: every δ it certifies includes P(+∞) + slack (mass moved to infinite
loss when the grid was truncated, plus a certified allowance for
wrap-around and floating-point rounding in the FFT). Two more rounding
allowances live inside the tail sums themselves, visible as the *excess* by
which the P-masses sum to more than 1: every tail sum is raised by the
certified bound on its own summation error (about 1e-14 relative, see
:func:`gaussdp.pld.query.certify_tail_sums`), and pairs built from a
trade-off curve (Profile, NoiseEquation, ZCDP, RenyiDP, Group, Parallel)
raise every atom's P-mass by two ulps of 1.0. Where the tests' true-positive rates are a few such
allowances, rounding rather than the mechanism would decide μ (a Profile of
G_1 came out as μ = 1.067 at failure probability exactly the floor). So μ is
the tight μ over **every** test with failure probability
δ_floor + NOISE_SHARE·(slack + excess), and delta_tail is the smallest
δ ≥ δ_floor for which G_μ ⊗ f_{0,δ} lies below the *whole* computed curve
(never more than that). The pair (μ, delta_tail) is a certified guarantee;
for δ well above delta_tail it is μ-GDP for all practical purposes, and
``epsilon_tail`` = ε_μ(delta_tail) is the largest ε to which the μ-GDP
profile is meaningful. Closed forms (Gaussian compositions, exact pure-DP
compositions) have floor 0 and a strict μ.

**What the tail needs.** ``mu_tail`` (:func:`gaussdp.report.tail.tail_mu`) is
the GDPT tail limit of the mechanism, derived from its description: the μ a
strict (δ = 0) guarantee needs in the far tail. For subsampled mechanisms it
exceeds μ (subsampling does not amplify the tail).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gaussdp import accountant as acc_module
from gaussdp import gdp
from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError, check_real
from gaussdp.report import _steep, pure
from gaussdp.report.regret import ROUNDING_MARGIN, profile_regret
from gaussdp.report.tail import tail_mu
from gaussdp.report.tight_mu import mu_of_tests

__all__ = [
    "DEFAULT_DELTAS",
    "DEFAULT_DELTA_TAIL",
    "TABLE_ALPHAS",
    "TIER_I_REGRET",
    "EpsilonRow",
    "MuRow",
    "Report",
    "RoundingLimit",
    "TableRow",
    "report",
]

#: δ at which ε is always reported (Gomez et al. 2025, §4, plus 1e-9).
DEFAULT_DELTAS = (1e-5, 1e-6, 1e-9)
#: The α of the Tier II table (§4.3); the α of maximal advantage is added.
TABLE_ALPHAS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)
#: Tier I when the regret is at most this (§4.2).
TIER_I_REGRET = 0.01
#: A δ_tail above this is not suggested to make μ finite (it would mean nothing).
LARGEST_SUGGESTED_DELTA_TAIL = 1e-2
#: The failure probability that goes with μ unless asked otherwise: the report's μ is
#: "μ-GDP except with probability 1e-10" for every mechanism and parameter (see
#: docs/report.md for why this value). Closed forms that are exactly μ-GDP report δ_tail = 0.
DEFAULT_DELTA_TAIL = 1e-10
#: The δ_tail of the μ-by-δ_tail table (the report's own δ_tail is added).
MU_TABLE_DELTA_TAILS = (1e-6, 1e-8, 1e-10, 1e-12)
#: The accountant's floor is kept at least this many times below the δ_tail asked for.
FLOOR_MARGIN = 100.0
# Tests with α below this are also checked in log space (exp underflows near 1e-308).
_UNDERFLOW_ALPHA = 1e-290


@dataclass(frozen=True)
class EpsilonRow:
    """ε at one δ: the accountant's bounds, what μ implies, and the μ this point needs.

    Attributes
    ----------
    delta : float
    epsilon : float
        Upper bound on ε(δ) (the mechanism is (epsilon, delta)-DP).
    epsilon_lower : float
        Lower bound on ε(δ): no smaller ε is certified by any accountant.
    epsilon_mu : float
        The ε the reported (μ, delta_tail) guarantee gives at this δ:
        ε_μ((δ − delta_tail)/(1 − delta_tail)); ∞ if δ ≤ delta_tail.
    mu_at_delta : float
        μ_GDP(epsilon, δ) — the GDPT of the upper profile at this point: the
        μ that this single (ε, δ) pair needs. It rises towards the tail
        limit as δ → 0 for subsampled mechanisms.
    """

    delta: float
    epsilon: float
    epsilon_lower: float
    epsilon_mu: float
    mu_at_delta: float


@dataclass(frozen=True)
class TableRow:
    """The trade-off curve at one α (false-positive rate of a membership attack).

    ``beta`` is the pessimistic value (the true β is at least this: no attack
    at this FPR has a false-negative rate below it), ``beta_optimistic`` the
    optimistic one (the true β is at most this), ``beta_mu`` the value of the
    reported guarantee G_μ ⊗ f_{0,δ_tail} (at most ``beta``).
    """

    alpha: float
    beta: float
    beta_optimistic: float
    beta_mu: float
    label: str = ""


@dataclass(frozen=True)
class RoundingLimit:
    """Where rounding, not the mechanism, sets μ (or makes it ∞).

    The accountant adds allowances to every true-positive rate (slack, the
    excess P-mass of curve pairs); where the curve's false-negative rate is no
    larger than them, the certified curve reaches β = 0 at a false-positive
    rate α₀ > 0 (TPR cut at 1). Its symmetric curve is then μ-GDP only for
    μ ≥ about −2Φ⁻¹(α₀/2), which can exceed what every ε row needs; and a
    test that still has TPR ≥ 1 at α₀ (or mass at α = 0 above δ_tail) makes μ
    infinite for every δ_tail below 1 − α₀.

    Attributes
    ----------
    log_alpha_zero : float
        log α₀ (natural log; −inf if the curve starts below 1 − δ_tail at α = 0).
    allowance : float
        slack + excess of the accountant's profiles.
    needed : float or None
        When μ = ∞: the smallest δ_tail for which a finite μ is possible at all.
    suggested_delta_tail, suggested_mu : float or None
        When μ = ∞: a δ_tail (at most :data:`LARGEST_SUGGESTED_DELTA_TAIL`)
        checked to give a finite μ, and that μ; None if there is none.
    """

    log_alpha_zero: float
    allowance: float
    needed: float | None = None
    suggested_delta_tail: float | None = None
    suggested_mu: float | None = None


@dataclass(frozen=True)
class MuRow:
    """μ at one failure probability: a row of :attr:`Report.mu_by_delta_tail`.

    ``mu`` is the tight μ with failure probability ``delta_tail`` (an upper
    bound: the mechanism is μ-GDP except with probability δ_tail), None where
    δ_tail is below the accountant's floor. The row with ``delta_tail`` = 0
    and ``kind`` = "tail limit" holds the GDPT tail limit (:attr:`Report.mu_tail`):
    a strict (δ_tail = 0) guarantee needs at least that μ.
    """

    delta_tail: float
    mu: float | None
    kind: str = "certified"


@dataclass(frozen=True, eq=False)
class Report:
    """A μ-GDP report of one mechanism (Gomez et al. 2025, §4). See :mod:`gaussdp.report.core`.

    Attributes
    ----------
    title : str
    mechanism : Mechanism
    neighbouring : Neighbouring
    method : str
        How the accountant computed the curve.
    mu : float
        The reported μ: the mechanism is μ-GDP except with probability
        ``delta_tail`` (f ≥ G_μ ⊗ f_{0,delta_tail}, certified).
    delta_tail : float
        The failure probability that goes with μ: the smallest δ down to
        which μ is certified (0 for closed forms).
    epsilon_tail : float
        ε_μ(delta_tail): the largest ε at which the μ-GDP profile still
        exceeds delta_tail (∞ when delta_tail = 0).
    delta_floor : float
        The accountant's numerical floor: mass at infinite loss plus
        certified slack. No δ below it is certified.
    mu_tail : float or None
        What the far tail needs: the GDPT tail limit (strict, δ = 0 μ-GDP
        needs at least this); ∞ if the mechanism is not GDP (an (ε, δ)
        piece); None if unknown.
    regret : float
        The Δ-divergence from the certified (pessimistic) curve to the
        guarantee G_μ ⊗ f_{0,delta_tail}: exact for that curve, with a
        rounding margin added so that it is an upper bound (0 for closed
        forms).
    advantage, advantage_lower : float
        Upper and lower bounds on the largest TPR − FPR of any membership
        attack (the total-variation distance, δ(0)).
    advantage_mu : float
        The advantage implied by (μ, delta_tail); exceeds the true advantage
        by at most 2·regret (Proposition 4.2).
    alpha_star : float
        The α at which the pessimistic curve's advantage is attained.
    tier : int
        1 if regret ≤ 0.01 (μ describes the curve), else 2.
    epsilons : tuple of EpsilonRow
    table : tuple of TableRow
        The curve at :data:`TABLE_ALPHAS` and at α*.
    exact : bool
        True for closed forms (no discretisation: bounds coincide).
    rounding_limit : RoundingLimit or None
        Set when rounding allowances, not the mechanism, decide μ: μ = ∞, or
        μ set where the certified curve is cut at TPR 1 and above what every
        ε row needs.
    mu_by_delta_tail : tuple of MuRow
        μ at δ_tail = 1e-6, 1e-8, 1e-10, 1e-12 and the report's own, from the
        same curve, then the tail limit (δ_tail → 0).
    accounting : Accounting
        The accounting whose certified curve the report read (composed with
        a floor at most δ_tail/100, which may be a refinement of the one
        passed in): δ(ε) ≤ δ_tail + (1 − δ_tail)·δ_μ(ε) holds for its
        ``delta`` at every ε.
    """

    title: str
    mechanism: m.Mechanism
    neighbouring: m.Neighbouring
    method: str
    mu: float
    delta_tail: float
    epsilon_tail: float
    delta_floor: float
    mu_tail: float | None
    regret: float
    advantage: float
    advantage_lower: float
    advantage_mu: float
    alpha_star: float
    tier: int
    epsilons: tuple[EpsilonRow, ...]
    table: tuple[TableRow, ...]
    exact: bool
    _beta: Callable[[np.ndarray], np.ndarray] = field(repr=False)
    _beta_optimistic: Callable[[np.ndarray], np.ndarray] = field(repr=False)
    rounding_limit: RoundingLimit | None = None
    mu_by_delta_tail: tuple[MuRow, ...] = ()
    accounting: Any = field(default=None, repr=False)
    _mu_for: Callable[[float], float] | None = field(default=None, repr=False)

    # -- μ as a function of δ_tail --------------------------------------------

    def mu_for(self, delta_tail: float) -> float:
        """The tight μ with failure probability ``delta_tail`` ∈ (0, 1), an upper bound.

        Read off the same certified curve as :attr:`mu` (no new composition)
        when ``delta_tail`` is at least its floor; below it, the accountant
        composes again with a floor 100 times below ``delta_tail`` (refused
        with one line where memory does not allow it). Non-increasing in
        ``delta_tail``; for subsampled mechanisms it rises towards
        :attr:`mu_tail` as ``delta_tail`` → 0.

        Examples
        --------
        >>> from gaussdp import DPSGD, account
        >>> r = account(DPSGD(1.0, 0.01, 1000)).gdp()
        >>> [round(r.mu_for(d), 3) for d in (1e-6, 1e-10)]
        [0.461, 0.516]
        """
        delta_tail = _check_delta_tail(delta_tail)
        if self._mu_for is None:
            return self.mu
        return self._mu_for(delta_tail)

    # -- the curves ----------------------------------------------------------

    def beta(self, alpha):
        """The pessimistic curve f(α) (a lower bound on the true β), vectorised."""
        alpha_array = check_real("alpha", alpha, low=0.0, high=1.0)
        values = np.clip(self._beta(alpha_array.ravel()), 0.0, 1.0).reshape(alpha_array.shape)
        return float(values) if np.ndim(alpha) == 0 else values

    def beta_optimistic(self, alpha):
        """The optimistic curve (an upper bound on the true β), vectorised."""
        alpha_array = check_real("alpha", alpha, low=0.0, high=1.0)
        values = np.clip(self._beta_optimistic(alpha_array.ravel()), 0.0, 1.0)
        values = values.reshape(alpha_array.shape)
        return float(values) if np.ndim(alpha) == 0 else values

    def beta_mu(self, alpha):
        """The reported guarantee's curve (1 − δ)·G_μ(α/(1 − δ)), δ = delta_tail."""
        alpha_array = check_real("alpha", alpha, low=0.0, high=1.0)
        values = _guarantee_beta(self.mu, self.delta_tail, alpha_array.ravel())
        values = values.reshape(alpha_array.shape)
        return float(values) if np.ndim(alpha) == 0 else values

    def guarantee(self):
        """The reported guarantee as a curve: ``curves.gaussian(mu).with_failure(delta_tail)``."""
        from gaussdp import curves

        return curves.gaussian(self.mu).with_failure(self.delta_tail)

    # -- rendering -----------------------------------------------------------

    def to_dict(self) -> dict:
        """Everything in the report as JSON-ready values (∞ as the string "inf")."""
        from gaussdp.report.render import to_dict

        return to_dict(self)

    def to_json(self) -> str:
        """The report as indented JSON."""
        from gaussdp.report.render import to_json

        return to_json(self)

    def to_text(self) -> str:
        """The report as plain text."""
        from gaussdp.report.render import to_text

        return to_text(self)

    def to_markdown(self) -> str:
        """The report as Markdown (a table that can be pasted into a paper)."""
        from gaussdp.report.render import to_markdown

        return to_markdown(self)

    def to_html(self) -> str:
        """A self-contained HTML page with the curve against G_μ (inline SVG)."""
        from gaussdp.report.render import to_html

        return to_html(self)

    def render(self, output_format: str = "text") -> str:
        """The report in ``output_format``: "text", "json", "markdown" or "html"."""
        from gaussdp.report.render import render

        return render(self, output_format)

    def __str__(self) -> str:
        return self.to_text()


# ---------------------------------------------------------------------------
# Pieces
# ---------------------------------------------------------------------------


def _guarantee_beta(mu: float, delta: float, alpha: np.ndarray) -> np.ndarray:
    """(1 − δ)·G_μ(α/(1 − δ)) for α ≤ 1 − δ, 0 beyond."""
    scale = 1.0 - delta
    inside = alpha < scale
    x = np.where(inside, alpha / scale, 0.5)
    if math.isinf(mu):
        values = np.where(x > 0.0, 0.0, 1.0)
    else:
        values = np.asarray(gdp.beta(mu, x), dtype=float)
    return np.where(inside, scale * values, 0.0)


def _guarantee_advantage(mu: float, delta: float) -> float:
    return float(min(delta + (1.0 - delta) * gdp.advantage(mu), 1.0))


def _candidates(steep: _steep.SteepCurve, directions: list[_steep.Direction]):
    """Tests whose μ is checked: the hull vertices, and tests whose α underflows."""
    alpha, log_alpha, tpr = [steep.alpha], [steep.log_alpha], [steep.tpr]
    limit = math.log(_UNDERFLOW_ALPHA)
    for d in directions:
        tiny = d.log_alpha < limit
        alpha.append(d.alpha[tiny])
        log_alpha.append(d.log_alpha[tiny])
        tpr.append(d.tpr[tiny])
    return np.concatenate(alpha), np.concatenate(log_alpha), np.concatenate(tpr)


#: Tests per block of :func:`_largest_mus`, from the coarsest (each a multiple of the next).
_BLOCKS = (1024, 16, 4)
#: The level whose blocks' first tests are evaluated to raise the known maximum.
_SAMPLED_BLOCK = 16


def _block_extremes(values: np.ndarray, size: int, reduce) -> np.ndarray:
    """``reduce`` over consecutive blocks of ``size`` values (the last one shorter)."""
    whole = values.size - values.size % size
    extremes = values[0:whole:size].copy()
    for offset in range(1, size):  # strided passes: a reduce along short rows is slow
        reduce(extremes, values[offset:whole:size], out=extremes)
    if whole < values.size:
        extremes = np.append(extremes, reduce.reduce(values[whole:]))
    return extremes


@dataclass(frozen=True)
class _Tests:
    """One group of tests (α, log α, t) with its blocks' smallest α and largest t.

    ``levels[i]`` holds (min α, min log α, max t) of the blocks of
    ``_BLOCKS[i]`` tests, each level reduced from the next finer one (fmin,
    fmax: a NaN test, whose μ is −inf, hides no other).
    """

    alpha: np.ndarray
    log_alpha: np.ndarray
    tpr: np.ndarray
    levels: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]

    @classmethod
    def of(cls, alpha, log_alpha, tpr) -> _Tests:
        levels = []
        current, size = (alpha, log_alpha, tpr), 1
        for block in reversed(_BLOCKS):
            factor = block // size
            current = (
                _block_extremes(current[0], factor, np.fmin),
                _block_extremes(current[1], factor, np.fmin),
                _block_extremes(current[2], factor, np.fmax),
            )
            levels.append(current)
            size = block
        return cls(alpha, log_alpha, tpr, tuple(reversed(levels)))


def _test_groups(steep: _steep.SteepCurve, directions: list[_steep.Direction]) -> list[_Tests]:
    """The tests of :func:`_candidates`, in groups (the hull, each direction's underflowing)."""
    groups = [(steep.alpha, steep.log_alpha, steep.tpr)]
    limit = math.log(_UNDERFLOW_ALPHA)
    for d in directions:
        tiny = d.log_alpha < limit
        groups.append((d.alpha[tiny], d.log_alpha[tiny], d.tpr[tiny]))
    return [_Tests.of(*group) for group in groups if group[0].size]


def _mus_at(arrays, indices: list[np.ndarray], deltas: np.ndarray) -> list[np.ndarray]:
    """μ_j(δ_i) of the tests ``indices[i]`` of (α, log α, t) ``arrays``, one call for all δ."""
    sizes = [index.size for index in indices]
    if not sum(sizes):
        return [np.empty(0) for _ in indices]
    every = np.concatenate(indices)
    alpha, log_alpha, tpr = (values[every] for values in arrays)
    mus = mu_of_tests(alpha, log_alpha, tpr, np.repeat(deltas, sizes))
    return np.split(mus, np.cumsum(sizes)[:-1])


def _largest_mus(groups: list[_Tests], deltas: list[float]) -> list[float]:
    """max_j μ_j(δ) over the tests of :func:`_candidates`, for each δ, evaluating few of them.

    μ(α, t), the smallest μ whose Ŝ_μ reaches t at α, is non-decreasing in t
    and non-increasing in α (Ŝ_μ(α) increases in both μ and α), so on a block
    of tests μ(min α, max t) bounds every μ_j from above. Blocks whose bound
    is below the largest μ evaluated so far (less a margin for rounding)
    cannot hold the maximum: from the coarsest blocks down, those that remain
    are split into the next finer ones, and the tests of the finest blocks
    left are evaluated. The maximum known is raised on the way by the first
    test of every remaining block of :data:`_SAMPLED_BLOCK`. The value is that
    of evaluating every test. The δ's go through each step together (one
    evaluation of their tests), each with its own blocks.
    """
    values = np.asarray(deltas, dtype=float)
    best = np.full(values.size, -math.inf)

    def raise_best(found: list[np.ndarray]) -> None:
        for number, mus in enumerate(found):
            if mus.size:
                best[number] = max(best[number], float(np.max(mus)))

    def reach() -> np.ndarray:
        return np.where(np.isfinite(best), best - 1e-9 * (1.0 + np.abs(best)), best)

    # kept[g][i]: the blocks of group g still open for δ_i, at the current level
    kept = [[np.arange(group.levels[0][0].size) for _ in deltas] for group in groups]
    for group, blocks in zip(groups, kept, strict=True):
        tests = [open_blocks * _BLOCKS[0] for open_blocks in blocks]
        raise_best(_mus_at((group.alpha, group.log_alpha, group.tpr), tests, values))
    for level, size in enumerate(_BLOCKS):
        if size == _SAMPLED_BLOCK:
            for group, blocks in zip(groups, kept, strict=True):
                tests = [open_blocks * size for open_blocks in blocks]
                raise_best(_mus_at((group.alpha, group.log_alpha, group.tpr), tests, values))
        finer = _BLOCKS[level + 1] if level + 1 < len(_BLOCKS) else 1
        for number, group in enumerate(groups):
            bounds = _mus_at(group.levels[level], kept[number], values)
            limit = group.levels[level + 1][0].size if finer > 1 else group.alpha.size
            margins = reach()
            for i, (blocks, bound) in enumerate(zip(kept[number], bounds, strict=True)):
                blocks = blocks[~(bound < margins[i])]  # NaN bounds are kept
                children = (blocks[:, None] * (size // finer) + np.arange(size // finer)).ravel()
                kept[number][i] = children[children < limit]
    for group, tests in zip(groups, kept, strict=True):
        raise_best(_mus_at((group.alpha, group.log_alpha, group.tpr), tests, values))
    return [float(value) for value in best]


def fit(steep: _steep.SteepCurve, directions: list[_steep.Direction], delta_tail: float) -> float:
    """The tight μ of the pessimistic steep curve with failure probability ``delta_tail``.

    μ = the largest μ_j(δ_tail) over every test j of the curve
    (:func:`gaussdp.report.tight_mu.mu_of_tests`, maximised by
    :func:`_largest_mus`), so that f ≥ G_μ ⊗ f_{0,δ_tail} holds on the whole
    certified curve.
    """
    return fit_many(steep, directions, [delta_tail])[delta_tail]


def fit_many(
    steep: _steep.SteepCurve, directions: list[_steep.Direction], delta_tails: list[float]
) -> dict[float, float]:
    """:func:`fit` at several δ_tail, the tests' blocks summarised once."""
    for value in delta_tails:
        if value < steep.floor:
            raise InvalidParameterError(
                f"delta_tail must be at least the accountant's numerical floor {steep.floor:.3g} "
                f"(mass at infinite loss plus certified slack), got {value!r}"
            )
    groups = _test_groups(steep, directions)
    found = _largest_mus(groups, list(delta_tails))
    return {value: float(max(mu, 0.0)) for value, mu in zip(delta_tails, found, strict=True)}


def why_infinite(
    steep: _steep.SteepCurve, directions: list[_steep.Direction], failure: float
) -> RoundingLimit | None:
    """Why μ is ∞ with failure probability ``failure``, and which δ_tail (if any) helps.

    A test needs μ = ∞ when G_μ ⊗ f_{0,δ} can never reach it: its
    true-positive rate is (numerically) 1 at a false-positive rate α < 1 − δ,
    or it has α = 0 and a true-positive rate above δ. The first needs
    δ ≥ 1 − α, the second δ ≥ t; a larger δ_tail is suggested only if it is
    at most :data:`LARGEST_SUGGESTED_DELTA_TAIL` and :func:`fit` with it
    (rounded up as printed) really gives a finite μ.
    """
    from gaussdp.report.render import up

    alpha, log_alpha, tpr = _candidates(steep, directions)
    blocking = mu_of_tests(alpha, log_alpha, tpr, failure) == math.inf
    if not np.any(blocking):
        return None
    at_zero = blocking & np.isneginf(log_alpha)
    positive = blocking & ~np.isneginf(log_alpha)
    needed = 0.0
    if np.any(at_zero):
        needed = float(np.max(tpr[at_zero]))
    log_alpha_zero = -math.inf
    if np.any(positive):
        log_alpha_zero = float(np.min(log_alpha[positive]))
        needed = max(needed, float(np.max(-np.expm1(log_alpha[positive]))))
    info = RoundingLimit(log_alpha_zero, steep.slack + steep.excess, needed)
    if needed < LARGEST_SUGGESTED_DELTA_TAIL:
        candidate = max(float(up(needed * (1.0 + 1e-9), 2)), steep.floor)
        if candidate < 1.0:
            mu = fit(steep, directions, candidate)
            if math.isfinite(mu):
                info = RoundingLimit(log_alpha_zero, info.allowance, needed, candidate, mu)
    return info


def _cut_sets_mu(steep: _steep.SteepCurve, mu: float, failure: float, rows) -> RoundingLimit | None:
    """A :class:`RoundingLimit` if the cut at TPR 1 sets μ above what every ε row needs."""
    log_cut = steep.log_alpha_one
    if log_cut is None:
        return None
    at_cut = float(
        mu_of_tests(np.array([math.exp(log_cut)]), np.array([log_cut]), np.ones(1), failure)[0]
    )
    needed = max((row.mu_at_delta for row in rows), default=0.0)
    if at_cut < mu * (1.0 - 1e-9) or not mu > needed * (1.0 + 1e-6):
        return None
    return RoundingLimit(log_cut, steep.slack + steep.excess)


# ---------------------------------------------------------------------------
# Building a report
# ---------------------------------------------------------------------------


def _epsilon_rows(accounting, deltas, mu: float, delta_tail: float) -> tuple[EpsilonRow, ...]:
    lower, upper = accounting._epsilon_bounds(np.asarray(deltas, dtype=float))
    rows = []
    for d, lo, up in zip(deltas, np.atleast_1d(lower), np.atleast_1d(upper), strict=True):
        if d > delta_tail:
            share = (d - delta_tail) / (1.0 - delta_tail)
            epsilon_mu = float(gdp.epsilon(mu, share)) if not math.isinf(mu) else math.inf
        else:
            epsilon_mu = math.inf
        needed = float(gdp.mu(float(up), d)) if math.isfinite(up) else math.inf
        rows.append(EpsilonRow(float(d), float(up), float(lo), epsilon_mu, needed))
    return tuple(rows)


def _table(beta, beta_optimistic, mu: float, delta_tail: float, alpha_star: float):
    alphas = np.array([*TABLE_ALPHAS, alpha_star])
    pess = np.asarray(beta(alphas), dtype=float)
    opt = np.maximum(np.asarray(beta_optimistic(alphas), dtype=float), pess)
    guar = np.minimum(_guarantee_beta(mu, delta_tail, alphas), pess)
    labels = [""] * len(TABLE_ALPHAS) + ["alpha* (max advantage)"]
    return tuple(
        TableRow(float(a), float(b), float(o), float(g), label)
        for a, b, o, g, label in zip(alphas, pess, opt, guar, labels, strict=True)
    )


def _check_deltas(deltas) -> tuple[float, ...]:
    """The δ at which ε is reported: one real number or a sequence of them, each in (0, 1)."""
    wanted = "a real number in (0, 1) or a sequence of them"
    if isinstance(deltas, (str, bytes)):
        raise InvalidParameterError(f"deltas must be {wanted}, got {deltas!r}")
    try:
        items = tuple(deltas)
    except TypeError:
        items = (deltas,)
    values = []
    for d in items:
        if isinstance(d, (str, bytes)):
            raise InvalidParameterError(f"deltas must be {wanted}, got {deltas!r}")
        try:
            values.append(float(d))
        except (TypeError, ValueError):
            raise InvalidParameterError(f"deltas must be {wanted}, got {deltas!r}") from None
    values = tuple(values)
    if not values:
        raise InvalidParameterError("deltas must contain at least one delta in (0, 1), got none")
    check_real("delta", np.array(values), low=0.0, high=1.0, low_open=True, high_open=True)
    return values


def _profiles(accounting, kind: str):
    """The accountant's own profiles (the report reads the numbers it certified)."""
    guarantee = accounting._guarantee
    return guarantee.upper if kind == "upper" else guarantee.lower


def _check_delta_tail(delta_tail) -> float:
    return float(
        check_real("delta_tail", delta_tail, low=0.0, high=1.0, low_open=True, high_open=True)
    )


def _steep_of(accounting):
    directions = [_steep.direction(p) for p in _profiles(accounting, "upper")]
    steep = _steep.steep_curve(directions)
    # Beyond the hull, μ reads only the tests whose α underflows (_candidates): keep those.
    return [_underflowing(d) for d in directions], steep


def _underflowing(direction: _steep.Direction) -> _steep.Direction:
    """The tests of a direction whose α is below :data:`_UNDERFLOW_ALPHA`, without losses.

    All that :func:`fit` and :func:`why_infinite` read besides the hull; the
    floor, slack and excess are kept. Frees the direction's full arrays
    (millions of tests on long runs) once the hull is built.
    """
    tiny = direction.log_alpha < math.log(_UNDERFLOW_ALPHA)
    return replace(
        direction,
        losses=np.empty(0),
        alpha=direction.alpha[tiny],
        log_alpha=direction.log_alpha[tiny],
        tpr=direction.tpr[tiny],
    )


def _reaching(accounting, delta_tail: float):
    """The accounting and its steep curve, with the floor at most δ_tail / FLOOR_MARGIN.

    Also low enough for every δ_tail of the μ table. Composes (again, if the
    upper bounds were already computed) exponentially tilted when the
    engine's own allowance is what keeps the floor above that; mass the
    mechanism itself puts at infinite loss is left as it is (it makes μ
    infinite below it).
    """
    target = min(delta_tail, *MU_TABLE_DELTA_TAILS) / FLOOR_MARGIN
    accounting = accounting.with_delta_floor(target)  # no work if it already reaches it
    directions, steep = _steep_of(accounting)
    return accounting, directions, steep


def _mu_rows(mu_for, delta_tail: float, floor: float, mu_tail) -> tuple[MuRow, ...]:
    """μ at :data:`MU_TABLE_DELTA_TAILS` and the report's δ_tail, then the tail limit."""
    rows = []
    for value in sorted({*MU_TABLE_DELTA_TAILS, delta_tail} - {0.0}, reverse=True):
        if value >= floor:
            rows.append(MuRow(value, float(mu_for(value))))
        else:
            rows.append(MuRow(value, None, "below the accountant's floor"))
    if mu_tail is not None:
        rows.append(MuRow(0.0, float(mu_tail), "tail limit"))
    return tuple(rows)


def _laplace_epsilon(mechanism, neighbouring) -> float | None:
    """ε of a description that is one Laplace mechanism (after flattening), else None."""
    leaves = acc_module._flatten(mechanism, neighbouring)
    if len(leaves) != 1:
        return None
    leaf, count = next(iter(leaves.items()))
    if count != 1 or not isinstance(leaf, m.Laplace):
        return None
    factor = 2.0 if neighbouring is m.Neighbouring.REPLACE else 1.0
    return factor * leaf.sensitivity / leaf.scale


def from_accounting(
    accounting, *, deltas=DEFAULT_DELTAS, delta_tail=None, title: str | None = None
) -> Report:
    """The report of an :class:`~gaussdp.accountant.Accounting` (see :func:`report`)."""
    deltas = _check_deltas(deltas)
    if delta_tail is not None:
        delta_tail = _check_delta_tail(delta_tail)
    mechanism = accounting.mechanism
    title = title or mechanism.describe()
    mu_tail = tail_mu(mechanism, accounting.neighbouring)
    guarantee = accounting._guarantee
    common = {
        "title": title,
        "mechanism": mechanism,
        "neighbouring": accounting.neighbouring,
        "method": accounting.method,
        "mu_tail": mu_tail,
    }
    if isinstance(guarantee, (acc_module._PerfectPrivacy, acc_module._GaussianGuarantee)):
        # Closed form: the curve is G_μ itself, strictly (delta_tail is 0 whatever was asked).
        mu = 0.0 if isinstance(guarantee, acc_module._PerfectPrivacy) else float(guarantee.mu)
        advantage = float(gdp.advantage(mu))

        def exact_beta(alpha, mu=mu):
            return np.asarray(gdp.beta(mu, alpha), dtype=float)

        alpha_star = 0.5 * (1.0 - advantage)
        return Report(
            **common,
            mu=mu,
            delta_tail=0.0,
            epsilon_tail=math.inf,
            delta_floor=0.0,
            regret=0.0,
            advantage=advantage,
            advantage_lower=advantage,
            advantage_mu=advantage,
            alpha_star=alpha_star,
            tier=1,
            epsilons=_epsilon_rows(accounting, deltas, mu, 0.0),
            table=_table(exact_beta, exact_beta, mu, 0.0, alpha_star),
            exact=True,
            _beta=exact_beta,
            _beta_optimistic=exact_beta,
            mu_by_delta_tail=_mu_rows(lambda _: mu, DEFAULT_DELTA_TAIL, 0.0, mu_tail),
            accounting=accounting,
            _mu_for=lambda _: mu,
        )
    exact = isinstance(guarantee, acc_module._ExactAtomsGuarantee)
    groups = pure.pure_dp_groups(mechanism, accounting.neighbouring) if exact else None
    single_pure = groups is not None and list(groups.values()) == [1]
    laplace = None if exact else _laplace_epsilon(mechanism, accounting.neighbouring)
    strict_closed_form = groups is not None or laplace is not None
    if delta_tail is None:
        failure = 0.0 if strict_closed_form else DEFAULT_DELTA_TAIL
    else:
        failure = delta_tail
    if groups is not None or failure == 0.0:
        upper_directions, steep_up = _steep_of(accounting)
    else:
        accounting, upper_directions, steep_up = _reaching(accounting, failure)
        if delta_tail is None and steep_up.floor > failure:
            # The mechanism itself puts more mass than that at infinite privacy loss (an
            # (ε, δ) part): no μ holds with a smaller failure probability.
            failure = steep_up.floor
    lower = _profiles(accounting, "lower")
    state = {"accounting": accounting, "directions": upper_directions, "steep": steep_up}
    known: dict[float, float] = {}
    if groups is None and failure > 0.0:
        wanted = {value for value in (*MU_TABLE_DELTA_TAILS, failure) if value >= steep_up.floor}
        known = fit_many(steep_up, upper_directions, sorted(wanted))

    def numerical_mu(value: float) -> float:
        if value in known:
            return known[value]
        if value < state["steep"].floor:
            _, directions, steep = _reaching(state["accounting"], value)
            return fit(steep, directions, value)
        return fit(state["steep"], state["directions"], value)

    regret_value = None
    if groups is not None:
        # Pure-DP compositions: μ from the exact curve in log space (the profile's
        # TPRs near 1 have lost the digits that decide μ for large ε).
        def mu_for(value: float) -> float:
            return pure.pure_dp_mu(groups, value)

        mu = mu_for(failure)
        if failure == 0.0 and single_pure:
            regret_value = pure.pure_dp_regret(next(iter(groups)), mu)
    elif laplace is not None:
        # One Laplace mechanism: its exact curve gives a strict μ (Dong, Roth & Su 2022,
        # Example of the Laplace trade-off function); a δ_tail can only lower it.
        strict = pure.laplace_mu(laplace)

        def mu_for(value: float) -> float:
            if value == 0.0 or value < state["steep"].floor:
                return strict
            return min(strict, numerical_mu(value))

        mu = mu_for(failure)
    else:
        mu_for = numerical_mu
        mu = mu_for(failure)
    if regret_value is None:
        regret_value = profile_regret(steep_up.epsilons, steep_up.deltas, mu, failure)
        regret_value += ROUNDING_MARGIN
    advantage = steep_up.advantage
    advantage_lower = float(np.clip(_steep._profile_delta(lower, np.zeros(1))[0], 0.0, 1.0))

    def optimistic_beta(alpha, lower=lower):
        return _steep.profile_curve_beta(lower, alpha)

    alpha_star = 0.5 * (1.0 - advantage)
    epsilon_tail = float(gdp.epsilon(mu, failure)) if failure > 0.0 else math.inf
    rows = _epsilon_rows(accounting, deltas, mu, failure)
    limit = None
    if math.isinf(mu):
        epsilon_tail = math.inf
        if groups is None:
            limit = why_infinite(steep_up, upper_directions, failure)
    elif groups is None and laplace is None:
        limit = _cut_sets_mu(steep_up, mu, failure, rows)
    table_floor = 0.0 if groups is not None else steep_up.floor
    return Report(
        **common,
        mu=mu,
        delta_tail=failure,
        epsilon_tail=epsilon_tail,
        delta_floor=steep_up.floor,
        regret=min(regret_value, 1.0),
        advantage=advantage,
        advantage_lower=min(advantage_lower, advantage),
        advantage_mu=_guarantee_advantage(mu, failure),
        alpha_star=alpha_star,
        tier=1 if regret_value <= TIER_I_REGRET else 2,
        epsilons=rows,
        table=_table(steep_up.beta_at, optimistic_beta, mu, failure, alpha_star),
        exact=exact,
        _beta=steep_up.beta_at,
        _beta_optimistic=optimistic_beta,
        rounding_limit=limit,
        mu_by_delta_tail=_mu_rows(mu_for, failure, table_floor, mu_tail),
        accounting=accounting,
        _mu_for=mu_for,
    )


def report(
    mechanism,
    *,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    delta_tail: float | None = None,
    neighbouring: m.Neighbouring | None = None,
    accuracy: float | None = None,
    grid_spacing: float | None = None,
    progress: Callable[[str], None] | None = None,
    title: str | None = None,
) -> Report:
    r"""Report a mechanism's privacy as μ-GDP (Gomez et al. 2025, §4): μ, regret, tail, tier.

    Parameters
    ----------
    mechanism : Mechanism, Pipeline or Accounting
        What to report; an :class:`~gaussdp.accountant.Accounting` (from
        :func:`gaussdp.account`) is used as it is.
    deltas : sequence of float
        δ ∈ (0, 1) at which ε is reported, as upper and lower bounds
        (default 1e-5, 1e-6, 1e-9).
    delta_tail : float, optional
        The failure probability δ_tail ∈ (0, 1) that goes with μ (default
        :data:`DEFAULT_DELTA_TAIL` = 1e-10; closed forms that are exactly
        μ-GDP report 0). The accountant is asked for a floor 100 times below
        min(δ_tail, 1e-12).
    neighbouring, accuracy, grid_spacing, progress
        Passed to :func:`gaussdp.account` (not allowed with an Accounting).
    title : str, optional
        Default: the pipeline's name, or the mechanism's description.

    Returns
    -------
    Report

    Examples
    --------
    >>> from gaussdp import DPSGD, Gaussian, PureDP, Repeated
    >>> from gaussdp.report import report
    >>> r = report(Repeated(Gaussian(4.0), 16))   # exactly μ-GDP with μ = √16/4
    >>> r.mu, r.regret, r.delta_tail, r.tier
    (1.0, 0.0, 0.0, 1)
    >>> r = report(PureDP(1.0))                   # Proposition 6.1: μ = −2Φ⁻¹(1/(1+e))
    >>> round(r.mu, 6), round(r.regret, 6), r.delta_tail
    (1.232035, 0.057546, 0.0)
    >>> r = report(DPSGD(9.4, 0.32768, 2000))     # De et al.'s CIFAR-10 run
    >>> round(r.mu, 2), round(r.regret, 4), r.delta_tail, r.tier, round(r.mu_tail, 2)
    (1.57, 0.0011, 1e-10, 1, 4.76)
    """
    if isinstance(mechanism, acc_module.Accounting):
        given = {
            "neighbouring": neighbouring,
            "accuracy": accuracy,
            "grid_spacing": grid_spacing,
            "progress": progress,
        }
        extra = sorted(name for name, value in given.items() if value is not None)
        if extra:
            raise InvalidParameterError(
                f"{', '.join(extra)} cannot be changed for an existing Accounting; "
                "pass the mechanism instead"
            )
        return from_accounting(mechanism, deltas=deltas, delta_tail=delta_tail, title=title)
    if isinstance(mechanism, m.Pipeline) and title is None:
        title = mechanism.name or None
    options = {"neighbouring": neighbouring, "grid_spacing": grid_spacing, "progress": progress}
    if accuracy is not None:
        options["accuracy"] = accuracy
    accounting = acc_module.account(mechanism, **options)
    return from_accounting(accounting, deltas=deltas, delta_tail=delta_tail, title=title)
