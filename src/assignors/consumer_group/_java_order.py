"""The order in which Java's ``HashMap`` and ``HashSet`` iterate, for the broker's member ids and topic ids.

Kafka's server assignors iterate their members and topic ids in the order of the Java hash maps the group
coordinator builds (``TargetAssignmentBuilder``'s ``memberSpecs``, a member's target, the subscribed topic ids).
That order is a function of the keys' ``hashCode``, the table's size and, within one bucket, the insertion order:

- a table iterates bucket by bucket, ``(h ^ h >>> 16) & (size - 1)`` (``HashMap.hash``);
- a bucket keeps its keys in insertion order, and a resize splits it keeping that order;
- a table doubles when it holds more than ``0.75 * size`` keys, or when a bucket of a table smaller than 64
  reaches 9 keys (``treeifyBin``); a bucket of 9 or more keys in a table of 64 or more becomes a tree, whose
  order is not modelled (for random ids: about one table in 10^7).

Within one bucket the coordinator's insertion order follows its own group state: it puts the members it holds in
the order its table of members iterates, then a member that joins with this computation. That table
(``ModernGroup.members``, a ``TimelineHashMap``) is a chained hash table of its own
(``org.apache.kafka.timeline.BaseHashTable``):

- a key's slot is the top ``log2(length)`` bits of its ``hashCode`` times ``-7046029254386353131`` (Knuth's
  Fibonacci hashing, in 64 bits);
- a slot keeps its keys in the order they were added (a replaced value keeps its place; a removed and re-added key
  goes last), and a doubling splits each slot keeping that order; the table's iterator goes slot by slot, each
  slot from its last key to its first (``SnapshottableHashTable.CurrentIterator`` pops them off a list);
- the table starts at 2 slots (``new TimelineHashMap<>(registry, 0)``), doubles on any put while
  ``(size + 1) * 0.75 > length``, and never shrinks.

:class:`CoordinatorTable` follows a group's history through that table. Without one (a single call), the table is
taken to hold exactly the members given, added in Java's string order, so the result is a function of the ids.
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
    "CoordinatorTable",
    "coordinator_member_order",
    "java_map_order",
    "java_string_hash",
    "kafka_uuid_hash",
    "one_per_bucket",
    "subscribed_topic_order",
    "table_size_of_copy",
    "table_size_of_puts",
    "target_topic_order",
    "timeline_length",
    "timeline_slot",
    "uuid_order_key",
]

K = TypeVar("K")
V = TypeVar("V")

_MASK: Final = 0xFFFFFFFF
_DEFAULT_TABLE: Final = 16  # the table the first put into a new HashMap<>() allocates
_TREEIFY: Final = 8  # a bucket's keys before the one that makes it a tree (TREEIFY_THRESHOLD)
_MIN_TREEIFY: Final = 64  # below this table size a full bucket doubles the table instead (MIN_TREEIFY_CAPACITY)
_TIMELINE_MIN: Final = 2  # BaseHashTable.MIN_CAPACITY: a group's table of members starts at 2 slots
_FIBONACCI: Final = -7046029254386353131  # BaseHashTable.findSlot's multiplier (a long)
_LONG: Final = (1 << 64) - 1


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


def timeline_slot(h: int, length: int) -> int:
    """The slot of a key of hash ``h`` (unsigned 32 bits) in a ``BaseHashTable`` of ``length`` slots (a power of
    two): ``(hashCode * -7046029254386353131L) >>> (65 - log2size)``, the product's top bits.

    >>> [timeline_slot(java_string_hash(k), 8) for k in ("a", "b", "c")]
    [7, 4, 1]
    """
    signed = h - (1 << 32) if h & 0x80000000 else h  # the int sign-extends to a long
    return ((signed * _FIBONACCI) & _LONG) >> (65 - length.bit_length())


def timeline_length(most: int) -> int:
    """The length of a group's table of members that has held ``most`` members at a put: 2 slots, doubled while
    ``(size + 1) * 0.75 > length`` (``BaseHashTable.baseAddOrReplace``).

    >>> [timeline_length(n) for n in (0, 1, 2, 4, 5, 9, 10, 20, 21)]
    [2, 2, 4, 4, 8, 8, 16, 16, 32]
    """
    length = _TIMELINE_MIN
    while (most + 1) * 0.75 > length:
        length *= 2
    return length


class CoordinatorTable:
    """A consumer group's members as the group coordinator holds them (``ModernGroup.members``, a
    ``TimelineHashMap``), followed through the group's history: who is in it, in the order they were added, and how
    large the table has grown. Its order decides, within one ``HashMap`` bucket, the order in which ``uniform`` goes
    through the members (:func:`coordinator_member_order`).

    >>> table = CoordinatorTable()
    >>> table.update(["a", "q"])  # "a" and "q" share a slot of this table and a bucket of memberSpecs
    >>> coordinator_member_order(["a", "q", "b"], table)  # the slot iterates its last key first; "b" joins
    ['q', 'a', 'b']
    >>> table.update(["q"]); table.update(["q", "a"])  # "a" leaves, then joins again: now the slot's last
    >>> coordinator_member_order(["a", "q", "b"], table)
    ['a', 'q', 'b']
    >>> coordinator_member_order(["a", "q", "b"])  # without a table: one holding them, added in Java's string order
    ['q', 'a', 'b']
    """

    __slots__ = ("_added", "_most", "_next")

    def __init__(self) -> None:
        self._added: dict[str, int] = {}  # member id -> when it was added (its place within its slot)
        self._next = 0
        self._most = 0

    @classmethod
    def holding(cls, member_ids: Iterable[str]) -> CoordinatorTable:
        """A table holding exactly ``member_ids``, added in Java's string order: what a single computation without
        the group's history takes the coordinator's table to be (:func:`coordinator_member_order`'s default)."""
        table = cls()
        table.update(member_ids)
        return table

    def update(self, member_ids: Iterable[str]) -> None:
        """The group holds exactly ``member_ids`` now: members not among them are removed, the others added (those
        not yet held in Java's string order, as a replay cannot tell in which order they joined)."""
        now = set(member_ids)
        for gone in [m for m in self._added if m not in now]:
            del self._added[gone]
        for member in java_sorted(now - self._added.keys()):
            self._added[member] = self._next
            self._next += 1
        self._most = max(self._most, len(self._added))

    @property
    def length(self) -> int:
        """The table's number of slots now."""
        return timeline_length(self._most)

    def put_order(self, member_ids: Iterable[str]) -> list[str]:
        """The order in which the coordinator puts ``member_ids`` into ``memberSpecs`` for a new target: the members
        it holds as its table iterates (slot, then the last added first), then those joining with this computation
        (an ``OverlayMap``'s additions: a ``HashMap`` of them)."""
        members = list(member_ids)
        added = self._added
        held = [m for m in members if m in added]
        length = timeline_length(max(self._most, len(held)))
        held.sort(key=lambda m: (timeline_slot(java_string_hash(m), length), -added[m]))
        return held + java_map_order(java_sorted(m for m in members if m not in added), java_string_hash)


def coordinator_member_order(member_ids: Iterable[str], table: CoordinatorTable | None = None) -> list[str]:
    """The members as the group coordinator's ``HashMap`` of member ids iterates them (``TargetAssignmentBuilder``'s
    ``memberSpecs``), put in ``table``'s order (:meth:`CoordinatorTable.put_order`).

    Without a table, the coordinator's table is taken to hold exactly these members, added in Java's string order:
    the result is a function of the ids alone, and the slots of that table are the broker's whatever order the
    members came in (only members sharing a slot, and a member joining with this computation, can go otherwise).

    >>> coordinator_member_order(["b", "a", "q"])  # "a" and "q" share a bucket and a slot, "q" added last
    ['q', 'a', 'b']
    """
    members = list(member_ids)  # read twice without a table: any iterable, once
    put = (table if table is not None else CoordinatorTable.holding(members)).put_order(members)
    return java_map_order(put, java_string_hash)


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
