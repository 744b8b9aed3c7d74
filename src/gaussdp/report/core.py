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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from gaussdp import gdp
from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError, check_real
from gaussdp.pld.leaves import leaves
from gaussdp.report import _steep, pure
from gaussdp.report import render as rendering
from gaussdp.report.defaults import (
    DEFAULT_DELTA_TAIL,
    DEFAULT_DELTAS,
    FLOOR_MARGIN,
    MU_TABLE_DELTA_TAILS,
    TABLE_ALPHAS,
    TIER_I_REGRET,
)
from gaussdp.report.fit import (
    _UNDERFLOW_ALPHA,
    RoundingLimit,
    _cut_sets_mu,
    _guarantee_advantage,
    _guarantee_beta,
    fit,
    fit_many,
    why_infinite,
)
from gaussdp.report.regret import ROUNDING_MARGIN, profile_regret
from gaussdp.report.render import wording
from gaussdp.report.tail import tail_mu

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
    "from_accounting",
]


class EpsilonRow(NamedTuple):
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


class TableRow(NamedTuple):
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


class MuRow(NamedTuple):
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
    caveats : tuple of str
        What the bounds are where the science stops (a shuffled run: upper
        bounds without amplification, Chua et al.'s lower bounds, and how the
        lower bound compares with the same run accounted as if Poisson);
        empty for every other mechanism.
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
    caveats: tuple[str, ...] = ()
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
        return rendering.to_dict(self)

    def to_json(self) -> str:
        """The report as indented JSON."""
        return rendering.to_json(self)

    def to_text(self) -> str:
        """The report as plain text."""
        return rendering.to_text(self)

    def to_markdown(self) -> str:
        """The report as Markdown (a table that can be pasted into a paper)."""
        return rendering.to_markdown(self)

    def to_html(self) -> str:
        """A self-contained HTML page with the curve against G_μ (inline SVG)."""
        return rendering.to_html(self)

    def render(self, output_format: str = "text") -> str:
        """The report in ``output_format``: "text", "json", "markdown" or "html"."""
        return rendering.render(self, output_format)

    def __str__(self) -> str:
        return self.to_text()


# ---------------------------------------------------------------------------
# ---------------------------------------------------------------------------
# Building a report
# ---------------------------------------------------------------------------


def _epsilon_rows(accounting, deltas, mu: float, delta_tail: float) -> tuple[EpsilonRow, ...]:
    lower, upper = accounting.epsilon_bounds(np.asarray(deltas, dtype=float), warn=False)
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
    return accounting.profiles(kind)


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
    return direction._replace(
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


def _caveats(accounting, rows: tuple[EpsilonRow, ...]) -> tuple[str, ...]:
    """The accounting's caveats, and for a shuffled run one line comparing it with Poisson.

    The line says, at the first reported δ where it happens, that the
    certified lower bound exceeds what Poisson accounting (q = 1/t) gives for
    the same run; else that it does not at any reported δ.
    """
    poisson = accounting.as_if_poisson()
    if poisson is None:
        return tuple(accounting.caveats)
    deltas = np.array([row.delta for row in rows])
    claimed = np.atleast_1d(poisson.epsilon(deltas))
    for row, epsilon in zip(rows, claimed, strict=True):
        if row.epsilon_lower > epsilon:
            lower, poisson_epsilon = wording.down(row.epsilon_lower, 4), wording.up(epsilon, 4)
            line = (
                f"at delta = {row.delta:g} the certified lower bound epsilon >= {lower} "
                f"exceeds the {poisson_epsilon} that Poisson accounting (q = 1/t) gives for the "
                "same run: the Poisson figure understates this run's privacy loss"
            )
            break
    else:
        lower, poisson_epsilon = wording.down(rows[0].epsilon_lower, 4), wording.up(claimed[0], 4)
        line = (
            "the certified lower bound does not exceed what Poisson accounting (q = 1/t) "
            f"gives for the same run at any reported delta (at delta = {rows[0].delta:g}: "
            f"{lower} against {poisson_epsilon}); whether this shuffled run is as private as "
            "Poisson is not known"
        )
    return (*accounting.caveats, line)


def _laplace_epsilon(mechanism, neighbouring) -> float | None:
    """ε of a description that is one Laplace mechanism (after flattening), else None."""
    parts = leaves(mechanism, neighbouring)
    if len(parts) != 1:
        return None
    leaf, count = next(iter(parts.items()))
    if count != 1 or not isinstance(leaf, m.Laplace):
        return None
    factor = 2.0 if neighbouring is m.Neighbouring.REPLACE else 1.0
    return factor * leaf.sensitivity / leaf.scale


def from_accounting(
    accounting,
    *,
    deltas=DEFAULT_DELTAS,
    delta_tail=None,
    title: str | None = None,
    neighbouring=None,
    accuracy=None,
    grid_spacing=None,
    progress=None,
) -> Report:
    """The report of an :class:`~gaussdp.accountant.Accounting` (see :func:`gaussdp.report.report`).

    Reads only the accounting's public members: ``mechanism``,
    ``neighbouring``, ``method``, ``mu`` (not None where the result is exactly
    μ-GDP), ``exact_atoms``, ``profiles``, ``epsilon_bounds`` and
    ``with_delta_floor``. ``neighbouring``, ``accuracy``, ``grid_spacing`` and
    ``progress`` are refused: they belong to the accounting already made.
    """
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
    deltas = _check_deltas(deltas)
    if delta_tail is not None:
        delta_tail = _check_delta_tail(delta_tail)
    mechanism = accounting.mechanism
    common_accounting = accounting
    title = title or mechanism.describe()
    mu_tail = tail_mu(mechanism, accounting.neighbouring)
    common = {
        "title": title,
        "mechanism": mechanism,
        "neighbouring": accounting.neighbouring,
        "method": accounting.method,
        "mu_tail": mu_tail,
    }
    if accounting.mu is not None:
        # Closed form: the curve is G_μ itself, strictly (delta_tail is 0 whatever was asked).
        mu = float(accounting.mu)
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
    exact = accounting.exact_atoms
    # The curve's work (the steep curve, μ, the regret, the table) reads every atom of the
    # upper curve, many times: it is done on the grid the accuracy asks for. Where the
    # bounds are on a finer one (cheap, short runs), the ε rows come from them, as
    # epsilon_bounds gives them.
    curve_accounting = accounting.on_accuracy_grid()
    rows_accounting = accounting if curve_accounting is not accounting else None
    accounting = curve_accounting
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
            # More mass than that at infinite privacy loss (an (ε, δ) part, or what a
            # mechanism's own pair puts there for its numerics): no μ holds with a smaller
            # failure probability. The floor plus the default leaves the rest of the
            # mechanism the default failure probability; at the floor itself μ would be
            # that of the rest's strict tail (DP-SGD, σ = 1, q = 0.01, 1,000 steps, with
            # ApproxDP(0.1, 1e-8): μ = 0.817 at δ_tail = 1e-8, 0.522 at 1.01e-8; 100 epochs
            # of balls-in-bins, σ = 2, t = 1,000, whose pairs carry ~2e-12 of FFT rounding
            # allowance per epoch at infinite loss: 1.518 at 2.04e-10, 0.1686 at 3.04e-10).
            failure = min(steep_up.floor + DEFAULT_DELTA_TAIL, 0.5 * (1.0 + steep_up.floor))
    if steep_up.floor >= 1.0:
        raise InvalidParameterError(
            "no μ-GDP guarantee can be reported for this mechanism: its certified upper "
            f"bound puts all of its mass at infinite privacy loss (floor {steep_up.floor:.3g}), "
            "so every epsilon_bounds upper bound is inf (a random allocation with too little "
            "noise for its grid, for one); its lower bounds still hold"
        )
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
    rows = _epsilon_rows(rows_accounting or accounting, deltas, mu, failure)
    limit = None
    if math.isinf(mu):
        epsilon_tail = math.inf
        if groups is None:
            limit = why_infinite(steep_up, upper_directions, failure)
    elif groups is None and laplace is None:
        limit = _cut_sets_mu(steep_up, mu, failure, rows)
    table_floor = 0.0 if groups is not None else steep_up.floor
    return Report(
        caveats=_caveats(common_accounting, rows),
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
