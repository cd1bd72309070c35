"""The import graph of ``src/assignors``: layers that point one way, no circle, facades that only re-export.

Read from the source with :mod:`ast` (nothing is imported), so a lazy import inside a function counts like any
other. The layers, lowest first (docs/development.md draws the same map); a module may import its own package and
any package of a lower layer, never one of its own layer or above:

0. ``_core``: errors, the model, the assignor interface and base, Java's orders, load, metrics, JSON input.
1. ``_wire``: Kafka's bytes (buffers, the flexible-version codec, the classic ConsumerProtocol).
2. ``_builtin`` (range, roundrobin, sticky and the registry) and ``offsets_topic`` (the ``__consumer_offsets``
   records), side by side: neither imports the other.
3. ``_classic``: the classic group protocol (rules, the round engine, events, the timeline).
4. ``consumer_group``: KIP-848 (server assignors, reconciliation, its simulator).
5. ``_groups``: where the two protocols meet (the simulator that hands a group over on upgrade, scenarios).
6. ``testing``: the property-based kit.
7. The facades (``assignors``, ``rebalance``, ``consumer_protocol``, ``metrics``): re-exports only, and no module
   of the package imports them.
8. ``_assign``, ``_clients`` and ``collect``: the ``assign`` command's engine, the client adapters' shared helpers,
   the ``collect`` command (beside the decoder it is built on).
9. The entry points and adapters (``cli``, ``kafka_python``, ``aiokafka``), imported by nothing but ``__main__``.
10. ``__main__``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import assignors

SOURCE = Path(assignors.__file__).parent

LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(units)
    for units in (
        {"_core"},
        {"_wire"},
        {"_builtin", "offsets_topic"},
        {"_classic"},
        {"consumer_group"},
        {"_groups"},
        {"testing"},
        {"assignors", "rebalance", "consumer_protocol", "metrics"},
        {"_assign", "_clients", "collect"},
        {"cli", "kafka_python", "aiokafka"},
        {"__main__", "_member"},
    )
)
FACADES = LAYERS[7]
ENTRY_POINTS = LAYERS[9]


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module of assignors, dotted
    line: int
    in_function: bool


def _module_name(path: Path) -> str:
    parts = ["assignors", *path.relative_to(SOURCE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(SOURCE.rglob("*.py"))}


def _unit(module: str) -> str:
    """The package (or top-level module) a module belongs to: ``assignors._core.model`` -> ``_core``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "assignors"


def _layer(module: str) -> int:
    unit = _unit(module)
    return next(i for i, units in enumerate(LAYERS) if unit in units)


def _resolve(name: str) -> str:
    """The module of assignors a dotted name lives in (``assignors._core.model.Assignment`` -> its module)."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module: str, source: str) -> list[Import]:
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom):
                assert child.level == 0, f"{module}:{child.lineno}: a relative import"
                base = child.module or ""
                names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in child.names]
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.extend(
                    Import(module, _resolve(name), child.lineno, in_function)
                    for name in names
                    if name == "assignors" or name.startswith("assignors.")
                )
            visit(child, nested)

    visit(ast.parse(source), in_function=False)
    return found


GRAPH = {module: _imports(module, path.read_text(encoding="utf-8")) for module, path in MODULES.items()}


def _edges() -> list[Import]:
    return [edge for edges in GRAPH.values() for edge in edges if edge.target != edge.source]


def test_every_module_has_a_layer() -> None:
    """A new package or top-level module gets its place in LAYERS (and in docs/development.md's map)."""
    known = set().union(*LAYERS)
    assert sorted({_unit(module) for module in MODULES} - known) == []


def test_imports_point_down() -> None:
    """A module imports its own package or a lower layer: never a sibling of its layer, never one above."""
    wrong = [
        f"{e.source}:{e.line} imports {e.target} (layer {_layer(e.source)} -> {_layer(e.target)})"
        for e in _edges()
        if _unit(e.source) != _unit(e.target) and _layer(e.target) >= _layer(e.source)
    ]
    assert wrong == []


def test_nothing_imports_a_facade_or_an_entry_point() -> None:
    """The facades and entry points are for users: inside the package only ``__main__`` imports ``cli``, and only
    ``_member`` (a real group's member process, itself an entry point) imports the client adapters it runs."""
    allowed = {
        ("assignors.__main__", "assignors.cli"),
        ("assignors._member", "assignors.kafka_python"),
        ("assignors._member", "assignors.aiokafka"),
    }
    wrong = [
        f"{e.source}:{e.line} imports {e.target}"
        for e in _edges()
        if _unit(e.target) in FACADES | ENTRY_POINTS and (e.source, e.target) not in allowed
    ]
    assert wrong == []


def _circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def connect(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph[module]:
            if target not in index:
                connect(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = [stack.pop()]
            while component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                circles.append(sorted(component))

    for module in graph:
        if module not in index:
            connect(module)
    return circles


def test_no_import_circle() -> None:
    """No strongly connected component of more than one module (type-only and lazy imports included)."""
    assert _circles({module: sorted({e.target for e in GRAPH[module]} - {module}) for module in MODULES}) == []


def test_no_lazy_import_of_the_package() -> None:
    """Imports of assignors' own modules sit at the top of the file (a function-level one is how a circle hides);
    optional dependencies (hypothesis, pyspark, the Kafka clients) may still be imported where they are used."""
    assert [f"{e.source}:{e.line} imports {e.target}" for e in _edges() if e.in_function] == []


def _re_export_only(statement: ast.stmt, *, in_try: bool = False) -> bool:
    if isinstance(statement, ast.Import | ast.ImportFrom | ast.Raise):
        return True
    if isinstance(statement, ast.Expr):  # the docstring
        return isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)
    if isinstance(statement, ast.Assign):  # __all__, __version__; an error message in a try
        return all(isinstance(t, ast.Name) and (in_try or t.id.startswith("__")) for t in statement.targets)
    if isinstance(statement, ast.Try):  # an optional dependency's import, the version's lookup
        blocks = [statement.body, statement.orelse, statement.finalbody, *(h.body for h in statement.handlers)]
        return all(_re_export_only(s, in_try=True) for block in blocks for s in block)
    return False


def test_facades_only_re_export() -> None:
    """The facades, and the public packages' ``__init__``, define nothing: their names live in a private module."""
    modules = [m for m in MODULES if _unit(m) in FACADES and m.count(".") <= 1]
    modules += ["assignors.consumer_group", "assignors.offsets_topic", "assignors.testing"]
    defined = [
        f"{module}:{statement.lineno}"
        for module in modules
        for statement in ast.parse(MODULES[module].read_text(encoding="utf-8")).body
        if not _re_export_only(statement)
    ]
    assert sorted(modules) == [
        "assignors",
        "assignors.consumer_group",
        "assignors.consumer_protocol",
        "assignors.metrics",
        "assignors.offsets_topic",
        "assignors.rebalance",
        "assignors.testing",
    ]
    assert defined == []


def test_the_top_level_stays_small() -> None:
    """At most 12 files at the top of src/assignors: a new concept gets a package."""
    assert len([p for p in SOURCE.iterdir() if p.is_file()]) <= 12


def test_the_checks_see_a_lazy_import_a_circle_and_a_definition() -> None:
    """The checks themselves can fail: on a lazy import, a circle of three, a facade defining a function."""
    source = (
        "import os\nfrom assignors._core import model\n\ndef f():\n    from assignors._classic.rounds import Round\n"
    )
    assert _imports("assignors._groups.x", source) == [
        Import("assignors._groups.x", "assignors._core.model", 2, in_function=False),
        Import("assignors._groups.x", "assignors._classic.rounds", 5, in_function=True),
    ]
    assert _circles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert _circles({"a": ["b"], "b": [], "c": ["a", "b"]}) == []
    facade, definition = ast.parse("from assignors._core.model import Cluster\n\ndef f():\n    pass\n").body
    assert _re_export_only(facade)
    assert not _re_export_only(definition)
    assert _layer("assignors._groups.simulator") > _layer("assignors.consumer_group._simulator")
