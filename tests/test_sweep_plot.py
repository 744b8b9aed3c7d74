"""The sweep's picture: ε (or μ) against steps, one line per σ."""

import pytest

from gaussdp import InvalidParameterError
from gaussdp.sweeps import plot_steps, steps_curves


def _rows():
    rows = []
    point = 0
    for sigma in (1.0, 2.0):
        for steps in (300, 100, 200):
            for delta in (1e-5, 1e-6):
                rows.append({
                    "point": point, "noise_multiplier": sigma, "steps": steps, "delta": delta,
                    "epsilon_lower": steps / sigma - 0.5, "epsilon_upper": steps / sigma,
                    "mu": steps / sigma / 100, "error": None,
                })  # fmt: skip
            point += 1
    rows.append({**rows[0], "point": 99, "steps": 400, "epsilon_upper": None, "error": "boom"})
    return rows


def test_curves_per_sigma_sorted_by_steps():
    curves = steps_curves(_rows())
    assert list(curves) == [1.0, 2.0]
    assert curves[2.0] == {
        "steps": [100, 200, 300],
        "upper": [50.0, 100.0, 150.0],
        "lower": [49.5, 99.5, 149.5],
    }
    assert steps_curves(_rows(), delta=1e-6)[1.0]["steps"] == [100, 200, 300]
    mu = steps_curves(_rows(), quantity="mu")
    assert mu[1.0]["upper"] == [1.0, 2.0, 3.0] and mu[1.0]["lower"] == [None] * 3


def test_bad_requests():
    with pytest.raises(InvalidParameterError, match="quantity"):
        steps_curves(_rows(), quantity="advantage")
    with pytest.raises(InvalidParameterError, match="delta must be one of"):
        steps_curves(_rows(), delta=1e-3)
    rows = [{**row, "mu": None} for row in _rows()]
    with pytest.raises(InvalidParameterError, match="report = true"):
        steps_curves(rows, quantity="mu")


def test_plot_returns_the_axes():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots()
    assert plot_steps(_rows(), ax=ax) is ax
    assert len(ax.get_lines()) == 2
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["σ = 1", "σ = 2"]
    assert ax.get_xlabel() == "steps"
    plt.close(figure)
    ax = plot_steps(_rows(), quantity="mu")
    assert ax.get_ylabel() == "μ (μ-GDP)"
    plt.close(ax.figure)


def test_progress_line_counts_rate_and_time_left():
    import io

    from gaussdp.sweeps._progress import SweepProgress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    bar = SweepProgress(10, already=4, stream=stream)
    assert bar.line().startswith("[" + "#" * 10) and "4/10 points" in bar.line()
    bar.advance(3)
    assert "7/10 points" in bar.line() and "points/s" in bar.line() and "left" in bar.line()
    bar.close()
    assert stream.getvalue().startswith("\r") and stream.getvalue().endswith("\n")
    quiet = io.StringIO()  # not a terminal: nothing is drawn
    SweepProgress(10, stream=quiet).close()
    assert quiet.getvalue() == ""
