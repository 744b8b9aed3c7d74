"""``gaussdp dpsgd`` and ``gaussdp account`` against the library."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import gaussdp as g
from gaussdp.cli import cli, main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_dpsgd_text_and_json_match_the_library():
    args = ["dpsgd", "--noise-multiplier", 2.0, "--sampling-probability", 0.01, "--steps", 500]
    text = run(*args, "--delta", 1e-5)
    assert text.exit_code == 0, text.output
    assert "upper bound; lower bound" in text.output
    payload = json.loads(run(*args, "--delta", 1e-5, "--epsilon", 1.0, "--format", "json").output)
    lower, upper = g.account(g.DPSGD(2.0, 0.01, 500)).epsilon_bounds(1e-5)
    row = payload["epsilon_for_delta"][0]
    assert row["epsilon"] == pytest.approx(upper, rel=1e-12)
    assert row["epsilon_lower"] == pytest.approx(lower, rel=1e-12)
    assert (
        payload["delta_for_epsilon"][0]["delta"] >= payload["delta_for_epsilon"][0]["delta_lower"]
    )
    assert payload["mechanism"]["type"] == "dpsgd"


def test_account_pipeline_file():
    result = run("account", EXAMPLES / "autodp_example.toml", "--delta", 1e-6, "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    expected = g.account(g.load(EXAMPLES / "autodp_example.toml")).epsilon(1e-6)
    assert payload["epsilon_for_delta"][0]["epsilon"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["dpsgd", "--noise-multiplier", "0", "--sampling-probability", "0.1", "--steps", "3"],
            "noise_multiplier must be in (0, inf], got 0.0",
        ),
        (
            ["dpsgd", "--noise-multiplier", "1", "--sampling-probability", "1.5", "--steps", "3"],
            "sampling_probability must be in (0, 1], got 1.5",
        ),
        (
            [
                "dpsgd",
                "--noise-multiplier",
                "1",
                "--sampling-probability",
                "0.1",
                "--steps",
                "3",
                "--delta",
                "0",
            ],
            "delta must be in (0, 1), got 0.0",
        ),
        (
            [
                "dpsgd",
                "--noise-multiplier",
                "1",
                "--sampling-probability",
                "0.1",
                "--steps",
                "3",
                "--epsilon",
                "-1",
            ],
            "epsilon must be in [0, inf], got -1.0",
        ),
        (["account", "does-not-exist.toml"], "file not found"),
    ],
)
def test_errors_are_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_malformed_pipeline_file(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text('[[mechanism]]\ntype = "gaussian"\nsigma = -1\n')
    with pytest.raises(SystemExit) as exit_info:
        main(["account", str(path)])
    assert exit_info.value.code == 2
    assert "sigma" in capsys.readouterr().err


def test_an_accuracy_not_reached_is_one_warning_line(capsys):
    # δ = 1e-11 is below the plain lower bound's rounding allowance (u·4T ≈ 9e-13 for
    # T = 2000): refined by tilted compositions, the accuracy is reached, no warning
    argv = ["dpsgd", "--noise-multiplier", "1.0", "--sampling-probability", "0.01"]
    main([*argv, "--steps", "2000", "--delta", "1e-11"])
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "epsilon = " in captured.out
    # δ = 1e-35 is below what even the tilted composition resolves: one line says so
    main([*argv, "--steps", "2000", "--delta", "1e-35"])
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("gaussdp: warning: accuracy 5e-05 not reached at delta=1e-35")
    assert "floor" in line
