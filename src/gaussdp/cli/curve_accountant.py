"""``gaussdp curve dpsgd`` and ``gaussdp curve account``: trade-off curves from the accountant.

The curve is :meth:`gaussdp.Accounting.tradeoff`: the exact piecewise-linear
trade-off curve of the composed discrete pair of each neighbouring direction,
symmetrised (Gomez et al. 2025, Theorem A.10). ``--bound pessimistic`` (the
default) lies below the true curve, so it is a valid f-DP guarantee: no
membership-inference attack does better. ``--bound optimistic`` lies above it:
an attack at least this strong exists.
"""

from __future__ import annotations

import click

from gaussdp import mechanisms
from gaussdp.accountant import account
from gaussdp.cli._common import (
    EPOCHS_OPTION,
    NEIGHBOURING,
    dpsgd_from_options,
    with_sampler_options,
)
from gaussdp.cli._progress import Progress
from gaussdp.cli.curve import curve_output_options, emit_curve

__all__ = ["curve_account", "curve_dpsgd"]

_BOUNDS = click.Choice(["pessimistic", "optimistic"], case_sensitive=False)

_NOTES = {
    "pessimistic": (
        "pessimistic: a certified lower bound on the true curve (a valid f-DP guarantee)",
        "no membership-inference attack does better at that FPR",
    ),
    "optimistic": (
        "optimistic: an upper bound on the true curve (not a guarantee)",
        "some membership-inference attack does at least this well at that FPR",
    ),
}


def _accountant_options(function):
    options = [
        click.option(
            "--bound",
            type=_BOUNDS,
            default="pessimistic",
            show_default=True,
            help="pessimistic: below the true curve (a guarantee); optimistic: above it.",
        ),
        click.option(
            "--accuracy",
            type=float,
            default=None,
            help="Target relative gap between the certified epsilon bounds (default 5e-5).",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return curve_output_options(function)


def _emit_accountant_curve(mechanism, neighbouring, title, bound, accuracy, output) -> None:
    options = {} if accuracy is None else {"accuracy": accuracy}
    with Progress() as progress:
        result = account(mechanism, neighbouring=neighbouring, progress=progress, **options)
        chosen = result.tradeoff(bound.lower())
    note, attack_note = _NOTES[bound.lower()]
    relation = result.neighbouring.value.replace("_", "/")
    emit_curve(
        chosen,
        description=f"{bound.lower()} trade-off curve of {title} [{relation} neighbouring]",
        notes=[
            note,
            *(f"caveat: {caveat}" for caveat in result.caveats),
            f"method: {result.method}",
        ],
        attack_note=attack_note,
        bound=bound.lower(),
        **output,
    )


@click.command("dpsgd")
@click.option("--noise-multiplier", type=float, default=None, help="σ, in units of the clip norm.")
@click.option("--sampling-probability", type=float, default=None, help="Poisson sampling rate q.")
@click.option("--steps", type=int, default=None, help="Number of training steps T.")
@EPOCHS_OPTION
@with_sampler_options
@_accountant_options
def curve_dpsgd(
    noise_multiplier,
    sampling_probability,
    steps,
    epochs,
    sampler,
    steps_per_epoch,
    batch_size,
    max_batch_size,
    dataset_size,
    bound,
    accuracy,
    **output,
):
    """Trade-off curve of DP-SGD (Poisson-subsampled Gaussian), from the accountant.

    \b
    gaussdp curve dpsgd --noise-multiplier 9.4 --sampling-probability 0.32768 \\
                        --steps 2000 --log --plot curve.png
    gaussdp curve dpsgd --noise-multiplier 1 --sampling-probability 0.01 \\
                        --steps 1000 --fpr 1e-3 --format json
    """
    mechanism = dpsgd_from_options(
        "curve dpsgd",
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
    _emit_accountant_curve(mechanism, None, mechanism.describe(), bound, accuracy, output)


@click.command("account")
@click.argument("pipeline", type=click.Path(dir_okay=False))
@click.option(
    "--neighbouring",
    type=NEIGHBOURING,
    default=None,
    help="Override the pipeline's neighbouring relation.",
)
@_accountant_options
def curve_account(pipeline, neighbouring, bound, accuracy, **output):
    """Trade-off curve of a pipeline described in a TOML file, from the accountant.

    \b
    gaussdp curve account examples/autodp_example.toml --fpr 1e-3
    """
    loaded = mechanisms.load(pipeline)
    relation = None if neighbouring is None else mechanisms.Neighbouring(neighbouring.lower())
    title = loaded.name or loaded.mechanism.describe()
    _emit_accountant_curve(loaded, relation, title, bound, accuracy, output)
