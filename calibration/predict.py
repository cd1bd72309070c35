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
from assignors.consumer_group import ServerAssignor, rebalance_target, server_assignor
from assignors.metrics import (
    PauseModel,
    movement,
    pause_partition_seconds,
    rebalance_pause,
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


def _label(name: str) -> tuple[str, RebalanceProtocol]:
    if name in SERVER_STRATEGIES:
        return "CONSUMER", RebalanceProtocol.COOPERATIVE
    protocol = preferred_protocol(get_assignor(name))
    return protocol.name, protocol


def predict(run: Mapping[str, Any], model: PauseModel) -> list[Predicted]:  # noqa: PLR0915 - one replay
    """Every measured step of ``run`` (``GroupRun.to_json()``) as the product predicts it."""
    name = str(run["product"])
    label, protocol = _label(name)
    assignor: Any = server_assignor(name) if name in SERVER_STRATEGIES else get_assignor(name)
    previous: dict[str, tuple[TopicPartition, ...]] | None = None
    received: dict[str, Any] = {}
    generation = -1
    previous_key: tuple[Any, ...] | None = None
    out: list[Predicted] = []
    measured = 0
    crashed_by_step = [set(step.get("crashed", ())) for step in run["steps"]]
    for index, step in enumerate(run["steps"]):
        members: Mapping[str, Mapping[str, Any]] = step["members"]
        counts = {str(t): int(n) for t, n in step["counts"].items()}
        identities = {}
        subscriptions = {}
        names_by_identity = {}
        for member_name, member in sorted(members.items()):
            member_id = str(member["member_id"] or member_name)
            identity = str(member["instance"] or member_id)
            identities[member_id] = identity
            names_by_identity[identity] = member_name
            subscriptions[member_id] = Subscription(member["topics"], group_instance_id=member["instance"] or None)
        key = (
            tuple(sorted((identity, tuple(subscriptions[m].topics)) for m, identity in identities.items())),
            tuple(sorted(counts.items())),
        )
        cluster = Cluster(counts)
        rebalanced = key != previous_key
        before = previous or {}
        if rebalanced:
            if isinstance(assignor, ServerAssignor):
                owned = {m: before.get(identity, ()) for m, identity in identities.items()}
                target = rebalance_target(assignor, cluster, subscriptions, owned, generation=generation)
                result_assignment, generation, rounds = target.assignment, target.generation, target.heartbeats
            else:
                held = {m: received.get(identity, ()) for m, identity in identities.items()}
                result = rebalance(assignor, cluster, subscriptions, held, generation=generation, protocol=protocol)
                result_assignment, generation, rounds = result.assignment, result.generation, len(result.rounds)
                received = {identity: result_assignment[m] for m, identity in identities.items()}
            after = {identity: tuple(result_assignment[m].partitions) for m, identity in identities.items()}
        else:
            after, rounds = dict(before), 0
        previous_key = key
        previous = after
        if not step["measured"]:
            continue
        measured += 1
        first = not before
        moves = movement(before, after, members_after=after.keys())
        survivors_owned = moves.revoked(RebalanceProtocol.EAGER)
        revoked = moves.revoked(protocol)
        crashed = crashed_by_step[index]
        gone = [identity for identity in before if identity not in after]
        # which departed identities crashed: the run knows its members' names; map them through the last snapshot
        last_names = _names(run["steps"][index - 1]) if index else {}
        crashed_orphans = sum(len(before[i]) for i in gone if last_names.get(i) in crashed)
        if first or not rebalanced:
            pause_before = pause_after = 0.0
            moved = orphaned = revoked_count = 0
        else:
            moved, orphaned, revoked_count = moves.moved, moves.orphaned, revoked
            pause_before = pause_partition_seconds(label, moved=moved, survivors_owned=survivors_owned)
            pause_after = rebalance_pause(
                label,
                model,
                moved=moved,
                survivors_owned=survivors_owned,
                orphaned=orphaned - crashed_orphans,
                crashed=crashed_orphans,
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
            )
        )
    return out


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
