"""The documentation site: it builds strictly, works offline, documents every public name,
and every guide's examples run.

``mkdocs build --strict`` fails on a broken link or anchor, a cross-reference that
resolves to nothing (also a Sphinx role in a docstring, docs/griffe_roles.py), a public
name without a docstring (docs/hooks.py) and any docstring warning of mkdocstrings.
"""

from __future__ import annotations

import doctest
import fcntl
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import types
from html.parser import HTMLParser
from pathlib import Path

import click
import pytest

import gaussdp
from gaussdp.cli import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# docs/api/<page>.md renders ``::: gaussdp.<page>``.
PUBLIC_MODULES = (
    "gdp",
    "mechanisms",
    "matrix",
    "accountant",
    "curves",
    "clt",
    "gdpt",
    "report",
    "calibrate",
    "interop",
    "rdp",
    "plot",
    "sweeps",
)

# Pages whose examples another test already runs (the file must name the page).
RUN_ELSEWHERE = {
    "accountant.md": "test_docs.py",
    "report.md": "test_report_docs.py",
    "curves.md": "test_curves_docs.py",
    "clt.md": "test_curves_docs.py",
    "calibration.md": "test_calibrate_docs.py",
    "interop.md": "test_calibrate_docs.py",
    "gdpt.md": "test_gdpt_docs.py",
    "sweeps.md": "test_sweep_docs.py",
}
# Pages whose examples are not run, each with the reason. (None today.)
NOT_RUN: dict[str, str] = {}


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """Build the site once, strictly, importing gaussdp from this tree.

    Once per test session, not per worker: the test workers (pytest-xdist) share the
    session's temporary root, and the first to take its lock builds there (two workers
    each built the site, 11 s of a core).
    """
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's root, shared by its workers
    site_dir = root / "docs-site"
    outcome = root / "docs-site-build.txt"
    with open(root / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not outcome.exists():
            outcome.write_text(_build_site(site_dir), encoding="utf-8")
    output = outcome.read_text(encoding="utf-8")
    assert output.startswith("built\n"), f"mkdocs build --strict failed:\n{output}"
    warnings = [line for line in output.splitlines() if "WARNING" in line]
    assert not warnings, "\n".join(warnings)
    return site_dir


def _build_site(site_dir: Path) -> str:
    """``mkdocs build --strict`` into ``site_dir``: "built" or "failed", then its output."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    env["NO_MKDOCS_2_WARNING"] = "1"  # mkdocs-material's notice about MkDocs 2.0
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    status = "built" if result.returncode == 0 else f"failed ({result.returncode})"
    return f"{status}\n{result.stdout}{result.stderr}"


def test_site_builds_strictly(site):
    assert (site / "index.html").is_file()
    assert (site / "api" / "gaussdp.html").is_file()
    # generated at build time: the HTML report, a command's output, the ε → μ table
    assert "<svg" in (site / "guides" / "report-cifar10.html").read_text(encoding="utf-8")
    assert "mu = 1.5" in (site / "guides" / "getting-started.html").read_text(encoding="utf-8")
    reporting = (site / "examples" / "reporting.html").read_text(encoding="utf-8")
    assert "<th" in reporting and "mu(delta=1e-05)" in reporting


class _Loads(HTMLParser):
    """The URLs a browser fetches by itself when it opens a page."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in {"script", "img", "iframe", "audio", "video", "source", "embed"}:
            self.urls.append(attributes.get("src") or "")
        elif tag == "link" and attributes.get("rel") != "canonical":
            self.urls.append(attributes.get("href") or "")
        elif tag == "object":
            self.urls.append(attributes.get("data") or "")


EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)
CSS_EXTERNAL = re.compile(r"(?:@import\s+|url\()\s*['\"]?(?:https?:)?//", re.IGNORECASE)


def test_site_loads_nothing_from_the_network(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20
    for page in pages:
        parser = _Loads()
        parser.feed(page.read_text(encoding="utf-8"))
        external = [url for url in parser.urls if EXTERNAL.match(url)]
        assert not external, f"{page.relative_to(site)} loads {external}"
    for stylesheet in site.rglob("*.css"):
        text = stylesheet.read_text(encoding="utf-8")
        assert not CSS_EXTERNAL.search(text), f"{stylesheet.relative_to(site)} imports a URL"


def _ids(page: Path) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8")))


def _canonical(name: str, obj: object) -> str:
    return f"{obj.__module__}.{getattr(obj, '__qualname__', name)}"


def test_every_public_name_is_in_the_api_reference(site):
    api = site / "api"
    ids = {module: _ids(api / f"{module}.html") for module in PUBLIC_MODULES}
    every_id = set().union(*ids.values(), _ids(api / "gaussdp.html"))
    missing = []
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(f"gaussdp.{module_name}")
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType):
                continue
            wanted = {f"gaussdp.{module_name}.{name}"}
            if hasattr(obj, "__module__") and hasattr(obj, "__qualname__"):
                wanted.add(_canonical(name, obj))
            if not wanted & ids[module_name]:
                missing.append(f"gaussdp.{module_name}.{name}")
    gaussdp_page = (api / "gaussdp.html").read_text(encoding="utf-8")
    for name in gaussdp.__all__:
        obj = getattr(gaussdp, name)
        assert f"<code>{name}</code>" in gaussdp_page, f"gaussdp.{name} not on the gaussdp page"
        if isinstance(obj, types.ModuleType):
            assert (api / f"{name}.html").is_file(), name
        elif name != "__version__":
            homes = {f"gaussdp.{m}.{name}" for m in PUBLIC_MODULES} | {_canonical(name, obj)}
            if not homes & every_id:
                missing.append(f"gaussdp.{name}")
    assert not missing, f"not rendered in the API reference: {missing}"


def _commands(group: click.Command, path: tuple[str, ...] = ("gaussdp",)):
    yield path
    if isinstance(group, click.Group):
        for name, command in group.commands.items():
            yield from _commands(command, (*path, name))


def test_every_command_is_in_the_cli_page(site):
    ids = _ids(site / "api" / "cli.html")
    missing = ["-".join(path) for path in _commands(cli) if "-".join(path) not in ids]
    assert not missing, f"commands missing from the command-line page: {missing}"


def _guide_pages() -> list[str]:
    return sorted(
        str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md") if ">>>" in path.read_text()
    )


def test_every_python_block_is_a_doctest():
    """A ```python block runs only if written as a doctest: every one must be."""
    for path in sorted(DOCS.rglob("*.md")):
        for block in re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
            assert block.lstrip().startswith(">>>"), f"{path.relative_to(DOCS)}: {block[:60]!r}"


def test_pages_run_elsewhere_are_run_there():
    for page, test_file in RUN_ELSEWHERE.items():
        assert (DOCS / page).is_file(), page
        assert page in (ROOT / "tests" / test_file).read_text(encoding="utf-8"), (page, test_file)


@pytest.mark.parametrize(
    "page", [p for p in _guide_pages() if p not in RUN_ELSEWHERE and p not in NOT_RUN]
)
def test_guide_examples(page, monkeypatch):
    monkeypatch.chdir(ROOT)  # examples name files such as examples/census_topdown.toml
    result = doctest.testfile(
        str(DOCS / page), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted > 0
    assert result.failed == 0


# The build's own checks, without building: each names what is wrong.


def _docs_module(name: str):
    spec = importlib.util.spec_from_file_location(f"_docs_{name}", DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_public_name_has_a_docstring():
    assert _docs_module("hooks").undocumented() == []


def test_a_public_name_without_a_docstring_is_named(tmp_path):
    package = tmp_path / "fakepkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        '"""A package."""\n__all__ = ["Thing", "documented", "bare"]\n'
        'def documented():\n    """Has one."""\n'
        "def bare():\n    pass\n"
        'class Thing:\n    """A class."""\n    def method(self):\n        pass\n',
        encoding="utf-8",
    )
    found = _docs_module("hooks").undocumented("fakepkg", (), tmp_path)
    assert found == ["fakepkg.Thing.method", "fakepkg.bare"]


def test_docstring_roles_become_cross_references_or_fail_by_name(caplog):
    import griffe

    roles = _docs_module("griffe_roles")
    package = griffe.load("gaussdp", search_paths=[str(ROOT / "src")], resolve_aliases=True)
    owner = package["rdp"]
    linked = roles.rewrite(owner, "See :func:`account_rdp` and :class:`~gaussdp.Accounting`.")
    assert 'identifier="gaussdp.rdp.account_rdp"' in linked
    assert (
        'identifier="gaussdp.accountant.result.Accounting"><code>Accounting</code>'
        in linked.replace(" optional", "")
    )
    with caplog.at_level("WARNING"):
        roles.rewrite(owner, "See :func:`account_rdpp`.")
    assert "gaussdp.rdp" in caplog.text
    assert "account_rdpp" in caplog.text
