"""``gaussdp audit``: attack outcomes -> certified lower bounds, beside the accountant.

gaussdp audit counts 950 50 10 990 --delta 1e-5
gaussdp audit scores members.npy non_members.npy --thresholds bonferroni
gaussdp audit one-run 1000 100 95 --delta 1e-5 --against dpsgd \\
    --noise-multiplier 1.0 --sampling-probability 0.01 --steps 2000
gaussdp audit one-run-scores canaries.csv canaries.csv --column score \\
    --included-column included --guesses 200 --delta 1e-5
"""

from __future__ import annotations

import functools
import os
import re

import click

from gaussdp._validation import InvalidParameterError
from gaussdp.cli._common import emit_json

__all__ = ["audit"]

_FORMATS = click.Choice(["text", "json", "markdown", "html"], case_sensitive=False)


_NUMBER = re.compile(r"-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|-inf|-nan", re.IGNORECASE)


class _NumbersCommand(click.Command):
    """A command whose positional arguments may be negative numbers (``counts 5 -3 5 5``).

    click reads ``-3`` as an unknown option ("No such option: -3"). Here a token
    that is a negative number, where an argument is expected, is passed on as an
    argument, so the library's one-line check names the parameter and its range
    (``fn must be an integer >= 0, got -3``); any other unknown option is refused
    as before.
    """

    def __init__(self, *args, **kwargs):
        settings = dict(kwargs.pop("context_settings", None) or {})
        settings["ignore_unknown_options"] = True
        super().__init__(*args, context_settings=settings, **kwargs)

    def parse_args(self, ctx, args):
        takes_value = set()
        known = set()
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                names = [*param.opts, *param.secondary_opts]
                known.update(names)
                if not param.is_flag and not param.count:
                    takes_value.update(param.opts)
        skip = False
        for token in args:
            if skip:
                skip = False
                continue
            if token == "--":
                break
            name = token.split("=", 1)[0]
            if name in takes_value and "=" not in token:
                skip = True
            elif token.startswith("-") and name not in known and not _NUMBER.fullmatch(token):
                raise click.NoSuchOption(token, ctx=ctx)
        return super().parse_args(ctx, args)


def _common(command):
    """--alpha, --delta, the run to compare with, and the output options."""

    @click.option(
        "--alpha", type=float, default=0.05, show_default=True, help="1 - confidence, in (0, 1)."
    )
    @click.option("--delta", type=float, default=0.0, show_default=True, help="δ for ε, in [0, 1).")
    @click.option(
        "--against",
        type=str,
        default=None,
        help="The run as accounted: 'dpsgd' (with the three DP-SGD options) or a pipeline file.",
    )
    @click.option("--noise-multiplier", type=float, default=None, help="DP-SGD: σ.")
    @click.option("--sampling-probability", type=float, default=None, help="DP-SGD: q.")
    @click.option("--steps", type=int, default=None, help="DP-SGD: T.")
    @click.option("--format", "output_format", type=_FORMATS, default="text", show_default=True)
    @click.option("--output", type=str, default=None, help="Write to this file (default stdout).")
    @click.option(
        "--plot",
        type=str,
        default=None,
        help="Save the log-log ROC figure (needs --against and matplotlib) to this file.",
    )
    @functools.wraps(command)
    def wrapper(**options):
        return command(**options)

    return wrapper


def _against(against, noise_multiplier, sampling_probability, steps):
    """The mechanism or pipeline of --against (None without it)."""
    from gaussdp import mechanisms

    dpsgd = {
        "--noise-multiplier": noise_multiplier,
        "--sampling-probability": sampling_probability,
        "--steps": steps,
    }
    given = [name for name, value in dpsgd.items() if value is not None]
    if against is None:
        if given:
            raise click.UsageError(f"{', '.join(given)} need --against dpsgd")
        return None
    if against.lower() == "dpsgd" and not os.path.exists(against):
        missing = [name for name, value in dpsgd.items() if value is None]
        if missing:
            raise click.UsageError(f"--against dpsgd needs {', '.join(missing)}")
        return mechanisms.DPSGD(noise_multiplier, sampling_probability, steps)
    if given:
        raise click.UsageError(f"{', '.join(given)} only apply to --against dpsgd")
    return mechanisms.load(against)


def _emit(result, output_format, output, plot):
    """Print (or write) the result, or its report when there is one; save the figure."""
    name = output_format.lower()
    if plot is not None and result.report is None:
        raise click.UsageError("--plot needs --against (the figure sets the audit beside it)")
    if result.report is not None:
        text = result.report.render(name)
    elif name == "json":
        from gaussdp.audit.report import clean_json

        if output is None:
            emit_json(clean_json(result.to_dict()))
            text = None
        else:
            import json

            text = json.dumps(clean_json(result.to_dict()), indent=2, allow_nan=False)
    elif name in ("text", "markdown"):
        text = str(result)
    else:
        raise click.UsageError("--format html needs --against (the page sets the audit beside it)")
    if text is not None:
        if output is None or output == "-":
            click.echo(text.rstrip("\n"))
        else:
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(text if text.endswith("\n") else text + "\n")
            click.echo(f"wrote {name} to {output}", err=True)
    if plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        ax = result.report.plot()
        ax.figure.savefig(plot, dpi=120, bbox_inches="tight")
        click.echo(f"wrote the figure to {plot}", err=True)


@click.group("audit")
def audit() -> None:
    """Turn attack outcomes into certified lower bounds on ε and μ.

    Every number printed by the audit is a lower bound at confidence 1 - alpha,
    except the ε derived from μ's lower bound, which is labelled model-based.
    With --against, the audit is set beside the accountant's certified curve
    for the run: μ_lo (audit) <= μ <= μ_hi (accountant), and a violation test
    with its p-value.
    """


@audit.command("counts", cls=_NumbersCommand)
@click.argument("tp", type=int)
@click.argument("fn", type=int)
@click.argument("fp", type=int)
@click.argument("tn", type=int)
@_common
def counts(
    tp,
    fn,
    fp,
    tn,
    alpha,
    delta,
    against,
    noise_multiplier,
    sampling_probability,
    steps,
    output_format,
    output,
    plot,
):
    """One threshold's confusion counts: TP FN FP TN (Clopper–Pearson, α/2 each).

    \b
    gaussdp audit counts 950 50 10 990 --delta 1e-5
    """
    from gaussdp.audit import from_counts

    mechanism = _against(against, noise_multiplier, sampling_probability, steps)
    result = from_counts(tp, fn, fp, tn, alpha=alpha, delta=delta, against=mechanism)
    _emit(result, output_format, output, plot)


def _thresholds(value: str):
    if value.lower() in ("bonferroni", "split"):
        return value.lower()
    try:
        return float(value)
    except ValueError:
        raise InvalidParameterError(
            f"--thresholds must be 'bonferroni', 'split' or a number, got {value!r}"
        ) from None


@audit.command("scores", cls=_NumbersCommand)
@click.argument("members", type=str)
@click.argument("non_members", type=str)
@click.option(
    "--thresholds",
    type=str,
    default="bonferroni",
    show_default=True,
    help="'bonferroni' (every threshold, corrected), 'split' (choose on half) or a number.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="The split's seed.")
@click.option("--column", type=str, default=None, help="The score column of CSV files.")
@_common
def scores(
    members,
    non_members,
    thresholds,
    seed,
    column,
    alpha,
    delta,
    against,
    noise_multiplier,
    sampling_probability,
    steps,
    output_format,
    output,
    plot,
):
    """Attack scores of MEMBERS and NON_MEMBERS (.npy or .csv files; higher = member).

    \b
    gaussdp audit scores members.npy non_members.npy --delta 1e-5
    gaussdp audit scores in.csv out.csv --column score --thresholds split
    """
    from gaussdp.audit import from_scores

    mechanism = _against(against, noise_multiplier, sampling_probability, steps)
    result = from_scores(
        members,
        non_members,
        alpha=alpha,
        delta=delta,
        thresholds=_thresholds(thresholds),
        seed=seed,
        column=column,
        against=mechanism,
    )
    _emit(result, output_format, output, plot)


@audit.command("one-run", cls=_NumbersCommand)
@click.argument("canaries", type=int)
@click.argument("guesses", type=int)
@click.argument("correct", type=int)
@_common
def one_run_command(
    canaries,
    guesses,
    correct,
    alpha,
    delta,
    against,
    noise_multiplier,
    sampling_probability,
    steps,
    output_format,
    output,
    plot,
):
    """A one-run audit: CANARIES inserted with probability ½, GUESSES made, CORRECT right.

    ε by Steinke, Nasr & Jagielski (2023); μ by the f-DP analysis of Mahloujifar,
    Melis & Chaudhuri (2024). With --against, the accountant's own curve for the
    run is tested.

    \b
    gaussdp audit one-run 1000 100 95 --delta 1e-5
    """
    from gaussdp.audit import one_run

    mechanism = _against(against, noise_multiplier, sampling_probability, steps)
    result = one_run(canaries, guesses, correct, alpha=alpha, delta=delta, against=mechanism)
    _emit(result, output_format, output, plot)


@audit.command("one-run-scores", cls=_NumbersCommand)
@click.argument("scores", type=str)
@click.argument("included", type=str)
@click.option(
    "--guesses",
    type=int,
    required=True,
    help="r, fixed before the scores are seen: guess on the r/2 highest and r/2 lowest.",
)
@click.option("--column", type=str, default=None, help="The score column of a CSV file.")
@click.option(
    "--included-column", type=str, default=None, help="The 0/1 inclusion column of a CSV file."
)
@_common
def one_run_scores_command(
    scores,
    included,
    guesses,
    column,
    included_column,
    alpha,
    delta,
    against,
    noise_multiplier,
    sampling_probability,
    steps,
    output_format,
    output,
    plot,
):
    """A one-run audit from per-canary SCORES and INCLUDED (0/1) files (.npy or .csv).

    The auditor guesses "included" for the ⌈r/2⌉ highest scores and "excluded"
    for the ⌊r/2⌋ lowest (Steinke, Nasr & Jagielski 2023, §6), then audits the
    counts as ``one-run`` does.

    \b
    gaussdp audit one-run-scores scores.npy included.npy --guesses 200 --delta 1e-5
    """
    from gaussdp.audit import one_run_from_scores

    mechanism = _against(against, noise_multiplier, sampling_probability, steps)
    result = one_run_from_scores(
        scores,
        included,
        guesses=guesses,
        alpha=alpha,
        delta=delta,
        against=mechanism,
        column=column,
        included_column=included_column,
    )
    _emit(result, output_format, output, plot)
