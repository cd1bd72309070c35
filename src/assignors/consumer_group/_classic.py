"""The classic side of a group that upgrades to (or downgrades from) the consumer protocol.

Its members are :mod:`assignors._classic.group`'s, the one classic group model that
:class:`~assignors.rebalance.GroupSimulator` keeps too: each member with its own assignor instances, kept across
rebalances, the longest-standing member leading, each member on its own protocol and rack, members that are down
dropped by the next rebalance. Here are the steps :class:`~assignors.consumer_group.ConsumerGroupSimulator` takes on
it, keyed by its clients' handles.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from assignors._builtin.registry import get_assignor
from assignors._classic.group import ClassicGroup, GroupMember, member_assignors
from assignors._classic.rules import choose_protocol
from assignors._core.model import Assignment, RebalanceProtocol, TopicPartition

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assignors._classic.events import AssignorSpec
    from assignors._core.model import MemberId

__all__ = [
    "ClassicGroup",
    "GroupMember",
    "RoundChanges",
    "adopt",
    "classic_protocol",
    "current",
    "join",
    "rebalance",
    "stop",
]

RoundChanges = tuple[int, dict[str, tuple[TopicPartition, ...]], dict[str, tuple[TopicPartition, ...]]]
"""One round: the generation it created, what each member (by handle) revoked and what it gained, in member-id
order."""


def _instance(spec: AssignorSpec) -> AssignorSpec:
    """A name as it is, a copy of an object: the model never changes a caller's assignor objects."""
    return spec if isinstance(spec, str) else copy.deepcopy(spec)


def classic_protocol(specs: Iterable[AssignorSpec]) -> RebalanceProtocol:
    """The rebalance protocol of a classic member configured with ``specs`` (the highest all of them support)."""
    return choose_protocol([get_assignor(s) if isinstance(s, str) else s for s in specs])


def join(  # noqa: PLR0913 - a member's configuration
    group: ClassicGroup,
    member_id: MemberId,
    handle: str,
    topics: Iterable[str],
    specs: Iterable[AssignorSpec],
    *,
    instance_id: str | None,
    rack: str | None,
) -> GroupMember | None:
    """A classic member's process joins: a new member, or a static member's new process under a new member id.

    Returns the member when it is a static member back within its session timeout (still in the group, down) with
    the same configuration: its new process keeps its assignment, which the coordinator hands to its fresh assignor
    instances, and the group does not rebalance (KIP-345). None: it joined as a new member (replacing the old one of
    its handle or instance id), and the group must rebalance.
    """
    topics, specs = tuple(topics), tuple(_instance(s) for s in specs)
    old = group.members.get(handle)
    if old is None and instance_id is not None:
        old = next((m for m in group.ordered() if m.instance_id == instance_id), None)
    group.away.pop(handle, None)  # a new process under the old name: the old one never comes back
    if old is not None and old.down is not None and instance_id is not None and old.instance_id == instance_id:
        assignors = member_assignors(handle, specs)
        if (tuple(assignors), tuple(sorted(set(topics)))) == (old.names, old.topics):
            old.down, old.member_id, old.specs, old.assignors = None, member_id, specs, assignors
            if group.selected is not None and group.selected in assignors:
                assignors[group.selected].on_assignment(Assignment(old.owned), old.generation)
            return old
    if old is not None:
        del group.members[old.handle]
    group.members[handle] = group.new_member(
        handle, topics, specs, instance_id=instance_id, rack=rack, member_id=member_id
    )
    return None


def rebalance(group: ClassicGroup) -> tuple[list[str], list[RoundChanges]]:
    """One rebalance of ``group``: the handles of the members dropped because they were down, and each round."""
    dropped, rounds = group.rebalance()
    handles = {m.member_id: m.handle for m in group.members.values()}
    return [m.handle for m in dropped], [
        (
            r.generation,
            {handles[m]: p for m, p in sorted(r.revoked.items()) if p},
            {handles[m]: p for m, p in sorted(r.added.items()) if p},
        )
        for r in rounds
    ]


def current(group: ClassicGroup, handle: str, member_id: MemberId) -> GroupMember | None:
    """The process ``member_id`` of ``handle`` as a member of ``group`` (None: not in it, or an older process)."""
    member = group.members.get(handle)
    return member if member is not None and member.member_id == member_id else None


def stop(group: ClassicGroup, handle: str, member_id: MemberId, token: int) -> None:
    """A member's process stops without leaving (a crash, a static member's restart): it stays in the group until
    its session timeout, unless a rebalance comes first, which drops it (it cannot rejoin)."""
    member = current(group, handle, member_id)
    if member is not None:
        member.down = token


def adopt(  # noqa: PLR0913 - a member's configuration and state
    group: ClassicGroup,
    member_id: MemberId,
    handle: str,
    topics: Iterable[str],
    specs: Iterable[AssignorSpec],
    *,
    instance_id: str | None,
    rack: str | None,
    owned: Iterable[TopicPartition],
    down: int | None,
) -> None:
    """A member of a consumer group converted back to classic: it owns ``owned`` at the group's generation; one
    that is ``down`` (its token) is dropped by the rebalance that follows (convertToClassicGroup)."""
    join(group, member_id, handle, topics, specs, instance_id=instance_id, rack=rack)
    member = group.members[handle]
    member.owned, member.generation, member.down = tuple(sorted(owned)), group.generation, down
