"""Same input, same output across interpreters: no assignor depends on the hash seed (set or dict order of strings)."""

from __future__ import annotations

import os
import subprocess
import sys

# Mixed subscriptions, static members, racks and a second round with owned partitions and departures:
# every assignor's paths that could iterate a set of strings.
SCRIPT = """
import json
from assignors import Cluster, Subscription, TopicPartition, get_assignor

topics = {f"topic-{chr(97 + i)}{i * 7}": 3 + (i * 5) % 11 for i in range(12)}
names = sorted(topics)
racks = {TopicPartition(t, p): [f"rack-{(p + i) % 3}", f"rack-{(p + i + 1) % 3}"]
         for i, t in enumerate(names) for p in range(topics[t]) if i % 3}
cluster = Cluster(topics, partition_racks=racks)
members = {}
for m in range(30):
    chosen = [t for i, t in enumerate(names) if (i * 7 + m) % 4 != 0]
    members[f"member-{m * 37 % 101}-x"] = Subscription(
        chosen, rack_id=f"rack-{m % 3}" if m % 5 else None, group_instance_id=f"host-{m}" if m % 4 == 0 else None)
out = {}
for name in ("range", "roundrobin", "sticky", "cooperative-sticky"):
    first = get_assignor(name).assign(cluster, members)
    again = {m: Subscription(s.topics, owned_partitions=first[m].partitions, generation_id=1, rack_id=s.rack_id,
                             group_instance_id=s.group_instance_id)
             for i, (m, s) in enumerate(sorted(members.items())) if i % 6}
    second = get_assignor(name).assign(cluster, again)
    out[name] = [{m: [str(tp) for tp in a.partitions] for m, a in r.items()} for r in (first, second)]
print(json.dumps(out, sort_keys=True))
"""


def run_with_seed(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    proc = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True, timeout=120
    )
    return proc.stdout


def test_assignments_do_not_depend_on_the_hash_seed() -> None:
    outputs = {seed: run_with_seed(seed) for seed in ("0", "1", "4242")}
    assert len(outputs["0"]) > 1000  # the script really printed the assignments
    assert outputs["1"] == outputs["0"]
    assert outputs["4242"] == outputs["0"]
