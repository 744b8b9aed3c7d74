"""The house's rules, read from the source (nothing of gaussdp is imported or run here).

Imports flow one way: no module of gaussdp imports, directly or through others
(counting imports inside functions), a module that imports it back; and no
module uses another package's private names. The figure of
``docs/architecture.md`` is drawn from the same reading by
``docs/architecture_graph.py`` and must match the code.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load_graph_script():
    spec = importlib.util.spec_from_file_location(
        "architecture_graph", ROOT / "docs" / "architecture_graph.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("architecture_graph", module)
    spec.loader.exec_module(module)
    return module


graph = _load_graph_script()

#: Circles that are known and not yet broken, as their sets of modules. Empty when the
#: house is in order; a circle that is not listed here (or grows) fails the test.
KNOWN_CIRCLES: list[frozenset[str]] = []

#: Uses of another package's private names that are known and not yet replaced. Empty
#: when the house is in order; a use that is not listed here fails the test.
KNOWN_PRIVATE_USES: set[str] = set()


@pytest.fixture(scope="module")
def reading():
    return graph.read()


def _describe(circle, arrows) -> str:
    return " -> ".join(graph.cycle_in(circle, arrows))


def test_no_import_circles(reading):
    arrows, _ = reading
    new = [c for c in graph.circles(arrows) if frozenset(c) not in KNOWN_CIRCLES]
    assert not new, "import circles: " + "; ".join(_describe(c, arrows) for c in new)


def test_no_module_uses_another_packages_private_names(reading):
    _, private = reading
    assert sorted(set(private) - KNOWN_PRIVATE_USES) == []


def test_the_known_exceptions_still_exist(reading):
    """An exception that is fixed leaves the lists, so that it cannot come back unseen."""
    arrows, private = reading
    assert sorted(KNOWN_PRIVATE_USES - set(private)) == []
    found = {frozenset(c) for c in graph.circles(arrows)}
    assert [sorted(c) for c in KNOWN_CIRCLES if c not in found] == []


def test_the_figure_is_drawn_from_the_code(reading):
    arrows, _ = reading
    committed = graph.FIGURE.read_text(encoding="utf-8")
    assert committed == graph.svg(arrows), (
        "docs/figures/architecture.svg is out of date: run python docs/architecture_graph.py"
    )


def test_every_module_stands_in_a_room(reading):
    """A new package must be given its place in the figure's ROOMS (room_of names it)."""
    arrows, _ = reading
    rooms = {graph.room_of(name) for name in arrows} - {None}
    assert rooms <= {label for label, _ in graph.ROOMS}


def _write(tree: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_a_circle_through_an_import_inside_a_function_is_found_and_named(tmp_path):
    _write(
        tmp_path,
        {
            "gaussdp/__init__.py": "",
            "gaussdp/low.py": "def f():\n    from gaussdp.high import g\n    return g\n",
            "gaussdp/high.py": "from gaussdp import low\n",
            "gaussdp/apart.py": "import numpy\n",
        },
    )
    arrows, _ = graph.read(tmp_path)
    found = graph.circles(arrows)
    assert found == [["gaussdp.high", "gaussdp.low"]]
    assert _describe(found[0], arrows) == "gaussdp.high -> gaussdp.low -> gaussdp.high"


def test_private_names_of_another_package_are_found(tmp_path):
    _write(
        tmp_path,
        {
            "gaussdp/__init__.py": "",
            "gaussdp/engine/__init__.py": "",
            "gaussdp/engine/_inner.py": "x = 1\n",
            "gaussdp/engine/core.py": "_hidden = 1\nfrom gaussdp.engine import _inner\n",
            "gaussdp/user.py": (
                "from gaussdp.engine import core\n"
                "from gaussdp.engine.core import _hidden\n"
                "from gaussdp.engine._inner import x\n"
                "y = core._hidden\n"
            ),
        },
    )
    _, private = graph.read(tmp_path)
    assert private == [
        "gaussdp.user imports _hidden from gaussdp.engine.core",
        "gaussdp.user imports from gaussdp.engine._inner, a private module",
        "gaussdp.user uses gaussdp.engine.core._hidden",
    ]


def test_a_description_names_its_own_type_to_be_registered():
    """A subclass that inherits a type name does not take the registered class's place."""
    from gaussdp import mechanisms as m
    from gaussdp.mechanisms.base import registered_types

    class LoudGaussian(m.Gaussian):
        pass

    assert registered_types()["gaussian"] is m.Gaussian
    assert type(m.from_dict({"type": "gaussian", "sigma": 2.0})) is m.Gaussian


def test_importing_gaussdp_leaves_out_what_few_calls_need():
    """scipy.linalg (one dense matrix strategy's error, 40-60 ms), scipy.signal (used by
    nothing since the Q-tails are summed in chunks, 0.66 s) and scipy.fft (random
    allocation's transforms, 40 ms) are not imported by ``import gaussdp``: every
    command, sweep worker and test worker starts with it."""
    code = (
        "import sys, gaussdp\n"
        "print(sorted(m for m in ('scipy.linalg', 'scipy.signal', 'scipy.fft') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
