"""Calibration: safe side, closeness, and agreement with independent references.

References: the μ-GDP closed forms evaluated with mpmath (Gaussian compositions
are exactly μ-GDP with μ = √T/σ), the Laplace trade-off curve in closed form
(Dong, Roth & Su 2022, Example of §2), and dp_accounting's PLD accountant.
"""

import dataclasses
import functools
import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaussdp import DPSGD, Gaussian, Laplace, PureDP, Repeated, account, calibrate
from gaussdp.calibrate import (
    Advantage,
    CalibrationError,
    EpsilonDelta,
    Mu,
    Predicate,
    TPRAtFPR,
)
from tests import references


def mu_for(epsilon, delta):
    """μ with δ_μ(ε) = δ, by mpmath bisection (δ_μ(ε) increases with μ)."""
    return references.bisect(
        lambda mu: references.gaussian_delta(mu, epsilon) - delta, 1e-6, 60, iterations=200
    )


# --------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize(("steps", "epsilon", "delta"), [(1, 1.0, 1e-5), (100, 3.0, 1e-6)])
def test_gaussian_composition_matches_closed_form(steps, epsilon, delta):
    result = calibrate.parameter(
        lambda sigma: Repeated(Gaussian(sigma), steps),
        (epsilon, delta),
        bracket=(0.1, 100.0),
        name="sigma",
    )
    exact = float(mpmath.sqrt(steps) / mu_for(epsilon, delta))
    # Safe side: at least the exact σ (up to the closed form's 1e-11 relative error) ...
    assert result.value >= exact * (1 - 1e-9)
    # ... and close: the failing neighbour is below it, within the tolerance.
    assert result.failing_value < result.value
    assert result.failing_value <= exact * (1 + 1e-9)
    assert result.value - result.failing_value <= 2 * calibrate.DEFAULT_RTOL * result.value
    assert result.achieved <= epsilon < result.failing_achieved


def test_mu_target_gaussian_closed_form():
    result = calibrate.parameter(
        lambda sigma: Repeated(Gaussian(sigma), 16), Mu(0.5), bracket=(1.0, 100.0)
    )
    assert result.value == pytest.approx(8.0, rel=2e-5)
    assert result.value >= 8.0 * (1 - 1e-12)
    assert result.achieved <= 0.5


def test_advantage_target_gaussian():
    advantage = 0.2
    mu = 2 * mpmath.sqrt(2) * mpmath.erfinv(advantage)  # 2Φ(μ/2) − 1 = a
    result = calibrate.parameter(Gaussian, Advantage(advantage), bracket=(0.1, 50.0))
    assert result.value == pytest.approx(float(1 / mu), rel=3e-5)
    assert result.value >= float(1 / mu) * (1 - 1e-9)


def test_tpr_target_gaussian():
    tpr, fpr = 0.05, 1e-3
    mu = mpmath.sqrt(2) * (mpmath.erfinv(2 * tpr - 1) - mpmath.erfinv(2 * fpr - 1))
    result = calibrate.parameter(Gaussian, TPRAtFPR(tpr, fpr), bracket=(0.1, 50.0))
    assert result.value == pytest.approx(float(1 / mu), rel=3e-5)
    assert result.value >= float(1 / mu) * (1 - 1e-9)


def test_integer_parameter_steps_gaussian():
    # Repeated(Gaussian(σ), T) is √T/σ-GDP: the largest T with μ ≤ μ* is ⌊(σμ*)²⌋.
    sigma, epsilon, delta = 10.0, 2.0, 1e-5
    exact_steps = int(mpmath.floor((sigma * mu_for(epsilon, delta)) ** 2))
    result = calibrate.parameter(
        lambda steps: Repeated(Gaussian(sigma), steps),
        EpsilonDelta(epsilon, delta),
        bracket=(1, 10_000),
        integer=True,
    )
    assert (result.value, result.failing_value) == (exact_steps, exact_steps + 1)
    assert isinstance(result.value, int)


def test_direction_is_detected():
    # Larger ε of a pure-DP step is less private: detected without more_private.
    result = calibrate.parameter(
        lambda epsilon: Repeated(PureDP(epsilon), 10), (1.0, 1e-6), bracket=(0.001, 1.0)
    )
    assert result.failing_value > result.value
    assert account(Repeated(PureDP(result.value), 10)).epsilon(1e-6) <= 1.0


# --------------------------------------------------------------------------- numerical path


def _dp_accounting_epsilon(sigma, q, steps, delta):
    import dp_accounting
    from dp_accounting import pld

    # 1e-3 nats puts its ε within 1e-4 (relative) of the 1e-4 grid's here: far inside the
    # 2e-3 the test asks, and ten times cheaper.
    accountant = pld.PLDAccountant(value_discretization_interval=1e-3)
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps))
    return accountant.get_epsilon(delta)


def test_dpsgd_cifar10_against_dp_accounting():
    q, steps = 0.32768, 2000
    result = calibrate.noise_multiplier((8.0, 1e-5), sampling_probability=q, steps=steps)
    # The re-check is exactly what a user computes.
    assert account(DPSGD(result.value, q, steps)).epsilon(1e-5) == result.achieved <= 8.0
    assert account(DPSGD(result.failing_value, q, steps)).epsilon(1e-5) > 8.0
    assert result.relative_gap <= 2 * calibrate.DEFAULT_RTOL
    # dp_accounting's (coarser, also pessimistic) PLD agrees to its accuracy.
    reference = _dp_accounting_epsilon(result.value, q, steps, 1e-5)
    assert reference == pytest.approx(8.0, rel=2e-3)
    assert _dp_accounting_epsilon(result.value * 0.99, q, steps, 1e-5) > 8.0


def test_tpr_upper_laplace_against_closed_form():
    # Laplace(b=1/μ) trade-off (Dong, Roth & Su 2022): 1 − e^μ α for α < e^{−μ}/2,
    # e^{−μ}/(4α) up to 1/2, e^{−μ}(1 − α) beyond.
    mu = 1.5
    accounting = account(Laplace(1 / mu))
    assert accounting.grid_spacing is not None  # the numerical path
    for alpha in (1e-4, 0.05, 0.2, 0.7):
        if alpha < math.exp(-mu) / 2:
            beta = 1 - math.exp(mu) * alpha
        elif alpha <= 0.5:
            beta = math.exp(-mu) / (4 * alpha)
        else:
            beta = math.exp(-mu) * (1 - alpha)
        bound = calibrate.tpr_upper(accounting, alpha)
        assert bound >= 1 - beta - 1e-12
        assert bound == pytest.approx(1 - beta, abs=2e-4)


def test_tpr_upper_of_a_gaussian_through_the_numerical_path_at_every_fpr():
    # A Gaussian composition on the numerical path (q = 1 Poisson sampling is the
    # mechanism itself): the bound holds and is tight from FPR 1e-10 to 0.9 against
    # the closed form 1 − G_μ(α), computed in 50 digits.
    from gaussdp import PoissonSubsampled

    sigma = 1.0
    accounting = account(Repeated(PoissonSubsampled(Gaussian(sigma), 1.0), 4))
    assert accounting.grid_spacing is not None
    mu = 2.0 / sigma
    for alpha in (1e-10, 1e-4, 0.05, 0.5, 0.9):
        exact = 1 - float(references.gaussian_beta(mu, alpha))
        bound = calibrate.tpr_upper(accounting, alpha)
        assert exact - 1e-12 <= bound <= exact + 2e-4


def test_predicate_target():
    target = Predicate(lambda a: a.delta(1.0) <= 1e-3, "delta(1) <= 1e-3")
    result = calibrate.parameter(Gaussian, target, bracket=(0.1, 10.0), more_private="high")
    assert account(Gaussian(result.value)).delta(1.0) <= 1e-3
    assert account(Gaussian(result.failing_value)).delta(1.0) > 1e-3
    assert result.achieved is None
    mu = mu_for(1.0, 1e-3)
    assert result.value == pytest.approx(float(1 / mu), rel=3e-5)


@settings(max_examples=15, deadline=None)
@given(
    steps=st.integers(1, 10_000),
    epsilon=st.floats(0.05, 20.0),
    log_delta=st.floats(-12.0, -2.0),
)
def test_property_safe_and_close(steps, epsilon, log_delta):
    delta = 10.0**log_delta
    result = calibrate.parameter(
        lambda sigma: Repeated(Gaussian(sigma), steps),
        (epsilon, delta),
        bracket=(1e-3, 1e5),
        more_private="high",
    )
    assert result.achieved <= epsilon
    assert result.failing_achieved > epsilon
    assert result.failing_value < result.value


# --------------------------------------------------------------------------- bad input


def test_unreachable_target_says_what_was_tried():
    with pytest.raises(CalibrationError, match=r"unreachable.*best value reached: epsilon ="):
        calibrate.parameter(lambda s: Repeated(Gaussian(s), 100), (0.01, 1e-9), bracket=(0.1, 10.0))


def test_noise_multiplier_unreachable():
    with pytest.raises(CalibrationError, match=r"unreachable.*noise_multiplier = 1\.0"):
        calibrate.noise_multiplier(
            (0.01, 1e-5), sampling_probability=0.01, steps=100, bracket=(0.5, 1.0)
        )


def test_bracket_that_does_not_bracket():
    with pytest.raises(CalibrationError, match="does not bracket"):
        calibrate.parameter(
            lambda s: Repeated(Gaussian(s), 4),
            (8.0, 1e-5),
            bracket=(10.0, 20.0),
            more_private="high",
        )
    with pytest.raises(CalibrationError, match="does not bracket"):
        calibrate.parameter(lambda s: Repeated(Gaussian(s), 4), (8.0, 1e-5), bracket=(10.0, 20.0))


@pytest.mark.parametrize(
    ("make_target", "message"),
    [
        (lambda: EpsilonDelta(-1.0, 1e-5), "epsilon must be in"),
        (lambda: EpsilonDelta(float("nan"), 1e-5), "epsilon must be in .* got nan"),
        (lambda: EpsilonDelta(1.0, 0.0), "delta must be in"),
        (lambda: Mu(-0.5), "mu must be in"),
        (lambda: Advantage(1.5), "advantage must be in"),
        (lambda: TPRAtFPR(0.01, 0.05), "tpr must be greater than fpr"),
        (lambda: calibrate.as_target("eps=1"), "target must be"),
    ],
)
def test_bad_targets(make_target, message):
    with pytest.raises(ValueError, match=message):
        make_target()


def test_bad_arguments():
    with pytest.raises(ValueError, match="bracket must be"):
        calibrate.parameter(Gaussian, (1.0, 1e-5), bracket=(5.0, 1.0))
    with pytest.raises(ValueError, match="bracket must hold integers"):
        calibrate.parameter(Gaussian, (1.0, 1e-5), bracket=(1.5, 4), integer=True)
    with pytest.raises(ValueError, match="more_private"):
        calibrate.parameter(Gaussian, (1.0, 1e-5), bracket=(1, 4), more_private="up")
    with pytest.raises(ValueError, match="must return a gaussdp mechanism"):
        calibrate.parameter(lambda s: s, (1.0, 1e-5), bracket=(1, 4))
    with pytest.raises(ValueError, match="sampling_probability must be in"):
        calibrate.noise_multiplier((1.0, 1e-5), sampling_probability=0.0, steps=10)


# --------------------------------------------------------------------------- μ via the report


def _fake_report(accounting):
    """A stand-in for Accounting.gdp() on DP-SGD: μ = √T/σ (the q = 1 value) whatever q.

    (The runs below have q = 1/2: full-batch DP-SGD is a Gaussian composition, which
    calibration reads in closed form without a report.)
    """
    from types import SimpleNamespace

    run = accounting.mechanism
    return SimpleNamespace(
        mu=math.sqrt(run.steps) / run.noise_multiplier, regret=2e-3, delta_tail=1e-12
    )


def test_mu_target_reads_the_report(monkeypatch):
    from gaussdp.accountant import Accounting

    monkeypatch.setattr(Accounting, "gdp", _fake_report, raising=False)
    result = calibrate.noise_multiplier(Mu(0.5), sampling_probability=0.5, steps=25)
    assert result.value == pytest.approx(10.0, rel=2e-5)
    assert result.value >= 10.0
    assert "except with probability 1e-12" in result.describe()
    with pytest.raises(CalibrationError, match="unreachable"):
        calibrate.noise_multiplier(
            Mu(0.5, max_regret=1e-3), sampling_probability=0.5, steps=25, bracket=(1.0, 100.0)
        )
    capped = Mu(0.5, max_delta_tail=1e-15)
    assert str(capped) == "mu <= 0.5 with failure probability <= 1e-15"


def test_mu_target_without_the_report_says_so(monkeypatch):
    from gaussdp.accountant import Accounting

    monkeypatch.delattr(Accounting, "gdp", raising=False)
    with pytest.raises(ValueError, match=r"needs the tight mu of Accounting\.gdp\(\)"):
        calibrate.noise_multiplier(Mu(0.5), sampling_probability=0.5, steps=25)


# --------------------------------------------------------------------------- small targets


# δ(0) = 1e-5 for q = 0.01, T = 100, by the DP-SGD CLT (exact as the per-step loss
# vanishes, as it does at σ ≈ 4000): μ = 2Φ⁻¹(1/2 + δ/2) = q·√(T(e^{1/σ²} − 1)).
SIGMA_FOR_ADVANTAGE = 3989.42287


def _measure(target, sigma, q, steps):
    """The target's measure re-accounted from scratch, as calibration certifies it.

    Calibration accounts with a relative accuracy at every ε (``epsilon_scale=0``);
    the default accounting is absolute below ε = 1, so at a target of ε = 0.01 its
    upper bound may be up to 5e-5 above the calibrated one.
    """
    return target.measure(account(DPSGD(sigma, q, steps), epsilon_scale=0.0))


@functools.cache
def _calibrated(target, q, steps):
    """σ for the target without a bracket, once per question (several tests ask the same)."""
    return calibrate.noise_multiplier(target, sampling_probability=q, steps=steps)


@pytest.mark.parametrize(
    ("target", "q", "steps", "known"),
    [
        # CIFAR-10 setting: the closed-form guess's bracket used to fail on these.
        (EpsilonDelta(0.05, 1e-5), 0.32768, 2000, None),
        (EpsilonDelta(0.1, 1e-6), 0.32768, 2000, 532.058),
        (Advantage(0.01), 0.32768, 2000, 584.618),
        (TPRAtFPR(1.1e-4, 1e-4), 0.32768, 2000, None),
        (EpsilonDelta(0.01, 1e-5), 0.01, 100, None),
        (EpsilonDelta(0.001, 1e-5), 0.01, 100, None),
        (Advantage(0.001), 0.01, 100, None),
        # ε = 0 at δ > 0 is reachable with finite noise (δ(0) is the advantage).
        (EpsilonDelta(0.0, 1e-5), 0.01, 100, SIGMA_FOR_ADVANTAGE),
        (EpsilonDelta(1e-9, 1e-5), 0.01, 100, None),
    ],
)
def test_small_targets_without_a_bracket(target, q, steps, known):
    # The automatic bracket is certified with the accountant the search uses: the low
    # end of a bracket located with the coarse accountant can already meet the target.
    result = _calibrated(target, q, steps)
    threshold = target.threshold()
    assert _measure(target, result.value, q, steps) <= threshold
    assert _measure(target, result.failing_value, q, steps) > threshold
    assert result.failing_value < result.value
    assert result.relative_gap <= 2 * calibrate.DEFAULT_RTOL
    # σ one tolerance step below the answer (rounded down) fails too.
    below = result.value * (1 - 2 * calibrate.DEFAULT_RTOL)
    assert _measure(target, below, q, steps) > threshold
    if known is not None:
        assert result.value == pytest.approx(
            known, rel=1e-4 if known == SIGMA_FOR_ADVANTAGE else 2e-5
        )


def test_epsilon_zero_with_an_explicit_bracket_agrees():
    target = EpsilonDelta(0.0, 1e-5)
    given = calibrate.noise_multiplier(
        target, sampling_probability=0.01, steps=100, bracket=(1.0, 1e5)
    )
    automatic = _calibrated(target, 0.01, 100)
    assert given.value == pytest.approx(SIGMA_FOR_ADVANTAGE, rel=1e-4)
    assert automatic.value == pytest.approx(given.value, rel=2 * calibrate.DEFAULT_RTOL)


@pytest.mark.parametrize(
    ("target", "measure"),
    [
        (EpsilonDelta(0.01, 1e-5), lambda accountant: accountant.get_epsilon(1e-5)),
        (Advantage(0.001), lambda accountant: accountant.get_delta(0.0)),
    ],
)
def test_small_targets_against_dp_accounting(target, measure):
    import dp_accounting
    from dp_accounting import pld

    def reference(sigma):
        accountant = pld.PLDAccountant(value_discretization_interval=1e-6)
        event = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(sigma))
        accountant.compose(dp_accounting.SelfComposedDpEvent(event, 100))
        return measure(accountant)

    result = _calibrated(target, 0.01, 100)
    threshold = target.threshold()
    # dp_accounting's pessimistic PLD (a finer grid than ours here) agrees at the answer
    # and fails 1% below it.
    assert reference(result.value) == pytest.approx(threshold, rel=1e-3)
    assert reference(result.value) <= threshold * (1 + 1e-4)
    assert reference(0.99 * result.value) > threshold


@pytest.mark.parametrize(("q", "steps"), [(0.32768, 2000), (1.0, 1)])
def test_always_true_predicate_says_the_target_does_not_bind(q, steps):
    import warnings

    target = Predicate(lambda accounting: True, "always")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no stray numpy overflow warnings
        with pytest.raises(
            CalibrationError, match=r"met across the whole range tried.*least private end"
        ):
            calibrate.noise_multiplier(target, sampling_probability=q, steps=steps)


def test_target_met_at_every_sigma_says_so():
    # q = 0.01, T = 100: no attack's advantage exceeds 1 − 0.99^100 ≈ 0.634 for any σ.
    with pytest.raises(CalibrationError, match=r"met across the whole range tried.*0\.633968"):
        calibrate.noise_multiplier(Advantage(0.9), sampling_probability=0.01, steps=100)


# --------------------------------------------------------------------------- μ on the report path


def test_mu_target_on_the_real_report():
    q, steps, target = 0.05, 100, 0.5
    result = calibrate.noise_multiplier(Mu(target), sampling_probability=q, steps=steps)
    # Re-checked from scratch with the report (no closed form for subsampled runs).
    accounting = account(DPSGD(result.value, q, steps))
    assert accounting.mu is None
    assert accounting.gdp().mu == result.achieved <= target
    assert account(DPSGD(result.failing_value, q, steps)).gdp().mu > target
    assert result.failing_value < result.value
    assert result.relative_gap <= 2 * calibrate.DEFAULT_RTOL
    assert result.failing_reason.startswith("mu = ")
    assert "from the report" in result.describe()


def test_regret_cap_says_why_the_neighbour_fails():
    q, steps = 0.05, 100
    target = Mu(0.5, max_regret=0.01)
    result = calibrate.noise_multiplier(target, sampling_probability=q, steps=steps)
    values = result.report_values()
    assert values["regret"] <= 0.01 < values["failing_regret"]
    failing = account(DPSGD(result.failing_value, q, steps)).gdp()
    assert failing.regret == values["failing_regret"]
    # The neighbour fails on its regret, not on μ (which is below the target).
    assert result.failing_achieved <= 0.5
    assert result.failing_reason.startswith("regret = ")
    assert "mu = " not in result.failing_reason
    text = result.describe()
    assert "fails on: regret = " in text
    assert f"regret = {values['failing_regret']:.6g})" in text


def test_mu_target_uses_the_reports_fixed_default_failure_probability():
    # q = 0.01, T = 1000: when the report's failure probability followed the accountant's
    # floor, μ jumped near σ = 0.83 (0.89 at 0.833642, 1.36 at 0.833636) and this was
    # refused; at the fixed default δ_tail = 1e-10 it is monotone and answered.
    q, steps = 0.01, 1000
    result = calibrate.noise_multiplier(Mu(1.0), sampling_probability=q, steps=steps)
    met = account(DPSGD(result.value, q, steps)).gdp()
    failing = account(DPSGD(result.failing_value, q, steps)).gdp()
    assert met.delta_tail == failing.delta_tail == 1e-10
    assert met.mu <= 1.0 < failing.mu
    for sigma in (result.value * 1.0001, result.value * 1.01, result.value * 1.5):
        assert account(DPSGD(sigma, q, steps)).gdp().mu <= 1.0


def test_mu_target_with_a_fixed_failure_probability_is_monotone_and_verified():
    q, steps = 0.01, 1000
    result = calibrate.noise_multiplier(
        Mu(1.0, max_delta_tail=1e-10), sampling_probability=q, steps=steps
    )
    # Re-checked from scratch, at the same failure probability, against the report.
    met = account(DPSGD(result.value, q, steps)).gdp(delta_tail=1e-10)
    failing = account(DPSGD(result.failing_value, q, steps)).gdp(delta_tail=1e-10)
    assert met.mu <= 1.0 < failing.mu
    assert met.delta_tail <= 1e-10
    # More private values meet it too (monotone in σ at a fixed failure probability).
    for sigma in (result.value * 1.001, result.value * 1.05, result.value * 1.5):
        assert account(DPSGD(sigma, q, steps)).gdp(delta_tail=1e-10).mu <= 1.0


def test_a_failure_probability_cap_below_the_accountants_floor_names_the_cap():
    with pytest.raises(ValueError, match=r"max_delta_tail = 1e-40 cannot be certified.*floor"):
        calibrate.noise_multiplier(
            Mu(1.0, max_delta_tail=1e-40), sampling_probability=0.01, steps=1000
        )


@dataclasses.dataclass(frozen=True)
class _CoarseReadsTwice(calibrate.EpsilonDelta):
    """ε at δ, read twice as large on the search's coarse grid (1e-3) as it is."""

    def measure(self, accounting):
        epsilon = super().measure(accounting)
        coarse = accounting.grid_spacing is not None and accounting.grid_spacing >= 1e-3
        return 2.0 * epsilon if coarse else epsilon


def test_a_low_end_the_coarse_grid_fails_but_the_default_meets_is_bracketed_again():
    # The automatic bracket's low end is checked with the default accountant only where
    # the coarse one is within 1% of the target; where the default one meets the target
    # there after all, the search brackets again with that end checked. Here the coarse
    # measure is made twice the default one, so the coarse bracket is far too low.
    plain = calibrate.noise_multiplier((1.0, 1e-5), sampling_probability=0.01, steps=1000)
    skewed = calibrate.noise_multiplier(
        _CoarseReadsTwice(1.0, 1e-5), sampling_probability=0.01, steps=1000
    )
    assert skewed.value == pytest.approx(plain.value, rel=2e-4)
    assert account(DPSGD(skewed.value, 0.01, 1000)).epsilon(1e-5) <= 1.0
    assert account(DPSGD(skewed.failing_value, 0.01, 1000)).epsilon(1e-5) > 1.0


def test_a_regret_cap_is_searched_on_the_condition_that_binds():
    # Near the answer only the regret fails (μ is below its target): the search reads
    # how far the regret is from its cap, not μ's distance to its target (on which it
    # bisected: 24 accountings, 11 of them with the default accountant).
    target = Mu(0.5, max_regret=0.01)
    for sigma in (1.5, 1.88, 1.9, 3.0):
        accounting = account(DPSGD(sigma, 0.05, 100))
        excess = target.relative_excess(accounting)
        assert (excess <= 0) == target.is_met(accounting), sigma
    result = calibrate.noise_multiplier(target, sampling_probability=0.05, steps=100)
    values = result.report_values()
    assert values["regret"] <= 0.01 < values["failing_regret"]
    assert result.failing_value < result.value <= result.failing_value * (1 + 1e-5)
    assert result.evaluations <= 17
    assert Mu(0.5).relative_excess(accounting) is None  # μ alone: μ against its target


def test_a_mu_target_reads_each_accountings_report_once(monkeypatch):
    # The search asks a μ target for its measure, then whether it is met: one report
    # (150-230 ms at σ = 0.8, q = 0.01, T = 1,000), kept weakly with the accounting.
    import gc
    import weakref

    from gaussdp import Accounting

    made = []
    gdp = Accounting.gdp
    monkeypatch.setattr(Accounting, "gdp", lambda self, **o: made.append(o) or gdp(self, **o))
    target = Mu(1.0, max_delta_tail=1e-9)
    accounting = account(DPSGD(1.2, 0.01, 200))
    value = target.measure(accounting)
    assert target.is_met(accounting, value) == (value <= 1.0)
    target.unmet_conditions(accounting)
    assert made == [{"delta_tail": 1e-9}]
    assert Mu(1.0).measure(accounting) >= 0 and len(made) == 2  # another failure probability
    gone = weakref.ref(accounting)
    del accounting
    gc.collect()
    assert gone() is None  # the values kept do not keep it
