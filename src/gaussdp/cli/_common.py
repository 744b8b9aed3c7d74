"""Shared pieces of the command line: output formats and JSON helpers."""

from __future__ import annotations

import json
import math

import click

from gaussdp import mechanisms
from gaussdp._validation import InvalidParameterError

__all__ = ["FORMATS", "NEIGHBOURING", "TABLE_FORMATS", "check_deltas", "emit_json", "json_number"]

FORMATS = click.Choice(["text", "json"], case_sensitive=False)
TABLE_FORMATS = click.Choice(["text", "json", "csv", "markdown"], case_sensitive=False)


def json_number(value: float) -> float | str:
    """JSON has no infinity; write it as the string "inf"."""
    return "inf" if math.isinf(value) else value


def _finite_json(value):
    """Infinities as the string "inf" (JSON has none), everywhere in a payload."""
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {key: _finite_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_json(item) for item in value]
    return value


def emit_json(payload: dict) -> None:
    """Print ``payload`` as indented, standard JSON on stdout (no Infinity/NaN)."""
    click.echo(json.dumps(_finite_json(payload), indent=2, allow_nan=False))


NEIGHBOURING = click.Choice([n.value for n in mechanisms.Neighbouring], case_sensitive=False)


def check_deltas(deltas: tuple[float, ...]) -> tuple[float, ...]:
    """Every δ given on the command line must lie in (0, 1)."""
    for d in deltas:
        if not 0.0 < d < 1.0:
            raise InvalidParameterError(f"delta must be in (0, 1), got {d!r}")
    return deltas
