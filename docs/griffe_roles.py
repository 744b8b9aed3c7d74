"""A griffe extension: turn the docstrings' Sphinx roles into cross-references.

The numpydoc docstrings cross-reference with Sphinx roles (``:func:`gaussian```,
``:class:`~gaussdp.Accounting```, ``:meth:`TradeOff.with_failure```). mkdocstrings
does not read roles, so each one is resolved here, the way Sphinx would: relative to the
object whose docstring holds it (its own members, then each enclosing scope), then as an
absolute path. A resolved target becomes a link to its API entry (plain code where the
target is not rendered, e.g. a private module); a role naming nothing is a warning, so the
strict build fails and names the docstring and the role.

``.. math::`` directives become code blocks (the formulas are written in Unicode), and the
``::`` that introduces a literal block a single colon (the indented block stays code).
"""

from __future__ import annotations

import logging
import re
from typing import Any

import griffe

log = logging.getLogger("mkdocs.plugins.gaussdp.roles")

ROLE = re.compile(r":(?:py:)?(func|class|meth|attr|mod|data|obj|exc|const):`([^`]+)`")
MATH = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*\n", re.MULTILINE)
LITERAL = re.compile(r"(?<=\S)::$", re.MULTILINE)  # "text::" introduces an rST literal block


def _lookup(scope: griffe.Object, path: str) -> griffe.Object | griffe.Alias | None:
    try:
        return scope[path]
    except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def resolve(owner: griffe.Object, target: str) -> griffe.Object | griffe.Alias | None:
    """The object ``target`` names, seen from the docstring of ``owner``."""
    package = owner.package
    scope: griffe.Object | None = owner if (owner.is_module or owner.is_class) else owner.parent
    while scope is not None:
        found = _lookup(scope, target)
        if found is not None:
            return found
        scope = scope.parent
    head, _, rest = target.partition(".")
    if head == package.name:
        return package if not rest else _lookup(package, rest)
    return None


def _resolvable(alias: griffe.Alias) -> bool:
    try:
        alias.final_target  # noqa: B018 - resolving is the test
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return False
    return True


def _identifier(found: griffe.Object | griffe.Alias) -> str:
    try:
        return found.final_target.canonical_path if found.is_alias else found.canonical_path
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return found.path


def rewrite(owner: griffe.Object, text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        role, target = match.group(1), match.group(2).strip()
        short = target.startswith("~")
        target = target.lstrip("~").rstrip("()")
        shown = target.rsplit(".", 1)[-1] if short else target
        if role in {"func", "meth"}:
            shown += "()"
        found = resolve(owner, target)
        if found is not None and found.is_alias and not _resolvable(found):
            return f"`{shown}`"  # an import from outside the package (e.g. ``math``)
        if found is not None and found.is_module and role in {"func", "class", "data"}:
            # A package exporting a function named like its module (gdpt.refine): the function.
            found = _lookup(found, target.rsplit(".", 1)[-1]) or found
        if found is None:
            log.warning("%s: docstring role :%s:`%s` names nothing", owner.path, role, target)
            return f"`{shown}`"
        return f'<autoref identifier="{_identifier(found)}" optional><code>{shown}</code></autoref>'

    text = ROLE.sub(replace, text)
    text = MATH.sub(lambda m: "\n", text)
    return LITERAL.sub(":", text)


class SphinxRoles(griffe.Extension):
    """Rewrite every docstring of the package once it is loaded (after inherited docstrings)."""

    def __init__(self) -> None:
        self._seen: set[int] = set()

    def _visit(self, obj: griffe.Object) -> None:
        docstring = obj.docstring
        if docstring is not None and id(docstring) not in self._seen:
            self._seen.add(id(docstring))
            docstring.value = rewrite(docstring.parent or obj, docstring.value)
        for member in obj.members.values():
            if not member.is_alias:
                self._visit(member)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self._visit(pkg)
