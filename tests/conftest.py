"""Shared test fixtures and high-precision references."""

import mpmath
import pytest
from hypothesis import settings

mpmath.mp.dps = 50

# Property tests draw the same examples on every run (each test's own seed), so that the
# suite passes or fails the same way wherever and however often it runs; settings a test
# module defines at import inherit this. (A random draw once found a curve that
# symmetrize() left 1.2e-9 from its own inverse; it is now a pinned example.)
settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile("deterministic")


@pytest.fixture(autouse=True)
def _high_precision():
    """Every test that uses mpmath gets at least 50 significant digits."""
    with mpmath.workdps(50):
        yield


def pytest_collection_modifyitems(items):
    """Run the tests that read the built documentation site first, in one block.

    The site is built once per session (``tests/test_docs_site.py``, about 10 s) under a
    lock that the other test worker would wait on if work stealing handed it one of
    those tests in the middle of the build (5 s of a core, idle). First in the order,
    they all start on one worker while the other runs the rest. The order within each
    group is kept, and every test passes in any order.
    """
    items.sort(key=lambda item: "site" not in getattr(item, "fixturenames", ()))
