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


# Test modules that import a heavy peer: torch with Opacus (5 s), jax with jax_privacy
# (2.4 s); in other modules, the tests named after jax_privacy (test_matrix.py) too.
_TORCH_MODULES = (
    "test_audit_dpsgd.py",
    "test_interop_opacus.py",
    "test_interop_opacus_samplers.py",
)
_JAX_MODULES = ("test_audit_peers.py",)


def _start_order(item) -> int:
    fixtures = getattr(item, "fixturenames", ())
    name = item.path.name
    if "site" in fixtures:
        return 0
    if name in _TORCH_MODULES:
        return 1
    if name in _JAX_MODULES or "jax_privacy" in item.name:
        return 2
    return 3


def pytest_collection_modifyitems(items):
    """Run first, each group in one block: the documentation site's tests, then those that
    import torch, then those that import jax.

    The test workers (pytest-xdist, work stealing) start on contiguous halves of this
    order and steal from the end of each other's, so the blocks at the front stay on one
    worker: the other neither waits on the site's build lock (built once per session,
    about 10 s; it waited 5 s when work stealing handed it one of those tests) nor
    imports torch and jax as well (7 s of a core). The order within each group is kept,
    and every test passes in any order.
    """
    items.sort(key=_start_order)
