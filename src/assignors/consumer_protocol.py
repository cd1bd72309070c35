"""Kafka's consumer-protocol bytes: subscriptions, assignments and the sticky assignors' user data.

What a member sends in JoinGroup (``ConsumerProtocolSubscription``) and receives in
SyncGroup (``ConsumerProtocolAssignment``), versions 0 to 3, byte for byte as Kafka's
``ConsumerProtocol`` writes them: an INT16 version, then the fields of that version
(big-endian INT16/INT32, STRING = INT16 length + UTF-8, nullable with length -1,
ARRAY = INT32 count + elements). The encoder writes topics and owned partitions sorted in
Java's ``String.compareTo`` order (UTF-16 code units, not code points: a name beyond the BMP
sorts before one in U+E000-U+FFFF);
a blob of a version above 3 decodes as version 3 and its extra trailing fields are
ignored, as Kafka's parser does.

>>> from assignors import Subscription, TopicPartition as TP
>>> encode_subscription(Subscription(["foo", "bar"], user_data=b"hello"), version=0).hex()
'00000000000200036261720003666f6f0000000568656c6c6f'
>>> decode_subscription(bytes.fromhex("000300000001000174ffffffff00000000ffffffffffff"))
Subscription(topics=('t',), user_data=None, owned_partitions=(), generation_id=-1, rack_id=None, group_instance_id=None)

Decoding treats its input as untrusted: a truncated blob, a negative or oversized
length, or invalid UTF-8 raises :class:`~assignors.ProtocolError` naming the field and
its byte offset, and no length prefix makes the decoder allocate more than the input's
own size.

Sticky user data (Kafka's ``StickyAssignor``, not version-prefixed):
V0 = ``previous_assignment: [topic: STRING, partitions: [INT32]]``; V1 adds
``generation: INT32``. Cooperative-sticky user data is one ``generation: INT32``.
"""

from assignors._wire.consumer_protocol import (
    HIGHEST_VERSION,
    StickyUserData,
    decode_assignment,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)

__all__ = [
    "HIGHEST_VERSION",
    "StickyUserData",
    "decode_assignment",
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "decode_subscription",
    "encode_assignment",
    "encode_cooperative_user_data",
    "encode_sticky_user_data",
    "encode_subscription",
]
