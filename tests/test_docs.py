"""The examples in docs/ run as written."""

import doctest
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("name", ["accountant.md"])
def test_doc_examples(name):
    result = doctest.testfile(str(DOCS / name), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
