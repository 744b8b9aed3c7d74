"""``gaussdp dpsgd`` and ``gaussdp account``: ε for δ (and δ for ε), with bounds."""

from __future__ import annotations

import math

import click

from gaussdp import mechanisms
from gaussdp._validation import InvalidParameterError
from gaussdp.accountant import Accounting, account
from gaussdp.cli._common import (
    EPOCHS_OPTION,
    FORMATS,
    NEIGHBOURING,
    check_deltas,
    dpsgd_from_options,
    emit_json,
    json_number,
    with_sampler_options,
)
from gaussdp.cli._progress import Progress

__all__ = ["account_command", "dpsgd"]

DEFAULT_DELTAS = (1e-5,)


def _check_epsilons(epsilons: tuple[float, ...]) -> tuple[float, ...]:
    for e in epsilons:
        if not e >= 0.0:
            raise InvalidParameterError(f"epsilon must be in [0, inf], got {e!r}")
    return epsilons


def _print_result(
    result: Accounting,
    title: str,
    deltas: tuple[float, ...],
    epsilons: tuple[float, ...],
    output_format: str,
) -> None:
    rows_epsilon = []
    for d in deltas:
        lower, upper = result.epsilon_bounds(d)
        rows_epsilon.append({"delta": d, "epsilon": upper, "epsilon_lower": lower})
    rows_delta = []
    for e in epsilons:
        lower, upper = result.delta_bounds(e)
        rows_delta.append({"epsilon": e, "delta": upper, "delta_lower": lower})
    caveats = [*result.caveats, *_poisson_comparison(result, rows_epsilon)]
    if output_format == "json":
        emit_json(
            {
                "mechanism": result.mechanism.to_dict(),
                "neighbouring": result.neighbouring.value,
                "method": result.method,
                "grid_spacing": result.grid_spacing,
                "mu": result.mu,
                "epsilon_for_delta": [
                    {k: json_number(v) for k, v in row.items()} for row in rows_epsilon
                ],
                "delta_for_epsilon": rows_delta,
                "note": "epsilon and delta are upper bounds; *_lower are lower bounds",
                **({"caveats": caveats} if caveats else {}),
            }
        )
        return
    click.echo(f"{title}  [{result.neighbouring.value.replace('_', '/')} neighbouring]")
    for row in rows_epsilon:
        upper, lower = row["epsilon"], row["epsilon_lower"]
        if math.isinf(upper):
            click.echo(f"epsilon = inf at delta = {row['delta']:g}")
            continue
        click.echo(
            f"epsilon = {upper:.6g} at delta = {row['delta']:g}   "
            f"(upper bound; lower bound {lower:.6g})"
        )
    for row in rows_delta:
        click.echo(
            f"delta = {row['delta']:.6g} at epsilon = {row['epsilon']:g}   "
            f"(upper bound; lower bound {row['delta_lower']:.6g})"
        )
    for caveat in caveats:
        click.echo(f"caveat: {caveat}")
    click.echo(f"method: {result.method}")


def _poisson_comparison(result: Accounting, rows: list[dict]) -> list[str]:
    """One line per δ where a shuffled run's lower bound exceeds its Poisson accounting."""
    poisson = result.as_if_poisson()
    if poisson is None:
        return []
    lines = []
    for row in rows:
        claimed = float(poisson.epsilon(row["delta"]))
        if row["epsilon_lower"] > claimed:
            lines.append(
                f"at delta = {row['delta']:g} the certified lower bound epsilon >= "
                f"{row['epsilon_lower']:.4g} exceeds the {claimed:.4g} that Poisson accounting "
                "(q = 1/t) gives for the same run: the Poisson figure understates this run's "
                "privacy loss"
            )
    return lines


_common_options = [
    click.option(
        "--delta",
        "deltas",
        type=float,
        multiple=True,
        help="δ at which to report ε (repeatable; default 1e-5).",
    ),
    click.option(
        "--epsilon",
        "epsilons",
        type=float,
        multiple=True,
        help="ε at which to report δ (repeatable).",
    ),
    click.option(
        "--accuracy",
        type=float,
        default=None,
        help="Target relative gap between the certified ε bounds (default 5e-5).",
    ),
    click.option("--format", "output_format", type=FORMATS, default="text", show_default=True),
]


def _with_common_options(function):
    for option in reversed(_common_options):
        function = option(function)
    return function


def _run(mechanism, neighbouring, deltas, epsilons, accuracy, output_format, title):
    deltas = check_deltas(deltas or (() if epsilons else DEFAULT_DELTAS))
    epsilons = _check_epsilons(epsilons)
    options = {} if accuracy is None else {"accuracy": accuracy}
    with Progress() as progress:
        result = account(mechanism, neighbouring=neighbouring, progress=progress, **options)
        _print_result(result, title, deltas, epsilons, output_format)


@click.command()
@click.option("--noise-multiplier", type=float, default=None, help="σ, in units of the clip norm.")
@click.option("--sampling-probability", type=float, default=None, help="Poisson sampling rate q.")
@click.option("--steps", type=int, default=None, help="Number of training steps T.")
@EPOCHS_OPTION
@with_sampler_options
@_with_common_options
def dpsgd(
    noise_multiplier,
    sampling_probability,
    steps,
    epochs,
    sampler,
    steps_per_epoch,
    batch_size,
    max_batch_size,
    dataset_size,
    deltas,
    epsilons,
    accuracy,
    output_format,
):
    """ε of DP-SGD (Poisson-subsampled Gaussian by default, add/remove), with bounds.

    --sampler names another batch sampler (balls-in-bins, truncated-poisson,
    shuffling; see docs/samplers.md). Shuffling has certified upper and lower
    bounds only: no tight bound is known.

    \b
    gaussdp dpsgd --noise-multiplier 9.4 --sampling-probability 0.32768 \\
                  --steps 2000 --delta 1e-5
    gaussdp dpsgd --noise-multiplier 1 --sampler shuffling --epochs 10 \\
                  --steps-per-epoch 100 --delta 1e-5
    """
    mechanism = dpsgd_from_options(
        "dpsgd",
        noise_multiplier,
        sampling_probability,
        steps,
        sampler=sampler,
        epochs=epochs,
        steps_per_epoch=steps_per_epoch,
        batch_size=batch_size,
        max_batch_size=max_batch_size,
        dataset_size=dataset_size,
    )
    _run(mechanism, None, deltas, epsilons, accuracy, output_format, mechanism.describe())


@click.command("account")
@click.argument("pipeline", type=click.Path(dir_okay=False))
@click.option(
    "--neighbouring",
    type=NEIGHBOURING,
    default=None,
    help="Override the pipeline's neighbouring relation.",
)
@_with_common_options
def account_command(pipeline, neighbouring, deltas, epsilons, accuracy, output_format):
    """ε (and δ) of a pipeline described in a TOML file, with bounds.

    \b
    gaussdp account examples/autodp_example.toml --delta 1e-6
    """
    loaded = mechanisms.load(pipeline)
    relation = None if neighbouring is None else mechanisms.Neighbouring(neighbouring.lower())
    title = loaded.name or loaded.mechanism.describe()
    _run(loaded, relation, deltas, epsilons, accuracy, output_format, title)
