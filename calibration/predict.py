"""The same history through the product: the scenario's membership table replayed, then priced.

The membership table of a run is one snapshot per settled step: the members present (their member id as the
coordinator gave it, their ``group.instance.id``, their topics) and each topic's partition count. It is replayed
as ``assignors evaluate`` replays a group (``spark_udfs``' per-group replay, whose engine this calls the same way):
each strategy carries its last assignment and generation from one snapshot to the next, the classic ones through
:func:`assignors.rebalance.rebalance` under their own protocol, KIP-848's server assignors through
:func:`assignors.consumer_group.rebalance_target`; a member's identity is its ``group.instance.id`` when set, else
its member id; a snapshot that changes nothing does not rebalance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assignors import Cluster, RebalanceProtocol, Subscription, TopicPartition, get_assignor
from assignors.consumer_group import STRATEGIES as SERVER_STRATEGIES
from assignors.consumer_group import CoordinatorTable, ServerAssignor, rebalance_target, server_assignor
from assignors.kafka_java import DIFFERENT_FROM_OURS, java_assignor
from assignors.metrics import (
    Movement,
    PauseModel,
    movement,
    pause_partition_seconds,
    rebalance_pause,
    rejoined_partitions,
    restart_pause,
)
from assignors.rebalance import preferred_protocol, rebalance

__all__ = ["Predicted", "predict"]


@dataclass(frozen=True)
class Predicted:
    """One step of one strategy as the evaluation predicts it."""

    index: int
    rebalanced: bool
    moved: int
    orphaned: int
    revoked: int
    rounds: int
    survivors_owned: int
    pause_before: float
    """Today's constants (``pause_partition_seconds`` with R = H = 5 s)."""
    pause_after: float
    """The calibrated model (:class:`assignors.metrics.PauseModel` at the run's settings)."""
    same_assignment: bool | None
    """Whether the replay's assignment is the group's own after the step (by member), None when not comparable."""
    rebalances: int = 0
    """How many rebalances the step was priced as (two for a change that removes and adds members)."""
    pause_survivors: float = 0.0
    """Of ``pause_after``, the part of the partitions the survivors held (neither orphaned nor restarted)."""


def _label(name: str) -> tuple[str, RebalanceProtocol]:
    if name in SERVER_STRATEGIES:
        return "CONSUMER", RebalanceProtocol.COOPERATIVE
    protocol = preferred_protocol(get_assignor(name))
    return protocol.name, protocol


def _phases(
    identities: Mapping[str, str], before: Mapping[str, Any], previous_key: tuple[Any, ...] | None
) -> list[set[str]]:
    """The member ids of each rebalance one snapshot change is to the broker: a change that both removes and adds
    members (a deploy wave) is two, the leaves landing first (a LeaveGroup reaches the coordinator at once, a new
    member's JoinGroup after its start-up): the survivors' rebalance, then everyone's; any other change is one."""
    everyone = set(identities)
    if previous_key is None or not before:
        return [everyone]
    departed = any(identity not in set(identities.values()) for identity in before)
    survivors = {m for m, identity in identities.items() if identity in before}
    if departed and survivors and survivors != everyone:
        return [survivors, everyone]
    return [everyone]


def predict(  # noqa: C901, PLR0912, PLR0915 - one replay
    run: Mapping[str, Any], model: PauseModel, *, sequence: bool = False, kafka_jars: Sequence[str] | None = None
) -> list[Predicted]:
    """Every measured step of ``run`` (``GroupRun.to_json()``) as the product predicts it.

    Each snapshot change is one rebalance, as ``assignors evaluate`` replays a membership table. With ``sequence``
    a change that removes and adds members is replayed and priced as two rebalances, the leaves then the joins
    (:func:`_phases`): on the runs so far that scored 38 of 64 rows within 25% and 55 of 64 rows' moved and revoked
    equal, against 37 and 57 for one rebalance (the broker merges a wave's leaves and joins into one rebalance in
    some runs and not in others), so the evaluation keeps one. The
    members whose subscription changed started the rebalance themselves (``rebalance_pause``'s ``rejoined``). A
    static member that stopped and came back within the step (the same ``group.instance.id``, no membership change)
    is priced by :func:`assignors.metrics.restart_pause` for the seconds it was down.
    """
    name = str(run["product"])
    label, protocol = _label(name)
    assignor: Any = server_assignor(name) if name in SERVER_STRATEGIES else get_assignor(name)
    java_group = str(run.get("strategy", "")).startswith("java ")
    if kafka_jars and java_group and name in DIFFERENT_FROM_OURS:  # a Java group runs Kafka's own class: replay that
        assignor = java_assignor(name, kafka_jars)
    previous: dict[str, tuple[TopicPartition, ...]] | None = None
    received: dict[str, Any] = {}
    table = CoordinatorTable()  # the coordinator's table of members, followed through the steps (uniform's order)
    generation = -1
    previous_key: tuple[Any, ...] | None = None
    out: list[Predicted] = []
    measured = 0
    crashed_by_step = [set(step.get("crashed", ())) for step in run["steps"]]
    topics_before: dict[str, tuple[str, ...]] = {}
    for index, step in enumerate(run["steps"]):
        members: Mapping[str, Mapping[str, Any]] = step["members"]
        counts = {str(t): int(n) for t, n in step["counts"].items()}
        identities = {}
        subscriptions = {}
        for member_name, member in sorted(members.items()):
            member_id = str(member["member_id"] or member_name)
            identity = str(member["instance"] or member_id)
            identities[member_id] = identity
            subscriptions[member_id] = Subscription(member["topics"], group_instance_id=member["instance"] or None)
        key = (
            tuple(sorted((identity, tuple(subscriptions[m].topics)) for m, identity in identities.items())),
            tuple(sorted(counts.items())),
        )
        ids = run.get("topic_ids") or {}  # the broker's topic ids: the uniform replay's topic order is the broker's
        cluster = Cluster(counts, topic_ids={t: str(ids[t]) for t in counts if t in ids})
        rebalanced = key != previous_key
        before = previous or {}
        priced: list[tuple[Movement, int]] = []  # per rebalance: its movement, and the partitions rejoined
        rounds = 0
        topics_now = {identity: tuple(subscriptions[m].topics) for m, identity in identities.items()}
        if rebalanced:
            held_before = dict(before)
            for phase in _phases(identities, before, previous_key) if sequence else [set(identities)]:
                subs = {m: subscriptions[m] for m in sorted(phase)}
                if isinstance(assignor, ServerAssignor):
                    owned = {m: held_before.get(identities[m], ()) for m in subs}
                    target = rebalance_target(assignor, cluster, subs, owned, generation=generation, coordinator=table)
                    result_assignment, generation = target.assignment, target.generation
                    rounds += target.heartbeats
                else:
                    held = {m: received.get(identities[m], ()) for m in subs}
                    result = rebalance(assignor, cluster, subs, held, generation=generation, protocol=protocol)
                    result_assignment, generation = result.assignment, result.generation
                    rounds += len(result.rounds)
                    received = {identities[m]: result_assignment[m] for m in subs}
                phase_after = {identities[m]: tuple(result_assignment[m].partitions) for m in subs}
                step_moves = movement(held_before, phase_after, members_after=phase_after.keys())
                # the members whose subscription changed rejoin on their own (the leader, when a count changed)
                rejoined = rejoined_partitions(label, held_before, phase_after, topics_before, topics_now)
                priced.append((step_moves, rejoined if not priced else 0))
                held_before = phase_after
            after = held_before
        else:
            after = dict(before)
        previous_key = key
        previous = after
        topics_before = topics_now
        if not step["measured"]:
            continue
        measured += 1
        first = not before
        moves = movement(before, after, members_after=after.keys())
        survivors_owned = moves.revoked(RebalanceProtocol.EAGER)
        crashed = crashed_by_step[index]
        gone = [identity for identity in before if identity not in after]
        # which departed identities crashed: the run knows its members' names; map them through the last snapshot
        last_names = _names(run["steps"][index - 1]) if index else {}
        crashed_orphans = sum(len(before[i]) for i in gone if last_names.get(i) in crashed)
        restarted, downtime = _restarts(run, index, before)
        restart = restart_pause(model, restarted=restarted, downtime_seconds=downtime / restarted) if restarted else 0.0
        pause_survivors = 0.0
        if first or not rebalanced:
            pause_before = 0.0
            pause_after = restart if not first else 0.0
            moved = orphaned = revoked_count = 0
        else:
            moved, orphaned = moves.moved, moves.orphaned
            revoked_count = sum(moves_of.revoked(protocol) for moves_of, _ in priced)
            pause_before = pause_partition_seconds(label, moved=moved, survivors_owned=survivors_owned)
            pause_after = restart
            for number, (moves_of, phase_rejoined) in enumerate(priced):
                lost = crashed_orphans if number == 0 else 0
                phase_survivors = moves_of.revoked(RebalanceProtocol.EAGER)
                survivors_part = {
                    "moved": moves_of.moved,
                    "survivors_owned": phase_survivors,
                    "rejoined": min(phase_rejoined, phase_survivors),
                    "retained_revoking": moves_of.retained_revoking,
                }
                pause_survivors += rebalance_pause(label, model, **survivors_part)
                pause_after += rebalance_pause(
                    label, model, **survivors_part, orphaned=moves_of.orphaned - lost, crashed=lost
                )
        identity_of = {n: str(m["instance"] or m["member_id"] or n) for n, m in members.items()}
        observed_after = {
            identity_of[n]: tuple(sorted(TopicPartition(str(t), int(p)) for t, p in listed))
            for n, listed in step["holdings"].items()
            if n in members
        }
        same = None
        if set(observed_after) == set(after):
            same = all(tuple(sorted(after[i])) == observed_after[i] for i in after)
        out.append(
            Predicted(
                measured,
                rebalanced and not first,
                moved,
                orphaned,
                revoked_count,
                rounds if not first else 0,
                survivors_owned,
                round(pause_before, 3),
                round(pause_after, 3),
                same,
                len(priced) if rebalanced and not first else 0,
                round(pause_survivors, 3),
            )
        )
    return out


def _restarts(run: Mapping[str, Any], index: int, before: Mapping[str, Sequence[Any]]) -> tuple[int, float]:
    """(partitions, partition-seconds of downtime) of the static members that stopped and came back in step
    ``index``: each was down from the step's start to its new start (the runner's record of its members)."""
    step = run["steps"][index]
    start, end = float(step["t0"]), float(step["end"])
    partitions = 0
    downtime = 0.0
    for name in sorted(set(step.get("stopped", ())) & set(step["members"])):
        member = step["members"][name]
        began = run.get("members", {}).get(name, {}).get("started_at")
        if not member.get("instance") or began is None or not start <= float(began) <= end:
            continue
        held = len(before.get(str(member["instance"]), ()))
        partitions += held
        downtime += held * (float(began) - start)
    return partitions, downtime


def _names(step: Mapping[str, Any]) -> dict[str, str]:
    """identity -> member name in one step's snapshot."""
    return {str(m["instance"] or m["member_id"] or name): name for name, m in step["members"].items()}


def membership_rows(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The run's membership table as ``assignors evaluate`` reads it (one row per member per snapshot)."""
    rows = []
    for number, step in enumerate(run["steps"]):
        for name, member in sorted(step["members"].items()):
            rows.append(
                {
                    "group_id": run["group_id"],
                    "snapshot": number,
                    "member_id": member["member_id"] or name,
                    "topics": list(member["topics"]),
                    "group_instance_id": member["instance"],
                }
            )
    return rows


def sequence_of(values: Sequence[Any]) -> list[Any]:
    return list(values)
