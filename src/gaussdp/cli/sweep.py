"""``gaussdp sweep``: account every point of a grid, saving rows as they finish; resumable."""

from __future__ import annotations

import sys

import click

from gaussdp.sweeps import SweepError
from gaussdp.sweeps.output import FORMATS
from gaussdp.sweeps.run import sweep, write_stream

__all__ = ["sweep_command"]


@click.command("sweep")
@click.argument("grid", type=click.Path(dir_okay=False))
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False),
    default=None,
    help="Results file, written as points finish; running again resumes it. "
    "Default: CSV on stdout (no resuming).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS, case_sensitive=False),
    default=None,
    help="csv, json (JSON Lines) or parquet (needs pyarrow). Default: from the "
    "output's suffix, else csv.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Local worker processes, one core each (default: the number of cores).",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Run on this Dask cluster instead (tcp://host:8786; needs gaussdp[dask]).",
)
@click.option("--restart", is_flag=True, help="Discard earlier results in --output.")
@click.option("--yes", is_flag=True, help="Run grids of more than a million points.")
@click.option(
    "--reuse-steps/--no-reuse-steps",
    default=True,
    show_default=True,
    help="Account points that differ only in steps from one transform (equal to single "
    "calls up to rounding); --no-reuse-steps makes every point a single account() call.",
)
@click.option(
    "--progress/--no-progress",
    default=True,
    show_default=True,
    help="Progress bar on stderr (only drawn on a terminal).",
)
def sweep_command(
    grid, output, output_format, workers, scheduler, restart, yes, reuse_steps, progress
):
    """ε (or δ) for every point of a grid of pipelines, one row per point and δ.

    GRID is a pipeline file in which any number may be a list; the sweep is
    the Cartesian product of the lists, and a [sweep] table names the
    outputs (docs/sweeps.md):

    \b
        [sweep]
        deltas = [1e-5, 1e-6]
        report = true              # adds mu, regret, delta_tail, tier
        [[mechanism]]
        type = "dpsgd"
        noise_multiplier = [8.0, 9.4]
        sampling_probability = 0.32768
        steps = [1000, 2000]

    \b
    gaussdp sweep examples/cifar10_grid.toml --output results.csv --workers 2

    Rows are written as points finish; if the sweep stops, run the same
    command again: it computes only the missing points.
    """
    options = {
        "workers": workers,
        "scheduler": scheduler,
        "progress": progress,
        "maximum_points": 0 if yes else None,
        "along_steps": reuse_steps,
    }
    try:
        if output is None:
            write_stream(
                grid, sys.stdout, output_format=(output_format or "csv").lower(), **options
            )
        else:
            sweep(
                grid,
                output=output,
                format=output_format,
                restart=restart,
                return_rows=False,
                **options,
            )
    except SweepError as error:
        click.echo(f"gaussdp: error: {error}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        saved = (
            f"; the finished points are saved in {output} — run again to resume" if output else ""
        )
        click.echo(f"gaussdp: interrupted{saved}", err=True)
        sys.exit(130)
