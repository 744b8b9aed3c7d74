"""``gaussdp curve`` and the figures of :mod:`gaussdp.plot`."""

import json
import math

import click
import matplotlib
import numpy as np
import pytest
from click.testing import CliRunner

from gaussdp import DPSGD, InvalidParameterError, account, curves, gdp
from gaussdp.cli import cli, main
from gaussdp.cli.curve import curve as curve_command
from gaussdp.plot import plot_profile, plot_tradeoff

matplotlib.use("Agg")


def run(*args):
    return CliRunner().invoke(cli, ["curve", *args])


def test_gaussian_curve_text():
    result = run("--mu", "1", "--fpr", "1e-3")
    assert result.exit_code == 0, result.output
    assert "G_mu with mu = 1" in result.output
    assert f"{gdp.beta(1.0, 0.1):16.10g}" in result.output
    assert f"advantage = {gdp.advantage(1.0):.6g}" in result.output
    tpr = 1 - gdp.beta(1.0, 1e-3)
    assert f"TPR at FPR 0.001 = {tpr:.6g}" in result.output


def test_epsilon_delta_curve_json():
    result = run("--epsilon", "1", "--delta", "1e-5", "--format", "json", "--points", "5")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    alphas = [p["alpha"] for p in payload["points"]]
    assert alphas == [0.0, 0.25, 0.5, 0.75, 1.0]
    for point in payload["points"]:
        a = point["alpha"]
        expected = max(0.0, 1 - 1e-5 - math.e * a, (1 - 1e-5 - a) / math.e)
        assert point["beta"] == pytest.approx(expected, abs=1e-15)
        assert point["tpr"] == pytest.approx(1 - expected, abs=1e-15)
    assert payload["advantage"] == pytest.approx(1e-5 + (1 - 1e-5) * math.tanh(0.5), rel=1e-12)


def test_csv_and_log_spacing():
    result = run("--mu", "2", "--format", "csv", "--points", "7", "--log")
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0] == "alpha,beta,tpr" and len(lines) == 8
    alphas = [float(line.split(",")[0]) for line in lines[1:]]
    assert alphas[0] == pytest.approx(1e-8) and alphas[-1] == 1.0
    betas = np.array([float(line.split(",")[1]) for line in lines[1:]])
    assert betas == pytest.approx(gdp.beta(2.0, np.array(alphas)), rel=1e-15)


@pytest.mark.parametrize("log_flag", [[], ["--log"]])
def test_plot_writes_a_figure(tmp_path, log_flag):
    path = tmp_path / "curve.png"
    result = run("--mu", "1", "--plot", str(path), *log_flag)
    assert result.exit_code == 0, result.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {path}" in result.output


def test_curve_is_a_group_with_the_accountant_subcommands():
    assert isinstance(curve_command, click.Group)
    assert curve_command.invoke_without_command
    assert {"dpsgd", "account"} <= set(curve_command.commands)


DPSGD_ARGS = ["--noise-multiplier", "1", "--sampling-probability", "0.01", "--steps", "100"]


def _json_curve(*args):
    result = run(*args, "--format", "json", "--points", "21", "--fpr", "1e-3")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    alphas = np.array([p["alpha"] for p in payload["points"]])
    betas = np.array([p["beta"] for p in payload["points"]])
    return payload, alphas, betas


def test_dpsgd_curve_is_the_accountants_and_bounds_are_ordered():
    pessimistic, alphas, low = _json_curve("dpsgd", *DPSGD_ARGS)
    optimistic, _, high = _json_curve("dpsgd", *DPSGD_ARGS, "--bound", "optimistic")
    assert pessimistic["bound"] == "pessimistic" and optimistic["bound"] == "optimistic"
    result = account(DPSGD(1.0, 0.01, 100))
    assert low == pytest.approx(result.tradeoff().beta(alphas), abs=1e-15)
    assert high == pytest.approx(result.tradeoff("optimistic").beta(alphas), abs=1e-15)
    # pessimistic below optimistic, and both within the discretisation of each other
    assert np.all(low <= high + 1e-15) and np.max(high - low) < 1e-3
    tpr = pessimistic["tpr_at_fpr"][0]
    assert tpr["fpr"] == 1e-3 and tpr["tpr"] == pytest.approx(1 - result.tradeoff().beta(1e-3))


def test_pipeline_curve_of_gaussians_is_g_mu(tmp_path):
    # Gaussians sigma = 5 (x3) and 8 (x5) compose to mu = sqrt(3/25 + 5/64) (Corollary 2).
    pipeline = tmp_path / "gaussians.toml"
    pipeline.write_text(
        '[[mechanism]]\ntype = "gaussian"\nsigma = 5.0\nrepeat = 3\n'
        '[[mechanism]]\ntype = "gaussian"\nsigma = 8.0\nrepeat = 5\n'
    )
    _, alphas, betas = _json_curve("account", str(pipeline))
    mu = math.sqrt(3 / 25 + 5 / 64)
    assert betas == pytest.approx(gdp.beta(mu, alphas), rel=1e-12, abs=1e-15)


def test_accountant_curve_text_says_which_bound_and_plots(tmp_path):
    figure = tmp_path / "curve.png"
    result = run(
        "dpsgd",
        *DPSGD_ARGS,
        "--log",
        "--plot",
        str(figure),
        "--fpr",
        "1e-3",
        "--bound",
        "optimistic",
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("optimistic trade-off curve of DP-SGD")
    assert "not a guarantee" in result.output
    assert "some membership-inference attack does at least this well" in result.output
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = run("account", "examples/autodp_example.toml").output
    assert "certified lower bound on the true curve" in text
    assert "no membership-inference attack does better" not in text  # no --fpr given


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["curve"], "exactly one of --mu and --epsilon"),
        (["curve", "--mu", "1", "--epsilon", "1"], "exactly one of --mu and --epsilon"),
        (["curve", "--mu", "1", "--delta", "0.1"], "--delta goes with --epsilon"),
        (["curve", "--mu", "-1"], "mu must be in [0, inf], got -1.0"),
        (["curve", "--epsilon", "1", "--delta", "2"], "delta must be in [0, 1], got 2.0"),
        (["curve", "--mu", "1", "--points", "1"], "points must be an integer >= 2"),
        (["curve", "--mu", "1", "--fpr", "1.5"], "fpr must be in [0, 1], got 1.5"),
        (["curve", "--mu", "1", "--format", "xml"], "xml"),
        (
            [
                "curve",
                "dpsgd",
                "--noise-multiplier",
                "-1",
                "--sampling-probability",
                "0.1",
                "--steps",
                "10",
            ],
            "noise_multiplier must be in (0, inf], got -1.0",
        ),
        (
            [
                "curve",
                "dpsgd",
                "--noise-multiplier",
                "1",
                "--sampling-probability",
                "0.1",
                "--steps",
                "10",
                "--bound",
                "middle",
            ],
            "middle",
        ),
        (["curve", "account", "no/such/pipeline.toml"], "no/such/pipeline.toml"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gaussdp: error:")
    assert message in lines[0]


# ---------------------------------------------------------------------------
# gaussdp.plot
# ---------------------------------------------------------------------------


def test_plot_tradeoff_returns_axes_with_the_points():
    f = curves.gaussian(1.0)
    ax = plot_tradeoff([f, curves.laplace(1.0)], labels=["G_1", "Laplace"], points=50)
    line = ax.get_lines()[0]
    alphas, betas = f.points(50)
    assert np.allclose(line.get_xdata(), alphas) and np.allclose(line.get_ydata(), betas)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["G_1", "Laplace"]
    ax_log = f.plot(log=True, label="G_1")
    assert ax_log.get_xscale() == "log" and ax_log.get_yscale() == "log"
    tpr_line = ax_log.get_lines()[0]
    assert np.allclose(tpr_line.get_ydata(), f.tpr(tpr_line.get_xdata()), rtol=1e-12)
    import matplotlib.pyplot as plt

    plt.close("all")


def test_plot_into_given_axes_and_profiles():
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    assert curves.epsilon_delta(1.0).plot(ax=ax) is ax
    ax2 = plot_profile([curves.gaussian(1.0), curves.gaussian(2.0).profile()], epsilon_max=5)
    assert len(ax2.get_lines()) == 2 and ax2.get_yscale() == "log"
    with pytest.raises(InvalidParameterError, match="one entry per curve"):
        plot_tradeoff([curves.gaussian(1.0)], labels=["a", "b"])
    with pytest.raises(InvalidParameterError, match="at least one"):
        plot_tradeoff([])
    plt.close("all")
