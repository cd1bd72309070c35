"""A cursor over untrusted bytes in Kafka's classic (non-flexible) wire types, shared by the codecs.

Every read checks what is left, so a lying length prefix raises :class:`~assignors.ProtocolError`
(naming the field and its byte offset) instead of allocating beyond the input.
"""

from __future__ import annotations

import struct

from assignors._core.errors import EncodingError, ProtocolError

__all__ = ["Reader", "Writer"]

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT16_MAX = 2**15 - 1
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


class Reader:
    """A cursor over untrusted bytes; every read checks what is left."""

    __slots__ = ("data", "offset")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def _take(self, size: int, field: str, field_start: int | None = None) -> int:
        """Advance over ``size`` bytes; an error names ``field_start`` (the length prefix) if given."""
        start = self.offset
        if size > len(self.data) - start:
            at = start if field_start is None else field_start
            msg = f"{field}: needs {size} bytes at offset {start}, only {len(self.data) - start} left"
            if field_start is not None:
                msg = f"{field} at offset {at}: length {size} but only {len(self.data) - start} bytes left"
            raise ProtocolError(msg, field=field, offset=at)
        self.offset = start + size
        return start

    def int16(self, field: str) -> int:
        value: int = _INT16.unpack_from(self.data, self._take(2, field))[0]
        return value

    def int32(self, field: str) -> int:
        value: int = _INT32.unpack_from(self.data, self._take(4, field))[0]
        return value

    def partitions(self, count: int, field: str) -> tuple[int, ...]:
        """``count`` INT32 partition numbers in one read; a negative one is refused (Kafka never writes one)."""
        start = self._take(4 * count, field)
        values: tuple[int, ...] = struct.unpack_from(f">{count}i", self.data, start)
        if values and min(values) < 0:
            index = next(i for i, value in enumerate(values) if value < 0)
            at = start + 4 * index
            msg = f"{field}: negative partition {values[index]} at offset {at}"
            raise ProtocolError(msg, field=field, offset=at)
        return values

    def string(self, field: str) -> str:
        start = self.offset
        length = self.int16(field)
        if length < 0:
            msg = f"{field}: negative string length {length} at offset {start}"
            raise ProtocolError(msg, field=field, offset=start)
        return self.utf8(length, field, start)

    def utf8(self, length: int, field: str, field_start: int) -> str:
        """The next ``length`` bytes as UTF-8 text; errors name the field at ``field_start`` or the bad byte."""
        begin = self._take(length, field, field_start)
        try:
            return self.data[begin : begin + length].decode("utf-8")
        except UnicodeDecodeError as error:
            msg = f"{field}: invalid UTF-8 at offset {begin + error.start}"
            raise ProtocolError(msg, field=field, offset=begin + error.start) from None

    def nullable_string(self, field: str) -> str | None:
        start = self.offset
        length = self.int16(field)
        if length == -1:
            return None
        self.offset = start
        return self.string(field)

    def nullable_bytes(self, field: str) -> bytes | None:
        start = self.offset
        length = self.int32(field)
        if length == -1:
            return None
        if length < 0:
            msg = f"{field}: negative bytes length {length} at offset {start}"
            raise ProtocolError(msg, field=field, offset=start)
        begin = self._take(length, field, start)
        return self.data[begin : begin + length]

    def array_length(self, field: str, min_element_size: int) -> int:
        """An INT32 element count, checked against the bytes left (no allocation from a lying prefix)."""
        start = self.offset
        count = self.int32(field)
        if count < 0:
            msg = f"{field}: negative array length {count} at offset {start}"
            raise ProtocolError(msg, field=field, offset=start)
        return self.checked_count(count, min_element_size, field, start)

    def checked_count(self, count: int, min_element_size: int, field: str, start: int) -> int:
        """``count`` elements of at least ``min_element_size`` bytes must fit in what is left, else ProtocolError."""
        if count * min_element_size > len(self.data) - self.offset:
            msg = (
                f"{field}: array of {count} elements at offset {start} needs at least "
                f"{count * min_element_size} bytes, only {len(self.data) - self.offset} left"
            )
            raise ProtocolError(msg, field=field, offset=start)
        return count

    def expect_end(self, what: str) -> None:
        if self.offset != len(self.data):
            msg = f"{what}: {len(self.data) - self.offset} unexpected trailing bytes at offset {self.offset}"
            raise ProtocolError(msg, field=what, offset=self.offset)


class Writer:
    """Kafka's classic wire types, big-endian; a value that does not fit its type is an EncodingError."""

    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int16(self, value: int) -> None:
        self.parts.append(_INT16.pack(value))

    def int32(self, value: int, field: str = "length") -> None:
        if not _INT32_MIN <= value <= _INT32_MAX:
            msg = f"{field}={value} does not fit Kafka's INT32"
            raise EncodingError(msg)
        self.parts.append(_INT32.pack(value))

    def int32s(self, values: list[int], field: str) -> None:
        """INT32 values in one write (no count: the caller writes the array length)."""
        try:
            self.parts.append(struct.pack(f">{len(values)}i", *values))
        except struct.error:  # a value out of range (or not an int): name the first one
            bad = next(value for value in values if type(value) is not int or not _INT32_MIN <= value <= _INT32_MAX)
            msg = f"{field}={bad} does not fit Kafka's INT32"
            raise EncodingError(msg) from None

    def string(self, value: str, field: str = "string") -> None:
        encoded = value.encode("utf-8")
        if len(encoded) > _INT16_MAX:
            msg = (
                f"{field} {value[:40]!r}... is {len(encoded)} bytes of UTF-8; Kafka's STRING holds at most {_INT16_MAX}"
            )
            raise EncodingError(msg)
        self.int16(len(encoded))
        self.parts.append(encoded)

    def nullable_string(self, value: str | None, field: str) -> None:
        if value is None:
            self.int16(-1)
        else:
            self.string(value, field)

    def nullable_bytes(self, value: bytes | None) -> None:
        if value is None:
            self.int32(-1)
        else:
            self.int32(len(value))
            self.parts.append(value)

    def getvalue(self) -> bytes:
        return b"".join(self.parts)
