"""The examples of docs/sweeps.md run as written (from the repository's root)."""

import doctest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_sweeps_doc_examples(monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples read examples/cifar10_grid.toml
    result = doctest.testfile(
        str(ROOT / "docs" / "sweeps.md"), module_relative=False, optionflags=doctest.ELLIPSIS
    )
    assert result.attempted > 0
    assert result.failed == 0


def test_example_grid_file_is_valid():
    from gaussdp.sweeps import read_grid

    grid = read_grid(ROOT / "examples" / "cifar10_grid.toml")
    assert grid.size == 4 and grid.outputs.report
