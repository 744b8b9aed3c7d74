"""The Laplace-inversion reference (tests/contour_reference.py) is itself right.

It is the independent reference for small sampling rates and long runs, where a
grid is hardest to fit: here it is checked against the Gaussian mechanism's
closed form (q = 1, at 50 digits) and, for a subsampled step, its moment
generating function against mpmath's quadrature of the definition.
"""

import math

import mpmath
import numpy as np
import pytest

from tests import contour_reference as contour
from tests.references import gaussian_delta


@pytest.mark.parametrize(
    ("sigma", "steps", "epsilon"),
    [(1.0, 1, 1.0), (2.0, 16, 1.0), (5.0, 100, 0.5), (1.0, 4, 3.0), (0.5, 10, 20.0)],
)
def test_the_gaussian_mechanism_is_its_closed_form(sigma, steps, epsilon):
    mu = math.sqrt(steps) / sigma
    exact = float(gaussian_delta(mu, epsilon))
    for direction in ("remove", "add"):
        assert contour.delta(sigma, 1.0, steps, epsilon, direction) == pytest.approx(
            exact, rel=1e-9
        )


def test_the_gaussian_mechanism_epsilon_solves_its_closed_form():
    sigma, steps, target = 2.0, 16, 1e-3
    found = contour.epsilon(sigma, 1.0, steps, target, guess=4.0)
    assert float(gaussian_delta(math.sqrt(steps) / sigma, found)) == pytest.approx(target, rel=1e-8)


@pytest.mark.parametrize("s", [0.05, 2.0, 0.5 + 3j, 2.0 + 10j])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_one_subsampled_steps_mgf_is_the_definition(s, direction):
    sigma, q = 0.59, 3.2e-4
    power = (1 + s) if direction == "remove" else -s

    def integrand(y):
        ratio = 1 - q + q * mpmath.exp((2 * y - 1) / (2 * sigma**2))
        return mpmath.npdf(y, 0, sigma) * (ratio**power - 1)

    reach = 12 * sigma + abs(s) + 1
    with mpmath.workdps(30):
        exact = complex(mpmath.log(1 + mpmath.quad(integrand, [-reach, -5, 0, 5, 10, 20, reach])))
    found = complex(contour.log_mgf(sigma, q, np.array([s]), direction)[0])
    # one step's log M is ~1e-7 to 1e-4; T·log M must hold to ~1e-12 absolute over 10⁶ steps
    assert abs(found - exact) <= 1e-8 * abs(exact) + 1e-18


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_twice_the_nodes_leave_a_long_small_q_run_where_it_was(direction):
    # both quadratures (in y for M, in t for the inversion) have converged
    run = (0.59, 3.2e-4, 700_000, 7.17, direction)
    once = contour.delta(*run)
    twice = contour.delta(*run, resolution=2.0)
    assert once == pytest.approx(twice, rel=1e-9)
