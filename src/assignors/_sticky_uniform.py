"""The sticky core's builder for identical subscriptions: quotas, per-topic even trimming and filling."""

from __future__ import annotations

import logging
from itertools import chain
from typing import TYPE_CHECKING

from assignors._sticky_claims import unclaimed, water_fill
from assignors._sticky_racks import Locality, rack_pass

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assignors._model import MemberId, Topic, TopicPartition
    from assignors._sticky_claims import State
    from assignors._sticky_racks import RackInfo

logger = logging.getLogger(__name__)

__all__ = ["assign_identical"]


def assign_identical(
    partitions_per_topic: Mapping[Topic, int],
    members: list[MemberId],
    taken: set[TopicPartition],
    racks: RackInfo,
    state: State,
) -> None:
    total = sum(partitions_per_topic.values())
    min_quota, extra = divmod(total, len(members))
    max_quota = min_quota + (1 if extra else 0)
    # Extra slots go to members that already own max_quota partitions (in id order).
    slots = extra
    trimmed: list[TopicPartition] = []
    kept = state.kept
    for member in members:
        owned = kept[member]
        if len(owned) >= max_quota and slots > 0:
            quota = max_quota
            slots -= 1
        else:
            quota = min_quota
        if len(owned) > quota:
            kept[member], dropped = _trim(owned, quota, member, racks)
            trimmed.extend(dropped)
        state.load[member] = len(kept[member])
    pool = unclaimed(partitions_per_topic, taken)
    if trimmed:
        pool = sorted(chain(pool, trimmed))
    if racks.enabled:
        off_rack = racks.mismatched(state, members)
        pool, moved = rack_pass(pool, off_rack, members, racks, state, min_quota)
    given = water_fill(pool, members, state, min_quota)
    given += water_fill(pool[given:], members, state, max_quota)
    if given != len(pool):  # pragma: no cover - quotas always add up
        msg = f"sticky quotas left {len(pool) - given} of {total} partitions unassigned"
        raise AssertionError(msg)
    if racks.enabled:
        still_off: dict[MemberId, list[TopicPartition]] = {}
        for tp, owner in off_rack.items():
            if tp not in moved:
                still_off.setdefault(owner, []).append(tp)
        Locality(members, None, racks, state, still_off).improve()


def _trim(
    owned: list[TopicPartition], quota: int, member: MemberId, racks: RackInfo
) -> tuple[list[TopicPartition], list[TopicPartition]]:
    """Keep ``quota`` of ``owned`` (rack-local ones first, claim order kept); returns kept and dropped."""
    if not racks.enabled:
        return owned[:quota], owned[quota:]
    ranked = sorted(range(len(owned)), key=lambda i: (not racks.local(member, owned[i]), i))
    keep = sorted(ranked[:quota])
    return [owned[i] for i in keep], [owned[i] for i in sorted(ranked[quota:])]
