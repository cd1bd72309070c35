"""The README's code runs: every block is executed or its commands are checked, and every link resolves.

What each test does with a command that cannot run inside a unit test is said in its docstring: `pip install`
would fetch from the package index, `make test` would run this suite inside itself, and `make demo` runs at full
size in minutes (tests/spark/demo/test_readme_demo.py runs the same `assignors demo` command on a small history).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

from assignors.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"^```(\w*)\n(.*?)^```", README, flags=re.MULTILINE | re.DOTALL)
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCKS if lang == language]


def _is_cluster_recipe(block: str) -> bool:
    """The standalone-cluster block, which tests/docs/test_cluster_recipe.py compares with the cluster test's steps."""
    return "spark-submit" in block


def _commands(language: str = "sh") -> list[list[str]]:
    """Each command line of the README's other shell blocks, comments stripped, split as a shell would."""
    blocks = [body for body in _blocks(language) if not _is_cluster_recipe(body)]
    return [shlex.split(line, comments=True) for body in blocks for line in body.splitlines() if line]


def test_every_block_is_one_this_file_checks() -> None:
    """A new kind of block (say ``json`` or ``console``) needs its own check here before the README can show it."""
    assert {lang for lang, _ in BLOCKS} == {"sh", "python"}
    assert sum(map(_is_cluster_recipe, _blocks("sh"))) == 1
    assert {tuple(c[:2]) for c in _commands()} == {
        ("pip", "install"),
        ("make", "demo"),
        ("make", "test"),
        ("assignors", "collect"),
        ("assignors", "evaluate"),
    }


def test_the_cluster_history_commands_are_the_ones_run_on_a_real_broker() -> None:
    """The README's ``assignors collect`` / ``evaluate --actual`` lines are docs/cluster-history.md's, word for word.

    tests/spark/report/test_report_cluster_history.py runs that page's two commands as written, against a real Kafka
    broker (assignors.testing.KafkaBroker) and a local Spark session, and checks the tables and the report they
    write.
    """
    page = (ROOT / "docs" / "cluster-history.md").read_text(encoding="utf-8")
    shown = [c for c in _commands() if c[0] == "assignors"]
    assert [c[1] for c in shown] == ["collect", "evaluate"]
    assert all(shlex.join(c) in page for c in shown)


@pytest.mark.parametrize("block", _blocks("python"))
def test_python_examples_print_what_their_comments_say(block: str) -> None:
    """Each example runs as it is, and what it prints is exactly the ``# ...`` line under each ``print``."""
    lines = block.splitlines()
    expected = [
        following.removeprefix("# ")
        for line, following in itertools.pairwise(lines)
        if line.startswith("print(") and following.startswith("# ")
    ]
    assert len(expected) == sum(line.startswith("print(") for line in lines)  # every print has its output shown
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - the README's own example
    assert out.getvalue().splitlines() == expected


def test_install_lines_name_the_project_and_its_extras() -> None:
    """Each ``pip install`` line names this project, bare or with one extra that pyproject.toml defines.

    Not run: it would download the published package from the index. What the comment promises is checked
    instead: the module is in the package, or the command is one of its entry points.
    """
    extras = PYPROJECT["project"]["optional-dependencies"]
    commands = set(PYPROJECT["project"]["entry-points"]["assignors.commands"])
    installs = [c for c in _commands() if c[:2] == ["pip", "install"]]
    named = [c[2] for c in installs]
    assert named[0] == "assignors"
    assert PYPROJECT["project"]["dependencies"] == []  # the bare install: the standard library only
    shown = {re.fullmatch(r"assignors\[([\w-]+)\]", name).group(1) for name in named[1:]}  # type: ignore[union-attr]
    assert shown == {"testing", "spark", "collect", "kafka-python", "aiokafka"}
    assert shown <= set(extras)
    modules = {
        "testing": "assignors.testing",
        "kafka-python": "assignors.kafka_python",
        "aiokafka": "assignors.aiokafka",
    }
    assert [m for m in modules.values() if importlib.util.find_spec(m) is None] == []
    assert {"evaluate", "demo", "collect"} <= commands  # the spark and collect lines' commands


@pytest.mark.parametrize(
    ("target", "recipe"),
    [
        ("demo", ["assignors demo --out demo-output"]),
        ("test", ["ruff check src tests benchmarks", "ruff format --check", "mypy", "pytest -n 2", "-m integration"]),
        ("docs", ["mkdocs build --strict"]),
        ("bench", ["python -m benchmarks"]),
        ("cluster", ["pytest -m cluster"]),
        ("kafka-demo", ["-m spark_udfs.demo.kafka_demo --classpath jvm/target/kafka-", "--out kafka-demo-output"]),
        ("calibrate", ["-m calibration"]),
    ],
)
def test_make_targets_run_what_the_readme_says(tmp_path: Path, target: str, recipe: list[str]) -> None:
    """``make -n TARGET`` (print, do not run) shows the commands the README promises.

    ``make test`` itself would run this suite inside itself; ``make demo`` evaluates 300 groups on Spark for
    minutes, and tests/spark/demo/test_readme_demo.py runs its ``assignors demo`` on a small history instead.
    ``make kafka-demo`` runs in tests/integration/test_kafka_demo.py (it needs Kafka's jars and a broker);
    ``make cluster`` is CI's step after ``make test`` (.ci/run).
    """
    venv = tmp_path / "venv"  # absent: make prints how it would create it, and creates nothing
    done = subprocess.run(  # noqa: S603 - make, fixed arguments
        ["make", "-n", target, f"VENV={venv}"],  # noqa: S607 - make from PATH, as the README says
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert [part for part in recipe if part not in done.stdout] == []
    assert not venv.exists()


def test_every_make_target_the_readme_names_is_checked_here() -> None:
    """Each ``make TARGET`` the README quotes is one whose recipe the test above compares with the README."""
    named = set(re.findall(r"`make ([a-z-]+)`", README)) | {c[1] for c in _commands() if c[0] == "make"}
    checked = {"demo", "test", "docs", "bench", "kafka-demo", "cluster", "calibrate"}
    assert named <= checked, named - checked


def _inline_commands() -> list[list[str]]:
    """The ``assignors ...`` commands the README quotes inline, split into words."""
    return [shlex.split(span) for span in re.findall(r"`(assignors [a-z][^`]*)`", README)]


@pytest.mark.parametrize("command", _inline_commands(), ids=" ".join)
def test_inline_commands_and_their_options_exist(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Each quoted ``assignors COMMAND --option`` is a command whose ``--help`` lists that option.

    ``--help`` only: collecting needs a Kafka cluster (tests/integration/test_collect.py runs it on librdkafka's
    mock cluster) and evaluating needs Spark (tests/spark runs it on a local session and over Spark Connect).
    """
    with pytest.raises(SystemExit) as done:
        main([command[1], "--help"])
    assert done.value.code == 0
    usage = capsys.readouterr().out
    assert [option for option in command[2:] if option.startswith("--") and option not in usage] == []


def test_remote_option_takes_a_spark_connect_url(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's ``--remote sc://host:15002`` is evaluate's option for a Spark Connect server."""
    assert "`--remote sc://host:15002`" in README
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert re.search(r"--remote REMOTE\s+a Spark Connect server, sc://HOST:PORT", capsys.readouterr().out)


def test_every_relative_link_resolves() -> None:
    """Links to files and to headings of the docs pages (GitHub's anchors) point at something that exists."""
    broken = []
    for target in re.findall(r"\]\(([^)#:]+)(#[^)]*)?\)", README):
        path, anchor = target
        page = ROOT / path
        if not page.exists():
            broken.append(path)
        elif anchor:
            headings = re.findall(r"^#+ (.*)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
            anchors = {"#" + re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
            if anchor not in anchors:
                broken.append(path + anchor)
    assert broken == []


def test_the_readme_is_a_landing_page() -> None:
    """About 150 lines at most, and no speed figure: those are quoted in benchmarks/RESULTS.md alone."""
    assert len(README.splitlines()) <= 160
    assert re.findall(r"\d+(?:\.\d+)? ?(?:ms|s|MB|GB)\b|evaluations per second|\d+x\b", README) == []
    assert "benchmarks/RESULTS.md" in README
