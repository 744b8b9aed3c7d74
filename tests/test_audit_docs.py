"""The examples of docs/audit.md run as written (the page's numbers are the library's)."""

import doctest
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "audit.md"


def test_audit_page_examples():
    result = doctest.testfile(
        str(PAGE), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted > 20
    assert result.failed == 0
