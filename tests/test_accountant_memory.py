"""Memory refusal up front, a clear message when memory runs out anyway, the progress line.

Everything here is cheap: no test allocates a large grid (refusals are checked with the composition
itself replaced by a function that fails the test if it is ever reached).
"""

import io
import subprocess
import sys
import time
import tracemalloc

import pytest

import gaussdp as g
from gaussdp import InvalidParameterError
from gaussdp import accountant as A
from gaussdp import mechanisms as m
from gaussdp.accountant import entry, grids
from gaussdp.cli import main
from gaussdp.cli._progress import Progress
from gaussdp.pld import composition as pld_compose
from gaussdp.pld.leaves import leaves as leaves_of

LONG_RUN = g.DPSGD(0.8, 0.01, 10**6)
LONG_ARGS = [
    "dpsgd",
    "--noise-multiplier",
    "0.8",
    "--sampling-probability",
    "0.01",
    "--steps",
    "1000000",
    "--delta",
    "1e-6",
]


def _never_compose(*args, **kwargs):
    raise AssertionError("the composition ran: the refusal was not up front")


def _small_machine(monkeypatch, gigabytes=1.0):
    monkeypatch.setattr(grids, "available_memory", lambda: int(gigabytes * 1e9))
    monkeypatch.setattr(pld_compose, "compose_many", _never_compose)


def test_an_accuracy_needing_too_much_memory_is_refused_up_front(monkeypatch):
    _small_machine(monkeypatch)
    start = time.perf_counter()
    with pytest.raises(InvalidParameterError, match=r"needs a grid of about [\d,]+ points"):
        g.account(LONG_RUN, accuracy=1e-9)
    with pytest.raises(InvalidParameterError, match="coarser accuracy"):
        g.account(LONG_RUN, grid_spacing=1e-7)
    assert time.perf_counter() - start < 5.0


def test_the_lower_bound_is_refused_up_front_too(monkeypatch):
    # Each side is composed on first use: the pessimistic one by epsilon(), the
    # optimistic one (two rows) by epsilon_bounds, which must be checked before composing.
    result = g.account(g.DPSGD(1.0, 0.01, 1000))
    assert result.epsilon(1e-5) > 0
    _small_machine(monkeypatch, gigabytes=0.001)  # the optimistic rows need ~2 MB
    assert result.epsilon(1e-5) > 0  # already composed: no new work
    with pytest.raises(InvalidParameterError, match="needs"):
        result.epsilon_bounds(1e-5)


def test_cli_refusal_is_one_line_and_names_a_cli_option(monkeypatch, capsys):
    _small_machine(monkeypatch)
    with pytest.raises(SystemExit) as exit_info:
        main([*LONG_ARGS, "--accuracy", "1e-9"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gaussdp: error:")
    assert "accuracy" in err[0]
    assert "grid_spacing" not in err[0]  # the CLI has no --grid-spacing option
    assert "Traceback" not in err[0]


def test_an_allocation_failure_while_composing_says_what_to_do(monkeypatch):
    def out_of_memory(*args, **kwargs):
        raise MemoryError("std::bad_alloc")

    monkeypatch.setattr(pld_compose, "compose_many", out_of_memory)
    with pytest.raises(MemoryError, match="coarser accuracy"):
        g.account(g.DPSGD(1.0, 0.01, 1000)).epsilon(1e-5)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux-specific")
def test_refusal_under_an_address_space_limit():
    code = (
        "import resource, gaussdp as g\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))\n"
        "try:\n"
        "    g.account(g.DPSGD(0.8, 0.01, 10**6), accuracy=1e-9)\n"
        "except ValueError as error:\n"
        "    print('refused:', error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused:") and "GB available" in done.stdout


def test_the_memory_estimate_bounds_the_measured_peak():
    """The per-point constant must not be below what the composition really allocates."""
    mechanism = g.DPSGD(0.8, 0.01, 10**5)  # ~1.5 million points, about a second
    resolved, relation = m.resolve(mechanism, None)
    leaves = entry._merge_gaussians(leaves_of(resolved, relation))
    losses = {leaf: A.dominating_losses(leaf, relation) for leaf in leaves}
    spacing = grids.choose_grid_spacing(losses, leaves, A.DEFAULT_ACCURACY)
    points = max(
        grids._composed_length_estimate(losses, leaves, spacing, index)
        for index in range(len(A.DIRECTIONS))
    )
    bytes_per_point = grids.BYTES_PER_POINT
    tracemalloc.start()
    try:
        g.account(mechanism)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # tracemalloc misses the FFT's internal buffers, so the real peak is higher still.
    assert peak <= bytes_per_point * points, (peak / points, bytes_per_point)


# --- the progress line on stderr ----------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_line_is_drawn_on_a_terminal_after_the_delay_and_erased():
    stream = _Terminal()
    with Progress(delay=0.05, stream=stream) as progress:
        progress("pessimistic bounds, remove direction: composing")
        time.sleep(0.4)
    text = stream.getvalue()
    assert "composing" in text and "s)" in text
    assert text.endswith("\r")  # the line is erased at the end


def test_no_progress_line_when_stderr_is_not_a_terminal():
    stream = io.StringIO()
    with Progress(delay=0.0, stream=stream) as progress:
        progress("composing")
        time.sleep(0.1)
    assert stream.getvalue() == ""


def test_quick_runs_draw_nothing():
    stream = _Terminal()
    with Progress(delay=1.0, stream=stream):
        pass
    assert stream.getvalue() == ""


def test_json_never_contains_non_standard_numbers():
    import json

    from click.testing import CliRunner

    from gaussdp.cli import cli

    out = (
        CliRunner()
        .invoke(
            cli,
            [
                "dpsgd",
                "--noise-multiplier",
                "inf",
                "--sampling-probability",
                "0.1",
                "--steps",
                "3",
                "--format",
                "json",
            ],
        )
        .output
    )

    def refuse(constant):
        raise ValueError(f"non-standard JSON constant {constant}")

    json.loads(out, parse_constant=refuse)


def test_a_bare_out_of_memory_error_in_the_cli_is_one_line_with_a_hint(monkeypatch, capsys):
    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(pld_compose, "compose_many", out_of_memory)
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "dpsgd",
                "--noise-multiplier",
                "1",
                "--sampling-probability",
                "0.01",
                "--steps",
                "1000",
                "--delta",
                "1e-5",
            ]
        )
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gaussdp: error: out of memory: ")
    assert "coarser accuracy" in err


@pytest.mark.parametrize("sigma", [1e-3, 1e-100, 1e-300, 1e-320])
def test_a_noise_too_small_for_any_grid_is_one_clear_error(sigma):
    """σ = 1e-320 made a grid of NaN (account() failed: "cannot convert float NaN to
    integer"), 1e-300 overflowed; both, and losses wider than a grid can hold, are one
    line naming the leaf."""
    with pytest.raises(InvalidParameterError, match=r"PoissonSubsampled.*noise is far too small"):
        g.account(g.DPSGD(sigma, 0.0043, 100))


def test_a_grid_at_its_coarsest_does_not_ask_for_a_coarser_accuracy():
    # three Laplace(1e-5) steps span 6e5 nats: 2e9 points even at a spacing of 1e-4
    with pytest.raises(InvalidParameterError, match="at its coarsest spacing"):
        g.account(g.Repeated(g.Laplace(1e-5), 3)).epsilon_bounds(1e-5)
