"""The order in which Java's ``HashMap`` and ``HashSet`` iterate, for the broker's member ids and topic ids.

Kafka's server assignors iterate their members and topic ids in the order of the Java hash maps the group
coordinator builds (``TargetAssignmentBuilder``'s ``memberSpecs``, a member's target, the subscribed topic ids).
That order is a function of the keys' ``hashCode``, the table's size and, within one bucket, the insertion order:

- a table iterates bucket by bucket, ``(h ^ h >>> 16) & (size - 1)`` (``HashMap.hash``);
- a bucket keeps its keys in insertion order, and a resize splits it keeping that order;
- a table doubles when it holds more than ``0.75 * size`` keys, or when a bucket of a table smaller than 64
  reaches 9 keys (``treeifyBin``); a bucket of 9 or more keys in a table of 64 or more becomes a tree, whose
  order is not modelled (for random ids: about one table in 10^7).

Within one bucket the coordinator's insertion order follows its own group state's history, which a replay
does not know: here keys go in sorted order, so the result is a function of the keys alone.
"""

from __future__ import annotations

import base64
from functools import lru_cache
from typing import TYPE_CHECKING, Final, TypeVar

from assignors._core.errors import InvalidSubscriptionError
from assignors._core.model import is_topic_id
from assignors._core.util import java_sorted

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = [
    "coordinator_member_order",
    "java_map_order",
    "java_string_hash",
    "kafka_uuid_hash",
    "one_per_bucket",
    "subscribed_topic_order",
    "table_size_of_copy",
    "table_size_of_puts",
    "target_topic_order",
    "uuid_order_key",
]

K = TypeVar("K")
V = TypeVar("V")

_MASK: Final = 0xFFFFFFFF
_DEFAULT_TABLE: Final = 16  # the table the first put into a new HashMap<>() allocates
_TREEIFY: Final = 8  # a bucket's keys before the one that makes it a tree (TREEIFY_THRESHOLD)
_MIN_TREEIFY: Final = 64  # below this table size a full bucket doubles the table instead (MIN_TREEIFY_CAPACITY)


@lru_cache(maxsize=1 << 16)
def java_string_hash(text: str) -> int:
    """``String.hashCode()`` as an unsigned 32-bit number: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units.

    >>> java_string_hash("a"), java_string_hash("member-1"), java_string_hash("")
    (97, 3645526462, 0)
    """
    h = 0
    units = text.encode("utf-16-be")
    for high, low in zip(units[::2], units[1::2], strict=True):
        h = (31 * h + (high << 8 | low)) & _MASK
    return h


@lru_cache(maxsize=1 << 12)
def _uuid_halves(text: str) -> tuple[int, int]:
    if not is_topic_id(text):
        msg = f"topic id {text!r} is not a Kafka Uuid (22 characters of URL-safe base64, as Kafka prints one)"
        raise InvalidSubscriptionError(msg)
    raw = base64.urlsafe_b64decode(text + "==")
    return int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:], "big", signed=True)


def uuid_order_key(topic_ids: Mapping[str, str], topic: str) -> tuple[int, int]:
    """The key of ``Uuid.compareTo`` for ``topic``'s id: its most, then least significant bits, signed."""
    return _uuid_halves(topic_ids[topic])


def kafka_uuid_hash(text: str) -> int:
    """Kafka's ``Uuid.hashCode()`` of a topic id as Kafka prints it (22 characters of URL-safe base64), unsigned.

    >>> kafka_uuid_hash("AAAAAAAAAAEAAAAAAAAAAg")  # most significant bits 1, least significant 2
    3

    Raises:
        InvalidSubscriptionError: not a Kafka topic id.
    """
    high, low = _uuid_halves(text)
    hilo = (high ^ low) & 0xFFFFFFFFFFFFFFFF
    return ((hilo >> 32) ^ hilo) & _MASK


def _bucket(h: int, size: int) -> int:
    return (h ^ (h >> 16)) & (size - 1)


def one_per_bucket(hashes: Sequence[int]) -> bool:
    """Whether no two of ``hashes`` share a bucket of the table a ``new HashMap<>()`` of them has: then its order is
    the hashes' alone, not the order the keys were put in.

    >>> one_per_bucket([97, 98]), one_per_bucket([97, 113])  # "a" and "b"; "a" and "q" share bucket 1 of 16
    (True, False)
    """
    size = table_size_of_puts(hashes)
    return len({_bucket(h, size) for h in hashes}) == len(hashes)


def table_size_of_puts(hashes: Sequence[int]) -> int:
    """The table size of a ``new HashMap<>()`` after putting keys of ``hashes`` (distinct keys) in that order.

    >>> table_size_of_puts(range(12)), table_size_of_puts(range(13)), table_size_of_puts([16 * i for i in range(9)])
    (16, 32, 32)
    """
    size = _DEFAULT_TABLE
    counts: dict[int, int] = {}
    for index, h in enumerate(hashes):
        bucket = _bucket(h, size)
        counts[bucket] = counts.get(bucket, 0) + 1
        grow = counts[bucket] > _TREEIFY and size < _MIN_TREEIFY  # treeifyBin on a small table resizes it
        if index + 1 > int(size * 0.75):
            grow = True
        if grow:
            size *= 2
            counts = {}
            for seen in hashes[: index + 1]:
                key = _bucket(seen, size)
                counts[key] = counts.get(key, 0) + 1
    return size


def table_size_of_copy(count: int) -> int:
    """The table size of ``new HashSet<>(collection)`` of ``count`` keys: ``max((int) (count / .75f) + 1, 16)``
    rounded up to a power of two (no key makes it grow).

    >>> table_size_of_copy(2), table_size_of_copy(12), table_size_of_copy(13)
    (16, 32, 32)
    """
    wanted = max(int(count / 0.75) + 1, 16)
    return 1 << (wanted - 1).bit_length()


def java_map_order(
    keys: Sequence[K], hash_of: Callable[[K], int], *, table_size: Callable[[Sequence[int]], int] | None = None
) -> list[K]:
    """``keys`` (distinct, in insertion order) in the order a Java ``HashMap`` of them iterates.

    ``table_size``: the table's size for these hashes (default :func:`table_size_of_puts`, a ``new HashMap<>()``).

    >>> java_map_order(["b", "a", "q"], java_string_hash)  # 98, 97, 113: buckets 2, 1 and 1 ("a" put first)
    ['a', 'q', 'b']
    """
    hashes = [hash_of(key) for key in keys]
    size = (table_size or table_size_of_puts)(hashes)
    ranked = sorted(range(len(keys)), key=lambda i: (_bucket(hashes[i], size), i))
    return [keys[i] for i in ranked]


def coordinator_member_order(member_ids: Iterable[str]) -> list[str]:
    """The members as the group coordinator's ``HashMap`` of member ids iterates them (``TargetAssignmentBuilder``'s
    ``memberSpecs``; put here in Java's string order, so that the result is a function of the ids alone).

    >>> coordinator_member_order(["b", "a", "q"])
    ['a', 'q', 'b']
    """
    return java_map_order(java_sorted(member_ids), java_string_hash)


def subscribed_topic_order(topics: Sequence[str], topic_ids: Mapping[str, str]) -> list[str]:
    """``topics`` as the uniform builders iterate the subscribed topic ids: ``new HashSet<>(ids)`` of the ids that
    the member's ``HashSet`` of subscribed topic names resolves to, in that set's order.

    >>> ids = {"a": "AAAAAAAAAAEAAAAAAAAAAg", "b": "AAAAAAAAAAAAAAAAAAAAAQ"}  # hashes 3 and 1
    >>> subscribed_topic_order(["a", "b"], ids)
    ['b', 'a']
    """
    return java_map_order(
        java_map_order(list(topics), java_string_hash),
        lambda topic: kafka_uuid_hash(topic_ids[topic]),
        table_size=lambda hashes: table_size_of_copy(len(hashes)),
    )


def target_topic_order(topic_ids: Mapping[str, str], runs: Sequence[tuple[str, V]]) -> list[tuple[str, V]]:
    """A member's previous target, topic by topic, as its map iterates: the coordinator replays its own target
    records into its state (``Assignment.fromRecord``: a ``HashMap`` of topic ids filled by puts), so the map is a
    default table of 16 buckets and up, whatever map the assignor returned."""
    return java_map_order(list(runs), lambda run: kafka_uuid_hash(topic_ids[run[0]]))
