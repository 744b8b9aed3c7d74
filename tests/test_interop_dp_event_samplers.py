"""DpEvent interop for mixtures and truncated Poisson, both ways, checked against dp_accounting."""

import math

import dp_accounting
import pytest
from dp_accounting import dp_event, pld

from gaussdp import (
    DPSGD,
    Composition,
    Gaussian,
    GaussianMixture,
    Laplace,
    PoissonSubsampled,
    Repeated,
    TruncatedPoisson,
    account,
)
from gaussdp import mechanisms as m
from gaussdp.interop import UnsupportedEventError, from_dp_event, to_dp_event


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (
            dp_event.MixtureOfGaussiansDpEvent(1.5, [0.0, 1.0, 2.0], [0.9, 0.06, 0.04]),
            GaussianMixture(1.5, [0.0, 1.0, 2.0], [0.9, 0.06, 0.04]),
        ),
        (dp_event.MixtureOfGaussiansDpEvent(0.0, [0.0, 1.0], [0.5, 0.5]), m.ApproxDP(0.0, 1.0)),
        (dp_event.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [1.0, 0.0]), Gaussian(math.inf)),
        (
            dp_event.TruncatedSubsampledGaussianDpEvent(100000, 0.01, 1100, 1.0),
            TruncatedPoisson(Gaussian(1.0), 0.01, 1100, 100000),
        ),
        (  # B ≥ N: nothing is ever cut, as with B = N
            dp_event.TruncatedSubsampledGaussianDpEvent(50, 0.1, 80, 2.0),
            TruncatedPoisson(Gaussian(2.0), 0.1, 50, 50),
        ),
        (dp_event.TruncatedSubsampledGaussianDpEvent(50, 0.1, 10, 0.0), m.ApproxDP(0.0, 1.0)),
        (dp_event.TruncatedSubsampledGaussianDpEvent(50, 0.0, 10, 1.0), Gaussian(math.inf)),
    ],
)
def test_from_dp_event(event, expected):
    assert from_dp_event(event) == expected


@pytest.mark.parametrize(
    "mechanism",
    [
        GaussianMixture(1.5, [0.0, 1.0, 2.0], [0.9, 0.06, 0.04]),
        TruncatedPoisson(Gaussian(1.0), 0.01, 1100, 100000),
        Repeated(TruncatedPoisson(Gaussian(0.8), 0.05, 60, 1000), 100),
        Composition([Repeated(Laplace(2.0), 3), PoissonSubsampled(Gaussian(1.1), 0.1)]),
        DPSGD(1.1, 0.01, 1000),
    ],
)
def test_round_trip_through_dp_event(mechanism):
    back = from_dp_event(to_dp_event(mechanism))
    expected = mechanism.expand() if mechanism.expand() is not None else mechanism
    assert back in (mechanism, expected)


def test_sensitivity_is_folded_into_the_noise_multiplier():
    event = to_dp_event(TruncatedPoisson(Gaussian(2.0, sensitivity=0.5), 0.01, 100, 1000))
    assert event.noise_multiplier == 4.0
    assert to_dp_event(Gaussian(3.0, sensitivity=2.0)) == dp_accounting.GaussianDpEvent(1.5)


def test_the_written_event_accounts_as_the_description_in_dp_accounting():
    mechanism = Repeated(TruncatedPoisson(Gaussian(1.0), 0.05, 45, 1000), 10)
    accountant = pld.PLDAccountant(value_discretization_interval=1e-3)
    accountant.compose(to_dp_event(mechanism))
    lower, upper = account(mechanism).epsilon_bounds(1e-5)
    assert lower <= upper <= accountant.get_epsilon(1e-5)


def test_descriptions_without_an_event_are_refused_in_one_line():
    with pytest.raises(
        UnsupportedEventError, match=r"^mechanism .* has no dp_accounting"
    ) as caught:
        to_dp_event(TruncatedPoisson(Laplace(1.0), 0.01, 10, 100))
    assert "\n" not in str(caught.value)
