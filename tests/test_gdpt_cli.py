"""``gaussdp gdpt``: built-in examples, module:function profiles, formats, plots, errors."""

import json
import math
import sys

import pytest
from click.testing import CliRunner

from gaussdp import gdp, gdpt
from gaussdp.cli import cli, main


def run(*args):
    return CliRunner().invoke(cli, ["gdpt", *args])


def test_text_output_for_each_example():
    expected_tail = {
        "laplace": "tail limit 0 (exact)",
        "noisy-sgd": "tail limit 0.707107",
        "encoder": "tail limit inf",
    }
    for name, tail in expected_tail.items():
        result = run(name, "--epsilon-max", "10", "--tolerance", "1e-2")
        assert result.exit_code == 0, result.output
        assert f"profile: {name}" in result.output
        assert "certified head" in result.output
        assert "for eps <= 10 only" in result.output
        assert tail in result.output


def test_json_output_matches_the_library():
    result = run("noisy-sgd", "--epsilon-max", "10", "--tolerance", "1e-3", "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    certificate = gdpt.certify(gdpt.example("noisy-sgd"), 10.0, 1e-3)
    assert payload["mu_upper"] == certificate.mu_upper
    assert payload["mu_lower"] == certificate.mu_lower
    assert payload["argmax_epsilon"] == certificate.argmax_epsilon
    assert payload["tail"]["limit"] == pytest.approx(2**-0.5, rel=1e-8)
    assert payload["tail"]["kind"] == "numerical estimate, not a bound"
    assert payload["tolerance_met"] is True


def test_json_writes_infinity_as_a_string():
    payload = json.loads(run("encoder", "--epsilon-max", "5", "--format", "json").output)
    assert payload["tail"]["limit"] == "inf"
    assert payload["tail"]["verdict"] == "not-gdp"


def test_module_function_profile(tmp_path, monkeypatch):
    (tmp_path / "my_profiles.py").write_text(
        "import numpy as np\n"
        "from gaussdp import gdp\n"
        "def profile(epsilon):\n"
        "    return gdp.delta(0.8, epsilon)\n"
        "pair = (profile, lambda e: gdp.delta(0.81, e))\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "my_profiles", raising=False)
    payload = json.loads(
        run("my_profiles:profile", "--epsilon-max", "5", "--format", "json").output
    )
    assert payload["mu_lower"] <= 0.8 <= payload["mu_upper"]
    assert payload["description"] == "user profile (module:function)"
    payload = json.loads(run("my_profiles:pair", "--epsilon-max", "5", "--format", "json").output)
    assert payload["from_bounds"] is True
    assert payload["mu_upper"] >= 0.81


def test_no_tail_certifies_a_profile_that_overflows_far_out(tmp_path, monkeypatch):
    (tmp_path / "overflowing.py").write_text(
        "import math\n"
        "def laplace(epsilon):\n"
        "    return max(0.0, 1.0 - math.exp(epsilon / 2.0 - 1.0))\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "overflowing", raising=False)
    failed = run("overflowing:laplace", "--epsilon-max", "10")
    assert failed.exit_code != 0 and "--no-tail" in str(failed.exception)
    result = run("overflowing:laplace", "--epsilon-max", "10", "--no-tail", "--format", "json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    exact = gdp.mu(0.0, 1.0 - math.exp(-1.0))
    assert payload["mu_lower"] <= exact <= payload["mu_upper"]
    assert payload["tail"] is None


def test_plot_is_written(tmp_path):
    path = tmp_path / "gdpt.png"
    result = run("laplace", "--epsilon-max", "4", "--tolerance", "1e-2", "--plot", str(path))
    assert result.exit_code == 0, result.output
    assert path.stat().st_size > 1000
    assert f"plot written to {path}" in result.output


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["gdpt", "gaussian"], "PROFILE must be one of encoder, laplace, noisy-sgd"),
        (["gdpt", "no_such_module_xyz:f"], "cannot import module 'no_such_module_xyz'"),
        (["gdpt", "math:no_such_function"], "module 'math' has no attribute"),
        (["gdpt", "os;rm:f"], "PROFILE must look like package.module:function"),
        (["gdpt", "math:pi"], "profile must be a callable"),
        (["gdpt", "laplace", "--tolerance", "0"], "tolerance must be in (0, inf), got 0.0"),
        (["gdpt", "laplace", "--epsilon-max", "-1"], "epsilon_max must be in"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("gaussdp: error: ")
    assert message in lines[0]


def test_failing_user_profile_is_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken_profile.py").write_text(
        "def profile(epsilon):\n    raise RuntimeError('boom')\n"
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["gdpt", "broken_profile:profile"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "RuntimeError: boom" in err[0]


def test_plot_without_matplotlib_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    with pytest.raises(SystemExit) as exit_info:
        main(["gdpt", "laplace", "--epsilon-max", "2", "--plot", str(tmp_path / "x.png")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs matplotlib" in err[0]
