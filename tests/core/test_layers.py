"""The import graph of ``src/assignors`` and ``src/spark_udfs``: layers that point one way, no circle, facades that
only re-export, ``spark_udfs -> assignors`` through public names only.

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
7. The facades (``assignors``, ``rebalance``, ``consumer_protocol``, ``metrics``, ``tables``): re-exports only, and
   no module of the package imports them.
8. ``_assign``, ``_clients``, ``collect`` and ``kafka_java``: the ``assign`` command's engine, the client adapters'
   shared helpers, the ``collect`` command (beside the decoder it is built on), Kafka's own Java assignors.
9. The entry points and adapters (``cli``, ``kafka_python``, ``aiokafka``), imported by nothing but ``__main__``.
10. ``__main__``.

``spark_udfs`` (see :data:`SPARK_LAYERS`): ``session``; ``tables``; ``replay``; ``report`` and ``demo``; ``jobs``;
``udfs``; ``cli``; the facade and ``submit``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import assignors

SOURCE = Path(assignors.__file__).parent
SPARK_SOURCE = SOURCE.parent / "spark_udfs"  # beside it in src/ (read, never imported: the core test needs no Spark)

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
        {"assignors", "rebalance", "consumer_protocol", "metrics", "tables"},
        {"_assign", "_clients", "collect", "kafka_java"},
        {"cli", "kafka_python", "aiokafka"},
        {"__main__", "_member"},
    )
)
FACADES = LAYERS[7]
ENTRY_POINTS = LAYERS[9]

SPARK_LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(units)
    for units in (
        {"session"},  # the Spark session (standard library only until one starts)
        {"tables"},  # the input tables as Spark reads them: paths, reading, CSV checks, the schemas' Spark side
        {"replay"},  # one group's pure-Python replay, its pandas frames, the actual strategy measured alike
        {"report", "demo"},  # the summary and its forms; the sample history and the real-groups demo
        {"jobs"},  # the Spark jobs: the history, the actual strategy, the __consumer_offsets decoder, the route
        {"udfs"},  # the pandas UDFs for SQL
        {"cli"},  # the evaluate and demo commands
        {"spark_udfs", "submit"},  # the facade; what spark-submit runs
    )
)
SPARK_FACADES = frozenset({"spark_udfs", "spark_udfs.replay"})
"""The packages whose ``__init__`` re-exports names for users: no module of spark_udfs imports them."""
MOVING: frozenset[str] = frozenset()
"""Modules on their way out of spark_udfs (none: ``assignors collect`` now lives in ``assignors.collect``)."""
CHAIN = 9
"""The longest import chain inside spark_udfs, in files (floors)."""
LAZY_EXTRAS = frozenset({"assignors.testing"})
"""What spark_udfs may import inside a function: the kit behind the ``testing`` extra (Hypothesis)."""


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module of assignors or spark_udfs, dotted
    line: int
    in_function: bool
    names: tuple[str, ...] = ()  # the names taken from target (``from target import name``), if not modules


def _module_name(path: Path, root: Path) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path, SOURCE): path for path in sorted(SOURCE.rglob("*.py"))}
SPARK_MODULES = {_module_name(path, SPARK_SOURCE): path for path in sorted(SPARK_SOURCE.rglob("*.py"))}
ALL_MODULES = MODULES | SPARK_MODULES
SOURCES = {module: path.read_text(encoding="utf-8") for module, path in ALL_MODULES.items()}


def _unit(module: str) -> str:
    """The package (or top-level module) a module belongs to: ``assignors._core.model`` -> ``_core``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _layer(module: str) -> int:
    unit = _unit(module)
    layers = SPARK_LAYERS if module.split(".", maxsplit=1)[0] == "spark_udfs" else LAYERS
    return next(i for i, units in enumerate(layers) if unit in units)


def _resolve(name: str) -> str:
    """The module a dotted name lives in (``assignors._core.model.Assignment`` -> its module)."""
    while name not in ALL_MODULES:
        name = name.rpartition(".")[0]
    return name


def _ours(name: str) -> bool:
    return name.split(".", maxsplit=1)[0] in {"assignors", "spark_udfs"}


def _imports(module: str, source: str) -> list[Import]:
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                found.extend(
                    Import(module, _resolve(alias.name), child.lineno, in_function)
                    for alias in child.names
                    if _ours(alias.name)
                )
            elif isinstance(child, ast.ImportFrom):
                assert child.level == 0, f"{module}:{child.lineno}: a relative import"
                base = child.module or ""
                for alias in child.names:
                    full = f"{base}.{alias.name}"
                    if _ours(base) and full in ALL_MODULES:
                        found.append(Import(module, full, child.lineno, in_function))
                    elif _ours(base):
                        found.append(Import(module, _resolve(base), child.lineno, in_function, (alias.name,)))
            visit(child, nested)

    visit(ast.parse(source), in_function=False)
    return found


def _graph(sources: dict[str, str]) -> dict[str, list[Import]]:
    return {module: _imports(module, source) for module, source in sources.items()}


GRAPH = _graph(SOURCES)


def _edges(graph: dict[str, list[Import]] | None = None, package: str = "assignors") -> list[Import]:
    """The imports between two modules whose importer is in ``package``."""
    graph = GRAPH if graph is None else graph
    return [
        edge
        for module, edges in graph.items()
        if module.split(".")[0] == package
        for edge in edges
        if edge.target != edge.source
    ]


def _upward(edges: list[Import]) -> list[str]:
    """Imports of a sibling of the importer's layer or of one above (spark_udfs -> assignors is down)."""
    return [
        f"{e.source}:{e.line} imports {e.target} (layer {_layer(e.source)} -> {_layer(e.target)})"
        for e in edges
        if e.source not in MOVING
        and e.source.split(".")[0] == e.target.split(".")[0]
        and _unit(e.source) != _unit(e.target)
        and _layer(e.target) >= _layer(e.source)
    ] + [
        f"{e.source}:{e.line} imports {e.target}"
        for e in edges
        if e.source.startswith("assignors") and e.target.startswith("spark_udfs")
    ]


def _circles_of(graph: dict[str, list[Import]]) -> list[list[str]]:
    return _circles({module: sorted({e.target for e in edges} - {module}) for module, edges in graph.items()})


def _longest_chain(graph: dict[str, list[Import]], package: str) -> list[str]:
    """The longest import chain among the modules of ``package`` (the graph has no circle)."""
    inside = {m: sorted({e.target for e in edges if e.target.startswith(package)} - {m}) for m, edges in graph.items()}
    best: dict[str, list[str]] = {}

    def chain(module: str) -> list[str]:
        if module not in best:
            best[module] = [module, *max((chain(t) for t in inside.get(module, [])), key=len, default=[])]
        return best[module]

    return max((chain(m) for m in inside if m.split(".")[0] == package), key=len)


def test_every_module_has_a_layer() -> None:
    """A new package or top-level module gets its place in LAYERS (and in docs/development.md's map)."""
    known = set().union(*LAYERS)
    assert sorted({_unit(module) for module in MODULES} - known) == []


def test_imports_point_down() -> None:
    """A module imports its own package or a lower layer: never a sibling of its layer, never one above."""
    assert _upward(_edges()) == []


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
    """No strongly connected component of more than one module in either package, nor across them (type-only and
    lazy imports included)."""
    assert _circles_of(GRAPH) == []


def test_no_lazy_import_of_the_package() -> None:
    """Imports of assignors' own modules sit at the top of the file (a function-level one is how a circle hides);
    optional dependencies (hypothesis, pyspark, the Kafka clients) may still be imported where they are used."""
    assert [f"{e.source}:{e.line} imports {e.target}" for e in _edges() if e.in_function and _ours(e.target)] == []


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
        "assignors.tables",
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
        Import("assignors._groups.x", "assignors._classic.rounds", 5, in_function=True, names=("Round",)),
    ]
    assert _circles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert _circles({"a": ["b"], "b": [], "c": ["a", "b"]}) == []
    facade, definition = ast.parse("from assignors._core.model import Cluster\n\ndef f():\n    pass\n").body
    assert _re_export_only(facade)
    assert not _re_export_only(definition)
    assert _layer("assignors._groups.simulator") > _layer("assignors.consumer_group._simulator")


# spark_udfs: the same rules, and its imports of assignors through public names only


def _spark_edges(graph: dict[str, list[Import]] | None = None) -> list[Import]:
    return [e for e in _edges(graph, "spark_udfs") if e.source not in MOVING]


def test_every_spark_module_has_a_layer() -> None:
    """A new package or top-level module of spark_udfs gets its place in SPARK_LAYERS (and in the package map)."""
    known = set().union(*SPARK_LAYERS)
    assert sorted({_unit(m) for m in SPARK_MODULES if m not in MOVING} - known) == []


def test_spark_imports_point_down() -> None:
    """Inside spark_udfs too, a module imports its own package or a lower layer."""
    assert _upward(_spark_edges()) == []


def test_spark_imports_no_facade_and_no_entry_point() -> None:
    """No module of spark_udfs imports a re-exporting ``__init__`` (it imports the module that defines the name), nor
    ``cli`` or ``submit``, except ``submit`` running ``cli``."""
    wrong = [
        f"{e.source}:{e.line} imports {e.target}"
        for e in _spark_edges()
        if e.target.startswith("spark_udfs")
        and (e.target in SPARK_FACADES or _unit(e.target) in {"cli", "submit"})
        and (e.source, e.target) != ("spark_udfs.submit", "spark_udfs.cli")
    ]
    assert wrong == []


def test_spark_udfs_has_no_lazy_import_of_itself() -> None:
    """spark_udfs imports its own modules and assignors' at the top of the file; inside a function only the optional
    dependencies (pyspark, pandas, plotly) and the testing kit (:data:`LAZY_EXTRAS`)."""
    wrong = [
        f"{e.source}:{e.line} imports {e.target}"
        for e in _spark_edges()
        if e.in_function and e.target not in LAZY_EXTRAS
    ]
    assert wrong == []


def test_spark_udfs_uses_assignors_public_names_only() -> None:
    """spark_udfs imports assignors' public modules and names: no ``_private`` module or name."""
    wrong = [
        f"{e.source}:{e.line} imports {e.target} {', '.join(e.names)}".rstrip()
        for e in _spark_edges()
        if e.target.startswith("assignors") and any(part.startswith("_") for part in (*e.target.split("."), *e.names))
    ]
    assert wrong == []


def test_spark_packages_only_re_export() -> None:
    """Every ``__init__`` of spark_udfs (the facade, the packages) defines nothing."""
    inits = sorted(m for m, path in SPARK_MODULES.items() if path.name == "__init__.py")
    defined = [
        f"{module}:{statement.lineno}"
        for module in inits
        for statement in ast.parse(SOURCES[module]).body
        if not _re_export_only(statement)
    ]
    assert len(inits) == 6
    assert defined == []


def test_spark_udfs_stays_small_at_every_level() -> None:
    """At most 12 files at the top of spark_udfs and in each of its packages."""
    folders = [SPARK_SOURCE, *(p for p in SPARK_SOURCE.iterdir() if p.is_dir() and p.name != "__pycache__")]
    sizes = {folder.name: len([p for p in folder.iterdir() if p.is_file()]) for folder in folders}
    assert {name: size for name, size in sizes.items() if size > 12} == {}


def test_the_longest_import_chain() -> None:
    """The deepest import chain inside spark_udfs, pinned: a longer one means a new floor (was 12 files before the
    packages: submit -> cli -> job -> udfs -> evaluation -> offsets -> actual -> replay -> frames -> group_replay ->
    group_input -> costs)."""
    assert len(_longest_chain(GRAPH, "spark_udfs")) <= CHAIN


@pytest.mark.parametrize(
    ("module", "planted"),
    [
        ("assignors._core.model", "from assignors._groups.simulator import GroupSimulator\n"),
        ("spark_udfs.tables.paths", "from spark_udfs.jobs.evaluate import run_demo\n"),
        ("spark_udfs.replay.values", "def f():\n    from spark_udfs.jobs.history import evaluate\n"),
    ],
)
def test_the_checks_fail_on_a_planted_circle(module: str, planted: str) -> None:
    """A circle planted in either package (at the top or inside a function) is a circle and an upward import."""
    graph = _graph({**SOURCES, module: SOURCES[module] + planted})
    circles = _circles_of(graph)
    assert len(circles) == 1
    assert module in circles[0]
    package = module.split(".", maxsplit=1)[0]
    assert [line for line in _upward(_edges(graph, package)) if line.startswith(module)] != []
    assert _circles_of(GRAPH) == []


def test_the_public_name_check_sees_a_private_import() -> None:
    """``from assignors._core.model import INT32_MAX`` in spark_udfs is refused; ``assignors.tables`` is not."""
    edges = _imports("spark_udfs.tables.csv_checks", "from assignors._core.model import INT32_MAX\n")
    assert edges == [
        Import("spark_udfs.tables.csv_checks", "assignors._core.model", 1, in_function=False, names=("INT32_MAX",))
    ]
    public = _imports("spark_udfs.tables.csv_checks", "from assignors.tables import INT32_MAX\n")
    assert public[0].target == "assignors.tables"
