"""The documentation site builds with mkdocs --strict (a broken link, a missing page or a bad docstring fails)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="needs the docs dependency group")
pytest.importorskip("mkdocstrings", reason="needs the docs dependency group")

ROOT = Path(__file__).resolve().parents[2]


def test_docs_build_without_warnings(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(  # noqa: S603 - mkdocs of this interpreter, fixed arguments
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "WARNING" not in proc.stderr
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "Kafka" in index
    api = (tmp_path / "site" / "api" / "rebalance" / "index.html").read_text(encoding="utf-8")
    assert "run_round" in api  # mkdocstrings rendered the API from the docstrings
    benchmarks = (tmp_path / "site" / "benchmarks" / "index.html").read_text(encoding="utf-8")
    assert "Spark evaluation" in benchmarks  # RESULTS.md is included, not copied


def test_every_public_module_has_an_api_page() -> None:
    """The API reference covers each documented public module (mkdocs.yml's nav lists every page)."""
    import re

    pages = sorted((ROOT / "docs" / "api").glob("*.md"))
    rendered = {
        m for page in pages for m in re.findall(r"^::: ([\w.]+)$", page.read_text(encoding="utf-8"), re.MULTILINE)
    }
    public = {
        "assignors",
        "assignors.aiokafka",
        "assignors.cli",
        "assignors.consumer_group",
        "assignors.consumer_protocol",
        "assignors.kafka_python",
        "assignors.metrics",
        "assignors.offsets_topic",
        "assignors.rebalance",
        "assignors.testing",
        "spark_udfs",
    }
    assert public <= rendered
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [page.name for page in pages if f"api/{page.name}" not in nav] == []
