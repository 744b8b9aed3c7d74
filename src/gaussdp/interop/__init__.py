"""Interoperability: use gaussdp from the code people already have.

* :func:`from_dp_event` — Google dp_accounting ``DpEvent`` trees (TensorFlow
  Privacy, JAX Privacy) → gaussdp mechanism descriptions
  (:mod:`gaussdp.interop.dp_event`), and :func:`to_dp_event` back;
* :class:`GaussDPAccountant` — an accountant with Opacus's interface, usable
  as ``opacus.PrivacyEngine(accountant="gaussdp")`` after :func:`register`
  (:mod:`gaussdp.interop.opacus`).

Neither dp_accounting nor Opacus is imported by gaussdp itself.
"""

from gaussdp.interop.dp_event import UnsupportedEventError, from_dp_event, to_dp_event
from gaussdp.interop.opacus import GaussDPAccountant, ShufflingWarning, register

__all__ = [
    "GaussDPAccountant",
    "ShufflingWarning",
    "UnsupportedEventError",
    "from_dp_event",
    "register",
    "to_dp_event",
]
