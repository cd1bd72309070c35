"""Kafka's ApiVersions exchange (api key 18, version 3): the request, and the response read from untrusted bytes.

A broker answers ApiVersions before a client logs in (Kafka's ``SaslServerAuthenticator`` lets it through ahead of
the SASL handshake), so it is the one request every listener answers. Version 3 (KIP-511) carries the client's
software name and, in the response's tagged fields, the broker's supported and the cluster's finalized feature
levels (KIP-584): ``metadata.version`` among them, whose highest supported level names the broker's release.

The layouts are Kafka's ``ApiVersionsRequest.json`` and ``ApiVersionsResponse.json``: the request header is v2
(flexible), the response header is v0 (the correlation id only) whatever the version, so that a client can read an
``UNSUPPORTED_VERSION`` answer; a broker older than version 3 answers in version 0's layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assignors._core.errors import ProtocolError
from assignors._wire.flex import FlexReader, FlexWriter

__all__ = [
    "API_VERSIONS_KEY",
    "UNSUPPORTED_VERSION",
    "ApiVersions",
    "decode_api_versions",
    "encode_api_versions_request",
]

API_VERSIONS_KEY = 18
UNSUPPORTED_VERSION = 35
"""Kafka's error code for a request version the broker does not know (``Errors.UNSUPPORTED_VERSION``)."""

_VERSION = 3
_MIN_API_KEY = 7  # api_key, min, max (int16 each) and an empty tagged-field section
_MIN_V0_API_KEY = 6
_MIN_FEATURE = 6  # a one-byte compact name (empty), two int16 and an empty tagged-field section
_SUPPORTED, _EPOCH, _FINALIZED = 0, 1, 2


@dataclass(frozen=True, slots=True)
class ApiVersions:
    """A broker's ApiVersions answer.

    Attributes:
        error_code: Kafka's error code (0: none; :data:`UNSUPPORTED_VERSION`: the broker predates version 3 and
            answered in version 0's layout, without features).
        api_keys: per api key, the (lowest, highest) version the broker accepts.
        supported_features: per feature (``metadata.version``, ``group.version``, ...), the (lowest, highest) level
            this broker's software supports.
        finalized_features: per feature, the level the cluster runs now (``max_version_level``).
        finalized_epoch: the epoch of the finalized features (-1: none sent).
    """

    error_code: int
    api_keys: dict[int, tuple[int, int]] = field(default_factory=dict)
    supported_features: dict[str, tuple[int, int]] = field(default_factory=dict)
    finalized_features: dict[str, int] = field(default_factory=dict)
    finalized_epoch: int = -1


def encode_api_versions_request(correlation_id: int, client_id: str = "assignors", version: str = "") -> bytes:
    """One ApiVersions v3 request as sent on the wire: the INT32 size, the v2 header, the body.

    >>> encode_api_versions_request(7, "c", "1").hex()
    '000000110012000300000007000163000263023100'
    """
    writer = FlexWriter()
    writer.int16(API_VERSIONS_KEY)
    writer.int16(_VERSION)
    writer.int32(correlation_id, "correlation_id")
    writer.nullable_string(client_id, "client_id")
    writer.no_tagged_fields()  # the header's
    writer.compact_nullable_string(client_id, "ClientSoftwareName")
    writer.compact_nullable_string(version or "0", "ClientSoftwareVersion")  # Kafka's pattern needs a character
    writer.no_tagged_fields()
    body = writer.getvalue()
    return len(body).to_bytes(4, "big") + body


def decode_api_versions(data: bytes, correlation_id: int) -> ApiVersions:
    """The response (after its INT32 size): the v0 header, then version 3's body or an older broker's version 0.

    Raises:
        ProtocolError: the bytes are not that answer (another correlation id, a length beyond the bytes, a tagged
            field whose size disagrees with its content); names the field and its offset.
    """
    reader = FlexReader(data)
    got = reader.int32("correlation_id")
    if got != correlation_id:
        msg = f"correlation_id: {got} at offset 0, expected {correlation_id} (not the answer to this request)"
        raise ProtocolError(msg, field="correlation_id", offset=0)
    error_code = reader.int16("error_code")
    if error_code == UNSUPPORTED_VERSION:  # a broker before version 3 answers in version 0's layout
        count = reader.array_length("api_keys", _MIN_V0_API_KEY)
        old: dict[int, tuple[int, int]] = {}
        for _ in range(count):
            key = reader.int16("api_key")
            old[key] = (reader.int16("min_version"), reader.int16("max_version"))
        return ApiVersions(error_code, old)
    count = reader.compact_array_length("api_keys", _MIN_API_KEY)
    keys: dict[int, tuple[int, int]] = {}
    for _ in range(count):
        key = reader.int16("api_key")
        keys[key] = (reader.int16("min_version"), reader.int16("max_version"))
        _skip_tags(reader, "api_keys")
    reader.int32("throttle_time_ms")
    supported, finalized, epoch = _response_tags(reader)
    reader.expect_end("ApiVersionsResponse")
    return ApiVersions(error_code, keys, supported, finalized, epoch)


def _response_tags(reader: FlexReader) -> tuple[dict[str, tuple[int, int]], dict[str, int], int]:
    """The response's tagged fields: SupportedFeatures (0), FinalizedFeaturesEpoch (1), FinalizedFeatures (2).

    Each is parsed in place, so an error names its offset in the whole answer, and must fill its declared size.
    """
    data = reader.data
    supported: dict[str, tuple[int, int]] = {}
    finalized: dict[str, int] = {}
    epoch = -1
    start = reader.offset
    tags = reader.uvarint("taggedFields")
    if tags * 2 > len(data) - reader.offset:  # each at least a tag byte and a size byte
        msg = f"taggedFields: {tags} tagged fields at offset {start}, only {len(data) - reader.offset} bytes left"
        raise ProtocolError(msg, field="taggedFields", offset=start)
    for _ in range(tags):
        tag = reader.uvarint("taggedFields.tag")
        size_at = reader.offset
        size = reader.uvarint("taggedFields.size")
        begin = reader.offset
        if size > len(data) - begin:
            msg = f"taggedFields[{tag}] at offset {size_at}: length {size} but only {len(data) - begin} bytes left"
            raise ProtocolError(msg, field=f"taggedFields[{tag}]", offset=size_at)
        if tag == _SUPPORTED:
            supported = _supported(reader)
        elif tag == _EPOCH:
            epoch = reader.int64("FinalizedFeaturesEpoch")
        elif tag == _FINALIZED:
            finalized = _finalized(reader)
        else:
            reader.offset = begin + size  # a tag of a later version: skipped by its size
        if reader.offset != begin + size:
            msg = f"taggedFields[{tag}] at offset {begin}: {size} bytes declared, {reader.offset - begin} read"
            raise ProtocolError(msg, field=f"taggedFields[{tag}]", offset=begin)
    return supported, finalized, epoch


def _supported(reader: FlexReader) -> dict[str, tuple[int, int]]:
    """``SupportedFeatures``: per feature, the (lowest, highest) level the broker's software supports."""
    found: dict[str, tuple[int, int]] = {}
    for _ in range(reader.compact_array_length("SupportedFeatures", _MIN_FEATURE)):
        feature = reader.compact_string("SupportedFeatures.name")
        low = reader.int16("SupportedFeatures.min_version")
        found[feature] = (low, reader.int16("SupportedFeatures.max_version"))
        _skip_tags(reader, "SupportedFeatures")
    return found


def _finalized(reader: FlexReader) -> dict[str, int]:
    """``FinalizedFeatures``: per feature, the level the cluster runs (its ``max_version_level``)."""
    found: dict[str, int] = {}
    for _ in range(reader.compact_array_length("FinalizedFeatures", _MIN_FEATURE)):
        feature = reader.compact_string("FinalizedFeatures.name")
        found[feature] = reader.int16("FinalizedFeatures.max_version_level")
        reader.int16("FinalizedFeatures.min_version_level")
        _skip_tags(reader, "FinalizedFeatures")
    return found


def _skip_tags(reader: FlexReader, field_name: str) -> None:
    reader.tagged_fields(field_name)  # skipped by size: nothing of ApiVersions' inner structs is tagged yet
