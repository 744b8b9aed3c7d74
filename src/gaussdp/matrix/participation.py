"""Participation patterns: on which steps one record (or user) may contribute.

A pattern is a set of steps; the record's contribution at each of them has norm
at most 1 (the clipping norm), zero elsewhere. Three schemas:

* :class:`SingleParticipation`: one step.
* :class:`MinSeparation`: at most k steps, any two at least b apart
  ("b-min-sep", Choquette-Choo et al. 2023, arXiv 2306.08153), e.g. shuffled
  epochs of b steps with k epochs.
* :class:`FixedEpochs`: k epochs of n/k steps in the same order every epoch:
  the steps {i, i + n/k, …, i + (k − 1)·n/k} ("(k, b)-participation",
  Choquette-Choo et al. 2023, arXiv 2211.06530).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gaussdp._validation import InvalidParameterError, check_integer
from gaussdp.matrix.strategies import short_repr

__all__ = [
    "FixedEpochs",
    "MinSeparation",
    "Participation",
    "SingleParticipation",
    "participation_from_dict",
]


class Participation:
    """Base class of the participation schemas (immutable, compared by value)."""

    def check(self, n: int) -> None:
        """Refuse, in one line, a schema that does not fit ``n`` steps."""

    def describe(self) -> str:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def __str__(self) -> str:
        return self.describe()


@dataclass(frozen=True)
class SingleParticipation(Participation):
    """Each record contributes to one step.

    Examples
    --------
    >>> SingleParticipation().describe()
    'single participation'
    """

    def describe(self) -> str:
        return "single participation"

    def to_dict(self) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class MinSeparation(Participation):
    """At most ``max_participations`` steps per record, any two ``separation`` or more apart.

    Parameters
    ----------
    separation : int
        b ≥ 1 (b = 1: any steps, consecutive ones included).
    max_participations : int
        k ≥ 1. Over n steps at most ⌈n/b⌉ participations fit (:meth:`effective`).

    Examples
    --------
    >>> MinSeparation(64, 4).describe()
    'at most 4 participations, 64 or more steps apart'
    >>> MinSeparation(64, 40).effective(1024)
    16
    """

    separation: int
    max_participations: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "separation", check_integer("separation", self.separation))
        object.__setattr__(
            self,
            "max_participations",
            check_integer("max_participations", self.max_participations),
        )

    def effective(self, n: int) -> int:
        """min(k, ⌈n/b⌉): the participations that fit in ``n`` steps."""
        return min(self.max_participations, -(-n // self.separation))

    def describe(self) -> str:
        k = self.max_participations
        return (
            f"at most {k} participation{'s' if k != 1 else ''}, "
            f"{self.separation} or more steps apart"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"min_separation": self.separation, "max_participations": self.max_participations}


@dataclass(frozen=True)
class FixedEpochs(Participation):
    """``epochs`` passes over the data in a fixed order; each record at steps i + j·n/epochs.

    Parameters
    ----------
    epochs : int
        k ≥ 1; k must divide the number of steps n.

    Examples
    --------
    >>> FixedEpochs(4).check(10)
    Traceback (most recent call last):
    ...
    gaussdp._validation.InvalidParameterError: epochs must divide the number of steps n = 10, got 4
    """

    epochs: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "epochs", check_integer("epochs", self.epochs))

    def check(self, n: int) -> None:
        if n % self.epochs:
            raise InvalidParameterError(
                f"epochs must divide the number of steps n = {n}, got {self.epochs}"
            )

    def describe(self) -> str:
        return f"{self.epochs} fixed epoch{'s' if self.epochs != 1 else ''}"

    def to_dict(self) -> dict[str, Any]:
        return {"epochs": self.epochs}


def participation_from_dict(table: Any, where: str = "participation") -> Participation:
    """A schema from its table: ``{}``, ``{min_separation, max_participations}``, ``{epochs}``.

    Examples
    --------
    >>> participation_from_dict({"min_separation": 64, "max_participations": 4})
    MinSeparation(separation=64, max_participations=4)
    """
    if isinstance(table, Participation):
        return table
    if table == "single":
        return SingleParticipation()
    if not isinstance(table, Mapping):
        raise InvalidParameterError(
            f"{where} must be a participation or a table ({{}}, {{min_separation = b, "
            f"max_participations = k}} or {{epochs = k}}), got {short_repr(table)}"
        )
    keys = set(table)
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise InvalidParameterError(f"{where}.{key} must be an integer >= 1, got {value!r}")
    try:
        if not keys:
            return SingleParticipation()
        if keys == {"min_separation", "max_participations"}:
            return MinSeparation(table["min_separation"], table["max_participations"])
        if keys == {"epochs"}:
            return FixedEpochs(table["epochs"])
    except InvalidParameterError as error:
        raise InvalidParameterError(f"{where}.{error}") from None
    raise InvalidParameterError(
        f"{where} must hold no keys (single participation), min_separation and "
        f"max_participations, or epochs; got {', '.join(sorted(keys))}"
    )
