"""Privacy profiles, the accountant interface (privacy-loss atoms) and duality round trips."""

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from gaussdp import InvalidParameterError, gdp
from gaussdp import curves as C
from gaussdp.curves import PrivacyProfile

GRID = np.linspace(0.0, 1.0, 20_001)
LOG_GRID = np.logspace(-12, 0, 1201)


def discretised_gaussian_pld(mu, step, width=12.0):
    """A pessimistic discrete PLD of (N(μ,1), N(0,1)), built here from scipy's normal CDF.

    Under P = N(μ, 1) the loss L = μx − μ²/2 is N(μ²/2, μ²). The mass of each
    interval (l_{k−1}, l_k] is put on its upper end l_k (rounding losses up
    raises δ(ε) = E_P[(1 − e^{ε−L})₊] for every ε), mass below the grid on
    the lowest point and mass above it at +∞.
    """
    centre, scale = mu * mu / 2, mu
    low = math.floor((centre - width * scale) / step)
    high = math.ceil((centre + width * scale) / step)
    losses = np.arange(low, high + 1) * step
    cdf = stats.norm.cdf(losses, loc=centre, scale=scale)
    probabilities = np.diff(np.concatenate(([0.0], cdf)))
    infinity_mass = float(stats.norm.sf(losses[-1], loc=centre, scale=scale))
    return losses, probabilities, infinity_mass


# ---------------------------------------------------------------------------
# from_privacy_loss and PrivacyProfile.from_privacy_loss
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_discretised_gaussian_pld_gives_a_curve_just_below_g_mu(mu):
    losses, probabilities, infinity = discretised_gaussian_pld(mu, step=1e-3)
    curve = C.from_privacy_loss(losses, probabilities, infinity)
    exact = gdp.beta(mu, GRID)
    assert np.all(curve.beta(GRID) <= exact + 1e-12)
    assert np.max(exact - curve.beta(GRID)) < 2e-3
    exact_log = gdp.beta(mu, LOG_GRID)
    assert np.all(curve.beta(LOG_GRID) <= exact_log + 1e-12)
    assert curve.beta(0.0) == pytest.approx(1.0 - infinity, abs=1e-15)
    curve.validate()


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_profile_of_the_atoms_matches_its_definition_and_the_curve(mu):
    losses, probabilities, infinity = discretised_gaussian_pld(mu, step=4e-3)
    profile = PrivacyProfile.from_privacy_loss(losses, probabilities, infinity)
    curve = C.from_privacy_loss(losses, probabilities, infinity)
    # The atoms that count at ε ≥ 0 (l_i > 0) in mpmath, with e^{−l_i} made once for all ε
    atoms = [
        (loss, mpmath.mpf(float(p)), mpmath.e ** -mpmath.mpf(float(loss)))
        for loss, p in zip(losses, probabilities, strict=True)
        if loss > 0
    ]
    for epsilon in [0.0, 0.3, 1.0, 3.0, 6.0]:
        # The definition, summed in mpmath: Σ p_i (1 − e^{ε − l_i})₊ + p_∞ (e^{ε − l_i} as
        # e^ε·e^{−l_i}).
        scale = mpmath.e ** mpmath.mpf(epsilon)
        terms = [p * (1 - scale * decay) for loss, p, decay in atoms if loss > epsilon]
        reference = mpmath.fsum(terms) + infinity
        value = profile.delta(epsilon)
        assert value == pytest.approx(float(reference), rel=1e-12, abs=1e-300)
        # The curve's conjugate (Proposition 6) is the same profile.
        assert curve.delta(epsilon) == pytest.approx(value, rel=1e-9, abs=1e-15)
        # And it dominates the exact Gaussian profile (pessimistic discretisation).
        assert value >= gdp.delta(mu, epsilon) * (1 - 1e-12)
    for delta in [1e-2, 1e-5, 1e-8]:
        eps = profile.epsilon(delta)
        assert profile.delta(eps) <= delta
        assert eps >= gdp.epsilon(mu, delta) - 1e-9
        assert eps == pytest.approx(curve.epsilon(delta), rel=1e-6)


def test_infinity_mass_starts_the_curve_below_one_and_floors_the_profile():
    losses, probabilities = [0.5, -0.5], [0.6, 0.35]
    f = C.from_privacy_loss(losses, probabilities, infinity_mass=0.05)
    assert f.beta(0.0) == pytest.approx(0.95)
    q_total = 0.6 * math.exp(-0.5) + 0.35 * math.exp(0.5)
    assert f.beta(q_total) == 0.0 and f.beta(q_total - 1e-3) > 0.0  # Q-mass at −∞
    profile = PrivacyProfile.from_privacy_loss(losses, probabilities, infinity_mass=0.05)
    assert profile.delta(50.0) == pytest.approx(0.05)
    assert profile.epsilon(0.04) == math.inf
    assert f.epsilon(0.04) == math.inf
    assert f.delta(50.0) == pytest.approx(0.05)
    # The vertices by hand: decide "member" on the loss-0.5 atom first.
    assert f.beta(0.6 * math.exp(-0.5)) == pytest.approx(0.35)


def test_missing_probability_mass_counts_as_infinite_loss():
    f = C.from_privacy_loss([0.0], [0.9])
    assert f.beta(0.0) == pytest.approx(0.1 * 0 + 0.9)
    profile = PrivacyProfile.from_privacy_loss([0.0], [0.9])
    assert profile.delta(10.0) == pytest.approx(0.1)


def test_piecewise_linear_curve_round_trips_through_its_privacy_loss():
    f = C.compose([C.epsilon_delta(0.4)] * 3).with_failure(0.0)
    g = C.from_points([0.0, 0.05, 0.3, 0.7], [0.9, 0.5, 0.12, 0.0])
    for curve in [f, g]:
        losses, probabilities, infinity = curve.privacy_loss()
        back = C.from_privacy_loss(losses, probabilities, infinity)
        assert np.max(np.abs(back.beta(GRID) - curve.beta(GRID))) < 1e-14


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"losses": [0.0, 1.0], "probabilities": [0.6, 0.6]}, "sum to at most 1"),
        ({"losses": [-3.0], "probabilities": [0.9]}, "Q-masses"),
        ({"losses": [0.0, 1.0], "probabilities": [0.5, -0.1]}, "probabilities must be in [0, 1]"),
        ({"losses": [0.0, float("nan")], "probabilities": [0.5, 0.1]}, "losses must be in"),
        ({"losses": [0.0, float("inf")], "probabilities": [0.5, 0.1]}, "losses must be in"),
        ({"losses": [0.0, 1.0], "probabilities": [0.5]}, "same length"),
        (
            {"losses": [0.0], "probabilities": [0.5], "infinity_mass": 1.5},
            "infinity_mass must be in [0, 1]",
        ),
    ],
)
def test_bad_privacy_loss_distributions_are_rejected(kwargs, message):
    with pytest.raises(InvalidParameterError) as info:
        C.from_privacy_loss(**kwargs)
    assert message in str(info.value)
    with pytest.raises(InvalidParameterError):
        PrivacyProfile.from_privacy_loss(**kwargs)


# ---------------------------------------------------------------------------
# PrivacyProfile
# ---------------------------------------------------------------------------


def test_profile_from_callables_vectorised_or_not():
    def scalar_only(epsilon):
        return float(gdp.delta(1.0, float(epsilon)))  # float() fails on arrays

    for function in [lambda e: gdp.delta(1.0, e), scalar_only]:
        profile = PrivacyProfile(function)
        values = profile.delta(np.array([0.0, 1.0, 2.0]))
        assert values == pytest.approx(gdp.delta(1.0, np.array([0.0, 1.0, 2.0])), rel=1e-15)
        eps = profile.epsilon(1e-5)
        assert profile.delta(eps) <= 1e-5
        assert eps == pytest.approx(gdp.epsilon(1.0, 1e-5), rel=1e-9)
    assert PrivacyProfile.from_callable(scalar_only).delta(1.0) == pytest.approx(0.126936737507)


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (lambda e: 1.5 + 0 * np.asarray(e), "got 1.5 at epsilon=0.5"),
        (lambda e: np.nan + 0 * np.asarray(e), "got nan at epsilon=0.5"),
        (lambda e: -0.1 + 0 * np.asarray(e), "got -0.1 at epsilon=0.5"),
    ],
)
def test_profiles_returning_invalid_deltas_are_rejected(function, message):
    with pytest.raises(InvalidParameterError) as info:
        PrivacyProfile(function).delta(0.5)
    assert message in str(info.value)


def test_profile_input_validation():
    profile = PrivacyProfile.from_tradeoff(C.gaussian(1.0))
    with pytest.raises(InvalidParameterError, match="epsilon must be in"):
        profile.delta(-1.0)
    with pytest.raises(InvalidParameterError, match="delta must be in"):
        profile.epsilon(2.0)
    with pytest.raises(InvalidParameterError, match="must be callable"):
        PrivacyProfile(3.0)
    with pytest.raises(InvalidParameterError, match="must be a TradeOff"):
        PrivacyProfile.from_tradeoff(lambda a: 1 - a)
    with pytest.raises(InvalidParameterError, match="already a curve"):
        C.from_profile(C.gaussian(1.0))


def test_profile_of_an_asymmetric_curve_is_one_direction():
    """δ(ε) = 1 + f*(−e^ε) for T(P, Q) is the hockey-stick H_{e^ε}(P‖Q) of that pair."""
    losses, probabilities = np.array([1.2, 0.1, -0.7]), np.array([0.5, 0.3, 0.2])
    f = C.from_privacy_loss(losses, probabilities)
    q = probabilities * np.exp(-losses)
    for epsilon in [0.0, 0.05, 0.5, 1.0, 2.0]:
        forward = np.sum(np.maximum(probabilities - math.exp(epsilon) * q, 0.0))
        # Q-mass missing from the atoms sits at loss −∞: an outcome only Q produces.
        backward = np.sum(np.maximum(q - math.exp(epsilon) * probabilities, 0.0)) + 1 - q.sum()
        assert PrivacyProfile.from_tradeoff(f).delta(epsilon) == pytest.approx(forward, abs=1e-15)
        assert f.inverse().delta(epsilon) == pytest.approx(backward, abs=1e-15)


# ---------------------------------------------------------------------------
# Duality: from_profile and from_epsilon_deltas
# ---------------------------------------------------------------------------


def test_from_epsilon_deltas_is_the_supremum_of_f_epsilon_delta():
    pairs = [(0.1, 0.2), (1.0, 1e-3), (2.0, 1e-5), (4.0, 1e-9), (math.inf, 0.5), (0.5, 1.0)]
    f = C.from_epsilon_deltas(pairs)
    expected = np.zeros_like(GRID)
    for eps, delta in pairs:
        if math.isinf(eps) or delta >= 1:
            continue  # f_{∞,δ} ≡ 0 and f_{ε,1} ≡ 0
        term = np.maximum(1 - delta - math.exp(eps) * GRID, math.exp(-eps) * (1 - delta - GRID))
        expected = np.maximum(expected, np.maximum(term, 0.0))
    assert np.max(np.abs(f.beta(GRID) - expected)) < 1e-15
    assert f.is_symmetric
    for eps, delta in pairs[:4]:
        assert f.delta(eps) <= delta + 1e-15  # each guarantee holds


@pytest.mark.parametrize("mu", [0.2, 1.0, 4.0])
def test_gaussian_round_trip_curve_profile_curve(mu):
    f = C.gaussian(mu)
    back = C.from_profile(f.profile())
    xs = np.concatenate((GRID, LOG_GRID))
    difference = back.beta(xs) - f.beta(xs)
    assert np.all(difference <= 1e-15)  # a supremum over finitely many ε: pessimistic
    assert np.min(difference) > -2e-8
    tpr = f.tpr(LOG_GRID)
    assert np.max(np.abs(back.tpr(LOG_GRID) - tpr) / tpr) < 1e-3


def test_laplace_and_epsilon_delta_round_trips():
    lap = C.laplace(1.5)
    back = C.from_profile(PrivacyProfile(lambda e: lap.delta(e)))
    difference = back.beta(GRID) - lap.beta(GRID)
    assert np.all(difference <= 1e-15) and np.min(difference) > -2e-8
    f = C.epsilon_delta(1.0, 1e-3)
    exact = C.from_profile(f.profile(), epsilons=[1.0])
    assert np.max(np.abs(exact.beta(GRID) - f.beta(GRID))) < 1e-15


def test_profile_curve_profile_round_trip_is_pessimistic_and_close():
    profile = PrivacyProfile(lambda e: gdp.delta(0.8, e))
    curve = C.from_profile(profile)
    again = PrivacyProfile.from_tradeoff(curve)
    for epsilon in [0.0, 0.5, 1.0, 2.0, 4.0]:
        exact = gdp.delta(0.8, epsilon)
        assert again.delta(epsilon) >= exact * (1 - 1e-12)
        assert again.delta(epsilon) == pytest.approx(exact, rel=1e-6, abs=1e-12)


def test_one_direction_profile_of_f_p_gives_c_p_theorem_9():
    """Proof of Theorem 9: the profile of the asymmetric f_p, read back, is C_p(f)."""
    p = 0.2
    piece = C.gaussian(1.0).piecewise_linear()
    f_p = C.from_points(piece.alphas, p * piece.betas + (1 - p) * (1 - piece.alphas))
    back = C.from_profile(PrivacyProfile.from_tradeoff(f_p))
    c_p = C.gaussian(1.0).subsample(p)
    assert np.max(np.abs(back.beta(GRID) - c_p.beta(GRID))) < 2e-8
    assert back.is_symmetric


def test_from_profile_accepts_duck_typed_profiles_and_explicit_grids():
    class Profile:
        def delta(self, epsilon):
            return gdp.delta(1.0, epsilon)

    f = C.from_profile(Profile(), epsilons=np.linspace(0, 10, 101))
    assert np.all(f.beta(GRID) <= gdp.beta(1.0, GRID) + 1e-15)
    assert np.max(gdp.beta(1.0, GRID) - f.beta(GRID)) < 5e-3
    with pytest.raises(InvalidParameterError, match="epsilons must be in"):
        C.from_profile(Profile(), epsilons=[-1.0])
    with pytest.raises(InvalidParameterError, match="must be a PrivacyProfile"):
        C.from_profile(3.0)


def test_from_profile_stops_halving_where_only_rounding_is_left():
    """A pure-DP kink with a floor of 1e-11 once took 2,000 rounds of refinement (34 s).

    The curve (found by the property tests) is ε-DP with ε = 0.5699 and δ = 1e-11. Near
    the kink the profile's lines have slopes e^ε equal to 1e-12, meet where rounding puts
    them, and the chord test kept flagging the same vertex; intervals of ε narrower than
    1e-9 are no longer halved. The result is still valid and below the curve.
    """
    curve = C.from_points(
        [0.0, 0.3612576854413484, 0.9999999999899999, 1.0],
        [0.99999999999, 0.3612576854413481, 0.0, 0.0],
    ).symmetrize()
    profile = PrivacyProfile.from_tradeoff(curve)
    evaluated = []

    def counted(epsilon):
        epsilon = np.asarray(epsilon, dtype=float)
        evaluated.append(epsilon.size)
        return profile.delta(epsilon)

    back = C.from_profile(counted)
    assert sum(evaluated) < 2_000  # 2 points per round, rounds up to the 65,536-point cap
    alphas = np.linspace(0.0, 1.0, 2001)
    assert np.all(back.beta(alphas) <= curve.beta(alphas) + 1e-12)
    assert np.all(np.diff(back.beta(alphas)) <= 1e-15)  # non-increasing
    assert back.beta(np.array([0.3]))[0] == pytest.approx(curve.beta(np.array([0.3]))[0], abs=1e-8)
