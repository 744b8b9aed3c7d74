"""Neighbouring relations: which data sets count as neighbours, and which
descriptions have a dominating pair under each.
"""

from __future__ import annotations

import enum
from typing import Any

from gaussdp._validation import InvalidParameterError
from gaussdp.mechanisms.base import (
    Mechanism,
    _require_mechanism,
    _suggest,
    _walk,
)
from gaussdp.mechanisms.combinators import Composition, Repeated
from gaussdp.mechanisms.noise import DiscreteGaussian, Gaussian, GaussianMixture, Laplace
from gaussdp.mechanisms.samplers import RandomAllocation, TruncatedPoisson
from gaussdp.mechanisms.sampling import PoissonSubsampled, SubsampledWithoutReplacement


class Neighbouring(enum.Enum):
    """Which data sets count as neighbours; applies to a whole description.

    ``ADD_REMOVE`` (the default everywhere): ``D'`` is ``D`` with one record
    added or removed. ``REPLACE``: ``D'`` is ``D`` with one record replaced by
    another (data sets of a fixed size). Under ``REPLACE`` a record's
    contribution to a sum may move from ``v`` to ``v'`` with
    ``‖v − v'‖ ≤ 2Δ``, where Δ is the add/remove sensitivity (the convention of
    dp_accounting's ``REPLACE_ONE``).

    Examples
    --------
    >>> Neighbouring("replace")
    <Neighbouring.REPLACE: 'replace'>
    >>> Neighbouring.ADD_REMOVE.value
    'add_remove'
    """

    ADD_REMOVE = "add_remove"
    REPLACE = "replace"

    def describe(self) -> str:
        """A few words for people: ``'add/remove one record'`` or ``'replace one record'``."""
        return "add/remove one record" if self is Neighbouring.ADD_REMOVE else "replace one record"


_ADDITIVE = (Gaussian, Laplace, DiscreteGaussian)


#: Descriptions whose pair is defined under add/remove only.
_ADD_REMOVE_ONLY = (RandomAllocation, TruncatedPoisson, GaussianMixture)


def validate_neighbouring(
    mechanism: Mechanism, neighbouring=Neighbouring.ADD_REMOVE
) -> Neighbouring:
    """Check that ``mechanism`` has a defined pair under ``neighbouring``; return the enum.

    The rules (see the class docstrings): :class:`SubsampledWithoutReplacement`
    needs REPLACE (fixed-size data sets); :class:`RandomAllocation`,
    :class:`TruncatedPoisson` and :class:`GaussianMixture` need ADD_REMOVE; and
    :class:`PoissonSubsampled` under REPLACE needs an inner mechanism built only
    from additive-noise mechanisms (Gaussian, Laplace, DiscreteGaussian) by
    Composition and Repeated.

    Parameters
    ----------
    mechanism : Mechanism
    neighbouring : Neighbouring or str
        A :class:`Neighbouring` or its value (``"add_remove"``, ``"replace"``).

    Raises
    ------
    InvalidParameterError
        If ``neighbouring`` is not a relation, or the description has no pair under it.

    Examples
    --------
    >>> from gaussdp.mechanisms import DPSGD
    >>> validate_neighbouring(DPSGD(1.0, 0.01, 10), "replace")
    <Neighbouring.REPLACE: 'replace'>
    """
    _require_mechanism("mechanism", mechanism)
    relation = _neighbouring(neighbouring)
    for part in _walk(mechanism):
        if isinstance(part, SubsampledWithoutReplacement) and relation is Neighbouring.ADD_REMOVE:
            raise InvalidParameterError(
                "neighbouring must be 'replace' for SubsampledWithoutReplacement "
                "(fixed-size data sets), got 'add_remove'"
            )
        if isinstance(part, _ADD_REMOVE_ONLY) and relation is Neighbouring.REPLACE:
            raise InvalidParameterError(
                f"neighbouring must be 'add_remove' for {type(part).__name__} (its pair is "
                "defined under add/remove only), got 'replace'"
            )
        if isinstance(part, PoissonSubsampled) and relation is Neighbouring.REPLACE:
            inner = [p for p in _walk(part.mechanism) if not isinstance(p, (Composition, Repeated))]
            odd = [p for p in inner if not isinstance(p, _ADDITIVE)]
            if odd:
                raise InvalidParameterError(
                    "neighbouring 'replace' with PoissonSubsampled is defined only over "
                    "Gaussian, Laplace and DiscreteGaussian mechanisms (and compositions of "
                    f"them), got PoissonSubsampled over {odd[0]._short()}"
                )
    return relation


def _neighbouring(value: Any) -> Neighbouring:
    if isinstance(value, Neighbouring):
        return value
    allowed = ", ".join(repr(member.value) for member in Neighbouring)
    if isinstance(value, str):
        try:
            return Neighbouring(value)
        except ValueError:
            raise InvalidParameterError(
                f"neighbouring must be one of {allowed}, got {value!r}"
                + _suggest(value, [m.value for m in Neighbouring])
            ) from None
    raise InvalidParameterError(f"neighbouring must be one of {allowed}, got {value!r}")
