"""Draw what imports what in gaussdp, from the source's own ``import`` statements.

Run ``python docs/architecture_graph.py`` from the repository's root to rewrite
``docs/figures/architecture.svg`` (the figure of ``docs/architecture.md``);
``tests/test_architecture.py`` checks that the committed figure is what this
script draws from the code today, and that the code has no import circles and
no uses of another package's private names.

Nothing of gaussdp is imported or run: the imports are read with :mod:`ast`,
counting those inside functions (they are imports all the same). An import of
``gaussdp.a.b`` is an arrow to the module ``gaussdp.a.b``; ``from gaussdp.a import
x`` is an arrow to ``gaussdp.a.x`` when that is a module, else to ``gaussdp.a``.
The lazy public face (``gaussdp/__init__.py``) and the command line's lazy
subcommand loading (``gaussdp.cli``) stand above everything and are left out of
the circle check; imports of third-party packages are not arrows.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src"
FIGURE = ROOT / "docs" / "figures" / "architecture.svg"

#: Modules that may import lazily from anywhere below them: the public face loads
#: names on first use, the command line loads a subcommand when it runs.
LAZY_FACES = ("gaussdp", "gaussdp.cli")


def modules(source: Path = SOURCE) -> dict[str, Path]:
    """Every module of gaussdp under ``source``, by its dotted name."""
    found = {}
    for path in sorted((source / "gaussdp").rglob("*.py")):
        parts = list(path.relative_to(source).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _owner(name: str, known: Iterable[str]) -> str | None:
    """The longest known module that ``name`` is or lies in."""
    known = set(known)
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def package_of(name: str) -> str:
    """The top-level package a module belongs to: ``gaussdp.pld.grid`` -> ``gaussdp.pld``."""
    return ".".join(name.split(".")[:2])


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def read(source: Path = SOURCE) -> tuple[dict[str, set[str]], list[str]]:
    """The import arrows between gaussdp's modules, and uses of other packages' private names.

    Returns ``(arrows, private)``: ``arrows[a]`` is the set of modules ``a``
    imports (anywhere in its text); ``private`` lists, one line each, every
    ``_name`` of another package that a module imports or reaches through a
    module it imported (``module._name``).
    """
    found = modules(source)
    arrows: dict[str, set[str]] = {name: set() for name in found}
    private: list[str] = []
    for name, path in found.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] != "gaussdp":
                        continue
                    target = _owner(alias.name, found)
                    if target:
                        arrows[name].add(target)
                        aliases[alias.asname or alias.name] = target
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    stem = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(stem + ([node.module] if node.module else []))
                if base.split(".")[0] != "gaussdp":
                    continue
                owner = _owner(base, found)
                if (
                    owner
                    and package_of(owner) != package_of(name)
                    and any(_is_private(part) for part in owner.split(".")[2:])
                ):
                    private.append(f"{name} imports from {owner}, a private module")
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in found:
                        arrows[name].add(full)
                        aliases[alias.asname or alias.name] = full
                        continue
                    target = _owner(base, found)
                    if target is None:
                        continue
                    arrows[name].add(target)
                    if _is_private(alias.name) and package_of(target) != package_of(name):
                        private.append(f"{name} imports {alias.name} from {target}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _is_private(node.attr)
            ):
                target = aliases[node.value.id]
                if package_of(target) != package_of(name):
                    private.append(f"{name} uses {target}.{node.attr}")
        arrows[name].discard(name)
    return arrows, sorted(set(private))


def circles(arrows: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: groups of two or more modules that reach each other (Tarjan).

    The lazy faces (:data:`LAZY_FACES`) are left out; each circle is sorted.
    """
    graph = {
        name: {t for t in targets if t not in LAZY_FACES}
        for name, targets in arrows.items()
        if name not in LAZY_FACES
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    try:
        for node in sorted(graph):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def cycle_in(group: list[str], arrows: dict[str, set[str]]) -> list[str]:
    """One closed path through a circle, for the message: ``[a, b, ..., a]``."""
    members = set(group)
    start = group[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(arrows.get(node, ()) & members):
                if successor == start:
                    return [*paths[node], start]
                if successor not in paths:
                    paths[successor] = [*paths[node], successor]
                    following.append(successor)
        frontier = following
    return group  # pragma: no cover - a circle always closes


#: The rooms of the figure, top to bottom as the layers are meant to stand: a label
#: and the dotted-name prefixes of the modules it holds (the first match wins, so
#: a package's parts come before the package). Every module must be in one.
ROOMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cli", ("gaussdp.cli",)),
    ("sweeps", ("gaussdp.sweeps",)),
    ("calibrate", ("gaussdp.calibrate",)),
    ("interop", ("gaussdp.interop",)),
    ("audit", ("gaussdp.audit",)),
    ("report: entry", ("gaussdp.report.entry",)),
    ("accountant", ("gaussdp.accountant",)),
    ("report: from an Accounting", ("gaussdp.report",)),
    ("rdp", ("gaussdp.rdp",)),
    (
        "pld: pairs",
        (
            "gaussdp.pld.leaves",
            "gaussdp.pld.dominating_pairs",
            "gaussdp.pld.guarantees",
            "gaussdp.pld.shuffling",
            "gaussdp.pld.tradeoffs",
        ),
    ),
    ("clt", ("gaussdp.clt",)),
    ("curves", ("gaussdp.curves",)),
    ("gdpt", ("gaussdp.gdpt",)),
    ("pld: engine", ("gaussdp.pld",)),
    ("plot", ("gaussdp.plot",)),
    ("gdp", ("gaussdp.gdp",)),
    ("mechanisms", ("gaussdp.mechanisms",)),
    ("matrix", ("gaussdp.matrix",)),
    ("_numerics, _validation", ("gaussdp._numerics", "gaussdp._binomial", "gaussdp._validation")),
)


#: Package faces that stand in another room than their package's modules: gaussdp.report
#: hands on report.entry's ``report`` (which accounts a mechanism first), and gaussdp.pld
#: hands on pld.tradeoffs' ``compose_tradeoffs``, so each stands with what it hands on.
FACES = {"gaussdp.report": "report: entry", "gaussdp.pld": "pld: pairs"}


def room_of(module: str) -> str | None:
    """The room of :data:`ROOMS` that holds ``module`` (None for the lazy public face)."""
    if module == "gaussdp":
        return None
    if module in FACES:
        return FACES[module]
    for label, prefixes in ROOMS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return label
    raise KeyError(f"{module} is in no room of docs/architecture_graph.py's ROOMS")


def room_graph(arrows: dict[str, set[str]]) -> dict[str, set[str]]:
    """The arrows between rooms (an arrow when any module of one imports one of the other).

    Rooms that hold no module of the tree read are left out.
    """
    present = {room_of(name) for name in arrows} - {None}
    rooms: dict[str, set[str]] = {label: set() for label, _ in ROOMS if label in present}
    for name, targets in arrows.items():
        here = room_of(name)
        if here is None:
            continue
        for target in targets:
            there = room_of(target)
            if there is not None and there != here:
                rooms[here].add(there)
    return rooms


def _reachable(graph: dict[str, set[str]], start: str, skip: tuple[str, str]) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        for successor in graph[node]:
            if (node, successor) == skip or successor in seen:
                continue
            seen.add(successor)
            stack.append(successor)
    return seen


def reduced(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The arrows no longer path already says (a transitive reduction, on an acyclic graph)."""
    return {
        node: {t for t in targets if t not in _reachable(graph, node, (node, t))}
        for node, targets in graph.items()
    }


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each room's floor: 0 for rooms that import no other, else one above the highest below.

    Rooms in a circle (which the tests refuse) share a floor.
    """
    together = {room: {room} for room in graph}
    for group in circles({room: set(targets) for room, targets in graph.items()}):
        for room in group:
            together[room] = set(group)
    floor: dict[str, int] = {}

    def height(room: str) -> int:
        if room not in floor:
            floor[room] = 0  # provisional, while the rooms below are measured
            below = sorted({t for r in together[room] for t in graph[r]} - together[room])
            value = 1 + max(height(t) for t in below) if below else 0
            for member in together[room]:
                floor[member] = value
        return floor[room]

    for room in sorted(graph):
        height(room)
    return floor


def svg(arrows: dict[str, set[str]]) -> str:
    """The figure: rooms on their floors, an arrow for each import no longer path implies.

    Arrows run downwards; one that runs up or sideways (an import circle) is drawn red.
    """
    graph = room_graph(arrows)
    floor = floors(graph)
    inside = {  # arrows within a circle of rooms, drawn as they are (red)
        (room, target)
        for room, targets in graph.items()
        for target in targets
        if floor[target] >= floor[room]
    }
    acyclic = {room: {t for t in ts if (room, t) not in inside} for room, ts in graph.items()}
    shown = reduced(acyclic)
    for room, target in inside:
        shown[room].add(target)
    shown = {n: {t for t in ts if t != "_numerics, _validation"} for n, ts in shown.items()}
    top = max(floor.values())
    rows: dict[int, list[str]] = {}
    order = [label for label, _ in ROOMS if label in graph]
    for label in order:
        rows.setdefault(floor[label], []).append(label)
    width, row_height, box_height, char = 760, 78, 30, 7.4
    position: dict[str, tuple[float, float, float]] = {}
    for level, labels in rows.items():
        sizes = [len(label) * char + 24 for label in labels]
        gap = 22.0
        x = (width - (sum(sizes) + gap * (len(sizes) - 1))) / 2
        y = 20 + (top - level) * row_height
        for label, size in zip(labels, sizes, strict=True):
            position[label] = (x, y, size)
            x += size + gap
    height = 20 + (top + 1) * row_height
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">',
        "<!-- Generated by docs/architecture_graph.py from the imports in src/; do not edit. -->",
        '<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#555"/></marker><marker id="red" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path '
        'd="M0,0 L10,5 L0,10 z" fill="#c00"/></marker></defs>',
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    for source in order:
        for target in sorted(shown[source], key=order.index):
            sx, sy, sw = position[source]
            tx, ty, tw = position[target]
            down = floor[target] < floor[source]
            x1, y1 = sx + sw / 2, sy + box_height
            x2, y2 = tx + tw / 2, ty
            colour, marker = ("#555", "head") if down else ("#c00", "red")
            out.append(
                f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                f'stroke="{colour}" stroke-width="1.2" marker-end="url(#{marker})"/>'
            )
    for label in order:
        x, y, size = position[label]
        out.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{size:.1f}" height="{box_height}" rx="5" '
            'fill="#e8eaf6" stroke="#3f51b5"/>'
        )
        out.append(
            f'<text x="{x + size / 2:.1f}" y="{y + 20:.1f}" text-anchor="middle">{label}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> int:
    arrows, _ = read()
    FIGURE.parent.mkdir(parents=True, exist_ok=True)
    FIGURE.write_text(svg(arrows), encoding="utf-8")
    print(f"wrote {FIGURE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
