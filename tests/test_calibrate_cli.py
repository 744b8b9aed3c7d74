"""``gaussdp calibrate``: targets, formats, and one-line errors with exit code 2."""

import json

import pytest
from click.testing import CliRunner

from gaussdp import DPSGD, account
from gaussdp.cli import cli, main


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_epsilon_target_json_is_rechecked():
    result = run(
        "calibrate",
        "--target-epsilon", "2", "--delta", "1e-5",
        "--sampling-probability", "0.01", "--steps", "1000",
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    sigma = payload["noise_multiplier"]
    assert account(DPSGD(sigma, 0.01, 1000)).epsilon(1e-5) <= 2.0
    assert account(DPSGD(payload["failing_noise_multiplier"], 0.01, 1000)).epsilon(1e-5) > 2.0
    assert payload["achieved"] <= 2.0 < payload["failing_achieved"]
    assert payload["quantity"] == "epsilon"


@pytest.mark.parametrize(
    "target",
    [["--target-advantage", "0.1"], ["--target-tpr", "0.01", "--at-fpr", "1e-4"]],
)
def test_attack_targets_text(target):
    result = run("calibrate", *target, "--sampling-probability", "0.01", "--steps", "500")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("noise_multiplier = ")
    assert "upper bound, re-checked" in result.output
    assert "fails" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target-epsilon", "1"], "--target-epsilon needs --delta"),
        (["--target-epsilon", "1", "--delta", "1e-5", "--target-mu", "1"], "exactly one target"),
        ([], "exactly one target"),
        (["--target-tpr", "0.01"], "--target-tpr needs --at-fpr"),
        (["--target-tpr", "0.01", "--at-fpr", "0.1"], "tpr must be greater than fpr"),
        (["--target-epsilon", "-1", "--delta", "1e-5"], "epsilon must be in"),
        (["--target-advantage", "0.1", "--delta", "1e-5"], "--delta goes with --target-epsilon"),
        (
            ["--target-epsilon", "0.001", "--delta", "1e-5", "--bracket", "0.5", "1"],
            "target unreachable",
        ),
    ],
)
def test_errors_are_one_line_exit_2(args, message, capsys):
    with pytest.raises(SystemExit) as error:
        main(["calibrate", *args, "--sampling-probability", "0.01", "--steps", "100"])
    assert error.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("gaussdp: error: ")
    assert err.count("\n") == 1
    assert message in err


def test_small_target_without_a_bracket_exit_0():
    # Used to exit 2 with "the search range does not bracket the target ... Widen the
    # range" although no range was given (the automatic bracket was checked with the
    # coarse accountant only).
    result = run(
        "calibrate",
        "--target-epsilon", "0.01", "--delta", "1e-5",
        "--sampling-probability", "0.01", "--steps", "100",
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    # calibration certifies with a relative accuracy at every epsilon (epsilon_scale=0)
    met = account(DPSGD(payload["noise_multiplier"], 0.01, 100), epsilon_scale=0.0)
    failing = account(DPSGD(payload["failing_noise_multiplier"], 0.01, 100), epsilon_scale=0.0)
    assert met.epsilon(1e-5) <= 0.01
    assert failing.epsilon(1e-5) > 0.01
    assert payload["failing_reason"].startswith("epsilon = ")


def test_mu_target_json():
    result = run(
        "calibrate", "--target-mu", "0.5",
        "--sampling-probability", "0.05", "--steps", "100", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["quantity"] == "mu"
    sigma, failing = payload["noise_multiplier"], payload["failing_noise_multiplier"]
    assert account(DPSGD(sigma, 0.05, 100)).gdp().mu == payload["achieved"] <= 0.5
    assert account(DPSGD(failing, 0.05, 100)).gdp().mu == payload["failing_achieved"] > 0.5
    assert payload["failing_reason"].startswith("mu = ")
    assert payload["regret"] >= 0 and payload["failing_regret"] >= 0


def test_max_regret_says_the_neighbour_fails_on_regret():
    # The neighbour's mu is below the target: only the regret fails, and the output says so.
    args = ["--target-mu", "1", "--max-regret", "0.01"]
    args += ["--sampling-probability", "0.01", "--steps", "400"]
    result = run("calibrate", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["failing_achieved"] < 1
    assert payload["regret"] <= 0.01 < payload["failing_regret"]
    # The regret shown with as many digits as tell it apart from the limit (at least 6).
    reason = payload["failing_reason"]
    shown = reason.removeprefix("regret = ").removesuffix(" > 0.01")
    assert reason == f"regret = {shown} > 0.01"
    assert float(shown) > 0.01
    assert float(shown) == pytest.approx(payload["failing_regret"], rel=1e-5)  # 6 digits at least
    # The text output, at a coarser tolerance: the neighbour still fails on its regret
    # (0.0100016 > 0.01, μ below the target) and the search takes 14 accountings, not 24.
    text = run(
        "calibrate", "--target-mu", "0.5", "--max-regret", "0.01",
        "--sampling-probability", "0.05", "--steps", "100", "--rtol", "1e-3",
    )  # fmt: skip
    assert text.exit_code == 0, text.output
    assert "fails on: regret = " in text.output


def test_max_delta_tail_goes_with_target_mu_and_fixes_the_failure_probability(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "calibrate",
                "--target-epsilon",
                "8",
                "--delta",
                "1e-5",
                "--max-delta-tail",
                "1e-10",
                "--sampling-probability",
                "0.01",
                "--steps",
                "100",
            ]
        )
    assert exit_info.value.code == 2
    assert "--max-delta-tail goes with --target-mu" in capsys.readouterr().err
    main(
        [
            "calibrate",
            "--target-mu",
            "1",
            "--max-delta-tail",
            "1e-10",
            "--sampling-probability",
            "0.01",
            "--steps",
            "1000",
            "--format",
            "json",
        ]
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["achieved"] <= 1.0 < payload["failing_achieved"]
    assert "failure probability <= 1e-10" in payload["target"]
