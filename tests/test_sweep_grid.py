"""Sweep files: expansion, column names, fingerprints and validation before any work."""

import pytest

from gaussdp import DPSGD, Composition, Gaussian, InvalidParameterError, PoissonSubsampled, Repeated
from gaussdp.sweeps.grid import read_grid

CIFAR = """
name = "CIFAR-10 grid"
[sweep]
deltas = [1e-5, 1e-6]
report = true
[[mechanism]]
type = "dpsgd"
noise_multiplier = [8.0, 9.4]
sampling_probability = 0.32768
steps = [1000, 2000]
"""


def test_cartesian_product_last_list_fastest():
    grid = read_grid(CIFAR)
    assert grid.size == 4
    assert grid.name == "CIFAR-10 grid"
    assert [grid.parameters(i) for i in range(4)] == [
        {"noise_multiplier": 8.0, "steps": 1000},
        {"noise_multiplier": 8.0, "steps": 2000},
        {"noise_multiplier": 9.4, "steps": 1000},
        {"noise_multiplier": 9.4, "steps": 2000},
    ]
    assert grid.pipeline(3).mechanism == DPSGD(9.4, 0.32768, 2000)
    assert grid.columns == [
        "point", "noise_multiplier", "steps", "delta", "epsilon_lower", "epsilon_upper",
        "mu", "regret", "delta_tail", "tier", "error",
    ]  # fmt: skip


def test_every_point_is_built_from_the_description_with_its_lists_kept():
    # Points are built from a copy of the description with the swept lists left out (a
    # copy per point of lists that grow with the grid made building every point
    # quadratic); the grid keeps its lists, and each point gets its own values.
    document = {
        "sweep": {"deltas": [1e-5]},
        "mechanism": [
            {"type": "dpsgd", "noise_multiplier": [1.0, 2.0, 3.0], "sampling_probability": 0.01,
             "steps": [10, 20]},
            {"type": "gaussian", "sigma": [4.0, 5.0]},
        ],
    }  # fmt: skip
    grid = read_grid(document)
    assert grid.size == 12
    assert grid.document["mechanism"][0]["noise_multiplier"] == [1.0, 2.0, 3.0]
    assert grid.document["mechanism"][0]["steps"] == [10, 20]
    assert grid.document["mechanism"][1]["sigma"] == [4.0, 5.0]
    built = [grid.pipeline(point).mechanism for point in range(grid.size)]
    expected = [
        Composition([DPSGD(sigma, 0.01, steps), Gaussian(other)])
        for sigma in (1.0, 2.0, 3.0)
        for steps in (10, 20)
        for other in (4.0, 5.0)
    ]
    assert built == expected
    assert grid.document["mechanism"][1]["sigma"] == [4.0, 5.0]


def test_path_text_and_dict_give_the_same_grid(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(CIFAR)
    from_path, from_text = read_grid(path), read_grid(CIFAR)
    from_dict = read_grid(
        {
            "name": "other name",
            "sweep": {"deltas": [1e-5, 1e-6], "report": True},
            "mechanism": [
                {
                    "type": "dpsgd",
                    "noise_multiplier": [8.0, 9.4],
                    "sampling_probability": 0.32768,
                    "steps": [1000, 2000],
                }
            ],
        }
    )
    assert from_path.fingerprint == from_text.fingerprint == from_dict.fingerprint
    assert read_grid(str(path)).source == str(path)


def test_fingerprint_changes_with_values_and_outputs():
    base = read_grid(CIFAR).fingerprint
    assert read_grid(CIFAR.replace("9.4]", "9.5]")).fingerprint != base
    assert read_grid(CIFAR.replace("report = true", "report = false")).fingerprint != base
    assert read_grid(CIFAR.replace("1e-6]", "1e-7]")).fingerprint != base


def test_clashing_names_are_prefixed_by_their_place():
    grid = read_grid(
        """
        [sweep]
        epsilons = [1.0]
        [[mechanism]]
        type = "gaussian"
        sigma = [1.0, 2.0]
        [[mechanism]]
        type = "poisson_subsampled"
        sampling_probability = [0.01, 0.02, 0.03]
        mechanism = { type = "gaussian", sigma = [3.0, 4.0] }
        repeat = 100
        """
    )
    assert grid.size == 12
    assert grid.parameter_columns == [
        "mechanism[0].sigma",
        "sampling_probability",
        "mechanism[1].mechanism.sigma",
    ]
    assert grid.outputs.columns() == ["epsilon", "delta_lower", "delta_upper", "error"]
    assert grid.pipeline(11).mechanism == Composition(
        [Gaussian(2.0), Repeated(PoissonSubsampled(Gaussian(4.0), 0.03), 100)]
    )


def test_repeat_can_be_swept():
    grid = read_grid(
        '[sweep]\ndeltas = [1e-5]\n[[mechanism]]\ntype = "laplace"\nscale = 2.0\nrepeat = [1, 5]'
    )
    assert grid.parameter_columns == ["repeat"]
    assert grid.pipeline(1).mechanism.times == 5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # an invalid value in one list: named with its value, before any work
        ("noise_multiplier = [1.0, -1.0]", "noise_multiplier must be"),
        ("noise_multiplier = []", "mechanism[0].noise_multiplier: empty list"),
        ('noise_multiplier = [1.0, "x"]', "must be a list of numbers, got 'x'"),
        ("sampling_probability = [0.5, 1.5]\nnoise_multiplier = 1.0", "1.5"),
    ],
)
def test_invalid_values_are_rejected_naming_parameter_and_value(text, message):
    lines = [line for line in CIFAR.splitlines() if not line.startswith("noise_multiplier")]
    if "sampling_probability = [" in text:
        lines = [line for line in lines if not line.startswith("sampling_probability")]
    grid = "\n".join([*lines, text])
    with pytest.raises(InvalidParameterError) as error:
        read_grid(grid)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_negative_sigma_message_names_the_value():
    with pytest.raises(InvalidParameterError, match=r"noise_multiplier .*-1\.0"):
        read_grid(CIFAR.replace("[8.0, 9.4]", "[8.0, -1.0]"))


@pytest.mark.parametrize(
    ("sweep_table", "message"),
    [
        ("", "no [sweep] table"),
        ("[sweep]\nreport = true", "names no outputs"),
        ("[sweep]\ndeltas = [1.5]", "delta must be in (0, 1), got 1.5"),
        ("[sweep]\nepsilons = [-1.0]", "epsilon must be in [0, inf), got -1.0"),
        ("[sweep]\ndelta = [1e-5]", "did you mean 'deltas'"),
        ("[sweep]\ndeltas = [1e-5]\nreport = 1", "sweep.report must be true or false"),
    ],
)
def test_sweep_table_errors(sweep_table, message):
    text = sweep_table + '\n[[mechanism]]\ntype = "gaussian"\nsigma = [1.0, 2.0]\n'
    with pytest.raises(InvalidParameterError) as error:
        read_grid(text)
    assert message in str(error.value)


def test_more_than_a_million_points_needs_confirmation():
    text = (
        '[sweep]\ndeltas = [1e-5]\n[[mechanism]]\ntype = "gaussian"\n'
        f"sigma = {[1.0 + i for i in range(1001)]}\n"
        '[[mechanism]]\ntype = "laplace"\n'
        f"scale = {[1.0 + i for i in range(1000)]}\n"
    )
    with pytest.raises(InvalidParameterError, match="1,001,000 points, more than 1,000,000"):
        read_grid(text)
    # Confirmed, it is validated (entry by entry: fast) and accepted.
    assert read_grid(text, maximum_points=0).size == 1_001_000


def test_an_invalid_value_in_a_large_confirmed_grid_is_found():
    text = (
        '[sweep]\ndeltas = [1e-5]\n[[mechanism]]\ntype = "gaussian"\n'
        f"sigma = {[1.0 + i for i in range(1001)]}\n"
        '[[mechanism]]\ntype = "laplace"\n'
        f"scale = {[1.0 + i for i in range(999)] + [-2.0]}\n"
    )
    with pytest.raises(InvalidParameterError, match=r"mechanism\[1\]\.scale .*-2\.0"):
        read_grid(text, maximum_points=0)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(InvalidParameterError, match="file not found"):
        read_grid(tmp_path / "nope.toml")
