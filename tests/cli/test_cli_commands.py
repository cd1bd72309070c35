"""The ``assignors.commands`` entry points: the Spark commands are plugins the core never names."""

from __future__ import annotations

import argparse
import importlib.metadata
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import pytest

import assignors.cli
from assignors.cli import CliError, main

BLOCK_SPARK = "import sys; sys.modules.update(dict.fromkeys(['pyspark', 'pandas', 'pyarrow'])); "


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)  # noqa: S603


def test_help_lists_the_spark_commands_without_importing_spark() -> None:
    """Registering evaluate and demo imports neither pyspark, pandas nor pyarrow (all three blocked here)."""
    code = BLOCK_SPARK + (
        "from assignors.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit as e:\n    print('exit', e.code)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'pyspark', 'pandas', 'pyarrow'}"
        " and sys.modules[m]))"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert "{assign,simulate,collect,demo,evaluate}" in done.stdout
    assert done.stdout.rstrip().endswith("exit 0\n[]")
    assert done.stderr == ""


@pytest.mark.parametrize("command", [["evaluate", "--membership", "m", "--topics", "t", "--out", "o"], ["demo"]])
def test_a_missing_extra_is_one_line_naming_it(command: list[str]) -> None:
    done = _python(BLOCK_SPARK + f"from assignors.cli import main; sys.exit(main({command!r}))")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"assignors {command[0]}: error: this command needs the spark extra (pyspark is not installed):"
        " pip install 'assignors[spark]'\n"
    )


@dataclass
class FakeEntryPoint:
    name: str
    value: str
    target: Any

    def load(self) -> Any:
        if isinstance(self.target, Exception):
            raise self.target
        return self.target


def _register(name: str, calls: list[str]) -> Any:
    def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        calls.append(name)
        sub = subparsers.add_parser(name, help=f"the {name} command")
        sub.add_argument("--fail", action="store_true")
        sub.set_defaults(run=lambda args: _run(name, args))

    return register


def _run(name: str, args: argparse.Namespace) -> int:
    if args.fail:
        msg = f"{name} failed on purpose"
        raise CliError(msg)
    sys.stdout.write(f"ran {name}\n")
    return 7


def test_entry_points_register_in_name_order_and_a_broken_one_is_skipped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[str] = []
    found = [
        FakeEntryPoint("zeta", "pkg.z:register", _register("zeta", calls)),
        FakeEntryPoint("broken", "pkg.missing:register", ImportError("No module named 'pkg.missing'")),
        FakeEntryPoint("alpha", "pkg.a:register", _register("alpha", calls)),
    ]

    def entry_points(*, group: str) -> list[FakeEntryPoint]:
        assert group == "assignors.commands"
        return found

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    assert main(["zeta"]) == 7
    assert calls == ["alpha", "zeta"]
    assert capsys.readouterr().out == "ran zeta\n"
    assert "command 'broken' (pkg.missing:register) is not available: No module named 'pkg.missing'" in caplog.text
    assert main(["alpha", "--fail"]) == 2
    assert capsys.readouterr().err == "assignors alpha: error: alpha failed on purpose\n"


def test_installed_entry_points_are_the_spark_commands() -> None:
    from spark_udfs.cli import register_demo, register_evaluate

    registrars = assignors.cli.plugin_commands()
    assert register_demo in registrars
    assert register_evaluate in registrars


def test_submit_runs_the_spark_commands_without_entry_points(capsys: pytest.CaptureFixture[str]) -> None:
    from spark_udfs.cli import main as spark_main

    with pytest.raises(SystemExit) as exited:
        spark_main(["--help"])
    assert exited.value.code == 0
    assert "{assign,simulate,demo,evaluate}" in capsys.readouterr().out
