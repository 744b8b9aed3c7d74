"""``gaussdp gdpt``: identify and measure GDP from a privacy profile (the GDPT paper)."""

from __future__ import annotations

import importlib
import math
import os
import re
import sys

import click

from gaussdp import gdpt as gdpt_module
from gaussdp._validation import InvalidParameterError
from gaussdp.cli._common import FORMATS, emit_json, json_number

__all__ = ["gdpt", "load_profile"]

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
# --plot draws the head up to this ε (or --epsilon-max if smaller): the GDPT's shape is there.
_PLOT_EPSILON_MAX = 10.0


def load_profile(spec: str):
    """A built-in example name, or ``module:attribute`` imported with importlib.

    The attribute is the profile itself: a callable ε ↦ δ, an object with
    ``.delta`` or ``.delta_bounds``, or a pair (lower, upper). The current
    directory is searched first, like ``python -m``. Nothing is evaluated as
    code beyond importing the named module.
    """
    if spec in gdpt_module.EXAMPLES:
        return gdpt_module.example(spec), gdpt_module.EXAMPLES[spec][1]
    module_name, colon, attribute = spec.partition(":")
    if not colon:
        choices = ", ".join(sorted(gdpt_module.EXAMPLES))
        raise InvalidParameterError(
            f"PROFILE must be one of {choices} or module:function, got {spec!r}"
        )
    if not _DOTTED.match(module_name) or not _DOTTED.match(attribute):
        raise InvalidParameterError(f"PROFILE must look like package.module:function, got {spec!r}")
    added = os.getcwd() not in sys.path
    if added:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # ImportError, or anything the module raised on import
        raise InvalidParameterError(
            f"cannot import module {module_name!r}: {type(error).__name__}: {error}"
        ) from None
    finally:
        if added:
            sys.path.remove(os.getcwd())
    target = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise InvalidParameterError(
                f"module {module_name!r} has no attribute {attribute!r}"
            ) from None
    return target, "user profile (module:function)"


def _payload(name: str, description: str, certificate) -> dict:
    tail = certificate.tail
    return {
        "profile": name,
        "description": description,
        "epsilon_max": certificate.epsilon_max,
        "tolerance": certificate.tolerance,
        "mu_lower": json_number(certificate.mu_lower),
        "mu_upper": json_number(certificate.mu_upper),
        "width": json_number(certificate.width),
        "tolerance_met": certificate.tolerance_met,
        "argmax_epsilon": certificate.argmax_epsilon,
        "certifies": (
            f"({certificate.epsilon_max:g}, mu_upper)-head GDP: delta(eps) <= delta_mu(eps) "
            f"for eps <= {certificate.epsilon_max:g} only"
        ),
        "tail_delta": certificate.tail_delta,
        "log_tail_delta": json_number(certificate.log_tail_delta),
        "steps": certificate.steps,
        "evaluations": certificate.evaluations,
        "searches": certificate.searches,
        "from_bounds": certificate.from_bounds,
        "tail": None
        if tail is None
        else {
            "limit": json_number(tail.limit),
            "verdict": tail.verdict,
            "is_gdp": tail.is_gdp,
            "zero_epsilon": tail.zero_epsilon,
            "underflow": tail.underflow,
            "kind": "exact" if tail.verdict == "pure-dp" else "numerical estimate, not a bound",
        },
    }


def _draw(profile, certificate, label: str, path: str) -> None:
    try:
        import matplotlib
    except ImportError:
        raise click.ClickException("--plot needs matplotlib: pip install 'gaussdp[plot]'") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    e_max = min(certificate.epsilon_max, _PLOT_EPSILON_MAX)
    ax = gdpt_module.plot(
        profile, e_max, steps=40, certificate=certificate, label=label, points=200
    )
    ax.set_title(
        f"GDPT, certified sup over [0, {certificate.epsilon_max:g}] in "
        f"[{certificate.mu_lower:.4g}, {certificate.mu_upper:.4g}]",
        fontsize=9,
    )
    ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(ax.figure)


@click.command()
@click.argument("profile_name", metavar="PROFILE")
@click.option(
    "--epsilon-max",
    type=float,
    default=50.0,
    show_default=True,
    help="End of the certified head: mu is certified for epsilon <= this.",
)
@click.option(
    "--tolerance",
    type=float,
    default=1e-3,
    show_default=True,
    help="Width of the certified interval [mu_lower, mu_upper].",
)
@click.option(
    "--plot",
    "plot_file",
    type=click.Path(dir_okay=False),
    default=None,
    help=f"Draw the GDPT with its staircases to this file (epsilon up to {_PLOT_EPSILON_MAX:g}).",
)
@click.option(
    "--tail/--no-tail",
    default=True,
    show_default=True,
    help="Also estimate the tail limit (probes the profile up to epsilon ~ 1e6); "
    "--no-tail certifies the head only.",
)
@click.option("--format", "output_format", type=FORMATS, default="text", show_default=True)
def gdpt(
    profile_name: str,
    epsilon_max: float,
    tolerance: float,
    plot_file: str | None,
    tail: bool,
    output_format: str,
) -> None:
    """Identify and measure GDP from a privacy profile (the GDPT).

    PROFILE is a built-in example (laplace, noisy-sgd, encoder) or
    module:function naming a profile epsilon -> delta (a callable, an object
    with .delta or .delta_bounds, or a pair (lower, upper)).

    Prints the tail limit (a numerical estimate: finite means GDP), the
    certified interval for the supremum of the GDPT on [0, --epsilon-max]
    and where it is attained. The certificate is for head GDP only.

    \b
    gaussdp gdpt noisy-sgd
    gaussdp gdpt encoder --epsilon-max 20 --format json
    gaussdp gdpt mymodule:profile --tolerance 1e-4 --plot gdpt.png
    """
    profile, description = load_profile(profile_name)
    certificate = gdpt_module.certify(profile, epsilon_max, tolerance, tail=tail)
    if plot_file is not None:
        _draw(profile, certificate, profile_name, plot_file)
    if output_format == "json":
        emit_json(_payload(profile_name, description, certificate))
        return
    click.echo(f"profile: {profile_name} - {description}")
    click.echo(str(certificate))
    if certificate.tail is not None and not math.isfinite(certificate.tail.limit):
        scale = gdpt_module.clip_and_rectify(certificate.epsilon_max, 0.0, 1.0)
        click.echo(
            f"  e.g. an output clipped to [0, 1] needs Laplace noise of scale {scale:.3g} "
            f"to become {certificate.mu_upper:.6g}-GDP (Theorem 4.7)"
        )
    if plot_file is not None:
        click.echo(f"plot written to {plot_file}")
