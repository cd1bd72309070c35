"""The public API: __all__ is exactly the public names; importing assignors pulls in no optional dependency."""

from __future__ import annotations

import subprocess
import sys

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
    }
    assert set(assignors.__all__) == public


def test_import_is_dependency_free() -> None:
    """`import assignors` imports none of pyspark, pandas, pyarrow or hypothesis."""
    code = (
        "import sys, assignors, assignors.metrics, assignors.consumer_protocol, assignors.rebalance, assignors.cli, "
        "assignors.consumer_group; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'pyspark', 'pandas', 'pyarrow', 'hypothesis'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout  # noqa: S603
    assert out.strip() == "[]"


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
