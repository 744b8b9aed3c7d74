"""``gaussdp curve``: print or plot a trade-off curve (the best attack's FNR at each FPR).

``curve`` is a click group invoked without a subcommand for the closed forms
(``--mu`` for G_μ, ``--epsilon``/``--delta`` for f_{ε,δ}); the
accountant's curves are its subcommands ``gaussdp curve dpsgd ...`` and
``gaussdp curve account FILE`` (:mod:`gaussdp.cli.curve_accountant`), which
reuse :func:`curve_output_options` and :func:`emit_curve`.
"""

from __future__ import annotations

import csv
import io
import math
import textwrap
from collections.abc import Callable, Sequence

import click
import numpy as np

from gaussdp import curves
from gaussdp._validation import InvalidParameterError
from gaussdp.cli._common import emit_json, json_number

__all__ = ["curve", "curve_output_options", "emit_curve"]

CURVE_FORMATS = click.Choice(["text", "json", "csv"], case_sensitive=False)
_LOG_ALPHA_MIN = 1e-8


def curve_output_options(function: Callable) -> Callable:
    """The output options shared by ``gaussdp curve`` and its subcommands."""
    options = [
        click.option(
            "--format",
            "output_format",
            type=CURVE_FORMATS,
            default="text",
            show_default=True,
            help="Output format.",
        ),
        click.option(
            "--points",
            type=int,
            default=11,
            show_default=True,
            help="Number of (alpha, beta) points to print.",
        ),
        click.option(
            "--log",
            "log_scale",
            is_flag=True,
            help="Log-spaced FPRs from 1e-8 to 1, and log-log ROC axes for --plot.",
        ),
        click.option(
            "--plot",
            "plot_path",
            type=click.Path(dir_okay=False, writable=True),
            help="Save a figure of the curve to this file (needs matplotlib).",
        ),
        click.option(
            "--fpr",
            "fprs",
            type=float,
            multiple=True,
            help="Print the best attack's TPR at this FPR (repeatable).",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _grid(points: int, log_scale: bool) -> np.ndarray:
    if points < 2:
        raise InvalidParameterError(f"points must be an integer >= 2, got {points}")
    if log_scale:
        return np.logspace(math.log10(_LOG_ALPHA_MIN), 0.0, points)
    return np.linspace(0.0, 1.0, points)


def _save_plot(curve: curves.TradeOff, path: str, log_scale: bool, description: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    label = "\n".join(textwrap.wrap(description, width=36))
    ax = curve.plot(log=log_scale, label=label)
    ax.legend(fontsize="small", loc="lower right")
    ax.figure.tight_layout()
    ax.figure.savefig(path)
    plt.close(ax.figure)


def emit_curve(
    curve: curves.TradeOff,
    *,
    description: str,
    output_format: str,
    points: int,
    log_scale: bool,
    plot_path: str | None,
    fprs: Sequence[float],
    notes: Sequence[str] = (),
    bound: str = "exact",
    attack_note: str = "no membership-inference attack does better at that FPR",
) -> None:
    """Print ``curve`` in the requested format (and plot it); shared by subcommands.

    ``description`` names the curve in one line; ``notes`` are extra lines for
    the text output (e.g. which bound the curve is); ``bound`` says which
    ("exact", "pessimistic" or "optimistic") in the JSON; ``attack_note``
    explains a TPR read at a given FPR.
    """
    output_format = output_format.lower()
    alphas = _grid(points, log_scale)
    betas = np.asarray(curve.beta(alphas))
    tprs = np.asarray(curve.tpr(alphas))
    attacks = [(float(f), float(curve.tpr(f))) for f in fprs]
    advantage = curve.advantage()
    if plot_path:
        _save_plot(curve, plot_path, log_scale, description)
    if output_format == "json":
        emit_json(
            {
                "curve": description,
                "bound": bound,
                "points": [
                    {"alpha": float(a), "beta": float(b), "tpr": float(t)}
                    for a, b, t in zip(alphas, betas, tprs, strict=True)
                ],
                "advantage": json_number(advantage),
                "tpr_at_fpr": [{"fpr": f, "tpr": t} for f, t in attacks],
                "plot": plot_path,
            }
        )
        return
    if output_format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["alpha", "beta", "tpr"])
        for a, b, t in zip(alphas, betas, tprs, strict=True):
            writer.writerow([repr(float(a)), repr(float(b)), repr(float(t))])
        click.echo(buffer.getvalue(), nl=False)
        return
    click.echo(description)
    for note in notes:
        click.echo(f"  {note}")
    click.echo(f"{'alpha (FPR)':>14}  {'beta = f(alpha)':>16}  {'TPR = 1 - beta':>15}")
    for a, b, t in zip(alphas, betas, tprs, strict=True):
        click.echo(f"{a:14.6g}  {b:16.10g}  {t:15.6g}")
    click.echo(f"advantage = {advantage:.6g}")
    click.echo("  largest TPR - FPR of any membership-inference attack")
    for f, t in attacks:
        click.echo(f"TPR at FPR {f:g} = {t:.6g}")
        click.echo(f"  {attack_note}")
    if plot_path:
        click.echo(f"wrote {plot_path}")


@click.group(invoke_without_command=True)
@click.option("--mu", type=float, help="mu of a mu-GDP guarantee: the curve G_mu.")
@click.option("--epsilon", type=float, help="epsilon of an (epsilon, delta)-DP guarantee.")
@click.option(
    "--delta",
    type=float,
    help="delta of an (epsilon, delta)-DP guarantee (default 0, with --epsilon).",
)
@curve_output_options
@click.pass_context
def curve(
    context: click.Context,
    mu: float | None,
    epsilon: float | None,
    delta: float | None,
    output_format: str,
    points: int,
    log_scale: bool,
    plot_path: str | None,
    fprs: tuple[float, ...],
) -> None:
    """Print or plot a trade-off curve: the best attack's FNR beta at each FPR alpha.

    \b
    gaussdp curve --mu 1                              # G_mu (mu-GDP)
    gaussdp curve --epsilon 1 --delta 1e-5            # f_{epsilon,delta}
    gaussdp curve --mu 1 --fpr 1e-3                   # TPR of the best attack at FPR 1e-3
    gaussdp curve --mu 1 --log --plot roc.png         # log-log ROC figure
    gaussdp curve --epsilon 2 --format csv --points 101
    gaussdp curve dpsgd --noise-multiplier 1 --sampling-probability 0.01 --steps 1000 --log
    gaussdp curve account examples/autodp_example.toml --fpr 1e-3
    """
    if context.invoked_subcommand is not None:
        return
    if (mu is None) == (epsilon is None):
        raise click.UsageError("give exactly one of --mu and --epsilon (with --delta)")
    if mu is not None:
        if delta is not None:
            raise click.UsageError("--delta goes with --epsilon, not with --mu")
        chosen = curves.gaussian(mu)
        description = f"G_mu with mu = {mu:g}: the trade-off curve of mu-GDP"
        notes = ["exact closed form (Dong, Roth & Su, eq. 5)"]
    else:
        delta_value = 0.0 if delta is None else delta
        chosen = curves.epsilon_delta(epsilon, delta_value)
        description = (
            f"f_(epsilon,delta) with epsilon = {epsilon:g}, delta = {delta_value:g}: "
            "the trade-off curve of (epsilon, delta)-DP"
        )
        notes = ["exact closed form (Dong, Roth & Su, eq. 4)"]
    emit_curve(
        chosen,
        description=description,
        output_format=output_format.lower(),
        points=points,
        log_scale=log_scale,
        plot_path=plot_path,
        fprs=fprs,
        notes=notes,
    )
