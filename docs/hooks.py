"""MkDocs hooks for the gaussdp site: import this tree, and generate what must not go stale.

* The tree's ``src/`` goes first on ``sys.path`` (in ``on_config``), so the CLI help
  (mkdocs-click) and everything generated below describe the code being documented, not
  an installed copy.
* Every public name (``__all__`` of gaussdp and its public modules, and the public
  methods of public classes) must have a docstring: each one without is a warning that
  fails the strict build, naming it.
* ``<!-- gaussdp:public-names -->`` in a page becomes a table of ``gaussdp.__all__``, each
  name linked to its API entry with the first line of its docstring.
* ``<!-- gaussdp:cli ARGS -->`` becomes what ``gaussdp ARGS`` prints.
* ``guides/report-cifar10.html`` is the HTML report of De et al.'s CIFAR-10 run,
  computed at build time.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import re
import shlex
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

log = logging.getLogger("mkdocs.plugins.gaussdp")

PUBLIC_NAMES_MARKER = "<!-- gaussdp:public-names -->"
# The public modules: each has a page docs/api/<name>.md rendering ``::: gaussdp.<name>``.
PUBLIC_MODULES = (
    "gdp",
    "mechanisms",
    "accountant",
    "curves",
    "clt",
    "gdpt",
    "report",
    "calibrate",
    "interop",
    "rdp",
    "plot",
)
# Documented on the page by other means.
NO_DOCSTRING_NEEDED = {"gaussdp.__version__"}


def _summary(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    line = doc.strip().splitlines()[0] if doc.strip() else ""
    # Sphinx roles as code: :class:`~gaussdp.Accounting` -> `Accounting`
    return re.sub(r":\w+:`~?([^`]+)`", lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", line)


def _identifier(name: str, obj: object) -> str:
    """The autorefs identifier of a public name (its canonical path); unresolved, it fails."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return f"{obj.__module__}.{getattr(obj, '__qualname__', name)}"


def public_names_table() -> str:
    gaussdp = importlib.import_module("gaussdp")
    rows = ["| name | what it is |", "|---|---|"]
    for name in gaussdp.__all__:
        obj = getattr(gaussdp, name)
        if name == "__version__":
            rows.append(f"| `__version__` | the version string, `{obj}` |")
            continue
        summary = _summary(obj)
        if not summary:
            log.warning("gaussdp.%s has no docstring", name)
        identifier = _identifier(name, obj)
        link = f"[`{name}`][{identifier}]"
        cell = summary.replace("|", "\\|")
        rows.append(f"| {link} | {cell} |")
    return "\n".join(rows)


def undocumented(
    package: str = "gaussdp",
    modules: tuple[str, ...] = PUBLIC_MODULES,
    search_path: Path = ROOT / "src",
) -> list[str]:
    """Every public name (``__all__`` of the package and of its public modules, and the
    public methods and properties of public classes) whose rendered docstring would be empty."""
    import griffe

    extensions = griffe.load_extensions("griffe_sphinx", "griffe_inherited_docstrings")
    root = griffe.load(
        package,
        search_paths=[str(search_path)],
        extensions=extensions,
        resolve_aliases=True,
        resolve_external=False,
    )
    found: list[str] = []

    def check(obj, path: str) -> None:
        if path in NO_DOCSTRING_NEEDED:
            return
        if obj.docstring is None or not obj.docstring.value.strip():
            found.append(path)
        if obj.is_class:
            for name, member in obj.members.items():
                if name.startswith("_") or member.is_alias:
                    continue
                if member.is_function or member.is_class or "property" in member.labels:
                    check(member, f"{path}.{name}")

    for module in (root, *(root[name] for name in modules)):
        for name in module.exports or ():
            member = module.members[str(name)]
            target = member.final_target if member.is_alias else member
            check(target, f"{module.path}.{name}")
    return sorted(set(found))


def on_config(config):
    # Here, not at import: MkDocs restores sys.path after importing a hooks file.
    if str(ROOT / "src") not in sys.path:
        sys.path.insert(0, str(ROOT / "src"))
    loaded = sys.modules.get("gaussdp")
    if loaded is not None and not Path(loaded.__file__).is_relative_to(ROOT / "src"):
        log.warning("gaussdp was imported from %s, not from this tree", loaded.__file__)
    return config


def on_pre_build(config) -> None:
    for path in undocumented():
        log.warning("%s has no docstring: every public name needs one", path)


# Generated when the site is built, so they cannot go stale: path in the site -> producer.
REPORT_EXAMPLE = "guides/report-cifar10.html"


def _report_html() -> str:
    import gaussdp

    run = gaussdp.DPSGD(noise_multiplier=9.4, sampling_probability=0.32768, steps=2000)
    return gaussdp.account(run).gdp().to_html()


def on_files(files, config):
    from mkdocs.structure.files import File

    files.append(File.generated(config, REPORT_EXAMPLE, content=_report_html()))
    return files


CLI_MARKER = re.compile(r"<!-- gaussdp:cli (?P<args>[^>]*?) -->")


def cli_output(args: str) -> str:
    """What ``gaussdp ARGS`` prints, run at build time (Markdown output is kept as Markdown)."""
    from click.testing import CliRunner

    from gaussdp.cli import cli

    result = CliRunner().invoke(cli, shlex.split(args), prog_name="gaussdp")
    if result.exit_code != 0:
        log.warning("gaussdp %s failed (exit %s): %s", args, result.exit_code, result.output)
    if "--format markdown" in args:
        return result.output
    return f"```text\n$ gaussdp {args}\n{result.output}```\n"


def on_page_markdown(markdown: str, page, config, files) -> str:
    markdown = CLI_MARKER.sub(lambda m: cli_output(m.group("args")), markdown)
    if PUBLIC_NAMES_MARKER in markdown:
        markdown = markdown.replace(PUBLIC_NAMES_MARKER, public_names_table())
    return markdown
