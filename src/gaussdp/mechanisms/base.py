"""The base of every mechanism description, and the checks their fields share.

:class:`Mechanism` is the frozen, hashable, value-compared base class; every
subclass with a ``type_name`` that a pipeline file can hold (no Python
callables among its fields) is registered by that name as it is defined
(:func:`registered_types`), so a new description is known to pipeline files
(:mod:`gaussdp.mechanisms.pipeline`) and sweeps without being listed anywhere.
The helpers below validate fields (a plain float, an int, a tuple of floats)
and format numbers for the one-line descriptions.
"""

from __future__ import annotations

import difflib
import math
import numbers
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from gaussdp._validation import InvalidParameterError, check_integer, check_real

_INF = math.inf

#: type_name -> class, for every description a pipeline file can hold (filled as
#: subclasses are defined; see :func:`registered_types`).
_REGISTERED: dict[str, type] = {}


# --------------------------------------------------------------------------- helpers


def _real(name: str, value: Any, **bounds) -> float:
    """A scalar real in the given range, as a plain Python float (−0.0 becomes 0.0)."""
    is_real_scalar = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        is_real_scalar = True
    if not is_real_scalar:
        raise InvalidParameterError(f"{name} must be a real number, got {value!r}")
    return float(check_real(name, value, **bounds)) + 0.0


def _integer(name: str, value: Any, low: int = 1) -> int:
    """An integer ≥ ``low`` as a plain Python int (integral floats are accepted)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return check_integer(name, value, low=low)


def _fmt(value: float | int) -> str:
    """Shortest exact text for a number: 5.0 → '5', inf → '∞', 1e-05 → '1e-05'."""
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "∞"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _suggest(word: str, choices: Iterable[str]) -> str:
    matches = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {matches[0]!r}?)" if matches else ""


def _reals(name: str, values: Any, **bounds) -> tuple[float, ...]:
    """A non-empty tuple of plain floats, each in the given range."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise InvalidParameterError(f"{name} must be a sequence of real numbers, got {values!r}")
    items = tuple(values)
    if not items:
        raise InvalidParameterError(f"{name} must hold at least one number, got none")
    return tuple(_real(f"{name}[{index}]", value, **bounds) for index, value in enumerate(items))


def _require_callable(name: str, value: Any, what: str) -> None:
    if not callable(value):
        raise InvalidParameterError(f"{name} must be a callable {what}, got {value!r}")


# --------------------------------------------------------------------------- base class


@dataclass(frozen=True)
class Mechanism:
    """Base class of every mechanism description (a frozen dataclass with no fields).

    Subclasses are immutable, hashable and compare by value; they validate
    their fields at construction and hold plain Python floats, ints and tuples.
    ``Mechanism`` itself cannot be instantiated.
    """

    type_name: ClassVar[str] = ""
    # field name -> "real" | "integer" | "mechanism" | "mechanisms"
    _kinds: ClassVar[dict[str, str]] = {}

    def __new__(cls, *args, **kwargs):
        if cls is Mechanism:
            raise TypeError(
                "Mechanism is an abstract base class; use Gaussian, PureDP, Composition, ..."
            )
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # A class that names its own type (a subclass of Gaussian inherits "gaussian" and is
        # not registered in its place); the first class to claim a name keeps it.
        named = "type_name" in cls.__dict__ and cls.type_name
        if named and "callable" not in cls._kinds.values():
            _REGISTERED.setdefault(cls.type_name, cls)

    def to_dict(self) -> dict[str, Any]:
        """A JSON/TOML-friendly dict: ``{"type": <snake_case name>, <field>: <value>, ...}``.

        Wrapped mechanisms are nested dicts (``"mechanism"``) or a list of dicts
        (``"mechanisms"``). :func:`from_dict` inverts it.
        """
        result: dict[str, Any] = {"type": self.type_name}
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, Mechanism):
                value = value.to_dict()
            elif isinstance(value, tuple):
                value = [part.to_dict() if isinstance(part, Mechanism) else part for part in value]
            elif self._kinds.get(field.name) == "callable":
                raise InvalidParameterError(
                    f"{type(self).__name__} holds a Python callable ({field.name}) and cannot "
                    "be written as a dict or a pipeline file"
                )
            result[field.name] = value
        return result

    def describe(self) -> str:
        """A readable one-line description, e.g. ``'DP-SGD: σ=9.4, q=0.32768, 2000 steps'``."""
        return self._short()

    def _short(self) -> str:
        """The compact form used when this mechanism is nested inside another."""
        raise NotImplementedError  # pragma: no cover - every subclass overrides it

    def _children(self) -> tuple[Mechanism, ...]:
        """The mechanisms this one is built from (for walking a description)."""
        return ()

    def expand(self) -> Mechanism | None:
        """The description this one is exactly equal to, in other descriptions; None if none.

        A description that is exactly another one (DP-SGD is a repeated
        Poisson-subsampled Gaussian; a matrix mechanism is one Gaussian
        mechanism) returns it here, and everything that reads descriptions
        (the leaves the accountant composes, the RDP view, the report's tail
        limit, groups) reads the expansion in its place. None (the default)
        means the description is a building block in its own right.
        """
        return None

    def __str__(self) -> str:
        return self.describe()


def _walk(mechanism: Mechanism):
    yield mechanism
    for child in mechanism._children():
        yield from _walk(child)


def _require_mechanism(name: str, value: Any) -> Mechanism:
    if not isinstance(value, Mechanism):
        raise InvalidParameterError(
            f"{name} must be a Mechanism (Gaussian, PureDP, Composition, ...), got {value!r}"
        )
    return value


def registered_types() -> Mapping[str, type[Mechanism]]:
    """Every description a pipeline file can hold, by its ``type_name`` (a read-only view).

    A subclass of :class:`Mechanism` is registered when it is defined, unless one
    of its fields is a Python callable (``Profile``, ``NoiseEquation``), which no
    file can hold.

    Examples
    --------
    >>> import gaussdp.mechanisms
    >>> registered_types()["gaussian"].__name__
    'Gaussian'
    """
    return types.MappingProxyType(_REGISTERED)
