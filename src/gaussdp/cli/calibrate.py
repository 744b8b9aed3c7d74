"""``gaussdp calibrate``: the DP-SGD noise multiplier for a privacy target."""

from __future__ import annotations

import click

from gaussdp import calibrate as calibration
from gaussdp.cli._common import FORMATS, emit_json, json_number

__all__ = ["calibrate"]


def _number(value: float | None):
    return None if value is None else json_number(value)


def _target(
    *,
    target_epsilon: float | None,
    delta: float | None,
    target_mu: float | None,
    max_regret: float | None,
    max_delta_tail: float | None,
    target_advantage: float | None,
    target_tpr: float | None,
    at_fpr: float | None,
) -> calibration.Target:
    given = [
        name
        for name, value in (
            ("--target-epsilon", target_epsilon),
            ("--target-mu", target_mu),
            ("--target-advantage", target_advantage),
            ("--target-tpr", target_tpr),
        )
        if value is not None
    ]
    if len(given) != 1:
        raise click.UsageError(
            "give exactly one target: --target-epsilon (with --delta), --target-mu, "
            "--target-advantage, or --target-tpr (with --at-fpr)"
            + (f"; got {', '.join(given)}" if given else "")
        )
    if delta is not None and target_epsilon is None:
        raise click.UsageError("--delta goes with --target-epsilon")
    if at_fpr is not None and target_tpr is None:
        raise click.UsageError("--at-fpr goes with --target-tpr")
    if max_regret is not None and target_mu is None:
        raise click.UsageError("--max-regret goes with --target-mu")
    if max_delta_tail is not None and target_mu is None:
        raise click.UsageError("--max-delta-tail goes with --target-mu")
    if target_epsilon is not None:
        if delta is None:
            raise click.UsageError("--target-epsilon needs --delta")
        return calibration.EpsilonDelta(target_epsilon, delta)
    if target_mu is not None:
        return calibration.Mu(target_mu, max_regret, max_delta_tail)
    if target_advantage is not None:
        return calibration.Advantage(target_advantage)
    if at_fpr is None:
        raise click.UsageError("--target-tpr needs --at-fpr")
    return calibration.TPRAtFPR(target_tpr, at_fpr)


@click.command()
@click.option("--target-epsilon", type=float, help="Target ε of (ε, δ)-DP (with --delta).")
@click.option("--delta", type=float, help="δ of the (ε, δ) target.")
@click.option("--target-mu", type=float, help="Target μ of μ-GDP.")
@click.option("--max-regret", type=float, help="With --target-mu: cap on the regret of μ-GDP.")
@click.option(
    "--max-delta-tail",
    type=float,
    help="With --target-mu: the failure probability δ of 'μ-GDP except with probability δ', "
    "fixed for every σ tried (keeps μ monotone in σ for subsampled runs).",
)
@click.option("--target-advantage", type=float, help="Largest TPR − FPR allowed for any attack.")
@click.option("--target-tpr", type=float, help="Largest attack TPR allowed at --at-fpr.")
@click.option("--at-fpr", type=float, help="The FPR of the --target-tpr target.")
@click.option("--sampling-probability", type=float, required=True, help="Poisson sampling rate q.")
@click.option("--steps", type=int, required=True, help="Number of DP-SGD steps T.")
@click.option(
    "--bracket",
    type=(float, float),
    default=None,
    help="Search σ in [LOW, HIGH] (default: from a closed-form first guess).",
)
@click.option(
    "--rtol",
    type=float,
    default=calibration.DEFAULT_RTOL,
    show_default=True,
    help="Relative tolerance on σ.",
)
@click.option("--format", "output_format", type=FORMATS, default="text", show_default=True)
def calibrate(sampling_probability, steps, bracket, rtol, output_format, **target_options) -> None:
    """The smallest DP-SGD noise multiplier σ that meets a privacy target.

    The answer is on the safe side: σ was re-checked with the pessimistic
    accountant and meets the target; σ one tolerance step smaller fails it.

    \b
    gaussdp calibrate --target-epsilon 8 --delta 1e-5 --sampling-probability 0.32768 --steps 2000
    gaussdp calibrate --target-mu 1 --max-delta-tail 1e-10 --sampling-probability 0.01 --steps 1000
    gaussdp calibrate --target-advantage 0.1 --sampling-probability 0.01 --steps 1000
    gaussdp calibrate --target-tpr 0.01 --at-fpr 1e-4 --sampling-probability 0.01 --steps 1000
    """
    target = _target(**target_options)
    result = calibration.noise_multiplier(
        target,
        sampling_probability=sampling_probability,
        steps=steps,
        bracket=bracket,
        rtol=rtol,
    )
    if output_format == "json":
        payload = {
            "noise_multiplier": result.value,
            "target": result.target.describe(),
            "quantity": result.target.quantity,
            "achieved": _number(result.achieved),
            "failing_noise_multiplier": result.failing_value,
            "failing_achieved": _number(result.failing_achieved),
            # Which of the target's conditions the failing neighbour fails: with
            # --max-regret it can fail on the regret with mu below the target.
            "failing_reason": result.failing_reason,
        }
        values = result.report_values()
        if values is not None:
            payload.update({key: _number(value) for key, value in values.items()})
        payload.update(
            {
                "sampling_probability": sampling_probability,
                "steps": steps,
                "bound": "upper (pessimistic accountant)",
                "method": result.accounting.method,
            }
        )
        emit_json(payload)
        return
    click.echo(result.describe())
