"""Small deterministic helpers shared by the assignors."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from assignors._core.model import MemberId, Subscription, TopicPartition

_FIRST_SUPPLEMENTARY = "\U00010000"


def java_string_key(text: str) -> bytes:
    """Sort key giving Java's ``String.compareTo`` order (UTF-16 code units).

    Python compares strings by code point; the two orders differ only for characters
    beyond the Basic Multilingual Plane, which UTF-16 encodes as surrogates
    (0xD800-0xDFFF) that sort before 0xE000-0xFFFF. Big-endian UTF-16 bytes compare
    like the code units.
    """
    return text.encode("utf-16-be", "surrogatepass")


def java_sorted(items: Iterable[str]) -> list[str]:
    """Sort strings in Java's ``String.compareTo`` order, cheaply when it equals Python's."""
    result = sorted(items)
    if any(item and max(item) >= _FIRST_SUPPLEMENTARY for item in result):
        result.sort(key=java_string_key)
    return result


def java_sorted_partitions(partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    """Partitions by topic in Java's ``String.compareTo`` order, then by number, cheaply when that is Python's."""
    result = sorted(partitions)
    if any(max(topic) >= _FIRST_SUPPLEMENTARY for topic in {tp.topic for tp in result}):  # once per topic
        result.sort(key=lambda tp: (java_string_key(tp.topic), tp.partition))
    return result


def kafka_member_order(subscriptions: Mapping[MemberId, Subscription]) -> list[MemberId]:
    """Members in Kafka's ``MemberInfo`` order, as Range and RoundRobin use it.

    Static members (with a ``group_instance_id``) come first, ordered by instance id,
    then dynamic members ordered by member id; both in Java string order. Two members
    with the same instance id (which a broker never admits) are ordered by member id.
    """
    static: list[tuple[str, MemberId]] = []
    dynamic: list[MemberId] = []
    for member, subscription in subscriptions.items():
        instance = subscription.group_instance_id
        if instance is None:
            dynamic.append(member)
        else:
            static.append((instance, member))
    supplementary = any(max(m) >= _FIRST_SUPPLEMENTARY for m in subscriptions) or any(
        max(instance) >= _FIRST_SUPPLEMENTARY for instance, _ in static
    )
    if supplementary:
        static.sort(key=lambda pair: (java_string_key(pair[0]), java_string_key(pair[1])))
        dynamic.sort(key=java_string_key)
    else:
        static.sort()
        dynamic.sort()
    return [member for _, member in static] + dynamic


_MANY_YOUNG = 100_000  # young objects above which re-enabling the collector would walk them all at once


class gc_paused:  # noqa: N801 - used as a function, like contextlib's context managers
    """Pause Python's cyclic garbage collector for the duration of a ``with`` block.

    An assignment of a million partitions allocates a million small tuples; each batch
    of allocations triggers a collection that walks the whole young heap, which made up
    most of the run time. The assignors create no reference cycles, so reference
    counting frees everything they drop. The collector is restored even on error, and a
    caller that had it disabled keeps it disabled.

    After a large block the young generation holds every tuple just built, and the first
    allocation after re-enabling would walk them all (0.1-0.2 s for a million). When
    nothing in the process is frozen (``gc.freeze``, as pre-forking servers use it),
    ``freeze`` then ``unfreeze`` moves them to the oldest generation without walking
    them; they are collected as usual from there.

    A class rather than a ``contextlib.contextmanager`` generator: a small group's whole
    assignment takes about 0.1 ms, of which a generator-based manager took a few percent.
    """

    __slots__ = ("_was_enabled",)

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        if self._was_enabled:
            gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self._was_enabled:
            if gc.get_count()[0] > _MANY_YOUNG and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
