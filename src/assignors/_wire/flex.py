"""Kafka's flexible ("compact") wire types on top of the classic reader and writer.

Compact strings, bytes and arrays carry UNSIGNED_VARINT length + 1 (0 = null); every
flexible struct ends with a tagged-field section (count, then tag, size and ``size``
bytes per field) that the reader skips by size. UUIDs are 16 bytes, printed the way
Kafka's ``Uuid.toString`` does (URL-safe base64 without padding).
"""

from __future__ import annotations

import base64
import binascii
import struct

from assignors._core.errors import EncodingError, ProtocolError
from assignors._wire.buffers import Reader, Writer

__all__ = ["FlexReader", "FlexWriter", "uuid_from_text", "uuid_text"]

_INT8 = struct.Struct(">b")
_INT64 = struct.Struct(">q")
_UUID_BYTES = 16
_VARINT_MAX_BYTES = 5  # an UNSIGNED_VARINT holds 32 bits
_INT16_MAX = 2**15 - 1


def uuid_text(raw: bytes) -> str:
    """Kafka's printed form of a 16-byte UUID.

    >>> uuid_text(bytes(15) + b"\\x01")
    'AAAAAAAAAAAAAAAAAAAAAQ'
    """
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def uuid_from_text(text: str) -> bytes:
    """The 16 bytes of a UUID printed by :func:`uuid_text`.

    Raises:
        ProtocolError: the text is not 22 characters of URL-safe base64.
    """
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != _UUID_BYTES or len(text) != 22:  # noqa: PLR2004 - 16 bytes print as 22 characters
        msg = f"topic id {text[:40]!r} is not a Kafka UUID (22 characters of URL-safe base64)"
        raise ProtocolError(msg, field="topicId", offset=-1)
    return raw


def _null_where_required(field: str, start: int, kind: str) -> ProtocolError:
    """The error for a null ``kind`` (bytes, string, array) where Kafka's schema does not allow one."""
    msg = f"{field}: null {kind} at offset {start} where Kafka's schema has a non-nullable {kind}"
    return ProtocolError(msg, field=field, offset=start)


class FlexReader(Reader):
    """The classic reader plus INT8/INT64, UUID and the flexible (compact, tagged) types."""

    __slots__ = ()

    def int8(self, field: str) -> int:
        value: int = _INT8.unpack_from(self.data, self._take(1, field))[0]
        return value

    def int64(self, field: str) -> int:
        value: int = _INT64.unpack_from(self.data, self._take(8, field))[0]
        return value

    def uuid(self, field: str) -> str:
        start = self._take(_UUID_BYTES, field)
        return uuid_text(self.data[start : start + _UUID_BYTES])

    def bytes_(self, field: str) -> bytes:
        """Non-nullable classic BYTES (INT32 length)."""
        start = self.offset
        value = self.nullable_bytes(field)
        if value is None:
            raise _null_where_required(field, start, "bytes")
        return value

    def uvarint(self, field: str) -> int:
        start = self.offset
        value = shift = 0
        for _ in range(_VARINT_MAX_BYTES):
            byte = self.data[self._take(1, field, start)]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
        msg = f"{field}: unsigned varint longer than {_VARINT_MAX_BYTES} bytes at offset {start}"
        raise ProtocolError(msg, field=field, offset=start)

    def _compact_length(self, field: str) -> tuple[int, int]:
        """(start, length); length -1 means null."""
        start = self.offset
        return start, self.uvarint(field) - 1

    def compact_nullable_string(self, field: str) -> str | None:
        start, length = self._compact_length(field)
        if length < 0:
            return None
        if length > _INT16_MAX:
            msg = f"{field}: string length {length} at offset {start} exceeds Kafka's {_INT16_MAX}"
            raise ProtocolError(msg, field=field, offset=start)
        return self.utf8(length, field, start)

    def compact_string(self, field: str) -> str:
        start = self.offset
        value = self.compact_nullable_string(field)
        if value is None:
            raise _null_where_required(field, start, "string")
        return value

    def compact_bytes(self, field: str) -> bytes:
        start, length = self._compact_length(field)
        if length < 0:
            raise _null_where_required(field, start, "bytes")
        begin = self._take(length, field, start)
        return self.data[begin : begin + length]

    def compact_array_length(self, field: str, min_element_size: int) -> int:
        """A compact array's element count, checked against the bytes left; null is an error."""
        start, count = self._compact_length(field)
        if count < 0:
            raise _null_where_required(field, start, "array")
        return self.checked_count(count, min_element_size, field, start)

    def tagged_fields(self, field: str) -> dict[int, bytes]:
        """Read a tagged-field section; returns each tag's raw bytes (callers pick the tags they know)."""
        found: dict[int, bytes] = {}
        for _ in range(self._tag_count(field)):
            tag = self.uvarint(f"{field}.taggedFields.tag")
            start = self.offset
            size = self.uvarint(f"{field}.taggedFields.size")
            begin = self._take(size, f"{field}.taggedFields[{tag}]", start)
            found[tag] = self.data[begin : begin + size]
        return found

    def _tag_count(self, field: str) -> int:
        start = self.offset
        count = self.uvarint(f"{field}.taggedFields")
        if count * 2 > len(self.data) - self.offset:  # each field is at least a tag byte and a size byte
            left = len(self.data) - self.offset
            msg = f"{field}.taggedFields: {count} tagged fields at offset {start}, only {left} bytes left"
            raise ProtocolError(msg, field=f"{field}.taggedFields", offset=start)
        return count


class FlexWriter(Writer):
    """The classic writer plus INT8/INT64, UUID and the flexible types (no tagged fields are written)."""

    __slots__ = ()

    def int8(self, value: int) -> None:
        self.parts.append(_INT8.pack(value))

    def int64(self, value: int) -> None:
        self.parts.append(_INT64.pack(value))

    def uuid(self, text: str) -> None:
        self.parts.append(uuid_from_text(text))

    def bytes_(self, value: bytes) -> None:
        self.int32(len(value))
        self.parts.append(value)

    def uvarint(self, value: int) -> None:
        out = bytearray()
        while value > 0x7F:  # noqa: PLR2004 - seven bits per byte
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
        self.parts.append(bytes(out))

    def compact_nullable_string(self, value: str | None, field: str = "string") -> None:
        if value is None:
            self.uvarint(0)
            return
        encoded = value.encode("utf-8")
        if len(encoded) > _INT16_MAX:
            msg = (
                f"{field} {value[:40]!r}... is {len(encoded)} bytes of UTF-8; Kafka's STRING holds at most {_INT16_MAX}"
            )
            raise EncodingError(msg)
        self.uvarint(len(encoded) + 1)
        self.parts.append(encoded)

    def compact_bytes(self, value: bytes) -> None:
        self.uvarint(len(value) + 1)
        self.parts.append(value)

    def compact_array_length(self, count: int) -> None:
        self.uvarint(count + 1)

    def no_tagged_fields(self) -> None:
        self.uvarint(0)
