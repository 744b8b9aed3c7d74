"""Calibration: the least private parameter that still meets a privacy target.

A *calibrator* (the lecture, file 003, autodp's Mechanism / Transformer /
Calibrator) turns a privacy target into a mechanism parameter: the noise
multiplier of DP-SGD for (ε, δ), the number of steps a budget allows, the
scale of a Laplace mechanism. Here every answer is on the **safe side**:

* the returned parameter was accounted with the pessimistic (upper-bound)
  accountant, :func:`gaussdp.account` at the requested accuracy, exactly as a
  user would re-check it, and meets the target;
* the parameter one tolerance step *less* private was accounted the same way
  and fails the target, which says how close the answer is
  (:attr:`Calibration.failing_value`).

The search never minimises |ε(σ) − target| (which can return a σ whose ε is
slightly *above* the target, as autodp's calibrator may): it keeps a bracket
whose private end meets the target and whose other end fails, shrinks it with
:func:`gaussdp._numerics.monotone_root` (Illinois regula falsi with bisection
safeguards) and returns the private end. Nothing relies on the accountant
being exactly monotone in the parameter: both ends are certified as
evaluated.

Targets
-------
``(epsilon, delta)`` or :class:`EpsilonDelta`
    ε(δ) ≤ ε (the pessimistic ε).
:class:`Mu`
    μ-GDP with μ ≤ target: exact for Gaussian compositions, otherwise the
    tight μ of the report (:meth:`gaussdp.Accounting.gdp`), optionally with
    a cap on its regret.
:class:`Advantage`
    The largest TPR − FPR of any membership-inference attack, which is
    δ(0) = H_1(P ‖ Q) (total variation; Dong, Roth & Su 2022, §2.4), at most
    the target.
:class:`TPRAtFPR`
    The largest true-positive rate of any attack with false-positive rate
    ``fpr``, 1 − f(fpr), at most the target (riskcal's operational target;
    Kulynych et al. 2024).
:class:`Predicate`
    Any monotone yes/no question about the :class:`gaussdp.Accounting`.

Speed
-----
For the numerical path the search runs in two phases. A *coarse* phase
accounts on a coarse grid (``coarse_grid_spacing``, 1e-3 by default): a
pessimistic bound is valid at any grid spacing, so this only locates the
answer. The *fine* phase then brackets that location with the default
accountant and shrinks the bracket to ``rtol``. A closed-form first guess
(μ-GDP via the central limit theorem of Dong, Roth & Su 2022, §5.2, for
DP-SGD) starts the bracket, which is grown with the coarse accountant and
whose ends are then re-checked (and moved) with the default one, so that it
brackets the target for the accountant the search uses (for small targets,
ε of order 0.01 say, the coarse bound alone would place the bracket wrongly).
On the CIFAR-10 setting (q = 0.32768, T = 2000, ε = 8, δ = 1e-5) this takes a
few tenths of a second (``docs/benchmarks-calibration.md``).

Examples
--------
>>> from gaussdp import calibrate
>>> result = calibrate.noise_multiplier((8.0, 1e-5), sampling_probability=0.32768, steps=2000)
>>> round(result.value, 3)
8.838
>>> result.achieved <= 8.0 < result.failing_achieved
True
"""

from gaussdp.calibrate.dpsgd import noise_multiplier
from gaussdp.calibrate.matrix import matrix_noise_multiplier
from gaussdp.calibrate.search import (
    DEFAULT_COARSE_GRID_SPACING,  # noqa: F401  (gaussdp.calibrate.DEFAULT_*)
    DEFAULT_RTOL,  # noqa: F401
    Calibration,
    CalibrationError,
    parameter,
)
from gaussdp.calibrate.targets import (
    Advantage,
    EpsilonDelta,
    Mu,
    Predicate,
    Target,
    TPRAtFPR,
    as_target,
    tpr_upper,
)

__all__ = [
    "Advantage",
    "Calibration",
    "CalibrationError",
    "EpsilonDelta",
    "Mu",
    "Predicate",
    "TPRAtFPR",
    "Target",
    "as_target",
    "matrix_noise_multiplier",
    "noise_multiplier",
    "parameter",
    "tpr_upper",
]


# The public classes are documented, pickled and shown as gaussdp.calibrate.X, where they
# were defined before this package was split by concept.
for _name in __all__:
    _object = globals()[_name]
    if isinstance(_object, type):
        _object.__module__ = __name__
del _name, _object
