"""gaussdp: differential-privacy accounting built around Gaussian DP and f-DP.

The public face of the package. Closed forms for μ-GDP live in
:mod:`gaussdp.gdp`; every public function validates its inputs and raises
:class:`InvalidParameterError` (a ``ValueError``) naming the parameter, the
value and the allowed range.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from gaussdp import gdp, matrix, mechanisms
from gaussdp._validation import InvalidParameterError
from gaussdp.accountant import Accounting, AccuracyWarning, account
from gaussdp.gdp import GaussianDP
from gaussdp.mechanisms import (
    DPSGD,
    GDP,
    ZCDP,
    AmplifiedBandMF,
    ApproxDP,
    Composition,
    DiscreteGaussian,
    Gaussian,
    GaussianMixture,
    Group,
    Laplace,
    MatrixMechanism,
    Mechanism,
    Neighbouring,
    NoiseEquation,
    Parallel,
    Pipeline,
    PoissonSubsampled,
    Profile,
    PureDP,
    RandomAllocation,
    RandomizedResponse,
    RenyiDP,
    Repeated,
    Shuffled,
    SubsampledWithoutReplacement,
    TruncatedPoisson,
    load,
)

if TYPE_CHECKING:  # imported on first use (PEP 562) to keep `import gaussdp` fast
    from gaussdp import calibrate, clt, curves, gdpt, interop, rdp, report
    from gaussdp.clt import OptimisticApproximationWarning
    from gaussdp.curves import PrivacyProfile, TradeOff
    from gaussdp.interop import GaussDPAccountant, from_dp_event
    from gaussdp.report import Report
    from gaussdp.sweeps import sweep

__version__ = "0.1.0"

#: Public names loaded on first access: {name: (module, attribute or None for the module)}.
_LAZY = {
    "calibrate": ("gaussdp.calibrate", None),
    "clt": ("gaussdp.clt", None),
    "curves": ("gaussdp.curves", None),
    "gdpt": ("gaussdp.gdpt", None),
    "interop": ("gaussdp.interop", None),
    "rdp": ("gaussdp.rdp", None),
    "report": ("gaussdp.report", None),
    "OptimisticApproximationWarning": ("gaussdp.clt", "OptimisticApproximationWarning"),
    "PrivacyProfile": ("gaussdp.curves", "PrivacyProfile"),
    "TradeOff": ("gaussdp.curves", "TradeOff"),
    "GaussDPAccountant": ("gaussdp.interop", "GaussDPAccountant"),
    "from_dp_event": ("gaussdp.interop", "from_dp_event"),
    "Report": ("gaussdp.report", "Report"),
    "sweep": ("gaussdp.sweeps", "sweep"),
    "sweeps": ("gaussdp.sweeps", None),
}


def __getattr__(name: str):
    """Load the rarer parts of the public face on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module 'gaussdp' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DPSGD",
    "GDP",
    "ZCDP",
    "Accounting",
    "AccuracyWarning",
    "AmplifiedBandMF",
    "ApproxDP",
    "Composition",
    "DiscreteGaussian",
    "GaussDPAccountant",
    "Gaussian",
    "GaussianDP",
    "GaussianMixture",
    "Group",
    "InvalidParameterError",
    "Laplace",
    "MatrixMechanism",
    "Mechanism",
    "Neighbouring",
    "NoiseEquation",
    "OptimisticApproximationWarning",
    "Parallel",
    "Pipeline",
    "PoissonSubsampled",
    "PrivacyProfile",
    "Profile",
    "PureDP",
    "RandomAllocation",
    "RandomizedResponse",
    "RenyiDP",
    "Repeated",
    "Report",
    "Shuffled",
    "SubsampledWithoutReplacement",
    "TradeOff",
    "TruncatedPoisson",
    "__version__",
    "account",
    "calibrate",
    "clt",
    "curves",
    "from_dp_event",
    "gdp",
    "gdpt",
    "interop",
    "load",
    "matrix",
    "mechanisms",
    "rdp",
    "report",
    "sweep",
]
