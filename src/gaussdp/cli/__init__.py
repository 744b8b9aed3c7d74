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

import importlib
import sys
import warnings
from collections.abc import Sequence

import click

from gaussdp import __version__

__all__ = ["cli", "main"]

#: Subcommands, one module each, imported only when named (so ``gaussdp dpsgd`` does not
#: load the report, calibration or GDPT code): {name: (module, attribute)}.
_COMMANDS = {
    "account": ("gaussdp.cli.account", "account_command"),
    "audit": ("gaussdp.cli.audit", "audit"),
    "calibrate": ("gaussdp.cli.calibrate", "calibrate"),
    "convert": ("gaussdp.cli.convert", "convert"),
    "curve": ("gaussdp.cli.curve", "curve"),
    "dpsgd": ("gaussdp.cli.account", "dpsgd"),
    "gdpt": ("gaussdp.cli.gdpt", "gdpt"),
    "report": ("gaussdp.cli.report", "report"),
    "sweep": ("gaussdp.cli.sweep", "sweep_command"),
    "table": ("gaussdp.cli.convert", "table"),
}


class _LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(_COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands or name not in _COMMANDS:
            return self.commands.get(name)
        module_name, attribute = _COMMANDS[name]
        command = getattr(importlib.import_module(module_name), attribute)
        if name == "curve":
            from gaussdp.cli.curve_accountant import curve_account, curve_dpsgd

            command.add_command(curve_dpsgd)
            command.add_command(curve_account)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gaussdp")
def cli() -> None:
    """Differential-privacy accounting built around Gaussian DP (μ-GDP).

    Every number printed is an upper bound on privacy loss unless it is
    labelled as a lower bound or an approximation.
    """


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings (AccuracyWarning, OptimisticApproximationWarning) as one line on stderr."""
    click.echo(f"gaussdp: warning: {message}", err=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the CLI, turning every error into one line and exit 2."""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warning_line
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
