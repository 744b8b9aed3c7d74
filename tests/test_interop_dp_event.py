"""from_dp_event: real dp_accounting DpEvent trees, checked against dp_accounting's accountants."""

import math
from dataclasses import dataclass

import dp_accounting
import pytest
from dp_accounting import dp_event, pld, rdp

from gaussdp import account
from gaussdp import mechanisms as m
from gaussdp.interop import UnsupportedEventError, from_dp_event

E = dp_accounting


def dp_accounting_epsilon(event, delta, neighbouring=None):
    kwargs = {"value_discretization_interval": 1e-4}
    if neighbouring is not None:
        kwargs["neighboring_relation"] = neighbouring
    accountant = pld.PLDAccountant(**kwargs)
    accountant.compose(event)
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (E.GaussianDpEvent(2.0), m.Gaussian(2.0)),
        (E.LaplaceDpEvent(0.5), m.Laplace(0.5)),
        (E.GaussianDpEvent(0.0), m.ApproxDP(0.0, 1.0)),
        (E.NonPrivateDpEvent(), m.ApproxDP(0.0, 1.0)),
        (E.NoOpDpEvent(), m.Gaussian(math.inf)),
        (E.ZCDpEvent(0.5), m.ZCDP(0.5)),
        (
            E.RandomizedResponseDpEvent(0.5, 2),
            m.RandomizedResponse(math.log(3.0)),  # truthful with probability 3/4
        ),
        (E.RandomizedResponseDpEvent(0.5, 4), m.PureDP(math.log(5.0))),  # 5/8 against 1/8
        (dp_event.DiscreteLaplaceDpEvent(0.5, 2), m.PureDP(1.0)),
        (
            E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.1)), 100),
            m.DPSGD(1.1, 0.01, 100),
        ),
        (
            E.SelfComposedDpEvent(E.LaplaceDpEvent(3.0), 5),
            m.Repeated(m.Laplace(3.0), 5),
        ),
        (
            E.SampledWithoutReplacementDpEvent(1000, 10, E.GaussianDpEvent(1.0)),
            m.SubsampledWithoutReplacement(m.Gaussian(1.0, sensitivity=0.5), 10, 1000),
        ),
        (
            E.ComposedDpEvent([E.GaussianDpEvent(5.0), E.NoOpDpEvent(), E.LaplaceDpEvent(1.0)]),
            m.Composition([m.Gaussian(5.0), m.Laplace(1.0)]),
        ),
        (E.ComposedDpEvent([E.NoOpDpEvent()]), m.Gaussian(math.inf)),
        (E.SelfComposedDpEvent(E.GaussianDpEvent(1.0), 0), m.Gaussian(math.inf)),
    ],
)
def test_mapping(event, expected):
    assert from_dp_event(event) == expected


def test_zcdp_with_xi_becomes_renyi_dp():
    mechanism = from_dp_event(E.ZCDpEvent(0.5, 0.1))
    assert isinstance(mechanism, m.RenyiDP)
    for order, epsilon in zip(mechanism.orders, mechanism.epsilons, strict=True):
        assert epsilon == pytest.approx(0.1 + 0.5 * order)


@pytest.mark.parametrize(
    ("event", "relation"),
    [
        (
            E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.1)), 1000),
            E.NeighboringRelation.ADD_OR_REMOVE_ONE,
        ),
        (
            E.ComposedDpEvent(
                [
                    E.SelfComposedDpEvent(E.GaussianDpEvent(8.0), 5),
                    E.SelfComposedDpEvent(E.LaplaceDpEvent(10.0), 3),
                ]
            ),
            E.NeighboringRelation.ADD_OR_REMOVE_ONE,
        ),
        # gaussdp's randomized response is dp_accounting's REPLACE_ONE pair (its
        # REPLACE_SPECIAL compares with a uniformly random answer instead). One event:
        # dp_accounting 0.6's PLD accountant ignores the count of a self-composed one.
        (
            E.RandomizedResponseDpEvent(0.2, 2),
            E.NeighboringRelation.REPLACE_ONE,
        ),
    ],
)
def test_epsilon_agrees_with_dp_accounting(event, relation):
    ours = account(from_dp_event(event)).epsilon(1e-6)
    theirs = dp_accounting_epsilon(event, 1e-6, relation)
    # Both pessimistic; ours is the tighter one, within dp_accounting's accuracy.
    assert ours <= theirs * (1 + 1e-6)
    assert ours == pytest.approx(theirs, rel=5e-3)


def test_sampling_without_replacement_under_replace():
    event = E.SelfComposedDpEvent(
        E.SampledWithoutReplacementDpEvent(60000, 256, E.GaussianDpEvent(1.0)), 20
    )
    mechanism = from_dp_event(event)
    # dp_accounting's noise multiplier is relative to the replace-one sensitivity here.
    inner = mechanism.mechanism.mechanism
    assert inner == m.Gaussian(1.0, sensitivity=0.5)
    ours = account(mechanism, neighbouring=m.Neighbouring.REPLACE).epsilon(1e-5)
    # dp_accounting's PLD does not support the event; its RDP accountant bounds it from above.
    rdp_accountant = rdp.RdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
    )
    rdp_accountant.compose(event)
    assert ours <= rdp_accountant.get_epsilon(1e-5)
    # Its pair ((1 − γ)Q + γP, Q) with a shift of 1 is the Poisson remove pair at q = γ:
    poisson = E.SelfComposedDpEvent(
        E.PoissonSampledDpEvent(256 / 60000, E.GaussianDpEvent(1.0)), 20
    )
    assert ours == pytest.approx(dp_accounting_epsilon(poisson, 1e-5), rel=5e-3)


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (E.UnsupportedDpEvent(), r"^event: UnsupportedDpEvent is not supported"),
        (
            E.ComposedDpEvent(
                [E.GaussianDpEvent(1.0), E.SampledWithReplacementDpEvent(10, 2, E.NoOpDpEvent())]
            ),
            r"^event\.events\[1\]: SampledWithReplacementDpEvent is not supported",
        ),
        (
            E.SelfComposedDpEvent(
                E.SampledWithReplacementDpEvent(100, 2, E.GaussianDpEvent(1.0)), 2
            ),
            r"^event\.event: SampledWithReplacementDpEvent is not supported",
        ),
        ("gaussian", "expected a dp_accounting DpEvent, got str"),
    ],
)
def test_unsupported_events_are_named(event, message):
    with pytest.raises(UnsupportedEventError, match=message):
        from_dp_event(event)


def test_bad_event_values():
    with pytest.raises(ValueError, match="sigma must be in"):
        from_dp_event(E.GaussianDpEvent(-1.0))
    with pytest.raises(ValueError, match="noise_parameter in"):
        from_dp_event(E.RandomizedResponseDpEvent(1.5, 2))


# --------------------------------------------------------------------------- EpsilonDeltaDpEvent

if hasattr(dp_event, "EpsilonDeltaDpEvent"):  # newer dp_accounting
    EpsilonDeltaDpEvent = dp_event.EpsilonDeltaDpEvent
else:  # dp_accounting 0.6 lacks it: events are matched by class name, so a stand-in will do

    @dataclass(frozen=True)
    class EpsilonDeltaDpEvent:
        """Stand-in with upstream dp_accounting's fields (dp_event.py: epsilon, delta)."""

        epsilon: float
        delta: float


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (EpsilonDeltaDpEvent(1.0, 1e-6), m.ApproxDP(1.0, 1e-6)),
        (EpsilonDeltaDpEvent(0.5, 0.0), m.ApproxDP(0.5, 0.0)),
        (EpsilonDeltaDpEvent(math.inf, 1e-6), m.ApproxDP(0.0, 1.0)),
        (
            E.SelfComposedDpEvent(EpsilonDeltaDpEvent(0.1, 1e-7), 10),
            m.Repeated(m.ApproxDP(0.1, 1e-7), 10),
        ),
        (
            E.PoissonSampledDpEvent(0.01, EpsilonDeltaDpEvent(2.0, 1e-6)),
            m.PoissonSubsampled(m.ApproxDP(2.0, 1e-6), 0.01),
        ),
        (
            E.ComposedDpEvent(
                [
                    E.SelfComposedDpEvent(
                        E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.1)), 100
                    ),
                    EpsilonDeltaDpEvent(0.5, 1e-6),
                ]
            ),
            m.Composition([m.DPSGD(1.1, 0.01, 100), m.ApproxDP(0.5, 1e-6)]),
        ),
    ],
)
def test_epsilon_delta_event(event, expected):
    assert from_dp_event(event) == expected


def test_epsilon_delta_event_accounts_as_stated():
    # A single (ε, δ) event is exactly (ε, δ)-DP: δ(ε) = δ, and at ε' < ε
    # δ(ε') = δ + (1 − δ)(e^ε − e^ε')/(1 + e^ε) (leaky randomized response).
    epsilon, delta = 1.0, 1e-6
    accounting = account(from_dp_event(EpsilonDeltaDpEvent(epsilon, delta)))
    assert accounting.delta(epsilon) == pytest.approx(delta, rel=1e-6)
    expected = delta + (1 - delta) * (math.e - math.exp(0.5)) / (1 + math.e)
    assert accounting.delta(0.5) == pytest.approx(expected, rel=1e-6)
    # Just above δ the pessimistic ε is just below ε (exactly at δ the accountant's
    # slack makes it infinite: the atom at +∞ carries all of δ).
    assert epsilon * (1 - 1e-5) <= accounting.epsilon(2 * delta) <= epsilon


def test_epsilon_delta_event_bad_values():
    with pytest.raises(ValueError, match="delta must be in"):
        from_dp_event(EpsilonDeltaDpEvent(1.0, 1.5))
    with pytest.raises(ValueError, match="epsilon must be in"):
        from_dp_event(E.ComposedDpEvent([EpsilonDeltaDpEvent(-1.0, 1e-6)]))
