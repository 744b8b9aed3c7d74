"""Shared pieces of the command line: output formats and JSON helpers."""

from __future__ import annotations

import json
import math

import click

from gaussdp import mechanisms
from gaussdp._validation import InvalidParameterError

__all__ = [
    "EPOCHS_OPTION",
    "FORMATS",
    "NEIGHBOURING",
    "SAMPLER_OPTIONS",
    "TABLE_FORMATS",
    "check_deltas",
    "dpsgd_from_options",
    "emit_json",
    "json_number",
    "with_sampler_options",
]

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


# --------------------------------------------------------------------------- DP-SGD's sampler

#: The options that name DP-SGD's sampler and its batches (``--epochs`` is separate: the
#: matrix report has its own).
SAMPLER_OPTIONS = [
    click.option(
        "--sampler",
        type=str,
        default=None,
        help=(
            "DP-SGD's batch sampler: poisson (default; --sampling-probability), balls-in-bins "
            "or shuffling (--steps-per-epoch, or --batch-size with --dataset-size), "
            "truncated-poisson (--sampling-probability, --max-batch-size, --dataset-size). "
            "Fixed-size batches without --sampler are refused, never taken as Poisson."
        ),
    ),
    click.option("--steps-per-epoch", type=int, default=None, help="DP-SGD: steps t of one epoch."),
    click.option("--batch-size", type=int, default=None, help="DP-SGD: fixed batch size B."),
    click.option(
        "--max-batch-size", type=int, default=None, help="DP-SGD truncated-poisson: largest B."
    ),
    click.option("--dataset-size", type=int, default=None, help="DP-SGD: data set size N."),
]

EPOCHS_OPTION = click.option(
    "--epochs",
    type=int,
    default=None,
    help="DP-SGD with a sampler: epochs E (steps = E × steps per epoch).",
)


def with_sampler_options(function):
    """Add :data:`SAMPLER_OPTIONS` to a click command."""
    for option in reversed(SAMPLER_OPTIONS):
        function = option(function)
    return function


def dpsgd_from_options(
    command: str,
    noise_multiplier,
    sampling_probability,
    steps,
    *,
    sampler=None,
    epochs=None,
    steps_per_epoch=None,
    batch_size=None,
    max_batch_size=None,
    dataset_size=None,
) -> mechanisms.DPSGD:
    """The DP-SGD run the command line describes; a usage error names what is missing.

    Without a sampler or batch options this is ``DPSGD(σ, q, T)`` as always;
    ``--epochs`` gives T = E·t, with t from ``--steps-per-epoch`` or N/B.
    """
    batches = {
        "steps_per_epoch": steps_per_epoch,
        "batch_size": batch_size,
        "max_batch_size": max_batch_size,
        "dataset_size": dataset_size,
    }
    if epochs is not None:
        if steps is not None:
            raise click.UsageError("give --steps or --epochs, not both")
        if steps_per_epoch is not None:
            per_epoch = steps_per_epoch
        elif batch_size is not None and dataset_size is not None and batch_size > 0:
            per_epoch = max(dataset_size // batch_size, 1)
        else:
            raise click.UsageError(
                "--epochs needs --steps-per-epoch (or --batch-size with --dataset-size)"
            )
        steps = epochs * per_epoch
    required = {"--noise-multiplier": noise_multiplier, "--steps": steps}
    if sampler is None and all(value is None for value in batches.values()):
        required = {
            "--noise-multiplier": noise_multiplier,
            "--sampling-probability": sampling_probability,
            "--steps": steps,
        }
    missing = [name for name, value in required.items() if value is None]
    if missing:
        raise click.UsageError(f"{command} needs {', '.join(missing)}")
    if epochs is not None and epochs < 1:
        raise InvalidParameterError(f"epochs must be an integer >= 1, got {epochs}")
    return mechanisms.DPSGD(
        noise_multiplier, sampling_probability, steps, sampler=sampler, **batches
    )
