"""The standalone-cluster recipe that docs/spark.md and the README show, as the steps the cluster test runs.

:func:`steps` is the one source of the recipe. Rendered with :data:`DOCUMENTED` places it is the pages' text:
tests/docs/test_cluster_recipe.py parses both pages' blocks with :func:`parse` and compares them with it step by
step. Rendered with the test's own places it is what tests/spark/session/test_cluster.py runs, in order: its own Python,
free loopback ports, virtualenvs and data under ``tmp_path``, and pandas, pyarrow and plotly pinned to the test
environment's versions (so that pip's cache serves them) where the pages give the ``spark`` extra's ranges. Only
what :class:`Places` names differs between the two.

:func:`parse` reads the small shell the pages use: ``\\`` continuations, ``#`` comments, ``&&``, a trailing ``&``
(a background process), ``export NAME=VALUE ...`` and ``NAME=VALUE`` prefixes. Nothing here needs more than the
standard library, so the pages' check runs in the core suite too.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

# docs/spark.md writes SPARK_HOME as the pyspark package's directory; the test checks the command prints that.
SPARK_HOME_COMMAND = "python3 -c 'import pyspark, os; print(os.path.dirname(pyspark.__file__))'"
EXECUTOR_PACKAGES = ("pandas", "pyarrow")  # the pandas UDFs
DRIVER_PACKAGES = (*EXECUTOR_PACKAGES, "plotly")  # and the report, which the driver writes
STRATEGIES = ("range", "sticky", "cooperative-sticky")
LOOPBACK = "127.0.0.1"


def _spark_extra() -> dict[str, str]:
    """The ``spark`` extra's requirements by package name: the virtualenvs get the versions the extra allows."""
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    requirements: list[str] = pyproject["project"]["optional-dependencies"]["spark"]
    return {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower(): r for r in requirements}


SPARK_EXTRA = _spark_extra()


@dataclass(frozen=True)
class Step:
    """One command: ``argv`` run with ``env`` before it; ``argv == ()`` is ``export`` of ``env``."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    background: bool = False

    def option(self, name: str) -> str:
        """The value after ``name`` in ``argv`` (e.g. a launcher's ``--port``)."""
        return self.argv[self.argv.index(name) + 1]


@dataclass(frozen=True)
class Worker:
    port: int
    webui_port: int
    work_dir: str


@dataclass(frozen=True)
class Places:
    """What differs between a reader's loopback cluster and the test's."""

    python: str = "python3"
    spark_home_value: str = f"$({SPARK_HOME_COMMAND})"  # what ``export SPARK_HOME=`` gets
    spark_home: str = "$SPARK_HOME"  # how the commands after it name it
    executors: str = "/opt/assignors-executors"
    driver: str = "/opt/assignors-driver"
    master_port: int = 7077
    master_webui_port: int = 8080
    workers: tuple[Worker, ...] = (
        Worker(7078, 8081, "/tmp/spark-worker-0"),  # noqa: S108 - the documented example's work directories
        Worker(7079, 8082, "/tmp/spark-worker-1"),  # noqa: S108
    )
    wheel_dir: str = "dist"
    version: str = "0.1.0"
    data: str = "file:///shared"  # the history under DATA/history, the evaluation written to DATA/eval
    pins: Mapping[str, str] = field(default_factory=dict)  # package -> version, for the test's pip cache

    @property
    def master_url(self) -> str:
        return f"spark://{LOOPBACK}:{self.master_port}"

    @property
    def wheel(self) -> str:
        return f"{self.wheel_dir}/assignors-{self.version}-py3-none-any.whl"

    def requirement(self, package: str) -> str:
        """The test's pinned version, else the range the ``spark`` extra allows."""
        return f"{package}=={self.pins[package]}" if package in self.pins else SPARK_EXTRA[package]


DOCUMENTED = Places()


def steps(places: Places) -> list[Step]:
    """The recipe, in order: build the wheel, two virtualenvs, the environment, a master, two workers, submit."""
    p = places
    spark_class = f"{p.spark_home}/bin/spark-class"
    recipe = [Step((p.python, "-m", "pip", "wheel", "--no-deps", "-w", p.wheel_dir, "."))]
    for where, packages in ((p.executors, EXECUTOR_PACKAGES), (p.driver, DRIVER_PACKAGES)):
        recipe.append(Step((p.python, "-m", "venv", where)))
        recipe.append(Step((f"{where}/bin/pip", "install", *map(p.requirement, packages))))
    recipe.append(Step((), (("SPARK_HOME", p.spark_home_value),)))
    recipe.append(
        Step((), (("PYSPARK_PYTHON", f"{p.executors}/bin/python"), ("SPARK_LOCAL_IP", LOOPBACK),
                  ("SPARK_LOCAL_HOSTNAME", "localhost")))
    )  # fmt: skip
    master = (spark_class, "org.apache.spark.deploy.master.Master",
              "--host", LOOPBACK, "--port", str(p.master_port), "--webui-port", str(p.master_webui_port))  # fmt: skip
    recipe.append(Step(master, background=True))
    for w in p.workers:
        worker = (spark_class, "org.apache.spark.deploy.worker.Worker",
                  "--host", LOOPBACK, "--port", str(w.port), "--webui-port", str(w.webui_port),
                  "--cores", "1", "--memory", "1g", "--work-dir", w.work_dir, p.master_url)  # fmt: skip
        recipe.append(Step(worker, background=True))
    submit = (f"{p.spark_home}/bin/spark-submit", "--master", p.master_url,
              "--conf", f"spark.driver.host={LOOPBACK}",
              "--conf", f"spark.pyspark.python={p.executors}/bin/python",
              "--conf", f"spark.pyspark.driver.python={p.driver}/bin/python",
              "--executor-memory", "768m",
              "--py-files", p.wheel,
              "src/spark_udfs/submit.py", "evaluate",
              "--membership", f"{p.data}/history/membership", "--topics", f"{p.data}/history/topics",
              "--out", f"{p.data}/eval", "--strategies", *STRATEGIES)  # fmt: skip
    recipe.append(Step(submit, (("PYSPARK_DRIVER_PYTHON", f"{p.driver}/bin/python"),)))
    return recipe


def logical_lines(block: str) -> list[str]:
    """A shell block's lines with ``\\``-continuations joined, blank lines left out."""
    return [line for line in re.sub(r"\\\n\s*", " ", block).split("\n") if line.strip()]  # a shell's lines


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _assignment(word: str) -> tuple[str, str]:
    name, _, value = word.partition("=")
    return name, value


def _step(command: list[str], background: bool, line: str) -> Step:
    """One simple command: ``export NAME=VALUE ...``, or ``NAME=VALUE ... argv``."""
    if command[0] == "export":
        if not all(map(_ASSIGNMENT.match, command[1:])):
            msg = f"export without a value: {line!r}"
            raise ValueError(msg)
        return Step((), tuple(map(_assignment, command[1:])))
    prefix = 0
    while prefix < len(command) and _ASSIGNMENT.match(command[prefix]):
        prefix += 1
    if prefix == len(command):
        msg = f"assignments without a command: {line!r}"
        raise ValueError(msg)
    return Step(tuple(command[prefix:]), tuple(map(_assignment, command[:prefix])), background)


def parse(block: str) -> list[Step]:
    """The steps of a shell block written in the pages' small shell (see the module docstring).

    Anything else a shell would read differently raises ``ValueError`` naming the line: ``&&`` before a trailing
    ``&`` (a shell backgrounds the whole list), ``export`` of a name without a value, or an empty command.
    """
    parsed: list[Step] = []
    for line in logical_lines(block):
        words = shlex.split(line, comments=True)
        if not words:
            continue
        background = words[-1] == "&"
        commands: list[list[str]] = [[]]
        for word in words[:-1] if background else words:
            if word == "&&":
                commands.append([])
            else:
                commands[-1].append(word)
        if (background and len(commands) > 1) or not all(commands):
            msg = f"not in the small shell this reads: {line!r}"
            raise ValueError(msg)
        parsed += [_step(command, background, line) for command in commands]
    return parsed


def render(recipe: list[Step]) -> str:
    """Shell text of ``recipe``, one line a step, that :func:`parse` reads back."""
    lines = []
    for step in recipe:
        env = [f"{name}={shlex.quote(value)}" for name, value in step.env]
        if not step.argv:
            lines.append(" ".join(["export", *env]))
        else:
            lines.append(" ".join([*env, shlex.join(step.argv), *(["&"] if step.background else [])]))
    return "\n".join(lines) + "\n"
