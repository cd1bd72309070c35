"""The two dump formats' text as Kafka's tests pin it (``GroupMetadataMessageFormatter`` 3.9 and 4.x, and
``kafka-dump-log.sh --offsets-decoder``), shared by the offsets_topic tests and ``assignors collect``'s."""

from __future__ import annotations

FORMATTER_39 = (
    '{"key":{"version":2,"data":{"group":"group-id"}},"value":{"version":3,"data":{"protocolType":"consumer",'
    '"generation":1,"protocol":"range","leader":"leader","currentStateTimestamp":1234,"members":[{"memberId":'
    '"member-1","groupInstanceId":"group-instance-1","clientId":"client-1","clientHost":"host-1",'
    '"rebalanceTimeout":1000,"sessionTimeout":1500,"subscription":"AAE=","assignment":"AQI="}]}}}'
)
FORMATTER_4X = FORMATTER_39.replace('{"key":{"version":2', '{"key":{"type":2', 1)
FORMATTER_TOMBSTONE = '{"key":{"version":2,"data":{"group":"group-id"}},"value":null}'
DUMP_LOG_KEY = 'key: {"type":"2","data":{"group":"group"}}'
DUMP_LOG_PAYLOAD = (
    'payload: {"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range","leader":"member",'
    '"currentStateTimestamp":-1,"members":[{"memberId":"member","groupInstanceId":"instance","clientId":"client",'
    '"clientHost":"host","rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],"userData":null,'
    '"ownedPartitions":[{"topic":"foo","partitions":[0]}],"generationId":0,"rackId":"rack"},"assignment":'
    '{"assignedPartitions":[{"topic":"foo","partitions":[0]}],"userData":null}}]}}'
)
DUMP_LOG = (
    "Dumping /tmp/kafka-logs/__consumer_offsets-0/00000000000000000000.log\n"
    "Log starting offset: 0\n"
    "baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
    "partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
    "position: 0 CreateTime: 1700000000000 size: 400 magic: 2 compresscodec: none crc: 1 isvalid: true\n"
    "| offset: 0 CreateTime: 1700000000000 keySize: 11 valueSize: 300 sequence: -1 headerKeys: [] "
    f"{DUMP_LOG_KEY} {DUMP_LOG_PAYLOAD}\n"
    "| offset: 1 CreateTime: 1700000005000 keySize: 11 valueSize: -1 sequence: -1 headerKeys: [] "
    f"{DUMP_LOG_KEY} payload: <DELETE>\n"
)
