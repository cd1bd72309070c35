"""``import assignors`` needs nothing outside the standard library: every module, the kit behind the ``testing``
extra (``assignors.testing``) included, imports with pyspark, pandas, pyarrow and Hypothesis missing; the kit says
what it needs when a strategy, a state machine or the battery is built.

Each check runs in a fresh interpreter where those four packages cannot be imported. The clients an adapter or
``collect`` drives (kafka-python, aiokafka, confluent-kafka) are imported where they are used and stay importable
here: this test is about the evaluation's and the kit's packages.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

BLOCKED = ("pyspark", "pandas", "pyarrow", "hypothesis")

_SCRIPT = """
import importlib, json, pkgutil, sys

class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is blocked")
        return None

sys.meta_path.insert(0, Blocked())
import assignors

failed = {}
for module in pkgutil.walk_packages(assignors.__path__, "assignors."):
    name = module.name
    if name == "assignors.__main__":
        continue
    try:
        importlib.import_module(name)
    except ImportError as error:
        failed[name] = str(error)
import assignors.testing

kit = {}
for builder in ("clusters", "groups", "topic_names", "event_sequences", "group_state_machine", "check_assignor"):
    arguments = (assignors.RangeAssignor(),) if builder in ("group_state_machine", "check_assignor") else ()
    try:
        getattr(assignors.testing, builder)(*arguments)
        kit[builder] = "built"
    except ImportError as error:
        kit[builder] = str(error)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(json.dumps({"failed": failed, "kit": kit, "loaded": loaded}))
"""


def _run() -> dict[str, object]:
    script = f"BLOCKED = {BLOCKED!r}\n{_SCRIPT}"
    done = subprocess.run(  # noqa: S603 - this interpreter, this test's own script
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_every_module_imports_without_the_optional_packages() -> None:
    result = _run()
    assert result["failed"] == {}  # e.g. a module importing Hypothesis at module level
    assert result["loaded"] == []
    # the blocker works: each of the kit's builders says what it needs
    assert result["kit"] == dict.fromkeys(
        ("clusters", "groups", "topic_names", "event_sequences", "group_state_machine", "check_assignor"),
        "assignors.testing needs Hypothesis: pip install 'assignors[testing]'",
    )


def test_no_module_imports_an_optional_package_outside_a_function() -> None:
    """Not even for type checking or behind a try: each import of pyspark, pandas, pyarrow or Hypothesis in
    ``src/assignors`` runs only when the function that needs it does."""
    found = []
    for path in sorted((Path(__file__).resolve().parents[2] / "src" / "assignors").rglob("*.py")):
        pending: list[tuple[ast.AST, bool]] = [(ast.parse(path.read_text(encoding="utf-8")), False)]
        while pending:
            node, in_function = pending.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.Import | ast.ImportFrom) and not in_function:
                    names = [a.name for a in child.names] if isinstance(child, ast.Import) else [child.module or ""]
                    found += [f"{path.name}:{child.lineno} {n}" for n in names if n.split(".")[0] in BLOCKED]
                nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                pending.append((child, in_function or nested))
    assert found == []
