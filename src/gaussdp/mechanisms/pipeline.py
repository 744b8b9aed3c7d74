"""Pipeline files: a mechanism with its neighbouring relation, as a dict or TOML.

:class:`Pipeline` holds a whole description; :func:`from_dict` and
:meth:`Mechanism.to_dict` convert one description; :func:`loads` / :func:`load`
read a TOML pipeline file and :func:`dumps` writes one. The format is
documented in ``docs/mechanisms.md``. Which ``type`` names a file may use is
:func:`gaussdp.mechanisms.base.registered_types`: a new description is known
here as soon as it is defined. The public helpers :func:`entry_fields`,
:func:`parse_entry` and :func:`parse_toml` are what sweep files
(:mod:`gaussdp.sweeps.grid`) build on.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any

from gaussdp._validation import InvalidParameterError
from gaussdp.mechanisms.base import (
    Mechanism,
    _integer,
    _require_mechanism,
    _suggest,
    registered_types,
)
from gaussdp.mechanisms.combinators import Composition, Repeated
from gaussdp.mechanisms.neighbouring import Neighbouring, _neighbouring, validate_neighbouring


class PipelineFileError(InvalidParameterError):
    """A pipeline file (or text) is malformed.

    The message names the file, the place in it (``mechanism[2].sigma``) and the
    problem: a TOML syntax error (with its line), an unknown type or field, a
    missing field, a value of the wrong type or out of range, or an empty pipeline.
    """


def resolve(mechanism, neighbouring=None) -> tuple[Mechanism, Neighbouring]:
    """The mechanism and relation to account: unpack a :class:`Pipeline`, default the relation.

    A pipeline's own relation applies unless ``neighbouring`` is given;
    otherwise add/remove. Raises :class:`InvalidParameterError` when
    ``neighbouring`` is not a :class:`Neighbouring` or ``mechanism`` is not a
    mechanism description.
    """
    if isinstance(mechanism, Pipeline):
        if neighbouring is None:
            neighbouring = mechanism.neighbouring
        mechanism = mechanism.mechanism
    if neighbouring is None:
        neighbouring = Neighbouring.ADD_REMOVE
    if not isinstance(neighbouring, Neighbouring):
        raise InvalidParameterError(
            "neighbouring must be a gaussdp.Neighbouring (ADD_REMOVE or REPLACE), "
            f"got {neighbouring!r}"
        )
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError(
            f"mechanism must be a gaussdp mechanism description, got {type(mechanism).__name__}"
        )
    return mechanism, neighbouring


# --------------------------------------------------------------------------- pipeline


@dataclass(frozen=True)
class Pipeline:
    """A mechanism together with the neighbouring relation that applies to all of it.

    This is what :func:`load` returns and what a pipeline file describes.

    Parameters
    ----------
    mechanism : Mechanism
        The whole algorithm.
    neighbouring : Neighbouring or str, default ADD_REMOVE
        Stored as a :class:`Neighbouring`; the description must have a
        dominating pair under it (see :func:`validate_neighbouring`).
    name : str or None
        A label for reports.

    Examples
    --------
    >>> p = Pipeline(DPSGD(9.4, 0.32768, 2000), name="CIFAR-10")
    >>> print(p)
    CIFAR-10: DP-SGD: σ=9.4, q=0.32768, 2000 steps [add/remove one record]
    >>> loads(dumps(p)) == p
    True
    """

    mechanism: Mechanism
    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE
    name: str | None = None

    def __post_init__(self) -> None:
        _require_mechanism("mechanism", self.mechanism)
        object.__setattr__(
            self, "neighbouring", validate_neighbouring(self.mechanism, self.neighbouring)
        )
        if self.name is not None and not isinstance(self.name, str):
            raise InvalidParameterError(f"name must be a string or None, got {self.name!r}")

    def describe(self) -> str:
        """One line: the name, the mechanism and the relation."""
        prefix = f"{self.name}: " if self.name else ""
        return f"{prefix}{self.mechanism.describe()} [{self.neighbouring.describe()}]"

    def __str__(self) -> str:
        return self.describe()

    def to_dict(self) -> dict[str, Any]:
        """The pipeline-file structure as a dict: ``name``, ``neighbouring``, ``mechanism`` list.

        A top-level :class:`Composition` of two or more parts becomes one
        ``mechanism`` entry per part; anything else is a single entry.
        """
        result: dict[str, Any] = {}
        if self.name is not None:
            result["name"] = self.name
        result["neighbouring"] = self.neighbouring.value
        if isinstance(self.mechanism, Composition) and len(self.mechanism.mechanisms) > 1:
            entries = [part.to_dict() for part in self.mechanism.mechanisms]
        else:
            entries = [self.mechanism.to_dict()]
        result["mechanism"] = entries
        return result

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> Pipeline:
        """Build a pipeline from the structure of a pipeline file (see :func:`loads`)."""
        return _pipeline_from_document(document)


# --------------------------------------------------------------------------- dict conversion


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _describe_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def parse_entry(entry: Any, path: str) -> Mechanism:
    """Parse one mechanism table (a dict); messages are prefixed with ``path``.

    ``path`` is where the table stands in its file (``"mechanism[2]"``, or ``""``
    at the top of :func:`from_dict`). An optional ``repeat`` key wraps the result
    in :class:`Repeated`.

    Raises
    ------
    InvalidParameterError
        Naming the place (``mechanism[2].sigma``) and the problem.

    Examples
    --------
    >>> parse_entry({"type": "pure_dp", "epsilon": 0.5}, "mechanism[0]")
    PureDP(epsilon=0.5)
    """
    where = path or "mechanism"
    if not isinstance(entry, Mapping):
        raise InvalidParameterError(
            f"{where} must be a table with a 'type' key, got {_describe_type(entry)} {entry!r}"
        )
    types = registered_types()
    known_types = ", ".join(sorted(types))
    if "type" not in entry:
        raise InvalidParameterError(f"{_join(path, 'type')} is missing; known types: {known_types}")
    type_name = entry["type"]
    if not isinstance(type_name, str):
        raise InvalidParameterError(
            f"{_join(path, 'type')} must be a string, got {_describe_type(type_name)} {type_name!r}"
        )
    cls = types.get(type_name)
    if cls is None:
        raise InvalidParameterError(
            f"{_join(path, 'type')}: unknown mechanism type {type_name!r}"
            f"{_suggest(type_name, types)}; known types: {known_types}"
        )
    allowed = [*cls._kinds, "repeat"]
    for key in entry:
        if key != "type" and key not in allowed:
            raise InvalidParameterError(
                f"{_join(path, str(key))}: unknown field for type {type_name!r}"
                f"{_suggest(str(key), allowed)}; allowed fields: {', '.join(allowed)}"
            )
    defaults = {f.name for f in fields(cls) if f.default is not MISSING}
    kwargs: dict[str, Any] = {}
    for name, kind in cls._kinds.items():
        place = _join(path, name)
        if name not in entry:
            if name in defaults:
                continue
            raise InvalidParameterError(f"{place} is missing (required for type {type_name!r})")
        value = entry[name]
        if kind == "real":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise InvalidParameterError(
                    f"{place} must be a number, got {_describe_type(value)} {value!r}"
                )
        elif kind == "integer":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise InvalidParameterError(
                    f"{place} must be an integer, got {_describe_type(value)} {value!r}"
                )
        elif kind == "reals":
            if not isinstance(value, (list, tuple)) or any(
                isinstance(v, bool) or not isinstance(v, numbers.Real) for v in value
            ):
                raise InvalidParameterError(
                    f"{place} must be an array of numbers, got {_describe_type(value)} {value!r}"
                )
        elif kind == "mechanism":
            value = parse_entry(value, place)
        elif kind == "name":  # a name the class checks (DP-SGD's sampler)
            if not isinstance(value, str):
                raise InvalidParameterError(
                    f"{place} must be a string, got {_describe_type(value)} {value!r}"
                )
        elif kind == "table":  # checked by the class (a matrix strategy, a participation)
            if not isinstance(value, (Mapping, str)):
                raise InvalidParameterError(
                    f"{place} must be a table, got {_describe_type(value)} {value!r}"
                )
        else:  # "mechanisms"
            if not isinstance(value, (list, tuple)):
                raise InvalidParameterError(
                    f"{place} must be an array of mechanism tables, got "
                    f"{_describe_type(value)} {value!r}"
                )
            if not value:
                raise InvalidParameterError(
                    f"{place}: {cls.__name__} needs at least one mechanism, got none"
                )
            value = [parse_entry(part, f"{place}[{index}]") for index, part in enumerate(value)]
        kwargs[name] = value
    try:
        mechanism = cls(**kwargs)
    except InvalidParameterError as error:
        message = str(error)
        if path and any(message.startswith(name + " ") for name in cls._kinds):
            raise InvalidParameterError(f"{path}.{message}") from None
        raise InvalidParameterError(f"{path}: {message}" if path else message) from None
    if "repeat" in entry:
        repeat = entry["repeat"]
        place = _join(path, "repeat")
        if isinstance(repeat, bool) or not isinstance(repeat, numbers.Real):
            raise InvalidParameterError(
                f"{place} must be an integer >= 1, got {_describe_type(repeat)} {repeat!r}"
            )
        times = _integer(place, repeat, low=1)
        if times > 1:
            mechanism = Repeated(mechanism, times)
    return mechanism


def from_dict(data: Mapping[str, Any]) -> Mechanism:
    """The mechanism described by ``data``, the inverse of :meth:`Mechanism.to_dict`.

    ``data`` has a ``"type"`` key (``"gaussian"``, ``"pure_dp"``, ...) and the
    class's fields; wrapped mechanisms are nested dicts. An optional
    ``"repeat"`` key (an integer ≥ 1) wraps the result in :class:`Repeated`.

    Raises
    ------
    InvalidParameterError
        Naming the place (e.g. ``mechanism.sigma``) and the problem.

    Examples
    --------
    >>> from_dict({"type": "gaussian", "sigma": 5.0, "repeat": 3})
    Repeated(mechanism=Gaussian(sigma=5.0, sensitivity=1.0), times=3)
    """
    return parse_entry(data, "")


_TOP_LEVEL_KEYS = ("name", "neighbouring", "mechanism")


def _pipeline_from_document(document: Any) -> Pipeline:
    if not isinstance(document, Mapping):
        raise InvalidParameterError(f"a pipeline must be a table, got {_describe_type(document)}")
    for key in document:
        if key not in _TOP_LEVEL_KEYS:
            raise InvalidParameterError(
                f"{key}: unknown top-level key{_suggest(str(key), _TOP_LEVEL_KEYS)}; "
                f"allowed: {', '.join(_TOP_LEVEL_KEYS)}"
            )
    name = document.get("name")
    if name is not None and not isinstance(name, str):
        raise InvalidParameterError(f"name must be a string, got {_describe_type(name)} {name!r}")
    neighbouring = _neighbouring(document.get("neighbouring", Neighbouring.ADD_REMOVE))
    entries = document.get("mechanism")
    if entries is None or (isinstance(entries, (list, tuple)) and not entries):
        raise InvalidParameterError(
            "empty pipeline: no mechanism entries (add a [[mechanism]] table with a 'type')"
        )
    if isinstance(entries, Mapping):
        mechanism = parse_entry(entries, "mechanism")
    elif isinstance(entries, (list, tuple)):
        parts = [parse_entry(entry, f"mechanism[{index}]") for index, entry in enumerate(entries)]
        mechanism = parts[0] if len(parts) == 1 else Composition(parts)
    else:
        raise InvalidParameterError(
            "mechanism must be an array of tables ([[mechanism]]) or a table, got "
            f"{_describe_type(entries)} {entries!r}"
        )
    return Pipeline(mechanism, neighbouring, name)


# --------------------------------------------------------------------------- TOML files


def _toml():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:  # pragma: no cover - depends on the environment
            raise ImportError(
                "reading pipeline files on Python 3.10 needs the 'tomli' package "
                "(pip install tomli)"
            ) from None
    return tomllib


def entry_fields(type_name: Any) -> dict[str, str]:
    """The keys a mechanism table of ``type_name`` may hold, with their kinds.

    Kinds are ``"real"``, ``"integer"``, ``"reals"``, ``"mechanism"`` (a nested
    table), ``"mechanisms"`` (an array of tables), ``"name"`` (a string the class
    checks: DP-SGD's sampler) and ``"table"`` (a table the
    class reads itself: a matrix mechanism's strategy and participation); every table may also hold
    ``repeat`` (an integer). An unknown type has only ``repeat``.

    Examples
    --------
    >>> entry_fields("gaussian")
    {'sigma': 'real', 'sensitivity': 'real', 'repeat': 'integer'}
    """
    cls = registered_types().get(type_name)
    kinds = dict(getattr(cls, "_kinds", {}))
    kinds["repeat"] = "integer"
    return kinds


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """The TOML document of ``text``; a syntax error is a :class:`PipelineFileError`.

    The message is ``<source>: invalid TOML: <error with its line>``.

    Examples
    --------
    >>> parse_toml('name = "x"', "<string>")
    {'name': 'x'}
    """
    tomllib = _toml()
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PipelineFileError(f"{source}: invalid TOML: {error}") from None


def loads(text: str, *, source: str = "<string>") -> Pipeline:
    """Read a pipeline from TOML text.

    The format (documented with every type in ``docs/mechanisms.md``)::

        name = "autodp example"          # optional
        neighbouring = "add_remove"      # optional: add_remove (default) | replace

        [[mechanism]]
        type = "gaussian"
        sigma = 5.0
        repeat = 3                       # optional on any entry: wraps in Repeated

        [[mechanism]]
        type = "poisson_subsampled"
        sampling_probability = 0.01
        mechanism = { type = "gaussian", sigma = 1.0 }

    Several ``[[mechanism]]`` entries form a :class:`Composition`; one entry is
    that mechanism. Entries are numbered from 0 in messages.

    Parameters
    ----------
    text : str
        The TOML document.
    source : str
        How messages refer to the text (a file name).

    Raises
    ------
    PipelineFileError
        ``<source>: <place>: <problem>`` for a syntax error (with its line), an
        unknown type or field, a missing field, a wrong type, a value out of
        range, or an empty pipeline.

    Examples
    --------
    >>> p = loads('[[mechanism]]\\ntype = "pure_dp"\\nepsilon = 0.1\\nrepeat = 2')
    >>> p.mechanism
    Repeated(mechanism=PureDP(epsilon=0.1), times=2)
    """
    if not isinstance(text, str):
        raise PipelineFileError(f"{source}: expected TOML text (a str), got {type(text).__name__}")
    document = parse_toml(text, source)
    try:
        return _pipeline_from_document(document)
    except InvalidParameterError as error:
        raise PipelineFileError(f"{source}: {error}") from None


def load(path: str | os.PathLike[str]) -> Pipeline:
    """Read a pipeline file (TOML); see :func:`loads` and ``docs/mechanisms.md``.

    Raises
    ------
    PipelineFileError
        If the file cannot be read or is malformed; the message starts with the path.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from gaussdp.mechanisms import DPSGD
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "dpsgd.toml"
    >>> _ = path.write_text(dumps(Pipeline(DPSGD(9.4, 0.32768, 2000))))
    >>> print(load(path).mechanism)
    DP-SGD: σ=9.4, q=0.32768, 2000 steps
    """
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise PipelineFileError(f"{source}: file not found") from None
    except IsADirectoryError:
        raise PipelineFileError(f"{source}: is a directory, not a pipeline file") from None
    except UnicodeDecodeError as error:
        raise PipelineFileError(f"{source}: not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise PipelineFileError(f"{source}: cannot read the file ({error.strerror})") from None
    return loads(text, source=source)


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    escaped = []
    for char in text:
        if char in ('"', "\\"):
            escaped.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04X}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):  # pragma: no cover - descriptions hold no booleans
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")  # pragma: no cover


def dumps(pipeline: Pipeline | Mechanism) -> str:
    """The TOML text of a pipeline file; :func:`loads` reads it back to an equal pipeline.

    A bare :class:`Mechanism` is written as a pipeline under ADD_REMOVE.

    Examples
    --------
    >>> from gaussdp.mechanisms import Gaussian
    >>> print(dumps(Pipeline(Repeated(Gaussian(5.0), 3), name="three Gaussians")), end="")
    name = "three Gaussians"
    neighbouring = "add_remove"
    <BLANKLINE>
    [[mechanism]]
    type = "repeated"
    mechanism = { type = "gaussian", sigma = 5.0, sensitivity = 1.0 }
    times = 3
    """
    if isinstance(pipeline, Mechanism):
        pipeline = Pipeline(pipeline)
    if not isinstance(pipeline, Pipeline):
        raise InvalidParameterError(f"pipeline must be a Pipeline or a Mechanism, got {pipeline!r}")
    document = pipeline.to_dict()
    lines = [
        f"{key} = {_toml_value(document[key])}"
        for key in ("name", "neighbouring")
        if key in document
    ]
    for entry in document["mechanism"]:
        lines += ["", "[[mechanism]]"]
        lines += [f"{key} = {_toml_value(value)}" for key, value in entry.items()]
    return "\n".join(lines) + "\n"
