"""DP-SGD with a named sampler: the description, its file form, the sweep axis, the CLI.

Structural where the accountant of a sampler lives elsewhere (balls-in-bins and
truncated Poisson: ``expand()`` must give their descriptions); the Poisson form is
checked against literal text written before samplers existed.
"""

import pickle

import pytest
from click.testing import CliRunner

from gaussdp import (
    DPSGD,
    Gaussian,
    InvalidParameterError,
    PoissonSubsampled,
    RandomAllocation,
    Repeated,
    Shuffled,
    TruncatedPoisson,
)
from gaussdp import mechanisms as m
from gaussdp.cli import cli, main
from gaussdp.sweeps import read_grid


def test_poisson_runs_are_bit_for_bit_what_they_were():
    run = DPSGD(1.0, 0.01, 1000)
    assert str(run) == "DP-SGD: σ=1, q=0.01, 1000 steps"
    assert repr(run) == "DPSGD(noise_multiplier=1.0, sampling_probability=0.01, steps=1000)"
    assert run.to_dict() == {
        "type": "dpsgd",
        "noise_multiplier": 1.0,
        "sampling_probability": 0.01,
        "steps": 1000,
    }
    assert m.dumps(run) == (
        'neighbouring = "add_remove"\n\n[[mechanism]]\ntype = "dpsgd"\n'
        "noise_multiplier = 1.0\nsampling_probability = 0.01\nsteps = 1000\n"
    )
    assert run.expand() == Repeated(PoissonSubsampled(Gaussian(1.0), 0.01), 1000)
    # the pickle written by gaussdp before samplers existed (protocol 4)
    before = (
        b"\x80\x04\x95o\x00\x00\x00\x00\x00\x00\x00\x8c\x12gaussdp.mechanisms\x94\x8c\x05"
        b"DPSGD\x94\x93\x94)\x81\x94}\x94(\x8c\x10noise_multiplier\x94G?\xf0\x00\x00\x00"
        b"\x00\x00\x00\x8c\x14sampling_probability\x94G?\x84z\xe1G\xae\x14{\x8c\x05steps"
        b"\x94M\xe8\x03ub."
    )
    assert pickle.dumps(run, protocol=4) == before
    assert pickle.loads(before) == run
    # naming Poisson changes nothing; a named Poisson takes q from an epoch's batches
    assert DPSGD(1.0, 0.01, 1000, sampler="poisson") == run
    assert DPSGD(1.0, steps=1000, sampler="poisson", steps_per_epoch=100) == run
    assert DPSGD(1.0, steps=1000, sampler="poisson", batch_size=100, dataset_size=10000) == run


@pytest.mark.parametrize(
    ("options", "expanded"),
    [
        (
            {"sampler": "balls-in-bins", "steps_per_epoch": 100},
            Repeated(RandomAllocation(Gaussian(1.0), 100), 10),
        ),
        (
            {"sampler": "shuffling", "batch_size": 100, "dataset_size": 10000},
            Repeated(Shuffled(Gaussian(1.0), 100), 10),
        ),
        (
            {
                "sampler": "truncated-poisson",
                "sampling_probability": 0.01,
                "max_batch_size": 120,
                "dataset_size": 10000,
            },
            Repeated(TruncatedPoisson(Gaussian(1.0), 0.01, 120, 10000), 1000),
        ),
    ],
)
def test_expand_gives_the_samplers_description_and_files_round_trip(options, expanded):
    run = DPSGD(1.0, steps=1000, **options)
    assert run.expand() == expanded
    assert m.loads(m.dumps(run)).mechanism == run
    assert m.from_dict(run.to_dict()) == run
    assert run.to_dict()["sampler"] == options["sampler"]
    assert options["sampler"].split("-")[0] in str(run)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sampler": "balls-in-bin", "steps_per_epoch": 100}, "did you mean 'balls-in-bins'"),
        ({"sampler": "shuffling", "steps_per_epoch": 300}, "whole number of epochs"),
        ({"batch_size": 100, "dataset_size": 10000}, "needs a sampler: name one"),
        ({"steps_per_epoch": 100}, "needs a sampler"),
        ({"sampler": "truncated-poisson", "sampling_probability": 0.01}, "needs max_batch_size"),
        (
            {"sampler": "truncated-poisson", "sampling_probability": 0.01, "max_batch_size": 5},
            "needs dataset_size",
        ),
        ({"sampler": "shuffling"}, "needs steps_per_epoch"),
        (
            {"sampler": "shuffling", "steps_per_epoch": 100, "sampling_probability": 0.01},
            "does not apply",
        ),
        ({"sampler": "shuffling", "batch_size": 300, "dataset_size": 1000}, "must divide"),
        ({}, "sampling_probability is missing"),
    ],
)
def test_bad_input_is_one_line(options, message):
    with pytest.raises(InvalidParameterError, match=message) as error:
        DPSGD(1.0, steps=1000, **options)
    assert "\n" not in str(error.value)


def test_the_sampler_is_a_sweep_axis(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(
        '[sweep]\ndeltas = [1e-5]\n[[mechanism]]\ntype = "dpsgd"\nnoise_multiplier = 1.0\n'
        'steps = 20\nsteps_per_epoch = 10\nsampler = ["poisson", "balls-in-bins", "shuffling"]\n'
    )
    grid = read_grid(str(path))
    assert grid.size == 3
    assert grid.parameter_columns == ["sampler"]
    assert [grid.parameters(i)["sampler"] for i in range(3)] == [
        "poisson",
        "balls-in-bins",
        "shuffling",
    ]


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_cli_report_dpsgd_with_a_sampler():
    result = run(
        "report", "dpsgd", "--noise-multiplier", "1", "--sampler", "shuffling",
        "--epochs", "2", "--steps-per-epoch", "10", "--delta", "1e-5",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "DP-SGD: σ=1, shuffling, 10 steps per epoch, 2 epochs" in result.output
    assert "caveat: shuffling: no tight upper bound is known" in result.output
    assert "exceeds" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sampler", "shufling", "--epochs", "2", "--steps-per-epoch", "10"], "did you mean"),
        (["--epochs", "2", "--steps-per-epoch", "10"], "needs a sampler"),
        (["--sampler", "shuffling", "--epochs", "2"], "--epochs needs --steps-per-epoch"),
        (["--sampler", "shuffling", "--steps", "25", "--steps-per-epoch", "10"], "whole number"),
    ],
)
def test_cli_bad_samplers(args, message, capsys):
    for command in (["report", "dpsgd"], ["dpsgd"]):
        with pytest.raises(SystemExit) as exit_info:
            main([*command, "--noise-multiplier", "1", *args])
        assert exit_info.value.code == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("gaussdp: error:")
        assert message in lines[0]
