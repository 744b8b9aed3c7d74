"""The noise multiplier of a matrix mechanism for a target: :func:`matrix_noise_multiplier`.

A matrix mechanism is one Gaussian mechanism with sensitivity Δ
(:class:`gaussdp.MatrixMechanism`), μ = Δ/σ; the search starts from the σ
whose μ matches the target's μ guess and returns, as every calibration here,
the pessimistically accounted answer (:func:`gaussdp.calibrate.parameter`).
"""

from __future__ import annotations

from gaussdp import mechanisms as m
from gaussdp.accountant import DEFAULT_ACCURACY
from gaussdp.calibrate.search import (
    DEFAULT_COARSE_GRID_SPACING,
    DEFAULT_RTOL,
    Calibration,
    CalibrationError,
    parameter,
)
from gaussdp.calibrate.targets import as_target

__all__ = ["matrix_noise_multiplier"]

# σ range tried when the target gives no μ guess, in units of Δ.
_WIDE = (1e-2, 1e6)


def matrix_noise_multiplier(
    target,
    *,
    strategy,
    participation,
    neighbouring: m.Neighbouring | None = None,
    bracket: tuple[float, float] | None = None,
    rtol: float = DEFAULT_RTOL,
    accuracy: float = DEFAULT_ACCURACY,
    coarse_grid_spacing: float | None = DEFAULT_COARSE_GRID_SPACING,
) -> Calibration:
    """The smallest noise multiplier σ of a matrix mechanism that meets a privacy target.

    The mechanism is ``MatrixMechanism(strategy, σ, participation)``, exactly
    μ-GDP with μ = Δ/σ (an upper bound when the sensitivity is). Without a
    ``bracket`` the search brackets σ = Δ/μ_guess, where μ_guess is the
    target's μ (a μ target: itself; (ε, δ): the μ of a Gaussian with that
    profile), by a factor 2 each way (a Δ-relative range from 0.01 to 10⁶ when
    the target has no guess, or the narrow range does not bracket it).

    Parameters
    ----------
    target : Target or (epsilon, delta)
    strategy, participation
        As in :class:`gaussdp.MatrixMechanism`.
    neighbouring, bracket, rtol, accuracy, coarse_grid_spacing
        As in :func:`gaussdp.calibrate.parameter`.

    Returns
    -------
    Calibration
        ``value`` is σ.

    Examples
    --------
    >>> from gaussdp import matrix
    >>> from gaussdp.calibrate import Mu
    >>> result = matrix_noise_multiplier(
    ...     Mu(1.0), strategy=matrix.tree(1023), participation=matrix.SingleParticipation()
    ... )
    >>> abs(result.value / 10 ** 0.5 - 1) < 1e-6      # σ = Δ/μ = √10
    True
    """
    target = as_target(target)
    probe = m.MatrixMechanism(strategy, 1.0, participation)  # validates, computes Δ
    strategy, participation = probe.strategy, probe.participation
    delta = probe.sensitivity.value

    def make(sigma: float) -> m.Mechanism:
        return m.MatrixMechanism(strategy, sigma, participation)

    def search(bounds: tuple[float, float]) -> Calibration:
        return parameter(
            make,
            target,
            bracket=bounds,
            more_private="high",
            neighbouring=neighbouring,
            rtol=rtol,
            accuracy=accuracy,
            coarse_grid_spacing=coarse_grid_spacing,
            name="noise_multiplier",
        )

    if bracket is not None:
        return search(bracket)
    guess = target.guess_mu()
    if guess is not None and guess > 0 and delta > 0:
        if neighbouring is not None and m.Neighbouring(neighbouring) is m.Neighbouring.REPLACE:
            guess /= 2.0
        sigma = delta / guess
        try:
            return search((sigma / 2.0, sigma * 2.0))
        except CalibrationError:
            pass
    scale = delta if delta > 0 else 1.0
    return search((_WIDE[0] * scale, _WIDE[1] * scale))
