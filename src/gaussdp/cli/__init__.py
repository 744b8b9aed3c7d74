"""The ``gaussdp`` command line.

Built on click: it is mature, widely used (Flask, pip-tools, Black), has no
runtime dependencies of its own, supports repeated options (``--delta`` given
several times), typed options with validation, and a progress bar for long
computations, which is all this CLI needs.

Every subcommand mirrors a library call, prints a human-readable answer by
default and ``--format json`` (and other formats where tabular) for machines.
Bad input prints one line, ``gaussdp: error: ...``, to stderr and exits 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from gaussdp import __version__

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gaussdp")
def cli() -> None:
    """Differential-privacy accounting built around Gaussian DP (μ-GDP).

    Every number printed is an upper bound on privacy loss unless it is
    labelled as a lower bound or an approximation.
    """


# Subcommands live in one module each; register them here.
from gaussdp.cli.account import account_command, dpsgd  # noqa: E402
from gaussdp.cli.calibrate import calibrate  # noqa: E402
from gaussdp.cli.convert import convert, table  # noqa: E402
from gaussdp.cli.curve import curve  # noqa: E402
from gaussdp.cli.curve_accountant import curve_account, curve_dpsgd  # noqa: E402
from gaussdp.cli.gdpt import gdpt  # noqa: E402
from gaussdp.cli.report import report  # noqa: E402
from gaussdp.cli.sweep import sweep_command  # noqa: E402

cli.add_command(convert)
cli.add_command(dpsgd)
cli.add_command(account_command)
cli.add_command(table)
cli.add_command(gdpt)
cli.add_command(calibrate)
cli.add_command(curve)
curve.add_command(curve_dpsgd)
curve.add_command(curve_account)
cli.add_command(report)
cli.add_command(sweep_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the CLI, turning every error into one line and exit 2."""
    try:
        cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="gaussdp",
            standalone_mode=False,
        )
    except click.exceptions.Abort:
        click.echo("gaussdp: aborted", err=True)
        sys.exit(1)
    except click.ClickException as error:
        click.echo(f"gaussdp: error: {error.format_message()}", err=True)
        sys.exit(2)
    except ValueError as error:  # InvalidParameterError and friends
        click.echo(f"gaussdp: error: {error}", err=True)
        sys.exit(2)
    except OSError as error:
        click.echo(f"gaussdp: error: {error}", err=True)
        sys.exit(2)
    except MemoryError as error:  # numpy's allocation failures subclass MemoryError
        # The accountant's message says what to change; a bare one gets a general hint.
        detail = str(error) or "ask for less precision (a coarser --accuracy or --tolerance)"
        click.echo(f"gaussdp: error: out of memory: {detail}", err=True)
        sys.exit(2)
