"""The public API: __all__ is exactly the public names; importing assignors pulls in no optional dependency."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import typing
from pathlib import Path
from types import ModuleType

import pytest

import assignors


def test_all_lists_the_public_names() -> None:
    """__all__ names every public attribute of the package (ruff RUF022 keeps it sorted)."""
    public = {n for n in dir(assignors) if not n.startswith("_")} - {
        "metrics",
        "consumer_protocol",
        "testing",
        "cli",
        "rebalance",
        "kafka_python",
        "aiokafka",
        "offsets_topic",
        "consumer_group",
        "tables",
        "collect",  # the collect command's subpackage, once a test imported it
        "kafka_java",  # Kafka's own Java assignors, once something imported them
    }
    assert set(assignors.__all__) == public


def test_import_is_dependency_free() -> None:
    """`import assignors` imports none of pyspark, pandas, pyarrow or hypothesis, nor the Spark layer."""
    code = (
        "import sys, assignors, assignors.metrics, assignors.consumer_protocol, assignors.rebalance, assignors.cli, "
        "assignors.consumer_group; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'pyspark', 'pandas', 'pyarrow', 'hypothesis', 'spark_udfs'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout  # noqa: S603
    assert out.strip() == "[]"


def _imported_modules(path: Path) -> set[str]:
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module)
    return imported


def test_layers_point_one_way() -> None:
    """No module of assignors imports spark_udfs (its commands come as entry points); submit.py imports only
    spark_udfs (and the standard library)."""
    source = Path(assignors.__file__).parent
    assert [
        str(path.relative_to(source))
        for path in sorted(source.rglob("*.py"))
        if any(name.split(".")[0] == "spark_udfs" for name in _imported_modules(path))
    ] == []
    submit = source.parent / "spark_udfs" / "submit.py"
    assert {name.split(".")[0] for name in _imported_modules(submit)} == {"sys", "spark_udfs"}


def test_builtin_assignors_satisfy_the_protocol() -> None:
    """Every built-in is a ConsumerPartitionAssignor with Kafka's name and protocols."""
    for name in assignors.assignor_names():
        assignor = assignors.get_assignor(name)
        assert isinstance(assignor, assignors.ConsumerPartitionAssignor)
        assert assignor.name == name
    assert assignors.get_assignor("cooperative-sticky").supported_protocols == (
        assignors.RebalanceProtocol.COOPERATIVE,
        assignors.RebalanceProtocol.EAGER,
    )


def _public_names(module: ModuleType) -> set[str]:
    """Names a user can import from ``module``: defined in this project (classes, functions, aliases, constants).

    Submodules, and names imported from the standard library or a third party (``Sequence``,
    ``dataclass``, ``annotations``, ``TYPE_CHECKING``...), are not part of its API.
    """
    root = module.__name__.split(".")[0]
    names = set()
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or inspect.ismodule(value) or name == "TYPE_CHECKING":
            continue
        origin = getattr(value, "__module__", None)
        alias = typing.get_origin(value) is not None  # Event = Join | Leave | ...: an alias defined here
        if origin is None or alias or origin.split(".")[0] == root:
            names.add(name)
    return names


@pytest.mark.parametrize(
    "name",
    [
        "spark_udfs",
        "spark_udfs.replay",
        "spark_udfs.tables.schemas",
        "assignors.rebalance",
        "assignors.testing",
        "assignors.tables",
    ],
)
def test_module_all_lists_its_public_names(name: str) -> None:
    """__all__ names every public attribute, and every name in it exists (ruff RUF022 keeps it sorted)."""
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported))
    assert [n for n in exported if not hasattr(module, n)] == []
    assert set(exported) == _public_names(module)


def test_spark_udfs_exports_the_documented_api_without_starting_spark() -> None:
    """`from spark_udfs import evaluate_history, register_udfs, get_session` needs no JVM and imports no pyspark."""
    code = (
        "import sys\n"
        "from spark_udfs import evaluate_history, register_udfs, get_session, SchemaError, SessionError\n"
        "assert all(callable(f) for f in (evaluate_history, register_udfs, get_session))\n"
        "assert issubclass(SchemaError, ValueError) and issubclass(SessionError, RuntimeError)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'pyspark', 'pandas', 'pyarrow', 'py4j'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout  # noqa: S603
    assert out.strip() == "[]"


def test_the_replay_split_keeps_every_import_path() -> None:
    """What spark_udfs.replay and spark_udfs.udfs exported before the split, they still export, as the same objects;
    the tables' columns are assignors.tables' own (one home)."""
    replay = importlib.import_module("spark_udfs.replay")
    udfs = importlib.import_module("spark_udfs.udfs")
    homes = {
        "assignors.tables": [
            "DETAIL_COLUMNS",
            "MEMBERSHIP_COLUMNS",
            "OUTPUT_COLUMNS",
            "TOPICS_COLUMNS",
            "WEIGHTS_COLUMNS",
        ],
        "spark_udfs.tables.schemas": ["ddl"],
        "spark_udfs.replay.group_replay": ["STRATEGIES", "GroupDataError", "MemberRow", "TopicHistory", "replay_group"],
        "spark_udfs.replay.frames": [
            "member_rows",
            "replay_frame",
            "replay_table",
            "rows_to_frame",
            "rows_to_table",
            "table_member_rows",
        ],
        "spark_udfs.replay.weights": ["WeightHistory"],
        "spark_udfs.replay.timing": ["PauseTiming"],
    }
    for home, names in homes.items():
        module = importlib.import_module(home)
        assert {n: getattr(replay, n) is getattr(module, n) for n in names} == dict.fromkeys(names, True)
    evaluation = importlib.import_module("spark_udfs.jobs.history")
    schemas = importlib.import_module("spark_udfs.tables.schemas")
    tables = importlib.import_module("assignors.tables")
    assert udfs.evaluate_history is evaluation.evaluate_history
    assert udfs.SchemaError is schemas.SchemaError
    assert udfs.ASSIGNMENT_TYPE is tables.ASSIGNMENT_TYPE
    assert importlib.import_module("assignors.offsets_topic").ACTUAL_COLUMNS is tables.ACTUAL_COLUMNS
