"""The real groups' member processes, without a broker: what a timeout's message shows of a stuck member."""

from __future__ import annotations

import sys
from pathlib import Path

from assignors._groups.member_process import STACKS_SIGNAL
from assignors.testing._groups import MemberProcess, MemberSpec, wait_for
from assignors.testing._process import start

STUCK = f"""
import faulthandler, signal, time
faulthandler.register(signal.{STACKS_SIGNAL.name}, all_threads=True)
print("ready", flush=True)
def waiting_for_a_sync_group():
    time.sleep(60)
waiting_for_a_sync_group()
"""


def test_a_live_members_stacks_name_where_it_waits(tmp_path: Path) -> None:
    spec = MemberSpec("a", client="kafka-python", group="g", topics=("t",))
    process = start("member-a", [sys.executable, "-c", STUCK], tmp_path)
    member = MemberProcess(spec, process, tmp_path / "a.control")
    try:
        wait_for(lambda: "ready" in process.log.read_text(encoding="utf-8"), 30, "the member process to start")
        stacks = member.stacks()
        assert "waiting_for_a_sync_group" in stacks
        assert "ready" not in stacks  # only what it wrote after the signal
    finally:
        member.kill()
    assert member.stacks() == ""  # a member that is not alive has none
