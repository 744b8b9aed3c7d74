"""``gaussdp report``: a mechanism's privacy as μ-GDP, with regret, tail and tier.

gaussdp report dpsgd --noise-multiplier 9.4 --sampling-probability 0.32768 --steps 2000
gaussdp report matrix --strategy tree --steps 1024 --noise-multiplier 4 --epochs 4
gaussdp report examples/census_topdown.toml --format html --output census.html
"""

from __future__ import annotations

import os

import click

from gaussdp import mechanisms
from gaussdp._validation import InvalidParameterError
from gaussdp.accountant import DEFAULT_ACCURACY
from gaussdp.cli._common import (
    NEIGHBOURING,
    check_deltas,
    dpsgd_from_options,
    with_sampler_options,
)
from gaussdp.cli._progress import Progress
from gaussdp.report.core import DEFAULT_DELTA_TAIL

__all__ = ["report"]

_FORMATS = click.Choice(["text", "json", "markdown", "html"], case_sensitive=False)


def _check_output(path: str | None) -> None:
    """Fail before the computation if ``path`` cannot be written."""
    if path is None or path == "-":
        return
    if os.path.isdir(path):
        raise click.ClickException(f"cannot write the report to {path!r}: it is a directory")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise click.ClickException(
            f"cannot write the report to {path!r}: {folder!r} is a file, not a directory"
        )
    if not os.path.isdir(folder):
        raise click.ClickException(
            f"cannot write the report to {path!r}: directory {folder!r} does not exist"
        )
    if os.path.exists(path):
        writable = os.access(path, os.W_OK)
    else:
        writable = os.access(folder, os.W_OK)
    if not writable:
        raise click.ClickException(f"cannot write the report to {path!r}: permission denied")


_STRATEGIES = ("identity", "prefix_sum", "tree", "square_root_toeplitz")


def _matrix(noise_multiplier, steps, matrix_options):
    """The matrix mechanism of ``gaussdp report matrix``."""
    from gaussdp import matrix

    strategy_name = matrix_options["--strategy"]
    missing = [
        name
        for name, value in (
            ("--strategy", strategy_name),
            ("--steps", steps),
            ("--noise-multiplier", noise_multiplier),
        )
        if value is None
    ]
    if missing:
        raise click.UsageError(f"report matrix needs {', '.join(missing)}")
    separation = matrix_options["--min-separation"]
    participations = matrix_options["--max-participations"]
    epochs = matrix_options["--epochs"]
    bands = matrix_options["--bands"]
    if (separation is None) != (participations is None):
        raise click.UsageError("--min-separation and --max-participations go together")
    if epochs is not None and separation is not None:
        raise click.UsageError("give --epochs or --min-separation/--max-participations, not both")
    if bands is not None and strategy_name != "square_root_toeplitz":
        raise click.UsageError("--bands applies to --strategy square_root_toeplitz only")
    if epochs is not None:
        participation = matrix.FixedEpochs(epochs)
    elif separation is not None:
        participation = matrix.MinSeparation(separation, participations)
    else:
        participation = matrix.SingleParticipation()
    if strategy_name == "square_root_toeplitz":
        strategy = matrix.square_root_toeplitz(steps, bands=bands)
    else:
        strategy = getattr(matrix, strategy_name)(steps)
    return mechanisms.MatrixMechanism(strategy, noise_multiplier, participation)


def _target(
    target,
    noise_multiplier,
    sampling_probability,
    steps,
    neighbouring,
    matrix_options=None,
    sampler_options=None,
):
    """(mechanism or pipeline, neighbouring, title) from the command line."""
    sampler_options = sampler_options or {}
    dpsgd_options = {
        "--noise-multiplier": noise_multiplier,
        "--sampling-probability": sampling_probability,
        "--steps": steps,
        **sampler_options,
    }
    matrix_options = matrix_options or {}
    is_dpsgd = target.lower() == "dpsgd" and not os.path.exists(target)
    if is_dpsgd and any(value is not None for value in sampler_options.values()):
        # DP-SGD with a sampler counts its steps in epochs: --epochs is then its own.
        sampler_options = {**sampler_options, "--epochs": matrix_options.get("--epochs")}
        matrix_options = {**matrix_options, "--epochs": None}
    relation = None if neighbouring is None else mechanisms.Neighbouring(neighbouring.lower())
    given_matrix = [name for name, value in matrix_options.items() if value is not None]
    if target.lower() == "matrix" and not os.path.exists(target):
        if sampling_probability is not None:
            raise click.UsageError(
                "--sampling-probability does not apply to 'gaussdp report matrix' "
                "(no amplification by sampling is claimed)"
            )
        mechanism = _matrix(noise_multiplier, steps, matrix_options)
        return mechanism, relation, mechanism.describe()
    if given_matrix:
        raise click.UsageError(f"{', '.join(given_matrix)} only apply to 'gaussdp report matrix'")
    if is_dpsgd:
        named = {key.lstrip("-").replace("-", "_"): value for key, value in sampler_options.items()}
        mechanism = dpsgd_from_options(
            "report dpsgd", noise_multiplier, sampling_probability, steps, **named
        )
        return mechanism, relation, mechanism.describe()
    given = [name for name, value in dpsgd_options.items() if value is not None]
    if given:
        raise click.UsageError(
            f"{', '.join(given)} only apply to 'gaussdp report dpsgd', not to a pipeline file"
        )
    pipeline = mechanisms.load(target)
    return pipeline, relation, pipeline.name or pipeline.mechanism.describe()


@click.command("report")
@click.argument("target")
@click.option("--noise-multiplier", type=float, default=None, help="DP-SGD: σ (noise / clip).")
@click.option(
    "--sampling-probability", type=float, default=None, help="DP-SGD: Poisson sampling rate q."
)
@click.option("--steps", type=int, default=None, help="DP-SGD, matrix: number of steps T.")
@click.option(
    "--strategy",
    type=click.Choice(_STRATEGIES),
    default=None,
    help="matrix: the strategy C (a pipeline file takes any, dense ones included).",
)
@click.option("--bands", type=int, default=None, help="matrix: bands of square_root_toeplitz.")
@click.option(
    "--min-separation", type=int, default=None, help="matrix: steps between participations, b."
)
@click.option(
    "--max-participations", type=int, default=None, help="matrix: participations per record, k."
)
@click.option(
    "--epochs",
    type=int,
    default=None,
    help="matrix: k fixed epochs (k divides T); DP-SGD with --sampler: epochs E (T = E × t).",
)
@with_sampler_options
@click.option(
    "--delta",
    "deltas",
    type=float,
    multiple=True,
    help="δ at which to report ε (repeatable; default 1e-5, 1e-6, 1e-9).",
)
@click.option(
    "--delta-tail",
    type=float,
    default=None,
    help=(
        "Failure probability δ_tail in (0, 1): μ is reported as 'μ-GDP except with "
        f"probability δ_tail' (default {DEFAULT_DELTA_TAIL:g}). Closed forms that are "
        "exactly μ-GDP (Gaussian compositions; one pure-DP, randomized-response or Laplace "
        "mechanism) are reported strict, δ_tail = 0. Every format also tabulates μ at "
        "δ_tail = 1e-6, 1e-8, 1e-10, 1e-12 and, where known, the tail limit (δ_tail → 0)."
    ),
)
@click.option(
    "--neighbouring", type=NEIGHBOURING, default=None, help="Override the neighbouring relation."
)
@click.option(
    "--accuracy",
    type=float,
    default=None,
    help=f"Relative accuracy of the accountant (default {DEFAULT_ACCURACY:g}).",
)
@click.option("--format", "output_format", type=_FORMATS, default="text", show_default=True)
@click.option(
    "--output", type=str, default=None, help="Write the report to this file (default stdout)."
)
def report(
    target,
    noise_multiplier,
    sampling_probability,
    steps,
    strategy,
    bands,
    min_separation,
    max_participations,
    epochs,
    sampler,
    steps_per_epoch,
    batch_size,
    max_batch_size,
    dataset_size,
    deltas,
    delta_tail,
    neighbouring,
    accuracy,
    output_format,
    output,
):
    """Report privacy as μ-GDP: tight μ, regret, where μ stops holding, Tier I / II.

    TARGET is ``dpsgd`` (with --noise-multiplier, --sampling-probability and
    --steps; or with --sampler and its batches, e.g. --sampler balls-in-bins
    --epochs 10 --steps-per-epoch 100, see docs/samplers.md), ``matrix`` (a
    matrix mechanism: --strategy, --steps, --noise-multiplier, and
    --min-separation with --max-participations, or --epochs, or neither for
    one participation; see docs/matrix.md) or a pipeline file (TOML, see
    docs/mechanisms.md). μ is certified ("μ-GDP except with probability
    δ_tail", δ_tail = --delta-tail, default 1e-10), with a table of μ by
    δ_tail; ε is given at each --delta as upper and lower bounds.

    \b
    gaussdp report dpsgd --noise-multiplier 9.4 --sampling-probability 0.32768 --steps 2000
    gaussdp report dpsgd --noise-multiplier 1 --sampler shuffling --epochs 10 --steps-per-epoch 100
    gaussdp report matrix --strategy tree --steps 1024 --noise-multiplier 4 --epochs 4
    gaussdp report examples/census_topdown.toml --format html --output census.html
    """
    from gaussdp.report import DEFAULT_DELTAS
    from gaussdp.report import report as build_report

    deltas = check_deltas(deltas or DEFAULT_DELTAS)
    if delta_tail is not None and not 0.0 < delta_tail < 1.0:  # also NaN
        raise InvalidParameterError(f"delta_tail must be in (0, 1), got {delta_tail!r}")
    _check_output(output)
    matrix_options = {
        "--strategy": strategy,
        "--bands": bands,
        "--min-separation": min_separation,
        "--max-participations": max_participations,
        "--epochs": epochs,
    }
    sampler_options = {
        "--sampler": sampler,
        "--steps-per-epoch": steps_per_epoch,
        "--batch-size": batch_size,
        "--max-batch-size": max_batch_size,
        "--dataset-size": dataset_size,
    }
    mechanism, relation, title = _target(
        target,
        noise_multiplier,
        sampling_probability,
        steps,
        neighbouring,
        matrix_options,
        sampler_options,
    )
    options = {} if accuracy is None else {"accuracy": accuracy}
    with Progress() as progress:
        result = build_report(
            mechanism,
            deltas=deltas,
            delta_tail=delta_tail,
            neighbouring=relation,
            progress=progress,
            title=title,
            **options,
        )
    text = result.render(output_format.lower())
    if output is None or output == "-":
        click.echo(text)
        return
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
    except OSError as error:
        raise click.ClickException(
            f"cannot write the report to {output!r}: {error.strerror}"
        ) from None
    click.echo(f"wrote {output_format.lower()} report to {output}", err=True)
