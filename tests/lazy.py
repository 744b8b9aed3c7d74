"""A test extra imported on first use, so that collecting the suite does not import it.

Collecting imports every test module on every worker; torch and Opacus alone take
about two seconds there. Tests that use them still skip (``pytest.importorskip``)
where they are missing.
"""

import pytest


class LazyModule:
    """``pytest.importorskip(name)`` on the first attribute asked of it."""

    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        if self._module is None:
            self._module = pytest.importorskip(self._name)
        return getattr(self._module, attribute)
