"""The tilted laws of balls-in-bins' sum against a direct convolution (gaussdp.pld.allocation_tilt).

Five coordinates of σ = 1 on a grid of 0.05 up to 20: the law of their sum has
2,001 cells, from 0.5 down to 1e-29, small enough to convolve directly. A direct
convolution of positive masses is accurate to a few ulps relative in every cell,
so it is the reference the FFT's error bounds are checked against.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import fft as scipy_fft

from gaussdp import Gaussian
from gaussdp.pld.allocation_coordinate import Coordinate
from gaussdp.pld.allocation_tilt import tilt_rates, tilted_laws
from gaussdp.pld.composition import rounding_allowance
from gaussdp.pld.losses import GaussianLoss

SPACING, CELLS, STEPS = 0.05, 400, 5


def _power(first: np.ndarray, rest: np.ndarray, times: int) -> np.ndarray:
    law = first
    for _ in range(times):
        law = np.convolve(law, rest)
    return law


@pytest.fixture(scope="module")
def laws():
    coordinate = Coordinate(Gaussian(1.0), GaussianLoss(1.0))
    x_cells, _, y_cells, _, y_zero = coordinate.cells(np.log(np.arange(1, CELLS + 1) * SPACING))
    x, y = np.concatenate([[0.0], x_cells]), np.concatenate([[y_zero], y_cells])
    exact = (_power(x, y, STEPS - 1), _power(y, y, STEPS - 1))
    length = scipy_fft.next_fast_len(exact[0].size, True)

    def folded(x_tilted, y_tilted):  # the tilted mass at or beyond the circle, exactly
        sums = [_power(first, y_tilted, STEPS - 1) for first in (x_tilted, y_tilted)]
        return lambda cells: tuple(float(law[cells:].sum()) for law in sums)

    rates = tilt_rates(x, y, STEPS, SPACING, (STEPS * SPACING, length * SPACING)) * SPACING
    rounding = rounding_allowance(length, STEPS)
    computed = tilted_laws(x, y, STEPS, 1, length, rates, rounding, folded, length)
    plain = scipy_fft.irfft(
        scipy_fft.rfft(x, length) * scipy_fft.rfft(y, length) ** (STEPS - 1), length
    )
    return computed, exact, plain[: exact[0].size], rounding


def test_every_cell_is_within_its_certified_bound(laws):
    computed, exact, _, _ = laws
    for law, truth in zip(computed, exact, strict=True):
        cells = np.arange(truth.size)
        error = np.abs(law.values[: truth.size] - truth)
        assert np.all(error <= law.bound(cells))
        # and a run of cells errs by at most its tail (head) bound, from any cell on
        for start in (0, 500, 1500, 1990):
            assert error[start:].sum() <= law.tail_bounds(np.array([start]))[0]
            assert error[: start + 1].sum() <= law.head_bounds(np.array([start]))[0]


def test_the_far_tails_are_relative_where_plain_rounding_swamps_them(laws):
    """Down to masses of 1e-20 the bounds are within 1e-3 of the mass (values within 1e-7);
    the plain FFT's allowance R is 2e6 times such a mass, and its values are off by up
    to 60 times the mass."""
    computed, exact, plain, rounding = laws
    for law, truth in zip(computed, exact, strict=True):
        far = truth > 1e-20
        cells = np.flatnonzero(far)
        assert np.max(law.bound(cells) / truth[far]) < 1e-3
        assert np.max(np.abs(law.values[cells] - truth[far]) / truth[far]) < 1e-7
        assert np.max(rounding / truth[far]) > 1e6
        # the lower pairs' values: every one of these is clear of its noise, and right
        assert np.all(law.clear[cells] > 0)
        assert np.max(np.abs(law.clear[cells] - truth[far]) / truth[far]) < 1e-7
    p_far = exact[0] > 1e-20
    assert np.max(np.abs(plain[p_far] - exact[0][p_far]) / exact[0][p_far]) > 10.0
