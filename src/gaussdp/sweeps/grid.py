"""Sweep files: a pipeline file in which any number may be a list of numbers.

A sweep file is a pipeline file (``docs/mechanisms.md``) plus a ``[sweep]``
table naming the outputs. Any number of a mechanism table — also inside a
nested ``mechanism = {...}`` table, and the ``repeat`` key — may be written
as a list; the sweep is the Cartesian product of all lists, in the order in
which they appear in the file, the last list varying fastest. Point ``i`` of
the product is grid point ``i`` (the ``point`` column of the results).

``[sweep]`` keys:

``deltas``
    δ ∈ (0, 1) at which ε is reported (one row per point and δ).
``epsilons``
    ε ≥ 0 at which δ is reported (one row per point and ε).
``report``
    ``true`` adds the μ-GDP report's ``mu``, ``regret``, ``delta_tail`` and ``tier``.
``accuracy``
    The accountant's accuracy (default: :func:`gaussdp.account`'s).

Fields whose value is itself an array (``renyi_dp``'s ``orders`` and
``epsilons``) cannot be swept. Every point's pipeline is built — and so
validated by the mechanism classes themselves — when the grid is read,
before anything is computed.
"""

from __future__ import annotations

import copy
import difflib
import functools
import hashlib
import itertools
import json
import math
import numbers
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gaussdp import mechanisms as m
from gaussdp._validation import InvalidParameterError
from gaussdp.accountant import DEFAULT_ACCURACY
from gaussdp.mechanisms.pipeline import entry_fields, parse_entry, parse_toml

__all__ = ["MAXIMUM_POINTS", "Axis", "Outputs", "SweepGrid", "read_grid"]

#: Grids with more points than this are refused unless explicitly allowed.
MAXIMUM_POINTS = 1_000_000

_SWEEP_KEYS = ("deltas", "epsilons", "report", "accuracy")
_TOP_LEVEL_KEYS = ("name", "neighbouring", "mechanism", "sweep")
_FORMAT_VERSION = "gaussdp-sweep/1"


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(frozen=True)
class Axis:
    """One swept parameter: where it is in the document, its column and its values."""

    location: tuple[str | int, ...]  # keys from the document root to the field
    place: str  # the parser's name for it, e.g. "mechanism[0].noise_multiplier"
    field: str  # the field name, e.g. "noise_multiplier"
    values: tuple[float | int, ...]
    column: str = ""


@dataclass(frozen=True)
class Outputs:
    """What each point reports: ε at each δ, δ at each ε, and optionally the μ-GDP report."""

    deltas: tuple[float, ...] = ()
    epsilons: tuple[float, ...] = ()
    report: bool = False
    accuracy: float = DEFAULT_ACCURACY

    @property
    def rows_per_point(self) -> int:
        return len(self.deltas) + len(self.epsilons)

    def columns(self) -> list[str]:
        """The result columns after the swept parameters."""
        columns = []
        if self.deltas:
            columns += ["delta", "epsilon_lower", "epsilon_upper"]
        if self.epsilons:
            columns += ["epsilon", "delta_lower", "delta_upper"]
        if self.report:
            columns += ["mu", "regret", "delta_tail", "tier"]
        return [*columns, "error"]


def _read_outputs(table: Any, source: str) -> Outputs:
    if table is None:
        raise InvalidParameterError(
            f"{source}: no [sweep] table; add one naming the outputs, e.g. [sweep] deltas = [1e-5]"
        )
    if not isinstance(table, Mapping):
        raise InvalidParameterError(f"{source}: sweep must be a table ([sweep]), got {table!r}")
    for key in table:
        if key not in _SWEEP_KEYS:
            matches = difflib.get_close_matches(str(key), _SWEEP_KEYS, n=1)
            hint = f" (did you mean {matches[0]!r}?)" if matches else ""
            raise InvalidParameterError(
                f"{source}: sweep.{key}: unknown key{hint}; allowed: {', '.join(_SWEEP_KEYS)}"
            )

    def numbers_of(key: str, low: float, high: float, high_open: bool) -> tuple[float, ...]:
        values = table.get(key, [])
        if _is_number(values):
            values = [values]
        if not isinstance(values, (list, tuple)):
            raise InvalidParameterError(
                f"{source}: sweep.{key} must be a list of numbers, got {values!r}"
            )
        result = []
        for value in values:
            if not _is_number(value):
                raise InvalidParameterError(
                    f"{source}: sweep.{key} must hold numbers, got {value!r}"
                )
            ok = low < value and (value < high if high_open else value <= high)
            if key == "epsilons":
                ok = low <= value < high
            if not ok:
                allowed = "[0, inf)" if key == "epsilons" else "(0, 1)"
                name = key[:-1]
                raise InvalidParameterError(
                    f"{source}: sweep.{key}: {name} must be in {allowed}, got {value!r}"
                )
            result.append(float(value))
        return tuple(result)

    deltas = numbers_of("deltas", 0.0, 1.0, True)
    epsilons = numbers_of("epsilons", 0.0, math.inf, True)
    if not deltas and not epsilons:
        raise InvalidParameterError(
            f"{source}: [sweep] names no outputs; give deltas = [...] and/or epsilons = [...]"
        )
    report = table.get("report", False)
    if not isinstance(report, bool):
        raise InvalidParameterError(f"{source}: sweep.report must be true or false, got {report!r}")
    accuracy = table.get("accuracy", DEFAULT_ACCURACY)
    if not _is_number(accuracy) or not 0.0 < accuracy <= 0.1:
        raise InvalidParameterError(
            f"{source}: sweep.accuracy must be in (0, 0.1], got {accuracy!r}"
        )
    return Outputs(deltas, epsilons, report, float(accuracy))


def _find_axes(entry: Any, location: tuple, place: str, axes: list[Axis]) -> None:
    """Collect the lists of numbers in one mechanism table (recursing into nested ones)."""
    if not isinstance(entry, Mapping):
        return  # the pipeline parser reports it
    kinds = entry_fields(entry.get("type"))
    for key, value in entry.items():
        kind = kinds.get(key)
        here = f"{place}.{key}"
        if kind in ("real", "integer") and isinstance(value, (list, tuple)):
            if not value:
                raise InvalidParameterError(
                    f"{here}: empty list; a swept parameter needs at least one value"
                )
            for item in value:
                if not _is_number(item):
                    raise InvalidParameterError(
                        f"{here}: a swept parameter must be a list of numbers, got {item!r}"
                    )
            axes.append(Axis((*location, key), here, str(key), tuple(value)))
        elif kind == "name" and isinstance(value, (list, tuple)):  # DP-SGD's sampler
            if not value:
                raise InvalidParameterError(
                    f"{here}: empty list; a swept parameter needs at least one value"
                )
            for item in value:
                if not isinstance(item, str):
                    raise InvalidParameterError(
                        f"{here}: a swept name must be a list of strings, got {item!r}"
                    )
            axes.append(Axis((*location, key), here, str(key), tuple(value)))
        elif kind == "mechanism":
            _find_axes(value, (*location, key), here, axes)
        elif kind == "mechanisms" and isinstance(value, (list, tuple)):
            for index, part in enumerate(value):
                _find_axes(part, (*location, key, index), f"{here}[{index}]", axes)


def _name_columns(axes: list[Axis]) -> list[Axis]:
    """Column = the field name, or its full place where two swept fields share a name."""
    counts: dict[str, int] = {}
    for axis in axes:
        counts[axis.field] = counts.get(axis.field, 0) + 1
    named = []
    for axis in axes:
        column = axis.field if counts[axis.field] == 1 else axis.place
        named.append(Axis(axis.location, axis.place, axis.field, axis.values, column))
    return named


def _parent(document: Any, location: tuple) -> Any:
    """The container that holds the field at ``location`` (its last key)."""
    for key in location[:-1]:
        document = document[key]
    return document


def _set(document: dict, location: tuple, value: Any) -> None:
    _parent(document, location)[location[-1]] = value


def _without_lists(document: Any, locations: list[tuple]) -> Any:
    """A deep copy of ``document`` with the field at each location set to None.

    The swept lists are left out before copying, so that a copy per grid point costs the
    size of the description, not of its lists (which grow with the grid: one deep copy
    of them per point made building every point quadratic in the grid's size).
    """
    saved = []
    for location in locations:
        target = _parent(document, location)
        saved.append((target, location[-1], target[location[-1]]))
        target[location[-1]] = None
    try:
        return copy.deepcopy(document)
    finally:
        for target, key, value in reversed(saved):
            target[key] = value


def _canonical(value: Any) -> Any:
    """JSON-ready and order-independent: floats as repr, dict keys sorted by json.dumps."""
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, float):
        return repr(value)
    return value


@dataclass(frozen=True, eq=False)
class SweepGrid:
    """A parsed, validated sweep: the pipeline document, its swept axes and the outputs.

    Attributes
    ----------
    name : str or None
        The grid's ``name``.
    source : str
        How messages refer to the grid (a path, ``<string>`` or ``<dict>``).
    document : dict
        The pipeline part of the file, lists included.
    axes : tuple of Axis
        The swept parameters, in file order.
    outputs : Outputs
        What every point reports.
    """

    name: str | None
    source: str
    document: dict
    axes: tuple[Axis, ...]
    outputs: Outputs

    @property
    def size(self) -> int:
        """The number of grid points (the product of the list lengths)."""
        return math.prod(len(axis.values) for axis in self.axes)

    @property
    def parameter_columns(self) -> list[str]:
        return [axis.column for axis in self.axes]

    @property
    def columns(self) -> list[str]:
        """All result columns: ``point``, the swept parameters, the outputs, ``error``."""
        return ["point", *self.parameter_columns, *self.outputs.columns()]

    @property
    def fingerprint(self) -> str:
        """A hash of everything that decides the numbers (not the name)."""
        payload = {
            "format": _FORMAT_VERSION,
            "pipeline": {k: v for k, v in self.document.items() if k != "name"},
            "outputs": {
                "deltas": self.outputs.deltas,
                "epsilons": self.outputs.epsilons,
                "report": self.outputs.report,
                "accuracy": self.outputs.accuracy,
            },
        }
        text = json.dumps(_canonical(payload), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def values(self, point: int) -> tuple:
        """The swept values of grid point ``point`` (mixed radix, last axis fastest)."""
        result = []
        for axis in reversed(self.axes):
            point, digit = divmod(point, len(axis.values))
            result.append(axis.values[digit])
        return tuple(reversed(result))

    def parameters(self, point: int) -> dict[str, Any]:
        """``{column: value}`` of grid point ``point``."""
        return dict(zip(self.parameter_columns, self.values(point), strict=True))

    @functools.cached_property
    def _template(self) -> dict:
        """The document with every swept field None (set per point by :meth:`pipeline`)."""
        return _without_lists(self.document, [axis.location for axis in self.axes])

    def pipeline(self, point: int) -> m.Pipeline:
        """The pipeline of grid point ``point`` (validated by the mechanism classes)."""
        document = copy.deepcopy(self._template)
        for axis, value in zip(self.axes, self.values(point), strict=True):
            _set(document, axis.location, value)
        return m.Pipeline.from_dict(document)

    def validate(self) -> None:
        """Build every value combination of every mechanism entry; raise naming the value.

        The entries of a pipeline are independent descriptions, so each
        ``[[mechanism]]`` entry is built for every combination of its own
        lists (far fewer than the grid's points), and one whole pipeline is
        built to check the relation (which depends on the types only).
        """
        entries = self.document.get("mechanism")
        if isinstance(entries, list):
            groups = {}
            for axis in self.axes:
                groups.setdefault(axis.location[1], []).append(axis)
            for index, entry in enumerate(entries):
                self._validate_entry(entry, f"mechanism[{index}]", groups.get(index, []), 2)
        elif isinstance(entries, Mapping):
            self._validate_entry(entries, "mechanism", list(self.axes), 1)
        try:
            self.pipeline(0)
        except InvalidParameterError as error:
            raise InvalidParameterError(f"{self.source}: {error}") from None

    def _validate_entry(self, entry: Any, place: str, axes: list[Axis], depth: int) -> None:
        template = _without_lists(entry, [axis.location[depth:] for axis in axes])
        for values in itertools.product(*(axis.values for axis in axes)):
            built = copy.deepcopy(template)
            for axis, value in zip(axes, values, strict=True):
                _set(built, axis.location[depth:], value)
            try:
                parse_entry(built, place)
            except InvalidParameterError as error:
                where = ", ".join(
                    f"{axis.column} = {value!r}" for axis, value in zip(axes, values, strict=True)
                )
                detail = f" (at {where})" if where else ""
                raise InvalidParameterError(f"{self.source}: {error}{detail}") from None


def _load_document(grid: Any) -> tuple[dict, str]:
    """The TOML document of a path, a TOML string or a dict, and how to name it."""
    if isinstance(grid, Mapping):
        return copy.deepcopy(dict(grid)), "<dict>"
    if isinstance(grid, os.PathLike) or (
        isinstance(grid, str) and ("\n" not in grid and "=" not in grid)
    ):
        source = os.fspath(grid)
        try:
            with open(source, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            raise m.PipelineFileError(f"{source}: file not found") from None
        except IsADirectoryError:
            raise m.PipelineFileError(f"{source}: is a directory, not a sweep file") from None
        except UnicodeDecodeError as error:
            raise m.PipelineFileError(f"{source}: not UTF-8 text ({error.reason})") from None
        except OSError as error:
            raise m.PipelineFileError(
                f"{source}: cannot read the file ({error.strerror})"
            ) from None
    elif isinstance(grid, str):
        text, source = grid, "<string>"
    else:
        raise InvalidParameterError(
            f"grid must be a path, TOML text or a dict, got {type(grid).__name__}"
        )
    return parse_toml(text, source), source


def read_grid(
    grid: str | os.PathLike[str] | Mapping[str, Any], *, maximum_points: int | None = None
) -> SweepGrid:
    """Read and validate a sweep (a path, TOML text or a dict); nothing is computed.

    Parameters
    ----------
    grid : str, path or dict
        A sweep file's path, its TOML text, or the parsed document.
    maximum_points : int, optional
        Refuse larger grids (default :data:`MAXIMUM_POINTS`; ``0`` for no limit).

    Raises
    ------
    InvalidParameterError
        ``<source>: <place>: <problem>`` for a malformed file, an empty list,
        an invalid value in any list (naming the parameter and the value), or
        too many points.

    Examples
    --------
    >>> grid = read_grid({
    ...     "sweep": {"deltas": [1e-5]},
    ...     "mechanism": [{"type": "dpsgd", "noise_multiplier": [8.0, 9.4],
    ...                    "sampling_probability": 0.32768, "steps": [1000, 2000]}],
    ... })
    >>> grid.size, grid.columns
    (4, ['point', 'noise_multiplier', 'steps', 'delta', 'epsilon_lower', 'epsilon_upper', 'error'])
    >>> grid.parameters(1)
    {'noise_multiplier': 8.0, 'steps': 2000}
    """
    document, source = _load_document(grid)
    for key in document:
        if key not in _TOP_LEVEL_KEYS:
            matches = difflib.get_close_matches(str(key), _TOP_LEVEL_KEYS, n=1)
            hint = f" (did you mean {matches[0]!r}?)" if matches else ""
            raise InvalidParameterError(
                f"{source}: {key}: unknown top-level key{hint}; "
                f"allowed: {', '.join(_TOP_LEVEL_KEYS)}"
            )
    outputs = _read_outputs(document.pop("sweep", None), source)
    axes: list[Axis] = []
    entries = document.get("mechanism")
    try:
        if isinstance(entries, Mapping):
            _find_axes(entries, ("mechanism",), "mechanism", axes)
        elif isinstance(entries, Sequence) and not isinstance(entries, str):
            for index, entry in enumerate(entries):
                _find_axes(entry, ("mechanism", index), f"mechanism[{index}]", axes)
    except InvalidParameterError as error:
        raise InvalidParameterError(f"{source}: {error}") from None
    name = document.get("name")
    result = SweepGrid(
        name if isinstance(name, str) else None,
        source,
        document,
        tuple(_name_columns(axes)),
        outputs,
    )
    limit = MAXIMUM_POINTS if maximum_points is None else maximum_points
    if limit and result.size > limit:
        raise InvalidParameterError(
            f"{source}: the grid has {result.size:,} points, more than {limit:,}; "
            "confirm with --yes (or maximum_points=0) to run it anyway"
        )
    result.validate()
    return result
