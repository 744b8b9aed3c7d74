"""gaussdp: differential-privacy accounting built around Gaussian DP and f-DP.

The public face of the package. Closed forms for μ-GDP live in
:mod:`gaussdp.gdp`; every public function validates its inputs and raises
:class:`InvalidParameterError` (a ``ValueError``) naming the parameter, the
value and the allowed range.
"""

from gaussdp import calibrate, clt, curves, gdp, gdpt, interop, mechanisms, rdp, report
from gaussdp._validation import InvalidParameterError
from gaussdp.accountant import Accounting, account
from gaussdp.clt import OptimisticApproximationWarning
from gaussdp.curves import PrivacyProfile, TradeOff
from gaussdp.gdp import GaussianDP
from gaussdp.interop import GaussDPAccountant, from_dp_event
from gaussdp.mechanisms import (
    DPSGD,
    GDP,
    ZCDP,
    ApproxDP,
    Composition,
    DiscreteGaussian,
    Gaussian,
    Group,
    Laplace,
    Mechanism,
    Neighbouring,
    NoiseEquation,
    Parallel,
    Pipeline,
    PoissonSubsampled,
    Profile,
    PureDP,
    RandomizedResponse,
    RenyiDP,
    Repeated,
    SubsampledWithoutReplacement,
    load,
)
from gaussdp.report import Report
from gaussdp.sweeps import sweep

__version__ = "0.1.0"

__all__ = [
    "DPSGD",
    "GDP",
    "ZCDP",
    "Accounting",
    "ApproxDP",
    "Composition",
    "DiscreteGaussian",
    "GaussDPAccountant",
    "Gaussian",
    "GaussianDP",
    "Group",
    "InvalidParameterError",
    "Laplace",
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
    "RandomizedResponse",
    "RenyiDP",
    "Repeated",
    "Report",
    "SubsampledWithoutReplacement",
    "TradeOff",
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
    "mechanisms",
    "rdp",
    "report",
    "sweep",
]
