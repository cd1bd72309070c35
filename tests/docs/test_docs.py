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
