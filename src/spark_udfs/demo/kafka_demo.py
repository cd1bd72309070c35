"""``make kafka-demo``: a real Apache Kafka broker, real consumer groups, their own history collected and evaluated.

``python -m spark_udfs.demo.kafka_demo [--out DIR] [--classpath FILE]`` does what a user would do with their cluster,
on a local one:

1. starts a KRaft broker on 127.0.0.1 (:class:`assignors.testing.KafkaBroker`; ``--classpath`` names the jars
   ``make jvm`` listed, else ``KAFKA_HOME`` or Maven Central);
2. runs three real consumer groups, each member its own process (:class:`assignors.testing.MemberProcess`), through one
   scripted history: a, b and c join one at a time; b crashes (SIGKILL: the broker notices when its session times
   out); d and e join at once (a scale-out). The groups:

   - ``eager-range``: aiokafka with this project's ``range`` (the classic protocol, EAGER);
   - ``cooperative``: confluent-kafka with librdkafka's own ``cooperative-sticky`` (classic, COOPERATIVE);
   - ``kip848``: confluent-kafka with ``group.protocol=consumer`` (KIP-848), the broker's ``uniform`` assignor;

3. ``assignors collect --bootstrap-servers ...`` reads the broker's ``__consumer_offsets`` into ``DIR/history``;
4. ``assignors evaluate ... --actual DIR/history/actual --out DIR/report`` replays that history under every
   strategy beside what the cluster did, and writes ``DIR/report/report.html``.

What each group's members held after each step (as their rebalance listeners saw it and the broker described it)
goes to ``DIR/observed.json``. Every wait has a timeout; the broker and every member are stopped by their PIDs,
also when a step fails.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["GROUPS", "STEPS", "TOPICS", "main"]

TOPICS = {"orders": 6, "payments": 4}
"""The topics every group subscribes to, and their partition counts."""

GROUPS: dict[str, dict[str, str]] = {  # group -> the MemberSpec fields its members share
    # the classic protocol on a third client (kafka-python's adapter runs in tests/integration's real groups and
    # in collect's, with assignors.kafka_python.finish_joins against kafka-python 3.0's lost rebalance)
    "eager-range": {"client": "aiokafka", "strategy": "range"},
    "cooperative": {"client": "confluent", "strategy": "cooperative-sticky"},
    "kip848": {"client": "confluent", "remote_assignor": "uniform"},
}
STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("join", ("a",)),
    ("join", ("b",)),
    ("join", ("c",)),
    ("crash", ("b",)),
    ("join", ("d", "e")),
)
"""The scripted history, applied to every group at once: (what happens, to which members)."""

SESSION_TIMEOUT_MS = 3000
"""How soon the broker notices a crashed member (classic: the member's session; KIP-848: the broker's setting)."""
SETTLE_TIMEOUT_S = 60.0
COMMAND_TIMEOUT_S = 900.0
"""``collect`` and ``evaluate`` each (Spark's start-up and jobs take well under a minute on an idle machine)."""


@dataclass
class _Group:
    name: str
    members: dict[str, Any] = field(default_factory=dict)  # member name -> MemberProcess
    steps: list[dict[str, Any]] = field(default_factory=list)


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _require_clients() -> None:
    for module, extra in (("confluent_kafka", "collect"), ("aiokafka", "aiokafka"), ("pyspark", "spark")):
        try:
            __import__(module)
        except ImportError:
            msg = (
                f"the Kafka demo needs the {extra} extra ({module} is not installed): pip install 'assignors[{extra}]'"
            )
            raise SystemExit(msg) from None


def _classpath(listing: str | None) -> list[str] | None:
    """The jars ``make jvm`` listed (``jvm/target/kafka-VERSION/classpath.txt``), or None: KafkaBroker finds them."""
    if listing is None:
        return None
    path = Path(listing)
    if not path.is_file():
        msg = f"no {path}: run `make jvm` (it needs java and mvn), or leave out --classpath to fetch Kafka with Maven"
        raise SystemExit(msg)
    return [entry for entry in path.read_text(encoding="utf-8").strip().split(os.pathsep) if entry]


def _run(argv: list[str], what: str, timeout: float = COMMAND_TIMEOUT_S) -> str:
    """Run one ``assignors`` command in its own session, echoing it and its output; fail with its output.

    On the timeout its whole process group is killed (``evaluate``'s Spark JVM with it).
    """
    shown = " ".join(argv)
    _say(f"\n$ {shown}")
    process = subprocess.Popen(  # noqa: S603 - this interpreter and fixed arguments
        [sys.executable, "-m", "assignors", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        msg = f"{what} did not finish within {timeout:.0f} s: {shown}"
        raise RuntimeError(msg) from None
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    sys.stdout.write(stdout)
    sys.stdout.flush()
    if process.returncode != 0:
        msg = f"{what} failed (exit {process.returncode}): {shown}\n{stderr[-4000:]}"
        raise RuntimeError(msg)
    return stdout


def _what(kind: str, names: tuple[str, ...]) -> str:
    if kind == "crash":
        return f"{' and '.join(names)} crashes (SIGKILL)"
    return f"{' and '.join(names)} join" + ("s" if len(names) == 1 else "")


def _play(bootstrap: str, work: Path, admin: Any, groups: list[_Group]) -> None:
    """Apply each step to every group, then wait until every group settles (at most SETTLE_TIMEOUT_S each)."""
    from assignors.testing import MemberProcess, MemberSpec, settle_group

    for number, (kind, names) in enumerate(STEPS, 1):
        began = time.monotonic()
        for group in groups:
            for name in names:
                if kind == "join":
                    spec = MemberSpec(
                        f"{group.name}-{name}",
                        group=group.name,
                        topics=tuple(TOPICS),
                        session_timeout_ms=SESSION_TIMEOUT_MS,
                        **GROUPS[group.name],
                    )
                    group.members[name] = MemberProcess.launch(spec, bootstrap, work)
                else:
                    group.members[name].kill()
        for group in groups:
            held = settle_group(
                admin,
                group.name,
                list(group.members.values()),
                TOPICS,
                SETTLE_TIMEOUT_S,
                consumer_protocol="remote_assignor" in GROUPS[group.name],
            )
            name_of = {m.member_id: name for name, m in group.members.items() if m.alive()}
            group.steps.append(
                {
                    "step": number,
                    "what": _what(kind, names),
                    "members": {name_of[member_id]: held[member_id] for member_id in held},
                    "member_ids": {name_of[member_id]: member_id for member_id in held},
                }
            )
        seconds = time.monotonic() - began
        _say(f"step {number}: {_what(kind, names):<22} all {len(groups)} groups settled in {seconds:.1f} s")


def _stop_members(groups: list[_Group]) -> None:
    for group in groups:
        for member in group.members.values():
            if member.alive():
                member.kill()


def demo(out: Path, classpath: list[str] | None) -> dict[str, Path]:
    """Run the demo into ``out``; returns the files it wrote, by what they are."""
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    from assignors.testing import KafkaBroker

    out.mkdir(parents=True, exist_ok=True)
    for previous in ("history", "report", "members"):  # this demo's own folders, from an earlier run
        shutil.rmtree(out / previous, ignore_errors=True)
    history, report = out / "history", out / "report"
    groups = [_Group(name) for name in GROUPS]
    broker = KafkaBroker(classpath=classpath, config={"group.consumer.session.timeout.ms": SESSION_TIMEOUT_MS})
    _say("starting Apache Kafka (KRaft, one broker) on 127.0.0.1 ...")
    with broker:
        _say(f"Kafka {broker.version} answers on {broker.bootstrap_servers} after {broker.startup_seconds:.1f} s")
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers, "log_level": 3})
        try:
            for future in admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()]).values():
                future.result(60)
            listed = ", ".join(f"{t} ({n} partitions)" for t, n in TOPICS.items())
            _say(f"topics {listed}; groups: " + "; ".join(f"{g} ({_describe(GROUPS[g])})" for g in GROUPS))
            _play(broker.bootstrap_servers, out / "members", admin, groups)
            # collected while the members still run: the history is the script's, not their shutdown
            _run(["collect", "--bootstrap-servers", broker.bootstrap_servers, "--out", str(history)], "collect")
        finally:
            _stop_members(groups)
            del admin  # its client stops now, not when the broker is gone (it would log every failed reconnect)
    observed = out / "observed.json"
    observed.write_text(json.dumps({g.name: g.steps for g in groups}, indent=2) + "\n", encoding="utf-8")
    tables = [word for name in ("membership", "topics", "actual") for word in (f"--{name}", str(history / name))]
    _run(["evaluate", *tables, "--out", str(report)], "evaluate")
    return {
        "the tables of assignors collect (membership, actual, topics)": history,
        "the report (open it in a browser)": report / "report.html",
        "the evaluation and the self-check, as Parquet": report,
        "what each member held after each step": observed,
        "each member's log: its rebalance listener's calls, one JSON line each": out / "members",
    }


def _describe(fields: dict[str, str]) -> str:
    if "remote_assignor" in fields:
        return f"KIP-848, {fields['remote_assignor']}"
    owner = "ours" if fields["client"] != "confluent" else "librdkafka's"
    return f"{fields['client']}, {owner} {fields['strategy']}"


def _exit_on_sigterm(_signal: int, _frame: Any) -> None:
    """SIGTERM raises SystemExit, so the broker and the members are stopped on the way out."""
    sys.exit(128 + signal.SIGTERM)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; print where its output went."""
    parser = argparse.ArgumentParser(prog="python -m spark_udfs.demo.kafka_demo", description=main.__doc__)
    parser.add_argument("--out", default="kafka-demo-output", help="output directory (default: kafka-demo-output)")
    parser.add_argument(
        "--classpath",
        help="a file listing Kafka's jars (make jvm writes jvm/target/kafka-VERSION/classpath.txt); "
        "default: $KAFKA_HOME, else Maven Central",
    )
    args = parser.parse_args(argv)
    _require_clients()
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    began = time.monotonic()
    written = demo(Path(args.out), _classpath(args.classpath))
    _say(f"\nkafka-demo done in {time.monotonic() - began:.0f} s; wrote:")
    for what, path in written.items():
        _say(f"  {path}: {what}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
