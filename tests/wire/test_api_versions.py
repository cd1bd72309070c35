"""Kafka's ApiVersions v3 exchange: the request's exact bytes, real brokers' answers, and untrusted bytes.

``data/api_versions_*.bin`` are the answers (after the size) that Apache Kafka 3.9.1's and 4.4.0's brokers
(``assignors.testing.KafkaBroker``, KRaft) gave to :func:`encode_api_versions_request` with correlation id 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assignors import ProtocolError
from assignors._wire.api_versions import (
    UNSUPPORTED_VERSION,
    ApiVersions,
    decode_api_versions,
    encode_api_versions_request,
)
from assignors._wire.flex import FlexWriter

DATA = Path(__file__).parent / "data"


def _answer(version: str) -> bytes:
    return (DATA / f"api_versions_{version}.bin").read_bytes()


def test_the_request_is_kafkas_v3_layout_byte_for_byte() -> None:
    """Size, api key 18, version 3, correlation id, client id (classic string), empty header tags, then the compact
    software name and version and empty body tags (Kafka's ApiVersionsRequest.json, header v2)."""
    expected = ["00000011", "0012", "0003", "00000007", "000163", "00", "0263", "0231", "00"]
    assert encode_api_versions_request(7, "c", "1") == bytes.fromhex("".join(expected))
    sent = encode_api_versions_request(1)
    assert int.from_bytes(sent[:4], "big") == len(sent) - 4
    assert sent[4:8] == bytes.fromhex("00120003")


def test_kafka_4_4_brokers_answer_reads_as_the_broker_said() -> None:
    answer = decode_api_versions(_answer("4.4.0"), correlation_id=1)
    assert answer.error_code == 0
    assert len(answer.api_keys) == 77
    assert answer.api_keys[18] == (0, 5)  # ApiVersions itself
    assert answer.api_keys[68] == (0, 1)  # ConsumerGroupHeartbeat (KIP-848)
    assert answer.supported_features == {"metadata.version": (7, 33)}
    assert answer.finalized_features == {
        "group.version": 1,
        "kraft.version": 1,
        "share.version": 2,
        "metadata.version": 33,
        "streams.version": 1,
        "transaction.version": 2,
        "eligible.leader.replicas.version": 1,
    }
    assert answer.finalized_epoch == 25


def test_kafka_3_9_brokers_answer_reads_as_the_broker_said() -> None:
    answer = decode_api_versions(_answer("3.9.1"), correlation_id=1)
    assert (answer.error_code, len(answer.api_keys)) == (0, 61)
    assert answer.api_keys[18] == (0, 4)
    assert answer.api_keys[68] == (0, 0)  # KIP-848's early access: version 0 only
    assert answer.supported_features == {"metadata.version": (1, 21)}
    assert answer.finalized_features == {"kraft.version": 1, "metadata.version": 21}
    assert answer.finalized_epoch == 19


def test_another_correlation_id_is_not_the_answer() -> None:
    with pytest.raises(ProtocolError, match=r"correlation_id: 1 at offset 0, expected 2") as raised:
        decode_api_versions(_answer("4.4.0"), correlation_id=2)
    assert raised.value.offset == 0


def test_a_broker_before_version_3_answers_in_version_0s_layout() -> None:
    """UNSUPPORTED_VERSION with the keys it supports, classic INT32 array (Kafka's v0 fallback, KIP-511)."""
    writer = FlexWriter()
    writer.int32(1)
    writer.int16(UNSUPPORTED_VERSION)
    writer.int32(2)
    for key, low, high in ((0, 0, 7), (18, 0, 2)):
        writer.int16(key)
        writer.int16(low)
        writer.int16(high)
    answer = decode_api_versions(writer.getvalue(), correlation_id=1)
    assert answer == ApiVersions(UNSUPPORTED_VERSION, {0: (0, 7), 18: (0, 2)})


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _compact_string(text: str) -> bytes:
    raw = text.encode()
    return _uvarint(len(raw) + 1) + raw


def encode_answer(answer: ApiVersions, correlation_id: int, unknown: dict[int, bytes]) -> bytes:
    """Kafka's ApiVersionsResponse v3 (header v0) for ``answer``: what a broker writes (tags in ascending order)."""
    parts = [correlation_id.to_bytes(4, "big", signed=True), answer.error_code.to_bytes(2, "big", signed=True)]
    parts.append(_uvarint(len(answer.api_keys) + 1))
    for key, (low, high) in answer.api_keys.items():
        parts += [key.to_bytes(2, "big", signed=True), low.to_bytes(2, "big"), high.to_bytes(2, "big"), b"\x00"]
    parts.append((0).to_bytes(4, "big"))
    tags: dict[int, bytes] = dict(unknown)
    if answer.supported_features:
        body = [_uvarint(len(answer.supported_features) + 1)]
        for name, (low, high) in answer.supported_features.items():
            body += [_compact_string(name), low.to_bytes(2, "big"), high.to_bytes(2, "big"), b"\x00"]
        tags[0] = b"".join(body)
    if answer.finalized_epoch >= 0:
        tags[1] = answer.finalized_epoch.to_bytes(8, "big")
    if answer.finalized_features:
        body = [_uvarint(len(answer.finalized_features) + 1)]
        for name, level in answer.finalized_features.items():
            body += [_compact_string(name), level.to_bytes(2, "big"), level.to_bytes(2, "big"), b"\x00"]
        tags[2] = b"".join(body)
    parts.append(_uvarint(len(tags)))
    for tag in sorted(tags):
        parts += [_uvarint(tag), _uvarint(len(tags[tag])), tags[tag]]
    return b"".join(parts)


names = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz._"), min_size=1, max_size=40)
levels = st.integers(0, 2**15 - 1)
answers = st.builds(
    ApiVersions,
    error_code=st.integers(0, 100).filter(lambda code: code != UNSUPPORTED_VERSION),
    api_keys=st.dictionaries(st.integers(0, 2**15 - 1), st.tuples(levels, levels), max_size=30),
    supported_features=st.dictionaries(names, st.tuples(levels, levels), max_size=8),
    finalized_features=st.dictionaries(names, levels, max_size=8),
    finalized_epoch=st.integers(-1, 2**40),
)
later_tags = st.dictionaries(st.integers(3, 200), st.binary(max_size=30), max_size=3)


def test_the_reference_encoder_writes_the_4_4_answer_byte_for_byte() -> None:
    """The encoder the properties use is Kafka's layout: it rewrites the real broker's answer exactly."""
    real = _answer("4.4.0")
    assert encode_answer(decode_api_versions(real, 1), 1, {}) == real


@given(answers, st.integers(-(2**31), 2**31 - 1), later_tags)
def test_every_answer_reads_back_and_later_versions_tags_are_skipped(
    answer: ApiVersions, correlation_id: int, unknown: dict[int, bytes]
) -> None:
    assert decode_api_versions(encode_answer(answer, correlation_id, unknown), correlation_id) == answer


@given(answers, st.data())
def test_a_cut_answer_is_a_protocol_error_inside_the_bytes(answer: ApiVersions, data: st.DataObject) -> None:
    whole = encode_answer(answer, 1, {})
    cut = data.draw(st.integers(0, len(whole) - 1))
    with pytest.raises(ProtocolError) as raised:
        decode_api_versions(whole[:cut], 1)
    assert 0 <= raised.value.offset <= cut


@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_protocol_error(data: bytes) -> None:
    """Untrusted bytes never raise anything else (and lengths are checked before anything is allocated)."""
    offset = 0
    try:
        decode_api_versions(b"\x00\x00\x00\x01" + data, 1)
    except ProtocolError as error:
        offset = error.offset
    assert 0 <= offset <= len(data) + 4


def test_a_lying_count_is_refused_before_any_allocation() -> None:
    huge = b"\x00\x00\x00\x01\x00\x00" + b"\xff\xff\xff\xff\x0f"  # api_keys: 4 billion entries in 0 bytes
    with pytest.raises(ProtocolError, match="api_keys") as raised:
        decode_api_versions(huge, 1)
    assert raised.value.offset == 6


def test_a_tagged_field_whose_content_disagrees_with_its_size_is_named() -> None:
    answer = ApiVersions(0, {}, {}, {}, 5)
    whole = bytearray(encode_answer(answer, 1, {}))
    # the epoch's tag: tag 1, size 8 -> size 9 (one byte more than the INT64 it holds), the byte appended
    at = whole.index(bytes([1, 8]), 11)
    whole[at + 1] = 9
    whole.append(0)
    with pytest.raises(ProtocolError, match=r"taggedFields\[1\] at offset 14: 9 bytes declared, 8 read"):
        decode_api_versions(bytes(whole), 1)
